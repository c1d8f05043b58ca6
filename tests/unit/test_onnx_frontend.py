"""Tests for the ONNX frontend: IR shape (contract form) and numerics against onnxruntime.

Numerics are checked with a tiny numpy evaluator of the linalg-level IR (below), so these tests
do not depend on any other part of the compiler.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from math import erf, prod

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.context import Context
from xdsl.dialects import arith, func, math, tensor
from xdsl.dialects.builtin import Builtin, DenseIntOrFPElementsAttr, FloatAttr, ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr
from xdsl.printer import Printer

from t10.errors import T10Error
from t10.examples.models import bert_ffn, matmul, mlp
from t10.frontend import SUPPORTED_OPS, OnnxFrontend, import_onnx
from t10.frontend.loading import weightless
from t10.reference import reference_session
from t10.t10_dialects.parsing import Parser

with warnings.catch_warnings():  # xDSL 0.75 deprecates the package-root re-exports
    warnings.simplefilter("ignore", DeprecationWarning)
    from xdsl.dialects.linalg import GenericOp, Linalg, YieldOp

RTOL, ATOL = 1e-4, 1e-5

# --------------------------------------------------------------------------------------------
# A numpy evaluator of the linalg-level contract
# --------------------------------------------------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyz"

_BINARY = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.MaximumfOp: np.maximum,
    math.PowFOp: np.power,
}

_UNARY = {
    arith.NegfOp: np.negative,
    math.ExpOp: np.exp,
    math.TanhOp: np.tanh,
    math.SqrtOp: np.sqrt,
    math.ErfOp: np.vectorize(erf, otypes=[np.float64]),
}


def _dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """A float32 constant; a splat (one stored value) fills its shape."""
    values = np.frombuffer(attr.data.data, dtype="<f4")
    return np.broadcast_to(values, (prod(attr.get_shape()),)).reshape(attr.get_shape())


def _map_results(op: GenericOp, i: int) -> list[int | None]:
    """Loop dim per operand axis; None for a constant-0 (broadcast) axis. Asserts the contract."""
    out: list[int | None] = []
    for e in op.indexing_maps.data[i].data.results:
        if isinstance(e, AffineDimExpr):
            out.append(e.position)
        else:
            assert isinstance(e, AffineConstantExpr) and e.value == 0, f"bad map result {e}"
            out.append(None)
    return out


def _squeeze_broadcast(x: np.ndarray, dims: list[int | None]) -> tuple[np.ndarray, list[int]]:
    """Drop the constant-0 axes (they index element 0) and return the remaining loop dims."""
    index = tuple(0 if d is None else slice(None) for d in dims)
    return x[index], [d for d in dims if d is not None]


def _is_contraction(op: GenericOp) -> bool:
    return any(str(it.data) == "reduction" for it in op.iterator_types.data)


def _eval_contraction(op: GenericOp, env: dict[SSAValue, np.ndarray]) -> np.ndarray:
    body = list(op.body.block.ops)
    a, b, acc = op.body.block.args
    assert [type(o) for o in body] == [arith.MulfOp, arith.AddfOp, YieldOp]
    mul, add, yld = body
    assert set(mul.operands) == {a, b} and len(op.inputs) == 2
    assert add.operands[0] == acc and add.operands[1] == mul.results[0]
    assert yld.operands[0] == add.results[0]
    init = op.outputs[0].owner
    assert isinstance(init, arith.ConstantOp) and not _dense_to_numpy(init.value).any()

    subs: list[str] = []
    arrays: list[np.ndarray] = []
    for i, operand in enumerate(op.inputs):
        arr, dims = _squeeze_broadcast(env[operand], _map_results(op, i))
        arrays.append(arr)
        subs.append("".join(_LETTERS[d] for d in dims))
    out_dims = _map_results(op, 2)
    assert None not in out_dims
    spec = f"{subs[0]},{subs[1]}->{''.join(_LETTERS[d] for d in out_dims)}"
    return (env[op.outputs[0]] + np.einsum(spec, *arrays)).astype(np.float32)


def _eval_elementwise(op: GenericOp, env: dict[SSAValue, np.ndarray]) -> np.ndarray:
    n_loops = len(op.iterator_types.data)
    assert isinstance(op.outputs[0].owner, tensor.EmptyOp)
    out_dims = _map_results(op, len(op.inputs))
    assert out_dims == list(range(n_loops)), "element-wise output map must be the identity"
    out_shape = env[op.outputs[0]].shape
    vals: dict[SSAValue, np.ndarray | np.float32] = {}
    for i, (operand, arg) in enumerate(zip(op.inputs, op.body.block.args, strict=False)):
        arr, dims = _squeeze_broadcast(env[operand], _map_results(op, i))
        # move to loop order, then insert size-1 axes for the loops it does not read
        arr = np.transpose(arr, np.argsort(dims))
        shape = [out_shape[d] if d in dims else 1 for d in range(n_loops)]
        vals[arg] = arr.reshape(shape)
    for body_op in op.body.block.ops:
        if isinstance(body_op, arith.ConstantOp):
            assert isinstance(body_op.value, FloatAttr)
            vals[body_op.result] = np.float32(body_op.value.value.data)
        elif type(body_op) in _BINARY:
            assert op.body.block.args[-1] not in body_op.operands, "reads the outs argument"
            lhs, rhs = (vals[v] for v in body_op.operands)
            with np.errstate(all="ignore"):
                vals[body_op.results[0]] = _BINARY[type(body_op)](lhs, rhs).astype(np.float32)
        elif type(body_op) in _UNARY:
            (operand,) = body_op.operands
            with np.errstate(all="ignore"):
                result = _UNARY[type(body_op)](vals[operand])
            vals[body_op.results[0]] = result.astype(np.float32)
        elif isinstance(body_op, YieldOp):
            return np.broadcast_to(vals[body_op.operands[0]], out_shape).astype(np.float32)
        else:
            raise AssertionError(f"unexpected op in element-wise body: {body_op.name}")
    raise AssertionError("no linalg.yield")


def evaluate(module: ModuleOp, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run ``@main`` of a linalg-level module on named inputs; returns named outputs."""
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    env: dict[SSAValue, np.ndarray] = {}
    arg_names = [d.data[T10] for d in main.arg_attrs.data] if main.arg_attrs else []
    for arg, name in zip(main.body.block.args, arg_names, strict=True):
        assert isinstance(name, StringAttr)
        env[arg] = np.asarray(inputs[name.data], dtype=np.float32)
    op: Operation
    for op in main.body.block.ops:
        if isinstance(op, arith.ConstantOp):
            assert isinstance(op.value, DenseIntOrFPElementsAttr)
            env[op.result] = _dense_to_numpy(op.value)
        elif isinstance(op, tensor.EmptyOp):
            env[op.tensor] = np.zeros(op.tensor.type.get_shape(), dtype=np.float32)
        elif isinstance(op, GenericOp):
            assert isinstance(op.attributes.get(T10), StringAttr), "generic without t10.name"
            evaluator = _eval_contraction if _is_contraction(op) else _eval_elementwise
            env[op.res[0]] = evaluator(op, env)
            assert env[op.res[0]].shape == op.res[0].type.get_shape()
        elif isinstance(op, func.ReturnOp):
            names = [d.data[T10].data for d in main.res_attrs.data]
            return {n: env[v] for n, v in zip(names, op.operands, strict=True)}
        else:
            raise AssertionError(f"unexpected op at function level: {op.name}")
    raise AssertionError("no func.return")


