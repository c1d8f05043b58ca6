"""The built-in model zoo (``t10.examples.zoo``): the transformers and resnet50.

Every model is checked by the ONNX checker and run by onnxruntime at its published dimensions
with a short sequence (seq 8; ViT 5 tokens = a 32×32 image), except that llama2-7b — whose one
layer holds 810 MB of weights — runs with reduced hidden/intermediate sizes (same architecture,
same graph node for node) and bert-large with a 1000-row token table; at full size and default
sizes all six are checked without weight data (shape inference only). The numerics are
compared with an independent numpy implementation of each architecture at small sizes.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

from t10.driver import CompileOptions
from t10.errors import T10Error
from t10.examples import zoo
from t10.examples.zoo import ZOO, ZooConfig, ZooModel
from t10.reference import reference_session

NAMES = ["bert-base", "bert-large", "vit-base", "vit-large", "llama2-7b", "opt-1.3b"]

# The operators the transformer models may use: the set the transformer exports of
# tests/unit/data/EXPORTS.md were checked against, so a zoo model reads like those exports.
ALLOWED_OPS = {
    "MatMul", "Gemm", "Add", "Sub", "Mul", "Div", "Pow", "Relu", "Gelu", "Erf", "Tanh",
    "Sigmoid", "Exp", "Sqrt", "Reciprocal", "Neg", "Softmax", "LayerNormalization",
    "ReduceMean", "ReduceSum", "ReduceMax", "Transpose", "Reshape", "Flatten", "Squeeze",
    "Unsqueeze", "Split", "Slice", "Concat", "Gather", "Constant", "Identity", "Cast", "Where",
    "Expand",
}

PUBLISHED = {  # name: (layers, hidden, heads, intermediate, vocab)
    "bert-base": (12, 768, 12, 3072, 30522),
    "bert-large": (24, 1024, 16, 4096, 30522),
    "vit-base": (12, 768, 12, 3072, 0),
    "vit-large": (24, 1024, 16, 4096, 0),
    "llama2-7b": (32, 4096, 32, 11008, 32000),
    "opt-1.3b": (24, 2048, 32, 8192, 50272),
}

BATCH = 2


def _seq(name: str) -> int:
    return 5 if name.startswith("vit") else 8


def _test_config(name: str) -> ZooConfig | None:
    """Published dimensions, except llama2-7b shrunk to hidden 256 / intermediate 688 and
    bert-large's token table to 1000 rows (bert-base has the full 30522; speed)."""
    if name == "llama2-7b":
        return replace(ZOO[name].config, hidden=256, heads=4, intermediate=688)
    if name == "bert-large":
        return replace(ZOO[name].config, vocab=1000)
    return None


def _tiny_config(name: str) -> ZooConfig:
    """The architecture of `name` at toy sizes (fast enough to build many times)."""
    cfg = ZOO[name].config
    return replace(cfg, hidden=32, heads=4, intermediate=48, vocab=min(cfg.vocab, 50),
                   labels=min(cfg.labels, 10))


@pytest.fixture(scope="module")
def built() -> dict[str, onnx.ModelProto]:
    """Each model at 1 layer, batch 2, a short sequence (built once)."""
    return {n: ZOO[n].build(BATCH, _seq(n), config=_test_config(n)) for n in NAMES}


def _dims(vi: onnx.ValueInfoProto) -> list[int | str]:
    return [d.dim_value if d.HasField("dim_value") else d.dim_param or "?"
            for d in vi.type.tensor_type.shape.dim]


def _feeds(model: onnx.ModelProto, seed: int = 0, vocab: int = 2) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for vi in model.graph.input:
        shape = [int(d) for d in _dims(vi)]
        if vi.name == "attention_mask":
            mask = np.ones(shape, dtype=np.int64)
            mask[-1, shape[1] // 2:] = 0  # the last sequence is padded
            feeds[vi.name] = mask
        elif vi.type.tensor_type.elem_type == TensorProto.INT64:
            top = 2 if vi.name == "token_type_ids" else vocab
            feeds[vi.name] = rng.integers(0, top, size=shape, dtype=np.int64)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def _run(model: onnx.ModelProto | str, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    sess = reference_session(model)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds), strict=True))


