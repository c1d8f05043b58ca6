"""Reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL1, ReduceL2,
ReduceSumSquare, ReduceLogSum, ReduceLogSumExp, ArgMax, ArgMin) and the ops built of reductions
and element-wise steps (Softmax, LogSoftmax, LayerNormalization, InstanceNormalization,
GroupNormalization, RMSNormalization, LpNormalization, MeanVarianceNormalization, CumSum, and
onnxruntime's SimplifiedLayerNormalization, SkipLayerNormalization and
SkipSimplifiedLayerNormalization).
ReduceSum, ReduceMax, ReduceMin, ArgMax, ArgMin and CumSum also compute on runtime integers,
exact within their proven ranges (``integer_ranges``: a sum of n elements, and each of its
partial sums, in any order)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.tensor_expr import COMBINER_IDENTITY
from t10.common.view_maps import reshape_map
from t10.frontend.importer import (
    BodyBuilder,
    BodyFn,
    Importer,
    Shape,
    broadcast_shapes,
    checked_axes,
    computed_outputs,
    last_axis_vector,
    lowering,
    node_attributes,
    node_inputs,
    schema_inputs,
)
from t10.frontend.integer_ranges import Interval, Ranges, lift


def _reduce_axes(imp: Importer, node: onnx.NodeProto, rank: int) -> list[int]:
    """The sorted axes a Reduce* node reduces (the `axes` attribute, or the known `axes`
    input of the newer opsets); no axes: all, unless noop_with_empty_axes."""
    attrs = node_attributes(node)
    names = node_inputs(node)
    if len(names) > 1:
        given = imp.known_input(node, names[1], "axes")
        if given.ndim != 1:  # onnxruntime refuses it when it runs the node
            raise imp.node_error(node, f"its axes input '{names[1]}' has shape "
                                       f"{list(given.shape)}; it must be a 1-D tensor")
        axes = [int(a) for a in given]
    else:
        axes = [int(a) for a in attrs.get("axes", [])]
    if not axes:
        return [] if attrs.get("noop_with_empty_axes", 0) else list(range(rank))
    return sorted(checked_axes(imp, node, axes, rank))


@dataclass(frozen=True)
class _Reduce:
    """A Reduce* op as ``after(combine over the axes of before(x))``."""

    combiner: str
    before: Callable[[BodyBuilder, SSAValue], SSAValue] | None = None
    after: Callable[[BodyBuilder, SSAValue, int], SSAValue] | None = None  # (bb, r, n)


def _square(bb: BodyBuilder, x: SSAValue) -> SSAValue:
    return bb.mul(x, x)


def _mean(bb: BodyBuilder, total: SSAValue, n: int) -> SSAValue:
    return bb.mul(total, bb.const(1.0 / n))


_REDUCES: dict[str, _Reduce] = {
    "ReduceSum": _Reduce("sum"),
    "ReduceMax": _Reduce("max"),
    "ReduceMin": _Reduce("min"),
    "ReduceMean": _Reduce("sum", after=_mean),
    "ReduceL1": _Reduce("sum", before=lambda bb, x: bb.abs(x)),
    "ReduceL2": _Reduce("sum", before=_square, after=lambda bb, r, n: bb.sqrt(r)),
    "ReduceSumSquare": _Reduce("sum", before=_square),
    "ReduceLogSum": _Reduce("sum", after=lambda bb, r, n: bb.log(r)),
}
"""op_type → its reduction; ReduceLogSumExp has a lowering of its own (a max first)."""
_REDUCE_ATTRIBUTES = {"axes", "keepdims", "noop_with_empty_axes"}
_INTEGER_REDUCES = ("ReduceSum", "ReduceMax", "ReduceMin")
"""The reductions that compute on runtime integers (exact within their proven ranges)."""


def _reduce_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """ReduceMax / ReduceMin select an element; ReduceSum sums n, through partial sums of 0
    to n elements."""
    x = imp.range_of(node.input[0])
    if node.op_type != "ReduceSum":
        return Ranges((x,))
    shape = imp.shape_of(node.input[0])
    n = prod(shape[a] for a in _reduce_axes(imp, node, len(shape)))
    return Ranges((lift(lambda i: i.sums(n, n), x),), lift(lambda i: i.sums(0, n), x))


@lowering(*_INTEGER_REDUCES, attributes=_REDUCE_ATTRIBUTES, integers=_reduce_ranges)
@lowering(*(op for op in _REDUCES if op not in _INTEGER_REDUCES), attributes=_REDUCE_ATTRIBUTES)
def lower_reduce(imp: Importer, node: onnx.NodeProto) -> None:
    """One reduction generic of ``before(x)`` (``_REDUCES``), then ``after`` as a second
    generic. No axes with ``noop_with_empty_axes``: each element reduced alone, as
    onnxruntime does (``after(before(x))`` with n = 1: |x| for ReduceL1 and ReduceL2, x² for
    ReduceSumSquare, log x for ReduceLogSum, x itself for the others)."""
    x = imp.use(node.input[0])
    axes = _reduce_axes(imp, node, len(x[1]))
    reduce = _REDUCES[node.op_type]
    before, after = reduce.before, reduce.after
    if not axes:
        _reduce_each_alone(imp, node, x, reduce)
        return
    keepdims = bool(node_attributes(node).get("keepdims", 1))
    body: BodyFn = (lambda bb, v: v[0]) if before is None else (lambda bb, v: before(bb, v[0]))
    if after is None:
        value, shape = imp.reduction([x], axes, keepdims, reduce.combiner, body)
        imp.define(node.output[0], value, shape)
        return
    total, shape = imp.reduction([x], axes, keepdims, reduce.combiner, body, index=0)
    n = prod(x[1][a] for a in axes)
    y = imp.elementwise([(total, shape)], shape, lambda bb, v: after(bb, v[0], n), 1)
    imp.define(node.output[0], y, shape)


def _reduce_each_alone(
    imp: Importer, node: onnx.NodeProto, x: tuple[SSAValue, Shape], reduce: _Reduce
) -> None:
    """The Reduce* of no axes: ``after(before(x), 1)`` element-wise, or x itself."""
    before, after = reduce.before, reduce.after
    if before is None and after in (None, _mean):
        imp.pass_through(node)
        return

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        value = v[0] if before is None else before(bb, v[0])
        return value if after is None else after(bb, value, 1)

    imp.define(node.output[0], imp.elementwise([x], x[1], body), x[1])


def _finite_or_zero(bb: BodyBuilder, x: SSAValue) -> SSAValue:
    """``x`` where finite (``x - x == 0``), else 0."""
    return bb.select(bb.cmpf("oeq", bb.sub(x, x), bb.const(0.0)), x, bb.const(0.0))


@lowering("ReduceLogSumExp", attributes=_REDUCE_ATTRIBUTES)
def lower_reduce_log_sum_exp(imp: Importer, node: onnx.NodeProto) -> None:
    """``m + log(sum exp(x - m))`` with ``m`` the max over the axes where it is finite, else
    0 (so that all -inf gives -inf, and +inf or NaN propagate): max-reduce, sum-reduce of
    the shifted exponentials, then the log and the shift back."""
    x = imp.use(node.input[0])
    shape = x[1]
    axes = _reduce_axes(imp, node, len(shape))
    if not axes:
        imp.pass_through(node)
        return
    keepdims = bool(node_attributes(node).get("keepdims", 1))
    top, kept = imp.reduction([x], axes, True, "max", index=0)
    exps, out_shape = imp.reduction(
        [x, (top, kept)],
        axes,
        keepdims,
        "sum",
        lambda bb, v: bb.exp(bb.sub(v[0], _finite_or_zero(bb, v[1]))),
        index=1,
    )
    if not keepdims:
        top = imp.view(top, kept, out_shape, reshape_map(kept, out_shape), index=2)
    y = imp.elementwise(
        [(exps, out_shape), (top, out_shape)],
        out_shape,
        lambda bb, v: bb.add(bb.log(v[0]), _finite_or_zero(bb, v[1])),
        3,
    )
    imp.define(node.output[0], y, out_shape)


def _arg_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """A position along the axis: 0 to its length - 1."""
    shape = imp.shape_of(node.input[0])
    axis = checked_axes(imp, node, [int(node_attributes(node).get("axis", 0))], len(shape))[0]
    return Ranges((Interval(0, shape[axis] - 1),))


@lowering("ArgMax", "ArgMin", attributes={"axis", "keepdims", "select_last_index"},
          integers=_arg_ranges)
def lower_arg_extreme(imp: Importer, node: onnx.NodeProto) -> None:
    """The position of the max (ArgMax) or min (ArgMin) along ``axis``, as onnxruntime finds
    it: a scan from the first element that moves on to a strictly greater (smaller) element,
    or with ``select_last_index`` a greater (smaller) or equal one, so a NaN never wins and a
    NaN first element is never left (position 0). As generics: the extreme over the non-NaN
    elements (a reduction), then the first (last) position holding it, or 0 where the first
    element is NaN (a min (max) reduction over the positions, a constant; the first element
    read through a view)."""
    value, shape = imp.use(node.input[0])
    attrs = node_attributes(node)
    rank = len(shape)
    axis = checked_axes(imp, node, [int(attrs.get("axis", 0))], rank)[0]
    keepdims = bool(attrs.get("keepdims", 1))
    last = bool(attrs.get("select_last_index", 0))
    if shape[axis] == 0:
        raise imp.node_error(node, f"axis {axis} is empty: an empty axis has no {node.op_type}")
    combiner = "max" if node.op_type == "ArgMax" else "min"
    skip_nan = COMBINER_IDENTITY[combiner]  # what a NaN element counts as: never the extreme
    extreme, kept = imp.reduction(
        [(value, shape)],
        [axis],
        True,
        combiner,
        lambda bb, v: bb.select(bb.cmpf("uno", v[0], v[0]), bb.const(skip_nan), v[0]),
        index=0,
    )
    positions, along = imp.positions(f"{node.output[0]}_positions", shape[axis], axis, rank)
    dim = AffineExpr.dimension
    first_map = AffineMap(rank, 0, tuple(
        AffineExpr.constant(0) if d == axis else dim(d) for d in range(rank)
    ))
    first = imp.view(value, shape, kept, first_map, index=1)
    pick = "max" if last else "min"
    none = COMBINER_IDENTITY[pick]

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        x, top, position, head = v
        hit = bb.select(bb.cmpf("oeq", x, top), position, bb.const(none))
        return bb.select(bb.cmpf("uno", head, head), bb.const(0.0), hit)

    index, out_shape = imp.reduction(
        [(value, shape), (extreme, kept), (positions, along), (first, kept)],
        [axis],
        keepdims,
        pick,
        body,
        index=2,
    )
    imp.define(node.output[0], index, out_shape)


@lowering("Softmax", "LogSoftmax", attributes={"axis"})
def lower_softmax(imp: Importer, node: onnx.NodeProto) -> None:
    """max-reduce → exp(x - max) → sum-reduce → div (Softmax) or (x - max) - log(sum)
    (LogSoftmax), each a generic, over the axis (opset 13+; default the last) or, before
    opset 13, over every axis from ``axis`` on (default 1: the input coerced to 2-D)."""
    x = imp.use(node.input[0])
    shape = x[1]
    coerced = imp.opset < 13
    given = int(node_attributes(node).get("axis", 1 if coerced else -1))
    axis = checked_axes(imp, node, [given], len(shape))[0]
    axes = list(range(axis, len(shape))) if coerced else [axis]
    y = softmax(imp, x, axes, 0, log=node.op_type == "LogSoftmax")
    imp.define(node.output[0], y, shape)


def softmax(
    imp: Importer, x: tuple[SSAValue, Shape], axes: Sequence[int], first: int, log: bool = False
) -> SSAValue:
    """Softmax (or with ``log`` LogSoftmax) of ``x`` over ``axes``: the generics ``first`` to
    ``first + 3`` of the node."""
    shape = x[1]
    top = imp.reduction([x], axes, True, "max", index=first)
    e = imp.elementwise([x, top], shape, lambda bb, v: bb.exp(bb.sub(v[0], v[1])), first + 1)
    total = imp.reduction([(e, shape)], axes, True, "sum", index=first + 2)
    if not log:
        return imp.elementwise(
            [(e, shape), total], shape, lambda bb, v: bb.div(v[0], v[1]), first + 3
        )
    return imp.elementwise(
        [x, top, total], shape, lambda bb, v: bb.sub(bb.sub(v[0], v[1]), bb.log(v[2])), first + 3
    )


def _epsilon(imp: Importer, node: onnx.NodeProto, default: float = 1e-5) -> float:
    eps = float(node_attributes(node).get("epsilon", default))
    if not (np.isfinite(eps) and eps >= 0):
        raise imp.node_error(
            node,
            f"epsilon = {eps} must be finite and >= 0: with a negative one the result is NaN "
            "or ill-conditioned wherever the variance is near -epsilon",
        )
    return eps


@dataclass(frozen=True)
class Normalized:
    """``x`` normalised over some axes: ``centred`` = x - mean (x's shape), ``std`` and
    ``mean`` (the reduced shape, kept dims), each a generic of the node."""

    centred: SSAValue
    std: SSAValue
    mean: SSAValue
    reduced: Shape


def normalize(
    imp: Importer, x: tuple[SSAValue, Shape], axes: Sequence[int], eps: float
) -> Normalized:
    """mean (sum, scale) → x - mean → square-mean (sum of squares, scale, + eps, sqrt): the
    generics ``:0`` to ``:4`` of the node."""
    shape = x[1]
    scale = 1.0 / int(np.prod([shape[a] for a in axes]))
    total, rshape = imp.reduction([x], axes, True, "sum", index=0)
    mean = imp.elementwise(
        [(total, rshape)], rshape, lambda bb, v: bb.mul(v[0], bb.const(scale)), 1
    )
    d = imp.elementwise([x, (mean, rshape)], shape, lambda bb, v: bb.sub(v[0], v[1]), 2)
    squares, _ = imp.reduction(
        [(d, shape)], axes, True, "sum", lambda bb, v: bb.mul(v[0], v[0]), index=3
    )
    std = imp.elementwise(
        [(squares, rshape)],
        rshape,
        lambda bb, v: bb.sqrt(bb.add(bb.mul(v[0], bb.const(scale)), bb.const(eps))),
        4,
    )
    return Normalized(d, std, mean, rshape)


def _scale_shift(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
    """centred / std (· scale) (+ bias)."""
    y = bb.div(v[0], v[1])
    if len(v) > 2:
        y = bb.mul(y, v[2])
    return bb.add(y, v[3]) if len(v) > 3 else y


def layer_norm(
    imp: Importer,
    x: tuple[SSAValue, Shape],
    axis: int,
    eps: float,
    affine: Sequence[tuple[SSAValue, Shape]],
) -> tuple[SSAValue, Normalized]:
    """x normalised over the dims from ``axis`` on (``normalize``) → divide → · scale + bias
    (``affine``: those given, each broadcast to x): the generics ``:0`` to ``:5``."""
    n = normalize(imp, x, list(range(axis, len(x[1]))), eps)
    operands = [(n.centred, x[1]), (n.std, n.reduced), *affine]
    return imp.elementwise(operands, x[1], _scale_shift, 5), n


def _rms_norm(
    imp: Importer, x: tuple[SSAValue, Shape], axis: int, eps: float, scale: tuple[SSAValue, Shape]
) -> SSAValue:
    """Over the dims from ``axis`` on: the mean of squares (a sum of x², then ``sqrt(s / n +
    eps)``), then ``x / rms · scale`` (``scale`` broadcast to x): the generics ``:0`` to
    ``:2``."""
    shape = x[1]
    axes = list(range(axis, len(shape)))
    inverse_n = 1.0 / prod(shape[a] for a in axes)
    squares, reduced = imp.reduction(
        [x], axes, True, "sum", lambda bb, v: _square(bb, v[0]), index=0
    )
    rms = imp.elementwise(
        [(squares, reduced)],
        reduced,
        lambda bb, v: bb.sqrt(bb.add(bb.mul(v[0], bb.const(inverse_n)), bb.const(eps))),
        1,
    )
    return imp.elementwise([x, (rms, reduced), scale], shape, _scale_shift, 2)


def _axis(imp: Importer, node: onnx.NodeProto, rank: int) -> int:
    """The first normalised axis (the ``axis`` attribute, default -1), made non-negative."""
    return checked_axes(imp, node, [int(node_attributes(node).get("axis", -1))], rank)[0]


@lowering("LayerNormalization", attributes={"axis", "epsilon", "stash_type"})  # stash: f32
def lower_layer_norm(imp: Importer, node: onnx.NodeProto) -> None:
    """``layer_norm`` over the dims from `axis` on; the mean and 1 / std if requested."""
    names = node_inputs(node)
    x = imp.use(names[0])
    shape = x[1]
    affine = [imp.use(k) for k in names[1:3]]
    if broadcast_shapes(shape, *(s for _, s in affine)) != shape:
        raise imp.node_error(node, "Scale and B must broadcast to the shape of X")
    y, n = layer_norm(imp, x, _axis(imp, node, len(shape)), _epsilon(imp, node), affine)
    imp.define(node.output[0], y, shape)
    outputs = list(node.output) + ["", ""]
    if outputs[1]:
        imp.define(outputs[1], n.mean, n.reduced)
    if outputs[2]:
        inv = imp.elementwise(
            [(n.std, n.reduced)], n.reduced, lambda bb, v: bb.div(bb.const(1.0), v[0]), 6
        )
        imp.define(outputs[2], inv, n.reduced)


@lowering(
    "RMSNormalization", "SimplifiedLayerNormalization", attributes={"axis", "epsilon", "stash_type"}
)  # stash: f32
def lower_rms_norm(imp: Importer, node: onnx.NodeProto) -> None:
    """``_rms_norm`` over the dims from ``axis`` on: RMSNormalization (opset 23) and
    onnxruntime's SimplifiedLayerNormalization (its default-domain extension; its saved
    1 / rms, a training output, is refused)."""
    x_name, scale_name = schema_inputs(imp, node, ("X", "scale"))
    y_name, _ = computed_outputs(imp, node, ("Y", "inv_std_var"), {0})
    x = imp.use(x_name)
    shape = x[1]
    scale = imp.use(scale_name)
    if broadcast_shapes(shape, scale[1]) != shape:
        raise imp.node_error(node, "scale must broadcast to the shape of X")
    y = _rms_norm(imp, x, _axis(imp, node, len(shape)), _epsilon(imp, node), scale)
    imp.define(y_name, y, shape)


_SKIP_SUM = 7
"""The index of a Skip*LayerNormalization's generic summing input, skip and bias (after the
norm's ``:0`` to ``:5``)."""

