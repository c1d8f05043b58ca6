"""convert-cshift-to-core: distributed tensors become per-core SRAM buffers, and every
compute-shift operator becomes an SPMD loop of kernels on buffer slices plus ring shifts.

For a plan with N steps along loop dim d (chunk c = per-step extent of d), core x at step t:

```
  o = (sum_r (N / f_r) * (coord(ring_r) mod f_r)) mod N      // skew, once per operator
  u = o + t;  k = u mod N                                      // chunk computed this step
  rotating input:   reads slot (u mod slots) * c  then sends it; receives into slot
                    ((u + W) mod slots) * c from the next core of its ring
  rotating output:  the same slots: the kernel adds into slot (u mod slots) * c (its
                    `origin` x[d] * tile + k * c), then that partial chunk is sent on
  other operands that read d: offset k * c
```
The last step is peeled so that it does not shift. With an outer temporal dim (N1 steps
along it), the step loop nests in an outer one: u2 = o2 + t1·N2 + t2 for the inner level and
u1 = o1 + t1 for the outer level, each level's operands as above; the last inner step of
each outer step is peeled too, and there (but in the very last step) the operands rotating
along the outer dim shift after the inner ones. An operand that reads both dims is cut along
both (the kernel's `and (..) along [..]`). Buffers are freed after their last use.
Values cross between converted and unconverted ops through `builtin.unrealized_conversion_cast`,
which disappear once every op is converted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    UnrealizedConversionCastOp,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from t10.common.attr_names import NAME_ATTR
from t10.common.locations import Located
from t10.common.plans import Layout, same_placement
from t10.t10_dialects import chip, core, cshift, rtensor
from t10.t10_dialects.core import BufferType
from t10.t10_dialects.rtensor import RTensorType
from t10.t10_dialects.syntax import int_array, int_prop, ints_of


def _layout(value: SSAValue) -> Layout:
    assert isinstance(value.type, RTensorType)
    return value.type.get_layout()


def _buffer_of(value: SSAValue) -> SSAValue:
    owner = value.owner
    assert isinstance(owner, UnrealizedConversionCastOp), "producer not converted yet"
    return owner.inputs[0]


def _alloc(label: str, rtype: RTensorType) -> core.AllocOp:
    layout = rtype.get_layout()
    return core.AllocOp.create(
        properties={"label": StringAttr(label), "cores": int_prop(layout.cores)},
        result_types=[BufferType.of(layout.local_shape(), rtype.tensor.get_element_type())],
    )


def _replace_with_buffer(
    rewriter: PatternRewriter,
    op: Operation,
    ops: list[Operation],
    buffer: SSAValue,
    rtype: RTensorType,
) -> None:
    cast = UnrealizedConversionCastOp.get([buffer], [rtype])
    rewriter.replace(op, [*ops, cast], cast.results)


class _IndexBuilder:
    """Emits per-core index arithmetic into `ops`, reusing equal expressions. Constants go
    to the outermost builder so that nested loops share them."""

    def __init__(self, ops: list[Operation], outer: _IndexBuilder | None = None):
        self.ops = ops
        self.outer = outer
        self.memo: dict[tuple[object, ...], SSAValue] = {}

    def const(self, value: int) -> SSAValue:
        if self.outer is not None:
            return self.outer.const(value)
        key = ("const", value)
        if key not in self.memo:
            op = arith.ConstantOp.from_int_and_width(value, IndexType())
            self.ops.append(op)
            self.memo[key] = op.result
        return self.memo[key]

    def coord(self, axis: int, grid: tuple[int, ...]) -> SSAValue:
        key = ("coord", axis, grid)
        if key not in self.memo:
            op = core.CoordOp(axis, int_array(grid))
            self.ops.append(op)
            self.memo[key] = op.result
        return self.memo[key]

    def _binary(
        self, cls: type[arith.SignlessIntegerBinaryOperation], lhs: SSAValue, rhs: SSAValue
    ) -> SSAValue:
        key = (cls, lhs, rhs)
        if key not in self.memo:
            op = cls(lhs, rhs)
            self.ops.append(op)
            self.memo[key] = op.results[0]
        return self.memo[key]

    def add(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self._binary(arith.AddiOp, lhs, rhs)

    def mul(self, lhs: SSAValue, value: int) -> SSAValue:
        return lhs if value == 1 else self._binary(arith.MuliOp, lhs, self.const(value))

    def mod(self, lhs: SSAValue, value: int) -> SSAValue:
        return self._binary(arith.RemUIOp, lhs, self.const(value))


@dataclass
class _Cut:
    """How one kernel operand is cut along one temporal level's loop dim: buffer dim `dim`,
    by slots of a rotating window, or by chunk offsets."""

    level: int
    dim: int
    rotates: bool = False
    slots: int = 0
    window: int = 0
    ring: int = -1
    pieces: int = 0


@dataclass
class _Operand:
    """A kernel operand: its buffer and its cuts (the rotating one first)."""

    buffer: SSAValue
    cuts: list[_Cut]


@dataclass
class _Level:
    """One temporal dim: loop dim `dim` in `steps` chunks of `chunk`; `origin` is the skew
    o(x) mod steps of the operands rotating along it."""

    dim: int
    steps: int
    chunk: int
    origin: SSAValue


class ComputeShiftToKernels(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cshift.ComputeShiftOp, rewriter: PatternRewriter) -> None:
        rtype = op.result.type
        assert isinstance(rtype, RTensorType)
        out_layout = rtype.get_layout()
        grid = out_layout.grid
        sizes = ints_of(op.step_sizes)
        steps, shift = op.steps.value.data, op.shift_dim.value.data
        label = op.label.data
        out_alloc = _alloc(label, rtype)
        ops: list[Operation] = [out_alloc]
        idx = _IndexBuilder(ops)
        dims = [] if shift < 0 else [(shift, steps)]
        if op.outer_dim is not None and op.outer_steps is not None:
            dims.insert(0, (op.outer_dim.value.data, op.outer_steps.value.data))
        operands = self._operands(op, out_alloc.result, [d for d, _ in dims])
        zero = idx.const(0)
        if not dims:
            ops.append(self._kernel(op, out_layout, sizes, operands, [[zero] * len(operands)]))
            _replace_with_buffer(rewriter, op, ops, out_alloc.result, rtype)
            return
        levels = [
            _Level(d, n, sizes[d], self._skew(idx, op, grid, operands, level, n))
            for level, (d, n) in enumerate(dims)
        ]

        # a rotating output's slice lies at chunk k of its tile (its offset is a slot)
        out_cut = operands[-1].cuts[0] if operands[-1].cuts else None
        tile_origin = None
        if (
            out_cut is not None
            and out_cut.rotates
            and (axis := out_layout.axes[out_cut.dim]) is not None
        ):
            tile_origin = idx.mul(idx.coord(axis, grid), out_layout.tile[out_cut.dim])

        def step(
            at: list[tuple[SSAValue, SSAValue]], builder: _IndexBuilder, shifting: set[int]
        ) -> None:
            """One step: `at[l]` = (u, k) of level l; operands rotating along a level in
            `shifting` shift after the kernel."""
            chunk_origin = None
            if out_cut is not None and out_cut.rotates:
                level = levels[out_cut.level]
                chunk_origin = builder.mul(at[out_cut.level][1], level.chunk)
                if tile_origin is not None:
                    chunk_origin = builder.add(tile_origin, chunk_origin)
            offsets: list[list[SSAValue]] = [[], []]
            shifts: list[core.ShiftOp] = []
            for operand in operands:
                for j in range(len(levels)):
                    if j >= len(operand.cuts):
                        offsets[j].append(zero)
                        continue
                    cut = operand.cuts[j]
                    (u, k), chunk = at[cut.level], levels[cut.level].chunk
                    if not cut.rotates:
                        offsets[j].append(builder.mul(k, chunk))
                        continue
                    send = builder.mul(builder.mod(u, cut.slots), chunk)
                    offsets[j].append(send)
                    if cut.level in shifting:
                        ahead = builder.add(u, builder.const(cut.window))
                        recv = builder.mul(builder.mod(ahead, cut.slots), chunk)
                        shifts.append(self._shift(out_layout, operand.buffer, cut, chunk, send,
                                                  recv))
            builder.ops.append(
                self._kernel(op, out_layout, sizes, operands, offsets[: len(levels)],
                             chunk_origin)
            )
            builder.ops.extend(shifts)

        def position(
            level: _Level, t: SSAValue, builder: _IndexBuilder
        ) -> tuple[SSAValue, SSAValue]:
            u = builder.add(level.origin, t)
            return u, builder.mod(u, level.steps)

        def loop(
            builder: _IndexBuilder, count: int, body: Callable[[SSAValue, _IndexBuilder], None]
        ) -> None:
            """`scf.for t in [0, count)` whose body `body` builds (nothing if count is 0)."""
            if count == 0:
                return
            block = Block(arg_types=[IndexType()])
            block_ops: list[Operation] = []
            body(block.args[0], _IndexBuilder(block_ops, builder))
            block.add_ops([*block_ops, scf.YieldOp()])
            builder.ops.append(
                scf.ForOp(builder.const(0), builder.const(count), builder.const(1), [], block)
            )

        inner = levels[-1]
        everything = set(range(len(levels)))

        def inner_steps(
            before: list[tuple[SSAValue, SSAValue]],
            base: SSAValue | None,
            builder: _IndexBuilder,
            last: bool,
        ) -> None:
            """The inner level's steps after outer positions `before` (`base`: the steps run
            before them); the peeled last one shifts everything unless it is the last step."""

            def at(t: SSAValue, b: _IndexBuilder) -> list[tuple[SSAValue, SSAValue]]:
                return [*before, position(inner, t if base is None else b.add(base, t), b)]

            loop(builder, inner.steps - 1, lambda t, b: step(at(t, b), b, {len(levels) - 1}))
            final = at(builder.const(inner.steps - 1), builder)
            step(final, builder, set() if last else everything)

        if len(levels) == 1:
            inner_steps([], None, idx, last=True)
        else:
            outer = levels[0]

            def outer_step(t: SSAValue, b: _IndexBuilder, last: bool) -> None:
                inner_steps([position(outer, t, b)], b.mul(t, inner.steps), b, last)

            loop(idx, outer.steps - 1, lambda t, b: outer_step(t, b, last=False))
            outer_step(idx.const(outer.steps - 1), idx, last=True)
        _replace_with_buffer(rewriter, op, ops, out_alloc.result, rtype)

    @staticmethod
    def _skew(
        idx: _IndexBuilder,
        op: cshift.ComputeShiftOp,
        grid: tuple[int, ...],
        operands: list[_Operand],
        level: int,
        steps: int,
    ) -> SSAValue:
        """o(x) mod steps for one level, from the layout of an operand rotating along it."""
        values = (*op.inputs, op.result)
        skew = next(
            rot.skew
            for value, operand in zip(values, operands, strict=True)
            if operand.cuts and operand.cuts[0].rotates and operand.cuts[0].level == level
            and (rot := _layout(value).rotating) is not None
        )
        terms = [idx.mul(idx.mod(idx.coord(a, grid), m), w) for a, m, w in skew]
        total = terms[0]
        for term in terms[1:]:
            total = idx.add(total, term)
        return idx.mod(total, steps)

    @staticmethod
    def _operands(
        op: cshift.ComputeShiftOp, output: SSAValue, dims: list[int]
    ) -> list[_Operand]:
        """Each operand's cuts along the temporal `dims` (outer first) it reads."""
        maps = [m.data for m in op.indexing_maps.data]
        result: list[_Operand] = []
        for i, value in enumerate((*op.inputs, op.result)):
            positions = [getattr(e, "position", None) for e in maps[i].results]
            layout = _layout(value)
            buffer = output if i == len(op.inputs) else _buffer_of(value)
            rot = layout.rotating
            cuts: list[_Cut] = []
            for level, d in reversed(list(enumerate(dims))):  # the inner level first
                if d not in positions:
                    continue
                dim = positions.index(d)
                if rot is not None and rot.dim == dim:
                    cut = _Cut(level, dim, True, rot.slots, rot.window, rot.ring_axis, rot.pieces)
                    cuts.insert(0, cut)
                else:
                    cuts.append(_Cut(level, dim))
            result.append(_Operand(buffer, cuts))
        return result

    @staticmethod
    def _kernel(
        op: cshift.ComputeShiftOp,
        layout: Layout,
        sizes: tuple[int, ...],
        operands: list[_Operand],
        offsets: list[list[SSAValue]],
        origin: SSAValue | None = None,
    ) -> core.KernelOp:
        """The kernel on the cores of the operator's output `layout`; `offsets[j][i]`: operand
        i's offset along its j-th cut (a second list only for a plan with two temporal
        dims)."""
        properties: dict[str, Attribute] = {
            "label": op.label,
            "grid": int_array(layout.grid),
            **placement_property(layout),
            "sizes": int_array(sizes),
            "bounds": int_array(loop_bounds(op)),
            "slice_dims": int_array([o.cuts[0].dim if o.cuts else -1 for o in operands]),
            "indexing_maps": op.indexing_maps,
            "iterator_types": op.iterator_types,
        }
        if len(offsets) > 1:
            properties["more_dims"] = int_array(
                [o.cuts[1].dim if len(o.cuts) > 1 else -1 for o in operands]
            )
        return core.KernelOp.build(
            operands=[
                [o.buffer for o in operands[:-1]],
                operands[-1].buffer,
                offsets[0],
                offsets[1] if len(offsets) > 1 else [],
                [] if origin is None else [origin],
            ],
            properties=properties,
            regions=[op.body.clone()],
        )

    @staticmethod
    def _shift(
        layout: Layout,
        buffer: SSAValue,
        cut: _Cut,
        chunk: int,
        send: SSAValue,
        recv: SSAValue,
    ) -> core.ShiftOp:
        """The shift of a rotating operand on the cores of the operator's `layout`."""
        return core.ShiftOp.build(
            operands=[buffer, send, recv],
            properties={
                "grid": int_array(layout.grid),
                "ring": int_prop(cut.ring),
                "pieces": int_prop(cut.pieces),
                "dim": int_prop(cut.dim),
                "size": int_prop(chunk),
                **placement_property(layout),
            },
        )


