"""ONNX node names as MLIR locations through every level, and errors that name the node."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnknownLoc, i64
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from t10.common.attr_names import NAME_ATTR, PLAN_ATTR, PLANNED_OPS_ATTR
from t10.common.locations import onnx_nodes
from t10.driver import CompileOptions, run_passes
from t10.errors import T10Error
from t10.examples.models import mlp
from t10.frontend import import_onnx
from t10.lowering.convert_linalg_to_rtensor import ConvertLinalgToRTensor
from t10.passes.t10_compile import pipeline
from t10.t10_dialects import core

NODES = {n.name for n in mlp().graph.node}


def _names(op: Operation) -> set[str]:
    return set(onnx_nodes(op))


def _compiled(level: str = "chip") -> ModuleOp:
    module = import_onnx(mlp())
    run_passes(module, pipeline(CompileOptions(chip="test-16"), emit=level))
    return module


def test_the_frontend_locates_every_op_at_its_node() -> None:
    module = import_onnx(mlp())
    generics = [op for op in module.walk() if isinstance(op, GenericOp)]
    assert generics
    for op in generics:
        [node] = onnx_nodes(op)
        assert node in NODES
        assert all(onnx_nodes(inner) == [node] for inner in op.walk())


UNLOCATED = {"builtin.module", "func.func", "func.return", "chip.program", "chip.yield"}
"""The program's frame, which no node makes."""


@pytest.mark.parametrize("level", ["linalg", "rtensor", "cshift", "core", "chip"])
def test_every_lowered_op_keeps_its_nodes(level: str) -> None:
    """Every op the passes make is located at the ONNX nodes it computes (all of a fused
    chain's); at the chip level a superstep is located at the operators it runs."""
    module = _compiled(level)
    for op in module.walk():
        if op.name in UNLOCATED:
            assert isinstance(op.location, UnknownLoc)
        else:
            assert _names(op) and _names(op) <= NODES, (op.name, op.location)
    kernels = [op for op in module.walk() if isinstance(op, core.KernelOp)]
    if level in ("core", "chip"):
        assert {n for k in kernels for n in _names(k)} == NODES
        assert {tuple(onnx_nodes(k)) for k in kernels} == {
            ("fc1/MatMul", "fc1/Add", "fc1/Relu"),
            ("fc2/MatMul", "fc2/Add", "fc2/Relu"),
            ("fc3/MatMul", "fc3/Add"),
        }


def test_a_lowering_error_names_the_onnx_node() -> None:
    """With no operator name in the IR, the error still says which ONNX node it is about."""
    module = _compiled("linalg")
    first = next(op for op in module.walk() if isinstance(op, GenericOp))
    for op in module.walk():
        op.attributes.pop(NAME_ATTR, None)
    del first.attributes[PLAN_ATTR]
    del module.attributes[PLANNED_OPS_ATTR]  # the search's record, of named, planned operators
    with pytest.raises(T10Error, match=r"^ONNX node 'fc1/MatMul': operator 'linalg.generic' "
                       r"has no 't10.plan' attribute"):
        run_passes(module, [ConvertLinalgToRTensor()])


@dataclass(frozen=True)
class BreakAnAlloc(ModulePass):
    """A faulty pass: the first core.alloc made for fc2 gets zero cores."""

    name = "break-an-alloc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        alloc = next(
            o for o in op.walk() if isinstance(o, core.AllocOp) and "fc2/MatMul" in onnx_nodes(o)
        )
        alloc.cores = IntegerAttr(0, i64)


def test_ir_that_a_pass_breaks_is_reported_at_the_onnx_node() -> None:
    module = _compiled("core")
    with pytest.raises(T10Error, match=r"the IR after pass 'break-an-alloc' does not verify at "
                       r"ONNX nodes 'fc2/MatMul', 'fc2/Add', 'fc2/Relu': core.alloc '.*': needs at "
                       r"least one core"):
        run_passes(module, [BreakAnAlloc()])
