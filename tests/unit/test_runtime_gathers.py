"""GatherND and GatherElements of runtime indices: `rtensor.gather` of kind `nd batch_dims B`
and `elements axis A` (`t10.common.gathers`), checked against onnxruntime at fp32 and fp16
(negative indices included), their runtime range errors, their estimates against the
simulated cycles, the traffic count against a brute-force one, and a property test over
random shapes, axes and indices."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from helpers import assert_brute_force_move, holdings
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from t10 import driver
from t10.common.exchange import element_move
from t10.common.gathers import GatherKind
from t10.common.plans import Layout
from t10.errors import T10Error
from t10.reference import reference_session

CHIP = "test-16"


def gather_model(
    op: str,
    data: tuple[int, ...],
    ids: tuple[int, ...],
    returned: bool = True,
    squared: bool = False,
    **attrs: int,
) -> onnx.ModelProto:
    """`op` (Gather, GatherND or GatherElements) of runtime INT64 `idx` from the FLOAT input
    `x` (`squared`: from `x * x`, an operator's output on chip), read by an Add (`y = g + g`)
    and, if `returned`, a graph output too."""
    table = "x2" if squared else "x"
    nodes = [helper.make_node("Mul", ["x", "x"], ["x2"])] if squared else []
    nodes += [
        helper.make_node(op, [table, "idx"], ["g"], **attrs),
        helper.make_node("Add", ["g", "g"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "gathers",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, list(data)),
            helper.make_tensor_value_info("idx", TensorProto.INT64, list(ids)),
        ],
        [
            helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
            for n in (["y", "g"] if returned else ["y"])
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


def run(
    model: onnx.ModelProto,
    x: np.ndarray,
    idx: np.ndarray,
    precision: str = "fp32",
    chip: str = CHIP,
    planner: str = "t10",
) -> driver.RunResult:
    """Compiled (for test-16 by default), simulated, and checked against onnxruntime."""
    result = driver.run_model(
        model,
        driver.CompileOptions(chip=chip, planner=planner, precision=precision),
        inputs={"x": x, "idx": idx},
        check=driver.check_tolerance(precision),
    )
    assert result.check is not None and result.check.passed, result.check
    return result


def nd_ids(
    rng: np.random.Generator, data: tuple[int, ...], lead: tuple[int, ...], batch: int, q: int
) -> np.ndarray:
    """Index tuples `[*lead, q]` into dims batch .. batch+q-1 of `data`, negative ones too."""
    sizes = data[batch : batch + q]
    return np.stack([rng.integers(-s, s, lead) for s in sizes], axis=-1).astype(np.int64)


DATA = (4, 3, 5)


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize(
    ("batch", "q", "lead"),
    [(0, 1, (2,)), (0, 2, (2, 3)), (0, 3, (5,)), (1, 1, (4, 2)), (1, 2, (4, 3)), (1, 2, (4,))],
)
def test_gather_nd_matches_onnxruntime(
    batch: int, q: int, lead: tuple[int, ...], precision: str
) -> None:
    rng = np.random.default_rng(batch * 10 + q)
    x = rng.standard_normal(DATA).astype(np.float32)
    idx = nd_ids(rng, DATA, lead, batch, q)
    model = gather_model("GatherND", DATA, idx.shape, batch_dims=batch)
    result = run(model, x, idx, precision)
    kinds = {op.kind for op in result.report.ops}
    assert "gather" in kinds


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize(
    ("axis", "ids"),
    [(0, (6, 3, 5)), (1, (4, 2, 5)), (2, (3, 3, 7)), (-1, (4, 3, 1)), (-3, (1, 2, 2))],
)
def test_gather_elements_matches_onnxruntime(
    axis: int, ids: tuple[int, ...], precision: str
) -> None:
    rng = np.random.default_rng(axis + 3)
    x = rng.standard_normal(DATA).astype(np.float32)
    size = DATA[axis]
    idx = rng.integers(-size, size, ids).astype(np.int64)
    run(gather_model("GatherElements", DATA, ids, axis=axis), x, idx, precision)


@pytest.mark.parametrize(
    ("op", "attrs", "ids", "bad", "message"),
    [
        (
            "GatherND",
            {"batch_dims": 0},
            (2, 2),
            ((1, 1), 3),
            r"ONNX node 'GatherND_0': core.gather 'Add_1/gather': id 3 \(at ids index \[1, 1\]\) "
            r"is out of range for axis 1 of 'x' \(size 3\): ids must be integers in \[-3, 3\)",
        ),
        (
            "GatherND",
            {"batch_dims": 1},
            (4, 2, 1),
            ((2, 0, 0), -4),
            r"ONNX node 'GatherND_0': .* id -4 \(at ids index \[2, 0, 0\]\) is out of range for "
            r"axis 1 of 'x' \(size 3\)",
        ),
        (
            "GatherElements",
            {"axis": 2},
            (4, 3, 2),
            ((0, 2, 1), 5),
            r"ONNX node 'GatherElements_0': .* id 5 \(at ids index \[0, 2, 1\]\) is out of range "
            r"for axis 2 of 'x' \(size 5\): ids must be integers in \[-5, 5\)",
        ),
    ],
)
def test_an_out_of_range_index_is_a_runtime_error_naming_the_node(
    op: str, attrs: dict[str, int], ids: tuple[int, ...], bad: tuple[tuple[int, ...], int],
    message: str,
) -> None:
    x = np.zeros(DATA, np.float32)
    idx = np.zeros(ids, np.int64)
    idx[bad[0]] = bad[1]
    model = gather_model(op, DATA, ids, returned=False, **attrs)
    with pytest.raises(T10Error, match=message):
        driver.run_model(model, driver.CompileOptions(chip=CHIP), inputs={"x": x, "idx": idx})


@pytest.mark.parametrize(
    ("op", "attrs", "ids", "kind"),
    [
        ("Gather", {"axis": 1}, (4, 6), GatherKind("rows", 1)),
        ("GatherND", {"batch_dims": 0}, (6, 2), GatherKind("nd", 0)),
        ("GatherND", {"batch_dims": 1}, (4, 8, 2), GatherKind("nd", 1)),
        ("GatherElements", {"axis": 1}, (4, 6, 5), GatherKind("elements", 1)),
    ],
)
@pytest.mark.parametrize(
    ("planner", "squared"), [("t10", False), ("t10", True), ("vgm", False), ("vgm", True)]
)
def test_a_gather_of_the_sampled_ids_costs_what_the_plan_search_estimated(
    op: str,
    attrs: dict[str, int],
    ids: tuple[int, ...],
    kind: GatherKind,
    planner: str,
    squared: bool,
    chip: str,
) -> None:
    """The estimate is the simulator's own count on the ids the plan search samples
    (`GatherKind.sample`): fed those ids, the reader's gather runs exactly as estimated,
    from a host table or (`squared`) from an operator's output, gathered where it lies."""
    data = (4, 12, 5)
    x = np.random.default_rng(0).standard_normal(data).astype(np.float32)
    idx = kind.sample(data, ids).astype(np.int64)
    model = gather_model(op, data, ids, returned=False, squared=squared, **attrs)
    result = run(model, x, idx, chip=chip, planner=planner)
    (gather,) = [o for o in result.report.ops if o.kind == "gather"]
    assert gather.cycles == gather.estimated_cycles > 0
    assert result.report.estimated_total_cycles == result.report.total_cycles


@pytest.mark.parametrize(
    ("kind", "table", "index", "dst"),
    [
        (  # index pairs into a [3, 4] table's rows and columns, the result split over 3
            GatherKind("nd", 0),
            Layout((3, 4), (3,), (0, None), (1, 4)),
            np.array([[2, 1], [0, 3], [2, 1]]),
            Layout((3,), (3,), (0,), (1,)),
        ),
        (  # per-batch rows, the result split along the hidden dim
            GatherKind("nd", 1),
            Layout((2, 3, 4), (2,), (None, None, 0), (2, 3, 2)),
            np.array([[[1], [1]], [[0], [2]]]),
            Layout((2, 2, 4), (2, 2), (0, None, 1), (1, 2, 2)),
        ),
        (  # single elements along axis 1, the result split by rows
            GatherKind("elements", 1),
            Layout((3, 4), (2,), (None, 0), (3, 2)),
            np.array([[3, 0], [1, 1], [2, 3]]),
            Layout((3, 2), (3,), (0, None), (1, 2)),
        ),
    ],
)
def test_gather_traffic_counts_what_each_core_lacks(
    kind: GatherKind, table: Layout, index: np.ndarray, dst: Layout
) -> None:
    ids = Layout(index.shape, (1,), (None,) * index.ndim, index.shape)
    table_at, ids_at = kind.sources(table.shape, index)
    for src, sources in [(table, table_at), *((ids, at) for at in ids_at)]:
        move = element_move(src, dst, sources)
        held = holdings(src, None, src.shape)
        out = holdings(dst, None, dst.shape)
        flat = np.asarray(sources).reshape(-1)
        need = [{int(flat[e]) for e in elems} for elems in out]
        assert_brute_force_move(move, held, need, src.shape)


def _brute_force(kind: GatherKind, table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The gather of ids in [0, size), element by element from ONNX's definitions."""
    out = np.zeros(kind.shape(table.shape, index.shape), table.dtype)
    for pos in itertools.product(*map(range, out.shape)):
        if kind.mode == "elements":
            at = list(pos)
            at[kind.n] = index[pos]
        else:  # nd
            lead = index.ndim - 1
            at = [*pos[: kind.n], *index[pos[:lead]], *pos[lead:]]
        out[pos] = table[tuple(at)]
    return out


@st.composite
def gathers(draw: st.DrawFn) -> tuple[str, dict[str, int], np.ndarray, np.ndarray]:
    """A GatherND or GatherElements of random shapes, axis / batch_dims and indices."""
    rank = draw(st.integers(1, 3))
    data = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        axis = draw(st.integers(-rank, rank - 1))
        ids = tuple(
            draw(st.integers(1, 5)) if d == axis % rank else draw(st.integers(1, s))
            for d, s in enumerate(data)
        )
        size = data[axis]
        return "GatherElements", {"axis": axis}, rng.integers(-size, size, ids), np.array(data)
    batch = draw(st.integers(0, rank - 1))
    q = draw(st.integers(1, rank - batch))
    lead = tuple(draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)))
    if batch:
        lead = (*data[:batch], *lead)
    if not lead and q == rank - batch:
        lead = (2,)  # a rank-0 result is refused: keep one index dim
    idx = nd_ids(rng, data, lead, batch, q)
    return "GatherND", {"batch_dims": batch}, idx, np.array(data)


