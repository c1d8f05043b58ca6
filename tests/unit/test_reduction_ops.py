"""Reductions end to end: ReduceSum / ReduceMean / ReduceMax, the norms (ReduceL1, ReduceL2,
ReduceSumSquare, ReduceLogSum, ReduceLogSumExp), Softmax and LayerNormalization
compiled to the chip level, simulated, and checked against onnxruntime; and the padding of a
split reduction dim contributing the combiner's identity."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import run_and_check
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp

from t10.common.chip_spec import load_chip
from t10.common.plans import Plan
from t10.common.tensor_expr import ExprKind, linalg_tensor_expr
from t10.driver import CompileOptions, run_passes
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.lowering.convert_linalg_to_rtensor import ConvertLinalgToRTensor
from t10.passes.t10_compile import pipeline
from t10.sim.simulator import simulate
from t10.t10_dialects.parsing import Parser
from t10.t10_dialects.rtensor import PlanAttr
from t10.universe import DIALECTS

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


@pytest.mark.parametrize("case", sorted(REDUCE_CASES))
def test_reduce_matches_onnxruntime(case: str, chip: str) -> None:
    op_type, shape, axes, keepdims = REDUCE_CASES[case]
    weights = {"axes": np.asarray(axes, np.int64)} if axes else {}
    inputs = ["x", "axes"] if axes else ["x"]
    node = helper.make_node(op_type, inputs, ["y"], keepdims=keepdims)
    run_and_check(_model(node, shape, 20, weights), chip, {"x": _x(shape)})


ALL_REDUCES = (
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceL1",
    "ReduceL2",
    "ReduceSumSquare",
    "ReduceLogSum",
    "ReduceLogSumExp",
)


@given(
    op=st.sampled_from(ALL_REDUCES),
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    axes_bits=st.integers(0, 7),
    keepdims=st.integers(0, 1),
    noop=st.integers(0, 1),
    special=st.sampled_from([None, -np.inf, np.inf, np.nan]),
)
def test_reductions_match_onnxruntime(
    op: str, shape: list[int], axes_bits: int, keepdims: int, noop: int, special: float | None
) -> None:
    """Every Reduce* op, any shape, axes subset, keepdims and noop_with_empty_axes (no axes:
    all, or with noop each element alone); log-sum-exp of a row of -inf (or with +inf or NaN
    in it) as onnxruntime computes it. A rank-0 result is refused, so it is not drawn."""
    axes = [a for a in range(len(shape)) if axes_bits >> a & 1]
    if len(axes) == len(shape) or not (axes or noop):
        keepdims = 1  # all axes reduced
    weights = {"axes": np.asarray(axes, np.int64)} if axes else {}
    inputs = ["x", "axes"] if axes else ["x"]
    node = helper.make_node(op, inputs, ["y"], keepdims=keepdims, noop_with_empty_axes=noop)
    x = _x(shape, seed=len(shape))
    if op == "ReduceLogSum":
        x = np.abs(x) + np.float32(0.1)  # a sum <= 0 has no log
    if special is not None:
        x[(0,) * len(shape)] = special
        if op == "ReduceLogSumExp" and special == -np.inf:
            x[(0,) * (len(shape) - 1)] = -np.inf  # a whole last-axis row
    run_and_check(_model(node, shape, 18, weights), "test-16", {"x": x})


@given(
    op=st.sampled_from(["ArgMax", "ArgMin"]),
    shape=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    axis_draw=st.integers(0, 5),
    keepdims=st.integers(0, 1),
    last=st.integers(0, 1),
    nan_cells=st.lists(st.integers(0, 215), max_size=6),
)
def test_arg_extremes_match_onnxruntime(
    op: str, shape: list[int], axis_draw: int, keepdims: int, last: int, nan_cells: list[int]
) -> None:
    """Any shape, axis (negative too), keepdims and select_last_index; values with ties (few
    distinct values) and NaN anywhere, a NaN first element included: onnxruntime's positions
    exactly (INT64)."""
    rank = len(shape)
    axis = axis_draw % (2 * rank) - rank
    if keepdims == 0 and rank == 1:
        keepdims = 1  # a rank-0 result is refused
    x = np.round(_x(shape, seed=rank) * 1.5).astype(np.float32)
    flat = x.reshape(-1)
    flat[[c % flat.size for c in nan_cells]] = np.nan
    node = helper.make_node(op, ["x"], ["y"], axis=axis, keepdims=keepdims,
                            select_last_index=last)
    graph = helper.make_graph(
        [node],
        "arg",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    checked = run_and_check(model, "test-16", {"x": x})
    assert checked.result.outputs["y"].dtype == np.int64


def test_reduce_max_with_axes_attribute_opset13(chip: str) -> None:
    node = helper.make_node("ReduceMax", ["x"], ["y"], axes=[0, 2], keepdims=1)
    run_and_check(_model(node, [6, 4, 19], 13), chip, {"x": _x([6, 4, 19])})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_matches_onnxruntime(axis: int, chip: str) -> None:
    node = helper.make_node("Softmax", ["x"], ["y"], axis=axis)
    run_and_check(_model(node, [37, 53]), chip, {"x": _x([37, 53])})


def test_layer_norm_matches_onnxruntime(chip: str) -> None:
    rng = np.random.default_rng(1)
    weights = {
        "scale": rng.standard_normal(40).astype(np.float32),
        "bias": rng.standard_normal(40).astype(np.float32),
    }
    node = helper.make_node(
        "LayerNormalization", ["x", "scale", "bias"], ["y"], axis=-1, epsilon=1e-3
    )
    run_and_check(_model(node, [2, 5, 40], 17, weights), chip, {"x": _x([2, 5, 40])})


def test_max_over_padded_split_reduction_dim_ignores_padding() -> None:
    """Negative inputs, a reduction dim of 13 split over cores (padded tiles): zero padding
    would win the max; the kernels mask padded positions with -inf."""
    shape = [4, 13]
    node = helper.make_node("ReduceMax", ["x", "axes"], ["y"], keepdims=0)
    model = _model(node, shape, 20, {"axes": np.asarray([1], np.int64)})
    x = -1.0 - np.abs(_x(shape, seed=3))
    module = import_onnx(model)
    plan_search, *lowering = pipeline(CompileOptions(chip="test-16", fuse=False))
    run_passes(module, [plan_search])
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    # pin a plan that splits the reduction dim 13 over 4 cores: tiles of 4, 3 padded elements
    generic.attributes["t10.plan"] = PlanAttr.from_plan(Plan((4, 4)))
    run_passes(module, lowering)
    result = simulate(module, load_chip("test-16"), {"x": x})
    np.testing.assert_allclose(result.outputs["y"], x.max(axis=1), rtol=RTOL)


REDUCE_IR = """
func.func @main(%x: tensor<4x6xf32>) -> tensor<4xf32> {{
  %init = arith.constant dense<{init}> : tensor<4xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
      affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}}
      ins(%x : tensor<4x6xf32>) outs(%init : tensor<4xf32>)
      attrs = {{t10.name = "r", t10.plan = #rtensor.plan<grid [2, 2]>}} {{
  ^bb0(%a: f32, %acc: f32):
    {body}
  }} -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}}
