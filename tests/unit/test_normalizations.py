"""InstanceNormalization and GroupNormalization (opset 21) against onnxruntime, in
fp32 on both chips and in fp16, after a Conv as in U-Nets and style-transfer networks."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import randn, run_and_check
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CHECK_TOLERANCES, compile_model, run_model
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


MODELS = {
    "instance": instance_norm,
    "group": group_norm,
    "one-group": lambda: group_norm(groups=1),
    "group-per-channel": lambda: group_norm(groups=8),
}


@pytest.mark.parametrize("name", MODELS)
def test_normalizations_match_onnxruntime(name: str, chip: str) -> None:
    run_and_check(MODELS[name](), chip)


@pytest.mark.parametrize("name", ["instance", "group"])
def test_normalizations_in_fp16_match_onnxruntime(name: str) -> None:
    result = run_model(MODELS[name](), "ipu-mk2", precision="fp16",
                       check=CHECK_TOLERANCES["fp16"])
    assert result.check is not None and result.check.passed, result.check


def test_groups_must_divide_the_channels() -> None:
    with pytest.raises(T10Error, match=r"num_groups 3 must divide the channels of an "
                                       r"\[N, C, D1, \.\.\.\] input, got \[2, 8, 6, 5\]"):
        compile_model(group_norm(groups=3), "test-16")
