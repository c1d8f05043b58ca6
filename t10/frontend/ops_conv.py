"""ONNX ``Conv`` as a patch embedding (ViT's patchify): views, one contraction, a bias add.

Only the convolution whose windows tile the image without overlap or gaps is supported: 2-D
(NCHW), ``kernel_shape == strides``, no padding (``pads`` all 0, ``auto_pad`` NOTSET or
VALID), ``dilations`` 1, ``group`` 1, a compile-time constant weight ``[O, C, kh, kw]`` and an
optional bias ``[O]``. With ``Ho = H // kh`` and ``Wo = W // kw`` it becomes

```
x [N, C, H, W]
  (Slice view to [N, C, Ho·kh, Wo·kw] when kh ∤ H or kw ∤ W: ONNX drops the last rows/columns)
  → Reshape view   [N, C, Ho, kh, Wo, kw]
  → Transpose view [N, Ho, Wo, C, kh, kw]
  → Reshape view   [N, Ho·Wo, C·kh·kw]                  (the patches)
  → contraction with the weight as a [C·kh·kw, O] constant (reshaped at compile time)
  → element-wise bias add, [O] broadcast                  [N, Ho·Wo, O]
  → Reshape view   [N, Ho, Wo, O]
  → Transpose view [N, O, Ho, Wo]
```

The views are ``rtensor.view`` ops (see ``ops_views``); the plan search costs
them inside the relayouts into their readers. Any other Conv is one ``T10Error`` naming the
node, the attribute and what is supported.
"""

from __future__ import annotations

from itertools import count
from typing import Any

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.view_maps import reshape_map, slice_map, transpose_map
from t10.errors import T10Error
from t10.frontend.importer import Importer, Shape, lowering, node_attributes

SUPPORTED_CONV = (
    "t10 supports Conv only as a patch embedding: 2-D (NCHW input), kernel_shape == strides, "
    "no padding (pads all 0, auto_pad NOTSET or VALID), dilations 1, group 1, and a "
    "compile-time constant weight (an initializer)"
)


def _ints(value: Any) -> list[int]:
    return [int(v) for v in value]


def _refuse(imp: Importer, node: onnx.NodeProto, what: str) -> T10Error:
    """The one error of an unsupported Conv: what it has, then what t10 supports."""
    return imp.node_error(node, f"{what} is not supported; {SUPPORTED_CONV}")


def _patch_sizes(imp: Importer, node: onnx.NodeProto, x: Shape, w: Shape) -> tuple[int, int]:
    """(kh, kw) after checking the attributes describe a patchify convolution."""

    def refuse(what: str) -> T10Error:
        return _refuse(imp, node, what)

    attrs = node_attributes(node)
    if len(x) != 4 or len(w) != 4:
        spatial = len(x) - 2
        raise refuse(f"a {spatial}-D convolution (input shape {list(x)}, weight shape {list(w)})")
    group = int(attrs.get("group", 1))
    if group != 1:
        raise refuse(f"attribute group={group} (a grouped convolution)")
    kernel = tuple(w[2:])
    if "kernel_shape" in attrs and tuple(_ints(attrs["kernel_shape"])) != kernel:
        raise imp.node_error(
            node,
            f"attribute kernel_shape {_ints(attrs['kernel_shape'])} differs from the weight's "
            f"spatial shape {list(kernel)} (weight shape {list(w)})",
        )
    dilations = _ints(attrs.get("dilations", [1, 1]))
    if any(d != 1 for d in dilations):
        raise refuse(f"attribute dilations {dilations}")
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode(errors="replace") if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad not in ("NOTSET", "VALID"):
        raise refuse(f"attribute auto_pad={auto_pad} (it pads the input)")
    pads = _ints(attrs.get("pads", [0, 0, 0, 0]))
    if any(p != 0 for p in pads):
        raise refuse(f"attribute pads {pads}")
    strides = _ints(attrs.get("strides", [1, 1]))
    if tuple(strides) != kernel:
        raise refuse(
            f"attribute strides {strides} with kernel_shape {list(kernel)} (windows that "
            "overlap or leave gaps)"
        )
    if w[1] != x[1]:
        raise imp.node_error(
            node,
            f"the weight {list(w)} expects {w[1]} input channels but the input {list(x)} has "
            f"{x[1]}",
        )
    kh, kw = kernel
    if x[2] < kh or x[3] < kw:
        raise imp.node_error(
            node,
            f"the image {list(x[2:])} is smaller than the kernel {list(kernel)}: the result "
            "would be empty",
        )
    return kh, kw


