"""ONNX ``Conv`` as an im2col: a window view, one contraction, a bias add, views back.

Any number of spatial dims (``x`` is ``[N, C, S_1..S_s]``), ``pads`` / ``auto_pad``,
``strides``, ``dilations`` and ``group`` G (grouped and depthwise), a compile-time constant
weight ``[O, C/G, k_1..k_s]`` and an optional bias ``[O]``. With ``Cg = C/G``, ``Og = O/G``,
``P = ∏ out_i`` and ``K = Cg·∏ k_i`` it becomes

```
x [N, C, S...]
  → window view     [N, G, out_1..out_s, Cg, k_1..k_s]   (n, g, o.., c, r..) →
                    (n, g·Cg + c, o_i·stride_i + r_i·dilation_i − pad_i)  (padded: zero fill)
  → reshape view    [N, G, P, K]                          (the patches: im2col)
  → contraction with the weight as a [G, K, Og] constant (reshaped at compile time)
  → element-wise bias add, [G, 1, Og] broadcast           [N, G, P, Og]
  → transpose view  [N, G, Og, P] → reshape view [N, O, out_1..out_s]
```

(the G dims are left out when G = 1). The window view composes with the reshape and the
relayout into the contraction reads the input through both: that relayout is the im2col /
halo movement, and its result holds each input element once per window reading it (∏ k_i /
∏ stride_i times for overlapping windows), the extra memory of this formulation. The views
are ``rtensor.view`` ops (see ``ops_views``); the plan search costs them inside the relayouts
into their readers. ``im2col`` builds this chain (after the weight) for ConvTranspose's phases
too (``ops_conv_transpose``). Anything else is one ``T10Error`` naming the node, the attribute and
what is supported.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from math import prod

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.view_maps import reshape_map, transpose_map
from t10.errors import T10Error
from t10.frontend.importer import Importer, Shape, lowering, node_attributes, node_inputs
from t10.frontend.ops_batchnorm import batch_norm_affine
from t10.frontend.windows import Windows, ints, windows

SUPPORTED_CONV = (
    "t10 supports Conv with an input [N, C, spatial...] of at least one spatial dim, a "
    "compile-time constant float32 weight [O, C/group, kernel...] (an initializer), an "
    "optional bias [O], and any pads, auto_pad, strides, dilations and group dividing C and O"
)


def check_conv_shapes(imp: Importer, node: onnx.NodeProto, x: Shape, w: Shape) -> int:
    """The group count, after checking the shapes and attributes agree."""
    attrs = node_attributes(node)
    if len(x) < 3 or len(w) != len(x):
        raise imp.node_error(
            node,
            f"input shape {list(x)} with weight shape {list(w)} is not supported; "
            f"{SUPPORTED_CONV}",
        )
    group = int(attrs.get("group", 1))
    channels, out_channels = x[1], w[0]
    if group < 1 or channels % group or out_channels % group:
        raise imp.node_error(
            node,
            f"attribute group={group} does not divide the {channels} input and "
            f"{out_channels} output channels; {SUPPORTED_CONV}",
        )
    if w[1] * group != channels:
        raise imp.node_error(
            node,
            f"the weight {list(w)} expects {w[1]}·group = {w[1] * group} input channels (group "
            f"{group}) but the input {list(x)} has {channels}",
        )
    if "kernel_shape" in attrs and tuple(ints(attrs["kernel_shape"])) != tuple(w[2:]):
        raise imp.node_error(
            node,
            f"attribute kernel_shape {ints(attrs['kernel_shape'])} differs from the weight's "
            f"spatial shape {list(w[2:])} (weight shape {list(w)})",
        )
    return group


def known_float32_weight(
    imp: Importer, node: onnx.NodeProto, name: str, supported: str
) -> np.ndarray:
    """The compile-time constant float32 weight `name`; refuses any other naming `supported`."""
    if not imp.is_known(name):
        raise imp.node_error(
            node,
            f"weight '{name}' is computed at run time (a graph input or the result of a "
            f"node); {supported}",
        )
    w = imp.constant(name)
    if w.dtype not in (np.float32, np.float16):
        raise imp.node_error(
            node,
            f"weight '{name}' has element type {w.dtype}; t10 computes float (FLOAT, FLOAT16) "
            "only",
        )
    return w.astype(np.float32, copy=False)  # a FLOAT16 one exactly


def patch_matrices(w: np.ndarray, group: int) -> np.ndarray:
    """A Conv weight [O, Cg, k...] as G [K, Og] matrices: [G, K, Og], or [K, O] when G = 1."""
    out_channels = w.shape[0]
    grouped = w.reshape(group, out_channels // group, -1).transpose(0, 2, 1)
    return np.ascontiguousarray(grouped if group > 1 else grouped[0])


def _weight_matrices(
    imp: Importer, node: onnx.NodeProto, name: str, group: int, fold: _Fold | None
) -> SSAValue:
    """The weight [O, Cg, k...] (each output channel scaled by a folded BatchNormalization's
    `a`) as its `patch_matrices`, a float32 constant (made once per weight, group count and
    fold)."""
    w = known_float32_weight(imp, node, name, SUPPORTED_CONV)
    key = f"{name}/as_patch_matrix" + (f"_g{group}" if group > 1 else "")
    key += f"/{fold.node.output[0]}_folded" if fold else ""
    if key not in imp.values:
        if fold:
            w = (w * fold.scale.reshape(-1, *[1] * (w.ndim - 1))).astype(np.float32)
        imp.add_constant(key, patch_matrices(w, group), hoist=name in imp.initializers)
    return imp.values[key]


@dataclass(frozen=True)
class _Fold:
    """A BatchNormalization folded into the Conv whose output it alone reads."""

    node: onnx.NodeProto
    scale: np.ndarray
    shift: np.ndarray


def _batch_norm_to_fold(imp: Importer, node: onnx.NodeProto, y_shape: Shape) -> _Fold | None:
    """The BatchNormalization that is the only reader of the Conv's output (not a graph
    output), when its parameters and the Conv's bias are known."""
    y = node.output[0]
    readers = [n for n in imp.graph.node if y in n.input]
    if (
        len(readers) != 1
        or readers[0].op_type != "BatchNormalization"
        or readers[0].domain not in ("", "ai.onnx")
        or list(readers[0].input).count(y) != 1
        or readers[0].input[0] != y
        or any(vi.name == y for vi in imp.graph.output)
    ):
        return None
    names = node_inputs(node)
    if len(names) > 2 and not imp.is_known(names[2]):
        return None
    try:
        scale, shift = batch_norm_affine(imp, readers[0], y_shape)
    except T10Error:  # not foldable: its own lowering refuses it, naming it
        return None
    return _Fold(readers[0], scale, shift)


