"""Conv as a patch embedding (ViT's patchify: kernel_shape == strides, no padding): the views,
contraction and bias add it imports as, compiled, simulated and checked against onnxruntime
(with the compile / simulate / compare helpers of test_view_ops), the patch embedding of the
Hugging Face ViT exports, and the clear errors of every other Conv."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import DATA, float_model, run_and_check
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp

from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.t10_dialects import rtensor


def conv_model(
    x: tuple[int, int, int, int],
    out_channels: int,
    kernel: tuple[int, int],
    *,
    bias: bool = True,
    seed: int = 0,
    **attrs: object,
) -> onnx.ModelProto:
    """One Conv of `x` with a constant weight [O, C, kh, kw] (and bias [O]); strides default
    to the kernel (a patchify), `attrs` override the node's attributes."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((out_channels, x[1], *kernel)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W")]
    inputs = ["x", "W"]
    if bias:
        b = rng.standard_normal(out_channels).astype(np.float32)
        inits.append(numpy_helper.from_array(b, "B"))
        inputs.append("B")
    attributes: dict[str, object] = {"kernel_shape": list(kernel), "strides": list(kernel)}
    attributes.update(attrs)
    attributes = {k: v for k, v in attributes.items() if v is not None}
    node = helper.make_node("Conv", inputs, ["y"], name="patchify", **attributes)
    return float_model([node], {"x": list(x)}, ["y"], inits)


def _ops(module: ModuleOp) -> list[str]:
    return [op.name for op in module.body.block.first_op.body.block.ops]


# --------------------------------------------------------------------------------------------
# Against onnxruntime
# --------------------------------------------------------------------------------------------

SHAPES = [
    # (x [N, C, H, W], O, (kh, kw), bias)
    ((1, 3, 8, 8), 4, (4, 4), True),  # square, 4 patches
    ((2, 3, 16, 8), 6, (4, 4), True),  # batch 2, a non-square image
    ((2, 2, 12, 20), 5, (4, 2), False),  # a non-square kernel, no bias
    ((1, 2, 10, 9), 3, (4, 4), True),  # the kernel divides neither H nor W (floored)
    ((2, 1, 7, 8), 4, (3, 4), False),  # the kernel does not divide H
    ((1, 3, 8, 8), 5, (8, 8), True),  # one patch: the whole image
    ((1, 1, 4, 4), 3, (1, 1), True),  # a 1x1 kernel (a per-pixel projection), one channel
    ((3, 1, 2, 6), 1, (2, 3), False),  # one output channel, one row of patches
    ((2, 3, 32, 32), 64, (8, 8), True),  # ViT's patch embedding at the exports' sizes
]


@pytest.mark.parametrize(("x", "out_channels", "kernel", "bias"), SHAPES)
def test_conv_matches_onnxruntime(
    x: tuple[int, int, int, int], out_channels: int, kernel: tuple[int, int], bias: bool, chip: str
) -> None:
    run_and_check(conv_model(x, out_channels, kernel, bias=bias), chip, seed=1)


def test_valid_auto_pad_and_attribute_defaults(chip: str) -> None:
    """auto_pad VALID, no pads / dilations / group, kernel_shape taken from the weight."""
    model = conv_model((2, 3, 9, 12), 4, (3, 3), auto_pad="VALID", kernel_shape=None)
    run_and_check(model, chip, seed=1)


def test_conv_of_a_computed_value_feeding_compute() -> None:
    """The Conv reads a computed value and its result is read by another operator."""
    model = conv_model((2, 2, 8, 12), 3, (4, 4))
    graph = model.graph
    graph.node[0].input[0] = "r"
    graph.node[0].output[0] = "c"
    graph.node.insert(0, helper.make_node("Relu", ["x"], ["r"]))
    graph.node.append(helper.make_node("Sigmoid", ["c"], ["y"]))
    run_and_check(model, "test-16", seed=1)


# --------------------------------------------------------------------------------------------
# What it imports as
# --------------------------------------------------------------------------------------------


