"""convert-rtensor-to-cshift: each planned `rtensor.generic` becomes an explicit
`cshift.compute_shift` (per-step extents, steps, rotating inputs and output), followed by a
`cshift.all_reduce` when the plan splits reduction dims over cores (but the ring of a
rotating output, which sums over it while it rotates)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from t10.common.locations import Located
from t10.common.plans import OUTPUT, partial_dims, step_sizes
from t10.common.tensor_expr import TensorExpr, tensor_expr_of
from t10.t10_dialects import cshift, rtensor
from t10.t10_dialects.rtensor import RTensorType
from t10.t10_dialects.syntax import int_array, int_prop


def rtensor_expr(op: rtensor.GenericOp) -> TensorExpr:
    def tensor_of(t: object) -> TensorType:
        assert isinstance(t, RTensorType)
        return t.tensor

    return tensor_expr_of(
        op,
        op.indexing_maps,
        tuple(it.data.value == "parallel" for it in op.iterator_types.data),
        tuple(tensor_of(v.type) for v in op.inputs),
        tensor_of(op.result.type),
        op.body.block,
    )


class GenericToComputeShift(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.GenericOp, rewriter: PatternRewriter) -> None:
        expr = rtensor_expr(op)
        plan = op.plan.to_plan()
        rotate = [-1] * len(expr.inputs)
        for r in plan.rotations:
            if r.operand != OUTPUT:
                rotate[r.operand] = r.ring_dim
        partial = partial_dims(expr, plan)
        properties: dict[str, Attribute] = {
            "label": op.label,
            "indexing_maps": op.indexing_maps,
            "iterator_types": op.iterator_types,
            "step_sizes": int_array(step_sizes(expr, plan)),
            "shift_dim": int_prop(-1 if plan.temporal_dim is None else plan.temporal_dim),
            "steps": int_prop(plan.steps),
            "rotate": int_array(rotate),
            "partial": int_array(partial),
        }
        if plan.outer_dim is not None:
            properties["outer_dim"] = int_prop(plan.outer_dim)
            properties["outer_steps"] = int_prop(plan.outer_steps)
        out = plan.rotation_of(OUTPUT)
        if out is not None:
            properties["rotate_out"] = int_prop(out.ring_dim)
        compute = cshift.ComputeShiftOp.create(
            operands=list(op.inputs),
            result_types=[op.result.type],
            properties=properties,
            regions=[op.detach_region(op.body)],
        )
        new_ops = [compute]
        if partial:
            assert expr.combiner is not None
            new_ops.append(
                cshift.AllReduceOp(compute.result, int_array(partial), StringAttr(expr.combiner))
            )
        rewriter.replace(op, new_ops)


@dataclass(frozen=True)
class ConvertRTensorToCShift(ModulePass):
    name = "convert-rtensor-to-cshift"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        walker = PatternRewriteWalker(Located(GenericToComputeShift()), apply_recursively=False)
        walker.rewrite_module(op)
