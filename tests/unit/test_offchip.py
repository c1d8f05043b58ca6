"""Off-chip weights (docs/DESIGN.md, "Off-chip weights"; docs/chips.md, `offchip`): on a
chip with off-chip memory a model too big for the SRAM keeps weights there and loads them
into its plans' layouts while earlier operators run. The numbers still match onnxruntime,
every estimate (the waits included) equals its simulated cycles, the simulated peak stays
within `t10.model_bytes` and the SRAM, and a load costs what the formula says."""

from __future__ import annotations

import dataclasses
import json
import math
from importlib import resources
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import random_onnx_inputs
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.linalg.ops import GenericOp

from t10 import driver
from t10.common.attr_names import AHEAD_ATTR, OFFCHIP_ATTR, PLAN_ATTR
from t10.common.bounds import model_bound, offchip_bound
from t10.common.chip_spec import chip_from_dict, load_chip, vary_chip
from t10.common.offchip import OffChipMemory, load_cycles
from t10.common.plans import Plan
from t10.common.weights import cold_attr
from t10.driver import CHECK_TOLERANCES, CompileOptions, compile_module
from t10.errors import DoesNotFit, T10Error
from t10.examples import models
from t10.examples.zoo import ZOO
from t10.frontend import import_onnx
from t10.outputs.report import RunReport, check_outputs, planned_ops, planned_sram
from t10.reference import reference_outputs
from t10.sim.simulator import simulate
from t10.t10_dialects.rtensor import PlanAttr

RATE, LATENCY = 8.0, 100
"""The off-chip memory of the test chips: bytes per cycle, latency."""


def _chip(directory: Path, sram: int, offchip: bool = True, capacity: int = 10**9,
          rate: float = RATE) -> str:
    """A chip file: test-16 with `sram` bytes per core and (`offchip`) off-chip memory."""
    spec = json.loads(resources.files("t10.common").joinpath("chips/test-16.json").read_text())
    spec = {**spec, "name": f"s{sram}{'-off' if offchip else ''}", "sram_bytes_per_core": sram}
    if offchip:
        spec["offchip"] = {"capacity_bytes": capacity, "bytes_per_cycle": rate,
                           "latency_cycles": LATENCY}
    path = directory / f"{spec['name']}-{capacity}-{rate}.json"
    path.write_text(json.dumps(spec))
    return str(path)


def _check_report(report: RunReport, sram: int) -> None:
    for op in report.ops:
        assert op.cycles == op.estimated_cycles, op.name
    assert report.estimated_total_cycles == report.total_cycles
    assert report.peak_sram_bytes_per_core <= (report.planned_sram_bytes_per_core or 0) <= sram


# --------------------------------------------------------------------------------------------
# The chip file and the cost
# --------------------------------------------------------------------------------------------


def test_the_offchip_object_reads_and_writes_back() -> None:
    chip = load_chip("ipu-mk2-hbm")
    assert chip.offchip == OffChipMemory(85899345920, 3165.5, 0)
    assert chip_from_dict(chip.to_dict()) == chip
    assert load_chip("ipu-mk2").offchip is None
    faster = vary_chip(chip, "offchip.bytes_per_cycle", "6331")
    assert faster.offchip is not None and faster.offchip.bytes_per_cycle == 6331


