"""ONNX ``ConvTranspose`` as a polyphase sum of Convs: one im2col (``ops_conv.im2col``) per
output phase, interleaved back by views.

Per spatial dim (stride s, dilation d, kernel K, pad before p, input size n), input position
i and kernel tap k add ``x[i]·w[k]`` to output position ``o = i·s + k·d − p``. Output phase
``a ∈ [0, s)`` (the positions ``o = s·t + a``) receives only the taps with
``k·d ≡ a + p (mod s)``, and tap k reads ``x[t + (a + p − k·d)/s]``. Those taps are every
``s/gcd(s, d)``-th one, so their offsets step by ``δ = d/gcd(s, d)``: each phase is a stride-1
Conv over x with dilation δ, the phase's taps flipped as its kernel (a compile-time slice of
the weight) and its own padding (zero reads where x is out of range; the pad may be
negative, a shift). With ``T = ⌈out/s⌉`` positions per phase, phase ``(a_1..a_D)`` becomes

```
x [N, C, S...] → window view, patches, contraction, views back   (ops_conv.im2col)
               → [N, O, T_1, 1, .., T_D, 1]
  → padded view [N, O, T_1, s_1, .., T_D, s_D]: (.., t_i, a'_i, ..) reads (.., t_i, a'_i − a_i, ..)
                (zero except at a'_i = a_i)
  + the other phases and the bias [O] as [O, 1, .., 1]: one element-wise sum
  → reshape view [N, O, T_1·s_1, ..]  ((t, a) → s·t + a: the interleave, depth-to-space)
  → slice view [N, O, out_1, ..]      (the crop)
```

A phase with no taps (when gcd(s, d) > 1, or s > K) contributes only the bias and is left
out of the sum. With all strides 1 there is one phase, a Conv with the flipped kernel, and no
interleave.

Cost, honestly: ∏ s_i contractions (phase a has ∏T patches of Cg·∏J_a, and ∏J_a over the
phases adds up to ∏K: about the direct scatter's multiply-adds, up to the cropped and
padded edge positions, but as several smaller operators, each with its own plan, relayouts
and syncs); one window view per phase, each reading x again (the phases' windows overlap the
same input elements: x is moved once per phase, and the im2cols hold ∏K copies of it in
all); and a sum of the ∏ s_i padded views over the whole [N, O, T·s...] result, reading
∏ s_i times the output's elements (plus the bias). Groups (``group`` G, the weight
[C, O/G, k...]) are the Conv's groups.

Output size per dim (ONNX): ``s·(n − 1) + output_padding + (K − 1)·d + 1 − p_begin − p_end``;
with ``output_shape`` (or ``auto_pad`` SAME_UPPER / SAME_LOWER: ``n·s``) the pads are derived
from the total padding ``natural − output``, SAME_UPPER putting the smaller half first. A
negative total padding (an output_shape past the natural size) extends the end with bias-only
positions, as onnxruntime does (the spec's split would also pad the beginning negatively when
the total is −2 or less; ONNX's reference refuses most such shapes). SAME never pads
negatively: when ``n·s`` exceeds the natural size the output keeps the natural size, as
onnxruntime and ONNX shape inference do (the spec's text and its reference implementation
would give ``n·s``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import count, product
from math import gcd

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.view_maps import reshape_map, slice_map
from t10.frontend.importer import (
    BodyBuilder,
    Importer,
    Shape,
    lowering,
    node_attributes,
    node_inputs,
)
from t10.frontend.ops_conv import im2col, known_float32_weight, patch_matrices
from t10.frontend.windows import Windows, auto_pad_of, ints

SUPPORTED_CONV_TRANSPOSE = (
    "t10 supports ConvTranspose with an input [N, C, spatial...] of at least one spatial dim, "
    "a compile-time constant float32 weight [C, O/group, kernel...] (an initializer), an "
    "optional bias [O], and any strides, dilations, pads, output_padding, output_shape, "
    "auto_pad and group dividing C"
)


@dataclass(frozen=True)
class _Phase:
    """Output phase `a` of one spatial dim: its kernel taps `taps` (ascending), flipped as
    the window, whose position r (tap ``taps[-1 - r]``) reads x at ``t + first + r·step``."""

    taps: tuple[int, ...]
    first: int  # the offset of the last tap, (a + p − taps[-1]·d) / s
    step: int  # δ = d / gcd(s, d), the offset step between consecutive taps


@dataclass(frozen=True)
class _Dim:
    size: int
    kernel: int
    stride: int
    dilation: int
    before: int
    out: int

    @property
    def positions(self) -> int:
        """T: positions per phase (the last phases may run past the output: cropped)."""
        return -(-self.out // self.stride)

    def phase(self, a: int) -> _Phase:
        s, d = self.stride, self.dilation
        taps = tuple(k for k in range(self.kernel) if (a + self.before - k * d) % s == 0)
        first = (a + self.before - taps[-1] * d) // s if taps else 0
        return _Phase(taps, first, d // gcd(s, d) if len(taps) > 1 else 1)


def _attributes(
    imp: Importer, node: onnx.NodeProto, x: Shape, w: Shape
) -> tuple[int, list[_Dim]]:
    """The group count and each spatial dim's geometry (ONNX's output-shape and pad formulas),
    after checking the shapes and attributes."""
    attrs = node_attributes(node)
    if len(x) < 3 or len(w) != len(x):
        raise imp.node_error(
            node,
            f"input shape {list(x)} with weight shape {list(w)} is not supported; "
            f"{SUPPORTED_CONV_TRANSPOSE}",
        )
    rank = len(x) - 2
    group = int(attrs.get("group", 1))
    channels = x[1]
    if group < 1 or channels % group:
        raise imp.node_error(
            node,
            f"attribute group={group} does not divide the {channels} input channels; "
            f"{SUPPORTED_CONV_TRANSPOSE}",
        )
    if w[0] != channels:
        raise imp.node_error(
            node,
            f"the weight {list(w)} expects {w[0]} input channels but the input {list(x)} has "
            f"{channels} (the ConvTranspose weight is [C, O/group, kernel...])",
        )
    kernel = tuple(w[2:])
    if "kernel_shape" in attrs and tuple(ints(attrs["kernel_shape"])) != kernel:
        raise imp.node_error(
            node,
            f"attribute kernel_shape {ints(attrs['kernel_shape'])} differs from the weight's "
            f"spatial shape {list(kernel)} (weight shape {list(w)})",
        )

    def per_dim(name: str, default: int, entries: int = rank, least: int = 1) -> list[int]:
        values = ints(attrs.get(name, [default] * entries))
        if len(values) != entries or any(v < least for v in values):
            raise imp.node_error(
                node,
                f"attribute {name} {values} must have {entries} entries of at least {least} "
                f"(the input has {rank} spatial dims, spatial shape {list(x[2:])}); "
                f"{SUPPORTED_CONV_TRANSPOSE}",
            )
        return values

    strides, dilations = per_dim("strides", 1), per_dim("dilations", 1)
    output_padding = per_dim("output_padding", 0, least=0)
    auto_pad = auto_pad_of(imp, node)
    size = x[2:]
    natural = [
        s * (n - 1) + op + (k - 1) * d + 1
        for s, n, op, k, d in zip(strides, size, output_padding, kernel, dilations, strict=True)
    ]
    if "output_shape" in attrs or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if "output_shape" in attrs:
            out = ints(attrs["output_shape"])
            out = out[2:] if len(out) == rank + 2 else out
            if len(out) != rank or any(o < 1 for o in out):
                raise imp.node_error(
                    node,
                    f"attribute output_shape {ints(attrs['output_shape'])} must have {rank} "
                    "positive entries (one per spatial dim)",
                )
            total = [m - o for m, o in zip(natural, out, strict=True)]
        else:  # SAME: n·s, but never past the natural size (as onnxruntime and ONNX's shape
            # inference do; the spec's reference implementation would pad negatively instead)
            total = [max(0, m - n * s) for m, n, s in zip(natural, size, strides, strict=True)]
            out = [m - t for m, t in zip(natural, total, strict=True)]
        upper = auto_pad == "SAME_UPPER"
        # a negative total padding (an output_shape past the natural size) extends the end
        before = [0 if t < 0 else t // 2 if upper else t - t // 2 for t in total]
    else:
        pads = per_dim("pads", 0, 2 * rank, 0) if auto_pad == "NOTSET" else [0] * 2 * rank
        before = pads[:rank]
        out = [m - b - e for m, b, e in zip(natural, before, pads[rank:], strict=True)]
        if any(o < 1 for o in out):
            raise imp.node_error(
                node,
                f"the pads {pads} leave no output (spatial output shape {out}); "
                f"{SUPPORTED_CONV_TRANSPOSE}",
            )
    dims = [
        _Dim(*v) for v in zip(size, kernel, strides, dilations, before, out, strict=True)
    ]
    return group, dims


def _phase_weight(
    imp: Importer, name: str, w: np.ndarray, group: int, taps: list[tuple[int, ...]]
) -> SSAValue:
    """The kernel taps `taps` of a phase (per spatial dim, flipped) as a Conv weight
    [O, Cg, J...], as `patch_matrices`: made once per weight, tap sets and group count (the
    phases of ConvTransposes sharing a weight share their tap sets' constants)."""
    tap_sets = "x".join("-".join(map(str, t)) for t in taps)
    key = f"{name}/convtranspose_taps_{tap_sets}" + (f"_g{group}" if group > 1 else "")
    if key not in imp.values:
        sub = w[np.ix_(range(w.shape[0]), range(w.shape[1]), *(t[::-1] for t in taps))]
        channels, og = sub.shape[:2]
        cg = channels // group
        conv = sub.reshape(group, cg, og, *sub.shape[2:]).swapaxes(1, 2)
        conv = conv.reshape(group * og, cg, *sub.shape[2:])
        imp.add_constant(key, patch_matrices(conv, group), hoist=name in imp.initializers)
    return imp.values[key]


@lowering(
    "ConvTranspose",  # every attribute is accepted by name; the lowering refuses bad values
    attributes={
        "auto_pad",
        "dilations",
        "group",
        "kernel_shape",
        "output_padding",
        "output_shape",
        "pads",
        "strides",
    },
)
def lower_conv_transpose(imp: Importer, node: onnx.NodeProto) -> None:
    names = node_inputs(node)
    x, x_shape = imp.use(names[0])
    w_shape = imp.shape_of(names[1])
    group, dims = _attributes(imp, node, x_shape, w_shape)
    w = known_float32_weight(imp, node, names[1], SUPPORTED_CONV_TRANSPOSE)
    n, out_channels = x_shape[0], w_shape[1] * group
    bias = None
    if len(names) > 2:
        if (b_shape := imp.shape_of(names[2])) != (out_channels,):
            raise imp.node_error(
                node,
                f"bias B has shape {list(b_shape)}; it must be [{out_channels}] (one per "
                "output channel)",
            )
        bias = imp.use(names[2])
    index = count()  # the labels <node>:0, :1, ... of the views and generics, in order
    rank = len(dims)
    result = (n, out_channels, *(d.out for d in dims))
    if all(d.stride == 1 for d in dims):  # one phase: a Conv with the flipped kernel
        y = _phase(imp, x, x_shape, names[1], w, group, dims, (0,) * rank, bias, index, result)
        imp.define(node.output[0], y, result)
        return

    # the phases on interleaved dims [N, O, T_1, s_1, .., T_D, s_D]
    full = (n, out_channels, *(v for d in dims for v in (d.positions, d.stride)))
    own = (n, out_channels, *(v for d in dims for v in (d.positions, 1)))
    dim = AffineExpr.dimension
    pieces: list[tuple[SSAValue, Shape]] = []
    for phase in product(*(range(d.stride) for d in dims)):
        if any(not d.phase(a).taps for d, a in zip(dims, phase, strict=True)):
            continue  # no taps: zero (the bias only)
        y = _phase(imp, x, x_shape, names[1], w, group, dims, phase, None, index, own)
        exprs = [dim(0), dim(1)]
        for i, a in enumerate(phase):
            exprs += [dim(2 + 2 * i), dim(3 + 2 * i) - a if a else dim(3 + 2 * i)]
        placed = AffineMap(len(full), 0, tuple(exprs))
        pieces.append((imp.view(y, own, full, placed, next(index), padded=True), full))
    if bias is not None:
        b, b_shape = bias
        column = (out_channels, *[1] * (2 * rank))
        b = imp.view(b, b_shape, column, reshape_map(b_shape, column), next(index))
        pieces.append((b, column))
    y = pieces[0][0]
    if len(pieces) > 1:

        y = imp.elementwise(pieces, full, _sum, next(index))
    interleaved = (n, out_channels, *(d.positions * d.stride for d in dims))
    y = imp.view(y, full, interleaved, reshape_map(full, interleaved), next(index))
    if interleaved != result:
        crop = slice_map(interleaved, [0] * len(result), [1] * len(result))
        y = imp.view(y, interleaved, result, crop, next(index))
    imp.define(node.output[0], y, result)


def _sum(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
    acc = v[0]
    for u in v[1:]:
        acc = bb.add(acc, u)
    return acc


def _phase(
    imp: Importer,
    x: SSAValue,
    x_shape: Shape,
    name: str,
    w: np.ndarray,
    group: int,
    dims: list[_Dim],
    phase: tuple[int, ...],
    bias: tuple[SSAValue, Shape] | None,
    index: Iterator[int],
    result: Shape,
) -> SSAValue:
    """Output phase `phase` of the ConvTranspose as an im2col: x read by the phase's taps."""
    phases = [d.phase(a) for d, a in zip(dims, phase, strict=True)]
    weight = _phase_weight(imp, name, w, group, [p.taps for p in phases])
    ones = tuple(1 for _ in dims)
    win = Windows(
        size=tuple(d.size for d in dims),
        kernel=tuple(len(p.taps) for p in phases),
        strides=ones,
        dilations=tuple(p.step for p in phases),
        before=tuple(-p.first for p in phases),
        after=tuple(0 for _ in dims),
        out=tuple(d.positions for d in dims),
    )
    out_channels = w.shape[1] * group
    return im2col(imp, x, x_shape, win, weight, group, out_channels, bias, index, result)
