"""Static folding, Where, Expand and integer graph inputs end to end: ONNX models as torch
exports them (shape arithmetic, masks, an int64 attention mask) compiled to the chip level,
simulated, and checked against onnxruntime; and the errors for what stays unsupported."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import generics, randn, run_and_check, typed_model
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import StringAttr

from t10.driver import CompileOptions, compile_module
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.frontend.folding import NUMPY_FOLDS, evaluate
from t10.reference import reference_session

node = helper.make_node


def _const(name: str, value: np.ndarray) -> onnx.NodeProto:
    return node("Constant", [], [name], value=numpy_helper.from_array(value, name))


def torch_shape_chain() -> onnx.ModelProto:
    """y = x + bias.reshape(x.shape[0], -1) * float(x.shape[1]), with the shape arithmetic
    a torch export emits (Shape, Gather, Unsqueeze, Concat, Cast)."""
    return typed_model(
        [
            node("Shape", ["x"], ["shape"]),
            node("Gather", ["shape", "zero"], ["rows"], axis=0),
            node("Unsqueeze", ["rows", "zero_1d"], ["rows_1d"]),
            node("Concat", ["rows_1d", "minus_one"], ["new_shape"], axis=0),
            node("Reshape", ["bias", "new_shape"], ["bias_2d"]),
            node("Gather", ["shape", "one"], ["cols"], axis=0),
            node("Cast", ["cols"], ["cols_f"], to=TensorProto.FLOAT),
            node("Mul", ["bias_2d", "cols_f"], ["scaled"]),
            node("Add", ["x", "scaled"], ["y"]),
        ],
        {"x": (TensorProto.FLOAT, [6, 10])},
        ["y"],
        {
            "bias": np.linspace(-1, 1, 60, dtype=np.float32),
            "zero": np.array(0, dtype=np.int64),
            "one": np.array(1, dtype=np.int64),
            "zero_1d": np.array([0], dtype=np.int64),
            "minus_one": np.array([-1], dtype=np.int64),
        },
    )


def test_shape_arithmetic_folds_to_one_constant(chip: str) -> None:
    model = torch_shape_chain()
    (add,) = generics(model)
    assert add.attributes["t10.name"] == StringAttr("Add_8")
    const = add.inputs[1].owner
    assert isinstance(const, arith.ConstantOp)
    assert const.result.type.get_shape() == (6, 10)
    run_and_check(model, chip, {"x": randn(6, 10)})


def test_reduce_axes_computed_from_constants(chip: str) -> None:
    """The axes of ReduceSum are an INT64 Concat of Constant nodes, folded."""
    model = typed_model(
        [
            _const("a", np.array([0], dtype=np.int64)),
            _const("b", np.array([-1], dtype=np.int64)),
            node("Concat", ["a", "b"], ["axes"], axis=0),
            node("ReduceSum", ["x", "axes"], ["y"], keepdims=1),
        ],
        {"x": (TensorProto.FLOAT, [4, 5, 6])},
        {"y": [1, 5, 1]},  # shape inference does not see through the folded axes
    )
    run_and_check(model, chip, {"x": randn(4, 5, 6)})


def test_float_computation_on_constants_folds() -> None:
    """Sqrt(w) · 2 of an initializer is evaluated at import: one generic remains."""
    model = typed_model(
        [
            node("Sqrt", ["w"], ["s"]),
            node("Mul", ["s", "two"], ["t"]),
            node("Add", ["x", "t"], ["y"]),
        ],
        {"x": (TensorProto.FLOAT, [3, 4])},
        ["y"],
        {"w": np.arange(12, dtype=np.float32).reshape(3, 4), "two": np.float32(2).reshape(1)},
    )
    (add,) = generics(model)
    run_and_check(model, "test-16", {"x": randn(3, 4)})


def test_non_foldable_op_is_listed_as_unsupported() -> None:
    """Hardmax folds on constants (it needs no lowering), but is unsupported at run time."""
    model = typed_model(
        [node("Hardmax", ["x"], ["y"])],
        {"x": (TensorProto.FLOAT, [4, 3])},
        ["y"],
        {},
    )
    with pytest.raises(T10Error, match=r"unsupported ONNX operators in model .*: Hardmax \(1\)"):
        import_onnx(model)


def test_fold_only_op_on_a_runtime_value() -> None:
    model = typed_model(
        [
            node("ConstantOfShape", ["s"], ["c"], name="cos"),
            node("Add", ["c", "x"], ["y"]),
        ],
        {"x": (TensorProto.FLOAT, [4, 3]), "s": (TensorProto.INT64, [2])},
        ["y"],
    )
    with pytest.raises(
        T10Error,
        match=r"node 'cos' \(ConstantOfShape\): the result needs a runtime value, which t10 "
        r"does not compute: input 's' is computed at run time",
    ):
        import_onnx(model)


def test_known_integer_constant_read_by_compute() -> None:
    """A folded INT64 value may feed a shape or further folding, not float compute."""
    model = typed_model(
        [
            node("Shape", ["x"], ["shape"]),
            node("Pow", ["x", "shape"], ["y"], name="pow"),
        ],
        {"x": (TensorProto.FLOAT, [2])},
        ["y"],
    )
    with pytest.raises(
        T10Error, match=r"constant 'shape' has element type INT64 and node 'pow' \(Pow\)"
    ):
        import_onnx(model)


# --------------------------------------------------------------------------------------------
# Folding exactness: numpy where onnx.reference fails or differs, the reference elsewhere
# --------------------------------------------------------------------------------------------


def _onnxruntime_node(
    op: onnx.NodeProto, feeds: dict[str, np.ndarray], opset: int = 20
) -> list[np.ndarray]:
    """``op`` alone in onnxruntime at ``opset``, its inputs fed at run time (nothing folded
    by it)."""
    inputs = [
        helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for n, v in feeds.items()
    ]
    outputs = [helper.make_value_info(o, onnx.TypeProto()) for o in op.output]
    model = helper.make_model(
        helper.make_graph([op], "node", inputs, outputs),
        opset_imports=[helper.make_opsetid("", opset)],
    )
    model.ir_version = 9 if opset >= 15 else 6
    return reference_session(onnx.shape_inference.infer_shapes(model)).run(None, feeds)


def _ints(*values: int, dtype: type = np.int64) -> np.ndarray:
    return np.array(values, dtype=dtype)


def _scalar(value: float, dtype: type) -> np.ndarray:
    return np.array(value, dtype=dtype)


_RNG = np.random.default_rng(7)
_WIDE = _RNG.standard_normal((3, 100)).astype(np.float32)
_QUANTIZED = np.array(
    [[np.inf, -np.inf, np.nan, 0.25], [2.5, 3.5, -2.5, -0.75], [1e9, -1e9, 0.125, 100.0]],
    np.float32,
)
"""Values to quantise: infinities, NaN, ties at half steps, values beyond every type."""

_FILL = helper.make_tensor("v", TensorProto.INT64, [1], [7])

FOLD_CASES: dict[str, tuple[onnx.NodeProto, dict[str, np.ndarray]]] = {
    # numpy (NUMPY_FOLDS)
    "GatherElements axis of 100 (ALBERT)": (
        node("GatherElements", ["d", "i"], ["y"], axis=1),
        {"d": _WIDE, "i": _RNG.integers(-100, 100, (3, 100))},
    ),
    "GatherElements 65 x 1 on axis 0": (
        node("GatherElements", ["d", "i"], ["y"], axis=0),
        {"d": _WIDE.reshape(-1, 1)[:65], "i": _RNG.integers(0, 65, (65, 1))},
    ),
    "GatherElements indices smaller off the axis": (
        node("GatherElements", ["d", "i"], ["y"], axis=-1),
        {"d": _WIDE.astype(np.int64), "i": _RNG.integers(0, 100, (2, 5)).astype(np.int32)},
    ),
    "OneHot scalar depth": (
        node("OneHot", ["i", "d", "v"], ["y"], axis=0),
        {"i": _ints(1, 99, -1, 100, -101), "d": _ints(100).reshape(()), "v": _ints(3, 7)},
    ),
    "Range float32 accumulates": (
        node("Range", ["s", "l", "d"], ["y"]),
        {
            "s": _scalar(0.1, np.float32),
            "l": _scalar(100, np.float32),
            "d": _scalar(0.3, np.float32),
        },
    ),
    "Range int32 down": (
        node("Range", ["s", "l", "d"], ["y"]),
        {"s": _scalar(40, np.int32), "l": _scalar(-3, np.int32), "d": _scalar(-7, np.int32)},
    ),
    "Range empty": (
        node("Range", ["s", "l", "d"], ["y"]),
        {"s": _scalar(5, np.int64), "l": _scalar(1, np.int64), "d": _scalar(1, np.int64)},
    ),
    "ConstantOfShape int64": (
        node("ConstantOfShape", ["s"], ["y"], value=_FILL),
        {"s": _ints(3, 100)},
    ),
    "ConstantOfShape default": (node("ConstantOfShape", ["s"], ["y"]), {"s": _ints(2, 0)}),
    # onnx.reference, on long axes
    "Gather": (node("Gather", ["d", "i"], ["y"], axis=1), {"d": _WIDE, "i": _ints(99, -100, 50)}),
    "Slice negative step": (
        node("Slice", ["d", "s", "e", "a", "st"], ["y"]),
        {"d": _WIDE, "s": _ints(90), "e": _ints(10), "a": _ints(1), "st": _ints(-3)},
    ),
    "Concat of 70": (
        node("Concat", [f"x{k}" for k in range(70)], ["y"], axis=0),
        {f"x{k}": _ints(k) for k in range(70)},
    ),
    "Tile": (node("Tile", ["d", "r"], ["y"]), {"d": _WIDE, "r": _ints(2, 40)}),
    "CumSum reverse exclusive": (
        node("CumSum", ["d", "a"], ["y"], reverse=1, exclusive=1),
        {"d": np.arange(100, dtype=np.int32), "a": _scalar(0, np.int64)},
    ),
    "Trilu": (node("Trilu", ["d", "k"], ["y"], upper=1), {"d": _WIDE, "k": _scalar(-1, np.int64)}),
    "ScatterND": (
        node("ScatterND", ["d", "i", "u"], ["y"]),
        {"d": _WIDE, "i": _ints(0, 99, 2, -1).reshape(2, 2), "u": _WIDE[0, :2].copy()},
    ),
    "Where": (
        node("Where", ["c", "a", "b"], ["y"]),
        {"c": _RNG.random((100, 1)) > 0.5, "a": _WIDE[:1], "b": _WIDE[1:2]},
    ),
    "Expand": (node("Expand", ["d", "s"], ["y"]), {"d": _WIDE[:, :1], "s": _ints(2, 3, 100)}),
    "Equal": (node("Equal", ["a", "b"], ["y"]), {"a": np.arange(100), "b": _ints(5)}),
    "Cast float to int64": (
        node("Cast", ["d"], ["y"], to=TensorProto.INT64),
        {"d": np.array([-1.7, 2.5, 1e10, -0.5], np.float32)},
    ),
    "Div int64 truncates": (node("Div", ["a", "b"], ["y"]), {"a": _ints(-7, 7, -1), "b": _ints(2)}),
}


@pytest.mark.parametrize("case", FOLD_CASES)
def test_folded_node_matches_onnxruntime_exactly(case: str) -> None:
    """Each value, element type and shape as onnxruntime computes them."""
    op, feeds = FOLD_CASES[case]
    for got, want in zip(evaluate(op, feeds, {"": 20}), _onnxruntime_node(op, feeds), strict=True):
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_array_equal(got, want)


_BLOCK = _RNG.standard_normal((2, 3, 4)).astype(np.float32)

LEGACY_FOLD_CASES: dict[str, tuple[int, onnx.NodeProto, dict[str, np.ndarray]]] = {
    "Softmax coerced to 2-D": (11, node("Softmax", ["d"], ["y"]), {"d": _BLOCK}),
    "LogSoftmax coerced at axis 0": (11, node("LogSoftmax", ["d"], ["y"], axis=0), {"d": _BLOCK}),
    "Unsqueeze axes attribute": (11, node("Unsqueeze", ["d"], ["y"], axes=[0, 3]), {"d": _BLOCK}),
    "Squeeze axes attribute": (
        11, node("Squeeze", ["d"], ["y"], axes=[1]), {"d": _BLOCK[:, :1]}
    ),
    "ReduceSum axes attribute": (
        11, node("ReduceSum", ["d"], ["y"], axes=[1], keepdims=0), {"d": _BLOCK}
    ),
    "Split attribute": (11, node("Split", ["d"], ["y", "z"], axis=2, split=[1, 3]), {"d": _BLOCK}),
    "Slice attributes": (
        9, node("Slice", ["d"], ["y"], starts=[1], ends=[3], axes=[2]), {"d": _BLOCK}
    ),
    "Pad attributes": (
        10, node("Pad", ["d"], ["y"], pads=[0, 1, 0, 0, 2, 0], value=2.0), {"d": _BLOCK}
    ),
    "Clip attributes": (10, node("Clip", ["d"], ["y"], min=-0.5, max=0.25), {"d": _BLOCK}),
    **{
        f"Resize-10 {mode} x{scale}": (
            10,
            node("Resize", ["d", "s"], ["y"], mode=mode),
            {"d": _BLOCK.reshape(1, 2, 3, 4), "s": np.array([1, 1, scale, scale], np.float32)},
        )
        for mode in ("nearest", "linear")
        for scale in (2.0, 1.5, 0.6)
    },
    "Upsample-9 linear": (
        9,
        node("Upsample", ["d", "s"], ["y"], mode="linear"),
        {"d": _BLOCK.reshape(1, 2, 3, 4), "s": np.array([1, 1, 2.5, 3], np.float32)},
    ),
    "Upsample-7 linear attribute": (
        7,
        node("Upsample", ["d"], ["y"], mode="linear", scales=[1.0, 1.0, 2.0, 3.0]),
        {"d": _BLOCK.reshape(1, 2, 3, 4)},
    ),
    "Upsample-7 nearest attribute": (
        7,
        node("Upsample", ["d"], ["y"], mode="nearest", scales=[1.0, 1.0, 2.0, 3.0]),
        {"d": _BLOCK.reshape(1, 2, 3, 4)},
    ),
    "QuantizeLinear-13 per axis": (
        13,
        node("QuantizeLinear", ["d", "s", "z"], ["y"], axis=0),
        {"d": _QUANTIZED, "s": np.array([0.5, 2.0, 0.25], np.float32),
         "z": np.array([0, 7, -9], np.int8)},
    ),
    "QuantizeLinear-21 INT16 saturating": (
        21,
        node("QuantizeLinear", ["d", "s", "z"], ["y"]),
        {"d": _QUANTIZED * 1e4, "s": _scalar(0.5, np.float32), "z": _scalar(3, np.int16)},
    ),
    "DequantizeLinear-10": (
        10,
        node("DequantizeLinear", ["d", "s", "z"], ["y"]),
        {"d": np.arange(256, dtype=np.uint8), "s": _scalar(0.1, np.float32),
         "z": _scalar(128, np.uint8)},
    ),
}
"""Ops whose form changed between opsets, at an older one: folded as that opset defines them
(QuantizeLinear and DequantizeLinear: the reference evaluator has none below opset 19)."""


@pytest.mark.parametrize("case", LEGACY_FOLD_CASES)
def test_folded_node_of_an_older_opset_matches_onnxruntime_exactly(case: str) -> None:
    opset, op, feeds = LEGACY_FOLD_CASES[case]
    got = evaluate(op, feeds, {"": opset})
    for value, want in zip(got, _onnxruntime_node(op, feeds, opset), strict=True):
        assert (value.dtype, value.shape) == (want.dtype, want.shape)
        np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-7)


def test_a_model_of_an_older_opset_folds_at_its_own(chip: str) -> None:
    """A Softmax of a constant (folded) added to the input: opset 11 normalises the constant
    over its dims 1 and 2 together, as onnxruntime does."""
    model = typed_model(
        [node("Softmax", ["c"], ["p"]), node("Add", ["x", "p"], ["y"])],
        {"x": (TensorProto.FLOAT, [2, 3, 4])},
        {"y": [2, 3, 4]},
        {"c": _BLOCK},
    )
    model.opset_import[0].version, model.ir_version = 11, 6
    run_and_check(model, chip, {"x": randn(2, 3, 4)})


def test_every_numpy_fold_is_tested() -> None:
    tested = {op.op_type for op, _ in FOLD_CASES.values()}
    assert set(NUMPY_FOLDS) <= tested


def test_gather_elements_on_a_long_axis_folds(chip: str) -> None:
    """ALBERT's export gathers position ids with GatherElements along an axis of 128."""
    ids = np.tile(np.arange(128, dtype=np.float32), (2, 1))
    model = typed_model(
        [
            node("GatherElements", ["ids", "order"], ["picked"], axis=1),
            node("Add", ["x", "picked"], ["y"]),
        ],
        {"x": (TensorProto.FLOAT, [2, 128])},
        ["y"],
        {"ids": ids, "order": np.tile(np.arange(127, -1, -1), (2, 1))},
    )
    run_and_check(model, chip, {"x": randn(2, 128)})


