"""Timing-only simulation (`t10 run --timing-only`): the same cycles, per-operator costs and
peak SRAM as a simulation with values, without computing any; and weights elided from
printed IR (`t10 compile --emit`, `--weights`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import DATA
from xdsl.dialects.builtin import ModuleOp

from t10.common.attr_names import PLAN_ATTR
from t10.common.chip_spec import load_chip
from t10.driver import (
    CHECK_TOLERANCES,
    CompileOptions,
    compile_model,
    make_context,
    run_model,
    simulate_compiled,
)
from t10.errors import T10Error
from t10.examples.models import matmul, mlp
from t10.outputs.report import InputSpec, input_specs, random_inputs
from t10.sim.simulator import simulate
from t10.sim.state import has_values
from t10.t10_dialects.parsing import Parser
from t10.t10_dialects.printing import ELIDED

CASES = {
    # name: (model, chip, precision)
    "rotating": (lambda: matmul(256, 512, 512), "test-16", "fp32"),
    "split-k": (lambda: matmul(16, 4096, 16), "test-16", "fp32"),
    "mlp-fp16": (lambda: mlp(), "ipu-mk2", "fp16"),
    "bert-layer-views-epilogues": (
        lambda: onnx.load(DATA / "hf_bert_layer_mask.torchscript.onnx"), "ipu-mk2", "fp16"
    ),
    "llama-gather-of-ids": (
        lambda: onnx.load(DATA / "hf_llama_ids_1layer.torchscript.onnx"), "test-16", "fp32"
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_timing_only_counts_what_the_numeric_run_counts(case: str) -> None:
    make, chip, precision = CASES[case]
    model = make()
    compiled = compile_model(model, CompileOptions(chip=chip, precision=precision))
    inputs = random_inputs(input_specs(compiled.module), 0)
    numeric = simulate(compiled.module, compiled.chip, inputs).report
    timing = simulate(compiled.module, compiled.chip, inputs, timing_only=True)
    assert timing.outputs == {}
    assert timing.report.total_cycles == numeric.total_cycles
    assert timing.report.peak_sram_bytes_per_core == numeric.peak_sram_bytes_per_core
    assert timing.report.ops == numeric.ops  # every superstep's cost, bytes and SRAM


def test_split_k_case_splits_the_reduction() -> None:
    """The split-k case above really reduces across cores."""
    compiled = compile_model(
        matmul(16, 4096, 16),
        CompileOptions(chip="test-16", fuse=False),
        emit="linalg",
    )
    (plan,) = [o.attributes[PLAN_ATTR] for o in compiled.module.walk() if PLAN_ATTR in o.attributes]
    assert "grid [1, 1, 16]" in str(plan)


def test_run_model_timing_only(tmp_path: Path) -> None:
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp(), path)
    numeric = run_model(str(path), CompileOptions(chip="test-16"))
    timing = run_model(str(path), CompileOptions(chip="test-16"), timing_only=True)
    assert timing.outputs == {}
    assert timing.report.total_cycles == numeric.report.total_cycles
    assert timing.report.ops == numeric.report.ops
    with pytest.raises(T10Error, match="computes no values to check"):
        run_model(
            str(path),
            CompileOptions(chip="test-16"),
            timing_only=True,
            check=CHECK_TOLERANCES["fp32"],
        )


@pytest.mark.parametrize("other", [["--check"], ["--outputs", "out.npz"]])
def test_cli_refuses_timing_only_with_values(other: list[str], tmp_path: Path) -> None:
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp(), path)
    done = subprocess.run(
        [sys.executable, "-m", "t10.tools.cli", "run", str(path), "--timing-only", *other],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("t10: error: --timing-only computes no output values")
    assert not (tmp_path / "out.npz").exists()


def _emitted(tmp_path: Path, *flags: str) -> str:
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp(), path)
    out = tmp_path / "mlp.chip.mlir"
    done = subprocess.run(
        [sys.executable, "-m", "t10.tools.cli", "compile", str(path), "--chip", "test-16",
         "-o", str(out), *flags],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_emit_elides_weights_unless_asked(tmp_path: Path) -> None:
    elided = _emitted(tmp_path)
    assert f"dense_resource<{ELIDED}> : tensor<256x512xf32>" in elided
    printed = [line for line in elided.splitlines() if "dense<" in line]
    assert all(line.count(",") < 16 for line in printed)  # only small constants print
    full = _emitted(tmp_path, "--weights")
    assert ELIDED not in full
    assert len(full) > 50 * len(elided)


def test_elided_ir_reads_back_as_the_same_program_without_values(tmp_path: Path) -> None:
    """An elided file parses; simulating it with values is a clear error, without values it
    counts what the full file counts."""
    text = _emitted(tmp_path)
    full = _emitted(tmp_path, "--weights")
    chip = load_chip("test-16")
    elided_module = import_mlir(text)
    with pytest.raises(T10Error, match="elided when the IR was printed"):
        simulate_compiled(elided_module, chip)
    timing = simulate_compiled(elided_module, chip, timing_only=True).report
    numeric = simulate_compiled(import_mlir(full), chip).report
    assert timing.total_cycles == numeric.total_cycles
    assert timing.peak_sram_bytes_per_core == numeric.peak_sram_bytes_per_core


def import_mlir(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def test_timing_only_inputs_hold_no_floats_and_the_same_integers() -> None:
    """A timing-only run's float inputs are `NoValues` (a decoder's caches would take
    gigabytes); its integer inputs, which may be a gather's ids, are those of a run with
    values, the generator advanced past the floats before them."""
    specs = [InputSpec("x", (3, 5_000_001)), InputSpec("ids", (64,), "int64", 1000),
             InputSpec("y", (2, 4))]
    full = random_inputs(specs, seed=7)
    timed = random_inputs(specs, seed=7, timing_only=True)
    assert not has_values(timed["x"]) and not has_values(timed["y"])
    assert timed["x"].shape == (3, 5_000_001) and timed["x"].dtype == np.float32
    np.testing.assert_array_equal(timed["ids"], full["ids"])


def test_timing_only_inputs_are_never_computed_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """`NoValues` inputs reach the simulator as they are: a timing-only run distributes and
    collects no tensor's values (it once converted its inputs to zero arrays and moved them
    value by value: minutes on a decoder's caches)."""
    compiled = compile_model(mlp(), CompileOptions(chip="ipu-mk2", precision="fp16"))
    inputs = random_inputs(input_specs(compiled.module), 0, timing_only=True)

    def no_values(*args: object, **kwargs: object) -> None:
        raise AssertionError("a timing-only run moved a tensor's values")

    monkeypatch.setattr("t10.common.exchange.collect", no_values)
    monkeypatch.setattr("t10.common.exchange.distribute", no_values)
    timing = simulate(compiled.module, compiled.chip, inputs, timing_only=True)
    assert timing.report.total_cycles > 0
