"""Writes the smallest runtime mask (for onnx-masks.mlir): an INT64 attention mask compared with
0 at run time, and the comparison selecting between the scores and a large negative value.

Usage: python mask_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Equal", ["mask", "zero"], ["pad"], name="pad"),
        node("Where", ["pad", "neg", "scores"], ["y"], name="masked"),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(-1e4, np.float32), "neg"),
    ]
    graph = helper.make_graph(
        nodes,
        "mask",
        [
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 4]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, [2, 4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
