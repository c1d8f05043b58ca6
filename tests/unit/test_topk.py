"""TopK on runtime values against onnxruntime: largest and smallest, any axis and k, ties (by
position), NaN (above every number) and infinities, k as an input or (opset 9) an attribute,
integer inputs; sorted = 0 and k beyond the axis refused."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CompileOptions, check_tolerance, run_model
from t10.errors import T10Error

OPTIONS = CompileOptions(chip="test-16")


def topk_model(shape: tuple[int, ...], k: int, axis: int, largest: int = 1, opset: int = 17,
               elem: int = TensorProto.FLOAT, sorted_: int = 1) -> onnx.ModelProto:
    attrs = {"axis": axis, **({"largest": largest, "sorted": sorted_} if opset >= 11 else {})}
    if opset < 10:
        node = helper.make_node("TopK", ["x"], ["v", "i"], k=k, **attrs)
        weights = []
    else:
        node = helper.make_node("TopK", ["x", "k"], ["v", "i"], **attrs)
        weights = [numpy_helper.from_array(np.array([k], np.int64), "k")]
    graph = helper.make_graph(
        [node], "topk",
        [helper.make_tensor_value_info("x", elem, list(shape))],
        [helper.make_tensor_value_info("v", elem, None),
         helper.make_tensor_value_info("i", TensorProto.INT64, None)],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


@st.composite
def topk_cases(draw: st.DrawFn) -> tuple[onnx.ModelProto, np.ndarray]:
    """A TopK over random small shapes whose values repeat (ties) and may be NaN or ±inf."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    opset = draw(st.sampled_from([9, 10, 11, 17, 24]))
    k = draw(st.integers(0 if opset >= 10 else 1, shape[axis]))  # opset 9: k >= 1
    largest = draw(st.integers(0, 1))
    pool = draw(st.lists(st.sampled_from([-2.0, -0.0, 0.0, 1.5, 3.0, np.nan, np.inf, -np.inf]),
                         min_size=1, max_size=4))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.choice(np.array(pool, np.float32), size=shape)
    return topk_model(shape, k, axis, largest, opset), x


@settings(max_examples=60, deadline=None)
@given(case=topk_cases())
def test_topk_orders_as_onnxruntime(case: tuple[onnx.ModelProto, np.ndarray]) -> None:
    model, x = case
    result = run_model(model, OPTIONS, inputs={"x": x}, check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check
    assert result.outputs["i"].dtype == np.int64


def test_topk_of_integers_and_one_output() -> None:
    """int64 values (a declared range) come out exact; the indices may be the only output
    read."""
    x = np.array([[7, -3, 7, 2], [0, 5, 5, -1]], np.int64)
    model = topk_model((2, 4), 3, 1, elem=TensorProto.INT64)
    result = run_model(model, OPTIONS, inputs={"x": x}, input_ranges={"x": (-10, 10)},
                       check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check
    np.testing.assert_array_equal(result.outputs["v"], [[7, 7, 2], [5, 5, 0]])
    indices_only = topk_model((2, 4), 2, -1)
    del indices_only.graph.output[0]
    result = run_model(indices_only, OPTIONS, check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check


def computed_k(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its k computed at import (k + 0), which shape inference does not see."""
    model.graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64), "zero"))
    model.graph.node.insert(0, helper.make_node("Add", ["k", "zero"], ["k_sum"]))
    model.graph.node[1].input[1] = "k_sum"
    return model


@pytest.mark.parametrize(("model", "message"), [
    (topk_model((2, 4), 2, 1, sorted_=0), r"sorted = 0 leaves the order .* export with sorted = 1"),
    (computed_k(topk_model((2, 4), 5, 1)), r"k = 5 must lie in \[0, 4\], the size of axis 1"),
])
def test_topk_refusals_name_the_node(model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(T10Error, match=r"node 'TopK_\d' \(TopK\): " + message):
        run_model(model, OPTIONS)