def _layer_nodes(model: onnx.ModelProto, i: int) -> list[onnx.NodeProto]:
    return [n for n in model.graph.node if n.name.startswith(f"layer{i}/")]


# ---------------------------------------------------------------------------------- registry


def test_registry_has_the_published_dimensions() -> None:
    assert list(ZOO) == [*NAMES, "resnet50", "nerf"]
    for name, (layers, hidden, heads, inter, vocab) in PUBLISHED.items():
        cfg = ZOO[name].config
        assert (cfg.layers, cfg.hidden, cfg.heads, cfg.intermediate, cfg.vocab) == (
            layers, hidden, heads, inter, vocab), name
        assert ZOO[name].name == name and ZOO[name].description
    assert ZOO["llama2-7b"].config.head_dim == 128
    assert ZOO["vit-base"].config.patch == 16 and ZOO["vit-base"].default_seq == 197
    assert ZOO["bert-base"].config.max_positions == 512
    assert ZOO["opt-1.3b"].config.max_positions == 2048


def test_default_inputs_and_outputs_at_full_size() -> None:
    """Default sizes (batch 1, seq 128, ViT 224×224 = 197 tokens) at the published dimensions,
    by shape inference on the graph without weight data (cheap even for llama2-7b)."""
    want_inputs = {
        "bert-base": [("input_ids", [1, 128]), ("token_type_ids", [1, 128]),
                      ("attention_mask", [1, 128])],
        "vit-large": [("pixel_values", [1, 3, 224, 224])],
        "llama2-7b": [("hidden_states", [1, 128, 4096])],
        "opt-1.3b": [("hidden_states", [1, 128, 2048])],
    }
    want_outputs = {
        "bert-large": [("last_hidden_state", [1, 128, 1024]), ("pooler_output", [1, 1024])],
        "vit-base": [("last_hidden_state", [1, 197, 768]), ("logits", [1, 1000])],
        "llama2-7b": [("last_hidden_state", [1, 128, 4096])],
        "opt-1.3b": [("last_hidden_state", [1, 128, 2048])],
    }
    for name in NAMES:
        model, nbytes = ZOO[name].build_shapes_only()
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        ins = [(vi.name, _dims(vi)) for vi in inferred.graph.input]
        outs = [(vi.name, _dims(vi)) for vi in inferred.graph.output]
        assert ins == [(n, list(s)) for n, _, s in ZOO[name].inputs()]
        if name in want_inputs:
            assert ins == want_inputs[name]
        if name in want_outputs:
            assert outs == want_outputs[name]
        for vi in inferred.graph.value_info:
            assert all(isinstance(d, int) and d > 0 for d in _dims(vi)), (name, vi.name)
        assert nbytes > 0
    _, llama_bytes = ZOO["llama2-7b"].build_shapes_only()
    assert 800e6 < llama_bytes < 820e6  # 202M parameters of one layer (+ masks, rope tables)


def test_llama2_7b_full_size_matches_the_tested_architecture() -> None:
    """The reduced llama2-7b of the other tests has the full-size graph, node for node."""
    full, _ = ZOO["llama2-7b"].build_shapes_only(BATCH, 8)
    small = ZOO["llama2-7b"].build(BATCH, 8, config=_test_config("llama2-7b"))
    assert [(n.name, n.op_type) for n in full.graph.node] == [
        (n.name, n.op_type) for n in small.graph.node]
    dims = {t.name: list(t.dims) for t in full.graph.initializer}
    assert dims["layer0.mlp.gate_proj.weight"] == [4096, 11008]
    assert dims["layer0.mlp.down_proj.weight"] == [11008, 4096]
    assert dims["layer0.attn.q_proj.weight"] == [4096, 4096]
    assert dims["rope.cos"] == [1, 1, 8, 128]
    assert numpy_helper.to_array(
        next(t for t in full.graph.initializer if t.name == "shape/heads")).tolist() == [
        BATCH, 8, 32, 128]


# ----------------------------------------------------------------------- validity, onnxruntime


