"""Output-rotating plans (`Rotation(OUTPUT, ring, pieces)`, see `t10.common.plans`): a
contraction that splits k over a ring of cores passes its output's partial sums around that
ring while it steps along m, n or a batch dim, instead of all-reducing them at the end.
Whatever the plan (the output alone or with rotating inputs, windows of one or more chunks,
padded dims, batched), the result matches onnxruntime in fp32 and fp16 (fp32 or fp16
partials) and the simulated cycles equal the plan's estimate."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import CHIPS
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp

from t10 import driver
from t10.common.chip_spec import load_chip
from t10.common.plans import OUTPUT, Plan, Rotation, plan_problem, temporal_plans
from t10.common.tensor_expr import TensorExpr, linalg_tensor_expr, op_name
from t10.examples.models import matmul
from t10.frontend import import_onnx
from t10.outputs.report import check_outputs, input_specs, planned_ops, random_inputs
from t10.reference import reference_outputs
from t10.sim.simulator import SimResult, simulate
from t10.t10_dialects import core
from t10.t10_dialects.rtensor import PlanAttr

PRECISIONS = [("fp32", "fp32"), ("fp16", "fp32"), ("fp16", "fp16")]
"""(storage, partial sums) pairs: fp16 partials exist only over fp16 storage."""


def _model(a: tuple[int, ...], b: tuple[int, ...]) -> onnx.ModelProto:
    """y = a @ b with both operands graph inputs (a batched MatMul when they have rank 3)."""
    out = (*a[:-1], b[-1])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
        "mm",
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a)),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b)),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(out))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _pin(module: ModuleOp, plans: dict[str, Plan]) -> None:
    for op in module.walk():
        if isinstance(op, GenericOp) and op_name(op) in plans:
            op.attributes["t10.plan"] = PlanAttr.from_plan(plans[op_name(op)])


def _run(
    model: onnx.ModelProto,
    plans: dict[str, Plan],
    chip: str,
    precision: str,
    partials: str,
    inputs: dict[str, np.ndarray],
) -> tuple[driver.Compiled, SimResult]:
    """Pin `plans` (by operator name), compile, simulate on `inputs`; every operator's (and
    relayout's) simulated cycles equal its estimate."""
    module = import_onnx(model)
    _pin(module, plans)
    compiled = driver.compile_module(
        module,
        driver.CompileOptions(chip=chip, precision=precision, partials=partials, fuse=False),
    )
    result = simulate(compiled.module, compiled.chip, inputs)
    estimates = {op.name: op.estimated_cycles for op in planned_ops(compiled.planned)}
    assert {op.name: op.cycles for op in result.report.ops} == estimates
    return compiled, result


def _normal(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim])
        .astype(np.float32)
        for i in model.graph.input
    }


def _check(
    model: onnx.ModelProto, result: SimResult, inputs: dict[str, np.ndarray], tolerance
) -> None:
    check = check_outputs(result.outputs, reference_outputs(model, inputs), tolerance)
    assert check.passed, check


# loop dims of a MatMul: d0 = m, d1 = n, d2 = k; of a batched one: d0 = batch, d1 = m,
# d2 = n, d3 = k. Inputs: 0 = a, 1 = b.
CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...], Plan]] = {
    "along n": ((8, 16), (16, 12), Plan((1, 1, 4), 1, 4, (Rotation(OUTPUT, 2, 4),))),
    "along m, n split": ((8, 16), (16, 12), Plan((1, 2, 4), 0, 4, (Rotation(OUTPUT, 2, 4),))),
    "window of 2": ((8, 16), (16, 12), Plan((1, 1, 2), 1, 4, (Rotation(OUTPUT, 2, 2),))),
    "with a rotating": (
        (8, 16), (16, 12), Plan((2, 2, 2), 0, 2, (Rotation(0, 1, 2), Rotation(OUTPUT, 2, 2)))
    ),
    "with b rotating, 6 steps": (
        (8, 16), (16, 12), Plan((2, 1, 3), 1, 6, (Rotation(1, 0, 2), Rotation(OUTPUT, 2, 3)))
    ),
    "padded k and m": ((7, 10), (10, 11), Plan((1, 2, 4), 0, 4, (Rotation(OUTPUT, 2, 4),))),
    "padded k and n": ((5, 10), (10, 11), Plan((2, 2, 3), 1, 3, (Rotation(OUTPUT, 2, 3),))),
    "batched, along the batch": (
        (3, 5, 8), (3, 8, 6), Plan((1, 2, 1, 3), 0, 3, (Rotation(OUTPUT, 3, 3),))
    ),
    "batched, with a rotating": (
        (4, 5, 8), (4, 8, 6),
        Plan((1, 1, 2, 2), 0, 2, (Rotation(0, 2, 2), Rotation(OUTPUT, 3, 2))),
    ),
}


