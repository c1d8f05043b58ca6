"""Gather, GatherElements and GatherND of known indices that are not affine in their position
(DeBERTa's relative positions, permutations, repeats): a gather of constant ids, matching
onnxruntime, also in timing-only simulation (the ids stay values there: they decide the
traffic), and estimated as simulated (the plan search reads the known ids)."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CompileOptions, check_tolerance, run_model

OPTIONS = CompileOptions(chip="test-16")


def _model(nodes: list[onnx.NodeProto], x: list[int], weights: dict[str, np.ndarray],
           opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "known_gather",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def _assert_matches(model: onnx.ModelProto) -> None:
    result = run_model(model, OPTIONS, check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check
    timing = run_model(model, OPTIONS, timing_only=True)
    assert timing.report.total_cycles == result.report.total_cycles
    # the plan search counts the known ids as the simulator moves them
    assert result.report.estimated_total_cycles == result.report.total_cycles


table_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@st.composite
def known_gathers(draw: st.DrawFn) -> tuple[onnx.NodeProto, tuple[int, ...], np.ndarray]:
    """A gather node of one kind over a random table with random in-range known indices
    (negative ones included), and its table shape."""
    table = draw(table_shapes)
    kind = draw(st.sampled_from(["Gather", "GatherElements", "GatherND"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    rank = len(table)
    if kind == "GatherND":
        batch = draw(st.integers(0, rank - 1))
        q = draw(st.integers(1, rank - batch))
        lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
        sizes = np.array(table[batch:batch + q])
        ids = rng.integers(-sizes, sizes, size=(*table[:batch], *lead, q))
        return helper.make_node(kind, ["x", "i"], ["y"], batch_dims=batch), table, ids
    axis = draw(st.integers(-rank, rank - 1))
    size = table[axis]
    if kind == "Gather":
        shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2))
    else:
        shape = [draw(st.integers(1, s)) if d != axis % rank else draw(st.integers(1, 4))
                 for d, s in enumerate(table)]
    ids = rng.integers(-size, size, size=shape)
    return helper.make_node(kind, ["x", "i"], ["y"], axis=axis), table, ids


@settings(max_examples=25, deadline=None)
@given(case=known_gathers())
def test_known_indices_gather_as_onnxruntime_does(
    case: tuple[onnx.NodeProto, tuple[int, ...], np.ndarray],
) -> None:
    node, table, ids = case
    relu = helper.make_node("Relu", ["y"], ["z"])  # a reader: the gather is not an output
    model = _model([node, relu], list(table), {"i": ids})
    model.graph.output[0].name = "z"
    _assert_matches(model)


def test_deberta_relative_position_gather() -> None:
    """DeBERTa-v2's content-to-position scores: ``c2p[h, i, j] = scores[h, i, clip(i - j + k,
    0, 2k - 1)]``, its indices computed from Range / Sub / Clip of constants (folded) and
    expanded over the heads, then gathered along the last axis (GatherElements)."""
    heads, seq, span = 2, 5, 3
    i64 = np.int64
    weights = {
        "start": np.array(0, i64), "limit": np.array(seq, i64), "one": np.array(1, i64),
        "span": np.array(span, i64), "zero": np.array(0, i64),
        "top": np.array(2 * span - 1, i64), "ax0": np.array([0], i64), "ax1": np.array([1], i64),
        "shape": np.array([1, heads, seq, seq], i64),
    }
    nodes = [
        helper.make_node("Range", ["start", "limit", "one"], ["pos"]),
        helper.make_node("Unsqueeze", ["pos", "ax1"], ["rows"]),
        helper.make_node("Unsqueeze", ["pos", "ax0"], ["cols"]),
        helper.make_node("Sub", ["rows", "cols"], ["rel"]),
        helper.make_node("Add", ["rel", "span"], ["shifted"]),
        helper.make_node("Clip", ["shifted", "zero", "top"], ["clipped"]),
        helper.make_node("Expand", ["clipped", "shape"], ["index"]),
        helper.make_node("GatherElements", ["x", "index"], ["c2p"], axis=-1),
        helper.make_node("Softmax", ["c2p"], ["y"], axis=-1),
    ]
    _assert_matches(_model(nodes, [1, heads, seq, 2 * span], weights))