@pytest.mark.parametrize(("offchip", "problem"), [
    ({"capacity_bytes": 0, "bytes_per_cycle": 1, "latency_cycles": 0},
     "field 'offchip.capacity_bytes' must be an integer from 1"),
    ({"capacity_bytes": 8, "bytes_per_cycle": -1, "latency_cycles": 0},
     "field 'offchip.bytes_per_cycle' must be a number > 0"),
    ({"capacity_bytes": 8, "bytes_per_cycle": 1, "latency_cycles": 1.5},
     "field 'offchip.latency_cycles' must be an integer from 0"),
    ({"capacity_bytes": 8, "bytes_per_cycle": 1},
     "field 'offchip.latency_cycles' is missing"),
    ({"capacity_bytes": 8, "bytes_per_cycle": 1, "latency_cycles": 0, "channels": 2},
     "field 'offchip.channels' is unknown; allowed fields here: capacity_bytes, "
     "bytes_per_cycle, latency_cycles"),
])
def test_a_bad_offchip_object_is_refused(offchip: dict[str, object], problem: str) -> None:
    spec = {**load_chip("test-16").to_dict(), "offchip": offchip}
    with pytest.raises(T10Error, match="chip file 'bad.json': " + problem):
        chip_from_dict(spec, "bad.json")


def test_a_load_costs_its_latency_and_the_slower_of_the_memory_and_the_port() -> None:
    memory = OffChipMemory(10**6, bytes_per_cycle=10.0, latency_cycles=100)
    assert load_cycles(memory, 0.5, 1000, 300) == 100 + 150  # the receiving port binds
    assert load_cycles(memory, 0.5, 1000, 100) == 100 + 100  # the memory binds
    assert load_cycles(memory, 0.28, 1001, 10) == 100 + 101  # rounded up once
    assert load_cycles(memory, 0.5, 0, 0) == 0


# --------------------------------------------------------------------------------------------
# Hand-computed cases
# --------------------------------------------------------------------------------------------


def _pinned(model: onnx.ModelProto, plans: list[Plan], aheads: list[int | None]
            ) -> ModuleOp:
    """`model` imported, its operators' `plans` pinned, and the weight of each operator with
    an entry in `aheads` off chip, loading that many operators ahead."""
    module = import_onnx(model)
    ops = [o for o in module.walk() if isinstance(o, GenericOp)]
    for op, plan, ahead in zip(ops, plans, aheads, strict=True):
        op.attributes[PLAN_ATTR] = PlanAttr.from_plan(plan)
        if ahead is not None:
            op.attributes[OFFCHIP_ATTR] = cold_attr([1])
            op.attributes[AHEAD_ATTR] = IntegerAttr(ahead, i64)
    return module


def _two_matmuls(m: int, k: int) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weights = [helper.make_tensor(name, TensorProto.FLOAT, (k, k),
                                  rng.standard_normal((k, k)).astype(np.float32).ravel() / k)
               for name in ("w0", "w1")]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w0"], ["h"], name="mm0"),
         helper.make_node("MatMul", ["h", "w1"], ["y"], name="mm1")],
        "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, (m, k))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (m, k))], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_one_matmul_waits_for_its_weight_as_computed_by_hand(tmp_path: Path) -> None:
    """The weight [128, 64] (32 KiB in fp32) replicated on all 16 cores: the memory sends it
    once (32768 / 8 = 4096 cycles), each core's port receives all of it (32768 × 0.28 =
    9175.04): 100 + 9176 cycles, waited for in full before the only superstep."""
    model = models.matmul(64, 128, 64)
    module = _pinned(model, [Plan((16, 1, 1))], [0])
    compiled = compile_module(module, CompileOptions(chip=_chip(tmp_path, 262144)))
    inputs = random_onnx_inputs(model)
    result = simulate(compiled.module, compiled.chip, inputs)
    report = result.report
    assert report.op("matmul/load").wait_cycles == 100 + math.ceil(128 * 64 * 4 * 0.28)
    assert report.total_cycles == report.op("matmul/load").cycles + report.op("matmul").cycles
    check = check_outputs(result.outputs, reference_outputs(model, inputs),
                          CHECK_TOLERANCES["fp32"])
    assert check.passed, check


