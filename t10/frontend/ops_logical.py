"""Comparisons, IsNaN, IsInf, logic, Where, Trilu, OneHot, Cast and CastLike on runtime values
(masks and selections).

Runtime values are float32; integer and BOOL values are held as the exact float of each
integer (``importer.INTEGER_TYPES``). A comparison or logical op is an element-wise generic
whose result is a float 0 / 1 (``select(cmpf p a b, 1.0, 0.0)``); logic reads only bools, which
are always 0 / 1, so Not is ``1 - x``, And ``min``, Or ``max``, Xor ``a != b``. Where selects
``x`` where the condition is not 0. Every op here keeps integers exact: its result is 0 / 1,
one of its inputs, or (a Cast of a float to an integer) the truncation of a float, which is
exact in float32 and in fp16 (a float with |x| >= 2**23 in f32, 2**10 in fp16, is already an
integer).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue

from t10.common.view_maps import reshape_map
from t10.frontend.importer import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    BodyBuilder,
    BodyFn,
    Importer,
    checked_axes,
    dtype_name,
    lowering,
    node_attributes,
    node_inputs,
)
from t10.frontend.integer_ranges import BOOL, Interval, Ranges, Unknown, hull, lift
from t10.frontend.ops_elementwise import define_broadcast

_COMPARISONS: dict[str, str] = {
    "Equal": "oeq",
    "Less": "olt",
    "LessOrEqual": "ole",
    "Greater": "ogt",
    "GreaterOrEqual": "oge",
}
"""op_type → the ``arith.cmpf`` predicate (ordered: false on NaN, as onnxruntime)."""

_LOGIC: dict[str, BodyFn] = {
    "Not": lambda bb, x: bb.sub(bb.const(1.0), x[0]),
    "And": lambda bb, x: bb.min(x[0], x[1]),
    "Or": lambda bb, x: bb.max(x[0], x[1]),
    "Xor": lambda bb, x: bb.flag(bb.cmpf_one(x[0], x[1])),
}
"""op_type → the body on 0 / 1 operands."""


def _boolean(imp: Importer, node: onnx.NodeProto) -> Ranges:
    return Ranges((BOOL,))


@lowering(*_COMPARISONS, integers=_boolean)
def lower_comparison(imp: Importer, node: onnx.NodeProto) -> None:
    """``a <op> b`` as a float 0 / 1, the inputs broadcast (numpy)."""
    predicate = _COMPARISONS[node.op_type]

    def body(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
        return bb.flag(bb.cmpf(predicate, x[0], x[1]))

    define_broadcast(imp, node, [imp.use(n) for n in node.input], body)


@lowering(*_LOGIC, integers=_boolean)
def lower_logic(imp: Importer, node: onnx.NodeProto) -> None:
    """Logic on bools (0 / 1), the inputs broadcast (numpy)."""
    define_broadcast(imp, node, [imp.use(n) for n in node.input], _LOGIC[node.op_type])


@lowering("IsNaN", integers=_boolean)
def lower_is_nan(imp: Importer, node: onnx.NodeProto) -> None:
    """``x`` unordered with itself, as a bool 0 / 1."""
    define_broadcast(imp, node, [imp.use(node.input[0])], lambda bb, x: bb.flag(
        bb.cmpf("uno", x[0], x[0])))


@lowering("IsInf", attributes={"detect_negative", "detect_positive"}, integers=_boolean)
def lower_is_inf(imp: Importer, node: onnx.NodeProto) -> None:
    """``x`` equal to +inf (unless ``detect_positive`` = 0) or -inf (unless
    ``detect_negative`` = 0), as a bool 0 / 1."""
    attrs = node_attributes(node)
    infinities = [
        sign * float("inf")
        for sign, attribute in ((1, "detect_positive"), (-1, "detect_negative"))
        if attrs.get(attribute, 1)
    ]

    def body(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
        flags = [bb.flag(bb.cmpf("oeq", x[0], bb.const(inf))) for inf in infinities]
        return functools.reduce(bb.max, flags) if flags else bb.const(0.0)

    define_broadcast(imp, node, [imp.use(node.input[0])], body)


def _where_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    return Ranges((lift(hull, imp.range_of(node.input[1]), imp.range_of(node.input[2])),))


@lowering("Where", integers=_where_ranges)
def lower_where(imp: Importer, node: onnx.NodeProto) -> None:
    """``select(c != 0, x, y)``, all three broadcast (numpy); a known condition is a float32
    0 / 1 constant (``Importer.mask``), a runtime one a bool value."""
    cond, x, y = node.input
    condition = imp.mask(node, cond) if imp.is_known(cond) else imp.use(cond)

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        return bb.select(bb.cmpf_one(v[0], bb.const(0.0)), v[1], v[2])

    define_broadcast(imp, node, [condition, imp.use(x), imp.use(y)], body)


def _trilu_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    return Ranges((lift(hull, imp.range_of(node.input[0]), Interval(0, 0)),))


@lowering("Trilu", attributes={"upper"}, integers=_trilu_ranges)
def lower_trilu(imp: Importer, node: onnx.NodeProto) -> None:
    """``select(keep, x, 0)`` with ``keep`` the known 0 / 1 triangle of the last two dims
    (column - row >= k for the upper one, <= k for the lower; ``k`` a known input, default 0):
    a select, so an infinite x outside the triangle gives 0, not NaN."""
    value, shape = imp.use(node.input[0])
    if len(shape) < 2:
        raise imp.node_error(node, f"the input must have at least 2 dims, got {list(shape)}")
    names = node_inputs(node)
    ks = imp.known_ints(node, names[1], "k") if len(names) > 1 else [0]
    if len(ks) != 1:
        raise imp.node_error(node, f"k must be one integer, got {len(ks)} values")
    k = ks[0]
    imp.check_builds(node, "mask", shape[-2:])
    rows, cols = np.arange(shape[-2])[:, None], np.arange(shape[-1])[None, :]
    upper = bool(node_attributes(node).get("upper", 1))
    keep = (cols - rows >= k) if upper else (cols - rows <= k)
    mask = imp.add_constant(f"{node.output[0]}_keep", keep.astype(np.float32), hoist=False)

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        return bb.select(bb.cmpf_one(v[1], bb.const(0.0)), v[0], bb.const(0.0))

    define_broadcast(imp, node, [(value, shape), (mask, keep.shape)], body)


def _one_hot_values(imp: Importer, node: onnx.NodeProto) -> tuple[int, float, float]:
    """OneHot's known depth (a positive integer) and its off and on values."""
    depth = imp.known_input(node, node.input[1], "depth").reshape(-1)
    values = imp.known_input(node, node.input[2], "values").reshape(-1)
    if depth.size != 1 or not float(depth[0]).is_integer() or depth[0] < 1:
        raise imp.node_error(node, f"depth must be one positive integer, got {depth.tolist()}")
    if values.size != 2:
        raise imp.node_error(node, f"values must be [off, on], got {values.size} values")
    return int(depth[0]), float(values[0]), float(values[1])


