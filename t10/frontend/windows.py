"""Sliding windows over the spatial dims of an NC... tensor, shared by Conv and the pools.

`Windows.read` is the affine index of a window element in the input: output position `o_i`
and kernel offset `r_i` of spatial dim `i` read input position `o_i·stride_i + r_i·dilation_i
- pad_before_i` (outside the input: padding). A view with that map (an im2col) duplicates the
input elements that neighbouring windows share; its relayout into the reader is the halo
movement, costed with the reader like any view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from xdsl.ir.affine import AffineExpr

from t10.frontend.importer import Importer, Shape, node_attributes

AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


def ints(value: Any) -> list[int]:
    return [int(v) for v in value]


@dataclass(frozen=True)
class Windows:
    """The windows of one node over spatial sizes `size` (one entry per spatial dim)."""

    size: Shape
    kernel: Shape
    strides: Shape
    dilations: Shape
    before: Shape
    after: Shape
    """Padding before and after each spatial dim (in ceil mode the last window may read
    past the padding after)."""
    out: Shape

    def read(self, out_dims: Sequence[int], kernel_dims: Sequence[int]) -> list[AffineExpr]:
        """Input index expression per spatial dim, over the map dims `out_dims` (the output
        positions) and `kernel_dims` (the offsets in the window)."""
        dim = AffineExpr.dimension
        return [
            dim(o) * s + dim(r) * d - b if b else dim(o) * s + dim(r) * d
            for o, r, s, d, b in zip(
                out_dims, kernel_dims, self.strides, self.dilations, self.before, strict=True
            )
        ]

    def positions(self, axis: int) -> np.ndarray:
        """[out, kernel] input positions that spatial dim `axis`'s windows read."""
        o = np.arange(self.out[axis])[:, None] * self.strides[axis]
        r = np.arange(self.kernel[axis])[None, :] * self.dilations[axis]
        return o + r - self.before[axis]

    def inside(self, with_pads: bool = False) -> np.ndarray | None:
        """0/1 float32 [out..., kernel...]: whether each window element lies inside the input
        (`with_pads`: inside the input or its pads; None: all do)."""
        masks = []
        for axis, n in enumerate(self.size):
            lo, hi = (-self.before[axis], n + self.after[axis]) if with_pads else (0, n)
            p = self.positions(axis)
            masks.append(((p >= lo) & (p < hi)).astype(np.float32))
        if all(m.all() for m in masks):
            return None
        rank = len(masks)
        full = np.ones((), dtype=np.float32)
        for i, m in enumerate(masks):  # outer product: out dims first, then kernel dims
            shape = [1] * (2 * rank)
            shape[i], shape[rank + i] = m.shape
            full = full * m.reshape(shape)
        return full


def auto_pad_of(imp: Importer, node: onnx.NodeProto) -> str:
    """`node`'s `auto_pad` (default NOTSET), refused unless one of `AUTO_PADS`."""
    auto_pad = node_attributes(node).get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode(errors="replace") if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad not in AUTO_PADS:
        raise imp.node_error(
            node, f"attribute auto_pad={auto_pad} is not one of {', '.join(AUTO_PADS)}"
        )
    return auto_pad


def windows(
    imp: Importer,
    node: onnx.NodeProto,
    size: Shape,
    kernel: Shape,
    *,
    ceil_mode: bool = False,
) -> Windows:
    """The windows of `node` from its `strides`, `dilations`, `pads` and `auto_pad` (ONNX
    semantics; `ceil_mode` as the pools define it). Refuses bad attribute values naming them."""
    attrs = node_attributes(node)
    rank = len(size)

    def per_dim(name: str, default: int) -> tuple[int, ...]:
        values = ints(attrs.get(name, [default] * rank))
        if len(values) != rank or any(v < 1 for v in values):
            raise imp.node_error(
                node,
                f"attribute {name} {values} must have {rank} positive entries (one per "
                f"spatial dim of the input, spatial shape {list(size)})",
            )
        return tuple(values)

    strides, dilations = per_dim("strides", 1), per_dim("dilations", 1)
    auto_pad = auto_pad_of(imp, node)
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    same = auto_pad in ("SAME_UPPER", "SAME_LOWER")
    out = tuple(-(-n // s) for n, s in zip(size, strides, strict=True))  # SAME: ceil(n / s)
    if same:
        needed = [
            max(0, (o - 1) * s + e - n)
            for o, s, e, n in zip(out, strides, extent, size, strict=True)
        ]
        upper = auto_pad == "SAME_UPPER"
        before = tuple(p // 2 if upper else p - p // 2 for p in needed)
        after = tuple(p - b for p, b in zip(needed, before, strict=True))
    else:
        pads = ints(attrs.get("pads", [0] * 2 * rank)) if auto_pad == "NOTSET" else [0] * 2 * rank
        if len(pads) != 2 * rank or any(p < 0 for p in pads):
            raise imp.node_error(
                node,
                f"attribute pads {pads} must have {2 * rank} non-negative entries (begin and "
                f"end of each of the {rank} spatial dims)",
            )
        before, after = tuple(pads[:rank]), tuple(pads[rank:])
    spans = [n + b + a - e for n, b, a, e in zip(size, before, after, extent, strict=True)]
    if any(span < 0 for span in spans):
        raise imp.node_error(
            node,
            f"the padded input (spatial shape {list(size)}, pads before {list(before)}, after "
            f"{list(after)}) is smaller than the dilated kernel {extent}: the result would be "
            "empty",
        )
    if not same:
        out = tuple(
            _ceil_count(span, s, n, b) if ceil_mode else span // s + 1
            for span, s, n, b in zip(spans, strides, size, before, strict=True)
        )
    return Windows(tuple(size), tuple(kernel), strides, dilations, before, after, out)


def _ceil_count(span: int, stride: int, size: int, before: int) -> int:
    """Windows along a dim in ceil mode: the last may run past the end, but must start inside
    the input or the padding before it."""
    count = -(-span // stride) + 1
    return count - 1 if (count - 1) * stride >= size + before else count
