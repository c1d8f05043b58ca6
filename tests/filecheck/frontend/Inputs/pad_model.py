"""Writes a tiny ONNX model of constant-mode Pads (for onnx-pad.mlir).

Usage: python pad_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Pad", ["x", "zero_pads"], ["z"], name="pad_zeros"),
        node("Relu", ["z"], ["r"], name="relu"),
        node("Pad", ["r", "fill_pads", "value", "axes"], ["f"], name="pad_fill"),
        node("Pad", ["f", "no_pads"], ["n"], name="pad_nothing"),
        node("Pad", ["n", "mirror_pads"], ["m"], name="pad_reflect", mode="reflect"),
        node("Pad", ["m", "wrap_pads"], ["y"], name="pad_wrap", mode="wrap"),
    ]
    ints = {
        "zero_pads": [0, 1, 0, 2],  # [2, 5] -> [2, 8]
        "fill_pads": [1, -2],  # axis 1 of [2, 8]: one column of 1.5 before, two cropped after
        "axes": [-1],
        "no_pads": [0, 0, 0, 0],
        "mirror_pads": [0, 2, 0, 1],  # [2, 7] -> [2, 10]: x[2], x[1] before, x[5] after
        "wrap_pads": [1, 0, 0, 0],  # [2, 10] -> [3, 10]: the last row first
    }
    inits = [numpy_helper.from_array(np.array(v, dtype=np.int64), n) for n, v in ints.items()]
    inits.append(numpy_helper.from_array(np.array(1.5, dtype=np.float32), "value"))
    graph = helper.make_graph(
        nodes,
        "pads",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 10])],
        inits,
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
