"""Quantisation on runtime values: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
MatMulInteger and ConvInteger, computed as onnxruntime's CPU kernels compute them.

Quantised values (INT8, UINT8, INT16, UINT16) are held as the exact float of each integer,
as every runtime integer is (``importer.INTEGER_TYPES``; the range rules below prove them
exact, ``integer_ranges``):

* QuantizeLinear is onnxruntime's MLAS kernel: ``v = x / scale`` clamped to
  ``[lo - zero_point, hi - zero_point]`` (a NaN gives ``lo - zero_point``: the kernel's
  ``maxps`` keeps its second operand), rounded half to even, plus ``zero_point``; ``lo``,
  ``hi`` the output type's bounds (saturation; ``saturate`` concerns float8 outputs only).
* DequantizeLinear is ``(x - zero_point) · scale`` (the difference is exact).
* DynamicQuantizeLinear (UINT8) reduces its input to its min and max, with 0 included;
  ``scale = (max - min) / 255`` (1 where max = min), ``zero_point`` = ``-min / scale``
  clamped to [0, 255] and rounded half to even, and quantises as QuantizeLinear. Its
  rank-0 scale and zero point are held as shape [1] (t10 computes no rank-0 values), which
  broadcasts alike wherever it is read with a value of rank >= 1: ``_check_scalar_readers``
  refuses any other reader.
* MatMulInteger and ConvInteger subtract the zero points (exact), then contract in float32:
  every partial sum is an integer, exact while within 2**24, which the range rule proves
  (with a known weight, from its values: the largest sum of magnitudes of one output's
  weights times the largest magnitude of the input; else k times the largest product).
  ConvInteger's padding reads 0 after the subtraction, as onnxruntime's reads the input's
  zero point before it.

Scales and zero points are per tensor (one element) or, for QuantizeLinear and
DequantizeLinear, per axis (1-D, one per index of ``axis``); ``block_size`` (blocked
quantisation), INT4 / UINT4 / float8 types and float16 / bfloat16 values are refused by name.
onnxruntime's QDQ fusions (DequantizeLinear → Conv / MatMul → QuantizeLinear into
QLinearConv / QLinearMatMul, whose requantisation may differ by one step) are graph
optimisations: the reference (``t10.reference``) runs the graph as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count
from math import prod

import numpy as np
import onnx
from xdsl.dialects import math
from xdsl.ir import SSAValue

from t10.common.view_maps import reshape_map
from t10.frontend.importer import (
    FLOAT,
    BodyBuilder,
    Importer,
    Shape,
    checked_axes,
    computed_outputs,
    dtype_name,
    lowering,
    node_attributes,
    schema_inputs,
)
from t10.frontend.integer_ranges import (
    NARROW_TYPES,
    Interval,
    Range,
    Ranges,
    Unknown,
    hull,
    lift,
)
from t10.frontend.ops_conv import check_conv_shapes, im2col, patch_matrices
from t10.frontend.ops_elementwise import define_broadcast
from t10.frontend.ops_matmul import matmul
from t10.frontend.windows import windows

Operand = tuple[SSAValue, Shape]

_UINT8 = NARROW_TYPES[onnx.TensorProto.UINT8]
_NOT_AN_INTEGER = Unknown("a FLOAT result")  # the range of a float output: never read


def _quantize(bb: BodyBuilder, x: SSAValue, scale: SSAValue, zero: SSAValue,
              bounds: Interval) -> SSAValue:
    """onnxruntime's MLAS QuantizeLinear of one element (see the module docstring)."""
    lo, hi = bb.sub(bb.const(bounds.lo), zero), bb.sub(bb.const(bounds.hi), zero)
    v = bb.div(x, scale)
    v = bb.min(bb.select(bb.cmpf("oge", v, lo), v, lo), hi)
    return bb.add(bb.unary(math.RoundEvenOp, v), zero)


def _zero(bb: BodyBuilder, v: Sequence[SSAValue], at: int) -> SSAValue:
    """Operand ``at`` of a body, or 0 where the node omits that (zero-point) input."""
    return v[at] if at < len(v) else bb.const(0.0)