@pytest.mark.parametrize(
    ("op", "weights", "message"),
    [
        (
            node("GatherElements", ["d", "i"], ["g"], axis=1, name="ge"),
            {"d": np.zeros((2, 70), np.float32), "i": np.array([[1, 2, 70], [0, 0, 0]])},
            r"node 'ge' \(GatherElements\): all its inputs are compile-time constants, but "
            r"evaluating it at compile time failed: ValueError: index 70 is out of range for an "
            r"axis of size 70",
        ),
        (
            node("ScatterND", ["d", "i", "u"], ["g"], name="scatter"),
            {"d": np.zeros((2, 3), np.float32), "i": _ints(2, 0).reshape(1, 2), "u": randn(1)},
            r"node 'scatter' \(ScatterND\): all its inputs are compile-time constants, but "
            r"evaluating it at compile time failed: IndexError: index 2",
        ),
    ],
)
def test_fold_failure_names_the_node(
    op: onnx.NodeProto, weights: dict[str, np.ndarray], message: str
) -> None:
    model = typed_model(
        [op, node("Add", ["x", "g"], ["y"])], {"x": (TensorProto.FLOAT, [2, 3])}, ["y"], weights
    )
    with pytest.raises(T10Error, match=message):
        import_onnx(model)


# --------------------------------------------------------------------------------------------
# Sizes: the plan search, not the host, judges a tensor's size
# --------------------------------------------------------------------------------------------

