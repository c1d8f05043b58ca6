"""The convolutional networks the onnx package ships (`onnx/backend/test/data/light/`), their
one-value ConstantOfShape weights replaced by seeded random ones and converted to opset 13,
compiled for ipu-mk2, simulated and checked against onnxruntime.

squeezenet runs by default (about 35 s here); the others pass too, in (on this 2-core machine)
shufflenet 17 s, alexnet 36 s, zfnet512 48 s, resnet50 100 s (under load), inception_v1 122 s,
inception_v2 126 s, densenet121 152 s and vgg19 188 s:

    T10_LIGHT_MODELS=all .venv/bin/pytest -q tests/unit/test_light_models.py
    T10_LIGHT_MODELS=bvlc_alexnet,inception_v1 .venv/bin/pytest -q tests/unit/test_light_models.py
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import run_and_check
from onnx import numpy_helper

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


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """`model` with each ConstantOfShape weight an initializer of seeded random values: He
    normal for the weights of Conv / Gemm (fan in: all dims but the first), positive variances
    and scales near one for BatchNormalization, N(0, 0.1²) for everything else."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    role: dict[str, str] = {}
    for node in graph.node:
        if node.op_type == "BatchNormalization":
            role.update({node.input[1]: "scale", node.input[4]: "variance"})
    rng = np.random.default_rng(seed)
    made = []
    for node in [n for n in graph.node if n.op_type == "ConstantOfShape"]:
        shape = tuple(int(d) for d in inits[node.input[0]])
        name = node.output[0]
        if role.get(name) in ("scale", "variance"):
            value = 1.0 + 0.1 * np.abs(rng.standard_normal(shape))
        elif len(shape) >= 2:
            value = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))
        else:
            value = 0.1 * rng.standard_normal(shape)
        made.append(numpy_helper.from_array(value.astype(np.float32), name))
        graph.node.remove(node)
    names = {t.name for t in made}
    graph.initializer.extend(made)
    kept = [i for i in graph.input if i.name not in names]
    del graph.input[:]
    graph.input.extend(kept)
    model.ir_version = max(model.ir_version, 4)  # initializers need not be graph inputs
    return onnx.version_converter.convert_version(model, 13)  # opset 9's Softmax is 2-D


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
