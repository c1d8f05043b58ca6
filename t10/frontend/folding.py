"""Static folding: which nodes are evaluated at import time, and evaluating one ONNX node on
known numpy arrays.

`evaluate` runs the ops of `NUMPY_FOLDS` with numpy code of this module and every other op
with `onnx.reference.ReferenceEvaluator`. The table holds the ops whose reference
implementation (onnx 1.23, numpy 2) fails or differs from onnxruntime, each exact against
onnxruntime (tests/unit/test_folding.py runs every one against it):

* GatherElements: the reference gathers with `np.choose`, which takes at most 64 choices, so a
  gathered axis longer than 64 fails, or, for some 2-D shapes, silently reads the wrong
  elements; it also refuses indices smaller than the data on the other axes, and wraps
  out-of-range indices where onnxruntime fails.
* OneHot: the reference fails on a scalar `depth`.
* ConstantOfShape: a read-only broadcast of its one value, not a filled array: a large one
  costs no host memory (``arith.constant`` emits it as a splat), so the plan search is what
  judges its size.
* Range: onnxruntime (like the ONNX function body) accumulates `start + delta + delta ...` in
  the element type; the reference computes `np.arange` in float64 and rounds, which differs
  in the last bits for float ranges.

QuantizeLinear and DequantizeLinear are evaluated by `_quantization` (`QUANTIZATION`): the
reference implements them from opset 19 on only.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from t10.frontend.loading import onnxruntime_only

__all__ = [
    "BROADCAST_FOLDS",
    "MAX_FOLDED_ELEMENTS",
    "NUMPY_FOLDS",
    "SHAPE_READERS",
    "evaluate",
    "foldable_nodes",
    "may_fold",
]

Fold = Callable[..., Sequence[np.ndarray]]

NEVER_FOLDED = frozenset(
    {
        "Bernoulli",
        "Dropout",  # its own lowering refuses training mode instead of folding a random mask
        "Multinomial",
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
        # onnx's reference ignores their activations, clip, sequence_lens and input_forget
        "RNN",
        "GRU",
        "LSTM",
    }
)
"""Ops whose result is not a function of their inputs, and those onnx's reference evaluator
computes only in part: never evaluated at import time (the recurrent layers are lowered,
``ops_recurrent``, whatever their inputs)."""

MAX_FOLDED_ELEMENTS = 2**28
"""The largest constant static folding builds on the host (1 GiB of float32): the size is
checked, by shape inference of the node, before any memory is taken."""


def may_fold(node: onnx.NodeProto) -> bool:
    """Default-domain nodes of ONNX's operators (not onnxruntime's extensions, which onnx's
    reference evaluator cannot run) without subgraphs or randomness."""
    subgraph = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    return (
        node.domain in ("", "ai.onnx")
        and not onnxruntime_only(node.op_type)
        and node.op_type not in NEVER_FOLDED
        and not any(a.type in subgraph for a in node.attribute)
    )


SHAPE_READERS: dict[str, frozenset[int]] = {
    "Shape": frozenset({0}),
    "Size": frozenset({0}),
    "EyeLike": frozenset({0}),
    "CastLike": frozenset({1}),
}
"""op type → the inputs of which it reads only the shape and element type (both static), so
that a runtime value there does not stop the node from folding."""


def reads_values(node: onnx.NodeProto) -> list[str]:
    """The (non-omitted) inputs whose values, not only their shapes, ``node`` reads."""
    shape_only = SHAPE_READERS.get(node.op_type, frozenset())
    return [n for i, n in enumerate(node.input) if n and i not in shape_only]


def foldable_nodes(graph: onnx.GraphProto) -> set[int]:
    """Indices of the nodes evaluated at import time: ``may_fold`` nodes whose inputs are all
    known (initializers, outputs of foldable nodes), but for the inputs of which they read
    only the shape (``SHAPE_READERS``: shapes are static)."""
    known = {t.name for t in graph.initializer}
    foldable: set[int] = set()
    for index, node in enumerate(graph.node):
        if not may_fold(node):
            continue
        if all(n in known for n in reads_values(node)):
            foldable.add(index)
            known.update(o for o in node.output if o)
    return foldable


def evaluate(
    node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets: dict[str, int]
) -> list[np.ndarray]:
    """The outputs of ``node`` given its (non-omitted) inputs ``feeds``; omitted outputs are
    returned too (as whatever the implementation gives). Raises what the implementation
    raises."""
    default_domain = node.domain in ("", "ai.onnx")
    opset = opsets.get("", opsets.get("ai.onnx", 0))
    if default_domain and node.op_type in COERCED_TO_2D and opset < 13:
        return _coerced_to_2d(node, feeds, opsets)
    if default_domain and (node.op_type == "Upsample" or node.op_type == "Resize" and opset < 11):
        return _legacy_resize(node, feeds, opsets)
    if default_domain and node.op_type in QUANTIZATION:
        return _quantization(node, feeds, opsets)
    fold = NUMPY_FOLDS.get(node.op_type) if default_domain else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy overflow etc. are the op's semantics
        if fold is None:
            results = ReferenceEvaluator(_node_model(node, feeds, opsets)).run(None, feeds)
        else:
            args = [feeds[n] if n else None for n in node.input]
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            results = fold(*args, **attrs)
    return [np.asarray(r) for r in results]


COERCED_TO_2D = frozenset({"Softmax", "LogSoftmax", "Hardmax"})
"""Before opset 13 these normalise their input coerced to 2-D at ``axis`` (default 1), which
the reference evaluator does not implement (it applies opset 13's one-axis form)."""


def _coerced_to_2d(
    node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets: dict[str, int]
) -> list[np.ndarray]:
    """An opset < 13 ``COERCED_TO_2D`` node: its opset-13 form on the 2-D view of the input."""
    x = feeds[node.input[0]]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    axis = _axis(int(attrs.get("axis", 1)), x.ndim)
    modern = onnx.helper.make_node(node.op_type, [node.input[0]], [node.output[0]], axis=1)
    flat = {node.input[0]: x.reshape(math.prod(x.shape[:axis]), -1)}
    others = {d: v for d, v in opsets.items() if d not in ("", "ai.onnx")}
    (y,) = evaluate(modern, flat, {**others, "": 13})
    return [y.reshape(x.shape)]


QUANTIZATION = frozenset({"QuantizeLinear", "DequantizeLinear"})
"""The reference evaluator implements these from opset 19 on only (opsets 10 and 13 define
subsets of it), and rounds a quotient through int32 (an infinite one wraps); with FLOAT
values and scales, per tensor or per axis, and an INT8 / UINT8 / INT16 / UINT16 (or, to
dequantise, INT32) integer type, they are evaluated with numpy as onnxruntime's kernels
compute them (``ops_quantize``), else by the reference at opset 19 or above."""

_QUANTIZED_DTYPES = frozenset(np.dtype(t) for t in ("int8", "uint8", "int16", "uint16"))


def _quantization(
    node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets: dict[str, int]
) -> list[np.ndarray]:
    """A ``QUANTIZATION`` node."""
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    x, scale, *rest = (feeds[n] if n else None for n in node.input)
    zero = rest[0] if rest else None
    assert x is not None and scale is not None
    quantize = node.op_type == "QuantizeLinear"
    if not quantize:
        target = x.dtype
    elif zero is not None:
        target = zero.dtype
    else:
        target = onnx.helper.tensor_dtype_to_np_dtype(attrs.get("output_dtype") or 2)
    numeric = (
        target in _QUANTIZED_DTYPES or (not quantize and target == np.dtype("int32"))
    ) and {scale.dtype, *((x.dtype,) if quantize else ())} == {np.dtype("float32")}
    if attrs.get("block_size", 0) or not numeric:
        opset = max(opsets.get("", opsets.get("ai.onnx", 0)), 19)
        others = {d: v for d, v in opsets.items() if d not in ("", "ai.onnx")}
        model = _node_model(node, feeds, {**others, "": opset})
        return [np.asarray(r) for r in ReferenceEvaluator(model).run(None, feeds)]
    if scale.size > 1:  # per axis
        along = (-1,) + (1,) * (x.ndim - _axis(int(attrs.get("axis", 1)), x.ndim) - 1)
        scale = scale.reshape(along)
        zero = None if zero is None else zero.reshape(along)
    z = np.float32(0) if zero is None else zero.astype(np.float32)
    if not quantize:
        return [((x.astype(np.float32) - z) * scale).astype(np.float32)]
    bounds = np.iinfo(target)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        v = x / scale
        lo, hi = np.float32(bounds.min) - z, np.float32(bounds.max) - z
        v = np.minimum(np.where(v >= lo, v, lo), hi)  # NaN: lo
    return [(np.rint(v) + z).astype(target)]


def _legacy_resize(
    node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets: dict[str, int]
) -> list[np.ndarray]:
    """Upsample, and Resize of opset 10 (X, scales), which the reference evaluator reads as
    opset 11's (X, roi) and whose linear Upsample it lacks: the opset-13 Resize with
    coordinate_transformation_mode 'asymmetric' (their definition), and for mode 'nearest'
    onnxruntime's rounding of these opsets: floor where an
    axis is upsampled, ceil where it is downsampled (one nearest_mode serves only scales all
    >= 1 or all <= 1)."""
    x = feeds[node.input[0]]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    given = attrs.pop("scales", None)  # Upsample-7's attribute
    scales = np.asarray(feeds[node.input[1]] if given is None else given, np.float32)
    resized = [float(v) for v in scales.reshape(-1) if float(v) != 1.0]
    if attrs.get("mode", b"nearest") == b"nearest":
        if all(v > 1 for v in resized):
            attrs["nearest_mode"] = "floor"
        elif all(v < 1 for v in resized):
            attrs["nearest_mode"] = "ceil"
        else:
            raise ValueError(f"a nearest {node.op_type} of opset {opsets.get('', 0)} that "
                             "both up- and downsamples rounds differently per axis, which no "
                             "later Resize expresses")
    modern = onnx.helper.make_node("Resize", ["x", "", "scales"], [node.output[0]],
                                   coordinate_transformation_mode="asymmetric", **attrs)
    others = {d: v for d, v in opsets.items() if d not in ("", "ai.onnx")}
    return evaluate(modern, {"x": x, "scales": scales}, {**others, "": 13})


def _node_model(
    node: onnx.NodeProto, feeds: dict[str, np.ndarray], opsets: dict[str, int]
) -> onnx.ModelProto:
    """``node`` alone in a model importing ``opsets``: the reference evaluator runs a bare
    node at the newest opset whatever it is told (Unsqueeze's ``axes`` attribute of opset 11
    fails under opset 13; an opset-11 Softmax would normalise the wrong axes), a model at the
    model's own."""
    helper = onnx.helper
    inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(feeds[n].dtype), None)
        for n in dict.fromkeys(node.input)
        if n
    ]
    outputs = [helper.make_empty_tensor_value_info(n) for n in node.output if n]
    graph = helper.make_graph([node], "fold", inputs, outputs)
    imports = [helper.make_opsetid(domain, version) for domain, version in opsets.items()]
    return helper.make_model(graph, opset_imports=imports)


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def _checked_indices(indices: np.ndarray, size: int) -> np.ndarray:
    """``indices`` into an axis of ``size`` as non-negative int64 (negative ones count from the
    end); out-of-range indices are an error, as in onnxruntime."""
    idx = indices.astype(np.int64)
    bad = (idx < -size) | (idx >= size)
    if bad.any():
        raise ValueError(
            f"index {int(idx[bad].reshape(-1)[0])} is out of range for an axis of size {size}"
        )
    return np.where(idx < 0, idx + size, idx)


