"""Relayouts and gathers report their messages (`t10.common.exchange`: `relayout_flows`,
`element_move(..., messages=True)`, `gather_traffic(..., messages=True)`): who sends how many
elements to whom, consistent with each core's totals and with which core holds what, and
routed by a topology that routes."""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Callable
from math import ceil, prod

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_gather import BATCH, SEQ, VOCAB, embedding
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common import costs, exchange
from t10.common.chip_spec import load_chip
from t10.common.exchange import (
    Flows,
    ViewMove,
    element_move,
    flat_sources,
    gather_traffic,
    relayout_exchange,
    relayout_flows,
    relayout_traffic,
)
from t10.common.gathers import GatherKind
from t10.common.move_costs import GatherSpec, gather_estimate, transition_estimate
from t10.common.plans import Layout, Rotating
from t10.common.traffic import Traffic
from t10.common.view_maps import View, reshape_map, slice_map, transpose_map
from t10.driver import CompileOptions, compile_model
from t10.sim.simulator import simulate

Shares = dict[tuple[int, int], float]
"""Elements per (source core, destination core)."""


@st.composite
def layouts(draw: st.DrawFn, shape: tuple[int, ...]) -> Layout:
    """A layout of `shape` on a grid of up to 3 axes: dims split on distinct axes (tiles
    padded or not), the other axes copies, or the ring of a rotating dim."""
    grid = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    free = list(range(len(grid)))
    axes: list[int | None] = []
    for _ in shape:
        axis = draw(st.sampled_from([None, *free]))
        if axis is not None:
            free.remove(axis)
        axes.append(axis)
    tile = [
        size if a is None else ceil(size / grid[a]) + draw(st.integers(0, 1))
        for size, a in zip(shape, axes, strict=True)
    ]
    rings = [a for a in free if grid[a] > 1]
    if not (shape and rings) or not draw(st.booleans()):
        return Layout(shape, grid, tuple(axes), tuple(tile))
    dim = draw(st.integers(0, len(shape) - 1))
    ring = draw(st.sampled_from(rings))
    pieces, window = grid[ring], draw(st.integers(1, 2))
    steps = pieces * window
    tile[dim] = steps * max(1, ceil(tile[dim] / steps))
    skew = [(ring, pieces, window)]
    others = [a for a in range(len(grid)) if a != ring and grid[a] > 1]
    if others and draw(st.booleans()):
        skew.append((draw(st.sampled_from(others)), 2, draw(st.integers(1, steps))))
    rotating = Rotating(dim, ring, pieces, steps, tuple(skew), draw(st.integers(0, steps - 1)))
    return Layout(shape, grid, tuple(axes), tuple(tile), rotating)


@st.composite
def layout_pairs(draw: st.DrawFn) -> tuple[Layout, Layout]:
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=3)))
    return draw(layouts(shape)), draw(layouts(shape))


def _held(layout: Layout, cores: int) -> list[set[int]]:
    """The source elements (row-major) each of `cores` cores holds in `layout`."""
    rows = flat_sources(layout, layout.shape, None)
    return [set(rows[c][rows[c] >= 0].tolist()) if c < layout.cores else set()
            for c in range(cores)]


def _even_shares(held: list[set[int]], needs: list[set[int]]) -> Shares:
    """By brute force: each element a destination core needs and does not hold, from every
    core holding it, an even share."""
    holders: defaultdict[int, list[int]] = defaultdict(list)
    for core, elements in enumerate(held):
        for e in elements:
            holders[e].append(core)
    shares: defaultdict[tuple[int, int], float] = defaultdict(float)
    for d, need in enumerate(needs):
        for e in need - held[d]:
            for s in holders[e]:
                shares[s, d] += 1 / len(holders[e])
    return dict(shares)


def _as_shares(flows: Flows) -> Shares:
    pairs = list(zip(flows.src.tolist(), flows.dst.tolist(), strict=True))
    assert len(set(pairs)) == len(pairs), "each pair once"
    return dict(zip(pairs, flows.elements.tolist(), strict=True))


def _assert_same_shares(got: Shares, want: Shares) -> None:
    assert got.keys() == want.keys()
    for pair, x in want.items():
        assert got[pair] == pytest.approx(x, abs=1e-9), pair


