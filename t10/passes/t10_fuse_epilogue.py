"""t10-fuse-epilogue: element-wise readers of a contraction run on its cores, as its epilogue,
where that pays.

An element-wise `linalg.generic` E that is the only reader of a contraction C's result and
reads it at the identity map (E's loops are C's output dims) may run on the cores that hold
C's finished output tiles (`rtensor.epilogue`): a bias add, a GELU or a residual add then
costs an element-wise pass over the tile instead of a relayout, a kernel and a sync of its
own. The pass marks E with `t10.epilogue = N` (N: the input that reads C) and renames C
`C+E`; the plan search then plans the two as one operator — C's plan, with E's other inputs
laid out like C's output tile.

It does not always pay: after a plan that splits C's reduction over R cores, the epilogue
runs on 1/R of each output tile between the all-reduce's reduce-scatter and its all-gather,
but each of the R cores holding a tile needs E's other inputs for the whole tile, while E
alone spreads over all the cores. So the pass asks the plan search's cost model (`chip`,
`min_utilization`, `precision`, `partials`, `placement`, as `t10-plan-search` takes them) and
marks E only when the fastest plan of the fused operator, plus moving E's other inputs (those
computed on chip) into it, beats the fastest plans of C and E apart plus the move of C's
result between them and of E's other inputs into E. `always=true` marks every candidate (to
study fused plans).

The fastest plan of an operator never rotates (a rotating plan computes the same tiles in
steps, paying each step's fixed costs, shifts and syncs), so the spatial plans (the
replicate planner's) hold it, whichever planner runs later. The pass searches them for
every candidate at once, the big ones side by side (`operator_frontiers`, `jobs` workers).

```
  %c = linalg.generic {...matmul...} ins(%x, %w) {t10.name = "fc/MatMul"}
  %e = linalg.generic {...add...}    ins(%c, %b) {t10.name = "fc/Add"}
  ⇒ %c: t10.name = "fc/MatMul+fc/Add";  %e: t10.epilogue = 0
```

E's other inputs must be defined before C (weights, function arguments, earlier results).
Generics that carry a `t10.plan` are left alone. Run it after `t10-fuse-elementwise` (so
element-wise chains such as bias + GELU are one generic) and before the plan search;
`t10-compile` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from t10.common import costs
from t10.common.attr_names import EPILOGUE_ATTR, PLAN_ATTR
from t10.common.chip_spec import ChipSpec
from t10.common.epilogues import epilogue_problem, mark_epilogue
from t10.common.locations import Located
from t10.common.move_costs import transition_estimate
from t10.common.plans import Estimate, Layout, Plan, input_layouts, output_layout
from t10.common.tensor_expr import ExprKind, TensorExpr, linalg_tensor_expr
from t10.planning.compile_options import CostOptions, PlanOptions
from t10.planning.operator_frontiers import check_jobs, operator_frontiers
from t10.planning.operators import (
    Operator,
    operand_roles,
    operator_tensor_expr,
)
from t10.planning.planners.replicate import REPLICATE


@dataclass
class FusionCosts:
    """The plan search's cost model, asked whether an epilogue pays (frontiers cached by
    expression, as identical operators share them)."""

    chip: ChipSpec
    min_utilization: float
    precision: str
    partials: str
    placement: str
    jobs: int

    def search(self, operators: list[Operator]) -> None:
        """Search the operators' frontiers, side by side (they are kept for later calls)."""
        exprs = [operator_tensor_expr(o, self.precision, self.partials) for o in operators]
        operator_frontiers(self.chip, exprs, REPLICATE.name, self.min_utilization, self.jobs,
                           self.placement)

    def fastest(self, operator: Operator) -> tuple[TensorExpr, Plan, Estimate]:
        """The operator's fastest plan (the first of its spatial frontier)."""
        expr = operator_tensor_expr(operator, self.precision, self.partials)
        [frontier] = operator_frontiers(
            self.chip, [expr], REPLICATE.name, self.min_utilization, self.jobs, self.placement
        )
        return (expr, *frontier[0])

    def pays(self, contraction: Operation, reader: Operation) -> bool:
        """Whether the fused operator's fastest plan beats the two apart: their fastest plans
        plus the move of the contraction's result into the reader's layout. The reader's
        other inputs that are computed on chip are moved in either way; each side counts
        what its layout makes every core receive (a split reduction's replicas each receive a
        whole output tile's worth)."""
        f_expr, f_plan, fused = self.fastest(Operator(contraction, reader))
        c_expr, c_plan, c_est = self.fastest(Operator(contraction))
        e_expr, e_plan, e_est = self.fastest(Operator(reader))
        produced = contraction.results[0]
        inputs = list(reader.operands[: len(reader.operands) - 1])
        read_at = inputs.index(produced)
        e_layouts = input_layouts(e_expr, e_plan)
        move = transition_estimate(
            self.chip, output_layout(c_expr, c_plan), e_layouts[read_at], c_expr.elem_bytes
        )
        extra = [i for i, v in enumerate(inputs) if v is not produced]
        f_layouts = input_layouts(f_expr, f_plan)[f_expr.own_inputs :]
        roles = operand_roles(Operator(reader))
        loaded = {*roles.constant, *roles.host}  # placed in their reader's layout, unmoved
        moved = [(f, i) for f, i in enumerate(extra) if i not in loaded]
        fused_in = sum(self._receive(f_layouts[f], f_expr.elem_bytes) for f, _ in moved)
        apart_in = sum(self._receive(e_layouts[i], e_expr.elem_bytes) for _, i in moved)
        return fused.cycles + fused_in < c_est.cycles + e_est.cycles + move.cycles + apart_in

    def _receive(self, layout: Layout, elem_bytes: int) -> int:
        """Exchange cycles for every core to receive its buffer of `layout` (its senders
        unknown: the port time, exact on an all-to-all chip, `costs.exchange_floor`)."""
        return costs.exchange_floor(self.chip, layout.local_elements() * elem_bytes)


