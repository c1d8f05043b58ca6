"""Writes a tiny ONNX model of math functions, Round, Swish, IsInf, Trilu and OneHot (for
onnx-math.mlir).

Usage: python math_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Atanh", ["x"], ["at"], name="atanh"),
        node("Round", ["at"], ["r"], name="round"),
        node("Swish", ["r"], ["sw"], name="swish", alpha=0.5),
        node("IsInf", ["sw"], ["inf"], name="isinf", detect_negative=0),
        node("Cast", ["inf"], ["flag"], name="cast", to=TensorProto.FLOAT),
        node("Trilu", ["flag", "k"], ["y"], name="trilu", upper=0),
        node("OneHot", ["r", "depth", "values"], ["hot"], name="onehot", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "math",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6]),
            helper.make_tensor_value_info("hot", TensorProto.FLOAT, [4, 3, 6]),
        ],
        [
            numpy_helper.from_array(np.array(1, dtype=np.int64), "k"),
            numpy_helper.from_array(np.array(3, dtype=np.float32), "depth"),
            numpy_helper.from_array(np.array([0.0, 1.0], dtype=np.float32), "values"),
        ],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    result.ir_version = 10
    return result


if __name__ == "__main__":
    onnx.save_model(model(), sys.argv[1])