def _gather_elements(data: np.ndarray, indices: np.ndarray, axis: int = 0) -> list[np.ndarray]:
    """``out[i][j][k] = data[indices[i][j][k]][j][k]`` (axis 0): indices have the data's rank
    and at most its size on the other axes."""
    if indices.ndim != data.ndim:
        raise ValueError(f"indices of rank {indices.ndim} for data of rank {data.ndim}")
    axis = _axis(axis, data.ndim)
    pairs = enumerate(zip(indices.shape, data.shape, strict=True))
    if any(i > d for k, (i, d) in pairs if k != axis):
        raise ValueError(
            f"indices of shape {list(indices.shape)} exceed data of shape {list(data.shape)} "
            f"off axis {axis}"
        )
    window = tuple(slice(None) if k == axis else slice(0, n) for k, n in enumerate(indices.shape))
    idx = _checked_indices(indices, data.shape[axis])
    return [np.take_along_axis(data[window], idx, axis)]


def _one_hot(
    indices: np.ndarray, depth: np.ndarray, values: np.ndarray, axis: int = -1
) -> list[np.ndarray]:
    """``values[1]`` where the index along the new axis ``axis`` equals ``indices`` (negative
    ones count from the end), ``values[0]`` elsewhere, out-of-range indices included."""
    if depth.size != 1 or values.shape != (2,):
        raise ValueError("depth must hold one value and values two")
    size = int(depth.reshape(-1)[0])
    axis = _axis(axis, indices.ndim + 1)
    idx = indices.astype(np.int64)
    idx = np.where(idx < 0, idx + size, idx)
    positions = np.arange(size).reshape((-1,) + (1,) * (indices.ndim - axis))
    hot = np.expand_dims(idx, axis) == positions
    return [np.where(hot, values[1], values[0]).astype(values.dtype)]


