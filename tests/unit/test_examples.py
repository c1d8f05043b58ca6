"""Tests for the seeded example models and ``python -m t10.examples``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

from t10.driver import CompileOptions, check_tolerance, run_model
from t10.examples.__main__ import main
from t10.examples.models import EXAMPLES, IR_VERSION, OPSET, bert_ffn, chain, matmul, mlp
from t10.reference import reference_session


def _shape(vi: onnx.ValueInfoProto) -> list[int]:
    return [d.dim_value for d in vi.type.tensor_type.shape.dim]


def _io_shapes(model: onnx.ModelProto) -> tuple[list[list[int]], list[list[int]]]:
    inits = {t.name for t in model.graph.initializer}
    ins = [_shape(vi) for vi in model.graph.input if vi.name not in inits]
    return ins, [_shape(vi) for vi in model.graph.output]


def _run_ort(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = reference_session(model)
    return sess.run(None, {"input": x})[0]


def test_registry() -> None:
    assert set(EXAMPLES) == {"mlp", "bert-ffn", "matmul", "chain"}
    assert EXAMPLES["mlp"] is mlp and EXAMPLES["bert-ffn"] is bert_ffn
    assert EXAMPLES["matmul"] is matmul and EXAMPLES["chain"] is chain


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_models_are_valid_static_f32(name: str) -> None:
    model = EXAMPLES[name]()
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == IR_VERSION
    assert [(o.domain, o.version) for o in model.opset_import] == [("", OPSET)]
    for t in model.graph.initializer:
        assert t.data_type == TensorProto.FLOAT
    for vi in [*model.graph.input, *model.graph.output]:
        assert vi.type.tensor_type.elem_type == TensorProto.FLOAT
        assert all(d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)
    for node in model.graph.node:
        assert node.name


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_seeded_determinism(name: str) -> None:
    small = {"mlp": {"sizes": (6, 5, 4)}, "bert-ffn": {"hidden": 8, "inner": 16, "rows": 4},
             "chain": {"nodes": 7, "rows": 3, "cols": 5}}
    kwargs = small.get(name, {"m": 3, "k": 4, "n": 5})
    fn = EXAMPLES[name]
    a = fn(**kwargs, seed=7).SerializeToString()
    assert a == fn(**kwargs, seed=7).SerializeToString()
    assert a != fn(**kwargs, seed=8).SerializeToString()


def test_mlp_structure() -> None:
    model = mlp()
    assert _io_shapes(model) == ([[8, 256]], [[8, 10]])
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Add", "Relu"] * 2 + [
        "MatMul",
        "Add",
    ]
    assert [n.name for n in model.graph.node][:3] == ["fc1/MatMul", "fc1/Add", "fc1/Relu"]
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    assert weights["fc1.weight"].shape == (256, 512)
    assert weights["fc3.bias"].shape == (10,)
    # N(0, 1/sqrt(fan_in))
    assert abs(float(weights["fc1.weight"].std()) - 1 / np.sqrt(256)) < 0.003
    assert abs(float(weights["fc2.weight"].std()) - 1 / np.sqrt(512)) < 0.003
    assert model.graph.node[-1].output[0] == "output"


def test_mlp_custom_sizes_run() -> None:
    model = mlp(batch=3, sizes=(5, 7, 2), seed=1)
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    w = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    h = np.maximum(x @ w["fc1.weight"] + w["fc1.bias"], 0)
    want = h @ w["fc2.weight"] + w["fc2.bias"]
    np.testing.assert_allclose(_run_ort(model, x), want, rtol=1e-5, atol=1e-6)


def test_bert_ffn_structure() -> None:
    model = bert_ffn()
    assert _io_shapes(model) == ([[128, 768]], [[128, 768]])
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Add", "Relu", "MatMul", "Add"]
    shapes = {t.name: list(t.dims) for t in model.graph.initializer}
    assert sorted(shapes.values()) == [[768], [768, 3072], [3072], [3072, 768]]
    small = bert_ffn(rows=4, hidden=8, inner=16)
    x = np.ones((4, 8), dtype=np.float32)
    assert _run_ort(small, x).shape == (4, 8)


def test_matmul_structure() -> None:
    model = matmul(3, 4, 5, seed=2)
    assert _io_shapes(model) == ([[3, 4]], [[3, 5]])
    (node,) = model.graph.node
    assert node.op_type == "MatMul"
    (w,) = model.graph.initializer
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(_run_ort(model, x), x @ numpy_helper.to_array(w), rtol=1e-5)


def test_chain_structure() -> None:
    """Relu, Add, Mul, Tanh, Sigmoid over and over, each reading the previous output; a chain
    compiles into one fused operator and matches onnxruntime."""
    model = chain(nodes=12, rows=3, cols=5, seed=1)
    assert _io_shapes(model) == ([[3, 5]], [[3, 5]])
    assert [n.op_type for n in model.graph.node] == (
        ["Relu", "Add", "Mul", "Tanh", "Sigmoid"] * 3
    )[:12]
    nodes = list(model.graph.node)
    assert all(n.input[0] == p.output[0] for p, n in zip(nodes, nodes[1:], strict=False))
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    run = run_model(model, CompileOptions(chip="test-16"), inputs={"input": x},
                    check=check_tolerance("fp32"))
    assert run.check is not None and run.check.passed
    assert [op.name for op in run.report.ops] == ["+".join(f"n{i}" for i in range(12))]


@pytest.mark.parametrize(
    "call",
    [lambda: mlp(sizes=(4,)), lambda: mlp(batch=0), lambda: matmul(0, 1, 1), lambda: bert_ffn(-1),
     lambda: chain(nodes=0)],
)
def test_bad_sizes(call) -> None:
    with pytest.raises(ValueError):
        call()


def test_cli_writes_model(tmp_path) -> None:
    out = tmp_path / "mm.onnx"
    assert main(["matmul", "m=6", "k=7", "n=8", "seed=3", "-o", str(out)]) == 0
    model = onnx.load(out)
    assert _io_shapes(model) == ([[6, 7]], [[6, 8]])
    assert model.SerializeToString() == matmul(6, 7, 8, seed=3).SerializeToString()

    out2 = tmp_path / "mlp.onnx"
    assert main(["mlp", "batch=2", "sizes=4,6,3", "-o", str(out2)]) == 0
    assert _io_shapes(onnx.load(out2)) == ([[2, 4]], [[2, 3]])

    out3 = tmp_path / "ffn.onnx"
    assert main(["bert_ffn", "rows=2", "hidden=4", "inner=8", "-o", str(out3)]) == 0
    assert _io_shapes(onnx.load(out3)) == ([[2, 4]], [[2, 4]])


def test_cli_list(capsys) -> None:
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for name in EXAMPLES:
        assert name in out
    assert "sizes=256,512,256,10" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope", "-o", "x.onnx"], "unknown example 'nope'"),
        (["matmul", "q=1", "-o", "x.onnx"], "unknown option 'q'"),
        (["matmul", "m=abc", "-o", "x.onnx"], "option 'm' expects an integer"),
        (["matmul", "m", "-o", "x.onnx"], "expected key=value"),
        (["matmul", "m=0", "-o", "x.onnx"], "must be a positive integer"),
        (["matmul"], "missing -o"),
        ([], "missing model NAME"),
    ],
)
def test_cli_errors(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_module_entry_point(tmp_path) -> None:
    out = tmp_path / "m.onnx"
    proc = subprocess.run(
        [sys.executable, "-m", "t10.examples", "matmul", "m=2", "k=3", "n=4", "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert _io_shapes(onnx.load(out)) == ([[2, 3]], [[2, 4]])
