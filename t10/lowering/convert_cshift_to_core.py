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
The last step is peeled so that it does not shift. Buffers are freed after their last use.
Values cross between converted and unconverted ops through `builtin.unrealized_conversion_cast`,
which disappear once every op is converted.
"""

from __future__ import annotations

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
from t10.common.plans import Layout, same_placement
from t10.t10_dialects import core, cshift, rtensor
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
class _Operand:
    """How one kernel operand is sliced along the shift dim (dim -1: not sliced)."""

    buffer: SSAValue
    dim: int
    slots: int
    window: int
    rotates: bool
    ring: int = -1
    pieces: int = 0


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
        operands = self._operands(op, out_alloc.result, shift)
        zero = idx.const(0)
        if steps == 1:
            ops.append(self._kernel(op, grid, sizes, operands, [zero] * len(operands)))
            _replace_with_buffer(rewriter, op, ops, out_alloc.result, rtype)
            return
        chunk = sizes[shift]
        skew = next(
            lay.rotating.skew for lay in (*map(_layout, op.inputs), out_layout) if lay.rotating
        )
        terms = [idx.mul(idx.mod(idx.coord(a, grid), m), w) for a, m, w in skew]
        total = terms[0]
        for term in terms[1:]:
            total = idx.add(total, term)
        origin = idx.mod(total, steps)

        # a rotating output's slice lies at chunk k of its tile (its offset is a slot)
        out_dim = operands[-1].dim
        tile_origin = None
        if out_layout.rotating is not None and (axis := out_layout.axes[out_dim]) is not None:
            tile_origin = idx.mul(idx.coord(axis, grid), out_layout.tile[out_dim])

        def step(t: SSAValue, builder: _IndexBuilder, with_shift: bool) -> None:
            u = builder.add(origin, t)
            k = builder.mod(u, steps)
            chunk_origin = None
            if out_layout.rotating is not None:
                chunk_origin = builder.mul(k, chunk)
                if tile_origin is not None:
                    chunk_origin = builder.add(tile_origin, chunk_origin)
            offsets = []
            shifts: list[core.ShiftOp] = []
            for operand in operands:
                if operand.dim < 0:
                    offsets.append(zero)
                elif operand.rotates:
                    send = builder.mul(builder.mod(u, operand.slots), chunk)
                    offsets.append(send)
                    if with_shift:
                        ahead = builder.add(u, builder.const(operand.window))
                        recv = builder.mul(builder.mod(ahead, operand.slots), chunk)
                        shifts.append(self._shift(grid, operand, chunk, send, recv))
                else:
                    offsets.append(builder.mul(k, chunk))
            builder.ops.append(self._kernel(op, grid, sizes, operands, offsets, chunk_origin))
            builder.ops.extend(shifts)

        loop_body = Block(arg_types=[IndexType()])
        loop_ops: list[Operation] = []
        step(loop_body.args[0], _IndexBuilder(loop_ops, idx), with_shift=True)
        loop_body.add_ops([*loop_ops, scf.YieldOp()])
        ops.append(scf.ForOp(zero, idx.const(steps - 1), idx.const(1), [], loop_body))
        step(idx.const(steps - 1), idx, with_shift=False)
        _replace_with_buffer(rewriter, op, ops, out_alloc.result, rtype)

    @staticmethod
    def _operands(op: cshift.ComputeShiftOp, output: SSAValue, shift: int) -> list[_Operand]:
        maps = [m.data for m in op.indexing_maps.data]
        result: list[_Operand] = []
        for i, value in enumerate((*op.inputs, op.result)):
            positions = [getattr(e, "position", None) for e in maps[i].results]
            dim = positions.index(shift) if shift in positions else -1
            layout = _layout(value)
            buffer = output if i == len(op.inputs) else _buffer_of(value)
            rot = layout.rotating
            if rot is None:
                steps = op.steps.value.data
                result.append(_Operand(buffer, dim, steps, steps, rotates=False))
            else:
                result.append(
                    _Operand(buffer, dim, rot.slots, rot.window, True, rot.ring_axis, rot.pieces)
                )
        return result

    @staticmethod
    def _kernel(
        op: cshift.ComputeShiftOp,
        grid: tuple[int, ...],
        sizes: tuple[int, ...],
        operands: list[_Operand],
        offsets: list[SSAValue],
        origin: SSAValue | None = None,
    ) -> core.KernelOp:
        return core.KernelOp.build(
            operands=[
                [o.buffer for o in operands[:-1]],
                operands[-1].buffer,
                offsets,
                [] if origin is None else [origin],
            ],
            properties={
                "label": op.label,
                "grid": int_array(grid),
                "sizes": int_array(sizes),
                "bounds": int_array(loop_bounds(op)),
                "slice_dims": int_array([o.dim for o in operands]),
                "indexing_maps": op.indexing_maps,
                "iterator_types": op.iterator_types,
            },
            regions=[op.body.clone()],
        )

    @staticmethod
    def _shift(
        grid: tuple[int, ...], operand: _Operand, chunk: int, send: SSAValue, recv: SSAValue
    ) -> core.ShiftOp:
        return core.ShiftOp.build(
            operands=[operand.buffer, send, recv],
            properties={
                "grid": int_array(grid),
                "ring": int_prop(operand.ring),
                "pieces": int_prop(operand.pieces),
                "dim": int_prop(operand.dim),
                "size": int_prop(chunk),
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


class DistributeToLoad(RewritePattern):
    """Host tensors are placed before the program runs: their buffers are allocated and
    loaded where the tensor is defined (function entry, or right after the constant)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.DistributeOp, rewriter: PatternRewriter) -> None:
        rtype = op.result.type
        assert isinstance(rtype, RTensorType)
        alloc = _alloc(_source_label(op), rtype)
        load = core.LoadOp.build(
            operands=[op.source, alloc.result], properties={"layout": rtype.layout}
        )
        source = op.source
        if isinstance(source.owner, Block):
            where = InsertPoint.at_start(source.owner)
        else:
            where = InsertPoint.after(source.owner)
        rewriter.insert([alloc, load], where)
        _replace_with_buffer(rewriter, op, [], alloc.result, rtype)


def is_resident(alloc: core.AllocOp) -> bool:
    """Weights (buffers loaded from constants) stay on chip for the whole program."""
    return any(
        isinstance(use.operation, core.LoadOp)
        and isinstance(use.operation.source.owner, arith.ConstantOp)
        for use in alloc.result.uses
    )


def _source_label(op: rtensor.DistributeOp) -> str:
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
                "axis": op.axis,
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
                [_buffer_of(v) for v in op.inputs], output, [zero] * (len(op.inputs) + 1), []
            ],
            properties=properties,
            regions=[op.body.clone()],
        )
        ops.append(kernel)
        if reduce is not None:
            ops.append(
                core.AllGatherOp.build(
                    operands=[output], properties={"grid": reduce.grid, "axes": reduce.axes}
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
        Rewriter.insert_op(core.FreeOp.build(operands=[alloc.result]), InsertPoint.after(last))


@dataclass(frozen=True)
class ConvertCShiftToCore(ModulePass):
    name = "convert-cshift-to-core"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [
                DistributeToLoad(),
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
            patterns, apply_recursively=False, walk_regions_first=False
        ).rewrite_module(op)
        _erase_casts(op)
        insert_frees(op)
