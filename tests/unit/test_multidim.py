"""Plans with two temporal dims (`Plan.outer_dim`): the representation and its syntax, the
layouts and the estimate, and pinned plans compiled through every level and simulated with
real numbers against onnxruntime, their estimates equal to the simulated cycles."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from test_plan_search import matmul as matmul_expr
from xdsl.context import Context
from xdsl.dialects.linalg.ops import GenericOp

from t10 import driver
from t10.common import costs
from t10.common.chip_spec import load_chip
from t10.common.estimator import estimate
from t10.common.plans import (
    OUTPUT,
    Layout,
    Plan,
    Rotating,
    Rotation,
    format_plan,
    input_layouts,
    kernel_cycles,
    output_layout,
    step_sizes,
    validate_plan,
)
from t10.common.traffic import Traffic
from t10.errors import T10Error
from t10.examples.models import matmul
from t10.frontend import import_onnx
from t10.outputs.report import check_outputs, input_specs, random_inputs
from t10.reference import reference_outputs
from t10.sim.simulator import simulate
from t10.t10_dialects.parsing import Parser
from t10.t10_dialects.rtensor import PlanAttr, RTensor

# matmul loop dims: d0 = m, d1 = n, d2 = k
OUTER_INPUT = Plan((2, 2, 1), 2, 4, (Rotation(0, 1, 2), Rotation(1, 0, 2, True)), 1, 2)
"""n in 2 outer steps (B rotates along n on the ring along m), k in 4 inner steps (A rotates
along k on the ring along n)."""
OUTER_OUTPUT = Plan((1, 2, 2), 2, 4, (Rotation(OUTPUT, 2, 2, True), Rotation(0, 1, 2)), 1, 2)
"""n in 2 outer steps, along which the output's partial sums rotate on the ring of the 2
cores splitting k; k in 4 inner steps, A rotating on the ring along n (the outer dim)."""
OUTER_M = Plan((2, 2, 1), 2, 2, (Rotation(0, 1, 2, True), Rotation(1, 0, 2)), 0, 2)
"""m in 2 outer steps (A rotates along m, holding its whole k tile), k in 2 inner steps."""
PLANS = {"outer-input": OUTER_INPUT, "outer-output": OUTER_OUTPUT, "outer-m": OUTER_M}


def test_plan_syntax_round_trips_and_one_temporal_dim_prints_as_before() -> None:
    ctx = Context()
    ctx.load_dialect(RTensor)
    text = (
        "grid [1, 2, 2] shift d1 steps 2 rotate [(out, d2, 2)] shift d2 steps 4 rotate "
        "[(0, d1, 2)]"
    )
    attr = Parser(ctx, f"#rtensor.plan<{text}>").parse_attribute()
    assert isinstance(attr, PlanAttr)
    assert attr.to_plan() == OUTER_OUTPUT
    assert format_plan(OUTER_OUTPUT) == text
    assert PlanAttr.from_plan(OUTER_OUTPUT).to_plan() == OUTER_OUTPUT
    cannon = Plan((4, 4, 1), 2, 4, (Rotation(0, 1, 4), Rotation(1, 0, 4)))
    assert format_plan(cannon) == "grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 4)]"


@pytest.mark.parametrize(
    "plan, reason",
    [
        (Plan((2, 2, 1), 2, 2, (Rotation(0, 1, 2),), 2, 2), "outer and the inner shift dim"),
        (Plan((2, 2, 1), 2, 2, (Rotation(0, 1, 2),), 1, 2), "shifts d1 rotates at least one"),
        (
            Plan((4, 2, 1), 2, 2, (Rotation(0, 1, 2), Rotation(1, 0, 4, True)), 1, 2),
            "2 steps of d1 must be a multiple of every rotation's pieces",
        ),
        (
            Plan((2, 2, 1), 2, 2, (Rotation(0, 1, 2, True), Rotation(1, 0, 2)), 1, 2),
            "input 0 does not read shift dim d1",
        ),
        (
            Plan((1, 2, 2), 1, 2, (Rotation(0, 1, 2, True), Rotation(OUTPUT, 2, 2)), 2, 2),
            "with two shift dims the output rotates along the outer one",
        ),
        (
            Plan((2, 2, 1), 2, 2, (Rotation(0, 1, 2), Rotation(1, 0, 2, True)), 1, 64),
            "64 steps do not fit the tile of 32 of outer shift dim d1",
        ),
        (Plan((2, 2, 1), 2, 2, (Rotation(0, 1, 2, True),)), "1 outer step and no outer"),
    ],
)
def test_inconsistent_plans_are_refused_naming_the_problem(plan: Plan, reason: str) -> None:
    with pytest.raises(T10Error, match="pinned plan") as err:
        validate_plan(load_chip("test-16"), matmul_expr(64, 64, 64), plan)
    assert reason in str(err.value)


def test_layouts_steps_and_estimate_of_a_two_level_plan() -> None:
    """16x32 @ 32x16 on 2x2 cores, OUTER_INPUT: A holds a window of 2 of its 4 k-chunks (+1
    slot) and its whole m tile; B holds a window of 1 of its 2 n-chunks (+1 slot) and its whole
    k tile. 8 supersteps; A shifts 7 times, B once (after the first inner loop)."""
    chip, expr = load_chip("test-16"), matmul_expr(16, 32, 16)
    a, b = input_layouts(expr, OUTER_INPUT)
    assert a == Layout((16, 32), (2, 2, 1), (0, None), (8, 32), Rotating(1, 1, 2, 4, ((1, 2, 2),)))
    assert b == Layout((32, 16), (2, 2, 1), (None, 1), (32, 8), Rotating(1, 0, 2, 2, ((0, 2, 1),)))
    assert output_layout(expr, OUTER_INPUT) == Layout((16, 16), (2, 2, 1), (0, 1), (8, 8))
    assert step_sizes(expr, OUTER_INPUT) == (8, 4, 8)
    got = estimate(chip, expr, OUTER_INPUT)
    assert got.compute_cycles == 8 * kernel_cycles(chip, expr, (8, 4, 8))
    assert got.exchange_cycles == (
        7 * costs.exchange_cycles(chip, Traffic.uniform(4, 8 * 8 * 4))
        + 1 * costs.exchange_cycles(chip, Traffic.uniform(4, 32 * 4 * 4))
    )
    assert got.sync_cycles == 8 * chip.sync_cycles
    assert got.sram_bytes == (8 * 24 + 32 * 8 + 8 * 8) * 4


def _pinned(
    model: onnx.ModelProto, plan: Plan, chip: str, precision: str, partials: str
) -> driver.Compiled:
    module = import_onnx(model)
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    generic.attributes["t10.plan"] = PlanAttr.from_plan(plan)
    return driver.compile_module(
        module,
        driver.CompileOptions(chip=chip, precision=precision, partials=partials, fuse=False),
    )


@pytest.mark.parametrize(
    "precision, partials", [("fp32", "fp32"), ("fp16", "fp32"), ("fp16", "fp16")]
)
@pytest.mark.parametrize("name", PLANS)
def test_pinned_plans_match_onnxruntime_and_their_estimates(
    name: str, precision: str, partials: str, chip: str
) -> None:
    """A 13x37 @ 37x19 matmul (every temporal dim padded) under each two-level plan."""
    model = matmul(13, 37, 19)
    compiled = _pinned(model, PLANS[name], chip, precision, partials)
    (planned,) = [op for op in compiled.planned.walk() if isinstance(op, GenericOp)]
    assert planned.attributes["t10.plan"] == PlanAttr.from_plan(PLANS[name])
    x = random_inputs(input_specs(compiled.module), 0)
    result = simulate(compiled.module, compiled.chip, x)
    check = check_outputs(
        result.outputs, reference_outputs(model, x), driver.check_tolerance(precision, partials)
    )
    assert check.passed, check.outputs
    assert result.report.op("matmul").cycles == planned.attributes["t10.estimate"].cycles.data


def test_two_level_plan_computes_every_product_once() -> None:
    """Exact: integer-valued inputs, so any product added twice or missed shows."""
    model = matmul(13, 37, 19)
    weight = model.graph.initializer[0]
    w = np.round(onnx.numpy_helper.to_array(weight) * 8).astype(np.float32)
    weight.CopyFrom(onnx.numpy_helper.from_array(w, "weight"))
    x = {"input": np.round(random_inputs(input_specs(import_onnx(model)), 1)["input"] * 8)}
    for plan in PLANS.values():
        compiled = _pinned(model, plan, "test-16", "fp32", "fp32")
        got = simulate(compiled.module, compiled.chip, x).outputs["output"]
        np.testing.assert_array_equal(got, x["input"] @ w)
