"""InstanceNormalization, GroupNormalization (opset 21), RMSNormalization (opset 23),
LpNormalization and MeanVarianceNormalization against onnxruntime, in fp32 on both chips and in
fp16, after a Conv as in U-Nets and style-transfer networks."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import randn, run_and_check
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CHECK_TOLERANCES, CompileOptions, compile_model, run_model
from t10.errors import T10Error

node = helper.make_node


def conv_then(norm: onnx.NodeProto, weights: dict[str, np.ndarray], opset: int) -> onnx.ModelProto:
    """x [2, 3, 6, 5] → Conv to 8 channels → ``norm`` (reading ``c``, writing ``y``)."""
    graph = helper.make_graph(
        [node("Conv", ["x", "k"], ["c"], pads=[1, 1, 1, 1]), norm],
        "norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8, 6, 5])],
        [numpy_helper.from_array(w, n)
         for n, w in {"k": randn(8, 3, 3, 3, seed=1), **weights}.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def instance_norm() -> onnx.ModelProto:
    return conv_then(
        node("InstanceNormalization", ["c", "scale", "bias"], ["y"], epsilon=1e-3),
        {"scale": 1 + randn(8, seed=2) * 0.1, "bias": randn(8, seed=3)},
        17,
    )


def group_norm(groups: int = 4) -> onnx.ModelProto:
    return conv_then(
        node("GroupNormalization", ["c", "scale", "bias"], ["y"], num_groups=groups),
        {"scale": 1 + randn(8, seed=2) * 0.1, "bias": randn(8, seed=3)},
        21,
    )


def rms_norm(axis: int = -1) -> onnx.ModelProto:
    model = conv_then(
        node("RMSNormalization", ["c", "scale"], ["y"], axis=axis, epsilon=1e-4),
        {"scale": 1 + randn(*[2, 8, 6, 5][axis:], seed=2) * 0.1},
        23,
    )
    model.ir_version = 10
    return model


def lp_norm(p: int, axis: int) -> onnx.ModelProto:
    return conv_then(node("LpNormalization", ["c"], ["y"], p=p, axis=axis), {}, 17)


def mean_variance_norm(axes: list[int]) -> onnx.ModelProto:
    """(ONNX's shape inference fails on the default axes: its function body's Constant then
    has no value.)"""
    return conv_then(node("MeanVarianceNormalization", ["c"], ["y"], axes=axes), {}, 17)


MODELS = {
    "instance": instance_norm,
    "group": group_norm,
    "one-group": lambda: group_norm(groups=1),
    "group-per-channel": lambda: group_norm(groups=8),
    "rms": rms_norm,
    "rms-from-channels": lambda: rms_norm(axis=1),
    "l1-channels": lambda: lp_norm(1, 1),
    "l2-last": lambda: lp_norm(2, -1),
    "mvn": lambda: mean_variance_norm([0, 2, 3]),
    "mvn-spatial": lambda: mean_variance_norm([2, 3]),
}


@pytest.mark.parametrize("name", MODELS)
def test_normalizations_match_onnxruntime(name: str, chip: str) -> None:
    run_and_check(MODELS[name](), chip)


@pytest.mark.parametrize("name", ["instance", "group", "rms", "l2-last", "mvn"])
def test_normalizations_in_fp16_match_onnxruntime(name: str) -> None:
    result = run_model(
        MODELS[name](),
        CompileOptions(chip="ipu-mk2", precision="fp16"),
        check=CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed, result.check


def test_lp_normalization_of_a_zero_line_is_zero(chip: str) -> None:
    """A line whose norm is 0 normalises to 0 (onnxruntime), not NaN."""
    x = randn(2, 3, 6, 5)
    x[1, :, 2, :] = 0.0  # the Conv of a zero image row is not zero: normalise x itself
    graph = helper.make_graph(
        [node("LpNormalization", ["x"], ["y"], p=2, axis=1)],
        "lp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 6, 5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    result = run_and_check(model, chip, {"x": x}).result
    assert not np.isnan(result.outputs["y"]).any()


def test_lp_normalization_p_must_be_1_or_2() -> None:
    with pytest.raises(T10Error, match=r"\(LpNormalization\): p = 3 is not a norm ONNX "
                                       "defines: p must be 1 or 2"):
        compile_model(lp_norm(3, 1), CompileOptions(chip="test-16"))


def test_groups_must_divide_the_channels() -> None:
    with pytest.raises(T10Error, match=r"num_groups 3 must divide the channels of an "
                                       r"\[N, C, D1, \.\.\.\] input, got \[2, 8, 6, 5\]"):
        compile_model(group_norm(groups=3), CompileOptions(chip="test-16"))
