"""The `t10-sim` xdsl-opt target: simulate a chip-level module and print the report.

```
t10-opt model.onnx -p 't10-compile{chip=test-16}' -t t10-sim
t10-opt model.onnx -p 't10-compile{chip=test-16}' -t 't10-sim{seed=3}'
t10-opt model.chip.mlir -t 't10-sim{timing-only=true}'   # cycles and SRAM, no values
t10-opt model.chip.mlir -t 't10-sim{inputs="in.npz" outputs="out.npz" report="run.json"}'
t10-opt model.chip.mlir -t 't10-sim{trace="trace.json" plot="run.png"}'
```

The module must be at the `chip` level and carry the `t10.chip` attribute that
`t10-plan-search` writes (a built-in chip name or a chip file). Its options are `t10 run`'s
that make sense at that level, under the same names and with the same file formats:
`inputs` (an .npz, one array per argument of `@main` by its ONNX name; default: seeded
standard-normal arrays, the same ones `t10 run --seed S` uses), `seed`, `timing-only`,
`outputs` (an .npz), `report` (the JSON report), `trace` (Chrome trace events) and `plot`
(a PNG). The printed report is `t10 run`'s: what the simulation measured, with the plans,
estimates and bounds `t10-plan-search` recorded on the module (`t10.planned_ops`,
`t10.bound`), which every lowering keeps, whether the passes ran in one process or stage by
stage through text IR.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.target import Target

from t10.common.attr_names import CHIP_ATTR
from t10.common.chip_spec import load_chip
from t10.common.files import check_output_path, output_paths_problem, write_text
from t10.driver import simulate_compiled
from t10.errors import T10Error
from t10.outputs.figures import check_plot_path
from t10.outputs.npz_files import inputs_reader, save_npz
from t10.outputs.plots import plot_run
from t10.outputs.report import format_report
from t10.outputs.trace import chrome_trace


@dataclass(frozen=True)
class T10SimTarget(Target):
    name = "t10-sim"

    seed: int = 0
    """The seed of the random inputs (without `inputs`)."""
    timing_only: bool = False
    """Count cycles and SRAM without computing values (as `t10 run --timing-only`)."""
    inputs: str | None = None
    """Read the inputs from this .npz (`t10 run --inputs`)."""
    outputs: str | None = None
    """Write the simulated outputs to this .npz (`t10 run --outputs`)."""
    report: str | None = None
    """Also write the report as JSON to this file (`t10 run --report`'s format)."""
    trace: str | None = None
    """Write the supersteps as Chrome trace events to this file (`t10 run --trace`)."""
    plot: str | None = None
    """Draw the run to this PNG (`t10 run --plot`)."""

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise T10Error(
                f"t10-sim: option 'seed' expects a non-negative integer, got {self.seed}"
            )
        if self.timing_only and self.outputs is not None:
            raise T10Error("t10-sim: option 'timing-only' computes no output values: it "
                           "cannot take option 'outputs'")
        if self.inputs is not None and self.seed:
            raise T10Error("t10-sim: option 'seed' draws random inputs: it cannot take "
                           "option 'inputs' too")
        for name, path in self._written().items():
            if path is not None:
                check_output_path(path, _option(name))
        if self.plot is not None:
            check_plot_path(self.plot, _option("plot"))
        self._check_written({"option 'inputs'": self.inputs})

    def _written(self) -> dict[str, str | None]:
        """The files the target writes, by option name."""
        return {name: getattr(self, name) for name in ("outputs", "report", "trace", "plot")}

    def _check_written(self, read: dict[str, str | None]) -> None:
        """No file the target writes is a file it reads (`read`) or another it writes."""
        written = {f"option '{name}'": path for name, path in self._written().items()}
        problem = output_paths_problem(written, read)
        if problem is not None:
            raise T10Error(f"t10-sim: {problem}")

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        chip_attr = module.attributes.get(CHIP_ATTR)
        if not isinstance(chip_attr, StringAttr):
            raise T10Error(
                f"t10-sim: the module has no '{CHIP_ATTR}' attribute naming the chip; "
                "compile it first, e.g. -p 't10-compile{chip=ipu-mk2}'"
            )
        if not any(op.name == "chip.program" for op in module.walk()):
            raise T10Error(
                "t10-sim: the module is not at the chip level (no chip.program); lower it "
                "first with t10-compile, or the conversions down to convert-core-to-chip"
            )
        chip = load_chip(chip_attr.data)
        self._check_written({f"the chip file (module attribute '{CHIP_ATTR}')": chip_attr.data})
        inputs = None if self.inputs is None else inputs_reader(self.inputs, _option("inputs"))
        simulated = simulate_compiled(module, chip, inputs, self.seed, self.timing_only)
        output.write(format_report(simulated.report) + "\n")
        if self.outputs is not None:
            save_npz(self.outputs, simulated.outputs, _option("outputs"))
        if self.report is not None:
            write_text(self.report, simulated.report.to_json(), _option("report"))
        if self.trace is not None:
            trace = chrome_trace(simulated.sim, chip, TITLE)
            write_text(self.trace, json.dumps(trace), _option("trace"))
        if self.plot is not None:
            plot_run(simulated.sim, chip, self.plot, TITLE)


TITLE = "t10-sim"
"""What the trace and the plot call the run (`t10 run` names them after the model file)."""


def _option(name: str) -> str:
    """How an error names the target's option `name`."""
    return f"t10-sim: option '{name}'"
