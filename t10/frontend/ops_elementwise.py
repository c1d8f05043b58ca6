"""Element-wise ops: each one all-parallel ``linalg.generic`` over the numpy-broadcast shape of
its inputs, with a ``tensor.empty`` as ``outs`` and a scalar body of ``arith`` ops, and
``math`` ops (exp, tanh, erf, sqrt, powf, the trigonometric and hyperbolic functions and their
inverses, floor, ceil, roundeven) where ``arith`` has none. onnxruntime's FastGelu and
BiasGelu are Gelu's bodies of the input plus a bias.
Add, Sub, Mul, Neg, Abs, Relu, Sign, Max and Min (ONNX types them for integers too; Sum
only for floats) also compute on runtime integers, by
the same float bodies, exact within their proven ranges (``integer_ranges``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from xdsl.dialects import math
from xdsl.ir import Operation, SSAValue

from t10.frontend.importer import (
    BodyBuilder,
    BodyFn,
    Importer,
    Shape,
    broadcast_shapes,
    computed_outputs,
    last_axis_vector,
    lowering,
    node_attributes,
    schema_inputs,
)
from t10.frontend.integer_ranges import Interval, Ranges, keeps_input, lift


def _sigmoid(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    """1 / (1 + exp(-x))."""
    one = bb.const(1.0)
    return bb.div(one, bb.add(one, bb.exp(bb.neg(x[0]))))


def _gelu(bb: BodyBuilder, x: SSAValue, phi: SSAValue) -> SSAValue:
    """0.5 · x · (1 + phi), phi the (approximated) erf(x / √2)."""
    return bb.mul(bb.mul(bb.const(0.5), x), bb.add(bb.const(1.0), phi))


def _gelu_erf(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    """0.5 · x · (1 + erf(x / √2))."""
    return _gelu(bb, x[0], bb.erf(bb.mul(x[0], bb.const(_SQRT_HALF))))


def _gelu_tanh(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    """0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))."""
    cube = bb.mul(x[0], bb.mul(x[0], x[0]))
    inner = bb.add(x[0], bb.mul(bb.const(0.044715), cube))
    return _gelu(bb, x[0], bb.tanh(bb.mul(bb.const(_SQRT_2_OVER_PI), inner)))


def _sign(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    """1 above 0, -1 below, x itself otherwise (±0, NaN), as onnxruntime."""
    below = bb.select(bb.cmpf("olt", x[0], bb.const(0.0)), bb.const(-1.0), x[0])
    return bb.select(bb.cmpf("ogt", x[0], bb.const(0.0)), bb.const(1.0), below)


def _math(op: Callable[[SSAValue], Operation]) -> BodyFn:
    """The body applying the one-operand ``math`` op ``op``."""
    return lambda bb, x: bb.unary(op, x[0])


_SQRT_HALF = 0.7071067811865476
_SQRT_2_OVER_PI = 0.7978845608028654

_ELEMENTWISE_BODIES: dict[str, BodyFn] = {
    "Add": lambda bb, x: bb.add(x[0], x[1]),
    "Sub": lambda bb, x: bb.sub(x[0], x[1]),
    "Mul": lambda bb, x: bb.mul(x[0], x[1]),
    "Div": lambda bb, x: bb.div(x[0], x[1]),
    "Pow": lambda bb, x: bb.pow(x[0], x[1]),
    "Neg": lambda bb, x: bb.neg(x[0]),
    "Reciprocal": lambda bb, x: bb.div(bb.const(1.0), x[0]),
    "Relu": lambda bb, x: bb.max(x[0], bb.const(0.0)),
    "Sqrt": lambda bb, x: bb.sqrt(x[0]),
    "Exp": lambda bb, x: bb.exp(x[0]),
    "Tanh": lambda bb, x: bb.tanh(x[0]),
    "Erf": lambda bb, x: bb.erf(x[0]),
    "Sigmoid": _sigmoid,
    "Abs": lambda bb, x: bb.abs(x[0]),
    "Log": lambda bb, x: bb.log(x[0]),
    "Cos": lambda bb, x: bb.cos(x[0]),
    "Sin": lambda bb, x: bb.sin(x[0]),
    "Tan": _math(math.TanOp),
    "Atan": _math(math.AtanOp),
    "Asin": _math(math.AsinOp),
    "Acos": _math(math.AcosOp),
    "Sinh": _math(math.SinhOp),
    "Cosh": _math(math.CoshOp),
    "Asinh": _math(math.AsinhOp),
    "Acosh": _math(math.AcoshOp),
    "Atanh": _math(math.AtanhOp),
    "Floor": lambda bb, x: bb.floor(x[0]),
    "Round": _math(math.RoundEvenOp),  # half to even, as ONNX
    "Ceil": lambda bb, x: bb.ceil(x[0]),
    "Sign": _sign,
    "Max": lambda bb, x: functools.reduce(bb.max, x),
    "Min": lambda bb, x: functools.reduce(bb.min, x),
    "Sum": lambda bb, x: functools.reduce(bb.add, x),
    "Mean": lambda bb, x: bb.div(functools.reduce(bb.add, x), bb.const(float(len(x)))),
}
"""op_type → the scalar body of its element-wise generic (Gelu: ``_GELU_BODIES``)."""

_GELU_BODIES: dict[bytes, BodyFn] = {b"none": _gelu_erf, b"tanh": _gelu_tanh}
"""Gelu's ``approximate`` attribute → body."""


