"""ScatterElements (and its older name Scatter) and ScatterND on runtime indices against
onnxruntime: every reduction t10 computes (none: the last write wins; add; max and min, NaN as
onnxruntime folds them), duplicate and negative indices, updates smaller than the data; indices
of unproven range and the product reduction refused (duplicate writes without a reduction:
the last wins, as onnxruntime applies them in order); a mixture-of-experts layer (router, top-2
of 4 experts, dispatch by ScatterElements, combine) end to end."""

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
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def scatter_model(op: str, shapes: dict[str, tuple[int, ...]], opset: int = 18,
                  **attrs: object) -> onnx.ModelProto:
    types = {"d": F, "i": I64, "u": F}
    graph = helper.make_graph(
        [helper.make_node(op, ["d", "i", "u"], ["y"], **attrs)], "scatter",
        [helper.make_tensor_value_info(n, types[n], list(s)) for n, s in shapes.items()],
        [helper.make_tensor_value_info("y", F, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def values(rng: np.random.Generator, shape: tuple[int, ...], nan: bool) -> np.ndarray:
    """Small integers (exact sums) and, with ``nan``, some NaNs."""
    x = rng.integers(-4, 5, shape).astype(np.float32)
    if nan:
        x[rng.random(shape) < 0.2] = np.nan
    return x


@st.composite
def element_scatters(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray], int]:
    data = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    rank = len(data)
    axis = draw(st.integers(-rank, rank - 1))
    updates = tuple(draw(st.integers(1, 5)) if d == axis % rank else draw(st.integers(1, s))
                    for d, s in enumerate(data))
    reduction = draw(st.sampled_from(["none", "add", "max", "min"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    nan = draw(st.booleans())
    n = data[axis]
    inputs = {"d": values(rng, data, nan), "i": rng.integers(-n, n, updates),
              "u": values(rng, updates, nan)}
    shapes = {"d": data, "i": updates, "u": updates}
    opset = 18 if reduction in ("max", "min") else draw(st.sampled_from([11, 16, 18]))
    attrs = {"axis": axis} | ({"reduction": reduction} if opset >= 16 else {})
    return scatter_model("ScatterElements", shapes, opset, **attrs), inputs, n


@settings(max_examples=40, deadline=None)
@given(case=element_scatters())
def test_scatter_elements_as_onnxruntime(
    case: tuple[onnx.ModelProto, dict[str, np.ndarray], int],
) -> None:
    model, inputs, n = case
    result = run_model(model, OPTIONS, inputs=inputs, input_ranges={"i": (-n, n - 1)},
                       check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check


@st.composite
def nd_scatters(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray], int]:
    data = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    q = draw(st.integers(1, len(data)))
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    reduction = draw(st.sampled_from(["none", "add", "max", "min"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    nan = draw(st.booleans())
    sizes = np.array(data[:q])
    smallest = int(sizes.min())  # runtime tuples share one declared range
    indices = rng.integers(-smallest, smallest, (*lead, q))
    updates = lead + data[q:]
    inputs = {"d": values(rng, data, nan), "i": indices.astype(np.int64),
              "u": values(rng, updates, nan)}
    opset = 18 if reduction in ("max", "min") else draw(st.sampled_from([11, 16, 18]))
    attrs = {"reduction": reduction} if opset >= 16 else {}
    shapes = {"d": data, "i": (*lead, q), "u": updates}
    return scatter_model("ScatterND", shapes, opset, **attrs), inputs, smallest


@settings(max_examples=40, deadline=None)
@given(case=nd_scatters())
def test_scatter_nd_as_onnxruntime(case: tuple[onnx.ModelProto, dict[str, np.ndarray], int]
                                   ) -> None:
    model, inputs, n = case
    result = run_model(model, OPTIONS, inputs=inputs, input_ranges={"i": (-n, n - 1)},
                       check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check


def test_scatter_of_opset_10() -> None:
    """Scatter, ScatterElements' name before opset 11."""
    model = scatter_model("Scatter", {"d": (3, 4), "i": (2, 4), "u": (2, 4)}, 10, axis=0)
    result = run_model(model, OPTIONS, input_ranges={"i": (0, 2)}, check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check


@pytest.mark.parametrize(("model", "ranges", "message"), [
    (scatter_model("ScatterElements", {"d": (3, 4), "i": (2, 4), "u": (2, 4)}, axis=0), None,
     r"its indices must be proven within \[-3, 2\] .* the range of input 'i' is unknown: "
     r"declare the range"),
    (scatter_model("ScatterND", {"d": (3, 4), "i": (2, 1), "u": (2, 4)}), {"i": (0, 3)},
     r"its indices lie in \[0, 3\], beyond \[-3, 2\]"),
    (scatter_model("ScatterElements", {"d": (3, 4), "i": (2, 4), "u": (2, 4)}, axis=0,
                   reduction="mul"), {"i": (0, 2)}, r"reduction 'mul' is not supported"),
])
def test_scatter_refusals_name_the_node(
    model: onnx.ModelProto, ranges: dict[str, tuple[int, int]] | None, message: str
) -> None:
    with pytest.raises(T10Error, match=r"node 'Scatter\w*_0' \(Scatter\w*\): " + message):
        run_model(model, OPTIONS, input_ranges=ranges)


def moe_layer(tokens: int, width: int, experts: int, hidden: int) -> onnx.ModelProto:
    """A Mixtral-style mixture of experts, static: the router's softmax, its top-2 experts per
    token (TopK), their weights renormalised and scattered into a [tokens, experts] gate
    (ScatterElements into zeros), each expert a SwiGLU MLP, combined as the gate-weighted sum."""
    rng = np.random.default_rng(7)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    weights = {"router": w(width, experts), "k": np.array([2], np.int64),
               "zeros": np.zeros((tokens, experts), np.float32),
               "axes": np.array([-1], np.int64)}
    nodes = [
        helper.make_node("MatMul", ["x", "router"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
        helper.make_node("TopK", ["probs", "k"], ["top", "chosen"], axis=-1),
        helper.make_node("ReduceSum", ["top", "axes"], ["top_sum"], keepdims=1),
        helper.make_node("Div", ["top", "top_sum"], ["top_w"]),
        helper.make_node("ScatterElements", ["zeros", "chosen", "top_w"], ["gate"], axis=1),
    ]
    outputs = []
    for e in range(experts):
        weights |= {f"g{e}": w(width, hidden), f"u{e}": w(width, hidden), f"d{e}": w(hidden, width),
                    f"col{e}": np.array([e], np.int64)}
        nodes += [
            helper.make_node("MatMul", ["x", f"g{e}"], [f"gx{e}"]),
            helper.make_node("Sigmoid", [f"gx{e}"], [f"sg{e}"]),
            helper.make_node("Mul", [f"gx{e}", f"sg{e}"], [f"silu{e}"]),
            helper.make_node("MatMul", ["x", f"u{e}"], [f"ux{e}"]),
            helper.make_node("Mul", [f"silu{e}", f"ux{e}"], [f"h{e}"]),
            helper.make_node("MatMul", [f"h{e}", f"d{e}"], [f"y{e}"]),
            helper.make_node("Gather", ["gate", f"col{e}"], [f"ge{e}"], axis=1),
            helper.make_node("Mul", [f"y{e}", f"ge{e}"], [f"out{e}"]),
        ]
        outputs.append(f"out{e}")
    nodes.append(helper.make_node("Sum", outputs, ["y"]))
    graph = helper.make_graph(
        nodes, "moe", [helper.make_tensor_value_info("x", F, [tokens, width])],
        [helper.make_tensor_value_info("y", F, [tokens, width])],
        [numpy_helper.from_array(v, n) for n, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model


def test_a_mixture_of_experts_layer_matches_onnxruntime() -> None:
    model = moe_layer(tokens=6, width=16, experts=4, hidden=24)
    result = run_model(model, CompileOptions(chip="ipu-mk2"), check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check
    kinds = {op.name.split("/")[0]: op.kind for op in result.report.ops}
    assert kinds  # planned and simulated


def test_a_kv_cache_write_at_known_positions() -> None:
    """A decoder's cache update: the new token's key written at a known position of a
    [batch, heads, sequence, head size] cache, one index tuple per (batch, head); each known
    component is checked against its own dim."""
    cache, new = (1, 2, 5, 3), (1, 2, 3)
    positions = np.array([[[0, 0, 4], [0, 1, 4]]], np.int64)
    graph = helper.make_graph(
        [helper.make_node("ScatterND", ["d", "i", "u"], ["y"])], "kv",
        [helper.make_tensor_value_info("d", F, list(cache)),
         helper.make_tensor_value_info("u", F, list(new))],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(positions, "i")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    result = run_model(model, OPTIONS, check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check
