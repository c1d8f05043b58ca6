"""The numerical reference (`t10.reference`) computes what the ONNX graph says.

Regression: `x + Relu(x)` then `LayerNormalization(axis=-2)` on [2, 16, 64] failed `t10 run
--check` with a max abs error ~1 although the simulator was right: onnxruntime's default graph
optimizations fuse the `Add` and the `LayerNormalization` into a `SkipLayerNormalization`,
which normalizes over the last axis only. The reference runs onnxruntime without them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from t10.driver import CHECK_TOLERANCES, CompileOptions, run_model
from t10.reference import reference_outputs, reference_session
from t10.tools.cli import main

SHAPE = [2, 16, 64]


def _residual_layer_norm(axis: int) -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    """`y = LayerNormalization(x + Relu(x), g, b, axis)`: the pattern onnxruntime fuses."""
    rng = np.random.default_rng(0)
    g = rng.standard_normal(SHAPE[-1]).astype(np.float32)
    b = rng.standard_normal(SHAPE[-1]).astype(np.float32)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Add", ["x", "r"], ["a"]),
        helper.make_node("LayerNormalization", ["a", "g", "b"], ["y"], axis=axis),
    ]
    graph = helper.make_graph(
        nodes,
        "residual_layer_norm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(g, "g"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model, g, b


def _layer_norm_by_spec(x: np.ndarray, g: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    a = (x + np.maximum(x, 0)).astype(np.float64)
    axes = tuple(range(axis % a.ndim, a.ndim))
    centred = a - a.mean(axis=axes, keepdims=True)
    std = np.sqrt((centred**2).mean(axis=axes, keepdims=True) + 1e-5)
    return centred / std * g + b


@pytest.mark.parametrize("axis", [-2, -1])
def test_reference_follows_the_onnx_spec_not_a_fusion(axis: int) -> None:
    model, g, b = _residual_layer_norm(axis)
    x = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    want = _layer_norm_by_spec(x, g, b, axis)
    got = reference_outputs(model, {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    (spec,) = ReferenceEvaluator(model).run(None, {"x": x})
    np.testing.assert_allclose(got, spec, rtol=1e-5, atol=1e-5)


def test_residual_layer_norm_over_two_axes_passes_check(chip: str, tmp_path: Path) -> None:
    model, g, b = _residual_layer_norm(-2)
    path = tmp_path / "residual_layer_norm.onnx"
    onnx.save(model, path)
    result = run_model(str(path), CompileOptions(chip=chip), check=CHECK_TOLERANCES["fp32"])
    assert result.check is not None and result.check.passed
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)  # run's seed 0
    want = _layer_norm_by_spec(x, g, b, -2)
    np.testing.assert_allclose(result.outputs["y"], want, rtol=1e-4, atol=1e-5)
    assert main(["run", str(path), "--chip", chip, "--check"]) == 0


def test_reference_runs_no_graph_optimization() -> None:
    """Any onnxruntime rewrite may change the semantics (as SkipLayerNormFusion does): none runs."""
    model, _, _ = _residual_layer_norm(-2)
    options = reference_session(model).get_session_options()
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL


def test_tests_compare_with_the_reference_only() -> None:
    """Every unit test reads onnxruntime through `t10.reference`, never a session of its own
    (whose default graph optimizations would be the oracle)."""
    here = Path(__file__)
    direct = [
        p.name
        for p in sorted(here.parent.glob("*.py"))
        if p != here and "InferenceSession(" in p.read_text()
    ]
    assert direct == [], f"use t10.reference.reference_session in {direct}"