_SKIP_EPSILON = 1e-12
"""onnxruntime's default epsilon of SkipLayerNormalization and SkipSimplifiedLayerNormalization."""


@lowering(
    "SkipLayerNormalization",
    "SkipSimplifiedLayerNormalization",
    attributes={"epsilon"},
    domain="com.microsoft",
)
def lower_skip_norm(imp: Importer, node: onnx.NodeProto) -> None:
    """onnxruntime's residual-add and norm over the last axis: s = input + skip (+ bias), then
    ``layer_norm(s) · gamma (+ beta)`` (SkipLayerNormalization) or ``_rms_norm(s) · gamma``
    (SkipSimplifiedLayerNormalization); s is output 3 (input_skip_bias_sum) if requested. The
    mean and 1 / std it saves for training are refused."""
    simplified = node.op_type == "SkipSimplifiedLayerNormalization"
    optional = ("bias",) if simplified else ("beta", "bias")
    formals = ("input", "skip", "gamma", *optional)
    names = dict(zip(formals, schema_inputs(imp, node, formals[:3], optional), strict=True))
    outputs = computed_outputs(
        imp, node, ("output", "mean", "inv_std_var", "input_skip_bias_sum"), {0, 3}
    )
    x = imp.use(names["input"])
    shape = x[1]
    skip = imp.use(names["skip"])
    if broadcast_shapes(shape, skip[1]) != shape:
        raise imp.node_error(
            node, f"skip '{names['skip']}' of shape {list(skip[1])} does not broadcast to the "
            f"shape of input '{names['input']}' {list(shape)}: give it that shape, or one of "
            "its trailing dims"
        )
    vectors = {
        role: last_axis_vector(imp, node, name, role, shape)
        for role, name in names.items()
        if name and role in ("gamma", "beta", "bias")
    }
    terms = [x, skip, *([vectors["bias"]] if "bias" in vectors else [])]
    summed = (
        imp.elementwise(terms, shape, lambda bb, v: functools.reduce(bb.add, v), _SKIP_SUM),
        shape,
    )
    if outputs[3]:
        imp.define(outputs[3], *summed)
    eps = _epsilon(imp, node, _SKIP_EPSILON)
    axis = len(shape) - 1
    if simplified:
        y = _rms_norm(imp, summed, axis, eps, vectors["gamma"])
    else:
        affine = [vectors[r] for r in ("gamma", "beta") if r in vectors]
        y, _ = layer_norm(imp, summed, axis, eps, affine)
    imp.define(outputs[0], y, shape)


