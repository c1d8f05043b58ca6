"""Interpreter functions for the `core` dialect (the SPMD per-core level): buffers,
loads and stores, kernels (operand slices, numerics, cost) and the exchange ops, vectorized
over cores on the values described in `t10.sim.state`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil, prod
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, StringAttr, TensorType
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, register_impls
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.ir.affine import AffineDimExpr

from t10.common import collectives, costs, exchange
from t10.common.attr_names import FLOAT16_TYPE, NAME_ATTR, ONNX_TYPE_ATTR
from t10.common.locations import naming_node
from t10.common.placements import check_fits
from t10.common.plans import Layout, kernel_cycles
from t10.common.tensor_expr import (
    COMBINER_IDENTITY,
    ExprKind,
    TensorExpr,
    element_bytes,
    tensor_expr_of,
)
from t10.common.traffic import Traffic
from t10.errors import T10Error
from t10.sim.sim_impl import sim_impl
from t10.sim.state import (
    Buffer,
    Index,
    NoValues,
    Region,
    SimState,
    StepCost,
    has_values,
    per_core,
)
from t10.t10_dialects import chip, core
from t10.t10_dialects.core import buffer_type
from t10.t10_dialects.syntax import ints_of

# --------------------------------------------------------------------------------------------
# core.kernel: operand slices, numerics, cost
# --------------------------------------------------------------------------------------------


def _map_loops(op: core.KernelOp) -> list[tuple[int | None, ...]]:
    """Per operand, the loop dim each buffer dim is read at (None: the constant 0)."""
    return [
        tuple(e.position if isinstance(e, AffineDimExpr) else None for e in m.data.results)
        for m in op.indexing_maps.data
    ]


def _slice_shape(loops: Sequence[int | None], sizes: Sequence[int]) -> tuple[int, ...]:
    return tuple(1 if d is None else sizes[d] for d in loops)


def _kernel_tensor_expr(op: core.KernelOp) -> TensorExpr:
    """The tensor expression of one core's sub-operator (operand types = the slices read)."""
    sizes = ints_of(op.sizes)
    types = [
        TensorType(buffer_type(buf).tensor.get_element_type(), _slice_shape(loops, sizes))
        for buf, loops in zip((*op.inputs, op.output), _map_loops(op), strict=True)
    ]
    parallel = tuple(it.data == IteratorType.PARALLEL for it in op.iterator_types.data)
    return tensor_expr_of(
        op, op.indexing_maps, parallel, tuple(types[:-1]), types[-1], op.body.block
    )


@dataclass(frozen=True)
class Cut:
    """Per-core `offsets` along buffer dim `dim`, `extent` elements long."""

    dim: int
    offsets: np.ndarray
    extent: int


@dataclass(frozen=True)
class Slice:
    """Operand of a kernel (or a shift) on `cores` cores: `buffer` cut along each of `cuts`
    (distinct dims; none: the whole buffer)."""

    buffer: Buffer
    cuts: tuple[Cut, ...]
    cores: int

    def cut(self, dim: int) -> Cut | None:
        return next((c for c in self.cuts if c.dim == dim), None)

    def check(self, what: str) -> None:
        for c in self.cuts:
            size = self.buffer.shape[c.dim]
            outside = (c.offsets < 0) | (c.offsets + c.extent > size)
            if np.any(outside):
                bad = int(np.flatnonzero(outside)[0])
                raise T10Error(
                    f"{what}: core {bad} reads '{self.buffer.label}' dim {c.dim} at "
                    f"[{int(c.offsets[bad])}, {int(c.offsets[bad]) + c.extent}) outside "
                    f"its {size} elements"
                )

    def _basic(self) -> tuple[slice, ...] | None:
        """The slice as basic indexing, when every cut has one offset on all cores."""
        index = [slice(0, self.cores)] + [slice(None)] * (self.buffer.data.ndim - 1)
        for c in self.cuts:
            off = c.offsets
            if not off.size or np.any(off != off[0]):
                return None
            index[c.dim + 1] = slice(int(off[0]), int(off[0]) + c.extent)
        return tuple(index)

    def _fancy(self) -> tuple[list[int], tuple[np.ndarray, ...]]:
        """The buffer axes of the cuts, and the index that picks every core's windows once
        those axes are moved right after the core axis."""
        n = len(self.cuts)
        index = [np.arange(self.cores).reshape((self.cores,) + (1,) * n)]
        for i, c in enumerate(self.cuts):
            shape = [self.cores] + [1] * n
            shape[i + 1] = c.extent
            index.append(_window(c.offsets, c.extent).reshape(shape))
        return [c.dim + 1 for c in self.cuts], tuple(index)

    def read(self) -> np.ndarray:
        basic = self._basic()
        if basic is not None:
            return self.buffer.data[basic]
        axes, index = self._fancy()
        front = list(range(1, len(axes) + 1))
        return np.moveaxis(np.moveaxis(self.buffer.data, axes, front)[index], front, axes)

    def write(self, values: np.ndarray) -> None:
        basic = self._basic()
        if basic is not None:
            self.buffer.data[basic] = values
            return
        axes, index = self._fancy()
        front = list(range(1, len(axes) + 1))
        np.moveaxis(self.buffer.data, axes, front)[index] = np.moveaxis(values, axes, front)


