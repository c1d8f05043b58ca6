"""The decoders of the zoo as LLMs are served: prefill and decode forms with a KV cache
(``t10 zoo llama2-7b --phase prefill|decode [--context N]``), as Hugging Face exports them.

The cache's meaning is proven in onnxruntime: a decode step after a prefill of tokens
0..C-1 gives the same last hidden state and the same caches as a prefill of tokens 0..C.
Then t10 compiles and simulates both forms and matches onnxruntime."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest

from t10.driver import CHECK_TOLERANCES, CompileOptions, run_model
from t10.errors import T10Error
from t10.examples.zoo import ZOO, ZooConfig
from t10.reference import reference_session

DECODERS = ["llama2-7b", "opt-1.3b"]
BATCH, CONTEXT, LAYERS = 2, 5, 2


def _tiny(name: str) -> ZooConfig:
    return replace(ZOO[name].config, hidden=64, heads=4, intermediate=96)


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    session = reference_session(model)
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


def _cache_feeds(presents: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A run's ``present.{i}.*`` outputs as the next run's ``past_key_values.{i}.*``."""
    return {f"past_key_values.{k.removeprefix('present.')}": v for k, v in presents.items()
            if k.startswith("present.")}


@pytest.mark.parametrize("name", DECODERS)
def test_a_decode_step_continues_the_prefill(name: str) -> None:
    cfg, model = _tiny(name), ZOO[name]
    tokens = np.random.default_rng(1).standard_normal(
        (BATCH, CONTEXT + 1, cfg.hidden)).astype(np.float32)
    whole = _run(model.build(BATCH, CONTEXT + 1, LAYERS, config=cfg, phase="prefill"),
                 {"hidden_states": tokens})
    plain = _run(model.build(BATCH, CONTEXT + 1, LAYERS, config=cfg),
                 {"hidden_states": tokens})
    assert list(plain) == ["last_hidden_state"]
    np.testing.assert_array_equal(whole["last_hidden_state"], plain["last_hidden_state"])
    first = _run(model.build(BATCH, CONTEXT, LAYERS, config=cfg, phase="prefill"),
                 {"hidden_states": tokens[:, :CONTEXT]})
    step = _run(model.build(BATCH, None, LAYERS, config=cfg, phase="decode", context=CONTEXT),
                {"hidden_states": tokens[:, CONTEXT:], **_cache_feeds(first)})
    cache = (BATCH, cfg.heads, CONTEXT + 1, cfg.head_dim)
    assert list(step) == list(whole) == [
        "last_hidden_state", *(f"present.{i}.{kind}" for i in range(LAYERS)
                               for kind in ("key", "value"))]
    np.testing.assert_allclose(step["last_hidden_state"],
                               whole["last_hidden_state"][:, CONTEXT:], rtol=1e-5, atol=1e-5)
    for key in list(step)[1:]:
        assert step[key].shape == whole[key].shape == cache
        np.testing.assert_allclose(step[key], whole[key], rtol=1e-5, atol=1e-6)


def test_full_size_decode_inputs_and_outputs() -> None:
    """Llama 2 7B decoding 8 sequences after 1024 cached tokens, all 32 layers (no weights
    made): one token's hidden state, each layer's cache in and grown by one out; no mask."""
    model, _ = ZOO["llama2-7b"].build_shapes_only(8, None, 32, phase="decode", context=1024)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)

    def dims(values: list[onnx.ValueInfoProto]) -> dict[str, list[int]]:
        return {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}

    ins, outs = dims(list(inferred.graph.input)), dims(list(inferred.graph.output))
    assert ins["hidden_states"] == [8, 1, 4096] and len(ins) == 1 + 64
    assert ins["past_key_values.31.value"] == [8, 32, 1024, 128]
    assert outs["last_hidden_state"] == [8, 1, 4096] and len(outs) == 1 + 64
    assert outs["present.0.key"] == [8, 32, 1025, 128]
    assert "causal_mask" not in {t.name for t in model.graph.initializer}
    assert model.doc_string.endswith("decode after 1024 cached tokens)")


@pytest.mark.parametrize("phase", ["prefill", "decode"])
@pytest.mark.parametrize("name", DECODERS)
def test_t10_runs_both_forms_as_onnxruntime_does(name: str, phase: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}-{phase}.onnx"
    seq, context = (None, CONTEXT) if phase == "decode" else (CONTEXT + 1, None)
    onnx.save(ZOO[name].build(BATCH, seq, LAYERS, config=_tiny(name), phase=phase,
                              context=context), path)
    result = run_model(str(path), CompileOptions(chip="test-16"),
                       check=CHECK_TOLERANCES["fp32"])
    assert result.check is not None and result.check.passed, result.check
    assert len(result.outputs) == 1 + 2 * LAYERS


@pytest.mark.parametrize(
    "name, kwargs, message",
    [
        ("bert-base", dict(phase="decode"), "bert-base: --phase applies only to the decoders "
         "(llama2-7b, opt-1.3b): the other models have no KV cache"),
        ("opt-1.3b", dict(phase="chat"), "opt-1.3b: unknown --phase 'chat': choose prefill or "
         "decode"),
        ("opt-1.3b", dict(context=3), "opt-1.3b: --context (the cached tokens) applies only "
         "with --phase decode; a prefill's tokens are --seq"),
        ("opt-1.3b", dict(phase="prefill", context=3), "opt-1.3b: --context (the cached "
         "tokens) applies only with --phase decode; a prefill's tokens are --seq"),
        ("llama2-7b", dict(phase="decode", seq=4), "llama2-7b: --phase decode takes one new "
         "token per sequence; give the cached tokens as --context, not --seq 4"),
        ("llama2-7b", dict(phase="decode", context=0), "llama2-7b: --context must be a "
         "positive integer, got 0"),
        ("opt-1.3b", dict(phase="decode", context=2048), "opt-1.3b: --context must be at "
         "most 2047 (the new token is at position --context, below its maximum position "
         "count 2048), got 2048"),
    ],
)
def test_bad_phases(name: str, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(T10Error) as e:
        ZOO[name].build_shapes_only(**kwargs)  # pyright: ignore[reportArgumentType]
    assert str(e.value) == message


def test_cli_writes_a_decode_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from t10.tools.cli import main

    path = tmp_path / "opt.onnx"
    assert main(["zoo", "opt-1.3b", "--phase", "decode", "--context", "16", "--batch", "3",
                 "--layers", "2", "-o", str(path)]) == 0
    assert capsys.readouterr().out.startswith(
        "wrote opt-1.3b (2 layers; inputs hidden_states float32 [3, 1, 2048], "
        "past_key_values.{0..1}.key/.value float32 [3, 32, 16, 64]) to ")
    assert path.read_bytes() == ZOO["opt-1.3b"].build(
        3, None, 2, phase="decode", context=16).SerializeToString()
    assert main(["zoo", "resnet50", "--phase", "prefill", "-o", str(path)]) == 1
    assert "resnet50: --phase applies only to the decoders" in capsys.readouterr().err