@lowering(
    "Conv",  # every attribute is accepted by name; the lowering refuses the values it cannot lower
    attributes={"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
)
def lower_conv(imp: Importer, node: onnx.NodeProto) -> None:
    names = node_inputs(node)
    x, x_shape = imp.use(names[0])
    w_shape = imp.shape_of(names[1])
    group = check_conv_shapes(imp, node, x_shape, w_shape)
    win = windows(imp, node, x_shape[2:], w_shape[2:])
    fold = _batch_norm_to_fold(imp, node, (x_shape[0], w_shape[0], *win.out))
    weight = _weight_matrices(imp, node, names[1], group, fold)
    n = x_shape[0]
    out_channels = w_shape[0]
    has_bias = len(names) > 2
    if has_bias and (b_shape := imp.shape_of(names[2])) != (out_channels,):
        raise imp.node_error(
            node,
            f"bias B has shape {list(b_shape)}; it must be [{out_channels}] (one per output "
            "channel)",
        )
    bias = imp.use(names[2]) if has_bias and not fold else None
    if fold:
        known = imp.constant(names[2]).astype(np.float64) if has_bias else 0.0
        folded = (known * fold.scale + fold.shift).astype(np.float32)
        name = f"{fold.node.output[0]}_folded_bias"
        bias = imp.add_constant(name, folded, hoist=True), folded.shape
    result = (n, out_channels, *win.out)
    y = im2col(imp, x, x_shape, win, weight, group, out_channels, bias, count(), result)
    imp.define(fold.node.output[0] if fold else node.output[0], y, result)


def im2col(
    imp: Importer,
    x: SSAValue,
    x_shape: Shape,
    win: Windows,
    weight: SSAValue,
    group: int,
    out_channels: int,
    bias: tuple[SSAValue, Shape] | None,
    index: Iterator[int],
    result: Shape,
) -> SSAValue:
    """The Conv of `x` [N, C, S...] over the windows `win` with the `patch_matrices` constant
    `weight` and an optional bias [O]: the window view, the patches, one contraction, the
    bias add and the views back to `result` (the [N, O, out...] elements in that order, in
    any shape). `index` numbers the views and generics (labels <node>:i)."""
    n, channels = x_shape[:2]
    rank = len(win.size)
    cg, og = channels // group, out_channels // group
    g = (group,) if group > 1 else ()  # the group dim, present only for G > 1
    lead = 1 + len(g)  # n (and g)
    dim = AffineExpr.dimension

    # the window view [N, (G,) out..., Cg, k...]
    windowed = (n, *g, *win.out, cg, *win.kernel)
    out_dims = range(lead, lead + rank)
    channel = dim(1) * cg + dim(lead + rank) if g else dim(lead + rank)
    reads = win.read(out_dims, range(lead + rank + 1, len(windowed)))
    padded = win.inside() is not None  # some window reads the zero padding
    window_map = AffineMap(len(windowed), 0, (dim(0), channel, *reads))
    x = imp.view(x, x_shape, windowed, window_map, next(index), padded)
    patches, k = prod(win.out), cg * prod(win.kernel)
    rows = (n, *g, patches, k)
    x = imp.view(x, windowed, rows, reshape_map(windowed, rows), next(index))

    # loops: n, (g,) patch, output channel, reduction
    par = [dim(i) for i in range(lead + 2)]
    red = dim(lead + 2)
    out: Shape = (n, *g, patches, og)
    y = imp.contraction(
        x,
        [*par[:-1], red],
        weight,
        [*par[1:lead], red, par[-1]],
        par,
        out,
        lead + 2,
        next(index),
    )
    if bias is not None:
        b, b_shape = bias
        if g:
            per_group = (group, 1, og)
            b = imp.view(b, b_shape, per_group, reshape_map(b_shape, per_group), next(index))
            b_shape = per_group
        y = imp.elementwise(
            [(y, out), (b, b_shape)], out, lambda bb, v: bb.add(v[0], v[1]), next(index)
        )
    perm = (*range(lead), lead + 1, lead)
    moved = tuple(out[p] for p in perm)
    y = imp.view(y, out, moved, transpose_map(perm), next(index))
    return imp.view(y, moved, result, reshape_map(moved, result), next(index))
