"""Placements of a plan's grid on the chip's cores (`t10.common.placements`): folded rings
keep every shift within two hops, the map is one-to-one, costs and the simulator read the
cores it names, relayouts keep what stays on a core, and the plan search chooses
placements that are never slower than the linear one."""

from __future__ import annotations

import json
from collections.abc import Callable
from math import prod
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_every_model import MODELS
from test_routed_collectives import chip, rings

from t10.common import collectives, exchange
from t10.common.chip_spec import load_chip
from t10.common.placements import (
    Placement,
    check_fits,
    core_ids,
    fold_positions,
    placement_problem,
    placements_with_rings,
)
from t10.common.plans import Layout
from t10.common.tensor_expr import matmul_expr
from t10.driver import CompileOptions, check_tolerance, compile_model, run_model
from t10.errors import T10Error
from t10.examples.models import matmul, mlp
from t10.outputs.report import input_specs, random_inputs
from t10.planning.layout_transitions import aligned_plan
from t10.sim.simulator import simulate
from t10.t10_dialects import core
from t10.t10_dialects.syntax import ints_of


@st.composite
def mesh_shapes(draw: st.DrawFn) -> tuple[int, int]:
    return draw(st.integers(1, 12)), draw(st.integers(1, 12))


def ring_hops(grid: tuple[int, ...], placement: Placement | None, shape: tuple[int, int],
              axis: int, pieces: int) -> int:
    """The most mesh hops (no wrap) from a core to its ring successor."""
    ids = core_ids(grid, placement, shape)
    source = collectives.shift_sources(grid, axis, pieces)
    (r0, c0), (r1, c1) = np.divmod(ids, shape[1]), np.divmod(ids[source], shape[1])
    return int((np.abs(r0 - r1) + np.abs(c0 - c1)).max(initial=0))


@pytest.mark.parametrize("n", range(2, 65))
def test_a_folded_ring_puts_neighbours_at_most_two_apart(n: int) -> None:
    pos = fold_positions(n)
    assert sorted(pos.tolist()) == list(range(n))
    assert max(abs(int(pos[j]) - int(pos[(j + 1) % n])) for j in range(n)) <= 2


@settings(max_examples=200)
@given(rings(144), mesh_shapes(), st.data())
def test_placements_with_rings_shift_within_two_hops_one_to_one(
    ring: tuple[tuple[int, ...], int, int], shape: tuple[int, int], data: st.DataObject
) -> None:
    grid, axis, pieces = ring
    cores = prod(shape)
    gathers = data.draw(st.lists(st.integers(0, len(grid) - 1), max_size=2))
    for placement in placements_with_rings(grid, [(axis, pieces)], gathers, shape):
        assert placement_problem(grid, placement, shape) is None
        ids = core_ids(grid, placement, shape)
        assert len(set(ids.tolist())) == prod(grid)  # one chip core per grid core
        assert 0 == ids[0] and int(ids.max()) < cores
        assert ring_hops(grid, placement, shape, axis, pieces) <= 2


def test_a_grid_filling_the_wafer_gets_both_rings_folded() -> None:
    # the wafer's 1024x768x3072 plan: 12x16x12 cores, rings on d0 (6) and d2 (12); d1 is
    # split 4 x 4 over rows and columns around them
    grid, shape = (12, 16, 12), (48, 48)
    found = list(placements_with_rings(grid, [(0, 6), (2, 12)], [], shape))
    assert [str(p) for p in found] == [
        "placed [[d1:4, d0:12], [d1:4, d2:12]] fold [(d0, 6), (d2, 12)]",
        "placed [[d1:4, d2:12], [d1:4, d0:12]] fold [(d0, 6), (d2, 12)]",
    ]
    for p in found:
        assert ring_hops(grid, p, shape, 0, 6) == ring_hops(grid, p, shape, 2, 12) == 2
    # linearly, the ring on d0 steps 192 cores: 4 rows
    assert ring_hops(grid, None, shape, 0, 6) > 2


def test_core_ids_by_hand() -> None:
    # grid [2, 4] on a 4x4 mesh: d1 along a row folded (0, 2, 3, 1), d0 down the column
    p = Placement((((0, 2),), ((1, 4),)), ((1, 4),))
    assert core_ids((2, 4), p, (4, 4)).tolist() == [0, 2, 3, 1, 4, 6, 7, 5]
    # d0 split: its major half on rows, its minor half on columns before d1
    p = Placement((((0, 2),), ((0, 2), (1, 2))))
    assert core_ids((4, 2), p, (2, 4)).tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    assert core_ids((4, 2), None, (2, 4)).tolist() == list(range(8))


