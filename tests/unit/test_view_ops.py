"""Views (Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Slice, Split, Gather of constant
indices): their index maps against numpy, the traffic of a relayout that applies a view
against a brute-force count, and models with views compiled, simulated and checked against
onnxruntime, with the plan search's relayout estimates equal to the simulated cycles."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from helpers import (
    assert_brute_force_move,
    float_model,
    holdings,
    run_and_check,
)
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.ir.affine import AffineMap

from t10.common.chip_spec import load_chip
from t10.common.exchange import element_move, relayout_traffic
from t10.common.plans import Layout
from t10.common.view_maps import (
    View,
    map_problem,
    reshape_map,
    slice_map,
    transpose_map,
)
from t10.driver import CompileOptions, compile_model
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.outputs.report import planned_ops
from t10.reference import reference_session
from t10.sim.simulator import simulate

RTOL, ATOL = 1e-4, 1e-5


# --------------------------------------------------------------------------------------------
# Index maps
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "result"),
    [
        ((8, 16, 768), (8, 16, 12, 64)),
        ((2, 12, 16, 64), (2, 12, 1024)),
        ((5, 1), (5,)),
        ((5,), (1, 5, 1)),
        ((2, 1, 3), (6,)),
        ((6, 4), (4, 6)),
        ((3, 4, 5), (60,)),
        ((4, 6), (2, 2, 2, 3)),
        ((2, 3, 4), (4, 3, 2)),
    ],
)
def test_reshape_map_is_numpy_reshape(source: tuple[int, ...], result: tuple[int, ...]) -> None:
    x = np.arange(np.prod(source)).reshape(source)
    view = reshape_map(source, result)
    assert map_problem(view, source, result) is None
    np.testing.assert_array_equal(View(view).gather(x, result), x.reshape(result))


def test_reshape_map_touches_only_the_dims_it_mixes() -> None:
    assert str(reshape_map((8, 16, 768), (8, 16, 12, 64))) == (
        "(d0, d1, d2, d3) -> (d0, d1, ((d2 * 64) + d3))"
    )


def test_transpose_and_slice_maps_are_numpy() -> None:
    x = np.arange(120).reshape(2, 3, 4, 5)
    perm = (3, 0, 2, 1)
    view = transpose_map(perm)
    result = tuple(x.shape[p] for p in perm)
    np.testing.assert_array_equal(View(view).gather(x, result), x.transpose(perm))
    view = slice_map(x.shape, [1, 2, 3, 0], [1, -1, -2, 2])
    want = x[1:, 2::-1, 3::-2, ::2]
    assert map_problem(view, x.shape, want.shape) is None
    np.testing.assert_array_equal(View(view).gather(x, want.shape), want)


def test_map_problem_names_an_out_of_range_read() -> None:
    view = slice_map((8,), [4], [1])
    assert map_problem(view, (8,), (6,)) == "result 0 ((d0 + 4)) ranges over [4, 9], outside [0, 8)"


# --------------------------------------------------------------------------------------------
# Traffic of a relayout through a view
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "dst", "view"),
    [
        (  # transpose a row-split tensor into a row-split transpose: an all-to-all
            Layout((4, 6), (2,), (0, None), (2, 6)),
            Layout((6, 4), (3,), (0, None), (2, 4)),
            transpose_map((1, 0)),
        ),
        (  # split heads of a replicated tensor: nothing to receive
            Layout((4, 6), (2, 2), (0, None), (2, 6)),
            Layout((4, 2, 3), (2, 2), (0, 1, None), (2, 1, 3)),
            reshape_map((4, 6), (4, 2, 3)),
        ),
        (  # a strided slice onto more cores than the source uses
            Layout((8, 4), (2,), (None, 0), (8, 2)),
            Layout((4, 4), (4,), (0, None), (1, 4)),
            slice_map((8, 4), [1, 0], [2, 1]),
        ),
    ],
)
def test_view_move_counts_what_each_core_lacks(src: Layout, dst: Layout, view: AffineMap) -> None:
    move = element_move(src, dst, View(view))
    assert_brute_force_move(
        move, holdings(src, None, src.shape), holdings(dst, view, src.shape), src.shape
    )


def test_identity_view_move_is_the_plain_relayout() -> None:
    src = Layout((6, 5), (2, 3), (0, 1), (3, 2))
    dst = Layout((6, 5), (4,), (None, 0), (6, 2))
    move = element_move(src, dst, View(AffineMap.identity(2)))
    sent, received = relayout_traffic(src, dst)
    np.testing.assert_allclose(move.sent, sent)
    np.testing.assert_allclose(move.received, received)


def test_a_view_that_keeps_every_core_s_buffer_moves_nothing() -> None:
    src = Layout((4, 6), (4,), (0, None), (1, 6))
    dst = Layout((4, 2, 3), (4,), (0, None, None), (1, 2, 3))
    move = element_move(src, dst, View(reshape_map((4, 6), (4, 2, 3))))
    assert move.in_place and not move.received.any() and not move.copied.any()


# --------------------------------------------------------------------------------------------
# Models with views, end to end
# --------------------------------------------------------------------------------------------


def _ints(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def attention(b: int = 2, s: int = 16, heads: int = 4, dh: int = 8) -> onnx.ModelProto:
    """Multi-head self-attention written with Reshape / Transpose, as exporters write it."""
    d = heads * dh
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array((rng.standard_normal((d, d)) / np.sqrt(d)).astype(np.float32), n)
        for n in ("wq", "wk", "wv", "wo")
    ]
    node = helper.make_node
    nodes = [node("MatMul", ["x", f"w{n}"], [n]) for n in "qkv"]
    nodes += [node("Reshape", [n, "heads"], [f"{n}4"]) for n in "qkv"]
    nodes += [
        node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
        node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        node("MatMul", ["qt", "kt"], ["scores"]),
        node("Div", ["scores", "sqrt_dh"], ["scaled"]),
        node("Softmax", ["scaled"], ["p"], axis=-1),
        node("MatMul", ["p", "vt"], ["o"]),
        node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        node("Reshape", ["ot", "merged"], ["om"]),
        node("MatMul", ["om", "wo"], ["y"]),
    ]
    extra = [
        _ints("heads", [b, s, heads, dh]),
        _ints("merged", [b, s, d]),
        numpy_helper.from_array(np.array([np.sqrt(dh)], np.float32), "sqrt_dh"),
    ]
    return float_model(nodes, {"x": [b, s, d]}, ["y"], weights + extra)


def test_attention_matches_onnxruntime_and_its_relayout_estimates(chip: str) -> None:
    compiled, result = run_and_check(attention(), chip, seed=1)
    planned_list = planned_ops(compiled.planned)
    planned = {p.name: p for p in planned_list}
    relayouts = [op for op in result.report.ops if op.name.endswith("/relayout")]
    assert relayouts
    for op in relayouts:
        assert planned[op.name].estimated_cycles == op.cycles, op.name


def test_views_of_inputs_and_views_returned(chip: str) -> None:
    node = helper.make_node
    nodes = [
        node("Transpose", ["x"], ["xt"], perm=[1, 0]),
        node("MatMul", ["xt", "w"], ["m"]),
        node("Unsqueeze", ["m", "zero"], ["u"]),
        node("Flatten", ["u"], ["f"], axis=-1),
        node("Split", ["m"], ["top", "bottom"], axis=0),
        node("Squeeze", ["top_row"], ["row"]),
        node("Slice", ["bottom", "s0", "s1", "s_axes", "s_steps"], ["tail"]),
        node("Gather", ["m", "two"], ["col"], axis=1),
        node("Gather", ["m", "run"], ["cols"], axis=1),
        node("Slice", ["top", "r0", "r1", "r_axes"], ["top_row"]),
    ]
    w = np.random.default_rng(2).standard_normal((6, 5)).astype(np.float32)
    inits = [
        numpy_helper.from_array(w, "w"),
        _ints("zero", [0]),
        _ints("s0", [-1]),
        _ints("s1", [-100]),
        _ints("s_axes", [1]),
        _ints("s_steps", [-2]),
        numpy_helper.from_array(np.array(2, dtype=np.int64), "two"),
        _ints("run", [4, 2, 0]),
        _ints("r0", [0]),
        _ints("r1", [1]),
        _ints("r_axes", [0]),
    ]
    nodes = [nodes[-1], *nodes[:-1]]  # the Slice feeding the Squeeze goes first
    nodes.insert(5, nodes.pop(0))
    model = float_model(nodes, {"x": [6, 4]}, ["f", "row", "tail", "col", "cols"], inits)
    run_and_check(model, chip, seed=1)


def test_concat_rotate_half_and_a_class_token(chip: str) -> None:
    """Llama's rotate_half (two slices, a negation, a Concat) and ViT's class token (a
    Concat with a constant): each input is padded into place by a view, then summed."""
    node = helper.make_node
    nodes = [
        node("Slice", ["x", "s0", "s1", "ax"], ["x1"]),
        node("Slice", ["x", "s1", "s2", "ax"], ["x2"]),
        node("Neg", ["x2"], ["nx2"]),
        node("Concat", ["nx2", "x1"], ["rot"], axis=-1),
        node("Mul", ["x", "cos"], ["a"]),
        node("Mul", ["rot", "sin"], ["b"]),
        node("Add", ["a", "b"], ["y"]),
        node("Concat", ["cls", "y", "x"], ["z"], axis=2),
    ]
    rng = np.random.default_rng(4)
    inits = [
        _ints("s0", [0]),
        _ints("s1", [4]),
        _ints("s2", [8]),
        _ints("ax", [3]),
        *(
            numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
            for n, s in (("cos", (16, 8)), ("sin", (16, 8)), ("cls", (2, 4, 1, 8)))
        ),
    ]
    run_and_check(float_model(nodes, {"x": [2, 4, 16, 8]}, ["z"], inits), chip, seed=1)


def test_padded_view_chain_guards_every_padded_step() -> None:
    """A padded view read through another view keeps its zero fill (the guard is composed
    into the reader's index space)."""
    source = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    shifted = AffineMap.from_callable(lambda i, j: (i, j - 1))  # [2, 5] reads [2, 3] at j-1
    flip = AffineMap.from_callable(lambda i, j: (i, j * -1 + 4))  # xDSL 0.75: 4 - j is wrong
    chain = View(AffineMap.identity(2)).through(flip, False, (2, 5)).through(shifted, True, (2, 3))
    want = np.pad(source, [(0, 0), (1, 1)])[:, ::-1]
    np.testing.assert_array_equal(chain.gather(source, (2, 5)), want)


def test_split_heads_of_a_matmul_needs_no_exchange() -> None:
    """A Reshape that only splits a dim the producer does not partition moves nothing when
    the consumer keeps the producer's placement; the planner then prefers that."""
    node = helper.make_node
    nodes = [
        node("MatMul", ["x", "w"], ["m"]),
        node("Reshape", ["m", "heads"], ["h"]),
        node("Relu", ["h"], ["y"]),
    ]
    w = np.random.default_rng(3).standard_normal((32, 64)).astype(np.float32)
    model = float_model(
        nodes,
        {"x": [64, 32]},
        ["y"],
        [numpy_helper.from_array(w, "w"), _ints("heads", [64, 4, 16])],
    )
    _, result = run_and_check(model, "test-16", seed=1)
    moved = [op for op in result.report.ops if op.name == "Relu_2/relayout"]
    assert all(op.exchange_cycles == 0 for op in moved)


@pytest.mark.parametrize(
    ("node", "inits", "message"),
    [
        (
            helper.make_node("Gather", ["x", "idx"], ["y"], axis=0),
            [_ints("idx", [0, 4, 1])],
            r"indices \[0, 4, 1\] are out of range for size 4",
        ),
        (
            helper.make_node("Reshape", ["x", "shape"], ["y"]),
            [_ints("shape", [5, -1, -1])],
            "Target shape may not have multiple -1 dimensions",
        ),
        (
            helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0]),
            [],
            "Attribute perm for Transpose has repeated value: 0",
        ),
    ],
)
def test_bad_views_are_clear_errors(node: onnx.NodeProto, inits: list, message: str) -> None:
    graph = helper.make_graph(
        [node],
        "bad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(T10Error, match=message):
        import_onnx(model)


def _roll(x: str, shifts: list[int], axes: list[int], shape: list[int], out: str) -> tuple:
    """`torch.roll(x, shifts, dims=axes)` as torch exports it: per axis, two Slices and a
    Concat (nodes and initializers)."""
    nodes, inits = [], []
    node = helper.make_node
    for k, (shift, axis) in enumerate(zip(shifts, axes, strict=True)):
        n = shape[axis]
        src, dst = (x if k == 0 else f"{out}{k}"), (out if k == len(axes) - 1 else f"{out}{k + 1}")
        tag = f"{out}_{k}_"
        inits += [
            _ints(tag + "cut", [n - shift]),
            _ints(tag + "end", [n]),
            _ints(tag + "zero", [0]),
            _ints(tag + "axis", [axis]),
        ]
        nodes += [
            node("Slice", [src, tag + "cut", tag + "end", tag + "axis"], [tag + "tail"]),
            node("Slice", [src, tag + "zero", tag + "cut", tag + "axis"], [tag + "head"]),
            node("Concat", [tag + "tail", tag + "head"], [dst], axis=axis),
        ]
    return nodes, inits


@pytest.mark.parametrize(
    ("shape", "shifts", "axes", "first"),
    [
        ([4, 6], [1, 2], [0, 1], None),  # the input is a function argument
        ([4, 6], [1, 2], [0, 1], "Relu"),
        ([6, 4, 5], [2, 1, 3], [0, 1, 2], "Relu"),
        ([2, 3, 4, 6], [1, 2, 3, 5], [0, 1, 2, 3], "Relu"),
        ([3, 4, 5, 2], [1, 3], [3, 1], "Neg"),
    ],
)
def test_rolls_over_several_axes(
    chip: str, shape: list[int], shifts: list[int], axes: list[int], first: str | None
) -> None:
    """Each roll keeps the tensor's type, so its Concat's padded views read a producer that
    already lies in the layout the Concat wants: the views must still move the data."""
    nodes, inits = _roll("r" if first else "x", shifts, axes, shape, "y")
    if first:
        nodes.insert(0, helper.make_node(first, ["x"], ["r"]))
    model = float_model(nodes, {"x": shape}, ["y"], inits)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    module = compile_model(model, CompileOptions(chip=chip)).module
    got = simulate(module, load_chip(chip), {"x": x}).outputs["y"]
    start = -x if first == "Neg" else x
    np.testing.assert_array_equal(got, np.roll(start, shifts, axes))


@pytest.mark.parametrize(
    ("view", "inits"),
    [
        (helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]), []),
        (  # a flip: a Slice with step -1
            helper.make_node("Slice", ["r", "s", "e", "a", "st"], ["t"]),
            [_ints("s", [-1]), _ints("e", [-100]), _ints("a", [1]), _ints("st", [-1])],
        ),
        (
            helper.make_node("Gather", ["r", "rev"], ["t"], axis=0),
            [_ints("rev", list(range(7, -1, -1)))],
        ),
    ],
    ids=["transpose", "flip", "reversed-gather"],
)
def test_a_view_that_keeps_the_type_between_two_operators_moves(
    chip: str, view: onnx.NodeProto, inits: list
) -> None:
    """A square transpose, a flip: the reader's layout can equal the producer's, and the view
    must still be applied (it once was dropped when the two types were equal)."""
    node = helper.make_node
    nodes = [node("Relu", ["x"], ["r"]), view, node("Relu", ["t"], ["y"])]
    run_and_check(float_model(nodes, {"x": [8, 8]}, ["y"], inits), chip, seed=1)