_M = 10**6


@pytest.mark.parametrize(
    ("nodes", "shape", "weights"),
    [
        ([node("MatMul", ["x", "x"], ["y"])], [_M, _M], {}),
        ([node("ReduceSum", ["x", "last"], ["y"])], [_M, _M, 2], {"last": _ints(2)}),
        (
            [
                node(
                    "ConstantOfShape",
                    ["shape"],
                    ["ones"],
                    value=helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]),
                ),
                node("Mul", ["x", "ones"], ["y"]),
            ],
            [_M, _M],
            {"shape": _ints(_M, _M)},
        ),
    ],
    ids=["MatMul accumulator", "ReduceSum initial value", "folded ConstantOfShape"],
)
def test_terabyte_constants_are_splats(
    nodes: list[onnx.NodeProto], shape: list[int], weights: dict[str, np.ndarray]
) -> None:
    """A 10^6 x 10^6 operator gets the plan search's "does not fit", not "out of host
    memory": its splat constants store one value."""
    model = typed_model(nodes, {"x": (TensorProto.FLOAT, shape)}, ["y"], weights)
    module = import_onnx(model)
    constants = [op for op in module.walk() if isinstance(op, arith.ConstantOp)]
    assert constants and all(len(c.value.data.data) == 4 for c in constants)
    with pytest.raises(T10Error, match=r"the model does not fit chip 'test-16'"):
        compile_module(module, CompileOptions(chip="test-16"))


