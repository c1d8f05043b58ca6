"""Quantisation on runtime values (``t10.frontend.ops_quantize``) against onnxruntime:
QuantizeLinear and DequantizeLinear (opsets 10 to 21, per tensor and per axis, INT8 / UINT8 /
INT16 / UINT16, saturation, ties at .5 steps, NaN and infinities), DynamicQuantizeLinear,
MatMulInteger and ConvInteger, every output exactly equal; the refusals by name; and end to
end, a small ResNet-like CNN and a tiny BERT encoder quantised by onnxruntime's
``quantize_static`` (QDQ) and ``quantize_dynamic`` on ipu-mk2."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CompileOptions, check_tolerance, run_model
from t10.errors import T10Error
from t10.examples.zoo import ZOO
from t10.frontend import import_onnx
from t10.reference import reference_outputs

node = helper.make_node
TEST_CHIP = CompileOptions(chip="test-16")
TYPES = {
    TensorProto.INT8: np.int8,
    TensorProto.UINT8: np.uint8,
    TensorProto.INT16: np.int16,
    TensorProto.UINT16: np.uint16,
}
"""The quantised types → numpy's."""

Values = dict[str, tuple[int, tuple[int, ...]]]


def model_of(
    nodes: list[onnx.NodeProto],
    inputs: Values,
    outputs: Values,
    weights: dict[str, np.ndarray] | None = None,
    opset: int = 21,
) -> onnx.ModelProto:
    """A model of ``nodes``: typed graph inputs and outputs (name → (type, shape))."""
    graph = helper.make_graph(
        nodes,
        "quantize",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in outputs.items()],
        [numpy_helper.from_array(np.asarray(w), n) for n, w in (weights or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10 if opset >= 21 else 9
    return model


def assert_exact(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> None:
    """t10's outputs on ``inputs`` (test-16) equal onnxruntime's bit for bit (NaN as NaN)."""
    got = run_model(model, TEST_CHIP, inputs=inputs).outputs
    for name, want in reference_outputs(model, inputs).items():
        np.testing.assert_array_equal(got[name].astype(want.dtype), want, err_msg=name)


def _bounds(elem: int) -> tuple[int, int]:
    info = np.iinfo(TYPES[elem])
    return int(info.min), int(info.max)


# ------------------------------------------------------------------ QuantizeLinear / Dequantize

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
scales = st.one_of(
    st.sampled_from([2.0**e for e in range(-6, 4)]),  # ties are exact: x = (k + 0.5) · scale
    st.floats(1e-3, 10.0).map(lambda v: float(np.float32(v))),
)


@st.composite
def quantizations(draw: st.DrawFn) -> tuple[int, int, tuple[int, ...], int | None, bool]:
    """(opset, output type, x's shape, axis (None: per tensor), whether a zero point is
    given): INT16 / UINT16 from opset 21, per axis from 13."""
    opset = draw(st.sampled_from([10, 13, 19, 21]))
    types = list(TYPES) if opset >= 21 else [TensorProto.INT8, TensorProto.UINT8]
    shape = draw(shapes)
    per_axis = opset >= 13 and draw(st.booleans())
    axis = draw(st.integers(-len(shape), len(shape) - 1)) if per_axis else None
    return opset, draw(st.sampled_from(types)), shape, axis, draw(st.booleans())


def _parameters(
    draw: st.DrawFn, elem: int, shape: tuple[int, ...], axis: int | None, zeroed: bool
) -> dict[str, np.ndarray]:
    """A scale (and zero point) per tensor, or one per index of ``axis``."""
    count = shape[axis] if axis is not None else 1
    form: tuple[int, ...] = (count,) if axis is not None else ()
    lo, hi = _bounds(elem)
    values = {"s": np.array([draw(scales) for _ in range(count)], np.float32).reshape(form)}
    if zeroed:
        zeros = [draw(st.integers(lo, hi)) for _ in range(count)]
        values["z"] = np.array(zeros, TYPES[elem]).reshape(form)
    return values


def _inputs(draw: st.DrawFn, shape: tuple[int, ...], scale: np.ndarray) -> np.ndarray:
    """Float inputs: ties (an odd number of half steps of the largest scale), values beyond
    any type's range (saturation), ±0, NaN and ±inf."""
    step = float(scale.max())
    special = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e6, -1e6])
    tie = st.integers(-300, 300).map(lambda k: (k + 0.5) * step)
    any_value = st.floats(-300.0 * step, 300.0 * step)
    flat = [draw(st.one_of(tie, any_value, special)) for _ in range(int(np.prod(shape)))]
    return np.array(flat, np.float32).reshape(shape)


@settings(max_examples=25, deadline=None)
@given(case=quantizations(), data=st.data())
def test_quantize_then_dequantize(
    case: tuple[int, int, tuple[int, ...], int | None, bool], data: st.DataObject
) -> None:
    """y = saturate(round_half_to_even(x / scale) + zero_point) and its dequantisation
    (y - zero_point) · scale, per tensor or per axis, both outputs exact."""
    opset, elem, shape, axis, zeroed = case
    weights = _parameters(data.draw, elem, shape, axis, zeroed)
    if not zeroed and elem != TensorProto.UINT8:
        weights["z"] = np.zeros(weights["s"].shape, TYPES[elem])  # the type is the zero's
    names = ["x", "s", *(["z"] if "z" in weights else [])]
    at = {} if axis is None else {"axis": axis}
    model = model_of(
        [node("QuantizeLinear", names, ["q"], **at),
         node("DequantizeLinear", ["q", *names[1:]], ["y"], **at)],
        {"x": (TensorProto.FLOAT, shape)},
        {"q": (elem, shape), "y": (TensorProto.FLOAT, shape)},
        weights,
        opset,
    )
    assert_exact(model, {"x": _inputs(data.draw, shape, weights["s"])})


@settings(max_examples=20, deadline=None)
@given(case=quantizations(), data=st.data())
def test_dequantize_runtime_integers(
    case: tuple[int, int, tuple[int, ...], int | None, bool], data: st.DataObject
) -> None:
    """DequantizeLinear of an integer graph input over its whole type, per tensor or axis."""
    opset, elem, shape, axis, zeroed = case
    weights = _parameters(data.draw, elem, shape, axis, zeroed)
    lo, hi = _bounds(elem)
    x = np.random.default_rng(data.draw(st.integers(0, 99))).integers(lo, hi, shape,
                                                                        endpoint=True)
    x.flat[0] = data.draw(st.sampled_from([lo, hi]))
    at = {} if axis is None else {"axis": axis}
    model = model_of(
        [node("DequantizeLinear", ["x", "s", *(["z"] if zeroed else [])], ["y"], **at)],
        {"x": (elem, shape)},
        {"y": (TensorProto.FLOAT, shape)},
        weights,
        opset,
    )
    assert_exact(model, {"x": x.astype(TYPES[elem])})


def test_runtime_scale_and_zero_point() -> None:
    """Scale and zero point computed at run time: one element each (per tensor)."""
    model = model_of(
        [node("QuantizeLinear", ["x", "s", "z"], ["q"]),
         node("DequantizeLinear", ["q", "s", "z"], ["y"])],
        {"x": (TensorProto.FLOAT, (3, 4)), "s": (TensorProto.FLOAT, (1,)),
         "z": (TensorProto.INT8, (1,))},
        {"q": (TensorProto.INT8, (3, 4)), "y": (TensorProto.FLOAT, (3, 4))},
    )
    x = (np.arange(12, dtype=np.float32).reshape(3, 4) - 6.0) * 0.75
    assert_exact(model, {"x": x, "s": np.array([0.5], np.float32),
                         "z": np.array([-7], np.int8)})


def test_constants_fold_as_onnxruntime_computes() -> None:
    """QuantizeLinear / DequantizeLinear of constants (opset 13, which onnx's reference
    evaluator lacks) fold exactly, an infinite quotient saturating."""
    values = np.array([[np.inf, -np.inf, 2.5, 3.5, -2.5, 1e9]], np.float32)
    model = model_of(
        [node("QuantizeLinear", ["c", "s", "z"], ["q"]),
         node("DequantizeLinear", ["q", "s", "z"], ["d"]),
         node("Add", ["x", "d"], ["y"])],
        {"x": (TensorProto.FLOAT, (1, 6))},
        {"y": (TensorProto.FLOAT, (1, 6))},
        {"c": values, "s": np.float32(1.0), "z": np.uint8(3)},
        opset=13,
    )
    assert_exact(model, {"x": np.zeros((1, 6), np.float32)})


# ------------------------------------------------------------------- DynamicQuantizeLinear


@settings(max_examples=20, deadline=None)
@given(shape=shapes, kind=st.sampled_from(["mixed", "positive", "negative", "zero", "ties"]),
       seed=st.integers(0, 99))
def test_dynamic_quantize_linear(shape: tuple[int, ...], kind: str, seed: int) -> None:
    """y, and its scale and zero point (read through rank-1 arithmetic, as t10 holds them as
    shape [1]), from the min and max of x with 0 included (all zero: scale 1)."""
    rng = np.random.default_rng(seed)
    x = {
        "mixed": rng.standard_normal(shape) * 3,
        "positive": rng.random(shape) + 0.1,
        "negative": -rng.random(shape) - 0.1,
        "zero": np.zeros(shape),
        "ties": rng.integers(-40, 40, shape) + 0.5,
    }[kind].astype(np.float32)
    model = model_of(
        [node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
         node("Mul", ["s", "one"], ["scale"]),
         node("Cast", ["z"], ["zf"], to=TensorProto.FLOAT),
         node("Add", ["zf", "nothing"], ["zero"])],
        {"x": (TensorProto.FLOAT, shape)},
        {"y": (TensorProto.UINT8, shape), "scale": (TensorProto.FLOAT, (1,)),
         "zero": (TensorProto.FLOAT, (1,))},
        {"one": np.ones(1, np.float32), "nothing": np.zeros(1, np.float32)},
    )
    assert_exact(model, {"x": x})


def test_dynamic_quantize_linear_scalar_readers_are_checked() -> None:
    """Its rank-0 scale as a graph output, or read by an op other than arithmetic and the
    quantisation ops' scales and zero points, is refused by name."""
    outputs: Values = {"y": (TensorProto.UINT8, (2, 3)), "s": (TensorProto.FLOAT, ())}
    model = model_of([node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
                     {"x": (TensorProto.FLOAT, (2, 3))}, outputs)
    with pytest.raises(T10Error, match=r"rank-0 value 's' .* is a graph output"):
        import_onnx(model)
    model = model_of(
        [node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
         node("Unsqueeze", ["s", "axes"], ["u"]), node("Mul", ["x", "u"], ["w"])],
        {"x": (TensorProto.FLOAT, (2, 3))},
        {"w": (TensorProto.FLOAT, (2, 3))},
        {"axes": np.array([0], np.int64)},
    )
    with pytest.raises(T10Error, match=r"node 'Unsqueeze_1' \(Unsqueeze\) reads the rank-0 "
                                       r"value 's'"):
        import_onnx(model)


# ---------------------------------------------------------------- MatMulInteger / ConvInteger


@settings(max_examples=20, deadline=None)
@given(
    m=st.integers(1, 4), k=st.integers(1, 16), n=st.integers(1, 4),
    batch=st.sampled_from([(), (2,)]),
    a_type=st.sampled_from([TensorProto.UINT8, TensorProto.INT8]),
    b_type=st.sampled_from([TensorProto.UINT8, TensorProto.INT8]),
    known_b=st.booleans(), per_column=st.booleans(), seed=st.integers(0, 99),
)
def test_matmul_integer(
    m: int, k: int, n: int, batch: tuple[int, ...], a_type: int, b_type: int,
    known_b: bool, per_column: bool, seed: int,
) -> None:
    """(A - a_zero_point) @ (B - b_zero_point) exactly in INT32, over whole types: B known
    (its zero point per tensor or per column) or at run time."""
    rng = np.random.default_rng(seed)

    def draw(elem: int, shape: tuple[int, ...]) -> np.ndarray:
        lo, hi = _bounds(elem)
        return rng.integers(lo, hi, shape, endpoint=True).astype(TYPES[elem])

    a, b = draw(a_type, (*batch, m, k)), draw(b_type, (k, n))
    weights = {"az": draw(a_type, ()), "bz": draw(b_type, (n,) if per_column else ())}
    inputs: Values = {"a": (a_type, a.shape)}
    if known_b:
        weights["b"] = b
    else:
        inputs["b"] = (b_type, b.shape)
    model = model_of(
        [node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])],
        inputs,
        {"y": (TensorProto.INT32, (*batch, m, n))},
        weights,
    )
    assert_exact(model, {"a": a} if known_b else {"a": a, "b": b})


