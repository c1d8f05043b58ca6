"""Seeded example ONNX models built with ``onnx.helper`` (opset 17, float32, static shapes).

Weights are drawn from N(0, 1/sqrt(fan_in)) with ``numpy.random.default_rng(seed)``, so a
(name, sizes, seed) triple always produces the same model bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["EXAMPLES", "OPSET", "IR_VERSION", "bert_ffn", "chain", "matmul", "mlp"]

OPSET = 17
IR_VERSION = 8


def _weight(rng: np.random.Generator, shape: Sequence[int], fan_in: int) -> np.ndarray:
    return (rng.standard_normal(tuple(shape)) / np.sqrt(fan_in)).astype(np.float32)


def _initializer(name: str, arr: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.ascontiguousarray(arr, dtype=np.float32), name=name)


def _value(name: str, shape: Sequence[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="t10.examples",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def _check_positive(**sizes: int) -> None:
    for key, value in sizes.items():
        if int(value) != value or value < 1:
            raise ValueError(f"size '{key}' must be a positive integer, got {value!r}")


def _linear(
    prefix: str,
    x: str,
    fan_in: int,
    fan_out: int,
    rng: np.random.Generator,
    nodes: list[onnx.NodeProto],
    inits: list[TensorProto],
    out: str | None = None,
) -> str:
    """Append ``x @ W + b`` as MatMul + Add nodes named ``{prefix}/MatMul``, ``{prefix}/Add``."""
    w, b = f"{prefix}.weight", f"{prefix}.bias"
    inits.append(_initializer(w, _weight(rng, (fan_in, fan_out), fan_in)))
    inits.append(_initializer(b, _weight(rng, (fan_out,), fan_in)))
    mm = f"{prefix}/MatMul_output"
    res = out or f"{prefix}/Add_output"
    nodes.append(helper.make_node("MatMul", [x, w], [mm], name=f"{prefix}/MatMul"))
    nodes.append(helper.make_node("Add", [mm, b], [res], name=f"{prefix}/Add"))
    return res


def _relu(prefix: str, x: str, nodes: list[onnx.NodeProto]) -> str:
    out = f"{prefix}/Relu_output"
    nodes.append(helper.make_node("Relu", [x], [out], name=f"{prefix}/Relu"))
    return out


def mlp(
    batch: int = 8, sizes: Sequence[int] = (256, 512, 256, 10), seed: int = 0
) -> onnx.ModelProto:
    """A multi-layer perceptron: (MatMul + bias Add + Relu) per layer, no Relu after the last.

    ``sizes`` are the feature widths: input, hidden..., output (at least two entries).
    """
    sizes = tuple(int(s) for s in sizes)
    _check_positive(batch=batch, **{f"sizes[{i}]": s for i, s in enumerate(sizes)})
    if len(sizes) < 2:
        raise ValueError(f"mlp needs at least two sizes (input and output), got {sizes}")
    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    inits: list[TensorProto] = []
    x = "input"
    n_layers = len(sizes) - 1
    for i in range(n_layers):
        last = i == n_layers - 1
        x = _linear(
            f"fc{i + 1}",
            x,
            sizes[i],
            sizes[i + 1],
            rng,
            nodes,
            inits,
            out="output" if last else None,
        )
        if not last:
            x = _relu(f"fc{i + 1}", x, nodes)
    graph = helper.make_graph(
        nodes,
        "mlp",
        [_value("input", (batch, sizes[0]))],
        [_value("output", (batch, sizes[-1]))],
        initializer=inits,
    )
    return _model(graph)


def bert_ffn(
    rows: int = 128, hidden: int = 768, inner: int = 3072, seed: int = 0
) -> onnx.ModelProto:
    """The BERT feed-forward block on ``rows`` tokens (batch·seq flattened): 2-D throughout.

    ``output = Relu(input @ W1 + b1) @ W2 + b2`` with W1: hidden×inner, W2: inner×hidden.
    (BERT uses GELU; Relu keeps the model within the supported operator set.)
    """
    _check_positive(rows=rows, hidden=hidden, inner=inner)
    rng = np.random.default_rng(seed)
    nodes: list[onnx.NodeProto] = []
    inits: list[TensorProto] = []
    h = _linear("ffn.intermediate", "input", hidden, inner, rng, nodes, inits)
    h = _relu("ffn.intermediate", h, nodes)
    _linear("ffn.output", h, inner, hidden, rng, nodes, inits, out="output")
    graph = helper.make_graph(
        nodes,
        "bert_ffn",
        [_value("input", (rows, hidden))],
        [_value("output", (rows, hidden))],
        initializer=inits,
    )
    return _model(graph)


def matmul(m: int = 256, k: int = 512, n: int = 512, seed: int = 0) -> onnx.ModelProto:
    """A single MatMul of an input [m, k] by a constant weight [k, n]."""
    _check_positive(m=m, k=k, n=n)
    rng = np.random.default_rng(seed)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["input", "weight"], ["output"], name="matmul")],
        "matmul",
        [_value("input", (m, k))],
        [_value("output", (m, n))],
        initializer=[_initializer("weight", _weight(rng, (k, n), k))],
    )
    return _model(graph)


CHAIN_OPS = ("Relu", "Add", "Mul", "Tanh", "Sigmoid")


def chain(nodes: int = 1000, rows: int = 64, cols: int = 64, seed: int = 0) -> onnx.ModelProto:
    """A chain of element-wise ops on one [rows, cols] tensor (a long graph).

    Node i applies ``CHAIN_OPS[i % 5]``: Relu, Add and Mul of a [rows, cols] constant, Tanh,
    Sigmoid; each reads the previous node's output.
    """
    _check_positive(nodes=nodes, rows=rows, cols=cols)
    rng = np.random.default_rng(seed)
    made: list[onnx.NodeProto] = []
    inits: list[TensorProto] = []
    x = "input"
    for i in range(nodes):
        op = CHAIN_OPS[i % len(CHAIN_OPS)]
        inputs = [x]
        if op in ("Add", "Mul"):
            inits.append(_initializer(f"c{i}", rng.uniform(0.5, 1.5, (rows, cols))))
            inputs.append(f"c{i}")
        x = "output" if i == nodes - 1 else f"n{i}_output"
        made.append(helper.make_node(op, inputs, [x], name=f"n{i}"))
    graph = helper.make_graph(
        made, "chain", [_value("input", (rows, cols))], [_value("output", (rows, cols))],
        initializer=inits,
    )
    return _model(graph)


EXAMPLES: dict[str, Callable[..., onnx.ModelProto]] = {
    "mlp": mlp,
    "bert-ffn": bert_ffn,
    "matmul": matmul,
    "chain": chain,
}
"""Example name → generator (keyword arguments are the sizes and ``seed``)."""
