"""Pools and LRN: a window view (see ``windows``) reduced by the reduction generics.

MaxPool / AveragePool of an input ``[N, C, S_1..S_s]``: the window view ``[N, C, out_1..out_s,
k_1..k_s]`` (padded reads are zero), then one max / sum reduction over the kernel dims. A max
over windows that read padding masks those elements to -inf inside the reduction (a known 0/1
``[out..., k...]`` constant, so every element is exact); an average divides by the count of
elements each window takes (``count_include_pad``: the pads too, never what ``ceil_mode``
reads past them), a scalar where it is the same everywhere, else a known ``[out...]``
constant. GlobalAveragePool / GlobalMaxPool reduce the spatial dims. LRN sums the squares
over a padded window along C, then ``x / (bias + alpha/size·sum)^beta``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.frontend.importer import BodyBuilder, Importer, Shape, lowering, node_attributes
from t10.frontend.windows import Windows, ints, windows

_POOL_ATTRIBUTES = {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "strides"}


def _pool_windows(imp: Importer, node: onnx.NodeProto) -> tuple[SSAValue, Windows]:
    """The window view [N, C, out..., k...] of input 0 and its windows."""
    x, shape = imp.use(node.input[0])
    attrs = node_attributes(node)
    if len(shape) < 3:
        raise imp.node_error(
            node,
            f"input shape {list(shape)} has no spatial dim; t10 pools inputs [N, C, "
            "spatial...] of at least one spatial dim",
        )
    kernel = ints(attrs.get("kernel_shape", []))
    if len(kernel) != len(shape) - 2 or any(k < 1 for k in kernel):
        raise imp.node_error(
            node,
            f"attribute kernel_shape {kernel} must have one positive size per spatial dim of "
            f"the input {list(shape)}",
        )
    win = windows(imp, node, shape[2:], tuple(kernel), ceil_mode=bool(attrs.get("ceil_mode", 0)))
    if any(p >= k for p, k in zip((*win.before, *win.after), kernel * 2, strict=True)):
        raise imp.node_error(
            node,
            f"pads before {list(win.before)} and after {list(win.after)} must be smaller than "
            f"kernel_shape {kernel}: a window of padding only has no maximum or average",
        )
    rank = len(kernel)
    viewed = (*shape[:2], *win.out, *win.kernel)
    dim = AffineExpr.dimension
    reads = win.read(range(2, 2 + rank), range(2 + rank, 2 + 2 * rank))
    view = AffineMap(len(viewed), 0, (dim(0), dim(1), *reads))
    padded = win.inside() is not None
    return imp.view(x, shape, viewed, view, 0, padded), win


def _kernel_axes(win: Windows) -> list[int]:
    rank = len(win.kernel)
    return list(range(2 + rank, 2 + 2 * rank))


@lowering("MaxPool", attributes={*_POOL_ATTRIBUTES, "storage_order"})
def lower_max_pool(imp: Importer, node: onnx.NodeProto) -> None:
    if int(node_attributes(node).get("storage_order", 0)) != 0:
        raise imp.node_error(
            node,
            "attribute storage_order=1 (column-major Indices) is not supported; t10 supports "
            "MaxPool without the Indices output (storage_order 0)",
        )
    if len(node.output) > 1 and node.output[1]:
        raise imp.node_error(
            node,
            f"the Indices output '{node.output[1]}' is not supported; t10 supports MaxPool "
            "with its output Y only",
        )
    x, shape = imp.use(node.input[0])
    viewed, win = _pool_windows(imp, node)
    windowed = (*shape[:2], *win.out, *win.kernel)
    inside = win.inside()
    if inside is None:
        y, y_shape = imp.reduction([(viewed, windowed)], _kernel_axes(win), False, "max", index=1)
    else:
        mask = imp.add_constant(f"{node.output[0]}_window_inside", inside, hoist=True)

        def masked(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
            return bb.select(bb.cmpf_one(v[1], bb.const(0.0)), v[0], bb.const(float("-inf")))

        y, y_shape = imp.reduction(
            [(viewed, windowed), (mask, inside.shape)], _kernel_axes(win), False, "max", masked, 1
        )
    imp.define(node.output[0], y, y_shape)


@lowering("AveragePool", attributes={*_POOL_ATTRIBUTES, "count_include_pad"})
def lower_average_pool(imp: Importer, node: onnx.NodeProto) -> None:
    _, shape = imp.use(node.input[0])
    viewed, win = _pool_windows(imp, node)
    windowed = (*shape[:2], *win.out, *win.kernel)
    total, out = imp.reduction([(viewed, windowed)], _kernel_axes(win), False, "sum", index=1)
    inside = win.inside(with_pads=bool(node_attributes(node).get("count_include_pad", 0)))
    counts = (
        np.full(win.out, float(np.prod(win.kernel)), np.float32)
        if inside is None
        else inside.sum(axis=tuple(range(len(win.out), inside.ndim))).astype(np.float32)
    )
    _divide(imp, node, total, out, counts, 2)


def _divide(
    imp: Importer, node: onnx.NodeProto, total: SSAValue, shape: Shape, counts: np.ndarray,
    index: int,
) -> None:
    """Output 0 = `total / counts`: a scalar divisor where `counts` is uniform, else `counts`
    as a known constant broadcast over the leading dims of `total`."""
    if (counts == counts.flat[0]).all():
        c = float(counts.flat[0])
        y = imp.elementwise([(total, shape)], shape, lambda bb, v: bb.div(v[0], bb.const(c)), index)
    else:
        divisor = imp.add_constant(f"{node.output[0]}_window_counts", counts, hoist=True)
        y = imp.elementwise(
            [(total, shape), (divisor, counts.shape)],
            shape,
            lambda bb, v: bb.div(v[0], v[1]),
            index,
        )
    imp.define(node.output[0], y, shape)


@lowering("GlobalMaxPool", "GlobalAveragePool")
def lower_global_pool(imp: Importer, node: onnx.NodeProto) -> None:
    x, shape = imp.use(node.input[0])
    if len(shape) < 3:
        raise imp.node_error(
            node,
            f"input shape {list(shape)} has no spatial dim; t10 pools inputs [N, C, "
            "spatial...] of at least one spatial dim",
        )
    axes = list(range(2, len(shape)))
    if node.op_type == "GlobalMaxPool":
        y, out = imp.reduction([(x, shape)], axes, True, "max")
        imp.define(node.output[0], y, out)
        return
    total, out = imp.reduction([(x, shape)], axes, True, "sum", index=0)
    _divide(imp, node, total, out, np.full((1,), float(np.prod(shape[2:])), np.float32), 1)


@lowering("LRN", attributes={"alpha", "beta", "bias", "size"})
def lower_lrn(imp: Importer, node: onnx.NodeProto) -> None:
    """Squares summed over a window of `size` channels (centred, padded with zeros), then
    `x / (bias + alpha/size·sum)^beta`."""
    x, shape = imp.use(node.input[0])
    attrs = node_attributes(node)
    size = int(attrs["size"])
    if len(shape) < 2 or size < 1 or size % 2 == 0:
        raise imp.node_error(
            node,
            f"size={size} over input shape {list(shape)} is not supported; t10 supports LRN "
            "of an odd size over an input [N, C, ...] (onnxruntime refuses even sizes, whose "
            "window is off centre)",
        )
    alpha, beta = float(attrs.get("alpha", 1e-4)), float(attrs.get("beta", 0.75))
    bias = float(attrs.get("bias", 1.0))
    dim = AffineExpr.dimension
    windowed = (*shape[:2], size, *shape[2:])
    rest = [dim(d + 1) for d in range(2, len(shape))]
    view = AffineMap(len(windowed), 0, (dim(0), dim(1) + dim(2) - (size - 1) // 2, *rest))
    viewed = imp.view(x, shape, windowed, view, 0, padded=size > 1)
    squares, _ = imp.reduction(
        [(viewed, windowed)], [2], False, "sum", lambda bb, v: bb.mul(v[0], v[0]), index=1
    )

    def normalise(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        scaled = bb.add(bb.const(bias), bb.mul(bb.const(alpha / size), v[1]))
        return bb.div(v[0], bb.pow(scaled, bb.const(beta)))

    y = imp.elementwise([(x, shape), (squares, shape)], shape, normalise, 2)
    imp.define(node.output[0], y, shape)
