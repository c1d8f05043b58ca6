"""The plan search's attributes on the IR: a pinned plan read (`pinned_plan`); the chosen
plans, their estimates and the moves around them written (`record_plan` and the others)."""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.dialects.builtin import IntAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation

from t10.common.attr_names import (
    AHEAD_ATTR,
    COLD_ATTR,
    ESTIMATE_ATTR,
    GATHER_ATTR,
    LOAD_ATTR,
    OFFCHIP_ATTR,
    PLAN_ATTR,
    RELAYOUT_ATTR,
    REUSED_ATTR,
)
from t10.common.plans import Estimate, Plan
from t10.common.tensor_expr import op_name
from t10.common.weights import cold_attr
from t10.errors import T10Error
from t10.planning.dataflow import is_returned
from t10.t10_dialects.rtensor import EstimateAttr, GatherOp, PlanAttr, ViewOp


def estimate_attr(est: Estimate) -> EstimateAttr:
    return EstimateAttr(
        IntAttr(est.cycles),
        IntAttr(est.compute_cycles),
        IntAttr(est.exchange_cycles),
        IntAttr(est.sync_cycles),
        IntAttr(est.sram_bytes),
    )


def pinned_plan(op: Operation) -> Plan | None:
    attr = op.attributes.get(PLAN_ATTR)
    if attr is None:
        return None
    if not isinstance(attr, PlanAttr):
        raise T10Error(
            f"operator '{op_name(op)}': attribute '{PLAN_ATTR}' must be an #rtensor.plan<...>, "
            f"got {attr}"
        )
    return attr.to_plan()


def record_plan(
    generic: Operation, plan: Plan, estimate: Estimate, moves: Mapping[str, Estimate | None]
) -> None:
    """Writes `plan` and its `estimate` on `generic`, with each move's estimate under its
    attribute name (removed where None), and no reused inputs, cold or off-chip weights."""
    generic.attributes[PLAN_ATTR] = PlanAttr.from_plan(plan)
    generic.attributes[ESTIMATE_ATTR] = estimate_attr(estimate)
    for key in (REUSED_ATTR, COLD_ATTR, OFFCHIP_ATTR, AHEAD_ATTR, LOAD_ATTR):
        generic.attributes.pop(key, None)
    for name, move in moves.items():
        generic.attributes.pop(name, None)
        if move is not None:
            generic.attributes[name] = estimate_attr(move)


def record_loads(generic: Operation, offchip: tuple[int, ...], ahead: int, wait: int) -> None:
    """Writes the weights `generic` keeps off chip, how many operators ahead they start
    loading (when any) and the estimated wait for them (when any) (`t10.common.weights`)."""
    generic.attributes[OFFCHIP_ATTR] = cold_attr(offchip)
    if ahead:
        generic.attributes[AHEAD_ATTR] = IntegerAttr(ahead, i64)
    if wait:
        generic.attributes[LOAD_ATTR] = IntegerAttr(wait, i64)


def record_returned_views(module: ModuleOp, moves: list[Estimate]) -> None:
    """Writes each move that makes a view returned from the function (`model_liveness`
    order) as `t10.relayout` on that view."""
    views = [o for o in module.walk() if isinstance(o, ViewOp) and is_returned(o.result)]
    for view, move in zip(views, moves, strict=True):
        view.attributes[RELAYOUT_ATTR] = estimate_attr(move)


def record_made_gathers(gathers: list[GatherOp], moves: list[Estimate | None]) -> None:
    """Writes each move's estimate as `t10.gather` on its gather (none where it moves
    nothing)."""
    for gather, move in zip(gathers, moves, strict=True):
        gather.attributes.pop(GATHER_ATTR, None)
        if move is not None:
            gather.attributes[GATHER_ATTR] = estimate_attr(move)