T10 = "t10.name"

# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _vi(name: str, shape: Sequence[int | str | None], elem: int = TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, list(shape))


def make_model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: Sequence[tuple[str, np.ndarray]] = (),
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "test",
        inputs,
        outputs,
        initializer=[numpy_helper.from_array(a, name=n) for n, a in initializers],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def check_against_ort(
    model: onnx.ModelProto, seed: int = 0, feeds: dict[str, np.ndarray] | None = None
) -> ModuleOp:
    module = import_onnx(model)
    module.verify()
    feeds = _random_inputs(model, seed) if feeds is None else feeds
    session = reference_session(model)
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, session.run(None, feeds), strict=True))
    got = evaluate(module, feeds)
    assert set(got) == set(expected)
    for name, want in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=RTOL, atol=ATOL, err_msg=name)
    return module


def generics(module: ModuleOp) -> list[GenericOp]:
    return [op for op in module.walk() if isinstance(op, GenericOp)]


def maps(op: GenericOp) -> list[str]:
    return [str(m.data) for m in op.indexing_maps.data]


def iterators(op: GenericOp) -> list[str]:
    return [str(it.data) for it in op.iterator_types.data]


def name_of(op: Operation) -> str:
    attr = op.attributes[T10]
    assert isinstance(attr, StringAttr)
    return attr.data