@settings(max_examples=25, deadline=None)
@given(gathers())
def test_random_runtime_gathers_match_onnxruntime(
    case: tuple[str, dict[str, int], np.ndarray, np.ndarray],
) -> None:
    op, attrs, idx, shape = case
    data = tuple(int(s) for s in shape)
    x = np.random.default_rng(1).standard_normal(data).astype(np.float32)
    idx = idx.astype(np.int64)
    model = gather_model(op, data, idx.shape, **attrs)
    want = reference_session(model).run(None, {"x": x, "idx": idx})[1]
    mode = "elements" if op == "GatherElements" else "nd"
    n = attrs.get("axis", attrs.get("batch_dims", 0)) % len(data)
    kind = GatherKind(mode, n)
    limits = np.broadcast_to(
        kind.limits(data) if mode == "elements" else kind.limits(data)[: idx.shape[-1]],
        idx.shape,
    )
    np.testing.assert_array_equal(_brute_force(kind, x, idx % limits), want)
    run(model, x, idx)


@pytest.mark.parametrize(
    ("kind", "ids", "message"),
    [
        (GatherKind("rows", 1), [[0.0, 2.5]], r"id 2.5 \(at ids index \[0, 1\]\) is out of range"),
        (GatherKind("rows", 1), [[np.nan, 0.0]], r"id nan \(at ids index \[0, 0\]\)"),
        (GatherKind("nd", 0), [[1.0, 4.0]], r"id 4 .* for axis 1 of 't' \(size 4\)"),
        (GatherKind("nd", 1), [[3.0], [-5.0], [0.0]], r"id -5 \(at ids index \[1, 0\]\) .* axis 1"),
        (GatherKind("elements", 0), [[-4.0, 0.0]], r"id -4 .* for axis 0 of 't' \(size 3\)"),
    ],
)
def test_ids_are_integers_within_the_dims_they_index(
    kind: GatherKind, ids: list[list[float]], message: str
) -> None:
    """Non-integer (NaN included) and out-of-range ids are errors naming the id, never a
    wrapped or truncated index; in range, negative ids count from the end of their dim."""
    table = (3, 4)
    with pytest.raises(T10Error, match=message):
        kind.checked("g", np.array(ids), table, "t")
    fine = np.array(ids)
    fine[~np.isfinite(fine)] = 0
    limits = np.broadcast_to(
        kind.limits(table) if kind.mode != "nd" else kind.limits(table)[: fine.shape[-1]],
        fine.shape,
    )
    fine = np.clip(np.round(fine), -limits, limits - 1)
    np.testing.assert_array_equal(kind.checked("g", fine, table, "t"), fine % limits)


