"""The plan search: exact against brute force, Pareto, memory reconciliation, the pass."""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from collections.abc import Iterator
from functools import cache
from math import ceil, prod
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import arith, func, linalg, tensor
from xdsl.dialects.builtin import Builtin, ModuleOp, StringAttr

from t10.common import costs
from t10.common.chip_spec import ChipSpec, load_chip
from t10.common.estimator import PlanEstimator, estimate
from t10.common.move_costs import quick_cycles, transition_estimate
from t10.common.plans import (
    OUTPUT,
    Estimate,
    Layout,
    Plan,
    Rotation,
    all_reduce_group,
    epilogue_elements,
    input_layouts,
    kernel_cycles,
    output_layout,
    plan_problem,
    rounds_partials,
    step_sizes,
    temporal_plans,
    validate_plan,
)
from t10.common.tensor_expr import Access, Epilogue, ExprKind, TensorExpr, matmul_expr
from t10.common.traffic import Traffic
from t10.common.view_maps import View
from t10.errors import T10Error
from t10.passes.t10_plan_search import T10PlanSearch
from t10.planning.layout_transitions import Edge, SharedMove, shared_moves
from t10.planning.memory_reconciliation import (
    Liveness,
    Operands,
    OpOptions,
    PlanPoint,
    PointColumns,
    ReturnedView,
    Swaps,
    choose_plans,
    model_bytes,
    op_options,
    peaks,
    pinned_options,
    returned_peak,
    smallest_model,
    split_bytes,
)
from t10.planning.model_search import affordable_shares
from t10.planning.plan_search import (
    factor_candidates,
    factor_range,
    min_cores_for,
    operator_frontier,
    pareto_frontier,
    spatial_factors,
)
from t10.planning.planners import planner as planner_of
from t10.planning.planners import planner_names
from t10.t10_dialects.parsing import Parser
from t10.t10_dialects.rtensor import EstimateAttr, PlanAttr, RTensor

# --------------------------------------------------------------------------------------------
# Expressions (built directly, independent of the frontend)
# --------------------------------------------------------------------------------------------


def matmul(m: int, k: int, n: int, elem_bytes: int = 4) -> TensorExpr:
    """C[d0, d1] += A[d0, d2] * B[d2, d1] (`matmul_expr`), named by its sizes."""
    return dataclasses.replace(matmul_expr(m, k, n, elem_bytes), name=f"matmul_{m}x{k}x{n}")


def batched_matmul(b: int, m: int, k: int, n: int) -> TensorExpr:
    """C[d0, d1, d2] += A[d0, d1, d3] * B[d0, d3, d2]."""
    return TensorExpr(
        name=f"bmm_{b}x{m}x{k}x{n}",
        loop_sizes=(b, m, n, k),
        parallel=(True, True, True, False),
        inputs=(Access((0, 1, 3), (b, m, k)), Access((0, 3, 2), (b, k, n))),
        output=Access((0, 1, 2), (b, m, n)),
        kind=ExprKind.CONTRACTION,
        elem_bytes=4,
        relu_like=False,
    )


def bias_add(rows: int, cols: int, relu_like: bool = False) -> TensorExpr:
    """Y[d0, d1] = X[d0, d1] + b[0, d1] (the bias broadcasts over rows)."""
    return TensorExpr(
        name=f"add_{rows}x{cols}",
        loop_sizes=(rows, cols),
        parallel=(True, True),
        inputs=(Access((0, 1), (rows, cols)), Access((None, 1), (1, cols))),
        output=Access((0, 1), (rows, cols)),
        kind=ExprKind.ELEMENTWISE,
        elem_bytes=4,
        relu_like=relu_like,
    )


def broadcast3(a: int, b: int, c: int) -> TensorExpr:
    """Y[d0, d1, d2] = X[d0, d1, d2] * s[0, d1, 0] + t[d0, 0, d2]."""
    return TensorExpr(
        name=f"bcast_{a}x{b}x{c}",
        loop_sizes=(a, b, c),
        parallel=(True, True, True),
        inputs=(
            Access((0, 1, 2), (a, b, c)),
            Access((None, 1, None), (1, b, 1)),
            Access((0, None, 2), (a, 1, c)),
        ),
        output=Access((0, 1, 2), (a, b, c)),
        kind=ExprKind.ELEMENTWISE,
        elem_bytes=4,
        relu_like=False,
    )


def scale_shift(rows: int, cols: int) -> TensorExpr:
    """Y[d0, d1] = X[d0, d1] * s[0, 0] + t[0, d1]: a scalar input reads no loop dim."""
    return TensorExpr(
        name=f"scale_{rows}x{cols}",
        loop_sizes=(rows, cols),
        parallel=(True, True),
        inputs=(
            Access((0, 1), (rows, cols)),
            Access((None, None), (1, 1)),
            Access((None, 1), (1, cols)),
        ),
        output=Access((0, 1), (rows, cols)),
        kind=ExprKind.ELEMENTWISE,
        elem_bytes=4,
        relu_like=False,
    )


def two_reductions(m: int, k1: int, k2: int, n: int) -> TensorExpr:
    """C[d0, d1] += A[d0, d2, d3] * B[d2, d3, d1]: the reduction group spans two dims."""
    return TensorExpr(
        name="mm2",
        loop_sizes=(m, n, k1, k2),
        parallel=(True, True, False, False),
        inputs=(Access((0, 2, 3), (m, k1, k2)), Access((2, 3, 1), (k1, k2, n))),
        output=Access((0, 1), (m, n)),
        kind=ExprKind.CONTRACTION,
        elem_bytes=4,
        relu_like=False,
    )


@cache
def base_chip() -> ChipSpec:
    return load_chip("test-16")


def tiny_chip(cores: int, sram: int | None = None) -> ChipSpec:
    base = base_chip()
    return dataclasses.replace(
        base, cores=cores, sram_bytes_per_core=base.sram_bytes_per_core if sram is None else sram
    )


# --------------------------------------------------------------------------------------------
# Brute force: the whole plan space
# --------------------------------------------------------------------------------------------


def whole_space(
    chip: ChipSpec, expr: TensorExpr, rotate: bool, levels: int = 1
) -> Iterator[tuple[Plan, Estimate]]:
    """Every F with product <= cores (every value 1..min(size, cores) per dim) times every
    temporal plan (with up to `levels` temporal dims), with its estimate."""
    ranges = [range(1, min(s, chip.cores) + 1) for s in expr.loop_sizes]
    for factors in itertools.product(*ranges):
        if prod(factors) <= chip.cores:
            for plan in temporal_plans(expr, factors, rotate=rotate, levels=levels):
                yield plan, estimate(chip, expr, plan)


