"""Element-wise operators end to end: ONNX models with math bodies (Gelu, Sigmoid, Tanh, Exp,
Sqrt, Erf, Pow, Div, ...) compiled to the chip level, simulated, and checked against
onnxruntime; and the simulator's `math` interpreter functions on their own."""

from __future__ import annotations

import math
import warnings

import numpy as np
import onnx
import pytest
from helpers import run_and_check
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect

from t10.common.chip_spec import load_chip
from t10.common.tensor_expr import ELEMENTWISE_BODY_OPS
from t10.driver import CHECK_TOLERANCES, CompileOptions, compile_model, run_model
from t10.errors import T10Error
from t10.reference import reference_session
from t10.sim.interpreter_arith import CMPF_PREDICATES, FLOAT_BINARY, MATH_FUNCTIONS
from t10.sim.simulator import simulate

RTOL, ATOL = 1e-4, 1e-5


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, list[int]],
    outputs: dict[str, list[int]],
    weights: dict[str, np.ndarray],
    opset: int = 20,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "elementwise",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9 if opset < 21 else 10
    onnx.checker.check_model(model, full_check=True)
    return model


def _weights(seed: int, **shapes: tuple[int, ...]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        n: (rng.standard_normal(s) / math.sqrt(s[0])).astype(np.float32) for n, s in shapes.items()
    }


def gelu_mlp(approximate: str, batch: int = 24, sizes: tuple[int, int, int] = (96, 384, 80)):
    """y = Gelu(x @ w1 + b1) @ w2 — a transformer feed-forward block."""
    d_in, d_hidden, d_out = sizes
    return _model(
        [
            helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1/MatMul"),
            helper.make_node("Add", ["h", "b1"], ["hb"], name="fc1/Add"),
            helper.make_node("Gelu", ["hb"], ["g"], name="gelu", approximate=approximate),
            helper.make_node("MatMul", ["g", "w2"], ["y"], name="fc2/MatMul"),
        ],
        {"x": [batch, d_in]},
        {"y": [batch, d_out]},
        _weights(1, w1=(d_in, d_hidden), b1=(d_hidden,), w2=(d_hidden, d_out)),
    )


def activation_chain(rows: int = 12, cols: int = 40) -> onnx.ModelProto:
    """Sigmoid, Tanh, Exp, Sqrt and the other element-wise ops in a chain, with broadcasting
    against a row vector, a column vector, a scalar and a [1, 1] tensor."""
    node = helper.make_node
    return _model(
        [
            node("Add", ["x", "bias"], ["a"]),  # [rows, cols] + [cols]
            node("Sigmoid", ["a"], ["s"]),
            node("Mul", ["s", "col"], ["m"]),  # [rows, cols] * [rows, 1]
            node("Tanh", ["m"], ["t"]),
            node("Exp", ["t"], ["e"]),  # in [1/e, e]: Sqrt and Pow stay real
            node("Sqrt", ["e"], ["q"]),
            node("Pow", ["q", "three_halves"], ["p"]),  # scalar exponent
            node("Div", ["p", "scale"], ["d"]),  # [rows, cols] / [1, 1]
            node("Reciprocal", ["d"], ["r"]),
            node("Neg", ["r"], ["n"]),
            node("Erf", ["n"], ["f"]),
            node("Dropout", ["f"], ["fd"]),
            node("Cast", ["fd"], ["fc"], to=TensorProto.FLOAT),
            node("Identity", ["fc"], ["y"]),
            node("Sub", ["e", "col"], ["z"]),  # a second output, broadcast the other way
        ],
        {"x": [rows, cols], "col": [rows, 1]},
        {"y": [rows, cols], "z": [rows, cols]},
        {
            "bias": np.linspace(-2, 2, cols, dtype=np.float32),
            "three_halves": np.array(1.5, dtype=np.float32),
            "scale": np.array([[0.75]], dtype=np.float32),
        },
    )


def _inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    return {
        vi.name: (
            2 * rng.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim])
        ).astype(np.float32)
        for vi in model.graph.input
        if vi.name not in inits
    }


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_mlp_matches_onnxruntime(approximate: str, chip: str) -> None:
    model = gelu_mlp(approximate)
    result = run_and_check(model, chip, _inputs(model), fuse=False).result
    gelu = result.report.op("gelu")
    assert gelu.compute_cycles > 0 and gelu.cores_used > 1
    assert result.report.peak_sram_bytes_per_core <= load_chip(chip).sram_bytes_per_core


