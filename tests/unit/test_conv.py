"""Conv as an im2col (a window view, a contraction, a bias add, views back): every padding,
stride, dilation, group count and spatial rank compiled, simulated and checked against
onnxruntime in fp32 and fp16 (and by a property test), what it imports as, the patch embedding
of the Hugging Face ViT exports, BatchNormalization folded into it, and the clear errors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import CHIPS, DATA, float_model, run_and_check
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from t10.driver import CHECK_TOLERANCES, CompileOptions, run_model
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.t10_dialects import rtensor


def conv_model(
    x: tuple[int, ...],
    out_channels: int,
    kernel: tuple[int, ...],
    *,
    bias: bool = True,
    seed: int = 0,
    group: int = 1,
    **attrs: object,
) -> onnx.ModelProto:
    """One Conv of `x` with a constant weight [O, C/group, k...] (and bias [O]);
    `attrs` are the node's other attributes (None leaves one out)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((out_channels, x[1] // group, *kernel)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["x", "W"]
    if bias:
        b = rng.standard_normal(out_channels).astype(np.float32)
        inits.append(numpy_helper.from_array(b, "B"))
        inputs.append("B")
    attributes: dict[str, object] = {"kernel_shape": list(kernel)}
    if group != 1:
        attributes["group"] = group
    attributes.update(attrs)
    attributes = {k: v for k, v in attributes.items() if v is not None}
    node = helper.make_node("Conv", inputs, ["y"], name="conv", **attributes)
    return float_model([node], {"x": list(x)}, ["y"], inits)


def patchify_model(
    x: tuple[int, int, int, int], out_channels: int, kernel: tuple[int, int], **kw: object
) -> onnx.ModelProto:
    """ViT's patch embedding: strides == kernel."""
    return conv_model(x, out_channels, kernel, strides=list(kernel), **kw)  # type: ignore[arg-type]


def _generics_and_views(module: ModuleOp) -> list[Operation]:
    return [op for op in module.walk() if op.name in ("rtensor.view", "linalg.generic")]


# --------------------------------------------------------------------------------------------
# Against onnxruntime
# --------------------------------------------------------------------------------------------

PATCHIFY = [
    # (x [N, C, H, W], O, (kh, kw), bias)
    ((2, 3, 16, 8), 6, (4, 4), True),  # batch 2, a non-square image
    ((2, 2, 12, 20), 5, (4, 2), False),  # a non-square kernel, no bias
    ((1, 2, 10, 9), 3, (4, 4), True),  # the kernel divides neither H nor W (floored)
    ((1, 3, 8, 8), 5, (8, 8), True),  # one patch: the whole image
    ((2, 3, 32, 32), 64, (8, 8), True),  # ViT's patch embedding at the exports' sizes
]


@pytest.mark.parametrize(("x", "out_channels", "kernel", "bias"), PATCHIFY)
def test_patchify_matches_onnxruntime(
    x: tuple[int, int, int, int], out_channels: int, kernel: tuple[int, int], bias: bool, chip: str
) -> None:
    run_and_check(patchify_model(x, out_channels, kernel, bias=bias), chip, seed=1)


