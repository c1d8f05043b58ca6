"""The lower bounds of `t10.common.bounds`: below every plan the search finds that fits the
SRAM, below every simulated operator of a model, and exact on hand-computed cases."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from t10.common.bounds import Bound, model_bound, operator_bound
from t10.common.chip_spec import ChipSpec, load_chip
from t10.common.tensor_expr import Access, Epilogue, ExprKind, TensorExpr, matmul_expr
from t10.driver import CompileOptions, run_model
from t10.examples.models import mlp
from t10.planning.plan_search import operator_frontier

SIZES = {"test-16": (1, 3, 16, 48, 100, 256, 512, 1024), "ipu-mk2": (1, 3, 8, 24, 40)}
"""Loop sizes drawn per chip: large enough on test-16 that its SRAM forces an exchange, small
enough on ipu-mk2 (whose searches are slower) to keep the test to seconds."""


@cache
def chip_named(name: str) -> ChipSpec:
    return load_chip(name)


def contraction(b: int, m: int, k: int, n: int, epilogue: bool) -> TensorExpr:
    """C[d0, d1, d2] += A[d0, d1, d3] * B[d0, d3, d2] (+ an epilogue adding a [m, n] input)."""
    expr = TensorExpr(
        name="bmm",
        loop_sizes=(b, m, n, k),
        parallel=(True, True, True, False),
        inputs=(Access((0, 1, 3), (b, m, k)), Access((0, 3, 2), (b, k, n))),
        output=Access((0, 1, 2), (b, m, n)),
        kind=ExprKind.CONTRACTION,
        elem_bytes=4,
        relu_like=False,
        combiner="sum",
    )
    if not epilogue:
        return expr
    extra = Access((None, 1, 2), (1, m, n))
    return replace(expr, inputs=(*expr.inputs, extra), epilogue=Epilogue(1, 1, False))


def elementwise(m: int, n: int, relu_like: bool, ops: int) -> TensorExpr:
    """Y[d0, d1] = f(X[d0, d1], b[0, d1])."""
    return TensorExpr(
        name="ew",
        loop_sizes=(m, n),
        parallel=(True, True),
        inputs=(Access((0, 1), (m, n)), Access((None, 1), (1, n))),
        output=Access((0, 1), (m, n)),
        kind=ExprKind.ELEMENTWISE,
        elem_bytes=4,
        relu_like=relu_like,
        body_ops=ops,
    )


def reduction(m: int, k: int, combiner: str, ops: int) -> TensorExpr:
    """Y[d0] = combine over d1 of f(X[d0, d1])."""
    return TensorExpr(
        name="red",
        loop_sizes=(m, k),
        parallel=(True, False),
        inputs=(Access((0, 1), (m, k)),),
        output=Access((0,), (m,)),
        kind=ExprKind.REDUCTION,
        elem_bytes=4,
        relu_like=False,
        combiner=combiner,
        body_ops=ops,
    )


@st.composite
def operators(draw: st.DrawFn) -> tuple[str, TensorExpr]:
    chip = draw(st.sampled_from(sorted(SIZES)))
    size = st.sampled_from(SIZES[chip])
    kind = draw(st.sampled_from(("matmul", "batched", "elementwise", "reduction")))
    if kind in ("matmul", "batched"):
        b = draw(size) if kind == "batched" else 1
        expr = contraction(b, draw(size), draw(size), draw(size), draw(st.booleans()))
    elif kind == "elementwise":
        ops = draw(st.integers(1, 3))
        expr = elementwise(draw(size), draw(size), draw(st.booleans()), ops)
    else:
        ops = draw(st.integers(1, 3))
        expr = reduction(draw(size), draw(size), draw(st.sampled_from(("sum", "max"))), ops)
    elem_bytes = draw(st.sampled_from((4, 2)))
    partial_bytes = draw(st.sampled_from((4, elem_bytes)))
    return chip, replace(expr, elem_bytes=elem_bytes, partial_bytes=partial_bytes)


@given(operators())
def test_bound_is_at_most_every_plan_that_fits(case: tuple[str, TensorExpr]) -> None:
    name, expr = case
    chip = chip_named(name)
    bound = operator_bound(chip, expr)
    assert bound.cycles == bound.compute_cycles + bound.exchange_cycles + bound.sync_cycles
    for planner in ("t10", "replicate"):
        for plan, est in operator_frontier(chip, expr, planner):
            if est.sram_bytes <= chip.sram_bytes_per_core:
                assert bound.cycles <= est.cycles, (planner, plan, est, bound)


def test_sram_forces_an_exchange_below_every_plan_that_fits() -> None:
    """512x512x256 on test-16: every core touches more than its SRAM holds; the plans that
    fit are still at or above the bound, the fastest one that does not fit is below it."""
    chip = chip_named("test-16")
    expr = matmul_expr(512, 512, 256)
    bound = operator_bound(chip, expr)
    assert bound.exchange_cycles > 0 and bound.sync_cycles == 2 * chip.sync_cycles
    frontier = operator_frontier(chip, expr)
    fits = [est.cycles for _, est in frontier if est.sram_bytes <= chip.sram_bytes_per_core]
    assert fits and min(fits) >= bound.cycles
    assert min(est.cycles for _, est in frontier) < bound.cycles


def test_matmul_bound_by_hand() -> None:
    """64x256x128 fp32 on test-16's 16 cores: W = 64·256·128 / 16 = 131,072 multiply-adds on
    the busiest core, no more than max(M, N) = 128 kernel rows, one batch entry.
    inner 4·12·4/(6·32·16) = 1/16 cycle per multiply-add: 8,192; k-blocks × col-blocks
    ≥ W·4/(32·16·128) = 8: 514·8 = 4,112; col-blocks ≥ max(1, W/(16·128·256)) = 1: 113;
    fixed 173. 3·W^(2/3) ≈ 7,742 elements touched < 65,536 that the SRAM holds: no exchange,
    one sync."""
    bound = operator_bound(chip_named("test-16"), matmul_expr(64, 256, 128))
    assert bound == Bound(8_192 + 4_112 + 113 + 173, 0, 118, 16)
    assert bound.cycles == 12_708


def test_elementwise_bound_by_hand() -> None:
    """A bias add over 128x768 on ipu-mk2: ⌈98,304 / 1,472⌉ = 67 elements on the busiest
    core, 0.5·67 + 300 = 333.5 → 334 cycles, one sync (the plan search's fastest plan)."""
    chip = chip_named("ipu-mk2")
    expr = elementwise(128, 768, False, 1)
    assert operator_bound(chip, expr) == Bound(334, 0, 118, 1472)
    assert operator_frontier(chip, expr)[0][1].cycles == 334 + 118


def test_a_reduction_to_few_outputs_bounds_the_split_too() -> None:
    """A sum of 4 rows of 4,096 on test-16: without splitting the reduction 4 cores (0.5·4,096
    + 300 = 2,348), split over 16 cores ⌈16,384 / 16⌉ = 1,024 elements (812) plus one received
    partial (⌈4·0.28⌉ = 2) and a second sync: the lesser."""
    chip = chip_named("test-16")
    bound = operator_bound(chip, reduction(4, 4096, "sum", 1))
    assert bound == Bound(812, 2, 236, 16)


def test_model_bound_sums_the_operators() -> None:
    chip = chip_named("test-16")
    exprs = [matmul_expr(64, 256, 128), elementwise(128, 768, False, 1)]
    assert model_bound(chip, exprs) == 12_708 + 3_372 + 118


@pytest.mark.parametrize("epilogues", [True, False])
def test_simulated_operators_are_at_least_their_bounds(tmp_path: Path, epilogues: bool) -> None:
    path = tmp_path / "mlp.onnx"
    path.write_bytes(mlp().SerializeToString())
    report = run_model(
        str(path),
        CompileOptions(chip="test-16", epilogues=epilogues),
        timing_only=True,
    ).report
    planned = [op for op in report.ops if op.kind not in ("relayout", "gather")]
    assert planned and all(op.bound_cycles is not None for op in planned)
    for op in report.ops:
        if op.bound_cycles is not None:
            assert op.cycles >= op.bound_cycles, op
    assert report.bound_cycles == sum(op.bound_cycles for op in planned)
    assert report.total_cycles >= report.bound_cycles
    assert report.total_over_bound == report.total_cycles / report.bound_cycles
