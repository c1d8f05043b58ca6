"""The run report as data (`t10.outputs.run_report`): its fields are the keys docs/report.md
documents, in that order; the JSON `t10 run --report` writes has exactly those keys (the
check's only after a check); a non-finite number is written as null."""

from __future__ import annotations

import json
import math
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from t10.examples.models import mlp
from t10.outputs.report import (
    CheckReport,
    OpReport,
    OutputCheck,
    RunReport,
    Tolerance,
    check_outputs,
)
from t10.tools.cli import main

DOC = (Path(__file__).parents[2] / "docs" / "report.md").read_text()
CHECK_PART = ["max_abs_error", "max_rel_error", "check"]
"""The report's keys present only after a check (the last three documented)."""
ROUTING_PART = ["links"]
"""The report's key present only on a routing chip (just before the off-chip memory's)."""
OFFCHIP_PART = ["offchip"]
"""The report's key present only on a chip with off-chip memory (just before the check's)."""
OP_ROUTING_PART = ["busiest_link_bytes"]
"""An op's key present only on a routing chip (its last)."""
CHECK_KEYS = ["rtol", "atol", "atol_rms", "passed", "outputs"]
OUTPUT_KEYS = ["shape", "max_abs_error", "max_rel_error", "atol", "nonfinite_mismatches",
               "passed", "problem"]
"""The keys of `check` and of each of its outputs (`problem` only for some failed ones):
the doc lists them in the prose of its `check` row, checked below."""


