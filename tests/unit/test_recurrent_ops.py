"""ONNX's recurrent layers (RNN, GRU, LSTM), unrolled by ``t10.frontend.ops_recurrent``,
against onnxruntime: properties over shapes, direction, layout, opset, activations and their
alpha / beta, clip, the optional inputs (B, sequence_lens, initial_h, initial_c, P) and
outputs (any subset of Y, Y_h, Y_c), the GRU's and LSTM's flags; the refusals by their
message; and an LSTM and a GRU sequence classifier end to end on ipu-mk2.

onnxruntime runs layout 0 only: a layout-1 layer is compared with its layout-0 twin (X and
the initial states transposed in, the outputs transposed back)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import onnx
import pytest
from helpers import ATOL, RTOL, randn
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CompileOptions, check_tolerance, run_model
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.reference import reference_session

OPTIONS = CompileOptions(chip="test-16")
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
OUTPUTS = {"RNN": ("Y", "Y_h"), "GRU": ("Y", "Y_h"), "LSTM": ("Y", "Y_h", "Y_c")}
OPTIONAL = {
    "RNN": ("B", "sequence_lens", "initial_h"),
    "GRU": ("B", "sequence_lens", "initial_h"),
    "LSTM": ("B", "sequence_lens", "initial_h", "initial_c", "P"),
}
FLAG = {"GRU": "linear_before_reset", "LSTM": "input_forget"}
ACTIVATIONS = {  # name → (takes alpha, takes beta), as onnxruntime reads them
    "Relu": (False, False),
    "Tanh": (False, False),
    "Sigmoid": (False, False),
    "Affine": (True, True),
    "LeakyRelu": (True, False),
    "ThresholdedRelu": (True, False),
    "ScaledTanh": (True, True),
    "HardSigmoid": (True, True),
    "Elu": (True, False),
    "Softsign": (False, False),
    "Softplus": (False, False),
}
PER_DIRECTION = {"RNN": 1, "GRU": 2, "LSTM": 3}


@dataclass(frozen=True)
class Layer:
    """One recurrent node and its graph: X and the initial states are graph inputs, the
    weights (and sequence_lens) initializers."""

    op: str
    seq: int = 3
    batch: int = 2
    size: int = 3
    hidden: int = 2
    direction: str = "forward"
    layout: int = 0
    opset: int = 22
    inputs: tuple[str, ...] = ("B",)
    outputs: tuple[str, ...] = ("Y", "Y_h")
    lengths: tuple[int, ...] | None = None
    attributes: tuple[tuple[str, object], ...] = ()

    @property
    def directions(self) -> int:
        return 2 if self.direction == "bidirectional" else 1

    def shape(self, role: str, layout: int) -> tuple[int, ...]:
        d, b, h = self.directions, self.batch, self.hidden
        state = (d, b, h) if layout == 0 else (b, d, h)
        return {
            "X": (self.seq, b, self.size) if layout == 0 else (b, self.seq, self.size),
            "initial_h": state, "initial_c": state, "Y_h": state, "Y_c": state,
            "Y": (self.seq, d, b, h) if layout == 0 else (b, self.seq, d, h),
        }[role]

    def model(self, layout: int | None = None) -> onnx.ModelProto:
        layout = self.layout if layout is None else layout
        g, d, h = GATES[self.op] * self.hidden, self.directions, self.hidden
        weights = {"W": 0.5 * randn(d, g, self.size, seed=1), "R": 0.5 * randn(d, g, h, seed=2)}
        if "B" in self.inputs:
            weights["B"] = 0.5 * randn(d, 2 * g, seed=3)
        if "P" in self.inputs:
            weights["P"] = 0.5 * randn(d, 3 * h, seed=4)
        initializers = [numpy_helper.from_array(v, k) for k, v in weights.items()]
        if "sequence_lens" in self.inputs:
            lengths = np.array(self.lengths or [self.seq] * self.batch, np.int32)
            initializers.append(numpy_helper.from_array(lengths, "sequence_lens"))
        runtime = [n for n in ("X", "initial_h", "initial_c") if n == "X" or n in self.inputs]
        names = ["X", "W", "R", *(n if n in self.inputs else "" for n in OPTIONAL[self.op])]
        attributes = {"hidden_size": h, "direction": self.direction, **dict(self.attributes)}
        if layout:
            attributes["layout"] = layout
        node = helper.make_node(self.op, names, list(self.outputs), **attributes)
        graph = helper.make_graph(
            [node], "recurrent",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, self.shape(n, layout))
             for n in runtime],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, self.shape(n, layout))
             for n in self.outputs if n],
            initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        return model


def assert_matches_onnxruntime(layer: Layer) -> None:
    """Layout 0: t10's run checked against onnxruntime's; layout 1: against onnxruntime's run
    of the layout-0 twin, transposed."""
    if layer.layout == 0:
        result = run_model(layer.model(), OPTIONS, check=check_tolerance("fp32"))
        assert result.check is not None and result.check.passed, result.check
        return
    feeds = {n: randn(*layer.shape(n, 1), seed=5 + k)
             for k, n in enumerate(("X", "initial_h", "initial_c"))
             if n == "X" or n in layer.inputs}
    got = run_model(layer.model(), OPTIONS, inputs=feeds).outputs
    outputs = [n for n in layer.outputs if n]
    twin_feeds = {n: v.transpose(1, 0, 2) for n, v in feeds.items()}
    want = reference_session(layer.model(layout=0)).run(outputs, twin_feeds)
    for name, value in zip(outputs, want, strict=True):
        back = value.transpose(2, 0, 1, 3) if name == "Y" else value.transpose(1, 0, 2)
        np.testing.assert_allclose(got[name], back, rtol=RTOL, atol=ATOL, err_msg=name)


@st.composite
def layers(draw: st.DrawFn, op: str) -> Layer:
    """Any layer of ``op``: seq 1-4, batch 1-3, input 1-5, hidden 1-4, each direction,
    layout (1 from opset 14), activations with and without alpha / beta, clip, the optional
    inputs (sequence_lens of lengths 1 to seq) and outputs."""
    seq, batch = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    opset = draw(st.sampled_from([7, 14, 22]))
    direction = draw(st.sampled_from(["forward", "reverse", "bidirectional"]))
    directions = 2 if direction == "bidirectional" else 1
    inputs = tuple(draw(st.sets(st.sampled_from(OPTIONAL[op]))))
    lengths = (tuple(draw(st.lists(st.integers(1, seq), min_size=batch, max_size=batch)))
               if "sequence_lens" in inputs else None)
    outputs = draw(st.lists(st.booleans(), min_size=len(OUTPUTS[op]), max_size=len(OUTPUTS[op]))
                   .filter(any))
    attributes: dict[str, object] = {}
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(sorted(ACTIVATIONS)),
                              min_size=PER_DIRECTION[op] * directions,
                              max_size=PER_DIRECTION[op] * directions))
        # names are case-insensitive (onnxruntime's RNN alone takes only these spellings)
        attributes["activations"] = [n.lower() if op != "RNN" and draw(st.booleans()) else n
                                     for n in names]
        values = st.floats(-1.5, 1.5, width=32)
        for role, k in (("activation_alpha", 0), ("activation_beta", 1)):
            taking = sum(ACTIVATIONS[n][k] for n in names)  # in order, then the defaults
            if taking and draw(st.booleans()):
                count = draw(st.integers(1, taking))
                attributes[role] = draw(st.lists(values, min_size=count, max_size=count))
    if draw(st.booleans()):
        attributes["clip"] = draw(st.floats(0.25, 3.0, width=32))
    if op in FLAG and draw(st.booleans()):
        attributes[FLAG[op]] = 1
    return Layer(op, seq, batch, draw(st.integers(1, 5)), draw(st.integers(1, 4)), direction,
                 draw(st.sampled_from([0, 1])) if opset >= 14 else 0, opset, inputs,
                 tuple(n if keep else "" for n, keep in zip(OUTPUTS[op], outputs, strict=True)),
                 lengths, tuple(attributes.items()))


@settings(max_examples=15, deadline=None)
@given(layer=layers("RNN"))
def test_rnn_matches_onnxruntime(layer: Layer) -> None:
    assert_matches_onnxruntime(layer)


@settings(max_examples=15, deadline=None)
@given(layer=layers("GRU"))
def test_gru_matches_onnxruntime(layer: Layer) -> None:
    assert_matches_onnxruntime(layer)


@settings(max_examples=15, deadline=None)
@given(layer=layers("LSTM"))
def test_lstm_matches_onnxruntime(layer: Layer) -> None:
    assert_matches_onnxruntime(layer)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_shorter_sequences_are_zero_past_their_end(op: str) -> None:
    """Batch entries of different lengths, each direction: Y zero past each entry's end,
    the final states those of its last step (as onnxruntime)."""
    layer = Layer(op, seq=4, batch=3, direction="bidirectional",
                  inputs=OPTIONAL[op], outputs=OUTPUTS[op], lengths=(2, 4, 1))
    assert_matches_onnxruntime(layer)


def test_a_one_direction_rnn_uses_the_first_of_two_activations() -> None:
    """ONNX's default activations are ["Tanh", "Tanh"] whatever the direction; onnxruntime
    reads the first for one direction."""
    assert_matches_onnxruntime(replace(Layer("RNN"), attributes=(
        ("activations", ["Relu", "Tanh"]),)))


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_a_layer_of_constants_is_computed_not_folded(op: str) -> None:
    """All inputs known: the layer is still lowered (onnx's reference evaluator, which folds
    other ops, ignores activations and clip)."""
    activations = {"RNN": ["Relu"], "GRU": ["HardSigmoid", "Relu"],
                   "LSTM": ["HardSigmoid", "Relu", "Softsign"]}[op]
    layer = replace(Layer(op), attributes=(("activations", activations), ("clip", 0.75)))
    model = layer.model()
    del model.graph.input[:]
    model.graph.initializer.append(numpy_helper.from_array(randn(3, 2, 3, seed=9), "X"))
    result = run_model(model, OPTIONS, check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check


def refused(layer: Layer, model: onnx.ModelProto | None = None) -> str:
    with pytest.raises(T10Error) as error:
        import_onnx(model or layer.model())
    return str(error.value)


LSTM = Layer("LSTM")


@pytest.mark.parametrize(
    ("layer", "message"),
    [
        (replace(LSTM, attributes=(("activations", ["Sigmoid", "Gelu", "Tanh"]),)),
         r"node 'LSTM_0' \(LSTM\): activation 'Gelu' is not supported \(onnxruntime "
         r"implements Relu, Tanh, Sigmoid, Affine,"),
        (replace(LSTM, attributes=(("activations", ["Sigmoid", "Tanh"]),)),
         r"activations lists 2 functions \(Sigmoid, Tanh\); LSTM takes 3 per direction "
         r"\(1 here\)"),
        (replace(LSTM, attributes=(("activations", ["LeakyRelu", "Tanh", "Tanh"]),
                                   ("activation_alpha", [0.1, 0.2]))),
         r"activation_alpha / activation_beta have 1 / 0 values more than the activations "
         r"LeakyRelu, Tanh, Tanh take: remove them"),
        (replace(Layer("RNN"), attributes=(("activations", ["Relu"]),
                                           ("activation_beta", [0.5]))),
         r"activation_alpha / activation_beta have 0 / 1 values more than the activations "
         r"Relu take"),
        (replace(LSTM, attributes=(("clip", 0.0),)), r"clip = 0.0 must be a positive threshold"),
        (replace(LSTM, inputs=("sequence_lens",), lengths=(3, 0)),
         r"sequence_lens \[3, 0\] must hold one length from 1 to the sequence length 3 per "
         r"batch entry \(2\)"),
        (replace(Layer("GRU"), attributes=(("linear_before_reset", 2),)),
         r"linear_before_reset = 2 is not one of 0, 1"),
        (replace(Layer("RNN"), direction="sideways"),
         r"direction = 'sideways' is not one of 'forward', 'reverse', 'bidirectional'"),
    ],
)
def test_refusals_name_the_node_and_the_reason(layer: Layer, message: str) -> None:
    found = refused(layer)
    assert re.search(message, found), found


def test_a_layer_without_hidden_size_is_refused() -> None:
    """ONNX lets R give the hidden size; onnxruntime refuses such a layer, so t10 does."""
    model = Layer("GRU").model()
    node = model.graph.node[0]
    kept = [a for a in node.attribute if a.name != "hidden_size"]
    del node.attribute[:]
    node.attribute.extend(kept)
    assert re.search(r"node 'GRU_0' \(GRU\): it has no positive hidden_size, which "
                     r"onnxruntime .* requires: give hidden_size = \d", refused(LSTM, model))


def test_a_runtime_sequence_lens_is_refused() -> None:
    """sequence_lens must be known at compile time (one unrolling per length)."""
    model = LSTM.model()
    node = model.graph.node[0]
    node.input[4] = "lengths"
    model.graph.input.append(helper.make_tensor_value_info("lengths", TensorProto.INT32, [2]))
    message = refused(LSTM, model)
    assert "node 'LSTM_0' (LSTM): it reads the INT32 value 'lengths' at run time" in message


def classifier(op: str) -> onnx.ModelProto:
    """Token ids [batch, seq] → embedding (a Gather) → [seq, batch, embed] → ``op`` → its last
    state Y_h → [batch, hidden] → a Gemm classifier: a tiny sequence model."""
    vocab, embed, hidden, classes, batch, seq = 20, 6, 5, 3, 2, 4
    g = GATES[op] * hidden
    weights = {
        "table": randn(vocab, embed, seed=1), "W": 0.5 * randn(1, g, embed, seed=2),
        "R": 0.5 * randn(1, g, hidden, seed=3), "B": 0.5 * randn(1, 2 * g, seed=4),
        "dense": randn(hidden, classes, seed=5), "bias": randn(classes, seed=6),
        "flat": np.array([batch, hidden], np.int64),
    }
    nodes = [
        helper.make_node("Gather", ["table", "tokens"], ["embedded"]),
        helper.make_node("Transpose", ["embedded"], ["steps"], perm=[1, 0, 2]),
        helper.make_node(op, ["steps", "W", "R", "B"], ["", "last"], hidden_size=hidden),
        helper.make_node("Reshape", ["last", "flat"], ["features"]),
        helper.make_node("Gemm", ["features", "dense", "bias"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, f"{op.lower()}_classifier",
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [batch, classes])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_a_sequence_classifier_matches_onnxruntime_on_ipu_mk2(op: str) -> None:
    result = run_model(classifier(op), CompileOptions(chip="ipu-mk2"),
                       check=check_tolerance("fp32"))
    assert result.check is not None and result.check.passed, result.check