# --------------------------------------------------------------------------------------------
# Where and Expand
# --------------------------------------------------------------------------------------------


def causal_attention_scores(seq: int = 8, heads: int = 2) -> onnx.ModelProto:
    """Softmax(Where(causal mask, x, -inf-ish)) with the mask built from Range / Unsqueeze /
    LessOrEqual, broadcast over heads, as GPT-style exports do."""
    return typed_model(
        [
            node("Range", ["zero", "seq", "one"], ["pos"]),
            node("Unsqueeze", ["pos", "one_1d"], ["pos_col"]),
            node("LessOrEqual", ["pos", "pos_col"], ["mask"]),
            node("Where", ["mask", "x", "neg"], ["masked"], name="where"),
            node("Softmax", ["masked"], ["y"], axis=-1),
        ],
        {"x": (TensorProto.FLOAT, [heads, seq, seq])},
        ["y"],
        {
            "zero": np.array(0, dtype=np.int64),
            "one": np.array(1, dtype=np.int64),
            "seq": np.array(seq, dtype=np.int64),
            "one_1d": np.array([1], dtype=np.int64),
            "neg": np.array(-1e9, dtype=np.float32),
        },
    )


def test_where_causal_mask(chip: str) -> None:
    model = causal_attention_scores()
    where = next(g for g in generics(model) if g.attributes["t10.name"] == StringAttr("where"))
    body = [op.name for op in where.body.block.ops]
    assert body == ["arith.constant", "arith.cmpf", "arith.select", "linalg.yield"]
    outputs = run_and_check(model, chip, {"x": randn(2, 8, 8)}).result.outputs
    assert np.all(np.triu(outputs["y"][0], k=1) == 0)


