"""`t10 bench --phases prefill,decode`: a decoder served, on a chip with off-chip memory.

One tiny sweep (a 2-layer Llama shrunk to hidden 64, on test-16 with 32,000 bytes of SRAM
per core and off-chip memory, fp16, batch 2: a prefill of 64 tokens and a decode step after
256 cached ones, whose KV caches do not fit beside one another and stream in) under t10 and
its two load baselines, run once in this process.
"""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from t10.bench import models
from t10.bench.models import (
    BINDINGS,
    DEFAULT_CONFIGS,
    PLANNER_CONFIGS,
    Case,
    SerialExecutor,
    make_sweep,
    run_case,
    run_sweep,
)
from t10.bench.plots import PLOTS, _label, write_plots
from t10.bench.table import FIGURES, format_markdown, make_rows
from t10.common.chip_spec import load_chip
from t10.common.shapes_only import in_form
from t10.errors import T10Error
from t10.examples import zoo
from t10.tools.cli import main

TINY = dataclasses.replace(zoo.ZOO["llama2-7b"].config, hidden=64, heads=4, intermediate=96)
PLANNERS = ["t10", "t10-no-overlap", "t10-next-op"]
SRAM = 32_000


@pytest.fixture(scope="module")
def chip(tmp_path_factory: pytest.TempPathFactory) -> str:
    """test-16 with `SRAM` bytes per core and off-chip memory (8 bytes a cycle, latency 100)."""
    spec = json.loads(resources.files("t10.common").joinpath("chips/test-16.json").read_text())
    spec.update(name="test-16-offchip", sram_bytes_per_core=SRAM,
                offchip={"capacity_bytes": 10**9, "bytes_per_cycle": 8, "latency_cycles": 100})
    path = tmp_path_factory.mktemp("chip") / "test-16-offchip.json"
    path.write_text(json.dumps(spec))
    return str(path)


@pytest.fixture(scope="module")
def served(chip: str) -> list[dict[str, Any]]:
    sweep = make_sweep(models=["llama2-7b"], layers=2, seq=64, batches=[2], chips=[chip],
                       planners=PLANNERS, configs={"llama2-7b": TINY},
                       phases=["prefill", "decode"], contexts=[256])
    return run_sweep(sweep, SerialExecutor())


def test_the_cases_are_prefill_then_decode_per_planner(served: list[dict[str, Any]]) -> None:
    forms = [(c["phase"], c["seq"], c["context"], c["planner"], c["status"]) for c in served]
    assert forms == [("prefill", 64, None, p, "ok") for p in PLANNERS] + [
        ("decode", 1, 256, p, "ok") for p in PLANNERS]


def test_the_figures_of_a_served_case(chip: str, served: list[dict[str, Any]]) -> None:
    clock = load_chip(chip).clock_hz
    for case in served:
        tokens = 2 * 64 if case["phase"] == "prefill" else 2  # batch × new tokens
        assert case["tokens_per_second"] == pytest.approx(tokens * clock / case["cycles"])
        assert case["roofline_fraction"] == case["bound_cycles"] / case["cycles"]
        assert 0 < case["roofline_fraction"] <= 1
        parts = {
            "compute": case["compute_cycles"] + case["sync_cycles"],
            "exchange": case["exchange_cycles"] + case["relayout_cycles"],
            "offchip": case["offchip_busy_cycles"],
        }
        assert case["binding"] in BINDINGS
        assert parts[case["binding"]] == max(parts.values())
        assert 0 <= case["wait_cycles"] <= case["offchip_busy_cycles"]
        four = sum(case[f"{s}_cycles"] for s in ("compute", "exchange", "sync", "relayout"))
        assert four + case["wait_cycles"] == case["cycles"]
    decode = [c for c in served if c["phase"] == "decode"]
    assert all(c["offchip_busy_cycles"] > 0 for c in decode)  # the caches stream in


def test_the_load_baselines_are_never_faster(served: list[dict[str, Any]]) -> None:
    """The same plans, loads right before their operator or one ahead: t10 ≤ next ≤ none,
    and where the decode step streams its caches, planning the loads gains."""
    for phase in ("prefill", "decode"):
        cycles = {c["planner"]: c["cycles"] for c in served if c["phase"] == phase}
        assert cycles["t10"] <= cycles["t10-next-op"] <= cycles["t10-no-overlap"]
    waits = {c["planner"]: c["wait_cycles"] for c in served if c["phase"] == "decode"}
    assert waits["t10"] < waits["t10-no-overlap"]
    rows = make_rows(served)
    assert rows[1]["speedup"]["t10-no-overlap"] > 1


def test_rows_and_markdown_of_served_cases(served: list[dict[str, Any]]) -> None:
    rows = make_rows(served)
    assert [(r["phase"], r["seq"], r["context"]) for r in rows] == [
        ("prefill", 64, None), ("decode", 1, 256)]
    for row in rows:
        for figure in FIGURES:
            assert row[figure] == {c["planner"]: c[figure] for c in served
                                   if c["phase"] == row["phase"]}
    text = format_markdown(rows, PLANNERS, "fp16")
    lines = text.splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[:7] == ["model", "layers", "batch", "seq", "phase", "context", "chip"]
    for name in ("tokens/s", "fraction of roofline", "binding", "off-chip busy cycles",
                 "wait cycles"):
        assert f"t10 {name}" in header
    for line, row in zip(lines[2:4], rows, strict=True):
        cells = dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
        t10 = {f: row[f]["t10"] for f in FIGURES}
        assert cells["phase"] == row["phase"]
        assert cells["context"] == ("-" if row["context"] is None else str(row["context"]))
        assert cells["t10 tokens/s"] == f"{t10['tokens_per_second']:,.0f}"
        assert cells["t10 fraction of roofline"] == f"{t10['roofline_fraction']:.2f}"
        assert cells["t10 binding"] == t10["binding"]
        assert cells["t10 wait cycles"] == f"{t10['wait_cycles']:,}"


