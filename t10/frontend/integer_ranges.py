"""The static integer range analysis that makes integer arithmetic on runtime values exact.

t10 holds runtime INT64 / INT32 / INT16 / UINT16 / INT8 / UINT8 / BOOL values as the exact float
of each integer (f32, or f16 under ``--precision fp16``). The contract (docs/DESIGN.md,
"Integer values"):

- Every runtime integer value has a ``Range``: an ``Interval`` [lo, hi] proven at import, or
  ``Unknown`` with the reason (a graph input whose range is not declared; the truncation of a
  float). A graph input's declared range (``import_onnx(..., input_ranges=)``, ``t10 run
  --input-range``) is an assumption the simulator checks of every input it is given; an
  undeclared input of a ``NARROW_TYPES`` type (INT8, UINT8, INT16, UINT16) lies in its type.
  Bools and comparison results are [0, 1], a known constant its values' hull; moves (views,
  Identity, Expand, Concat, Pad, Where, Gather) keep (join) their inputs' ranges. A result of
  a narrow type must be proven within its type (onnxruntime wraps values beyond it).
- Each op that may read or produce runtime integers is registered with a range rule
  (``importer.lowering(..., integers=rule)``, an ``importer.RangeRule``) giving its
  ``Ranges``: its outputs' ranges, and ``computed``, an interval holding every new value its
  lowering computes (results and partial sums), or None when it only moves, selects or
  compares values (their results are inputs, their negations, 0 / 1 or truncated floats:
  exact whatever the range).
- ``check_node`` enforces it: ``computed`` must be proven and within ``EXACT_F32`` (else the
  node is refused naming it, the op, the range and the fix); beyond ``EXACT_F16`` the module
  is marked ``t10.fp16_inexact`` (``Importer.mark_fp16_inexact``, as for a known integer
  constant fp16 would round), which fp16 compilation refuses. Ops without a rule reading or
  producing runtime integers are refused by name (``graph``).

A sum of k elements of [lo, hi] lies in k·[lo, hi]; ``Interval.sums`` bounds every sum of
``fewest`` to ``most`` elements, so a reduction's partial sums (any subset, any order or
grouping: 0 to n elements) are bounded whatever the signs of the elements.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import onnx

from t10.common.tensor_expr import EXACT_F16, EXACT_F32
from t10.errors import T10Error

__all__ = [
    "BOOL",
    "NARROW_TYPES",
    "Interval",
    "Range",
    "RangeContext",
    "Ranges",
    "Unknown",
    "check_node",
    "hull",
    "keeps_input",
    "lift",
]

@dataclass(frozen=True)
class Interval:
    """The integers lo..hi (a proven range)."""

    lo: int
    hi: int

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"

    @property
    def magnitude(self) -> int:
        return max(abs(self.lo), abs(self.hi))

    def __add__(self, other: Interval) -> Interval:
        return Interval(self.lo + other.lo, self.hi + other.hi)

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __sub__(self, other: Interval) -> Interval:
        return self + -other

    def __mul__(self, other: Interval) -> Interval:
        corners = [a * b for a in (self.lo, self.hi) for b in (other.lo, other.hi)]
        return Interval(min(corners), max(corners))

    def abs(self) -> Interval:
        if self.lo >= 0:
            return self
        if self.hi <= 0:
            return -self
        return Interval(0, self.magnitude)

    def maximum(self, other: Interval) -> Interval:
        return Interval(max(self.lo, other.lo), max(self.hi, other.hi))

    def minimum(self, other: Interval) -> Interval:
        return Interval(min(self.lo, other.lo), min(self.hi, other.hi))

    def sums(self, fewest: int, most: int) -> Interval:
        """Every sum of ``fewest`` to ``most`` elements of this interval (0 elements: 0)."""
        return Interval(
            min(fewest * self.lo, most * self.lo), max(fewest * self.hi, most * self.hi)
        )


CAST_TO_FLOAT = "cast to FLOAT first if float arithmetic is meant"


@dataclass(frozen=True)
class Unknown:
    """No proven range, and why (``reason`` completes "the range of ... is unknown"), with
    what would give one (``fix``)."""

    reason: str
    fix: str = CAST_TO_FLOAT


Range = Interval | Unknown
BOOL = Interval(0, 1)

NARROW_TYPES: dict[int, Interval] = {
    onnx.TensorProto.INT8: Interval(-(2**7), 2**7 - 1),
    onnx.TensorProto.UINT8: Interval(0, 2**8 - 1),
    onnx.TensorProto.INT16: Interval(-(2**15), 2**15 - 1),
    onnx.TensorProto.UINT16: Interval(0, 2**16 - 1),
}
"""The integer types narrower than float32's exact integers → the values they hold: a value
of such a type is proven within them (onnxruntime wraps a result beyond them)."""


@dataclass(frozen=True)
class Ranges:
    """What a ``RangeRule`` proves of a node: its outputs' ranges (one per output, in order),
    and ``computed``: every new value its lowering computes, or None if it computes none."""

    outputs: tuple[Range, ...]
    computed: Range | None = None


class RangeContext(Protocol):
    """What the analysis reads and records through: the importer (``importer.Importer``; its
    ``RangeRule``s take it)."""

    node_name: str
    ranges: dict[str, Range]
    """The ranges of the runtime integer values defined so far."""

    def range_of(self, name: str) -> Range: ...

    def elem_type(self, name: str) -> int: ...

    def node_error(self, node: onnx.NodeProto, msg: str) -> T10Error: ...

    def mark_fp16_inexact(self, what: str) -> None: ...


def lift(f: Callable[..., Interval], *ranges: Range) -> Range:
    """``f`` of the intervals, or the first unknown range among them."""
    for r in ranges:
        if isinstance(r, Unknown):
            return r
    return f(*ranges)


def hull(*intervals: Interval) -> Interval:
    """The smallest interval holding all of ``intervals``."""
    return Interval(min(i.lo for i in intervals), max(i.hi for i in intervals))


def keeps_input(imp: RangeContext, node: onnx.NodeProto) -> Ranges:
    """A move: every output holds values of input 0."""
    return Ranges((imp.range_of(node.input[0]),) * len(node.output))


def check_node(imp: RangeContext, node: onnx.NodeProto, ranges: Ranges, outputs: list[str]) -> None:
    """The contract for a node that reads or produces runtime integers, ``ranges`` what its
    op's range rule proves of it: the values it computes must be proven exact in float32 (and
    else mark the module fp16-inexact); records the ranges of its integer ``outputs``."""
    computed = ranges.computed
    if isinstance(computed, Unknown):
        raise imp.node_error(
            node,
            f"integer {node.op_type} needs proven ranges of its inputs to stay exact, but the "
            f"range of {computed.reason} is unknown; {computed.fix}",
        )
    if computed is not None and computed.magnitude > EXACT_F32:
        raise imp.node_error(
            node,
            f"integer {node.op_type} computes values (results and partial sums) in the proven "
            f"range {computed}, beyond the integers float32 holds exactly (|x| <= 2**24); bound "
            "its inputs (e.g. with Min / Max), or cast to FLOAT first if float arithmetic is "
            "meant",
        )
    if computed is not None and computed.magnitude > EXACT_F16:
        imp.mark_fp16_inexact(
            f"integers computed by node '{imp.node_name}' ({node.op_type}) (results and "
            f"partial sums) in the proven range {computed}"
        )
    for name, r in zip(node.output, ranges.outputs, strict=True):
        if name in outputs:
            _check_fits(imp, node, name, r)
            imp.ranges[name] = r


def _check_fits(imp: RangeContext, node: onnx.NodeProto, name: str, r: Range) -> None:
    """An output of a ``NARROW_TYPES`` type must be proven within its type: onnxruntime wraps
    the values beyond it (t10 would hold them unwrapped)."""
    bounds = NARROW_TYPES.get(imp.elem_type(name))
    if bounds is None or (isinstance(r, Interval) and bounds.lo <= r.lo and r.hi <= bounds.hi):
        return
    type_name = onnx.TensorProto.DataType.Name(imp.elem_type(name))
    found = f"its range {r}" if isinstance(r, Interval) else f"the range of {r.reason} is unknown"
    raise imp.node_error(
        node,
        f"its {type_name} result '{name}' must hold values within {bounds}, where onnxruntime "
        f"keeps them (it wraps those beyond), but {found}; bound its inputs (e.g. with Min / "
        "Max), or compute in INT32 / FLOAT",
    )