@cache
def brute_force(
    cores: int, expr: TensorExpr, rotate: bool, levels: int = 1
) -> list[tuple[Plan, Estimate]]:
    return list(whole_space(tiny_chip(cores), expr, rotate, levels))


def planner_space(cores: int, expr: TensorExpr, planner: str) -> list[tuple[Plan, Estimate]]:
    """The whole plan space of `planner` (its `Planner.temporal_dims`)."""
    levels = planner_of(planner).temporal_dims
    return brute_force(cores, expr, levels > 0, max(levels, 1))


def fastest_fitting(space: list[tuple[Plan, Estimate]], capacity: int) -> tuple[int, int] | None:
    """(cycles, bytes) of the fastest plan that fits; ties: less memory."""
    fits = [(e.cycles, e.sram_bytes) for _, e in space if e.sram_bytes <= capacity]
    return min(fits) if fits else None


def capacities(space: list[tuple[Plan, Estimate]]) -> list[int]:
    """SRAM sizes spread over the plans' memory range, plus one that fits nothing."""
    sizes = sorted({e.sram_bytes for _, e in space})
    picks = {sizes[round(q * (len(sizes) - 1))] for q in (0, 0.1, 0.25, 0.5, 0.75, 1)}
    return sorted(picks | {sizes[0] - 1})


def searched(chip: ChipSpec, expr: TensorExpr, planner: str = "t10") -> PlanPoint:
    frontier = operator_frontier(chip, expr, planner, min_utilization=0.0)
    [point] = choose_plans(chip, [op_options(expr, frontier, Operands())], planner)
    return point


def row_max(rows: int, cols: int) -> TensorExpr:
    """Y[d0] = max over d1 of X[d0, d1] (a reduction: element-wise cost, max all-reduce)."""
    return TensorExpr(
        name=f"rowmax_{rows}x{cols}",
        loop_sizes=(rows, cols),
        parallel=(True, False),
        inputs=(Access((0, 1), (rows, cols)),),
        output=Access((0,), (rows,)),
        kind=ExprKind.REDUCTION,
        elem_bytes=4,
        relu_like=False,
        combiner="max",
    )


def sum_exp(a: int, k: int, b: int) -> TensorExpr:
    """Y[d0, d1, d3] = sum over d2 of exp(X[d0, d2, d1] - M[d0, 0, d1]) with d3 a keepdims loop
    of size 1: M does not read d2, so it may rotate along a parallel dim on ring d2."""
    return TensorExpr(
        name=f"sumexp_{a}x{k}x{b}",
        loop_sizes=(a, b, k, 1),
        parallel=(True, True, False, True),
        inputs=(Access((0, 2, 1), (a, k, b)), Access((0, None, 1), (a, 1, b))),
        output=Access((0, 3, 1), (a, 1, b)),
        kind=ExprKind.REDUCTION,
        elem_bytes=4,
        relu_like=False,
        combiner="sum",
    )


def square_sum(a: int, b: int, c: int) -> TensorExpr:
    """Y[d0] = sum over d1, d2 of X[d0, d1, d2]^2: two reduction dims."""
    return TensorExpr(
        name=f"sqsum_{a}x{b}x{c}",
        loop_sizes=(a, b, c),
        parallel=(True, False, False),
        inputs=(Access((0, 1, 2), (a, b, c)),),
        output=Access((0,), (a,)),
        kind=ExprKind.REDUCTION,
        elem_bytes=4,
        relu_like=False,
        combiner="sum",
    )


def attention_scores(b: int, h: int, m: int, n: int, k: int) -> TensorExpr:
    """S[b, h, m, n] += Q[b, h, m, k] * K^T[b, h, k, n]: attention's first batched matmul."""
    return TensorExpr(
        name=f"scores_{b}x{h}x{m}x{n}x{k}",
        loop_sizes=(b, h, m, n, k),
        parallel=(True, True, True, True, False),
        inputs=(Access((0, 1, 2, 4), (b, h, m, k)), Access((0, 1, 4, 3), (b, h, k, n))),
        output=Access((0, 1, 2, 3), (b, h, m, n)),
        kind=ExprKind.CONTRACTION,
        elem_bytes=4,
        relu_like=False,
    )


def matmul_epilogue(m: int, k: int, n: int, ops: int) -> TensorExpr:
    """C[d0, d1] = f(sum over d2 of A[d0, d2] * B[d2, d1], bias[d1], R[d0, d1]): a MatMul with
    a bias add, an activation and a residual add as its epilogue (`ops` arithmetic ops)."""
    base = matmul(m, k, n)
    extra = (Access((1,), (n,)), Access((0, 1), (m, n)))
    return dataclasses.replace(
        base,
        name=f"matmul_{m}x{k}x{n}+epilogue{ops}",
        inputs=(*base.inputs, *extra),
        epilogue=Epilogue(inputs=len(extra), body_ops=ops, relu_like=False),
    )


def fused_chain(m: int, n: int, ops: int) -> TensorExpr:
    """A fused element-wise chain of `ops` arithmetic ops (e.g. bias + GELU)."""
    return dataclasses.replace(bias_add(m, n), name=f"fused_{m}x{n}x{ops}", body_ops=ops)