@pytest.mark.parametrize("ahead", [0, 1])
def test_a_load_ahead_runs_beside_the_operators_before(ahead: int, tmp_path: Path) -> None:
    """mm1's weight [128, 128] split over 16 cores by columns (4 KiB a core, 1147 cycles at
    the port): the memory sends 65536 bytes in 8192 cycles, + 100. Loaded right before mm1
    (before its moves) the chip waits for what mm1's relayout does not hide; loaded one
    operator ahead it starts with mm0, which hides all of it (no wait, no `mm1/load` row)."""
    model = _two_matmuls(32, 128)
    module = _pinned(model, [Plan((16, 1, 1)), Plan((1, 16, 1))], [None, ahead])
    compiled = compile_module(module, CompileOptions(chip=_chip(tmp_path, 262144)))
    inputs = random_onnx_inputs(model)
    result = simulate(compiled.module, compiled.chip, inputs)
    cycles = {o.name: o.cycles for o in result.report.ops}
    hidden = cycles["mm1/relayout"] + (cycles["mm0"] if ahead else 0)
    wait = max(0, 100 + 8192 - hidden)
    assert (wait > 0) == (ahead == 0)
    assert cycles.get("mm1/load", 0) == wait
    estimated = {o.name: o.estimated_cycles for o in planned_ops(compiled.planned)}
    assert estimated.get("mm1/load", 0) == wait
    assert result.report.total_cycles == sum(e or 0 for e in estimated.values())
    check = check_outputs(result.outputs, reference_outputs(model, inputs),
                          CHECK_TOLERANCES["fp32"])
    assert check.passed, check


# --------------------------------------------------------------------------------------------
# Planned where nothing fits on chip
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_weights_stream_where_the_model_does_not_fit_and_match_onnxruntime(
    precision: str, tmp_path: Path
) -> None:
    model = models.mlp(batch=64, sizes=(256, 256, 256, 256))
    sram = 40_000 if precision == "fp32" else 20_000
    with pytest.raises(DoesNotFit):
        driver.compile_model(model, CompileOptions(chip=_chip(tmp_path, sram, offchip=False),
                                                   precision=precision), emit="linalg")
    options = CompileOptions(chip=_chip(tmp_path, sram), precision=precision)
    compiled = driver.compile_model(model, options, emit="linalg")
    assert "t10.offchip = array<i64: 1" in str(compiled.planned)
    result = driver.run_model(model, options, check=CHECK_TOLERANCES[precision])
    assert result.check is not None and result.check.passed, result.check
    _check_report(result.report, sram)
    assert [o.name for o in result.report.ops if o.kind == "load"]


def test_never_off_chip_when_the_model_fits(tmp_path: Path) -> None:
    model = models.mlp(batch=64, sizes=(256, 256, 256, 256))
    compiled = driver.compile_model(model, CompileOptions(chip=_chip(tmp_path, 262144)),
                                    emit="linalg")
    assert OFFCHIP_ATTR not in str(compiled.planned)


@pytest.mark.parametrize("preload", ["planned", "next", "none"])
@pytest.mark.parametrize(("phase", "sram"), [("prefill", 6_000), ("decode", 6_000)])
def test_a_tiny_llama_streams_its_weights_and_matches_onnxruntime(
    phase: str, sram: int, preload: str, tmp_path: Path
) -> None:
    """Two layers of a tiny Llama, prefill (with its caches as outputs) and one decode step,
    on a chip too small for its weights: every way the search may load them (planned ahead,
    at most one operator ahead, right before their operator) computes onnxruntime's numbers
    with every estimate equal to the simulation."""
    config = dataclasses.replace(ZOO["llama2-7b"].config, hidden=64, heads=4, intermediate=96)
    seq, context = (8, None) if phase == "prefill" else (None, 16)
    path = tmp_path / "llama.onnx"
    onnx.save(ZOO["llama2-7b"].build(2, seq, 2, config=config, phase=phase, context=context),
              path)
    with pytest.raises(DoesNotFit):
        driver.compile_model(path, CompileOptions(chip=_chip(tmp_path, sram, offchip=False)),
                             emit="linalg")
    options = CompileOptions(chip=_chip(tmp_path, sram), preload=preload)
    result = driver.run_model(path, options, check=CHECK_TOLERANCES["fp32"])
    assert result.check is not None and result.check.passed, result.check
    _check_report(result.report, sram)
    assert sum(1 for o in result.report.ops if o.kind == "load") >= 3