def _documented(after: str) -> list[str]:
    """The field names of the first table in docs/report.md after the line `after`."""
    rows = DOC.split(after, 1)[1].split("\n\n|", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", "|" + rows, re.MULTILINE)


REPORT_KEYS = _documented("## JSON (`--report`)")
OP_KEYS = _documented("Each entry of `ops`:")
ALL_TO_ALL_KEYS = [k for k in REPORT_KEYS if k not in ROUTING_PART + OFFCHIP_PART]


def test_the_documented_fields_are_the_dataclasses() -> None:
    assert REPORT_KEYS[-5:] == ROUTING_PART + OFFCHIP_PART + CHECK_PART
    assert OP_KEYS[-1:] == OP_ROUTING_PART
    assert [f.name for f in fields(RunReport)] == [*REPORT_KEYS[:-3], "check"]
    assert [f.name for f in fields(OpReport)] == OP_KEYS
    assert [f.name for f in fields(OutputCheck)] == OUTPUT_KEYS
    check_row = next(line for line in DOC.splitlines() if line.startswith("| `check` |"))
    for key in CHECK_KEYS + OUTPUT_KEYS:
        assert f"`{key}`" in check_row, key


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise AssertionError(f"JSON holds {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def mlp_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "mlp.onnx"
    onnx.save_model(mlp(), path)
    return path


@pytest.mark.parametrize("check", [True, False])
def test_the_json_of_a_run_has_the_documented_keys_in_order(
    mlp_path: Path, tmp_path: Path, check: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    argv = ["run", str(mlp_path), "--chip", "test-16", "--report", str(path)]
    assert main([*argv, *(["--check"] if check else [])]) == 0
    capsys.readouterr()
    report = _strict_json(path.read_text())
    assert list(report) == (ALL_TO_ALL_KEYS if check else ALL_TO_ALL_KEYS[:-3])
    assert report["ops"] and all(list(op) == OP_KEYS[:-1] for op in report["ops"])
    if check:
        assert list(report["check"]) == CHECK_KEYS
        for output in report["check"]["outputs"].values():
            assert list(output) == OUTPUT_KEYS[:-1]  # passed: no problem


def test_a_routing_chips_json_has_the_link_keys_in_order(
    mlp_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.json"
    assert main(["run", str(mlp_path), "--chip", "mesh-64", "--report", str(path)]) == 0
    text = capsys.readouterr().out
    report = _strict_json(path.read_text())
    links, mesh = report["links"], report["links"]["classes"]["mesh"]
    assert (f"links   busiest {links['busiest']} {links['busiest_bytes']:,} B "
            f"({links['busiest_cycles']:,} cycles); mesh: 256 links, {mesh['bytes']:,} B in all"
            ) in text.splitlines()
    assert list(report) == REPORT_KEYS[:-4]
    assert report["ops"] and all(list(op) == OP_KEYS for op in report["ops"])
    assert list(report["links"]) == ["busiest", "busiest_bytes", "busiest_cycles", "classes"]
    assert list(report["links"]["classes"]) == ["mesh"]
    assert list(report["links"]["classes"]["mesh"]) == ["links", "bytes", "busiest_bytes"]
    links_row = next(line for line in DOC.splitlines() if line.startswith("| `links` |"))
    for key in ["busiest", "busiest_bytes", "busiest_cycles", "classes", "links", "bytes"]:
        assert f"`{key}`" in links_row, key


def test_a_failed_outputs_problem_is_its_last_key() -> None:
    ref = {"y": np.zeros(3), "z": np.zeros(2)}
    check = check_outputs({"y": np.zeros(2)}, ref, Tolerance(1e-4, 1e-5))
    assert [list(o.to_dict()) for o in check.outputs.values()] == [OUTPUT_KEYS, OUTPUT_KEYS]
    assert [o.problem for o in check.outputs.values()] == ["shape [2]", "missing"]


FLOATS = st.floats(allow_nan=True, allow_infinity=True)


@st.composite
def reports(draw: st.DrawFn) -> RunReport:
    """Reports whose every float field may be NaN or ±inf (with or without a check)."""
    outputs = {
        name: OutputCheck(
            shape=(2, 3), max_abs_error=draw(FLOATS), max_rel_error=draw(FLOATS),
            atol=draw(FLOATS), nonfinite_mismatches=0, passed=draw(st.booleans()),
            problem=draw(st.none() | st.just("missing")),
        )
        for name in draw(st.lists(st.sampled_from("xyz"), unique=True))
    }
    check = CheckReport(draw(FLOATS), draw(FLOATS), draw(FLOATS), outputs)
    op = OpReport("op", "contraction", None, 1, 2, 1, 1, 0, 0, 1, 0, 8, 2, 8, 1)
    return RunReport(
        model=None, chip="c", planner=None, precision=None, cores=1, sram_bytes_per_core=8,
        clock_hz=draw(FLOATS), total_cycles=2, seconds=draw(FLOATS),
        estimated_total_cycles=None, bound_cycles=None,
        total_over_bound=draw(st.none() | FLOATS), peak_sram_bytes_per_core=8,
        planned_sram_bytes_per_core=None, warnings=("w",), ops=(op,),
        check=draw(st.none() | st.just(check)),
    )


def _same_or_null(written: Any, value: Any) -> bool:
    if isinstance(value, float) and not math.isfinite(value):
        return written is None
    return written == value


@given(reports())
def test_non_finite_numbers_are_written_as_null(report: RunReport) -> None:
    """Every number of the JSON is the report's, a NaN or an infinity null (never the
    non-JSON `NaN` / `Infinity`)."""
    written = _strict_json(report.to_json())
    for key in ("clock_hz", "seconds", "total_over_bound"):
        assert _same_or_null(written[key], getattr(report, key)), key
    assert written["ops"] == [report.ops[0].to_dict()]
    if report.check is None:
        assert list(written) == ALL_TO_ALL_KEYS[:-3]
        return
    assert _same_or_null(written["max_abs_error"], report.check.max_abs_error)
    assert _same_or_null(written["max_rel_error"], report.check.max_rel_error)
    check = written["check"]
    for key in ("rtol", "atol", "atol_rms"):
        assert _same_or_null(check[key], getattr(report.check, key)), key
    assert check["passed"] == report.check.passed
    for name, o in report.check.outputs.items():
        got = check["outputs"][name]
        assert got["shape"] == list(o.shape)
        assert ("problem" in got) == (o.problem is not None)
        for key in ("max_abs_error", "max_rel_error", "atol"):
            assert _same_or_null(got[key], getattr(o, key)), key


def test_an_offchip_chips_json_has_the_offchip_keys_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, model = tmp_path / "r.json", tmp_path / "mlp.onnx"
    onnx.save_model(mlp(), model)
    chip = "ipu-mk2-streaming[sram_bytes_per_core=700]"  # the mlp's weights stream
    assert main(["run", str(model), "--chip", chip, "--report", str(path)]) == 0
    text = capsys.readouterr().out
    report = _strict_json(path.read_text())
    keys = [k for k in REPORT_KEYS[:-3] if k not in ROUTING_PART]
    assert list(report) == keys
    offchip = report["offchip"]
    assert list(offchip) == ["capacity_bytes", "held_bytes", "loaded_bytes", "busy_cycles",
                             "wait_cycles"]
    assert offchip["wait_cycles"] == sum(op["wait_cycles"] for op in report["ops"]) > 0
    assert offchip["loaded_bytes"] >= offchip["held_bytes"] > 0
    assert any(line.startswith("offchip ") for line in text.splitlines())
    row = next(line for line in DOC.splitlines() if line.startswith("| `offchip` |"))
    for key in offchip:
        assert f"`{key}`" in row, key
