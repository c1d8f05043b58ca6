"""Shifts and all-reduces routed through the chip's topology: `costs.exchange_cycles`
dispatches to `chip.topology`; the collectives' messages (`t10.common.collectives`) keep
today's per-core totals; their pattern-cached cost is the routed cost; and the plan
estimate's exchange cycles are the simulated ones on routing chips."""

from __future__ import annotations

import dataclasses
from functools import cache
from math import prod

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from xdsl.dialects.linalg.ops import GenericOp

from t10 import driver
from t10.common import collectives, costs
from t10.common.chip_spec import ChipSpec, chip_from_dict, load_chip
from t10.common.estimator import estimate
from t10.common.exchange import grid_coords
from t10.common.placements import placements_with_rings
from t10.common.plans import OUTPUT, Plan, partial_dims, temporal_plans
from t10.common.tensor_expr import matmul_expr
from t10.common.topologies import AllToAllTopology
from t10.common.traffic import Traffic
from t10.errors import T10Error
from t10.examples.models import matmul
from t10.frontend import import_onnx
from t10.outputs.report import input_specs, random_inputs
from t10.sim.simulator import simulate
from t10.t10_dialects.rtensor import EstimateAttr, PlanAttr

ROUTING = ("mesh-64", "wormhole-n150", "blackhole-p150", "ipu-pod4")
SMALL_SYSTEMS = {
    # 4 all-to-all chips of 8 cores (a ring, or every pair linked), or of 2x4 meshes
    "ring-4x8": {"chips": 4, "arrangement": "ring"},
    "linked-4x8": {"chips": 4, "arrangement": "all-to-all"},
    "meshes-4x8": {"chips": 4, "arrangement": "ring",
                   "inner": {"kind": "mesh", "rows": 2, "cols": 4, "link_cycles_per_byte": 0.5,
                             "cycles_per_hop": 3}},
}


@cache
def chip(name: str) -> ChipSpec:
    if name not in SMALL_SYSTEMS:
        return load_chip(name)
    obj = load_chip("test-16").to_dict()
    obj |= {"name": name, "cores": 32, "topology": {
        "kind": "multi-chip", "link_cycles_per_byte": 0.07, "links_per_pair": 2,
        "link_latency_cycles": 50, **SMALL_SYSTEMS[name]}}
    return chip_from_dict(obj)