def test_plots_of_served_rows(served: list[dict[str, Any]], tmp_path: Path) -> None:
    labels = [_label(row, False) for row in make_rows(served)]
    assert labels == ["llama2-7b (2 layers), prefill 64, batch 2",
                      "llama2-7b (2 layers), decode after 256, batch 2"]
    write_plots(make_rows(served), PLANNERS, tmp_path)
    for name in PLOTS:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_table_without_phases_or_offchip_memory_is_as_before() -> None:
    def case(planner: str) -> dict[str, Any]:
        return {"model": "m", "layers": 1, "batch": 1, "seq": 2048, "chip": "c",
                "planner": planner, "status": "ok", "cycles": 10, "error": None,
                "sram_bytes_per_core": 1, "compute_cycles": 10, "exchange_cycles": 0,
                "sync_cycles": 0, "relayout_cycles": 0, "compile_seconds": 0.0,
                "simulate_seconds": 0.0, "bound_cycles": 5, "roofline_fraction": 0.5,
                "binding": "compute", "tokens_per_second": None,
                "offchip_busy_cycles": None, "wait_cycles": None}

    text = format_markdown(make_rows([case("t10"), case("vgm")]), ["t10", "vgm"], "fp16")
    assert text.splitlines()[0].startswith("| model | layers | batch | seq | chip | t10 cycles |")
    assert "| m | 1 | 1 | 2048 | c | 10 |" in text
    assert "tokens/s" not in text and "binding" not in text


def test_a_large_model_is_built_in_the_shapes_only_form(
    monkeypatch: pytest.MonkeyPatch, chip: str, served: list[dict[str, Any]]
) -> None:
    """Above `SHAPES_ONLY_BYTES` of weights a case's model is declared without its weights;
    timing only, its cycles are those of the model with them."""
    case = Case("llama2-7b", 2, 2, 1, chip, "t10", "fp16", TINY, "decode", 256)
    assert not in_form(models._model(case))
    monkeypatch.setattr(models, "SHAPES_ONLY_BYTES", 0)
    monkeypatch.setattr(models, "_cached", None)
    assert in_form(models._model(case))
    result = run_case(case)
    [same] = [c for c in served if c["phase"] == "decode" and c["planner"] == "t10"]
    assert result["cycles"] == same["cycles"]


def test_the_load_baselines_run_only_when_named() -> None:
    for name, preload in (("t10-no-overlap", "none"), ("t10-next-op", "next")):
        options = PLANNER_CONFIGS[name]
        assert options.preload == preload and options.planner == "t10"
        assert dataclasses.replace(options, preload="planned") == PLANNER_CONFIGS["t10"]
        assert name not in DEFAULT_CONFIGS
    assert PLANNER_CONFIGS["t10"].preload == "planned"


@pytest.mark.parametrize(("options", "words"), [
    ({"models": ["bert-base"], "phases": ["prefill"]},
     "--phases applies only to the decoders (llama2-7b, opt-1.3b), not to bert-base"),
    ({"models": ["llama2-7b", "vit-base"], "phases": ["decode"]}, "not to vit-base"),
    ({"models": ["llama2-7b"], "contexts": [64]}, "--contexts (decode's cached tokens) "
                                                  "applies only with --phases decode"),
    ({"models": ["llama2-7b"], "phases": ["prefill"], "contexts": [64]},
     "applies only with --phases decode"),
    ({"models": ["llama2-7b"], "phases": ["decode"], "contexts": [5000]},
     "--context must be at most 4095"),
    ({"models": ["llama2-7b"], "phases": ["serve"]}, "unknown phase 'serve'"),
])
def test_bad_phases_are_refused(options: dict[str, Any], words: str) -> None:
    with pytest.raises(T10Error) as e:
        make_sweep(layers=1, chips=["test-16"], **options)
    assert words in str(e.value)


@pytest.mark.parametrize(("argv", "code", "words"), [
    (["--models", "bert-base", "--phases", "prefill,decode"], 1,
     "--phases applies only to the decoders"),
    (["--models", "opt-1.3b", "--phases", "decoding"], 2, "unknown phase 'decoding'"),
    (["--models", "opt-1.3b", "--contexts", "64"], 1, "applies only with --phases decode"),
    (["--models", "opt-1.3b", "--phases", "decode", "--contexts", "0"], 2,
     "comma-separated list of positive integers"),
])
def test_bad_phase_options_are_one_clean_error(
    argv: list[str], code: int, words: str, capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    assert main(["bench", *argv, "--serial", "--out", str(tmp_path)]) == code
    err = capsys.readouterr().err
    assert err.startswith("t10: error: ") and words in err and err.count("\n") == 1
