"""convert-core-to-chip: schedules the per-core program into BSP supersteps.

Each `core.kernel` opens a superstep whose compute phase it is; the transfers that follow it
(ring shifts, an all-gather) form that superstep's exchange phase. A kernel of the same
operator that follows with nothing exchanged in between joins that compute phase: an
operator's epilogue runs in its last step. A transfer with no kernel before it (an
all-reduce, a relayout, a gather) gets a superstep of its own with an empty compute phase.
Frees stay between supersteps and end none. The body of `@main` moves into one
`chip.program` over the cores the program uses."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from t10.common.locations import Located, locate_by_contents
from t10.t10_dialects import chip, core
from t10.t10_dialects.chip import EXCHANGE_OPS
from t10.t10_dialects.syntax import int_prop


def _superstep(label: str) -> chip.SuperstepOp:
    """An empty superstep; phases get their block when the first op moves in."""
    return chip.SuperstepOp.create(
        properties={"label": StringAttr(label)}, regions=[Region(), Region()]
    )


def _move_into(region: Region, op: Operation) -> None:
    op.detach()
    if not region.blocks:
        region.add_block(Block())
    region.block.add_op(op)


def _exchange_label(op: Operation) -> str:
    """A relayout or a gather is reported under its own label, an all-reduce under its
    operator's."""
    if isinstance(op, core.RelayoutOp | core.GatherOp):
        return op.label.data
    producer = op.operands[0].owner
    return getattr(producer, "label", StringAttr(op.name)).data


def _late_operands(kernel: core.KernelOp, step: chip.SuperstepOp) -> list[Operation]:
    """The ops defining `kernel`'s operands that stand after `step` in its block."""
    block = step.parent_block()
    return [
        v.owner
        for v in kernel.operands
        if isinstance(v.owner, Operation)
        and v.owner.parent_block() is block
        and step.is_before_in_block(v.owner)
    ]


def _joins(step: chip.SuperstepOp | None, kernel: core.KernelOp) -> bool:
    """Whether `kernel` runs in the compute phase of `step`: a kernel of the same operator
    with nothing exchanged since (an epilogue after the operator's last step), whose operands
    are defined before `step` or are index constants (which move up before it)."""
    return (
        step is not None
        and step.label.data == kernel.label.data
        and not (step.exchange.blocks and step.exchange.block.ops)
        and all(isinstance(o, arith.ConstantOp) for o in _late_operands(kernel, step))
    )


def _join(step: chip.SuperstepOp, kernel: core.KernelOp) -> None:
    for constant in _late_operands(kernel, step):
        constant.detach()
        block = step.parent_block()
        assert block is not None  # a superstep lies in the program's body
        block.insert_op_before(constant, step)
    _move_into(step.compute, kernel)


def schedule_block(block: Block) -> None:
    """Groups the kernels and transfers of one block (recursively) into supersteps."""
    current: chip.SuperstepOp | None = None
    last_compute: chip.SuperstepOp | None = None  # the latest superstep that ran a kernel
    for op in list(block.ops):
        for region in op.regions:
            for inner in region.blocks:
                schedule_block(inner)
        standalone = isinstance(op, core.RelayoutOp | core.GatherOp | core.AllReduceOp)
        if isinstance(op, core.KernelOp) and _joins(last_compute, op):
            assert last_compute is not None
            _join(last_compute, op)
        elif isinstance(op, core.KernelOp):
            current = last_compute = _superstep(op.label.data)
            block.insert_op_before(current, op)
            _move_into(current.compute, op)
        elif isinstance(op, EXCHANGE_OPS):
            if current is None or standalone:
                current = _superstep(_exchange_label(op))
                block.insert_op_before(current, op)
            _move_into(current.exchange, op)
            last_compute = None
            if standalone:
                current = None
        elif op.regions or isinstance(
            op, core.AllocOp | core.StoreOp | core.LoadOp | chip.LoadOp
        ):
            # a free does not end a superstep: it releases the buffer after the superstep
            current = last_compute = None


class FuncToProgram(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        body = op.body.block
        ret = body.last_op
        if not isinstance(ret, func.ReturnOp) or any(
            isinstance(o, chip.ProgramOp) for o in body.ops
        ):
            return
        cores = max(
            (a.cores.value.data for a in body.walk() if isinstance(a, core.AllocOp)), default=1
        )
        inner = Block()
        for o in list(body.ops):
            if o is not ret:
                o.detach()
                inner.add_op(o)
        schedule_block(inner)
        inner.add_op(chip.YieldOp.create(operands=list(ret.arguments)))
        program = chip.ProgramOp.create(
            properties={"label": StringAttr(op.sym_name.data), "cores": int_prop(cores)},
            result_types=[a.type for a in ret.arguments],
            regions=[Region(inner)],
        )
        body.insert_op_before(program, ret)
        for i, result in enumerate(program.results):
            ret.operands[i] = result
        rewriter.handle_operation_modification(op)


@dataclass(frozen=True)
class ConvertCoreToChip(ModulePass):
    name = "convert-core-to-chip"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(Located(FuncToProgram()), apply_recursively=False).rewrite_module(op)
        locate_by_contents(o for o in op.walk() if isinstance(o, chip.SuperstepOp))