@settings(max_examples=12, deadline=None)
@given(
    channels=st.integers(1, 4), out=st.sampled_from([2, 4]), side=st.integers(3, 6),
    kernel=st.integers(1, 3), pad=st.integers(0, 1), stride=st.integers(1, 2),
    grouped=st.booleans(), seed=st.integers(0, 99),
)
def test_conv_integer(
    channels: int, out: int, side: int, kernel: int, pad: int, stride: int, grouped: bool,
    seed: int,
) -> None:
    """ConvInteger of a UINT8 input and a known INT8 weight, padded (onnxruntime pads with
    the input's zero point), strided, grouped."""
    rng = np.random.default_rng(seed)
    group = 2 if grouped else 1
    channels *= group
    x = rng.integers(0, 255, (1, channels, side, side), endpoint=True).astype(np.uint8)
    w = rng.integers(-128, 127, (out, channels // group, kernel, kernel),
                     endpoint=True).astype(np.int8)
    wz = np.int8(rng.integers(-128, 127, endpoint=True))
    size = (side + 2 * pad - kernel) // stride + 1
    model = model_of(
        [node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[pad] * 4,
              strides=[stride] * 2, group=group)],
        {"x": (TensorProto.UINT8, x.shape)},
        {"y": (TensorProto.INT32, (1, out, size, size))},
        {"w": w, "xz": np.uint8(rng.integers(0, 255)), "wz": wz},
    )
    assert_exact(model, {"x": x})


