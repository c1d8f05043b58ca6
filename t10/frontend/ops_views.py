"""ONNX data-movement operators → `rtensor.view` ops (see `t10.common.view_maps`).

Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Slice, Split and Gather with constant
indices affine in their position (`view_maps.affine_fit`) move elements without arithmetic
(a Gather of runtime indices is an `rtensor.gather`, a data-dependent move); Concat adds up
its inputs, each padded with zeros into place by a view; Pad (constant mode) is a padded
view, then a select of its value where that is not 0. Each becomes a view,
`result[i] = x[map(i)]`; the plan search costs it inside the layout transition into each
operator that reads it, and the conversion to rtensor folds view chains into that
transition's relayout. Shapes, axes, starts and the like must be compile-time constants.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from math import prod

import numpy as np
import onnx
from xdsl.dialects.builtin import TensorType, f32
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.gathers import GatherKind
from t10.common.view_maps import affine_fit, reshape_map, slice_map, transpose_map
from t10.frontend.importer import (
    BodyBuilder,
    Importer,
    Lowering,
    RangeRule,
    Shape,
    checked_axes,
    lowering,
    node_attributes,
)
from t10.frontend.integer_ranges import Interval, Ranges, hull, keeps_input, lift
from t10.t10_dialects import rtensor


def view_lowering(
    op_type: str, attributes: Iterable[str] = (), integers: RangeRule = keeps_input
) -> Callable[[Lowering], Lowering]:
    """Register a lowering of a data-movement op (it moves integer and bool values exactly;
    ``integers``: its range rule, by default its results hold values of input 0)."""
    return lowering(op_type, attributes=attributes, integers=integers)


def _ints_input_or_attr(
    imp: Importer, node: onnx.NodeProto, index: int, attr: str
) -> list[int] | None:
    """Input `index` of the newer opsets (a constant), else attribute `attr`; None if neither."""
    names = list(node.input)
    if len(names) > index and names[index]:
        return imp.known_ints(node, names[index], attr)
    value = node_attributes(node).get(attr)
    return None if value is None else [int(v) for v in value]


def define_view(
    imp: Importer, node: onnx.NodeProto, shape: Shape, view: AffineMap, out: int = 0
) -> None:
    value, source = imp.use(node.input[0])
    if not shape:
        raise imp.node_error(
            node,
            f"the result is a rank-0 (scalar) tensor; views to scalars are not supported "
            f"(input shape {list(source)})",
        )
    index = out if len(node.output) > 1 else None
    imp.define(node.output[out], imp.view(value, source, shape, view, index), shape)


def _reshape_to(imp: Importer, node: onnx.NodeProto, shape: Shape) -> None:
    _, source = imp.use(node.input[0])
    if prod(shape) != prod(source):
        raise imp.node_error(
            node, f"cannot reshape {list(source)} ({prod(source)} elements) to {list(shape)}"
        )
    define_view(imp, node, shape, reshape_map(source, shape))


@view_lowering("Transpose", {"perm"})
def lower_transpose(imp: Importer, node: onnx.NodeProto) -> None:
    _, source = imp.use(node.input[0])
    rank = len(source)
    perm = [int(p) for p in node_attributes(node).get("perm", list(range(rank))[::-1])]
    if sorted(perm) != list(range(rank)):
        raise imp.node_error(node, f"perm {perm} is not a permutation of the {rank} axes")
    define_view(imp, node, tuple(source[p] for p in perm), transpose_map(perm))


@view_lowering("Reshape", {"allowzero"})
def lower_reshape(imp: Importer, node: onnx.NodeProto) -> None:
    _, source = imp.use(node.input[0])
    requested = imp.known_ints(node, node.input[1], "shape")
    allow_zero = bool(node_attributes(node).get("allowzero", 0))
    dims = [
        source[i] if d == 0 and not allow_zero and i < len(source) else d
        for i, d in enumerate(requested)
    ]
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise imp.node_error(node, f"shape {requested} is not a valid Reshape target")
    if -1 in dims:
        known = prod(d for d in dims if d != -1)
        if known == 0 or prod(source) % known:
            raise imp.node_error(
                node, f"cannot reshape {list(source)} to {requested}: -1 cannot be inferred"
            )
        dims[dims.index(-1)] = prod(source) // known
    _reshape_to(imp, node, tuple(dims))


@view_lowering("Flatten", {"axis"})
def lower_flatten(imp: Importer, node: onnx.NodeProto) -> None:
    _, source = imp.use(node.input[0])
    axis = int(node_attributes(node).get("axis", 1))
    if not -len(source) <= axis <= len(source):
        raise imp.node_error(node, f"axis {axis} is out of range for rank {len(source)}")
    axis = axis + len(source) if axis < 0 else axis
    _reshape_to(imp, node, (prod(source[:axis]), prod(source[axis:])))


@view_lowering("Squeeze", {"axes"})
def lower_squeeze(imp: Importer, node: onnx.NodeProto) -> None:
    _, source = imp.use(node.input[0])
    given = _ints_input_or_attr(imp, node, 1, "axes")
    if given is None:
        axes = [d for d, s in enumerate(source) if s == 1]
    else:
        axes = checked_axes(imp, node, given, len(source))
    if any(source[a] != 1 for a in axes):
        raise imp.node_error(
            node, f"cannot squeeze axes {given} of shape {list(source)}: size != 1"
        )
    _reshape_to(imp, node, tuple(s for d, s in enumerate(source) if d not in axes))


@view_lowering("Unsqueeze", {"axes"})
def lower_unsqueeze(imp: Importer, node: onnx.NodeProto) -> None:
    _, source = imp.use(node.input[0])
    given = _ints_input_or_attr(imp, node, 1, "axes")
    if given is None:
        raise imp.node_error(node, "Unsqueeze needs axes")
    rank = len(source) + len(given)
    axes = checked_axes(imp, node, given, rank)
    rest = iter(source)
    _reshape_to(imp, node, tuple(1 if d in axes else next(rest) for d in range(rank)))


def _slice_view(
    imp: Importer,
    node: onnx.NodeProto,
    bounds: dict[int, tuple[int, int, int]],
    out: int = 0,
) -> None:
    """Output `out` = x sliced per axis by python-style (start, end, step) `bounds` (ONNX
    clamps out-of-range starts and ends the same way); an empty slice is a known empty
    value."""
    _, source = imp.use(node.input[0])
    starts, steps, shape = [], [], []
    for d, size in enumerate(source):
        start, end, step = bounds.get(d, (0, size, 1))
        if step == 0:
            raise imp.node_error(node, f"step 0 on axis {d}")
        picked = range(*slice(start, end, step).indices(size))
        starts.append(picked.start)
        steps.append(picked.step)
        shape.append(len(picked))
    if 0 in shape:
        imp.define_empty(node.output[out], tuple(shape))
        return
    define_view(imp, node, tuple(shape), slice_map(source, starts, steps), out)


@view_lowering("Slice", {"starts", "ends", "axes"})
def lower_slice(imp: Importer, node: onnx.NodeProto) -> None:
    _, source = imp.use(node.input[0])
    if len(node.input) >= 3:  # opset 10+: inputs
        starts = imp.known_ints(node, node.input[1], "starts")
        ends = imp.known_ints(node, node.input[2], "ends")
        axes = _ints_input_or_attr(imp, node, 3, "axes")
        steps = _ints_input_or_attr(imp, node, 4, "steps")
    else:
        attrs = node_attributes(node)
        starts = [int(v) for v in attrs.get("starts", [])]
        ends = [int(v) for v in attrs.get("ends", [])]
        axes = _ints_input_or_attr(imp, node, 3, "axes")
        steps = None
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise imp.node_error(node, "starts, ends, axes and steps must have the same length")
    bounds = {
        a: (s, e, st)
        for a, s, e, st in zip(
            checked_axes(imp, node, axes, len(source)), starts, ends, steps, strict=True
        )
    }
    _slice_view(imp, node, bounds)


@view_lowering("Split", {"axis", "split", "num_outputs"})
def lower_split(imp: Importer, node: onnx.NodeProto) -> None:
    _, source = imp.use(node.input[0])
    attrs = node_attributes(node)
    axis = checked_axes(imp, node, [int(attrs.get("axis", 0))], len(source))[0]
    sizes = _ints_input_or_attr(imp, node, 1, "split")
    parts = len(node.output)
    if sizes is None:
        # equal parts (the last one smaller, opset 18's num_outputs rule)
        chunk = -(-source[axis] // parts)
        sizes = [min(chunk, source[axis] - i * chunk) for i in range(parts)]
    if len(sizes) != parts or sum(sizes) != source[axis] or min(sizes) < 0:
        raise imp.node_error(
            node, f"split sizes {sizes} do not cut axis {axis} (size {source[axis]}) into {parts}"
        )
    start = 0
    for out, size in enumerate(sizes):
        _slice_view(imp, node, {axis: (start, start + size, 1)}, out)
        start += size


def gather(imp: Importer, node: onnx.NodeProto, kind: GatherKind) -> None:
    """A gather of ``kind`` (`t10.common.gathers`) from input 0 by the ids of input 1: runtime
    ids (token ids into an embedding table: an integer graph input, possibly through views),
    or known ids that no view reads (not affine in their position: DeBERTa's relative
    positions; the caller has checked them, `checked_indices`): `gathered`."""
    ids: tuple[SSAValue, Shape] | np.ndarray = (
        np.asarray(imp.known_input(node, node.input[1], "indices"), dtype=np.int64)
        if imp.is_known(node.input[1])
        else imp.use(node.input[1])
    )
    imp.define(node.output[0], *gathered(imp, node, imp.use(node.input[0]), ids, kind))


def gathered(
    imp: Importer,
    node: onnx.NodeProto,
    table_value: tuple[SSAValue, Shape],
    ids_value: tuple[SSAValue, Shape] | np.ndarray,
    kind: GatherKind,
    index: int | None = None,
) -> tuple[SSAValue, Shape]:
    """The gather of ``kind`` from ``table_value`` by runtime ids or known ones (an array,
    held as a constant: `Importer.constant_ids`), as generic ``index`` of ``node``: an
    `rtensor.gather`, a data-dependent move."""
    table, source = table_value
    if isinstance(ids_value, np.ndarray):
        ids_shape, which = tuple(int(d) for d in ids_value.shape), "known"
    else:
        ids_shape, which = ids_value[1], "runtime"
    if not ids_shape:
        raise imp.node_error(
            node, f"{which} indices must have rank >= 1 (a scalar index is not supported)"
        )
    problem = kind.problem(source, ids_shape)
    if problem is not None:
        raise imp.node_error(node, f"{which} indices {list(ids_shape)}: {problem}")
    shape = kind.shape(source, ids_shape)
    if not shape:
        raise imp.node_error(
            node, "the result is a rank-0 (scalar) tensor; gathers to scalars are not supported"
        )
    if isinstance(ids_value, np.ndarray):  # negative ids wrapped: the plan search reads them
        limits = np.atleast_1d(kind.limits(source))
        sizes = limits[: ids_shape[-1]] if kind.mode == "nd" else limits[0]
        ids = imp.constant_ids(np.where(ids_value < 0, ids_value + sizes, ids_value))
    else:
        ids = ids_value[0]
    op = rtensor.GatherOp.create(
        operands=[table, ids],
        result_types=[TensorType(f32, shape)],
        properties={"label": imp.generic_name(index), **rtensor.gather_kind_properties(kind)},
    )
    imp.emit(op)
    return op.results[0], shape


@view_lowering("Gather", {"axis"})
def lower_gather(imp: Importer, node: onnx.NodeProto) -> None:
    """Gather of constant indices from a runtime tensor: indices affine in their position (a
    scalar index drops the axis; a run is a strided slice; ``[[0..15], [16..31]]`` reads a
    flattened [2, 16]) are a view; other known indices, and runtime ones, a `gather`."""
    _, source = imp.use(node.input[0])
    axis = checked_axes(imp, node, [int(node_attributes(node).get("axis", 0))], len(source))[0]
    if not imp.is_known(node.input[1]):
        gather(imp, node, GatherKind("rows", axis))
        return
    raw = imp.known_input(node, node.input[1], "indices")
    indices = checked_indices(imp, node, raw, source[axis])
    k = indices.ndim
    picked = affine_fit(indices, range(axis, axis + k))
    if picked is None:
        gather(imp, node, GatherKind("rows", axis))
        return
    dim = AffineExpr.dimension
    exprs = [dim(d) for d in range(axis)] + [picked]
    exprs += [dim(d - 1 + k) for d in range(axis + 1, len(source))]
    shape = source[:axis] + indices.shape + source[axis + 1 :]
    define_view(imp, node, shape, AffineMap(len(shape), 0, tuple(exprs)))


def checked_indices(
    imp: Importer, node: onnx.NodeProto, indices: np.ndarray, size: int
) -> np.ndarray:
    """Known indices into an axis of ``size``, in range and made non-negative."""
    indices = np.asarray(indices, dtype=np.int64)
    if ((indices < -size) | (indices >= size)).any():
        raise imp.node_error(node, f"indices {indices.tolist()} are out of range for size {size}")
    return indices % size


def _concat_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    return Ranges((lift(hull, *(imp.range_of(n) for n in node.input)),))


@view_lowering("Concat", {"axis"}, _concat_ranges)
def lower_concat(imp: Importer, node: onnx.NodeProto) -> None:
    """``concatenate``; empty inputs add nothing and are left out (a Concat of empty inputs
    only is folded)."""
    inputs = [imp.use(n) for n in node.input if not imp.is_empty(n)]
    rank = len(inputs[0][1])
    axis = checked_axes(imp, node, [int(node_attributes(node)["axis"])], rank)[0]
    value, shape = concatenate(imp, inputs, axis, 0)
    imp.define(node.output[0], value, shape)


def concatenate(
    imp: Importer, inputs: Sequence[tuple[SSAValue, Shape]], axis: int, first_index: int
) -> tuple[SSAValue, Shape]:
    """``inputs`` one after another along ``axis``: each padded with zeros into the result (a
    padded view, generics ``first_index`` on), then summed by one element-wise generic (the
    next index): x + 0 = x exactly (only a -0.0 input becomes +0.0)."""
    rank = len(inputs[0][1])
    shape = list(inputs[0][1])
    shape[axis] = sum(s[axis] for _, s in inputs)
    out = tuple(shape)
    if len(inputs) == 1:
        return inputs[0][0], out
    dim = AffineExpr.dimension
    pieces = []
    offset = 0
    for k, (value, source) in enumerate(inputs):
        exprs = [dim(d) if d != axis else dim(d) - offset for d in range(rank)]
        view = AffineMap(rank, 0, tuple(exprs))
        pieces.append((imp.view(value, source, out, view, first_index + k, padded=True), out))
        offset += source[axis]

    def total(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
        acc = x[0]
        for v in x[1:]:
            acc = bb.add(acc, v)
        return acc

    return imp.elementwise(pieces, out, total, first_index + len(inputs)), out


PAD_MODES = ("constant", "reflect", "edge", "wrap")
"""The Pad modes t10 supports: constant (a padded view, ``lower_pad``), and the modes that
read the input again (``_pad_by_reading``)."""


def _pad_amounts(imp: Importer, node: onnx.NodeProto, rank: int) -> list[tuple[int, int]]:
    """(before, after) per axis from `pads` (an input since opset 11, else the attribute) and
    `axes` (opset 18; default: every axis); a negative amount crops."""
    pads = _ints_input_or_attr(imp, node, 1, "pads")
    if pads is None:
        raise imp.node_error(node, "Pad needs pads")
    names = list(node.input)
    given = imp.known_ints(node, names[3], "axes") if len(names) > 3 and names[3] else None
    axes = list(range(rank)) if given is None else checked_axes(imp, node, given, rank)
    if len(pads) != 2 * len(axes):
        raise imp.node_error(
            node, f"pads {pads} must have 2 entries per padded axis ({len(axes)} axes)"
        )
    amounts = [(0, 0)] * rank
    for k, a in enumerate(axes):
        amounts[a] = (pads[k], pads[k + len(axes)])
    return amounts


def _pad_value(imp: Importer, node: onnx.NodeProto) -> float:
    """The fill value: input 2 since opset 11 (a known scalar), else attribute `value`."""
    names = list(node.input)
    if len(names) < 3 or not names[2]:
        return float(node_attributes(node).get("value", 0.0))
    given = imp.known_input(node, names[2], "constant_value").reshape(-1)
    if given.size != 1:
        raise imp.node_error(
            node, f"constant_value must be one value, got {given.size} ({given.tolist()})"
        )
    value = np.float32(given[0])
    if value != given[0] and not np.isnan(value):
        raise imp.node_error(
            node, f"constant_value {given[0]} is not exactly representable in float32"
        )
    return float(value)


def _along(source: Shape, axis: int, expr: AffineExpr, size: int) -> tuple[AffineMap, Shape]:
    """The view reading ``expr`` along ``axis`` (and each other dim as it is), and its shape:
    ``source`` with ``size`` along ``axis``."""
    rank = len(source)
    exprs = tuple(expr if d == axis else AffineExpr.dimension(d) for d in range(rank))
    shape = tuple(size if d == axis else n for d, n in enumerate(source))
    return AffineMap(rank, 0, exprs), shape


def _pad_by_reading(
    imp: Importer,
    node: onnx.NodeProto,
    mode: str,
    value: SSAValue,
    source: Shape,
    amounts: list[tuple[int, int]],
) -> SSAValue:
    """Pad in mode reflect (x[1], x[2], ... mirrored around the edge), edge (the edge element
    repeated) or wrap (the other end): negative amounts crop first (a view); then, axis by
    axis, wrap is one view reading ``(i - before) mod n``, and reflect / edge put the pieces
    before and after (views reading mirrored or edge positions) around the input
    (``concatenate``)."""
    dim, const = AffineExpr.dimension, AffineExpr.constant
    rank = len(source)
    index = 0
    crop = [(min(b, 0), min(e, 0)) for b, e in amounts]
    if any(b or e for b, e in crop):
        cropped = tuple(n + b + e for n, (b, e) in zip(source, crop, strict=True))
        view = AffineMap(rank, 0, tuple(dim(d) - b for d, (b, _) in enumerate(crop)))
        value, source, index = imp.view(value, source, cropped, view, index), cropped, index + 1
    for axis, (before, after) in enumerate((max(b, 0), max(e, 0)) for b, e in amounts):
        if not (before or after):
            continue
        n = source[axis]
        if mode == "reflect" and max(before, after) >= n:
            raise imp.node_error(node, f"mode 'reflect' pads axis {axis} of size {n} by "
                                       f"{max(before, after)}: at most {n - 1}, the elements "
                                       "a mirror image has")
        if mode == "wrap" and max(before, after) > n:
            raise imp.node_error(node, f"mode 'wrap' pads axis {axis} of size {n} by "
                                       f"{max(before, after)}: at most {n}")

        if mode == "wrap":
            view, shape = _along(source, axis, (dim(axis) - before) % n, n + before + after)
            value, source, index = imp.view(value, source, shape, view, index), shape, index + 1
            continue
        reflect = mode == "reflect"
        pieces = []
        if before:
            view, shape = _along(source, axis, const(before) - dim(axis) if reflect else const(0),
                                 before)
            pieces.append((imp.view(value, source, shape, view, index), shape))
            index += 1
        pieces.append((value, source))
        if after:
            view, shape = _along(source, axis,
                                 const(n - 2) - dim(axis) if reflect else const(n - 1), after)
            pieces.append((imp.view(value, source, shape, view, index), shape))
            index += 1
        value, source = concatenate(imp, pieces, axis, index)
        index += len(pieces) + 1
    return value


def _pad_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """The input's values and the padding constant (an integer for an integer input)."""
    fill = int(_pad_value(imp, node))
    return Ranges((lift(hull, imp.range_of(node.input[0]), Interval(fill, fill)),))


