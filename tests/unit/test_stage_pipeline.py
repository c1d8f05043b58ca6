"""The `t10-opt` pipeline run stage by stage, one process per stage reading the text IR the
previous one wrote, reports what `t10 run` reports: the plans, estimates and bounds travel
down to the chip-level module on it (`t10.planned_ops`, `t10.bound`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

BIN = Path(sys.executable).parent
MATMUL = ("matmul", "m=64", "k=64", "n=64")


def stages(chip: str) -> list[list[str]]:
    """`t10-compile`'s passes (t10.passes.t10_compile.pass_names) cut into three stages."""
    return [
        ["-p", "t10-inline-splats,t10-fuse-elementwise,"
         f"t10-fuse-epilogue{{chip={chip}}},t10-plan-search{{chip={chip}}}"],
        ["-p", "convert-linalg-to-rtensor,convert-rtensor-to-cshift"],
        ["-p", "convert-cshift-to-core,convert-core-to-chip"],
    ]


def example(path: Path, *args: str) -> Path:
    """The built-in example `args` (`python -m t10.examples ...`) written to `path`."""
    subprocess.run(
        [sys.executable, "-m", "t10.examples", *args, "-o", str(path)], check=True,
        capture_output=True,
    )
    return path


def run(tool: str, *args: str | Path) -> str:
    done = subprocess.run(
        [str(BIN / tool), *map(str, args)], capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def stage_by_stage(model: Path, chip: str) -> dict[str, Any]:
    """The t10-sim JSON report of `model` lowered one stage per t10-opt process."""
    source = model
    for i, stage in enumerate(stages(chip)[:-1]):
        out = model.with_suffix(f".{i}.mlir")
        run("t10-opt", source, *stage, "-o", out)
        source = out
    report = model.with_suffix(".sim.json")
    run("t10-opt", source, *stages(chip)[-1], "-t", f't10-sim{{report="{report}"}}')
    return json.loads(report.read_text())


@pytest.mark.parametrize(
    "args", [list(MATMUL), ["mlp", "batch=16", "sizes=64,128,32"]]
)
def test_stage_by_stage_report_is_t10_runs(tmp_path: Path, args: list[str]) -> None:
    """Through the commands (every test model and zoo architecture is compared in process,
    through text IR, by test_every_model; a BERT-Base layer by the FileCheck test)."""
    model = example(tmp_path / f"{args[0]}.onnx", *args)
    expected = json.loads(run("t10", "run", model, "--chip", "test-16", "--json", "-q"))
    got = stage_by_stage(model, "test-16")
    assert expected.pop("model") == str(model) and got.pop("model") is None
    assert got["ops"] == expected["ops"]  # column for column, op by op
    assert got == expected
    planned = [op for op in got["ops"] if op["plan"] is not None]
    assert planned and all(op["estimated_cycles"] and op["bound_cycles"] for op in planned)
    assert got["estimated_total_cycles"] and got["bound_cycles"]


def test_a_plan_edited_after_the_search_is_refused_until_searched_again(tmp_path: Path) -> None:
    """The record is the plan search's: a plan edited after it would be lowered while the
    report showed the recorded one, so the lowering refuses it; the search pins and records
    it."""
    model = example(tmp_path / "mm.onnx", *MATMUL)
    planned = tmp_path / "planned.mlir"
    run("t10-opt", model, "-p", "t10-plan-search{chip=test-16}", "-o", planned)
    old, new = (f"t10.plan = #rtensor.plan<grid {g}>" for g in ("[2, 4, 2]", "[4, 2, 2]"))
    assert old in planned.read_text()
    planned.write_text(planned.read_text().replace(old, new))
    done = subprocess.run(
        [str(BIN / "t10-opt"), str(planned), "-p", "convert-linalg-to-rtensor"],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1
    assert done.stderr == (
        "t10-opt: error: convert-linalg-to-rtensor: operator 'matmul' has the plan "
        "#rtensor.plan<grid [4, 2, 2]>, but the module's 't10.planned_ops' records "
        "#rtensor.plan<grid [2, 4, 2]> (a plan edited after t10-plan-search); rerun "
        "t10-plan-search, which keeps a generic's t10.plan as pinned and records it\n"
    )
    lowering = "convert-linalg-to-rtensor,convert-rtensor-to-cshift,convert-cshift-to-core,"
    report = run(
        "t10-opt", planned, "-p", f"t10-plan-search{{chip=test-16}},{lowering}"
        "convert-core-to-chip", "-t", "t10-sim",
    )
    assert report.splitlines()[-1].endswith("#rtensor.plan<grid [4, 2, 2]>")


@pytest.fixture(scope="module")
def chip_mm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 64³ matmul: its ONNX file and its chip-level module on test-16."""
    tmp = tmp_path_factory.mktemp("mm")
    model = example(tmp / "mm.onnx", *MATMUL)
    chip_level = tmp / "mm.chip.mlir"
    run("t10-opt", model, "-p", "t10-compile{chip=test-16}", "-o", chip_level)
    return model, chip_level


def test_t10_sim_files_are_t10_runs(chip_mm: tuple[Path, Path], tmp_path: Path) -> None:
    """`t10-sim`'s inputs, outputs, report and trace options read and write what `t10 run`'s
    do: the same outputs from the same inputs, the same report, the same trace events."""
    model, chip_level = chip_mm
    rng = np.random.default_rng(5)
    given = tmp_path / "in.npz"
    np.savez(given, input=rng.standard_normal((64, 64)).astype(np.float32))
    exts = {"outputs": "npz", "report": "json", "trace": "json"}
    run("t10", "run", model, "--chip", "test-16", "-q", "--inputs", given, "--check",
        *[arg for name, ext in exts.items()
          for arg in (f"--{name}", tmp_path / f"run.{name}.{ext}")])
    options = " ".join(f'{name}="{tmp_path}/sim.{name}.{ext}"' for name, ext in exts.items())
    printed = run("t10-opt", chip_level, "-t", f't10-sim{{inputs="{given}" {options}}}')
    ran, simulated = (np.load(tmp_path / f"{tool}.outputs.npz") for tool in ("run", "sim"))
    assert list(ran) == list(simulated) == ["output"]
    np.testing.assert_array_equal(ran["output"], simulated["output"])
    expected = json.loads((tmp_path / "run.report.json").read_text())
    got = json.loads((tmp_path / "sim.report.json").read_text())
    for key in ("model", "max_abs_error", "max_rel_error", "rms_error", "check", "outputs"):
        expected.pop(key, None)
    assert got.pop("model") is None
    assert got == expected
    assert "plan-search estimate" in printed
    trace_run, trace_sim = (json.loads((tmp_path / f"{tool}.trace.json").read_text())
                            for tool in ("run", "sim"))
    events = [e for e in trace_run["traceEvents"] if e.get("ph") == "X"]
    assert events and events == [e for e in trace_sim["traceEvents"] if e.get("ph") == "X"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ('inputs="{tmp}/none.npz"', "t10-sim: option 'inputs' '{tmp}/none.npz': no such file"),
        ('inputs="{tmp}/wrong.npz"', "t10-sim: the inputs do not match the model: input "
         "'input' has shape [3, 3], expected [64, 64] (the model takes input float32 [64, 64])"),
        ('timing-only=true outputs="{tmp}/o.npz"', "t10-sim: option 'timing-only' computes no "
         "output values: it cannot take option 'outputs'"),
        ('inputs="{tmp}/wrong.npz" seed=2', "t10-sim: option 'seed' draws random inputs: it "
         "cannot take option 'inputs' too"),
        ('inputs="{tmp}/wrong.npz" outputs="{tmp}/wrong.npz"', "t10-sim: option 'outputs' "
         "'{tmp}/wrong.npz' is the file of option 'inputs' '{tmp}/wrong.npz': it would be "
         "overwritten; give another file name"),
        ('report="{tmp}/r.json" trace="{tmp}/r.json"', "t10-sim: option 'report' "
         "'{tmp}/r.json' and option 'trace' '{tmp}/r.json' are one file: give each its own "
         "name"),
        ('outputs="{tmp}/no/o.npz"', "t10-sim: option 'outputs' '{tmp}/no/o.npz': directory "
         "'{tmp}/no' does not exist"),
    ],
)
def test_t10_sim_option_errors_are_one_line(
    chip_mm: tuple[Path, Path], tmp_path: Path, options: str, message: str
) -> None:
    np.savez(tmp_path / "wrong.npz", input=np.zeros((3, 3), np.float32))
    done = subprocess.run(
        [str(BIN / "t10-opt"), str(chip_mm[1]), "-t",
         f"t10-sim{{{options.format(tmp=tmp_path)}}}"],
        capture_output=True, text=True, timeout=600,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"t10-opt: error: {message.format(tmp=tmp_path)}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wrong.npz"]  # nothing written