def _assert_totals(flows: Flows, sent: np.ndarray, received: np.ndarray) -> None:
    n = len(sent)
    np.testing.assert_allclose(np.bincount(flows.src, flows.elements, n), sent, atol=1e-9)
    np.testing.assert_allclose(np.bincount(flows.dst, flows.elements, n), received, atol=1e-9)
    assert np.all(flows.elements > 0)


@settings(max_examples=60, deadline=None)
@given(layout_pairs())
def test_relayout_flows_are_the_even_shares_and_sum_to_the_totals(
    pair: tuple[Layout, Layout],
) -> None:
    src, dst = pair
    flows = relayout_flows(src, dst)
    _assert_totals(flows, *relayout_traffic(src, dst))
    cores = max(src.cores, dst.cores)
    _assert_same_shares(_as_shares(flows), _even_shares(_held(src, cores), _held(dst, cores)))


@st.composite
def element_moves(draw: st.DrawFn) -> tuple[Layout, Layout, View | np.ndarray]:
    """A move into a tensor whose elements are source elements: a transpose view, or an
    explicit (gather-like) source index per element, -1 zero fill, repeats allowed."""
    source = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    if len(source) >= 2 and draw(st.booleans()):
        perm = draw(st.permutations(range(len(source))))
        result = tuple(source[p] for p in perm)
        return draw(layouts(source)), draw(layouts(result)), View(transpose_map(perm))
    result = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    at = rng.integers(-1, max(prod(source), 1), result)
    return draw(layouts(source)), draw(layouts(result)), at


def _needs(dst: Layout, source: tuple[int, ...], sources: View | np.ndarray,
           cores: int) -> list[set[int]]:
    """The source elements each core's destination buffer reads, by brute force."""
    if isinstance(sources, View):
        rows = flat_sources(dst, source, sources)
    else:
        at = flat_sources(dst, dst.shape, None)
        rows = np.where(at >= 0, np.reshape(sources, -1)[np.maximum(at, 0)], -1)
    return [set(rows[c][rows[c] >= 0].tolist()) if c < dst.cores else set()
            for c in range(cores)]


# A rotating source with copies (grid axis 2): every element has two holders.
COPIED_ROTATING = Layout((4, 8), (2, 2, 2), (0, None), (2, 8),
                         Rotating(1, 1, 2, 4, ((1, 2, 2),)))


@settings(max_examples=60, deadline=None)
@given(element_moves())
@example((COPIED_ROTATING, Layout((8, 4), (4,), (None, 0), (8, 1)),
          View(transpose_map((1, 0)))))
def test_element_move_flows_are_the_even_shares_and_sum_to_the_totals(
    case: tuple[Layout, Layout, View | np.ndarray],
) -> None:
    src, dst, sources = case
    move = element_move(src, dst, sources, messages=True)
    assert move.flows is not None
    _assert_totals(move.flows, move.sent, move.received)
    cores = max(src.cores, dst.cores)
    want = _even_shares(_held(src, cores), _needs(dst, src.shape, sources, cores))
    _assert_same_shares(_as_shares(move.flows), want)
    without = element_move(src, dst, sources)
    assert without.flows is None
    np.testing.assert_array_equal(without.sent, move.sent)