@lowering("LpNormalization", attributes={"axis", "p"})
def lower_lp_norm(imp: Importer, node: onnx.NodeProto) -> None:
    """``x / norm`` along ``axis`` (default -1), the norm ``sum |x|`` (p = 1) or ``sqrt(sum
    x²)`` (p = 2, the default) as ReduceL1 / ReduceL2 compute it; 0 where the norm is 0, as
    onnxruntime."""
    x = imp.use(node.input[0])
    shape = x[1]
    attrs = node_attributes(node)
    axis = checked_axes(imp, node, [int(attrs.get("axis", -1))], len(shape))[0]
    p = int(attrs.get("p", 2))
    if p not in (1, 2):
        raise imp.node_error(node, f"p = {p} is not a norm ONNX defines: p must be 1 or 2")
    reduce = _REDUCES["ReduceL1" if p == 1 else "ReduceL2"]
    before, after = reduce.before, reduce.after
    assert before is not None
    total, reduced = imp.reduction(
        [x], [axis], True, "sum", lambda bb, v: before(bb, v[0]), index=0
    )
    norm = total if after is None else imp.elementwise(
        [(total, reduced)], reduced, lambda bb, v: after(bb, v[0], 1), 1
    )

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        zero = bb.const(0.0)
        return bb.select(bb.cmpf("oeq", v[1], zero), zero, bb.div(v[0], v[1]))

    imp.define(node.output[0], imp.elementwise([x, (norm, reduced)], shape, body, 2), shape)


