"""Nearest-neighbour Resize / Upsample and DepthToSpace / SpaceToDepth as views, linear and
cubic Resize as contractions (t10/frontend/ops_resample.py) against onnxruntime: torch-style
upsampling CNNs in fp32 and fp16, the refusals, and properties over sizes and every coordinate
transformation and rounding mode: each nearest Resize either matches onnxruntime exactly or is
refused by name; each interpolating one matches within float tolerance."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from helpers import randn, run_and_check
from hypothesis import assume, event, given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CHECK_TOLERANCES, CompileOptions, run_model
from t10.errors import T10Error
from t10.frontend import import_onnx

node = helper.make_node


def model_of(
    nodes: list[onnx.NodeProto],
    x_shape: list[int],
    weights: dict[str, np.ndarray],
    opset: int = 19,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "resample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, n) for n, w in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return onnx.shape_inference.infer_shapes(model)


def upsampling_cnn() -> onnx.ModelProto:
    """Conv → Resize ×2 (torch's nn.Upsample: asymmetric, floor) → Conv, a decoder stage."""
    return model_of(
        [
            node("Conv", ["x", "k1"], ["c1"], pads=[1, 1, 1, 1]),
            node("Relu", ["c1"], ["r1"]),
            node("Resize", ["r1", "", "scales"], ["up"], mode="nearest",
                 coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
            node("Conv", ["up", "k2"], ["y"], pads=[1, 1, 1, 1]),
        ],
        [1, 3, 6, 6],
        {
            "k1": randn(8, 3, 3, 3, seed=1) * 0.3,
            "k2": randn(4, 8, 3, 3, seed=2) * 0.2,
            "scales": np.array([1, 1, 2, 2], np.float32),
        },
    )


def test_upsampling_cnn_matches_onnxruntime(chip: str) -> None:
    run_and_check(upsampling_cnn(), chip)


def test_upsampling_cnn_in_fp16_matches_onnxruntime() -> None:
    result = run_model(
        upsampling_cnn(),
        CompileOptions(chip="ipu-mk2", precision="fp16"),
        check=CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed, result.check


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_of_opset_9_matches_onnxruntime(mode: str, chip: str) -> None:
    model = model_of(
        [node("Upsample", ["x", "scales"], ["y"], mode=mode)],
        [2, 3, 4, 5],
        {"scales": np.array([1, 1, 3, 2], np.float32)},
        opset=9,
    )
    run_and_check(model, chip)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_and_back_match_onnxruntime(mode: str, chip: str) -> None:
    model = model_of(
        [
            node("DepthToSpace", ["x"], ["d"], blocksize=2, mode=mode),
            node("Mul", ["d", "two"], ["m"]),
            node("SpaceToDepth", ["m"], ["y"], blocksize=2),
        ],
        [2, 8, 3, 5],
        {"two": np.array(2.0, np.float32)},
        opset=13,
    )
    run_and_check(model, chip)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"mode": "area"}, r"mode 'area' is not nearest, linear or cubic"),
        ({"mode": "nearest", "coordinate_transformation_mode": "tf_crop_and_resize"},
         r"coordinate_transformation_mode 'tf_crop_and_resize' reads outside the input"),
    ],
)
def test_resizes_that_are_refused(attrs: dict[str, str], message: str) -> None:
    model = model_of(
        [node("Resize", ["x", "roi", "scales"], ["y"], name="up", **attrs)],
        [1, 1, 4, 4],
        {"roi": np.array([0, 0, 0, 0, 1, 1, 1, 1], np.float32),
         "scales": np.array([1, 1, 2, 2], np.float32)},
    )
    with pytest.raises(T10Error, match=r"node 'up' \(Resize\): " + message):
        import_onnx(model)


TRANSFORMS = ["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
              "asymmetric"]
ROUNDINGS = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
REFUSALS = (
    "which are not (p*i + q) floordiv r",
    "float arithmetic does not reach exactly",
    "in double but",
    "reads the resized length",
)
"""What a Resize that is not a view, or not well conditioned, is refused with."""


def resize_model(
    source: list[int], target: list[int], by_scales: bool, **attrs: Any
) -> onnx.ModelProto:
    """A Resize of x [1, 2, *source] to [1, 2, *target], given as scales (target / source)
    or as sizes."""
    if by_scales:
        scales = np.array([1, 1, *(t / s for t, s in zip(target, source, strict=True))],
                          np.float32)
        inputs, weights = ["x", "", "scales"], {"scales": scales}
    else:
        inputs, weights = ["x", "", "", "sizes"], {"sizes": np.array([1, 2, *target], np.int64)}
    return model_of([node("Resize", inputs, ["y"], name="resize", **attrs)], [1, 2, *source],
                    weights)


@given(
    source=st.lists(st.integers(1, 9), min_size=2, max_size=2),
    target=st.lists(st.integers(1, 20), min_size=2, max_size=2),
    transform=st.sampled_from(TRANSFORMS),
    rounding=st.sampled_from(ROUNDINGS),
    by_scales=st.booleans(),
)
def test_nearest_resize_is_exact_or_refused(
    source: list[int], target: list[int], transform: str, rounding: str, by_scales: bool
) -> None:
    """Any sizes (or scales), any coordinate transformation and rounding: t10's values equal
    onnxruntime's exactly, or the Resize is refused naming the positions it would read."""
    model = resize_model(source, target, by_scales, mode="nearest",
                         coordinate_transformation_mode=transform, nearest_mode=rounding)
    try:
        run_and_check(model, "test-16")
    except T10Error as e:
        assert any(why in str(e) for why in REFUSALS), e
        event("refused")