def _one_view(draw: st.DrawFn, source: tuple[int, ...]
              ) -> tuple[AffineMap, bool, tuple[int, ...]]:
    """A view of a `source`-shaped tensor as the frontend makes them: (its map from result
    to source indices, whether it zero-fills, its result shape)."""
    kind = draw(st.sampled_from(["transpose", "reshape", "slice", "pad", "broadcast"]))
    rank = len(source)
    if kind == "transpose" and rank >= 2:
        perm = draw(st.permutations(range(rank)))
        return transpose_map(perm), False, tuple(source[p] for p in perm)
    if kind == "reshape" and prod(source) > 1:
        total, result = prod(source), []
        while total > 1 and len(result) < 3:
            factor = draw(st.sampled_from([f for f in range(1, total + 1) if total % f == 0]))
            result.append(factor)
            total //= factor
        result = [*result, total] if total > 1 or not result else result
        return reshape_map(source, tuple(result)), False, tuple(result)
    if kind == "slice" and rank:
        starts = [draw(st.integers(0, n - 1)) for n in source]
        steps = [draw(st.integers(1, 2)) for _ in source]
        result = tuple(-(-(n - a) // b) for n, a, b in zip(source, starts, steps, strict=True))
        return slice_map(source, starts, steps), False, result
    if kind == "pad" and rank:
        before = [draw(st.integers(0, 2)) for _ in source]
        after = [draw(st.integers(0, 2)) for _ in source]
        amap = AffineMap(rank, 0, tuple(AffineExpr.dimension(d) - b
                                        for d, b in enumerate(before)))
        result = tuple(n + b + a for n, b, a in zip(source, before, after, strict=True))
        return amap, True, result
    at = draw(st.integers(0, rank))  # broadcast: a new dim of 1-3 copies
    amap = AffineMap(rank + 1, 0, tuple(AffineExpr.dimension(d if d < at else d + 1)
                                        for d in range(rank)))
    return amap, False, (*source[:at], draw(st.integers(1, 3)), *source[at:])


@st.composite
def view_moves(draw: st.DrawFn) -> tuple[Layout, Layout, View]:
    """A chain of one to three views (transposes, reshapes, strided slices, pads, broadcasts)
    of a small tensor, and layouts of its source and result."""
    shapes = [tuple(draw(st.lists(st.integers(1, 6), min_size=0, max_size=3)))]
    steps: list[tuple[AffineMap, bool]] = []
    for _ in range(draw(st.integers(1, 3))):
        amap, padded, result = _one_view(draw, shapes[-1])
        steps.append((amap, padded))
        shapes.append(result)
    view = View(AffineMap.identity(len(shapes[-1])))
    for (amap, padded), inner in zip(reversed(steps), reversed(shapes[:-1]), strict=True):
        view = view.through(amap, padded, inner)
    return draw(layouts(shapes[0])), draw(layouts(shapes[-1])), view


@settings(max_examples=150, deadline=None)
@given(view_moves(), st.booleans())
def test_a_view_move_counted_per_group_of_dims_is_the_element_wise_one(
    case: tuple[Layout, Layout, View], messages: bool
) -> None:
    """`element_move` counts a view's traffic per group of dims where every source element
    has as many holders: the same sent, received, copied and messages as element by
    element, and the brute-force even shares."""
    src, dst, view = case
    want = exchange._element_move(src, dst, view, messages, None)
    got = exchange._factored_move(src, dst, view, messages, None)
    if got is None:  # holders differ: only rotating layouts
        assert src.rotating is not None
        return
    np.testing.assert_allclose(got.sent, want.sent, atol=1e-9)
    np.testing.assert_array_equal(got.received, want.received)
    np.testing.assert_array_equal(got.copied, want.copied)
    assert got.in_place == want.in_place
    if messages:
        assert got.flows is not None and want.flows is not None
        _assert_same_shares(_as_shares(got.flows), _as_shares(want.flows))
        cores = max(src.cores, dst.cores)
        _assert_same_shares(_as_shares(got.flows),
                            _even_shares(_held(src, cores), _needs(dst, src.shape, view, cores)))


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_gather_messages_sum_to_its_totals(data: st.DataObject) -> None:
    """The table's rows and the ids move in one exchange: its messages are both moves'."""
    table_shape = (data.draw(st.integers(2, 6)), data.draw(st.integers(1, 4)))
    ids_shape = (data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4)))
    kind = GatherKind("rows", 0)
    table, ids = data.draw(layouts(table_shape)), data.draw(layouts(ids_shape))
    dst = data.draw(layouts(kind.shape(table_shape, ids_shape)))
    index = kind.sample(table_shape, ids_shape)
    plain, copied = gather_traffic(table, ids, dst, index, kind, 4, 4)
    routed, routed_copied = gather_traffic(table, ids, dst, index, kind, 4, 4, messages=True)
    assert plain.messages is None and routed.messages is not None
    assert routed_copied == copied
    # of_messages sums the messages per core
    np.testing.assert_allclose(routed.sent, plain.sent, atol=1e-9)
    np.testing.assert_allclose(routed.received, plain.received, atol=1e-9)


# A transpose between two 2x2 grids: core (i, j) holds block (i, j), then block (j, i).
BLOCKS = Layout((4, 4), (2, 2), (0, 1), (2, 2))
TRANSPOSED = Layout((4, 4), (2, 2), (1, 0), (2, 2))
# Rows to columns on 4 cores: every core sends one element to each other core.
ROWS = Layout((4, 4), (4,), (0, None), (1, 4))
COLUMNS = Layout((4, 4), (4,), (None, 0), (4, 1))