@pytest.mark.parametrize("name", NAMES)
def test_valid_static_and_standard_ops(built: dict[str, onnx.ModelProto], name: str) -> None:
    model = built[name]
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == zoo.IR_VERSION
    assert [(o.domain, o.version) for o in model.opset_import] == [("", zoo.OPSET)]
    assert 17 <= zoo.OPSET <= 20
    ops = {n.op_type for n in model.graph.node}
    assert ops <= ALLOWED_OPS, ops - ALLOWED_OPS
    assert all(n.domain == "" for n in model.graph.node)
    names = [n.name for n in model.graph.node]
    assert all(names) and len(set(names)) == len(names)
    assert "layer0/attn/q_proj/MatMul" in names
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    for vi in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]:
        assert all(isinstance(d, int) and d > 0 for d in _dims(vi)), vi.name
    for t in model.graph.initializer:
        assert t.data_type in (TensorProto.FLOAT, TensorProto.INT64), t.name


@pytest.mark.parametrize("name", NAMES)
def test_onnxruntime_runs_with_finite_outputs(
    built: dict[str, onnx.ModelProto], name: str
) -> None:
    model = built[name]
    cfg = _test_config(name) or ZOO[name].config
    outs = _run(model, _feeds(model))
    hidden = outs["last_hidden_state"]
    assert hidden.shape == (BATCH, _seq(name), cfg.hidden)
    for value in outs.values():
        assert value.dtype == np.float32 and np.isfinite(value).all()
        assert 0 < float(np.abs(value).max()) < 100
    if name.startswith("vit"):
        assert outs["logits"].shape == (BATCH, 1000)
    if name.startswith("bert"):
        assert outs["pooler_output"].shape == (BATCH, cfg.hidden)


def test_weights_are_seeded_normal_002(built: dict[str, onnx.ModelProto]) -> None:
    w = {t.name: numpy_helper.to_array(t) for t in built["bert-base"].graph.initializer}
    big = w["layer0.mlp.fc1.weight"]
    assert big.shape == (768, 3072) and big.dtype == np.float32
    assert abs(float(big.mean())) < 1e-3 and abs(float(big.std()) - 0.02) < 1e-3
    assert abs(float(w["layer0.attn.q_proj.bias"].std()) - 0.02) < 5e-3
    scale = w["layer0.attn_norm.weight"]
    assert abs(float(scale.mean()) - 1) < 5e-3 and abs(float(scale.std()) - 0.02) < 5e-3
    assert w["embeddings.word.weight"].shape == (30522, 768)


# ------------------------------------------------------------------- structure across layers


@pytest.mark.parametrize("name", NAMES)
def test_two_layers_have_twice_the_layer_nodes(name: str) -> None:
    cfg = _tiny_config(name)
    one = ZOO[name].build(1, _seq(name), layers=1, config=cfg)
    two = ZOO[name].build(1, _seq(name), layers=2, config=cfg)
    layer0 = _layer_nodes(one, 0)
    assert layer0 and not _layer_nodes(one, 1)
    assert len(_layer_nodes(two, 0)) == len(_layer_nodes(two, 1)) == len(layer0)
    assert len(two.graph.node) == len(one.graph.node) + len(layer0)
    assert [n.op_type for n in _layer_nodes(two, 1)] == [n.op_type for n in layer0]
    # layer 0 of the 2-layer model is the 1-layer model's layer 0
    w1 = {t.name: t for t in one.graph.initializer}
    for t in two.graph.initializer:
        if t.name.startswith("layer0."):
            assert t == w1[t.name]
    assert len([t for t in two.graph.initializer if t.name.startswith("layer1.")]) == len(
        [t for t in one.graph.initializer if t.name.startswith("layer0.")])
    assert np.isfinite(_run(two, _feeds(two, vocab=cfg.vocab or 2))["last_hidden_state"]).all()


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_bytes(name: str) -> None:
    cfg = _tiny_config(name)
    a = ZOO[name].build(1, _seq(name), layers=2, seed=5, config=cfg).SerializeToString()
    assert a == ZOO[name].build(1, _seq(name), layers=2, seed=5, config=cfg).SerializeToString()
    assert a != ZOO[name].build(1, _seq(name), layers=2, seed=6, config=cfg).SerializeToString()