def _below_zero(bb: BodyBuilder, x: SSAValue, below: SSAValue) -> SSAValue:
    """``below`` where x < 0, x elsewhere (NaN stays NaN)."""
    return bb.select(bb.cmpf("olt", x, bb.const(0.0)), below, x)


def _exp_minus_one(bb: BodyBuilder, x: SSAValue, alpha: float) -> SSAValue:
    """alpha · (exp(x) - 1)."""
    return bb.mul(bb.const(alpha), bb.sub(bb.exp(x), bb.const(1.0)))


def _clamp01(bb: BodyBuilder, x: SSAValue) -> SSAValue:
    return bb.max(bb.min(x, bb.const(1.0)), bb.const(0.0))


def _softplus(bb: BodyBuilder, x: SSAValue) -> SSAValue:
    """log(1 + exp(x)) as max(x, 0) + log(1 + exp(-|x|)): no overflow for large x."""
    tail = bb.log(bb.add(bb.const(1.0), bb.exp(bb.neg(bb.abs(x)))))
    return bb.add(bb.max(x, bb.const(0.0)), tail)


ActivationBody = Callable[[BodyBuilder, SSAValue, dict[str, float]], SSAValue]

_ACTIVATIONS: dict[str, tuple[dict[str, float], ActivationBody]] = {
    "LeakyRelu": (
        {"alpha": 0.01},
        lambda bb, x, a: _below_zero(bb, x, bb.mul(bb.const(a["alpha"]), x)),
    ),
    "Elu": (
        {"alpha": 1.0},
        lambda bb, x, a: _below_zero(bb, x, _exp_minus_one(bb, x, a["alpha"])),
    ),
    "Selu": (
        {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875},
        lambda bb, x, a: bb.mul(
            bb.const(a["gamma"]),
            bb.select(bb.cmpf("ogt", x, bb.const(0.0)), x, _exp_minus_one(bb, x, a["alpha"])),
        ),
    ),
    "Celu": (
        {"alpha": 1.0},
        lambda bb, x, a: bb.add(
            bb.max(x, bb.const(0.0)),
            bb.min(_exp_minus_one(bb, bb.div(x, bb.const(a["alpha"])), a["alpha"]),
                   bb.const(0.0)),
        ),
    ),
    "ThresholdedRelu": (
        {"alpha": 1.0},
        lambda bb, x, a: bb.select(bb.cmpf("ogt", x, bb.const(a["alpha"])), x, bb.const(0.0)),
    ),
    "HardSigmoid": (
        {"alpha": 0.2, "beta": 0.5},
        lambda bb, x, a: _clamp01(bb, bb.add(bb.mul(bb.const(a["alpha"]), x),
                                             bb.const(a["beta"]))),
    ),
    "HardSwish": (
        {},
        lambda bb, x, a: bb.mul(x, _clamp01(bb, bb.add(bb.div(x, bb.const(6.0)),
                                                       bb.const(0.5)))),
    ),
    "Softplus": ({}, lambda bb, x, a: _softplus(bb, x)),
    "Softsign": ({}, lambda bb, x, a: bb.div(x, bb.add(bb.const(1.0), bb.abs(x)))),
    "Mish": ({}, lambda bb, x, a: bb.mul(x, bb.tanh(_softplus(bb, x)))),
    "Swish": (
        {"alpha": 1.0},
        lambda bb, x, a: bb.mul(x, _sigmoid(bb, [bb.mul(bb.const(a["alpha"]), x)])),
    ),
    "Shrink": (
        {"bias": 0.0, "lambd": 0.5},
        lambda bb, x, a: bb.select(
            bb.cmpf("olt", x, bb.const(-a["lambd"])),
            bb.add(x, bb.const(a["bias"])),
            bb.select(bb.cmpf("ogt", x, bb.const(a["lambd"])), bb.sub(x, bb.const(a["bias"])),
                      bb.const(0.0)),
        ),
    ),
}
"""Activations with float attributes: op_type → (the attributes and their ONNX defaults, the
scalar body given their values), each as the ONNX operator's definition states it."""


