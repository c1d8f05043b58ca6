"""Reductions end to end: ReduceSum / ReduceMean / ReduceMax, Softmax and LayerNormalization
compiled to the chip level, simulated, and checked against onnxruntime; and the padding of a
split reduction dim contributing the combiner's identity."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.linalg.ops import GenericOp

from t10.lowering.onnx_frontend import import_onnx
from t10.passes.plan import Plan
from t10.passes.t10_compile import pipeline
from t10.sim.chip_spec import load_chip
from t10.sim.simulator import SimResult, simulate
from t10.t10_dialects.rtensor import PlanAttr

CHIPS = ["test-16", "ipu-mk2"]
RTOL, ATOL = 1e-4, 1e-5


def _model(
    node: onnx.NodeProto,
    shape: list[int],
    opset: int = 20,
    weights: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "reduction",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for n, w in (weights or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def run_and_check(
    model: onnx.ModelProto, chip: str, x: np.ndarray, planner: str = "t10"
) -> SimResult:
    module = import_onnx(model)
    for p in pipeline(chip, planner, 0.5):
        p.apply(Context(), module)
    result = simulate(module, load_chip(chip), {"x": x})
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    np.testing.assert_allclose(result.outputs["y"], want, rtol=RTOL, atol=ATOL)
    return result


def _x(shape: list[int], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


REDUCE_CASES = {
    "sum-axis1-keep": ("ReduceSum", [7, 13, 5], [1], 1),
    "sum-axes02-drop": ("ReduceSum", [7, 13, 5], [0, 2], 0),
    "mean-last-keep": ("ReduceMean", [9, 31], [-1], 1),
    "mean-first-drop": ("ReduceMean", [9, 31], [0], 0),
    "max-axis1-keep": ("ReduceMax", [5, 37, 3], [1], 1),
    "max-axes01-drop": ("ReduceMax", [5, 37, 3], [0, 1], 0),
    "sum-all-keep": ("ReduceSum", [11, 17], [], 1),
}


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("case", sorted(REDUCE_CASES))
def test_reduce_matches_onnxruntime(case: str, chip: str) -> None:
    op_type, shape, axes, keepdims = REDUCE_CASES[case]
    weights = {"axes": np.asarray(axes, np.int64)} if axes else {}
    inputs = ["x", "axes"] if axes else ["x"]
    node = helper.make_node(op_type, inputs, ["y"], keepdims=keepdims)
    run_and_check(_model(node, shape, 20, weights), chip, _x(shape))


@pytest.mark.parametrize("chip", CHIPS)
def test_reduce_max_with_axes_attribute_opset13(chip: str) -> None:
    node = helper.make_node("ReduceMax", ["x"], ["y"], axes=[0, 2], keepdims=1)
    run_and_check(_model(node, [6, 4, 19], 13), chip, _x([6, 4, 19]))


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_matches_onnxruntime(axis: int, chip: str) -> None:
    node = helper.make_node("Softmax", ["x"], ["y"], axis=axis)
    run_and_check(_model(node, [37, 53]), chip, _x([37, 53]))


@pytest.mark.parametrize("chip", CHIPS)
def test_layer_norm_matches_onnxruntime(chip: str) -> None:
    rng = np.random.default_rng(1)
    weights = {
        "scale": rng.standard_normal(40).astype(np.float32),
        "bias": rng.standard_normal(40).astype(np.float32),
    }
    node = helper.make_node(
        "LayerNormalization", ["x", "scale", "bias"], ["y"], axis=-1, epsilon=1e-3
    )
    run_and_check(_model(node, [2, 5, 40], 17, weights), chip, _x([2, 5, 40]))


def test_max_over_padded_split_reduction_dim_ignores_padding() -> None:
    """Negative inputs, a reduction dim of 13 split over cores (padded tiles): zero padding
    would win the max; the kernels mask padded positions with -inf."""
    shape = [4, 13]
    node = helper.make_node("ReduceMax", ["x", "axes"], ["y"], keepdims=0)
    model = _model(node, shape, 20, {"axes": np.asarray([1], np.int64)})
    x = -1.0 - np.abs(_x(shape, seed=3))
    module = import_onnx(model)
    passes = pipeline("test-16", "t10", 0.5)
    passes[0].apply(Context(), module)
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    # pin a plan that splits the reduction dim 13 over 4 cores: tiles of 4, 3 padded elements
    generic.attributes["t10.plan"] = PlanAttr.from_plan(Plan((4, 4)))
    for p in passes[1:]:
        p.apply(Context(), module)
    result = simulate(module, load_chip("test-16"), {"x": x})
    np.testing.assert_allclose(result.outputs["y"], x.max(axis=1), rtol=RTOL)