def _weight_matrix(imp: Importer, node: onnx.NodeProto, name: str) -> SSAValue:
    """The weight [O, C, kh, kw] as a [C·kh·kw, O] float32 constant (made once per weight)."""
    if not imp.is_known(name):
        raise _refuse(
            imp,
            node,
            f"weight '{name}' computed at run time (a graph input or the result of a node)",
        )
    key = f"{name}/as_patch_matrix"
    if key not in imp.values:
        w = imp.constant(name)
        if w.dtype != np.float32:
            raise imp.node_error(
                node,
                f"weight '{name}' has element type {w.dtype}; t10 computes float32 (FLOAT) only",
            )
        matrix = np.ascontiguousarray(w.reshape(w.shape[0], -1).T)
        imp.add_constant(key, matrix, hoist=name in imp.initializers)
    return imp.values[key]


@lowering(
    "Conv",  # every attribute is accepted by name; the lowering refuses the values it cannot lower
    attributes={"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
)
def lower_conv(imp: Importer, node: onnx.NodeProto) -> None:
    names = list(node.input)
    x, x_shape = imp.use(names[0])
    w_shape = imp.shape_of(names[1])
    kh, kw = _patch_sizes(imp, node, x_shape, w_shape)
    weight = _weight_matrix(imp, node, names[1])
    bias = imp.use(names[2]) if len(names) > 2 and names[2] else None
    n, c, h, w = x_shape
    out_channels = w_shape[0]
    if bias is not None and bias[1] != (out_channels,):
        raise imp.node_error(
            node,
            f"bias B has shape {list(bias[1])}; it must be [{out_channels}] (one per output "
            "channel)",
        )
    ho, wo = h // kh, w // kw
    patches, k = ho * wo, c * kh * kw
    index = count()  # the labels <node>:0, :1, ... of the views and generics, in order

    def view(value: SSAValue, source: Shape, shape: Shape, index_map: AffineMap) -> SSAValue:
        return imp.view(value, source, shape, index_map, next(index))

    if (ho * kh, wo * kw) != (h, w):  # ONNX floors: the rows and columns past the last patch
        cropped = (n, c, ho * kh, wo * kw)
        x = view(x, x_shape, cropped, slice_map(x_shape, [0] * 4, [1] * 4))
        x_shape = cropped
    split = (n, c, ho, kh, wo, kw)
    x = view(x, x_shape, split, reshape_map(x_shape, split))
    perm = (0, 2, 4, 1, 3, 5)
    grouped = tuple(split[p] for p in perm)
    x = view(x, split, grouped, transpose_map(perm))
    rows = (n, patches, k)
    x = view(x, grouped, rows, reshape_map(grouped, rows))

    dim = AffineExpr.dimension  # loops: batch, patch, output channel, reduction
    out: Shape = (n, patches, out_channels)
    y = imp.contraction(
        x,
        [dim(0), dim(1), dim(3)],
        weight,
        [dim(3), dim(2)],
        [dim(0), dim(1), dim(2)],
        out,
        3,
        next(index),
    )
    if bias is not None:
        y = imp.elementwise([(y, out), bias], out, lambda bb, v: bb.add(v[0], v[1]), next(index))
    image = (n, ho, wo, out_channels)
    y = view(y, out, image, reshape_map(out, image))
    perm = (0, 3, 1, 2)
    result = tuple(image[p] for p in perm)
    y = view(y, image, result, transpose_map(perm))
    imp.define(node.output[0], y, result)