def _sign_range(x: Interval) -> Interval:
    return Interval(int(np.sign(x.lo)), int(np.sign(x.hi)))


IntervalFn = Callable[..., Interval]

_INTEGER_RANGES: dict[str, tuple[IntervalFn, IntervalFn | None]] = {
    "Add": (Interval.__add__, Interval.__add__),
    "Sub": (Interval.__sub__, Interval.__sub__),
    "Mul": (Interval.__mul__, Interval.__mul__),
    "Neg": (Interval.__neg__, None),
    "Abs": (Interval.abs, None),
    "Relu": (lambda x: x.maximum(Interval(0, 0)), None),
    "Sign": (_sign_range, None),
    "Max": (lambda *x: functools.reduce(Interval.maximum, x), None),
    "Min": (lambda *x: functools.reduce(Interval.minimum, x), None),
}
"""op_type → the range of its result and of the new values it computes from its inputs'
ranges (None: it computes none, its result is an input, its negation, or -1 / 0 / 1)."""


def _integer_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    result, computed = _INTEGER_RANGES[node.op_type]
    ranges = [imp.range_of(n) for n in node.input]
    return Ranges((lift(result, *ranges),), None if computed is None else lift(computed, *ranges))


@lowering("Gelu", attributes={"approximate"})
@lowering(*_INTEGER_RANGES, integers=_integer_ranges)
@lowering(*(op for op in _ELEMENTWISE_BODIES if op not in _INTEGER_RANGES))
def lower_elementwise(imp: Importer, node: onnx.NodeProto) -> None:
    """An op of ``_ELEMENTWISE_BODIES`` or Gelu: one generic over the broadcast input shape."""
    define_broadcast(imp, node, [imp.use(n) for n in node.input], _elementwise_body(imp, node))


def define_broadcast(
    imp: Importer, node: onnx.NodeProto, inputs: Sequence[tuple[SSAValue, Shape]], body: BodyFn
) -> None:
    """Output 0 of ``node``: one element-wise generic of ``body`` over ``inputs`` broadcast
    (numpy)."""
    out_shape = broadcast_shapes(*(s for _, s in inputs))
    if out_shape is None:
        shapes = " and ".join(str(list(s)) for _, s in inputs)
        raise imp.node_error(node, f"input shapes {shapes} are not broadcast-compatible")
    imp.define(node.output[0], imp.elementwise(inputs, out_shape, body), out_shape)


ScalarFn = Callable[[BodyBuilder, SSAValue], SSAValue]


def activation_body(op_type: str, attributes: Mapping[str, float] | None = None) -> ScalarFn:
    """The scalar body of the one-input activation ``op_type``: an op of
    ``_ELEMENTWISE_BODIES`` (Relu, Tanh, Sigmoid, ...) or of ``_ACTIVATIONS``, its float
    attributes from ``attributes`` (ONNX's defaults where not given); for the ops built of
    activations (the recurrent layers of ``ops_recurrent``)."""
    if op_type not in _ACTIVATIONS:
        unary = _ELEMENTWISE_BODIES[op_type]
        return lambda bb, x: unary(bb, [x])
    defaults, body = _ACTIVATIONS[op_type]
    given = attributes or {}
    values = {name: float(given.get(name, default)) for name, default in defaults.items()}
    return lambda bb, x: body(bb, x, values)


def lower_activation(imp: Importer, node: onnx.NodeProto) -> None:
    """An activation of ``_ACTIVATIONS``: one generic over its input, its float attributes
    read into the body."""
    body = activation_body(node.op_type, node_attributes(node))
    x = imp.use(node.input[0])
    imp.define(node.output[0], imp.elementwise([x], x[1], lambda bb, v: body(bb, v[0])), x[1])


for _op, (_defaults, _) in _ACTIVATIONS.items():
    lowering(_op, attributes=_defaults)(lower_activation)


