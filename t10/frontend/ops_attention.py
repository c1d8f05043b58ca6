"""Attention: onnxruntime's contrib ops of the ``com.microsoft`` domain its transformer
optimizer writes (Attention, MultiHeadAttention, GroupQueryAttention, EmbedLayerNormalization,
RotaryEmbedding) and opset 23's Attention and RotaryEmbedding, each the composition its
specification defines, of the importer's contractions, views, element-wise generics, the
softmax and the layer norm of ``ops_reductions`` and the runtime gather of ``ops_views``.

The shared pieces: ``split_heads`` ([B, S, N·H] → [B, N, S, H], a view), ``attend`` (the
scaled dot product ``softmax(scale · Q·Kᵀ + biases) · V`` per head, key / value heads repeated
for grouped queries), ``merge_heads`` (the inverse view), the additive biases of masks
(``key_mask_bias``, ``causal_bias``), and ``rotate`` (the rotary embedding of heads).
Past keys and values (decoding with a KV cache) are refused, by name."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from math import sqrt

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.gathers import GatherKind
from t10.common.view_maps import reshape_map
from t10.frontend.importer import (
    BodyBuilder,
    Importer,
    Shape,
    broadcast_shapes,
    computed_outputs,
    last_axis_vector,
    lowering,
    node_attributes,
    schema_inputs,
)
from t10.frontend.integer_ranges import Interval, Range, Ranges, Unknown
from t10.frontend.ops_reductions import layer_norm, softmax
from t10.frontend.ops_views import concatenate, gathered

Value = tuple[SSAValue, Shape]
MS = "com.microsoft"
_dim = AffineExpr.dimension

_MASK_FILTER = -10000.0
"""onnxruntime's default mask_filter_value: what a masked score becomes (added to it)."""

_NEG_INF = float("-inf")


class _Generics:
    """The indices of a node's generics, handed out in order (each labelled ``node:index``)."""

    def __init__(self) -> None:
        self.next = 0

    def take(self, count: int = 1) -> int:
        """The first of ``count`` fresh indices."""
        first = self.next
        self.next += count
        return first


def _inputs(
    imp: Importer, node: onnx.NodeProto, required: Sequence[str], optional: Sequence[str] = ()
) -> dict[str, str]:
    """Schema input role → the node's input name ('' where omitted: ``schema_inputs``)."""
    names = schema_inputs(imp, node, required, optional)
    return dict(zip([*required, *optional], names, strict=True))


