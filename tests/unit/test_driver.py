"""The library API (`t10.driver`): the verifying pass pipeline and what a compile returns."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.passes import ModulePass

from t10.common.attr_names import PLAN_ATTR
from t10.driver import CompileOptions, compile_model, run_passes
from t10.errors import T10Error
from t10.examples.models import mlp
from t10.frontend import import_onnx
from t10.pass_instrumentation import PassTime
from t10.passes.t10_compile import pipeline


@dataclass(frozen=True)
class _ReturnAtTopLevel(ModulePass):
    """Produces IR that does not verify: a `func.return` outside any function."""

    name = "return-at-top-level"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.body.block.add_op(func.ReturnOp())


def test_a_pass_that_breaks_the_ir_is_named() -> None:
    module = ModuleOp([])
    with pytest.raises(T10Error, match="^internal error: the IR after pass "
                                       "'return-at-top-level' does not verify: "):
        run_passes(module, [_ReturnAtTopLevel()])


@dataclass
class Seen:
    """A `PassObserver` that keeps what it is told."""

    stages: list[str] = field(default_factory=list)
    ended: list[tuple[str, str]] = field(default_factory=list)
    times: list[PassTime] = field(default_factory=list)

    def stage(self, name: str) -> None:
        self.stages.append(name)

    def after_pass(self, p: ModulePass, module: ModuleOp, time: PassTime | None = None) -> None:
        assert time is not None
        self.ended.append((p.name, time.name))
        self.times.append(time)


def test_after_pass_sees_every_pass_in_order() -> None:
    passes = pipeline(CompileOptions(chip="test-16"))
    seen = Seen()
    run_passes(import_onnx(mlp()), passes, seen)
    assert seen.ended == [(p.name, p.name) for p in passes]
    assert seen.stages == [p.name for p in passes]


def test_pass_times_add_up_to_the_pipeline() -> None:
    """Each pass's time and its verification's are measured apart and cover the run."""
    seen = Seen()
    start = time.perf_counter()
    run_passes(import_onnx(mlp()), pipeline(CompileOptions(chip="test-16")), seen)
    total = time.perf_counter() - start
    times = seen.times
    assert all(t.seconds > 0 and t.verify_seconds > 0 for t in times)
    assert sum(t.seconds + t.verify_seconds for t in times) <= total


def test_compile_keeps_the_plans_and_lowers_to_the_chip_level() -> None:
    compiled = compile_model(mlp(), CompileOptions(chip="test-16"))
    assert any(op.name == "chip.program" for op in compiled.module.walk())
    assert not any(isinstance(op, GenericOp) for op in compiled.module.walk())
    assert any(PLAN_ATTR in op.attributes for op in compiled.planned.walk())
