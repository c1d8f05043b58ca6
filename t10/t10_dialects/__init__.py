"""Our dialects, by name: factories that import each dialect on first use (for xdsl-opt's
universe and for `t10.driver.make_context`)."""

from collections.abc import Callable

from xdsl.ir import Dialect


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