def test_integer_accumulation_beyond_float32_is_refused() -> None:
    """A contraction whose partial sums may leave float32's exact integers is refused (here
    B at run time: 1024 products of up to 255 · 128)."""
    model = model_of(
        [node("MatMulInteger", ["a", "b"], ["y"])],
        {"a": (TensorProto.UINT8, (2, 1024)), "b": (TensorProto.INT8, (1024, 2))},
        {"y": (TensorProto.INT32, (2, 2))},
    )
    with pytest.raises(T10Error, match=r"integer MatMulInteger computes values .* beyond the "
                                       r"integers float32 holds exactly"):
        import_onnx(model)


def test_known_weights_bound_the_accumulation() -> None:
    """With B known, the bound is the largest sum of one column's magnitudes times the
    largest |A - a_zero_point|: 1024 products pass with weights of magnitude <= 32 (a sum of
    at most 32768 · 255), and are refused with one column of 127s (1024 · 127 · 255 > 2**24)."""
    rng = np.random.default_rng(3)
    small = rng.integers(-32, 32, (1024, 2), endpoint=True).astype(np.int8)
    a = rng.integers(0, 255, (2, 1024), endpoint=True).astype(np.uint8)
    a[0] = 255
    small[:, 0] = 32

    def model(b: np.ndarray) -> onnx.ModelProto:
        return model_of([node("MatMulInteger", ["a", "b"], ["y"])],
                        {"a": (TensorProto.UINT8, (2, 1024))},
                        {"y": (TensorProto.INT32, (2, 2))}, {"b": b})

    assert_exact(model(small), {"a": a})
    small[:, 1] = 127
    with pytest.raises(T10Error, match=r"integer MatMulInteger computes values \(results and "
                                       r"partial sums\) in the proven range "
                                       r"\[-33162240, 33162240\]"):
        import_onnx(model(small))