def _window(offsets: np.ndarray, extent: int) -> np.ndarray:
    """`(cores, extent)` positions offsets[c] .. offsets[c]+extent-1."""
    return offsets[:, None] + np.arange(extent)


def _kernel_slices(
    op: core.KernelOp, buffers: Sequence[Buffer], offsets: Sequence[Sequence[Index]]
) -> list[Slice]:
    """Each operand's slice: `offsets[j][i]` is operand i's offset along its j-th slice dim
    (`slice_dims`, then `more_dims`)."""
    what = f"core.kernel '{op.label.data}'"
    grid_cores = prod(ints_of(op.grid))
    sizes = ints_of(op.sizes)
    dims = [ints_of(op.slice_dims)]
    if op.more_dims is not None:
        dims.append(ints_of(op.more_dims))
    slices = []
    last = len(buffers) - 1
    for i, (buf, loops) in enumerate(zip(buffers, _map_loops(op), strict=True)):
        if i < last:  # the output starts zero-filled (an accumulator)
            buf.check_readable(what, grid_cores)
        buf.check_usable(what, grid_cores)
        shape = _slice_shape(loops, sizes)
        cuts = tuple(
            Cut(d[i], per_core(off[i], grid_cores), shape[d[i]])
            for d, off in zip(dims, offsets, strict=True)
            if d[i] >= 0
        )
        s = Slice(buf, cuts, grid_cores)
        s.check(what)
        slices.append(s)
    return slices


def _drop_broadcast(x: np.ndarray, loops: Sequence[int | None]) -> tuple[np.ndarray, list[int]]:
    """Squeeze the size-1 constant-0 dims; return the array and its loop dims."""
    kept = [d for d in loops if d is not None]
    shape = [s for s, d in zip(x.shape[1:], loops, strict=True) if d is not None]
    return x.reshape((x.shape[0], *shape)), kept


def to_loop_space(x: np.ndarray, loops: Sequence[int | None], rank: int) -> np.ndarray:
    """`(cores, *slice)` → `(cores, e0, .., e_rank-1)` with size 1 on loop dims not read."""
    x, kept = _drop_broadcast(x, loops)
    order = sorted(kept)
    x = x.transpose([0, *(1 + kept.index(d) for d in order)])
    shape = [1] * rank
    for d, s in zip(order, x.shape[1:], strict=True):
        shape[d] = s
    return x.reshape((x.shape[0], *shape))


def from_loop_space(
    x: np.ndarray, out_loops: Sequence[int], sizes: Sequence[int], cores: int
) -> np.ndarray:
    """`(cores, e0, .., e_rank-1)` (broadcastable) → `(cores, *output slice)`."""
    full = np.broadcast_to(x, (cores, *sizes))
    return full.transpose([0, *(1 + d for d in out_loops)])


def _arrange(
    x: np.ndarray, loops: Sequence[int], out_loops: Sequence[int], sizes: Sequence[int]
) -> np.ndarray:
    """`(cores, *loops)` with loops ⊆ out_loops → `(cores, *out_loops)` (broadcast)."""
    missing = [d for d in out_loops if d not in loops]
    x = x.reshape(x.shape + (1,) * len(missing))
    order = [*loops, *missing]
    x = x.transpose([0, *(1 + order.index(d) for d in out_loops)])
    return np.broadcast_to(x, (x.shape[0], *(sizes[d] for d in out_loops)))


