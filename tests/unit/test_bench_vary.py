"""Chip variants (`t10.common.chip_spec.vary_chip`, `BASE[PATH=VALUE]`) and `t10 bench
--vary`: a sweep over one chip parameter, its table, JSON and plot."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from test_bench_models import PLANNERS, TINY, tiny_sweep

from t10.bench.models import SerialExecutor, run_sweep
from t10.bench.plots import VARY_PLOT
from t10.bench.sweep import FILES, run_and_write
from t10.bench.table import make_rows
from t10.common.chip_spec import (
    builtin_chip_names,
    chip_parameter,
    load_chip,
    vary_chip,
)
from t10.common.topologies import MeshTopology
from t10.errors import T10Error
from t10.examples import zoo
from t10.tools.cli import main


def test_a_variant_is_the_chip_with_that_field_changed() -> None:
    base = load_chip("ipu-mk2")
    variant = load_chip("ipu-mk2[sram_bytes_per_core=262144]")
    assert variant == dataclasses.replace(base, name="ipu-mk2[sram_bytes_per_core=262144]",
                                          sram_bytes_per_core=262144)
    mesh = load_chip("mesh-64")
    assert isinstance(mesh.topology, MeshTopology)
    name = "mesh-64[topology.link_cycles_per_byte=0.5][matmul.orientation=lhs-rows]"
    assert load_chip(name) == dataclasses.replace(
        mesh, name=name, topology=dataclasses.replace(mesh.topology, link_cycles_per_byte=0.5),
        matmul=dataclasses.replace(mesh.matmul, orientation="lhs-rows"))


@pytest.mark.parametrize("chip", builtin_chip_names())
def test_every_parameter_set_to_its_own_value_gives_the_chip_back(chip: str) -> None:
    """The edit goes through the chip's JSON and its parser: every parameter of every chip
    reads back as it was (nothing lost or changed on the way)."""
    base = load_chip(chip)
    paths = [p for p in _paths(base.to_dict()) if p not in ("name", "description")]
    assert "sram_bytes_per_core" in paths
    for path in paths:
        value = chip_parameter(base, path)
        text = value if isinstance(value, str) else json.dumps(value)
        assert vary_chip(base, path, text, base.name) == base, path


def _paths(obj: dict[str, Any], prefix: str = "") -> list[str]:
    return [q for k, v in obj.items()
            for q in (_paths(v, f"{prefix}{k}.") if isinstance(v, dict) else [prefix + k])]


@pytest.mark.parametrize(
    ("chip", "error"),
    [
        ("ipu-mk2[sram_bytes_per_core=abc]",
         "chip variant 'ipu-mk2[sram_bytes_per_core=abc]': the value 'abc' of "
         "sram_bytes_per_core is not a number"),
        ("ipu-mk2[sram_bytes_per_core=0]",
         "chip variant 'ipu-mk2[sram_bytes_per_core=0]': field 'sram_bytes_per_core' must be an "
         "integer from 1 to 1099511627776, got 0"),
        ("mesh-64[topology.rows=4]",
         "chip variant 'mesh-64[topology.rows=4]': field 'topology' is a 4x8 mesh (32 cores) but "
         "'cores' is 64"),
        ("mesh-64[topology.wrap=1]",
         "chip variant 'mesh-64[topology.wrap=1]': the value '1' of topology.wrap is not true "
         "or false"),
        ("ipu-mk2[sram]",
         "chip variant 'ipu-mk2[sram]': expected BASE[PARAMETER=VALUE], e.g. "
         "ipu-mk2[sram_bytes_per_core=262144]"),
    ],
)
def test_a_bad_variant_is_one_error_naming_the_parameter(chip: str, error: str) -> None:
    with pytest.raises(T10Error) as e:
        load_chip(chip)
    assert str(e.value) == error


def test_an_unknown_parameter_names_the_known_ones() -> None:
    with pytest.raises(T10Error) as e:
        load_chip("test-16[topology.rows=4]")
    assert str(e.value).startswith("chip 'test-16' has no parameter 'topology.rows': choose "
                                   "from cores, sram_bytes_per_core, clock_hz, ")
    assert str(e.value).endswith(", topology.kind")


@pytest.mark.parametrize(
    ("argv", "code", "error"),
    [
        (["--vary", "sram_bytes_per_core"], 2, "expected PARAMETER=VALUE,..."),
        (["--vary", "sram_bytes_per_core=1,"], 2, "expected PARAMETER=VALUE,..."),
        (["--vary", "sram=1"], 1, "chip 'ipu-mk2' has no parameter 'sram': choose from"),
        (["--vary", "sram_bytes_per_core=1e5"], 1,
         "field 'sram_bytes_per_core' must be an integer"),
        (["--chips", "mesh-64", "--vary", "topology.rows=8,4"], 1,
         "'mesh-64[topology.rows=4]': field 'topology' is a 4x8 mesh (32 cores) but 'cores' "
         "is 64"),
    ],
)
def test_bad_vary_options_are_one_clean_error(
    argv: list[str], code: int, error: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--serial", *argv]) == code
    err = capsys.readouterr().err
    assert err.startswith("t10: error: ") and error in err and err.count("\n") == 1


SRAM = (65536, 262144)


def test_a_sweep_over_sram_runs_every_variant(tmp_path: Path) -> None:
    sweep = tiny_sweep(batches=[4], vary=("sram_bytes_per_core", [str(s) for s in SRAM]))
    assert sweep.chips == tuple(f"test-16[sram_bytes_per_core={s}]" for s in SRAM)
    cases = run_sweep(sweep, SerialExecutor())
    assert [(c["chip"], c["planner"], c["status"]) for c in cases] == [
        ("test-16[sram_bytes_per_core=65536]", "t10", "does not fit"),
        ("test-16[sram_bytes_per_core=65536]", "replicate", "does not fit"),
        ("test-16[sram_bytes_per_core=262144]", "t10", "ok"),
        ("test-16[sram_bytes_per_core=262144]", "replicate", "does not fit"),
    ]
    assert [c["varied"] for c in cases] == [{"sram_bytes_per_core": s} for s in SRAM
                                            for _ in PLANNERS]
    assert [c["sram_bytes_per_core"] for c in cases] == [s for s in SRAM for _ in PLANNERS]
    rows = make_rows(cases)
    assert [r["varied"] for r in rows] == [{"sram_bytes_per_core": s} for s in SRAM]

    text = run_and_write(sweep, tmp_path, serial=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted((*FILES, VARY_PLOT))
    assert (tmp_path / VARY_PLOT).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    header = text.splitlines()[0]
    assert header.startswith("| model | layers | batch | seq | chip | sram_bytes_per_core | ")
    assert "| test-16[sram_bytes_per_core=65536] | 65,536 | does not fit" in text
    assert ("peak SRAM against test-16[sram_bytes_per_core=65536]'s 65.5 KB per core, "
            "test-16[sram_bytes_per_core=262144]'s 262.1 KB per core;") in text  # in order
    document = json.loads((tmp_path / "bench.json").read_text())
    assert document["settings"]["vary"] == "sram_bytes_per_core"
    assert [r["varied"] for r in document["rows"]] == [{"sram_bytes_per_core": s} for s in SRAM]


def test_cli_bench_vary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(zoo.ZOO, "bert-base", dataclasses.replace(zoo.ZOO["bert-base"],
                                                                  config=TINY))
    argv = ["bench", "--models", "bert-base", "--layers", "1", "--seq", "64", "--batches",
            "1", "--chips", "test-16", "--vary", "sram_bytes_per_core=262144",
            "--planners", "t10", "--serial", "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "| bert-base | 1 | 1 | 64 | test-16[sram_bytes_per_core=262144] | 262,144 |" in out
    assert f"{tmp_path / VARY_PLOT}" in out