def test_layer_node_names() -> None:
    names = {n.name for n in ZOO["llama2-7b"].build(1, 8, config=_tiny_config("llama2-7b"))
             .graph.node}
    for expected in [
        "layer0/attn_norm/Pow", "layer0/attn_norm/ReduceMean", "layer0/attn_norm/Sqrt",
        "layer0/attn_norm/Div", "layer0/attn/q_proj/MatMul", "layer0/attn/q_heads/Reshape",
        "layer0/attn/q_heads/Transpose", "layer0/attn/q_rotary/Slice",
        "layer0/attn/q_rotary/Neg", "layer0/attn/q_rotary/Concat",
        "layer0/attn/k_rotary/Add", "layer0/attn/scores/MatMul", "layer0/attn/scores/Add",
        "layer0/attn/Softmax", "layer0/attn/context/MatMul", "layer0/attn/o_proj/MatMul",
        "layer0/mlp/gate_proj/MatMul", "layer0/mlp/act/Sigmoid", "layer0/mlp/up_proj/MatMul",
        "layer0/mlp/down_proj/MatMul", "layer0/mlp_residual/Add", "final_norm/Mul",
    ]:
        assert expected in names, expected


# ------------------------------------------------------------ numerics vs an independent numpy


_erf = np.vectorize(math.erf)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _reference(model: ZooModel, cfg: ZooConfig, w: dict[str, np.ndarray],
               feeds: dict[str, np.ndarray], layers: int) -> dict[str, np.ndarray]:
    """The architecture written out in numpy (float64), from the papers / HF modelling code."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    nh, d, eps = cfg.heads, cfg.head_dim, cfg.eps

    def lin(x: np.ndarray, p: str) -> np.ndarray:
        y = x @ w[f"{p}.weight"]
        return y + w[f"{p}.bias"] if f"{p}.bias" in w else y

    def norm(x: np.ndarray, p: str) -> np.ndarray:
        if cfg.family == "llama":
            return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w[f"{p}.weight"]
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[f"{p}.weight"] + w[f"{p}.bias"]

    def rotate(x: np.ndarray) -> np.ndarray:  # pairs (i, i + d/2) rotated by pos·θ^(-2i/d)
        s = x.shape[2]
        angle = np.arange(s)[:, None] * cfg.rope_theta ** (-np.arange(d // 2) * 2 / d)
        c, sn = np.cos(angle), np.sin(angle)
        a, b = x[..., : d // 2], x[..., d // 2:]
        return np.concatenate([a * c - b * sn, b * c + a * sn], axis=-1)

    def attention(x: np.ndarray, p: str, allowed: np.ndarray) -> np.ndarray:
        bsz, s, _ = x.shape

        def heads(y: np.ndarray) -> np.ndarray:
            return y.reshape(bsz, s, nh, d).transpose(0, 2, 1, 3)

        q, k, v = (heads(lin(x, f"{p}.{n}_proj")) for n in "qkv")
        if cfg.family == "llama":
            q, k = rotate(q), rotate(k)
        scores = np.where(allowed, q @ k.transpose(0, 1, 3, 2) / math.sqrt(d), -np.inf)
        ctx = (_softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(bsz, s, cfg.hidden)
        return lin(ctx, f"{p}.o_proj")

    def mlp(x: np.ndarray, p: str) -> np.ndarray:
        if cfg.family == "llama":
            g = lin(x, f"{p}.gate_proj")
            return lin(g / (1 + np.exp(-g)) * lin(x, f"{p}.up_proj"), f"{p}.down_proj")
        h = lin(x, f"{p}.fc1")
        h = np.maximum(h, 0) if cfg.family == "opt" else 0.5 * h * (1 + _erf(h / math.sqrt(2)))
        return lin(h, f"{p}.fc2")

    out: dict[str, np.ndarray] = {}
    if cfg.family == "bert":
        ids, s = feeds["input_ids"], feeds["input_ids"].shape[1]
        x = (w["embeddings.word.weight"][ids] + w["embeddings.token_type.weight"][
            feeds["token_type_ids"]] + w["embeddings.position.weight"][:s])
        x = norm(x, "embeddings.norm")
        allowed = feeds["attention_mask"][:, None, None, :].astype(bool)
        for i in range(layers):
            x = norm(x + attention(x, f"layer{i}.attn", allowed), f"layer{i}.attn_norm")
            x = norm(x + mlp(x, f"layer{i}.mlp"), f"layer{i}.mlp_norm")
        out["last_hidden_state"] = x
        out["pooler_output"] = np.tanh(x[:, 0] @ w["pooler.dense.weight"].T
                                       + w["pooler.dense.bias"])
        return out
    if cfg.family == "vit":
        px = feeds["pixel_values"].astype(np.float64)
        p, n = cfg.patch, px.shape[2] // cfg.patch
        patches = np.stack([px[:, :, i * p:(i + 1) * p, j * p:(j + 1) * p].reshape(len(px), -1)
                            for i in range(n) for j in range(n)], axis=1)
        x = lin(patches, "embeddings.patch_proj")
        cls = np.broadcast_to(w["embeddings.cls_token"], (len(px), 1, cfg.hidden))
        x = np.concatenate([cls, x], axis=1) + w["embeddings.position"]
        allowed = np.ones((1, 1, 1, x.shape[1]), dtype=bool)
    else:
        if "input_ids" in feeds:
            x = w["embed_tokens.weight"][feeds["input_ids"]]
        else:
            x = feeds["hidden_states"].astype(np.float64)
        s = x.shape[1]
        if cfg.family == "opt":
            x = x + w["embed_positions.weight"][cfg.position_offset:cfg.position_offset + s]
        allowed = np.tril(np.ones((s, s), dtype=bool))[None, None]
    for i in range(layers):
        x = x + attention(norm(x, f"layer{i}.attn_norm"), f"layer{i}.attn", allowed)
        x = x + mlp(norm(x, f"layer{i}.mlp_norm"), f"layer{i}.mlp")
    out["last_hidden_state"] = x = norm(x, "final_norm")
    if cfg.family == "vit":
        out["logits"] = x[:, 0] @ w["classifier.weight"].T + w["classifier.bias"]
    return out


@pytest.mark.parametrize("name", NAMES)
def test_numerics_match_an_independent_numpy_implementation(name: str) -> None:
    cfg = replace(_tiny_config(name), hidden=64, intermediate=96)
    model = ZOO[name].build(2, 17 if name.startswith("vit") else 12, layers=2, seed=3,
                            config=cfg)
    feeds = _feeds(model, seed=1, vocab=cfg.vocab or 2)
    w = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    want = _reference(ZOO[name], cfg, w, feeds, layers=2)
    got = _run(model, feeds)
    assert set(got) == set(want)
    for key, value in got.items():
        np.testing.assert_allclose(value, want[key], rtol=1e-4, atol=1e-4, err_msg=key)


def test_opt_token_ids_gather_the_token_table() -> None:
    m = ZOO["opt-1.3b"]
    assert m.takes_token_ids_option
    assert not ZOO["llama2-7b"].takes_token_ids_option
    cfg = _tiny_config("opt-1.3b")
    with_ids = m.build(2, 8, token_ids=True, config=cfg)
    assert [vi.name for vi in with_ids.graph.input] == ["input_ids"]
    assert with_ids.graph.node[0].name == "embed_tokens/Gather"
    ids = np.random.default_rng(0).integers(0, cfg.vocab, (2, 8), dtype=np.int64)
    table = {t.name: numpy_helper.to_array(t) for t in with_ids.graph.initializer}[
        "embed_tokens.weight"]
    plain = m.build(2, 8, config=cfg)
    np.testing.assert_allclose(
        _run(with_ids, {"input_ids": ids})["last_hidden_state"],
        _run(plain, {"hidden_states": table[ids]})["last_hidden_state"], rtol=1e-5, atol=1e-6)
    # the published table (50272 × 2048) plus one layer stays under 1 GB
    _, nbytes = m.build_shapes_only(token_ids=True)
    assert 600e6 < nbytes < 1e9


# ---------------------------------------------------------------------------- sizes, errors


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("bert-base", {"batch": 0}, "--batch must be a positive integer"),
        ("bert-base", {"seq": -1}, "--seq must be a positive integer"),
        ("bert-base", {"seq": 513}, "--seq must be at most 512"),
        ("opt-1.3b", {"seq": 2049}, "--seq must be at most 2048"),
        ("bert-large", {"layers": 25}, "--layers must be between 1 and 24"),
        ("vit-base", {"layers": 0}, "--layers must be between 1 and 12"),
        ("vit-base", {"seq": 12}, "is not a ViT token count"),
        ("vit-large", {"seq": 1}, "is not a ViT token count"),
        ("llama2-7b", {"token_ids": True}, "--token-ids applies only to opt-1.3b"),
        ("bert-base", {"token_ids": True}, "--token-ids applies only to opt-1.3b"),
        ("opt-1.3b", {"seed": -1}, "--seed must be a non-negative integer"),
    ],
)
def test_bad_sizes(name: str, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(T10Error, match=message):
        ZOO[name].build(config=_tiny_config(name), **kwargs)


def test_unknown_name_and_image_size() -> None:
    with pytest.raises(T10Error, match="unknown zoo model 'bert'.*bert-base, bert-large"):
        zoo.get("bert")
    assert ZOO["vit-base"].seq_for_image(224) == 197
    assert ZOO["vit-base"].seq_for_image(32) == 5
    with pytest.raises(T10Error, match="multiple of the patch size 16"):
        ZOO["vit-base"].seq_for_image(100)
    assert ZOO["resnet50"].seq_for_image(160) == 160
    with pytest.raises(T10Error, match="ViT and ResNet models only"):
        ZOO["bert-base"].seq_for_image(224)


def test_write_streams_big_weights_to_external_data(tmp_path: Path) -> None:
    cfg = _tiny_config("llama2-7b")
    path = tmp_path / "llama.onnx"
    written = zoo.write("llama2-7b", path, 1, 8, layers=2, config=cfg, external_threshold=0)
    assert written.data_path == tmp_path / "llama.onnx.data" and written.data_path.exists()
    assert written.file_bytes >= written.weight_bytes
    onnx.checker.check_model(str(path), full_check=True)
    inline = ZOO["llama2-7b"].build(1, 8, layers=2, config=cfg)
    feeds = _feeds(inline)
    want = _run(inline, feeds)["last_hidden_state"]
    np.testing.assert_array_equal(_run(str(path), feeds)["last_hidden_state"], want)
    loaded = onnx.load(str(path))  # loads the external data
    assert {t.name: numpy_helper.to_array(t).tobytes() for t in loaded.graph.initializer} == {
        t.name: numpy_helper.to_array(t).tobytes() for t in inline.graph.initializer}
    # under the threshold: one self-contained file
    small = zoo.write("llama2-7b", tmp_path / "inline.onnx", 1, 8, config=cfg)
    assert small.data_path is None and not (tmp_path / "inline.onnx.data").exists()


# ------------------------------------------------------------------------- t10's frontend


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("name", NAMES)
def test_compiles_simulates_and_matches_onnxruntime(
    name: str, precision: str, tmp_path: Path
) -> None:
    """Every zoo architecture (at toy sizes) runs end to end on test-16: imported, planned,
    lowered, simulated, and equal to onnxruntime within the precision's tolerance. The
    default inputs' attention masks mix 0 and 1, so fp16 runs meet the additive float32-min
    masks (which fp16 storage would turn into -inf, and 0 · -inf into NaN)."""
    from t10.driver import CHECK_TOLERANCES, run_model

    path = tmp_path / f"{name}.onnx"
    onnx.save(ZOO[name].build(1, _seq(name), config=_tiny_config(name)), path)
    result = run_model(
        str(path),
        CompileOptions(chip="test-16", precision=precision),
        check=CHECK_TOLERANCES[precision],
    )
    assert result.check is not None and result.check.passed, result.check
    assert all(np.isfinite(v).all() for v in result.outputs.values())
    assert result.report.total_cycles > 0


# ------------------------------------------------------------------------------- resnet50


def test_resnet50_has_the_torchvision_topology() -> None:
    """53 Conv + BatchNormalization pairs (the stem, 3 per bottleneck block, 4 downsamples),
    16 residual Adds, ImageNet logits; valid, statically shaped, finite in onnxruntime."""
    model, _ = ZOO["resnet50"].build_shapes_only(2, 64, layers=16)
    counts = Counter(n.op_type for n in model.graph.node)
    assert counts["Conv"] == counts["BatchNormalization"] == 53
    assert counts["Add"] == 16 and counts["MaxPool"] == counts["GlobalAveragePool"] == 1
    strides = {
        n.name: next(list(a.ints) for a in n.attribute if a.name == "strides")
        for n in model.graph.node
        if n.op_type == "Conv"
    }
    assert strides["layer2/0/conv2/Conv"] == [2, 2]  # v1.5: the stride in the 3x3 conv
    assert strides["layer2/0/conv1/Conv"] == [1, 1]
    small = ZOO["resnet50"].build(2, 32, layers=2)
    onnx.checker.check_model(small, full_check=True)
    out = _run(small, _feeds(small))["logits"]
    assert out.shape == (2, 1000) and np.isfinite(out).all()
    with pytest.raises(T10Error, match=r"--seq \(the image side\) must be at least 32"):
        ZOO["resnet50"].build(1, 16)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_resnet50_compiles_simulates_and_matches_onnxruntime(precision: str) -> None:
    """The stem, the first stage (3 blocks, the first with a downsample) and the first block
    of the second (stride 2) on a 32x32 image on test-16 (10 classes), against onnxruntime."""
    from t10.driver import CHECK_TOLERANCES, run_model

    model = ZOO["resnet50"].build(1, 32, layers=4,
                                  config=replace(ZOO["resnet50"].config, labels=10))
    result = run_model(
        model,
        CompileOptions(chip="test-16", precision=precision),
        check=CHECK_TOLERANCES[precision],
    )
    assert result.check is not None and result.check.passed, result.check


# ----------------------------------------------------------------------------------- nerf


def test_nerf_has_the_encoding_and_the_skip_inside() -> None:
    """Points and directions are encoded in the model (sin and cos of 2^k π x: 10 and 4
    frequencies, 63 and 27 features), 8 ReLU layers of 256 with the encoded point joined
    again before the 5th, a density and a colour head."""
    model = ZOO["nerf"].build(2, 4, layers=8)
    onnx.checker.check_model(model, full_check=True)
    counts = Counter(n.op_type for n in model.graph.node)
    assert counts["Sin"] == counts["Cos"] == 2 and counts["Relu"] == 9
    weights = {t.name: tuple(t.dims) for t in model.graph.initializer}
    assert weights["trunk.0.weight"] == (63, 256)
    assert weights["trunk.4.weight"] == (256 + 63, 256)
    assert weights["rgb.0.weight"] == (256 + 27, 128)
    assert weights["sigma.weight"] == (256, 1)
    scales = numpy_helper.to_array(
        next(t for t in model.graph.initializer if t.name == "encode_points.scales"))
    np.testing.assert_allclose(scales.ravel(), np.pi * 2.0 ** np.arange(10), rtol=1e-7)
    outs = _run(model, _feeds(model))
    assert outs["rgb"].shape == (2, 4, 3) and outs["sigma"].shape == (2, 4, 1)
    assert ((outs["rgb"] > 0) & (outs["rgb"] < 1)).all()
    assert not any(n.name.endswith("Concat") and n.name.startswith("trunk/")
                   for n in ZOO["nerf"].build(2, 4, layers=4).graph.node)


@pytest.mark.parametrize("chip", ["test-16", "ipu-mk2"])
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_nerf_compiles_simulates_and_matches_onnxruntime(chip: str, precision: str) -> None:
    from t10.driver import CHECK_TOLERANCES, run_model

    model = ZOO["nerf"].build(4, 16, layers=8)
    result = run_model(
        model,
        CompileOptions(chip=chip, precision=precision),
        check=CHECK_TOLERANCES[precision],
    )
    assert result.check is not None and result.check.passed, result.check


# ------------------------------------------------------------------------------ t10 zoo CLI


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("t10: error: ")
    return lines[0]


def test_cli_list(capsys: pytest.CaptureFixture[str]) -> None:
    from t10.tools.cli import main

    assert main(["zoo", "--list"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:5] == ["name", "layers", "hidden", "heads",
                                               "intermediate"]
    rows = {line.split()[0]: line for line in out.splitlines()[1:7]}
    assert list(rows) == NAMES
    for name, (layers, hidden, heads, inter, _) in PUBLISHED.items():
        assert rows[name].split()[1:5] == [f"1-{layers}", str(hidden), str(heads), str(inter)]
    assert "input_ids, token_type_ids, attention_mask: int64 [1, 128]" in rows["bert-base"]
    assert "pixel_values: float32 [1, 3, 224, 224] (197 tokens" in rows["vit-large"]
    assert "hidden_states: float32 [1, 128, 4096] (hidden states)" in rows["llama2-7b"]
    assert "--token-ids: input_ids: int64 [1, 128]" in rows["opt-1.3b"]
    for m in ZOO.values():
        assert m.description in out


def test_cli_writes_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from t10.tools.cli import main

    path = tmp_path / "vit.onnx"
    assert main(["zoo", "vit-base", "--image-size", "32", "--batch", "2", "--seed", "4",
                 "-o", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wrote vit-base (1 layer; inputs pixel_values float32 [2, 3, 32, 32])")
    assert path.read_bytes() == ZOO["vit-base"].build(2, 5, seed=4).SerializeToString()
    assert main(["zoo", "vit-base", "--seq", "5", "--batch", "2", "--seed", "4", "--layers",
                 "2", "-o", str(path)]) == 0
    assert "(2 layers;" in capsys.readouterr().out
    assert onnx.load(str(path)).SerializeToString() == ZOO["vit-base"].build(
        2, 5, 2, seed=4).SerializeToString()


@pytest.mark.parametrize(
    "argv, code, message",
    [
        (["zoo", "gpt-4", "-o", "x.onnx"], 1,
         "unknown zoo model 'gpt-4': choose from bert-base, bert-large, vit-base, vit-large, "
         "llama2-7b, opt-1.3b"),
        (["zoo"], 2, "missing zoo model NAME: choose from bert-base, bert-large"),
        (["zoo", "bert-base"], 2, "missing -o FILE.onnx"),
        (["zoo", "bert-base", "--seq", "1024", "-o", "x.onnx"], 1,
         "bert-base: --seq must be at most 512"),
        (["zoo", "bert-base", "--batch", "0", "-o", "x.onnx"], 1,
         "bert-base: --batch must be a positive integer, got 0"),
        (["zoo", "llama2-7b", "--layers", "33", "-o", "x.onnx"], 1,
         "llama2-7b: --layers must be between 1 and 32"),
        (["zoo", "bert-base", "--layers", "two", "-o", "x.onnx"], 2,
         "argument --layers: invalid int value"),
        (["zoo", "vit-base", "--seq", "100", "-o", "x.onnx"], 1, "is not a ViT token count"),
        (["zoo", "vit-base", "--seq", "5", "--image-size", "32", "-o", "x.onnx"], 1,
         "either --seq or --image-size"),
        (["zoo", "bert-base", "--image-size", "224", "-o", "x.onnx"], 1,
         "ViT and ResNet models only"),
        (["zoo", "llama2-7b", "--token-ids", "-o", "x.onnx"], 1,
         "--token-ids applies only to opt-1.3b"),
    ],
)
def test_cli_errors(argv: list[str], code: int, message: str, tmp_path: Path,
                    monkeypatch: pytest.MonkeyPatch,
                    capsys: pytest.CaptureFixture[str]) -> None:
    from t10.tools.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(argv) == code
    assert message in _error_line(capsys)
    assert not (tmp_path / "x.onnx").exists()


def test_cli_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from t10.tools.cli import main

    bad = tmp_path / "missing-dir" / "m.onnx"
    assert main(["zoo", "llama2-7b", "--seq", "4", "-o", str(bad)]) == 1  # fails before
    assert f"cannot write zoo model '{bad}'" in _error_line(capsys)   # building 810 MB
