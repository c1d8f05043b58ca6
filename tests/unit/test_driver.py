"""The library API (`t10.driver`): the verifying pass pipeline and what a compile returns."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import onnx
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.passes import ModulePass

from t10 import driver
from t10.common.attr_names import PLAN_ATTR
from t10.driver import CompileOptions, compile_model, run_passes
from t10.errors import T10Error
from t10.examples.models import mlp
from t10.frontend import import_onnx
from t10.pass_instrumentation import PassTime
from t10.passes.t10_compile import pipeline
from t10.tools.cli import main as cli_main


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


@dataclass(frozen=True)
class _Nothing(ModulePass):
    """Changes nothing."""

    name = "nothing"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


def test_without_verify_each_the_ir_is_verified_once_at_the_end() -> None:
    """`verify_each=False` (`t10 run` / `t10 compile` without --verify-each) still refuses
    IR that does not verify after the last pass, naming the passes and how to find the one;
    it lets a pass see unverified IR only in between."""
    with pytest.raises(T10Error, match=r"^internal error: the IR after passes "
                       r"return-at-top-level, nothing does not verify: .* \(compile with "
                       r"--verify-each, or call with verify_each=True, to name the pass"):
        run_passes(ModuleOp([]), [_ReturnAtTopLevel(), _Nothing()], verify_each=False)
    with pytest.raises(T10Error, match="^internal error: the IR after pass "
                                       "'return-at-top-level' does not verify: "):
        run_passes(ModuleOp([]), [_ReturnAtTopLevel(), _Nothing()])


def test_verify_each_is_a_cli_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`t10 run` and `t10 compile` verify after every pass only with --verify-each, and
    compile the same IR either way."""
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp(), path)
    outputs = []
    for extra in ([], ["--verify-each"]):
        out = tmp_path / f"out{len(outputs)}.mlir"
        assert cli_main(["compile", str(path), "--chip", "test-16", "-q", "-o", str(out),
                         *extra]) == 0
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    seen: list[bool] = []
    real = driver.run_passes

    def recording(module: ModuleOp, passes: list[ModulePass], observer: object = None,
                  verify_each: bool = True) -> None:
        seen.append(verify_each)
        real(module, passes, observer, verify_each)  # type: ignore[arg-type]

    monkeypatch.setattr(driver, "run_passes", recording)
    for extra in ([], ["--verify-each"]):
        assert cli_main(["run", str(path), "--chip", "test-16", "-q", "--timing-only",
                         *extra]) == 0
    assert seen == [False, True]


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