def test_where_broadcasts_all_three_inputs(chip: str) -> None:
    """Condition [1, 5], x [4, 5], y [4, 1] (both runtime); a NaN in x survives where
    selected."""
    model = typed_model(
        [
            _const("c", np.array([[True, False, True, True, False]])),
            node("Where", ["c", "x", "z"], ["y"]),
        ],
        {"x": (TensorProto.FLOAT, [4, 5]), "z": (TensorProto.FLOAT, [4, 1])},
        ["y"],
    )
    x = randn(4, 5)
    x[0, 0] = np.nan
    outputs = run_and_check(model, chip, {"x": x, "z": randn(4, 1, seed=1)}).result.outputs
    assert np.isnan(outputs["y"][0, 0])


@pytest.mark.parametrize(
    ("in_shape", "shape"), [([3, 1], [2, 3, 4]), ([1, 5], [4, 1]), ([2, 3], [1, 1])]
)
def test_expand_matches_onnxruntime(chip: str, in_shape: list[int], shape: list[int]) -> None:
    model = typed_model(
        [
            _const("shape", np.array(shape, dtype=np.int64)),
            node("Expand", ["x", "shape"], ["e"]),
            node("Add", ["e", "e"], ["y"]),  # the expanded value is computed with
        ],
        {"x": (TensorProto.FLOAT, in_shape)},
        ["y"],
    )
    run_and_check(model, chip, {"x": randn(*in_shape)})


