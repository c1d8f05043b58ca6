"""`t10 bench`: the whole-model sweep (t10.bench.models), its table, files and plots, on Ray
and in this process.

One tiny sweep (a 1-layer BERT shrunk to hidden 256 on test-16, seq 64, t10 and replicate,
doubling batches) covers every kind of row: both planners fit (batch 1), only t10 fits
(2, 4, 8), nothing fits (16, which ends the sweep). It runs once in this process and once on a local
Ray; their results must be equal but for the seconds.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import default_signal

from t10.bench.models import (
    DEFAULT_CONFIGS,
    PLANNER_CONFIGS,
    Case,
    SerialExecutor,
    Sweep,
    make_sweep,
    run_case,
    run_sweep,
)
from t10.bench.plots import PLOTS, write_plots
from t10.bench.ray import RayExecutor, require
from t10.bench.sweep import FILES, run_and_write
from t10.bench.table import TIMINGS, format_markdown, make_rows, summarize, to_json
from t10.errors import T10Error
from t10.examples import zoo
from t10.planning.forked import Terminated, ending_signals
from t10.tools.cli import main

TINY = dataclasses.replace(zoo.ZOO["bert-base"].config, hidden=256, heads=2,
                           intermediate=512, vocab=100, max_positions=64)
PLANNERS = ["t10", "replicate"]


def tiny_sweep(**options: Any) -> Sweep:
    return make_sweep(models=["bert-base"], layers=1, seq=64, chips=["test-16"],
                      planners=PLANNERS, configs={"bert-base": TINY}, **options)


def untimed(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in c.items() if k not in TIMINGS} for c in cases]


@pytest.fixture(scope="module")
def serial() -> list[dict[str, Any]]:
    return run_sweep(tiny_sweep(), SerialExecutor())


@pytest.fixture(scope="module")
def ray_started() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_the_sweep_doubles_batches_until_nothing_fits(serial: list[dict[str, Any]]) -> None:
    status = [(c["batch"], c["planner"], c["status"]) for c in serial]
    assert status == [
        (1, "t10", "ok"), (1, "replicate", "ok"),
        (2, "t10", "ok"), (2, "replicate", "does not fit"),
        (4, "t10", "ok"), (4, "replicate", "does not fit"),
        (8, "t10", "ok"), (8, "replicate", "does not fit"),
        (16, "t10", "does not fit"), (16, "replicate", "does not fit"),
    ]
    ok = serial[0]
    parts = sum(ok[f"{s}_cycles"] for s in ("compute", "exchange", "sync", "relayout"))
    assert parts == ok["cycles"] > 0
    assert 0 < ok["peak_sram_bytes_per_core"] <= ok["sram_bytes_per_core"] == 262144
    assert ok["compile_seconds"] > 0 and ok["simulate_seconds"] > 0
    unfit = serial[-2]  # t10 at batch 16
    assert unfit["needed_sram_bytes_per_core"] > unfit["sram_bytes_per_core"]
    assert "does not fit chip 'test-16'" in unfit["error"]


def test_ray_sweep_equals_the_serial_one(
    ray_started: None, serial: list[dict[str, Any]]
) -> None:
    with RayExecutor() as executor:  # joins the running Ray, leaves it running
        on_ray = run_sweep(tiny_sweep(), executor)
    assert untimed(on_ray) == untimed(serial)
    strip = [{k: v for k, v in r.items() if k not in TIMINGS} for r in make_rows(on_ray)]
    assert strip == [{k: v for k, v in r.items() if k not in TIMINGS}
                     for r in make_rows(serial)]


def test_a_signal_while_waiting_for_ray_ends_the_sweep(ray_started: None) -> None:
    """What a handler raises inside Ray's wait would come out of it as a SystemError (an
    internal error): the signal waits for the wait to end. (SIGHUP: Ray takes SIGTERM.)"""
    import ray

    with default_signal(signal.SIGHUP), RayExecutor() as executor, ending_signals():
        executor.pending = [ray.remote(lambda: time.sleep(60)).remote()]
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGHUP)).start()
        with pytest.raises(Terminated):
            executor.next_result()


def test_a_ray_started_here_leaves_t10_its_signals(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ray.init` takes SIGTERM for a handler that exits at once (a stack dump, exit 1):
    `t10 bench` keeps its own, which stops the sweep and shuts Ray down on the way out."""
    ray = pytest.importorskip("ray")

    def init(**_: Any) -> None:  # as Ray's does
        signal.signal(signal.SIGTERM, lambda *_: os._exit(1))

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    with ending_signals():
        ours = signal.getsignal(signal.SIGTERM)
        with RayExecutor():
            assert signal.getsignal(signal.SIGTERM) is ours


