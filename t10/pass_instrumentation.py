"""Watching the passes run: `PassObserver`, what the driver tells as a pipeline runs; and
`PassInstrumentation`, what `t10 compile` and `t10-opt` show: the IR after every pass or after
named ones (`--print-ir-after-all`, `--print-ir-after P,...`) and each pass's wall time
(`--time-passes`), in `mlir-opt`'s formats, on stderr so that the output IR stays clean."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Protocol

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from t10.errors import T10Error
from t10.t10_dialects.printing import print_ir


@dataclass(frozen=True)
class PassTime:
    """One pass's wall time, and the verification of the IR it produced."""

    name: str
    seconds: float
    verify_seconds: float


class PassObserver(Protocol):
    """Told what the driver does: each stage as it starts (`"import"`, a pass's name,
    `"simulate"`) and each pass's verified IR and time as it ends."""

    def stage(self, name: str) -> None: ...

    def after_pass(self, p: ModulePass, module: ModuleOp, time: PassTime | None = None) -> None:
        ...


class Observers:
    """Several `PassObserver`s told the same things, in order."""

    def __init__(self, *observers: PassObserver) -> None:
        self.observers = observers

    def stage(self, name: str) -> None:
        for o in self.observers:
            o.stage(name)

    def after_pass(self, p: ModulePass, module: ModuleOp, time: PassTime | None = None) -> None:
        for o in self.observers:
            o.after_pass(p, module, time)


@dataclass
class PassInstrumentation:
    """Prints the IR after the passes named in `print_after` (all of them when `print_all`)
    and, when `time_passes`, collects each pass's time for `timing_report`."""

    stream: IO[str]
    print_after: frozenset[str] = frozenset()
    print_all: bool = False
    time_passes: bool = False
    weights: bool = False
    """Print dense constants whole (otherwise the big ones are elided, as `--emit` does)."""
    locations: bool = False
    """Print each op's location (its ONNX nodes)."""
    times: list[PassTime] = field(default_factory=list[PassTime])

    def stage(self, name: str) -> None:
        pass

    def check_names(self, known: Sequence[str], what: str) -> None:
        """Every name of `print_after` is a pass of the pipeline (`known`)."""
        unknown = sorted(self.print_after - set(known))
        if unknown:
            raise T10Error(f"{what}: '{unknown[0]}' is not a pass of the pipeline (its passes: "
                           f"{', '.join(known)})")

    def after_pass(self, p: ModulePass, module: ModuleOp, time: PassTime | None = None) -> None:
        """Called with the IR `p` produced (and its `time`, where it was measured)."""
        if self.time_passes and time is not None:
            self.times.append(time)
        if self.print_all or p.name in self.print_after:
            self.stream.write(f"// -----// IR Dump After {p.name} //----- //\n")
            print_ir(module, self.stream, self.weights, self.locations)
            self.stream.flush()

    def timing_report(self) -> None:
        """The passes' wall times, with their share of the total, as `mlir-opt --mlir-timing`
        lays them out (verification is a row of its own)."""
        if not self.time_passes:
            return
        rows = [(t.seconds, t.name) for t in self.times]
        rows.append((sum(t.verify_seconds for t in self.times), "(verify the IR after each pass)"))
        total = sum(seconds for seconds, _ in rows) or 1.0
        rule = "===" + "-" * 73 + "==="
        lines = [
            rule,
            "... Execution time report ...".center(len(rule)).rstrip(),
            rule,
            f"  Total Execution Time: {total:.4f} seconds",
            "",
            "  ----Wall Time----  ----Name----",
        ]
        lines += [f"  {s:8.4f} ({100 * s / total:5.1f}%)  {name}" for s, name in rows]
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        self.stream.write("\n".join(lines) + "\n")
        self.stream.flush()
