"""Writes a tiny ONNX patch embedding, a Conv with kernel_shape == strides (for onnx-conv.mlir):
a [1, 2, 9, 8] image cut into 2x2 patches of 4x4 (the last row dropped), 3 output channels.

Usage: python conv_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((3, 2, 4, 4)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    node = helper.make_node(
        "Conv", ["x", "w", "b"], ["y"], name="patchify", kernel_shape=[4, 4], strides=[4, 4]
    )
    graph = helper.make_graph(
        [node],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 9, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