BRUTE_FORCE_CASES: list[tuple[str, TensorExpr, int]] = [
    ("attention scores 2x2x4x3x4", attention_scores(2, 2, 4, 3, 4), 16),
    ("attention scores 1x3x5x5x2", attention_scores(1, 3, 5, 5, 2), 12),
    ("fused chain 6x10 (6 ops)", fused_chain(6, 10, 6), 8),
    ("matmul 8x12x6 with an epilogue", matmul_epilogue(8, 12, 6, 3), 16),
    ("matmul 7x5x9 with an epilogue", matmul_epilogue(7, 5, 9, 1), 8),
    ("matmul 8x12x6", matmul(8, 12, 6), 16),
    ("matmul 8x12x6", matmul(8, 12, 6), 6),
    ("matmul 7x5x9 odd", matmul(7, 5, 9), 8),
    ("matmul 7x5x9 odd", matmul(7, 5, 9), 16),
    ("matmul 12x12x12", matmul(12, 12, 12), 12),
    ("matmul 12x16x10 f16", matmul(12, 16, 10, elem_bytes=2), 16),
    ("batched 2x4x6x4", batched_matmul(2, 4, 6, 4), 16),
    ("batched 3x5x4x7", batched_matmul(3, 5, 4, 7), 6),
    ("two reduction dims", two_reductions(4, 6, 4, 5), 16),
    ("bias add 6x10", bias_add(6, 10), 4),
    ("bias add 13x10 relu-like", bias_add(13, 10, relu_like=True), 16),
    ("broadcast 3-D 4x6x5", broadcast3(4, 6, 5), 8),
    ("scalar input 9x7", scale_shift(9, 7), 16),
    ("row max 13x37", row_max(13, 37), 16),
    ("sum of exp 6x9x5 (rotating max)", sum_exp(6, 9, 5), 16),
    ("sum of exp 4x7x6 (rotating max)", sum_exp(4, 7, 6), 12),
    ("square sum 5x6x7", square_sum(5, 6, 7), 16),
    # two temporal dims on the t10-multidim frontier (the output rotating along the outer)
    ("matmul 38x59x8", matmul(38, 59, 8), 6),
    (
        "matmul 10x54x2 f16, fp32 partials",
        dataclasses.replace(matmul(10, 54, 2, 2), partial_bytes=4),
        8,
    ),
    ("two reduction dims 2x4x4x6", two_reductions(2, 4, 4, 6), 8),
    ("two reduction dims 6x3x4x2", two_reductions(6, 3, 4, 2), 16),
]
TWO_LEVEL_CASES = [
    "matmul 38x59x8", "matmul 10x54x2 f16, fp32 partials", "two reduction dims 2x4x4x6",
    "two reduction dims 6x3x4x2",
]
CASES = [(expr, cores) for _, expr, cores in BRUTE_FORCE_CASES]
CASE_IDS = [f"{name} on {cores} cores" for name, _, cores in BRUTE_FORCE_CASES]