def _narrow_type(imp: Importer, node: onnx.NodeProto, name: str, role: str) -> Interval:
    """The bounds of the quantised type of value ``name`` (``node``'s ``role``)."""
    elem = imp.elem_type(name)
    if elem not in NARROW_TYPES:
        raise imp.node_error(
            node,
            f"its {role} '{name}' has element type {dtype_name(elem)}; t10 quantises to "
            f"{', '.join(dtype_name(t) for t in NARROW_TYPES)} only (held as exact float32 "
            "values)",
        )
    return NARROW_TYPES[elem]


def _check_float(imp: Importer, node: onnx.NodeProto, name: str, role: str) -> None:
    if name and imp.elem_type(name) != FLOAT:
        raise imp.node_error(
            node,
            f"its {role} '{name}' has element type {dtype_name(imp.elem_type(name))}; t10 "
            "computes FLOAT (float32) scales and values only",
        )


def _check_unblocked(imp: Importer, node: onnx.NodeProto) -> None:
    attrs = node_attributes(node)
    if attrs.get("block_size", 0):
        raise imp.node_error(
            node,
            f"block_size = {attrs['block_size']} (blocked quantisation) is not supported; t10 "
            "quantises per tensor or per axis (block_size 0)",
        )


def _parameters(
    imp: Importer, node: onnx.NodeProto, x_shape: Shape, scale: str, zero: str
) -> list[Operand]:
    """The scale and (if given) zero point, each shaped to broadcast to ``x_shape``: one
    element (per tensor), or 1-D along attribute ``axis`` (per axis: viewed as
    [size, 1, ...])."""
    s_shape = imp.shape_of(scale)
    names = [scale, *([zero] if zero else [])]
    if all(_one_element(imp.shape_of(n)) for n in names):
        return [imp.use(n) for n in names]
    if zero and imp.shape_of(zero) != s_shape:
        raise imp.node_error(
            node,
            f"its zero point '{zero}' has shape {list(imp.shape_of(zero))}, its scale '{scale}' "
            f"{list(s_shape)}; they must have the same shape",
        )
    axis = checked_axes(imp, node, [int(node_attributes(node).get("axis", 1))], len(x_shape))[0]
    if len(s_shape) != 1 or s_shape[0] != x_shape[axis]:
        raise imp.node_error(
            node,
            f"its scale '{scale}' has shape {list(s_shape)}; it must have one element (per "
            f"tensor) or be 1-D with one per index of axis {axis} of the input (shape "
            f"{list(x_shape)}): [{x_shape[axis]}]",
        )
    along = (s_shape[0],) + (1,) * (len(x_shape) - axis - 1)
    if along == s_shape:
        return [imp.use(n) for n in names]
    return [
        (imp.view(v, s_shape, along, reshape_map(s_shape, along), index=i), along)
        for i, (v, _) in enumerate(imp.use(n) for n in names)
    ]


def _one_element(shape: Shape) -> bool:
    """Whether a scale or zero point of ``shape`` is per tensor: a scalar, or [1] (as
    onnxruntime takes it, and as t10 holds a rank-0 runtime value)."""
    return len(shape) <= 1 and prod(shape) == 1


def _zero_range(imp: Importer, zero: str) -> Range:
    return imp.range_of(zero) if zero else Interval(0, 0)


def _quantize_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """The output type's values; computed: also the bounds less the zero point."""
    bounds = NARROW_TYPES[imp.elem_type(node.output[0])]
    zero = _zero_range(imp, node.input[2] if len(node.input) > 2 else "")
    return Ranges((bounds,), lift(lambda z: hull(bounds, bounds - z), zero))


@lowering(
    "QuantizeLinear",
    attributes={"axis", "block_size", "output_dtype", "precision", "saturate"},
    integers=_quantize_ranges,
)
def lower_quantize_linear(imp: Importer, node: onnx.NodeProto) -> None:
    """``y = saturate(round_half_to_even(x / scale) + zero_point)`` (``_quantize``)."""
    x_name, scale, zero = schema_inputs(imp, node, ("x", "y_scale"), ("y_zero_point",))
    _check_unblocked(imp, node)
    _check_float(imp, node, x_name, "input x")
    _check_float(imp, node, scale, "scale y_scale")
    precision = int(node_attributes(node).get("precision", 0))
    if precision not in (0, FLOAT):
        raise imp.node_error(
            node,
            f"precision = {dtype_name(precision)} is not supported; t10 divides in FLOAT",
        )
    bounds = _narrow_type(imp, node, node.output[0], "output y")
    x = imp.use(x_name)

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        return _quantize(bb, v[0], v[1], _zero(bb, v, 2), bounds)

    define_broadcast(imp, node, [x, *_parameters(imp, node, x[1], scale, zero)], body)