@pytest.mark.parametrize(
    ("transform", "rounding", "factor"),
    [
        ("asymmetric", "floor", 2.0),  # torch nn.Upsample(mode="nearest")
        ("asymmetric", "floor", 3.0),
        ("half_pixel", "round_prefer_floor", 2.0),  # torch mode="nearest-exact"
        ("half_pixel", "round_prefer_ceil", 2.0),
        ("pytorch_half_pixel", "round_prefer_floor", 2.0),
        ("align_corners", "round_prefer_floor", 2.0),
        ("asymmetric", "floor", 0.5),
        ("half_pixel", "round_prefer_floor", 0.5),
    ],
)
@pytest.mark.parametrize("by_scales", [True, False], ids=["scales", "sizes"])
def test_exported_nearest_resizes_are_views(
    transform: str, rounding: str, factor: float, by_scales: bool
) -> None:
    """The forms exporters write for integer up- and down-sampling compile, and match."""
    shape = [1, 2, 8, 6]
    if by_scales:
        inputs, weights = ["x", "", "scales"], {
            "scales": np.array([1, 1, factor, factor], np.float32)}
    else:
        sizes = [1, 2, int(8 * factor), int(6 * factor)]
        inputs, weights = ["x", "", "", "sizes"], {"sizes": np.array(sizes, np.int64)}
    model = model_of(
        [node("Resize", inputs, ["y"], mode="nearest", coordinate_transformation_mode=transform,
              nearest_mode=rounding)],
        shape,
        weights,
    )
    run_and_check(model, "test-16")


INTERPOLATIONS = ["linear", "cubic"]


@given(
    source=st.lists(st.integers(1, 7), min_size=2, max_size=2),
    target=st.lists(st.integers(1, 15), min_size=2, max_size=2),
    mode=st.sampled_from(INTERPOLATIONS),
    transform=st.sampled_from(TRANSFORMS),
    by_scales=st.booleans(),
    exclude_outside=st.integers(0, 1),
    antialias=st.integers(0, 1),
)
def test_interpolating_resize_matches_onnxruntime(
    source: list[int], target: list[int], mode: str, transform: str, by_scales: bool,
    exclude_outside: int, antialias: int,
) -> None:
    """Linear and cubic Resize, any sizes (or their scales), coordinate transformation,
    exclude_outside and antialias: one contraction with the ONNX definition's weights per
    resized axis, within float tolerance of onnxruntime, or refused by name."""
    # onnxruntime refuses exclude_outside for linear without antialias (ONNX allows it)
    assume(mode == "cubic" or antialias or not exclude_outside)
    model = resize_model(source, target, by_scales, mode=mode,
                         coordinate_transformation_mode=transform,
                         exclude_outside=exclude_outside, antialias=antialias)
    try:
        run_and_check(model, "test-16")
    except T10Error as e:  # an ill-defined output size, or coordinates the two disagree on
        assert "in double but" in str(e) or "resized to length 1" in str(e), e
        event("refused")


@pytest.mark.parametrize(
    ("mode", "transform", "opset"),
    [
        ("linear", "half_pixel", 19),  # torch F.interpolate(mode="bilinear")
        ("linear", "align_corners", 19),  # align_corners=True
        ("linear", "pytorch_half_pixel", 13),
        ("cubic", "half_pixel", 19),  # mode="bicubic"
        ("linear", "asymmetric", 10),  # Resize of opset 10 (asymmetric)
    ],
)
def test_exported_interpolations_match_onnxruntime(
    mode: str, transform: str, opset: int, chip: str
) -> None:
    """A decoder stage with the upsampling exporters write for bilinear / bicubic: Conv,
    Resize x2, Conv."""
    attrs = {} if opset < 11 else {"coordinate_transformation_mode": transform}
    inputs = ["r1", "scales"] if opset < 11 else ["r1", "", "scales"]
    model = model_of(
        [
            node("Conv", ["x", "k1"], ["c1"], pads=[1, 1, 1, 1]),
            node("Relu", ["c1"], ["r1"]),
            node("Resize", inputs, ["up"], mode=mode, **attrs),
            node("Conv", ["up", "k2"], ["y"], pads=[1, 1, 1, 1]),
        ],
        [1, 3, 6, 5],
        {
            "k1": randn(8, 3, 3, 3, seed=1) * 0.3,
            "k2": randn(4, 8, 3, 3, seed=2) * 0.2,
            "scales": np.array([1, 1, 2, 2], np.float32),
        },
        opset=opset,
    )
    run_and_check(model, chip)


@pytest.mark.parametrize(
    ("mode", "by_scales", "antialias"),
    [("cubic", False, 0), ("linear", True, 0), ("linear", False, 1)],
)
def test_pytorch_half_pixel_to_length_1_is_refused(
    mode: str, by_scales: bool, antialias: int
) -> None:
    """onnxruntime weighs a length-1 output differently from ONNX's definition (coordinate 0)
    for cubic, antialias or a scale given: refused rather than computed one way (linear to
    sizes agrees: test_resize_downsample_sizes_linear_pytorch_half_pixel passes)."""
    model = resize_model([1, 3], [1, 1], by_scales, mode=mode, antialias=antialias,
                         coordinate_transformation_mode="pytorch_half_pixel")
    with pytest.raises(T10Error, match=r"node 'resize' \(Resize\): axis 3 is resized to length "
                                       r"1 with coordinate_transformation_mode 'pytorch_half_pix"):
        import_onnx(model)
