"""Writes a tiny ONNX model with an empty cache slice (for onnx-empty.mlir).

Usage: python empty_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Slice", ["x", "zero", "zero", "one"], ["past"], name="past"),
        node("Concat", ["past", "x"], ["kv"], name="concat", axis=1),
        node("Relu", ["kv"], ["y"], name="relu"),
    ]
    ints = {"zero": [0], "one": [1]}
    graph = helper.make_graph(
        nodes,
        "empty",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 8]),
            helper.make_tensor_value_info("past", TensorProto.FLOAT, [2, 0, 8]),
        ],
        [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in ints.items()],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
