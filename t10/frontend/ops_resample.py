"""Moves between space and channels, and nearest-neighbour resampling, as `rtensor.view`s.

DepthToSpace and SpaceToDepth read each output element from one input element at a position
built with ``floordiv`` / ``mod`` by the block size. Resize (opset 10+) and Upsample in
``nearest`` mode read, along each resized axis, the input position its coordinate
transformation and rounding give; the frontend takes those positions from the ONNX
definition itself (`folding.evaluate` of the node on a tensor of positions, at the model's
opset) and makes the view when every axis reads ``(p·i + q) floordiv r`` (integer and
rational scales with the usual modes); other positions (clamped edges, ``tf_crop_and_resize``)
and the interpolating modes (``linear``, ``cubic``) are refused by name.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import onnx
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.frontend.folding import evaluate
from t10.frontend.importer import FLOAT_TYPES, Importer, Shape, node_attributes
from t10.frontend.ops_views import define_view, view_lowering

dim = AffineExpr.dimension


def _block(imp: Importer, node: onnx.NodeProto) -> tuple[int, Shape]:
    """The block size and the 4-D input shape."""
    _, source = imp.use(node.input[0])
    b = int(node_attributes(node).get("blocksize", 0))
    if len(source) != 4:
        raise imp.node_error(node, f"the input must be 4-D [N, C, H, W], got {list(source)}")
    if b < 1:
        raise imp.node_error(node, f"blocksize {b} must be a positive integer")
    return b, source


def _div(e: AffineExpr, n: int) -> AffineExpr:
    return e if n == 1 else e // n


def _mod(e: AffineExpr, n: int) -> AffineExpr:
    return AffineExpr.constant(0) if n == 1 else e % n


def _mode(imp: Importer, node: onnx.NodeProto) -> bytes:
    mode = node_attributes(node).get("mode", b"DCR")
    if mode not in (b"DCR", b"CRD"):
        raise imp.node_error(node, f"mode {mode.decode(errors='replace')!r} is not DCR or CRD")
    return mode


@view_lowering("DepthToSpace", {"blocksize", "mode"})
def lower_depth_to_space(imp: Importer, node: onnx.NodeProto) -> None:
    """out[n, c, h·b + i, w·b + j] = in[n, (i·b + j)·C' + c, h, w] (mode DCR) or
    in[n, c·b² + i·b + j, h, w] (CRD), C' = C / b²."""
    b, (n, c, h, w) = _block(imp, node)
    mode = _mode(imp, node)
    if c % (b * b):
        raise imp.node_error(node, f"{c} channels do not divide into blocks of {b}x{b}")
    depth = c // (b * b)
    offset = (dim(2) % b) * b + dim(3) % b
    channel = offset * depth + dim(1) if mode == b"DCR" else dim(1) * (b * b) + offset
    view = AffineMap(4, 0, (dim(0), channel, dim(2) // b, dim(3) // b))
    define_view(imp, node, (n, depth, h * b, w * b), view)


@view_lowering("SpaceToDepth", {"blocksize", "mode"})
def lower_space_to_depth(imp: Importer, node: onnx.NodeProto) -> None:
    """out[n, (i·b + j)·C + c, h, w] (mode DCR) or out[n, c·b² + i·b + j, h, w] (CRD) =
    in[n, c, h·b + i, w·b + j]."""
    b, (n, c, h, w) = _block(imp, node)
    mode = _mode(imp, node)
    if h % b or w % b:
        raise imp.node_error(node, f"spatial dims {[h, w]} are not multiples of blocksize {b}")
    k = dim(1)
    if mode == b"DCR":
        channel, row, col = _mod(k, c), _div(k, b * c), _mod(_div(k, c), b)
    else:
        channel, row, col = _div(k, b * b), _mod(_div(k, b), b), _mod(k, b)
    view = AffineMap(4, 0, (dim(0), channel, dim(2) * b + row, dim(3) * b + col))
    define_view(imp, node, (n, c * b * b, h // b, w // b), view)


def _fit_floordiv(positions: np.ndarray, scale: Fraction) -> AffineExpr | None:
    """``positions[i]`` (input positions read along an axis, of dim 0) as
    ``(p·i + q) floordiv r``, if some integers give them all: the slope p / r is tried as
    ``scale`` (input over output size) first, then at each denominator r up to twice the
    number of positions; q is then any integer in the range every position allows."""
    n = positions.size
    i = np.arange(n, dtype=np.int64)
    slope = Fraction(int(positions[-1] - positions[0]), n - 1) if n > 1 else Fraction(0)
    steps = [scale, slope, *(Fraction(k, r) for r in range(1, 2 * n + 2)
                             for k in {int(slope * r), int(slope * r) + 1})]
    for step in dict.fromkeys(steps):
        p, r = step.numerator, step.denominator
        lo = int(np.max(positions * r - p * i))
        if lo <= int(np.min((positions + 1) * r - p * i)) - 1:
            if p == 0:
                return AffineExpr.constant(int(positions[0]))
            expr = dim(0) * p if p != 1 else dim(0)
            expr = expr + lo if lo else expr
            return expr // r if r > 1 else expr
    return None


def _source_positions(
    imp: Importer, node: onnx.NodeProto, source: Shape
) -> tuple[list[np.ndarray], Shape]:
    """Per axis, the input position each output position reads, by evaluating ``node`` (as
    ONNX defines it at the model's opset) on a tensor holding each element's own flat
    position, and the output shape; a node whose positions are not one per axis (a product of
    per-axis positions) is refused."""
    imp.check_builds(node, "input positions", source)
    flat = np.arange(int(np.prod(source)), dtype=np.int64).reshape(source)
    feeds = {node.input[0]: flat}
    for name in node.input[1:]:
        if name:
            feeds[name] = imp.known_input(node, name, "scales, sizes or roi")
    try:
        (out,) = evaluate(node, feeds, imp.opsets)
    except Exception as e:
        raise imp.node_error(node, f"its output positions cannot be computed: {e}") from None
    strides = [int(np.prod(source[a + 1 :])) for a in range(len(source))]
    positions = [
        (np.moveaxis(out, axis, -1).reshape(-1, size)[0] // strides[axis]) % source[axis]
        for axis, size in enumerate(out.shape)
    ]
    rebuilt = sum(
        np.reshape(p * stride, [-1 if a == axis else 1 for a in range(out.ndim)])
        for axis, (p, stride) in enumerate(zip(positions, strides, strict=True))
    )
    if not np.array_equal(np.broadcast_to(rebuilt, out.shape), out):
        raise imp.node_error(node, "its output does not read one input position per axis")
    return positions, tuple(int(d) for d in out.shape)


def _scales(imp: Importer, node: onnx.NodeProto) -> dict[int, float]:
    """The scale given per axis (none when the node gives output sizes instead)."""
    attrs = node_attributes(node)
    if node.op_type == "Upsample" and "scales" in attrs:  # opset 7
        values = [float(v) for v in attrs["scales"]]
    else:
        index = 1 if node.op_type == "Upsample" or imp.opset < 11 else 2
        names = list(node.input)
        if len(names) <= index or not names[index]:
            return {}
        values = [float(v) for v in imp.known_input(node, names[index], "scales").reshape(-1)]
    if not values:
        return {}
    rank = len(imp.shape_of(node.input[0]))
    axes = [int(a) % rank for a in attrs.get("axes", range(len(values)))]
    return dict(zip(axes, values, strict=False))


def _check_sizes_agree(imp: Importer, node: onnx.NodeProto, source: Shape) -> None:
    """An output size floor(size · scale) must not depend on the precision it is computed
    in: ONNX's shape inference computes it in double, onnxruntime in float (3 × 5/3 gives 4
    and 5), so the two would disagree on the output's shape."""
    for axis, scale in _scales(imp, node).items():
        size = source[axis]
        double = math.floor(size * scale)
        single = math.floor(np.float32(size) * np.float32(scale))
        if double != single:
            raise imp.node_error(
                node,
                f"axis {axis}: the output size floor({size} x {scale!r}) is {double} in double "
                f"but {single} in float arithmetic (ONNX's shape inference and onnxruntime "
                "disagree); give the output sizes instead of scales",
            )


def _exact_scales(
    imp: Importer, node: onnx.NodeProto, source: Shape, shape: Shape
) -> dict[int, tuple[Fraction, bool]]:
    """Per resized axis, the scale ONNX's coordinate transformation divides by, exactly, and
    whether onnxruntime holds it exactly (a float32 scale given; else output / input size
    computed in float, exact when that ratio is a float)."""
    given = _scales(imp, node)
    attrs = node_attributes(node)
    ratios = {a: Fraction(shape[a], source[a]) for a in range(len(source))}
    policy = attrs.get("keep_aspect_ratio_policy", b"stretch")
    if not given and policy != b"stretch":
        axes = [int(a) % len(source) for a in attrs.get("axes", range(len(source)))]
        names = list(node.input)
        sizes = imp.known_input(node, names[3], "sizes").reshape(-1)
        wanted = [Fraction(int(size), source[a]) for a, size in zip(axes, sizes, strict=True)]
        common = min(wanted) if policy == b"not_larger" else max(wanted)
        ratios.update(dict.fromkeys(axes, common))
    exact: dict[int, tuple[Fraction, bool]] = {}
    for axis, ratio in ratios.items():
        if axis in given:
            exact[axis] = (Fraction(float(np.float32(given[axis]))), True)
        else:
            exact[axis] = (ratio, Fraction(float(np.float32(float(ratio)))) == ratio)
    return exact


LENGTH_READERS = frozenset({"align_corners", "half_pixel_symmetric", "pytorch_half_pixel"})
"""Coordinate transformations that read the resized length (besides the scale)."""


def _original_coordinate(transform: str, o: int, size: int, out: int, s: Fraction) -> Fraction:
    """ONNX's coordinate of output position ``o`` in the input, in exact arithmetic."""
    half = Fraction(1, 2)
    if transform == "align_corners":
        return Fraction(0) if out == 1 else Fraction(o * (size - 1), out - 1)
    if transform in ("asymmetric", ""):
        return o / s
    if transform == "tf_half_pixel_for_nn":
        return (o + half) / s
    if transform == "pytorch_half_pixel" and out == 1:
        return Fraction(0)
    x = (o + half) / s - half
    if transform == "half_pixel_symmetric":
        x += Fraction(size, 2) * (1 - Fraction(out) / (s * size))
    return x


def _check_well_conditioned(
    imp: Importer, node: onnx.NodeProto, source: Shape, shape: Shape
) -> None:
    """The input position an output position reads must not depend on float rounding: ONNX's
    definition (exact arithmetic; its reference evaluator, in double) and onnxruntime (in
    float) must pick the same one. An exact coordinate on a rounding boundary (an integer
    for floor / ceil, a half for the rounding modes) is safe only where float arithmetic
    reaches it exactly; one within 1e-5 of a boundary never is."""
    attrs = node_attributes(node)
    legacy = node.op_type == "Upsample" or imp.opset < 11
    transform = "" if legacy else attrs.get(
        "coordinate_transformation_mode", b"half_pixel").decode(errors="replace")
    rounding = attrs.get("nearest_mode", b"round_prefer_floor").decode(errors="replace")
    at_half = not legacy and rounding.startswith("round")
    for axis, (s, held) in _exact_scales(imp, node, source, shape).items():
        size, out = source[axis], shape[axis]
        if size == out and s == 1:
            continue
        if transform in LENGTH_READERS and s * size != out:
            raise imp.node_error(
                node,
                f"axis {axis}: coordinate_transformation_mode '{transform}' reads the resized "
                f"length, which onnxruntime takes as size x scale = {float(s * size)!r} and "
                f"ONNX's definition as the output size {out}; give sizes instead of scales",
            )
        exact_ops = held
        for o in range(out):
            x = _original_coordinate(transform, o, size, out, s)
            offset = x - math.floor(x)
            gap = abs(offset - Fraction(1, 2)) if at_half else min(offset, 1 - offset)
            if (gap == 0 and not exact_ops) or 0 < gap < Fraction(1, 10**5) * max(1, abs(x)):
                raise imp.node_error(
                    node,
                    f"axis {axis}: output position {o} maps to input coordinate {float(x)!r}, "
                    f"on a rounding boundary of nearest_mode '{rounding}' that float arithmetic "
                    "does not reach exactly (onnxruntime and ONNX's definition may read "
                    "different elements); give sizes whose ratio to the input is a power of "
                    "two, or scales",
                )


@view_lowering(
    "Resize",
    {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
     "exclude_outside", "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"},
)
@view_lowering("Upsample", {"mode", "scales"})
def lower_resize(imp: Importer, node: onnx.NodeProto) -> None:
    """Nearest-neighbour Resize / Upsample: a view reading, along each axis, the input
    position ``(p·i + q) floordiv r`` that ONNX's definition gives output position i; the
    interpolating modes: ``_lower_interpolation``."""
    _, source = imp.use(node.input[0])
    attrs = node_attributes(node)
    mode = attrs.get("mode", b"nearest").decode(errors="replace")
    transform = attrs.get("coordinate_transformation_mode", b"").decode(errors="replace")
    if transform == "tf_crop_and_resize":
        raise imp.node_error(node, "coordinate_transformation_mode 'tf_crop_and_resize' reads "
                                   "outside the input (extrapolation_value); it is not supported")
    _check_sizes_agree(imp, node, source)
    if mode != "nearest":
        _lower_interpolation(imp, node, mode)
        return
    positions, shape = _source_positions(imp, node, source)
    _check_well_conditioned(imp, node, source, shape)
    exprs = []
    for axis, line in enumerate(positions):
        expr = _fit_floordiv(line, Fraction(source[axis], shape[axis]))
        if expr is None:
            raise imp.node_error(
                node,
                f"along axis {axis} the output reads input positions {line.tolist()[:12]}"
                f"{' ...' if len(line) > 12 else ''}, which are not (p*i + q) floordiv r "
                f"(clamped at an edge: coordinate_transformation_mode '{transform or 'default'}',"
                f" nearest_mode '{attrs.get('nearest_mode', b'round_prefer_floor').decode()}');"
                " only those are views",
            )
        exprs.append(expr.replace_dims_and_symbols([dim(axis)], []))
    define_view(imp, node, shape, AffineMap(len(shape), 0, tuple(exprs)))


INTERPOLATING_MODES = frozenset({"linear", "cubic"})
"""Resize / Upsample modes that weigh several input elements."""


def _lower_interpolation(imp: Importer, node: onnx.NodeProto, mode: str) -> None:
    """An interpolating Resize / Upsample (``linear``, ``cubic``, any coordinate
    transformation, ``exclude_outside``, ``antialias``) is separable: along each resized
    axis, output position o is ``Σ_j W[o, j] · x[j]``, the weights of the ONNX definition.
    Each axis is one contraction with its constant weights ``W`` (``_axis_weights``); the
    weights of every axis sum to 1, which ``_axis_weights`` checks, so the axes compose."""
    if mode not in INTERPOLATING_MODES:
        raise imp.node_error(node, f"mode '{mode}' is not nearest, linear or cubic")
    if imp.elem_type(node.input[0]) not in FLOAT_TYPES:
        raise imp.node_error(node, f"mode '{mode}' interpolates; t10 interpolates float "
                                   "(FLOAT, FLOAT16) values only")
    policy = node_attributes(node).get("keep_aspect_ratio_policy", b"stretch")
    if policy != b"stretch":
        raise imp.node_error(node, f"keep_aspect_ratio_policy '{policy.decode()}' with mode "
                                   f"'{mode}' is not supported (only 'stretch')")
    value, source = imp.use(node.input[0])
    scales = _scales(imp, node)
    shape = imp.inferred_shapes(node)[0]
    if shape is None:
        raise imp.node_error(node, "its output shape cannot be inferred")
    rank = len(source)
    attrs = node_attributes(node)
    _check_onnxruntime_interpolates(imp, node, mode, source, shape, scales)
    pytorch = attrs.get("coordinate_transformation_mode") == b"pytorch_half_pixel"
    # onnxruntime's coordinate for a length-1 output differs from ONNX's 0 given a scale, and
    # its weights there differ for cubic and antialias: refused (the sizes-given linear agrees)
    disagrees = mode == "cubic" or bool(attrs.get("antialias", 0))
    for axis in range(rank):
        if source[axis] == shape[axis] and scales.get(axis, 1.0) == 1.0:
            continue
        if pytorch and shape[axis] == 1 and (axis in scales or disagrees):
            raise imp.node_error(
                node,
                f"axis {axis} is resized to length 1 with coordinate_transformation_mode "
                "'pytorch_half_pixel', where onnxruntime and ONNX's definition (coordinate 0) "
                "weigh the input differently here; use 'half_pixel' (the same coordinates at "
                "any other length)",
            )
        weights = _axis_weights(imp, node, axis, source[axis], shape[axis], scales.get(axis))
        w = imp.add_constant(f"{node.output[0]}_weights{axis}", weights, hoist=True)
        resized = tuple(shape[axis] if a == axis else d for a, d in enumerate(source))
        x_exprs = [dim(rank) if a == axis else dim(a) for a in range(rank)]
        value = imp.contraction(value, x_exprs, w, [dim(axis), dim(rank)],
                                [dim(a) for a in range(rank)], resized, rank, index=axis)
        source = resized
    imp.define(node.output[0], value, source)


def _check_onnxruntime_interpolates(
    imp: Importer, node: onnx.NodeProto, mode: str, source: Shape, shape: Shape,
    scales: dict[int, float],
) -> None:
    """onnxruntime, the reference of ``--check``, interpolates only some ranks and resized
    axes (its ScalesValidation): ``linear`` 2-D and 3-D inputs, 4-D ones resizing neither
    axis 0 nor 1, or neither 0 nor 3, 5-D ones resizing neither 0 nor 1; ``cubic`` 2-D
    inputs and those 4-D ones, where resizing axes 1 or 2 only (neither 0 nor 3) must not
    shrink them without ``antialias``. It refuses the others when it runs the model."""
    ratio = {a: scales.get(a, shape[a] / source[a]) for a in range(len(source))}
    resized = {a for a in range(len(source)) if source[a] != shape[a] or ratio[a] != 1.0}
    rank = len(source)
    four_d = rank == 4 and 0 not in resized and (1 not in resized or 3 not in resized)
    if mode == "linear":
        takes = rank in (2, 3) or four_d or (rank == 5 and not resized & {0, 1})
    else:
        shrinks = four_d and 1 in resized and (ratio[1] < 1 or ratio[2] < 1)
        antialias = bool(node_attributes(node).get("antialias", 0))
        takes = rank == 2 or (four_d and not (shrinks and not antialias))
    if not takes:
        raise imp.node_error(
            node,
            f"mode '{mode}' resizing axes {sorted(resized)} of a {rank}-D input is not "
            "supported by onnxruntime, the reference of --check (it interpolates 'linear' "
            "2-D and 3-D inputs, 4-D ones keeping axes 0 and 1 or 0 and 3, 5-D ones keeping "
            "axes 0 and 1; 'cubic' 2-D inputs and those 4-D ones, shrinking axes 1 and 2 only "
            "with antialias)",
        )


def _axis_weights(
    imp: Importer, node: onnx.NodeProto, axis: int, size: int, out: int, scale: float | None
) -> np.ndarray:
    """``W[o, j]`` of one axis: ``node``'s own op, attributes and opset evaluated
    (`folding.evaluate`) on the identity of ``size`` rows, resized along its second axis by
    the axis's scale (or to its output size) and not along the first (scale 1 reads each
    row itself in every mode and coordinate transformation)."""
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    attrs.pop("axes", None)
    attrs.pop("keep_aspect_ratio_policy", None)
    legacy = node.op_type == "Upsample" or imp.opset < 11  # X, scales (or Upsample-7's attr)
    if scale is not None:
        name, pair = "scales", np.array([1.0, scale], np.float32)
    else:
        name, pair = "sizes", np.array([size, out], np.int64)
    imp.check_builds(node, f"interpolation weights along axis {axis}", [size, max(size, out)])
    feeds: dict[str, np.ndarray] = {"x": np.eye(size, dtype=np.float32)}
    if "scales" in attrs:
        attrs["scales"] = [float(v) for v in pair]
        inputs = ["x"]
    else:
        inputs = ["x", name] if legacy else ["x", "", name] if name == "scales" else [
            "x", "", "", name]
        feeds[name] = pair
    single = onnx.helper.make_node(node.op_type, inputs, ["y"], **attrs)
    try:
        (transposed,) = evaluate(single, feeds, imp.opsets)
    except Exception as e:
        raise imp.node_error(node, f"its interpolation weights along axis {axis} cannot be "
                                   f"computed: {e}") from None
    weights = np.asarray(transposed, np.float32).T
    if weights.shape != (out, size):
        raise imp.node_error(node, f"its interpolation weights along axis {axis} have the "
                                   f"shape {list(weights.shape)}, not [{out}, {size}]")
    if not np.allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-5):
        raise imp.node_error(node, f"its interpolation weights along axis {axis} do not sum "
                                   "to 1, so the axes cannot be interpolated one at a time")
    return np.ascontiguousarray(weights)
