"""The attention ops (``ops_attention``): onnxruntime's com.microsoft Attention,
MultiHeadAttention, GroupQueryAttention, RotaryEmbedding and EmbedLayerNormalization, and
opset 23's Attention and RotaryEmbedding, each against onnxruntime over small shapes and
attributes; every refusal by its message."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
import pytest
from helpers import randn
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CompileOptions, check_tolerance, compile_model, run_model
from t10.errors import T10Error

MS = "com.microsoft"
OPTIONS = CompileOptions(chip="test-16")
F, I32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL

Typed = tuple[int, tuple[int, ...] | None]


def model_of(
    node: onnx.NodeProto,
    inputs: Mapping[str, Typed],
    outputs: Mapping[str, Typed],
    weights: Mapping[str, np.ndarray],
    opset: int = 17,
) -> onnx.ModelProto:
    """A model of ``node`` alone: graph inputs and outputs (name → (type, shape): those the
    node names, an input unless a weight), weights as initializers; opsets: the default
    domain's ``opset`` and ``com.microsoft``'s 1."""
    graph = helper.make_graph(
        [node],
        "attention",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()
         if n in node.input and n not in weights],
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()
         if n and n in node.output],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    return model


def assert_matches(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray] | None = None,
                   options: CompileOptions = OPTIONS) -> None:
    """t10's outputs match onnxruntime's (on ``inputs``, by default seeded random ones: masks
    of 0 / 1)."""
    feeds = None if inputs is None else dict(inputs)
    if feeds is not None:
        rng = np.random.default_rng(0)
        for vi in model.graph.input:
            if vi.name not in feeds and vi.type.tensor_type.elem_type == F:
                shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
                feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    result = run_model(model, options, inputs=feeds, check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check


def refused(model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(T10Error, match=message):
        compile_model(model, OPTIONS)


sizes = st.fixed_dictionaries({
    "batch": st.integers(1, 2), "seq": st.integers(1, 5), "heads": st.integers(1, 3),
    "size": st.integers(1, 4),
})


def _keeping_a_key(rng: np.random.Generator, shape: tuple[int, ...], keys: int) -> np.ndarray:
    """A random int32 mask of ``shape``: key lengths 1 to ``keys`` (1-D) or 0 / 1 with key 0
    kept. A query whose keys are all masked weighs them by scores rounded at the filter
    value's magnitude (``ops_attention.attend``), which only onnxruntime's summation order
    reproduces."""
    if len(shape) == 1:
        return rng.integers(1, keys + 1, shape).astype(np.int32)
    mask = rng.integers(0, 2, shape).astype(np.int32)
    mask[..., 0] = 1
    return mask


# --------------------------------------------------------------------------------------------
# com.microsoft.Attention
# --------------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(dims=sizes, mask=st.sampled_from(["none", "2d", "1d", "3d"]), causal=st.booleans(),
       bias=st.booleans(), attention_bias=st.booleans(), scale=st.sampled_from([0.0, 0.3]))
def test_packed_attention(
    dims: dict[str, int], mask: str, causal: bool, bias: bool, attention_bias: bool,
    scale: float,
) -> None:
    """input · weights (+ bias) split into Q, K, V heads; the key padding mask, key lengths or
    a [B, S, T] mask, the attention bias and the causal mask, alone and together."""
    b, s, n, h = dims["batch"], dims["seq"], dims["heads"], dims["size"]
    hidden = n * h
    weights = {"w": randn(hidden, 3 * hidden, seed=1)}
    if bias:
        weights["bias"] = randn(3 * hidden, seed=2)
    inputs: dict[str, Typed] = {"x": (F, (b, s, hidden))}
    feeds: dict[str, np.ndarray] = {}
    rng = np.random.default_rng(3)
    if mask != "none":
        shape = {"2d": (b, s), "1d": (b,), "3d": (b, s, s)}[mask]
        inputs["mask"] = (I32, shape)
        feeds["mask"] = _keeping_a_key(rng, shape, s)
    if attention_bias:
        inputs["ab"] = (F, (1, n, s, s))
    names = ["x", "w", "bias" if bias else "", "mask" if mask != "none" else "", "",
             "ab" if attention_bias else ""]
    node = helper.make_node("Attention", names, ["y"], domain=MS, num_heads=n,
                            unidirectional=int(causal), scale=scale)
    assert_matches(model_of(node, inputs, {"y": (F, (b, s, hidden))}, weights), feeds)


def test_packed_attention_of_unequal_sizes() -> None:
    """qkv_hidden_sizes: V wider than Q and K; mask_filter_value given."""
    weights = {"w": randn(4, 4 + 4 + 6, seed=1), "bias": randn(14, seed=2)}
    node = helper.make_node("Attention", ["x", "w", "bias"], ["y"], domain=MS, num_heads=2,
                            qkv_hidden_sizes=[4, 4, 6], mask_filter_value=-1000.0)
    assert_matches(model_of(node, {"x": (F, (2, 3, 4))}, {"y": (F, (2, 3, 6))}, weights))


def _attention(inputs: list[str], outputs: list[str], x: tuple[int, ...] = (1, 2, 4),
               w: tuple[int, ...] = (4, 12), **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("Attention", inputs, outputs, name="attn", domain=MS, **attrs)
    shapes = {"x": (F, x), "m": (I32, (3, 2)), "past": (F, (2, 1, 2, 0, 2))}
    return model_of(node, shapes, {o: (F, (1, 2, 4)) for o in outputs}, {"w": randn(*w)})


_PACKED_ATTENTION_REFUSALS = [
    (_attention(["x", "w", "", "", "past"], ["y"], num_heads=2),
     r"node 'attn' \(Attention\): it gives the input\(s\) past \('past'\); t10 compiles "
     r"attention without a KV cache \(no past keys and values\): leave them out"),
    (_attention(["x", "w"], ["y", "present"], num_heads=2),
     r"it requests its output\(s\) present \('present'\), which t10 does not compute"),
    (_attention(["x", "w", "", "m"], ["y"], num_heads=2),
     r"mask_index 'm' has shape \[3, 2\]; t10 supports the key lengths \[1\] and the 0 / 1 "
     r"masks \[1, 2\] \(key padding\) and \[1, 2, 2\]: give the mask in one of those forms"),
    (_attention(["x", "w"], ["y"], num_heads=3),
     r"attribute num_heads = 3 must be a positive divisor of the hidden size 4"),
    (_attention(["x", "w"], ["y"], num_heads=2, qkv_hidden_sizes=[4, 2, 6]),
     r"qkv_hidden_sizes \[4, 2, 6\] must be three sizes, Q's equal to K's, summing to the 12 "
     r"columns of the weights"),
    (_attention(["x", "w"], ["y"], num_heads=2, do_rotary=1),
     r"attribute do_rotary = 1 is not supported \(t10 computes do_rotary = 0\): remove it"),
    (_attention(["x", "w"], ["y"], x=(2, 4), num_heads=2),
     r"input 'x' has shape \[2, 4\]; t10 supports an input \[batch, sequence, hidden\]"),
    (_attention(["x", "w"], ["y"], w=(5, 12), num_heads=2),
     r"weights of shape \[5, 12\] do not take the input's hidden size 4"),
    (_attention(["x", "w"], ["y"], w=(4, 11), num_heads=2, qkv_hidden_sizes=[4, 4, 3]),
     r"num_heads = 2 must divide V's hidden size 3"),
]


# --------------------------------------------------------------------------------------------
# com.microsoft.MultiHeadAttention
# --------------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(dims=sizes, keys=st.integers(1, 4), mask=st.sampled_from(["none", "2d", "1d"]),
       bias=st.booleans(), attention_bias=st.booleans(), causal=st.booleans())
def test_multi_head_attention(
    dims: dict[str, int], keys: int, mask: str, bias: bool, attention_bias: bool, causal: bool
) -> None:
    """Separate Q, K, V (cross-attention: the keys' length differs), the packed bias, the key
    padding mask or key lengths, the attention bias, the causal mask."""
    b, s, n, h = dims["batch"], dims["seq"], dims["heads"], dims["size"]
    hidden, v_hidden = n * h, n * (h + 1)
    inputs: dict[str, Typed] = {"q": (F, (b, s, hidden)), "k": (F, (b, keys, hidden)),
                                "v": (F, (b, keys, v_hidden))}
    weights = {"bias": randn(2 * hidden + v_hidden, seed=2)} if bias else {}
    feeds: dict[str, np.ndarray] = {}
    if mask != "none":
        shape = (b, keys) if mask == "2d" else (b,)
        inputs["mask"] = (I32, shape)
        rng = np.random.default_rng(4)
        feeds["mask"] = _keeping_a_key(rng, shape, keys)
    if attention_bias:
        inputs["ab"] = (F, (b, 1, s, keys))
    names = ["q", "k", "v", "bias" if bias else "", "mask" if mask != "none" else "",
             "ab" if attention_bias else ""]
    node = helper.make_node("MultiHeadAttention", names, ["y"], domain=MS, num_heads=n,
                            unidirectional=int(causal and keys == s))
    assert_matches(model_of(node, inputs, {"y": (F, (b, s, v_hidden))}, weights), feeds)


def _mha(inputs: list[str], outputs: list[str], k_shape: tuple[int, ...] = (1, 3, 4),
         v_width: int = 4, **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("MultiHeadAttention", inputs, outputs, name="mha", domain=MS,
                            **{"num_heads": 2, **attrs})
    shapes = {"q": (F, (1, 3, 4)), "k": (F, k_shape), "v": (F, (1, k_shape[1], v_width)),
              "pk": (F, (1, 2, 1, 2))}
    return model_of(node, shapes, {o: (F, (1, 3, 4)) for o in outputs}, {"bias": randn(5)})


_MULTI_HEAD_ATTENTION_REFUSALS = [
    (_mha(["q"], ["y"]), r"node 'mha' \(MultiHeadAttention\): it has no key and value inputs: "
     r"the packed forms of Q, K and V are not supported"),
    (_mha(["q", "k", "v", "", "", "", "pk"], ["y"]),
     r"it gives the input\(s\) past_key \('pk'\); t10 compiles attention without a KV cache"),
    (_mha(["q", "k", "v"], ["y", "", "", "qk"]),
     r"it requests its output\(s\) qk \('qk'\), which t10 does not compute"),
    (_mha(["q", "k", "v"], ["y"], k_shape=(1, 2, 3, 2)),
     r"key 'k' has shape \[1, 2, 3, 2\]; t10 supports \[batch, sequence, hidden\] only"),
    (_mha(["q", "k", "v"], ["y"], k_shape=(1, 2, 4), unidirectional=1),
     r"unidirectional = 1 with 3 queries and 2 keys: t10 computes the causal mask of "
     r"self-attention \(as many keys as queries\) only"),
    (_mha(["q", "k", "v"], ["y"], k_shape=(1, 3, 6)),
     r"query \[1, 3, 4\], key \[1, 3, 6\] and value \[1, 3, 4\] must be \[batch, sequence, "
     r"hidden\], key and value of one length, query and key of one hidden size"),
    (_mha(["q", "k", "v"], ["y"], v_width=3),
     r"num_heads = 2 must divide V's hidden size 3"),
    (_mha(["q", "k", "v", "bias"], ["y"]),
     r"bias 'bias' has shape \[5\]: it must be Q's, K's and V's biases one after another, "
     r"shape \[12\]"),
]


# --------------------------------------------------------------------------------------------
# RotaryEmbedding
# --------------------------------------------------------------------------------------------


def _caches(positions: int, half: int) -> dict[str, np.ndarray]:
    angles = np.arange(positions)[:, None] * (0.5 ** np.arange(half))[None, :]
    return {"cos": np.cos(angles).astype(np.float32), "sin": np.sin(angles).astype(np.float32)}


@settings(max_examples=15, deadline=None)
@given(dims=sizes, interleaved=st.booleans(), partial=st.booleans(), four_d=st.booleans(),
       onnx_op=st.booleans(), positions=st.sampled_from(["runtime", "run", "known"]))
def test_rotary_embedding(
    dims: dict[str, int], interleaved: bool, partial: bool, four_d: bool, onnx_op: bool,
    positions: str,
) -> None:
    """Halves or interleaved pairs rotated, all of each head or its first dims; 3-D or 4-D
    input; positions given at run time, or known: a run (from a first position: a view of
    the caches) or any (a gather); com.microsoft's and opset 23's op."""
    b, s, n = dims["batch"], dims["seq"], dims["heads"]
    h = 2 * dims["size"]
    rotary = h - 2 if partial and h > 2 else h
    weights: dict[str, np.ndarray] = _caches(8, rotary // 2)
    inputs: dict[str, Typed] = {}
    feeds: dict[str, np.ndarray] = {}
    ids = np.random.default_rng(5).integers(0, 8, (b, s))
    if positions == "runtime":
        inputs["pos"] = (I64, (b, s))
        feeds["pos"] = ids
    elif positions == "known":
        weights["pos"] = ids
    elif onnx_op:  # ONNX's position_ids are [batch, sequence]
        weights["pos"] = np.arange(8 - s, 8)[None, :].repeat(b, 0)
    else:
        weights["pos"] = np.array([8 - s], np.int64)
    shape = (b, n, s, h) if four_d else (b, s, n * h)
    inputs["x"] = (F, shape)
    attrs = {"interleaved": int(interleaved), "num_heads": n}
    if partial:
        attrs["rotary_embedding_dim"] = rotary
    if onnx_op:
        node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], **attrs)
    else:
        node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS,
                                **attrs)
    model = model_of(node, inputs, {"y": (F, shape)}, weights, opset=23 if onnx_op else 17)
    assert_matches(model, feeds)


def test_rotary_embedding_of_token_tables() -> None:
    """ONNX's op without position_ids: the caches are the tokens' tables [B, S, R/2]."""
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], num_heads=2)
    inputs = {"x": (F, (2, 3, 8)), "cos": (F, (2, 3, 2)), "sin": (F, (2, 3, 2))}
    assert_matches(model_of(node, inputs, {"y": (F, (2, 3, 8))}, {}, opset=23))


def test_rotary_embedding_without_num_heads() -> None:
    """com.microsoft's op on a 3-D input without num_heads: heads of the rotary dim."""
    node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS)
    weights = {**_caches(8, 2), "pos": np.array([[0, 1, 2]])}
    assert_matches(model_of(node, {"x": (F, (1, 3, 8))}, {"y": (F, (1, 3, 8))}, weights))


