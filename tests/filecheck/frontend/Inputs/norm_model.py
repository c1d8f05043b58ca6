"""Writes a tiny ONNX model of norms, log-sum-exp and ArgMax, with a CastLike and a Size (for
onnx-norms.mlir).

Usage: python norm_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("ReduceL2", ["x", "axes"], ["l2"], name="l2", keepdims=1),
        node("Div", ["x", "l2"], ["unit"], name="unit"),
        node("ReduceLogSumExp", ["unit", "axes"], ["lse"], name="lse", keepdims=0),
        node("Size", ["unit"], ["n"], name="n"),
        node("CastLike", ["n", "lse"], ["nf"], name="nf"),
        node("Mul", ["lse", "nf"], ["scaled"], name="scaled"),
        node("RMSNormalization", ["x", "g"], ["rms"], name="rms", epsilon=1e-3),
        node("LpNormalization", ["rms"], ["lp"], name="lp", p=1, axis=0),
        node("ArgMax", ["lp"], ["arg"], name="arg", axis=1, keepdims=0),
        node("Cast", ["arg"], ["argf"], name="argf", to=TensorProto.FLOAT),
        node("Add", ["scaled", "argf"], ["y"], name="y"),
    ]
    graph = helper.make_graph(
        nodes,
        "norms",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
            numpy_helper.from_array(np.linspace(0.5, 1.5, 6, dtype=np.float32), "g"),
        ],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    result.ir_version = 10
    return result


if __name__ == "__main__":
    onnx.save_model(model(), sys.argv[1])
