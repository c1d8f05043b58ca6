"""Gather of runtime indices (token ids into an embedding table) as `rtensor.gather`: models
checked against onnxruntime on both chips, the element-level traffic against a brute-force
count, and the errors (out-of-range ids at run time)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import assert_brute_force_move, holdings
from onnx import TensorProto, helper, numpy_helper

from t10.common.chip_spec import load_chip
from t10.common.exchange import element_move
from t10.common.gathers import GatherKind
from t10.common.plans import Layout
from t10.driver import CompileOptions, compile_model
from t10.errors import T10Error
from t10.reference import reference_session
from t10.sim.simulator import SimResult, simulate
from t10.t10_dialects import core

RTOL, ATOL = 1e-4, 1e-5
VOCAB, HIDDEN, BATCH, SEQ = 128, 32, 2, 16


def embedding(unsqueeze: bool = False, axis: int = 0, returned: bool = False) -> onnx.ModelProto:
    """Token embedding + positional add + LayerNorm (BERT's embeddings), ids [2, 16] INT64."""
    rng = np.random.default_rng(0)
    node = helper.make_node
    ids = "ids"
    nodes = []
    if unsqueeze:
        nodes.append(node("Unsqueeze", ["ids", "zero"], ["ids1"]))
        ids = "ids1"
    table = (VOCAB, HIDDEN) if axis == 0 else (HIDDEN, VOCAB)
    nodes += [
        node("Gather", ["table", ids], ["e"], axis=axis),
        node("Add", ["e", "pos"], ["x"]),
        node("LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5),
    ]
    out = (HIDDEN, BATCH, SEQ) if axis == 1 else (BATCH, SEQ, HIDDEN)
    pos = (1, SEQ) if axis == 1 else (SEQ, HIDDEN)
    inits = [
        numpy_helper.from_array(rng.standard_normal(table).astype(np.float32), "table"),
        numpy_helper.from_array(rng.standard_normal(pos).astype(np.float32), "pos"),
        numpy_helper.from_array(rng.standard_normal(out[-1:]).astype(np.float32), "gamma"),
        numpy_helper.from_array(rng.standard_normal(out[-1:]).astype(np.float32), "beta"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
    ]
    outputs = ["y", "e"] if returned else ["y"]
    graph = helper.make_graph(
        nodes,
        "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [BATCH, SEQ])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


def run(model: onnx.ModelProto, chip: str, ids: np.ndarray) -> SimResult:
    module = compile_model(model, CompileOptions(chip=chip)).module
    result = simulate(module, load_chip(chip), {"ids": ids})
    want = reference_session(model).run(None, {"ids": ids})
    for vi, w in zip(model.graph.output, want, strict=True):
        np.testing.assert_allclose(result.outputs[vi.name], w, rtol=RTOL, atol=ATOL)
    return result


def _ids(seed: int = 1) -> np.ndarray:
    """Ids with repeats and negative ids (counted from the end of the vocabulary)."""
    ids = np.random.default_rng(seed).integers(-VOCAB, VOCAB, (BATCH, SEQ))
    ids[0, :4] = 7  # repeats
    ids[1, 0] = -1
    return ids


def test_embedding_layer_norm_matches_onnxruntime(chip: str) -> None:
    result = run(embedding(), chip, _ids())
    ops = {op.name: op for op in result.report.ops}
    assert ops["Add_1/gather"].exchanged_bytes > 0


def test_ids_through_an_unsqueeze_and_a_returned_gather(chip: str) -> None:
    run(embedding(unsqueeze=True, returned=True), chip, _ids(2))


def test_gather_along_another_axis() -> None:
    run(embedding(axis=1), "test-16", np.abs(_ids(3)))


def test_an_out_of_range_id_is_a_runtime_error_naming_it() -> None:
    module = compile_model(embedding(), CompileOptions(chip="test-16")).module
    ids = _ids()
    ids[1, 5] = VOCAB
    with pytest.raises(
        T10Error,
        match=r"core.gather 'Add_1/gather': id 128 \(at ids index "
        r"\[1, 5\]\) is out of range for axis 0 .*\[-128, 128\)",
    ):
        simulate(module, load_chip("test-16"), {"ids": ids})


@pytest.mark.parametrize(
    ("table", "ids", "dst"),
    [
        (  # rows split over 4 cores, ids on 2, the result split by tokens over 3
            Layout((8, 4), (4,), (0, None), (2, 4)),
            Layout((2, 3), (2,), (0, None), (1, 3)),
            Layout((2, 3, 4), (2, 3), (0, 1, None), (1, 1, 4)),
        ),
        (  # the result split along the hidden dim: every core reads every id
            Layout((8, 4), (2, 2), (0, None), (4, 4)),
            Layout((2, 3), (1,), (None, None), (2, 3)),
            Layout((2, 3, 4), (4,), (None, None, 0), (2, 3, 1)),
        ),
    ],
)
def test_gather_traffic_counts_what_each_core_lacks(
    table: Layout, ids: Layout, dst: Layout
) -> None:
    index = np.array([[5, 5, 0], [7, 2, 5]])
    table_at, (ids_at,) = GatherKind("rows", 0).sources(table.shape, index)
    for src, sources in ((table, table_at), (ids, ids_at)):
        move = element_move(src, dst, sources)
        held = holdings(src, None, src.shape)
        out = holdings(dst, None, dst.shape)  # flat result elements per destination core
        flat = np.asarray(sources).reshape(-1)
        need = [{int(flat[e]) for e in elems} for elems in out]
        assert_brute_force_move(move, held, need, src.shape)


def test_simulated_gather_bytes_are_the_brute_force_busiest_core() -> None:
    module = compile_model(embedding(), CompileOptions(chip="test-16")).module
    ids = _ids()
    result = simulate(module, load_chip("test-16"), {"ids": ids})
    (op,) = [o for o in module.walk() if isinstance(o, core.GatherOp)]
    layouts = [
        attr.to_layout(t.get_shape())
        for attr, t in (
            (op.table_layout, op.table_tensor),
            (op.ids_layout, op.ids_tensor),
            (op.dst_layout, op.tensor),
        )
    ]
    table, ids_l, dst = layouts
    index = ids % VOCAB
    out = holdings(dst, None, dst.shape)
    n = max(lay.cores for lay in layouts)
    sent, received = np.zeros(n), np.zeros(n)
    table_at, (ids_at,) = GatherKind("rows", 0).sources(table.shape, index)
    for src, sources in ((table, table_at), (ids_l, ids_at)):
        flat = np.asarray(sources).reshape(-1)
        held = holdings(src, None, src.shape)
        holders = {e: sum(e in h for h in held) for e in range(int(np.prod(src.shape)))}
        for d, elems in enumerate(out):
            own = held[d] if d < len(held) else set()
            for e in {int(flat[i]) for i in elems} - own:
                received[d] += 4
                for s, h in enumerate(held):
                    if e in h:
                        sent[s] += 4 / holders[e]
    busiest = int(np.ceil(max(sent.max(), received.max()) - 1e-9))
    stats = {o.name: o for o in result.report.ops}["Add_1/gather"]
    assert stats.exchanged_bytes == busiest