CONVS: dict[str, tuple[tuple[int, ...], int, tuple[int, ...], dict[str, object]]] = {
    # id: (x, O, kernel, attributes)
    "3x3 pad 1": ((2, 3, 8, 8), 4, (3, 3), {"pads": [1, 1, 1, 1]}),
    "stride 2 pad 3 (a ResNet stem)": ((1, 3, 15, 16), 8, (7, 7), {"strides": [2, 2],
                                                                   "pads": [3, 3, 3, 3]}),
    "asymmetric pads, strides, dilations": (
        (2, 2, 9, 7), 3, (3, 2), {"pads": [0, 1, 2, 0], "strides": [2, 1], "dilations": [1, 2]}
    ),
    "SAME_UPPER stride 2": ((1, 2, 7, 6), 3, (3, 3), {"auto_pad": "SAME_UPPER",
                                                      "strides": [2, 2]}),
    "SAME_LOWER": ((1, 2, 6, 5), 3, (2, 4), {"auto_pad": "SAME_LOWER"}),
    "VALID, kernel_shape from the weight": ((2, 3, 9, 12), 4, (3, 3), {"auto_pad": "VALID",
                                                                      "kernel_shape": None}),
    "1x1 stride 1 (no window)": ((2, 8, 5, 3), 6, (1, 1), {}),
    "1x1 stride 2 (a downsample)": ((1, 4, 7, 8), 8, (1, 1), {"strides": [2, 2]}),
    "grouped": ((2, 6, 6, 5), 4, (3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),
    "depthwise x2": ((1, 4, 8, 8), 8, (3, 3), {"group": 4, "strides": [2, 2],
                                               "pads": [1, 1, 1, 1]}),
    "1-D": ((2, 3, 11), 5, (3,), {"pads": [2, 1], "dilations": [2]}),
    "3-D": ((1, 2, 5, 6, 4), 3, (2, 3, 1), {"strides": [1, 2, 1], "pads": [1, 0, 0, 0, 1, 0]}),
}


def _conv(case: str, **kw: object) -> onnx.ModelProto:
    x, out_channels, kernel, attrs = CONVS[case]
    attrs = dict(attrs)
    group = int(attrs.pop("group", 1))  # type: ignore[call-overload]
    return conv_model(x, out_channels, kernel, group=group, **attrs, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CONVS)
def test_conv_matches_onnxruntime(case: str, chip: str) -> None:
    run_and_check(_conv(case, bias=case != "1-D"), chip, seed=1)


@pytest.mark.parametrize("case", ["3x3 pad 1", "asymmetric pads, strides, dilations",
                                  "depthwise x2", "3-D"])
def test_conv_fp16_matches_onnxruntime(case: str, chip: str) -> None:
    result = run_model(
        _conv(case),
        CompileOptions(chip=chip, precision="fp16"),
        check=CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed


def test_conv_of_a_computed_value_feeding_compute() -> None:
    """The Conv reads a computed value and its result is read by another operator."""
    model = _conv("3x3 pad 1")
    graph = model.graph
    graph.node[0].input[0] = "r"
    graph.node[0].output[0] = "c"
    graph.node.insert(0, helper.make_node("Relu", ["x"], ["r"]))
    graph.node.append(helper.make_node("Sigmoid", ["c"], ["y"]))
    run_and_check(model, "test-16", seed=1)


@st.composite
def _convs(draw: st.DrawFn) -> tuple[onnx.ModelProto, str]:
    rank = draw(st.integers(1, 3))
    group = draw(st.sampled_from([1, 1, 2, 3]))
    channels = group * draw(st.integers(1, 3))
    out_channels = group * draw(st.integers(1, 3))
    kernel = tuple(draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    dilations = draw(st.lists(st.integers(1, 2), min_size=rank, max_size=rank))
    strides = draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank))
    pads = draw(st.lists(st.integers(0, 2), min_size=2 * rank, max_size=2 * rank))
    size = [
        max((k - 1) * d + 1 - p - q, 1) + draw(st.integers(0, 6 if rank < 3 else 2))
        for k, d, p, q in zip(kernel, dilations, pads[:rank], pads[rank:], strict=True)
    ]
    model = conv_model(
        (draw(st.integers(1, 2)), channels, *size),
        out_channels,
        kernel,
        group=group,
        bias=draw(st.booleans()),
        strides=strides,
        dilations=dilations,
        pads=pads,
        seed=draw(st.integers(0, 99)),
    )
    return model, draw(st.sampled_from(CHIPS))


@settings(max_examples=15)
@given(_convs())
def test_conv_property(case: tuple[onnx.ModelProto, str]) -> None:
    """Any rank, kernel, stride, dilation, padding and group count matches onnxruntime."""
    model, chip = case
    run_and_check(model, chip, seed=2)


# --------------------------------------------------------------------------------------------
# What it imports as
# --------------------------------------------------------------------------------------------


def test_conv_imports_as_a_window_view_a_contraction_and_views_back() -> None:
    module = import_onnx(_conv("grouped"))
    ops = _generics_and_views(module)
    labels = [
        op.label.data if isinstance(op, rtensor.ViewOp) else op.attributes["t10.name"].data
        for op in ops
    ]
    assert labels == [f"conv:{i}" for i in range(7)]
    kinds = ["rtensor.view"] * 2 + ["linalg.generic", "rtensor.view", "linalg.generic"]
    assert [op.name for op in ops] == kinds + ["rtensor.view"] * 2
    shapes = [tuple(op.results[0].type.get_shape()) for op in ops]
    assert shapes == [
        (2, 2, 6, 5, 3, 3, 3),  # the windows [N, G, Ho, Wo, C/G, kh, kw]
        (2, 2, 30, 27),  # the patches [N, G, Ho·Wo, C/G·kh·kw]
        (2, 2, 30, 2),  # the contraction, one batch of G
        (2, 1, 2),  # the bias [O] as [G, 1, O/G]
        (2, 2, 30, 2),  # + bias
        (2, 2, 2, 30),
        (2, 4, 6, 5),  # back to NCHW
    ]
    window = ops[0]
    assert isinstance(window, rtensor.ViewOp) and window.padded is not None
    assert str(window.map.data) == (
        "(d0, d1, d2, d3, d4, d5, d6) -> (d0, ((d1 * 3) + d4), ((d2 + d5) + -1), "
        "((d3 + d6) + -1))"
    )
    # the weight [O, C/G, kh, kw] as a [G, C/G·kh·kw, O/G] constant, made at compile time
    model = _conv("grouped")
    w = numpy_helper.to_array(model.graph.initializer[0])
    matrix = next(
        op for op in module.walk()
        if isinstance(op, arith.ConstantOp) and op.result.name_hint == "W_as_patch_matrix_g2"
    )
    data = np.frombuffer(matrix.value.data.data, dtype="<f4")
    np.testing.assert_array_equal(
        data.reshape(2, 27, 2), w.reshape(2, 2, 27).transpose(0, 2, 1)
    )


def test_a_window_without_padding_is_not_a_padded_view() -> None:
    module = import_onnx(_conv("1x1 stride 2 (a downsample)"))
    window = next(op for op in module.walk() if isinstance(op, rtensor.ViewOp))
    assert window.padded is None


def test_a_weight_shared_by_two_convs_is_one_constant() -> None:
    model = patchify_model((1, 2, 8, 8), 2, (4, 4), bias=False)
    graph = model.graph
    graph.node[0].output[0] = "c"
    graph.node.append(
        helper.make_node("Conv", ["x", "W"], ["d"], kernel_shape=[4, 4], strides=[4, 4])
    )
    graph.node.append(helper.make_node("Add", ["c", "d"], ["y"]))
    module = import_onnx(model)
    hints = [op.result.name_hint for op in module.walk() if isinstance(op, arith.ConstantOp)]
    assert hints.count("W_as_patch_matrix") == 1
    run_and_check(model, "test-16", seed=1)


# --------------------------------------------------------------------------------------------
# BatchNormalization after a Conv
# --------------------------------------------------------------------------------------------


def _conv_bn(bias: bool, extra_reader: bool) -> onnx.ModelProto:
    """conv → BatchNormalization → y (and, with `extra_reader`, conv → Relu → z)."""
    model = _conv("3x3 pad 1", bias=bias)
    rng = np.random.default_rng(3)
    params = {
        "scale": rng.standard_normal(4),
        "shift": rng.standard_normal(4),
        "mean": rng.standard_normal(4),
        "var": rng.random(4) + 0.5,
    }
    graph = model.graph
    graph.initializer.extend(
        numpy_helper.from_array(v.astype(np.float32), k) for k, v in params.items()
    )
    graph.node[0].output[0] = "c"
    graph.node.append(
        helper.make_node("BatchNormalization", ["c", *params], ["y"], name="bn", epsilon=1e-3)
    )
    if extra_reader:
        graph.node.append(helper.make_node("Relu", ["c"], ["z"]))
        graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, None))
    return model


