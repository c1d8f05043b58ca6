"""The planners: `registry` declares the interface (`Planner`) and the registry; each other
module here declares one planner, registered below in the order every list of planners
shows. A planner from elsewhere registers itself with `register_planner`."""

from t10.planning.planners.registry import (
    BenchConfig,
    ModelPlanning,
    Planner,
    planner,
    planner_names,
    planners,
    register_planner,
)
from t10.planning.planners.replicate import REPLICATE
from t10.planning.planners.t10 import T10
from t10.planning.planners.t10_multidim import T10_MULTIDIM
from t10.planning.planners.vgm import VGM

for _builtin in (T10, REPLICATE, T10_MULTIDIM, VGM):
    register_planner(_builtin)

__all__ = [
    "BenchConfig",
    "ModelPlanning",
    "Planner",
    "planner",
    "planner_names",
    "planners",
    "register_planner",
]
