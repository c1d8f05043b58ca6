"""onnxruntime's contrib operators that its transformer optimizer writes (FastGelu, BiasGelu,
SkipLayerNormalization, SkipSimplifiedLayerNormalization of ``com.microsoft``, and
SimplifiedLayerNormalization of the default domain) against onnxruntime, with their optional
inputs given and left out; the outputs t10 does not compute are refused, named."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import randn
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CompileOptions, check_tolerance, compile_model, run_model
from t10.errors import T10Error

MS = "com.microsoft"
OPTIONS = CompileOptions(chip="test-16")


def contrib_model(
    node: onnx.NodeProto,
    inputs: dict[str, tuple[int, ...]],
    outputs: dict[str, tuple[int, ...]],
    weights: dict[str, np.ndarray],
) -> onnx.ModelProto:
    """A model of ``node`` alone: FLOAT graph inputs and outputs (name → shape), weights as
    initializers; opsets: the default domain's 17 and ``com.microsoft``'s 1."""
    graph = helper.make_graph(
        [node],
        "contrib",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 9
    return model


def assert_matches_onnxruntime(model: onnx.ModelProto) -> None:
    result = run_model(model, OPTIONS, check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
"""Tiny shapes of rank 1 to 3."""

token_shapes = st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple)
"""(tokens, hidden) or (batch, sequence, hidden): the ranks onnxruntime's skip norms take."""


@settings(max_examples=15, deadline=None)
@given(shape=shapes, op=st.sampled_from(["FastGelu", "BiasGelu", "Gelu"]), biased=st.booleans())
def test_gelus_of_input_plus_bias(shape: tuple[int, ...], op: str, biased: bool) -> None:
    """FastGelu (tanh approximation) and BiasGelu (erf) of X + bias, the bias 1-D along the
    last axis (FastGelu's optional), and Gelu (erf, no bias) of com.microsoft."""
    biased = op == "BiasGelu" or (biased and op == "FastGelu")
    weights = {"bias": randn(shape[-1], seed=1)} if biased else {}
    node = helper.make_node(op, ["x", *weights], ["y"], domain=MS)
    assert_matches_onnxruntime(contrib_model(node, {"x": shape}, {"y": shape}, weights))


@settings(max_examples=15, deadline=None)
@given(shape=token_shapes, beta=st.booleans(), bias=st.booleans(), summed=st.booleans(),
       broadcast_skip=st.booleans())
def test_skip_layer_normalization(
    shape: tuple[int, ...], beta: bool, bias: bool, summed: bool, broadcast_skip: bool
) -> None:
    """LayerNorm over the last axis of input + skip (+ bias) · gamma (+ beta); the sum is
    output 3 when requested; a skip of the input's trailing dims broadcasts."""
    hidden = shape[-1]
    weights = {"gamma": 1 + 0.1 * randn(hidden, seed=2)}
    if beta:
        weights["beta"] = randn(hidden, seed=3)
    if bias:
        weights["bias"] = randn(hidden, seed=4)
    skip = shape[1:] if broadcast_skip and len(shape) == 3 else shape
    outputs = {"y": shape, **({"sum": shape} if summed else {})}
    node = helper.make_node(
        "SkipLayerNormalization",
        ["x", "skip", "gamma", "beta" if beta else "", "bias" if bias else ""],
        ["y", "", "", "sum" if summed else ""],
        domain=MS,
        epsilon=1e-5,
    )
    assert_matches_onnxruntime(contrib_model(node, {"x": shape, "skip": skip}, outputs, weights))


@settings(max_examples=15, deadline=None)
@given(shape=token_shapes, bias=st.booleans(), summed=st.booleans())
def test_skip_simplified_layer_normalization(
    shape: tuple[int, ...], bias: bool, summed: bool
) -> None:
    """RMSNorm over the last axis of input + skip (+ bias) · gamma; the default epsilon
    (onnxruntime's 1e-12)."""
    hidden = shape[-1]
    weights = {"gamma": 1 + 0.1 * randn(hidden, seed=2)}
    if bias:
        weights["bias"] = randn(hidden, seed=4)
    outputs = {"y": shape, **({"sum": shape} if summed else {})}
    node = helper.make_node(
        "SkipSimplifiedLayerNormalization",
        ["x", "skip", *weights],
        ["y", "", "", "sum"] if summed else ["y"],
        domain=MS,
    )
    assert_matches_onnxruntime(contrib_model(node, {"x": shape, "skip": shape}, outputs, weights))