def loop_bounds(op: cshift.ComputeShiftOp) -> list[int]:
    """The operator's loop extents, read off its operands' shapes through the maps."""
    bounds = [1] * len(op.iterator_types.data)
    for value, map_attr in zip((*op.inputs, op.result), op.indexing_maps.data, strict=True):
        assert isinstance(value.type, RTensorType)
        for expr, size in zip(map_attr.data.results, value.type.tensor.get_shape(), strict=True):
            if isinstance(expr, AffineDimExpr):
                bounds[expr.position] = size
    return bounds


def placement_property(layout: Layout) -> dict[str, Attribute]:
    """The `placement` property of an exchange op on the cores of `layout` (none: linear)."""
    if layout.placement is None:
        return {}
    return {"placement": rtensor.PlacementAttr.of(layout.placement)}


class DistributeToLoad(RewritePattern):
    """Host tensors are placed before the program runs: their buffers are allocated and
    loaded where the tensor is defined (function entry, or right after the constant)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.DistributeOp, rewriter: PatternRewriter) -> None:
        rtype, alloc, load = _buffer_and_load(op, core.LoadOp)
        source = op.source
        if isinstance(source.owner, Block):
            where = InsertPoint.at_start(source.owner)
        else:
            where = InsertPoint.after(source.owner)
        rewriter.insert([alloc, load], where)
        _replace_with_buffer(rewriter, op, [], alloc.result, rtype)


class LoadToChipLoad(RewritePattern):
    """A weight kept off chip is loaded where `rtensor.load` stands: its buffer allocated
    there (it takes SRAM from then on) and filled by a `chip.load`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.LoadOp, rewriter: PatternRewriter) -> None:
        rtype, alloc, load = _buffer_and_load(op, chip.LoadOp, label=op.label)
        _replace_with_buffer(rewriter, op, [alloc, load], alloc.result, rtype)