@view_lowering("Pad", {"mode", "pads", "value"}, _pad_ranges)
def lower_pad(imp: Importer, node: onnx.NodeProto) -> None:
    """Pad in constant mode: `result[i] = x[i - before]`, a (padded) view that also crops
    (negative amounts); the other modes: ``_pad_by_reading``. The zero fill of a padded view
    is the padding for a constant 0; any other constant c is `select(inside, v, c)` over the
    padded view `v`, with `inside` one known 0/1 vector per padded axis (broadcast), so every
    element is exact."""
    value, source = imp.use(node.input[0])
    mode = node_attributes(node).get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in PAD_MODES:
        raise imp.node_error(
            node, f"mode '{mode}' is not a Pad mode (supported: {', '.join(PAD_MODES)})"
        )
    amounts = _pad_amounts(imp, node, len(source))
    fill = _pad_value(imp, node)
    shape = tuple(n + b + e for n, (b, e) in zip(source, amounts, strict=True))
    for d, size in enumerate(shape):
        if size <= 0:
            raise imp.node_error(
                node,
                f"pads {list(amounts[d])} (before, after) crop axis {d} of size {source[d]} "
                "to nothing; empty tensors are not supported",
            )
    if all(b == e == 0 for b, e in amounts):
        imp.define(node.output[0], value, shape)
        return
    if mode != "constant":
        imp.define(node.output[0], _pad_by_reading(imp, node, mode, value, source, amounts),
                   shape)
        return
    padded = any(b > 0 or e > 0 for b, e in amounts)
    filled = padded and (fill != 0.0 or np.signbit(fill))  # the zero fill is +0.0
    dim = AffineExpr.dimension
    view = AffineMap(len(shape), 0, tuple(dim(d) - b for d, (b, _) in enumerate(amounts)))
    viewed = imp.view(value, source, shape, view, 0 if filled else None, padded)
    if not filled:
        imp.define(node.output[0], viewed, shape)
        return
    masks = []
    for d, ((b, e), n) in enumerate(zip(amounts, source, strict=True)):
        if b > 0 or e > 0:
            inside = np.zeros(shape[d], dtype=np.float32)
            inside[max(b, 0) : b + n + min(e, 0)] = 1.0
            mask_shape = tuple(shape[d] if k == d else 1 for k in range(len(shape)))
            name = f"{node.output[0]}_inside_axis{d}"
            mask = imp.add_constant(name, inside.reshape(mask_shape), hoist=True)
            masks.append((mask, mask_shape))

    def body(bb: BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
        zero, constant, result = bb.const(0.0), bb.const(fill), x[0]
        for m in x[1:]:
            result = bb.select(bb.cmpf_one(m, zero), result, constant)
        return result

    imp.define(node.output[0], imp.elementwise([(viewed, shape), *masks], shape, body, 1), shape)
