"""Writes a tiny ONNX grouped convolution (for onnx-conv.mlir): a [1, 4, 5, 4] image, a 3x3
kernel at stride 2 with one pixel of zero padding all round, 2 groups of 2 input and 2 output
channels.

Usage: python conv_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    node = helper.make_node(
        "Conv",
        ["x", "w", "b"],
        ["y"],
        name="conv",
        kernel_shape=[3, 3],
        strides=[2, 2],
        pads=[1, 1, 1, 1],
        group=2,
    )
    graph = helper.make_graph(
        [node],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 2])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