# ------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("nodes", "inputs", "outputs", "weights", "message"),
    [
        ([node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1, block_size=2)],
         {"x": (TensorProto.FLOAT, (2, 4))}, {"y": (TensorProto.INT8, (2, 4))},
         {"s": np.ones((2, 2), np.float32), "z": np.zeros((2, 2), np.int8)},
         r"block_size = 2 \(blocked quantisation\) is not supported"),
        ([node("QuantizeLinear", ["x", "s", "z"], ["y"])],
         {"x": (TensorProto.FLOAT, (2, 4))}, {"y": (TensorProto.INT4, (2, 4))},
         {"s": np.float32(1), "z": numpy_helper.from_array(np.zeros((), np.int8))},
         None),
        ([node("QuantizeLinear", ["x", "s"], ["y"], axis=0)],
         {"x": (TensorProto.FLOAT, (2, 4))}, {"y": (TensorProto.UINT8, (2, 4))},
         {"s": np.ones(4, np.float32)},
         r"scale 's' has shape \[4\]; it must have one element .* axis 0 .*: \[2\]"),
        ([node("Add", ["a", "b"], ["y"])],
         {"a": (TensorProto.UINT8, (4,)), "b": (TensorProto.UINT8, (4,))},
         {"y": (TensorProto.UINT8, (4,))}, {},
         r"its UINT8 result 'y' must hold values within \[0, 255\], .* its range \[0, 510\]"),
        ([node("Cast", ["x"], ["y"], to=TensorProto.INT8)],
         {"x": (TensorProto.FLOAT, (4,))}, {"y": (TensorProto.INT8, (4,))}, {},
         r"its INT8 result 'y' must hold values within \[-128, 127\], .* unknown"),
        ([node("ConvInteger", ["x", "w", "xz", "wz"], ["y"])],
         {"x": (TensorProto.UINT8, (1, 1, 3, 3))}, {"y": (TensorProto.INT32, (1, 2, 3, 3))},
         {"w": np.ones((2, 1, 1, 1), np.int8), "xz": np.uint8(0), "wz": np.zeros(2, np.int8)},
         r"w_zero_point 'wz' has shape \[2\]; t10 takes one element \(per tensor\)"),
    ],
    ids=["block_size", "int4", "axis-length", "uint8-wraps", "float-to-int8", "conv-zero"],
)
def test_refusals(
    nodes: list[onnx.NodeProto], inputs: Values, outputs: Values,
    weights: dict[str, np.ndarray], message: str | None,
) -> None:
    if message is None:  # an INT4 zero point: built as a TensorProto of that type
        model = model_of(nodes, inputs, outputs, {"s": weights["s"]})
        model.graph.initializer.append(helper.make_tensor("z", TensorProto.INT4, [], [0]))
        message = r"output y 'y' has element type INT4; t10 quantises to INT8, UINT8"
    else:
        model = model_of(nodes, inputs, outputs, weights)
    with pytest.raises(T10Error, match=message):
        import_onnx(model)


