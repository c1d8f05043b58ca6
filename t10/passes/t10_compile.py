"""t10-compile: the whole pipeline, from planned-or-not linalg down to the chip program."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from t10.lowering.convert_core_to_chip import ConvertCoreToChip
from t10.lowering.convert_cshift_to_core import ConvertCShiftToCore
from t10.lowering.convert_linalg_to_rtensor import ConvertLinalgToRTensor
from t10.lowering.convert_rtensor_to_cshift import ConvertRTensorToCShift
from t10.passes.t10_plan_search import T10PlanSearch

LEVELS = ("linalg", "rtensor", "cshift", "core", "chip")
"""The IR levels, in order; level i is reached by the first i passes of `pipeline`."""


def pipeline(
    chip: str, planner: str, min_utilization: float, emit: str = "chip", precision: str = "fp32"
) -> tuple[ModulePass, ...]:
    """The passes that lower linalg to the `emit` level (planning first)."""
    passes: tuple[ModulePass, ...] = (
        T10PlanSearch(
            chip=chip, planner=planner, min_utilization=min_utilization, precision=precision
        ),
        ConvertLinalgToRTensor(),
        ConvertRTensorToCShift(),
        ConvertCShiftToCore(),
        ConvertCoreToChip(),
    )
    return passes[: LEVELS.index(emit) + 1] if emit != "linalg" else passes[:1]


@dataclass(frozen=True)
class T10Compile(ModulePass):
    name = "t10-compile"

    chip: str = "ipu-mk2"
    planner: str = "t10"
    min_utilization: float = 0.5
    precision: str = "fp32"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for p in pipeline(self.chip, self.planner, self.min_utilization, precision=self.precision):
            p.apply(ctx, op)