def print_module(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def _ctx() -> Context:
    ctx = Context()
    for d in (Builtin, arith.Arith, func.Func, Linalg, math.Math, tensor.Tensor):
        ctx.load_dialect(d)
    return ctx


def _rand(*shape: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------------------------
# IR form
# --------------------------------------------------------------------------------------------


def test_matmul_2d_contract_form() -> None:
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc1/MatMul")],
        [_vi("x", [53, 97])],
        [_vi("y", [53, 61])],
        [("w", _rand(97, 61))],
    )
    module = check_against_ort(model)
    (mm,) = generics(module)
    assert maps(mm) == [
        "(d0, d1, d2) -> (d0, d2)",
        "(d0, d1, d2) -> (d2, d1)",
        "(d0, d1, d2) -> (d0, d1)",
    ]
    assert iterators(mm) == ["parallel", "parallel", "reduction"]
    assert name_of(mm) == "fc1/MatMul"
    main = next(iter(module.ops))
    assert isinstance(main, func.FuncOp) and main.sym_name.data == "main"
    assert main.arg_attrs is not None and main.res_attrs is not None
    assert main.arg_attrs.data[0].data[T10] == StringAttr("x")
    assert main.res_attrs.data[0].data[T10] == StringAttr("y")
    # the weight is a constant with the exact bytes, not a function argument
    assert len(main.body.block.args) == 1
    consts = [op for op in main.body.block.ops if isinstance(op, arith.ConstantOp)]
    w = next(c for c in consts if c.result.type.get_shape() == (97, 61))
    assert w.value.data.data == _rand(97, 61).astype("<f4").tobytes()


def test_print_parse_roundtrip() -> None:
    module = import_onnx(mlp(batch=2, sizes=(8, 16, 4)))
    text = print_module(module)
    reparsed = Parser(_ctx(), text).parse_module()
    reparsed.verify()
    assert print_module(reparsed) == text


def test_batched_matmul_broadcast() -> None:
    model = make_model(
        [helper.make_node("MatMul", ["a", "b"], ["y"])],
        [_vi("a", [2, 1, 3, 4]), _vi("b", [5, 4, 6])],
        [_vi("y", [2, 5, 3, 6])],
    )
    module = check_against_ort(model)
    (mm,) = generics(module)
    assert maps(mm) == [
        "(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)",
        "(d0, d1, d2, d3, d4) -> (d1, d4, d3)",
        "(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)",
    ]
    assert iterators(mm) == ["parallel"] * 4 + ["reduction"]
    assert name_of(mm) == "MatMul_0"


@pytest.mark.parametrize(
    ("sa", "sb", "so", "a_map", "b_map"),
    [
        ([4], [4, 3], [3], "(d0, d1) -> (d1)", "(d0, d1) -> (d1, d0)"),
        ([2, 3, 4], [4], [2, 3], "(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d2)"),
        ([4], [2, 4, 3], [2, 3], "(d0, d1, d2) -> (d2)", "(d0, d1, d2) -> (d0, d2, d1)"),
        ([4], [4], [], "(d0) -> (d0)", "(d0) -> (d0)"),
    ],
)
def test_matmul_1d_operands(sa, sb, so, a_map, b_map) -> None:
    model = make_model(
        [helper.make_node("MatMul", ["a", "b"], ["y"])],
        [_vi("a", sa), _vi("b", sb)],
        [_vi("y", so)],
    )
    (mm,) = generics(check_against_ort(model))
    assert maps(mm)[:2] == [a_map, b_map]
    assert iterators(mm)[-1] == "reduction"


@pytest.mark.parametrize(
    ("attrs", "c_shape", "n_generics"),
    [
        ({}, None, 1),
        ({"transA": 1}, None, 1),
        ({"transB": 1, "alpha": 0.5}, None, 2),
        ({"transA": 1, "transB": 1}, [6], 2),
        ({"alpha": 2.0, "beta": 0.25}, [5, 1], 2),
        ({"beta": -1.5}, [], 2),
        ({"alpha": 0.75, "beta": 3.0, "transB": 1}, [1, 6], 2),
        ({"beta": 0.0}, [5, 6], 1),
        ({}, [5, 6], 2),
    ],
)
def test_gemm(attrs: dict, c_shape: list[int] | None, n_generics: int) -> None:
    m, k, n = 5, 7, 6
    a_shape = [k, m] if attrs.get("transA") else [m, k]
    b_shape = [n, k] if attrs.get("transB") else [k, n]
    ins = ["a", "b"] + (["c"] if c_shape is not None else [])
    inits = [("b", _rand(*b_shape, seed=2))]
    if c_shape is not None:
        inits.append(("c", _rand(*c_shape, seed=3)))
    model = make_model(
        [helper.make_node("Gemm", ins, ["y"], name="gemm", **attrs)],
        [_vi("a", a_shape)],
        [_vi("y", [m, n])],
        inits,
    )
    module = check_against_ort(model)
    gs = generics(module)
    assert len(gs) == n_generics
    mm = gs[0]
    a_map = "(d0, d1, d2) -> (d2, d0)" if attrs.get("transA") else "(d0, d1, d2) -> (d0, d2)"
    b_map = "(d0, d1, d2) -> (d1, d2)" if attrs.get("transB") else "(d0, d1, d2) -> (d2, d1)"
    assert maps(mm) == [a_map, b_map, "(d0, d1, d2) -> (d0, d1)"]
    assert iterators(mm) == ["parallel", "parallel", "reduction"]
    if n_generics == 1:
        assert name_of(mm) == "gemm"
    else:
        assert [name_of(g) for g in gs] == ["gemm:0", "gemm:1"]
        assert iterators(gs[1]) == ["parallel", "parallel"]
        assert isinstance(gs[1].outputs[0].owner, tensor.EmptyOp)


def test_gemm_bias_maps() -> None:
    model = make_model(
        [helper.make_node("Gemm", ["a", "b", "c"], ["y"])],
        [_vi("a", [3, 4]), _vi("b", [4, 5]), _vi("c", [3, 1])],
        [_vi("y", [3, 5])],
    )
    _, epilogue = generics(check_against_ort(model))
    assert maps(epilogue) == [
        "(d0, d1) -> (d0, d1)",
        "(d0, d1) -> (d0, 0)",
        "(d0, d1) -> (d0, d1)",
    ]
    assert [op.name for op in epilogue.body.block.ops] == ["arith.addf", "linalg.yield"]


@pytest.mark.parametrize("op_type", ["Add", "Sub", "Mul"])
def test_elementwise_broadcasting(op_type: str) -> None:
    model = make_model(
        [helper.make_node(op_type, ["x", "y"], ["z"], name="ew")],
        [_vi("x", [3, 1, 5]), _vi("y", [4, 1])],
        [_vi("z", [3, 4, 5])],
    )
    (g,) = generics(check_against_ort(model))
    assert maps(g) == [
        "(d0, d1, d2) -> (d0, 0, d2)",
        "(d0, d1, d2) -> (d1, 0)",
        "(d0, d1, d2) -> (d0, d1, d2)",
    ]
    assert iterators(g) == ["parallel"] * 3
    assert isinstance(g.outputs[0].owner, tensor.EmptyOp)
    ops = [op.name for op in g.body.block.ops]
    assert ops == [f"arith.{op_type.lower()}f", "linalg.yield"]


def test_add_scalar_and_same_value() -> None:
    model = make_model(
        [
            helper.make_node("Add", ["x", "x"], ["d"]),
            helper.make_node("Mul", ["d", "s"], ["y"]),
        ],
        [_vi("x", [2, 3])],
        [_vi("y", [2, 3])],
        [("s", np.array(1.5, dtype=np.float32))],
    )
    _, mul = generics(check_against_ort(model))
    assert maps(mul)[1] == "(d0, d1) -> ()"


def test_relu_body() -> None:
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"], name="act")],
        [_vi("x", [4, 6])],
        [_vi("y", [4, 6])],
    )
    (g,) = generics(check_against_ort(model))
    const, mx, _ = g.body.block.ops
    assert isinstance(const, arith.ConstantOp) and const.value == FloatAttr(0.0, 32)
    assert isinstance(mx, arith.MaximumfOp)
    assert mx.operands[0] == g.body.block.args[0] and mx.operands[1] == const.result