# --------------------------------------------------------------------------------------------
# Pad: a padded view (constant mode), cropping for negative amounts; pieces read again
# (reflect, edge), a mod view (wrap)
# --------------------------------------------------------------------------------------------


def _pad_model(
    shape: list[int],
    pads: list[int],
    value: float | None,
    axes: list[int] | None = None,
    opset: int = 17,
    mode: str | None = None,
) -> onnx.ModelProto:
    """Relu → Pad → Neg (the Pad between two operators) and the Pad's result returned too;
    opset < 11: the attribute form."""
    node = helper.make_node
    attrs = {} if mode is None else {"mode": mode}
    inits = []
    if opset < 11:
        attrs |= {"pads": pads} | ({} if value is None else {"value": value})
        pad = node("Pad", ["r"], ["p"], **attrs)
    else:
        inits.append(_ints("pads", pads))
        names = ["r", "pads", "" if value is None else "value"]
        if value is not None:
            inits.append(numpy_helper.from_array(np.array(value, np.float32), "value"))
        if axes is not None:
            names.append("axes")
            inits.append(_ints("axes", axes))
        pad = node("Pad", names, ["p"], **attrs)
    nodes = [node("Relu", ["x"], ["r"]), pad, node("Neg", ["p"], ["y"])]
    return float_model(nodes, {"x": shape}, ["p", "y"], inits, opset)


