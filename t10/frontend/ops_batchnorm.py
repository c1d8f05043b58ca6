"""BatchNormalization in inference mode: per channel, `y = x·a + shift` with the known
constants `a = scale/√(var+ε)` and `shift = B − mean·a` (computed in float64 at compile time).

A BatchNormalization that alone reads a Conv's output is folded into that Conv's weight and
bias instead (``ops_conv``): the Conv defines the BatchNormalization's output, and the
lowering here has nothing left to do.
"""

from __future__ import annotations

import numpy as np
import onnx

from t10.frontend.importer import Importer, Shape, lowering, node_attributes, node_inputs

SUPPORTED_BATCH_NORM = (
    "t10 supports BatchNormalization in inference mode (training_mode 0, spatial 1, only the "
    "output Y) over an input [N, C, ...] with compile-time constant scale, B, input_mean and "
    "input_var of shape [C]"
)


def batch_norm_affine(
    imp: Importer, node: onnx.NodeProto, x: Shape
) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel (a, shift) as float64 [C] arrays for an input of shape `x`, or one error
    naming what is unsupported."""
    attrs = node_attributes(node)
    names = node_inputs(node)
    for attr, want in (("training_mode", 0), ("spatial", 1)):
        if int(attrs.get(attr, want)) != want:
            raise imp.node_error(
                node, f"attribute {attr}={attrs[attr]} is not supported; {SUPPORTED_BATCH_NORM}"
            )
    extra = [o for o in node.output[1:] if o]
    if extra:
        raise imp.node_error(
            node, f"the training outputs {extra} are not supported; {SUPPORTED_BATCH_NORM}"
        )
    if len(names) != 5:
        raise imp.node_error(node, f"it has {len(names)} inputs, not 5; {SUPPORTED_BATCH_NORM}")
    if len(x) < 2:
        raise imp.node_error(node, f"input X has shape {list(x)}; {SUPPORTED_BATCH_NORM}")
    params = []
    for name, role in zip(names[1:], ("scale", "B", "input_mean", "input_var"), strict=True):
        if not imp.is_known(name):
            raise imp.node_error(
                node, f"{role} '{name}' is computed at run time; {SUPPORTED_BATCH_NORM}"
            )
        value = imp.constant(name)
        if value.shape != (x[1],):
            raise imp.node_error(
                node,
                f"{role} '{name}' has shape {list(value.shape)}, input X {list(x)}; "
                f"{SUPPORTED_BATCH_NORM}",
            )
        params.append(value.astype(np.float64))
    scale, bias, mean, var = params
    eps = float(attrs.get("epsilon", 1e-5))
    a = scale / np.sqrt(var + eps)
    return a, bias - mean * a


@lowering("BatchNormalization", attributes={"epsilon", "momentum", "training_mode", "spatial"})
def lower_batch_normalization(imp: Importer, node: onnx.NodeProto) -> None:
    if node.output[0] in imp.values:  # folded into the Conv that computes its input
        return
    x, shape = imp.use(node.input[0])
    a, shift = batch_norm_affine(imp, node, shape)
    per_channel = (shape[1], *[1] * (len(shape) - 2))
    constants = [
        (imp.add_constant(f"{node.output[0]}_{what}", v.astype(np.float32).reshape(per_channel),
                          hoist=True), per_channel)
        for what, v in (("bn_scale", a), ("bn_shift", shift))
    ]
    y = imp.elementwise(
        [(x, shape), *constants], shape, lambda bb, v: bb.add(bb.mul(v[0], v[1]), v[2])
    )
    imp.define(node.output[0], y, shape)