def test_constant_identity_and_passthrough_outputs() -> None:
    cval = numpy_helper.from_array(_rand(2, 3, seed=5), name="cval")
    model = make_model(
        [
            helper.make_node("Constant", [], ["k"], value=cval),
            helper.make_node("Identity", ["x"], ["x_id"]),
            helper.make_node("Add", ["x_id", "k"], ["sum"]),
            helper.make_node("Identity", ["w"], ["w_out"]),
        ],
        [_vi("x", [2, 3]), _vi("w", [3])],  # w is an initializer listed as an input
        [_vi("sum", [2, 3]), _vi("x_out_direct", [2, 3]), _vi("w_out", [3]), _vi("w", [3])],
        [("w", _rand(3, seed=6))],
    )
    # graph output that is directly a graph input
    model.graph.node.append(helper.make_node("Identity", ["x"], ["x_out_direct"]))
    model.graph.output.append(_vi("x", [2, 3]))
    module = check_against_ort(model)
    main = next(iter(module.ops))
    assert isinstance(main, func.FuncOp)
    assert [d.data[T10].data for d in main.arg_attrs.data] == ["x"]
    assert [d.data[T10].data for d in main.res_attrs.data] == [
        "sum",
        "x_out_direct",
        "w_out",
        "w",
        "x",
    ]
    ret = main.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    assert ret.operands[1] == main.body.block.args[0] == ret.operands[4]
    assert isinstance(ret.operands[3].owner, arith.ConstantOp)


def test_frontend_class_parses_bytes(tmp_path) -> None:
    model = matmul(4, 5, 6)
    assert OnnxFrontend.name == "onnx"
    module = OnnxFrontend().parse(_ctx(), io.BytesIO(model.SerializeToString()), "mm.onnx")
    module.verify()
    path = tmp_path / "mm.onnx"
    onnx.save_model(model, path)
    assert print_module(import_onnx(path)) == print_module(module)
    assert print_module(import_onnx(str(path))) == print_module(module)