def _dequantize_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """Computed: the input less its zero point."""
    zero = _zero_range(imp, node.input[2] if len(node.input) > 2 else "")
    return Ranges((_NOT_AN_INTEGER,), lift(Interval.__sub__, imp.range_of(node.input[0]), zero))


@lowering(
    "DequantizeLinear",
    attributes={"axis", "block_size", "output_dtype"},
    integers=_dequantize_ranges,
)
def lower_dequantize_linear(imp: Importer, node: onnx.NodeProto) -> None:
    """``y = (x - zero_point) · scale``, of a runtime x (of a known one it is folded)."""
    x_name, scale, zero = schema_inputs(imp, node, ("x", "x_scale"), ("x_zero_point",))
    _check_unblocked(imp, node)
    _check_float(imp, node, scale, "scale x_scale")
    _check_float(imp, node, node.output[0], "output y")
    if imp.elem_type(x_name) == onnx.TensorProto.INT32:
        if zero and not (imp.is_known(zero) and not imp.constant(zero).any()):
            raise imp.node_error(
                node, f"an INT32 input takes no zero point, or 0: '{zero}' is not known to be 0"
            )
    else:
        _narrow_type(imp, node, x_name, "input x")
    x = imp.use(x_name)

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        return bb.mul(bb.sub(v[0], _zero(bb, v, 2)), v[1])

    define_broadcast(imp, node, [x, *_parameters(imp, node, x[1], scale, zero)], body)


_SCALAR_READERS: dict[str, frozenset[int]] = {
    "Add": frozenset({0, 1}),
    "Sub": frozenset({0, 1}),
    "Mul": frozenset({0, 1}),
    "Div": frozenset({0, 1}),
    "Cast": frozenset({0}),
    "QuantizeLinear": frozenset({1, 2}),
    "DequantizeLinear": frozenset({1, 2}),
    "MatMulInteger": frozenset({2, 3}),
    "ConvInteger": frozenset({2, 3}),
}
"""The readers of a rank-0 value held as shape [1], each with the inputs at which it may read
it: element-wise ones (whose result is rank 0, so held as [1] too, only if every operand is)
and the scales and zero points of the ops here (one element: per tensor)."""


def _check_scalar_readers(imp: Importer, node: onnx.NodeProto, names: Sequence[str]) -> None:
    """Values ``names`` (rank 0 in ONNX) are held as shape [1]: refuse the model unless every
    reader, and every reader of a rank-0 element-wise result computed from them, is one of
    ``_SCALAR_READERS`` (no graph output, nothing reading their shape)."""
    ranks = {
        vi.name: len(vi.type.tensor_type.shape.dim)
        for vi in (*imp.graph.value_info, *imp.graph.output)
        if vi.type.tensor_type.HasField("shape")
    }
    outputs = {vi.name for vi in imp.graph.output}
    pending, seen = list(names), set(names)
    while pending:
        name = pending.pop()
        if name in outputs:
            raise imp.node_error(
                node,
                f"the rank-0 value '{name}' computed from its scale or zero point is a graph "
                "output; t10 computes no rank-0 values (it holds these as shape [1]): "
                "output a value of rank >= 1 (e.g. Unsqueeze it)",
            )
        for index, reader in enumerate(imp.graph.node):
            at = [i for i, n in enumerate(reader.input) if n == name]
            if not at:
                continue
            allowed = _SCALAR_READERS.get(reader.op_type, frozenset())
            if reader.domain not in ("", "ai.onnx") or not set(at) <= allowed:
                label = reader.name or f"{reader.op_type}_{index}"
                raise imp.node_error(
                    node,
                    f"node '{label}' ({reader.op_type}) reads the rank-0 value '{name}' "
                    f"computed from its scale or zero point as input {at[0]}; t10 holds it as "
                    "shape [1] and lets only element-wise arithmetic and the scales and zero "
                    "points of the quantisation ops read it",
                )
            if reader.op_type in ("Add", "Sub", "Mul", "Div", "Cast"):
                new = [o for o in reader.output if o and ranks.get(o) == 0 and o not in seen]
                seen.update(new)
                pending.extend(new)


