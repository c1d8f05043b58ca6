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

Each fusion reuses the longer of the two bodies and moves the other's ops into it (nothing is
cloned), and the fused ops' node locations are set once at the end: a fusion costs the shorter
body and the fused op's operands, not the whole chain fused so far.

The fused operator is planned, lowered and simulated like any other: one kernel per core,
no exchange or sync between the former operators. A generic that already carries a plan
(`t10.plan`) is left alone, so pinned plans keep their meaning. Run it before the plan search
(`t10-compile` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from t10.common.attr_names import NAME_ATTR, PLAN_ATTR
from t10.common.locations import Located, NodeNames
from t10.common.tensor_expr import is_mul_add, loop_accesses, op_name


def _fusable_producer(value: SSAValue) -> bool:
    """An unplanned element-wise generic with an identity output map, read only here, whose
    body does not read its output's initial value."""
    op = value.owner
    return (
        isinstance(op, GenericOp)
        and PLAN_ATTR not in op.attributes
        and value.has_one_use()
        and all(it.data == IteratorType.PARALLEL for it in op.iterator_types.data)
        and op.indexing_maps.data[-1].data == AffineMap.identity(len(op.iterator_types))
        and not op.body.block.args[-1].uses
    )


def _fusable_operand(consumer: GenericOp) -> int | None:
    """The first input of `consumer` that an element-wise producer can fuse into: the
    consumer (not a contraction) reads it at distinct loop dims and every loop of size > 1
    takes part, so each produced element is computed once."""
    if PLAN_ATTR in consumer.attributes:
        return None
    parallel = [it.data == IteratorType.PARALLEL for it in consumer.iterator_types.data]
    body = consumer.body.block
    if not all(parallel) and len(consumer.inputs) == 2 and is_mul_add(body):
        return None
    loop_sizes, accesses, _ = loop_accesses(
        f"operator '{op_name(consumer)}'",
        consumer.indexing_maps,
        len(parallel),
        tuple(v.type for v in consumer.inputs),
        consumer.outputs[0].type,
    )
    for i, value in enumerate(consumer.inputs):
        if not _fusable_producer(value):
            continue
        dims = accesses[i].dims
        needed = {d for d, size in enumerate(loop_sizes) if size > 1}
        if None not in dims and len(set(dims)) == len(dims) and needed <= set(dims):
            return i
    return None


@dataclass
class FuseProducer(RewritePattern):
    names: dict[Operation, NodeNames] = field(default_factory=dict)
    """The node locations of the fused generics made so far (set once, at the end: `locate`)."""

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
        same = read == AffineMap.identity(read.num_dims)
        producer_slots = [
            add_input(v, m if same else AffineMapAttr(m.data.compose(read)))
            for v, m in zip(producer.inputs, producer.indexing_maps.data, strict=False)
        ]
        element_types = [
            SSAValue.get(v, type=TensorType).type.element_type for v in (*inputs, op.outputs[0])
        ]
        block = _merged_body(producer, op, index, (producer_slots, consumer_slots),
                             element_types)
        fused = GenericOp(
            inputs,
            list(op.outputs),
            Region(block),
            [*maps, op.indexing_maps.data[len(op.inputs)]],
            list(op.iterator_types.data),
            [r.type for r in op.results],
        )
        fused.attributes[NAME_ATTR] = StringAttr(f"{op_name(producer)}+{op_name(op)}")
        fused.location = op.location
        self.names[fused] = self._names(producer).then(self._names(op))
        rewriter.replace(op, fused)
        rewriter.erase(producer)
        init = producer.outputs[0].owner
        if isinstance(init, tensor.EmptyOp) and not init.tensor.uses:
            rewriter.erase(init)

    def _names(self, op: Operation) -> NodeNames:
        """`op`'s node locations (no longer kept: `op` is fused away)."""
        return self.names.pop(op, None) or NodeNames.at(op.location)

    def locate(self) -> None:
        """Every fused generic located at its node locations (`fused_location`)."""
        for op, names in self.names.items():
            op.location = names.location()


def _merged_body(
    producer: GenericOp,
    consumer: GenericOp,
    index: int,
    slots: tuple[list[int], list[int]],
    types: list[Attribute],
) -> Block:
    """The fused body: the producer's ops, then the consumer's reading the producer's yield
    for its input `index`; one argument per input slot (`slots`: the producer's inputs', the
    consumer's, -1 for `index`) of `types`, then the output. The longer of the two bodies'
    blocks is reused and the other's ops are moved into it (no op is cloned, and each fusion
    costs the shorter body: a chain of fusions stays linear)."""
    p_block, c_block = producer.body.block, consumer.body.block
    p_yield = p_block.last_op
    assert isinstance(p_yield, YieldOp)
    out = len(types) - 1
    # each block argument's slot; None: not an input of the fused op
    arg_slots: dict[BlockArgument, int | None] = {p_block.args[-1]: None}
    arg_slots |= dict(zip(p_block.args, slots[0], strict=False))
    arg_slots |= {a: s if s >= 0 else None for a, s in zip(c_block.args, slots[1], strict=False)}
    arg_slots[c_block.args[-1]] = out
    big = c_block if _shorter(p_block, c_block) else p_block
    # keep big's arguments that are already in slot order, insert the missing ones
    target: list[BlockArgument | None] = [None] * len(types)
    last = -1
    for arg in big.args:
        slot = arg_slots[arg]
        if slot is not None and slot > last and arg.type == types[slot]:
            target[slot], last = arg, slot
    for slot, arg in enumerate(target):
        if arg is None:
            at = 0 if slot == 0 else cast(BlockArgument, target[slot - 1]).index + 1
            target[slot] = big.insert_arg(types[slot], at)
    produced = p_yield.operands[0]
    if isinstance(produced, BlockArgument) and produced.block is p_block:
        produced = cast(BlockArgument, target[cast(int, arg_slots[produced])])
    produced_name = None if isinstance(produced, BlockArgument) else produced.name_hint
    # every other argument's uses to its slot's argument (the consumer's `index`: the produced)
    kept = set(target)
    for block in (p_block, c_block):
        for arg in block.args:
            if arg in kept:
                continue
            slot = arg_slots[arg]
            if arg.uses:
                arg.replace_all_uses_with(
                    produced if slot is None else cast(BlockArgument, target[slot])
                )
            if block is big:
                big.erase_arg(arg)
    # replacing a value names its replacement after it: the fused op's arguments are new
    # (unnamed) and the produced value keeps its name
    for arg in target:
        cast(BlockArgument, arg).name_hint = None
    produced.name_hint = produced_name
    p_block.detach_op(p_yield)
    p_yield.erase()
    if big is c_block:
        first = c_block.first_op
        assert first is not None  # the consumer's yield at least
        for body_op in list(p_block.ops):
            p_block.detach_op(body_op)
            c_block.insert_op_before(body_op, first)
    else:
        for body_op in list(c_block.ops):
            c_block.detach_op(body_op)
            p_block.add_op(body_op)
    region = big.parent
    assert region is not None
    region.detach_block(big)
    return big


def _shorter(a: Block, b: Block) -> bool:
    """Whether `a` has fewer ops than `b` (counting no further than the shorter)."""
    ops_a, ops_b = iter(a.ops), iter(b.ops)
    while True:
        if next(ops_b, None) is None:
            return False
        if next(ops_a, None) is None:
            return True


@dataclass(frozen=True)
class T10FuseElementwise(ModulePass):
    name = "t10-fuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse = FuseProducer()
        PatternRewriteWalker(Located(fuse, nested=False)).rewrite_module(op)
        fuse.locate()
