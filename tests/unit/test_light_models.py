"""The convolutional networks the onnx package ships (`onnx/backend/test/data/light/`), their
one-value ConstantOfShape weights replaced by seeded random ones, at their own opsets (8 and
9: BatchNormalization's and Softmax's older forms among them), compiled for ipu-mk2,
simulated and checked against onnxruntime.

squeezenet runs by default (about 35 s here); the others pass too, in (on this 2-core machine)
shufflenet 17 s, alexnet 36 s, zfnet512 48 s, resnet50 100 s (under load), inception_v1 122 s,
inception_v2 126 s, densenet121 152 s and vgg19 188 s:

    T10_LIGHT_MODELS=all .venv/bin/pytest -q tests/unit/test_light_models.py
    T10_LIGHT_MODELS=bvlc_alexnet,inception_v1 .venv/bin/pytest -q tests/unit/test_light_models.py
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
from helpers import run_and_check, with_random_weights

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
MODELS = [
    "squeezenet",
    "bvlc_alexnet",
    "zfnet512",
    "inception_v1",
    "inception_v2",
    "densenet121",
    "vgg19",
    "resnet50",
    "shufflenet",
]
DEFAULT = {"squeezenet"}
_chosen = os.environ.get("T10_LIGHT_MODELS", "")
CHOSEN = set(MODELS) if _chosen == "all" else set(filter(None, _chosen.split(","))) or DEFAULT


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n, marks=pytest.mark.skipif(n not in CHOSEN, reason="T10_LIGHT_MODELS selects it")
        )
        for n in MODELS
    ],
)
def test_light_model_matches_onnxruntime(name: str) -> None:
    model = with_random_weights(onnx.load(str(LIGHT / f"light_{name}.onnx")))
    run_and_check(model, "ipu-mk2", seed=1)
