"""fp16 storage keeps known values finite: a finite constant beyond fp16's ±65504 (a weight, a
splat, a constant in a kernel body) saturates to ±65504, as onnxruntime's fp16 converter clamps
a model's constants, while a value computed beyond the range is ±inf, as on the chip. So fp16
adds no NaN or ±inf that fp32 does not have to any test model (a Hugging Face mask of float32's
minimum masks as -65504: a fully masked row is uniform, not NaN), a mask of any magnitude
beyond the range masks as onnxruntime's fp16-converted model does, and the report's fp16
overflow warning names only an overflow that can have changed a result (an output holds NaN
or ±inf)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import DATA, random_onnx_inputs, with_random_weights
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.transformers.float16 import convert_float_to_float16

from t10 import driver
from t10.driver import CompileOptions, run_model
from t10.examples.models import EXAMPLES
from t10.examples.zoo import ZOO
from t10.outputs.report import check_outputs
from t10.reference import reference_session

CHIP = "test-16"
PROPERTY_EXAMPLES = int(os.environ.get("T10_PROPERTY_EXAMPLES", "15"))
F32_MIN = float(np.finfo(np.float32).min)
LARGE_CNNS = ("resnet18", "mobilenet_v2", "efficientnet_b0")
"""Left out: they fit ipu-mk2 only, where each takes over 30 s a precision."""
FILES = sorted(DATA.glob("*.onnx")) + sorted(
    p for p in (DATA / "cnn").glob("*.onnx") if not p.name.startswith(LARGE_CNNS)
)
SMALL_EXAMPLES = {"bert-ffn": {"rows": 32, "hidden": 64, "inner": 256},
                  "chain": {"nodes": 100}}
"""Example sizes that fit test-16 (the others' defaults do)."""
ZOO_NAMES = ("bert-base", "vit-base", "llama2-7b", "opt-1.3b", "resnet50", "nerf")
"""One zoo model of each architecture (bert-large and vit-large are bert-base's and
vit-base's at other sizes)."""
B, S, D = 2, 8, 4
"""The masked attention's batch, sequence and head size."""
FORMS = ("where", "additive", "constant")
"""How a mask of `fill` reaches the scores: `Where(mask, 0, fill)` of a BOOL input, `(1 -
mask) · fill` of a FLOAT input, or a constant tensor holding `fill` where masked."""


def _masked_attention(form: str, fill: float, masked: np.ndarray) -> onnx.ModelProto:
    """softmax(q·kᵀ + bias)·v (output `y`, and the masked scores `sb`) with the attention mask
    `masked` (True: masked) of `form`; for `constant` the mask is `masked` itself, else an
    input (`m`)."""
    inputs = {"q": [B, S, D], "kt": [B, D, S], "v": [B, S, D]}
    weights = {n: np.array(v, np.float32) for n, v in (("zero", 0), ("one", 1), ("fill", fill))}
    if form == "where":
        mask = [helper.make_node("Where", ["m", "zero", "fill"], ["bias"])]
    elif form == "additive":
        mask = [helper.make_node("Sub", ["one", "m"], ["inv"]),
                helper.make_node("Mul", ["inv", "fill"], ["bias"])]
    else:
        weights["bias"] = np.where(masked, fill, 0).astype(np.float32)
        mask = []
    nodes = [
        helper.make_node("MatMul", ["q", "kt"], ["s"]),
        *mask,
        helper.make_node("Add", ["s", "bias"], ["sb"]),
        helper.make_node("Softmax", ["sb"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    values = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()]
    if form != "constant":
        kind = TensorProto.BOOL if form == "where" else TensorProto.FLOAT
        values.append(helper.make_tensor_value_info("m", kind, [B, S, S]))
    graph = helper.make_graph(
        nodes, "masked_attention", values,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, D]),
         helper.make_tensor_value_info("sb", TensorProto.FLOAT, [B, S, S])],
        [numpy_helper.from_array(w, n) for n, w in weights.items() if n in
         {i for node in nodes for i in node.input}],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


def _attention_inputs(form: str, masked: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    """Seeded inputs, the mask as `form` takes it; a fully masked row's query is zero. (Such
    a row's output depends on whether its scores survive being added to the mask: they do
    in float32 next to -65504 (and so in onnxruntime's fp16 model, which computes an op
    without an fp16 kernel in float32), not in fp16 storage nor next to float32's minimum;
    equal scores make it the mean of v in every precision.)"""
    model = _masked_attention(form, F32_MIN, masked)
    inputs = random_onnx_inputs(model, seed)
    inputs["q"][masked.all(axis=-1)] = 0
    if form == "where":
        inputs["m"] = ~masked  # Where keeps 0 where the mask is true
    elif form == "additive":
        inputs["m"] = (~masked).astype(np.float32)
    return inputs


def _mask(seed: int, full_rows: int) -> np.ndarray:
    """A random mask (True: masked) with `full_rows` rows of the first batch fully masked."""
    masked = np.random.default_rng(seed).random((B, S, S)) < 0.5
    masked[0, :full_rows] = True
    return masked


def _nonfinite_added(fp16: dict[str, np.ndarray], fp32: dict[str, np.ndarray]) -> dict[str, int]:
    """Per output, the NaN / ±inf of `fp16` where `fp32` is finite (outputs with none left
    out)."""
    added = {name: int((~np.isfinite(v) & np.isfinite(fp32[name])).sum())
             for name, v in fp16.items()}
    return {name: n for name, n in added.items() if n}


def _zoo(name: str) -> onnx.ModelProto:
    """A zoo model at toy sizes (one layer; ResNet-50 two stages, NeRF four layers)."""
    if name == "resnet50":
        return ZOO[name].build(1, 32, layers=2)
    if name == "nerf":
        return ZOO[name].build(2, 4, layers=4)
    cfg = ZOO[name].config
    tiny = replace(cfg, hidden=32, heads=4, intermediate=48, vocab=min(cfg.vocab, 50),
                   labels=min(cfg.labels, 10))
    return ZOO[name].build(2, 5 if name.startswith("vit") else 8, layers=1, config=tiny)


def _model(name: str) -> str | onnx.ModelProto:
    """A test model by name: a file under tests/unit/data (a CNN's weights made random), a
    built-in example, `zoo:<name>`, or `attention-<form>` (float32's minimum as the mask)."""
    if name.startswith("attention-"):
        return _masked_attention(name.removeprefix("attention-"), F32_MIN, _mask(0, 2))
    if name.startswith("zoo:"):
        return _zoo(name.removeprefix("zoo:"))
    if name in EXAMPLES:
        return EXAMPLES[name](**SMALL_EXAMPLES.get(name, {}))
    path = next(p for p in FILES if p.name == name)
    if path.parent.name == "cnn":
        return with_random_weights(onnx.load(str(path)))
    return str(path)


@pytest.mark.parametrize(
    "name",
    [p.name for p in FILES] + sorted(EXAMPLES) + [f"zoo:{n}" for n in ZOO_NAMES]
    + [f"attention-{f}" for f in FORMS],
)
def test_fp16_adds_no_nan_or_inf(name: str) -> None:
    """Every test model in fp16 has NaN / ±inf only where its fp32 run has them (the same
    seeded inputs; the masked attention with two fully masked rows)."""
    model = _model(name)
    inputs = None
    if name.startswith("attention-"):
        inputs = _attention_inputs(name.removeprefix("attention-"), _mask(0, 2), 0)
    fp16 = run_model(model, CompileOptions(chip=CHIP, precision="fp16"), inputs=inputs)
    fp32 = run_model(model, CompileOptions(chip=CHIP), inputs=inputs)
    assert _nonfinite_added(fp16.outputs, fp32.outputs) == {}
    assert fp16.report.warnings == ()


@settings(max_examples=PROPERTY_EXAMPLES)
@given(
    form=st.sampled_from(FORMS),
    exponent=st.floats(np.log10(65505.0), np.log10(-F32_MIN)),
    full_rows=st.integers(1, S),
    seed=st.integers(0, 2**16),
)
def test_fp16_mask_beyond_range_masks_as_onnxruntime_fp16(
    form: str, exponent: float, full_rows: int, seed: int
) -> None:
    """A mask value of any magnitude beyond fp16's range (up to float32's minimum), with
    fully masked rows: t10's fp16 outputs are onnxruntime's on the model converted by its
    fp16 converter (`convert_float_to_float16`, clamping constants to ±65504), within the
    fp16 check tolerance, and a masked score is -65504 (the saturated mask plus a score that
    fp16 rounds away)."""
    fill = max(-(10.0**exponent), F32_MIN)
    masked = _mask(seed, full_rows)
    model = _masked_attention(form, fill, masked)
    inputs = _attention_inputs(form, masked, seed)
    result = run_model(model, CompileOptions(chip=CHIP, precision="fp16"), inputs=inputs)
    half = convert_float_to_float16(model, keep_io_types=True)
    got = reference_session(half).run(None, inputs)
    want = {name: np.asarray(v) for name, v in zip(("y", "sb"), got, strict=True)}
    check = check_outputs(result.outputs, want, driver.CHECK_TOLERANCES["fp16"])
    assert check.passed, check.outputs
    assert np.isfinite(result.outputs["y"]).all()
    assert (result.outputs["sb"][masked] == -65504).all()


def _matmul(w: np.ndarray, relu: bool = False) -> onnx.ModelProto:
    """y = (Relu(x) if `relu` else x) · w, x [4, 8]."""
    nodes = [helper.make_node("Relu", ["x"], ["r"])] if relu else []
    nodes.append(helper.make_node("MatMul", ["r" if relu else "x", "w"], ["y"], name="mm"))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_fp16_weight_beyond_range_saturates(tmp_path: Path) -> None:
    """A weight of 1e6 is stored as 65504 (not inf): each output of its column is one fp16
    rounding of 65504 + 7 (65504), and the report says so; a weight of -inf stays -inf."""
    w = np.ones((8, 3), np.float32)
    w[2, 1], w[0, 0] = 1e6, -np.inf
    result = run_model(
        _matmul(w),
        CompileOptions(chip=CHIP, precision="fp16"),
        inputs={"x": np.ones((4, 8), np.float32)},
    )
    np.testing.assert_array_equal(result.outputs["y"][:, 1], np.full(4, 65504, np.float32))
    np.testing.assert_array_equal(result.outputs["y"][:, 0], np.full(4, -np.inf, np.float32))
    assert result.report.warnings == (_saturated(1, "1e+06", "mm"),)


def _saturated(count: int, largest: str, node: str) -> str:
    return (f"fp16: {count} constant value(s) beyond fp16's range saturated to ±65504 "
            f"(largest |x| {largest}, first in node '{node}'): results that depend on them "
            "differ from the fp32 model")


@pytest.mark.parametrize(
    ("values", "warning"),
    [
        ([1e30, -7e4, 1e5], _saturated(3, "1e+30", "mm")),
        ([F32_MIN, -F32_MIN, F32_MIN], None),
        ([F32_MIN, -1e10, 2.0], _saturated(1, "1e+10", "mm")),
        ([65504.0, -65504.0, 2.0], None),
    ],
)
def test_fp16_saturation_warns_of_all_but_float32_extremes(
    values: list[float], warning: str | None
) -> None:
    """Every constant saturated to ±65504 is reported (count, largest magnitude, node) except
    float32's extremes ±3.4028235e38, the ±infinity of masks (docs/precision.md), which
    saturation keeps extreme; the fp32 compile reports nothing."""
    w = np.ones((8, 3), np.float32)
    w[1, :] = values
    x = np.ones((4, 8), np.float32)
    fp16 = run_model(_matmul(w), CompileOptions(chip=CHIP, precision="fp16"), inputs={"x": x})
    assert fp16.report.warnings == (() if warning is None else (warning,))
    assert run_model(
        _matmul(w),
        CompileOptions(chip=CHIP),
        inputs={"x": x},
    ).report.warnings == ()


def test_fp16_overflow_no_output_shows_is_not_reported() -> None:
    """An input of -7e4 is stored as -inf, which Relu makes 0, as it makes -7e4: the outputs
    are fp32's and no warning is given."""
    x = np.ones((4, 8), np.float32)
    x[3, 0] = -7e4
    model = _matmul(np.ones((8, 3), np.float32), relu=True)
    result = run_model(model, CompileOptions(chip=CHIP, precision="fp16"), inputs={"x": x})
    fp32 = run_model(model, CompileOptions(chip=CHIP), inputs={"x": x})
    np.testing.assert_array_equal(result.outputs["y"], fp32.outputs["y"])
    assert result.report.warnings == ()


def test_fp16_overflow_warning_names_first_overflow_and_outputs() -> None:
    """Products of 8e4 are stored as inf by the matmul kernel, and so are the outputs: the
    warning names the outputs' non-finite count and the kernel."""
    w = np.ones((8, 3), np.float32)
    w[:, 2] = 1e4
    result = run_model(
        _matmul(w),
        CompileOptions(chip=CHIP, precision="fp16"),
        inputs={"x": np.ones((4, 8), np.float32)},
    )
    (warning,) = result.report.warnings
    assert warning.startswith("fp16 overflow: outputs hold NaN or ±inf ('y' 4 value(s)) after "
                              "core.kernel 'mm' stored 4 finite value(s)"), warning
    assert warning.endswith("--precision fp32 computes them")
