"""Zero-size (empty) values: an empty Slice or Split part, a broadcast with an empty operand,
an empty graph input or output. An empty value is a known constant (it has nothing to
compute): its readers fold, a Concat leaves it out, a graph output returns it. Every model is
simulated and compared with onnxruntime (shapes included); what t10 cannot compute from an
empty value is one clear error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import generics, randn, run_and_check, typed_model
from onnx import TensorProto, helper

from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.t10_dialects import rtensor

F, I64 = TensorProto.FLOAT, TensorProto.INT64
node = helper.make_node


def _ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _cache_concat() -> onnx.ModelProto:
    """A Phi-3-style export without past tokens: the cache is the empty slice x[:, 0:0],
    concatenated in front of the new values."""
    return typed_model(
        [
            node("Slice", ["x", "zero", "zero", "one"], ["past"], name="past"),
            node("Concat", ["past", "x"], ["kv"], axis=1, name="concat"),
            node("Relu", ["kv"], ["y"], name="relu"),
        ],
        {"x": (F, [4, 6])},
        ["y"],
        {"zero": _ints(0), "one": _ints(1)},
    )


CASES: dict[str, tuple[onnx.ModelProto, dict[str, np.ndarray]]] = {
    "empty slice into a Concat": (_cache_concat(), {"x": randn(4, 6)}),
    "empty Split part into a Concat": (
        typed_model(
            [
                node("Split", ["x", "sizes"], ["a", "b"], axis=1),
                node("Concat", ["b", "a"], ["c"], axis=1),
                node("Mul", ["c", "x"], ["y"]),
            ],
            {"x": (F, [4, 6])},
            ["y"],
            {"sizes": _ints(6, 0)},
        ),
        {"x": randn(4, 6)},
    ),
    "empty graph output next to a full one": (
        typed_model(
            [node("Slice", ["x", "s", "e", "a"], ["y"]), node("Relu", ["x"], ["z"])],
            {"x": (F, [4, 6])},
            ["y", "z"],
            {"s": _ints(3), "e": _ints(1), "a": _ints(1)},
        ),
        {"x": randn(4, 6)},
    ),
    "broadcast with an empty initializer": (
        typed_model(
            [node("Add", ["x", "b"], ["y"])],
            {"x": (F, [1, 3])},
            ["y"],
            {"b": np.zeros((0, 3), np.float32)},
        ),
        {"x": randn(1, 3)},
    ),
    "MatMul with no output columns": (
        typed_model(
            [node("MatMul", ["x", "w"], ["y"])],
            {"x": (F, [4, 6])},
            ["y"],
            {"w": np.zeros((6, 0), np.float32)},
        ),
        {"x": randn(4, 6)},
    ),
    "empty value through compute and views into a Concat": (
        typed_model(
            [
                node("Slice", ["x", "zero", "zero", "one"], ["p"]),
                node("Relu", ["p"], ["q"]),
                node("Transpose", ["q"], ["r"], perm=[1, 0]),
                node("Transpose", ["x"], ["xt"], perm=[1, 0]),
                node("Concat", ["r", "xt"], ["c"], axis=0),
                node("Exp", ["c"], ["y"]),
            ],
            {"x": (F, [4, 6])},
            ["y"],
            {"zero": _ints(0), "one": _ints(1)},
        ),
        {"x": randn(4, 6)},
    ),
    "Expand to zero rows": (
        typed_model(
            [node("Expand", ["x", "shape"], ["y"])],
            {"x": (F, [1, 6])},
            ["y"],
            {"shape": _ints(0, 6)},
        ),
        {"x": randn(1, 6)},
    ),
    "Gather of no indices": (
        typed_model(
            [node("Gather", ["x", "i"], ["g"], axis=1), node("Concat", ["g", "x"], ["y"], axis=1)],
            {"x": (F, [4, 6])},
            ["y"],
            {"i": np.zeros(0, np.int64)},
        ),
        {"x": randn(4, 6)},
    ),
    "sum over an empty slice is folded to zeros": (
        typed_model(
            [
                node("Slice", ["x", "zero", "zero", "one"], ["p"]),
                node("ReduceSum", ["p", "one"], ["r"], keepdims=1),
                node("Add", ["x", "r"], ["y"]),
            ],
            {"x": (F, [4, 6])},
            ["y"],
            {"zero": _ints(0), "one": _ints(1)},
        ),
        {"x": randn(4, 6)},
    ),
    "max over an empty graph input": (
        typed_model(
            [
                node("ReduceMax", ["x", "one"], ["r"], keepdims=0),
                node("Add", ["r", "w"], ["y"]),
            ],
            {"x": (F, [2, 0, 4])},
            ["y"],
            {"one": _ints(1), "w": randn(2, 4)},
        ),
        {"x": np.zeros((2, 0, 4), np.float32)},
    ),
    "empty INT64 graph input cast and concatenated": (
        typed_model(
            [
                node("Cast", ["ids"], ["f"], to=F),
                node("Concat", ["f", "x"], ["y"], axis=0),
            ],
            {"ids": (I64, [0, 4]), "x": (F, [3, 4])},
            ["y"],
        ),
        {"ids": np.zeros((0, 4), np.int64), "x": randn(3, 4)},
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_empty_values_match_onnxruntime(case: str) -> None:
    model, inputs = CASES[case]
    outputs = run_and_check(model, "test-16", inputs).result.outputs
    assert all(v.dtype == np.float32 for v in outputs.values())


def test_empty_concat_input_is_left_out() -> None:
    """The empty cache adds nothing: no view, the Relu reads x itself."""
    module = import_onnx(_cache_concat())
    assert not [op for op in module.walk() if isinstance(op, rtensor.ViewOp)]
    (relu,) = generics(_cache_concat())
    assert relu.inputs[0].name_hint == "x"


@pytest.mark.parametrize(
    "nodes, weights, message",
    [
        (
            [node("Gather", ["table", "ids"], ["y"], axis=0, name="lookup")],
            {"table": np.zeros((0, 4), np.float32)},
            r"node 'lookup' \(Gather\) computes with the empty value 'table' \(shape \[0, 4\]\) "
            "and its result is not empty; t10 computes non-empty tensors only",
        ),
        (
            [node("Clip", ["x", "lo"], ["y"], name="clip")],
            {"lo": np.zeros(0, np.float32)},
            r"node 'clip' \(Clip\) computes with the empty value 'lo' \(shape \[0\]\)",
        ),
    ],
)
def test_non_empty_result_of_an_empty_value_is_refused(
    nodes: list[onnx.NodeProto], weights: dict[str, np.ndarray], message: str
) -> None:
    model = typed_model(nodes, {"ids": (I64, [3]), "x": (F, [3])}, ["y"], weights)
    with pytest.raises(T10Error, match=message):
        import_onnx(model)
