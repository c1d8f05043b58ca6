"""Writes a tiny ONNX model (for onnx-input-range.mlir): OPT-style positions, the cumulative
sum of the graph input `attention_mask` times the mask, cast to FLOAT.

Usage: python mask_positions_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("CumSum", ["attention_mask", "axis"], ["cs"], name="positions"),
        node("Mul", ["cs", "attention_mask"], ["masked"], name="masked"),
        node("Cast", ["masked"], ["y"], name="as_float", to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes,
        "mask_positions",
        [helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
        [numpy_helper.from_array(np.array(1, np.int64), "axis")],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


if __name__ == "__main__":
    onnx.save(model(), sys.argv[1])
