"""t10-plan-search: choose a compute-shift plan for every `linalg.generic` of a module.

An analysis pass: it changes no operation, it only writes attributes.

- on every generic: `t10.plan = #rtensor.plan<...>` (the chosen plan) and
  `t10.estimate = #rtensor.estimate<...>` (its cycles and bytes per core);
- on a generic whose inputs arrive in another layout than their producer's:
  `t10.relayout = #rtensor.estimate<...>`, the layout transitions into it;
- on a generic that reads a gather of runtime ids (`rtensor.gather`, not planned itself):
  `t10.gather = #rtensor.estimate<...>`, the gather into its layout for uniformly drawn ids
  (the ids are unknown at compile time: `layout_transitions.gather_estimate`);
- on the module: `t10.chip` (the `chip` option as given), `t10.planner` and
  `t10.precision`.

`precision=fp16` plans for fp16 storage: every buffer and exchange takes 2 bytes per element
and matmuls run at the fp16 rate; partial sums stay fp32 (`t10.passes.plan.rounds_partials`).
The linalg IR keeps its f32 types (the host's); convert-linalg-to-rtensor reads
`t10.precision` and gives the distributed tensors f16 elements.

Per operator it builds the Pareto frontier of plans (`operator_frontier`), then picks one plan
per operator so that the whole model fits the chip's SRAM (`choose_plans`): weights (inputs
defined by `arith.constant`) stay resident, everything else is live only while its operator
runs. A generic that already carries `t10.plan` is *pinned*: its plan is validated and kept,
only its estimate is recomputed, and the memory reconciliation never moves it. Finally a
sweep re-chooses plans to avoid costly layout transitions between producers and consumers
(`reduce_transitions`).

    xdsl-opt model.mlir -p 't10-plan-search{chip=ipu-mk2 planner=t10 min-utilization=0.5
                                            precision=fp32}'
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, linalg
from xdsl.dialects.builtin import IntAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from t10.errors import T10Error
from t10.passes.layout_transitions import (
    Edge,
    GatherSpec,
    gathers_into,
    reduce_transitions,
    transitions_into,
)
from t10.passes.memory_reconciliation import OpOptions, choose_plans, op_options, pinned_options
from t10.passes.plan import Estimate, Plan
from t10.passes.plan_search import PLANNERS, operator_frontier
from t10.passes.tensor_expr import (
    PRECISION_ATTR,
    TensorExpr,
    element_bytes,
    linalg_tensor_expr,
    op_name,
    precision_type,
)
from t10.sim.chip_spec import ChipSpec, load_chip
from t10.t10_dialects.rtensor import EstimateAttr, GatherOp, PlanAttr, through_views

PLAN_ATTR = "t10.plan"
ESTIMATE_ATTR = "t10.estimate"
CHIP_ATTR = "t10.chip"
GENERIC = "linalg.generic"
"""Matched by name: `linalg.GenericOp` is deprecated at the package level in xDSL 0.75 and
the project bans importing it from `xdsl.dialects.linalg.ops`."""
PLANNER_ATTR = "t10.planner"


RELAYOUT_ATTR = "t10.relayout"
GATHER_ATTR = "t10.gather"


def estimate_attr(est: Estimate) -> EstimateAttr:
    return EstimateAttr(
        IntAttr(est.cycles),
        IntAttr(est.compute_cycles),
        IntAttr(est.exchange_cycles),
        IntAttr(est.sync_cycles),
        IntAttr(est.sram_bytes),
    )


def constant_inputs(op: linalg.GenericOp) -> tuple[int, ...]:
    """Indices of the inputs defined by `arith.constant` (weights: resident on chip)."""
    return tuple(i for i, v in enumerate(op.inputs) if isinstance(v.owner, arith.ConstantOp))


def pinned_plan(op: linalg.GenericOp) -> Plan | None:
    attr = op.attributes.get(PLAN_ATTR)
    if attr is None:
        return None
    if not isinstance(attr, PlanAttr):
        raise T10Error(
            f"operator '{op_name(op)}': attribute '{PLAN_ATTR}' must be an #rtensor.plan<...>, "
            f"got {attr}"
        )
    return attr.to_plan()


@dataclass(frozen=True)
class T10PlanSearch(ModulePass):
    """Intra-operator Pareto search and inter-operator memory reconciliation (T10)."""

    name = "t10-plan-search"

    chip: str = "ipu-mk2"
    """A built-in chip name or a chip JSON file."""
    planner: str = "t10"
    """`t10` (rotating tensors) or `replicate` (spatial partitions only)."""
    min_utilization: float = 0.5
    """Plans must be able to use at least this fraction of the cores an operator can use."""
    precision: str = "fp32"
    """Storage precision: `fp32` or `fp16` (fp16 storage, fp32 accumulation)."""

    def check_options(self) -> None:
        precision_type(self.precision, "t10-plan-search")
        if self.planner not in PLANNERS:
            raise T10Error(
                f"t10-plan-search: unknown planner '{self.planner}'; choose one of "
                f"{', '.join(PLANNERS)}"
            )
        if not 0.0 <= self.min_utilization <= 1.0:
            raise T10Error(
                f"t10-plan-search: min-utilization must be between 0 and 1, "
                f"got {self.min_utilization}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        chip = load_chip(self.chip)
        generics = [o for o in op.walk() if o.name == GENERIC]
        frontiers: dict[TensorExpr, list] = {}
        exprs = [self.tensor_expr(g) for g in generics]
        options = [
            self.options(chip, g, e, frontiers) for g, e in zip(generics, exprs, strict=True)
        ]
        edges = dataflow_edges(generics)
        chosen = choose_plans(chip, options, self.planner)
        chosen = reduce_transitions(chip, exprs, options, chosen, edges)
        plans = [point.plan for point in chosen]
        for i, (generic, point) in enumerate(zip(generics, chosen, strict=True)):
            generic.attributes[PLAN_ATTR] = PlanAttr.from_plan(point.plan)
            generic.attributes[ESTIMATE_ATTR] = estimate_attr(point.estimate)
            transitions = transitions_into(chip, exprs, plans, edges, i)
            if transitions is not None:
                generic.attributes[RELAYOUT_ATTR] = estimate_attr(transitions)
            else:
                generic.attributes.pop(RELAYOUT_ATTR, None)
            gathers = gathers_into(chip, exprs, plans, edges, i)
            if gathers is not None:
                generic.attributes[GATHER_ATTR] = estimate_attr(gathers)
            else:
                generic.attributes.pop(GATHER_ATTR, None)
        op.attributes[CHIP_ATTR] = StringAttr(self.chip)
        op.attributes[PLANNER_ATTR] = StringAttr(self.planner)
        op.attributes[PRECISION_ATTR] = StringAttr(self.precision)

    def tensor_expr(self, op: linalg.GenericOp) -> TensorExpr:
        """The operator with the storage precision's element size."""
        elem = precision_type(self.precision, "t10-plan-search")
        return dataclasses.replace(
            linalg_tensor_expr(op), elem_bytes=element_bytes(elem, "t10-plan-search")
        )

    def options(
        self,
        chip: ChipSpec,
        op: linalg.GenericOp,
        expr: TensorExpr,
        frontiers: dict[TensorExpr, list],
    ) -> OpOptions:
        """The plans `op` may take; frontiers are shared between identical operators."""
        consts = constant_inputs(op)
        plan = pinned_plan(op)
        if plan is not None:
            return pinned_options(chip, expr, plan, consts)
        key = dataclasses.replace(expr, name="")
        if key not in frontiers:
            frontiers[key] = operator_frontier(chip, expr, self.planner, self.min_utilization)
        return op_options(expr, frontiers[key], consts)


def dataflow_edges(generics: list[Operation]) -> list[Edge]:
    """Which generic's output feeds which input of which generic, through which views;
    which inputs view a host value (a function argument placed on chip to be viewed); and
    which inputs are gathers of runtime ids."""
    index = {id(g): i for i, g in enumerate(generics)}
    edges = []
    for i, generic in enumerate(generics):
        for k, value in enumerate(generic.operands[: len(generic.operands) - 1]):
            source, view = through_views(value)
            producer = index.get(id(source.owner))
            if isinstance(source.owner, GatherOp):
                table, ids, _ = source.owner.tensors()
                spec = GatherSpec(
                    source.owner.axis.value.data, table.get_shape(), ids.get_shape()
                )
                edges.append(Edge(None, i, k, gather=spec))
            elif producer is not None:
                edges.append(Edge(producer, i, k, view))
            elif view is not None:
                assert isinstance(source.type, TensorType)
                edges.append(Edge(None, i, k, view, source.type.get_shape()))
    return edges