def contract(
    a: np.ndarray,
    a_loops: Sequence[int | None],
    b: np.ndarray,
    b_loops: Sequence[int | None],
    out_loops: Sequence[int],
    sizes: Sequence[int],
) -> np.ndarray:
    """Σ over the loop dims not in the output of a·b, batched over the leading core axis, as
    one batched matmul `(cores, batch, m, k) @ (cores, batch, k, n)`."""
    cores = a.shape[0]
    a, al = _drop_broadcast(a, a_loops)
    b, bl = _drop_broadcast(b, b_loops)
    a, al = _sum_unshared(a, al, {*out_loops, *bl})
    b, bl = _sum_unshared(b, bl, {*out_loops, *al})
    batch = [d for d in out_loops if d in al and d in bl]
    m = [d for d in out_loops if d in al and d not in bl]
    n = [d for d in out_loops if d in bl and d not in al]
    k = [d for d in al if d in bl and d not in out_loops]

    def grouped(x: np.ndarray, xl: list[int], groups: list[list[int]]) -> np.ndarray:
        x = x.transpose([0, *(1 + xl.index(d) for g in groups for d in g)])
        return x.reshape((cores, *(prod(sizes[d] for d in g) for g in groups)))

    product = grouped(a, al, [batch, m, k]) @ grouped(b, bl, [batch, k, n])
    have = batch + m + n
    product = product.reshape((cores, *(sizes[d] for d in have)))
    return _arrange(product, have, out_loops, sizes)


def _sum_unshared(x: np.ndarray, loops: list[int], keep: set[int]) -> tuple[np.ndarray, list[int]]:
    axes = tuple(1 + i for i, d in enumerate(loops) if d not in keep)
    return x.sum(axis=axes) if axes else x, [d for d in loops if d in keep]


def _run_kernel(
    state: SimState,
    interpreter: Interpreter,
    op: core.KernelOp,
    expr: TensorExpr,
    slices: list[Slice],
    origin: np.ndarray | None = None,
) -> None:
    """Run the kernel on its slices and write its output (`origin`: see `core.KernelOp`)."""
    sizes = ints_of(op.sizes)
    loops = _map_loops(op)
    out_loops = [d for d in loops[-1] if d is not None]
    if len(out_loops) != len(loops[-1]):
        raise T10Error(f"core.kernel '{op.label.data}': the output may not have broadcast dims")
    if state.timing_only:  # the same checks, no arithmetic
        if expr.kind is ExprKind.ELEMENTWISE:
            _check_elementwise(op, out_loops)
        slices[-1].buffer.drop_values()
        return
    values = [s.read().astype(np.float32, copy=False) for s in slices]  # f16 loads widen
    cores = slices[-1].cores
    if expr.kind is ExprKind.CONTRACTION:
        total = contract(values[0], loops[0], values[1], loops[1], out_loops, sizes)
        _write_output(state, op, slices[-1], out_loops, values[-1] + total, origin)
        return
    if expr.kind is ExprKind.REDUCTION:
        reduced = _reduce(interpreter, op, expr, values, loops)
        _write_output(state, op, slices[-1], out_loops, reduced, origin)
        return
    _check_elementwise(op, out_loops)
    args = tuple(to_loop_space(v, m, len(sizes)) for v, m in zip(values, loops, strict=True))
    if op.scatter is not None:
        out = _scattered(interpreter, op, args, values[-1])
    else:
        (result,) = interpreter.run_ssacfg_region(op.body, args, "core.kernel")
        out = from_loop_space(np.asarray(result, dtype=np.float32), out_loops, sizes, cores)
    _write_output(state, op, slices[-1], out_loops, out, origin)


def _check_elementwise(op: core.KernelOp, out_loops: Sequence[int]) -> None:
    """An element-wise kernel's output reads every loop dim; a scatter's, in order."""
    rank = len(ints_of(op.sizes))
    if sorted(out_loops) != list(range(rank)):
        raise T10Error(
            f"core.kernel '{op.label.data}': an element-wise kernel's output must read every "
            "loop dim"
        )
    if op.scatter is not None and list(out_loops) != list(range(rank)):
        raise T10Error(f"core.kernel '{op.label.data}': a scatter kernel's output map must be "
                       "the identity")


def _write_output(
    state: SimState,
    op: core.KernelOp,
    output: Slice,
    loops: Sequence[int],
    values: np.ndarray,
    origin: np.ndarray | None = None,
) -> None:
    """Store a kernel's result (zeros in the padding), counting fp16 overflows."""
    values = _zero_padding(op, output, loops, values, origin)
    state.note_overflow(f"core.kernel '{op.label.data}'", values, output.buffer.data.dtype)
    output.write(values)


