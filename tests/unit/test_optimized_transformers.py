"""The acceptance of the attention ops: a small BERT and a small GPT-2, in the graph forms
PyTorch's exporter writes them, optimised by onnxruntime's transformer optimizer (its fusions
into EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu / FastGelu) match
onnxruntime on ipu-mk2.

The zoo's BERT is that of the exporter but for two spots the optimizer's BERT patterns read:
the mask is unsqueezed twice (not once by axes [1, 2]) and the position ids are the rows of the
position buffer sliced to the ids' length (not a constant); ``exported_bert`` rewrites them.
GPT-2 (Hugging Face's, Conv1D as Reshape → Gemm → Reshape, the causal mask sliced from its bool
buffer by the scores' shape) is written here, as ``exported_gpt2``."""

from __future__ import annotations

import dataclasses
import logging
import math
from collections import Counter
from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.transformers.fusion_options import FusionOptions
from onnxruntime.transformers.optimizer import optimize_model

from t10.driver import CompileOptions, check_tolerance, run_model
from t10.examples import zoo

BATCH, SEQ, HIDDEN, HEADS, POSITIONS, VOCAB = 2, 4, 8, 2, 16, 20


def exported_bert() -> onnx.ModelProto:
    """The zoo's 2-layer BERT, tiny, with its mask and position ids as torch exports them."""
    entry = zoo.get("bert-base")
    config = dataclasses.replace(entry.config, hidden=HIDDEN, heads=HEADS, intermediate=16,
                                 vocab=VOCAB, max_positions=POSITIONS)
    model = entry.build(batch=BATCH, seq=SEQ, layers=2, config=config)
    graph = model.graph
    nodes: list[onnx.NodeProto] = []
    for node in graph.node:
        if node.op_type == "Unsqueeze" and node.input[0] == "attention_mask":
            nodes += [
                helper.make_node("Unsqueeze", ["attention_mask", "axis_1"], ["mask_1"]),
                helper.make_node("Unsqueeze", ["mask_1", "axis_2"], list(node.output)),
            ]
        elif node.op_type == "Gather" and node.input[1] == "position_ids":
            nodes += [
                helper.make_node("Shape", ["input_ids"], ["ids_shape"]),
                helper.make_node("Gather", ["ids_shape", "index_1"], ["ids_length"], axis=0),
                helper.make_node("Unsqueeze", ["ids_length", "axis_0"], ["ids_end"]),
                helper.make_node("Slice", ["position_buffer", "axis_0", "ids_end", "axis_1",
                                           "axis_1"], ["sliced_positions"]),
                helper.make_node("Gather", [node.input[0], "sliced_positions"], list(node.output),
                                 name=node.name, axis=0),
            ]
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [t for t in graph.initializer if t.name != "position_ids"]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    constants = {"axis_0": np.array([0]), "axis_1": np.array([1]), "axis_2": np.array([2]),
                 "index_1": np.array(1), "position_buffer": np.arange(POSITIONS)[None, :]}
    graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in constants.items())
    return model


class _Builder:
    """Nodes and seeded weights of a graph being written."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.weights: dict[str, np.ndarray] = {}
        self.rng = np.random.default_rng(0)

    def op(self, op_type: str, inputs: list[str], **attrs: object) -> str:
        output = f"{op_type}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, **attrs))
        return output

    def const(self, name: str, value: np.ndarray) -> str:
        self.weights[name] = value
        return name

    def param(self, name: str, *shape: int, mean: float = 0.0) -> str:
        return self.const(name, (mean + 0.2 * self.rng.standard_normal(shape)).astype(np.float32))

    def conv1d(self, prefix: str, x: str, fan_in: int, fan_out: int) -> str:
        """Hugging Face's Conv1D: [B, S, in] → Reshape → Gemm (weight [in, out]) → Reshape."""
        flat = self.op("Reshape", [x, self.const(f"shape/flat_{fan_in}", np.array([-1, fan_in]))])
        y = self.op("Gemm", [flat, self.param(f"{prefix}.weight", fan_in, fan_out),
                             self.param(f"{prefix}.bias", fan_out)])
        shape = self.const(f"shape/{fan_out}", np.array([BATCH, SEQ, fan_out]))
        return self.op("Reshape", [y, shape])

    def layer_norm(self, prefix: str, x: str) -> str:
        return self.op("LayerNormalization", [x, self.param(f"{prefix}.weight", HIDDEN, mean=1.0),
                                              self.param(f"{prefix}.bias", HIDDEN)],
                       axis=-1, epsilon=1e-5)


