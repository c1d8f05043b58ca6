"""t10-compile: the whole pipeline, from planned-or-not linalg down to the chip program."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from t10.lowering.convert_core_to_chip import ConvertCoreToChip
from t10.lowering.convert_cshift_to_core import ConvertCShiftToCore
from t10.lowering.convert_linalg_to_rtensor import ConvertLinalgToRTensor
from t10.lowering.convert_rtensor_to_cshift import ConvertRTensorToCShift
from t10.passes.t10_fuse_elementwise import T10FuseElementwise
from t10.passes.t10_fuse_epilogue import T10FuseEpilogue
from t10.passes.t10_inline_splats import T10InlineSplats
from t10.passes.t10_plan_search import T10PlanSearch
from t10.planning.compile_options import DEFAULTS, CompileOptions
from t10.planning.operators import check_not_lowered

LEVELS = ("linalg", "rtensor", "cshift", "core", "chip")
"""The IR levels, in order; level i is reached by the first i passes of `pipeline`."""


LOWERINGS: tuple[type[ModulePass], ...] = (
    ConvertLinalgToRTensor,
    ConvertRTensorToCShift,
    ConvertCShiftToCore,
    ConvertCoreToChip,
)
"""The conversions, in order: the first i reach level `LEVELS[i]`."""


def pass_names(options: CompileOptions = DEFAULTS, emit: str = "chip") -> list[str]:
    """The names of `pipeline`'s passes for these options, in order."""
    fusion: list[type[ModulePass]] = [T10InlineSplats]
    if options.fuse:
        fusion += [T10FuseElementwise, *([T10FuseEpilogue] if options.epilogues else [])]
    return [p.name for p in (*fusion, T10PlanSearch, *LOWERINGS[: LEVELS.index(emit)])]


def pipeline(options: CompileOptions = DEFAULTS, emit: str = "chip") -> tuple[ModulePass, ...]:
    """The passes that lower linalg to the `emit` level (`pass_names`): one-value constants
    into element-wise bodies (t10-inline-splats), fusion (unless `options.fuse` is off:
    element-wise chains, then, unless `options.epilogues` is off, contraction epilogues where
    the cost model says they pay) and planning first (`emit="linalg"` stops after the plan
    search). `emit` is how far to lower, not an option of how: t10-compile always goes down
    to the chip level."""
    made: dict[str, ModulePass] = {
        T10InlineSplats.name: T10InlineSplats(),
        T10FuseElementwise.name: T10FuseElementwise(),
        T10FuseEpilogue.name: T10FuseEpilogue(**options.cost_options()),
        T10PlanSearch.name: T10PlanSearch(**options.plan_options()),
        **{p.name: p() for p in LOWERINGS},
    }
    return tuple(made[name] for name in pass_names(options, emit))


@dataclass(frozen=True)
class T10Compile(CompileOptions, ModulePass):
    """The whole pipeline in one pass; its options are `CompileOptions`."""

    name = "t10-compile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        passes = pipeline(self)
        check_not_lowered(op, self.name)
        PassPipeline(passes).apply(ctx, op)