def _scattered(
    interpreter: Interpreter, op: core.KernelOp, args: tuple[np.ndarray, ...], old: np.ndarray
) -> np.ndarray:
    """A `scatter` kernel: each core evaluates the body on its own run of the tile only (an
    epilogue's output map is the identity, so loop space and buffer agree element by element)
    and keeps the rest of its output (`old`) as it was."""
    cores, shape = old.shape[0], old.shape[1:]
    columns = run_columns(ints_of(op.grid), op.replica_axes(), shape, cores)
    own = [
        np.take_along_axis(np.broadcast_to(a, old.shape).reshape(cores, -1), columns, axis=1)
        for a in args
    ]
    (result,) = interpreter.run_ssacfg_region(op.body, tuple(own), "core.kernel")
    out = old.reshape(cores, -1).copy()
    np.put_along_axis(out, columns, np.asarray(result, dtype=np.float32), axis=1)
    return out.reshape(old.shape)


_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min}


def _group_total(view: np.ndarray, axes: Sequence[int], combiner: str) -> np.ndarray:
    """`view` (grid axes first) combined over the group `axes` (kept as size 1). A sum of
    partials narrower than fp32 (fp16 partials) adds one member at a time at their precision,
    each add rounded, as a core adds what it receives; anything else is exact in fp32."""
    if combiner != "sum" or view.dtype == np.float32:
        return _REDUCE[combiner](view.astype(np.float32), axis=tuple(axes), keepdims=True)
    members = np.moveaxis(view, list(axes), list(range(len(axes))))
    members = members.reshape(-1, *members.shape[len(axes):])
    total = members[0].copy()
    for member in members[1:]:
        total = total + member  # same dtype: rounded at every add
    total = total.reshape((1,) * len(axes) + total.shape)
    return np.moveaxis(total, list(range(len(axes))), list(axes))


def run_length(grid: Sequence[int], axes: Sequence[int], shape: Sequence[int]) -> int:
    """Elements per run when the cores of a group (on grid `axes`) split a buffer of `shape`
    into equal runs of its row-major elements (the last run may be short)."""
    return ceil(prod(shape) / prod(grid[a] for a in axes))


def run_columns(
    grid: Sequence[int], axes: Sequence[int], shape: Sequence[int], cores: int
) -> np.ndarray:
    """`(cores, run)`: the row-major element indices of the run each core owns in a buffer
    of `shape` (the run numbered as the core's rank in its group, row major over `axes` in
    increasing order); a short last run repeats its last element."""
    coords = exchange.grid_coords(grid, cores)
    rank = np.zeros(cores, dtype=np.int64)
    for a in sorted(axes):
        rank = rank * grid[a] + coords[:, a]
    run = run_length(grid, axes, shape)
    return np.minimum(rank[:, None] * run + np.arange(run), prod(shape) - 1)


def _reduce(
    interpreter: Interpreter,
    op: core.KernelOp,
    expr: TensorExpr,
    values: list[np.ndarray],
    loops: list[tuple[int | None, ...]],
) -> np.ndarray:
    """A reduction kernel `out = combine over the reduction dims of f(inputs)`: the body runs
    over the whole loop space with acc = the combiner's identity (so it yields f), the values
    of padded loop positions (beyond the bounds) become the identity, then the combiner folds
    the reduction dims. Plans never shift a reduction's reduction dims (`shiftable_dims`), so
    each kernel computes whole output elements and overwrites them."""
    sizes = ints_of(op.sizes)
    rank = len(sizes)
    cores = values[-1].shape[0]
    assert expr.combiner is not None
    identity = np.float32(COMBINER_IDENTITY[expr.combiner])
    args = [to_loop_space(v, m, rank) for v, m in zip(values[:-1], loops[:-1], strict=True)]
    full = (cores, *sizes)
    args = [np.broadcast_to(a, full) for a in args]
    (f,) = interpreter.run_ssacfg_region(
        op.body, (*args, np.full(full, identity, dtype=np.float32)), "core.kernel"
    )
    f = np.broadcast_to(np.asarray(f, dtype=np.float32), full)
    out_loops = [d for d in loops[-1] if d is not None]
    # padding of the parallel dims is the output's, zeroed by the caller
    f = np.where(_inside(op, cores, expr.reduction_dims), f, identity)
    kept = [d for d in range(rank) if d in out_loops]
    red = tuple(1 + d for d in range(rank) if d not in out_loops)
    reduced = _REDUCE[expr.combiner](f, axis=red).astype(np.float32)
    return reduced.transpose([0, *(1 + kept.index(d) for d in out_loops)])


