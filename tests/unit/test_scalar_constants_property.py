"""Property: one-value constants anywhere in float32's range give onnxruntime's numbers in fp16
as in fp32 (`t10-inline-splats` keeps them inside the body that reads them, at float32
precision; beyond fp16's range they saturate).

Hypothesis draws two kinds of graph:

* a chain `op2(op1(x, c1))` (each op Add / Sub / Mul / Div / Max / Min, the constant on
  either side) with constants from the whole float32 range, zero and subnormals included,
  whose result fp16 can hold: the chain fuses into one body computed in float32, so only its
  result is stored; at fp16 a constant beyond fp16's range is saturated to ±65504 first, as
  onnxruntime's fp16 converter clamps constants (`(x · 1e6) · 1e-6` is `x · 0.065504`, never
  the inf of an fp16 `1e6`), and the report says so unless it is float32's extreme;
* an exported attention mask `Softmax(s + (1 - m) · c)` with `c` from float32's minimum to
  -1e4 and a 0/1 mask `m` that attends somewhere in each row, fused or not: a stored -inf for
  a masked score is what the softmax makes 0 of anyway.

Before the pass, fp16 stored `c` itself (float32's minimum became -inf, `0 · -inf` NaN; 1e-12
became 0).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import onnx
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CHECK_TOLERANCES, CompileOptions, compile_model
from t10.outputs.report import check_outputs
from t10.reference import reference_outputs
from t10.sim.simulator import simulate

EXAMPLES = int(os.environ.get("T10_PROPERTY_EXAMPLES", "25"))
OPS = ["Add", "Sub", "Mul", "Div", "Max", "Min"]
FLOAT32_MIN = float(np.finfo(np.float32).min)
SHAPE = (4, 16)


@dataclass(frozen=True)
class Step:
    op: str
    constant: float
    constant_first: bool


def _scalar(name: str, value: float) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, np.float32), name)


def _model(nodes: list[onnx.NodeProto], inputs: list[str], consts: list[onnx.TensorProto]
           ) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(SHAPE)) for n in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        consts,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def chain_model(steps: tuple[Step, ...]) -> onnx.ModelProto:
    nodes, consts, value = [], [], "x"
    for i, step in enumerate(steps):
        consts.append(_scalar(f"c{i}", step.constant))
        operands = [f"c{i}", value] if step.constant_first else [value, f"c{i}"]
        nodes.append(helper.make_node(step.op, operands, [f"v{i}"], name=f"op{i}"))
        value = f"v{i}"
    nodes[-1].output[0] = "y"
    return _model(nodes, ["x"], consts)


def mask_model(mask_value: float) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Sub", ["one", "m"], ["keep"], name="mask/Sub"),
        helper.make_node("Mul", ["keep", "min"], ["add"], name="mask/Mul"),
        helper.make_node("Add", ["s", "add"], ["scores"], name="scores/Add"),
        helper.make_node("Softmax", ["scores"], ["y"], name="softmax", axis=-1),
    ]
    return _model(nodes, ["s", "m"], [_scalar("one", 1.0), _scalar("min", mask_value)])


FP16_MAX = float(np.finfo(np.float16).max)
float32s = st.floats(width=32, allow_nan=False, allow_infinity=False) | st.sampled_from(
    [FLOAT32_MIN, -FLOAT32_MIN, 1e6, 1e-6, 1e-12, 7e4, -7e4, 1e-30]
)
steps = st.builds(Step, st.sampled_from(OPS), float32s, st.booleans())


def _run(model: onnx.ModelProto, inputs: dict[str, np.ndarray], precision: str, fuse: bool,
         want: dict[str, np.ndarray]) -> list[str]:
    """The simulated outputs checked against `want`; the report's warnings."""
    compiled = compile_model(model, CompileOptions(chip="test-16", precision=precision, fuse=fuse))
    simulated = simulate(compiled.module, compiled.chip, inputs)
    check = check_outputs(simulated.outputs, want, CHECK_TOLERANCES[precision])
    assert check.passed, check.outputs
    return simulated.report.warnings


def _saturated(steps: tuple[Step, ...]) -> tuple[Step, ...]:
    """`steps` with their constants as fp16 storage takes them: saturated to ±65504."""
    return tuple(Step(s.op, float(np.clip(s.constant, -FP16_MAX, FP16_MAX)), s.constant_first)
                 for s in steps)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(steps, min_size=1, max_size=2).map(tuple), st.sampled_from(["fp32", "fp16"]))
@example((Step("Mul", 1e6, False), Step("Mul", 1e-6, True)), "fp16")
@example((Step("Add", 1e-12, False), Step("Div", 1e-12, True)), "fp16")
def test_chain_of_scalar_constants_matches_onnxruntime(chain: tuple[Step, ...], precision: str
                                                       ) -> None:
    x = np.random.default_rng(0).uniform(-2, 2, SHAPE).astype(np.float32)
    stored = _saturated(chain) if precision == "fp16" else chain
    want = reference_outputs(chain_model(stored), {"x": x})
    assume(np.all(np.abs(want["y"]) <= FP16_MAX))  # (NaN fails this too) fp16 can hold it
    warnings = _run(chain_model(chain), {"x": x}, precision, fuse=True, want=want)
    reported = [s for s, t in zip(chain, stored, strict=True)
                if s != t and abs(s.constant) < -FLOAT32_MIN]
    assert any("saturated to ±65504" in w for w in warnings) == bool(reported), warnings


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.floats(FLOAT32_MIN, -1e4, width=32),
    st.integers(0, 2**31),
    st.sampled_from(["fp32", "fp16"]),
    st.booleans(),
)
def test_additive_mask_matches_onnxruntime(mask_value: float, seed: int, precision: str,
                                           fuse: bool) -> None:
    rng = np.random.default_rng(seed)
    m = (rng.uniform(size=SHAPE) < 0.5).astype(np.float32)
    m[:, rng.integers(0, SHAPE[1])] = 1.0  # every row attends somewhere
    s = rng.standard_normal(SHAPE).astype(np.float32)
    model, inputs = mask_model(mask_value), {"s": s, "m": m}
    _run(model, inputs, precision, fuse, reference_outputs(model, inputs))
