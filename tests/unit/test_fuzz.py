"""The fuzz script (benchmarks/fuzz.py) runs, and a short seeded campaign finds no defect."""

from __future__ import annotations

import importlib.util
import json
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