@pytest.mark.parametrize("expr, cores", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("planner", planner_names())
def test_search_matches_brute_force(expr: TensorExpr, cores: int, planner: str) -> None:
    """ACCEPTANCE: at every SRAM size, the search finds a plan as fast (and as small) as the
    fastest fitting plan of the whole space; when nothing fits, it says so."""
    space = planner_space(cores, expr, planner)
    for capacity in capacities(space):
        chip = tiny_chip(cores, capacity)
        want = fastest_fitting(space, capacity)
        if want is None:
            with pytest.raises(T10Error, match="does not fit"):
                searched(chip, expr, planner)
            continue
        got = searched(chip, expr, planner)
        assert (got.cycles, got.estimate.sram_bytes) == want, f"SRAM {capacity}"
        assert estimate(chip, expr, got.plan) == got.estimate


@pytest.mark.parametrize("expr, cores", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("planner", ["t10", "t10-multidim"])
def test_frontier_is_the_brute_force_frontier(
    expr: TensorExpr, cores: int, planner: str
) -> None:
    """Stronger: the same (bytes, cycles, cores) points as the frontier of the whole space."""
    chip = tiny_chip(cores)
    want = pareto_frontier(planner_space(cores, expr, planner))
    got = operator_frontier(chip, expr, planner, 0.0)
    assert [(e.sram_bytes, e.cycles, p.cores) for p, e in got] == [
        (e.sram_bytes, e.cycles, p.cores) for p, e in want
    ]


@pytest.mark.parametrize(
    "expr, cores",
    [(expr, cores) for name, expr, cores in BRUTE_FORCE_CASES if name in TWO_LEVEL_CASES],
    ids=TWO_LEVEL_CASES,
)
def test_two_temporal_dims_beat_one(expr: TensorExpr, cores: int) -> None:
    """On these operators some plan with two temporal dims is on the frontier: the
    t10-multidim search finds it (the equality tests above then cover it), faster than any
    plan with one temporal dim within its memory."""
    chip = tiny_chip(cores)
    one = operator_frontier(chip, expr, "t10", 0.0)
    two = [(p, e) for p, e in operator_frontier(chip, expr, "t10-multidim", 0.0)
           if p.outer_dim is not None]
    assert two
    for plan, est in two:
        assert plan_problem(expr, plan, chip) is None
        assert all(e.cycles > est.cycles for _, e in one if e.sram_bytes <= est.sram_bytes)


def test_random_matmuls_match_brute_force() -> None:
    rng = random.Random(7)
    for _ in range(25):
        expr = matmul(rng.randint(1, 12), rng.randint(1, 12), rng.randint(1, 12))
        cores = rng.choice([4, 6, 8, 12, 16])
        chip = tiny_chip(cores)
        want = pareto_frontier(list(whole_space(chip, expr, True)))
        got = operator_frontier(chip, expr, "t10", 0.0)
        assert [(e.sram_bytes, e.cycles) for _, e in got] == [
            (e.sram_bytes, e.cycles) for _, e in want
        ], (expr.loop_sizes, cores)


def test_matmuls_on_the_ipu_kernel_match_brute_force() -> None:
    """The IPU's kernel takes the larger of m and n as its rows (`kernel_rows_cols`), so a
    step's product may turn the cheaper way and the steps' kernels add up to less than the
    tile's: the search's bounds must allow for it (`PlanEstimator.kernel_floor`). Sizes
    about the kernel's 16 columns, fp16, on few cores."""
    rng = random.Random(11)
    for _ in range(12):
        cores = rng.choice([2, 4, 6])
        chip = dataclasses.replace(tiny_chip(cores), matmul=load_chip("ipu-mk2").matmul)
        expr = matmul(rng.randint(12, 40), rng.randint(8, 40), rng.randint(12, 40), 2)
        want = pareto_frontier(list(whole_space(chip, expr, True)))
        got = operator_frontier(chip, expr, "t10", 0.0)
        assert [(e.sram_bytes, e.cycles) for _, e in got] == [
            (e.sram_bytes, e.cycles) for _, e in want
        ], (expr.loop_sizes, cores)


def test_candidate_factors_alone_are_not_enough() -> None:
    """Why the search realises factors inside each tile's range: on 16 cores, the fastest
    plan of the 9x13x4 matmul within 104 bytes rotates B in 4 pieces around m (and its
    output's partial sums around k), which needs F[m] = 4: not the smallest factor with m's
    tile of 3 (that is 3). (The 7x11x4 matmul on 12 cores showed this before output rotation
    found it a faster plan.)"""
    expr, chip = matmul(9, 13, 4), tiny_chip(16, 104)
    assert 4 not in factor_candidates(9, 16)
    got = searched(chip, expr)
    assert got.plan.factors[0] == 4 and Rotation(1, 0, 4) in got.plan.rotations
    assert Rotation(OUTPUT, 2, 4) in got.plan.rotations
    assert (got.cycles, got.estimate.sram_bytes) == fastest_fitting(
        list(whole_space(chip, expr, True)), 104
    )


# --------------------------------------------------------------------------------------------
# Pieces
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "size, max_factor", [(1, 4), (7, 16), (64, 16), (100, 1472), (4096, 1472)]
)
def test_factor_candidates(size: int, max_factor: int) -> None:
    cands = factor_candidates(size, max_factor)
    limit = min(size, max_factor)
    tiles = {}
    for f in range(1, limit + 1):
        tiles.setdefault(ceil(size / f), f)
    assert cands == sorted(tiles.values())
    assert len(cands) <= 2 * ceil(size**0.5) + 1
    for lo in cands:
        hi = factor_range(size, max_factor, lo)
        same = [f for f in range(1, limit + 1) if ceil(size / f) == ceil(size / lo)]
        assert (lo, hi) == (min(same), max(same))


def test_spatial_factors_products() -> None:
    expr = matmul(8, 12, 6)
    got = list(spatial_factors(expr, 16, 1))
    cands = [factor_candidates(s, 16) for s in expr.loop_sizes]
    assert got == [f for f in itertools.product(*cands) if prod(f) <= 16]
    # a tuple stands for every factor tuple with its tiles: it must reach 8 cores
    at_least_8 = list(spatial_factors(expr, 16, 8))
    assert (2, 2, 2) in at_least_8 and (1, 1, 1) not in at_least_8
    assert (1, 1, 6) in at_least_8  # 6 cores, but F[k] = 6..11 all give k's tile of 2

    def reach(f: tuple[int, ...]) -> int:
        return prod(factor_range(s, 16, x) for s, x in zip(expr.loop_sizes, f, strict=True))

    assert at_least_8 == [f for f in got if reach(f) >= 8]


def test_min_cores_small_ops_cannot_use_the_whole_chip() -> None:
    chip = load_chip("ipu-mk2")
    assert min_cores_for(chip, bias_add(4, 8), 0.5) == 16  # 4*8 = 32 useful cores
    assert min_cores_for(chip, matmul(1024, 4096, 1024), 0.5) == 736
    assert min_cores_for(chip, matmul(1024, 4096, 1024), 0.0) == 1


@pytest.mark.parametrize(
    "expr",
    [matmul(7, 5, 9), matmul(12, 16, 10, 2), batched_matmul(2, 4, 6, 4), bias_add(13, 10, True),
     attention_scores(2, 2, 4, 3, 4), fused_chain(6, 10, 6), matmul_epilogue(8, 12, 6, 3),
     broadcast3(4, 6, 5), two_reductions(4, 6, 4, 5), row_max(13, 37), sum_exp(6, 9, 5),
     square_sum(5, 6, 7)],
    ids=lambda e: e.name,
)
def test_the_estimator_is_the_layouts_cost(expr: TensorExpr) -> None:
    """The estimator (integer arithmetic over tile sizes) costs every plan as its layouts
    (`layout_estimate`) say it runs."""
    plans = [plan for plan, _ in whole_space(tiny_chip(16), expr, True, levels=2)]
    for chip in (tiny_chip(16), load_chip("ipu-mk2")):
        fast = PlanEstimator(chip, expr)
        for plan in plans:
            assert fast.estimate(plan) == layout_estimate(chip, expr, plan)


def layout_estimate(chip: ChipSpec, expr: TensorExpr, plan: Plan) -> Estimate:
    """The estimate derived from the plan's layouts (`input_layouts`, `output_layout`), as the
    lowering builds them, rather than from tile sizes as the estimator does: every step a
    kernel, a shift per rotating operand and a sync; the all-reduce of a split reduction;
    the rounding pass of wide partial sums; an epilogue."""
    eb = expr.elem_bytes
    layouts = input_layouts(expr, plan)
    out_layout = output_layout(expr, plan)
    out_tile = prod(out_layout.tile)
    out_local = out_layout.local_elements()
    total = plan.total_steps
    compute = total * kernel_cycles(chip, expr, step_sizes(expr, plan))
    exchange = 0
    for i, lay in enumerate(layouts):
        rot = plan.rotation_of(i)
        if lay.rotating is None or rot is None:
            continue
        shift = costs.exchange_cycles(
            chip, Traffic.uniform(lay.cores, lay.local_elements() // lay.rotating.slots * eb)
        )
        exchange += (plan.outer_steps - 1 if rot.outer else total - 1) * shift
    syncs = total
    memory = sum(lay.local_elements() for lay in layouts) * eb + out_local * eb
    rounding = rounds_partials(expr, plan)
    acc_bytes = expr.partial_bytes if rounding else eb
    if out_layout.rotating is not None:
        out_chunk = out_local // out_layout.rotating.slots * acc_bytes
        out_rot = plan.rotation_of(OUTPUT)
        shifts = plan.outer_steps - 1 if out_rot is not None and out_rot.outer else total - 1
        out_traffic = Traffic.uniform(out_layout.cores, out_chunk)
        exchange += shifts * costs.exchange_cycles(chip, out_traffic)
    group = all_reduce_group(expr, plan)
    if group > 1:
        part = ceil(out_tile / group)
        moved = (group - 1) * part * acc_bytes
        exchange += 2 * costs.exchange_cycles(chip, Traffic.uniform(out_layout.cores, moved))
        compute += costs.elementwise_cycles(chip, (group - 1) * part, False)
        syncs += 2
        memory += moved
    if rounding:
        compute += costs.elementwise_cycles(chip, out_local, False)
        syncs += 1
        memory += out_local * expr.partial_bytes
    if expr.epilogue is not None:
        epi = expr.epilogue
        elements = epilogue_elements(out_tile, group, rounding)
        compute += costs.elementwise_cycles(chip, elements, epi.relu_like, epi.body_ops)
        syncs += 1 if rounding else 0
    return Estimate(compute, exchange, syncs * costs.sync_cycles(chip), memory)


@given(
    sizes=st.tuples(*(st.integers(1, 80) for _ in range(4))),
    steps=st.tuples(*(st.integers(1, 9) for _ in range(4))),
    fp16=st.booleans(),
)
def test_kernel_floor_bounds_every_split_into_steps(
    sizes: tuple[int, int, int, int], steps: tuple[int, int, int, int], fp16: bool
) -> None:
    """The search's bounds count a tile's kernel at its floor: however a plan splits the
    tile into steps, the steps' kernels add up to no less, in either orientation rule (the
    IPU's turns a step's product the cheaper way), and a kernel is never below its floor."""
    expr = batched_matmul(*sizes)
    if fp16:
        expr = dataclasses.replace(expr, elem_bytes=2)
    for chip in (tiny_chip(16), load_chip("ipu-mk2")):
        fast = PlanEstimator(chip, expr)
        loops = expr.loop_sizes
        step = [ceil(s / n) for s, n in zip(loops, steps, strict=True)]
        assert prod(steps) * fast.kernel(step) >= fast.kernel_floor(loops)
        assert fast.kernel(loops) >= fast.kernel_floor(loops)


def test_reductions_rotate_but_never_shift_a_reduction_dim() -> None:
    expr = sum_exp(6, 9, 5)
    plans = [plan for plan, _ in whole_space(tiny_chip(16), expr, True)]
    shifted = {plan.temporal_dim for plan in plans if plan.temporal_dim is not None}
    assert shifted and shifted <= {0, 1, 3}
    assert "cannot shift along its reduction dim d2" in (
        plan_problem(expr, Plan((1, 1, 3, 1), 2, 3, (Rotation(1, 2, 3),)), tiny_chip(16)) or ""
    )


def test_epilogue_inputs_never_rotate_and_the_epilogue_costs_a_pass_over_the_tile() -> None:
    """An epilogue's inputs are read once, after the last step: no plan rotates them; the
    epilogue costs an element-wise kernel over the output tile (over 1/R of it after a
    reduction split over R cores) and no sync."""
    chip = tiny_chip(16)
    fused, plain = matmul_epilogue(8, 12, 6, 3), matmul(8, 12, 6)
    rotated = {r.operand for plan, _ in whole_space(chip, fused, True) for r in plan.rotations}
    assert rotated == {0, 1}
    assert "read by the epilogue, which never rotates" in (
        plan_problem(fused, Plan((2, 1, 4), 2, 2, (Rotation(3, 1, 1),)), chip) or ""
    )
    tile = 4 * 6
    epilogue = costs.elementwise_cycles(chip, tile, False, 3)
    one_step = Plan((2, 1, 1))
    with_fused, without = estimate(chip, fused, one_step), estimate(chip, plain, one_step)
    assert with_fused.compute_cycles == without.compute_cycles + epilogue
    assert with_fused.sync_cycles == without.sync_cycles
    assert with_fused.sram_bytes == without.sram_bytes + (6 + tile) * 4  # bias + residual
    split_k = Plan((2, 1, 2))  # the epilogue runs on half of each tile, in the all-gather's step
    with_fused, without = estimate(chip, fused, split_k), estimate(chip, plain, split_k)
    half = costs.elementwise_cycles(chip, tile // 2, False, 3)
    assert with_fused.compute_cycles == without.compute_cycles + half
    assert with_fused.sync_cycles == without.sync_cycles


def test_reduction_cost_is_element_wise() -> None:
    chip = tiny_chip(16)
    expr = row_max(13, 37)
    est = estimate(chip, expr, Plan((1, 4)))
    tile = 13 * 10
    combine = 3 * ceil(13 / 4)
    assert est.compute_cycles == costs.elementwise_cycles(
        chip, tile, False
    ) + costs.elementwise_cycles(chip, combine, False)


def test_frontier_is_pareto_and_sorted() -> None:
    chip = load_chip("test-16")
    frontier = operator_frontier(chip, matmul(96, 80, 64), "t10", 0.5)
    assert len(frontier) > 3
    points = [(e.sram_bytes, e.cycles) for _, e in frontier]
    for a, b in itertools.combinations(points, 2):
        assert not (a[0] <= b[0] and a[1] <= b[1]), f"{a} dominates {b}"
        assert not (b[0] <= a[0] and b[1] <= a[1]), f"{b} dominates {a}"
    assert points == sorted(points, key=lambda p: (-p[0], p[1]))
    for plan, est in frontier:
        assert estimate(chip, matmul(96, 80, 64), plan) == est


def test_min_utilization_bounds_the_tiles() -> None:
    chip = load_chip("test-16")
    expr = matmul(64, 64, 64)
    for plan, _ in operator_frontier(chip, expr, "t10", 1.0):
        sizes = zip(expr.loop_sizes, plan.factors, strict=True)
        reach = prod(factor_range(s, 16, f) for s, f in sizes)
        assert reach >= 16


def test_bad_options() -> None:
    chip = load_chip("test-16")
    with pytest.raises(T10Error, match="unknown planner 'greedy'.*t10, replicate"):
        operator_frontier(chip, matmul(4, 4, 4), "greedy")
    with pytest.raises(T10Error, match="between 0 and 1"):
        operator_frontier(chip, matmul(4, 4, 4), "t10", 1.5)


# --------------------------------------------------------------------------------------------
# The paper's claims on the built-in chips
# --------------------------------------------------------------------------------------------


def test_rotation_fits_where_replication_does_not() -> None:
    """test-16, 256 KiB per core: a 256x512 by (weight) 512x512 matmul fits only by rotating."""
    chip = load_chip("test-16")
    expr = matmul(256, 512, 512)
    frontier = operator_frontier(chip, expr, "t10", 0.5)
    [point] = choose_plans(chip, [op_options(expr, frontier, Operands((1,)))], "t10")
    assert point.plan.rotations
    assert model_bytes([point]) <= chip.sram_bytes_per_core
    replicated = operator_frontier(chip, expr, "replicate", 0.5)
    with pytest.raises(T10Error) as err:
        choose_plans(chip, [op_options(expr, replicated, Operands((1,)))], "replicate")
    message = str(err.value)
    assert "does not fit chip 'test-16'" in message
    assert "262144 bytes of SRAM per core" in message
    assert f"{expr.name}" in message
    assert "t10 planner" in message
    assert "more SRAM per core or more cores" in message


def test_mlp_layer_on_ipu_mk2() -> None:
    """1024x4096 by 4096x1024 on IPU MK2: >= 90% of the cores, no slower than replication."""
    chip = load_chip("ipu-mk2")
    expr = matmul(1024, 4096, 1024)
    weights = Operands((1,))
    [t10] = choose_plans(chip, [op_options(expr, operator_frontier(chip, expr, "t10"), weights)])
    [rep] = choose_plans(
        chip, [op_options(expr, operator_frontier(chip, expr, "replicate"), weights)], "replicate"
    )
    assert t10.plan.cores >= 0.9 * 1472
    assert t10.cycles <= rep.cycles
    assert model_bytes([t10]) <= chip.sram_bytes_per_core


# --------------------------------------------------------------------------------------------
# Memory reconciliation
# --------------------------------------------------------------------------------------------


def point(cycles: int, resident: int, transient: int) -> PlanPoint:
    return PlanPoint(Plan((1,)), Estimate(cycles, 0, 0, resident + transient), resident)


def chip_with(sram: int) -> ChipSpec:
    return tiny_chip(16, sram)


def test_model_bytes_resident_plus_largest_transient() -> None:
    assert model_bytes([point(1, 100, 50), point(1, 30, 80)]) == 130 + 80


def test_greedy_moves_the_cheapest_per_byte() -> None:
    a = OpOptions("a", (point(100, 100, 0), point(150, 50, 0)))  # +50 cycles for 50 bytes
    b = OpOptions("b", (point(100, 100, 0), point(110, 80, 0)))  # +10 cycles for 20 bytes
    chosen = choose_plans(chip_with(180), [a, b])
    assert chosen == [a.points[0], b.points[1]]
    chosen = choose_plans(chip_with(130), [a, b])
    assert chosen == [a.points[1], b.points[1]]


def test_greedy_never_moves_pinned_ops() -> None:
    pinned = OpOptions("pinned", (point(100, 100, 0),), pinned=True)
    free = OpOptions("free", (point(100, 100, 0), point(500, 10, 0)))
    assert choose_plans(chip_with(110), [pinned, free]) == [pinned.points[0], free.points[1]]
    with pytest.raises(T10Error, match="smallest plans need 110 bytes per core"):
        choose_plans(chip_with(100), [pinned, free])


def test_greedy_shared_transient_peak() -> None:
    """Two ops share the largest transient bytes: neither move alone shrinks the model."""
    a = OpOptions("a", (point(100, 0, 100), point(120, 0, 40)))
    b = OpOptions("b", (point(100, 0, 100), point(130, 0, 50)))
    assert choose_plans(chip_with(60), [a, b]) == [a.points[1], b.points[1]]


def test_greedy_stuck_falls_back_to_a_fitting_choice() -> None:
    """Each op's smaller plan trades activations for weights: moving either op alone grows
    the model (the other op's activations stay the peak), yet moving both fits."""
    a = OpOptions("a", (point(100, 0, 100), point(120, 30, 10)))
    b = OpOptions("b", (point(100, 0, 95), point(130, 30, 10)))
    assert choose_plans(chip_with(80), [a, b]) == [a.points[1], b.points[1]]
    assert choose_plans(chip_with(100), [a, b]) == [a.points[0], b.points[0]]


def test_transient_bytes_are_not_summed() -> None:
    """Activations of different operators are live at different times."""
    ops = [OpOptions(f"op{i}", (point(100, 10, 200), point(900, 5, 20))) for i in range(4)]
    chosen = choose_plans(chip_with(240), ops)
    assert chosen == [op.points[0] for op in ops]


def test_smallest_model_is_exact() -> None:
    rng = random.Random(3)
    for _ in range(50):
        ops = [
            OpOptions(f"op{i}", tuple(point(rng.randint(1, 99), rng.randint(0, 50),
                                            rng.randint(0, 50)) for _ in range(3)))
            for i in range(3)
        ]
        least, choice = smallest_model(ops)
        brute = min(
            model_bytes([op.points[j] for op, j in zip(ops, js, strict=True)])
            for js in itertools.product(range(3), repeat=3)
        )
        assert least == brute == model_bytes(
            [op.points[j] for op, j in zip(ops, choice, strict=True)]
        )


def test_does_not_fit_names_the_biggest_ops() -> None:
    ops = [
        OpOptions("small", (point(1, 10, 10),)),
        OpOptions("huge", (point(1, 500, 100),)),
    ]
    with pytest.raises(T10Error) as err:
        choose_plans(chip_with(100), ops, "t10")
    message = str(err.value)
    assert "need 610 bytes per core" in message
    assert message.index("'huge'") < message.index("'small'")
    assert "t10 planner" not in message


def live_point(
    cycles: int,
    transient: int,
    output: int = 0,
    inputs: int = 0,
    host: int = 0,
    staged: int = 0,
    cores: int = 1,
) -> PlanPoint:
    est = Estimate(cycles, 0, 0, transient)
    return PlanPoint(Plan((cores,)), est, 0, output, inputs, host, staged)


def test_outputs_live_until_their_last_reader() -> None:
    """a's output waits for c while b runs; b's output is read by c right after it. While
    the relayouts into c run, a's and b's outputs lie in their producers' layouts and in
    c's (c's inputs, 30 bytes), but c's output is not allocated yet."""
    a, b = live_point(1, 10, output=100), live_point(1, 20, output=7)
    c = live_point(1, 140, inputs=30)
    live = Liveness(((2,), (2,), ()))
    assert peaks([a, b, c], live).tolist() == [10, 20 + 100, max(140, 30 + 100 + 7)]
    assert model_bytes([a, b, c], live) == 140
    moving = live_point(1, 40, inputs=30)
    assert model_bytes([a, b, moving], live) == 137
    assert model_bytes([a, b, moving]) == 40  # Liveness.none: outputs die with their operator


def test_host_inputs_live_from_the_program_start() -> None:
    """Function arguments are placed before the program runs: a direct one (part of its
    reader's estimate) counts before its reader, a staged one (moved by its reader) up to
    and including it."""
    a, b, c = live_point(1, 10), live_point(1, 20, host=5), live_point(1, 30, staged=7)
    assert peaks([a, b, c], Liveness.none(3)).tolist() == [10 + 5 + 7, 20 + 7, 30 + 7]


def test_program_long_tensors_lie_over_the_most_cores() -> None:
    """A gather's 64-row table of f32 over the 16 cores of the widest plan: 16 bytes."""
    points = [live_point(1, 10, cores=16), live_point(1, 20, cores=4)]
    live = Liveness(((), ()), (((64,), 4),))
    assert peaks(points, live).tolist() == [26, 36]


def test_returned_views_count_their_source_and_destination() -> None:
    """A view v of a host tensor (8 f32, program-long: 32 bytes) is made before a: b's host
    input (5) and v's 4 f32 are live with it. A view w of a's output is made after b: a's
    output (100) lives through b (held, and moved into b) up to w, made into 6 f32."""
    a, b = live_point(1, 10, output=100), live_point(1, 20, output=7, host=5)
    live = Liveness(
        ((1,), ()),
        (((8,), 4),),
        returned=(
            ReturnedView(-1, (4,), 4, None, "v"),
            ReturnedView(1, (6,), 4, 0, "w"),
        ),
    )
    assert peaks([a, b], live).tolist() == [32 + 5 + 10, 32 + 100 + 100]
    assert returned_peak([a, b], live) == (32 + 100 + 24, 1)
    assert returned_peak([], Liveness((), (((8,), 4),), returned=live.returned[:1])) == (
        32 + 16,
        0,
    )
    assert model_bytes([a, b], live) == 232
    assert model_bytes([], Liveness((), (((8,), 4),))) == 32


def test_swapping_one_plan_matches_recounting() -> None:
    """The greedy's shortcut for one changed plan (range maxima of the peaks, each returned
    view's parts) equals recounting the whole model."""
    rng = random.Random(5)

    def rand_point() -> PlanPoint:
        return PlanPoint(
            Plan((rng.choice((1, 2, 4)),)),
            Estimate(rng.randint(1, 99), 0, 0, rng.randint(20, 60)),
            rng.randint(0, 20),
            *(rng.randint(0, 15) for _ in range(4)),
        )

    def rand_view(n: int) -> ReturnedView:
        after = rng.randrange(-1, n)
        producer = rng.choice([None, *range(after + 1)])
        source = (rng.randint(1, 9),) if producer is None else ()
        return ReturnedView(after, (rng.randint(1, 9),), 4, producer, "v", source)

    for _ in range(600):
        n = rng.randint(1, 24)  # sparse-table levels up to 2**4
        points = [rand_point() for _ in range(n)]
        live = Liveness(
            tuple(tuple(sorted(rng.sample(range(p + 1, n), rng.randint(0, n - p - 1))))
                  for p in range(n)),
            (((rng.randint(1, 9),), 4),) if rng.random() < 0.5 else (),
            held=((rng.randrange(n), n, rng.randint(1, 30)),) if rng.random() < 0.3 else (),
            returned=tuple(rand_view(n) for _ in range(rng.choice((0, 0, 1, 3)))),
        )
        swaps = Swaps(points, live)
        # every operator with a random candidate, and one with several
        i = rng.randrange(n)
        ops = [*range(n), i, i]
        candidates = [rand_point() for _ in ops]
        expected = [
            model_bytes([*points[:k], p, *points[k + 1 :]], live)
            for k, p in zip(ops, candidates, strict=True)
        ]
        columns = PointColumns.of(candidates)
        assert swaps.after_many(np.array(ops), columns).tolist() == expected
        assert swaps.after(i, candidates[-1]) == expected[-1]


def test_greedy_shrinks_an_output_that_outlives_its_operator() -> None:
    """a's fast plan leaves a 50-byte output that waits for c while b (80 bytes) runs: with
    100 bytes per core only a's slower plan with a 10-byte output fits."""
    a = OpOptions("a", (live_point(100, 50, output=50), live_point(110, 20, output=10)))
    b = OpOptions("b", (live_point(100, 80),))
    c = OpOptions("c", (live_point(100, 10),))
    ops = [a, b, c]
    live = Liveness(((2,), (), ()))
    assert choose_plans(chip_with(100), ops, liveness=live) == [a.points[1], b.points[0],
                                                                c.points[0]]
    assert choose_plans(chip_with(100), ops) == [a.points[0], b.points[0], c.points[0]]
    with pytest.raises(T10Error) as err:
        choose_plans(chip_with(89), ops, liveness=live)
    assert str(err.value).startswith(
        "the model does not fit chip 'test-16': it has 89 bytes of SRAM per core, but the "
        "smallest plans need 90 bytes per core: 0 bytes of resident weights + 90 bytes while "
        "'b' runs (80 of its own, 10 of tensors live across it); use a chip"
    )


def test_held_buffers_live_strictly_between_first_and_last_reader() -> None:
    points = [live_point(1, 10) for _ in range(4)]
    live = Liveness(((),) * 4, held=((0, 3, 50),))
    assert peaks(points, live).tolist() == [10, 60, 60, 10]


def test_a_move_is_shared_only_while_the_model_fits() -> None:
    """Sharing op 0's move with op 3 holds its 50 bytes while ops 1 and 2 run."""
    chosen = [live_point(1, 10) for _ in range(4)]
    move = SharedMove(((0, 0), (3, 0)), 50)
    assert affordable_shares(chip_with(60), chosen, Liveness.none(4), [move]) == [move]
    assert affordable_shares(chip_with(59), chosen, Liveness.none(4), [move]) == []


def test_rotating_inputs_never_share_a_move() -> None:
    """Two matmuls read one product: in the same spatial layout they share its move; a
    rotating input is shifted in place by its reader, so each rotating reader moves its own."""
    producer, reader = bias_add(8, 12), matmul(8, 12, 6)
    exprs = [producer, reader, reader]
    edges = [Edge(0, 1, 0), Edge(0, 2, 0)]
    spatial = [Plan((1, 16)), Plan((4, 4, 1)), Plan((4, 4, 1))]
    [move] = shared_moves(exprs, spatial, edges)
    assert move.readers == ((1, 0), (2, 0)) and move.nbytes == 2 * 12 * 4
    rotating = Plan((4, 4, 1), 2, 4, (Rotation(0, 1, 4),))
    assert shared_moves(exprs, [spatial[0], rotating, rotating], edges) == []
    assert shared_moves(exprs, [spatial[0], spatial[1], Plan((2, 8, 1))], edges) == []


def test_split_bytes_by_constant_inputs() -> None:
    expr = matmul(8, 12, 6)
    plan = Plan((2, 3, 1))
    est = estimate(base_chip(), expr, plan)
    resident, transient = split_bytes(expr, plan, est, (1,))
    assert resident == 12 * 2 * 4  # B tile 12 x 2
    assert resident + transient == est.sram_bytes
    assert split_bytes(expr, plan, est, ())[0] == 0


# --------------------------------------------------------------------------------------------
# Pinned plans
# --------------------------------------------------------------------------------------------


def test_pinned_plan_is_validated_and_kept() -> None:
    chip = load_chip("test-16")
    expr = matmul(64, 64, 64)
    cannon = Plan((4, 4, 1), 2, 4, (Rotation(0, 1, 4), Rotation(1, 0, 4)))
    options = pinned_options(chip, expr, cannon, Operands((1,)))
    assert options.pinned and options.points[0].plan == cannon
    assert options.points[0].estimate == estimate(chip, expr, cannon)


@pytest.mark.parametrize(
    "plan, reason",
    [
        (Plan((4, 4)), "2 factors but the operator has 3 loop dims"),
        (Plan((8, 4, 1)), "uses 32 cores but chip 'test-16' has 16"),
        (Plan((4, 4, 1), 2, 4, (Rotation(0, 0, 4),)), "ring d0 of input 0 must be a loop dim"),
        (Plan((4, 4, 1), 2, 3, (Rotation(0, 1, 3),)), "3 pieces, which must be >= 2 and divide"),
        (Plan((4, 4, 1), 0, 4, (Rotation(1, 0, 4),)), "input 1 does not read shift dim d0"),
        (Plan((4, 4, 1), 2, 2, (Rotation(0, 1, 4),)), "multiple of every rotation's pieces"),
        (Plan((1, 1, 1), None, 2), "1 step and no rotations"),
        (Plan((4, 4, 1), 2, 4), "a plan that shifts d2 rotates at least one input"),
        (Plan((2, 2, 4), 2, 32, (Rotation(0, 1, 2),)), "32 steps do not fit the tile of 16"),
    ],
)
def test_bad_pinned_plans(plan: Plan, reason: str) -> None:
    with pytest.raises(T10Error, match="operator 'matmul_64x64x64': pinned plan") as err:
        validate_plan(load_chip("test-16"), matmul(64, 64, 64), plan)
    assert reason in str(err.value)


# --------------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------------

MATMUL_ATTRS = 't10.name = "fc/MatMul"'

MLP = """
builtin.module {
  func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %w = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %b = arith.constant dense<5.000000e-01> : tensor<64xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
        affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%z : tensor<64x64xf32>)
        attrs = {MATMUL_ATTRS} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    %e = tensor.empty() : tensor<64x64xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
        affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
        iterator_types = ["parallel", "parallel"]}
        ins(%mm, %b : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>)
        attrs = {t10.name = "fc/Add"} {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    } -> tensor<64x64xf32>
    func.return %r : tensor<64x64xf32>
  }
}
"""


def parse(matmul_attrs: str = MATMUL_ATTRS) -> ModuleOp:
    ctx = Context()
    for dialect in (Builtin, func.Func, arith.Arith, linalg.Linalg, tensor.Tensor, RTensor):
        ctx.load_dialect(dialect)
    return Parser(ctx, MLP.replace("MATMUL_ATTRS", matmul_attrs)).parse_module()


def generics(module: ModuleOp) -> list:
    return [op for op in module.walk() if op.name == "linalg.generic"]


def run_pass(module: ModuleOp, **options: object) -> ModuleOp:
    """Run the pass (on test-16 unless `chip` is given) and verify the result."""
    options.setdefault("chip", "test-16")
    T10PlanSearch(**options).apply(Context(), module)
    module.verify()
    return module


def test_pass_writes_plans_estimates_chip_and_planner() -> None:
    module = run_pass(parse())
    assert module.attributes["t10.chip"] == StringAttr("test-16")
    assert module.attributes["t10.planner"] == StringAttr("t10")
    chip = load_chip("test-16")
    exprs = (matmul(64, 64, 64), bias_add(64, 64))
    for op, expected in zip(generics(module), exprs, strict=True):
        plan_attr, est_attr = op.attributes["t10.plan"], op.attributes["t10.estimate"]
        assert isinstance(plan_attr, PlanAttr) and isinstance(est_attr, EstimateAttr)
        est = estimate(chip, expected, plan_attr.to_plan())
        assert (est_attr.cycles.data, est_attr.bytes.data) == (est.cycles, est.sram_bytes)
        assert (est_attr.compute.data, est_attr.exchange.data, est_attr.sync.data) == (
            est.compute_cycles, est.exchange_cycles, est.sync_cycles
        )
    assert generics(module)[0].attributes["t10.plan"] == PlanAttr.from_plan(
        searched(chip, matmul(64, 64, 64)).plan
    )


def test_pass_keeps_a_pinned_plan() -> None:
    pinned = "#rtensor.plan<grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 4)]>"
    attrs = f"{MATMUL_ATTRS}, t10.plan = {pinned}"
    module = run_pass(parse(attrs), planner="replicate")
    op = generics(module)[0]
    plan = op.attributes["t10.plan"]
    assert isinstance(plan, PlanAttr)
    assert plan.to_plan() == Plan((4, 4, 1), 2, 4, (Rotation(0, 1, 4), Rotation(1, 0, 4)))
    est = op.attributes["t10.estimate"]
    assert isinstance(est, EstimateAttr)
    chip = load_chip("test-16")
    assert est.cycles.data == estimate(chip, matmul(64, 64, 64), plan.to_plan()).cycles


def test_pass_rejects_a_bad_pinned_plan() -> None:
    with pytest.raises(T10Error, match="operator 'fc/MatMul': pinned plan <grid \\[32, 1, 1\\]>"):
        run_pass(parse(f"{MATMUL_ATTRS}, t10.plan = #rtensor.plan<grid [32, 1, 1]>"))
    with pytest.raises(T10Error, match="must be an #rtensor.plan"):
        run_pass(parse(f'{MATMUL_ATTRS}, t10.plan = "fast"'))


@pytest.mark.parametrize(
    "options, message",
    [
        ({"planner": "greedy"}, "unknown planner 'greedy'; choose one of t10, replicate"),
        ({"min_utilization": -0.1}, "min-utilization must be between 0 and 1"),
        ({"chip": "no-such-chip"}, "unknown chip 'no-such-chip'"),
    ],
)
def test_pass_bad_options(options: dict[str, object], message: str) -> None:
    with pytest.raises(T10Error, match=message):
        run_pass(parse(), **options)


def test_pass_chip_from_a_file(tmp_path: Path) -> None:
    chip_file = tmp_path / "tiny.json"
    data = base_chip().to_dict() | {"name": "tiny", "cores": 4, "sram_bytes_per_core": 65536}
    chip_file.write_text(json.dumps(data))
    module = run_pass(parse(), chip=str(chip_file))
    assert module.attributes["t10.chip"] == StringAttr(str(chip_file))
    for op in generics(module):
        plan = op.attributes["t10.plan"]
        assert isinstance(plan, PlanAttr) and plan.to_plan().cores <= 4


def test_pass_registered_in_the_universe() -> None:
    from t10.universe import PASSES

    assert PASSES["t10-plan-search"]() is T10PlanSearch



def test_quick_cycles_bounds_the_moves_of_a_view() -> None:
    """A transposing view whose elements stay on their cores still runs a superstep (a copy
    into place and a sync); one that moves them also copies what each core holds: the
    search's quick bound is not below the estimate, and staying in place is cheaper."""
    from xdsl.ir.affine import AffineMap

    chip = load_chip("test-16")
    src = Layout((8, 4), (4,), (0, None), (2, 4))
    view = View(AffineMap.from_callable(lambda i, j: (j, i)))
    in_place = Layout((4, 8), (4,), (None, 0), (4, 2))
    moved = Layout((4, 8), (4,), (0, None), (1, 8))
    bounds = []
    for dst in (in_place, moved):
        exact = transition_estimate(chip, src, dst, 4, view).cycles
        assert exact >= costs.sync_cycles(chip) > 0
        bounds.append(quick_cycles(chip, src, dst, 4, view))
        assert bounds[-1] >= exact
    assert bounds[0] < bounds[1]
