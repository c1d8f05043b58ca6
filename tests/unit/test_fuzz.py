"""The fuzz script (benchmarks/fuzz.py) runs, and a short seeded campaign finds no defect."""

from __future__ import annotations

import importlib.util
import json
import random
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz.py"


@pytest.fixture(scope="module")
def fuzz() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz"] = module
    spec.loader.exec_module(module)
    return module


def test_short_campaign_has_no_defects(fuzz: ModuleType, tmp_path: Path) -> None:
    args = ["--cases", "16", "--seed", "7", "--jobs", "2", "--no-exports", "--quiet"]
    code = fuzz.main([*args, "--out", str(tmp_path)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert sum(summary["counts"].values()) == 16
    assert summary["defects"] == [], summary["defects"]
    assert code == 0


def test_classify_counts_tracebacks_aborts_and_hangs(fuzz: ModuleType) -> None:
    ended = fuzz.Ended
    assert fuzz.classify("t10", ended(1, None, False, "t10: error: bad model\n", 0.1)) == (
        "clean-error")
    assert fuzz.classify("t10", ended(0, None, False, "total 5 cycles\n", 0.1)) == "success"
    trace = "Traceback (most recent call last):\n  File ...\nValueError: x\n"
    assert fuzz.classify("t10", ended(1, None, False, trace, 0.1)) == "traceback"
    assert fuzz.classify("t10", ended(None, 6, False, "", 0.1)) == "abort"
    assert fuzz.classify("t10", ended(None, None, True, "", 9.0)) == "hang"
    two = "t10: error: a\nt10: error: b\n"
    assert fuzz.classify("t10", ended(1, None, False, two, 0.1)) == "messy-error"
    wrong = "t10: error: simulated outputs differ from onnxruntime beyond tolerance: ...\n"
    assert fuzz.classify("t10", ended(1, None, False, wrong, 0.1)) == "wrong-result"
    warned = "warning fp16 overflow: outputs hold NaN or ±inf ('y' 3 value(s)) after ...\n"
    problem = f"3 elements {fuzz.NONFINITE_MISMATCH}, first at [0]: sim inf, ref 7"
    nonfinite = wrong.replace("tolerance:", f"tolerance in 'y' ({problem}):")
    assert fuzz.classify("t10", ended(1, None, False, warned + nonfinite, 0.1)) == "fp16-overflow"
    # a mismatch of finite values is not the overflow's, warning or not
    assert fuzz.classify("t10", ended(1, None, False, warned + wrong, 0.1)) == "wrong-result"
    assert fuzz.classify("t10", ended(1, None, False, nonfinite, 0.1)) == "wrong-result"
    # a mismatch of any values where the report says constants were saturated is fp16's range
    saturated = (f"warning fp16: 1 {fuzz.SATURATED_WARNING} (largest |x| 1e+30, first in "
                 "node 'fc1'): results that depend on them differ from the fp32 model\n")
    assert fuzz.classify("t10", ended(1, None, False, saturated + wrong, 0.1)) == "fp16-overflow"


def test_run_forked_reports_signals(fuzz: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import signal

    monkeypatch.setattr(fuzz, "_entry", lambda name: lambda: os.kill(os.getpid(), signal.SIGABRT))
    ended = fuzz.run_forked("t10", [], timeout=30)
    assert ended.signal == signal.SIGABRT and ended.code is None


def test_run_forked_stops_a_hang(fuzz: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setattr(fuzz, "_entry", lambda name: lambda: time.sleep(60))
    ended = fuzz.run_forked("t10", [], timeout=0.5)
    assert ended.timed_out and ended.seconds < 30


@pytest.fixture(scope="module")
def rotating_seeds(fuzz: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The chip-level IR of the matmul seed under each pinned rotating plan."""
    import onnx

    work = tmp_path_factory.mktemp("seeds")
    model = work / "matmul.onnx"
    onnx.save_model(fuzz.onnx_seeds(exports=False)["matmul"], str(model))
    frontend = fuzz.run_forked("t10-opt", [str(model)], timeout=120)
    assert frontend.code == 0, frontend.output
    seeds: dict[str, str] = {}
    for name, plan in fuzz.PINNED_PLANS.items():
        path = work / f"{name}.mlir"
        path.write_text(fuzz.pin_plan(frontend.output, plan))
        chip = fuzz.run_forked("t10-opt", [str(path), "-p", "t10-compile{chip=test-16}"], 120)
        assert chip.code == 0 and "core.shift" in chip.output, chip.output
        seeds[f"{name}.chip"] = chip.output
    return seeds


def _run_case(fuzz: ModuleType, name: str, text: str, expected: Path, tmp: Path) -> str:
    """The outcome of IR `text` as a case of seed `name` that must keep `expected`."""
    path, saved = tmp / "case.mlir", tmp / "case.outputs"
    path.write_text(text)
    saved.unlink(missing_ok=True)
    case = fuzz.Case("case", ".mlir", text.encode(), "t10-opt", fuzz.ir_argv(name), expected)
    argv = [str(path) if a == "{}" else a for a in case.argv]
    return fuzz.case_outcome(case, fuzz.run_forked("t10-opt", argv, 120, saved), saved)


def test_an_ir_mutant_that_changes_the_numbers_is_a_wrong_result(
    fuzz: ModuleType, rotating_seeds: dict[str, str], tmp_path: Path
) -> None:
    text = rotating_seeds["cannon.chip"]
    saved = fuzz.seed_output("cannon.chip", text, tmp_path, 120)
    assert _run_case(fuzz, "cannon.chip", text, saved, tmp_path) == "success"
    weights = re.search(r'dense<"0x([0-9A-F]{8})', text)
    assert weights is not None
    changed = text.replace(weights.group(1), "0000803F", 1)  # a weight becomes 1.0
    assert _run_case(fuzz, "cannon.chip", changed, saved, tmp_path) == "wrong-result"


@pytest.mark.parametrize("kind", ["list-swap", "list-entry", "dim-ref"])
def test_attribute_mutants_fail_to_verify_or_keep_the_numbers(
    fuzz: ModuleType, rotating_seeds: dict[str, str], kind: str, tmp_path: Path
) -> None:
    """The grids, sizes, bounds, layouts and rings that a mutation changes restate what
    other attributes say: a mutant either names the disagreement or computes the same."""
    seeds = {n: fuzz.seed_output(n, text, tmp_path, 120) for n, text in rotating_seeds.items()}
    rng = random.Random(kind)
    for i in range(8):
        name = sorted(rotating_seeds)[i % 2]
        lines = rotating_seeds[name].splitlines(keepends=True)
        assert fuzz.mutate_attribute(lines, kind, rng)
        outcome = _run_case(fuzz, name, "".join(lines), seeds[name], tmp_path)
        assert outcome in ("success", "clean-error"), "".join(lines)
