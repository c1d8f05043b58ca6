"""TopK on runtime values (a mixture-of-experts router's top-2 of its experts), as a ranking:
two reductions over the axis, no data-dependent move.

Each element's rank along the axis is how many elements come before it in onnxruntime's order
(``_comes_before``): for ``largest`` the greater value first, NaN above every number (NaNs equal),
equal values by position; for the smallest the lesser first, NaN below every number (after
them). The ranks are a permutation of 0 .. n - 1, so output r (r < k) is the one element of rank
r: its value and its position, each a max-reduction of a selection (exact: the one selected
value against -inf).
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from t10.common.view_maps import loops_map
from t10.frontend.importer import (
    BodyBuilder,
    BodyFn,
    Importer,
    Shape,
    checked_axes,
    lowering,
    node_attributes,
)
from t10.frontend.integer_ranges import Interval, Ranges

_NEG_INF = float("-inf")


def _topk_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """The values: the input's range; the indices: positions along the axis."""
    shape = imp.shape_of(node.input[0])
    axis = checked_axes(imp, node, [int(node_attributes(node).get("axis", -1))], len(shape))[0]
    return Ranges((imp.range_of(node.input[0]), Interval(0, shape[axis] - 1)))


def _comes_before(largest: bool) -> BodyFn:
    """The body ``[x_j comes before x_i]`` (1 / 0) of the ranking reduction, its operands
    ``x_i, x_j, position i, position j``."""

    def body(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        x_i, x_j, p_i, p_j = v
        nan_i, nan_j = bb.cmpf("uno", x_i, x_i), bb.cmpf("uno", x_j, x_j)
        earlier = bb.flag(bb.cmpf("olt", p_j, p_i))
        one, zero = bb.const(1.0), bb.const(0.0)
        beats = bb.cmpf("ogt" if largest else "olt", x_j, x_i)
        ordered = bb.select(beats, one, bb.select(bb.cmpf("oeq", x_j, x_i), earlier, zero))
        if largest:  # NaN first
            return bb.select(nan_j, bb.select(nan_i, earlier, one),
                             bb.select(nan_i, zero, ordered))
        return bb.select(nan_j, bb.select(nan_i, earlier, zero),  # NaN last
                         bb.select(nan_i, one, ordered))

    return body


def _pick_rank(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
    """``value if rank == r else -inf``, operands ``value, rank, r``."""
    value, rank, r = v
    return bb.select(bb.cmpf("oeq", rank, r), value, bb.const(_NEG_INF))


@lowering("TopK", attributes={"axis", "largest", "sorted", "k"}, integers=_topk_ranges)
def lower_topk(imp: Importer, node: onnx.NodeProto) -> None:
    """The k largest (``largest``, default) or smallest elements along ``axis`` and their
    positions, sorted in onnxruntime's order (``sorted`` 0 leaves the order to the kernel:
    refused for k > 1); k known (input 1; the attribute before opset 10)."""
    attrs = node_attributes(node)
    x, shape = imp.use(node.input[0])
    rank = len(shape)
    axis = checked_axes(imp, node, [int(attrs.get("axis", -1))], rank)[0]
    largest = bool(attrs.get("largest", 1))
    k = (imp.known_ints(node, node.input[1], "k")[0] if len(node.input) > 1
         else int(attrs.get("k", 0)))
    n = shape[axis]
    if not 0 <= k <= n:
        raise imp.node_error(node, f"k = {k} must lie in [0, {n}], the size of axis {axis}")
    if not attrs.get("sorted", 1) and k > 1:
        raise imp.node_error(
            node, "sorted = 0 leaves the order of the k results to the kernel (onnxruntime's "
            "differs by k and size); t10 computes them sorted: export with sorted = 1")
    out_shape = shape[:axis] + (k,) + shape[axis + 1:]
    outputs = [(out, name) for out, name in enumerate(node.output) if name]
    if k == 0:
        for _, name in outputs:
            imp.define_empty(name, out_shape)
        return

    # loops (..., i, j, ...), j after the axis: x[.., i, ..] and x[.., j, ..], ranks over j
    wide = rank + 1
    row, column = _unsqueezed(shape, axis + 1), _unsqueezed(shape, axis)
    x_i = imp.view(x, shape, row, _without(wide, axis + 1), index=0)
    x_j = imp.view(x, shape, column, _without(wide, axis), index=1)
    p_i, along_i = imp.positions(f"{node.output[0]}_i", n, axis, wide)
    p_j, along_j = imp.positions(f"{node.output[0]}_j", n, axis + 1, wide)
    ranks, _ = imp.reduction(
        [(x_i, row), (x_j, column), (p_i, along_i), (p_j, along_j)],
        [axis + 1], False, "sum", _comes_before(largest), index=2,
    )
    # loops (..., r, i, ...): output r is the element i of rank r
    ranked = imp.view(ranks, shape, column, _without(wide, axis), index=3)
    rows, along_r = imp.positions(f"{node.output[0]}_r", k, axis, wide)
    sources = ((x_j, column), (p_j, along_j))  # values, positions
    for out, name in outputs:
        result, result_shape = imp.reduction(
            [sources[out], (ranked, column), (rows, along_r)],
            [axis + 1], False, "max", _pick_rank, index=4 + out,
        )
        assert result_shape == out_shape
        imp.define(name, result, out_shape)


def _without(loops: int, dropped: int) -> AffineMap:
    """The map reading a source of ``loops`` - 1 dims from all loops but ``dropped``."""
    return loops_map(loops, [d for d in range(loops) if d != dropped])


def _unsqueezed(shape: Shape, at: int) -> Shape:
    """``shape`` with a size-1 dim inserted at ``at``."""
    return shape[:at] + (1,) + shape[at:]