# --------------------------------------------------------------------------------------------
# Example models: numerics against onnxruntime
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [
        pytest.param(mlp(), id="mlp-default"),
        pytest.param(mlp(batch=3, sizes=(5, 7, 11, 2), seed=4), id="mlp-small"),
        pytest.param(bert_ffn(rows=16, hidden=64, inner=256), id="bert-ffn-small"),
        pytest.param(matmul(17, 33, 9, seed=2), id="matmul"),
    ],
)
def test_examples_match_onnxruntime(model: onnx.ModelProto) -> None:
    module = check_against_ort(model)
    kinds = ["reduction" in iterators(g) for g in generics(module)]
    assert kinds.count(True) == sum(n.op_type == "MatMul" for n in model.graph.node)


def test_mlp_generic_names() -> None:
    module = import_onnx(mlp(batch=2, sizes=(4, 8, 3)))
    assert [name_of(g) for g in generics(module)] == [
        "fc1/MatMul",
        "fc1/Add",
        "fc1/Relu",
        "fc2/MatMul",
        "fc2/Add",
    ]


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def test_unsupported_ops_listed_together() -> None:
    model = make_model(
        [
            helper.make_node("BitwiseNot", ["x"], ["t1"]),
            helper.make_node("Hardmax", ["t1"], ["s"]),
            helper.make_node("Relu", ["s"], ["r"]),
            helper.make_node("BitwiseNot", ["r"], ["y"]),
        ],
        [_vi("x", [2, 3])],
        [_vi("y", [2, 3])],
    )
    model.graph.name = "x.onnx"
    with pytest.raises(T10Error) as info:
        import_onnx(model)
    msg = str(info.value)
    assert "unsupported ONNX operators in model 'x.onnx': BitwiseNot (2), Hardmax (1)" in msg
    assert f"supported: {', '.join(sorted(SUPPORTED_OPS))}" in msg
    assert {"MatMul", "Softmax", "Transpose", "Concat", "Gather", "Conv"} <= SUPPORTED_OPS.keys()


def test_ops_refused_by_design_say_why() -> None:
    """TopK and ScatterElements (mixture-of-experts routing) are refused with the reason."""
    model = make_model(
        [
            helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1),
            helper.make_node("ScatterElements", ["x", "i", "v"], ["y"], axis=1),
        ],
        [_vi("x", [4, 8])],
        [_vi("y", [4, 8])],
        [("k", np.array([2], dtype=np.int64))],
    )
    model.graph.name = "moe.onnx"
    with pytest.raises(T10Error) as info:
        import_onnx(model)
    assert str(info.value).startswith(
        "unsupported ONNX operators in model 'moe.onnx': ScatterElements (1: it writes to "
        "positions known only at run time; t10's moves write only where the plans place "
        "data), TopK (1: it selects by sorting values at run time; t10's moves follow layouts "
        "fixed at compile time (a Gather reads runtime positions, nothing sorts)); supported: "
    )


def test_unsupported_op_names_file(tmp_path) -> None:
    model = make_model(
        [
            helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 3]),
            helper.make_node("LpPool", ["y"], ["z"], kernel_shape=[3, 3]),
        ],
        [_vi("x", [1, 1, 5, 5])],
        [_vi("z", [1, 1, 1, 1])],
    )
    path = tmp_path / "pool.onnx"
    onnx.save_model(model, path)
    with pytest.raises(T10Error, match=r"pool\.onnx': LpPool \(2\); supported"):
        import_onnx(path)


@pytest.mark.parametrize("elem", [TensorProto.DOUBLE, TensorProto.BFLOAT16])
def test_non_f32_input(elem: int) -> None:
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [2, 2], elem)], [_vi("y", [2, 2], elem)]
    )
    with pytest.raises(T10Error) as info:
        import_onnx(model)
    msg = str(info.value)
    assert "graph input 'x'" in msg and TensorProto.DataType.Name(elem) in msg
    assert "only FLOAT and FLOAT16 tensors" in msg


def test_non_f32_initializer() -> None:
    model = make_model(
        [helper.make_node("Add", ["x", "b"], ["y"])],
        [_vi("x", [3], TensorProto.DOUBLE)],
        [_vi("y", [3], TensorProto.DOUBLE)],
        [("b", np.ones(3, dtype=np.float64))],
    )
    # make x f32 would fail inference; instead check an f64 constant feeding a float64 graph
    with pytest.raises(T10Error, match="DOUBLE"):
        import_onnx(model)
    model = make_model(
        [helper.make_node("Identity", ["b"], ["y"])],
        [],
        [_vi("y", [3], TensorProto.DOUBLE)],
        [("b", np.ones(3, dtype=np.float64))],
    )
    with pytest.raises(T10Error, match="graph output 'y' has element type DOUBLE"):
        import_onnx(model)  # Identity(b) folds to a DOUBLE constant
    model = make_model(
        [helper.make_node("Pow", ["x", "e"], ["y"], name="pow")],
        [_vi("x", [3])],
        [_vi("y", [3])],
        [("e", np.full(3, 2, dtype=np.int64))],
    )
    with pytest.raises(
        T10Error,
        match=r"initializer 'e' has element type INT64 and node 'pow' \(Pow\) computes with it; "
        r"t10 computes float \(FLOAT, FLOAT16\) tensors only",
    ):
        import_onnx(model)