# --------------------------------------------------------------------------------------------
# Integer graph inputs
# --------------------------------------------------------------------------------------------


def bert_attention_mask(dtype: int = TensorProto.INT64) -> onnx.ModelProto:
    """BERT's extended attention mask: (1 - float(mask)) · -10000 added to the scores."""
    return typed_model(
        [
            node("Identity", ["mask"], ["m"]),
            node("Cast", ["m"], ["mf"], to=TensorProto.FLOAT),
            node("Sub", ["one", "mf"], ["inv"]),
            node("Mul", ["inv", "big_neg"], ["bias"]),
            node("Add", ["scores", "bias"], ["y"]),
        ],
        {"scores": (TensorProto.FLOAT, [2, 6, 6]), "mask": (dtype, [2, 1, 6])},
        ["y"],
        {"one": np.float32(1).reshape(1), "big_neg": np.float32(-10000).reshape(1)},
    )


@pytest.mark.parametrize(
    ("dtype", "np_dtype", "attr"),
    [
        (TensorProto.INT64, np.int64, "int64"),
        (TensorProto.INT32, np.int32, "int32"),
        (TensorProto.BOOL, np.bool_, "bool"),
    ],
)
def test_integer_input_cast_to_float(chip: str, dtype: int, np_dtype: type, attr: str) -> None:
    model = bert_attention_mask(dtype)
    main = next(op for op in import_onnx(model).walk() if isinstance(op, func.FuncOp))
    assert main.arg_attrs is not None
    mask_attrs = main.arg_attrs.data[1].data
    assert mask_attrs["t10.name"] == StringAttr("mask")
    assert mask_attrs["t10.onnx_type"] == StringAttr(attr)
    assert "t10.onnx_type" not in main.arg_attrs.data[0].data
    mask = np.random.default_rng(3).integers(0, 2, (2, 1, 6)).astype(np_dtype)
    run_and_check(model, chip, {"scores": randn(2, 6, 6), "mask": mask})