@pytest.mark.parametrize("preload", ["planned", "none"])
def test_a_prefill_that_mostly_waits_is_estimated_as_simulated(
    preload: str, tmp_path: Path
) -> None:
    """A prefill returns its caches, views made on chip between operators: with a memory so
    slow that most of the run is waits, every estimate still equals the simulation."""
    config = dataclasses.replace(ZOO["llama2-7b"].config, hidden=64, heads=4, intermediate=96)
    path = tmp_path / "prefill.onnx"
    onnx.save(ZOO["llama2-7b"].build(2, 8, 2, config=config, phase="prefill"), path)
    sram = 6_000
    options = CompileOptions(chip=_chip(tmp_path, sram, rate=0.25), preload=preload)
    report = driver.run_model(path, options, timing_only=True).report
    _check_report(report, sram)
    assert sum(op.wait_cycles or 0 for op in report.ops) > report.total_cycles // 2


@pytest.mark.parametrize("name", ["llama2-7b", "opt-1.3b"])
def test_a_decode_step_streams_its_kv_cache_and_matches_onnxruntime(
    name: str, tmp_path: Path
) -> None:
    """Six layers of a tiny decoder, one new token over 256 cached positions: the caches
    (function arguments read through the Concat's views) do not fit beside one another, so
    they stay off chip and load for their layer, moved through their views first."""
    config = dataclasses.replace(ZOO[name].config, hidden=64, heads=4, intermediate=96)
    path = tmp_path / "decode.onnx"
    onnx.save(ZOO[name].build(2, None, 6, config=config, phase="decode", context=256), path)
    sram = 70_000
    with pytest.raises(DoesNotFit):
        driver.compile_model(path, CompileOptions(chip=_chip(tmp_path, sram, offchip=False)),
                             emit="linalg")
    result = driver.run_model(path, CompileOptions(chip=_chip(tmp_path, sram)),
                              check=CHECK_TOLERANCES["fp32"])
    assert result.check is not None and result.check.passed, result.check
    _check_report(result.report, sram)
    caches = [o.name for o in result.report.ops if o.kind == "load" and "_cache/" in o.name]
    assert len(caches) >= 6, caches


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.sampled_from([32, 64, 96, 128, 192]), min_size=3, max_size=4),
    st.sampled_from([8, 24, 64]),
    st.floats(0.2, 1.2),
    st.sampled_from(["fp32", "fp16"]),
)
def test_any_mlp_streams_or_refuses_never_a_wrong_number(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int], batch: int, squeeze: float,
    precision: str,
) -> None:
    """With the SRAM squeezed below what the weights take resident, a model either fits with
    weights off chip, matching onnxruntime with every estimate equal to the simulation within
    the SRAM, or is refused as not fitting."""
    model = models.mlp(batch=batch, sizes=sizes)
    weights = sum(a * b + b for a, b in zip(sizes, sizes[1:], strict=False))
    elem = 4 if precision == "fp32" else 2
    sram = max(2048, int(squeeze * weights * elem / 16))
    options = CompileOptions(chip=_chip(tmp_path_factory.mktemp("c"), sram), precision=precision)
    try:
        result = driver.run_model(model, options, check=CHECK_TOLERANCES[precision])
    except DoesNotFit:
        return
    assert result.check is not None and result.check.passed, result.check
    _check_report(result.report, sram)


# --------------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------------


def test_a_chip_without_offchip_memory_cannot_run_a_load(tmp_path: Path) -> None:
    model = models.mlp(batch=64, sizes=(256, 256, 256, 256))
    compiled = driver.compile_model(model, CompileOptions(chip=_chip(tmp_path, 40_000)))
    with pytest.raises(T10Error, match=r"chip\.load 'fc1/MatMul/load': chip 'test-16' has no "
                                       "off-chip memory to load from"):
        simulate(compiled.module, load_chip("test-16"), random_onnx_inputs(model))