def _buffer_and_load(
    op: rtensor.DistributeOp | rtensor.LoadOp,
    load: type[core.LoadOp] | type[chip.LoadOp],
    **properties: Attribute,
) -> tuple[RTensorType, core.AllocOp, Operation]:
    """The buffer of the host tensor `op` places and the `load` op that fills it."""
    rtype = op.result.type
    assert isinstance(rtype, RTensorType)
    alloc = _alloc(_source_label(op), rtype)
    filled = load.build(
        operands=[op.source, alloc.result], properties={"layout": rtype.layout, **properties}
    )
    return rtype, alloc, filled


def is_resident(alloc: core.AllocOp) -> bool:
    """Weights (buffers loaded from constants) stay on chip for the whole program."""
    return any(
        isinstance(use.operation, core.LoadOp)
        and isinstance(use.operation.source.owner, arith.ConstantOp)
        for use in alloc.result.uses
    )


def _source_label(op: rtensor.DistributeOp | rtensor.LoadOp) -> str:
    """The ONNX name of a function argument, else `<consumer>/in<i>` for a weight."""
    value = op.source
    if isinstance(value, BlockArgument):
        func = value.owner.parent_op()
        arg_attrs = getattr(func, "arg_attrs", None)
        if arg_attrs is not None:
            name = arg_attrs.data[value.index].data.get(NAME_ATTR)
            if isinstance(name, StringAttr):
                return name.data
    for use in op.result.uses:
        label = use.operation.properties.get("label")
        if isinstance(label, StringAttr):
            return f"{label.data}/in{use.index}"
    return "weight"


