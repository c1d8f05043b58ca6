"""ConvTranspose as a polyphase sum of im2col Convs (one per output phase) interleaved back by
views: strides, dilations, pads, output_padding, output_shape, auto_pad, groups, bias and 1-3
spatial dims compiled, simulated and checked against onnxruntime in fp32 and fp16 (and by a
property test), what it imports as, and the clear errors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import CHIPS, float_model, random_onnx_inputs, run_and_check
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects import arith

from t10.driver import CHECK_TOLERANCES, CompileOptions, run_model
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.t10_dialects import rtensor


def conv_transpose_model(
    x: tuple[int, ...],
    out_channels: int,
    kernel: tuple[int, ...],
    *,
    bias: bool = True,
    seed: int = 0,
    group: int = 1,
    **attrs: object,
) -> onnx.ModelProto:
    """One ConvTranspose of `x` with a constant weight [C, O/group, k...] (and bias [O]);
    `attrs` are the node's other attributes."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((x[1], out_channels // group, *kernel)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["x", "W"]
    if bias:
        b = rng.standard_normal(out_channels).astype(np.float32)
        inits.append(numpy_helper.from_array(b, "B"))
        inputs.append("B")
    attributes: dict[str, object] = {"group": group} if group != 1 else {}
    attributes.update(attrs)
    node = helper.make_node("ConvTranspose", inputs, ["y"], name="convt", **attributes)
    return float_model([node], {"x": list(x)}, ["y"], inits)


