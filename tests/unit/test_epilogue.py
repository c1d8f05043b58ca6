"""Contraction epilogues (`t10-fuse-epilogue`): a bias add, an activation or a residual add
after a MatMul runs on the cores that hold the MatMul's output tiles, where the cost model
says it pays. Whatever the plan (spatial, split-k with an all-reduce, rotating steps, fp16
rounding), the result matches onnxruntime and the simulated cycles equal the plan search's
estimate."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import chip_file_with_sram, tiny_llama
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.dialects.linalg.ops import GenericOp

from t10.common.attr_names import EPILOGUE_ATTR
from t10.common.chip_spec import load_chip
from t10.common.epilogues import epilogue_of
from t10.common.plans import Plan, Rotation, plan_problem, reduction_group
from t10.common.tensor_expr import linalg_tensor_expr, op_name
from t10.driver import (
    CHECK_TOLERANCES,
    CompileOptions,
    compile_model,
    compile_module,
    make_context,
    run_model,
    run_passes,
)
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.outputs.report import check_outputs, input_specs, planned_ops, random_inputs
from t10.passes.t10_compile import pipeline
from t10.passes.t10_fuse_elementwise import T10FuseElementwise
from t10.passes.t10_fuse_epilogue import T10FuseEpilogue
from t10.passes.t10_plan_search import T10PlanSearch
from t10.planning import forked
from t10.planning.operators import Operator, operator_tensor_expr
from t10.reference import reference_outputs, reference_session
from t10.sim.simulator import SimResult, simulate
from t10.t10_dialects import core
from t10.t10_dialects.rtensor import PlanAttr

M, K, N = 12, 16, 8


def _model(nodes: list, inputs: dict[str, list[int]], weights: dict[str, np.ndarray],
           output: tuple[str, list[int]]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "epilogue",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(output[0], TensorProto.FLOAT, output[1])],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _weights(**shapes: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Seeded N(0, 1/fan-in) weights: outputs of unit scale, as in trained models."""
    rng = np.random.default_rng(7)
    return {
        n: (rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32) for n, s in shapes.items()
    }


def dense_residual() -> onnx.ModelProto:
    """y = Relu(x @ w + b) + r: a bias, an activation and a residual add after one MatMul."""
    node = helper.make_node
    nodes = [
        node("MatMul", ["x", "w"], ["mm"], name="fc/MatMul"),
        node("Add", ["mm", "b"], ["biased"], name="fc/Add"),
        node("Relu", ["biased"], ["act"], name="fc/Relu"),
        node("Add", ["act", "r"], ["y"], name="residual/Add"),
    ]
    return _model(nodes, {"x": [M, K], "r": [M, N]}, _weights(w=(K, N), b=(N,)), ("y", [M, N]))


def swiglu() -> onnx.ModelProto:
    """y = silu(x @ wg) * (x @ wu): the product reads both MatMuls, and gate twice."""
    node = helper.make_node
    nodes = [
        node("MatMul", ["x", "wg"], ["gate"], name="gate/MatMul"),
        node("MatMul", ["x", "wu"], ["up"], name="up/MatMul"),
        node("Sigmoid", ["gate"], ["sig"], name="act/Sigmoid"),
        node("Mul", ["gate", "sig"], ["silu"], name="act/Mul"),
        node("Mul", ["silu", "up"], ["y"], name="glu/Mul"),
    ]
    return _model(nodes, {"x": [M, K]}, _weights(wg=(K, N), wu=(K, N)), ("y", [M, N]))


def _inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    weights = {w.name for w in model.graph.initializer}
    return {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
        .astype(np.float32)
        for i in model.graph.input
        if i.name not in weights
    }


def _chains_fused(model: onnx.ModelProto) -> ModuleOp:
    module = import_onnx(model)
    T10FuseElementwise().apply(make_context(), module)
    return module


def _fused(model: onnx.ModelProto, chip: str = "test-16", always: bool = True) -> ModuleOp:
    """`model` with its element-wise chains fused, then its epilogues: every candidate
    (`always`), or those that pay on `chip`."""
    module = _chains_fused(model)
    T10FuseEpilogue(chip=chip, always=always).apply(make_context(), module)
    return module


def _contractions(module: ModuleOp) -> list[GenericOp]:
    return [
        op for op in module.walk()
        if isinstance(op, GenericOp) and linalg_tensor_expr(op).kind.value == "contraction"
    ]


def _simulate(
    module: ModuleOp, chip: str, feeds: dict[str, np.ndarray], precision: str = "fp32"
) -> tuple[SimResult, dict[str, int]]:
    """Plan (pinned plans are kept), lower and simulate; also the estimated cycles by
    operator and relayout."""
    compiled = compile_module(module, CompileOptions(chip=chip, precision=precision, fuse=False))
    estimates = {op.name: op.estimated_cycles for op in planned_ops(compiled.planned)}
    return simulate(module, compiled.chip, feeds), estimates