@pytest.mark.parametrize("bias", [True, False])
def test_batch_norm_folds_into_the_conv_it_alone_reads(bias: bool, chip: str) -> None:
    model = _conv_bn(bias, extra_reader=False)
    names = [
        op.attributes["t10.name"].data
        for op in import_onnx(model).walk()
        if op.name == "linalg.generic"
    ]
    assert names == ["conv:2", "conv:3"]  # the contraction and the folded bias, no BN
    run_and_check(model, chip, seed=1)


def test_batch_norm_of_a_conv_read_twice_stays_element_wise(chip: str) -> None:
    model = _conv_bn(True, extra_reader=True)
    names = [
        op.attributes["t10.name"].data
        for op in import_onnx(model).walk()
        if op.name == "linalg.generic"
    ]
    assert "bn" in names
    run_and_check(model, chip, seed=1)


# --------------------------------------------------------------------------------------------
# The Hugging Face ViT exports' patch embedding
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "patches"),
    [
        (
            "hf_vit_1layer.torchscript.onnx",
            "/module/embeddings/patch_embeddings/Transpose_output_0",
        ),
        ("hf_vit_1layer.dynamo.onnx", "transpose"),
    ],
)
def test_vit_patch_embedding_matches_onnxruntime(name: str, patches: str, chip: str) -> None:
    """pixel_values → Conv → Reshape → Transpose ([2, 16, 64] patch embeddings) cut out of the
    export; the rest of the model needs Concat (the CLS token)."""
    model = onnx.shape_inference.infer_shapes(onnx.load(DATA / name))
    sub = onnx.utils.Extractor(model).extract_model(["pixel_values"], [patches])
    assert [n.op_type for n in sub.graph.node if n.op_type == "Conv"] == ["Conv"]
    run_and_check(sub, chip, seed=1)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

