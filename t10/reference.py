"""The numerical reference: onnxruntime on the CPU with its graph optimizations off.

`--check` and every test compare the simulator with this, so it must compute what the ONNX
graph says. onnxruntime's graph fusions (level ORT_ENABLE_EXTENDED and above) do not always:
`SkipLayerNormFusion` turns `Add` then `LayerNormalization(axis=-2)` into a
`SkipLayerNormalization`, which normalizes over the last axis only (onnxruntime 1.32), and
`LayerNormFusion` has shipped similar defects in earlier releases. Its QDQ fusions change
quantised models' numbers too: DequantizeLinear → MatMul / Conv → QuantizeLinear becomes a
QLinearMatMul / QLinearConv, which requantises its integer sums with one float multiply, so
its results differ from the graph's by one quantisation step at rounding boundaries (a tiny
BERT quantised by `quantize_static`: 155 of 300 random inputs differ, by up to 0.05). The
reference therefore runs the graph node by node (`ORT_DISABLE_ALL`).
"""

from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort

from t10.errors import T10Error

__all__ = ["reference_outputs", "reference_session"]


def reference_session(model: onnx.ModelProto | str | os.PathLike[str]) -> ort.InferenceSession:
    """An onnxruntime CPU session of `model` (or the model file) that runs every node as
    written (no fusion)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3  # its warnings (e.g. an unused initializer) are not ours
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else os.fspath(model)
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def reference_outputs(
    model: onnx.ModelProto, inputs: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The model's outputs computed by `reference_session`, keyed by ONNX output name."""
    try:
        session = reference_session(model)
        names = [o.name for o in session.get_outputs()]
        values = session.run(names, inputs)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise T10Error(f"onnxruntime could not run the model for --check: {first}") from None
    return {n: np.asarray(v) for n, v in zip(names, values, strict=True)}
