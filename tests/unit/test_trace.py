"""`t10 run --trace` (Chrome trace events) and `--plot`."""

from __future__ import annotations

import json
import pathlib
from collections import defaultdict
from typing import Any

import pytest

from t10.examples import zoo
from t10.examples.models import mlp
from t10.outputs.trace import LINK_COUNTER
from t10.tools.cli import main


def _check_trace(trace: dict[str, Any], report: dict[str, Any]) -> None:
    """The trace-event format's rules as Perfetto reads them, and the trace equals the run."""
    events = trace["traceEvents"]
    assert {e["ph"] for e in events} == {"M", "X", "C"}
    clock = report["clock_hz"] / 1e6
    by_track: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for e in events:
        assert isinstance(e["pid"], int) and isinstance(e["name"], str)
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0 and isinstance(e["tid"], int)
            by_track[(e["pid"], e["tid"])].append(e)
        if e["ph"] == "C":
            assert all(isinstance(v, int | float) for v in e["args"].values())
    steps: list[dict[str, Any]] = []
    phases: dict[int, list[dict[str, Any]]] = defaultdict(list)  # a superstep's, in order
    for e in by_track[(1, 0)]:
        if e["name"] in ("compute", "exchange", "sync"):
            phases[len(steps) - 1].append(e)
        else:
            steps.append(e)
    # supersteps run one after another, and the last ends at the report's time
    for a, b in zip(steps, steps[1:], strict=False):
        assert b["ts"] == pytest.approx(a["ts"] + a["dur"])
    end = steps[-1]["ts"] + steps[-1]["dur"]
    assert end == pytest.approx(report["total_cycles"] / clock)
    assert end == pytest.approx(report["seconds"] * 1e6)
    # each superstep's phases nest in it and add up to it
    for i, step in enumerate(steps):
        inside = phases[i]
        assert inside[0]["ts"] == step["ts"]
        for a, b in zip(inside, inside[1:], strict=False):
            assert b["ts"] == pytest.approx(a["ts"] + a["dur"])
        assert sum(p["dur"] for p in inside) == pytest.approx(step["dur"])
        assert sum(p["args"]["cycles"] for p in inside) == sum(
            step["args"][f"{k}_cycles"] for k in ("compute", "exchange", "sync")
        )
    # slices on the other tracks do not overlap, and every operator has its track
    for (pid, _), slices in by_track.items():
        if pid != 1:
            for a, b in zip(slices, slices[1:], strict=False):
                assert b["ts"] >= a["ts"] + a["dur"] - 1e-9
    names = {e["args"]["name"] for e in events if e["name"] == "thread_name" and e["pid"] == 2}
    assert names == {op["name"] for op in report["ops"]}
    per_op = defaultdict(float)
    for (pid, _), slices in by_track.items():
        if pid == 2:
            for s in slices:
                per_op[s["name"]] += s["dur"]
    for op in report["ops"]:
        cycles = op["compute_cycles"] + op["exchange_cycles"] + op["sync_cycles"]
        assert per_op[op["name"]] == pytest.approx(cycles / clock)
    sram = [e for e in events if e["ph"] == "C" and e["name"] == "SRAM per core (bytes)"]
    assert len(sram) == len(steps)
    assert max(e["args"]["peak"] for e in sram) <= report["peak_sram_bytes_per_core"]
    assert all(0 < e["args"]["mean"] <= e["args"]["peak"] for e in sram)
    _check_links(events, steps, report)


def _check_links(events: list[dict[str, Any]], steps: list[dict[str, Any]],
                 report: dict[str, Any]) -> None:
    """On a routing chip (the report has `links`) a utilisation per superstep, above 0 just
    when it exchanges and at most 1, and each superstep's busiest link at most its op's."""
    counter = [e for e in events if e["ph"] == "C" and e["name"] == LINK_COUNTER]
    if "links" not in report:
        assert not counter and all("busiest_link" not in s["args"] for s in steps)
        return
    assert [e["ts"] for e in counter] == [s["ts"] for s in steps]
    for e, step in zip(counter, steps, strict=True):
        utilisation = e["args"]["utilisation"]
        assert (utilisation > 0) == (step["args"]["busiest_link_bytes"] > 0)
        assert (utilisation > 0) == (step["args"]["exchange_cycles"] > 0)
        assert utilisation <= 1
    ops = {op["name"]: op["busiest_link_bytes"] for op in report["ops"]}
    for step in steps:
        assert step["args"]["busiest_link_bytes"] <= ops[step["name"]]
    busiest = max(s["args"]["busiest_link_bytes"] for s in steps)
    assert 0 < busiest <= report["links"]["busiest_bytes"]


@pytest.mark.parametrize("chip", ["test-16", "ipu-mk2", "mesh-64"])
def test_trace_of_the_mlp(tmp_path: pathlib.Path, chip: str) -> None:
    model = tmp_path / "mlp.onnx"
    model.write_bytes(mlp().SerializeToString())
    trace, report = tmp_path / "t.json", tmp_path / "r.json"
    assert main(["run", str(model), "--chip", chip, "--trace", str(trace),
                 "--report", str(report)]) == 0
    _check_trace(json.loads(trace.read_text()), json.loads(report.read_text()))


def test_trace_and_plot_of_a_bert_base_layer(tmp_path: pathlib.Path) -> None:
    """The issue's case: one BERT-base layer (sequence 32), fp16, timing only."""
    model = tmp_path / "bert.onnx"
    zoo.write("bert-base", model, batch=1, seq=32, layers=1)
    trace, report, plot = tmp_path / "t.json", tmp_path / "r.json", tmp_path / "p.png"
    assert main(["run", str(model), "--precision", "fp16", "--timing-only", "--trace",
                 str(trace), "--report", str(report), "--plot", str(plot)]) == 0
    _check_trace(json.loads(trace.read_text()), json.loads(report.read_text()))
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
