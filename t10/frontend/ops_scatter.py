"""ScatterElements and ScatterND on runtime (or known) indices: a mixture-of-experts layer's
dispatch and combine, a KV-cache write. No data-dependent move: every output element looks at
every update that could write it, as generics over loops (output dims, update dims) reduced
over the update dims.

An update t *writes* output element p when its (normalized) index equals p's position there
(ScatterElements: along ``axis``, the other coordinates shared; ScatterND: each component of
its index tuple). onnxruntime applies the updates in their order (row-major over the updates),
so each carries its place, ``order`` (1, 2, ...; the data is 0), and per reduction:

* ``none``: the last writer wins: ``W = max order`` of the writers, the update whose order is
  ``W`` (exact: one value against -inf), else the data;
* ``add``: the data plus the sum of the writers' updates;
* ``max`` / ``min``: onnxruntime keeps ``acc > u ? acc : u`` (``<``) in order, so a NaN update
  makes the result NaN unless a later update replaces it, and a NaN data is replaced by the
  first update: ``L``, the order of the last NaN (data or update), splits them; the result is
  NaN when ``L`` is the last writer, else the extreme of the writers after ``L`` (and of the
  data when there is no NaN);
* ``mul`` is refused (t10's reductions have no product).

The indices must be proven in range (``integer_ranges``; onnxruntime refuses others at run
time, where t10 would silently write nothing): known ones each component within its dim,
runtime ones within the smallest indexed dim (one range holds all the components).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.tensor_expr import EXACT_F16
from t10.common.view_maps import loops_map
from t10.frontend.importer import (
    BodyBuilder,
    Importer,
    Shape,
    checked_axes,
    lowering,
    node_attributes,
)
from t10.frontend.integer_ranges import Interval, Ranges, Unknown, hull, lift

Operand = tuple[SSAValue, Shape]
_INF = float("inf")


@dataclass(frozen=True)
class _Loops:
    """The operands of a scatter's generics over loops (output dims, update dims): the
    updates, their order, each index component with the output positions it must equal
    (and the size that normalizes a negative index), and an operand that is 1 where an update
    exists (None: everywhere). ``out`` is the output shape, ``reduced`` the update loops."""

    updates: Operand
    order: Operand
    components: tuple[tuple[Operand, Operand, int], ...]
    valid: Operand | None
    out: Shape
    reduced: tuple[int, ...]

    def writers(self) -> list[Operand]:
        """The operands ``writes`` reads, in order."""
        matched = [o for index, position, _ in self.components for o in (index, position)]
        return matched + ([self.valid] if self.valid is not None else [])

    def writes(self, bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        """Whether the update writes the output element (an ``i1``), from ``writers()``."""
        hit: SSAValue | None = None
        for k, (_, _, size) in enumerate(self.components):
            index, position = v[2 * k], v[2 * k + 1]
            wrapped = bb.select(bb.cmpf("olt", index, bb.const(0.0)),
                                bb.add(index, bb.const(float(size))), index)
            same = bb.cmpf("oeq", wrapped, position)
            hit = same if hit is None else bb.select(hit, same, hit)
        assert hit is not None
        if self.valid is not None:
            inside = bb.cmpf("oeq", v[2 * len(self.components)], bb.const(1.0))
            hit = bb.select(inside, hit, inside)
        return hit


def _scatter_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """The data's and the updates' values; with ``add``, the data plus any number of updates."""
    data, updates = imp.range_of(node.input[0]), imp.range_of(node.input[2])
    if node_attributes(node).get("reduction", b"none") == b"add":
        count = prod(imp.shape_of(node.input[2]))
        return Ranges((lift(lambda d, u: d + u.sums(0, count), data, updates),))
    return Ranges((lift(hull, data, updates),))


@lowering("ScatterElements", "Scatter", attributes={"axis", "reduction"},
          integers=_scatter_ranges)
def lower_scatter_elements(imp: Importer, node: onnx.NodeProto) -> None:
    """``out = data``, then ``out[t with axis replaced by indices[t]] = updates[t]`` for every
    update t (combined by ``reduction``); Scatter (opsets 9-10) is its older name."""
    data, shape = imp.use(node.input[0])
    indices, index_shape = imp.use(node.input[1])
    updates, update_shape = imp.use(node.input[2])
    rank = len(shape)
    axis = checked_axes(imp, node, [int(node_attributes(node).get("axis", 0))], rank)[0]
    _check_indices(imp, node, shape[axis])
    if index_shape != update_shape or len(index_shape) != rank or any(
        u > s for d, (u, s) in enumerate(zip(update_shape, shape, strict=True)) if d != axis
    ):
        raise imp.node_error(node, f"indices {list(index_shape)} and updates "
                                   f"{list(update_shape)} must have one shape, of the data's "
                                   f"rank, within the data {list(shape)} but along axis {axis}")
    # loops: the output dims, then the update's place along the axis
    wide, steps = rank + 1, update_shape[axis]
    dim = AffineExpr.dimension
    beside = AffineMap(wide, 0, tuple(dim(rank) if d == axis else dim(d) for d in range(rank)))
    across = tuple(1 if d == axis else s for d, s in enumerate(shape)) + (steps,)
    ones = imp.add_constant(f"{node.output[0]}_updated", np.ones(update_shape, np.float32),
                            hoist=False)
    read = [imp.view(v, update_shape, across, beside, index=k, padded=True)
            for k, v in enumerate((indices, updates, ones))]
    order = imp.positions(f"{node.output[0]}_order", steps, rank, wide)
    loops = _Loops(
        updates=(read[1], across),
        order=order,
        components=((
            (read[0], across),
            imp.positions(f"{node.output[0]}_positions", shape[axis], axis, wide),
            shape[axis],
        ),),
        valid=(read[2], across),
        out=shape,
        reduced=(rank,),
    )
    _scatter(imp, node, loops, data)


@lowering("ScatterND", attributes={"reduction"}, integers=_scatter_ranges)
def lower_scatter_nd(imp: Importer, node: onnx.NodeProto) -> None:
    """``out = data``, then ``out[indices[t]] = updates[t]`` for every index tuple t (the
    indices' last dim holds its components; combined by ``reduction``)."""
    data, shape = imp.use(node.input[0])
    indices, index_shape = imp.use(node.input[1])
    updates, update_shape = imp.use(node.input[2])
    rank, lead, q = len(shape), index_shape[:-1], index_shape[-1]
    if not 1 <= q <= rank or update_shape != lead + shape[q:]:
        raise imp.node_error(node, f"index tuples of {q} components (indices "
                             f"{list(index_shape)}) must index 1 to {rank} dims of the data "
                             f"{list(shape)}, and the updates {list(update_shape)} be "
                             f"{list(lead + shape[q:])}")
    if imp.is_known(node.input[1]):  # each component within its own size
        known = imp.constant(node.input[1])
        for c in range(q):
            _check_interval(imp, node, Interval(int(known[..., c].min(initial=0)),
                                                int(known[..., c].max(initial=0))), shape[c])
    else:  # one proven range for every component
        _check_indices(imp, node, min(shape[:q]))
    # loops: the output dims, then the index tuple's place
    m = len(lead)
    wide = rank + m
    dim = AffineExpr.dimension
    at_tuple = (1,) * rank + lead
    components = tuple(
        (
            (imp.view(indices, index_shape, at_tuple, AffineMap(wide, 0, tuple(
                dim(rank + t) for t in range(m)) + (AffineExpr.constant(c),)), index=c),
             at_tuple),
            imp.positions(f"{node.output[0]}_positions{c}", shape[c], c, wide),
            shape[c],
        )
        for c in range(q)
    )
    spread = (1,) * q + shape[q:] + lead
    read_updates = loops_map(wide, [*range(rank, wide), *range(q, rank)])
    count = prod(lead)
    if count > EXACT_F16:
        imp.mark_fp16_inexact(f"the update order 1 to {count} of node '{imp.node_name}'")
    order = np.arange(count, dtype=np.float32).reshape(at_tuple)
    loops = _Loops(
        updates=(imp.view(updates, update_shape, spread, read_updates, index=q), spread),
        order=(imp.add_constant(f"{node.output[0]}_order", order, hoist=False), at_tuple),
        components=components,
        valid=None,
        out=shape,
        reduced=tuple(range(rank, wide)),
    )
    _scatter(imp, node, loops, data)


def _check_indices(imp: Importer, node: onnx.NodeProto, size: int) -> None:
    """The indices (input 1) must be proven within [-size, size - 1]."""
    proven = imp.range_of(node.input[1])
    if isinstance(proven, Unknown):
        raise imp.node_error(
            node, f"its indices must be proven within [{-size}, {size - 1}] (onnxruntime "
            f"refuses others at run time), but the range of {proven.reason} is unknown: "
            f"{proven.fix}")
    _check_interval(imp, node, proven, size)


def _check_interval(imp: Importer, node: onnx.NodeProto, proven: Interval, size: int) -> None:
    if proven.lo < -size or proven.hi >= size:
        raise imp.node_error(
            node, f"its indices lie in {proven}, beyond [{-size}, {size - 1}] (the indexed "
            "size; a ScatterND's runtime index tuples share one range, within its smallest "
            "indexed dim): onnxruntime refuses indices out of range at run time, where t10 "
            "would write nothing")


def _scatter(imp: Importer, node: onnx.NodeProto, loops: _Loops, data: SSAValue) -> None:
    """The output of ``loops`` by the node's ``reduction`` (see the module docstring)."""
    reduction = node_attributes(node).get("reduction", b"none").decode()
    if reduction not in ("none", "add", "max", "min"):
        raise imp.node_error(node, f"reduction '{reduction}' is not supported (t10's reductions "
                                   "are sums, maxima and minima): none, add, max and min are")
    gen = _Generics(imp, loops)
    out = loops.out
    # the order of the last writer (-inf: none)
    last = gen.over_updates([loops.order], "max",
                            lambda bb, w, v: bb.select(w, _place(bb, v[0]), bb.const(-_INF)))
    if reduction == "add":
        total = gen.over_updates([loops.updates], "sum",
                                 lambda bb, w, v: bb.select(w, v[0], bb.const(0.0)))
        result = imp.elementwise([(data, out), total], out,
                                 lambda bb, v: bb.add(v[0], v[1]), index=gen.next())
    elif reduction == "none":
        result = gen.choose(last, gen.last_written(last), data)
    else:
        result = _extreme(gen, data, last, largest=reduction == "max")
    imp.define(node.output[0], result, out)


def _extreme(gen: _Generics, data: SSAValue, last: Operand, largest: bool) -> SSAValue:
    """``max`` / ``min`` as onnxruntime folds them (module docstring): ``nan``, the order of
    the last NaN among the data (0) and the writers; the extreme of the writers after it (and of
    the data when there is none); NaN when the last writer is NaN."""
    imp, loops, out = gen.imp, gen.loops, gen.loops.out
    worst = -_INF if largest else _INF
    combiner = "max" if largest else "min"
    nan_writer = gen.over_updates(
        [loops.order, loops.updates], "max",
        lambda bb, w, v: bb.select(bb.select(w, bb.cmpf("uno", v[1], v[1]), w),
                                   _place(bb, v[0]), bb.const(-_INF)))
    nan = imp.elementwise(  # the data's NaN is order 0
        [nan_writer, (data, out)], out,
        lambda bb, v: bb.select(bb.cmpf("uno", v[1], v[1]), bb.max(v[0], bb.const(0.0)), v[0]),
        index=gen.next())
    after = gen.spread((nan, out))
    extreme = gen.over_updates(
        [loops.order, loops.updates, after], combiner,
        lambda bb, w, v: bb.select(bb.select(w, bb.cmpf("ogt", _place(bb, v[0]), v[2]), w),
                                   v[1], bb.const(worst)))

    def fold(bb: BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        last_writer, nan_at, ext, value = v
        with_data = bb.select(bb.cmpf("ogt" if largest else "olt", ext, value), ext, value)
        clean = bb.select(bb.cmpf("olt", nan_at, bb.const(0.0)), with_data, ext)
        written = bb.select(bb.cmpf("oeq", nan_at, last_writer), bb.const(float("nan")), clean)
        return bb.select(bb.cmpf("oge", last_writer, bb.const(1.0)), written, value)

    return imp.elementwise([last, (nan, out), extreme, (data, out)], out, fold,
                           index=gen.next())


class _Generics:
    """Builds a scatter's generics over ``loops``, numbering them."""

    def __init__(self, imp: Importer, loops: _Loops) -> None:
        self.imp, self.loops = imp, loops
        self.count = len(loops.components) + 4  # the views' indices come first

    def next(self) -> int:
        self.count += 1
        return self.count

    def over_updates(
        self, inputs: list[Operand], combiner: str,
        body: Callable[[BodyBuilder, SSAValue, Sequence[SSAValue]], SSAValue],
    ) -> Operand:
        """The ``combiner`` over the updates of ``body(writes, inputs)``: of the output's rank
        (its size-1 dims those the inputs do not span, e.g. a ScatterND's last writer)."""
        writers = self.loops.writers()
        n = len(writers)
        return self.imp.reduction(
            [*writers, *inputs], list(self.loops.reduced), False, combiner,
            lambda bb, v: body(bb, self.loops.writes(bb, v[:n]), v[n:]), index=self.next())

    def spread(self, value: Operand) -> Operand:
        """An output-ranked ``value`` read across the update loops."""
        source, shape = value
        wide = shape + (1,) * len(self.loops.reduced)
        return self.imp.view(source, shape, wide, loops_map(len(wide), range(len(shape))),
                             index=self.next()), wide

    def last_written(self, last: Operand) -> Operand:
        """The update of the last writer (-inf where none writes)."""
        return self.over_updates(
            [self.loops.order, self.loops.updates, self.spread(last)], "max",
            lambda bb, w, v: bb.select(bb.select(w, bb.cmpf("oeq", _place(bb, v[0]), v[2]), w),
                                       v[1], bb.const(-_INF)))

    def choose(self, last: Operand, written: Operand, data: SSAValue) -> SSAValue:
        """``written`` where some update writes, else the data."""
        out = self.loops.out
        return self.imp.elementwise(
            [last, written, (data, out)], out,
            lambda bb, v: bb.select(bb.cmpf("oge", v[0], bb.const(1.0)), v[1], v[2]),
            index=self.next())


def _place(bb: BodyBuilder, order: SSAValue) -> SSAValue:
    """An update's place in onnxruntime's order: its position + 1 (the data is 0)."""
    return bb.add(order, bb.const(1.0))