@pytest.mark.parametrize(
    ("shape", "pads", "value", "axes", "opset"),
    [
        ([4, 5], [1, 0, 2, 3], None, None, 17),  # zeros: the padded view alone
        ([4, 5], [1, 2, 0, 1], 1.5, None, 17),
        ([4, 5], [1, -2, -1, 3], -2.0, None, 17),  # crop one axis, pad the other
        ([4, 5], [-1, -2, 0, -1], 7.0, None, 17),  # crop only: a slice view
        ([4, 5], [0, 0, 0, 0], 3.0, None, 17),  # a pass-through
        ([1, 3, 5, 7], [1, 2, 2, 1], 0.25, [2, -1], 18),  # NCHW spatial padding, axes input
        ([2, 3, 5], [0, 1, 0, 0, 0, 2], -0.0, None, 13),  # -0.0 is not the zero fill
        ([2, 3], [1, 0, 0, 1], float("-inf"), None, 17),
        ([2, 3], [0, 2, 1, 0], float("nan"), None, 17),
        ([3, 4], [2, 1, 0, 2], 0.5, None, 10),  # the attribute form
        ([3, 4], [1, 1, 1, 1], None, None, 7),
    ],
)
def test_pad_matches_onnxruntime(
    chip: str,
    shape: list[int],
    pads: list[int],
    value: float | None,
    axes: list[int] | None,
    opset: int,
) -> None:
    """The padded tensor is exact, bit for bit (a -0.0 fill keeps its sign, the kept
    elements their values); the reader after it matches too."""
    model = _pad_model(shape, pads, value, axes, opset)
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    x[..., 0] = 0.0  # Relu gives +0.0 there: kept elements must stay +0.0
    module = compile_model(model, CompileOptions(chip=chip)).module
    got = simulate(module, load_chip(chip), {"x": x}).outputs
    ref = reference_session(model).run(None, {"x": x})
    want = dict(zip(["p", "y"], ref, strict=True))
    for name in ("p", "y"):
        np.testing.assert_array_equal(got[name], want[name])
        np.testing.assert_array_equal(np.signbit(got[name]), np.signbit(want[name]))