@settings(max_examples=15, deadline=None)
@given(shape=shapes, data=st.data())
def test_simplified_layer_normalization(shape: tuple[int, ...], data: st.DataObject) -> None:
    """RMSNorm over the dims from ``axis`` on, · scale: onnxruntime's default-domain
    extension, which ONNX's checker knows once t10 gives it onnxruntime's schema."""
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    weights = {"scale": 1 + 0.1 * randn(*shape[axis:], seed=2)}
    node = helper.make_node(
        "SimplifiedLayerNormalization", ["x", "scale"], ["y"], axis=axis, epsilon=1e-4
    )
    assert_matches_onnxruntime(contrib_model(node, {"x": shape}, {"y": shape}, weights))


def test_skip_norm_then_default_domain_ops() -> None:
    """A contrib node's result, which ONNX's shape inference leaves unknown, read by default
    domain ops (its shape is the lowering's)."""
    weights = {"gamma": 1 + 0.1 * randn(4, seed=2), "bias": randn(4, seed=3)}
    graph = helper.make_graph(
        [
            helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma"], ["n"], domain=MS),
            helper.make_node("FastGelu", ["n", "bias"], ["g"], domain=MS),
            helper.make_node("Add", ["g", "x"], ["y"]),
        ],
        "block",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3, 4]) for n in ("x", "skip")],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    )
    model.ir_version = 9
    assert_matches_onnxruntime(model)


@pytest.mark.parametrize(
    ("op", "domain", "outputs", "refused"),
    [
        ("SkipLayerNormalization", MS, ["y", "mean"], r"mean \('mean'\)"),
        ("SkipLayerNormalization", MS, ["y", "", "inv"], r"inv_std_var \('inv'\)"),
        ("SkipSimplifiedLayerNormalization", MS, ["y", "mean", "inv"],
         r"mean \('mean'\), inv_std_var \('inv'\)"),
        ("SimplifiedLayerNormalization", "", ["y", "inv"], r"inv_std_var \('inv'\)"),
    ],
)
def test_training_outputs_are_refused_by_name(
    op: str, domain: str, outputs: list[str], refused: str
) -> None:
    inputs = ["x", "skip", "gamma"] if "Skip" in op else ["x", "gamma"]
    node = helper.make_node(op, inputs, outputs, name="norm", domain=domain)
    shapes = {"y": (2, 4), "mean": (2, 1), "inv": (2, 1)}
    model = contrib_model(
        node,
        {n: (2, 4) for n in inputs if n != "gamma"},
        {n: shapes[n] for n in outputs if n},
        {"gamma": randn(4, seed=2)},
    )
    with pytest.raises(
        T10Error,
        match=rf"node 'norm' \({op}\): it requests its output\(s\) {refused}, which t10 does "
        r"not compute \(it computes [\w, ]+\): leave them out of the node",
    ):
        compile_model(model, OPTIONS)


def test_a_bias_not_along_the_last_axis_is_refused() -> None:
    node = helper.make_node("BiasGelu", ["x", "bias"], ["y"], name="gelu", domain=MS)
    model = contrib_model(node, {"x": (2, 4)}, {"y": (2, 4)}, {"bias": randn(2, 4)})
    with pytest.raises(T10Error, match=r"node 'gelu' \(BiasGelu\): the bias 'bias' has shape "
                                       r"\[2, 4\]; it must hold one value per index of the last "
                                       r"axis of the input \(shape \[2, 4\]\): shape \[4\]"):
        compile_model(model, OPTIONS)


def test_a_missing_required_input_is_refused() -> None:
    node = helper.make_node("BiasGelu", ["x"], ["y"], name="gelu", domain=MS)
    model = contrib_model(node, {"x": (2, 4)}, {"y": (2, 4)}, {})
    with pytest.raises(T10Error, match=r"node 'gelu' \(BiasGelu\): its required input\(s\) B "
                                       "are missing: give the node its inputs A, B"):
        compile_model(model, OPTIONS)


def test_an_output_beyond_the_schema_is_refused() -> None:
    node = helper.make_node("FastGelu", ["x"], ["y", "z"], name="gelu", domain=MS)
    model = contrib_model(node, {"x": (2, 4)}, {"y": (2, 4), "z": (2, 4)}, {})
    with pytest.raises(T10Error, match=r"node 'gelu' \(FastGelu\): it has 2 outputs; FastGelu "
                                       r"has at most 1 \(Y\): remove the others"):
        compile_model(model, OPTIONS)


def test_a_simplified_layer_normalization_of_constants_runs_on_chip() -> None:
    """onnx's reference evaluator has no SimplifiedLayerNormalization, so a node of constants
    is not evaluated at import time but lowered (it once failed to fold)."""
    norm = helper.make_node("SimplifiedLayerNormalization", ["c", "scale"], ["n"], axis=-1)
    add = helper.make_node("Add", ["n", "a"], ["y"])
    weights = {"c": randn(2, 4, seed=3), "scale": 1 + 0.1 * randn(4, seed=4)}
    graph = helper.make_graph(
        [norm, add], "constants",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, (2, 4))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (2, 4))],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    assert_matches_onnxruntime(model)