_MVN_EPSILON = 1e-9
"""What MeanVarianceNormalization adds to the standard deviation (its ONNX function's)."""


@lowering("MeanVarianceNormalization", attributes={"axes"})
def lower_mean_variance_norm(imp: Importer, node: onnx.NodeProto) -> None:
    """``(x - mean) / (std + 1e-9)`` over ``axes`` (default [0, 2, 3]), the variance the mean
    of the squared deviations (``normalize`` without epsilon)."""
    x = imp.use(node.input[0])
    given = node_attributes(node).get("axes", [0, 2, 3])
    axes = sorted(checked_axes(imp, node, [int(a) for a in given], len(x[1])))
    n = normalize(imp, x, axes, 0.0)
    y = imp.elementwise(
        [(n.centred, x[1]), (n.std, n.reduced)],
        x[1],
        lambda bb, v: bb.div(v[0], bb.add(v[1], bb.const(_MVN_EPSILON))),
        5,
    )
    imp.define(node.output[0], y, x[1])


def _per_channel(
    imp: Importer, node: onnx.NodeProto, name: str, shape: Shape
) -> tuple[SSAValue, Shape]:
    """Input ``name``, one value per channel (dim 1 of ``shape``), viewed to broadcast along
    dim 1."""
    channels = shape[1]
    per_channel = (channels, *[1] * (len(shape) - 2))
    value, given = imp.use(name)
    if given != (channels,):
        raise imp.node_error(node, f"'{name}' of shape {list(given)} must hold one value per "
                                   f"channel: shape [{channels}]")
    view = AffineMap(len(per_channel), 0, (AffineExpr.dimension(0),))
    return imp.view(value, given, per_channel, view, index=7), per_channel


