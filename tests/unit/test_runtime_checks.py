"""Nodes onnxruntime refuses only when it RUNS them (its kernels check the actual shapes): t10
refuses each exactly when onnxruntime does, naming the node, and imports the others."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.reference import reference_session

OPSET = 17


def _model(
    nodes: list[onnx.NodeProto], x: tuple[int, ...], inits: list[onnx.TensorProto]
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model


def _ort_refusal(model: onnx.ModelProto, x: tuple[int, ...]) -> str | None:
    """The node onnxruntime refuses to run ``model`` at, on an ``x`` of zeros (None: it runs
    it)."""
    try:
        # graph optimizations off (`reference_session`): node names kept as written
        reference_session(model).run(None, {"x": np.zeros(x, np.float32)})
    except Exception as e:
        found = re.search(r"Name:'([^']*)'", str(e))
        assert found, str(e)
        return found.group(1)
    return None


def _concat(cls: tuple[int, ...], expand: list[int], x: tuple[int, ...]) -> onnx.ModelProto:
    """A ViT's cls token: ``cls`` expanded by a shape computed in the graph (-1 → 1, as
    torch exports ``expand``), so onnx's shape inference does not know the Expand's shape,
    concatenated with ``x`` on axis 1."""
    shape = np.array(expand, np.int64)
    nodes = [
        helper.make_node("Equal", ["s", "m"], ["e"], name="eq"),
        helper.make_node("Where", ["e", "one", "s"], ["w"], name="where"),
        helper.make_node("Expand", ["cls", "w"], ["c"], name="expand"),
        helper.make_node("Concat", ["c", "x"], ["y"], name="cat", axis=1),
    ]
    inits = [
        numpy_helper.from_array(np.ones(cls, np.float32), "cls"),
        numpy_helper.from_array(shape, "s"),
        numpy_helper.from_array(np.full(shape.shape, -1, np.int64), "m"),
        numpy_helper.from_array(np.ones(shape.shape, np.int64), "one"),
    ]
    return _model(nodes, x, inits)


def _op(op: str, x: tuple[int, ...], w: tuple[int, ...] | None) -> onnx.ModelProto:
    node = helper.make_node(op, ["x", "w"] if w is not None else ["x"], ["y"], name="n")
    if op in ("MaxPool", "AveragePool"):
        node.attribute.append(helper.make_attribute("kernel_shape", [2, 2]))
    inits = [numpy_helper.from_array(np.ones(w, np.float32), "w")] if w is not None else []
    return _model([node], x, inits)


_CASES = [
    (_concat((1, 1, 3), [2, -1, -1], (1, 4, 3)), (1, 4, 3)),
    (_concat((1, 1, 3), [1, -1, -1], (1, 4, 3)), (1, 4, 3)),
    (_concat((1, 1, 3), [2, -1, -1], (2, 4, 3)), (2, 4, 3)),
    (_concat((1, 1, 3), [1, -1, 2], (1, 4, 3)), (1, 4, 3)),
    *[
        (_op(op, x, w if op == "Conv" else (w[1], w[0], *w[2:])), x)
        for op in ("Conv", "ConvTranspose")
        for x, w in [
            ((1, 2, 0, 4), (2, 2, 1, 1)),
            ((1, 2, 4, 0), (2, 2, 1, 1)),
            ((0, 2, 4, 4), (2, 2, 1, 1)),
            ((1, 2, 4, 4), (2, 2, 1, 1)),
        ]
    ],
    *[
        (_op(op, x, None), x)
        for op in ("MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool")
        for x in [(1, 0, 4, 4), (1, 2, 0, 4), (0, 2, 4, 4), (1, 2, 4, 4)]
    ],
]


@pytest.mark.parametrize(
    ("model", "x"),
    _CASES,
    ids=[f"{m.graph.node[-1].op_type}-{list(x)}-{k}" for k, (m, x) in enumerate(_CASES)],
)
def test_a_node_is_refused_iff_onnxruntime_refuses_to_run_it(
    model: onnx.ModelProto, x: tuple[int, ...]
) -> None:
    node = _ort_refusal(model, x)
    if node is None:
        import_onnx(model)
        return
    with pytest.raises(T10Error) as e:
        import_onnx(model)
    assert f"node '{node}'" in str(e.value)