def _one_hot_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """An integer output holds off or on, which it writes (so they must be exact too); a
    float one is no integer value."""
    _, off, on = _one_hot_values(imp, node)
    if imp.elem_type(node.input[2]) not in INTEGER_TYPES:
        return Ranges((Interval(0, 0),))
    values = Interval(int(min(off, on)), int(max(off, on)))
    return Ranges((values,), values)


@lowering("OneHot", attributes={"axis"}, integers=_one_hot_ranges)
def lower_one_hot(imp: Importer, node: onnx.NodeProto) -> None:
    """``on`` where the position along the new axis equals the index (truncated if a float;
    a negative one counts from the end), ``off`` elsewhere, out-of-range indices included:
    the indices viewed with a size-1 axis inserted, compared with a constant of the
    positions. Depth and values must be known."""
    depth, off, on = _one_hot_values(imp, node)
    value, shape = imp.use(node.input[0])
    rank = len(shape) + 1
    axis = checked_axes(imp, node, [int(node_attributes(node).get("axis", -1))], rank)[0]
    spread = (*shape[:axis], 1, *shape[axis:])
    indices = imp.view(value, shape, spread, reshape_map(shape, spread), index=0)
    positions, along = imp.positions(f"{node.output[0]}_positions", depth, axis, rank)
    truncate = imp.elem_type(node.input[0]) not in INTEGER_TYPES

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        index = bb.trunc(v[0]) if truncate else v[0]
        below = bb.cmpf("olt", index, bb.const(0.0))
        wrapped = bb.select(below, bb.add(index, bb.const(float(depth))), index)
        return bb.select(bb.cmpf("oeq", wrapped, v[1]), bb.const(on), bb.const(off))

    define_broadcast(imp, node, [(indices, spread), (positions, along)], body)