def _loop_coords(op: core.KernelOp, cores: int) -> np.ndarray:
    """`(cores, loops)`: each core's tile index along each loop (0 for a loop not split)."""
    grid_coords = exchange.grid_coords(ints_of(op.grid), cores)
    columns = [
        grid_coords[:, a] if a >= 0 else np.zeros(cores, dtype=grid_coords.dtype)
        for a in op.loop_axes()
    ]
    return np.stack(columns, axis=1) if columns else grid_coords[:, :0]


def _inside(op: core.KernelOp, cores: int, dims: Sequence[int]) -> np.ndarray:
    """`(cores, *sizes)` (broadcastable): whether each loop position of each core lies within
    the loop bounds along the loop dims `dims`, which are never cut into steps (a reduction's
    reduction dims): loop d of core x starts at x[d] · sizes[d]."""
    bounds, sizes = ints_of(op.bounds), ints_of(op.sizes)
    coords = _loop_coords(op, cores)
    parts = op.loop_parts()
    keep = np.ones((cores,) + (1,) * len(sizes), dtype=bool)
    for d in dims:
        size = sizes[d]
        if parts[d] * size <= bounds[d]:
            continue
        inside = coords[:, d, None] * size + np.arange(size) < bounds[d]
        shape = [cores] + [1] * len(sizes)
        shape[d + 1] = size
        keep = keep & inside.reshape(shape)
    return keep


def _zero_padding(
    op: core.KernelOp,
    out: Slice,
    out_loops: Sequence[int],
    values: np.ndarray,
    origin: np.ndarray | None = None,
) -> np.ndarray:
    """`values` (the output slice of every core) with the padding set to zero: an element is
    padding where its index in the whole tensor (tile origin + offset in the tile, or the
    kernel's `origin` along the slice dim of a rotating output) reaches the loop's bound (see
    `core.KernelOp`)."""
    bounds = ints_of(op.bounds)
    tiles = out.buffer.shape
    parts = op.loop_parts()
    if origin is None and all(parts[d] * tiles[j] <= bounds[d] for j, d in enumerate(out_loops)):
        return values
    coords = _loop_coords(op, out.cores)
    keep = np.ones(values.shape, dtype=bool)
    for j, d in enumerate(out_loops):
        extent = values.shape[j + 1]
        cut = out.cut(j)
        if cut is not None and cut is out.cuts[0] and origin is not None:
            start = origin
        else:
            start = coords[:, d] * tiles[j] + (0 if cut is None else cut.offsets)
        inside = start[:, None] + np.arange(extent) < bounds[d]
        shape = [out.cores] + [1] * (values.ndim - 1)
        shape[j + 1] = extent
        keep &= inside.reshape(shape)
    return np.where(keep, values, np.float32(0))


# --------------------------------------------------------------------------------------------
# core
# --------------------------------------------------------------------------------------------


def _layout(attr: Any, tensor_type: Attribute) -> Layout:
    assert isinstance(tensor_type, TensorType)
    return attr.to_layout(tensor_type.get_shape())


def load_into(
    state: SimState, op: core.LoadOp | chip.LoadOp, host: object, buffer: Buffer, what: str
) -> Layout:
    """Places the `host` tensor into `buffer` following the layout of `op` (a load from the
    host or from off-chip memory); returns the layout."""
    layout = _layout(op.layout, op.source.type)
    buffer.check_usable(what, layout.cores)
    buffer.mark_written(layout.cores)
    if not has_values(host):  # timing-only mode
        buffer.drop_values()
        return layout
    values = np.asarray(host, np.float32)
    if buffer.data.dtype == np.float16:
        _check_exact_integers(op.source, values)
    state.note_overflow(what, values, buffer.data.dtype)
    buffer.writable()[: layout.cores] = exchange.distribute(layout, values)
    return layout