def _check(model: onnx.ModelProto, result: SimResult, precision: str) -> None:
    session = reference_session(model)
    names = [o.name for o in model.graph.output]
    expected = dict(zip(names, session.run(None, _inputs(model)), strict=True))
    check = check_outputs(result.outputs, expected, CHECK_TOLERANCES[precision])
    assert check.passed, check


def _run(
    model: onnx.ModelProto,
    chip: str,
    plans: dict[str, Plan] | None = None,
    precision: str = "fp32",
    epilogues: str = "always",
) -> tuple[SimResult, dict[str, int]]:
    """Fuse (epilogues "always", where they "pay" on `chip`, or "never"), pin `plans` (by
    operator name), plan, lower, simulate and check against onnxruntime; returns the result
    and the estimates by operator."""
    if epilogues == "never":
        module = _chains_fused(model)
    else:
        module = _fused(model, chip, always=epilogues == "always")
    for op in _contractions(module):
        if plans and op_name(op) in plans:
            op.attributes["t10.plan"] = PlanAttr.from_plan(plans[op_name(op)])
    result, estimates = _simulate(module, chip, _inputs(model), precision)
    _check(model, result, precision)
    return result, estimates


FUSED = "fc/MatMul+fc/Add+fc/Relu+residual/Add"
# loop dims of the MatMul: d0 = m, d1 = n, d2 = k (inputs: 0 = x[m, k], 1 = w[k, n])
PLANS = {
    "spatial": Plan((3, 4, 1)),
    "split-k (all-reduce)": Plan((2, 2, 4)),
    "Cannon 2x2 (rotating steps)": Plan((2, 2, 1), 2, 2, (Rotation(0, 1, 2), Rotation(1, 0, 2))),
    "rotating and split-k": Plan((2, 1, 2), 2, 4, (Rotation(1, 0, 2),)),
}


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
@pytest.mark.parametrize("plan", PLANS.values(), ids=PLANS.keys())
def test_every_plan_shape_matches_onnxruntime_and_its_estimate(plan: Plan, precision: str) -> None:
    (contraction,) = _contractions(_fused(dense_residual()))
    assert op_name(contraction) == FUSED
    operator = Operator(contraction, epilogue_of(contraction))
    expr = operator_tensor_expr(operator, precision, "fp32")
    assert expr.epilogue is not None and expr.own_inputs == 2 and len(expr.inputs) == 4
    assert plan_problem(expr, plan, load_chip("test-16")) is None
    result, estimates = _run(dense_residual(), "test-16", {FUSED: plan}, precision)
    assert [op.name for op in result.report.ops] == [FUSED], "the epilogue is no operator"
    assert result.report.ops[0].cycles == estimates[FUSED]


def test_fusion_that_pays_is_faster_than_the_chain_as_an_operator_of_its_own(chip: str) -> None:
    """Where the pass fuses, the model is faster than with the element-wise chain planned as
    an operator of its own (its own kernel's fixed cost, superstep and sync, and a relayout
    where its plan does not line up with the MatMul's)."""
    fused, _ = _run(dense_residual(), chip, epilogues="pay")
    apart, _ = _run(dense_residual(), chip, epilogues="never")
    assert [op.name for op in fused.report.ops] == [FUSED]
    assert len(apart.report.ops) > 1
    assert fused.report.total_cycles < apart.report.total_cycles


def projection(m: int, k: int, n: int) -> onnx.ModelProto:
    """y = x @ w + b."""
    node = helper.make_node
    nodes = [
        node("MatMul", ["x", "w"], ["mm"], name="proj/MatMul"),
        node("Add", ["mm", "b"], ["y"], name="proj/Add"),
    ]
    return _model(nodes, {"x": [m, k]}, _weights(w=(k, n), b=(n,)), ("y", [m, n]))


def test_after_a_split_reduction_the_epilogue_runs_on_the_reduce_scattered_parts() -> None:
    """A projection that ipu-mk2 runs fastest with k split over R cores: the bias add runs
    between the all-reduce's reduce-scatter and its all-gather, on 1/R of each tile, adding
    no superstep; it pays, matches onnxruntime and its estimate, and beats the add apart."""
    model = projection(128, 768, 768)
    (contraction,) = _contractions(_fused(model, "ipu-mk2", always=False))
    assert op_name(contraction) == "proj/MatMul+proj/Add"
    expr = operator_tensor_expr(Operator(contraction, epilogue_of(contraction)), "fp32", "fp32")
    fused, estimates = _run(model, "ipu-mk2", epilogues="pay")
    apart, _ = _run(model, "ipu-mk2", epilogues="never")
    (op,) = fused.report.ops
    assert op.cycles == estimates[op.name]
    assert fused.report.total_cycles < apart.report.total_cycles
    plan = _planned(model, "ipu-mk2")
    assert reduction_group(expr, plan) > 1
    chip_ir = str(compile_model(model, CompileOptions(chip="ipu-mk2")).module)
    assert "core.all_reduce \"sum\"" in chip_ir and " scatter : " in chip_ir
    assert "axes [0, 1] scatter sizes" in chip_ir and "core.all_gather" in chip_ir


