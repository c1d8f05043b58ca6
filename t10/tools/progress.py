"""Progress of a long `t10` command on a terminal: the stage running (importing the model,
each pass, simulating, checking), the stages done with their seconds, and the time so far.

Shown only when stderr is a terminal and `--quiet` is not given; nothing is written
otherwise, so scripts and pipes see the output alone. The display refreshes when a stage
starts or ends, never from a thread of its own: a second thread would keep the plan search
from forking its workers (`t10.planning.forked.can_fork`).
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from t10.pass_instrumentation import PassTime

STAGE_NAMES = {
    "import": "importing the model",
    "simulate": "simulating",
    "check": "checking against onnxruntime",
    "explain": "measuring the model around each plan",
}


class Progress:
    """A `PassObserver` that shows the stages on `stream` (stderr) while it is a context."""

    def __init__(self, title: str, stream: IO[str] | None = None, quiet: bool = False) -> None:
        self.title = title
        self.stream = sys.stderr if stream is None else stream
        self.enabled = not quiet and self.stream.isatty()
        self.live: Any = None
        self.started = time.perf_counter()
        self.stage_started = self.started
        self.current: str | None = None
        self.done: list[tuple[str, float]] = []

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream)
            self.live = Live(
                console=console,
                auto_refresh=False,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self.live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def stage(self, name: str) -> None:
        now = time.perf_counter()
        if self.current is not None:
            self.done.append((self.current, now - self.stage_started))
        self.current, self.stage_started = STAGE_NAMES.get(name, name), now
        self._show()

    def after_pass(self, p: ModulePass, module: ModuleOp, time: PassTime | None = None) -> None:
        pass

    def _show(self) -> None:
        if self.live is None:
            return
        from rich.text import Text

        elapsed = time.perf_counter() - self.started
        text = Text()
        text.append(f"{self.title}  ", style="bold")
        text.append(f"{elapsed:.1f} s\n")
        for name, seconds in self.done[-6:]:
            text.append(f"  ✓ {name} ({seconds:.1f} s)\n", style="dim")
        if self.current is not None:
            text.append(f"  … {self.current}", style="cyan")
        self.live.update(text, refresh=True)
