"""The `t10-opt` pipeline run stage by stage, one process per stage reading the text IR the
previous one wrote, reports what `t10 run` reports: the plans, estimates and bounds travel
down to the chip-level module on it (`t10.planned_ops`, `t10.bound`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent


def stages(chip: str) -> list[list[str]]:
    """`t10-compile`'s passes (t10.passes.t10_compile.pass_names) cut into three stages."""
    return [
        ["-p", "t10-inline-splats,t10-fuse-elementwise,"
         f"t10-fuse-epilogue{{chip={chip}}},t10-plan-search{{chip={chip}}}"],
        ["-p", "convert-linalg-to-rtensor,convert-rtensor-to-cshift"],
        ["-p", "convert-cshift-to-core,convert-core-to-chip"],
    ]


def run(tool: str, *args: str | Path) -> str:
    done = subprocess.run(
        [str(BIN / tool), *map(str, args)], capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def stage_by_stage(model: Path, chip: str, timing_only: bool) -> dict[str, Any]:
    """The t10-sim JSON report of `model` lowered one stage per t10-opt process."""
    source = model
    for i, stage in enumerate(stages(chip)[:-1]):
        out = model.with_suffix(f".{i}.mlir")
        run("t10-opt", source, *stage, "-o", out)
        source = out
    report = model.with_suffix(".sim.json")
    target = f't10-sim{{report="{report}" timing-only={str(timing_only).lower()}}}'
    run("t10-opt", source, *stages(chip)[-1], "-t", target)
    return json.loads(report.read_text())


@pytest.mark.parametrize(
    ("name", "make", "chip", "timing_only"),
    [
        ("mm", ["examples", "matmul", "m=64", "k=64", "n=64"], "test-16", False),
        ("mlp", ["examples", "mlp", "batch=16", "sizes=64,128,32"], "test-16", False),
        ("bert", ["zoo", "bert-base", "--layers", "1", "--seq", "32"], "ipu-mk2", True),
    ],
)
def test_stage_by_stage_report_is_t10_runs(
    tmp_path: Path, name: str, make: list[str], chip: str, timing_only: bool
) -> None:
    model = tmp_path / f"{name}.onnx"
    if make[0] == "examples":
        subprocess.run(
            [sys.executable, "-m", "t10.examples", *make[1:], "-o", str(model)], check=True,
            capture_output=True,
        )
    else:
        run("t10", *make, "-o", model)
    flags = ["--timing-only"] if timing_only else []
    expected = json.loads(run("t10", "run", model, "--chip", chip, "--json", "-q", *flags))
    got = stage_by_stage(model, chip, timing_only)
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
    model = tmp_path / "mm.onnx"
    subprocess.run(
        [sys.executable, "-m", "t10.examples", "matmul", "m=64", "k=64", "n=64", "-o", str(model)],
        check=True, capture_output=True,
    )
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
