"""MaxPool, AveragePool, GlobalMaxPool, GlobalAveragePool and LRN (a window view reduced by a
max / sum generic), and BatchNormalization on its own: compiled, simulated and checked against
onnxruntime in fp32 and fp16 (and by a property test over pool shapes), what they import as,
and the clear errors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import CHIPS, float_model, run_and_check
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper

from t10.driver import CHECK_TOLERANCES, CompileOptions, run_model
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.t10_dialects import rtensor


def pool_model(
    op: str, x: tuple[int, ...], outputs: tuple[str, ...] = ("y",), **attrs: object
) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], list(outputs), name="pool", **attrs)
    return float_model([node], {"x": list(x)}, list(outputs), [], opset=19)


POOLS: dict[str, tuple[str, tuple[int, ...], dict[str, object]]] = {
    # id: (op, x, attributes)
    "max 3x3/2 pad 1 (a ResNet stem)": ("MaxPool", (2, 3, 9, 8), {
        "kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "max no padding": ("MaxPool", (1, 2, 6, 6), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "max ceil_mode, dilations": ("MaxPool", (2, 2, 9, 7), {
        "kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1, "dilations": [1, 2]}),
    "max SAME_LOWER 1-D": ("MaxPool", (1, 2, 10), {
        "kernel_shape": [3], "strides": [2], "auto_pad": "SAME_LOWER"}),
    "max 3-D": ("MaxPool", (1, 2, 4, 5, 3), {"kernel_shape": [2, 2, 2], "pads": [1] * 6}),
    "average excluding pads": ("AveragePool", (2, 3, 8, 8), {
        "kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "average including pads": ("AveragePool", (2, 3, 8, 8), {
        "kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
        "count_include_pad": 1}),
    "average ceil_mode including pads": ("AveragePool", (2, 2, 9, 7), {
        "kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1, "pads": [1, 0, 0, 1],
        "count_include_pad": 1}),
    "average ceil_mode excluding pads": ("AveragePool", (2, 2, 9, 7), {
        "kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1, "pads": [1, 0, 0, 1]}),
    "average SAME_UPPER": ("AveragePool", (1, 2, 7, 6), {
        "kernel_shape": [3, 3], "auto_pad": "SAME_UPPER"}),
    "average uniform (one scalar divisor)": ("AveragePool", (2, 4, 6, 6), {
        "kernel_shape": [2, 3], "strides": [2, 3]}),
    "global average": ("GlobalAveragePool", (2, 3, 5, 4), {}),
    "global max": ("GlobalMaxPool", (2, 3, 5, 4), {}),
    "global average 1-D": ("GlobalAveragePool", (2, 3, 7), {}),
    "LRN size 3": ("LRN", (2, 5, 3, 4), {"size": 3, "alpha": 1e-3, "beta": 0.75, "bias": 1.0}),
    "LRN size 5 (AlexNet)": ("LRN", (1, 7, 4, 4), {"size": 5, "alpha": 1e-4, "beta": 0.75,
                                                   "bias": 2.0}),
}


def _pool(case: str) -> onnx.ModelProto:
    op, x, attrs = POOLS[case]
    return pool_model(op, x, **attrs)


@pytest.mark.parametrize("case", POOLS)
def test_pool_matches_onnxruntime(case: str, chip: str) -> None:
    run_and_check(_pool(case), chip, seed=1)


@pytest.mark.parametrize("case", ["max 3x3/2 pad 1 (a ResNet stem)",
                                  "average ceil_mode including pads", "global average",
                                  "LRN size 5 (AlexNet)"])
def test_pool_fp16_matches_onnxruntime(case: str, chip: str) -> None:
    result = run_model(
        _pool(case),
        CompileOptions(chip=chip, precision="fp16"),
        check=CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed


@st.composite
def _pools(draw: st.DrawFn) -> tuple[onnx.ModelProto, str]:
    rank = draw(st.integers(1, 3))
    op = draw(st.sampled_from(["MaxPool", "AveragePool"]))
    kernel = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    strides = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    ceil_mode = draw(st.booleans())
    dilations = draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank))
    if op == "AveragePool" and ceil_mode:  # onnxruntime: no dilated ceil-mode average
        dilations = [1] * rank
    # ONNX bounds a pad by the kernel (a window of padding only)
    pads = [draw(st.integers(0, k - 1)) for k in kernel * 2]
    size = [
        (k - 1) * d + 1 + draw(st.integers(0, 6 if rank < 3 else 2))
        for k, d in zip(kernel, dilations, strict=True)
    ]
    if ceil_mode:  # onnx's shape inference keeps a last window that starts past the input and
        # its padding before; onnxruntime and the ONNX reference drop it (so does t10)
        for n, k, d, st_, b, e in zip(size, kernel, dilations, strides, pads[:rank],
                                      pads[rank:], strict=True):
            count = -(-(n + b + e - (k - 1) * d - 1) // st_) + 1
            assume((count - 1) * st_ < n + b)
    attrs: dict[str, object] = {
        "kernel_shape": kernel, "strides": strides, "pads": pads, "ceil_mode": int(ceil_mode),
    }
    if op == "AveragePool":
        attrs["count_include_pad"] = int(draw(st.booleans()))
    if dilations != [1] * rank:
        attrs["dilations"] = dilations
    x = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *size)
    return pool_model(op, x, **attrs), draw(st.sampled_from(CHIPS))


@settings(max_examples=15)
@given(_pools())
def test_pool_property(case: tuple[onnx.ModelProto, str]) -> None:
    """Any rank, kernel, stride, dilation, padding and ceil_mode matches onnxruntime."""
    model, chip = case
    run_and_check(model, chip, seed=2)


def test_max_pool_imports_as_a_window_view_and_a_masked_max() -> None:
    module = import_onnx(_pool("max 3x3/2 pad 1 (a ResNet stem)"))
    views = [op for op in module.walk() if isinstance(op, rtensor.ViewOp)]
    assert len(views) == 1 and views[0].padded is not None
    assert tuple(views[0].results[0].type.get_shape()) == (2, 3, 5, 4, 3, 3)
    generics = [op for op in module.walk() if op.name == "linalg.generic"]
    assert len(generics) == 1
    body = [op.name for op in generics[0].regions[0].block.ops]
    assert body == ["arith.constant", "arith.cmpf", "arith.constant", "arith.select",
                    "arith.maximumf", "linalg.yield"]


def test_batch_normalization_alone_matches_onnxruntime(chip: str) -> None:
    rng = np.random.default_rng(0)
    names = ["scale", "B", "mean", "var"]
    values = [rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(3),
              rng.random(3) + 0.1]
    inits = [numpy_helper.from_array(v.astype(np.float32), n)
             for n, v in zip(names, values, strict=True)]
    node = helper.make_node("BatchNormalization", ["x", *names], ["y"], epsilon=1e-2)
    model = float_model([helper.make_node("Relu", ["x0"], ["x"]), node], {"x0": [2, 3, 4, 5]},
                        ["y"], inits)
    run_and_check(model, chip, seed=1)


def _with_indices(model: onnx.ModelProto) -> onnx.ModelProto:
    """The MaxPool's second output declared INT64, as exporters declare Indices."""
    model.graph.output[1].type.tensor_type.elem_type = onnx.TensorProto.INT64
    return model


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            _with_indices(pool_model("MaxPool", (1, 1, 4, 4), ("y", "i"), kernel_shape=[2, 2])),
            r"node 'pool' \(MaxPool\): the Indices output 'i' is not supported; t10 supports "
            "MaxPool with its output Y only",
        ),
        (
            pool_model("MaxPool", (1, 1, 4, 4), kernel_shape=[2, 2], storage_order=1),
            r"attribute storage_order=1 .* is not supported",
        ),
        (
            pool_model("AveragePool", (1, 1, 4, 4), kernel_shape=[3, 3], pads=[1, 1, 3, 1]),
            r"node 'pool' \(AveragePool\): pads before \[1, 1\] and after \[3, 1\] must be "
            r"smaller than kernel_shape \[3, 3\]",
        ),
        (
            pool_model("LRN", (1, 4, 2, 2), size=2),
            r"node 'pool' \(LRN\): size=2 over input shape \[1, 4, 2, 2\] is not supported; "
            "t10 supports LRN of an odd size",
        ),
    ],
    ids=["indices", "storage_order", "pads", "LRN even size"],
)
def test_bad_pools_are_clear_errors(model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(T10Error, match=message):
        import_onnx(model)


def test_batch_normalization_in_training_mode_is_a_clear_error() -> None:
    inits = [numpy_helper.from_array(np.ones(2, np.float32), n) for n in ("s", "b", "m", "v")]
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                            training_mode=1)
    model = float_model([node], {"x": [1, 2, 3]}, ["y", "rm", "rv"], inits, opset=15)
    with pytest.raises(T10Error, match=r"attribute training_mode=1 is not supported; t10 "
                       "supports BatchNormalization in inference mode"):
        import_onnx(model)