@pytest.mark.parametrize(("grid", "placement", "problem"), [
    ((2, 4), Placement((((0, 2),), ((1, 2),))),
     "axis d1 of grid [2, 4] has 4 cores but its parts lay 2"),
    ((2, 1), Placement((((0, 2),), ((1, 1),))),
     "axis d1 of grid [2, 1] has one core and is laid on no dim"),
    ((2, 4), Placement((((0, 2), (1, 4)), ())),
     "dim 0 of the chip has 4 cores, but the parts laid on it take 8"),
    ((2, 4), Placement((((0, 2),), ((1, 4),)), ((1, 3),)),
     "a fold of 3 does not divide axis d1 of grid [2, 4]"),
    ((4, 4), Placement((((1, 2), (0, 4)), ((1, 2),)), ((1, 2),)),
     "folded axis d1 must lie whole in one part"),
    ((2, 4), Placement((((0, 2), (1, 4)),)),
     "it has 1 lines of parts, but the chip's cores form 4x4: one line per dim"),
])
def test_placement_problems(grid: tuple[int, ...], placement: Placement, problem: str) -> None:
    assert placement_problem(grid, placement, (4, 4)) == problem


def test_a_placement_that_does_not_fit_the_chip_is_one_error() -> None:
    p = Placement((((0, 8), (1, 8)), ((2, 2),)))
    with pytest.raises(T10Error, match=r"^core.shift: its cores cannot be placed \[\[d0:8, d1:8\]"
                       r", \[d2:2\]\] on this chip: dim 0 of the chip has 8 cores, but the "
                       r"parts laid on it take 64$"):
        check_fits("core.shift", (8, 8, 2), p, (8, 16))


# ---------------------------------------------------------------------------- costs


def test_a_folded_ring_along_a_mesh_row_by_hand() -> None:
    # 8 cores in mesh-64's row 0, a ring of 8, 1000 bytes a core. Linear: core 0 receives
    # from core 7, 7 hops; every link carries one message (1000 bytes: ⌈280⌉ cycles, as the
    # ports): 280 + 7. Folded (positions 0, 2, 4, 6, 7, 5, 3, 1): every message 1 or 2 hops,
    # still one per link and direction: 280 + 2
    mesh = chip("mesh-64")
    folded = Placement((((0, 8),),), ((0, 8),))
    assert collectives.shift_cycles(mesh, (8,), 0, 8, 1000) == 287
    with pytest.raises(T10Error):  # a 1-D placement on a 2-D mesh
        check_fits("shift", (8,), folded, mesh.core_shape)
    folded = Placement(((), ((0, 8),)), ((0, 8),))
    assert collectives.shift_cycles(mesh, (8,), 0, 8, 1000, folded) == 282
    loads = mesh.topology.link_loads(
        collectives.on_chip(mesh, (8,), folded, collectives.shift_traffic((8,), 0, 8, 1000)))
    # six messages of two hops, two of one (positions 6 -> 7 and 1 -> 0): 14 link crossings
    assert loads["mesh"].max() == 1000 and loads["mesh"].sum() == 14 * 1000


# ---------------------------------------------------------------------------- relayouts


