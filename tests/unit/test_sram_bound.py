"""The plan search's memory model against the simulator: whatever the SRAM per core, the
search either refuses the model with a "does not fit" error, or its plans run in the
simulator within the bound it recorded (`t10.model_bytes`), which is within the chip."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from pathlib import Path

import onnx
import pytest

from t10.cli import CHECK_TOLERANCES, run_model
from t10.errors import T10Error
from t10.examples.zoo import ZOO

DATA = Path(__file__).parent / "data"
FRACTIONS = (0.85, 0.72, 0.6, 0.3)
"""SRAM per core as fractions of what the unconstrained plans need."""


def _tiny_llama(path: Path) -> Path:
    """A Llama decoder layer whose residual stream and rotary tables outlive operators."""
    config = dataclasses.replace(ZOO["llama2-7b"].config, hidden=64, heads=4, intermediate=96)
    onnx.save(ZOO["llama2-7b"].build(2, 8, config=config), path)
    return path


def _test16_with(sram: int, directory: Path) -> str:
    """A chip file: test-16 with `sram` bytes per core."""
    spec = json.loads(resources.files("t10.sim").joinpath("chips/test-16.json").read_text())
    path = directory / f"sram{sram}.json"
    path.write_text(json.dumps({**spec, "name": f"sram{sram}", "sram_bytes_per_core": sram}))
    return str(path)


@pytest.mark.parametrize("model", ["llama", "mlp_3layer.torchscript.onnx"])
def test_plans_fit_the_simulator_at_every_sram_size(model: str, tmp_path: Path) -> None:
    path = _tiny_llama(tmp_path / "llama.onnx") if model == "llama" else DATA / model
    free = run_model(str(path), chip="test-16").report
    needed = free["planned_sram_bytes_per_core"]
    assert free["peak_sram_bytes_per_core"] <= needed
    outcomes = []
    for fraction in FRACTIONS:
        sram = int(needed * fraction) // 4 * 4
        try:
            report = run_model(
                str(path), chip=_test16_with(sram, tmp_path), check=CHECK_TOLERANCES["fp32"]
            ).report
        except T10Error as err:
            assert f"does not fit chip 'sram{sram}'" in str(err)
            outcomes.append("refused")
            continue
        assert report["check"]["passed"]
        assert report["peak_sram_bytes_per_core"] <= report["planned_sram_bytes_per_core"] <= sram
        assert report["total_cycles"] >= free["total_cycles"]
        outcomes.append("fits")
    # the sizes reach both outcomes: squeezed plans that still run, then a refusal
    assert outcomes[0] == "fits" and outcomes[-1] == "refused"
