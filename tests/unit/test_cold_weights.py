"""Cold weights (`t10.planning.cold_weights`, `t10.cold`): an operator's weights kept in a
compact home and expanded into its plan's layouts each time it runs. Where memory binds the
search chooses them; the numbers still match onnxruntime, every estimate equals its simulated
cycles, the simulated peak stays within `t10.model_bytes`, and a pinned `t10.cold` is
honoured or refused with a reason."""

from __future__ import annotations

import re
from pathlib import Path

import onnx
import pytest
from helpers import chip_file_with_sram, random_onnx_inputs
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.linalg.ops import GenericOp

from t10 import driver
from t10.common.attr_names import COLD_ATTR, PLAN_ATTR
from t10.common.chip_spec import load_chip
from t10.common.move_costs import quick_cycles, transition_estimate
from t10.common.plans import Plan, host_layout, input_layouts
from t10.common.weights import cold_attr
from t10.driver import CHECK_TOLERANCES, CompileOptions, compile_module
from t10.errors import T10Error
from t10.examples import models
from t10.frontend import import_onnx
from t10.outputs.report import RunReport, check_outputs, planned_ops, planned_sram
from t10.planning.cold_weights import (
    cold_point,
    expand_bound,
    expand_estimate,
    with_cold_weights,
)
from t10.planning.memory_reconciliation import op_options
from t10.planning.operators import operand_roles, operator_tensor_expr, planned_operators
from t10.planning.plan_search import operator_frontier
from t10.reference import reference_outputs
from t10.sim.simulator import simulate
from t10.t10_dialects.rtensor import PlanAttr

SRAM = 70_000
"""test-16 with this much SRAM per core: the MLP below fits, with some weights cold."""


def _mlp() -> onnx.ModelProto:
    """Four 128-wide layers over a batch of 512: its fastest plans replicate the weights."""
    return models.mlp(batch=512, sizes=(128, 128, 128, 128))


def _check_run(report: RunReport) -> None:
    for op in report.ops:
        assert op.cycles == op.estimated_cycles, op.name
    assert report.estimated_total_cycles == report.total_cycles
    assert report.peak_sram_bytes_per_core <= report.planned_sram_bytes_per_core


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_chosen_where_memory_binds_and_matches_onnxruntime(precision: str, tmp_path: Path) -> None:
    chip = chip_file_with_sram(SRAM if precision == "fp32" else SRAM // 2, tmp_path)
    compiled = driver.compile_model(
        _mlp(),
        driver.CompileOptions(chip=chip, precision=precision),
        emit="linalg",
    )
    assert "t10.cold = array<i64: 1" in str(compiled.planned)
    result = driver.run_model(
        _mlp(),
        driver.CompileOptions(chip=chip, precision=precision),
        check=driver.CHECK_TOLERANCES[precision],
    )
    assert result.check is not None and result.check.passed, result.check
    _check_run(result.report)
    relayouts = [op.name for op in result.report.ops if op.kind == "relayout"]
    assert relayouts  # the expansions


def test_never_chosen_when_the_fastest_plans_fit(tmp_path: Path) -> None:
    compiled = driver.compile_model(_mlp(), driver.CompileOptions(chip="test-16"), emit="linalg")
    assert "t10.cold" not in str(compiled.planned)


def test_the_cold_twin_of_a_plan() -> None:
    """Same plan and kernel estimate; resident bytes are the homes (the weight over the
    plan's cores by `host_layout`), the expanded copy is transient, a bound of the expansion
    is in its cycles, and its exact estimate is the relayout's."""
    chip = load_chip("test-16")
    module = import_onnx(models.matmul(64, 128, 256))
    (operator,) = planned_operators(module)
    expr = operator_tensor_expr(operator, "fp32", "fp32")
    operands = operand_roles(operator)
    assert operands.constant == (1,)
    options = op_options(expr, operator_frontier(chip, expr, "t10", 0.5), operands)
    for hot in options.points:
        twin = cold_point(chip, expr, hot.plan, hot.estimate, operands)
        layout = input_layouts(expr, hot.plan)[1]
        home = host_layout((128, 256), layout.cores).local_elements() * 4
        move = transition_estimate(chip, host_layout((128, 256), layout.cores), layout, 4)
        assert twin.cold == (1,) and twin.home_bytes == home
        assert twin.resident_bytes == home
        assert twin.transient_bytes == hot.estimate.sram_bytes
        bound = quick_cycles(chip, host_layout((128, 256), layout.cores), layout, 4)
        assert twin.cycles == hot.cycles + bound
        assert expand_bound(chip, expr, hot.plan, (1,)) == bound
        assert expand_estimate(chip, expr, hot.plan, (1,)) == (move if move.cycles else None)
    both = with_cold_weights(chip, expr, options)
    cycles = [p.cycles for p in both.points]
    assert cycles == sorted(cycles)
    assert all(p.resident_bytes < h.resident_bytes for p in both.points if p.cold
               for h in options.points if h.plan == p.plan)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([1, 2, 4, 8, 16]),
       st.sampled_from([8, 24, 64]), st.sampled_from(["fp32", "fp16"]))
def test_pinned_cold_plans_match_onnxruntime(rows: int, cols: int, k: int, precision: str
                                             ) -> None:
    """Spatial plans of a matmul with its weight pinned cold lower, simulate to onnxruntime's
    numbers and to their estimates, within the plan search's bytes."""
    model = models.matmul(32, k, 64)
    module = import_onnx(model)
    (operator,) = planned_operators(module)
    plan = Plan((min(rows, 32), min(cols, 64), 1))
    if plan.cores > 16:
        plan = Plan((plan.factors[0], 16 // plan.factors[0], 1))
    operator.generic.attributes[PLAN_ATTR] = PlanAttr.from_plan(plan)
    operator.generic.attributes[COLD_ATTR] = cold_attr([1])
    compiled = compile_module(module, CompileOptions(chip="test-16", precision=precision))
    assert COLD_ATTR in next(
        o for o in compiled.planned.walk() if isinstance(o, GenericOp)
    ).attributes
    inputs = random_onnx_inputs(model)
    result = simulate(compiled.module, compiled.chip, inputs)
    check = check_outputs(result.outputs, reference_outputs(model, inputs),
                          CHECK_TOLERANCES[precision])
    assert check.passed, check
    estimated = sum(op.estimated_cycles or 0 for op in planned_ops(compiled.planned))
    assert result.report.total_cycles == estimated
    assert result.report.peak_sram_bytes_per_core <= (planned_sram(compiled.planned) or 0)


@pytest.mark.parametrize(
    ("cold", "message"),
    [
        ([0], "'t10.cold' names input 0, which is not a weight it reads directly"),
        ([1, 1], "'t10.cold' names an input twice"),
        ([5], "'t10.cold' names input 5, but it has 2 inputs"),
    ],
)
def test_a_bad_cold_mark_is_refused(cold: list[int], message: str) -> None:
    module = import_onnx(models.matmul(32, 64, 64))
    (operator,) = planned_operators(module)
    operator.generic.attributes[COLD_ATTR] = cold_attr(cold)
    operator.generic.attributes[PLAN_ATTR] = PlanAttr.from_plan(Plan((4, 4, 1)))
    with pytest.raises(T10Error, match=re.escape(message)):
        compile_module(module, CompileOptions(chip="test-16"))
