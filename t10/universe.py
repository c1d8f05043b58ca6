"""The xdsl-opt plugin: our dialects, passes, the ONNX frontend and the simulator target.

Registered through `[project.entry-points."xdsl.universe"]`; every factory imports lazily so
that `xdsl-opt` start-up stays fast.
"""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.frontend import Frontend
from xdsl.utils.target import Target


def _rtensor() -> Dialect:
    from t10.t10_dialects.rtensor import RTensor

    return RTensor


def _cshift() -> Dialect:
    from t10.t10_dialects.cshift import CShift

    return CShift


def _core() -> Dialect:
    from t10.t10_dialects.core import Core

    return Core


def _chip() -> Dialect:
    from t10.t10_dialects.chip import Chip

    return Chip


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "rtensor": _rtensor,
    "cshift": _cshift,
    "core": _core,
    "chip": _chip,
}

PASSES: dict[str, Callable[[], type[ModulePass]]] = {}

TARGETS: dict[str, Callable[[], type[Target]]] = {}


def _onnx() -> type[Frontend]:
    from t10.lowering.onnx_frontend import OnnxFrontend

    return OnnxFrontend


FRONTENDS: dict[str, Callable[[], type[Frontend]]] = {"onnx": _onnx}

T10_UNIVERSE = Universe(
    all_dialects=DIALECTS,
    all_passes=PASSES,
    all_targets=TARGETS,
    all_frontends=FRONTENDS,
)
