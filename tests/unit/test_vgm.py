"""The `vgm` planner (Roller-style virtual global memory, `t10.planning.vgm_plans`): every
tensor has a home over all the chip's cores; operators load their inputs from homes, compute
and store their outputs back. The numbers match onnxruntime, every operator's and move's
estimate equals its simulated cycles, the simulated peak stays within `t10.model_bytes`, the
choice is each operator's cheapest plan, and a model that does not fit is refused."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import chip_file_with_sram
from xdsl.dialects.builtin import DenseArrayBase, i64

from t10 import driver
from t10.common.chip_spec import load_chip
from t10.common.gathers import GatherKind
from t10.common.move_costs import transition_estimate
from t10.common.plans import Plan, host_layout, input_layouts
from t10.errors import T10Error
from t10.examples import models, zoo
from t10.frontend import import_onnx
from t10.outputs.report import RunReport
from t10.planning import vgm_plans
from t10.planning.memory_reconciliation import op_options
from t10.planning.operators import operand_roles, operator_tensor_expr, planned_operators
from t10.planning.plan_search import operator_frontier
from t10.planning.vgm_plans import MoveCosts, VgmOperator, candidates, loads_and_gathers
from t10.t10_dialects.rtensor import PlanAttr
from t10.tools.cli import main

TINY_BERT = dataclasses.replace(
    zoo.ZOO["bert-base"].config, hidden=64, heads=2, intermediate=128, vocab=100,
    max_positions=32,
)


def _bert() -> onnx.ModelProto:
    return zoo.ZOO["bert-base"].build(batch=1, seq=32, layers=1, config=TINY_BERT)


def _bert_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "input_ids": rng.integers(0, TINY_BERT.vocab, (1, 32)),
        "token_type_ids": rng.integers(0, 2, (1, 32)),
        "attention_mask": rng.integers(0, 2, (1, 32)),
    }


def _check_run(report: RunReport, gathers_exact: bool = True) -> None:
    """Every simulated step's cycles equal its estimate (a gather's only for the ids its
    estimate samples), the totals agree, and the peak stays within the plan search's bound."""
    for op in report.ops:
        if op.kind != "gather" or gathers_exact:
            assert op.cycles == op.estimated_cycles, op.name
    if gathers_exact:
        assert report.estimated_total_cycles == report.total_cycles
    assert report.peak_sram_bytes_per_core <= report.planned_sram_bytes_per_core
    assert report.planner == "vgm"


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize(
    "model",
    [models.mlp(), models.bert_ffn(rows=32, hidden=64, inner=128), models.matmul(96, 80, 112)],
    ids=["mlp", "bert-ffn", "matmul"],
)
def test_examples_match_onnxruntime_and_their_estimates(
    chip: str, precision: str, model: onnx.ModelProto
) -> None:
    run = driver.run_model(
        model,
        driver.CompileOptions(chip=chip, planner="vgm", precision=precision),
        check=driver.check_tolerance(precision),
    )
    assert run.check is not None and run.check.passed
    _check_run(run.report)
    kinds = {op.kind for op in run.report.ops}
    assert {"relayout", "store"} <= kinds


def test_bert_matches_onnxruntime_and_its_estimates(chip: str) -> None:
    """A small BERT layer: gathers of token ids, views between operators (folded into the
    loads), epilogues, a returned pooler output."""
    run = driver.run_model(
        _bert(),
        driver.CompileOptions(chip=chip, planner="vgm"),
        inputs=_bert_inputs(),
        check=driver.check_tolerance("fp32"),
    )
    assert run.check is not None and run.check.passed
    _check_run(run.report, gathers_exact=False)


def test_bert_gathers_of_the_sampled_ids_run_as_estimated(chip: str) -> None:
    """Fed the token and segment ids the plan search samples (`GatherKind.sample`), the
    gathers run exactly as estimated too, and so does the whole model."""
    model = _bert()
    tables = {t.name: tuple(t.dims) for t in model.graph.initializer}
    inputs = _bert_inputs()
    for name, table in (
        ("input_ids", "embeddings.word.weight"),
        ("token_type_ids", "embeddings.token_type.weight"),
    ):
        inputs[name] = GatherKind("rows", 0).sample(tables[table], inputs[name].shape)
    run = driver.run_model(
        model,
        driver.CompileOptions(chip=chip, planner="vgm"),
        inputs=inputs,
        check=driver.check_tolerance("fp32"),
    )
    assert run.check is not None and run.check.passed
    _check_run(run.report)
    assert any(op.kind == "gather" for op in run.report.ops)


