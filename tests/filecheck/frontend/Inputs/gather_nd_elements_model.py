"""Writes a tiny ONNX model (for onnx-gather-nd-elements.mlir) of the two other gathers of
runtime indices: a GatherND (batch_dims 1, index pairs) of a constant table, read by an Add,
and a GatherElements (axis 1) of a graph input, returned as it is.

Usage: python gather_nd_elements_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("GatherND", ["table", "pairs"], ["rows"], name="pick", batch_dims=1),
        node("Add", ["rows", "bias"], ["y"], name="add_bias"),
        node("GatherElements", ["x", "cols"], ["z"], name="choose", axis=1),
    ]
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((2, 5, 3, 4)).astype(np.float32), "table"),
        numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "bias"),
    ]
    graph = helper.make_graph(
        nodes,
        "gathers",
        [
            helper.make_tensor_value_info("pairs", TensorProto.INT64, [2, 6, 2]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4]),
            helper.make_tensor_value_info("cols", TensorProto.INT64, [3, 2]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6, 4]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, [3, 2]),
        ],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
