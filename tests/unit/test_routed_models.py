"""Models on the chips whose interconnect routes (a mesh, a torus, a multi-chip pod): every
exchange (shifts, all-reduces, relayouts, gathers) carries its messages, the simulator routes
them over the chip's links, and the plan search's estimate of every op is its simulated cost;
the outputs match onnxruntime as on an all-to-all chip."""

from __future__ import annotations

import pytest
from test_every_model import MODELS, assert_consistent

from t10.driver import CompileOptions, check_tolerance, run_model

ROUTED_CHIPS = ("mesh-64", "wormhole-n150", "ipu-pod4")
ROUTED_MODELS = (
    "example:mlp",
    "example:bert-ffn",
    "returned_gathers",
    "zoo:bert-base",
    "zoo:llama2-7b",
    "zoo:opt-1.3b",
    "zoo:resnet50",
)


@pytest.mark.parametrize("name", ROUTED_MODELS)
@pytest.mark.parametrize("chip", ROUTED_CHIPS)
def test_routed_estimates_equal_the_simulation_and_outputs_match(chip: str, name: str) -> None:
    run = run_model(MODELS[name](), CompileOptions(chip=chip), check=check_tolerance("fp32"))
    assert run.check is not None and run.check.passed, run.check
    assert_consistent(run.report, chip)



def test_the_wafer_patch_runs_a_model() -> None:
    # 2,304 cores on a 48x48 mesh: one small model (each plan's rings and groups routed)
    run = run_model(MODELS["example:mlp"](), CompileOptions(chip="wafer-48x48"),
                    check=check_tolerance("fp32"))
    assert run.check is not None and run.check.passed, run.check
    assert_consistent(run.report, "wafer-48x48")