def test_bert_in_fp16_runs_as_estimated() -> None:
    """(The zoo's BERT masks with a constant beyond fp16's range, so its fp16 values are NaN
    under every planner: timing only.)"""
    run = driver.run_model(
        _bert(),
        driver.CompileOptions(chip="test-16", planner="vgm", precision="fp16"),
        inputs=_bert_inputs(),
        timing_only=True,
    )
    _check_run(run.report, gathers_exact=False)


def test_every_operator_takes_its_cheapest_plan() -> None:
    """Costing every candidate in full gives the same plans: the floors skip none that
    could win (and are floors: never above a candidate's cost)."""
    chip = load_chip("test-16")
    module = import_onnx(models.mlp())
    moves = MoveCosts(chip, chip.cores)
    for operator in planned_operators(module):
        expr = operator_tensor_expr(operator, "fp32", "fp32")
        frontier = operator_frontier(chip, expr, "vgm")
        op = VgmOperator(
            expr, op_options(expr, frontier, operand_roles(operator)), *loads_and_gathers(operator)
        )
        costed = [
            (moves.costed(op, plan, est), moves.floor(op, plan, est))
            for plan, est in candidates(chip, op, chip.cores)
        ]
        assert all(floor <= point.cycles for point, floor in costed)
        best = vgm_plans.best_point(op, moves, chip.sram_bytes_per_core)
        assert best is not None
        assert best.cycles == min(point.cycles for point, _ in costed)


def test_move_floor_is_below_the_estimate() -> None:
    chip = load_chip("test-16")
    home = host_layout((64, 48), 16)
    expr = operator_tensor_expr(
        planned_operators(import_onnx(models.matmul(64, 48, 32)))[0], "fp32", "fp32"
    )
    for factors in [(1, 1, 16), (4, 1, 4), (2, 2, 4), (16, 1, 1), (1, 4, 1)]:
        dst = input_layouts(expr, Plan(factors))[0]
        for src, to in ((home, dst), (dst, home)):
            exact = transition_estimate(chip, src, to, 4).cycles
            assert vgm_plans.move_floor(chip, src, to, 4, None) <= exact


def test_a_model_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    chip = chip_file_with_sram(6000, tmp_path)
    with pytest.raises(T10Error, match=r"^the model does not fit chip 'sram6000': .* "
                       r"smallest plans need \d+ bytes per core \(planner=vgm\)"):
        driver.compile_model(models.mlp(), driver.CompileOptions(chip=chip, planner="vgm"))


def test_pinned_plans_are_kept() -> None:
    module = import_onnx(models.mlp())
    pinned = PlanAttr.from_plan(Plan((1, 2, 8)))
    planned_operators(module)[0].generic.attributes["t10.plan"] = pinned
    driver.compile_module(
        module,
        driver.CompileOptions(chip="test-16", planner="vgm", fuse=False),
        emit="linalg",
    )
    assert planned_operators(module)[0].generic.attributes["t10.plan"] == pinned


def test_a_pinned_cold_mark_is_refused() -> None:
    """vgm keeps every weight in its home already: a `t10.cold` mark is an error, not
    silently dropped."""
    module = import_onnx(models.mlp())
    generic = planned_operators(module)[0].generic
    generic.attributes["t10.plan"] = PlanAttr.from_plan(Plan((1, 2, 8)))
    generic.attributes["t10.cold"] = DenseArrayBase.from_list(i64, [1])
    with pytest.raises(T10Error, match=r"'t10.cold' does not apply with planner vgm"):
        driver.compile_module(
            module,
            driver.CompileOptions(chip="test-16", planner="vgm", fuse=False),
            emit="linalg",
        )


def test_cli_runs_the_vgm_planner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mlp.onnx"
    onnx.save_model(models.mlp(), path)
    assert main(["run", str(path), "--chip", "test-16", "--planner", "vgm", "--check"]) == 0
    out = capsys.readouterr().out
    assert "planner vgm" in out and "check   PASSED" in out
    assert re.search(r"/store +store ", out)
