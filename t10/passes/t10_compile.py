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
from t10.passes.operators import check_not_lowered
from t10.passes.t10_fuse_elementwise import T10FuseElementwise
from t10.passes.t10_fuse_epilogue import T10FuseEpilogue
from t10.passes.t10_inline_splats import T10InlineSplats
from t10.passes.t10_plan_search import T10PlanSearch

LEVELS = ("linalg", "rtensor", "cshift", "core", "chip")
"""The IR levels, in order; level i is reached by the first i passes of `pipeline`."""


LOWERINGS: tuple[type[ModulePass], ...] = (
    ConvertLinalgToRTensor,
    ConvertRTensorToCShift,
    ConvertCShiftToCore,
    ConvertCoreToChip,
)
"""The conversions, in order: the first i reach level `LEVELS[i]`."""


def pass_names(emit: str = "chip", fuse: bool = True, epilogues: bool = True) -> list[str]:
    """The names of `pipeline`'s passes for these options, in order."""
    fusion: list[type[ModulePass]] = [T10InlineSplats]
    if fuse:
        fusion += [T10FuseElementwise, *([T10FuseEpilogue] if epilogues else [])]
    return [p.name for p in (*fusion, T10PlanSearch, *LOWERINGS[: LEVELS.index(emit)])]


def pipeline(
    chip: str,
    planner: str,
    min_utilization: float,
    emit: str = "chip",
    precision: str = "fp32",
    fuse: bool = True,
    epilogues: bool = True,
    partials: str = "fp32",
    search: str | None = None,
    temporaries: float | None = None,
) -> tuple[ModulePass, ...]:
    """The passes that lower linalg to the `emit` level (`pass_names`): one-value constants
    into element-wise bodies (t10-inline-splats), fusion (unless `fuse` is off: element-wise
    chains, then, unless `epilogues` is off, contraction epilogues where the cost model says
    they pay) and planning first (`emit="linalg"` stops after the plan search)."""
    options = {
        "chip": chip,
        "min_utilization": min_utilization,
        "precision": precision,
        "partials": partials,
    }
    made: dict[str, ModulePass] = {
        T10InlineSplats.name: T10InlineSplats(),
        T10FuseElementwise.name: T10FuseElementwise(),
        T10FuseEpilogue.name: T10FuseEpilogue(**options),
        T10PlanSearch.name: T10PlanSearch(
            planner=planner, search=search, temporaries=temporaries, **options
        ),
        **{p.name: p() for p in LOWERINGS},
    }
    return tuple(made[name] for name in pass_names(emit, fuse, epilogues))


@dataclass(frozen=True)
class T10Compile(ModulePass):
    name = "t10-compile"

    chip: str = "ipu-mk2"
    planner: str = "t10"
    min_utilization: float = 0.5
    precision: str = "fp32"
    partials: str = "fp32"
    search: str | None = None
    """`greedy`, `exact` or `fastest` (t10-plan-search's `search`; default: the planner's)."""
    temporaries: float | None = None
    """`replicate` only: t10-plan-search's `temporaries`."""
    fuse: bool = True
    """Fuse element-wise chains first (t10-fuse-elementwise)."""
    epilogues: bool = True
    """With `fuse`, also run element-wise readers of contractions as their epilogues
    (t10-fuse-epilogue)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        passes = pipeline(
            self.chip,
            self.planner,
            self.min_utilization,
            precision=self.precision,
            fuse=self.fuse,
            epilogues=self.epilogues,
            partials=self.partials,
            search=self.search,
            temporaries=self.temporaries,
        )
        check_not_lowered(op, self.name)
        PassPipeline(passes).apply(ctx, op)