def _constant_of_shape(
    shape: np.ndarray, value: onnx.TensorProto | None = None
) -> list[np.ndarray]:
    """``value`` (one element; default float32 0) broadcast to ``shape``."""
    fill = np.zeros(1, np.float32) if value is None else onnx.numpy_helper.to_array(value)
    dims = [int(d) for d in shape.reshape(-1)]
    if fill.size != 1 or any(d < 0 for d in dims):
        raise ValueError(f"cannot fill shape {dims} with {fill.size} values")
    return [np.broadcast_to(fill.reshape(()), dims)]


def _range(start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> list[np.ndarray]:
    """onnxruntime's Range: ``ceil((limit - start) / delta)`` elements (the difference in the
    element type, the division in float64), each the previous plus ``delta`` in the element
    type."""
    dtype = start.dtype
    first, last, step = (np.asarray(v, dtype=dtype).reshape(()) for v in (start, limit, delta))
    if step == 0:
        raise ValueError("delta is 0")
    count = max(math.ceil(float(np.subtract(last, first, dtype=dtype)) / float(step)), 0)
    steps = np.full(count, step, dtype=dtype)
    steps[:1] = first
    return [np.add.accumulate(steps, dtype=dtype)]


NUMPY_FOLDS: dict[str, Fold] = {
    "ConstantOfShape": _constant_of_shape,
    "GatherElements": _gather_elements,
    "OneHot": _one_hot,
    "Range": _range,
}
"""op type → numpy implementation used instead of the reference (inputs positional, omitted
optional ones None; attributes as keywords)."""

BROADCAST_FOLDS = frozenset({"ConstantOfShape"})
"""Folds whose result is one value broadcast to its shape: they take no memory of its size."""