class RelayoutToExchange(RewritePattern):
    """A relayout between two layouts with the same placement and element type only renames
    the buffer; any other (a move, a view, or the rounding of an fp32 accumulator into f16)
    copies into a new buffer."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.RelayoutOp, rewriter: PatternRewriter) -> None:
        src, dst = op.source.type, op.result.type
        assert isinstance(src, RTensorType) and isinstance(dst, RTensorType)
        if (
            op.map is None
            and src.tensor == dst.tensor
            and same_placement(src.get_layout(), dst.get_layout())
        ):
            _replace_with_buffer(rewriter, op, [], _buffer_of(op.source), dst)
            return
        alloc = _alloc(op.label.data, dst)
        properties = {
            "label": op.label,
            "src_layout": src.layout,
            "dst_layout": dst.layout,
            "tensor": src.tensor,
        }
        if op.map is not None:
            properties |= {"map": op.map, "view_tensor": dst.tensor}
        if op.guard is not None and op.guard_shape is not None:
            properties |= {"guard": op.guard, "guard_shape": op.guard_shape}
        exchange = core.RelayoutOp.build(
            operands=[_buffer_of(op.source), alloc.result], properties=properties
        )
        _replace_with_buffer(rewriter, op, [alloc, exchange], alloc.result, dst)


class GatherToCore(RewritePattern):
    """A gather of runtime ids fills a new buffer in the result's layout (its own
    superstep, like a relayout)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.GatherOp, rewriter: PatternRewriter) -> None:
        table, ids, dst = op.table.type, op.ids.type, op.result.type
        if not isinstance(dst, RTensorType):
            return
        assert isinstance(table, RTensorType) and isinstance(ids, RTensorType)
        alloc = _alloc(op.label.data, dst)
        gather = core.GatherOp.build(
            operands=[_buffer_of(op.table), _buffer_of(op.ids), alloc.result],
            properties={
                "label": op.label,
                **rtensor.gather_kind_properties(op.kind()),
                "table_tensor": table.tensor,
                "ids_tensor": ids.tensor,
                "tensor": dst.tensor,
                "table_layout": table.layout,
                "ids_layout": ids.layout,
                "dst_layout": dst.layout,
            },
        )
        _replace_with_buffer(rewriter, op, [alloc, gather], alloc.result, dst)