CASES: dict[str, tuple[tuple[int, ...], int, tuple[int, ...], dict[str, object]]] = {
    # id: (x, O, kernel, attributes)
    "1-D stride 1": ((2, 3, 6), 4, (3,), {}),
    "1-D stride 2": ((1, 2, 5), 3, (3,), {"strides": [2]}),
    "1-D stride 3, pads": ((1, 2, 5), 3, (4,), {"strides": [3], "pads": [1, 2]}),
    "1-D stride 2 dilation 2 (a phase without taps)": ((1, 2, 5), 2, (3,), {"strides": [2],
                                                                              "dilations": [2]}),
    "1-D stride 3 > kernel 2": ((1, 2, 4), 2, (2,), {"strides": [3]}),
    "2-D stride 2 (a decoder upsample)": ((2, 3, 4, 5), 4, (4, 4), {"strides": [2, 2],
                                                                    "pads": [1, 1, 1, 1]}),
    "2-D strides 3x2, dilations, pads, output_padding": (
        (1, 2, 4, 3), 3, (3, 2), {"strides": [3, 2], "dilations": [2, 1], "pads": [1, 0, 0, 2],
                                  "output_padding": [1, 1]}
    ),
    "2-D output_shape": ((1, 2, 3, 3), 2, (3, 3), {"strides": [3, 2], "output_shape": [10, 8]}),
    "2-D SAME_UPPER": ((1, 2, 4, 3), 3, (3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    "2-D SAME_LOWER": ((1, 2, 4, 3), 3, (4, 3), {"strides": [3, 2], "auto_pad": "SAME_LOWER"}),
    "2-D VALID": ((1, 2, 3, 4), 2, (2, 3), {"strides": [2, 1], "auto_pad": "VALID"}),
    "2-D grouped": ((1, 4, 3, 4), 6, (3, 3), {"group": 2, "strides": [2, 2], "pads": [1, 0, 1, 0]}),
    "2-D depthwise": ((2, 4, 4, 4), 4, (3, 3), {"group": 4, "strides": [2, 2],
                                                "output_padding": [1, 1]}),
    "3-D": ((1, 2, 3, 2, 3), 2, (2, 2, 3), {"strides": [2, 1, 2], "pads": [0, 1, 0, 1, 0, 1]}),
}


def _case(case: str, **kw: object) -> onnx.ModelProto:
    x, out_channels, kernel, attrs = CASES[case]
    attrs = dict(attrs)
    group = int(attrs.pop("group", 1))  # type: ignore[call-overload]
    return conv_transpose_model(x, out_channels, kernel, group=group, **attrs, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES)
def test_conv_transpose_matches_onnxruntime(case: str, chip: str) -> None:
    run_and_check(_case(case, bias=not case.startswith("1-D stride 3")), chip, seed=1)


@pytest.mark.parametrize("case", ["1-D stride 3, pads", "2-D stride 2 (a decoder upsample)",
                                  "2-D grouped", "3-D"])
def test_conv_transpose_fp16_matches_onnxruntime(case: str) -> None:
    result = run_model(
        _case(case),
        CompileOptions(chip="test-16", precision="fp16"),
        check=CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed


def test_same_with_a_stride_past_the_kernel_keeps_the_natural_size() -> None:
    """auto_pad SAME with stride 2 > kernel 1: the total padding 1 - 2 would be negative; like
    onnxruntime and ONNX shape inference, the output keeps the natural size 9 (the spec's
    reference implementation gives n·s = 10, its last position the bias only)."""
    model = conv_transpose_model((1, 2, 5), 3, (1,), strides=[2], auto_pad="SAME_UPPER")
    checked = run_and_check(model, "test-16", seed=3)
    assert checked.result.outputs["y"].shape == (1, 3, 9)
    assert ReferenceEvaluator(model).run(None, random_onnx_inputs(model))[0].shape == (1, 3, 10)


def test_conv_transpose_between_computed_values() -> None:
    """The ConvTranspose reads a computed value and its result is read by another operator."""
    model = _case("2-D stride 2 (a decoder upsample)")
    graph = model.graph
    graph.node[0].input[0] = "r"
    graph.node[0].output[0] = "c"
    graph.node.insert(0, helper.make_node("Relu", ["x"], ["r"]))
    graph.node.append(helper.make_node("Sigmoid", ["c"], ["y"]))
    run_and_check(model, "test-16", seed=1)


def test_the_bias_sum_is_within_the_planned_sram() -> None:
    """The phases' sum reads the bias [O] through a view as [O, 1, 1, 1, 1], moved into its
    layout while it runs: the plan search once counted that copy as resident (the bias's
    host placement) and bounded the peak 4 bytes below the simulated 344."""
    model = conv_transpose_model(
        (2, 2, 4, 3), 2, (2, 3), strides=[2, 2], dilations=[1, 2], output_shape=[8, 10]
    )
    checked = run_and_check(model, "test-16", seed=1)
    assert checked.result.report.peak_sram_bytes_per_core == 344


def test_a_weight_shared_by_two_conv_transposes_keeps_each_ones_taps() -> None:
    """Two ConvTransposes of one weight with different pads split it into different phase
    taps: one constant per tap set, made once (the second reads the first's phase 1 taps)."""
    model = conv_transpose_model((1, 2, 5), 3, (3,), strides=[2], bias=False)
    graph = model.graph
    graph.output[0].name = "y0"
    graph.node[0].output[0] = "y0"
    graph.node.append(
        helper.make_node("ConvTranspose", ["x", "W"], ["y1"], strides=[2], pads=[1, 1])
    )
    graph.output.append(helper.make_tensor_value_info("y1", TensorProto.FLOAT, None))
    hints = [
        str(op.results[0].name_hint)
        for op in import_onnx(model).walk()
        if isinstance(op, arith.ConstantOp) and "convtranspose" in str(op.results[0].name_hint)
    ]
    assert len(hints) == 2  # taps (0, 2) and (1,): pads 1 only swaps which phase reads them
    run_and_check(model, "test-16", seed=1)


@st.composite
def _conv_transposes(draw: st.DrawFn) -> tuple[onnx.ModelProto, str]:
    rank = draw(st.integers(1, 2))
    group = draw(st.sampled_from([1, 1, 2]))
    channels = group * draw(st.integers(1, 2))
    out_channels = group * draw(st.integers(1, 2))
    kernel = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    strides = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    dilations = draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank))
    size = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    attrs: dict[str, object] = {"strides": strides, "dilations": dilations}
    natural = [
        s * (n - 1) + (k - 1) * d + 1
        for s, n, k, d in zip(strides, size, kernel, dilations, strict=True)
    ]
    mode = draw(st.sampled_from(["pads", "pads", "output_shape", "SAME_UPPER", "SAME_LOWER"]))
    if mode == "pads":
        # output_padding below the stride (onnxruntime's bound); pads leaving an output
        attrs["output_padding"] = [draw(st.integers(0, s - 1)) for s in strides]
        pads = [draw(st.integers(0, max(0, (m - 1) // 2))) for m in natural * 2]
        attrs["pads"] = pads
    elif mode == "output_shape":  # from 3 below the natural size (positive pads) to
        # stride - 1 past it (negative ones), never below the input size: there ONNX 1.23's
        # shape inference drops the spatial dim (x [1, 2, 4], kernel 1 and output_shape [2]
        # is inferred [1, 2], a declared-shape error)
        attrs["output_shape"] = [
            draw(st.integers(max(n, m - 3), m + s - 1))
            for n, m, s in zip(size, natural, strides, strict=True)
        ]
    else:
        attrs["auto_pad"] = mode
    model = conv_transpose_model(
        (draw(st.integers(1, 2)), channels, *size),
        out_channels,
        kernel,
        group=group,
        bias=draw(st.booleans()),
        seed=draw(st.integers(0, 99)),
        **attrs,
    )
    return model, draw(st.sampled_from(CHIPS))


@settings(max_examples=25, deadline=None)
@given(_conv_transposes())
def test_conv_transpose_property(case: tuple[onnx.ModelProto, str]) -> None:
    """Any rank, kernel, stride, dilation, padding, output shape and group count matches
    onnxruntime."""
    model, chip = case
    run_and_check(model, chip, seed=2)


# --------------------------------------------------------------------------------------------
# What it imports as
# --------------------------------------------------------------------------------------------


def _ops(model: onnx.ModelProto) -> list[tuple[str, str, tuple[int, ...]]]:
    return [
        (
            op.name,
            op.label.data if isinstance(op, rtensor.ViewOp) else op.attributes["t10.name"].data,
            tuple(op.results[0].type.get_shape()),
        )
        for op in import_onnx(model).walk()
        if op.name in ("rtensor.view", "linalg.generic")
    ]


def test_stride_2_imports_as_two_phases_summed_and_interleaved_by_views() -> None:
    model = conv_transpose_model((1, 2, 5), 3, (3,), strides=[2])  # output 11 = 2·6 - 1
    view, generic = "rtensor.view", "linalg.generic"
    assert _ops(model) == [
        # phase 0: taps 0 and 2 (flipped) read x[t - 1 + r]: window, patches, contraction,
        # views back to [N, O, T, 1], the padded view placing it at a = 0 of [N, O, T, s]
        (view, "convt:0", (1, 6, 2, 2)),
        (view, "convt:1", (1, 6, 4)),
        (generic, "convt:2", (1, 6, 3)),
        (view, "convt:3", (1, 3, 6)),
        (view, "convt:4", (1, 3, 6, 1)),
        (view, "convt:5", (1, 3, 6, 2)),
        # phase 1: tap 1 reads x[t]
        (view, "convt:6", (1, 6, 2, 1)),
        (view, "convt:7", (1, 6, 2)),
        (generic, "convt:8", (1, 6, 3)),
        (view, "convt:9", (1, 3, 6)),
        (view, "convt:10", (1, 3, 6, 1)),
        (view, "convt:11", (1, 3, 6, 2)),
        # the bias [O, 1, 1], one sum, the interleave (t, a) -> 2t + a and the crop to 11
        (view, "convt:12", (3, 1, 1)),
        (generic, "convt:13", (1, 3, 6, 2)),
        (view, "convt:14", (1, 3, 12)),
        (view, "convt:15", (1, 3, 11)),
    ]


def test_stride_1_is_one_conv_with_the_flipped_kernel() -> None:
    model = conv_transpose_model((1, 1, 5), 1, (3,), bias=False)
    ops = _ops(model)
    assert [kind for kind, _, _ in ops].count("linalg.generic") == 1  # one contraction
    (weight,) = (
        op
        for op in import_onnx(model).walk()
        if isinstance(op, arith.ConstantOp)
        and "convtranspose_taps" in str(op.results[0].name_hint)
    )
    values = np.array(weight.value.get_values(), dtype=np.float32)  # type: ignore[attr-defined]
    w = numpy_helper.to_array(model.graph.initializer[0])
    np.testing.assert_array_equal(values.ravel(), w.ravel()[::-1])


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

_SUPPORTED = r"t10 supports ConvTranspose with an input \[N, C, spatial...\]"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            conv_transpose_model((1, 3, 4, 4), 3, (2, 2), group=2),
            r"node 'convt' \(ConvTranspose\): Input channels C must be divisible by "
            "group",
        ),
        (
            conv_transpose_model((1, 2, 4, 4), 2, (2, 2), kernel_shape=[3, 3]),
            r"attribute kernel_shape \[3, 3\] differs from the weight's spatial shape \[2, 2\]",
        ),
        (
            conv_transpose_model((1, 2, 4, 4), 2, (2, 2), auto_pad="SAME"),
            r"attribute auto_pad=SAME is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
        ),
        (
            conv_transpose_model((1, 1, 2), 1, (2,), pads=[2, 1]),
            r"node 'convt' \(ConvTranspose\): the pads \[2, 1\] leave no output \(spatial "
            r"output shape \[0\]\)",
        ),
    ],
    ids=["group", "kernel_shape", "auto_pad", "empty"],
)
def test_bad_conv_transposes_are_clear_errors(model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(T10Error, match=message):
        import_onnx(model)


def test_an_output_shape_below_the_input_size_meets_onnx_shape_inference() -> None:
    """ONNX 1.23's shape inference drops the spatial dim of an output_shape entry below the
    input's size ([1, 2, 4] to output_shape [2] is inferred [1, 2]); onnxruntime and t10
    compute [1, 2, 2], so the declared graph output refuses it, naming both shapes."""
    model = conv_transpose_model((1, 2, 4), 2, (1,), dilations=[2], output_shape=[2])
    with pytest.raises(
        T10Error,
        match=r"graph output 'y' is declared with shape \[1, 2\] but computes shape \[1, 2, 2\]",
    ):
        import_onnx(model)


def test_a_runtime_weight_is_a_clear_error() -> None:
    node = helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2])
    graph = helper.make_graph(
        [node],
        "runtime_weight",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 3, 2, 2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(
        T10Error,
        match=r"node 'ConvTranspose_0' \(ConvTranspose\): weight 'w' is computed at run time "
        r"\(a graph input or the result of a node\); " + _SUPPORTED,
    ):
        import_onnx(model)