def _rotary(inputs: list[str], weights: dict[str, np.ndarray], pos: tuple[int, ...] = (1, 3),
            domain: str = MS, **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("RotaryEmbedding", inputs, ["y"], name="rope", domain=domain,
                            **attrs)
    runtime = {"x": (F, (1, 3, 8)), "pos": (I64, pos)}
    return model_of(node, runtime, {"y": (F, (1, 3, 8))}, weights, opset=17 if domain else 23)


_ROTARY_EMBEDDING_REFUSALS = [
    (_rotary(["x", "pos", "cos", "sin"], _caches(4, 2), scale=2.0),
     r"node 'rope' \(RotaryEmbedding\): attribute scale = 2.0 is not supported"),
    (_rotary(["x", "pos", "cos", "sin"], _caches(4, 2), is_packed_batching=1),
     r"attribute is_packed_batching = 1 is not supported"),
    (_rotary(["x", "pos", "cos", "sin"], {**_caches(4, 2), "sin": randn(4, 1)}),
     r"cos_cache \[4, 2\] and sin_cache \[4, 1\] must have one shape"),
    (_rotary(["x", "pos", "cos", "sin"], {**_caches(4, 2), "pos": np.array([2])}),
     r"positions 2 to 4 lie outside the 4 rows of cos_cache"),
    (_rotary(["x", "pos", "cos", "sin"], _caches(4, 4), num_heads=2, rotary_embedding_dim=6),
     r"the caches rotate 8 dims \(twice their last dim\), rotary_embedding_dim is 6"),
    (_rotary(["x", "pos", "cos", "sin"], _caches(4, 2), pos=(1,)),
     r"position_ids 'pos' computed at run time have shape \[1\]; t10 gathers positions "
     r"\[batch, sequence\] \(\[1, 3\]\)"),
    (_rotary(["x", "pos", "cos", "sin"], {**_caches(4, 2), "pos": np.array([[0, 1]])}),
     r"position_ids 'pos' have shape \[1, 2\]: they must be \[batch, sequence\] \(\[1, 3\]\) or "
     r"the first position \[1\]"),
    (_rotary(["x", "pos", "cos", "sin"], _caches(4, 1), rotary_embedding_dim=2),
     r"rotary_embedding_dim = 2 needs num_heads \(onnxruntime's kernel requires it\): give the "
     r"node its num_heads"),
    (_rotary(["x", "pos", "cos", "sin"], _caches(4, 2), num_heads=3),
     r"num_heads = 3 must be a positive divisor of the hidden size 8"),
    (_rotary(["x", "cos", "sin", "pos"], {"cos": randn(1, 3, 2), "sin": randn(1, 3, 2)},
             domain="", num_heads=2),
     r"caches of shape \[1, 3, 2\] are the tables of the tokens \[batch, sequence, rotary dim "
     r"/ 2\] \(\[1, 3, ·\]\), read without position_ids"),
]


# --------------------------------------------------------------------------------------------
# com.microsoft.GroupQueryAttention
# --------------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(dims=sizes, groups=st.integers(1, 3), packed=st.booleans(), rotary=st.booleans(),
       interleaved=st.booleans(), presents=st.booleans(), scale=st.sampled_from([0.0, 0.5]),
       bias=st.booleans())