def test_conv_imports_as_views_a_contraction_and_a_bias_add() -> None:
    model = conv_model((2, 3, 8, 12), 5, (4, 4))
    module = import_onnx(model)
    ops = [op for op in module.walk() if op.name in ("rtensor.view", "linalg.generic")]
    labels = [
        op.label.data if isinstance(op, rtensor.ViewOp) else op.attributes["t10.name"].data
        for op in ops
    ]
    assert [op.name for op in ops] == ["rtensor.view"] * 3 + ["linalg.generic"] * 2 + [
        "rtensor.view"
    ] * 2
    assert labels == [f"patchify:{i}" for i in range(7)]
    shapes = [tuple(op.results[0].type.get_shape()) for op in ops]
    assert shapes == [
        (2, 3, 2, 4, 3, 4),  # split H and W into (patch, offset)
        (2, 2, 3, 3, 4, 4),  # patch indices first
        (2, 6, 48),  # [N, patches, C·kh·kw]
        (2, 6, 5),  # the contraction
        (2, 6, 5),  # + bias
        (2, 2, 3, 5),
        (2, 5, 2, 3),  # back to NCHW
    ]
    # the weight is a [C·kh·kw, O] constant reshaped at compile time
    w = numpy_helper.to_array(model.graph.initializer[0])
    matrices = [
        op for op in module.walk() if isinstance(op, arith.ConstantOp) and op.result.name_hint
    ]
    matrix = next(op for op in matrices if op.result.name_hint == "W_as_patch_matrix")
    data = np.frombuffer(matrix.value.data.data, dtype="<f4")
    np.testing.assert_array_equal(data.reshape(48, 5), w.reshape(5, 48).T)


def test_a_kernel_not_dividing_the_image_slices_first() -> None:
    module = import_onnx(conv_model((1, 2, 10, 9), 3, (4, 4), bias=False))
    views = [op for op in module.walk() if isinstance(op, rtensor.ViewOp)]
    first = views[0]
    assert first.label.data == "patchify:0"
    assert tuple(first.results[0].type.get_shape()) == (1, 2, 8, 8)
    assert str(first.map.data) == "(d0, d1, d2, d3) -> (d0, d1, d2, d3)"
    generics = [op for op in module.walk() if op.name == "linalg.generic"]
    assert len(generics) == 1  # no bias: the contraction only


def test_a_weight_shared_by_two_convs_is_one_constant() -> None:
    model = conv_model((1, 2, 8, 8), 2, (4, 4), bias=False)
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

_SUPPORTED = r"is not supported; t10 supports Conv only as a patch embedding: 2-D \(NCHW input\)"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            conv_model((1, 1, 5, 5), 1, (3, 3), pads=[1, 1, 1, 1]),
            r"node 'patchify' \(Conv\): attribute pads \[1, 1, 1, 1\] " + _SUPPORTED,
        ),
        (
            conv_model((1, 1, 6, 6), 1, (3, 3), auto_pad="SAME_UPPER"),
            r"attribute auto_pad=SAME_UPPER \(it pads the input\) " + _SUPPORTED,
        ),
        (
            conv_model((1, 1, 7, 5), 1, (3, 3), strides=[2, 2]),
            r"attribute strides \[2, 2\] with kernel_shape \[3, 3\] \(windows that overlap or "
            r"leave gaps\) " + _SUPPORTED,
        ),
        (
            conv_model((1, 1, 8, 8), 1, (2, 2), dilations=[2, 2]),
            r"attribute dilations \[2, 2\] " + _SUPPORTED,
        ),
        (
            conv_model((1, 4, 8, 8), 4, (2, 2), group=4),
            r"attribute group=4 \(a grouped convolution\) " + _SUPPORTED,
        ),
        (
            conv_model((1, 2, 8), 3, (4,)),
            r"a 1-D convolution \(input shape \[1, 2, 8\], weight shape \[3, 2, 4\]\) "
            + _SUPPORTED,
        ),
        (
            conv_model((1, 1, 4, 4, 4), 2, (2, 2, 2)),
            r"a 3-D convolution \(input shape \[1, 1, 4, 4, 4\]",
        ),
    ],
    ids=["pads", "auto_pad", "strides", "dilations", "group", "1-D", "3-D"],
)
def test_other_convs_are_clear_errors(model: onnx.ModelProto, message: str) -> None:
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
        match=r"node 'Conv_0' \(Conv\): weight 'w' computed at run time \(a graph input or the "
        r"result of a node\) " + _SUPPORTED + r".* and a compile-time constant weight",
    ):
        import_onnx(model)
