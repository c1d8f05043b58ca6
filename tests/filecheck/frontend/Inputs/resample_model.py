"""Writes a tiny ONNX model (for onnx-resample.mlir): a nearest Resize x2 (torch's
nn.Upsample: asymmetric, floor), then DepthToSpace and SpaceToDepth (DCR).

Usage: python resample_model.py OUT.onnx
"""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model() -> onnx.ModelProto:
    node = helper.make_node
    nodes = [
        node("Resize", ["x", "", "scales"], ["up"], name="up", mode="nearest",
             coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        node("DepthToSpace", ["up"], ["d2s"], name="d2s", blocksize=2),
        node("SpaceToDepth", ["d2s"], ["s2d"], name="s2d", blocksize=2),
        node("Relu", ["s2d"], ["r"], name="relu"),
        node("Resize", ["r", "", "", "sizes"], ["y"], name="bilinear", mode="linear"),
    ]
    graph = helper.make_graph(
        nodes,
        "resample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 3, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3, 10])],
        [
            numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
            numpy_helper.from_array(np.array([1, 4, 3, 10], np.int64), "sizes"),
        ],
    )
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    result.ir_version = 9
    return result


if __name__ == "__main__":
    onnx.save_model(model(), sys.argv[1])
