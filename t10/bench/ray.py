"""`t10 bench`'s cases as Ray tasks: one task per case, on a local Ray started here (as many
CPUs as this process may use) or on a running cluster (`address`). Every node needs the same
`t10-xdsl[bench]` installed. Ray is imported only when a `RayExecutor` is made, and the
packages a sweep needs are checked up front (`require`)."""

from __future__ import annotations

import importlib.util
import logging
import signal
import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from t10.bench.capped import default_case_memory, run_case_capped, too_big
from t10.bench.models import Case
from t10.errors import T10Error
from t10.planning.forked import ENDING_SIGNALS, held_signals, usable_cpus

__all__ = ["LOCAL_OBJECT_STORE_BYTES", "RayExecutor", "require"]

WAIT_SECONDS = 0.5
"""How long a wait for results lasts before signals are taken (`RayExecutor.next_result`)."""
LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024
"""A local Ray's shared-memory store: results are small dicts (Ray's default takes 30% of
the machine's memory)."""


def require(packages: Sequence[str]) -> None:
    """A `T10Error` naming those of `packages` that are not installed."""
    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    if missing:
        names = " and ".join(f"'{p}'" for p in missing)
        raise T10Error(f"t10 bench needs {names}, not installed: pip install "
                       "'t10-xdsl[bench]'")


class RayExecutor:
    """Runs each case as a Ray task (`run_case_capped` in a Ray worker that runs one task, so
    its memory returns when it ends); a context manager that shuts down the Ray it started.
    `cap`: each case's memory cap (None: `default_case_memory` on a local Ray, none on a
    cluster's machines); a case over it, or killed by Ray for memory, is a `TOO_BIG` row."""

    def __init__(
        self, address: str | None = None, num_cpus: int | None = None, cap: int | None = None
    ) -> None:
        require(["ray"])
        import ray
        from ray.exceptions import OutOfMemoryError, RayTaskError, WorkerCrashedError

        self.ray = ray
        self.task_error = RayTaskError
        self.killed = (OutOfMemoryError, WorkerCrashedError)
        cpus = num_cpus or usable_cpus()
        self.cap = cap if cap is not None or address is not None else default_case_memory(cpus)
        self.started = not ray.is_initialized()
        if self.started:
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                       "logging_level": logging.ERROR}
            if address is None:
                options.update(num_cpus=cpus,
                               object_store_memory=LOCAL_OBJECT_STORE_BYTES)
            handlers = {s: signal.getsignal(s) for s in ENDING_SIGNALS}
            try:
                ray.init(address=address, **options)
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = f"the Ray cluster at '{address}'" if address else "a local Ray"
                raise T10Error(f"cannot start {where}: {' '.join(str(e).split())}") from None
            _keep_handlers(handlers)
        self.task = ray.remote(max_calls=1)(run_case_capped)
        self.pending: list[Any] = []
        self.cases: dict[Any, Case] = {}

    def submit(self, case: Case) -> None:
        ref = self.task.remote(case, self.cap)
        self.cases[ref] = case
        self.pending.append(ref)

    def next_result(self) -> dict[str, Any]:
        done: list[Any] = []
        while not done:
            # a signal's handler raising inside Ray's wait would come out as a SystemError
            with held_signals():
                done, self.pending = self.ray.wait(self.pending, num_returns=1,
                                                   timeout=WAIT_SECONDS)
        case = self.cases.pop(done[0])
        try:
            return self.ray.get(done[0])
        except self.killed:
            return too_big(case, self.cap)
        except self.task_error as e:
            raise e.cause from None  # what the case raised, as a serial run raises it

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for ref in self.pending:
            self.ray.cancel(ref, force=True)
        if self.started:
            self.ray.shutdown()


def _keep_handlers(handlers: dict[signal.Signals, Any]) -> None:
    """The Python handlers of `handlers` installed again over Ray's, which end the process
    without unwinding it (`t10.planning.forked.ending_signals`)."""
    if threading.current_thread() is threading.main_thread():
        for signum, handler in handlers.items():
            if callable(handler):
                signal.signal(signum, handler)