def test_explicit_batches_run_as_given(serial: list[dict[str, Any]]) -> None:
    cases = run_sweep(tiny_sweep(batches=[4]), SerialExecutor())
    assert untimed(cases) == untimed([c for c in serial if c["batch"] == 4])


def test_rows_speedups_and_geometric_mean(serial: list[dict[str, Any]]) -> None:
    rows = make_rows(serial)
    assert [r["batch"] for r in rows] == [1, 2, 4, 8, 16]
    by = {(c["batch"], c["planner"]): c for c in serial}
    first = rows[0]
    assert first["speedup"]["replicate"] == by[1, "replicate"]["cycles"] / by[1, "t10"]["cycles"]
    assert math.isclose(sum(first["shares"]["t10"].values()), 1.0)
    assert first["t10_over_bound"] == by[1, "t10"]["cycles"] / by[1, "t10"]["bound_cycles"]
    assert first["t10_over_bound"] >= 1
    assert rows[1]["speedup"] == {"replicate": None}
    assert rows[4]["cycles"] == {"t10": None, "replicate": None}
    [s] = summarize(rows)
    assert s.baseline == "replicate"
    assert math.isclose(s.geomean_speedup or 0, first["speedup"]["replicate"])
    assert (s.rows_both_fit, s.rows_only_t10_fits, s.rows_only_baseline_fits) == (1, 3, 0)


def test_geometric_mean_without_a_row_where_both_fit() -> None:
    def case(planner: str, status: str, cycles: int | None) -> dict[str, Any]:
        return {"model": "m", "layers": 1, "batch": 1, "seq": 8, "chip": "c",
                "planner": planner, "status": status, "cycles": cycles, "error": "x",
                "sram_bytes_per_core": 1, "compute_cycles": cycles, "exchange_cycles": 0,
                "sync_cycles": 0, "relayout_cycles": 0, "compile_seconds": 0.0,
                "simulate_seconds": 0.0}

    rows = make_rows([case("t10", "ok", 10), case("vgm", "does not fit", None)])
    [s] = summarize(rows)
    assert s.geomean_speedup is None and s.rows_only_t10_fits == 1
    text = format_markdown(rows, ["t10", "vgm"], "fp16")
    assert "| does not fit |" in text
    assert "t10 over vgm: geometric-mean speedup - over the 0 rows where both fit; vgm does " \
           "not fit in 1 rows where t10 fits" in text


