"""Cold weights (the T10 paper's idle layouts): an operator's weights may stay in a compact
*home* while other operators run and be expanded into its plan's layouts just before it
runs. Each frontier plan of an operator with weights gets a cold twin: fewer resident bytes
(the homes, `host_layout` over the plan's cores, instead of the plan's layouts, which may
replicate), the expanded copies transient, and a bound of the expansion's exchange added to
its cycles (the chosen twins' expansions are recorded exactly, `expand_estimate`).
The memory reconciliation then trades over both, per operator, like over any two plans.
"""

from __future__ import annotations

from dataclasses import replace

from t10.common.chip_spec import ChipSpec
from t10.common.move_costs import quick_cycles, transition_estimate
from t10.common.plans import Estimate, Layout, Plan, host_layout, input_layouts
from t10.common.tensor_expr import TensorExpr
from t10.planning.layout_transitions import summed
from t10.planning.memory_reconciliation import Operands, OpOptions, PlanPoint, plan_point


def _homes(expr: TensorExpr, plan: Plan, cold: tuple[int, ...]) -> list[tuple[Layout, Layout]]:
    """(home, layout in `plan`) of each `cold` input."""
    layouts = input_layouts(expr, plan)
    return [(host_layout(expr.inputs[i].shape, layouts[i].cores), layouts[i]) for i in cold]


def expand_bound(chip: ChipSpec, expr: TensorExpr, plan: Plan, cold: tuple[int, ...]) -> int:
    """A bound of the expansion's cycles while choosing (`quick_cycles`, as for transitions:
    the exchange geometry of every plan of every operator would take seconds)."""
    homes = _homes(expr, plan, cold)
    return sum(quick_cycles(chip, home, dst, expr.elem_bytes) for home, dst in homes)


def expand_estimate(
    chip: ChipSpec, expr: TensorExpr, plan: Plan, cold: tuple[int, ...]
) -> Estimate | None:
    """The relayouts of the `cold` inputs from their homes into `plan`'s layouts, as the
    simulator counts them (None: no move, each home is already its layout)."""
    moves = [
        transition_estimate(chip, home, dst, expr.elem_bytes)
        for home, dst in _homes(expr, plan, cold)
    ]
    return summed([m for m in moves if m.cycles])


def cold_point(
    chip: ChipSpec, expr: TensorExpr, plan: Plan, est: Estimate, operands: Operands
) -> PlanPoint:
    """`plan` with every weight of the operator cold."""
    cold = tuple(operands.constant)
    return plan_point(expr, plan, est, operands, cold, expand_bound(chip, expr, plan, cold))


def with_cold_weights(chip: ChipSpec, expr: TensorExpr, options: OpOptions) -> OpOptions:
    """`options` with the cold twin of every plan whose weights take more bytes resident than
    their homes, fastest first (a hot plan before its cold twin); pinned options as they are."""
    if options.pinned or not options.operands.constant:
        return options
    twins = [
        twin
        for point in options.points
        if (twin := cold_point(chip, expr, point.plan, point.estimate, options.operands))
        .resident_bytes < point.resident_bytes
    ]
    if not twins:
        return options
    points = sorted((*options.points, *twins), key=lambda p: p.cycles)
    return replace(options, points=tuple(points))