def _planned(model: onnx.ModelProto, chip: str) -> Plan:
    (plan,) = [
        op.attributes["t10.plan"].to_plan()
        for op in compile_model(model, CompileOptions(chip=chip), emit="linalg").module.walk()
        if isinstance(op, GenericOp) and "t10.plan" in op.attributes
    ]
    return plan


def test_a_residual_computed_on_chip_after_a_split_reduction_does_not_pay() -> None:
    """Each of the R cores holding a tile would need the residual for the whole tile, where
    the add apart spreads it over the chip: the pass leaves the add an operator of its own
    on ipu-mk2 (and fuses it on test-16, whose plan does not split k)."""
    node = helper.make_node
    nodes = [
        node("Relu", ["x"], ["r"], name="res/Relu"),
        node("MatMul", ["x", "w"], ["mm"], name="proj/MatMul"),
        node("Add", ["mm", "r"], ["y"], name="proj/Add"),
    ]
    model = _model(nodes, {"x": [1024, 768]}, _weights(w=(768, 768)), ("y", [1024, 768]))
    model.graph.output.append(helper.make_tensor_value_info("r", TensorProto.FLOAT, [1024, 768]))
    names = [op_name(op) for op in _contractions(_fused(model, "ipu-mk2", always=False))]
    assert names == ["proj/MatMul"]
    names = [op_name(op) for op in _contractions(_fused(model, "test-16", always=False))]
    assert names == ["proj/MatMul+proj/Add"]


def _add_of(module: ModuleOp) -> GenericOp:
    (add,) = [op for op in module.walk() if isinstance(op, GenericOp) and op_name(op) == "proj/Add"]
    return add


def test_a_result_read_elsewhere_or_a_later_input_is_not_fused() -> None:
    """The MatMul's output is also a graph output: the add cannot overwrite it."""
    node = helper.make_node
    nodes = [
        node("MatMul", ["x", "w"], ["mm"], name="fc/MatMul"),
        node("Add", ["mm", "b"], ["y"], name="fc/Add"),
    ]
    model = _model(nodes, {"x": [M, K]}, _weights(w=(K, N), b=(N,)), ("y", [M, N]))
    model.graph.output.append(helper.make_tensor_value_info("mm", TensorProto.FLOAT, [M, N]))
    module = _fused(model)
    assert not [op for op in module.walk() if EPILOGUE_ATTR in op.attributes]
    assert [op_name(op) for op in _contractions(module)] == ["fc/MatMul"]


def _marked(mark) -> str:
    """The plan search's error for a dense_residual module whose element-wise chain carries
    `t10.epilogue = mark` in place of the pass's mark."""
    module = _fused(dense_residual())
    (chain,) = [op for op in module.walk() if EPILOGUE_ATTR in op.attributes]
    chain.attributes[EPILOGUE_ATTR] = mark
    with pytest.raises(T10Error) as error:
        T10PlanSearch(chip="test-16").apply(make_context(), module)
    return str(error.value)


def test_a_mark_that_does_not_hold_is_a_clear_error() -> None:
    # the chain's inputs: 0 = r (a function argument), 1 = the MatMul, 2 = b (a weight)
    assert _marked(IntegerAttr(2, 64)) == (
        "operator 'fc/Add+fc/Relu+residual/Add' is marked 't10.epilogue = 2' but cannot run as "
        "the epilogue of its input 2: both must be linalg.generic ops; remove the attribute"
    )
    assert "its input 0: it reads a function argument there" in _marked(IntegerAttr(0, 64))
    message = _marked(StringAttr("yes"))
    assert message.startswith(
        "operator 'fc/Add+fc/Relu+residual/Add': 't10.epilogue' must be the index of the input "
        "that reads the contraction it runs after"
    )
    assert "must be the index" in _marked(IntegerAttr(3, 64))  # the init, not an input


def test_bad_options_name_the_pass() -> None:
    module = _chains_fused(dense_residual())
    with pytest.raises(T10Error, match="^t10-fuse-epilogue: unknown precision 'fp64'"):
        T10FuseEpilogue(precision="fp64").apply(make_context(), module)
    with pytest.raises(T10Error, match="^t10-fuse-epilogue: min-utilization must be between"):
        T10FuseEpilogue(min_utilization=2.0).apply(make_context(), module)


