"""Writes a tiny ONNX model of data-movement operators (for onnx-views.mlir).

Usage: python view_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Reshape", ["x", "heads"], ["x4"], name="split_heads"),
        node("Transpose", ["x4"], ["xt"], name="to_heads", perm=[0, 2, 1, 3]),
        node("Neg", ["xt"], ["n"], name="neg"),
        node("Slice", ["n", "starts", "ends", "axes", "steps"], ["s"], name="every_other"),
        node("Flatten", ["s"], ["y"], name="flat", axis=2),
    ]
    ints = {
        "heads": [2, 4, 2, 3],
        "starts": [0],
        "ends": [4],
        "axes": [2],
        "steps": [2],
    }
    graph = helper.make_graph(
        nodes,
        "views",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])],
        [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in ints.items()],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