def _dynamic_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """UINT8 y and zero point; computed: also the bounds less the zero point."""
    return Ranges((_UINT8, _NOT_AN_INTEGER, _UINT8), hull(_UINT8, -_UINT8))


@lowering("DynamicQuantizeLinear", integers=_dynamic_ranges)
def lower_dynamic_quantize_linear(imp: Importer, node: onnx.NodeProto) -> None:
    """The min and max of x (two reductions over all its axes), with 0 included, give the
    scale and zero point (element-wise, on shape [1, ...]); y quantises x with them."""
    computed_outputs(imp, node, ("y", "y_scale", "y_zero_point"), (0, 1, 2))
    _check_scalar_readers(imp, node, [n for n in node.output[1:] if n])
    x = imp.use(node.input[0])
    axes = list(range(len(x[1])))
    index = count()
    high, ones = imp.reduction([x], axes, True, "max", index=next(index))
    low, _ = imp.reduction([x], axes, True, "min", index=next(index))
    qmax = float(_UINT8.hi)

    def scale_body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        hi, lo = bb.max(v[0], bb.const(0.0)), bb.min(v[1], bb.const(0.0))
        return bb.select(bb.cmpf("oeq", hi, lo), bb.const(1.0), bb.div(bb.sub(hi, lo),
                                                                        bb.const(qmax)))

    def zero_body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        lo = bb.min(v[0], bb.const(0.0))
        start = bb.sub(bb.const(0.0), bb.div(lo, v[1]))
        clamped = bb.max(bb.const(0.0), bb.min(bb.const(qmax), start))
        return bb.unary(math.RoundEvenOp, clamped)

    scale = imp.elementwise([(high, ones), (low, ones)], ones, scale_body, next(index))
    zero = imp.elementwise([(low, ones), (scale, ones)], ones, zero_body, next(index))
    y = imp.elementwise(
        [x, (scale, ones), (zero, ones)],
        x[1],
        lambda bb, v: _quantize(bb, v[0], v[1], v[2], _UINT8),
        next(index),
    )
    imp.define(node.output[0], y, x[1])
    for name, value in zip(node.output[1:], (scale, zero), strict=False):
        if name:
            imp.define(name, imp.view(value, ones, (1,), reshape_map(ones, (1,)),
                                      next(index)), (1,))


_INTEGER_OPERANDS = {"MatMulInteger": ("A", "B"), "ConvInteger": ("x", "w")}
_ZERO_POINTS = {"MatMulInteger": ("a_zero_point", "b_zero_point"),
                "ConvInteger": ("x_zero_point", "w_zero_point")}


def _known_weight(imp: Importer, w: str, zero: str) -> np.ndarray | None:
    """The known weight less its known zero point (per tensor, or per column of a
    MatMulInteger B), as float64; None if either is computed at run time."""
    if not imp.is_known(w) or (zero and not imp.is_known(zero)):
        return None
    weight = imp.constant(w).astype(np.float64)
    return weight - imp.constant(zero).astype(np.float64) if zero else weight


def _check_zero_point(
    imp: Importer, node: onnx.NodeProto, zero: str, role: str, per: int | None
) -> None:
    """A zero point has one element, or (``per``) one per output column."""
    if not zero:
        return
    shape = imp.shape_of(zero)
    if _one_element(shape):
        return
    if per is not None and shape == (per,):
        return
    allowed = "one element (per tensor)" + (f", or shape [{per}] (one per column)" if per else
                                            " (onnxruntime's kernel takes no other)")
    raise imp.node_error(
        node, f"its {role} '{zero}' has shape {list(shape)}; t10 takes {allowed}"
    )


def _centered(imp: Importer, name: str, zero: str, index: int) -> Operand:
    """Runtime operand ``name`` less its zero point (an exact integer subtraction), generic
    ``index`` of its node."""
    value = imp.use(name)
    if not zero:
        return value
    return imp.elementwise([value, imp.use(zero)], value[1],
                           lambda bb, v: bb.sub(v[0], v[1]), index), value[1]