def test_the_simulator_keeps_each_replica_to_its_own_run_until_the_all_gather() -> None:
    """Without its all-gather, a scattered epilogue leaves every tile complete only in the
    run its core computed: the replicas of a tile then differ, which the simulator refuses
    when the tile is read (so the all-gather's data movement is real, not assumed)."""
    module = _fused(dense_residual())
    (contraction,) = _contractions(module)
    contraction.attributes["t10.plan"] = PlanAttr.from_plan(PLANS["split-k (all-reduce)"])
    feeds = _inputs(dense_residual())
    complete, _ = _simulate(module.clone(), "test-16", feeds)
    _check(dense_residual(), complete, "fp32")
    compile_module(module, CompileOptions(chip="test-16", fuse=False))
    (gather,) = [op for op in module.walk() if isinstance(op, core.AllGatherOp)]
    gather.detach()
    gather.erase()
    with pytest.raises(T10Error, match="which share a tile, hold different values at"):
        simulate(module, load_chip("test-16"), feeds)


def _planned_total(model: Path, chip: str, epilogues: bool) -> tuple[int, ModuleOp]:
    """The plan search's estimate of the whole model (operators, relayouts, gathers)."""
    module = compile_model(
        str(model),
        CompileOptions(chip=chip, epilogues=epilogues),
        emit="linalg",
    ).module
    return sum(op.estimated_cycles or 0 for op in planned_ops(module)), module


def test_when_memory_binds_the_search_drops_epilogues_that_do_not_pay(tmp_path: Path) -> None:
    """An epilogue's inputs lie on every core holding a tile. When the fastest plans do not
    fit together, the plan search also plans the model without epilogues and keeps the
    faster: never slower than without them; where it drops them, no mark or fused name is
    left. The squeezed sizes reach both outcomes."""
    model = tiny_llama(tmp_path / "llama.onnx")
    needed = run_model(
        str(model),
        CompileOptions(chip="test-16"),
    ).report.planned_sram_bytes_per_core
    outcomes = set()
    for fraction in (0.99, 0.97, 0.9, 0.85):
        chip = chip_file_with_sram(int(needed * fraction) // 4 * 4, tmp_path)
        fused, module = _planned_total(model, chip, epilogues=True)
        apart, _ = _planned_total(model, chip, epilogues=False)
        assert fused <= apart
        marked = [op for op in module.walk() if EPILOGUE_ATTR in op.attributes]
        named = [op for op in _contractions(module) if op_name(op).count("MatMul+")]
        assert bool(marked) == bool(named)
        outcomes.add("kept" if marked else "dropped")
    assert outcomes == {"kept", "dropped"}


def test_the_plan_without_epilogues_made_beside_is_the_one_made_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where it can, the plan search plans the model without epilogues in a forked child,
    beside the plan with them: the IR it writes is the one it writes with `jobs=1`, at
    SRAM sizes that keep the epilogues and that drop them."""
    monkeypatch.setattr(forked, "usable_cpus", lambda: 2)  # a child even on one CPU
    model = tiny_llama(tmp_path / "llama.onnx")
    needed = run_model(
        str(model),
        CompileOptions(chip="test-16"),
    ).report.planned_sram_bytes_per_core
    for fraction in (0.99, 0.85):
        chip = chip_file_with_sram(int(needed * fraction) // 4 * 4, tmp_path)
        printed = []
        for jobs in (0, 1):
            module = import_onnx(str(model))
            passes = [
                dataclasses.replace(p, jobs=jobs) if isinstance(p, T10PlanSearch) else p
                for p in pipeline(CompileOptions(chip=chip), emit="linalg")
            ]
            run_passes(module, passes)
            printed.append(str(module))
        assert printed[0] == printed[1]


EXPORTS = sorted(p.name for p in (Path(__file__).parent / "data").glob("*.onnx"))


@pytest.mark.parametrize("name", EXPORTS)
def test_every_export_with_every_candidate_fused_matches_onnxruntime(name: str, chip: str) -> None:
    """The torch / Hugging Face exports with every epilogue candidate marked (`always`),
    paying or not: every kind of epilogue input those graphs have (biases, residuals, masks,
    rotary tables, gathered ids) lowers and simulates to onnxruntime's outputs."""
    path = Path(__file__).parent / "data" / name
    module = _fused(onnx.load(path), chip)
    assert any(EPILOGUE_ATTR in op.attributes for op in module.walk())
    compile_module(module, CompileOptions(chip=chip, fuse=False))
    inputs = random_inputs(input_specs(module), 0)
    result = simulate(module, load_chip(chip), inputs)
    check = check_outputs(result.outputs, reference_outputs(onnx.load(path), inputs),
                          CHECK_TOLERANCES["fp32"])
    assert check.passed, check