_SUPPORTED = r"t10 supports Conv with an input \[N, C, spatial...\]"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            conv_model((1, 4, 8, 8), 6, (2, 2), group=4),
            r"node 'conv' \(Conv\): attribute group=4 does not divide the 4 input and 6 output "
            r"channels; " + _SUPPORTED,
        ),
        (
            conv_model((1, 4, 8, 8), 4, (2, 2), group=2, kernel_shape=[3, 3]),
            r"attribute kernel_shape \[3, 3\] differs from the weight's spatial shape \[2, 2\]",
        ),
        (
            conv_model((1, 1, 5, 5), 1, (3, 3), pads=[1, 1]),
            r"node 'conv' \(Conv\): Attribute pads has incorrect size",
        ),
        (
            conv_model((1, 1, 5, 5), 1, (3, 3), strides=[0, 1]),
            r"node 'conv' \(Conv\): Attribute strides must only contain "
            "positive values",
        ),
        (
            conv_model((1, 1, 5, 5), 1, (3, 3), auto_pad="SAME"),
            r"attribute auto_pad=SAME is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
        ),
        (
            conv_model((1, 1, 2, 5), 1, (3, 3)),
            r"the padded input \(spatial shape \[2, 5\], .*\) is smaller than the dilated "
            r"kernel \[3, 3\]",
        ),
    ],
    ids=["group", "kernel_shape", "pads", "strides", "auto_pad", "empty"],
)
def test_bad_convs_are_clear_errors(model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(T10Error, match=message):
        import_onnx(model)


def test_a_runtime_weight_is_a_clear_error() -> None:
    node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    graph = helper.make_graph(
        [node],
        "runtime_weight",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4]),
            helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 2, 2, 2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(
        T10Error,
        match=r"node 'Conv_0' \(Conv\): weight 'w' is computed at run time \(a graph input or "
        r"the result of a node\); " + _SUPPORTED + r".* a compile-time constant float32 weight",
    ):
        import_onnx(model)
