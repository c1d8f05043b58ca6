"""Writes a tiny ONNX model of math functions, Round, Swish and IsInf (for onnx-math.mlir).

Usage: python math_model.py OUT.onnx
"""

import sys

import onnx
from onnx import TensorProto, helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Atanh", ["x"], ["at"], name="atanh"),
        node("Round", ["at"], ["r"], name="round"),
        node("Swish", ["r"], ["sw"], name="swish", alpha=0.5),
        node("IsInf", ["sw"], ["inf"], name="isinf", detect_negative=0),
        node("Cast", ["inf"], ["y"], name="cast", to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes,
        "math",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    result.ir_version = 10
    return result


if __name__ == "__main__":
    onnx.save_model(model(), sys.argv[1])
