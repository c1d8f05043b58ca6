"""Writes a tiny ONNX model of torch-style shape arithmetic and masks (for onnx-folding.mlir).

Usage: python folding_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        # new shape [rows, -1] of a bias, computed from the shape of x: folds to a constant
        node("Shape", ["x"], ["shape"], name="shape"),
        node("Gather", ["shape", "zero"], ["rows"], name="gather", axis=0),
        node("Unsqueeze", ["rows", "zero_1d"], ["rows_1d"], name="unsqueeze"),
        node("Concat", ["rows_1d", "minus_one"], ["new_shape"], name="concat", axis=0),
        node("Reshape", ["bias", "new_shape"], ["bias_2d"], name="reshape"),
        node("Add", ["x", "bias_2d"], ["a"], name="add"),
        # a causal mask from Range and comparisons: folds to a BOOL constant
        node("Range", ["zero", "cols", "one"], ["pos"], name="range"),
        node("Unsqueeze", ["pos", "one_1d"], ["pos_col"], name="pos_col"),
        node("LessOrEqual", ["pos", "pos_col"], ["causal"], name="causal"),
        node("Slice", ["causal", "zero_1d", "rows_1d"], ["mask"], name="slice"),
        node("Where", ["mask", "a", "neg"], ["w"], name="where"),
        # broadcast to a leading batch dim of a shape built by ConstantOfShape + Concat
        node("ConstantOfShape", ["one_1d"], ["two_1d"], name="cos",
             value=numpy_helper.from_array(np.array([2], dtype=np.int64))),
        node("Concat", ["two_1d", "shape"], ["batch_shape"], name="batch_shape", axis=0),
        node("Expand", ["w", "batch_shape"], ["y"], name="expand"),
    ]
    graph = helper.make_graph(
        nodes,
        "folding",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 8])],
        [
            numpy_helper.from_array(np.linspace(-1, 1, 32, dtype=np.float32), "bias"),
            numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
            numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
            numpy_helper.from_array(np.array(8, dtype=np.int64), "cols"),
            numpy_helper.from_array(np.array([0], dtype=np.int64), "zero_1d"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "one_1d"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus_one"),
            numpy_helper.from_array(np.array(-1e4, dtype=np.float32), "neg"),
        ],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save_model(model(), sys.argv[1])
