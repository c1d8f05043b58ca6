"""An operator's alternatives in a planned model: every plan of its Pareto frontier (bytes per
core against cycles, hot; with their cold twins when the chosen plan keeps its weights cold)
put in its place with every other operator's plan as chosen, and the model measured with it:
its peak bytes per core (does it fit?) and its cycles (the operators', and the moves into the
operator and its readers; `t10 explain` prints them).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, StringAttr

from t10.common.attr_names import (
    CHIP_ATTR,
    COLD_ATTR,
    PARTIALS_ATTR,
    PLAN_ATTR,
    PLANNER_ATTR,
    PRECISION_ATTR,
)
from t10.common.locations import onnx_nodes
from t10.common.plans import Estimate, Layout, input_layouts, output_layout
from t10.common.tensor_expr import op_name
from t10.errors import T10Error
from t10.planning.cold_weights import with_cold_weights
from t10.planning.compile_options import PlanOptions
from t10.planning.dataflow import dataflow_edges, model_liveness
from t10.planning.memory_reconciliation import PlanPoint, model_bytes
from t10.planning.model_search import ModelSearch, SharedSearch, with_shared_moves
from t10.planning.operators import Operator, planned_operators
from t10.planning.planners import planner, planners

WHAT = "operator_alternatives"


@dataclass(frozen=True)
class Alternative:
    """One plan of the operator, with the model measured around it."""

    point: PlanPoint
    model_bytes: int
    """The model's peak bytes per core with this plan, every other as chosen."""
    model_cycles: int
    """The model's cycles with this plan: operators, relayouts and gathers (moves an
    operator shares with another counted for each)."""
    chosen: bool


@dataclass(frozen=True)
class OperatorAlternatives:
    """An operator's plans, each with the model measured around it, and the chosen plan's
    layouts and moves."""

    operator: str
    """Its `t10.name`."""
    nodes: tuple[str, ...]
    """The ONNX nodes it computes."""
    alternatives: tuple[Alternative, ...]
    """The frontier, fastest (and fattest) plan first, and the chosen plan."""
    layouts: tuple[tuple[str, Layout], ...]
    """The chosen plan's tensors: its inputs (`input k`, then `epilogue input k`), then its
    output (`output`), each with its layout."""
    elem_bytes: int
    """The bytes of one element of its tensors."""
    moves_in: Estimate | None
    """The moves into it (None: none)."""
    moves_out: tuple[tuple[str, Estimate | None], ...]
    """Each reader of its output, and the moves into that reader (all its inputs')."""

    @property
    def chosen(self) -> Alternative:
        return next(a for a in self.alternatives if a.chosen)


def operator_alternatives(module: ModuleOp, options: PlanOptions, op: str) -> OperatorAlternatives:
    """The alternatives of operator `op` (its `t10.name`, or the name of an ONNX node it
    computes) in `module`, planned under `options` (as `plan_module` leaves it:
    `compile_model(..., emit="linalg")`) by a planner that trades plans between operators.
    The chosen plan is the one of least model cycles among those that fit, as far as the
    search found it."""
    chip = options.validate(WHAT)
    if planner(options.planner).search is None:
        traded = ", ".join(p.name for p in planners() if p.search is not None)
        raise T10Error(f"{WHAT}: planner {options.planner} plans each operator on its own; "
                       f"alternatives are measured for the planners that trade plans ({traded})")
    _check_planned(module, options)
    operators = planned_operators(module)
    target = _find(operators, op)
    search = ModelSearch(options, reuse=False)
    exprs = [search.expr(o) for o in operators]
    shared = SharedSearch()
    # every operator's plan is pinned now: its options are the chosen point
    chosen = [
        search.operator_options(chip, o, e, shared).points[0]
        for o, e in zip(operators, exprs, strict=True)
    ]
    generic = operators[target].generic
    pins = {k: generic.attributes.pop(k) for k in (PLAN_ATTR, COLD_ATTR) if k in generic.attributes}
    try:
        frontier = search.operator_options(chip, operators[target], exprs[target], shared)
    finally:
        generic.attributes.update(pins)
    if chosen[target].cold:
        frontier = with_cold_weights(chip, exprs[target], frontier)
    points = list(frontier.points)
    if chosen[target] not in points:
        points.append(chosen[target])
    liveness = model_liveness(module, operators, search.elem_bytes())
    edges = dataflow_edges(operators)
    readers = sorted({e.consumer for e in edges if e.producer == target})
    base = with_shared_moves(chip, exprs, chosen, edges, liveness, False).costed()
    alternatives = []
    for point in points:
        placed = [*chosen[:target], point, *chosen[target + 1 :]]
        result = with_shared_moves(chip, exprs, placed, edges, liveness, False)
        # the moves into the other operators are the base's: neither their producers' plans
        # nor the moves they share changed
        changed = {k for k in {*base.reused, *result.reused}
                   if base.reused.get(k) != result.reused.get(k)}
        kept = set(base.known) - {target, *readers} - changed
        result.known.update({k: base.known[k] for k in kept})
        alternatives.append(
            Alternative(
                point,
                model_bytes(placed, result.liveness),
                result.total_cycles,
                point == chosen[target],
            )
        )
    expr, plan = exprs[target], chosen[target].plan
    names = [f"input {k}" for k in range(expr.own_inputs)]
    names += [f"epilogue input {k}" for k in range(len(expr.inputs) - expr.own_inputs)]
    layouts = list(zip(names, input_layouts(expr, plan), strict=True))
    layouts.append(("output", output_layout(expr, plan)))
    return OperatorAlternatives(
        operator=op_name(generic),
        nodes=tuple(n for g in operators[target].ops() for n in onnx_nodes(g)),
        alternatives=tuple(alternatives),
        layouts=tuple(layouts),
        elem_bytes=expr.elem_bytes,
        moves_in=base.transitions(target)[0],
        moves_out=tuple((op_name(operators[i].generic), base.transitions(i)[0]) for i in readers),
    )


def _check_planned(module: ModuleOp, options: PlanOptions) -> None:
    """`module` was planned for the chip, with the planner and the precisions of `options`
    (the alternatives are measured with those)."""
    recorded_options = (
        (CHIP_ATTR, options.chip),
        (PLANNER_ATTR, options.planner),
        (PRECISION_ATTR, options.precision),
        (PARTIALS_ATTR, options.partials),
    )
    for attr, value in recorded_options:
        recorded = module.attributes.get(attr)
        if not isinstance(recorded, StringAttr):
            raise T10Error(f"{WHAT}: the module is not planned (no '{attr}'): plan it first "
                           "(plan_module, or compile_model(..., emit=\"linalg\"))")
        if recorded.data != value:
            raise T10Error(f"{WHAT}: the module was planned with {attr} = {recorded.data}, "
                           f"not {value} as the options say")


def _find(operators: list[Operator], name: str) -> int:
    for i, o in enumerate(operators):
        if op_name(o.generic) == name or any(name in onnx_nodes(g) for g in o.ops()):
            return i
    known = ", ".join(op_name(o.generic) for o in operators)
    raise T10Error(f"no operator is named '{name}' or made from an ONNX node of that name "
                   f"(operators: {known})")