@register_impls
class CoreFunctions(InterpreterFunctions):
    """The `core` dialect: buffers, loads/stores, kernels and the exchange ops."""

    def __init__(self, state: SimState):
        self.state = state
        self._exprs: dict[core.KernelOp, TensorExpr] = {}

    def _kernel_expr(self, op: core.KernelOp) -> TensorExpr:
        if op not in self._exprs:
            self._exprs[op] = _kernel_tensor_expr(op)
        return self._exprs[op]

    @sim_impl(core.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: core.AllocOp, args: PythonValues):
        label, cores = op.label.data, op.cores.value.data
        tensor = op.result.type.tensor
        eb = element_bytes(tensor.get_element_type(), f"core.alloc '{label}'")
        shape = tuple(tensor.get_shape())
        alloc_id = self.state.allocate(label, cores, prod(shape) * eb)
        dtype = np.float16 if eb == 2 else np.float32
        make = NoValues.of if self.state.timing_only else np.zeros
        return (Buffer(label, make((cores, *shape), dtype), eb, alloc_id=alloc_id),)

    @sim_impl(core.FreeOp)
    def run_free(self, interpreter: Interpreter, op: core.FreeOp, args: PythonValues):
        buffer = args[0]
        buffer.check_usable("core.free")
        buffer.freed = True
        self.state.release(buffer)
        return ()

    @sim_impl(core.CoordOp)
    def run_coord(self, interpreter: Interpreter, op: core.CoordOp, args: PythonValues):
        self.state.check_in_program("core.coord")
        coords = exchange.grid_coords(ints_of(op.grid), self.state.chip.cores)
        return (coords[:, op.axis.value.data].copy(),)

    @sim_impl(core.LoadOp)
    def run_load(self, interpreter: Interpreter, op: core.LoadOp, args: PythonValues):
        host, buffer = args
        load_into(self.state, op, host, buffer, f"core.load into '{buffer.label}'")
        return ()

    @sim_impl(core.StoreOp)
    def run_store(self, interpreter: Interpreter, op: core.StoreOp, args: PythonValues):
        (buffer,) = args
        layout = _layout(op.layout, op.result.type)
        what = f"core.store of '{buffer.label}'"
        buffer.check_readable(what, layout.cores)
        if not has_values(buffer.data):  # timing-only mode
            return (NoValues.of(layout.shape, np.float32),)
        return (exchange.collect(layout, buffer.data, what).astype(np.float32),)

    @sim_impl(core.KernelOp)
    def run_kernel(self, interpreter: Interpreter, op: core.KernelOp, args: PythonValues):
        step = self.state.phase(f"core.kernel '{op.label.data}'")
        n = len(op.inputs) + 1
        cuts = 1 if op.more_dims is None else 2
        offsets = [args[n * (j + 1) : n * (j + 2)] for j in range(cuts)]
        slices = _kernel_slices(op, args[:n], offsets)
        slices[-1].buffer.mark_written(slices[-1].cores)
        expr = self._kernel_expr(op)
        origin = None if op.origin is None else per_core(args[-1], slices[-1].cores)
        _run_kernel(self.state, interpreter, op, expr, slices, origin)
        if op.scatter is None:
            step.compute_cycles += kernel_cycles(self.state.chip, expr, ints_of(op.sizes))
        else:  # each replica computes its run of the tile
            run = run_length(ints_of(op.grid), op.replica_axes(), slices[-1].buffer.shape)
            step.compute_cycles += costs.elementwise_cycles(
                self.state.chip, run, expr.relu_like, expr.body_ops
            )
        step.use_cores(slices[-1].cores)
        return ()

    @sim_impl(core.ShiftOp)
    def run_shift(self, interpreter: Interpreter, op: core.ShiftOp, args: PythonValues):
        buffer, send, recv = args
        step = self.state.phase("core.shift")
        grid = ints_of(op.grid)
        cores = prod(grid)
        what = f"core.shift of '{buffer.label}'"
        buffer.check_readable(what, cores)
        dim, size = op.dim.value.data, op.size.value.data
        ring, pieces = op.ring.value.data, op.pieces.value.data
        source = collectives.shift_sources(grid, ring, pieces)
        send_at = Slice(buffer, (Cut(dim, per_core(send, cores)[source], size),), cores)
        recv = per_core(recv, cores)
        recv_at = Slice(buffer, (Cut(dim, recv, size),), cores)
        send_at.check(what)
        recv_at.check(what)
        step.receive(what, buffer, Region(cores, dim, recv, size))
        if has_values(buffer.data):
            # read every slab before writing any: fancy indexing copies
            slabs = np.moveaxis(buffer.data, dim + 1, 1)[
                source[:, None], _window(send_at.cuts[0].offsets, size)
            ]
            recv_at.write(np.moveaxis(slabs, 1, dim + 1))
        moved = buffer.bytes_per_core // buffer.shape[dim] * size
        step.add_exchange(self.state.chip, self._placed(
            op, grid, collectives.shift_traffic(grid, ring, pieces, moved)))
        step.use_cores(cores)
        return ()

    def _placed(
        self, op: core.ShiftOp | core.AllReduceOp | core.AllGatherOp, grid: tuple[int, ...],
        traffic: Traffic,
    ) -> Traffic:
        """`traffic` among the cores of `grid` on the chip's cores, placed as `op` says."""
        placement = None if op.placement is None else op.placement.to_placement()
        check_fits(op.name, grid, placement, self.state.chip.core_shape)
        return collectives.on_chip(self.state.chip, grid, placement, traffic)

    def _check_placed(self, what: str, *layouts: Layout) -> None:
        """The layouts an exchange moves between place their cores on this chip."""
        for layout in layouts:
            check_fits(what, layout.grid, layout.placement, self.state.chip.core_shape)

    def _group_op(
        self, op: core.AllReduceOp | core.AllGatherOp, buffer: Buffer
    ) -> tuple[StepCost, tuple[int, ...], tuple[int, ...], int, str]:
        """The superstep phase, grid, group axes (sorted) and cores of a group exchange on
        `buffer`, and how to name it in errors."""
        what = f"{op.name} of '{buffer.label}'"
        grid = ints_of(op.grid)
        cores = prod(grid)
        buffer.check_readable(what, cores)
        step = self.state.phase(op.name)
        step.receive(what, buffer, Region(cores))
        return step, grid, tuple(sorted(ints_of(op.axes))), cores, what

    @sim_impl(core.AllReduceOp)
    def run_all_reduce(self, interpreter: Interpreter, op: core.AllReduceOp, args: PythonValues):
        (buffer,) = args
        step, grid, axes, cores, what = self._group_op(op, buffer)
        group = prod(grid[a] for a in axes)
        if has_values(buffer.data):
            view = buffer.data[:cores].reshape(grid + buffer.shape)
            total = _group_total(view, axes, op.combiner.data)
            total = np.broadcast_to(total, view.shape).reshape(cores, -1)
            flat = buffer.data[:cores].reshape(cores, -1)
            if op.scatter is None:
                flat[:] = total
            else:  # the reduce-scatter: each core completes its own run
                columns = run_columns(grid, axes, buffer.shape, cores)
                np.put_along_axis(
                    flat, columns, np.take_along_axis(total, columns, axis=1), axis=1
                )
        step.use_cores(cores)
        if group == 1:
            return ()
        run = run_length(grid, axes, buffer.shape)
        part = (group - 1) * run
        self.state.transient(f"the receive buffer of {what}", cores, part * buffer.elem_bytes)
        chip = self.state.chip
        traffic = self._placed(op, grid,
                               collectives.group_traffic(grid, axes, run * buffer.elem_bytes))
        step.add_exchange(chip, traffic)  # the reduce-scatter
        step.compute_cycles += costs.elementwise_cycles(chip, part)
        if op.scatter is None:  # the all-gather, in a superstep of its own
            step.add_exchange(chip, traffic)
            step.extra_syncs += 1
        return ()

    @sim_impl(core.AllGatherOp)
    def run_all_gather(self, interpreter: Interpreter, op: core.AllGatherOp, args: PythonValues):
        (buffer,) = args
        step, grid, axes, cores, _ = self._group_op(op, buffer)
        coords = exchange.grid_coords(grid, cores)
        run = run_length(grid, axes, buffer.shape)
        members = np.stack(np.unravel_index(np.arange(prod(grid[a] for a in axes)),
                                            tuple(grid[a] for a in axes)), axis=1)
        if has_values(buffer.data):
            flat = buffer.data[:cores].reshape(cores, -1)
            for rank, member in enumerate(members):
                source = coords.copy()
                source[:, list(axes)] = member
                run_of_rank = slice(rank * run, (rank + 1) * run)
                flat[:, run_of_rank] = flat[exchange.linear_ids(grid, source), run_of_rank]
        step.use_cores(cores)
        step.add_exchange(self.state.chip, self._placed(
            op, grid, collectives.group_traffic(grid, axes, run * buffer.elem_bytes)))
        return ()

    @sim_impl(core.RelayoutOp)
    def run_relayout(self, interpreter: Interpreter, op: core.RelayoutOp, args: PythonValues):
        source, target = args
        step = self.state.phase("core.relayout")
        src = _layout(op.src_layout, op.tensor)
        dst = _layout(op.dst_layout, op.target_tensor())
        what = f"core.relayout of '{source.label}' to '{target.label}'"
        self._check_placed(what, src, dst)
        _check_exchange(what, step, [(source, src)], (target, dst))
        view = op.view()
        tensor = None  # timing-only mode: no values to move
        if has_values(source.data):
            tensor = exchange.collect(src, source.data, what)
            if view is not None:
                tensor = view.gather(tensor, dst.shape, what)
        routes, shape = self.state.chip.topology.routes, self.state.chip.core_shape
        if view is None:
            traffic = exchange.relayout_exchange(src, dst, source.elem_bytes, routes, shape)
        else:
            move = exchange.element_move(src, dst, view, routes, shape)
            traffic = move.traffic(source.elem_bytes)
            step.compute_cycles += costs.elementwise_cycles(
                self.state.chip, int(move.copied.max(initial=0.0))
            )
        if tensor is None:
            target.drop_values()
        else:
            self.state.note_overflow(what, tensor, target.data.dtype)
            target.writable()[: dst.cores] = exchange.distribute(dst, tensor)
        step.add_exchange(self.state.chip, traffic)
        if target.elem_bytes != source.elem_bytes:  # rounding: an element-wise pass
            step.compute_cycles += costs.elementwise_cycles(self.state.chip, prod(target.shape))
        step.use_cores(max(src.cores, dst.cores))
        return ()

    @sim_impl(core.GatherOp)
    def run_gather(self, interpreter: Interpreter, op: core.GatherOp, args: PythonValues):
        table_buf, ids_buf, target = args
        step = self.state.phase("core.gather")
        table_l = _layout(op.table_layout, op.table_tensor)
        ids_l = _layout(op.ids_layout, op.ids_tensor)
        dst = _layout(op.dst_layout, op.tensor)
        what = f"core.gather '{op.label.data}'"
        self._check_placed(what, table_l, ids_l, dst)
        _check_exchange(what, step, [(table_buf, table_l), (ids_buf, ids_l)], (target, dst))
        if not has_values(ids_buf.data):
            raise T10Error(f"{what}: its ids are computed on chip, and their values decide the "
                           "gather's traffic: simulate without --timing-only")
        ids = exchange.collect(ids_l, ids_buf.data, what).astype(np.float64)
        kind = op.kind()
        try:
            index = kind.checked(what, ids, table_l.shape, table_buf.label)
        except T10Error as error:
            raise naming_node(error, op) from None
        if has_values(table_buf.data):
            table = exchange.collect(table_l, table_buf.data, what)
            taken = kind.take(table, index)
            target.writable()[: dst.cores] = exchange.distribute(dst, taken)
        else:  # timing-only mode
            target.drop_values()
        traffic, copied = exchange.gather_traffic(
            table_l, ids_l, dst, index, kind, table_buf.elem_bytes, ids_buf.elem_bytes,
            self.state.chip.topology.routes, self.state.chip.core_shape,
        )
        step.add_exchange(self.state.chip, traffic)
        step.compute_cycles += costs.elementwise_cycles(self.state.chip, copied)
        step.use_cores(max(table_l.cores, ids_l.cores, dst.cores))
        return ()


