"""docs/extending.md, done from outside the package: an ONNX op lowering, a chip of an existing
kind and a pass, each defined in this file and used by t10's own commands and pipelines with
no t10 file touched (a planner: tests/unit/test_planner_registry.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import onnx
import pytest
from helpers import float_model, randn
from onnx import helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.passes import ModulePass

from t10.common.chip_spec import load_chip
from t10.driver import CompileOptions, compile_model, run_passes, simulate_compiled
from t10.frontend import import_onnx, importer
from t10.frontend.importer import SUPPORTED_OPS, Importer, lowering
from t10.passes.t10_compile import pipeline
from t10.passes.t10_plan_search import T10PlanSearch
from t10.tools.cli import main


def softsign_model() -> onnx.ModelProto:
    """MatMul, then Softsign (x / (1 + |x|))."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="fc"),
             helper.make_node("Softsign", ["h"], ["y"], name="act")]
    return float_model(nodes, {"x": [8, 16]}, ["y"],
                       [numpy_helper.from_array(randn(16, 12, seed=3), "w")])


def lower_softsign(imp: Importer, node: onnx.NodeProto) -> None:
    """The op lowering a downstream user writes: one element-wise generic over the input."""
    x = imp.use(node.input[0])
    body = lambda bb, v: bb.div(v[0], bb.add(bb.const(1.0), bb.abs(v[0])))  # noqa: E731
    imp.define(node.output[0], imp.elementwise([x], x[1], body), x[1])


def test_an_op_lowering_defined_outside_runs_and_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a lowering the op is refused by name; with one registered from here (through
    `lowering`, as the frontend's own modules register theirs), `t10 run --check` matches
    onnxruntime."""
    path = tmp_path / "softsign.onnx"
    onnx.save(softsign_model(), path)
    monkeypatch.delitem(SUPPORTED_OPS, "Softsign")  # as if t10 had no lowering for it
    assert main(["run", str(path), "--chip", "test-16", "-q"]) == 1
    assert "Softsign" in capsys.readouterr().err
    lowering("Softsign")(lower_softsign)
    assert importer.SUPPORTED_OPS["Softsign"].lower is lower_softsign
    assert main(["run", str(path), "--chip", "test-16", "-q", "--check"]) == 0
    assert "check   PASSED" in capsys.readouterr().out


def test_a_chip_file_of_an_existing_kind_is_a_chip(tmp_path: Path) -> None:
    """A chip is a JSON file: test-16 with twice the cores' SRAM runs under its own name, and
    the plan search may use the room."""
    spec = json.loads(resources.files("t10.common").joinpath("chips/test-16.json").read_text())
    chip = tmp_path / "roomy.json"
    chip.write_text(json.dumps({**spec, "name": "roomy",
                                "sram_bytes_per_core": 2 * spec["sram_bytes_per_core"]}))
    compiled = compile_model(softsign_model(), CompileOptions(chip=str(chip)))
    assert compiled.chip.name == "roomy"
    assert compiled.chip.sram_bytes_per_core == 2 * spec["sram_bytes_per_core"]


@dataclass(frozen=True)
class MarkGenerics(ModulePass):
    """A downstream pass: counts the linalg.generics on the module, between t10's passes."""

    name = "mark-generics"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        count = sum(isinstance(g, GenericOp) for g in op.walk())
        op.attributes["test.generics"] = IntegerAttr(count, 64)


def test_a_pass_defined_outside_runs_between_t10s() -> None:
    """A pass of the user's runs in one pipeline with t10's (here just before the plan
    search), and what it records survives t10's lowerings to a chip program that simulates."""
    passes = list(pipeline(CompileOptions(chip="test-16")))
    search = next(i for i, p in enumerate(passes) if isinstance(p, T10PlanSearch))
    passes.insert(search, MarkGenerics())
    module = import_onnx(softsign_model())
    run_passes(module, passes)
    assert module.attributes["test.generics"] == IntegerAttr(2, 64)  # MatMul, its epilogue
    report = simulate_compiled(module, load_chip("test-16"), timing_only=True).report
    assert report.estimated_total_cycles == report.total_cycles > 0