def _float_results(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """The rule of an op that reads runtime integers (masks, ids, positions) only to compare
    or gather with them: it computes no integer, and its results are floats."""
    return Ranges(tuple(Unknown("a float result") for _ in node.output))


# --------------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------------


def split_heads(imp: Importer, x: Value, heads: int, size: int, offset: int, index: int) -> Value:
    """Heads [B, N, S, size] of ``x`` [B, S, ·]: head n reads columns ``offset + n·size`` on
    (a view)."""
    batch, seq, _ = x[1]
    shape = (batch, heads, seq, size)
    view = AffineMap(4, 0, (_dim(0), _dim(2), _dim(1) * size + _dim(3) + offset))
    return imp.view(x[0], x[1], shape, view, index), shape


def merge_heads(imp: Importer, heads: Value, index: int) -> Value:
    """[B, N, S, H] → [B, S, N·H] (a view)."""
    batch, count, seq, size = heads[1]
    shape = (batch, seq, count * size)
    view = AffineMap(3, 0, (_dim(0), _dim(2) // size, _dim(1), _dim(2) % size))
    return imp.view(heads[0], heads[1], shape, view, index), shape


def _repeat_heads(imp: Importer, kv: Value, heads: int, index: int) -> Value:
    """Key / value heads [B, Nkv, T, H] read by ``heads`` query heads, each group of
    ``heads / Nkv`` consecutive ones by one (grouped-query attention): a view."""
    batch, kv_heads, total, size = kv[1]
    if kv_heads == heads:
        return kv
    shape = (batch, heads, total, size)
    group = heads // kv_heads
    view = AffineMap(4, 0, (_dim(0), _dim(1) // group, _dim(2), _dim(3)))
    return imp.view(kv[0], kv[1], shape, view, index), shape


def attend(
    imp: Importer, q: Value, k: Value, v: Value, scale: float, biases: Sequence[Value],
    generics: _Generics, masked_rows_zero: bool = False,
) -> Value:
    """``softmax(scale · Q·Kᵀ + Σ biases) · V`` per head: Q [B, N, S, H], K [B, Nkv, T, H], V
    [B, Nkv, T, Hv] (Nkv dividing N), each bias broadcast to [B, N, S, T]; the result is
    [B, N, S, Hv]. The biases are summed before the scaled scores, as onnxruntime sums its
    masks and attention bias. ``masked_rows_zero``: a query whose biases are -inf at every key
    (no key to attend) gets 0, as ONNX's Attention defines (its softmax would be NaN). (A
    query whose keys are all masked by a finite filter value weighs them by scores rounded at
    the filter's magnitude: those rows match onnxruntime only as far as the summation orders
    agree.)"""
    batch, heads, seq, _ = q[1]
    k = _repeat_heads(imp, k, heads, generics.take())
    v = _repeat_heads(imp, v, heads, generics.take())
    total, v_size = k[1][2], v[1][3]
    shape = (batch, heads, seq, total)
    d = [_dim(i) for i in range(5)]
    scores = imp.contraction(
        q[0], [d[0], d[1], d[2], d[4]], k[0], [d[0], d[1], d[3], d[4]], d[:4], shape, 4,
        generics.take(),
    )
    if len(biases) > 1:
        bias_shape = broadcast_shapes(*(s for _, s in biases))
        assert bias_shape is not None
        summed = imp.elementwise(biases, bias_shape, lambda bb, x: functools.reduce(bb.add, x),
                                 generics.take())
        biases = [(summed, bias_shape)]

    def biased(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
        scaled = bb.mul(x[0], bb.const(scale))
        return bb.add(scaled, x[1]) if len(x) > 1 else scaled

    logits = imp.elementwise([(scores, shape), *biases], shape, biased, generics.take())
    probs = softmax(imp, (logits, shape), [3], generics.take(4))
    if masked_rows_zero and biases:
        bias = biases[0]
        top = imp.reduction([bias], [len(bias[1]) - 1], True, "max", index=generics.take())

        def unless_masked(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
            return bb.select(bb.cmpf("oeq", x[1], bb.const(_NEG_INF)), bb.const(0.0), x[0])

        probs = imp.elementwise([(probs, shape), top], shape, unless_masked, generics.take())
    out = (batch, heads, seq, v_size)
    context = imp.contraction(
        probs, [d[0], d[1], d[2], d[4]], v[0], [d[0], d[1], d[4], d[3]], d[:4], out, 4,
        generics.take(),
    )
    return context, out


def causal_bias(imp: Importer, node: onnx.NodeProto, seq: int, total: int, fill: float) -> Value:
    """[S, T]: ``fill`` where key t lies after query s (t > s: aligned at the top left, as
    without a past), else 0 (a constant)."""
    imp.check_builds(node, "causal mask", [seq, total])
    later = np.arange(total)[None, :] > np.arange(seq)[:, None]
    values = np.where(later, np.float32(fill), np.float32(0.0)).astype(np.float32)
    shape = (seq, total)
    return imp.add_constant(f"{node.output[0]}_causal", values, hoist=False), shape


def key_mask_bias(
    imp: Importer, node: onnx.NodeProto, name: str, role: str, batch: int, seq: int, total: int,
    fill: float, generics: _Generics,
) -> Value:
    """An integer mask as an additive bias broadcasting to [B, N, S, T]: key lengths [B]
    (``fill`` at keys t >= length), or a 0 / 1 mask [B, T] (key padding) or [B, S, T]
    (``fill`` where the mask is not > 0); other forms are refused, by name."""
    value, shape = imp.use(name)
    if shape == (batch,):
        lengths_shape = (batch, 1, 1, 1)
        lengths = imp.view(value, shape, lengths_shape, reshape_map(shape, lengths_shape),
                           generics.take())
        positions = imp.positions(f"{name}_{imp.node_name}_keys", total, 3, 4)
        out = (batch, 1, 1, total)

        def beyond(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
            return bb.select(bb.cmpf("olt", x[1], x[0]), bb.const(0.0), bb.const(fill))

        return imp.elementwise([(lengths, lengths_shape), positions], out, beyond,
                               generics.take()), out
    if shape in ((batch, total), (batch, seq, total)):
        out = (batch, 1, 1 if len(shape) == 2 else seq, total)
        spread = imp.view(value, shape, out, reshape_map(shape, out), generics.take())

        def masked(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
            return bb.select(bb.cmpf("ogt", x[0], bb.const(0.0)), bb.const(0.0), bb.const(fill))

        return imp.elementwise([(spread, out)], out, masked, generics.take()), out
    raise imp.node_error(
        node, f"{role} '{name}' has shape {list(shape)}; t10 supports the key lengths "
        f"[{batch}] and the 0 / 1 masks [{batch}, {total}] (key padding) and [{batch}, {seq}, "
        f"{total}]: give the mask in one of those forms"
    )


def _additive(
    imp: Importer, node: onnx.NodeProto, name: str, role: str, scores: Shape
) -> Value:
    """A float bias added to the scores [B, N, S, T], which it must broadcast to."""
    value, shape = imp.use(name)
    if broadcast_shapes(shape, scores) != scores:
        raise imp.node_error(
            node, f"{role} '{name}' of shape {list(shape)} does not broadcast to the scores' "
            f"shape [batch, heads, queries, keys] {list(scores)}"
        )
    return value, shape


def _refuse_given(
    imp: Importer, node: onnx.NodeProto, names: dict[str, str], roles: Sequence[str], why: str
) -> None:
    """Refuse the optional inputs ``roles`` that ``node`` gives (``names``: role → name)."""
    if given := [f"{r} ('{names[r]}')" for r in roles if names[r]]:
        raise imp.node_error(
            node, f"it gives the input(s) {', '.join(given)}; {why}: leave them out"
        )


def _refuse_attributes(
    imp: Importer, node: onnx.NodeProto, allowed: dict[str, Sequence[object]]
) -> None:
    """Refuse attributes set to values t10 does not compute (``allowed``: name → the values
    it takes, the default first)."""
    attrs = node_attributes(node)
    for name, values in allowed.items():
        if name in attrs and attrs[name] not in values:
            raise imp.node_error(
                node, f"attribute {name} = {attrs[name]!r} is not supported (t10 computes "
                f"{name} = {' or '.join(repr(v) for v in values)}): remove it"
            )


def _heads_attribute(imp: Importer, node: onnx.NodeProto, name: str, width: int) -> int:
    """The positive head count ``name``, which must divide ``width``."""
    heads = int(node_attributes(node).get(name, 0))
    if heads < 1 or width % heads:
        raise imp.node_error(
            node, f"attribute {name} = {heads} must be a positive divisor of the hidden size "
            f"{width}"
        )
    return heads


def _scale(node: onnx.NodeProto, head_size: int) -> float:
    """The ``scale`` attribute, or 0 (its default): 1 / √head_size."""
    scale = float(node_attributes(node).get("scale", 0.0))
    return scale if scale != 0.0 else 1.0 / sqrt(head_size)


def _rank(imp: Importer, node: onnx.NodeProto, name: str, role: str, ranks: Sequence[int],
          forms: str) -> Value:
    """Input ``name`` (``role``), whose rank must be one of ``ranks`` (``forms`` names them)."""
    value, shape = imp.use(name)
    if len(shape) not in ranks:
        raise imp.node_error(
            node, f"{role} '{name}' has shape {list(shape)}; t10 supports {forms}"
        )
    return value, shape


_PAST_REFUSED = "t10 compiles attention without a KV cache (no past keys and values)"


# --------------------------------------------------------------------------------------------
# com.microsoft.Attention and MultiHeadAttention
# --------------------------------------------------------------------------------------------


@lowering(
    "Attention",
    attributes={"num_heads", "unidirectional", "qkv_hidden_sizes", "mask_filter_value", "scale",
                "do_rotary", "past_present_share_buffer", "rotary_embedding_dim"},
    integers=_float_results,
    domain=MS,
)
def lower_packed_attention(imp: Importer, node: onnx.NodeProto) -> None:
    """onnxruntime's self-attention of packed projections: ``input · weights (+ bias)`` split
    into Q, K, V heads (``qkv_hidden_sizes``, default three equal parts), ``attend`` with the
    mask (``key_mask_bias``), the attention bias and, if ``unidirectional``, the causal mask,
    each masked score taking ``mask_filter_value``; the heads merged. Past and present (the
    KV cache) and rotary embedding inside are refused."""
    optional = ("bias", "mask_index", "past", "attention_bias", "past_sequence_length")
    formals = ("input", "weights", *optional)
    names = _inputs(imp, node, formals[:2], optional)
    output, _ = computed_outputs(imp, node, ("output", "present"), {0})
    _refuse_given(imp, node, names, ("past", "past_sequence_length"), _PAST_REFUSED)
    _refuse_attributes(imp, node, {"do_rotary": (0,)})
    attrs = node_attributes(node)
    generics = _Generics()
    x = _rank(imp, node, names["input"], "input", (3,), "an input [batch, sequence, hidden]")
    w = _rank(imp, node, names["weights"], "weights", (2,), "weights [hidden, 3 · hidden]")
    batch, seq, width = x[1]
    if w[1][0] != width:
        raise imp.node_error(
            node, f"weights of shape {list(w[1])} do not take the input's hidden size {width}"
        )
    packed = w[1][1]
    sizes = [int(s) for s in attrs.get("qkv_hidden_sizes", [packed // 3] * 3)]
    if len(sizes) != 3 or sum(sizes) != packed or sizes[0] != sizes[1]:
        raise imp.node_error(
            node, f"qkv_hidden_sizes {sizes} must be three sizes, Q's equal to K's, summing to "
            f"the {packed} columns of the weights"
        )
    heads = _heads_attribute(imp, node, "num_heads", sizes[0])
    if sizes[2] % heads:
        raise imp.node_error(node, f"num_heads = {heads} must divide V's hidden size {sizes[2]}")
    projected = (batch, seq, packed)
    d = [_dim(i) for i in range(4)]
    proj = imp.contraction(x[0], [d[0], d[1], d[3]], w[0], [d[3], d[2]], d[:3], projected, 3,
                           generics.take())
    if names["bias"]:
        bias = last_axis_vector(imp, node, names["bias"], "bias", projected)
        proj = imp.elementwise([(proj, projected), bias], projected,
                               lambda bb, v: bb.add(v[0], v[1]), generics.take())
    q_size, v_size = sizes[0] // heads, sizes[2] // heads
    q = split_heads(imp, (proj, projected), heads, q_size, 0, generics.take())
    k = split_heads(imp, (proj, projected), heads, q_size, sizes[0], generics.take())
    v = split_heads(imp, (proj, projected), heads, v_size, 2 * sizes[0], generics.take())
    fill = float(attrs.get("mask_filter_value", _MASK_FILTER))
    biases = _masks(imp, node, names, "mask_index", (batch, heads, seq, seq), fill, generics)
    if attrs.get("unidirectional", 0):
        biases.append(causal_bias(imp, node, seq, seq, fill))
    context = attend(imp, q, k, v, _scale(node, q_size), biases, generics)
    imp.define(output, *merge_heads(imp, context, generics.take()))


def _masks(
    imp: Importer, node: onnx.NodeProto, names: dict[str, str], mask_role: str, scores: Shape,
    fill: float, generics: _Generics,
) -> list[Value]:
    """The additive biases of the integer mask ``mask_role`` and the float attention_bias,
    those given."""
    batch, _, seq, total = scores
    biases = []
    if names[mask_role]:
        biases.append(key_mask_bias(imp, node, names[mask_role], mask_role, batch, seq, total,
                                    fill, generics))
    if names["attention_bias"]:
        biases.append(_additive(imp, node, names["attention_bias"], "attention_bias", scores))
    return biases


@lowering(
    "MultiHeadAttention",
    attributes={"num_heads", "mask_filter_value", "scale", "unidirectional"},
    integers=_float_results,
    domain=MS,
)
def lower_multi_head_attention(imp: Importer, node: onnx.NodeProto) -> None:
    """onnxruntime's attention of separate Q [B, S, D], K [B, L, D] and V [B, L, Dv]
    projections: each plus its part of the optional bias, split into heads, ``attend`` with
    the key_padding_mask and attention_bias (as in ``lower_packed_attention``) and, if
    ``unidirectional``, the causal mask (self-attention only); the heads merged. The packed
    forms (no key and value inputs), keys and values already in heads, the KV cache (past and
    present) and the qk output are refused."""
    optional = ("key", "value", "bias", "key_padding_mask", "attention_bias", "past_key",
                "past_value", "past_sequence_length", "cache_indirection")
    formals = ("query", *optional)
    names = _inputs(imp, node, formals[:1], optional)
    output, *_ = computed_outputs(imp, node, ("output", "present_key", "present_value", "qk"),
                                  {0})
    _refuse_given(imp, node, names, ("past_key", "past_value", "past_sequence_length",
                                     "cache_indirection"), _PAST_REFUSED)
    if not (names["key"] and names["value"]):
        raise imp.node_error(
            node, "it has no key and value inputs: the packed forms of Q, K and V are not "
            "supported; give the projections as query, key and value [batch, sequence, hidden]"
        )
    attrs = node_attributes(node)
    generics = _Generics()
    forms = "[batch, sequence, hidden] only (not packed, nor already split into heads)"
    q, k, v = (_rank(imp, node, names[r], r, (3,), forms) for r in ("query", "key", "value"))
    batch, seq, width = q[1]
    total = k[1][1]
    if k[1] != (batch, total, width) or v[1][:2] != (batch, total):
        raise imp.node_error(
            node, f"query {list(q[1])}, key {list(k[1])} and value {list(v[1])} must be "
            "[batch, sequence, hidden], key and value of one length, query and key of one "
            "hidden size"
        )
    heads = _heads_attribute(imp, node, "num_heads", width)
    if v[1][2] % heads:
        raise imp.node_error(node, f"num_heads = {heads} must divide V's hidden size {v[1][2]}")
    if names["bias"]:
        packed = (2 * width + v[1][2],)
        bias, given = imp.use(names["bias"])
        if given != packed:
            raise imp.node_error(
                node, f"bias '{names['bias']}' has shape {list(given)}: it must be Q's, K's "
                f"and V's biases one after another, shape {list(packed)}"
            )
        parts = []
        for (value, shape), offset in ((q, 0), (k, width), (v, 2 * width)):
            part = (shape[2],)
            piece = imp.view(bias, given, part, AffineMap(1, 0, (_dim(0) + offset,)),
                             generics.take())
            parts.append((imp.elementwise([(value, shape), (piece, part)], shape,
                                          lambda bb, x: bb.add(x[0], x[1]), generics.take()),
                          shape))
        q, k, v = parts
    size = width // heads
    q4 = split_heads(imp, q, heads, size, 0, generics.take())
    k4 = split_heads(imp, k, heads, size, 0, generics.take())
    v4 = split_heads(imp, v, heads, v[1][2] // heads, 0, generics.take())
    fill = float(attrs.get("mask_filter_value", _MASK_FILTER))
    biases = _masks(imp, node, names, "key_padding_mask", (batch, heads, seq, total), fill,
                    generics)
    if attrs.get("unidirectional", 0):
        if total != seq:
            raise imp.node_error(
                node, f"unidirectional = 1 with {seq} queries and {total} keys: t10 computes "
                "the causal mask of self-attention (as many keys as queries) only"
            )
        biases.append(causal_bias(imp, node, seq, total, fill))
    context = attend(imp, q4, k4, v4, _scale(node, size), biases, generics)
    imp.define(output, *merge_heads(imp, context, generics.take()))


# --------------------------------------------------------------------------------------------
# Rotary embedding
# --------------------------------------------------------------------------------------------


def rotate(
    imp: Importer, x: Value, cos: Value, sin: Value, interleaved: bool, generics: _Generics
) -> Value:
    """The rotary embedding of heads ``x`` [B, N, S, H] by the angles of ``cos`` / ``sin``
    [B or 1, S, R/2] (R <= H: the rotated dims, the others kept): each pair (x1, x2), halves
    of the first R dims or (``interleaved``) neighbours, becomes (x1·cos - x2·sin, x2·cos +
    x1·sin); as views of x's partner of each dim and of the tables, a sign vector and one
    element-wise generic, then the kept dims joined (``concatenate``)."""
    batch, heads, seq, size = x[1]
    half = cos[1][2]
    rotated = 2 * half
    shape = (batch, heads, seq, rotated)
    d = [_dim(i) for i in range(4)]
    part = x[0] if rotated == size else imp.view(x[0], x[1], shape, AffineMap(4, 0, tuple(d)),
                                                 generics.take())
    partner_of = (d[3] // 2) * 2 + 1 - d[3] % 2 if interleaved else (d[3] + half) % rotated
    partner = imp.view(x[0], x[1], shape, AffineMap(4, 0, (d[0], d[1], d[2], partner_of)),
                       generics.take())
    angle_of = d[3] // 2 if interleaved else d[3] % half
    tables = []
    for value, given in (cos, sin):
        spread = (given[0], 1, seq, rotated)
        view = AffineMap(4, 0, (d[0], d[2], angle_of))
        tables.append((imp.view(value, given, spread, view, generics.take()), spread))
    signs = np.tile([-1.0, 1.0], half) if interleaved else np.repeat([-1.0, 1.0], half)
    sign = imp.add_constant(f"{imp.node_name}_rotary_signs_{generics.take()}",
                            signs.astype(np.float32), hoist=False)

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        value, c, other, s, flip = v
        return bb.add(bb.mul(value, c), bb.mul(bb.mul(other, s), flip))

    result = imp.elementwise(
        [(part, shape), tables[0], (partner, shape), tables[1], (sign, (rotated,))], shape, body,
        generics.take(),
    )
    if rotated == size:
        return result, shape
    kept_shape = (batch, heads, seq, size - rotated)
    kept = imp.view(x[0], x[1], kept_shape, AffineMap(4, 0, (*d[:3], d[3] + rotated)),
                    generics.take())
    return concatenate(imp, [(result, shape), (kept, kept_shape)], 3, generics.take(3))


def rotary_tables(
    imp: Importer, node: onnx.NodeProto, cos_name: str, sin_name: str, positions: str,
    batch: int, seq: int, generics: _Generics,
) -> tuple[Value, Value]:
    """cos and sin [B or 1, S, R/2] of the tokens: the caches' rows at ``positions``, runtime
    ids [B, S] (``table_rows``), or known ids [B, S] or a known first position [1]; without
    positions, caches [B, S, R/2] are the tables themselves and caches [P, R/2] are read from
    row 0 on (positions 0 to S - 1)."""
    caches = [imp.use(n) for n in (cos_name, sin_name)]
    shapes = {shape for _, shape in caches}
    if len(shapes) != 1 or len(caches[0][1]) not in (2, 3):
        raise imp.node_error(
            node, f"cos_cache {list(caches[0][1])} and sin_cache {list(caches[1][1])} must have "
            "one shape, [max positions, rotary dim / 2] (or [batch, sequence, rotary dim / 2] "
            "without position_ids)"
        )
    cache = caches[0][1]
    if len(cache) == 3:
        if positions or cache[:2] not in ((batch, seq), (1, seq)):
            raise imp.node_error(
                node, f"caches of shape {list(cache)} are the tables of the tokens [batch, "
                f"sequence, rotary dim / 2] ([{batch}, {seq}, ·]), read without position_ids"
            )
        return caches[0], caches[1]
    return (table_rows(imp, node, caches[0], "cos_cache", positions, batch, seq, generics),
            table_rows(imp, node, caches[1], "sin_cache", positions, batch, seq, generics))


def table_rows(
    imp: Importer, node: onnx.NodeProto, table: Value, role: str, positions: str, batch: int,
    seq: int, generics: _Generics,
) -> Value:
    """The rows of ``table`` [P, W] (``role``) for the tokens, [B or 1, S, W]: at runtime
    position ids [B or 1, S], or at known ones [B or 1, S] or from a known first position [1]
    (a view of the rows first, first + 1, ... when they run so, else a gather of the ids);
    without ``positions``, rows 0 to S - 1."""
    if positions and not imp.is_known(positions):
        ids = imp.use(positions)
        if ids[1] not in ((batch, seq), (1, seq)):
            raise imp.node_error(
                node, f"position_ids '{positions}' computed at run time have shape "
                f"{list(ids[1])}; t10 gathers positions [batch, sequence] ([{batch}, {seq}])"
            )
        return gathered(imp, node, table, ids, GatherKind("rows", 0), generics.take())
    if positions:
        known = imp.known_input(node, positions, "position_ids").astype(np.int64)
        if known.shape == (1,):
            known = known[0] + np.arange(seq)[None, :]
        if known.shape not in ((batch, seq), (1, seq)):
            raise imp.node_error(
                node, f"position_ids '{positions}' have shape {list(known.shape)}: they must "
                f"be [batch, sequence] ([{batch}, {seq}]) or the first position [1]"
            )
    else:
        known = np.arange(seq)[None, :]
    rows, width = table[1]
    if known.min() < 0 or known.max() >= rows:
        raise imp.node_error(
            node, f"positions {known.min()} to {known.max()} lie outside the {rows} rows of "
            f"{role}"
        )
    first = int(known[0, 0])
    if not (known == first + np.arange(seq)[None, :]).all():
        return gathered(imp, node, table, known, GatherKind("rows", 0), generics.take())
    shape = (1, seq, width)
    view = AffineMap(3, 0, (_dim(1) + first, _dim(2)))
    return imp.view(table[0], table[1], shape, view, generics.take()), shape


def _rotary_embedding(imp: Importer, node: onnx.NodeProto, names: dict[str, str],
                      interleaved: bool) -> None:
    """The RotaryEmbedding of ``X`` (input ``names['X']``): [B, S, N·H] (``num_heads`` heads,
    or without it heads of the rotary dim) or [B, N, S, H]; output of its shape."""
    generics = _Generics()
    attrs = node_attributes(node)
    x = _rank(imp, node, names["X"], "input", (3, 4),
              "[batch, sequence, hidden] or [batch, heads, sequence, head size]")
    cos, sin = rotary_tables(imp, node, names["cos_cache"], names["sin_cache"],
                             names["position_ids"], x[1][0], x[1][-2 if len(x[1]) == 4 else 1],
                             generics)
    rotated = 2 * cos[1][2]
    given_dim = int(attrs.get("rotary_embedding_dim", 0))
    if len(x[1]) == 4:
        heads, size = x[1][1], x[1][3]
    else:
        given_heads = int(attrs.get("num_heads", 0))
        heads = given_heads if given_heads else x[1][2] // rotated
        if heads < 1 or x[1][2] % heads:
            raise imp.node_error(
                node, f"num_heads = {given_heads} must be a positive divisor of the hidden "
                f"size {x[1][2]} (when 0, the hidden size must be a multiple of the rotary "
                f"dim {rotated})"
            )
        size = x[1][2] // heads
    if rotated > size or (given_dim and given_dim != rotated):
        raise imp.node_error(
            node, f"the caches rotate {rotated} dims (twice their last dim), rotary_embedding_dim "
            f"is {given_dim}, the head size {size}: the rotated dims must be at most the head "
            "size and match rotary_embedding_dim if given"
        )
    if len(x[1]) == 4:
        y = rotate(imp, x, cos, sin, interleaved, generics)
    else:
        y = rotate(imp, split_heads(imp, x, heads, size, 0, generics.take()), cos, sin,
                   interleaved, generics)
        y = merge_heads(imp, y, generics.take())
    imp.define(node.output[0], *y)


@lowering("RotaryEmbedding", attributes={"interleaved", "num_heads", "rotary_embedding_dim"},
          integers=_float_results)
def lower_rotary_embedding(imp: Importer, node: onnx.NodeProto) -> None:
    """ONNX's RotaryEmbedding (opset 23): ``rotate`` by the caches' rows at position_ids."""
    formals = ("X", "cos_cache", "sin_cache", "position_ids")
    names = _inputs(imp, node, formals[:3], formals[3:])
    _rotary_embedding(imp, node, names, bool(node_attributes(node).get("interleaved", 0)))


@lowering(
    "RotaryEmbedding",
    attributes={"interleaved", "num_heads", "rotary_embedding_dim", "scale",
                "is_packed_batching"},
    integers=_float_results,
    domain=MS,
)
def lower_ms_rotary_embedding(imp: Importer, node: onnx.NodeProto) -> None:
    """onnxruntime's RotaryEmbedding: as ONNX's, position_ids required (first), num_heads
    with rotary_embedding_dim (as its kernel requires)."""
    formals = ("X", "position_ids", "cos_cache", "sin_cache")
    names = _inputs(imp, node, formals)
    _refuse_attributes(imp, node, {"scale": (1.0,), "is_packed_batching": (0,)})
    attrs = node_attributes(node)
    if attrs.get("rotary_embedding_dim", 0) and not attrs.get("num_heads", 0):
        raise imp.node_error(node, f"rotary_embedding_dim = {attrs['rotary_embedding_dim']} "
                                   "needs num_heads (onnxruntime's kernel requires it): give "
                                   "the node its num_heads")
    _rotary_embedding(imp, node, names, bool(attrs.get("interleaved", 0)))


# --------------------------------------------------------------------------------------------
# GroupQueryAttention and ONNX's Attention
# --------------------------------------------------------------------------------------------


def _heads_input(
    imp: Importer, node: onnx.NodeProto, name: str, role: str, heads: int, generics: _Generics
) -> Value:
    """Input ``name`` as heads [B, N, S, H]: 4-D as it is, 3-D [B, S, N·H] split."""
    x = _rank(imp, node, name, role, (3, 4),
              "[batch, sequence, heads · head size] or [batch, heads, sequence, head size]")
    if len(x[1]) == 4:
        if x[1][1] != heads:
            raise imp.node_error(
                node, f"{role} '{name}' of shape {list(x[1])} does not have the {heads} heads "
                "its attribute gives"
            )
        return x
    if x[1][2] % heads:
        raise imp.node_error(
            node, f"{role} '{name}' of shape {list(x[1])}: its hidden size is not a multiple "
            f"of its {heads} heads"
        )
    return split_heads(imp, x, heads, x[1][2] // heads, 0, generics.take())


@lowering(
    "GroupQueryAttention",
    attributes={"num_heads", "kv_num_heads", "scale", "local_window_size", "do_rotary",
                "rotary_interleaved", "softcap", "smooth_softmax", "qk_output", "causal",
                "sliding_window_cache", "k_quant_type", "v_quant_type", "kv_cache_bit_width",
                "qk_norm_epsilon", "q_norm_epsilon", "k_norm_epsilon"},
    integers=_float_results,
    domain=MS,
)
def lower_group_query_attention(imp: Importer, node: onnx.NodeProto) -> None:
    """onnxruntime's grouped-query attention, the prefill without a KV cache: Q [B, S,
    N·H] and K, V [B, S, Nkv·H] (or packed in the query), optionally rotated
    (``do_rotary``: ``rotate`` by the caches' rows at position_ids, default 0 to S - 1),
    causal ``attend`` (each group of N / Nkv query heads reading one key / value head), with
    the attention_bias; present_key / present_value are the (rotated) key and value heads.
    seqlens_k must be known, S - 1 for every sequence (no padding), and
    total_sequence_length S; a past, a local window, softcap, smooth softmax, the qk output,
    quantized caches, head sinks and the Q / K norms are refused."""
    optional = ("key", "value", "past_key", "past_value")
    later = ("cos_cache", "sin_cache", "position_ids", "attention_bias", "head_sink", "k_scale",
             "v_scale", "q_norm_weight", "k_norm_weight", "query_seqlens")
    formals = ("query", *optional, "seqlens_k", "total_sequence_length", *later)
    names = _inputs(imp, node, formals[:1], formals[1:])
    if not (names["seqlens_k"] and names["total_sequence_length"]):
        raise imp.node_error(node, "its required inputs seqlens_k and total_sequence_length "
                                   "are missing: give the node those inputs")
    output, present_key, present_value, _ = computed_outputs(
        imp, node, ("output", "present_key", "present_value", "output_qk"), {0, 1, 2}
    )
    _refuse_given(imp, node, names, ("past_key", "past_value"), _PAST_REFUSED)
    _refuse_given(imp, node, names, ("head_sink", "k_scale", "v_scale", "q_norm_weight",
                                     "k_norm_weight", "query_seqlens"),
                  "t10 computes GroupQueryAttention without head sinks, quantized caches, "
                  "Q / K norms or packed sequences")
    _refuse_attributes(imp, node, {
        "local_window_size": (-1,), "softcap": (0.0,), "smooth_softmax": (-1, 0),
        "qk_output": (0,), "causal": (1,), "k_quant_type": (b"NONE",),
        "v_quant_type": (b"NONE",),
    })
    attrs = node_attributes(node)
    generics = _Generics()
    heads = int(attrs.get("num_heads", 0))
    kv_heads = int(attrs.get("kv_num_heads", 0))
    if heads < 1 or kv_heads < 1 or heads % kv_heads:
        raise imp.node_error(node, f"num_heads = {heads} must be a positive multiple of "
                                   f"kv_num_heads = {kv_heads}")
    q = _rank(imp, node, names["query"], "query", (3,), "query [batch, sequence, hidden]")
    batch, seq, width = q[1]
    if bool(names["key"]) != bool(names["value"]):
        raise imp.node_error(node, "it gives one of key and value: give both, or neither (Q, K "
                                   "and V packed in the query)")
    packed = not names["key"]  # [B, S, (N + 2·Nkv)·H]
    columns = heads + 2 * kv_heads if packed else heads
    if width % columns:
        raise imp.node_error(node, f"the query's hidden size {width} is not {columns} heads "
                                   f"({'num_heads + 2 · kv_num_heads' if packed else 'num_heads'})")
    size = width // columns
    q4 = split_heads(imp, q, heads, size, 0, generics.take())
    if packed:
        k4 = split_heads(imp, q, kv_heads, size, heads * size, generics.take())
        v4 = split_heads(imp, q, kv_heads, size, (heads + kv_heads) * size, generics.take())
    else:
        k4, v4 = (_heads_input(imp, node, names[r], r, kv_heads, generics)
                  for r in ("key", "value"))
    if k4[1][3] != size:
        raise imp.node_error(node, f"the key heads {list(k4[1])} must have the query's head "
                                   f"size {size}")
    if k4[1][2] != seq or v4[1][:3] != k4[1][:3]:
        raise imp.node_error(node, f"key and value heads {list(k4[1])} and {list(v4[1])} must "
                                   f"hold the query's {seq} positions (no past)")
    _check_prefill(imp, node, names, batch, seq)
    if attrs.get("do_rotary", 0):
        if not (names["cos_cache"] and names["sin_cache"]):
            raise imp.node_error(node, "do_rotary = 1 needs the inputs cos_cache and sin_cache")
        cos, sin = rotary_tables(imp, node, names["cos_cache"], names["sin_cache"],
                                 names["position_ids"], batch, seq, generics)
        interleaved = bool(attrs.get("rotary_interleaved", 0))
        q4 = rotate(imp, q4, cos, sin, interleaved, generics)
        k4 = rotate(imp, k4, cos, sin, interleaved, generics)
    biases = [causal_bias(imp, node, seq, seq, _NEG_INF)]
    if names["attention_bias"]:
        biases.append(_additive(imp, node, names["attention_bias"], "attention_bias",
                                (batch, heads, seq, seq)))
    context = attend(imp, q4, k4, v4, _scale(node, size), biases, generics)
    imp.define(output, *merge_heads(imp, context, generics.take()))
    if present_key:
        imp.define(present_key, *k4)
    if present_value:
        imp.define(present_value, *v4)


def _check_prefill(
    imp: Importer, node: onnx.NodeProto, names: dict[str, str], batch: int, seq: int
) -> None:
    """GroupQueryAttention's seqlens_k and total_sequence_length must be known and say a
    prefill of S tokens per sequence (S - 1 and S)."""
    lengths = imp.known_input(node, names["seqlens_k"], "seqlens_k").reshape(-1)
    total = imp.known_input(node, names["total_sequence_length"],
                            "total_sequence_length").reshape(-1)
    if lengths.shape != (batch,) or (lengths != seq - 1).any() or total.tolist() != [seq]:
        raise imp.node_error(
            node, f"seqlens_k {lengths.tolist()} and total_sequence_length {total.tolist()} "
            f"must be {[seq - 1] * batch} and [{seq}]: t10 computes the prefill of {seq} tokens "
            "per sequence without padding"
        )


@lowering(
    "Attention",
    attributes={"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale",
                "softcap", "softmax_precision"},
    integers=_float_results,
)
def lower_attention(imp: Importer, node: onnx.NodeProto) -> None:
    """ONNX's Attention (opset 23): Q [B, N, S, H] and K, V [B, Nkv, T, ·] (or 3-D [B, S,
    heads · size], ``q_num_heads`` / ``kv_num_heads`` heads), ``attend`` with attn_mask (a
    bool mask: -inf where false; a float one added) and, if ``is_causal``, -inf above the
    diagonal, a query with no key to attend getting 0; the result in Q's layout. Past keys
    and values, the present outputs, the qk_matmul_output and softcap are refused."""
    optional = ("attn_mask", "past_key", "past_value")
    formals = ("Q", "K", "V", *optional)
    names = _inputs(imp, node, formals[:3], optional)
    output, *_ = computed_outputs(
        imp, node, ("Y", "present_key", "present_value", "qk_matmul_output"), {0}
    )
    _refuse_given(imp, node, names, ("past_key", "past_value"), _PAST_REFUSED)
    _refuse_attributes(imp, node, {"softcap": (0.0,), "qk_matmul_output_mode": (0,)})
    attrs = node_attributes(node)
    generics = _Generics()
    three_d = len(imp.shape_of(names["Q"])) == 3
    q_heads = int(attrs.get("q_num_heads", 0)) if three_d else imp.shape_of(names["Q"])[1]
    kv_heads = int(attrs.get("kv_num_heads", 0)) if three_d else imp.shape_of(names["K"])[1]
    if q_heads < 1 or kv_heads < 1 or q_heads % kv_heads:
        raise imp.node_error(node, f"the query's {q_heads} heads must be a positive multiple of "
                                   f"the keys' {kv_heads} (q_num_heads, kv_num_heads for 3-D "
                                   "inputs)")
    q = _heads_input(imp, node, names["Q"], "Q", q_heads, generics)
    k, v = (_heads_input(imp, node, names[r], r, kv_heads, generics) for r in ("K", "V"))
    batch, _, seq, size = q[1]
    total = k[1][2]
    if k[1][::3] != (batch, size) or v[1][:3] != k[1][:3]:
        raise imp.node_error(node, f"Q heads {list(q[1])}, K heads {list(k[1])} and V heads "
                                   f"{list(v[1])}: Q and K must share batch and head size, K "
                                   "and V batch, heads and length")
    scores = (batch, q_heads, seq, total)
    biases = []
    if names["attn_mask"]:
        mask = _additive(imp, node, names["attn_mask"], "attn_mask", scores)
        if imp.elem_type(names["attn_mask"]) == onnx.TensorProto.BOOL:

            def allowed(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
                return bb.select(bb.cmpf_one(x[0], bb.const(0.0)), bb.const(0.0),
                                 bb.const(_NEG_INF))

            mask = imp.elementwise([mask], mask[1], allowed, generics.take()), mask[1]
        biases.append(mask)
    if attrs.get("is_causal", 0):
        biases.append(causal_bias(imp, node, seq, total, _NEG_INF))
    context = attend(imp, q, k, v, _scale(node, size), biases, generics, masked_rows_zero=True)
    if three_d:
        context = merge_heads(imp, context, generics.take())
    imp.define(output, *context)


# --------------------------------------------------------------------------------------------
# EmbedLayerNormalization
# --------------------------------------------------------------------------------------------


def _embed_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """mask_index counts a sequence's mask entries equal to 1: 0 to S (its partial sums
    too); the other results are floats."""
    seq = imp.shape_of(node.input[0])[1]
    counts = Interval(0, seq)
    outputs: list[Range] = [Unknown("a float result")] * len(node.output)
    if len(outputs) > 1:
        outputs[1] = counts
    return Ranges(tuple(outputs), counts)


_EMBED_SUM = 6
"""The first generic of EmbedLayerNormalization's own (after the layer norm's ``:0`` to ``:5``)."""


@lowering("EmbedLayerNormalization", attributes={"epsilon", "mask_index_type"},
          integers=_embed_ranges, domain=MS)
def lower_embed_layer_norm(imp: Importer, node: onnx.NodeProto) -> None:
    """onnxruntime's BERT embedding: the word and (optional) segment embeddings of the ids
    (runtime gathers), plus the position embedding (``table_rows``: of position_ids, or rows 0
    to S - 1), summed (output embedding_sum), then ``layer_norm`` over the hidden axis ·
    gamma + beta; mask_index is the count of the mask's entries equal to 1 per sequence (0
    without a mask)."""
    optional = ("segment_ids", "segment_embedding", "mask", "position_ids")
    formals = ("input_ids", "segment_ids", "word_embedding", "position_embedding",
               "segment_embedding", "gamma", "beta", "mask", "position_ids")
    required = [f for f in formals if f not in optional]
    given = list(node.input) + [""] * (len(formals) - len(node.input))
    if len(node.input) > len(formals):
        schema_inputs(imp, node, formals)  # refuses the extra inputs
    names: dict[str, str] = dict(zip(formals, given[: len(formals)], strict=True))
    if missing := [r for r in required if not names[r]]:
        raise imp.node_error(node, f"its required input(s) {', '.join(missing)} are missing: "
                                   f"give the node its inputs {', '.join(required)}")
    if bool(names["segment_ids"]) != bool(names["segment_embedding"]):
        raise imp.node_error(node, "segment_ids and segment_embedding go together: give both "
                                   "or neither")
    output, mask_index, embedding_sum = computed_outputs(
        imp, node, ("output", "mask_index", "embedding_sum"), {0, 1, 2}
    )
    _refuse_attributes(imp, node, {"mask_index_type": (1,)})
    generics = _Generics()
    generics.take(_EMBED_SUM)
    ids = _rank(imp, node, names["input_ids"], "input_ids", (2,), "ids [batch, sequence]")
    batch, seq = ids[1]
    word = imp.use(names["word_embedding"])
    hidden = word[1][-1]
    shape = (batch, seq, hidden)
    rows = GatherKind("rows", 0)
    terms = [gathered(imp, node, word, ids, rows, generics.take())]
    table = imp.use(names["position_embedding"])
    if table[1][1:] != (hidden,):
        raise imp.node_error(node, f"position_embedding of shape {list(table[1])} must be "
                                   f"[positions, {hidden}]")
    terms.append(table_rows(imp, node, table, "position_embedding", names["position_ids"], batch,
                            seq, generics))
    if names["segment_ids"]:
        segments = _rank(imp, node, names["segment_ids"], "segment_ids", (2,),
                         "ids [batch, sequence]")
        terms.append(gathered(imp, node, imp.use(names["segment_embedding"]), segments, rows,
                            generics.take()))
    if any(broadcast_shapes(s, shape) != shape for _, s in terms):
        raise imp.node_error(node, f"the embeddings {[list(s) for _, s in terms]} must share "
                                   f"the hidden size {hidden} of the word embedding")
    summed = imp.elementwise(terms, shape, lambda bb, v: functools.reduce(bb.add, v),
                             generics.take())
    if embedding_sum:
        imp.define(embedding_sum, summed, shape)
    affine = [last_axis_vector(imp, node, names[r], r, shape) for r in ("gamma", "beta")]
    eps = float(node_attributes(node).get("epsilon", 1e-12))
    y, _ = layer_norm(imp, (summed, shape), 2, eps, affine)
    imp.define(output, y, shape)
    if mask_index:
        _define_mask_index(imp, node, mask_index, names["mask"], batch, seq, generics.take())


def _define_mask_index(
    imp: Importer, node: onnx.NodeProto, name: str, mask: str, batch: int, seq: int, index: int
) -> None:
    """Output ``name`` [B]: per sequence, the count of the mask's entries equal to 1."""
    if not mask:
        imp.add_constant(name, np.zeros(batch, np.float32), hoist=False)
        return
    value, shape = imp.use(mask)
    if shape != (batch, seq):
        raise imp.node_error(node, f"mask '{mask}' of shape {list(shape)} must be [{batch}, "
                                   f"{seq}]")
    counts, _ = imp.reduction(
        [(value, shape)], [1], False, "sum",
        lambda bb, v: bb.flag(bb.cmpf("oeq", v[0], bb.const(1.0))), index=index,
    )
    imp.define(name, counts, (batch,))
