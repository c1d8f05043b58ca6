"""t10-fuse-elementwise: element-wise producers fuse into the generics that read them.

An element-wise `linalg.generic` P whose result only one generic C reads (an element-wise op
or a reduction, not a contraction) and reads without broadcasting (C's map of P's result is a
permutation of C's loops, so nothing is recomputed) is inlined into C: C reads P's inputs
through P's maps composed with C's map, and C's body computes P's body first. Chains collapse
to one operator:

```
  Div → Erf → Add → Mul → Mul   (an exported GELU: five operators, four layout transitions)
  ⇒ one generic "Div+Erf+Add+Mul+Mul" whose body is the whole chain
```

The fused operator is planned, lowered and simulated like any other: one kernel per core,
no exchange or sync between the former operators. A generic that already carries a plan
(`t10.plan`) is left alone, so pinned plans keep their meaning. Run it before the plan search
(`t10-compile` does).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from t10.common.attr_names import NAME_ATTR, PLAN_ATTR
from t10.common.locations import Located, fused_location
from t10.common.tensor_expr import ExprKind, linalg_tensor_expr, op_name


def _fusable_producer(value: SSAValue) -> bool:
    """An unplanned element-wise generic with an identity output map, read only here."""
    op = value.owner
    return (
        isinstance(op, GenericOp)
        and PLAN_ATTR not in op.attributes
        and value.has_one_use()
        and all(it.data == IteratorType.PARALLEL for it in op.iterator_types.data)
        and op.indexing_maps.data[-1].data == AffineMap.identity(len(op.iterator_types))
    )


def _fusable_operand(consumer: GenericOp) -> int | None:
    """The first input of `consumer` that an element-wise producer can fuse into: the
    consumer reads it at distinct loop dims and every loop of size > 1 takes part, so each
    produced element is computed once."""
    if PLAN_ATTR in consumer.attributes:
        return None
    expr = linalg_tensor_expr(consumer)
    if expr.kind is ExprKind.CONTRACTION:
        return None
    for i, value in enumerate(consumer.inputs):
        if not _fusable_producer(value):
            continue
        dims = expr.inputs[i].dims
        needed = {d for d, size in enumerate(expr.loop_sizes) if size > 1}
        if None not in dims and len(set(dims)) == len(dims) and needed <= set(dims):
            return i
    return None


class FuseProducer(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GenericOp):
            return
        index = _fusable_operand(op)
        if index is None:
            return
        producer = op.inputs[index].owner
        assert isinstance(producer, GenericOp)
        read = op.indexing_maps.data[index].data
        inputs: list[SSAValue] = []
        maps: list[AffineMapAttr] = []
        slots: dict[tuple[SSAValue, AffineMapAttr], int] = {}

        def add_input(value: SSAValue, amap: AffineMapAttr) -> int:
            key = (value, amap)
            if key not in slots:
                slots[key] = len(inputs)
                inputs.append(value)
                maps.append(amap)
            return slots[key]

        consumer_slots = [
            add_input(v, m) if i != index else -1
            for i, (v, m) in enumerate(zip(op.inputs, op.indexing_maps.data, strict=False))
        ]
        producer_slots = [
            add_input(v, AffineMapAttr(m.data.compose(read)))
            for v, m in zip(producer.inputs, producer.indexing_maps.data, strict=False)
        ]
        output_map = op.indexing_maps.data[len(op.inputs)]
        element_types = [
            SSAValue.get(v, type=TensorType).type.element_type for v in (*inputs, op.outputs[0])
        ]
        block = Block(arg_types=element_types)
        args = block.args
        value_map: dict[SSAValue, SSAValue] = {}
        p_block = producer.body.block
        for arg, slot in zip(p_block.args, producer_slots, strict=False):
            value_map[arg] = args[slot]
        produced = _inline(p_block, block, value_map)
        c_block = op.body.block
        value_map = {}
        for i, arg in enumerate(c_block.args[: len(op.inputs)]):
            value_map[arg] = produced if i == index else args[consumer_slots[i]]
        value_map[c_block.args[len(op.inputs)]] = args[len(inputs)]
        result = _inline(c_block, block, value_map)
        block.add_op(YieldOp(result))
        fused = GenericOp(
            inputs,
            list(op.outputs),
            Region(block),
            [*maps, output_map],
            list(op.iterator_types.data),
            [r.type for r in op.results],
        )
        fused.attributes[NAME_ATTR] = StringAttr(f"{op_name(producer)}+{op_name(op)}")
        fused.location = fused_location((producer.location, op.location))
        rewriter.replace(op, fused)
        rewriter.erase(producer)
        init = producer.outputs[0].owner
        if isinstance(init, tensor.EmptyOp) and not init.tensor.uses:
            rewriter.erase(init)


def _inline(source: Block, target: Block, value_map: dict[SSAValue, SSAValue]) -> SSAValue:
    """Clones `source`'s ops (but its yield) into `target`; returns the yielded value."""
    for body_op in source.ops:
        if isinstance(body_op, YieldOp):
            return value_map.get(body_op.operands[0], body_op.operands[0])
        clone = body_op.clone(value_mapper=value_map)
        target.add_op(clone)
        for old, new in zip(body_op.results, clone.results, strict=True):
            value_map[old] = new
    raise AssertionError("a generic body ends with linalg.yield")


@dataclass(frozen=True)
class T10FuseElementwise(ModulePass):
    name = "t10-fuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(Located(FuseProducer())).rewrite_module(op)