def test_integer_input_used_by_compute_is_refused() -> None:
    model = typed_model(
        [
            node("Identity", ["ids"], ["i"], name="id"),
            node("Pow", ["x", "i"], ["y"], name="pow"),
        ],
        {"x": (TensorProto.FLOAT, [3]), "ids": (TensorProto.INT64, [3])},
        ["y"],
    )
    with pytest.raises(
        T10Error,
        match=r"node 'pow' \(Pow\): it reads the INT64 value 'i' at run time; t10 holds "
        r"runtime integers and bools as exact float32 values",
    ):
        import_onnx(model)


def test_integer_graph_output_keeps_its_type(chip: str) -> None:
    """An INT64 graph output is computed as exact floats and returned as INT64."""
    graph = helper.make_graph(
        [node("Identity", ["ids"], ["out"])],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info("out", TensorProto.INT64, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    ids = np.array([-(2**24), 7, 2**24], dtype=np.int64)
    out = run_and_check(model, chip, {"ids": ids}).result.outputs["out"]
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, ids)


def test_shape_of_integer_input_folds() -> None:
    """Shape reads only the (static) shape of an integer input."""
    model = typed_model(
        [
            node("Shape", ["ids"], ["s"]),
            node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
            node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT),
            node("Mul", ["f", "sf"], ["y"]),
        ],
        {"ids": (TensorProto.INT64, [3])},
        ["y"],
    )
    ids = np.array([1, -2, 5], dtype=np.int64)
    run_and_check(model, "test-16", {"ids": ids})


def test_a_fold_too_large_to_build_is_refused_before_allocating() -> None:
    """Expand of a constant to 10^10 elements: the size (from shape inference of the node) is
    checked before the fold takes any memory."""
    graph = helper.make_graph(
        [helper.make_node("Expand", ["c", "shape"], ["big"], name="grow"),
         helper.make_node("Add", ["x", "big"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [100000, 100000])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones(1, np.float32), "c"),
         numpy_helper.from_array(np.array([100000, 100000], np.int64), "shape")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(T10Error, match=r"node 'grow' \(Expand\): .*result 'big' would be a "
                                       r"constant of shape \[100000, 100000\]"):
        import_onnx(model)
