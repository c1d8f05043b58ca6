"""Writes a tiny ONNX model of reductions (for onnx-reductions.mlir).

Usage: python reduction_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Softmax", ["x"], ["sm"], name="softmax", axis=1),
        node("LayerNormalization", ["sm", "g", "b"], ["ln"], name="ln", epsilon=1e-3),
        node("ReduceMax", ["ln", "axes"], ["mx"], name="rmax", keepdims=1),
        node("ReduceSum", ["mx", "axes"], ["sum"], name="rsum", keepdims=0),
        node("ReduceMean", ["ln", "axes"], ["y"], name="rmean", keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "reductions",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [4]),
            helper.make_tensor_value_info("sum", TensorProto.FLOAT, [4]),
        ],
        [
            numpy_helper.from_array(np.linspace(1, 2, 6, dtype=np.float32), "g"),
            numpy_helper.from_array(np.linspace(-1, 1, 6, dtype=np.float32), "b"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
        ],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save_model(model(), sys.argv[1])
