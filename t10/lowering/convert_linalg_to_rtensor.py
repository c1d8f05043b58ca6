"""convert-linalg-to-rtensor: planned `linalg.generic` ops become `rtensor.generic` ops over
distributed tensors.

Host tensors (function arguments, constants) are distributed straight into the layout their
consumer's plan asks for; a value produced on chip in one layout and consumed in another gets
an `rtensor.relayout`. Results that leave the chip are collected.

Precision: distributed tensors take the storage element type the module's `t10.precision`
names (f32 when absent). Under fp16 an operator whose plan accumulates partial sums
(`rounds_partials`) produces an f32 accumulator, which an `rtensor.relayout` labelled with
the operator rounds into f16 storage in place (same layout).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from t10.errors import T10Error
from t10.passes.plan import Layout, input_layouts, output_layout, rounds_partials
from t10.passes.tensor_expr import (
    COMBINER_IDENTITY,
    PRECISION_ATTR,
    ExprKind,
    element_bytes,
    linalg_tensor_expr,
    op_name,
    precision_type,
)
from t10.t10_dialects import rtensor
from t10.t10_dialects.rtensor import PlanAttr, RTensorType

PLAN_ATTR = "t10.plan"
ESTIMATE_ATTR = "t10.estimate"
RELAYOUT_ATTR = "t10.relayout"


def _is_splat_of(value: SSAValue, identity: float) -> bool:
    owner = value.owner
    if not isinstance(owner, arith.ConstantOp):
        return False
    dense = owner.value
    return isinstance(dense, DenseIntOrFPElementsAttr) and all(
        v == identity for v in dense.get_values()
    )


def _stored(tensor: Attribute, elem: Attribute, layout: Layout) -> RTensorType:
    """The distributed type of a host tensor type, stored as `elem`."""
    assert isinstance(tensor, TensorType)
    return RTensorType.of(TensorType(elem, tensor.get_shape()), layout)


def _distributed(
    value: SSAValue, layout: Layout, elem: Attribute, consumer: Operation, rewriter: PatternRewriter
) -> SSAValue:
    """`value` (a host tensor, or the collect of an on-chip one) in `layout`, stored as
    `elem`."""
    wanted = _stored(value.type, elem, layout)
    if isinstance(value.owner, rtensor.CollectOp):
        on_chip = value.owner.source
        if on_chip.type == wanted:
            return on_chip
        properties: dict[str, Attribute] = {"label": StringAttr(f"{op_name(consumer)}/relayout")}
        if RELAYOUT_ATTR in consumer.attributes:
            properties["estimate"] = consumer.attributes[RELAYOUT_ATTR]
        op: Operation = rtensor.RelayoutOp.create(
            operands=[on_chip], result_types=[wanted], properties=properties
        )
    else:
        op = rtensor.DistributeOp.create(operands=[value], result_types=[wanted])
    rewriter.insert(op)
    return op.results[0]


@dataclass
class GenericToRTensor(RewritePattern):
    elem: Attribute
    """The storage element type of distributed tensors."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        plan_attr = op.attributes.get(PLAN_ATTR)
        if not isinstance(plan_attr, PlanAttr):
            raise T10Error(
                f"operator '{op_name(op)}' has no '{PLAN_ATTR}' attribute: run t10-plan-search "
                "before convert-linalg-to-rtensor (or pin a plan by hand)"
            )
        expr = dataclasses.replace(
            linalg_tensor_expr(op), elem_bytes=element_bytes(self.elem, op_name(op))
        )
        plan = plan_attr.to_plan()
        if expr.kind is ExprKind.CONTRACTION and not _is_splat_of(op.outputs[0], 0.0):
            raise T10Error(
                f"operator '{expr.name}': a contraction must accumulate into a zero constant"
            )
        if expr.kind is ExprKind.REDUCTION:
            assert expr.combiner is not None
            identity = COMBINER_IDENTITY[expr.combiner]
            if not _is_splat_of(op.outputs[0], identity):
                raise T10Error(
                    f"operator '{expr.name}': a {expr.combiner} reduction must accumulate into a "
                    f"splat constant of its identity {identity}"
                )
        inputs = [
            _distributed(v, lay, self.elem, op, rewriter)
            for v, lay in zip(op.inputs, input_layouts(expr, plan), strict=True)
        ]
        result_type = op.res[0].type
        assert isinstance(result_type, TensorType)
        layout = output_layout(expr, plan)
        rounding = rounds_partials(expr, plan)
        properties = {
            "indexing_maps": op.indexing_maps,
            "iterator_types": op.iterator_types,
            "plan": plan_attr,
            "label": StringAttr(expr.name),
        }
        if ESTIMATE_ATTR in op.attributes:
            properties["estimate"] = op.attributes[ESTIMATE_ATTR]
        generic = rtensor.GenericOp.create(
            operands=inputs,
            result_types=[_stored(result_type, f32 if rounding else self.elem, layout)],
            properties=properties,
            regions=[op.detach_region(op.body)],
        )
        new_ops: list[Operation] = [generic]
        if rounding:
            new_ops.append(
                rtensor.RelayoutOp.create(
                    operands=generic.results,
                    result_types=[_stored(result_type, self.elem, layout)],
                    properties={"label": StringAttr(expr.name)},
                )
            )
        collect = rtensor.CollectOp.create(
            operands=new_ops[-1].results, result_types=[result_type]
        )
        rewriter.replace(op, [*new_ops, collect])


class EraseUnused(RewritePattern):
    """Drops what the conversion left without users: collects of values that stay on chip,
    the output inits of linalg (`tensor.empty`, zero constants), unused relayouts."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, rtensor.CollectOp | tensor.EmptyOp | arith.ConstantOp):
            if not any(r.uses for r in op.results):
                rewriter.erase(op)


@dataclass(frozen=True)
class ConvertLinalgToRTensor(ModulePass):
    name = "convert-linalg-to-rtensor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        precision = op.attributes.get(PRECISION_ATTR, StringAttr("fp32"))
        if not isinstance(precision, StringAttr):
            raise T10Error(f"module attribute '{PRECISION_ATTR}' must be a string, got {precision}")
        elem = precision_type(precision.data, f"module attribute '{PRECISION_ATTR}'")
        PatternRewriteWalker(GenericToRTensor(elem), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(EraseUnused(), walk_reverse=True).rewrite_module(op)