def test_weights_beyond_the_offchip_capacity_are_refused(tmp_path: Path) -> None:
    model = models.mlp(batch=64, sizes=(256, 256, 256, 256))
    chip = _chip(tmp_path, 40_000, capacity=300_000)
    with pytest.raises(DoesNotFit, match=r"the tensors kept off chip take [\d,]+ bytes, more "
                                         r"than chip 's40000-off''s off-chip memory holds "
                                         r"\(300,000 bytes\)"):
        driver.compile_model(model, CompileOptions(chip=chip), emit="linalg")


def test_a_pinned_offchip_weight_needs_offchip_memory() -> None:
    module = _pinned(models.matmul(64, 128, 64), [Plan((16, 1, 1))], [0])
    with pytest.raises(T10Error, match="operator 'matmul': 't10.offchip' keeps its weights in "
                                       "off-chip memory, but chip 'test-16' has none"):
        compile_module(module, CompileOptions(chip="test-16"))


def test_within_planned_sram_with_the_preloads(tmp_path: Path) -> None:
    """The simulated peak, preloads included, is within `t10.model_bytes`."""
    model = models.mlp(batch=64, sizes=(256, 256, 256, 256))
    options = CompileOptions(chip=_chip(tmp_path, 60_000))
    compiled = driver.compile_model(model, options)
    result = simulate(compiled.module, compiled.chip, random_onnx_inputs(model))
    assert result.report.peak_sram_bytes_per_core <= (planned_sram(compiled.planned) or 0)


def test_the_baselines_load_later_and_are_never_faster(tmp_path: Path) -> None:
    """The same plans with the loads right before their operators (`none`) or at most one
    operator ahead (`next`): every estimate still equals the simulation, and the planned
    schedule is at least as fast as either."""
    model = models.mlp(batch=64, sizes=(256, 256, 256, 256))
    chip = _chip(tmp_path, 60_000)
    totals = {}
    for preload in ("planned", "next", "none"):
        options = CompileOptions(chip=chip, preload=preload)
        result = driver.run_model(model, options, timing_only=True)
        _check_report(result.report, 60_000)
        totals[preload] = result.report.total_cycles
        planned = driver.compile_model(model, options, emit="linalg").planned
        if preload == "none":
            assert AHEAD_ATTR not in str(planned)
    assert totals["planned"] <= totals["next"] <= totals["none"]
    assert totals["planned"] < totals["none"]


def test_an_unknown_preload_is_refused() -> None:
    with pytest.raises(T10Error, match="t10-plan-search: unknown preload 'soon'; choose one of "
                                       "planned, next, none"):
        CompileOptions(preload="soon").validate()


def test_the_bound_counts_what_the_sram_cannot_hold(tmp_path: Path) -> None:
    """The model's bound is the larger of its operators' bounds summed and the cycles the
    memory needs to send the weights and inputs the whole SRAM cannot hold; at most the
    total."""
    chip = _chip(tmp_path, 30_000)
    weights = (3 * (256 * 256 + 256) + 64 * 256) * 4  # and the input
    streamed = math.ceil((weights - 16 * 30_000) / RATE)
    assert offchip_bound(load_chip(chip), weights) == streamed
    assert model_bound(load_chip(chip), [], weights) == streamed
    assert offchip_bound(load_chip("test-16"), weights) == 0
    assert offchip_bound(load_chip(chip), 16 * 30_000) == 0
    model = models.mlp(batch=64, sizes=(256, 256, 256, 256))
    report = driver.run_model(model, CompileOptions(chip=chip), timing_only=True).report
    assert report.bound_cycles is not None
    assert streamed <= report.bound_cycles <= report.total_cycles
