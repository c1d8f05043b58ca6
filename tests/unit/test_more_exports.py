"""Issue 33's acceptance models against onnxruntime: the exports of scripts/export_more_models.py
(tests/unit/data/more/EXPORTS.md: GPT-2 and Llama decode steps with a KV cache, DeBERTa-v2 with
relative attention, an LSTM and a bidirectional GRU sequence model, Mixtral- and Qwen-MoE-style
layers, each through both torch exporters) on both chips; and models derived from the committed
exports with onnxruntime's own tools: hf_bert_ids_mask and the decode steps converted to FLOAT16
(`convert_float_to_float16`), and torchvision's resnet18 (tests/unit/data/cnn) and
hf_bert_ids_mask quantised by `quantize_static` (QDQ) and `quantize_dynamic`, on ipu-mk2.

resnet18 (TorchScript export) through `quantize_static` does not match onnxruntime within the
fp32 check (max abs error 1.8, max rel 1.0 on the logits): the first quantiser whose codes differ
from onnxruntime's has its input a hair (below 1e-5 of a code) from a rounding tie, its float input
differing from onnxruntime's by float32 reassociation only, so the code rounds the other way and
the one-quantum step propagates (`test_quantized_resnet18_mismatch_starts_at_a_rounding_tie`
pins that). The other quantised models match on these inputs, but the same can happen to any of
them on others. resnet18 through `quantize_dynamic` is refused: its ConvInteger sums exceed the
integers float32 holds exactly.

The dynamo export of the LSTM model on ipu-mk2 matches, but its simulated SRAM peak exceeds the
plan search's bound (2580 > 2576 bytes per core, whatever the inputs): a bug, `SRAM_OVERRUNS`."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import DATA, with_random_weights
from onnxruntime import quantization
from onnxruntime.transformers.float16 import convert_float_to_float16

from t10.driver import CompileOptions, check_tolerance, run_model
from t10.errors import T10Error
from t10.reference import reference_session

MORE = DATA / "more"
EXPORTS = sorted(p.name for p in MORE.glob("*.onnx"))
VOCAB = 128  # the exports' vocabulary (and hf_bert_ids_mask's)
SRAM_OVERRUNS = {("lstm_seq.dynamo.onnx", "ipu-mk2"): (2580, 2576)}
"""(export, chip) → (simulated peak, planned bound) per core: the memory contract broken."""
MASK_RANGES = {"attention_mask": (0, 1)}
"""DeBERTa multiplies its INT64 mask with itself: an integer Mul needs its inputs' ranges."""