def test_non_f32_constant_node() -> None:
    model = make_model(
        [
            helper.make_node(
                "Constant",
                [],
                ["k"],
                value=numpy_helper.from_array(np.ones(3, dtype=np.uint32), name="k"),
            ),
        ],
        [],
        [_vi("k", [3], TensorProto.UINT32)],
    )
    with pytest.raises(T10Error, match="graph output 'k' has element type UINT32"):
        import_onnx(model)


def test_symbolic_dim() -> None:
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [_vi("x", ["batch", 16])],
        [_vi("y", ["batch", 16])],
    )
    with pytest.raises(T10Error) as info:
        import_onnx(model)
    msg = str(info.value)
    assert "'batch'" in msg and "graph input 'x'" in msg
    assert "`--dim batch=SIZE`" in msg and "dims={'batch': SIZE}" in msg and "static shapes" in msg
    assert "%x: tensor<3x16xf32>" in str(import_onnx(model, dims={"batch": 3}))


def test_unknown_dim_suggests_a_re_export() -> None:
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [_vi("x", [None, 16])],
        [_vi("y", [None, 16])],
    )
    with pytest.raises(T10Error, match="an unknown dimension at axis 0; .*update_model_dims"):
        import_onnx(model)


def test_malformed_file(tmp_path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\x08\x07\xff\xff\x00this is not a protobuf")
    with pytest.raises(T10Error, match=r"cannot parse ONNX model '.*garbage\.onnx'"):
        import_onnx(path)
    with pytest.raises(T10Error, match="cannot read ONNX model"):
        import_onnx(tmp_path / "missing.onnx")
    with pytest.raises(T10Error, match="cannot parse ONNX model 'stdin'"):
        OnnxFrontend().parse(_ctx(), io.BytesIO(b"\xff\xff\xff"), "stdin")


def test_invalid_graph() -> None:
    model = make_model(
        [helper.make_node("Relu", ["nowhere"], ["y"], name="bad_relu")],
        [_vi("x", [2])],
        [_vi("y", [2])],
    )
    with pytest.raises(T10Error, match="invalid ONNX model .*nowhere"):
        import_onnx(model)


def test_shape_inference_failure() -> None:
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        [_vi("x", [2, 3])],
        [_vi("y", [2, 4])],
        [("w", _rand(5, 4))],
    )
    with pytest.raises(T10Error) as e:
        import_onnx(model)
    assert str(e.value) == (
        "ONNX model 'test': node 'mm' (MatMul): Incompatible dimensions for matrix multiplication"
    )


def test_initializer_float_data_form() -> None:
    """Initializers stored as float_data (not raw_data) keep their exact values."""
    vals = _rand(3, 2, seed=9)
    model = make_model(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], [_vi("x", [4, 3])], [_vi("y", [4, 2])]
    )
    model.graph.initializer.append(
        helper.make_tensor("w", TensorProto.FLOAT, [3, 2], vals.flatten().tolist())
    )
    assert not model.graph.initializer[0].raw_data
    module = check_against_ort(model)
    (const,) = [op for op in module.walk() if isinstance(op, arith.ConstantOp)][:1]
    assert const.value.data.data == vals.tobytes()


def _big_weight_model() -> onnx.ModelProto:
    """A MatMul by a 128x160 weight (80 KiB: over `loading.ELIDED_BYTES`), reshaped by a small
    known shape."""
    return make_model(
        [
            helper.make_node("MatMul", ["x", "w"], ["y"]),
            helper.make_node("Reshape", ["y", "s"], ["z"]),
        ],
        [_vi("x", [2, 128])],
        [_vi("z", [4, 80])],
        [("w", _rand(128, 160, seed=4)), ("s", np.array([4, 80], dtype=np.int64))],
    )


def test_weightless_copy_for_checks() -> None:
    """The checker and shape inference see big float weights as typed graph inputs (small
    and integer initializers stay); the import still reads the weights' exact bytes, without
    copying them."""
    model = _big_weight_model()
    skeleton = weightless(model)
    assert [t.name for t in skeleton.graph.initializer] == ["s"]
    assert [vi.name for vi in skeleton.graph.input] == ["x", "w"]
    assert skeleton.graph.input[1].type == _vi("w", [128, 160]).type
    assert len(model.graph.initializer) == 2  # the model itself is unchanged
    module = import_onnx(model)
    (main,) = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    assert main.function_type.outputs.data[0].get_shape() == (4, 80)
    (const,) = [
        op for op in module.walk() if isinstance(op, arith.ConstantOp) and len(op.value) > 1
    ]
    assert const.value.data.data == model.graph.initializer[0].raw_data


