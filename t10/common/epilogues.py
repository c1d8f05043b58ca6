"""Contraction epilogues (`t10.epilogue = N`): which element-wise generic may run on its
contraction's cores, marking it, and the fused operator's tensor expression. The contract is
docs/DESIGN.md's "Epilogues"; `t10-fuse-epilogue` decides where it pays.
"""

from __future__ import annotations

import dataclasses

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from t10.common.attr_names import EPILOGUE_ATTR, NAME_ATTR
from t10.common.tensor_expr import (
    Access,
    Epilogue,
    ExprKind,
    TensorExpr,
    body_arith_ops,
    is_relu_like_body,
    linalg_tensor_expr,
    op_name,
)
from t10.errors import T10Error


def epilogue_problem(contraction: Operation, reader: Operation) -> str | None:
    """Why `reader` cannot run as the epilogue of `contraction` (None if it can)."""
    if not (isinstance(contraction, GenericOp) and isinstance(reader, GenericOp)):
        return "both must be linalg.generic ops"
    if linalg_tensor_expr(contraction).kind is not ExprKind.CONTRACTION:
        return f"'{op_name(contraction)}' is not a multiply-accumulate contraction"
    if linalg_tensor_expr(reader).kind is not ExprKind.ELEMENTWISE:
        return "it is not element-wise"
    result = contraction.results[0]
    rank = len(reader.iterator_types)
    identity = AffineMap.identity(rank)
    if reader.indexing_maps.data[-1].data != identity:
        return "its output map is not the identity"
    for use in result.uses:
        if use.operation is not reader or use.index >= len(reader.inputs):
            return f"the result of '{op_name(contraction)}' has other readers"
        if reader.indexing_maps.data[use.index].data != identity:
            return f"it does not read '{op_name(contraction)}' at the identity map"
    if not result.uses:
        return f"it does not read '{op_name(contraction)}'"
    block = contraction.parent_block()
    for value in epilogue_inputs(contraction, reader):
        owner = value.owner
        if isinstance(owner, Block) or isinstance(owner, arith.ConstantOp):
            continue  # a constant defined later moves before the contraction when marked
        if owner.parent_block() is not block or not owner.is_before_in_block(contraction):
            return (
                f"its input defined by '{op_name(owner)}' is computed after "
                f"'{op_name(contraction)}'"
            )
    return None


def epilogue_inputs(contraction: Operation, reader: Operation) -> list[SSAValue]:
    """The epilogue's own inputs: the reader's inputs other than the contraction's result."""
    assert isinstance(reader, GenericOp)
    return [v for v in reader.inputs if v is not contraction.results[0]]


def _marked_operand(op: Operation) -> int | None:
    """The input index a `t10.epilogue` mark names (None when `op` is not marked)."""
    mark = op.attributes.get(EPILOGUE_ATTR)
    if mark is None:
        return None
    if not isinstance(mark, IntegerAttr) or not 0 <= mark.value.data < len(op.operands) - 1:
        raise T10Error(
            f"operator '{op_name(op)}': '{EPILOGUE_ATTR}' must be the index of the input that "
            f"reads the contraction it runs after, got {mark}"
        )
    return mark.value.data


def contraction_of(op: Operation) -> GenericOp | None:
    """The contraction a generic marked `t10.epilogue = N` runs after (the producer of its
    input N), or None when `op` is not marked; a mark that does not hold is an error naming
    the reason."""
    index = _marked_operand(op)
    if index is None:
        return None
    producer = op.operands[index].owner
    problem = (
        epilogue_problem(producer, op)
        if isinstance(producer, Operation)
        else "it reads a function argument there"
    )
    if problem is not None:
        raise T10Error(
            f"operator '{op_name(op)}' is marked '{EPILOGUE_ATTR} = {index}' but cannot run as "
            f"the epilogue of its input {index}: {problem}; remove the attribute"
        )
    assert isinstance(producer, GenericOp)
    return producer


def epilogue_of(contraction: Operation) -> GenericOp | None:
    """The generic marked `t10.epilogue` that runs after `contraction`, if any."""
    if not contraction.results:
        return None
    for use in contraction.results[0].uses:
        reader = use.operation
        if isinstance(reader, GenericOp) and contraction_of(reader) is contraction:
            assert isinstance(reader, GenericOp)
            return reader
    return None


def is_epilogue(op: Operation) -> bool:
    """Whether `op` is a marked epilogue (then planned and lowered with its contraction)."""
    return isinstance(op, GenericOp) and contraction_of(op) is not None


def mark_epilogue(contraction: Operation, reader: Operation) -> None:
    """Marks `reader` as the epilogue of `contraction` (`t10.epilogue = N`, N the first input
    that reads it); the operator is named `C+E`. A constant input defined after the
    contraction (a folded weight, placed at its first use) moves before it."""
    index = next(i for i, v in enumerate(reader.operands) if v is contraction.results[0])
    block = contraction.parent_block()
    for value in epilogue_inputs(contraction, reader):
        owner = value.owner
        if (
            isinstance(owner, arith.ConstantOp)
            and block is not None
            and owner.parent_block() is block
            and contraction.is_before_in_block(owner)
        ):
            owner.detach()
            block.insert_op_before(owner, contraction)
    reader.attributes[EPILOGUE_ATTR] = IntegerAttr(index, 64)
    contraction.attributes[NAME_ATTR] = StringAttr(f"{op_name(contraction)}+{op_name(reader)}")


def unmark_epilogue(contraction: Operation, reader: Operation) -> None:
    """Undoes `mark_epilogue`: `reader` is an operator of its own again."""
    del reader.attributes[EPILOGUE_ATTR]
    suffix = f"+{op_name(reader)}"
    name = op_name(contraction)
    if name.endswith(suffix):
        contraction.attributes[NAME_ATTR] = StringAttr(name.removesuffix(suffix))


def fused_tensor_expr(contraction: GenericOp, reader: GenericOp) -> TensorExpr:
    """The contraction's tensor expression with the reader as its epilogue: the epilogue's
    inputs are appended, read at the contraction's output loop dims."""
    expr = linalg_tensor_expr(contraction)
    out_loops = expr.output.dims
    extra: list[Access] = []
    result = contraction.results[0]
    for value, amap in zip(reader.inputs, reader.indexing_maps.data, strict=False):
        if value is result:
            continue
        dims = tuple(
            out_loops[e.position] if isinstance(e, AffineDimExpr) else None
            for e in amap.data.results
        )
        shape = SSAValue.get(value, type=TensorType).type.get_shape()
        extra.append(Access(dims, tuple(shape)))
    body = reader.body.block
    epilogue = Epilogue(len(extra), body_arith_ops(body), is_relu_like_body(body))
    return dataclasses.replace(expr, inputs=(*expr.inputs, *extra), epilogue=epilogue)