# ------------------------------------------------------------------------------ end to end


def _resnet_like() -> onnx.ModelProto:
    """A small ResNet: a conv-BN-relu stem, max pool, a basic block (two conv-BN, the
    residual add, relu), a strided block with a 1x1 downsample, global average pool, Gemm."""
    rng = np.random.default_rng(0)
    weights: dict[str, np.ndarray] = {}
    nodes: list[onnx.NodeProto] = []

    def conv_bn(name: str, x: str, cin: int, cout: int, k: int, stride: int = 1,
                relu: bool = True) -> str:
        weights[f"{name}.w"] = (rng.standard_normal((cout, cin, k, k)) /
                                np.sqrt(cin * k * k)).astype(np.float32)
        for p, v in (("g", 1 + 0.1 * rng.standard_normal(cout)),
                     ("b", 0.1 * rng.standard_normal(cout)),
                     ("m", 0.1 * rng.standard_normal(cout)), ("v", 1 + rng.random(cout))):
            weights[f"{name}.{p}"] = v.astype(np.float32)
        nodes.append(node("Conv", [x, f"{name}.w"], [f"{name}.c"], pads=[k // 2] * 4,
                          strides=[stride] * 2))
        nodes.append(node("BatchNormalization", [f"{name}.c", *(f"{name}.{p}" for p in "gbmv")],
                          [f"{name}.bn"]))
        if not relu:
            return f"{name}.bn"
        nodes.append(node("Relu", [f"{name}.bn"], [f"{name}.r"]))
        return f"{name}.r"

    def block(name: str, x: str, cin: int, cout: int, stride: int) -> str:
        h = conv_bn(f"{name}.1", x, cin, cout, 3, stride)
        h = conv_bn(f"{name}.2", h, cout, cout, 3, relu=False)
        skip = x if stride == 1 else conv_bn(f"{name}.down", x, cin, cout, 1, stride, False)
        nodes.append(node("Add", [h, skip], [f"{name}.sum"]))
        nodes.append(node("Relu", [f"{name}.sum"], [f"{name}.out"]))
        return f"{name}.out"

    h = conv_bn("stem", "image", 3, 8, 3)
    nodes.append(node("MaxPool", [h], ["pooled"], kernel_shape=[2, 2], strides=[2, 2]))
    h = block("layer1", "pooled", 8, 8, 1)
    h = block("layer2", h, 8, 16, 2)
    nodes.append(node("GlobalAveragePool", [h], ["gap"]))
    nodes.append(node("Flatten", ["gap"], ["flat"]))
    weights["fc.w"] = (rng.standard_normal((10, 16)) / 4).astype(np.float32)
    weights["fc.b"] = (0.1 * rng.standard_normal(10)).astype(np.float32)
    nodes.append(node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], transB=1))
    return model_of(nodes, {"image": (TensorProto.FLOAT, (1, 3, 16, 16))},
                    {"logits": (TensorProto.FLOAT, (1, 10))}, weights, opset=17)