def test_weightless_keeps_bad_data_for_the_checker() -> None:
    """A big weight whose data does not match its shape is left for onnx's checker to refuse."""
    model = _big_weight_model()
    model.graph.initializer[0].raw_data = model.graph.initializer[0].raw_data[:-4]
    assert [t.name for t in weightless(model).graph.initializer] == ["w", "s"]
    with pytest.raises(T10Error, match="invalid ONNX model .* raw_data size"):
        import_onnx(model)


def test_gemm_unknown_attribute() -> None:
    model = make_model(
        [helper.make_node("Gemm", ["a", "b"], ["y"], name="g", gamma=2.0)],
        [_vi("a", [2, 3]), _vi("b", [3, 4])],
        [_vi("y", [2, 4])],
    )
    with pytest.raises(T10Error, match="gamma"):
        import_onnx(model)


@pytest.mark.parametrize(("key", "value"), [("alpha", float("inf")), ("beta", float("nan"))])
def test_gemm_scale_must_be_finite(key: str, value: float) -> None:
    """alpha = inf (found by benchmarks/fuzz.py): onnxruntime scales each term of its sum and
    gives NaN where t10's alpha·(A·B) gives ±inf; neither is defined, so it is refused."""
    model = make_model(
        [helper.make_node("Gemm", ["a", "b"], ["y"], name="g", **{key: value})],
        [_vi("a", [2, 3]), _vi("b", [3, 4])],
        [_vi("y", [2, 4])],
    )
    with pytest.raises(T10Error, match=rf"node 'g' \(Gemm\): {key} = {value} is not finite"):
        import_onnx(model)


@pytest.mark.parametrize("eps", [-1.0, float("nan"), float("inf")])
def test_layer_norm_epsilon_must_be_finite_and_not_negative(eps: float) -> None:
    """epsilon = -1 (found by benchmarks/fuzz.py): sqrt(var - 1) is NaN below 1 and amplifies
    float32 rounding near 1, where t10 and onnxruntime then differ by more than the check."""
    model = make_model(
        [helper.make_node("LayerNormalization", ["x", "g"], ["y"], name="ln", epsilon=eps)],
        [_vi("x", [2, 4]), _vi("g", [4])],
        [_vi("y", [2, 4])],
    )
    with pytest.raises(T10Error, match=rf"node 'ln' \(LayerNormalization\): epsilon = {eps} "
                                       "must be finite and >= 0"):
        import_onnx(model)


def test_legacy_opset_is_refused_with_a_conversion_hint() -> None:
    model = make_model(
        [helper.make_node("Add", ["x", "b"], ["y"], broadcast=1, axis=0)],
        [_vi("x", [2, 3])],
        [_vi("y", [2, 3])],
        [("b", _rand(2))],
        opset=6,
    )
    with pytest.raises(T10Error, match=r"uses opset 6 of the default domain; supported are "
                       r"opsets 7 to 28 .*: convert it with onnx.version_converter"):
        import_onnx(model)


def test_rank0_elementwise_is_refused() -> None:
    model = make_model(
        [helper.make_node("Mul", ["x", "x"], ["y"], name="square")], [_vi("x", [])], [_vi("y", [])]
    )
    with pytest.raises(T10Error, match=r"node 'square': element-wise ops on rank-0"):
        import_onnx(model)


def test_non_tensor_input_is_refused() -> None:
    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])
    model = make_model([helper.make_node("Identity", ["s"], ["y"])], [seq], [seq])
    model.graph.output[0].name = "y"
    with pytest.raises(T10Error, match=r"graph input 's' is not a tensor \(its ONNX type is seq"):
        import_onnx(model)


# --------------------------------------------------------------------------------------------
# Element-wise operators with math bodies, and the pass-through operators
# --------------------------------------------------------------------------------------------

ELEMENTWISE_BODIES: dict[str, list[str]] = {
    "Div": ["arith.divf"],
    "Pow": ["math.powf"],
    "Neg": ["arith.negf"],
    "Sqrt": ["math.sqrt"],
    "Reciprocal": ["arith.constant", "arith.divf"],
    "Exp": ["math.exp"],
    "Tanh": ["math.tanh"],
    "Erf": ["math.erf"],
    "Sigmoid": ["arith.constant", "arith.negf", "math.exp", "arith.addf", "arith.divf"],
}
"""op type → the ops of its element-wise body (before the linalg.yield)."""