_CAST_TARGETS = (*FLOAT_TYPES, *INTEGER_TYPES)


def _nonzero(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    """``x != 0`` as 0 / 1, NaN true (unordered), as a C cast to bool."""
    return bb.flag(bb.cmpf("une", x[0], bb.const(0.0)))


def _truncate(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    return bb.trunc(x[0])


def _cast_target(imp: Importer, node: onnx.NodeProto) -> int:
    """The element type a Cast (attribute ``to``) or CastLike (its second input's) casts to."""
    if node.op_type == "CastLike":
        return imp.elem_type(node.input[1])
    return int(node_attributes(node)["to"])


def _cast_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """To BOOL: [0, 1]; from a float: a truncated float, of unknown range; else the input's."""
    to = _cast_target(imp, node)
    if to == onnx.TensorProto.BOOL:
        return Ranges((BOOL,))
    if imp.elem_type(node.input[0]) in FLOAT_TYPES:
        return Ranges((Unknown(f"'{node.output[0]}' (a float truncated by Cast)"),))
    return Ranges((imp.range_of(node.input[0]),))


# saturate and round_mode concern float8 targets only
@lowering("Cast", attributes={"to", "saturate", "round_mode"}, integers=_cast_ranges)
@lowering("CastLike", attributes={"saturate", "round_mode"}, integers=_cast_ranges)
def lower_cast(imp: Importer, node: onnx.NodeProto) -> None:
    """Cast (or CastLike: to the element type of its second input, whose values it does not
    read) between FLOAT, FLOAT16, the integer types and BOOL of a runtime value. To a float
    type, and between integer types, is the identity (integers are held exactly, |x| <= 2**24,
    so INT64 → INT32 never wraps; a narrow target must hold the proven range:
    ``integer_ranges``; a FLOAT16 result is rounded by the fp16 storage it needs:
    ``Importer.fp16_values``); to BOOL is ``x != 0``; a float to an integer type truncates
    toward zero (exact; a NaN, infinite or out-of-range float, undefined in ONNX, stays as
    is). Casts of known values are folded."""
    to = _cast_target(imp, node)
    source = imp.elem_type(node.input[0])
    if to not in _CAST_TARGETS:
        raise imp.node_error(
            node,
            f"{node.op_type} from {dtype_name(source)} to {dtype_name(to)} of a runtime value is "
            "not supported: t10 computes float32 (FLOAT16 at fp16 storage), and holds integer "
            "and BOOL values as exact float32 values; it casts only between "
            f"{', '.join(map(dtype_name, _CAST_TARGETS))}",
        )
    if to == onnx.TensorProto.BOOL and source != to:
        define_broadcast(imp, node, [imp.use(node.input[0])], _nonzero)
    elif to in INTEGER_TYPES and source in FLOAT_TYPES:
        define_broadcast(imp, node, [imp.use(node.input[0])], _truncate)
    else:
        imp.pass_through(node)