@given(
    mode=st.sampled_from(["reflect", "edge", "wrap"]),
    shape=st.lists(st.integers(3, 5), min_size=1, max_size=3),
    draws=st.lists(st.integers(-1, 4), min_size=6, max_size=6),
)
def test_pad_modes_that_read_the_input_match_onnxruntime(
    mode: str, shape: list[int], draws: list[int]
) -> None:
    """Reflect, edge and wrap on any shape, with amounts up to what each mode reads (reflect:
    size - 1, wrap: size) and crops: the values of onnxruntime (wrap: opset 19)."""
    rank = len(shape)
    before, after = draws[:rank], draws[3 : 3 + rank]
    for axis, n in enumerate(shape):  # crops first, then pads within reach of what is left
        kept = n + min(before[axis], 0) + min(after[axis], 0)
        reach = {"reflect": kept - 1, "edge": 4, "wrap": kept}[mode]
        before[axis], after[axis] = (min(d, reach) for d in (before[axis], after[axis]))
    pads = before + after
    model = _pad_model(shape, pads, None, opset=19 if mode == "wrap" else 17, mode=mode)
    x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
    module = compile_model(model, CompileOptions(chip="test-16")).module
    got = simulate(module, load_chip("test-16"), {"x": x}).outputs
    want = dict(zip(["p", "y"], reference_session(model).run(None, {"x": x}), strict=True))
    for name in ("p", "y"):
        np.testing.assert_array_equal(got[name], want[name])