def candidate_reader(op: Operation) -> GenericOp | None:
    """The element-wise reader that may become `op`'s epilogue, if `op` is an unplanned
    contraction with one."""
    if not isinstance(op, GenericOp) or PLAN_ATTR in op.attributes or not op.results:
        return None
    uses = list(op.results[0].uses)
    if not uses:
        return None
    reader = uses[0].operation
    if not isinstance(reader, GenericOp) or PLAN_ATTR in reader.attributes:
        return None
    if EPILOGUE_ATTR in reader.attributes:
        return None
    if linalg_tensor_expr(op).kind is not ExprKind.CONTRACTION:
        return None
    if epilogue_problem(op, reader) is not None:
        return None
    return reader


@dataclass
class MarkEpilogue(RewritePattern):
    fusion_costs: FusionCosts | None
    """None: mark every candidate."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        reader = candidate_reader(op)
        if reader is None:
            return
        if self.fusion_costs is not None and not self.fusion_costs.pays(op, reader):
            return
        mark_epilogue(op, reader)
        rewriter.handle_operation_modification(op)
        rewriter.handle_operation_modification(reader)


@dataclass(frozen=True)
class T10FuseEpilogue(CostOptions, ModulePass):
    """Marks element-wise readers of contractions as their epilogues where the cost model
    (`CostOptions`: t10-plan-search's chip, utilization and precisions) says fusing pays."""

    name = "t10-fuse-epilogue"

    jobs: int = 0
    """Worker processes for the searches, as t10-plan-search's option."""
    always: bool = False
    """Mark every candidate, whether it pays or not."""

    def deciding_options(self) -> PlanOptions:
        """The options of the cost model that decides: the replicate planner's, whose spatial
        plans hold every operator's fastest plan."""
        return PlanOptions(**self.cost_options(), planner=REPLICATE.name)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fusion_costs = None
        if not self.always:
            chip = self.deciding_options().validate(self.name)
            check_jobs(self.name, self.jobs)
            fusion_costs = FusionCosts(
                chip, self.min_utilization, self.precision, self.partials, self.placement,
                self.jobs,
            )
            pairs = [(o, r) for o in op.walk() if (r := candidate_reader(o)) is not None]
            fusion_costs.search(
                [Operator(c, r) for c, r in pairs]
                + [Operator(c) for c, _ in pairs]
                + [Operator(r) for _, r in pairs]
            )
        walker = PatternRewriteWalker(Located(MarkEpilogue(fusion_costs)), apply_recursively=False)
        walker.rewrite_module(op)