def _check_exact_integers(source: SSAValue, values: np.ndarray) -> None:
    """An integer / bool input (an argument tagged `t10.onnx_type`) stored in fp16 must be
    exact there (every integer with |x| <= 2048 is; larger ones only some): a comparison or a
    selection on a rounded integer would be silently wrong."""
    if not isinstance(source, BlockArgument) or not isinstance(
        main := source.block.parent_op(), func.FuncOp
    ):
        return
    attrs = main.arg_attrs.data[source.index] if main.arg_attrs else None
    onnx_type = attrs.data.get(ONNX_TYPE_ATTR) if isinstance(attrs, DictionaryAttr) else None
    if not isinstance(onnx_type, StringAttr) or onnx_type.data == FLOAT16_TYPE:
        return
    lost = values.astype(np.float16).astype(np.float32) != values
    if lost.any():
        name = attrs.data.get(NAME_ATTR) if isinstance(attrs, DictionaryAttr) else None
        label = name.data if isinstance(name, StringAttr) else f"input{source.index}"
        at = tuple(int(i) for i in np.argwhere(lost)[0])
        raise T10Error(
            f"input '{label}' ({onnx_type.data}): value {int(values[at])} at index {list(at)} "
            "is not exact in fp16 storage (integers with |x| <= 2048 are); t10 computes "
            "integers exactly or not at all: simulate with --precision fp32"
        )


def _check_exchange(
    what: str,
    step: StepCost,
    sources: Sequence[tuple[Buffer, Layout]],
    target: tuple[Buffer, Layout],
) -> None:
    """An exchange reads each source buffer on its layout's cores (where something was
    written) and writes the whole target on its layout's cores (tile shapes are the
    verifiers')."""
    for buffer, layout in sources:
        buffer.check_readable(what, layout.cores)
    buffer, layout = target
    buffer.check_usable(what, layout.cores)
    step.receive(what, buffer, Region(layout.cores))
    buffer.mark_written(layout.cores)