def _gpt2_attention(g: _Builder, prefix: str, x: str) -> str:
    """GPT-2's attention: c_attn, Split, heads (keys transposed to [B, N, d, S]), scores / √d,
    Where(causal mask sliced from the buffer by the scores' shape, scores, -10000), Softmax, ·
    V, heads merged, c_proj."""
    size = HIDDEN // HEADS
    qkv = g.conv1d(f"{prefix}.c_attn", x, HIDDEN, 3 * HIDDEN)
    parts = [f"{prefix}/{part}" for part in ("q", "k", "v")]
    g.nodes.append(helper.make_node("Split", [qkv, g.const("split", np.array([HIDDEN] * 3))],
                                    parts, name=f"{prefix}/Split", axis=2))
    heads_shape = g.const("shape/heads", np.array([BATCH, SEQ, HEADS, size]))
    q, k, v = (g.op("Reshape", [part, heads_shape]) for part in parts)
    q = g.op("Transpose", [q], perm=[0, 2, 1, 3])
    k = g.op("Transpose", [k], perm=[0, 2, 3, 1])
    v = g.op("Transpose", [v], perm=[0, 2, 1, 3])
    scores = g.op("Div", [g.op("MatMul", [q, k]), g.const("sqrt_d", np.array(math.sqrt(size),
                                                                             np.float32))])
    shape = g.op("Shape", [scores])
    last = g.op("Squeeze", [g.op("Slice", [shape, g.const("minus_1", np.array([-1])),
                                           g.const("big", np.array([2**31 - 1]))])])
    first = g.op("Squeeze", [g.op("Slice", [shape, g.const("minus_2", np.array([-2])),
                                            "minus_1"])])
    start = g.op("Unsqueeze", [g.op("Sub", [last, first]), g.const("axis_0", np.array([0]))])
    end = g.op("Unsqueeze", [last, "axis_0"])
    causal = np.tril(np.ones((POSITIONS, POSITIONS), bool))[None, None]
    rows = g.op("Slice", [g.const(f"{prefix}.bias", causal), start, end,
                          g.const("axis_2", np.array([2])), g.const("one", np.array([1]))])
    mask = g.op("Slice", [rows, g.const("zero", np.array([0])), end,
                          g.const("axis_3", np.array([3])), "one"])
    masked = g.op("Where", [mask, scores, g.const("masked_bias", np.array(-10000.0, np.float32))])
    context = g.op("MatMul", [g.op("Softmax", [masked], axis=-1), v])
    merged = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]),
                              g.const("shape/hidden", np.array([BATCH, SEQ, HIDDEN]))])
    return g.conv1d(f"{prefix}.c_proj", merged, HIDDEN, HIDDEN)


def _gelu_new(g: _Builder, x: str) -> str:
    """0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))."""
    def scalar(name: str, value: float) -> str:
        return g.const(name, np.array(value, np.float32))

    cube = g.op("Mul", [g.op("Pow", [x, scalar("three", 3.0)]), scalar("c", 0.044715)])
    inner = g.op("Mul", [g.op("Add", [x, cube]), scalar("sqrt_2_pi", math.sqrt(2 / math.pi))])
    one_plus = g.op("Add", [g.op("Tanh", [inner]), scalar("one_f", 1.0)])
    return g.op("Mul", [g.op("Mul", [x, scalar("half", 0.5)]), one_plus])


