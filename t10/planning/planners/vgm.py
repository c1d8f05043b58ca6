"""The `vgm` planner, Roller-style virtual global memory: every tensor in a home over all the
chip's cores, each operator loading its inputs from their homes and storing its output back,
its plan (spatial partitions only) its own cheapest load + compute + store
(`t10.planning.vgm_plans`, run by `ModelPlanning.plan_vgm`); no search, no cold
weights."""

from xdsl.dialects.builtin import IntegerAttr, ModuleOp

from t10.common.attr_names import HOME_CORES_ATTR
from t10.common.chip_spec import ChipSpec
from t10.planning.planners.registry import BenchConfig, ModelPlanning, Planner


def plan_homes(planning: ModelPlanning, chip: ChipSpec, module: ModuleOp) -> int:
    """Plans every operator from and to homes over all cores, recorded on the module
    (`t10.home_cores`)."""
    peak = planning.plan_vgm(chip, module)
    module.attributes[HOME_CORES_ATTR] = IntegerAttr(chip.cores, 64)
    return peak


VGM = Planner(
    name="vgm",
    help="every tensor in a home over all cores, each operator loading its inputs from "
         "their homes and storing its output back (Roller-style)",
    temporal_dims=0,
    search=None,
    plan=plan_homes,
    bench=(BenchConfig("vgm", 3),),
)