@pytest.mark.parametrize(("precision", "partials"), PRECISIONS)
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_output_rotating_plans_match_onnxruntime_and_their_estimate(
    case: tuple[tuple[int, ...], tuple[int, ...], Plan], precision: str, partials: str, chip: str
) -> None:
    a, b, plan = case
    model = _model(a, b)
    expr = linalg_tensor_expr(
        next(op for op in import_onnx(model).walk() if isinstance(op, GenericOp))
    )
    assert plan_problem(expr, plan, load_chip(chip)) is None
    inputs = _normal(model)
    compiled, result = _run(model, {"mm": plan}, chip, precision, partials, inputs)
    _check(model, result, inputs, driver.check_tolerance(precision, partials))
    ir = str(compiled.module)
    assert "core.all_reduce" not in ir, "the ring sums while it rotates"
    assert " origin " in ir
    timing = simulate(compiled.module, compiled.chip, inputs, timing_only=True).report
    assert timing.total_cycles == result.report.total_cycles
    assert timing.peak_sram_bytes_per_core == result.report.peak_sram_bytes_per_core


def test_rotating_output_feeds_a_view_and_a_matmul_and_is_returned(chip: str) -> None:
    """The rotating output's finished chunks (phase N - 1) are read through a transpose by a
    second output-rotating MatMul and returned as they are: relayouts from a rotating layout,
    costed as simulated, in every precision."""
    node = helper.make_node
    rng = np.random.default_rng(1)
    w1 = numpy_helper.from_array(rng.standard_normal((10, 12)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((7, 6)).astype(np.float32), "w2")
    graph = helper.make_graph(
        [
            node("MatMul", ["x", "w1"], ["h"], name="mm1"),
            node("Transpose", ["h"], ["ht"], perm=[1, 0], name="t"),
            node("MatMul", ["ht", "w2"], ["y"], name="mm2"),
        ],
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [7, 10])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [12, 6]),
            helper.make_tensor_value_info("h", TensorProto.FLOAT, [7, 12]),
        ],
        [w1, w2],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    plans = {
        "mm1": Plan((1, 2, 4), 0, 4, (Rotation(OUTPUT, 2, 4),)),
        "mm2": Plan((1, 2, 3), 0, 3, (Rotation(OUTPUT, 2, 3),)),
    }
    inputs = {"x": _normal(model)["x"]}
    for precision, partials in PRECISIONS:
        _, result = _run(model, plans, chip, precision, partials, inputs)
        assert [op.name for op in result.report.ops] == ["mm1", "mm2/relayout", "mm2"]
        _check(model, result, inputs, driver.check_tolerance(precision, partials))


EACH_ITS_OWN_SHIFT = {
    "Cannon": ((4, 4), (4, 4), Plan((2, 2, 1), 2, 2, (Rotation(0, 1, 2), Rotation(1, 0, 2)))),
    "a, b and the output": (
        (3, 2, 4), (3, 4, 3),
        Plan((2, 2, 2, 2), 0, 2, (Rotation(0, 2, 2), Rotation(1, 1, 2), Rotation(OUTPUT, 3, 2))),
    ),
}


@pytest.mark.parametrize("case", EACH_ITS_OWN_SHIFT.values(), ids=EACH_ITS_OWN_SHIFT.keys())
def test_each_rotating_operand_shift_is_costed_on_its_own(
    case: tuple[tuple[int, ...], tuple[int, ...], Plan]
) -> None:
    """Every rotating operand moves in a `core.shift` of its own, whose cycles round up on
    their own: two 16-byte chunks cost 2·⌈16·0.28⌉ = 10 cycles a step, not ⌈32·0.28⌉ = 9 (the
    estimate once summed the inputs' bytes and came out one cycle short of the simulation)."""
    a, b, plan = case
    model = _model(a, b)
    inputs = _normal(model)
    _, result = _run(model, {"mm": plan}, "test-16", "fp32", "fp32", inputs)
    _check(model, result, inputs, driver.CHECK_TOLERANCES["fp32"])


# ------------------------------------------------------------------------- exact numerics