@st.composite
def grids(draw: st.DrawFn, max_cores: int = 64) -> tuple[int, ...]:
    """A grid of 1 to 3 axes of at most `max_cores` cores."""
    grid: list[int] = []
    for _ in range(draw(st.integers(1, 3))):
        grid.append(draw(st.integers(1, max(1, max_cores // prod(grid)))))
    return tuple(grid)


@st.composite
def rings(draw: st.DrawFn, max_cores: int = 64) -> tuple[tuple[int, ...], int, int]:
    """(grid, ring axis, pieces dividing that axis's size, at least 2)."""
    grid = list(draw(grids(max_cores)))
    ring = draw(st.integers(0, len(grid) - 1))
    if grid[ring] < 2:
        grid[ring] = 2
    size = grid[ring]
    pieces = draw(st.sampled_from([p for p in range(2, size + 1) if size % p == 0]))
    return tuple(grid), ring, pieces


@st.composite
def groups(draw: st.DrawFn, max_cores: int = 64) -> tuple[tuple[int, ...], tuple[int, ...]]:
    grid = draw(grids(max_cores))
    axes = draw(st.sets(st.integers(0, len(grid) - 1)))
    return grid, tuple(sorted(axes))


# ---------------------------------------------------------------------------- the dispatch


@given(
    cores=st.integers(1, 40),
    triples=st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39), st.integers(0, 10**6)),
                     max_size=60),
)
def test_all_to_all_costs_messages_by_the_busiest_core_as_before(
    cores: int, triples: list[tuple[int, int, int]]
) -> None:
    src, dst = ([t[i] % cores for t in triples] for i in range(2))
    traffic = Traffic.of_messages(cores, src, dst, [t[2] for t in triples])
    for name in ("ipu-mk2", "test-16"):
        ipu = chip(name)
        assert costs.exchange_cycles(ipu, traffic) == costs.exchange_rate(ipu)(traffic.busiest())


@pytest.mark.parametrize("name", ROUTING)
def test_exchange_cycles_is_the_chips_topologys_cost(name: str) -> None:
    c = chip(name)
    traffic = collectives.shift_traffic((c.cores,), 0, c.cores, 1000)
    routed = c.topology.exchange_cycles(traffic, c.exchange_cycles_per_byte)
    assert costs.exchange_cycles(c, traffic) == routed
    # the wrap-around message crosses the whole machine: more than its cores' ports
    assert routed > costs.exchange_rate(c)(1000)
    with pytest.raises(T10Error, match="messages .* are needed"):
        costs.exchange_cycles(c, Traffic.uniform(c.cores, 1000))


def test_exchange_floor_is_the_port_time_and_below_any_routed_cost() -> None:
    mesh = chip("mesh-64")
    assert costs.exchange_floor(mesh, 100) == 28
    assert costs.exchange_floor(mesh, 100) <= costs.exchange_cycles(
        mesh, collectives.shift_traffic((4,), 0, 4, 100)
    )


# ---------------------------------------------------------------------------- the messages


@given(rings(), st.integers(0, 10**6))
def test_a_shift_sends_each_core_its_ring_successors_bytes(
    ring: tuple[tuple[int, ...], int, int], nbytes: int
) -> None:
    grid, axis, pieces = ring
    traffic = collectives.shift_traffic(grid, axis, pieces, nbytes)
    cores = prod(grid)
    # today's uniform count: every core sends and receives `nbytes`
    assert traffic.sent.tolist() == traffic.received.tolist() == [float(nbytes)] * cores
    m = traffic.messages
    assert m is not None and m.dst.tolist() == list(range(cores))
    coords, source = grid_coords(grid), grid_coords(grid)[m.src]
    others = [a for a in range(len(grid)) if a != axis]
    assert (source[:, others] == coords[:, others]).all()
    c = coords[:, axis]
    assert (source[:, axis] == c // pieces * pieces + (c + 1) % pieces).all()


@given(groups(), st.integers(0, 10**6))
def test_a_group_exchange_sends_each_other_member_one_run(
    group: tuple[tuple[int, ...], tuple[int, ...]], nbytes: int
) -> None:
    grid, axes = group
    traffic = collectives.group_traffic(grid, axes, nbytes)
    cores, members = prod(grid), prod(grid[a] for a in axes)
    # today's uniform count: (group - 1) runs sent and received by every core
    each = float((members - 1) * nbytes)
    assert traffic.sent.tolist() == traffic.received.tolist() == [each] * cores
    m = traffic.messages
    assert m is not None and len(m.src) == cores * (members - 1)
    pairs = set(zip(m.src.tolist(), m.dst.tolist(), strict=True))
    assert len(pairs) == len(m.src)  # one message per ordered pair
    coords = grid_coords(grid)
    others = [a for a in range(len(grid)) if a not in axes]
    assert (coords[m.src][:, others] == coords[m.dst][:, others]).all()
    assert (m.src != m.dst).all()


# ---------------------------------------------------------------------------- cached costs


SYSTEMS = st.sampled_from(ROUTING + tuple(SMALL_SYSTEMS))


@settings(max_examples=100)
@given(SYSTEMS, st.data(), st.integers(0, 10**7))
def test_a_shifts_cached_cost_is_its_routed_cost(name: str, data: st.DataObject,
                                                 nbytes: int) -> None:
    # linear, or placed with its ring folded along a dim of the chip's cores
    c = chip(name)
    grid, axis, pieces = data.draw(rings(c.cores).filter(lambda r: prod(r[0]) <= c.cores))
    placement = data.draw(st.sampled_from(
        [None, *placements_with_rings(grid, [(axis, pieces)], [], c.core_shape)]))
    traffic = collectives.on_chip(c, grid, placement,
                                  collectives.shift_traffic(grid, axis, pieces, nbytes))
    assert collectives.shift_cycles(c, grid, axis, pieces, nbytes, placement) == \
        costs.exchange_cycles(c, traffic)


@settings(max_examples=100)
@given(SYSTEMS, st.data(), st.integers(0, 10**7))
def test_a_group_exchanges_cached_cost_is_its_routed_cost(name: str, data: st.DataObject,
                                                          nbytes: int) -> None:
    # the direct messages of large groups are many: at most 200000 of them
    c = chip(name)
    grid, axes = data.draw(groups(c.cores).filter(
        lambda g: prod(g[0]) * prod(g[0][a] for a in g[1]) <= 200_000))
    event("crosses chips" if c.cores_per_chip < prod(grid) else "one chip")
    placement = data.draw(st.sampled_from(
        [None, *placements_with_rings(grid, [], axes, c.core_shape)]))
    traffic = collectives.on_chip(c, grid, placement,
                                  collectives.group_traffic(grid, axes, nbytes))
    assert collectives.group_cycles(c, grid, axes, nbytes, placement) == \
        costs.exchange_cycles(c, traffic)


def test_cross_chip_shift_on_ipu_pod4() -> None:
    # 2 chips' cores in a ring of 2 along axis 0: cores 0..1471 receive from 1472..2943 and
    # back; each chip-to-chip bundle (5 links, 0.04140625 cycles/byte) carries 1472·1000
    # bytes: ⌈1472000 / 5⌉ · 0.04140625 = 12190 > the ports' 280, plus 1000 cycles a hop
    pod = chip("ipu-pod4")
    assert collectives.shift_cycles(pod, (2, 1472), 0, 2, 1000) == 12190 + 1000


# ---------------------------------------------------------------------------- hand-computed


def test_ring_shift_of_four_cores_along_a_mesh_row() -> None:
    # cores 0..3 are the first 4 of mesh-64's row 0; core i receives 100 bytes from i + 1
    # (mod 4): 1->0, 2->1, 3->2 one hop west each, 0->3 three hops east (links leaving
    # cols 0, 1, 2). Every link carries 100 bytes, every port 100: ⌈100 · 0.28⌉ = 28; the
    # longest path is 3 hops at 1 cycle each: 28 + 3 = 31
    mesh = chip("mesh-64")
    traffic = collectives.shift_traffic((4,), 0, 4, 100)
    loads = mesh.topology.link_loads(traffic)["mesh"]
    assert loads[0, :4, 0].tolist() == [100, 100, 100, 0]  # east
    assert loads[0, :4, 1].tolist() == [0, 100, 100, 100]  # west
    assert loads.sum() == 600
    assert costs.exchange_cycles(mesh, traffic) == 31
    assert collectives.shift_cycles(mesh, (4,), 0, 4, 100) == 31


def test_pairs_all_reduce_on_a_mesh_row() -> None:
    # grid (2, 2) on mesh-64: groups over axis 1 are {0, 1} and {2, 3}, neighbours in row 0;
    # each sends the other one run of 100 bytes, one hop: 28 + 1
    mesh = chip("mesh-64")
    assert collectives.group_cycles(mesh, (2, 2), (1,), 100) == 29
    # over axis 0: {0, 2} and {1, 3}, two hops apart: 0->2 and 1->3 both cross the east
    # link leaving col 1 (200 bytes: 56 cycles), as 2->0 and 3->1 the west link leaving
    # col 2; 56 + 2 hops
    assert collectives.group_cycles(mesh, (2, 2), (0,), 100) == 58


# ---------------------------------------------------------------------------- estimate = sim


def _simulated(name: str, m: int, k: int, n: int, plan: Plan) -> tuple[int, int]:
    """(simulated, estimated) exchange cycles of the pinned matmul operator (its inputs
    come from the host, so it has no relayout: every exchange is a shift or an
    all-reduce)."""
    module = import_onnx(matmul(m, k, n))
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    generic.attributes["t10.plan"] = PlanAttr.from_plan(plan)
    compiled = driver.compile_module(module, driver.CompileOptions(chip=name, fuse=False))
    x = random_inputs(input_specs(compiled.module), 0)
    report = simulate(compiled.module, compiled.chip, x, timing_only=True).report
    assert [op.name for op in report.ops] == ["matmul"]
    (planned,) = [op for op in compiled.planned.walk() if isinstance(op, GenericOp)]
    estimated = planned.attributes["t10.estimate"]
    assert isinstance(estimated, EstimateAttr)
    return report.op("matmul").exchange_cycles, estimated.exchange.data


@st.composite
def matmul_plans(draw: st.DrawFn, cores: int) -> tuple[int, int, int, Plan]:
    """A small matmul (m, k, n) and one of the plans of random factors (loop dims m, n, k)."""
    m, k, n = (draw(st.integers(2, 24)) for _ in range(3))
    sizes = (m, n, k)
    factors: list[int] = []
    for s in sizes:
        factors.append(draw(st.integers(1, min(s, cores // prod(factors)))))
    plans = list(temporal_plans(matmul_expr(m, k, n), tuple(factors), rotate=True, levels=2))
    shifting = [p for p in plans if p.rotations]
    return m, k, n, draw(st.sampled_from(shifting if shifting and draw(st.booleans()) else plans))


@pytest.mark.parametrize("name", ["mesh-64", "wormhole-n150", "blackhole-p150"])
@settings(max_examples=40)
@given(data=st.data())
def test_estimated_shifts_and_all_reduces_are_the_simulated_ones(
    name: str, data: st.DataObject
) -> None:
    c = chip(name)
    m, k, n, plan = data.draw(matmul_plans(c.cores))
    event("shifts" if plan.rotations else "no shift")
    event("all-reduce" if partial_dims(matmul_expr(m, k, n), plan) else "no all-reduce")
    event("output rotates" if plan.rotation_of(OUTPUT) else "output stays")
    simulated, estimated = _simulated(name, m, k, n, plan)
    assert simulated == estimated
    # and they are routed: every exchange that moves bytes pays at least a hop of latency
    expr = matmul_expr(m, k, n)
    flat = estimate(dataclasses.replace(c, topology=AllToAllTopology()), expr, plan)
    if flat.exchange_cycles:
        assert estimated > flat.exchange_cycles


def _across_chips(m: int, k: int, n: int, plan: Plan) -> None:
    simulated, estimated = _simulated("ipu-pod4", m, k, n, plan)
    assert simulated == estimated
    flat = estimate(dataclasses.replace(chip("ipu-pod4"), topology=AllToAllTopology()),
                    matmul_expr(m, k, n), plan)
    assert estimated > flat.exchange_cycles


def test_estimated_all_reduce_across_chips_is_the_simulated_one() -> None:
    # k split in 3 on a grid of 1 x 982 x 3 (2946 cores): the group of cores 1470, 1471
    # and 1472 spans chips 0 and 1
    plan = Plan((1, 982, 3))
    assert partial_dims(matmul_expr(1, 3, 982), plan) == (2,)
    _across_chips(1, 3, 982, plan)


def test_estimated_shift_across_chips_is_the_simulated_one() -> None:
    # A rotates along k on rings of 64 of n's 2944 cores: a chip holds 736 n-positions, not
    # a whole number of rings, so some rings span two chips
    expr = matmul_expr(2, 128, 2944)
    plan = next(p for p in temporal_plans(expr, (1, 2944, 2), rotate=True)
                if [(r.operand, r.ring_dim, r.pieces) for r in p.rotations] == [(0, 1, 64)])
    _across_chips(2, 128, 2944, plan)