def _positive(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Inputs in [0.5, 2): Sqrt and Pow are defined there, Div and Reciprocal are tame."""
    return {k: (np.abs(v) % 1.5 + 0.5).astype(np.float32) for k, v in _random_inputs(model).items()}


@pytest.mark.parametrize("op_type", sorted(ELEMENTWISE_BODIES))
def test_elementwise_math_bodies(op_type: str) -> None:
    binary = op_type in ("Div", "Pow")
    inputs = [_vi("x", [3, 1, 5])] + ([_vi("y", [4, 1])] if binary else [])
    model = make_model(
        [helper.make_node(op_type, [vi.name for vi in inputs], ["z"], name="ew")],
        inputs,
        [_vi("z", [3, 4, 5] if binary else [3, 1, 5])],
    )
    (g,) = generics(check_against_ort(model, feeds=_positive(model)))
    check_against_ort(model)  # negative inputs too (NaN where ONNX says NaN)
    assert name_of(g) == "ew" and iterators(g) == ["parallel"] * 3
    assert [op.name for op in g.body.block.ops] == [*ELEMENTWISE_BODIES[op_type], "linalg.yield"]
    if binary:
        assert maps(g)[1] == "(d0, d1, d2) -> (d1, 0)"


@pytest.mark.parametrize(("approximate", "phi"), [(None, "math.erf"), ("tanh", "math.tanh")])
def test_gelu(approximate: str | None, phi: str) -> None:
    attrs = {} if approximate is None else {"approximate": approximate}
    model = make_model(
        [helper.make_node("Gelu", ["x"], ["y"], name="act", **attrs)],
        [_vi("x", [8, 16])],
        [_vi("y", [8, 16])],
        opset=20,
    )
    x = np.linspace(-6, 6, 128, dtype=np.float32).reshape(8, 16)
    (g,) = generics(check_against_ort(model, feeds={"x": x}))
    body = [op.name for op in g.body.block.ops]
    assert phi in body and "math.powf" not in body
    assert print_module(import_onnx(model)).count("math.") == 1


def test_gelu_unknown_approximation() -> None:
    model = make_model(
        [helper.make_node("Gelu", ["x"], ["y"], name="act", approximate="sigmoid")],
        [_vi("x", [2, 3])],
        [_vi("y", [2, 3])],
        opset=20,
    )
    with pytest.raises(T10Error, match=r"approximate='sigmoid' is not a Gelu approximation"):
        import_onnx(model)


def test_sigmoid_saturates_without_overflow() -> None:
    model = make_model(
        [helper.make_node("Sigmoid", ["x"], ["y"])], [_vi("x", [6])], [_vi("y", [6])]
    )
    x = np.array([-1e4, -100, -20, 20, 100, 1e4], dtype=np.float32)
    check_against_ort(model, feeds={"x": x})


def test_math_bodies_round_trip() -> None:
    model = make_model(
        [
            helper.make_node("Sigmoid", ["x"], ["s"]),
            helper.make_node("Pow", ["s", "x"], ["p"]),
            helper.make_node("Erf", ["p"], ["y"]),
        ],
        [_vi("x", [2, 3])],
        [_vi("y", [2, 3])],
    )
    text = print_module(import_onnx(model))
    assert print_module(Parser(_ctx(), text).parse_module()) == text


def test_dropout_inference_is_identity() -> None:
    model = make_model(
        [
            helper.make_node("Dropout", ["x", "r", "t"], ["d", "unused_mask"], name="drop"),
            helper.make_node("Relu", ["d"], ["y"]),
        ],
        [_vi("x", [4, 5])],
        [_vi("y", [4, 5])],
        [("r", np.array(0.3, dtype=np.float32))],
    )
    model.graph.initializer.append(numpy_helper.from_array(np.array(False), "t"))
    module = check_against_ort(model)
    assert [name_of(g) for g in generics(module)] == ["Relu_1"]


def test_dropout_used_mask_and_training_mode_are_refused() -> None:
    mask = make_model(
        [
            helper.make_node("Dropout", ["x"], ["d", "m"], name="drop"),
            helper.make_node("Identity", ["m"], ["mask"]),
        ],
        [_vi("x", [4, 5])],
        [_vi("d", [4, 5]), _vi("mask", [4, 5], TensorProto.BOOL)],
    )
    with pytest.raises(T10Error, match=r"'drop' \(Dropout\): the mask output 'm' is used"):
        import_onnx(mask)
    training = make_model(
        [helper.make_node("Dropout", ["x", "", "t"], ["d"], name="drop")],
        [_vi("x", [4, 5])],
        [_vi("d", [4, 5])],
    )
    training.graph.initializer.append(numpy_helper.from_array(np.array(True), "t"))
    with pytest.raises(T10Error, match=r"training mode is not supported: training_mode 't'"):
        import_onnx(training)


def test_cast_to_float_is_identity_others_are_refused() -> None:
    def cast_model(to: int) -> onnx.ModelProto:
        return make_model(
            [helper.make_node("Cast", ["x"], ["y"], name="cast", to=to)],
            [_vi("x", [2, 3])],
            [_vi("y", [2, 3], to)],
        )

    module = check_against_ort(cast_model(TensorProto.FLOAT))
    assert not generics(module)
    with pytest.raises(T10Error, match=r"'cast' \(Cast\): Cast from FLOAT to DOUBLE of a runtime"):
        import_onnx(cast_model(TensorProto.DOUBLE))