def test_activation_chain_with_broadcasting_matches_onnxruntime(chip: str) -> None:
    model = activation_chain()
    result = run_and_check(model, chip, _inputs(model, seed=3), fuse=False).result
    # Dropout, Cast and Identity are pass-throughs: one superstep group per computing node
    assert len(result.report.ops) == 12


def test_prime_sized_activation_chain_pads_without_warnings(chip: str) -> None:
    """Odd sizes pad the tiles; bodies that make NaN or inf of the padding zeros (x / x, √-x)
    give no numpy warnings, and the padding never reaches the outputs."""
    node = helper.make_node
    model = _model(
        [
            node("Div", ["x", "x"], ["one"]),
            node("Neg", ["one"], ["minus"]),
            node("Sqrt", ["minus"], ["nan"]),  # NaN everywhere, as in onnxruntime
            node("Exp", ["x"], ["e"]),
            node("Reciprocal", ["e"], ["y"]),
        ],
        {"x": [13, 37]},
        {"y": [13, 37], "nan": [13, 37]},
        {},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run_and_check(model, chip, _inputs(model), fuse=False).result
    assert np.isnan(result.outputs["nan"]).all()


# --------------------------------------------------------------------------------------------
# The simulator's math functions
# --------------------------------------------------------------------------------------------


def test_math_functions_cover_the_element_wise_body_ops() -> None:
    math_ops = {op for op in ELEMENTWISE_BODY_OPS if op.name.startswith("math.")}
    assert math_ops == set(MATH_FUNCTIONS)
    assert {math_dialect.ExpOp, math_dialect.ErfOp, math_dialect.PowFOp} <= math_ops
    arith_binary = {op for op in ELEMENTWISE_BODY_OPS if op.name.endswith("f")} - math_ops
    unary_or_compare = {"arith.negf", "arith.cmpf"}
    assert {op for op in arith_binary if op.name not in unary_or_compare} <= set(FLOAT_BINARY)


def test_cmpf_predicates_are_ieee() -> None:
    """Ordered predicates are false on NaN, unordered ones true; every arith.cmpf predicate
    has an implementation."""
    assert set(CMPF_PREDICATES) == set(arith.CMPF_COMPARISON_OPERATIONS)
    a = np.array([0.0, 1.0, np.nan, -2.0], dtype=np.float32)
    b = np.float32(0.0)
    np.testing.assert_array_equal(CMPF_PREDICATES["one"](a, b), [False, True, False, True])
    np.testing.assert_array_equal(CMPF_PREDICATES["une"](a, b), [False, True, True, True])
    np.testing.assert_array_equal(CMPF_PREDICATES["olt"](a, b), [False, False, False, True])
    np.testing.assert_array_equal(CMPF_PREDICATES["uno"](a, b), [False, False, True, False])


@pytest.mark.parametrize("op", sorted(MATH_FUNCTIONS, key=lambda op: op.name), ids=str)
def test_math_functions_keep_float32(op: type) -> None:
    x = np.linspace(0.1, 3.0, 16, dtype=np.float32).reshape(4, 4)
    fn = MATH_FUNCTIONS[op]
    args = (x, np.float32(1.5)) if op is math_dialect.PowFOp else (x,)
    with np.errstate(invalid="ignore"):  # x > 1 is outside asin's, acos's and atanh's domain
        out = np.asarray(fn(*args))
    assert out.dtype == np.float32 and out.shape == x.shape


def test_erf_is_accurate() -> None:
    x = np.array([-4.0, -1.0, -1e-6, 0.0, 1e-6, 0.5, 2.0, 10.0], dtype=np.float32)
    want = np.array([math.erf(float(v)) for v in x], dtype=np.float32)
    np.testing.assert_array_equal(MATH_FUNCTIONS[math_dialect.ErfOp](x), want)


def test_fused_exported_gelu_is_one_operator_and_cheaper(chip: str) -> None:
    """torch's GELU export (Div, Erf, Add, Mul, Mul) after a bias add fuses into one operator
    (t10-fuse-elementwise, on by default): same numbers, one kernel, no transitions between
    the former operators, and fewer cycles than the unfused chain."""
    node = helper.make_node
    nodes = [
        node("Add", ["x", "b"], ["h"]),
        node("Div", ["h", "sqrt2"], ["d"]),
        node("Erf", ["d"], ["e"]),
        node("Add", ["e", "one"], ["p"]),
        node("Mul", ["h", "p"], ["m"]),
        node("Mul", ["m", "half"], ["y"]),
    ]
    consts = {
        "b": np.linspace(-1, 1, 64, dtype=np.float32),
        "sqrt2": np.array([np.sqrt(2)], np.float32),
        "one": np.array([1], np.float32),
        "half": np.array([0.5], np.float32),
    }
    model = _model(nodes, {"x": [32, 64]}, {"y": [32, 64]}, consts)
    x = {"x": np.random.default_rng(5).standard_normal((32, 64)).astype(np.float32)}
    cycles = {}
    for fuse in (True, False):
        module = compile_model(model, CompileOptions(chip=chip, fuse=fuse)).module
        result = simulate(module, load_chip(chip), x)
        (want,) = reference_session(model).run(None, x)
        np.testing.assert_allclose(result.outputs["y"], want, rtol=RTOL, atol=ATOL)
        cycles[fuse] = result.report.total_cycles
        if fuse:
            assert [op.name for op in result.report.ops] == [
                "Add_0+Div_1+Erf_2+Add_3+Mul_4+Mul_5"
            ]
    assert cycles[True] < cycles[False]


def test_fused_operator_estimate_is_its_simulated_cost() -> None:
    """The plan search prices a fused body by its op count, as the simulator does."""
    from t10.bench.model import run_planner

    node = helper.make_node
    nodes = [
        node("Add", ["x", "b"], ["h"]),
        node("Tanh", ["h"], ["t"]),
        node("Mul", ["t", "h"], ["y"]),
    ]
    model = _model(nodes, {"x": [48, 80]}, {"y": [48, 80]}, {"b": np.ones(80, np.float32)})
    run = run_planner(model, CompileOptions(chip="ipu-mk2"), seed=0)
    (op,) = run.ops
    assert op.name == "Add_0+Tanh_1+Mul_2"
    assert op.estimated_cycles == op.cycles and op.compute_cycles > 0


# --------------------------------------------------------------------------------------------
# Activations with attributes, PRelu and LogSoftmax
# --------------------------------------------------------------------------------------------

ACTIVATIONS: dict[str, dict[str, float]] = {
    "LeakyRelu": {"alpha": 0.2},
    "Elu": {"alpha": 0.7},
    "Selu": {"alpha": 1.5, "gamma": 1.1},
    "Celu": {"alpha": 2.0},
    "ThresholdedRelu": {"alpha": 0.3},
    "HardSigmoid": {"alpha": 0.25, "beta": 0.4},
    "HardSwish": {},
    "Softplus": {},
    "Softsign": {},
    "Mish": {},
    "Shrink": {"bias": 0.1, "lambd": 0.4},
}


def activation_model(
    op: str, attrs: dict[str, float], rows: int = 24, opset: int = 20
) -> onnx.ModelProto:
    """``op`` as the epilogue of a MatMul (``y``), and of the input scaled by 60 (``z``: values
    far out in both tails, where exp overflows float32)."""
    node = helper.make_node
    return _model(
        [
            node("MatMul", ["x", "w"], ["h"], name="fc"),
            node(op, ["h"], ["y"], name="act", **attrs),
            node("Mul", ["x", "sixty"], ["big"]),
            node(op, ["big"], ["z"], name="act_tails", **attrs),
        ],
        {"x": [rows, 96]},
        {"y": [rows, 80], "z": [rows, 96]},
        {**_weights(2, w=(96, 80)), "sixty": np.array(60.0, np.float32)},
        opset,
    )


@pytest.mark.parametrize("op", sorted(ACTIVATIONS))
@pytest.mark.parametrize("defaults", [False, True], ids=["attrs", "defaults"])
def test_activations_match_onnxruntime(op: str, defaults: bool, chip: str) -> None:
    model = activation_model(op, {} if defaults else ACTIVATIONS[op])
    run_and_check(model, chip, _inputs(model, seed=4))


def test_activations_in_fp16_storage_match_onnxruntime() -> None:
    for op, attrs in ACTIVATIONS.items():
        model = activation_model(op, attrs, rows=8)
        result = run_model(
            model,
            CompileOptions(chip="ipu-mk2", precision="fp16"),
            inputs=_inputs(model, seed=5),
            check=CHECK_TOLERANCES["fp16"],
        )
        assert result.check is not None and result.check.passed, (op, result.check)


UNARY_FUNCTIONS = ("Tan", "Atan", "Asin", "Acos", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
                   "Round")


@pytest.mark.parametrize("op", UNARY_FUNCTIONS)
def test_unary_functions_match_onnxruntime(op: str, chip: str) -> None:
    """Over their domain and outside it (NaN there, as onnxruntime), with the halves that
    Round takes to the even neighbour, infinities and NaN."""
    x = np.concatenate([
        np.linspace(-3.0, 3.0, 61, dtype=np.float32),  # ±0.5, ±1.5, ±2.5 among them
        np.array([-0.999, 0.999, 1.0, -1.0, 1.001, 20.0, -20.0, np.inf, -np.inf, np.nan],
                 np.float32),
    ]).reshape(1, -1)
    model = _model([helper.make_node(op, ["x"], ["y"])], {"x": list(x.shape)},
                   {"y": list(x.shape)}, {})
    run_and_check(model, chip, {"x": x})


@pytest.mark.parametrize("alpha", [None, 0.5])
def test_swish_matches_onnxruntime(alpha: float | None, chip: str) -> None:
    """Swish (opset 24): x · sigmoid(alpha · x), alpha 1 by default."""
    model = activation_model("Swish", {} if alpha is None else {"alpha": alpha}, opset=24)
    run_and_check(model, chip, _inputs(model, seed=4))


def test_prelu_with_a_per_channel_slope_matches_onnxruntime(chip: str) -> None:
    node = helper.make_node
    model = _model(
        [node("Conv", ["x", "k"], ["c"], pads=[1, 1, 1, 1]), node("PRelu", ["c", "slope"], ["y"])],
        {"x": [2, 3, 8, 8]},
        {"y": [2, 4, 8, 8]},
        {**_weights(3, k=(4, 3, 3, 3)), "slope": np.array([[[0.1]], [[-0.5]], [[2.0]], [[0.0]]],
                                                          np.float32)},
    )
    run_and_check(model, chip, _inputs(model, seed=6))


def test_prelu_slope_must_broadcast_to_the_input() -> None:
    model = helper.make_model(helper.make_graph(
        [helper.make_node("PRelu", ["x", "slope"], ["y"], name="act")],
        "prelu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.ones((4, 1, 3), np.float32), "slope")],
    ), opset_imports=[helper.make_opsetid("", 20)])
    with pytest.raises(T10Error, match=r"node 'act' \(PRelu\): slope of shape \[4, 1, 3\] does "
                                       r"not broadcast to the input's shape \[2, 3\]"):
        compile_model(model, CompileOptions(chip="test-16"))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_log_softmax_matches_onnxruntime_where_softmax_underflows(axis: int, chip: str) -> None:
    """Scaled by 60 most probabilities underflow to 0, whose log would be -inf: LogSoftmax is
    (x - max) - log(sum(exp(x - max)))."""
    node = helper.make_node
    model = _model(
        [node("Mul", ["x", "sixty"], ["big"]), node("LogSoftmax", ["big"], ["y"], axis=axis)],
        {"x": [6, 40]},
        {"y": [6, 40]},
        {"sixty": np.array(60.0, np.float32)},
    )
    result = run_and_check(model, chip, _inputs(model, seed=7)).result
    assert np.isfinite(result.outputs["y"]).all()


def test_mean_of_three_matches_onnxruntime(chip: str) -> None:
    node = helper.make_node
    model = _model(
        [node("Mean", ["a", "b", "c"], ["y"])],
        {"a": [4, 10], "b": [1, 10], "c": [4, 1]},
        {"y": [4, 10]},
        {},
    )
    run_and_check(model, chip, _inputs(model, seed=8))


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [None, 0, 2, -1])
def test_softmax_before_opset_13_normalises_every_axis_from_its_own(
    op: str, axis: int | None, chip: str
) -> None:
    """Before opset 13 the input is coerced to 2-D at ``axis`` (default 1): the softmax runs
    over all the dims from ``axis`` on, as one."""
    attrs = {} if axis is None else {"axis": axis}
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], **attrs)],
        "legacy_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4, 5])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 6
    run_and_check(model, chip, _inputs(model, seed=9))