@st.composite
def placed_layouts(draw: st.DrawFn, shape: tuple[int, ...],
                   mesh: tuple[int, int]) -> Layout:
    """A layout of a tensor of `shape` (every dim split or not) on a grid placed on `mesh`."""
    grid: list[int] = []
    axes: list[int | None] = []
    tile: list[int] = []
    for size in shape:
        parts = draw(st.sampled_from([p for p in range(1, size + 1) if size % p == 0]))
        if parts > 1 and prod(grid) * parts <= prod(mesh):
            axes.append(len(grid))
            grid.append(parts)
            tile.append(size // parts)
        else:
            axes.append(None)
            tile.append(size)
    copies = draw(st.integers(1, max(1, prod(mesh) // max(prod(grid), 1))))
    if copies > 1:
        grid.append(copies)
    if not grid:
        grid.append(1)
    rings_ = [(len(grid) - 1, grid[-1])] if grid[-1] > 1 else []
    choices = [None, *placements_with_rings(tuple(grid), rings_, [], mesh)]
    return Layout(shape, tuple(grid), tuple(axes), tuple(tile),
                  placement=draw(st.sampled_from(choices)))


@settings(max_examples=150)
@given(st.data())
def test_a_relayout_moves_what_the_core_beside_does_not_hold(data: st.DataObject) -> None:
    # brute force: each destination chip core receives the elements it needs that the
    # source core on the same chip core does not hold
    mesh = (4, 4)
    shape = (data.draw(st.sampled_from([4, 6, 8])), data.draw(st.sampled_from([2, 4])))
    src = data.draw(placed_layouts(shape, mesh))
    dst = data.draw(placed_layouts(shape, mesh))
    traffic = exchange.relayout_exchange(src, dst, 1, True, mesh)
    held = exchange.flat_sources(src, shape, None)
    need = exchange.flat_sources(dst, shape, None)
    src_at = {int(c): i for i, c in enumerate(core_ids(src.grid, src.placement, mesh))}
    expected = np.zeros(prod(mesh))
    for d, where in enumerate(core_ids(dst.grid, dst.placement, mesh).tolist()):
        wanted = set(need[d][need[d] >= 0].tolist())
        s = src_at.get(where)
        kept = set() if s is None else set(held[s][held[s] >= 0].tolist())
        expected[where] = len(wanted - kept)
    got = np.zeros(prod(mesh))
    got[: len(traffic.received)] = traffic.received
    assert got.tolist() == pytest.approx(expected.tolist())  # shares of copies: floats
    assert float(traffic.sent.sum()) == pytest.approx(float(expected.sum()))


def test_an_aligned_plan_takes_the_neighbours_placement() -> None:
    # a layout of an operator's [64, 32] output on grid [4, 8] placed with its columns
    # folded: the matmul reading it as its input, (d0, d2), places its grid alike
    expr = matmul_expr(64, 32, 16, 4)
    p = Placement((((0, 4),), ((1, 8),)), ((1, 8),))
    target = Layout((64, 32), (4, 8), (0, 1), (16, 4), placement=p)
    plan = aligned_plan(expr, expr.inputs[0], 0, target)
    assert plan is not None and plan.factors == (4, 1, 8)
    assert plan.placement == Placement((((0, 4),), ((2, 8),)), ((2, 8),))


# ---------------------------------------------------------------------------- chosen plans


def _matmul() -> onnx.ModelProto:
    return matmul(256, 1024, 1024)  # its chosen plan on mesh-64 rotates on a ring of 8


def _small_matmul() -> onnx.ModelProto:
    return matmul(96, 384, 384)  # with 2 KiB per core, rotates on rings of 8 on the wafer


WALKED = {
    "mesh-64": (MODELS["example:mlp"], MODELS["example:bert-ffn"], MODELS["zoo:bert-base"],
                _matmul),
    "wafer-48x48": (MODELS["example:mlp"], MODELS["example:bert-ffn"]),
    "wafer-48x48[sram_bytes_per_core=2048]": (_small_matmul,),
}


@pytest.mark.parametrize(("chip_name", "model"),
                         [(c, m) for c, models in WALKED.items() for m in models])
def test_every_chosen_shift_is_within_two_hops_and_no_slower_than_linear(
    chip_name: str, model: Callable[[], onnx.ModelProto]
) -> None:
    shape = load_chip(chip_name).core_shape
    assert len(shape) == 2
    aware = compile_model(model(), CompileOptions(chip=chip_name))
    shifts = [op for op in aware.module.walk() if isinstance(op, core.ShiftOp)]
    for shift in shifts:
        placement = None if shift.placement is None else shift.placement.to_placement()
        hops = ring_hops(ints_of(shift.grid), placement, (shape[0], shape[1]),
                         shift.ring.value.data, shift.pieces.value.data)
        assert hops <= 2, (shift.grid, shift.ring, shift.pieces, placement)
    oblivious = compile_model(model(), CompileOptions(chip=chip_name, placement="oblivious"))
    inputs = random_inputs(input_specs(aware.module), 0)
    fast = simulate(aware.module, aware.chip, inputs, timing_only=True).report
    slow = simulate(oblivious.module, oblivious.chip, inputs, timing_only=True).report
    assert fast.total_cycles <= slow.total_cycles


# ---------------------------------------------------------------------------- chips used


@pytest.mark.parametrize("model", [MODELS["example:mlp"], MODELS["example:bert-ffn"]])
def test_a_pod_is_never_slower_than_one_of_its_chips(model: Callable[[], onnx.ModelProto]) -> None:
    # ipu-pod4's chips are IPU MK2s (the same figures): planned on the pod, a model that
    # fits one chip keeps the one chip's plans when the chip-to-chip moves would cost more
    mk2 = run_model(model(), CompileOptions(chip="ipu-mk2"))
    pod = run_model(model(), CompileOptions(chip="ipu-pod4"), check=check_tolerance("fp32"))
    assert pod.check is not None and pod.check.passed
    assert pod.report.estimated_total_cycles == pod.report.total_cycles
    assert pod.report.total_cycles <= mk2.report.total_cycles


def test_a_model_too_big_for_one_chip_spreads_over_the_chips(tmp_path: Path) -> None:
    # 4 chips of 8 cores (256 KiB each: 2 MiB a chip) and two 1024x512 fp32 weights (4
    # MiB): only the whole system holds them; the moves between the layers cross the
    # chip-to-chip links, routed
    system = tmp_path / "ring-4x8.json"
    system.write_text(json.dumps(chip("ring-4x8").to_dict()))
    model = mlp(batch=64, sizes=(1024, 512, 1024))
    with pytest.raises(T10Error, match="does not fit"):
        compile_model(model, CompileOptions(chip="test-16[cores=8]"))
    run = run_model(model, CompileOptions(chip=str(system)), check=check_tolerance("fp32"))
    assert run.check is not None and run.check.passed
    assert run.report.estimated_total_cycles == run.report.total_cycles
    assert run.report.links is not None
    assert run.report.links.classes["chip-to-chip"].bytes > 0