def exported_gpt2(layers: int = 2) -> onnx.ModelProto:
    """A tiny Hugging Face GPT-2 (token and position embeddings, pre-LayerNorm blocks of causal
    attention and a gelu_new MLP, final LayerNorm) as torch exports it."""
    g = _Builder()
    tokens = g.op("Gather", [g.param("wte", VOCAB, HIDDEN), "input_ids"], axis=0)
    positions = g.op("Gather", [g.param("wpe", POSITIONS, HIDDEN),
                                g.const("position_ids", np.arange(SEQ)[None, :])], axis=0)
    h = g.op("Add", [tokens, positions])
    for i in range(layers):
        a = _gpt2_attention(g, f"h.{i}.attn", g.layer_norm(f"h.{i}.ln_1", h))
        h = g.op("Add", [h, a])
        m = g.conv1d(f"h.{i}.mlp.c_fc", g.layer_norm(f"h.{i}.ln_2", h), HIDDEN, 4 * HIDDEN)
        m = g.conv1d(f"h.{i}.mlp.c_proj", _gelu_new(g, m), 4 * HIDDEN, HIDDEN)
        h = g.op("Add", [h, m])
    g.layer_norm("ln_f", h)
    g.nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        g.nodes, "gpt2",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, (BATCH, SEQ))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, (BATCH, SEQ, HIDDEN))],
        [numpy_helper.from_array(v, k) for k, v in g.weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def optimized(model: onnx.ModelProto, model_type: str, tmp_path: object) -> onnx.ModelProto:
    """onnxruntime's transformer optimizer's fusions (opt_level 0: its Python fusions only;
    without symbolic shape inference, which needs sympy); the com.microsoft opset it uses
    declared."""
    path = f"{tmp_path}/{model_type}.onnx"
    onnx.save(model, path)
    options = FusionOptions(model_type)
    options.enable_shape_inference = False
    logging.disable(logging.WARNING)  # it warns that the producer is not PyTorch
    try:
        result = optimize_model(path, model_type=model_type, num_heads=HEADS, hidden_size=HIDDEN,
                                opt_level=0, optimization_options=options).model
    finally:
        logging.disable(logging.NOTSET)
    if not any(o.domain == "com.microsoft" for o in result.opset_import):
        result.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return result


def op_types(model: onnx.ModelProto) -> Counter[str]:
    return Counter(f"{n.domain}.{n.op_type}".lstrip(".") for n in model.graph.node)


Case = tuple[Callable[[], onnx.ModelProto], str, dict[str, int], dict[str, np.ndarray]]

_RNG = np.random.default_rng(1)
CASES: dict[str, Case] = {
    "bert": (
        exported_bert, "bert",
        {"com.microsoft.EmbedLayerNormalization": 1, "com.microsoft.Attention": 2,
         "com.microsoft.SkipLayerNormalization": 4, "com.microsoft.BiasGelu": 2},
        {"input_ids": _RNG.integers(0, VOCAB, (BATCH, SEQ)),
         "token_type_ids": _RNG.integers(0, 2, (BATCH, SEQ)),
         # right padding, a token kept: the optimizer masks by key lengths (mask_index)
         "attention_mask": np.array([[1, 1, 1, 0], [1, 1, 1, 1]])},
    ),
    "gpt2": (
        exported_gpt2, "gpt2",
        {"com.microsoft.Attention": 2, "com.microsoft.SkipLayerNormalization": 4,
         "com.microsoft.FastGelu": 2},
        {"input_ids": _RNG.integers(0, VOCAB, (BATCH, SEQ))},
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_optimized_model_matches_onnxruntime_on_ipu(name: str, tmp_path: object) -> None:
    build, model_type, fused, inputs = CASES[name]
    model = optimized(build(), model_type, tmp_path)
    found = op_types(model)
    assert {op: found[op] for op in fused} == fused, found
    result = run_model(model, CompileOptions(chip="ipu-mk2"), inputs=inputs,
                       check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check
