"""Writes a tiny ONNX model of activations with attributes, PRelu and LogSoftmax (for
onnx-activations.mlir).

Usage: python activation_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("LeakyRelu", ["x"], ["leaky"], name="leaky", alpha=0.25),
        node("Softplus", ["leaky"], ["soft"], name="softplus"),
        node("PRelu", ["soft", "slope"], ["prelu"], name="prelu"),
        node("LogSoftmax", ["prelu"], ["y"], name="log_softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "activations",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [numpy_helper.from_array(np.linspace(-1, 1, 8, dtype=np.float32), "slope")],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save_model(model(), sys.argv[1])