def _integer_product_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """Every partial sum of products of the centered operands (see the module docstring)."""
    a, w = node.input[:2]
    a_zero, w_zero = (*node.input[2:], "", "")[:2]
    da = lift(Interval.__sub__, imp.range_of(a), _zero_range(imp, a_zero))
    dw = lift(Interval.__sub__, imp.range_of(w), _zero_range(imp, w_zero))
    weight = _known_weight(imp, w, w_zero)
    if weight is not None and isinstance(da, Interval):
        # the weights of one output: a column of B ([..., K, N]), a filter of w ([O, ...])
        axes = (max(weight.ndim - 2, 0),) if node.op_type == "MatMulInteger" else tuple(
            range(1, weight.ndim))
        bound = int(np.abs(weight).sum(axis=axes).max(initial=0)) * da.magnitude
        sums: Range = Interval(-bound, bound)
    else:
        k = imp.shape_of(a)[-1] if node.op_type == "MatMulInteger" else prod(imp.shape_of(w)[1:])
        sums = lift(lambda x, y: (x * y).sums(0, k), da, dw)
    return Ranges((sums,), lift(hull, da, dw, sums))


@lowering("MatMulInteger", integers=_integer_product_ranges)
def lower_matmul_integer(imp: Importer, node: onnx.NodeProto) -> None:
    """``(A - a_zero_point) @ (B - b_zero_point)`` (numpy.matmul), an INT32 result; a known
    B less its zero point is one constant."""
    a, b, a_zero, b_zero = schema_inputs(imp, node, ("A", "B"), _ZERO_POINTS[node.op_type])
    for name, role in ((a, "input A"), (b, "input B")):
        _narrow_type(imp, node, name, role)
    b_shape = imp.shape_of(b)
    _check_zero_point(imp, node, a_zero, "a_zero_point", None)
    _check_zero_point(imp, node, b_zero, "b_zero_point", b_shape[-1] if len(b_shape) > 1 else None)
    weight = _known_weight(imp, b, b_zero)
    rhs = (
        (imp.add_constant(f"{b}/centered_for/{node.output[0]}", weight.astype(np.float32),
                          hoist=b in imp.initializers), b_shape)
        if weight is not None
        else _centered(imp, b, b_zero, 1)
    )
    result, shape = matmul(imp, node, _centered(imp, a, a_zero, 0), rhs)
    imp.define(node.output[0], result, shape)


@lowering(
    "ConvInteger",
    attributes={"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
    integers=_integer_product_ranges,
)
def lower_conv_integer(imp: Importer, node: onnx.NodeProto) -> None:
    """The Conv (``ops_conv.im2col``) of ``x - x_zero_point`` with the known weight
    ``w - w_zero_point`` (one constant), an INT32 result."""
    x_name, w, x_zero, w_zero = schema_inputs(imp, node, ("x", "w"), _ZERO_POINTS[node.op_type])
    for name, role in ((x_name, "input x"), (w, "weight w")):
        _narrow_type(imp, node, name, role)
    x_shape, w_shape = imp.shape_of(x_name), imp.shape_of(w)
    group = check_conv_shapes(imp, node, x_shape, w_shape)
    _check_zero_point(imp, node, x_zero, "x_zero_point", None)
    _check_zero_point(imp, node, w_zero, "w_zero_point", None)  # onnxruntime's limit
    weight = _known_weight(imp, w, w_zero)
    if weight is None:
        raise imp.node_error(
            node,
            f"its weight '{w}' (or its zero point) is computed at run time; t10 takes a "
            "ConvInteger weight and zero point known at compile time (initializers)",
        )
    win = windows(imp, node, x_shape[2:], w_shape[2:])
    matrices = imp.add_constant(
        f"{w}/centered_patches_for/{node.output[0]}",
        patch_matrices(weight.astype(np.float32), group),
        hoist=w in imp.initializers,
    )
    x, _ = _centered(imp, x_name, x_zero, 0)
    result = (x_shape[0], w_shape[0], *win.out)
    y = im2col(imp, x, x_shape, win, matrices, group, w_shape[0], None, count(1), result)
    imp.define(node.output[0], y, result)