"""


def _reduce_module(init: str, body: str) -> ModuleOp:
    ctx = Context()
    for name, factory in {**get_all_dialects(), **DIALECTS}.items():
        ctx.register_dialect(name, factory)
    return Parser(ctx, REDUCE_IR.format(init=init, body=body)).parse_module()


MAX_BODY = (
    "%e = math.exp %a : f32\n    %m = arith.maximumf %acc, %e : f32\n    linalg.yield %m : f32"
)


def test_reduction_expression_kind_and_combiner() -> None:
    module = _reduce_module("0.0", MAX_BODY)
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    expr = linalg_tensor_expr(generic)
    assert expr.kind is ExprKind.REDUCTION and expr.combiner == "max" and not expr.relu_like


def test_reduction_init_must_be_the_identity() -> None:
    module = _reduce_module("0.0", MAX_BODY)
    with pytest.raises(T10Error, match="a max reduction must accumulate into a splat constant"):
        ConvertLinalgToRTensor().apply(Context(), module)


def test_accumulator_read_by_f_is_not_a_reduction() -> None:
    body = (
        "%s = arith.mulf %a, %acc : f32\n    %m = arith.addf %acc, %s : f32\n"
        "    linalg.yield %m : f32"
    )
    module = _reduce_module("0.0", body)
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    with pytest.raises(T10Error, match="reductions combine"):
        linalg_tensor_expr(generic)


def test_reduce_axes_must_be_one_dimensional() -> None:
    """onnxruntime refuses a Reduce* whose axes input is not a 1-D tensor (when it runs the
    node): so does the import."""
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum")], "axes2d",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([[1]], np.int64), "axes")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    with pytest.raises(T10Error, match=r"node 'sum' \(ReduceSum\): its axes input 'axes' has "
                                       r"shape \[1, 1\]; it must be a 1-D tensor"):
        import_onnx(model)