def test_group_query_attention_prefill(
    dims: dict[str, int], groups: int, packed: bool, rotary: bool, interleaved: bool,
    presents: bool, scale: float, bias: bool,
) -> None:
    """Causal attention of N = groups · Nkv query heads over Nkv key / value heads, packed or
    not, rotated or not, with an attention bias or not; the present keys and values are the
    (rotated) heads. (onnxruntime's
    kernel takes head sizes that are multiples of 8 only, of 16 when rotating.)"""
    b, s, kv, h = dims["batch"], dims["seq"], dims["heads"], 16 if rotary else 8  # see below
    n = groups * kv
    weights: dict[str, np.ndarray] = {
        "seqlens": np.full(b, s - 1, np.int32), "total": np.array(s, np.int32)
    }
    inputs: dict[str, Typed] = {}
    if packed:
        inputs["q"] = (F, (b, s, (n + 2 * kv) * h))
    else:
        inputs |= {"q": (F, (b, s, n * h)), "k": (F, (b, s, kv * h)), "v": (F, (b, s, kv * h))}
    names = ["q", "" if packed else "k", "" if packed else "v", "", "", "seqlens", "total"]
    if rotary:
        weights |= _caches(s, h // 2)
    names += ["cos" if rotary else "", "sin" if rotary else "", ""]
    if bias:
        inputs["ab"] = (F, (b, 1, s, s))
        names.append("ab")
    outputs: dict[str, Typed] = {"y": (F, (b, s, n * h))}
    if presents:
        outputs |= {"pk": (F, (b, kv, s, h)), "pv": (F, (b, kv, s, h))}
    node = helper.make_node(
        "GroupQueryAttention", names, list(outputs), domain=MS, num_heads=n, kv_num_heads=kv,
        do_rotary=int(rotary), rotary_interleaved=int(interleaved), scale=scale,
    )
    assert_matches(model_of(node, inputs, outputs, weights))


def _gqa(inputs: list[str], outputs: list[str], seqlens: list[int] | None = None,
         q: tuple[int, ...] = (1, 3, 4), k: tuple[int, ...] = (1, 3, 2), **attrs: object
         ) -> onnx.ModelProto:
    node = helper.make_node("GroupQueryAttention", inputs, outputs, name="gqa", domain=MS,
                            **{"num_heads": 2, "kv_num_heads": 1, **attrs})
    runtime = {"q": (F, q), "k": (F, k), "v": (F, k),
               "pk": (F, (1, 1, 2, 2)), "lens": (I32, (1,))}
    weights = {"seqlens": np.array(seqlens or [2], np.int32), "total": np.array(3, np.int32),
               "sink": randn(2)}
    return model_of(node, runtime, {o: (F, (1, 3, 4)) for o in outputs}, weights)


_GROUP_QUERY_ATTENTION_REFUSALS = [
    (_gqa(["q", "k", "v", "pk", "pk", "seqlens", "total"], ["y"]),
     r"node 'gqa' \(GroupQueryAttention\): it gives the input\(s\) past_key \('pk'\), "
     r"past_value \('pk'\); t10 compiles attention without a KV cache"),
    (_gqa(["q", "k", "v", "", "", "seqlens", "total"], ["y"], seqlens=[1]),
     r"seqlens_k \[1\] and total_sequence_length \[3\] must be \[2\] and \[3\]: t10 computes "
     r"the prefill of 3 tokens per sequence without padding"),
    (_gqa(["q", "k", "v", "", "", "lens", "total"], ["y"]),
     r"seqlens_k 'lens' must be a compile-time constant"),
    (_gqa(["q", "k", "v", "", "", "seqlens", "total"], ["y"], local_window_size=2),
     r"attribute local_window_size = 2 is not supported"),
    (_gqa(["q", "k", "v", "", "", "seqlens", "total"], ["y"], softcap=30.0),
     r"attribute softcap = 30.0 is not supported"),
    (_gqa(["q", "k", "v", "", "", "seqlens", "total"], ["y"], kv_num_heads=3),
     r"num_heads = 2 must be a positive multiple of kv_num_heads = 3"),
    (_gqa(["q", "k", "", "", "", "seqlens", "total"], ["y"]),
     r"it gives one of key and value: give both, or neither"),
    (_gqa(["q", "k", "v", "", "", "seqlens", "total"], ["y"], do_rotary=1),
     r"do_rotary = 1 needs the inputs cos_cache and sin_cache"),
    (_gqa(["q", "k", "v"], ["y"]),
     r"its required inputs seqlens_k and total_sequence_length are missing"),
    (_gqa(["q", "", "", "", "", "seqlens", "total"], ["y"], q=(1, 3, 6)),
     r"the query's hidden size 6 is not 4 heads \(num_heads \+ 2 · kv_num_heads\)"),
    (_gqa(["q", "k", "v", "", "", "seqlens", "total"], ["y"], k=(1, 3, 4)),
     r"the key heads \[1, 1, 3, 4\] must have the query's head size 2"),
    (_gqa(["q", "k", "v", "", "", "seqlens", "total"], ["y"], k=(1, 2, 2)),
     r"key and value heads \[1, 1, 2, 2\] and \[1, 1, 2, 2\] must hold the query's 3 "
     r"positions \(no past\)"),
    (_gqa(["q", "k", "v", "", "", "seqlens", "total", "", "", "", "", "sink"], ["y"]),
     r"it gives the input\(s\) head_sink \('sink'\); t10 computes GroupQueryAttention without "
     r"head sinks"),
]


# --------------------------------------------------------------------------------------------
# ONNX's Attention (opset 23)
# --------------------------------------------------------------------------------------------


@settings(max_examples=12, deadline=None)
@given(dims=sizes, keys=st.integers(1, 4), groups=st.integers(1, 2), three_d=st.booleans(),
       mask=st.sampled_from(["none", "bool", "float"]), causal=st.booleans(),
       scale=st.sampled_from([None, 0.25]))
def test_onnx_attention(
    dims: dict[str, int], keys: int, groups: int, three_d: bool, mask: str, causal: bool,
    scale: float | None,
) -> None:
    """4-D or 3-D Q, K, V, grouped query heads, a bool or float mask, causal."""
    b, s, kv, h = dims["batch"], dims["seq"], dims["heads"], dims["size"]
    n = groups * kv
    if three_d:
        shapes = {"q": (b, s, n * h), "k": (b, keys, kv * h), "v": (b, keys, kv * (h + 1))}
        y = (b, s, n * (h + 1))
    else:
        shapes = {"q": (b, n, s, h), "k": (b, kv, keys, h), "v": (b, kv, keys, h + 1)}
        y = (b, n, s, h + 1)
    inputs: dict[str, Typed] = {k: (F, v) for k, v in shapes.items()}
    feeds: dict[str, np.ndarray] = {}
    if mask == "bool":  # every query keeps key 0: no row is all -inf
        inputs["m"] = (BOOL, (s, keys))
        kept = np.random.default_rng(6).integers(0, 2, (s, keys)).astype(bool)
        kept[:, 0] = True
        feeds["m"] = kept
    elif mask == "float":
        inputs["m"] = (F, (b, 1, s, keys))
    attrs: dict[str, object] = {"is_causal": int(causal)}
    if three_d:
        attrs |= {"q_num_heads": n, "kv_num_heads": kv}
    if scale is not None:
        attrs["scale"] = scale
    node = helper.make_node("Attention", ["q", "k", "v", *(["m"] if mask != "none" else [])],
                            ["y"], **attrs)
    assert_matches(model_of(node, inputs, {"y": (F, y)}, {}, opset=23), feeds or None)


def _onnx_attention(inputs: list[str], outputs: list[str], **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("Attention", inputs, outputs, name="att", **attrs)
    shapes = {n: (F, (1, 2, 3, 2)) for n in ("q", "k", "v", "pk", "pv")} | {
        "m": (F, (1, 2, 4, 3)), "v3": (F, (1, 2, 4, 2)), "q3": (F, (1, 3, 4)),
        "k3": (F, (1, 3, 6)), "v1": (F, (1, 1, 3, 2))}
    results = {"y": (F, (1, 2, 3, 2)), "ck": (F, (1, 2, 6, 2)), "cv": (F, (1, 2, 6, 2)),
               "y3": (F, None)}
    return model_of(node, shapes, results, {}, opset=23)


_ONNX_ATTENTION_REFUSALS = [
    (_onnx_attention(["q", "k", "v", "", "pk", "pv"], ["y", "ck", "cv"]),
     r"node 'att' \(Attention\): it requests its output\(s\) present_key \('ck'\), "
     r"present_value \('cv'\), which t10 does not compute"),
    (_onnx_attention(["q", "k", "v", "", "pk", "pv"], ["y"]),
     r"it gives the input\(s\) past_key \('pk'\), past_value \('pv'\); t10 compiles attention "
     r"without a KV cache"),
    (_onnx_attention(["q", "k", "v"], ["y"], softcap=5.0),
     r"attribute softcap = 5.0 is not supported"),
    (_onnx_attention(["q", "k", "v3"], ["y"]),
     r"Q heads \[1, 2, 3, 2\], K heads \[1, 2, 3, 2\] and V heads \[1, 2, 4, 2\]: Q and K must "
     r"share batch and head size, K and V batch, heads and length"),
    (_onnx_attention(["q", "k", "v1"], ["y"]),
     r"V 'v1' of shape \[1, 1, 3, 2\] does not have the 2 heads its attribute gives"),
    (_onnx_attention(["q3", "k3", "k3"], ["y3"], q_num_heads=3, kv_num_heads=3),
     r"Q 'q3' of shape \[1, 3, 4\]: its hidden size is not a multiple of its 3 heads"),
    (_onnx_attention(["q3", "k3", "v3"], ["y"], q_num_heads=2, kv_num_heads=3),
     r"the query's 2 heads must be a positive multiple of the keys' 3"),
    (_onnx_attention(["q", "k", "v", "m"], ["y"]),
     r"attn_mask 'm' of shape \[1, 2, 4, 3\] does not broadcast to the scores' shape \[batch, "
     r"heads, queries, keys\] \[1, 2, 3, 3\]"),
]


# --------------------------------------------------------------------------------------------
# com.microsoft.EmbedLayerNormalization
# --------------------------------------------------------------------------------------------


@settings(max_examples=10, deadline=None)
@given(batch=st.integers(1, 2), seq=st.integers(1, 5), hidden=st.integers(1, 4),
       segments=st.booleans(), mask=st.booleans(), positions=st.booleans(),
       embedding_sum=st.booleans())
def test_embed_layer_normalization(
    batch: int, seq: int, hidden: int, segments: bool, mask: bool, positions: bool,
    embedding_sum: bool,
) -> None:
    """Word (+ segment) + position embeddings of runtime ids, LayerNorm · gamma + beta;
    mask_index counts the mask's 1s; embedding_sum is the sum before the norm."""
    weights = {"word": randn(7, hidden, seed=1), "position": randn(6, hidden, seed=2),
               "segment": randn(2, hidden, seed=3), "gamma": 1 + 0.1 * randn(hidden, seed=4),
               "beta": randn(hidden, seed=5)}
    if not segments:
        del weights["segment"]
    rng = np.random.default_rng(7)
    feeds = {"ids": rng.integers(0, 7, (batch, seq)).astype(np.int32)}
    if segments:
        feeds["seg"] = rng.integers(0, 2, (batch, seq)).astype(np.int32)
    if mask:
        feeds["mask"] = rng.integers(0, 2, (batch, seq)).astype(np.int32)
    if positions:
        feeds["pos"] = rng.integers(0, 6, (batch, seq)).astype(np.int32)
    names = ["ids", "seg" if segments else "", "word", "position",
             "segment" if segments else "", "gamma", "beta", "mask" if mask else "",
             "pos" if positions else ""]
    outputs: dict[str, Typed] = {"y": (F, (batch, seq, hidden)), "mask_index": (I32, (batch,))}
    if embedding_sum:
        outputs["sum"] = (F, (batch, seq, hidden))
    node = helper.make_node("EmbedLayerNormalization", names, list(outputs), domain=MS,
                            epsilon=1e-5)
    inputs = {n: (I32, a.shape) for n, a in feeds.items()}
    assert_matches(model_of(node, inputs, outputs, weights), feeds)


def _embed(inputs: list[str], outputs: list[str], **attrs: object) -> onnx.ModelProto:
    node = helper.make_node("EmbedLayerNormalization", inputs, outputs, name="embed",
                            domain=MS, **attrs)
    weights = {"word": randn(5, 4), "position": randn(3, 4), "wide": randn(6, 5),
               "long": randn(6, 4), "narrow": randn(2, 3), "gamma": randn(4),
               "beta": randn(4), "segment": randn(2, 4)}
    runtime = {"ids": (I32, (1, 4)), "seg": (I32, (1, 4)), "mask": (I32, (1, 3))}
    out = {"y": (F, (1, 4, 4)), "mi": (I32, (1,))}
    return model_of(node, runtime, out, weights)


_EMBED_LAYER_NORMALIZATION_REFUSALS = [
    (_embed(["ids", "", "word", "position", "", "gamma", "beta"], ["y"]),
     r"node 'embed' \(EmbedLayerNormalization\): positions 0 to 3 lie outside the 3 rows of "
     r"position_embedding"),
    (_embed(["ids", "seg", "word", "position", "", "gamma", "beta"], ["y"]),
     r"segment_ids and segment_embedding go together: give both or neither"),
    (_embed(["ids", "", "word", "", "", "gamma", "beta"], ["y"]),
     r"its required input\(s\) position_embedding are missing"),
    (_embed(["ids", "", "word", "position", "", "gamma", "beta"], ["y"], mask_index_type=0),
     r"attribute mask_index_type = 0 is not supported"),
    (_embed(["ids", "seg", "word", "long", "narrow", "gamma", "beta"], ["y"]),
     r"the embeddings \[\[1, 4, 4\], \[1, 4, 4\], \[1, 4, 3\]\] must share the hidden size 4 "
     r"of the word embedding"),
    (_embed(["ids", "", "word", "wide", "", "gamma", "beta"], ["y"]),
     r"position_embedding of shape \[6, 5\] must be \[positions, 4\]"),
    (_embed(["ids", "", "word", "long", "", "gamma", "beta", "mask"], ["y", "mi"]),
     r"mask 'mask' of shape \[1, 3\] must be \[1, 4\]"),
]


@pytest.mark.parametrize(("model", "message"), [
    *_PACKED_ATTENTION_REFUSALS,
    *_MULTI_HEAD_ATTENTION_REFUSALS,
    *_ROTARY_EMBEDDING_REFUSALS,
    *_GROUP_QUERY_ATTENTION_REFUSALS,
    *_ONNX_ATTENTION_REFUSALS,
    *_EMBED_LAYER_NORMALIZATION_REFUSALS,
])
def test_refusals(model: onnx.ModelProto, message: str) -> None:
    """Each refusal, by its message."""
    refused(model, message)