def _placed_model(variant: str) -> onnx.ModelProto:
    """A GatherElements (axis 0) of `idx` [6, 5] from `x` [12, 5], its ids or its result
    passing views or operators on the way: `viewed-ids` (ids through an Unsqueeze, shared by
    two gathers read by two operators: the first places them), `ids-on-chip` (ids computed
    by an Abs), `viewed-gather` (the reader reads the gather through a Transpose)."""
    node = helper.make_node
    ids, nodes, data, ids_shape = "idx", [], [12, 5], [6, 5]
    if variant == "viewed-ids":
        data, ids_shape = [1, 12, 5], [6, 5]
        nodes.append(node("Unsqueeze", ["idx", "zero"], ["ids"]))
        ids = "ids"
    elif variant == "ids-on-chip":
        nodes.append(node("Abs", ["idx"], ["ids"]))
        ids = "ids"
    axis = 1 if variant == "viewed-ids" else 0
    nodes.append(node("GatherElements", ["x", ids], ["g"], axis=axis))
    read = "g"
    if variant == "viewed-gather":
        nodes.append(node("Transpose", ["g"], ["gt"], perm=[1, 0]))
        read = "gt"
    nodes.append(node("Add", [read, read], ["y"]))
    outputs = ["y"]
    if variant == "viewed-ids":
        nodes += [
            node("GatherElements", ["x2", ids], ["h"], axis=1),
            node("Mul", ["h", "h"], ["z"]),
        ]
        outputs.append("z")
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, data),
        helper.make_tensor_value_info("idx", TensorProto.INT64, ids_shape),
    ]
    inits = [onnx.numpy_helper.from_array(np.array([0], np.int64), "zero")]
    if variant == "viewed-ids":
        x2 = np.random.default_rng(3).standard_normal(data).astype(np.float32)
        inits.append(onnx.numpy_helper.from_array(x2, "x2"))
    graph = helper.make_graph(
        nodes,
        "placed",
        inputs,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


@pytest.mark.parametrize("planner", ["t10", "vgm"])
@pytest.mark.parametrize("variant", ["viewed-ids", "ids-on-chip", "viewed-gather"])
def test_the_moves_around_a_gather_cost_what_the_plan_search_estimated(
    variant: str, planner: str, chip: str
) -> None:
    """Ids placed through views (once, by the first reader's gather), ids computed on chip
    (gathered where they lie), a gather read through views (made in `host_layout`, then
    relayouted): every gather and relayout row, and the model, run as estimated."""
    model = _placed_model(variant)
    data = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    kind = GatherKind("elements", len(data) - 2)
    idx = kind.sample(data, (1, 6, 5) if len(data) == 3 else (6, 5)).reshape(6, 5)
    x = np.random.default_rng(0).standard_normal(data).astype(np.float32)
    result = run(model, x, idx.astype(np.int64), chip=chip, planner=planner)
    moves = [o for o in result.report.ops if o.kind in ("gather", "relayout")]
    assert any(o.kind == "gather" for o in moves)
    for o in moves:
        assert o.cycles == o.estimated_cycles, o.name
    assert result.report.estimated_total_cycles == result.report.total_cycles