def _tiny_bert() -> onnx.ModelProto:
    bert = ZOO["bert-base"]
    config = replace(bert.config, hidden=32, heads=4, intermediate=48, vocab=50)
    return bert.build(1, 8, config=config)


def _feeds(model: onnx.ModelProto, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Calibration inputs: normal floats, token ids below 50, token types and mask 0 / 1."""
    feeds: dict[str, np.ndarray] = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
        else:
            top = 50 if vi.name == "input_ids" else 2
            feeds[vi.name] = rng.integers(0, top, shape).astype(np.int64)
    return feeds


class _RandomReader:
    """A calibration data reader (``quantization.CalibrationDataReader``'s protocol) of a few
    random batches."""

    def __init__(self, model: onnx.ModelProto) -> None:
        rng = np.random.default_rng(1)
        self.batches: Iterator[dict[str, np.ndarray]] = iter(
            [_feeds(model, rng) for _ in range(4)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


@pytest.mark.parametrize("mode", ["static", "dynamic"])
@pytest.mark.parametrize("build", [_resnet_like, _tiny_bert], ids=["cnn", "bert"])
def test_quantized_models_match_onnxruntime(mode: str, build: object, tmp_path: Path) -> None:
    """onnxruntime's quantize_static (QDQ) and quantize_dynamic of a ResNet-like CNN and a
    tiny BERT encoder run on ipu-mk2 and match onnxruntime (the graph as written)."""
    from onnxruntime import quantization

    assert callable(build)
    model: onnx.ModelProto = build()
    source, quantized = tmp_path / "float.onnx", tmp_path / "quantized.onnx"
    onnx.save(model, source)
    logging.disable(logging.WARNING)  # the quantizer's advice to pre-process the model
    try:
        if mode == "static":
            quantization.quantize_static(source, quantized, _RandomReader(model),
                                         quant_format=quantization.QuantFormat.QDQ)
        else:
            quantization.quantize_dynamic(source, quantized)
    finally:
        logging.disable(logging.NOTSET)
    written = onnx.load(quantized)
    ops = {n.op_type for n in written.graph.node}
    assert ({"QuantizeLinear", "DequantizeLinear"} if mode == "static"
            else {"DynamicQuantizeLinear"}) <= ops
    result = run_model(written, CompileOptions(chip="ipu-mk2"), check=check_tolerance("fp32"),
                       inputs=_feeds(written, np.random.default_rng(7)))
    assert result.check is not None and result.check.passed, result.check