def test_markdown_rows_equal_the_json(serial: list[dict[str, Any]], tmp_path: Path) -> None:
    document = json.loads(to_json(serial, {"precision": "fp16"}))
    assert document["cases"] == serial
    rows = document["rows"]
    text = format_markdown(rows, PLANNERS, "fp16")
    assert text == format_markdown(make_rows(serial), PLANNERS, "fp16")
    lines = [line for line in text.splitlines() if line.startswith("| bert-base")]
    assert len(lines) == len(rows)
    for line, row in zip(lines, rows, strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[:5] == [str(row[k]) for k in ("model", "layers", "batch", "seq", "chip")]
        cycles = row["cycles"]["t10"]
        assert cells[5] == (f"{cycles:,}" if cycles else row["failure"]["t10"])
        speedup = row["speedup"]["replicate"]
        assert cells[7] == ("-" if speedup is None else f"{speedup:.2f}×")
    assert lines[4].count("does not fit") == 2
    write_plots(rows, PLANNERS, tmp_path)
    for name in PLOTS:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_run_and_write_writes_every_file(tmp_path: Path) -> None:
    out = tmp_path / "new" / "dir"
    text = run_and_write(tiny_sweep(batches=[1]), out, serial=True)
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    assert (out / "bench.md").read_text() == text + "\n"
    assert json.loads((out / "bench.json").read_text())["settings"]["planners"] == PLANNERS


def test_cli_bench(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = dataclasses.replace(zoo.ZOO["bert-base"], config=TINY)
    monkeypatch.setitem(zoo.ZOO, "bert-base", tiny)
    argv = ["bench", "--models", "bert-base", "--layers", "1", "--seq", "64", "--batches",
            "2", "--chips", "test-16", "--planners", "t10,replicate", "--serial",
            "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| bert-base | 1 | 2 | 64 | test-16 |" in out
    assert "t10 over replicate: geometric-mean speedup" in out
    assert f"wrote {tmp_path / 'bench.json'}" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["--models", "bert-tiny"], 2, "unknown zoo model 'bert-tiny'"),
        (["--planners", "t10,fast"], 2, "unknown planner configuration 'fast'"),
        (["--batches", "1,two"], 2, "comma-separated list of positive integers"),
        (["--batches", "0"], 2, "comma-separated list of positive integers"),
        (["--serial", "--address", "x:1"], 2, "not allowed with argument"),
        (["--case-memory", "0"], 2, "expected a positive number, got '0'"),
        (["--case-memory", "inf"], 2, "expected a positive number, got 'inf'"),
        (["--chips", "nosuch"], 1, "unknown chip 'nosuch'"),
        (["--planners", "replicate"], 1, "must include 't10'"),
        (["--models", "vit-base", "--seq", "100"], 1, "is not a ViT token count"),
        (["--models", "bert-base", "--layers", "13"], 1, "--layers must be between 1 and 12"),
    ],
)
def test_bad_options_are_one_clean_error(
    argv: list[str], code: int, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", *argv]) == code
    err = capsys.readouterr().err
    assert err.startswith("t10: error: ") and words in err and err.count("\n") == 1


def test_missing_packages_name_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(T10Error, match=r"needs 'no_such_package_x', not installed: pip "
                                       r"install 't10-xdsl\[bench\]'"):
        require(["json", "no_such_package_x"])
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    assert main(["bench", "--quick"]) == 1
    assert capsys.readouterr().err == ("t10: error: t10 bench needs 'ray', not installed: pip "
                                       "install 't10-xdsl[bench]'\n")


SMALL = dataclasses.replace(zoo.ZOO["bert-base"].config, hidden=128, heads=4,
                            intermediate=512, vocab=50)


@pytest.mark.parametrize("batch", [1, 16])
def test_the_model_bound_is_the_same_for_every_planner(batch: int) -> None:
    """The bound is the model's, not the plans': the planners run some epilogues apart
    (where memory binds) and others fused, but the bound sums the operators as they enter the
    plan search."""
    bounds = {}
    for planner in PLANNER_CONFIGS:
        case = Case("bert-base", 1, batch, 16, "test-16", planner, "fp16", SMALL)
        result = run_case(case)
        if result["status"] == "ok":
            bounds[planner] = result["bound_cycles"]
    assert len(bounds) >= 2 and len(set(bounds.values())) == 1, bounds


@pytest.mark.parametrize(("planner", "rule"), [
    ("vgm", "the smallest plans need"),
    ("t10-fastest", "every operator's fastest plan needs"),
])
def test_needs_is_what_the_planners_choice_needs(planner: str, rule: str) -> None:
    """`needed_sram_bytes_per_core` (the table's "needs N KB/core") is one measure per
    planner, the bytes of the choice its rule makes, as its error says, whether smaller
    plans would fit or not; beyond the chip's SRAM, and growing with the batch."""
    needs = []
    for batch in (8, 16):
        result = run_case(Case("bert-base", 1, batch, 64, "test-16", planner, "fp16", TINY))
        assert result["status"] == "does not fit", result["error"]
        needed = result["needed_sram_bytes_per_core"]
        assert f"{rule} {needed} bytes per core" in result["error"]
        assert needed > result["sram_bytes_per_core"]
        needs.append(needed)
    assert needs == sorted(needs)


def test_the_linear_configuration_runs_only_when_named_and_measures_placement() -> None:
    # t10-linear is t10 placed linearly: not run by default; on mesh-64 beside t10 it is
    # never faster, on an all-to-all chip it is t10 exactly
    assert "t10-linear" in PLANNER_CONFIGS and "t10-linear" not in DEFAULT_CONFIGS
    assert make_sweep(models=["bert-base"], layers=1, seq=64, chips=["test-16"],
                      configs={"bert-base": TINY}).planners == tuple(DEFAULT_CONFIGS)
    for chip, same in (("mesh-64", False), ("test-16", True)):
        cycles = {}
        for planner in ("t10", "t10-linear"):
            result = run_case(Case("bert-base", 1, 2, 64, chip, planner, "fp16", TINY))
            assert result["status"] == "ok", result["error"]
            cycles[planner] = result["cycles"]
        assert cycles["t10"] <= cycles["t10-linear"]
        assert (cycles["t10"] == cycles["t10-linear"]) or not same
