"""Writes a tiny ONNX model of element-wise operators (for onnx-elementwise.mlir).

Usage: python elementwise_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Div", ["x", "b"], ["div"], name="div"),
        node("Sigmoid", ["div"], ["sig"], name="sigmoid"),
        node("Pow", ["sig", "two"], ["pow"], name="pow"),
        node("Sqrt", ["pow"], ["sqrt"], name="sqrt"),
        node("Reciprocal", ["sqrt"], ["rec"], name="reciprocal"),
        node("Neg", ["rec"], ["neg"], name="neg"),
        node("Exp", ["neg"], ["exp"], name="exp"),
        node("Tanh", ["exp"], ["tanh"], name="tanh"),
        node("Erf", ["tanh"], ["erf"], name="erf"),
        node("Dropout", ["erf"], ["drop"], name="dropout"),
        node("Cast", ["drop"], ["cast"], name="cast", to=TensorProto.FLOAT),
        node("Gelu", ["cast"], ["gelu"], name="gelu"),
        node("Gelu", ["gelu"], ["y"], name="gelu_tanh", approximate="tanh"),
    ]
    graph = helper.make_graph(
        nodes,
        "elementwise",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [
            numpy_helper.from_array(np.linspace(1, 2, 8, dtype=np.float32), "b"),
            numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two"),
        ],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save_model(model(), sys.argv[1])