class AllReduceToCore(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cshift.AllReduceOp, rewriter: PatternRewriter) -> None:
        rtype = op.result.type
        assert isinstance(rtype, RTensorType)
        buffer = _buffer_of(op.source)
        reduce = core.AllReduceOp.build(
            operands=[buffer],
            properties={
                "combiner": op.combiner,
                "axes": op.axes,
                "grid": int_array(rtype.get_layout().grid),
                **placement_property(rtype.get_layout()),
            },
        )
        _replace_with_buffer(rewriter, op, [reduce], buffer, rtype)


def _all_reduced(value: SSAValue) -> core.AllReduceOp | None:
    """The `core.all_reduce` that last wrote the buffer of `value` (lowered just before its
    conversion cast), if any."""
    cast = value.owner
    reduce = cast.prev_op if isinstance(cast, Operation) else None
    return reduce if isinstance(reduce, core.AllReduceOp) else None


class EpilogueToKernel(RewritePattern):
    """An epilogue is one element-wise kernel on the grid of the operator's output: loop i
    (output dim i) runs along the grid axis that splits dim i; cores that differ on the other
    axes (the replicas of a split-k tile) hold the same tile. It writes the output buffer in
    place (a new buffer when the output has other readers).

    After an all-reduce it runs between the reduce-scatter and the all-gather: the
    all-reduce stops at `scatter`, each replica computes its run of the tile
    (`core.kernel ... scatter`), and a `core.all_gather` completes every tile. The epilogue
    then costs 1/R of the tile and no superstep of its own."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.EpilogueOp, rewriter: PatternRewriter) -> None:
        rtype = op.result.type
        assert isinstance(rtype, RTensorType)
        layout = rtype.get_layout()
        source = op.inputs[0]
        ops: list[Operation] = []
        output = _buffer_of(source)
        reduce = _all_reduced(source) if source.has_one_use() else None
        if not source.has_one_use():
            alloc = _alloc(op.label.data, rtype)
            ops.append(alloc)
            output = alloc.result
        idx = _IndexBuilder(ops)
        zero = idx.const(0)
        rank = len(layout.shape)
        properties: dict[str, Attribute] = {
            "label": op.label,
            "grid": int_array(layout.grid),
            **placement_property(layout),
            "axes": int_array([-1 if a is None else a for a in layout.axes]),
            "sizes": int_array(layout.tile),
            "bounds": int_array(layout.shape),
            "slice_dims": int_array([-1] * (len(op.inputs) + 1)),
            "indexing_maps": op.indexing_maps,
            "iterator_types": ArrayAttr([IteratorTypeAttr.parallel()] * rank),
        }
        if reduce is not None:
            reduce.properties["scatter"] = properties["scatter"] = UnitAttr()
            rewriter.handle_operation_modification(reduce)
        kernel = core.KernelOp.build(
            operands=[
                [_buffer_of(v) for v in op.inputs], output, [zero] * (len(op.inputs) + 1), [], []
            ],
            properties=properties,
            regions=[op.body.clone()],
        )
        ops.append(kernel)
        if reduce is not None:
            ops.append(
                core.AllGatherOp.build(
                    operands=[output],
                    properties={"grid": reduce.grid, "axes": reduce.axes,
                                **({} if reduce.placement is None
                                   else {"placement": reduce.placement})},
                )
            )
        _replace_with_buffer(rewriter, op, ops, output, rtype)


class CollectToStore(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.CollectOp, rewriter: PatternRewriter) -> None:
        rtype = op.source.type
        assert isinstance(rtype, RTensorType)
        store = core.StoreOp.build(
            operands=[_buffer_of(op.source)],
            properties={"layout": rtype.layout},
            result_types=[op.result.type],
        )
        rewriter.replace(op, store)


def _erase_casts(module: ModuleOp) -> None:
    for cast in [o for o in module.walk() if isinstance(o, UnrealizedConversionCastOp)]:
        if not cast.results[0].uses and isinstance(cast.inputs[0].type, BufferType):
            Rewriter.erase_op(cast)


def insert_frees(module: ModuleOp) -> None:
    """Frees every buffer but the weights right after the op (in the allocating block) that
    uses it last."""
    positions: dict[int, dict[int, int]] = {}  # block → op → index, before any free

    def position(block: Block, op: Operation) -> int:
        if id(block) not in positions:
            positions[id(block)] = {id(o): i for i, o in enumerate(block.ops)}
        return positions[id(block)][id(op)]

    for alloc in [o for o in module.walk() if isinstance(o, core.AllocOp)]:
        if is_resident(alloc):
            continue
        block = alloc.parent_block()
        assert block is not None
        last: Operation = alloc
        for use in alloc.result.uses:
            user = block.find_ancestor_op_in_block(use.operation)
            if user is not None and position(block, user) > position(block, last):
                last = user
        free = core.FreeOp.build(operands=[alloc.result])
        free.location = alloc.location
        Rewriter.insert_op(free, InsertPoint.after(last))


@dataclass(frozen=True)
class ConvertCShiftToCore(ModulePass):
    name = "convert-cshift-to-core"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [
                DistributeToLoad(),
                LoadToChipLoad(),
                ComputeShiftToKernels(),
                AllReduceToCore(),
                EpilogueToKernel(),
                RelayoutToExchange(),
                GatherToCore(),
                CollectToStore(),
            ],
            dce_enabled=False,
        )
        # in program order, once: every producer converts before its users
        PatternRewriteWalker(
            Located(patterns), apply_recursively=False, walk_regions_first=False
        ).rewrite_module(op)
        _erase_casts(op)
        insert_frees(op)