def _eighths(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Multiples of 1/8 in [-1, 1]: with k <= 16, every product and partial sum is a multiple
    of 1/64 below 16 in magnitude, exact in fp16 and fp32 whatever the order of the adds, so
    any plan in any precision must give the exact product."""
    return (rng.integers(-8, 9, shape) / 8).astype(np.float32)


def _ring_of_four(
    m: int, k: int, n: int, seed: int
) -> tuple[onnx.ModelProto, dict[str, np.ndarray], Plan]:
    """A matmul with random inputs and the plan that splits k over a ring of 4 cores and
    rotates the output in 4 chunks of n (window 1)."""
    rng = np.random.default_rng(seed)
    inputs = {"a": rng.standard_normal((m, k)).astype(np.float32),
              "b": rng.standard_normal((k, n)).astype(np.float32)}
    plan = Plan((1, 1, 4), 1, 4, (Rotation(OUTPUT, 2, 4),))
    return _model((m, k), (k, n)), inputs, plan


def test_fp16_partials_add_in_ring_order() -> None:
    """k over a ring of 4 cores, n in 4 chunks, window 1: output chunk c starts on ring core c
    and moves to core c - 1 each step, so its f16 partial sum adds the k-parts c, c-1, c-2,
    c-3 (mod 4) in that order, rounding after each add, and ends on core c + 1 (phase 3)."""
    m, k, n = 8, 64, 16
    model, inputs, plan = _ring_of_four(m, k, n, seed=5)
    _, result = _run(model, {"mm": plan}, "test-16", "fp16", "fp16", inputs)
    a, b = (_half(v).astype(np.float64) for v in (inputs["a"], inputs["b"]))
    want = np.zeros((m, n), np.float32)
    for c in range(4):
        cols = slice(4 * c, 4 * c + 4)
        for j in range(4):
            part = (c - j) % 4
            ks = slice(16 * part, 16 * part + 16)
            want[:, cols] = _half(want[:, cols] + (a[:, ks] @ b[ks, cols]).astype(np.float32))
    np.testing.assert_array_equal(result.outputs["y"], want)
    assert not np.array_equal(want, _half(a @ b))  # rounding once would differ


def test_fp32_partials_of_a_rotating_output_round_once() -> None:
    """Over fp16 storage with fp32 partials, the rotating output accumulates (and moves) in an
    f32 buffer of its window plus one slot, rounded into f16 once at the end."""
    m, k, n = 8, 64, 16
    model, inputs, plan = _ring_of_four(m, k, n, seed=6)
    compiled, result = _run(model, {"mm": plan}, "test-16", "fp16", "fp32", inputs)
    allocs = sorted(
        (op.label.data, str(op.result.type.tensor))
        for op in compiled.module.walk()
        if isinstance(op, core.AllocOp) and op.label.data == "mm"
    )
    # window 1 + 1 slot = 2 chunks of 4 columns, at f32, then the f16 output of the same shape
    assert allocs == [("mm", "tensor<8x8xf16>"), ("mm", "tensor<8x8xf32>")]
    a, b = (_half(v).astype(np.float64) for v in (inputs["a"], inputs["b"]))
    np.testing.assert_allclose(result.outputs["y"], _half(a @ b), rtol=2**-11, atol=1e-6)


def _half(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


# ------------------------------------------------------------------------- the search


def _searched_plan(path: str, chip: str, precision: str, partials: str) -> Plan:
    compiled = driver.compile_model(
        path,
        driver.CompileOptions(chip=chip, precision=precision, partials=partials),
        emit="linalg",
    )
    (plan,) = [
        op.attributes["t10.plan"].to_plan()
        for op in compiled.module.walk()
        if isinstance(op, GenericOp)
    ]
    return plan


@pytest.mark.parametrize(("precision", "partials"), PRECISIONS)
def test_searched_plan_that_rotates_its_output_matches_onnxruntime(
    precision: str, partials: str, tmp_path: Path
) -> None:
    """256x512 by 512x512 on test-16 (256 KiB per core): in every precision the search
    passes the output's partial sums around the ring of the k-cores (t10-plan-search.mlir);
    the plan runs, matches onnxruntime and costs what it simulates."""
    path = str(tmp_path / "mm.onnx")
    onnx.save(matmul(256, 512, 512), path)
    assert _searched_plan(path, "test-16", precision, partials).rotation_of(OUTPUT) is not None
    tolerance = driver.check_tolerance(precision, partials)
    result = driver.run_model(
        path,
        driver.CompileOptions(chip="test-16", precision=precision, partials=partials),
        check=tolerance,
    )
    assert result.check is not None and result.check.passed
    assert result.report.estimated_total_cycles == result.report.total_cycles


def test_searched_ring_of_37_on_1472_cores_matches_onnxruntime(tmp_path: Path) -> None:
    """ipu-mk2's 1,472 cores and cost figures with 4 KiB of SRAM per core: the 512^3 matmul's
    best plan runs on 37 x 37 cores, a rotates on ring d1 and the output's partial sums on
    the ring of 37 k-cores, 37 steps along m; it matches onnxruntime and its estimate."""
    spec = json.loads(resources.files("t10.common").joinpath("chips/ipu-mk2.json").read_text())
    chip = tmp_path / "mk2-4k.json"
    chip.write_text(json.dumps({**spec, "name": "mk2-4k", "sram_bytes_per_core": 4096}))
    path = str(tmp_path / "mm.onnx")
    onnx.save(matmul(512, 512, 512), path)
    plan = _searched_plan(path, str(chip), "fp32", "fp32")
    assert plan == Plan((1, 37, 37), 0, 37, (Rotation(0, 1, 37), Rotation(OUTPUT, 2, 37)))
    result = driver.run_model(
        path,
        driver.CompileOptions(chip=str(chip)),
        check=driver.CHECK_TOLERANCES["fp32"],
    )
    assert result.check is not None and result.check.passed
    assert result.report.estimated_total_cycles == result.report.total_cycles


def test_ipu_mk2_best_4096_cubed_plan_rotates_its_output_as_estimated() -> None:
    """The issue's 4096^3 matmul on ipu-mk2 in fp16: its best plan rotates the output (fp32
    partials: an f32 accumulator shifted at 4 bytes, rounded at the end) and the simulated
    cycles (timing only: 1.4 TFLOP of values would take minutes) equal the estimate."""
    compiled = driver.compile_model(
        matmul(4096, 4096, 4096),
        driver.CompileOptions(chip="ipu-mk2", precision="fp16"),
    )
    (plan,) = [
        op.attributes["t10.plan"].to_plan()
        for op in compiled.planned.walk()
        if isinstance(op, GenericOp)
    ]
    assert plan.rotation_of(OUTPUT) is not None
    (estimate,) = planned_ops(compiled.planned)
    inputs = random_inputs(input_specs(compiled.module), 0)
    result = simulate(compiled.module, compiled.chip, inputs, timing_only=True)
    assert result.report.op("matmul").cycles == estimate.estimated_cycles


# ------------------------------------------------------------------------- random plans


def _output_rotating_plans(expr: TensorExpr, cores: int) -> list[Plan]:
    """Every plan of `expr` on up to `cores` cores whose output rotates (the plan space the
    search and its brute-force tests enumerate)."""
    plans: list[Plan] = []

    def factors(d: int, left: int) -> list[tuple[int, ...]]:
        if d == expr.rank:
            return [()]
        return [
            (f, *rest)
            for f in range(1, min(expr.loop_sizes[d], left) + 1)
            for rest in factors(d + 1, left // f)
        ]

    for fs in factors(0, cores):
        plans += [p for p in temporal_plans(expr, fs, rotate=True) if p.rotation_of(OUTPUT)]
    return plans


@st.composite
def _cases(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...], Plan, str, int]:
    batch = draw(st.sampled_from([(), (2,)]))
    m, n = draw(st.integers(1, 9)), draw(st.integers(2, 9))
    k = draw(st.integers(2, 16))
    a, b = (*batch, m, k), (*batch, k, n)
    module = import_onnx(_model(a, b))
    expr = linalg_tensor_expr(next(op for op in module.walk() if isinstance(op, GenericOp)))
    plan = draw(st.sampled_from(_output_rotating_plans(expr, 16)))  # n, k >= 2: never empty
    precision = draw(st.sampled_from(range(len(PRECISIONS))))
    return a, b, plan, draw(st.sampled_from(CHIPS)), precision


@given(_cases(), st.integers(0, 2**16))
def test_random_output_rotating_plans_are_exact_and_costed(
    case: tuple[tuple[int, ...], tuple[int, ...], Plan, str, int], seed: int
) -> None:
    """Random small (batched) MatMuls with a random valid output-rotating plan, in a random
    precision (the conftest's Hypothesis profiles say how many): on multiples of 1/8 (exact
    whatever the order of the adds) the result is the exact product, and every estimate
    equals the simulation."""
    a, b, plan, chip, which = case
    precision, partials = PRECISIONS[which]
    rng = np.random.default_rng(seed)
    inputs = {"a": _eighths(a, rng), "b": _eighths(b, rng)}
    _, result = _run(_model(a, b), {"mm": plan}, chip, precision, partials, inputs)
    np.testing.assert_array_equal(result.outputs["y"], inputs["a"] @ inputs["b"])