def inputs_for(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs: normal FLOAT / FLOAT16 values (past keys / values, hidden states), token
    ids below `VOCAB`, positions below 16, a 0 / 1 `attention_mask` whose first and last
    positions (the decode steps' new token) are attended."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for i in model.graph.input:
        shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
        elem = i.type.tensor_type.elem_type
        if elem in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16):
            dtype = onnx.helper.tensor_dtype_to_np_dtype(elem)
            feeds[i.name] = rng.standard_normal(shape).astype(dtype)
        elif i.name == "attention_mask":
            mask = rng.integers(0, 2, shape, dtype=np.int64)
            mask[:, 0], mask[:, -1] = 1, 1
            feeds[i.name] = mask
        else:
            feeds[i.name] = rng.integers(0, 16 if i.name == "position_ids" else VOCAB, shape)
    return feeds


def test_every_export_is_here() -> None:
    """Each model through both exporters; the dynamo exporter's weights sit beside its model."""
    stems = {name.split(".")[0] for name in EXPORTS}
    assert len(stems) == 7
    for stem in stems:
        for exporter in ("torchscript", "dynamo"):
            assert (MORE / f"{stem}.{exporter}.onnx").exists()
        assert (MORE / f"{stem}.dynamo.onnx.data").exists()


@pytest.mark.parametrize("name", EXPORTS)
def test_more_exports_match_onnxruntime(name: str, chip: str) -> None:
    path = MORE / name
    result = run_model(
        str(path),
        CompileOptions(chip=chip),
        inputs=inputs_for(onnx.load(path)),
        check=check_tolerance("fp32"),
        input_ranges=MASK_RANGES if name.startswith("hf_deberta") else None,
    )
    assert result.check is not None and result.check.passed, result.check
    report = result.report
    peak, planned = report.peak_sram_bytes_per_core, report.planned_sram_bytes_per_core
    if (name, chip) in SRAM_OVERRUNS:
        assert (peak, planned) == SRAM_OVERRUNS[name, chip]  # until fixed
        pytest.xfail(f"BUG: simulated SRAM peak {peak} > planned {planned} bytes per core")
    assert peak <= planned


def test_deberta_asks_for_its_mask_range() -> None:
    with pytest.raises(T10Error, match=r"node '/model/encoder/Mul' \(Mul\): integer Mul needs "
                                       r"proven ranges.*--input-range attention_mask=LO:HI"):
        run_model(str(MORE / "hf_deberta_v2.torchscript.onnx"), CompileOptions(chip="test-16"))


@pytest.mark.parametrize(
    "name",
    [
        "hf_bert_ids_mask.torchscript.onnx",
        "hf_bert_ids_mask.dynamo.onnx",
        "more/hf_gpt2_decode.dynamo.onnx",
        "more/hf_llama_decode.torchscript.onnx",
    ],
)
def test_converted_to_float16_matches_onnxruntime(name: str) -> None:
    """FLOAT16 inputs (the past keys and values), weights, values and outputs."""
    model = convert_float_to_float16(onnx.load(DATA / name))
    result = run_model(
        model,
        CompileOptions(chip="ipu-mk2", precision="fp16"),
        inputs=inputs_for(model),
        check=check_tolerance("fp16"),
    )
    assert result.check is not None and result.check.passed, result.check


# ------------------------------------------------------------------------------- quantised


def source_model(name: str) -> onnx.ModelProto:
    """resnet18 with seeded weights for its ConstantOfShape ones, or hf_bert_ids_mask."""
    if name.startswith("resnet18"):
        return with_random_weights(onnx.load(DATA / "cnn" / f"{name}.onnx"))
    return onnx.load(DATA / f"{name}.onnx")


class RandomReader:
    """A calibration data reader (`quantization.CalibrationDataReader`'s protocol) of four
    batches of `inputs_for`."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.batches: Iterator[dict[str, np.ndarray]] = iter(
            [inputs_for(model, seed) for seed in range(1, 5)]
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def quantized(name: str, mode: str, tmp_path: Path) -> onnx.ModelProto:
    """`name` through onnxruntime's `quantize_static` (QDQ, calibrated on `RandomReader`) or
    `quantize_dynamic`."""
    model = source_model(name)
    source, written = tmp_path / "float.onnx", tmp_path / "quantized.onnx"
    onnx.save(model, source)
    logging.disable(logging.WARNING)  # the quantizer's advice to pre-process the model
    try:
        if mode == "static":
            quantization.quantize_static(
                source, written, RandomReader(model), quant_format=quantization.QuantFormat.QDQ
            )
        else:
            quantization.quantize_dynamic(source, written)
    finally:
        logging.disable(logging.NOTSET)
    return onnx.load(written)


CONV_INTEGER_RANGE = (
    r"node '{node}' \(ConvInteger\): integer ConvInteger computes values \(results and partial "
    r"sums\) in the proven range \[-{top}, {top}\], beyond the integers float32 holds exactly "
    r"\(\|x\| <= 2\*\*24\); bound its inputs \(e.g. with Min / Max\), or cast to FLOAT first if "
    r"float arithmetic is meant"
)


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("resnet18.dynamo", "static"),
        ("hf_bert_ids_mask.torchscript", "static"),
        ("hf_bert_ids_mask.dynamo", "static"),
        ("hf_bert_ids_mask.torchscript", "dynamic"),
        ("hf_bert_ids_mask.dynamo", "dynamic"),
    ],
)
def test_quantized_models_match_onnxruntime(name: str, mode: str, tmp_path: Path) -> None:
    model = quantized(name, mode, tmp_path)
    result = run_model(
        model,
        CompileOptions(chip="ipu-mk2"),
        inputs=inputs_for(model, 9),
        check=check_tolerance("fp32"),
    )
    assert result.check is not None and result.check.passed, result.check


@pytest.mark.parametrize(
    ("name", "node", "top"),
    [
        ("resnet18.torchscript", "/layer4/layer4.0/conv2/Conv_quant", 23134875),
        ("resnet18.dynamo", "node_Conv_340_quant", 23392935),
    ],
)
def test_dynamically_quantized_resnet18_is_refused(
    name: str, node: str, top: int, tmp_path: Path
) -> None:
    """quantize_dynamic's ConvInteger of 512 channels × 3 × 3 of UINT8 by INT8 sums up to
    ±2.3e7, beyond 2**24."""
    model = quantized(name, "dynamic", tmp_path)
    with pytest.raises(T10Error, match=CONV_INTEGER_RANGE.format(node=node, top=top)):
        run_model(model, CompileOptions(chip="ipu-mk2"), inputs=inputs_for(model, 9))


QUANTIZERS = ("QuantizeLinear", "DynamicQuantizeLinear")


def with_quantizers_returned(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` also returning every quantiser's codes and float input (inferred types)."""
    typed = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.value_info}
    returned = {o.name for o in model.graph.output} | {t.name for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type in QUANTIZERS:
            for name in (node.input[0], node.output[0]):
                if name not in returned and name in typed:
                    model.graph.output.append(typed[name])
                    returned.add(name)
    return model


def code_units(node: onnx.NodeProto, x: np.ndarray, model: onnx.ModelProto) -> np.ndarray:
    """The quantiser's input `x` divided by its scale (given, or DynamicQuantizeLinear's
    `(max(0, max x) - min(0, min x)) / 255`)."""
    if node.op_type == "QuantizeLinear":
        (given,) = (t for t in model.graph.initializer if t.name == node.input[1])
        scale = onnx.numpy_helper.to_array(given)
    else:
        scale = (max(0.0, x.max()) - min(0.0, x.min())) / np.float32(255)
    return x.astype(np.float64) / np.float64(scale)


def test_quantized_resnet18_mismatch_starts_at_a_rounding_tie(tmp_path: Path) -> None:
    """The mismatch, then its cause: with every quantiser's codes and float input returned too
    (which moves the float32 noise, but still flips a code), the first quantiser (in graph
    order) whose codes differ does so by one, only where onnxruntime's input lies within 1e-5
    of a code from a rounding tie (x / scale ≈ k + ½), the float inputs agreeing to float32
    reassociation (1e-5 of their largest magnitude)."""
    model = quantized("resnet18.torchscript", "static", tmp_path)
    inputs = inputs_for(model, 9)
    options = CompileOptions(chip="ipu-mk2")
    result = run_model(model, options, inputs=inputs, check=check_tolerance("fp32"))
    assert result.check is not None and not result.check.passed  # the mismatch reported
    model = with_quantizers_returned(model)
    got = run_model(model, options, inputs=inputs).outputs
    session = reference_session(model)
    names = [o.name for o in session.get_outputs()]
    want = dict(zip(names, session.run(names, inputs), strict=True))
    for node in (n for n in model.graph.node if n.op_type in QUANTIZERS):
        codes, expected = got[node.output[0]], want[node.output[0]]
        differ = codes.astype(np.int64) != expected.astype(np.int64)
        if not differ.any():
            continue
        x_expected = want.get(node.input[0], inputs.get(node.input[0]))  # a graph input?
        x = got.get(node.input[0], x_expected)
        np.testing.assert_allclose(x, x_expected, rtol=0, atol=1e-5 * np.abs(x_expected).max())
        units = code_units(node, x_expected, model)[differ]
        assert np.all(np.abs(units - np.floor(units) - 0.5) < 1e-5), (node.name, units)
        assert np.all(np.abs(codes[differ].astype(np.int64) - expected[differ]) == 1)
        return
    pytest.fail("no quantiser's codes differ")
