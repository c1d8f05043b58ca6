"""convert-linalg-to-rtensor: planned `linalg.generic` ops become `rtensor.generic` ops over
distributed tensors.

Host tensors (function arguments, constants) are distributed straight into the layout their
consumer's plan asks for; a value produced on chip in one layout and consumed in another gets
an `rtensor.relayout`. Results that leave the chip are collected. Chains of `rtensor.view`
ops fold into the map of the relayout that feeds each consumer (a viewed function argument
is first placed by `host_layout`); a view returned from the function is moved on chip too.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from t10.errors import T10Error
from t10.passes.plan import Layout, host_layout, input_layouts, output_layout
from t10.passes.tensor_expr import COMBINER_IDENTITY, ExprKind, linalg_tensor_expr, op_name
from t10.t10_dialects import rtensor
from t10.t10_dialects.rtensor import PlanAttr, RTensorType, through_views

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


def _relayout(
    source: SSAValue,
    wanted: RTensorType,
    label: str,
    view: AffineMap | None,
    estimate: Attribute | None,
) -> Operation:
    properties: dict[str, Attribute] = {"label": StringAttr(label)}
    if estimate is not None:
        properties["estimate"] = estimate
    if view is not None:
        properties["map"] = AffineMapAttr(view)
    return rtensor.RelayoutOp.create(
        operands=[source], result_types=[wanted], properties=properties
    )


def _on_chip(value: SSAValue, cores: int, rewriter: PatternRewriter) -> SSAValue:
    """`value` (a host tensor, or the collect of an on-chip one) as a distributed tensor: the
    on-chip one, or the host one placed by `host_layout`."""
    if isinstance(value.owner, rtensor.CollectOp):
        return value.owner.source
    assert isinstance(value.type, TensorType)
    layout = host_layout(value.type.get_shape(), cores)
    op = rtensor.DistributeOp.create(
        operands=[value], result_types=[RTensorType.of(value.type, layout)]
    )
    rewriter.insert(op)
    return op.results[0]


def _distributed(
    value: SSAValue, layout: Layout, consumer: Operation, rewriter: PatternRewriter
) -> SSAValue:
    """`value` (a host tensor, the collect of an on-chip one, or views of either) in
    `layout`; views become the map of the relayout that feeds `consumer`."""
    assert isinstance(value.type, TensorType)
    wanted = RTensorType.of(value.type, layout)
    source, view = through_views(value)
    if view is None and not isinstance(source.owner, rtensor.CollectOp):
        op: Operation = rtensor.DistributeOp.create(operands=[value], result_types=[wanted])
    else:
        on_chip = _on_chip(source, layout.cores, rewriter)
        if on_chip.type == wanted:
            return on_chip
        estimate = consumer.attributes.get(RELAYOUT_ATTR)
        op = _relayout(on_chip, wanted, f"{op_name(consumer)}/relayout", view, estimate)
    rewriter.insert(op)
    return op.results[0]


class GenericToRTensor(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        plan_attr = op.attributes.get(PLAN_ATTR)
        if not isinstance(plan_attr, PlanAttr):
            raise T10Error(
                f"operator '{op_name(op)}' has no '{PLAN_ATTR}' attribute: run t10-plan-search "
                "before convert-linalg-to-rtensor (or pin a plan by hand)"
            )
        expr = linalg_tensor_expr(op)
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
            _distributed(v, lay, op, rewriter)
            for v, lay in zip(op.inputs, input_layouts(expr, plan), strict=True)
        ]
        result_type = op.res[0].type
        assert isinstance(result_type, TensorType)
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
            result_types=[RTensorType.of(result_type, output_layout(expr, plan))],
            properties=properties,
            regions=[op.detach_region(op.body)],
        )
        collect = rtensor.CollectOp.create(operands=generic.results, result_types=[result_type])
        rewriter.replace(op, [generic, collect])


class MaterializeView(RewritePattern):
    """A view that leaves the chip (a function result) is made on chip: moved through its
    map into `host_layout` over the source's cores, then collected."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.ViewOp, rewriter: PatternRewriter) -> None:
        users = [u for u in op.result.uses if not isinstance(u.operation, rtensor.ViewOp)]
        if not users:
            return
        source, view = through_views(op.result)
        on_chip = _on_chip(source, _cores_of(source), rewriter)
        assert isinstance(on_chip.type, RTensorType) and isinstance(op.result.type, TensorType)
        layout = host_layout(op.result.type.get_shape(), on_chip.type.get_layout().cores)
        wanted = RTensorType.of(op.result.type, layout)
        move = _relayout(on_chip, wanted, f"{op.label.data}/relayout", view, None)
        collect = rtensor.CollectOp.create(operands=move.results, result_types=[op.result.type])
        rewriter.insert([move, collect], InsertPoint.before(op))
        for use in users:
            use.operation.operands[use.index] = collect.results[0]


def _cores_of(value: SSAValue) -> int:
    """The cores an on-chip value (a collect) lives on; 1 for a host value."""
    if isinstance(value.owner, rtensor.CollectOp):
        rtype = value.owner.source.type
        assert isinstance(rtype, RTensorType)
        return rtype.get_layout().cores
    return 1


class EraseUnused(RewritePattern):
    """Drops what the conversion left without users: collects of values that stay on chip,
    the output inits of linalg (`tensor.empty`, zero constants), unused relayouts."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, rtensor.CollectOp | rtensor.ViewOp | tensor.EmptyOp | arith.ConstantOp):
            if not any(r.uses for r in op.results):
                rewriter.erase(op)


@dataclass(frozen=True)
class ConvertLinalgToRTensor(ModulePass):
    name = "convert-linalg-to-rtensor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GenericToRTensor(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(MaterializeView(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(EraseUnused(), walk_reverse=True).rewrite_module(op)
