"""The `t10-sim` xdsl-opt target: simulate a chip-level module and print the report.

```
xdsl-opt model.onnx -p 't10-compile{chip=test-16}' -t t10-sim
xdsl-opt model.onnx -p 't10-compile{chip=test-16}' -t 't10-sim{seed=3}'
xdsl-opt model.chip.mlir -t 't10-sim{timing-only=true}'   # cycles and SRAM, no values
xdsl-opt model.chip.mlir -t 't10-sim{report="run.json"}'  # also the JSON report, as t10 run's
```

The module must be at the `chip` level and carry the `t10.chip` attribute that
`t10-plan-search` writes (a built-in chip name or a chip file). Inputs are seeded
standard-normal float32 arrays, one per argument of `@main` (the same ones `t10 run
--seed S` uses). The printed report is `t10 run`'s: what the simulation measured, with the
plans, estimates and bounds `t10-plan-search` recorded on the module (`t10.planned_ops`,
`t10.bound`), which every lowering keeps, whether the passes ran in one process or stage by
stage through text IR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.utils.target import Target

from t10.common.attr_names import CHIP_ATTR
from t10.common.chip_spec import load_chip
from t10.common.files import check_output_path, write_text
from t10.driver import simulate_compiled
from t10.errors import T10Error
from t10.report import format_report, report_json


@dataclass(frozen=True)
class T10SimTarget(Target):
    name = "t10-sim"

    seed: int = 0
    timing_only: bool = False
    """Count cycles and SRAM without computing values (as `t10 run --timing-only`)."""
    report: str | None = None
    """Also write the report as JSON to this file (`t10 run --report`'s format)."""

    def __post_init__(self) -> None:
        if self.seed < 0:
            raise T10Error(
                f"t10-sim: option 'seed' expects a non-negative integer, got {self.seed}"
            )
        if self.report is not None:
            check_output_path(self.report, "t10-sim: option 'report'")

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
        report = simulate_compiled(
            module, load_chip(chip_attr.data), self.seed, self.timing_only
        )
        output.write(format_report(report) + "\n")
        if self.report is not None:
            write_text(self.report, report_json(report), "t10-sim: option 'report'")
