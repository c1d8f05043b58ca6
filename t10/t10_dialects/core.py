"""core: the SPMD per-core program — SRAM buffers, kernels on them, and the transfers.

One program runs on every core; values of type `index` may differ per core (they are
computed from `core.coord`). A `!core.buffer<64x128xf32>` is one SRAM buffer of that shape on
each of the first `cores` cores.

```
  %x1 = core.coord 1 of [4, 4, 1]                     // this core's coordinate on axis 1
  core.kernel "fc1" ... ins(%a[%off_a], %b[%off_b])  // sub-operator on buffer slices
  core.shift %a ring 1 x 4 of [4, 4, 1] dim 1 size 8 from %src to %dst
```
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from math import prod

from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f16,
    f32,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    OpResult,
    ParametrizedAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.ir.affine import AffineDimExpr
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from t10.common import plans
from t10.common.placements import without_single_axes
from t10.common.plans import Layout
from t10.common.view_maps import View, map_problem
from t10.t10_dialects.rtensor import (
    GATHER_KIND_FORMAT,
    GatherKindOp,
    LayoutAttr,
    PlacementAttr,
    check_guard,
    layout_problem,
    print_shaped,
    tensor_type,
    view_of,
)
from t10.t10_dialects.syntax import check_combiner, ints_of, optional_values, values


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """`!core.buffer<64x128xf32>`: one SRAM buffer of this shape per core."""

    name = "core.buffer"

    tensor: TensorType

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        print_shaped(printer, self.tensor.get_shape(), self.tensor.get_element_type())
        printer.print_string(">")

    def verify(self) -> None:
        if any(d < 1 for d in self.tensor.get_shape()):
            raise VerifyException(f"core.buffer dims must be positive, got {self.tensor}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        shape, elem = parser.parse_ranked_shape()
        parser.parse_punctuation(">")
        return (TensorType(elem, shape),)

    @staticmethod
    def of(shape: Sequence[int], element_type: Attribute) -> BufferType:
        return BufferType(TensorType(element_type, shape))

    def get_shape(self) -> tuple[int, ...]:
        return tuple(self.tensor.get_shape())


def buffer_type(value: SSAValue) -> BufferType:
    """The type of a buffer operand (its op's constraint checked it)."""
    return SSAValue.get(value, type=BufferType).type


def _check_grid(grid: DenseArrayBase[I64], what: str) -> tuple[int, ...]:
    g = ints_of(grid)
    if not g or any(x < 1 for x in g):
        raise VerifyException(f"{what}: grid {list(g)} must be positive integers")
    return g


def program_cores(op: Operation) -> int | None:
    """The core count of the `chip.program` that encloses `op` (None outside one)."""
    parent = op.parent_op()
    while parent is not None:
        if parent.name == "chip.program":  # chip imports this module: match by name
            cores = parent.properties["cores"]
            assert isinstance(cores, IntegerAttr)
            return cores.value.data
        parent = parent.parent_op()
    return None


def check_cores(op: Operation, what: str, cores: int, buffers: Sequence[SSAValue] = ()) -> None:
    """An op on `cores` cores fits its enclosing `chip.program`, and each buffer it names
    lives on exactly those cores (as the `core.alloc` that made it says)."""
    program = program_cores(op)
    if program is not None and cores > program:
        raise VerifyException(
            f"{what} uses {cores} cores but the enclosing chip.program runs on {program}"
        )
    for buffer in buffers:
        alloc = buffer.owner
        if isinstance(alloc, AllocOp) and alloc.cores.value.data != cores:
            raise VerifyException(
                f"{what} uses {cores} cores but its buffer '{alloc.label.data}' is allocated "
                f"on {alloc.cores.value.data}"
            )


def check_grid_cores(
    op: Operation, what: str, grid: tuple[int, ...], buffers: Sequence[SSAValue] = ()
) -> None:
    """`check_cores` for an op that runs on the cores of `grid`."""
    check_cores(op, f"{what}: grid {list(grid)}", prod(grid), buffers)


def check_placement(
    what: str, grid: tuple[int, ...], placement: PlacementAttr | None, buffer: SSAValue
) -> None:
    """An exchange op on `grid` places its cores as the layouts of its buffer do (the ops
    that lay it out, and the kernels that read it): none if they are linear."""
    ours = None if placement is None else placement.to_placement()
    if placement is not None:
        if ours is None:
            raise VerifyException(f"{what}: a linear placement is not spelled")
        problem = placement.problem(grid)
        if problem is not None:
            raise VerifyException(f"{what}: {ours} does not place grid {list(grid)}: {problem}")
    read = [
        (kernel, LayoutAttr.from_layout(layout))
        for kernel, i in _kernel_uses(buffer)
        if (layout := kernel.read_layout(i)) is not None
    ]
    for other, layout in [*named_layouts(buffer), *read]:
        theirs = plans.placement(layout.to_layout(values(layout.tile))).placement
        if without_single_axes(grid, ours) != theirs:
            said = "laid linearly" if ours is None else str(ours)
            raise VerifyException(
                f"{what}: its cores are {said}, but the layout {layout} that "
                f"{other.name} gives buffer {buffer_label(buffer)} places them otherwise"
            )


def _coords_of(value: SSAValue, seen: set[SSAValue]) -> list[CoordOp]:
    """The `core.coord` ops that `value` is computed from (through any index arithmetic)."""
    if value in seen or not isinstance(value, OpResult):
        return []
    seen.add(value)
    owner = value.owner
    if isinstance(owner, CoordOp):
        return [owner]
    return [c for operand in owner.operands for c in _coords_of(operand, seen)]


def check_coords(what: str, grid: tuple[int, ...], offsets: Sequence[SSAValue]) -> None:
    """Per-core offsets of an op on `grid` may only use coordinates on that grid."""
    seen: set[SSAValue] = set()
    for offset in offsets:
        for coord in _coords_of(offset, seen):
            if ints_of(coord.grid) != grid:
                raise VerifyException(
                    f"{what}: an offset uses core.coord {coord.axis.value.data} of "
                    f"{list(ints_of(coord.grid))}, a grid other than the op's {list(grid)}"
                )


def check_in_superstep(op: Operation, what: str, phase: str) -> None:
    """Inside a `chip.program`, a kernel or an exchange runs in a `chip.superstep`."""
    parent = op.parent_op()
    while parent is not None and parent.name not in ("chip.superstep", "chip.program"):
        parent = parent.parent_op()
    if parent is not None and parent.name == "chip.program":
        raise VerifyException(f"{what}: runs in the {phase} phase of a chip.superstep only")


def buffer_label(buffer: SSAValue) -> str:
    alloc = buffer.owner
    return f"'{alloc.label.data}'" if isinstance(alloc, AllocOp) else "(not a core.alloc)"


class BufferLayoutOp(IRDLOperation, ABC):
    """An op that names the layout of the buffers it reads or writes (loads, stores,
    relayouts, gathers), and the tensor each holds."""

    @abstractmethod
    def buffer_layouts(self) -> list[tuple[SSAValue, LayoutAttr, TensorType]]: ...


def named_tensors(buffer: SSAValue) -> list[tuple[Operation, LayoutAttr, TensorType]]:
    """The layouts that the ops using `buffer` give it, with the tensor they say it holds."""
    found: list[tuple[Operation, LayoutAttr, TensorType]] = []
    for use in buffer.uses:
        op = use.operation
        if isinstance(op, BufferLayoutOp):
            found += [(op, lay, t) for buf, lay, t in op.buffer_layouts() if buf == buffer]
    return found


def named_layouts(buffer: SSAValue) -> list[tuple[Operation, LayoutAttr]]:
    """The layouts that the ops using `buffer` give it."""
    return [(op, layout) for op, layout, _ in named_tensors(buffer)]


def same_placement(a: LayoutAttr | Layout, b: LayoutAttr) -> bool:
    """Whether the two layouts put every element on the same cores (grid axes of size 1 do
    not matter)."""
    if isinstance(a, LayoutAttr):
        a = a.to_layout(values(a.tile))
    return plans.same_placement(a, b.to_layout(a.shape))


def check_buffer_layouts(op: BufferLayoutOp, what: str) -> None:
    """A buffer holds its tensor in one layout: every op that names one agrees."""
    for buffer, layout, _ in op.buffer_layouts():
        for other, theirs in named_layouts(buffer):
            if not same_placement(layout, theirs):
                raise VerifyException(
                    f"{what}: buffer {buffer_label(buffer)} is laid out as {layout} here but "
                    f"as {theirs} by {other.name}"
                )


@irdl_op_definition
class AllocOp(IRDLOperation):
    """Allocates a zero-filled buffer on each of the first `cores` cores."""

    name = "core.alloc"
    label = prop_def(StringAttr)
    cores = prop_def(IntegerAttr[I64])
    result = result_def(BufferType)
    assembly_format = "$label `on` $cores attr-dict `:` type($result)"

    def verify_(self) -> None:
        if self.cores.value.data < 1:
            raise VerifyException(f"core.alloc '{self.label.data}': needs at least one core")
        check_cores(self, f"core.alloc '{self.label.data}'", self.cores.value.data)


@irdl_op_definition
class FreeOp(IRDLOperation):
    name = "core.free"
    buffer = operand_def(BufferType)
    assembly_format = "$buffer attr-dict `:` type($buffer)"


@irdl_op_definition
class CoordOp(IRDLOperation):
    """This core's coordinate on `axis` of a row-major core grid."""

    name = "core.coord"
    axis = prop_def(IntegerAttr[I64])
    grid = prop_def(DenseArrayBase[I64])
    result = result_def(IndexType)
    assembly_format = "$axis `of` $grid attr-dict"

    def __init__(self, axis: int, grid: DenseArrayBase[I64]):
        super().__init__(
            properties={"axis": IntegerAttr(axis, i64), "grid": grid}, result_types=[IndexType()]
        )

    def verify_(self) -> None:
        grid = _check_grid(self.grid, "core.coord")
        if not 0 <= self.axis.value.data < len(grid):
            raise VerifyException(
                f"core.coord: axis {self.axis.value.data} not in grid {list(grid)}"
            )
        check_grid_cores(self, "core.coord", grid)


def check_buffer_layout(
    what: str, buffer: SSAValue, layout: LayoutAttr, tensor: TensorType
) -> None:
    """`layout` must place `tensor` and `buffer` must hold exactly one core's part, in the
    tensor's element type or as f16 storage of f32 values."""
    lay = layout.to_layout(tensor.get_shape())
    problem = layout_problem(lay)
    if problem is not None:
        raise VerifyException(f"{what}: {problem}")
    held = buffer_type(buffer)
    elems = (tensor.get_element_type(), held.tensor.get_element_type())
    if elems[0] != elems[1] and elems != (f32, f16):
        raise VerifyException(
            f"{what}: buffer {held} cannot hold {tensor} (only f32 may be stored as f16)"
        )
    local = lay.local_shape()
    if local != held.get_shape():
        raise VerifyException(
            f"{what}: buffer {held} does not hold the local tile {list(local)} of layout "
            f"{layout}"
        )


def check_layout_ops(op: BufferLayoutOp, phase: str | None = None) -> None:
    """Each buffer an op names with a layout lives on that layout's cores, in the chip.program,
    and in no other layout; an exchange (`phase`) runs in a superstep."""
    for buffer, layout, _ in op.buffer_layouts():
        grid = values(layout.grid)
        check_cores(op, f"{op.name}: layout grid {list(grid)}", prod(grid), [buffer])
    check_buffer_layouts(op, op.name)
    if phase is not None:
        check_in_superstep(op, op.name, phase)


@irdl_op_definition
class LoadOp(BufferLayoutOp):
    """Places a host tensor into `buffer` following `layout` (before the program runs)."""

    name = "core.load"
    source = operand_def(TensorType)
    buffer = operand_def(BufferType)
    layout = prop_def(LayoutAttr)
    assembly_format = (
        "$source `into` $buffer `layout` $layout attr-dict `:` type($source) `,` type($buffer)"
    )

    def buffer_layouts(self) -> list[tuple[SSAValue, LayoutAttr, TensorType]]:
        return [(self.buffer, self.layout, tensor_type(self.source))]

    def verify_(self) -> None:
        source = tensor_type(self.source)
        check_buffer_layout(self.name, self.buffer, self.layout, source)
        check_layout_ops(self)


@irdl_op_definition
class StoreOp(BufferLayoutOp):
    """Gathers the tensor laid out in `buffer` back to the host."""

    name = "core.store"
    buffer = operand_def(BufferType)
    layout = prop_def(LayoutAttr)
    result = result_def(TensorType)
    assembly_format = "$buffer `layout` $layout attr-dict `:` type($buffer) `->` type($result)"

    def buffer_layouts(self) -> list[tuple[SSAValue, LayoutAttr, TensorType]]:
        return [(self.buffer, self.layout, tensor_type(self.result))]

    def verify_(self) -> None:
        result = tensor_type(self.result)
        check_buffer_layout(self.name, self.buffer, self.layout, result)
        check_layout_ops(self)


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A sub-operator on each core of `grid`: the tensor expression (maps, iterators, body)
    over loop extents `sizes` of the operator's loop extents `bounds`. Operand i reads its
    buffer from offset `offsets[i]` along buffer dim `slice_dims[i]` (-1: the whole buffer),
    and, with `more_dims` (a plan with two temporal dims), also from `more_offsets[i]` along
    buffer dim `more_dims[i]` (-1: not cut again); the output is the last operand.

    Tiles are padded: an output element whose index in the whole tensor (the core's tile
    origin `coord * tile` plus its offset in the tile, `tile` being the output buffer's extent)
    reaches `bounds` along some loop dim is padding and is written as 0, so padding stays zero
    whatever the body computes of zeros (a contraction may then reduce over padded dims).
    When the output buffer holds a rotating window (a rotating output: its slice offset is a
    slot, not a position in the tile), `origin` gives each core the index in the whole tensor
    of the output slice's first element along its slice dim, for that rule.
    A reduction kernel (body `combine(acc, f(inputs))`) instead folds its reduction dims with
    the loop positions beyond `bounds` set to the combiner's identity; the origin of loop d on
    a core is `coord[d] * sizes[d]` (plans never cut a reduction's reduction dims into steps).

    Loop d runs along grid axis d, unless `axes` says otherwise: `axes[d]` is loop d's grid
    axis, or -1 when loop d is not split. Cores that differ only on grid axes no loop runs
    along (the *replicas*: an epilogue on a split-k output tile) compute the same tile; with
    `scatter` they split it instead: the replica of rank r (its position on those axes, row
    major in increasing axis order) computes the r-th of R equal runs of the tile's elements
    in row-major order (the part a `core.all_reduce ... scatter` completed), and leaves the
    rest of its output as it is for a `core.all_gather` to fill.

    ```
      tile (flat):   [ r0 r0 r0 | r1 r1 r1 | r2 r2 ]     R = 3 replicas, ceil(8 / 3) = 3
    ```

    The grid's cores lie on the chip as `placement` says (`placed`; linear without it), as
    the layouts of the buffers it reads and writes do."""

    name = "core.kernel"
    label = prop_def(StringAttr)
    grid = prop_def(DenseArrayBase[I64])
    placement = opt_prop_def(PlacementAttr)
    axes = opt_prop_def(DenseArrayBase[I64])
    scatter = opt_prop_def(UnitAttr)
    sizes = prop_def(DenseArrayBase[I64])
    bounds = prop_def(DenseArrayBase[I64])
    slice_dims = prop_def(DenseArrayBase[I64])
    more_dims = opt_prop_def(DenseArrayBase[I64])
    indexing_maps = prop_def(ArrayAttr[AffineMapAttr])
    iterator_types = prop_def(ArrayAttr[IteratorTypeAttr])
    inputs = var_operand_def(BufferType)
    output = operand_def(BufferType)
    offsets = var_operand_def(IndexType)
    more_offsets = var_operand_def(IndexType)
    origin = opt_operand_def(IndexType)
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "$label `on` $grid (`placed` $placement^)? (`axes` $axes^)? (`scatter` $scatter^)? "
        "`sizes` $sizes `of` $bounds "
        "`ins` `(` $inputs `)` `outs` `(` $output `)` `at` `(` $offsets `)` `along` $slice_dims "
        "(`and` `(` $more_offsets^ `)` `along` $more_dims)? "
        "(`origin` $origin^)? attr-dict `:` `(` type($inputs) `)` `->` type($output) $body"
    )

    def loop_axes(self) -> tuple[int, ...]:
        """The grid axis of each loop (-1: the loop is not split)."""
        if self.axes is None:
            return tuple(range(len(self.iterator_types.data)))
        return ints_of(self.axes)

    def loop_parts(self) -> tuple[int, ...]:
        """How many tiles each loop is split into (its grid axis' size, 1 if not split)."""
        grid = ints_of(self.grid)
        return tuple(1 if a < 0 else grid[a] for a in self.loop_axes())

    def replica_axes(self) -> tuple[int, ...]:
        """The grid axes no loop runs along (their cores hold the same tile)."""
        used = set(self.loop_axes())
        return tuple(a for a in range(len(ints_of(self.grid))) if a not in used)

    def verify_(self) -> None:
        what = f"core.kernel '{self.label.data}'"
        grid = _check_grid(self.grid, what)
        if self.axes is not None:
            axes = ints_of(self.axes)
            split = [a for a in axes if a != -1]
            if (
                len(axes) != len(self.iterator_types.data)
                or len(set(split)) != len(split)
                or any(not 0 <= a < len(grid) for a in split)
            ):
                raise VerifyException(
                    f"{what}: axes {list(axes)} must give each loop a distinct grid axis of "
                    f"{list(grid)} or -1"
                )
        if self.scatter is not None and (
            self.axes is None or any("reduction" in str(t) for t in self.iterator_types.data)
        ):
            raise VerifyException(
                f"{what}: only an element-wise kernel with axes may scatter its tile over its "
                "replicas"
            )
        if self.axes is None and len(grid) != len(self.iterator_types.data):
            raise VerifyException(
                f"{what}: grid {list(grid)} needs one axis per loop "
                f"({len(self.iterator_types.data)}), or axes to say where each loop runs"
            )
        buffers = (*self.inputs, self.output)
        check_grid_cores(self, what, grid, buffers)
        origin = [] if self.origin is None else [self.origin]
        check_coords(what, grid, (*self.offsets, *self.more_offsets, *origin))
        check_in_superstep(self, what, "compute")
        self._check_layouts(what)
        sizes = ints_of(self.sizes)
        dims = ints_of(self.slice_dims)
        maps = self.indexing_maps.data
        if len(maps) != len(buffers) or len(dims) != len(buffers):
            raise VerifyException(f"{what}: needs a map and a slice dim per operand")
        if len(self.offsets) != len(buffers):
            raise VerifyException(f"{what}: needs one offset per operand")
        more = (-1,) * len(buffers) if self.more_dims is None else ints_of(self.more_dims)
        if len(more) != len(buffers) or len(self.more_offsets) != (
            0 if self.more_dims is None else len(buffers)
        ):
            raise VerifyException(f"{what}: needs a second slice dim and offset per operand")
        if any(m >= 0 and m == d for m, d in zip(more, dims, strict=True)):
            raise VerifyException(f"{what}: an operand's two slice dims must differ")
        if self.origin is not None and dims[-1] < 0:
            raise VerifyException(f"{what}: an origin needs an output slice dim")
        self._check_origin(what, dims[-1])
        loops = len(self.iterator_types.data)
        if len(sizes) != loops or any(m.data.num_dims != loops for m in maps):
            raise VerifyException(f"{what}: needs one size per loop and maps over {loops} loops")
        if any(size < 1 for size in sizes):
            raise VerifyException(f"{what}: loop sizes must be positive, got {list(sizes)}")
        bounds = ints_of(self.bounds)
        if len(bounds) != loops or any(b < 1 for b in bounds):
            raise VerifyException(f"{what}: needs one positive bound per loop, got {list(bounds)}")
        for i, (buf, map_attr, dim, dim2) in enumerate(zip(buffers, maps, dims, more, strict=True)):
            shape = buffer_type(buf).get_shape()
            if len(map_attr.data.results) != len(shape):
                raise VerifyException(f"{what}: operand #{i} map rank differs from its buffer")
            if not (-1 <= dim < len(shape) and -1 <= dim2 < len(shape)):
                raise VerifyException(f"{what}: operand #{i} slice dim {dim} out of range")
            for j, expr in enumerate(map_attr.data.results):
                loop = expr.position if isinstance(expr, AffineDimExpr) else None
                extent = 1 if loop is None else sizes[loop]
                if j in (dim, dim2) and shape[j] % extent:
                    raise VerifyException(
                        f"{what}: operand #{i} dim {j} ({shape[j]}) is not a whole number of "
                        f"slices of {extent}"
                    )
                if j not in (dim, dim2) and shape[j] != extent:
                    raise VerifyException(
                        f"{what}: operand #{i} dim {j} has {shape[j]} elements, the kernel "
                        f"reads {extent}"
                    )
        self._check_extents(what, sizes, dims, more)
        self._check_shared_bounds(what)
        self._check_iterators(what)

    def _check_shared_bounds(self, what: str) -> None:
        """`bounds` restate the extents of the tensors the operands hold, which every kernel
        that shares one of their buffers also restates: along each buffer dim both kernels
        read at a loop, their bounds agree (a buffer no op lays out has no other word on them)."""
        bounds = ints_of(self.bounds)
        operands = (*self.inputs, self.output)
        for i, (buffer, amap) in enumerate(zip(operands, self.indexing_maps.data, strict=True)):
            ours = map_loops(amap)
            for other, k in _kernel_uses(buffer):
                theirs = map_loops(other.indexing_maps.data[k])
                other_bounds = ints_of(other.bounds)
                for j, (d, e) in enumerate(zip(ours, theirs, strict=False)):
                    if (
                        d is not None and e is not None and d < len(bounds)
                        and e < len(other_bounds) and bounds[d] != other_bounds[e]
                    ):
                        raise VerifyException(
                            f"{what}: bounds {list(bounds)} give buffer dim {j} of operand #{i} "
                            f"(buffer {buffer_label(buffer)}) {bounds[d]} elements, but "
                            f"core.kernel '{other.label.data}' that shares it gives it "
                            f"{other_bounds[e]} (bounds {list(other_bounds)})"
                        )

    def _check_iterators(self, what: str) -> None:
        """A loop is a reduction exactly when the output does not read it."""
        read = set(map_loops(self.indexing_maps.data[-1]))
        for d, kind in enumerate(self.iterator_types.data):
            reduction = kind.data == IteratorType.REDUCTION
            if reduction == (d in read):
                raise VerifyException(
                    f"{what}: loop d{d} is a {kind.data.value} loop, but the output "
                    f"{'reads' if d in read else 'does not read'} it (a reduction loop is "
                    "one the output does not read)"
                )

    def _check_origin(self, what: str, out_dim: int) -> None:
        """A kernel adds into a slot of a rotating output (its offset is a slot, not a
        position in the tile), so it needs the `origin` of that slot's chunk along the
        rotating dim for the padding rule, and the ops using it lay it out with the phase of
        its window after the last step; an output they lay out without rotation has no slots,
        so no origin."""
        layouts = named_layouts(self.output)
        rotating = [(other, lay) for other, lay in layouts if lay.rotating.data]
        label = buffer_label(self.output)
        if rotating:
            other, layout = rotating[0]
            dim = values(layout.rotating)[0]
            if self.origin is None or out_dim != dim:
                raise VerifyException(
                    f"{what}: its output (buffer {label}) rotates along dim {dim} in the layout "
                    f"{layout} that {other.name} gives it, so the kernel slices it along that "
                    "dim and needs an origin (where the slot's chunk lies in the tensor)"
                )
            for other, layout in rotating:
                _, _, _, steps, *phase = values(layout.rotating)
                if (phase or [0])[0] != steps - 1:
                    raise VerifyException(
                        f"{what}: its output (buffer {label}) is finished after the last of its "
                        f"{steps} steps, so the layout {layout} that {other.name} gives it has "
                        f"phase {steps - 1} (its window then)"
                    )
        elif self.origin is not None and layouts:
            other, layout = layouts[0]
            raise VerifyException(
                f"{what}: an origin is only for a rotating output, but {other.name} lays out "
                f"buffer {label} as {layout}"
            )

    def read_layout(self, operand: int) -> Layout | None:
        """The layout in which the kernel reads operand `operand` as a whole tile: buffer dim
        j, read at loop d, split along the grid axis of loop d in tiles of the buffer's extent
        (None when the kernel's grid, axes or map are malformed: its verifier says so)."""
        grid = ints_of(self.grid)
        loop_axes = self.loop_axes()
        buffer = (*self.inputs, self.output)[operand]
        tile = buffer_type(buffer).get_shape()
        maps = self.indexing_maps.data
        if operand >= len(maps) or any(g < 1 for g in grid) or any(
            a >= len(grid) for a in loop_axes
        ):
            return None
        loops = map_loops(maps[operand])
        if len(loops) != len(tile) or any(d is not None and d >= len(loop_axes) for d in loops):
            return None
        axes = tuple(None if d is None or loop_axes[d] < 0 else loop_axes[d] for d in loops)
        placement = None if self.placement is None else self.placement.to_placement()
        return Layout(tile, grid, axes, tile, placement=placement)

    def _check_layouts(self, what: str) -> None:
        """Each operand's tiles lie where the kernel reads them (`read_layout`), as the ops
        that lay its buffer out say, and as the other kernels that use the buffer read it
        (rotating buffers, which a `core.shift` moves, are the shifts' to check)."""
        operands = (*self.inputs, self.output)
        for i, buffer in enumerate(operands):
            read = self.read_layout(i)
            if read is None:
                continue  # the rank checks below name the problem
            for other, layout in named_layouts(buffer):
                ours = read
                if layout.rotating.data:
                    # the buffer holds a window of the tile along the rotating dim: the
                    # other dims and the grid must still lie as the kernel reads them
                    whole = layout.to_layout(values(layout.tile))
                    ours = replace(read, shape=whole.shape, tile=whole.tile)
                    layout = LayoutAttr.from_layout(replace(whole, rotating=None))
                if not same_placement(ours, layout):
                    raise VerifyException(
                        f"{what}: operand #{i} (buffer {buffer_label(buffer)}) is read as "
                        f"{LayoutAttr.from_layout(ours)} but {other.name} lays it out as "
                        f"{layout}"
                    )
            if any(isinstance(use.operation, ShiftOp) for use in buffer.uses):
                continue
            for kernel, j in _kernel_uses(buffer):
                theirs = kernel.read_layout(j)
                if kernel is not self and theirs is not None and not plans.same_placement(
                    read, theirs
                ):
                    raise VerifyException(
                        f"{what}: operand #{i} (buffer {buffer_label(buffer)}) is read as "
                        f"{LayoutAttr.from_layout(read)} but core.kernel "
                        f"'{kernel.label.data}' reads it as {LayoutAttr.from_layout(theirs)} "
                        f"(grid {list(ints_of(kernel.grid))})"
                    )

    def _check_extents(self, what: str, sizes: tuple[int, ...], dims: Sequence[int],
                       more: Sequence[int]) -> None:
        """`bounds` are the extents of the tensors the operands hold (as the ops that lay
        out their buffers say), and a loop an operand is cut into chunks along, at the dim
        its layout rotates, runs over one chunk (the layout's tile over its steps)."""
        bounds = ints_of(self.bounds)
        operands = (*self.inputs, self.output)
        skews: dict[int, tuple[int, LayoutAttr]] = {}  # loop -> the first operand rotating along it
        for i, (buffer, amap) in enumerate(zip(operands, self.indexing_maps.data, strict=True)):
            loops = map_loops(amap)
            for other, layout, tensor in named_tensors(buffer):
                shape = tensor.get_shape()
                for j, d in enumerate(loops):
                    if d is not None and j < len(shape) and shape[j] != bounds[d]:
                        raise VerifyException(
                            f"{what}: bounds {list(bounds)} give loop d{d} {bounds[d]} "
                            f"elements, but operand #{i} (buffer {buffer_label(buffer)}) holds "
                            f"{tensor} (as {other.name} says), {shape[j]} along dim {j}"
                        )
                if not layout.rotating.data:
                    continue
                dim, _, _, steps, *_ = values(layout.rotating)
                chunk = values(layout.tile)[dim] // steps
                d = loops[dim] if dim < len(loops) else None
                if dim not in (dims[i], more[i]) or d is None or sizes[d] != chunk:
                    raise VerifyException(
                        f"{what}: operand #{i} (buffer {buffer_label(buffer)}) rotates in "
                        f"chunks of {chunk} along its dim {dim} (the layout {layout} that "
                        f"{other.name} gives it), so the kernel must slice that dim by "
                        f"{chunk}; it has sizes {list(sizes)} and slices dims "
                        f"{[j for j in (dims[i], more[i]) if j >= 0]}"
                    )
                first, theirs = skews.setdefault(d, (i, layout))
                if set(values(s) for s in layout.skew.data) != set(
                    values(s) for s in theirs.skew.data
                ):
                    raise VerifyException(
                        f"{what}: operands #{first} and #{i} rotate along loop d{d} with skews "
                        f"that differ (their layouts {theirs} and {layout}): the kernel reads "
                        "one chunk of each per step"
                    )


def map_loops(amap: AffineMapAttr) -> list[int | None]:
    """The loop each result of an indexing map reads (None: a constant)."""
    return [e.position if isinstance(e, AffineDimExpr) else None for e in amap.data.results]


def _kernel_uses(buffer: SSAValue) -> list[tuple[KernelOp, int]]:
    """The kernels that use `buffer`, each with the operand index at which it does."""
    found: list[tuple[KernelOp, int]] = []
    for use in buffer.uses:
        kernel = use.operation
        if isinstance(kernel, KernelOp) and use.index < len(kernel.inputs) + 1:
            found.append((kernel, use.index))
    return found


@irdl_op_definition
class ShiftOp(IRDLOperation):
    """Ring rotation: every core of `grid` sends the slice of `buffer` at offset `send`
    (along `dim`, `size` elements) to the previous core of its ring — `pieces` cores along
    grid axis `ring` — which stores it at its own offset `recv`. The grid's cores lie on the
    chip as `placement` says (`placed <...>`; linear without it)."""

    name = "core.shift"
    buffer = operand_def(BufferType)
    send = operand_def(IndexType)
    recv = operand_def(IndexType)
    grid = prop_def(DenseArrayBase[I64])
    ring = prop_def(IntegerAttr[I64])
    pieces = prop_def(IntegerAttr[I64])
    dim = prop_def(IntegerAttr[I64])
    size = prop_def(IntegerAttr[I64])
    placement = opt_prop_def(PlacementAttr)
    assembly_format = (
        "$buffer `ring` $ring `x` $pieces `of` $grid (`placed` $placement^)? `dim` $dim "
        "`size` $size `from` $send `to` $recv attr-dict `:` type($buffer)"
    )

    def verify_(self) -> None:
        grid = _check_grid(self.grid, "core.shift")
        ring, pieces = self.ring.value.data, self.pieces.value.data
        if not 0 <= ring < len(grid) or pieces < 2 or grid[ring] % pieces:
            raise VerifyException(
                f"core.shift: a ring of {pieces} cores must divide grid axis {ring} of {list(grid)}"
            )
        shape = buffer_type(self.buffer).get_shape()
        if self.size.value.data < 1:
            raise VerifyException("core.shift: the slice size must be positive")
        if (
            not 0 <= self.dim.value.data < len(shape)
            or shape[self.dim.value.data] % self.size.value.data
        ):
            raise VerifyException("core.shift: the slice must tile the buffer dim")
        check_grid_cores(self, "core.shift", grid, [self.buffer])
        check_coords("core.shift", grid, [self.send, self.recv])
        check_in_superstep(self, "core.shift", "exchange")
        self._check_rotation()
        check_placement("core.shift", grid, self.placement, self.buffer)

    def _check_rotation(self) -> None:
        """The buffer's layout (where an op names it) rotates as this shift moves it."""
        ring, pieces, dim = (a.value.data for a in (self.ring, self.pieces, self.dim))
        grid, size = ints_of(self.grid), self.size.value.data
        for other, layout in named_layouts(self.buffer):
            rotating = values(layout.rotating)
            where = (
                f"the layout {layout} that {other.name} gives buffer "
                f"{buffer_label(self.buffer)}"
            )
            if rotating[:3] != (dim, ring, pieces):
                raise VerifyException(
                    f"core.shift: dim {dim} on a ring of {pieces} cores along grid axis {ring} "
                    f"is not how buffer {buffer_label(self.buffer)} rotates in the layout "
                    f"{layout} that {other.name} gives it"
                )
            if values(layout.grid) != grid:
                raise VerifyException(f"core.shift: grid {list(grid)} is not the grid of {where}")
            chunk = values(layout.tile)[dim] // rotating[3]
            if size != chunk:
                raise VerifyException(
                    f"core.shift: size {size} is not the chunk of {chunk} elements (its tile "
                    f"over its steps) of {where}"
                )


def _check_group_axes(op: AllReduceOp | AllGatherOp) -> None:
    """The group `axes` are distinct axes of `grid`, each of more than one core (the group
    axes restate the axes the buffer's copies lie along: `_check_groups_hold_copies` matches
    grids only up to size-1 axes, so a size-1 group axis would name no axis of the layout)."""
    grid = _check_grid(op.grid, op.name)
    axes = ints_of(op.axes)
    if not axes or len(set(axes)) != len(axes) or any(not 0 <= a < len(grid) for a in axes):
        raise VerifyException(f"{op.name}: axes must be distinct axes of grid {list(grid)}")
    check_grid_cores(op, op.name, grid, [op.buffer])
    if any(grid[a] == 1 for a in axes):
        raise VerifyException(
            f"{op.name}: group axes {list(axes)} of grid {list(grid)} include a size-1 axis, "
            "along which no cores combine"
        )
    check_in_superstep(op, op.name, "exchange")
    _check_groups_hold_copies(op.name, grid, axes, op.buffer)
    check_placement(op.name, grid, op.placement, op.buffer)


def _check_groups_hold_copies(
    what: str, grid: tuple[int, ...], axes: tuple[int, ...], buffer: SSAValue
) -> None:
    """The cores of a group (differing only on `axes`) hold the same tile of the buffer's
    layout (as the ops that lay it out or the kernels that read it say): `grid` is the
    layout's grid (up to size-1 axes) and no group axis splits a dim."""
    read = [
        (kernel, LayoutAttr.from_layout(layout))
        for kernel, i in _kernel_uses(buffer)
        if (layout := kernel.read_layout(i)) is not None
    ]
    for other, layout in [*named_layouts(buffer), *read]:
        theirs = values(layout.grid)
        ours_big = [a for a, n in enumerate(grid) if n > 1]
        theirs_big = [a for a, n in enumerate(theirs) if n > 1]
        if [grid[a] for a in ours_big] != [theirs[a] for a in theirs_big]:
            raise VerifyException(
                f"{what}: grid {list(grid)} is not the grid of the layout {layout} that "
                f"{other.name} gives buffer {buffer_label(buffer)}"
            )
        to_theirs = dict(zip(ours_big, theirs_big, strict=True))
        split = {a for a in optional_values(layout.axes) if a is not None}
        across = [a for a in axes if to_theirs.get(a) in split]
        if across:
            raise VerifyException(
                f"{what}: group axes {list(axes)} of grid {list(grid)} cross tiles of buffer "
                f"{buffer_label(buffer)}, which the layout {layout} that {other.name} gives "
                f"it splits along grid axis {to_theirs[across[0]]}"
            )


@irdl_op_definition
class AllReduceOp(IRDLOperation):
    """Combines (`combiner`: sum, max or min) `buffer` over the cores of `grid` that differ
    only on grid `axes` (a group of R cores); every core ends with the result (a
    reduce-scatter and an all-gather): `core.all_reduce max %b over [1] of [2, 2] : ...`.
    With `scatter` it stops after the reduce-scatter: the core of rank r in its group (row
    major over `axes` in increasing order) holds the result in the r-th of R equal runs of
    the buffer's elements only (see `core.kernel`'s `scatter`), and a `core.all_gather`
    completes it. The grid's cores lie on the chip as `placement` says (as `core.shift`)."""

    name = "core.all_reduce"
    buffer = operand_def(BufferType)
    combiner = prop_def(StringAttr)
    grid = prop_def(DenseArrayBase[I64])
    axes = prop_def(DenseArrayBase[I64])
    scatter = opt_prop_def(UnitAttr)
    placement = opt_prop_def(PlacementAttr)
    assembly_format = (
        "$combiner $buffer `over` $axes `of` $grid (`placed` $placement^)? "
        "(`scatter` $scatter^)? attr-dict `:` type($buffer)"
    )

    def verify_(self) -> None:
        check_combiner(self.combiner, "core.all_reduce")
        _check_group_axes(self)


@irdl_op_definition
class AllGatherOp(IRDLOperation):
    """The second half of an all-reduce: over the cores of `grid` that differ only on grid
    `axes`, the core of rank r sends the r-th of R equal runs of `buffer`'s elements to the
    others, so that every core holds the whole buffer:
    `core.all_gather %b over [2] of [2, 3, 2] : ...`. The grid's cores lie on the chip as
    `placement` says (as `core.shift`)."""

    name = "core.all_gather"
    buffer = operand_def(BufferType)
    grid = prop_def(DenseArrayBase[I64])
    axes = prop_def(DenseArrayBase[I64])
    placement = opt_prop_def(PlacementAttr)
    assembly_format = (
        "$buffer `over` $axes `of` $grid (`placed` $placement^)? attr-dict `:` type($buffer)"
    )

    def verify_(self) -> None:
        _check_group_axes(self)


@irdl_op_definition
class RelayoutOp(BufferLayoutOp):
    """All-to-all exchange: fills `target` (laid out as `dst_layout`) from `source` (laid
    out as `src_layout`), both holding the tensor of type `tensor`. With `view MAP as T`,
    the target holds the tensor of type `T` that reads `T[i] = tensor[MAP(i)]`."""

    name = "core.relayout"
    label = prop_def(StringAttr)
    source = operand_def(BufferType)
    target = operand_def(BufferType)
    src_layout = prop_def(LayoutAttr)
    dst_layout = prop_def(LayoutAttr)
    tensor = prop_def(TensorType)
    map = opt_prop_def(AffineMapAttr)
    view_tensor = opt_prop_def(TensorType)
    guard = opt_prop_def(AffineMapAttr)
    guard_shape = opt_prop_def(DenseArrayBase[I64])
    assembly_format = (
        "$label $source `to` $target `of` $tensor `layouts` $src_layout `->` $dst_layout "
        "(`view` $map^ `as` $view_tensor)? (`guard` $guard^ `in` $guard_shape)? attr-dict `:` "
        "type($source) `,` type($target)"
    )

    def view(self) -> View | None:
        return view_of(self.map, self.guard, self.guard_shape)

    def target_tensor(self) -> TensorType:
        """The tensor the target holds (the viewed one, if any)."""
        return self.tensor if self.view_tensor is None else self.view_tensor

    def verify_(self) -> None:
        if (self.map is None) != (self.view_tensor is None):
            raise VerifyException("core.relayout: a view needs both a map and a view tensor")
        check_guard(self.name, self.map, self.guard, self.guard_shape, self.target_tensor())
        if self.map is not None:
            problem = map_problem(
                self.map.data,
                self.tensor.get_shape(),
                self.target_tensor().get_shape(),
                self.guard is not None,
            )
            if problem is not None:
                raise VerifyException(f"core.relayout: map {self.map.data}: {problem}")
        check_buffer_layout(self.name, self.source, self.src_layout, self.tensor)
        check_buffer_layout(self.name, self.target, self.dst_layout, self.target_tensor())
        check_layout_ops(self, "exchange")

    def buffer_layouts(self) -> list[tuple[SSAValue, LayoutAttr, TensorType]]:
        return [
            (self.source, self.src_layout, self.tensor),
            (self.target, self.dst_layout, self.target_tensor()),
        ]


@irdl_op_definition
class GatherOp(BufferLayoutOp, GatherKindOp):
    """A data-dependent exchange (`rtensor.gather`, the same kinds): fills `target` (laid out
    as `dst_layout`, holding the tensor `tensor`) with what the gather of `ids` from `table`
    reads (`t10.common.gathers`), from `table` and `ids` (laid out as `table_layout` and
    `ids_layout`, holding `table_tensor` and `ids_tensor`; ids are the exact floats of
    integers, negative ones count from the end)."""

    name = "core.gather"
    label = prop_def(StringAttr)
    table = operand_def(BufferType)
    ids = operand_def(BufferType)
    target = operand_def(BufferType)
    table_tensor = prop_def(TensorType)
    ids_tensor = prop_def(TensorType)
    tensor = prop_def(TensorType)
    table_layout = prop_def(LayoutAttr)
    ids_layout = prop_def(LayoutAttr)
    dst_layout = prop_def(LayoutAttr)
    assembly_format = (
        f"$label $table `[` $ids `]` `to` $target {GATHER_KIND_FORMAT} `of` $table_tensor `[` "
        "$ids_tensor `]` `->` $tensor `layouts` $table_layout `,` $ids_layout `->` $dst_layout "
        "attr-dict `:` type($table) `,` type($ids) `,` type($target)"
    )

    def verify_(self) -> None:
        table, ids = self.table_tensor.get_shape(), self.ids_tensor.get_shape()
        kind = self.kind()
        problem = kind.problem(table, ids)
        if problem is not None:
            raise VerifyException(f"core.gather: {problem}")
        if tuple(self.tensor.get_shape()) != kind.shape(table, ids):
            raise VerifyException(
                f"core.gather: gathering {self.ids_tensor} from {self.table_tensor} ({kind}) "
                f"does not give {self.tensor}"
            )
        check_buffer_layout(self.name, self.table, self.table_layout, self.table_tensor)
        check_buffer_layout(self.name, self.ids, self.ids_layout, self.ids_tensor)
        check_buffer_layout(self.name, self.target, self.dst_layout, self.tensor)
        check_layout_ops(self, "exchange")

    def buffer_layouts(self) -> list[tuple[SSAValue, LayoutAttr, TensorType]]:
        return [
            (self.table, self.table_layout, self.table_tensor),
            (self.ids, self.ids_layout, self.ids_tensor),
            (self.target, self.dst_layout, self.tensor),
        ]


Core = Dialect(
    "core",
    [
        AllocOp,
        FreeOp,
        CoordOp,
        LoadOp,
        StoreOp,
        KernelOp,
        ShiftOp,
        AllReduceOp,
        AllGatherOp,
        RelayoutOp,
        GatherOp,
    ],
    [BufferType],
)