@lowering("PRelu")
def lower_prelu(imp: Importer, node: onnx.NodeProto) -> None:
    """x where x >= 0, slope · x below: the slope broadcast to x (unidirectionally)."""
    x, slope = imp.use(node.input[0]), imp.use(node.input[1])
    if broadcast_shapes(x[1], slope[1]) != x[1]:
        raise imp.node_error(node, f"slope of shape {list(slope[1])} does not broadcast to the "
                                   f"input's shape {list(x[1])}")
    y = imp.elementwise([x, slope], x[1], lambda bb, v: _below_zero(bb, v[0], bb.mul(v[1], v[0])))
    imp.define(node.output[0], y, x[1])


def _elementwise_body(imp: Importer, node: onnx.NodeProto) -> BodyFn:
    if node.op_type != "Gelu":
        return _ELEMENTWISE_BODIES[node.op_type]
    approximate = node_attributes(node).get("approximate", b"none")
    if approximate not in _GELU_BODIES:
        raise imp.node_error(
            node,
            f"approximate={approximate.decode(errors='replace')!r} is not a Gelu approximation "
            f"(supported: {', '.join(a.decode() for a in _GELU_BODIES)})",
        )
    return _GELU_BODIES[approximate]


_BIASED_GELUS: dict[str, tuple[BodyFn, tuple[str, ...], tuple[str, ...]]] = {
    "FastGelu": (_gelu_tanh, ("X",), ("bias",)),
    "BiasGelu": (_gelu_erf, ("A", "B"), ()),
    "Gelu": (_gelu_erf, ("X",), ()),  # what the optimizer fuses an Erf Gelu into
}
"""onnxruntime's Gelus of an input plus a bias → the Gelu body, the required and the optional
inputs (as its schema names them)."""


@lowering(*_BIASED_GELUS, domain="com.microsoft")
def lower_biased_gelu(imp: Importer, node: onnx.NodeProto) -> None:
    """Gelu of x + bias (onnxruntime's contrib ops; the bias 1-D along x's last axis): the
    tanh approximation (FastGelu, bias optional) or with erf (BiasGelu; Gelu, without a
    bias), in one generic."""
    gelu, required, optional = _BIASED_GELUS[node.op_type]
    x_name, *rest = schema_inputs(imp, node, required, optional)
    bias_name = rest[0] if rest else ""
    computed_outputs(imp, node, ("Y",), (0,))
    x = imp.use(x_name)
    operands = [x]
    if bias_name:
        operands.append(last_axis_vector(imp, node, bias_name, "the bias", x[1]))
    y = imp.elementwise(operands, x[1], lambda bb, v: gelu(bb, [functools.reduce(bb.add, v)]))
    imp.define(node.output[0], y, x[1])


@lowering("Clip", attributes={"min", "max"})  # opsets 1-6 bounds
def lower_clip(imp: Importer, node: onnx.NodeProto) -> None:
    """max(min(x, hi), lo): bounds from the optional inputs (opset 11+) or the min / max
    attributes (older opsets); a missing bound does not clip."""
    names = list(node.input) + [""] * (3 - len(node.input))
    attrs = node_attributes(node)
    inputs = [imp.use(names[0])]
    bounds: list[tuple[str, int | float]] = []  # (combine, input slot or constant)
    for combine, name, attr in (("max", names[1], "min"), ("min", names[2], "max")):
        if name:
            bounds.append((combine, len(inputs)))
            inputs.append(imp.use(name))
        elif attr in attrs:
            bounds.append((combine, float(attrs[attr])))
    out_shape = broadcast_shapes(*(s for _, s in inputs))
    if out_shape is None or out_shape != inputs[0][1]:
        raise imp.node_error(node, "min and max must be scalars broadcast to the input")

    def body(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
        value = x[0]
        for combine, bound in bounds:
            limit = x[bound] if isinstance(bound, int) else bb.const(bound)
            value = bb.max(value, limit) if combine == "max" else bb.min(value, limit)
        return value

    imp.define(node.output[0], imp.elementwise(inputs, out_shape, body), out_shape)


@lowering("Expand", integers=keeps_input)
def lower_expand(imp: Importer, node: onnx.NodeProto) -> None:
    """Broadcast (numpy) the input to the known shape: an identity generic."""
    x = imp.use(node.input[0])
    target = tuple(int(d) for d in imp.known_input(node, node.input[1], "shape").reshape(-1))
    out_shape = broadcast_shapes(x[1], target)
    if out_shape is None:
        raise imp.node_error(
            node, f"input shape {list(x[1])} does not broadcast to shape {list(target)}"
        )
    if out_shape == x[1]:
        imp.pass_through(node)
        return
    if 0 in out_shape:
        imp.define_empty(node.output[0], out_shape)
        return
    imp.define(node.output[0], imp.elementwise([x], out_shape, lambda bb, v: v[0]), out_shape)
