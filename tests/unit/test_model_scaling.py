"""Whole models at scale: identical operators share their plan search (`reuse`) without
changing a plan, and the depth benchmark's table (`t10.bench.scaling`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import onnx
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp

from t10.bench.scaling import (
    Measurement,
    Row,
    arguments,
    cases,
    format_table,
    measure,
)
from t10.common.chip_spec import load_chip
from t10.driver import CompileOptions, run_passes
from t10.examples import zoo
from t10.frontend import import_onnx
from t10.outputs.report import input_specs, random_inputs
from t10.passes.t10_compile import pipeline
from t10.passes.t10_plan_search import T10PlanSearch
from t10.planning import model_search, operator_frontiers, plan_search
from t10.planning.operator_frontiers import clear_frontier_cache
from t10.sim.simulator import simulate


def tiny_bert(layers: int) -> onnx.ModelProto:
    """BERT-base's architecture at toy sizes (sequence 8)."""
    cfg = dataclasses.replace(
        zoo.get("bert-base").config, hidden=32, heads=4, intermediate=48, vocab=50
    )
    return zoo.get("bert-base").build(1, 8, layers=layers, config=cfg)


def compiled(model: onnx.ModelProto, chip: str, reuse: bool) -> ModuleOp:
    """`model` compiled to the chip level in fp16, with the plan search's `reuse` as given."""
    module = import_onnx(model)
    passes = [
        dataclasses.replace(p, reuse=reuse) if isinstance(p, T10PlanSearch) else p
        for p in pipeline(CompileOptions(chip=chip, precision="fp16"), emit="linalg")
    ]
    run_passes(module, passes)
    return module


def plan_attributes(module: ModuleOp) -> list[dict[str, str]]:
    """Every generic's attributes (plans, estimates, relayouts, reused inputs, gathers)."""
    return [
        {name: str(attr) for name, attr in op.attributes.items()}
        for op in module.walk()
        if isinstance(op, GenericOp)
    ]


@pytest.mark.parametrize("chip", ["test-16", "ipu-mk2"])
def test_reuse_gives_the_plans_of_planning_every_layer(
    chip: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 3-layer model planned with identical operators sharing one frontier gets exactly the
    plans, estimates, transitions and simulated cycles of planning every operator on its
    own, with fewer frontier searches."""
    searched: list[str] = []
    search = plan_search.operator_frontier

    def counted(*args: Any, **kwargs: Any) -> Any:
        searched.append(args[1].name)
        return search(*args, **kwargs)

    # every search, the shared ones (in this process: the test's operators are small) too
    monkeypatch.setattr(model_search, "operator_frontier", counted)
    monkeypatch.setattr(operator_frontiers, "operator_frontier", counted)
    clear_frontier_cache()
    model = tiny_bert(3)
    shared = compiled(model, chip, reuse=True)
    shared_searches = len(searched)
    alone = compiled(model, chip, reuse=False)
    assert 0 < shared_searches < len(searched) - shared_searches
    assert plan_attributes(shared) == plan_attributes(alone)
    assert shared.attributes == alone.attributes
    cycles = []
    for module in (shared, alone):
        run_passes(module, pipeline(CompileOptions(chip=chip, precision="fp16"), emit="chip")[-4:])
        inputs = random_inputs(input_specs(module), 0)
        cycles.append(simulate(module, load_chip(chip), inputs, True).report.total_cycles)
    assert cycles[0] == cycles[1] > 0


def test_scaling_table(tmp_path: Path) -> None:
    """The benchmark measures a model in this process and prints one Markdown row per depth,
    its cycles those of a timing-only simulation."""
    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_bert(1), path)
    measured = measure(str(path), "test-16", "fp16")
    module = compiled(tiny_bert(1), "test-16", reuse=True)
    run_passes(module, pipeline(CompileOptions(chip="test-16", precision="fp16"), emit="chip")[-4:])
    inputs = random_inputs(input_specs(module), 0)
    simulated = simulate(module, load_chip("test-16"), inputs, True)
    assert measured.total_cycles == simulated.report.total_cycles
    assert measured.compile_seconds > 0 and measured.simulate_seconds > 0
    assert measured.peak_rss_bytes > 10**7
    other = Measurement(1.3, 0.5, 12_345, 2 * 10**9, 3.25, 5 * 10**8)
    rows = [Row("tiny", 1, 1, measured), Row("tiny", 2, 1, other)]
    header, rule, first, second = format_table(rows).splitlines()
    assert measured.cpu_seconds >= measured.compile_seconds / 2
    assert header.split("|")[1:-1] == [
        " model ", " layers / nodes ", " batch ", " compile s ", " simulate s ", " total s ",
        " CPU s ", " total cycles ", " peak RSS GB ", " workers' peak RSS GB ",
    ]
    assert rule == "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    assert first.startswith("| tiny | 1 | 1 | ")
    assert f"| {measured.total_cycles:,} |" in first
    assert second == "| tiny | 2 | 1 | 1.3 | 0.5 | 1.8 | 3.2 | 12,345 | 2.00 | 0.50 |"


def test_scaling_cases() -> None:
    """The cases each option asks for: BERT by depth, ResNet-50's 16 blocks by batch, chains by
    length; an export is measured as it is."""
    parse = arguments
    found = [(c.model, c.layers, c.batch) for c in cases(parse(["--model", "resnet50"]))]
    assert found == [("resnet50", 16, 1), ("resnet50", 16, 8), ("resnet50", 16, 32)]
    found = [(c.model, c.layers, c.batch) for c in cases(parse(["--model", "chain",
                                                                 "--nodes", "10,20"]))]
    assert found == [("chain", 10, 1), ("chain", 20, 1)]
    assert [c.layers for c in cases(parse(["--quick"]))] == [1, 2]
