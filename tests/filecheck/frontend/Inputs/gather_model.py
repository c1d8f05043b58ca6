"""Writes a tiny ONNX embedding lookup (for onnx-gather.mlir): token ids (INT64, through an
Unsqueeze) gather rows of a constant table, plus a positional table; the gather is also a
graph output.

Usage: python gather_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Unsqueeze", ["ids", "zero"], ["ids1"], name="batch"),
        node("Gather", ["table", "ids1"], ["emb"], name="embed"),
        node("Add", ["emb", "pos"], ["y"], name="add_pos"),
    ]
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal((8, 4)).astype(np.float32), "table"),
        numpy_helper.from_array(rng.standard_normal((3, 4)).astype(np.float32), "pos"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
    ]
    graph = helper.make_graph(
        nodes,
        "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 3, 4]),
            helper.make_tensor_value_info("emb", TensorProto.FLOAT, [1, 2, 3, 4]),
        ],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
