"""Every test model through compile and simulate: the report's figures agree with each other,
and `t10 run`'s report (`compile_model`, then `simulate_compiled` on the chip-level module,
as `run_model` does) is what the same module lowered stage by stage through text IR, as a
`t10-opt` pipeline run one stage per process lowers it, reports (`lowered_stage_by_stage`).

The models: every ONNX file under tests/unit/data, the built-in examples (`t10.examples`) and
every zoo architecture at toy sizes, one layer. Per model, every op the simulator ran has a
plan-search estimate equal to its simulated cycles (layout transitions, gathers and the
moves that make returned views included), so the estimated total equals the simulated
total; and every op's sync cycles are one chip sync per superstep it counts.

On test-16; the three ImageNet CNNs need more SRAM than test-16 has (their weights), so they
run on test-16 with 4 MiB per core. Timing only, but for a model whose gather ids are
computed on chip (their values decide the traffic, which a gather's estimate, counted for
uniformly drawn ids, then only approximates).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from helpers import (
    DATA,
    chip_file_with_sram,
    float_model,
    lowered_stage_by_stage,
    randn,
    typed_model,
)
from onnx import TensorProto, helper, numpy_helper

from t10.common import costs
from t10.common.chip_spec import load_chip
from t10.driver import CompileOptions, compile_model, run_model, simulate_compiled
from t10.examples.models import EXAMPLES
from t10.examples.zoo import ZOO
from t10.outputs.report import RunReport

BIG = ("resnet18", "mobilenet_v2", "efficientnet_b0")
"""The CNN exports whose weights take more than test-16's SRAM."""
VALUES = ("hf_roberta_ids_mask",)
"""Exports whose gather ids are computed on chip: simulated with values."""
RANGES = {"hf_deberta_v2": {"attention_mask": (0, 1)}}
"""Declared ranges of integer inputs: DeBERTa multiplies its INT64 mask with itself."""
EXAMPLE_SIZES: dict[str, dict[str, Any]] = {
    "mlp": {"sizes": (64, 48, 32)},
    "bert-ffn": {"hidden": 32, "inner": 64, "rows": 16},
    "matmul": {"m": 64, "k": 48, "n": 32},
    "chain": {"nodes": 24, "rows": 16, "cols": 32},
}


def _zoo(name: str) -> onnx.ModelProto:
    """`name` at one layer, batch 1, toy widths (ResNet-50: one block, 32×32 images)."""
    if name == "resnet50":
        return ZOO[name].build(1, 32, 1)
    cfg = ZOO[name].config
    cfg = dataclasses.replace(cfg, hidden=32, heads=4, intermediate=48,
                              vocab=min(cfg.vocab, 50), labels=min(cfg.labels, 10))
    return ZOO[name].build(1, 5 if name.startswith("vit") else 8, 1, config=cfg)


def two_convs() -> onnx.ModelProto:
    """Conv, Relu, Conv, as torch exports two nn.Conv2d layers: the output is a view of the
    second convolution's result (back from its im2col layout), returned from the model."""
    weights = [
        numpy_helper.from_array(randn(8, 3, 3, 3, seed=1), "w1"),
        numpy_helper.from_array(randn(8, seed=2), "b1"),
        numpy_helper.from_array(randn(16, 8, 3, 3, seed=3), "w2"),
        numpy_helper.from_array(randn(16, seed=4), "b2"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["y"], name="conv2", pads=[1, 1, 1, 1]),
    ]
    return float_model(nodes, {"x": [1, 3, 16, 16]}, ["y"], weights)


def returned_gathers() -> onnx.ModelProto:
    """An embedding lookup returned as it is and through a view (a Reshape)."""
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["rows"], name="lookup"),
        helper.make_node("Reshape", ["rows", "flat"], ["flat_rows"], name="flatten"),
    ]
    weights = {"table": randn(10, 8), "flat": np.array([6, 8], dtype=np.int64)}
    return typed_model(nodes, {"ids": (TensorProto.INT64, [2, 3])},
                       {"rows": [2, 3, 8], "flat_rows": [6, 8]}, weights)


MODELS: dict[str, Callable[[], onnx.ModelProto | str]] = {
    **{
        str(p.relative_to(DATA)): (lambda p=p: str(p))
        for p in sorted(DATA.glob("**/*.onnx"))
    },
    **{f"example:{n}": (lambda n=n: EXAMPLES[n](**EXAMPLE_SIZES[n])) for n in EXAMPLES},
    **{f"zoo:{n}": (lambda n=n: _zoo(n)) for n in ZOO},
    "two_convs": two_convs,
    "returned_gathers": returned_gathers,
}


def test_every_example_is_sized() -> None:
    assert set(EXAMPLE_SIZES) == set(EXAMPLES)


def assert_consistent(report: RunReport, chip: str, uniform_ids: bool = True) -> None:
    """Every op simulated, estimated as simulated, one sync per superstep; the totals too,
    and the model's bound at most the total. A gather's estimate counts the traffic of
    uniformly drawn ids: without `uniform_ids` (ids computed on chip) it is only required."""
    sync = costs.sync_cycles(load_chip(chip))
    for op in report.ops:
        name = op.name
        assert op.cycles is not None, f"{name} planned but never simulated"
        assert op.estimated_cycles is not None, (name, op)
        if uniform_ids or op.kind != "gather":
            assert op.estimated_cycles == op.cycles, (name, op)
        assert op.sync_cycles == op.supersteps * sync, (name, op)
    assert report.estimated_total_cycles is not None
    if uniform_ids:
        assert report.estimated_total_cycles == report.total_cycles
    assert 0 <= report.bound_cycles <= report.total_cycles


def _stem(name: str) -> str:
    return Path(name).name.split(".")[0]


@pytest.mark.parametrize("name", MODELS)
def test_estimates_equal_the_simulation(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    stem = _stem(name)
    chip = "test-16"
    if stem in BIG:
        chip = chip_file_with_sram(4 << 20, tmp_path_factory.mktemp("chip"))
    uniform_ids = stem not in VALUES
    compiled = compile_model(
        MODELS[name](), CompileOptions(chip=chip), input_ranges=RANGES.get(stem)
    )
    report = simulate_compiled(compiled.module, compiled.chip, timing_only=uniform_ids).report
    assert_consistent(report, chip, uniform_ids)
    staged = lowered_stage_by_stage(compiled.planned)
    assert simulate_compiled(staged, compiled.chip, timing_only=uniform_ids).report == report


@pytest.mark.parametrize("planner", ["t10", "t10-multidim", "replicate", "vgm"])
@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_returned_views_are_estimated(planner: str, precision: str) -> None:
    """The move that makes a returned view (the second Conv's output) has its estimate
    under every planner and precision."""
    report = run_model(
        two_convs(),
        CompileOptions(chip="test-16", planner=planner, precision=precision),
        timing_only=True,
    ).report
    moves = [op for op in report.ops if op.name == "conv2:5/relayout"]
    assert len(moves) == 1 and moves[0].kind == "relayout"
    assert_consistent(report, "test-16")