def test_a_transpose_between_two_2x2_grids_is_two_messages_routed_on_mesh_64() -> None:
    """Cores 0 and 3 keep their block; core 1 needs block (1, 0) from core 2 and core 2
    block (0, 1) from core 1: 4 f32 each, 16 bytes, one hop on row 0 of the 8x8 mesh:
    ports and links ⌈16 x 0.28⌉ = 5 cycles, plus 1 hop of latency."""
    chip = load_chip("mesh-64")
    traffic = relayout_exchange(BLOCKS, TRANSPOSED, 4, chip.topology.routes)
    assert traffic.messages is not None
    m = traffic.messages
    assert sorted(zip(m.src.tolist(), m.dst.tolist(), m.nbytes.tolist(), strict=True)) == [
        (1, 2, 16.0), (2, 1, 16.0)]
    assert chip.topology.exchange_cycles(traffic, chip.exchange_cycles_per_byte) == 6


def test_rows_to_columns_share_links_on_mesh_64() -> None:
    """Core d needs column d and holds (d, d): one f32 from each other core. On row 0 of the
    mesh the east link from column 1 carries cores 0 and 1 to cores 2 and 3, 4 messages,
    16 bytes: ⌈16 x 0.28⌉ = 5 cycles, over the ports' ⌈12 x 0.28⌉ = 4, plus 3 hops."""
    chip = load_chip("mesh-64")
    traffic = relayout_exchange(ROWS, COLUMNS, 4, True)
    assert traffic.messages is not None
    assert len(traffic.messages.src) == 12
    assert traffic.messages.nbytes.tolist() == [4.0] * 12
    loads = chip.topology.link_loads(traffic)["mesh"]
    assert loads[0, 1, 0] == 16.0  # row 0, column 1, east
    assert chip.topology.exchange_cycles(traffic, chip.exchange_cycles_per_byte) == 8
    assert costs.exchange_cycles(load_chip("ipu-mk2"), traffic) == 4


@pytest.mark.parametrize(("chip", "routes"), [("ipu-mk2", False), ("mesh-64", True),
                                              ("wormhole-n150", True), ("blackhole-p150", True),
                                              ("ipu-pod4", True)])
def test_estimates_pass_messages_exactly_when_the_chip_routes(
    chip: str, routes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = load_chip(chip)
    assert spec.topology.routes is routes
    seen: list[Traffic] = []

    def record(_: object, traffic: Traffic) -> int:
        seen.append(traffic)
        return 0

    monkeypatch.setattr(costs, "exchange_cycles", record)
    transition_estimate(spec, ROWS, COLUMNS, 4)
    transition_estimate(spec, BLOCKS, TRANSPOSED, 4, View(transpose_map((1, 0))))
    gather = GatherSpec(GatherKind("rows", 0), (8, 4), (2, 3))
    gather_estimate(spec, Layout((2, 3, 4), (4,), (None, None, 0), (2, 3, 1)), 4, gather, 4)
    assert len(seen) == 3
    for traffic in seen:
        assert (traffic.messages is not None) is routes


@pytest.mark.parametrize(("chip", "routes"), [("ipu-mk2", False), ("mesh-64", True)])
def test_the_simulator_passes_messages_exactly_when_the_chip_routes(
    chip: str, routes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BERT's embeddings (a gather, relayouts with and without views) simulated: every
    relayout's and gather's exchange carries its messages on a chip that routes."""
    seen: defaultdict[str, list[bool]] = defaultdict(list)
    for name in ("relayout_exchange", "element_move", "gather_traffic"):
        monkeypatch.setattr(exchange, name, _recording(seen, name, getattr(exchange, name)))
    model = embedding(unsqueeze=True)
    ids = np.random.default_rng(0).integers(0, VOCAB, (BATCH, SEQ))
    simulate(compile_model(model, CompileOptions(chip=chip)).module, load_chip(chip),
             {"ids": ids})
    assert seen["gather_traffic"] and seen["relayout_exchange"] + seen["element_move"]
    assert {flag for flags in seen.values() for flag in flags} == {routes}, dict(seen)


def _recording(seen: defaultdict[str, list[bool]], name: str,
               function: Callable[..., Traffic | ViewMove | tuple[Traffic, int]]
               ) -> Callable[..., Traffic | ViewMove | tuple[Traffic, int]]:
    """`function`, noting whether each call asks for messages."""
    signature = inspect.signature(function)

    def recorded(*args: object, **kwargs: object) -> Traffic | ViewMove | tuple[Traffic, int]:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        seen[name].append(bool(bound.arguments["messages"]))
        return function(*args, **kwargs)
    return recorded