@lowering("InstanceNormalization", attributes={"epsilon"})
def lower_instance_norm(imp: Importer, node: onnx.NodeProto) -> None:
    """Normalise each channel of each sample over its spatial dims, then · scale[c] + B[c]."""
    x = imp.use(node.input[0])
    shape = x[1]
    if len(shape) < 3:
        raise imp.node_error(node, f"the input must be [N, C, D1, ...], got {list(shape)}")
    n = normalize(imp, x, list(range(2, len(shape))), _epsilon(imp, node))
    affine = [_per_channel(imp, node, name, shape) for name in node.input[1:3]]
    operands = [(n.centred, shape), (n.std, n.reduced), *affine]
    imp.define(node.output[0], imp.elementwise(operands, shape, _scale_shift, 5), shape)


@lowering("GroupNormalization", attributes={"epsilon", "num_groups", "stash_type"})
def lower_group_norm(imp: Importer, node: onnx.NodeProto) -> None:
    """Normalise each group of channels of each sample (with its spatial dims) as one: the
    input viewed as [N, G, C/G·D1·...], ``normalize`` over dim 2, viewed back, then · scale +
    bias per channel (opset 21; the checker refuses opset 18's per-group form, deprecated)."""
    value, shape = imp.use(node.input[0])
    groups = int(node_attributes(node).get("num_groups", 0))
    if len(shape) < 3 or groups < 1 or shape[1] % groups:
        raise imp.node_error(node, f"num_groups {groups} must divide the channels of an "
                                   f"[N, C, D1, ...] input, got {list(shape)}")
    grouped = (shape[0], groups, int(np.prod(shape[1:])) // groups)
    xg = imp.view(value, shape, grouped, reshape_map(shape, grouped), index=6)
    n = normalize(imp, (xg, grouped), [2], _epsilon(imp, node))
    centred = imp.view(n.centred, grouped, shape, reshape_map(grouped, shape), index=8)
    per_channel = (shape[0], shape[1], *[1] * (len(shape) - 2))
    group_of = AffineExpr.dimension(1) // (shape[1] // groups)
    stds = imp.view(n.std, n.reduced, per_channel, AffineMap(
        len(shape), 0, (AffineExpr.dimension(0), group_of, AffineExpr.constant(0))
    ), index=9)
    affine = [_per_channel(imp, node, name, shape) for name in node.input[1:3]]
    operands = [(centred, shape), (stds, per_channel), *affine]
    imp.define(node.output[0], imp.elementwise(operands, shape, _scale_shift, 5), shape)


_CUMSUM_KEEPS = {
    (False, False): np.less_equal,  # out[i] = Σ_{j <= i} x[j]
    (True, False): np.less,
    (False, True): np.greater_equal,
    (True, True): np.greater,
}
"""(exclusive, reverse) → which source positions j each output position i sums."""


def _cumsum_axis(imp: Importer, node: onnx.NodeProto, rank: int) -> int:
    axis_values = imp.known_ints(node, node.input[1], "axis")
    if len(axis_values) != 1:
        raise imp.node_error(node, f"axis must be one value, got {axis_values}")
    return checked_axes(imp, node, axis_values, rank)[0]


def _cumsum_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """Each result sums 1 to n elements (exclusive: 0 to n - 1), n the axis length; the
    reduction's partial sums 0 to n."""
    shape = imp.shape_of(node.input[0])
    n = shape[_cumsum_axis(imp, node, len(shape))]
    exclusive = int(bool(node_attributes(node).get("exclusive", 0)))
    x = imp.range_of(node.input[0])
    result = lift(lambda i: i.sums(1 - exclusive, n - exclusive), x)
    return Ranges((result,), lift(lambda i: i.sums(0, n), x))


@lowering("CumSum", attributes={"exclusive", "reverse"}, integers=_cumsum_ranges)
def lower_cumsum(imp: Importer, node: onnx.NodeProto) -> None:
    """A sum-reduction over a new last loop j: ``out[.., i, ..] = Σ_j select(keep[i, j],
    x[.., j, ..], 0)`` with ``keep`` a known 0 / 1 triangle (a constant). The source is read
    through a view moving the axis to j; a select, not a product with the triangle, so that
    an infinite x[j] does not make the positions that do not sum it NaN. Cost: element-wise
    over n² per line (n = the axis length), as the reduction it is."""
    value, shape = imp.use(node.input[0])
    rank = len(shape)
    axis = _cumsum_axis(imp, node, rank)
    attrs = node_attributes(node)
    n = shape[axis]
    imp.check_builds(node, "triangle", [n, n])
    positions = np.arange(n)
    keeps = _CUMSUM_KEEPS[bool(attrs.get("exclusive", 0)), bool(attrs.get("reverse", 0))]
    triangle = keeps(positions[None, :], positions[:, None]).astype(np.float32)  # [i, j]
    lead = (1,) * axis + (n,) + (1,) * (rank - axis - 1)
    keep = imp.add_constant(f"{node.output[0]}_keep", triangle.reshape(*lead, n), hoist=False)
    dim = AffineExpr.dimension
    spread = shape[:axis] + (1,) + shape[axis + 1 :] + (n,)
    source_map = AffineMap(rank + 1, 0, tuple(dim(rank if d == axis else d) for d in range(rank)))
    spread_x = imp.view(value, shape, spread, source_map, index=0)

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        return bb.select(bb.cmpf_one(v[0], bb.const(0.0)), v[1], bb.const(0.0))

    total, out_shape = imp.reduction(
        [(keep, (*lead, n)), (spread_x, spread)], [rank], False, "sum", body, index=1
    )
    imp.define(node.output[0], total, out_shape)
