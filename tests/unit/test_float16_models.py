"""FLOAT16-typed models (graph inputs, outputs, weights and values in fp16, as onnxruntime's fp16
converter writes them) compile at fp16 storage and match onnxruntime running the fp16 model;
fp32 storage refuses them; nodes out of topological order (which that converter writes) are
put in order."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import DATA
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.transformers.float16 import convert_float_to_float16

from t10.driver import CompileOptions, check_tolerance, run_model
from t10.errors import T10Error

FP16 = CompileOptions(chip="test-16", precision="fp16")


def fp16_mlp(batch: int, width: int, out: int, seed: int) -> onnx.ModelProto:
    """x (FLOAT16) → MatMul → Add bias → Relu → MatMul → Softmax → FLOAT16 output."""
    rng = np.random.default_rng(seed)
    weights = {
        "w1": rng.standard_normal((width, width)).astype(np.float16),
        "b1": rng.standard_normal(width).astype(np.float16),
        "w2": rng.standard_normal((width, out)).astype(np.float16),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Relu", ["hb"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "fp16_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [batch, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [batch, out])],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


@settings(max_examples=8, deadline=None)
@given(batch=st.integers(1, 4), width=st.integers(1, 9), out=st.integers(1, 5),
       seed=st.integers(0, 99))
def test_a_float16_model_matches_onnxruntime_running_it(
    batch: int, width: int, out: int, seed: int
) -> None:
    result = run_model(fp16_mlp(batch, width, out, seed), FP16, check=check_tolerance("fp16"))
    assert result.check is not None and result.check.passed, result.check
    assert result.outputs["y"].dtype == np.float16  # returned as the model's type


@pytest.mark.parametrize("keep_io_types", [False, True])
@pytest.mark.parametrize("export", ["hf_bert_ids_mask.torchscript.onnx",
                                    "attn_block.torchscript.onnx"])
def test_exports_converted_to_float16_match_onnxruntime(export: str, keep_io_types: bool) -> None:
    """A Hugging Face BERT and an attention block, converted by onnxruntime's fp16 converter
    with fp16 or (``keep_io_types``) float32 inputs and outputs; the latter also writes its
    nodes out of topological order."""
    model = convert_float_to_float16(onnx.load(DATA / export), keep_io_types=keep_io_types)
    options = CompileOptions(chip="ipu-mk2", precision="fp16")
    result = run_model(model, options, check=check_tolerance("fp16"))
    assert result.check is not None and result.check.passed, result.check


def test_float32_storage_refuses_computed_float16_values() -> None:
    with pytest.raises(T10Error, match=r"computes FLOAT16 values \('h' of node 'MatMul_0' "
                                       r"\(MatMul\)\).*--precision fp16"):
        run_model(fp16_mlp(2, 3, 2, 0), CompileOptions(chip="test-16"))


def test_float16_weights_cast_to_float_compile_at_float32() -> None:
    """FLOAT16 weights read through a Cast to FLOAT are known values, exact in float32: an
    fp32 model, compiled at fp32."""
    w = np.random.default_rng(1).standard_normal((3, 2)).astype(np.float16)
    graph = helper.make_graph(
        [helper.make_node("Cast", ["w16"], ["w"], to=TensorProto.FLOAT),
         helper.make_node("MatMul", ["x", "w"], ["y"])],
        "casted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        [numpy_helper.from_array(w, "w16")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    result = run_model(model, CompileOptions(chip="test-16"), check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check


def test_float16_inputs_are_given_as_float16() -> None:
    model = fp16_mlp(2, 3, 2, 0)
    with pytest.raises(T10Error, match=r"input 'x' has dtype float32, expected float16"):
        run_model(model, FP16, inputs={"x": np.zeros((2, 3), np.float32)})
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float16)
    result = run_model(model, FP16, inputs={"x": x}, check=check_tolerance("fp16"))
    assert result.check is not None and result.check.passed, result.check


def test_a_float16_model_simulates_timing_only() -> None:
    with_values = run_model(fp16_mlp(4, 8, 3, 0), FP16)
    timing = run_model(fp16_mlp(4, 8, 3, 0), FP16, timing_only=True)
    assert timing.outputs == {}
    assert timing.report.total_cycles == with_values.report.total_cycles


def test_nodes_out_of_order_are_sorted_and_a_cycle_is_named() -> None:
    """Nodes listed readers first run in the order their values allow; a cycle is the ONNX
    checker's error, named."""
    nodes = [helper.make_node("Relu", ["h"], ["y"]), helper.make_node("Neg", ["x"], ["h"])]
    graph = helper.make_graph(
        nodes, "unsorted",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    result = run_model(model, CompileOptions(chip="test-16"), check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check
    cyclic = onnx.ModelProto()
    cyclic.CopyFrom(model)
    cyclic.graph.node[1].input[0] = "y"
    with pytest.raises(T10Error, match=r"topologically sorted"):
        run_model(cyclic, CompileOptions(chip="test-16"))