@pytest.mark.parametrize(
    ("mode", "pads", "message"),
    [
        ("reflect", [4, 0, 0, 0], "mode 'reflect' pads axis 0 of size 4 by 4: at most 3"),
        ("wrap", [0, 6, 0, 0], "mode 'wrap' pads axis 1 of size 5 by 6: at most 5"),
        ("mirror", [1, 1, 1, 1], "mode 'mirror' is not a Pad mode (supported: constant, "
                                 "reflect, edge, wrap)"),
    ],
)
def test_pad_modes_beyond_their_reach_are_clear_errors(
    mode: str, pads: list[int], message: str
) -> None:
    model = _pad_model([4, 5], pads, None, opset=19, mode=mode)
    with pytest.raises(T10Error, match=re.escape(f"node 'Pad_1' (Pad): {message}")):
        import_onnx(model)


def test_pad_of_integers_needs_a_float32_exact_constant() -> None:
    """An integer input padded, then cast to float: the fill must be exact in float32."""
    node = helper.make_node
    nodes = [
        node("Pad", ["ids", "pads", "value"], ["p"]),
        node("Cast", ["p"], ["y"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes,
        "pad_ids",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [_ints("pads", [0, 1, 0, 1]), numpy_helper.from_array(np.array(2**25 + 1), "value")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(T10Error, match=r"constant_value 33554433 is not exactly representable"):
        import_onnx(model)


def test_pad_that_crops_everything_is_a_clear_error() -> None:
    with pytest.raises(
        T10Error,
        match=re.escape(
            "pads [-2, -2] (before, after) crop axis 1 of size 4 to nothing; empty tensors "
            "are not supported"
        ),
    ):
        import_onnx(_pad_model([3, 4], [0, -2, 0, -2], None))
