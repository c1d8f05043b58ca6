"""Writes a tiny ONNX ConvTranspose (for onnx-conv-transpose.mlir): a [1, 2, 3] signal, a
kernel of 3 taps at stride 2 with pads [1, 0], 2 input and 2 output channels and a bias; the
output is 2·(3 - 1) + 3 - 1 = 6 long.

Usage: python conv_transpose_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    weight = np.arange(12, dtype=np.float32).reshape(2, 2, 3)  # [C, O, k]
    bias = np.array([0.5, -0.5], dtype=np.float32)
    node = helper.make_node(
        "ConvTranspose", ["x", "w", "b"], ["y"], name="convt", strides=[2], pads=[1, 0]
    )
    graph = helper.make_graph(
        [node],
        "conv_transpose",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
