"""Property: element-wise DAGs fuse (`t10-fuse-elementwise`), simulate and match the reference.

Hypothesis draws small graphs of element-wise ops over a 2-D input: unary ops, binary ops whose
other operand is an earlier value (so a producer is read twice, or a consumer reads several
producers), a constant of the whole shape or a broadcast row, and transposes of a square
tensor; an earlier value may be a graph output too (read more than once: not fused). Long
chains make the fused body grow on either side (the pass reuses the longer body and moves the
other into it), so the bodies merged both ways, inputs shared by producer and consumer, and
permuted reads are all drawn. Compiled with and without fusion on test-16, simulated in fp32 and
compared with `t10.reference`; the fused module has no more operators than the unfused one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import onnx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.linalg.ops import GenericOp

from t10.driver import CHECK_TOLERANCES, CompileOptions, compile_model
from t10.outputs.report import check_outputs
from t10.reference import reference_outputs
from t10.sim.simulator import simulate

EXAMPLES = int(os.environ.get("T10_PROPERTY_EXAMPLES", "30"))
UNARY = ["Relu", "Neg", "Tanh", "Sigmoid", "Abs"]
BINARY = ["Add", "Sub", "Mul", "Max"]


@dataclass(frozen=True)
class Step:
    op: str  # a UNARY or BINARY op, or "Transpose"
    source: int  # index of the value it reads (0: the input)
    other: int | None  # BINARY: an earlier value; None: a constant
    row: bool  # BINARY with a constant: a broadcast row instead of the whole shape


@dataclass(frozen=True)
class Dag:
    shape: tuple[int, int]
    steps: tuple[Step, ...]
    extra_output: int | None  # an earlier value that is a graph output too


@st.composite
def dags(draw: st.DrawFn) -> Dag:
    side = draw(st.sampled_from([1, 3, 4, 8]))
    shape = (side, side) if draw(st.booleans()) else (side, draw(st.sampled_from([2, 5, 16])))
    steps: list[Step] = []
    for i in range(draw(st.integers(1, 12))):
        # mostly the previous value (long chains), sometimes an earlier one
        source = i if draw(st.integers(0, 3)) else draw(st.integers(0, i))
        kinds = UNARY + BINARY + (["Transpose"] if shape[0] == shape[1] else [])
        op = draw(st.sampled_from(kinds))
        other = draw(st.none() | st.integers(0, i)) if op in BINARY else None
        steps.append(Step(op, source, other, draw(st.booleans())))
    extra = draw(st.none() | st.integers(1, len(steps)))
    return Dag(shape, tuple(steps), None if extra == len(steps) else extra)


def build(dag: Dag) -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    nodes, inits = [], []
    for i, step in enumerate(dag.steps, start=1):
        inputs = [f"v{step.source}"]
        if step.op in BINARY:
            if step.other is None:
                shape = (1, dag.shape[1]) if step.row else dag.shape
                inits.append(numpy_helper.from_array(
                    rng.uniform(-1, 1, shape).astype(np.float32), f"c{i}"))
                inputs.append(f"c{i}")
            else:
                inputs.append(f"v{step.other}")
        nodes.append(helper.make_node(step.op, inputs, [f"v{i}"], name=f"n{i}"))
    outputs = [len(dag.steps)] + ([dag.extra_output] if dag.extra_output else [])
    graph = helper.make_graph(
        nodes, "dag", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, dag.shape)],
        [helper.make_tensor_value_info(f"v{k}", TensorProto.FLOAT, None) for k in outputs],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def generics(module: object) -> int:
    return sum(isinstance(op, GenericOp) for op in module.walk())  # type: ignore[attr-defined]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags())
def test_fused_dag_matches_reference(dag: Dag) -> None:
    model = build(dag)
    x = np.random.default_rng(0).standard_normal(dag.shape).astype(np.float32)
    want = reference_outputs(model, {"v0": x})
    fused = compile_model(model, CompileOptions(chip="test-16"), emit="linalg")
    apart = compile_model(model, CompileOptions(chip="test-16", fuse=False), emit="linalg")
    assert generics(fused.module) <= generics(apart.module)
    compiled = compile_model(model, CompileOptions(chip="test-16"))
    got = simulate(compiled.module, compiled.chip, {"v0": x}).outputs
    check = check_outputs(got, want, CHECK_TOLERANCES["fp32"])
    assert check.passed, check.outputs
