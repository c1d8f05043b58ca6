"""The xdsl-opt plugin: our dialects, passes, the ONNX frontend and the simulator target.

Registered through `[project.entry-points."xdsl.universe"]`; every factory imports lazily so
that `xdsl-opt` start-up stays fast.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.frontend import Frontend
from xdsl.utils.target import Target

from t10.t10_dialects import DIALECTS


def _t10_inline_splats() -> type[ModulePass]:
    from t10.passes.t10_inline_splats import T10InlineSplats

    return T10InlineSplats


def _t10_fuse_elementwise() -> type[ModulePass]:
    from t10.passes.t10_fuse_elementwise import T10FuseElementwise

    return T10FuseElementwise


def _t10_fuse_epilogue() -> type[ModulePass]:
    from t10.passes.t10_fuse_epilogue import T10FuseEpilogue

    return T10FuseEpilogue


def _t10_plan_search() -> type[ModulePass]:
    from t10.passes.t10_plan_search import T10PlanSearch

    return T10PlanSearch


def _convert_linalg_to_rtensor() -> type[ModulePass]:
    from t10.lowering.convert_linalg_to_rtensor import ConvertLinalgToRTensor

    return ConvertLinalgToRTensor


def _convert_rtensor_to_cshift() -> type[ModulePass]:
    from t10.lowering.convert_rtensor_to_cshift import ConvertRTensorToCShift

    return ConvertRTensorToCShift


def _convert_cshift_to_core() -> type[ModulePass]:
    from t10.lowering.convert_cshift_to_core import ConvertCShiftToCore

    return ConvertCShiftToCore


def _convert_core_to_chip() -> type[ModulePass]:
    from t10.lowering.convert_core_to_chip import ConvertCoreToChip

    return ConvertCoreToChip


def _t10_compile() -> type[ModulePass]:
    from t10.passes.t10_compile import T10Compile

    return T10Compile


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "t10-inline-splats": _t10_inline_splats,
    "t10-fuse-elementwise": _t10_fuse_elementwise,
    "t10-fuse-epilogue": _t10_fuse_epilogue,
    "t10-plan-search": _t10_plan_search,
    "convert-linalg-to-rtensor": _convert_linalg_to_rtensor,
    "convert-rtensor-to-cshift": _convert_rtensor_to_cshift,
    "convert-cshift-to-core": _convert_cshift_to_core,
    "convert-core-to-chip": _convert_core_to_chip,
    "t10-compile": _t10_compile,
}

def _t10_sim() -> type[Target]:
    from t10.targets import T10SimTarget

    return T10SimTarget


TARGETS: dict[str, Callable[[], type[Target]]] = {"t10-sim": _t10_sim}


def _onnx() -> type[Frontend]:
    from t10.frontend import OnnxFrontend

    return OnnxFrontend


FRONTENDS: dict[str, Callable[[], type[Frontend]]] = {"onnx": _onnx}

T10_UNIVERSE = Universe(
    all_dialects=DIALECTS,
    all_passes=PASSES,
    all_targets=TARGETS,
    all_frontends=FRONTENDS,
)
