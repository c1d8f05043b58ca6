"""t10-plan-search: choose a compute-shift plan for every `linalg.generic` of a module.

An analysis pass: it changes no operation, it only writes attributes.

- on every generic: `t10.plan = #rtensor.plan<...>` (the chosen plan) and
  `t10.estimate = #rtensor.estimate<...>` (its cycles and bytes per core);
- on a generic whose inputs arrive in another layout than their producer's:
  `t10.relayout = #rtensor.estimate<...>`, the layout transitions into it;
- on an `rtensor.view` returned from the function: `t10.relayout = #rtensor.estimate<...>`,
  the move that makes it on chip (`layout_transitions.returned_view_moves`);
- on a generic whose inputs reuse the move an earlier generic makes of the same tensor into
  the same layout (`layout_transitions.SharedMove`, kept while the model still fits):
  `t10.reused_inputs = array<i64: ...>`, those inputs (not in its `t10.relayout`);
- on a generic whose weights stay cold (`t10.planning.cold_weights`: kept in a compact home,
  expanded into the plan's layouts each time it runs): `t10.cold = array<i64: ...>`, those
  inputs (their expansion is part of its `t10.relayout`);
- on a generic that reads a gather of runtime ids (`rtensor.gather`, not planned itself):
  `t10.gather = #rtensor.estimate<...>`, the gather into its layout for uniformly drawn ids
  (the ids are unknown at compile time: `t10.common.move_costs.gather_estimate`);
- on an `rtensor.gather` made on chip for no operator (returned from the function, or read
  by another gather): `t10.gather = #rtensor.estimate<...>`, its making
  (`layout_transitions.made_gather_moves`);
- on the module: `t10.chip` (the `chip` option as given), `t10.planner`, `t10.precision`,
  `t10.partials` and `t10.model_bytes`, the bytes per core the plans need at their peak (an
  upper bound of what the simulator measures).

`planner=vgm` (Roller-style virtual global memory, `t10.planning.vgm_plans`) keeps every tensor
in a home over all the chip's cores (`t10.home_cores` on the module): each generic's
`t10.relayout` is then its loads from the homes, and `t10.store = #rtensor.estimate<...>`
says that it stores its output into its home (the store's cost); every operator's plan is
its own cheapest load + compute + store within the SRAM beside the homes (no `search`, no
transition sweep, no shared moves; epilogues stay as marked).

`precision=fp16` plans for fp16 storage: every buffer and exchange takes 2 bytes per element
and matmuls run at the fp16 rate. Partial sums that a plan carries across steps or cores are
fp32 by default (`partials=fp32`: accumulated apart and rounded once,
`t10.common.plans.rounds_partials`); `partials=fp16` accumulates them in the fp16 output
itself (half the bytes moved and held, no rounding pass, less accurate).
The linalg IR keeps its f32 types (the host's); convert-linalg-to-rtensor reads
`t10.precision` and gives the distributed tensors f16 elements.

Per operator it builds the Pareto frontier of plans (`operator_frontier`), then picks one plan
per operator so that the whole model fits the chip's SRAM (`search`: T10's greedy
`choose_plans`, the exact `exact_plans`, or `fastest_plans`, every operator's fastest plan on
its own, the `replicate` planner's default, whose plans may also take at most `temporaries`
of a core's SRAM while they run, beyond their weights): weights (inputs
defined by `arith.constant`) stay resident, an operator's output lives until its last reader,
function arguments from the program's start until their reader (`model_liveness`). A generic
that already carries `t10.plan` is *pinned*: its plan is validated and kept,
only its estimate is recomputed, and the memory reconciliation never moves it. Finally a
sweep re-chooses plans to avoid costly layout transitions between producers and consumers
(`reduce_transitions`); with `greedy` or `exact` it also starts from the greedy's choice
among spatial plans only (`spatial_options`) and keeps whichever total is lower.

Epilogues marked by `t10-fuse-epilogue` are planned with their contraction (`Operator`).
When memory binds (every operator's fastest plan together would not fit) or the model does
not fit with them, the search also plans every generic on its own and keeps that if it is
faster (or fits): it then removes the `t10.epilogue` marks (and the contractions' `+E`
names), so the IR shows what was decided.

    xdsl-opt model.mlir -p 't10-plan-search{chip=ipu-mk2 planner=t10 min-utilization=0.5
                                            precision=fp32 partials=fp32 search=greedy}'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from t10.common.attr_names import (
    CHIP_ATTR,
    COLD_ATTR,
    ESTIMATE_ATTR,
    GATHER_ATTR,
    MODEL_BYTES_ATTR,
    PARTIALS_ATTR,
    PLAN_ATTR,
    PLANNER_ATTR,
    PRECISION_ATTR,
    RELAYOUT_ATTR,
    REUSED_ATTR,
    STORE_ATTR,
)
from t10.common.chip_spec import ChipSpec
from t10.common.epilogues import (
    unmark_epilogue,
)
from t10.common.move_costs import IDS_BYTES, GatherSpec
from t10.common.plans import Estimate, Plan
from t10.common.tensor_expr import (
    TensorExpr,
    element_bytes,
    op_name,
    precision_type,
)
from t10.common.weights import cold_attr, cold_inputs
from t10.errors import DoesNotFit, T10Error
from t10.planning.cold_weights import cold_point, expand_estimate, with_cold_weights
from t10.planning.compile_options import PlanOptions, check_choice_options
from t10.planning.exact_reconciliation import exact_plans
from t10.planning.forked import call_beside
from t10.planning.layout_transitions import (
    Edge,
    SharedMove,
    gathers_into,
    made_gather_moves,
    reduce_transitions,
    returned_view_moves,
    shared_moves,
    summed,
    transitions_into,
)
from t10.planning.memory_reconciliation import (
    CLOSE_ENOUGH,
    Liveness,
    Operands,
    OpOptions,
    PlanPoint,
    ReturnedView,
    choose_plans,
    fastest_plans,
    model_bytes,
    op_options,
    pinned_options,
    within_share,
)
from t10.planning.operator_frontiers import check_jobs, operator_frontiers
from t10.planning.operators import (
    Operator,
    check_named_ops,
    check_not_lowered,
    operand_roles,
    operator_tensor_expr,
    planned_operators,
)
from t10.planning.plan_search import operator_frontier
from t10.planning.planned_record import model_bound_of, record_planned_ops
from t10.planning.planners import planner
from t10.planning.vgm_plans import (
    HomeLiveness,
    VgmOperator,
    choose_vgm,
    gather_spec,
    host_home_bytes,
    loads_and_gathers,
    vgm_model_bytes,
)
from t10.t10_dialects.rtensor import (
    EstimateAttr,
    GatherOp,
    PlanAttr,
    ViewOp,
    tensor_type,
    through_views,
)


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


@dataclass
class SearchResult:
    """The plans chosen for a list of operators, with what recording them needs."""

    chip: ChipSpec
    exprs: list[TensorExpr]
    chosen: list[PlanPoint]
    edges: list[Edge]
    liveness: Liveness
    reused: dict[int, list[int]]
    """Per operator, the inputs whose move an earlier operator makes (`SharedMove`)."""
    memory_binds: bool
    """Whether the SRAM ruled out a faster choice: every operator's fastest plan together, a
    plan with cheaper transitions, or a shared move."""

    known: dict[int, tuple[Estimate | None, Estimate | None]] = field(
        default_factory=dict, init=False, repr=False
    )
    """`transitions` already counted."""

    @cached_property
    def returned_moves(self) -> list[Estimate]:
        """The moves that make the views returned from the function (`returned_view_moves`),
        in the order of `liveness.returned`."""
        plans = [point.plan for point in self.chosen]
        return returned_view_moves(self.chip, self.liveness, self.exprs, plans)

    def transitions(self, i: int) -> tuple[Estimate | None, Estimate | None]:
        """The relayouts (with the expansion of its cold weights) and the gathers into
        operator `i` (None: there are none)."""
        if i not in self.known:
            plans = [point.plan for point in self.chosen]
            point = self.chosen[i]
            moves = transitions_into(
                self.chip, self.exprs, plans, self.edges, i, self.reused.get(i, ())
            )
            expand = expand_estimate(self.chip, self.exprs[i], point.plan, point.cold)
            self.known[i] = (
                summed([m for m in (moves, expand) if m is not None]),
                gathers_into(self.chip, self.exprs, plans, self.edges, i),
            )
        return self.known[i]

    def costed(self) -> SearchResult:
        """This result with every transition counted (`transitions`)."""
        self.total_cycles  # noqa: B018 (counts and keeps them)
        return self

    @property
    def total_cycles(self) -> int:
        """The model's estimated cycles: operators, relayouts, gathers and the moves that
        make returned views."""
        total = sum(point.estimate.cycles for point in self.chosen)
        total += sum(move.cycles for move in self.returned_moves)
        for i in range(len(self.chosen)):
            total += sum(e.cycles for e in self.transitions(i) if e is not None)
        return total

    def record(self, module: ModuleOp, operators: list[Operator]) -> None:
        """Writes the plans, estimates, relayouts, gathers and reused inputs on the
        generics of `operators` (those the plans were chosen for), and the moves that make
        the returned views on their `rtensor.view` ops."""
        record_returned_views(module, self.returned_moves)
        for i, (operator, point) in enumerate(zip(operators, self.chosen, strict=True)):
            relayouts, gathers = self.transitions(i)
            moves = {RELAYOUT_ATTR: relayouts, GATHER_ATTR: gathers}
            record_plan(operator.generic, point.plan, point.estimate, moves)
            if point.cold:
                operator.generic.attributes[COLD_ATTR] = cold_attr(point.cold)
            if i in self.reused:
                reused = DenseArrayBase.from_list(i64, sorted(self.reused[i]))
                operator.generic.attributes[REUSED_ATTR] = reused


def record_returned_views(module: ModuleOp, moves: list[Estimate]) -> None:
    """Writes each move that makes a view returned from the function (`model_liveness`
    order) as `t10.relayout` on that view."""
    views = [o for o in module.walk() if isinstance(o, ViewOp) and _returned(o.result)]
    for view, move in zip(views, moves, strict=True):
        view.attributes[RELAYOUT_ATTR] = estimate_attr(move)


def made_gathers(
    module: ModuleOp, operators: list[Operator]
) -> tuple[list[GatherOp], list[GatherSpec]]:
    """The gathers of runtime ids made on chip for no operator (`_made_for_no_operator`),
    with their specs; viewed tables and ids are placed by the first gather that reads them,
    the operators' gathers first (as convert-linalg-to-rtensor makes them)."""
    index = operator_index(operators)

    def producer_of(value: SSAValue) -> int | None:
        return index.get(id(value.owner))

    placed: set[int] = set()
    for operator in operators:
        for value in operator.inputs:
            source, _ = through_views(value)
            if isinstance(source.owner, GatherOp):
                gather_spec(source.owner, placed, producer_of)
    gathers = [
        o for o in module.walk()
        if isinstance(o, GatherOp) and _made_for_no_operator(o.result)
    ]
    return gathers, [gather_spec(o, placed, producer_of) for o in gathers]


def _made_for_no_operator(value: SSAValue) -> bool:
    """Whether `value` (a gather's result) is read, directly or through views, by something
    other than a generic: returned from the function, or read by another gather."""
    return any(
        _made_for_no_operator(use.operation.results[0])
        if isinstance(use.operation, ViewOp)
        else not isinstance(use.operation, GenericOp)
        for use in value.uses
    )


def record_made_gathers(gathers: list[GatherOp], moves: list[Estimate | None]) -> None:
    """Writes each move's estimate as `t10.gather` on its gather (none where it moves
    nothing)."""
    for gather, move in zip(gathers, moves, strict=True):
        gather.attributes.pop(GATHER_ATTR, None)
        if move is not None:
            gather.attributes[GATHER_ATTR] = estimate_attr(move)


def record_plan(
    generic: Operation, plan: Plan, estimate: Estimate, moves: Mapping[str, Estimate | None]
) -> None:
    """Writes `plan` and its `estimate` on `generic`, with each move's estimate under its
    attribute name (removed where None), and no reused inputs or cold weights."""
    generic.attributes[PLAN_ATTR] = PlanAttr.from_plan(plan)
    generic.attributes[ESTIMATE_ATTR] = estimate_attr(estimate)
    generic.attributes.pop(REUSED_ATTR, None)
    generic.attributes.pop(COLD_ATTR, None)
    for name, move in moves.items():
        generic.attributes.pop(name, None)
        if move is not None:
            generic.attributes[name] = estimate_attr(move)


@dataclass(frozen=True)
class T10PlanSearch(PlanOptions, ModulePass):
    """Intra-operator Pareto search and inter-operator memory reconciliation (T10); its
    options are `PlanOptions`' and the two below."""

    name = "t10-plan-search"

    reuse: bool = True
    """Identical operators share one Pareto frontier, searched once (docs/DESIGN.md, "Reuse
    contract"). Off: every operator's frontier is searched on its own, which gives the same
    plans, slower (tests/unit/test_model_scaling.py compares the two)."""
    jobs: int = 0
    """Worker processes that search the big operators' frontiers side by side (with
    `reuse`), and plan the operators apart from their epilogues beside those with them:
    0 = one per CPU this process may use, 1 = all in this process. The plans are the same
    whatever the count (`t10.planning.operator_frontiers`, `t10.planning.forked`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        chip = self.validate(self.name)
        check_jobs(self.name, self.jobs)
        check_named_ops(op, self.name)
        check_not_lowered(op, self.name)
        bound = model_bound_of(chip, op, self.precision, self.partials)
        peak = planner(self.planner).plan(self, chip, op)
        op.attributes[CHIP_ATTR] = StringAttr(self.chip)
        op.attributes[PLANNER_ATTR] = StringAttr(self.planner)
        op.attributes[PRECISION_ATTR] = StringAttr(self.precision)
        op.attributes[PARTIALS_ATTR] = StringAttr(self.partials)
        op.attributes[MODEL_BYTES_ATTR] = IntegerAttr(peak, 64)
        record_planned_ops(chip, op, bound)

    def plan_model(self, chip: ChipSpec, op: ModuleOp) -> int:
        """Plans every operator (`plan_operators`, with the epilogues and, when memory binds,
        without), records them and returns the model's bytes per core. A pinned plan is the
        plan of its operator with its epilogue: with one, the epilogues stay (the planners
        with a search: `Planner.plan`)."""
        frontiers = SharedSearch()
        operators = planned_operators(op)
        fused = [o for o in operators if o.epilogue is not None]
        if any(pinned_plan(o.generic) is not None for o in fused):
            fused = []
        apart = planned_operators(op, epilogues=False) if fused else []
        if self.reuse:
            # the operators apart from their epilogues are planned too when memory binds:
            # searched side by side with the others, they cost little time when unused
            self.search_shared(chip, operators + apart, frontiers)
        # planned beside the operators with epilogues (a forked child, when there is a CPU
        # for it), its result asked for only if memory binds
        unfused = (
            call_beside(lambda: self.plan_operators(chip, op, apart, frontiers).costed(), self.jobs)
            if fused
            else None
        )
        result: SearchResult | None = None
        try:
            try:
                result = self.plan_operators(chip, op, operators, frontiers)
            except T10Error:
                if not fused:
                    raise
            if fused and (result is None or result.memory_binds):
                # the epilogues' inputs lie on every core that holds a tile: when memory
                # binds, the model may be faster (or only fit) with them as operators of
                # their own
                assert unfused is not None
                total = None if result is None else result.total_cycles  # while unfused runs
                alternative = unfused.result()
                if total is None or alternative.total_cycles < total:
                    for o in fused:
                        assert o.epilogue is not None
                        unmark_epilogue(o.generic, o.epilogue)
                    result, operators = alternative, apart
        finally:
            if unfused is not None:
                unfused.cancel()
        assert result is not None
        result.record(op, operators)
        plans = [point.plan for point in result.chosen]
        elem_bytes = element_bytes(precision_type(self.precision, self.name), self.name)
        gathers, specs = made_gathers(op, operators)
        moves = made_gather_moves(chip, specs, result.exprs, plans, elem_bytes)
        record_made_gathers(gathers, moves)
        return model_bytes(result.chosen, result.liveness)

    def plan_vgm(self, chip: ChipSpec, module: ModuleOp) -> int:
        """The `vgm` planner's (`t10.planning.planners.vgm`): every operator's plan on its own,
        loaded from and stored to homes over all the chip's cores (`t10.planning.vgm_plans`;
        epilogues stay as marked); records the plans and moves and returns the model's bytes
        per core."""
        frontiers = SharedSearch()
        operators = planned_operators(module)
        for o in operators:
            if COLD_ATTR in o.generic.attributes:
                raise T10Error(
                    f"operator '{op_name(o.generic)}': '{COLD_ATTR}' does not apply with "
                    "planner vgm, where every weight already lies in its home over all the "
                    "cores and is loaded each time its operator runs; remove the attribute"
                )
        if self.reuse:
            self.search_shared(chip, operators, frontiers)
        cores = chip.cores
        exprs = [operator_tensor_expr(o, self.precision, self.partials) for o in operators]
        elem_bytes = element_bytes(precision_type(self.precision, self.name), self.name)
        liveness = model_liveness(module, operators, elem_bytes)
        resident = host_home_bytes(operators, cores, elem_bytes)
        homes = HomeLiveness.of(
            exprs, liveness, cores, resident + liveness.program_long_bytes(cores)
        )
        placed: set[int] = set()  # viewed gather tables and ids, placed by their first reader
        ops = [
            VgmOperator(e, self.options(chip, o, e, frontiers), *loads_and_gathers(o, placed))
            for o, e in zip(operators, exprs, strict=True)
        ]
        chosen = choose_vgm(chip, ops, homes, cores)
        for operator, point in zip(operators, chosen, strict=True):
            moves = {
                RELAYOUT_ATTR: point.loads, GATHER_ATTR: point.gathers, STORE_ATTR: point.store
            }
            record_plan(operator.generic, point.plan, point.estimate, moves)
        plans = [point.plan for point in chosen]
        returned = returned_view_moves(chip, liveness, exprs, plans, homes=cores)
        record_returned_views(module, returned)
        gathers, specs = made_gathers(module, operators)
        moves = made_gather_moves(chip, specs, exprs, plans, elem_bytes, homes=cores)
        record_made_gathers(gathers, moves)
        return vgm_model_bytes(chosen, homes)

    def plan_operators(
        self,
        chip: ChipSpec,
        module: ModuleOp,
        operators: list[Operator],
        frontiers: SharedSearch,
    ) -> SearchResult:
        """Plans for `operators`: the memory greedy, the transition sweep, the shared moves."""
        exprs = [operator_tensor_expr(o, self.precision, self.partials) for o in operators]
        options = [
            self.options(chip, o, e, frontiers) for o, e in zip(operators, exprs, strict=True)
        ]
        edges = dataflow_edges(operators)
        elem = precision_type(self.precision, "t10-plan-search")
        liveness = model_liveness(module, operators, element_bytes(elem, "t10-plan-search"))
        fastest = [min(o.points, key=lambda p: p.cycles) for o in options]
        too_big = model_bytes(fastest, liveness) > chip.sram_bytes_per_core
        search, _ = check_choice_options(self.name, self.planner, self.search, self.temporaries)

        def choose(options: list[OpOptions]) -> list[PlanPoint]:
            if search == "exact":
                return exact_plans(chip, options, liveness)
            if search == "fastest":
                return fastest_plans(chip, options, self.planner, liveness)
            return choose_plans(chip, options, self.planner, liveness)

        # cold twins trade time for memory: looked for only where memory binds and the hot
        # plans alone do not fit or end more than CLOSE_ENOUGH slower than the fastest
        # (each twin's expansion is costed by the exchange geometry: seconds on big models)
        cold = too_big and search != "fastest" and planner(self.planner).cold_weights
        chosen: list[PlanPoint] = []
        try:
            chosen = choose(options)
            slow = sum(p.cycles for p in chosen) > (1 + CLOSE_ENOUGH) * sum(
                p.cycles for p in fastest
            )
            cold = cold and slow
        except DoesNotFit:
            if not cold:
                raise
        if cold:
            options = self.cold_options(chip, exprs, options, frontiers)
            chosen = choose(options)
        result = self.swept(chip, exprs, options, chosen, edges, liveness, too_big)
        spatial = spatial_options(options) if search != "fastest" else None
        if spatial is not None:
            try:
                start = choose_plans(chip, spatial, self.planner, liveness)
            except DoesNotFit:
                return result
            other = self.swept(chip, exprs, spatial, start, edges, liveness, too_big)
            if other.total_cycles < result.total_cycles:
                return other
        return result

    @staticmethod
    def swept(
        chip: ChipSpec,
        exprs: list[TensorExpr],
        options: list[OpOptions],
        chosen: list[PlanPoint],
        edges: list[Edge],
        liveness: Liveness,
        too_big: bool,
    ) -> SearchResult:
        """`chosen` after the transition sweep, with the shared moves that still fit."""
        chosen, squeezed = reduce_transitions(chip, exprs, options, chosen, edges, liveness)
        return with_shared_moves(chip, exprs, chosen, edges, liveness, too_big or squeezed)

    def search_shared(
        self, chip: ChipSpec, operators: list[Operator], frontiers: SharedSearch
    ) -> None:
        """Search the frontiers `options` will look up, each distinct expression once, side
        by side in up to `jobs` workers."""
        keys: dict[TensorExpr, TensorExpr] = {}
        for o in operators:
            if pinned_plan(o.generic) is None:
                e = operator_tensor_expr(o, self.precision, self.partials)
                keys.setdefault(dataclasses.replace(e, name=""), e)
        found = operator_frontiers(
            chip, list(keys.values()), self.planner, self.min_utilization, self.jobs
        )
        frontiers.frontiers.update(zip(keys, found, strict=True))

    def options(
        self,
        chip: ChipSpec,
        op: Operator,
        expr: TensorExpr,
        frontiers: SharedSearch,
    ) -> OpOptions:
        """The plans `op` may take; frontiers are shared between identical operators (the
        same expression but for its name) unless `reuse` is off."""
        operands = operand_roles(op)
        plan = pinned_plan(op.generic)
        if plan is not None:
            options = pinned_options(chip, expr, plan, operands)
            cold = cold_inputs(op.generic, op.inputs)
            if not cold:
                return options
            if set(cold) != set(operands.constant):
                raise T10Error(
                    f"operator '{op_name(op.generic)}': '{COLD_ATTR}' must name all of its "
                    f"weights (inputs {list(operands.constant)}) or be left out"
                )
            point = options.points[0]
            twin = cold_point(chip, expr, point.plan, point.estimate, operands)
            return dataclasses.replace(options, points=(twin,))
        _, share = check_choice_options(self.name, self.planner, self.search, self.temporaries)
        if not self.reuse:
            frontier = operator_frontier(chip, expr, self.planner, self.min_utilization)
            options = op_options(expr, frontier, operands)
        else:
            options = self.shared_options(chip, expr, operands, frontiers)
        return options if share is None else within_share(options, chip, share)

    def shared_options(
        self, chip: ChipSpec, expr: TensorExpr, operands: Operands, frontiers: SharedSearch
    ) -> OpOptions:
        """The options of `expr` from the frontier `search_shared` found for it."""
        key = dataclasses.replace(expr, name="")  # searched by `search_shared`
        # identical operators whose inputs have the same roles have the same points too
        roles = _roles(operands)
        if (key, roles) not in frontiers.options:
            points = op_options(key, frontiers.frontiers[key], operands)
            frontiers.options[(key, roles)] = points
        return dataclasses.replace(frontiers.options[(key, roles)], name=expr.name)

    def cold_options(
        self,
        chip: ChipSpec,
        exprs: list[TensorExpr],
        options: list[OpOptions],
        frontiers: SharedSearch,
    ) -> list[OpOptions]:
        """`options` with the cold twins of their plans (`with_cold_weights`; each costed by
        the exchange geometry, so made only when memory binds, once per identical operator
        with `reuse`)."""
        found = []
        for expr, op in zip(exprs, options, strict=True):
            if op.pinned or not self.reuse:
                found.append(with_cold_weights(chip, expr, op))
                continue
            key = (dataclasses.replace(expr, name=""), _roles(op.operands))
            if key not in frontiers.cold:
                frontiers.cold[key] = with_cold_weights(chip, key[0], op)
            found.append(dataclasses.replace(frontiers.cold[key], name=op.name))
        return found


@dataclass
class SharedSearch:
    """What identical operators share within one pass (keys: the expression without its
    name): the frontier, and the options built from it per operand roles."""

    frontiers: dict[TensorExpr, list[tuple[Plan, Estimate]]] = field(default_factory=dict)
    options: dict[tuple[TensorExpr, tuple[object, ...]], OpOptions] = field(
        default_factory=dict
    )
    cold: dict[tuple[TensorExpr, tuple[object, ...]], OpOptions] = field(default_factory=dict)
    """The options with cold twins (`cold_options`)."""


def _roles(operands: Operands) -> tuple[object, ...]:
    """What of an operator's operands its plan points depend on."""
    return (
        operands.constant,
        operands.host,
        tuple(sorted(operands.staged.items())),
        tuple(sorted(operands.viewed_constants.items())),
    )


def spatial_options(options: list[OpOptions]) -> list[OpOptions] | None:
    """Every operator's spatial plans only (no temporal dim, weights hot; pinned operators
    and those without a spatial plan as they are), or None when that leaves every operator
    its options. The transition sweep changes one operator at a time, so from rotating plans
    it may stay where a choice of spatial plans throughout would cost less in total."""
    narrowed = []
    for op in options:
        points = tuple(p for p in op.points if p.plan.total_steps == 1 and not p.cold)
        keep = op.pinned or not points or len(points) == len(op.points)
        narrowed.append(op if keep else dataclasses.replace(op, points=points))
    if all(a is b for a, b in zip(narrowed, options, strict=True)):
        return None
    return narrowed


def with_shared_moves(
    chip: ChipSpec,
    exprs: list[TensorExpr],
    chosen: list[PlanPoint],
    edges: list[Edge],
    liveness: Liveness,
    memory_binds: bool,
) -> SearchResult:
    """The result of `chosen`: with the moves its readers could share (`shared_moves`) that
    still fit (`affordable_shares`), each made once and held for its later readers. Memory
    binds if it did already, or a shared move does not fit."""
    moves = shared_moves(exprs, [point.plan for point in chosen], edges)
    shares = affordable_shares(chip, chosen, liveness, moves)
    liveness = dataclasses.replace(
        liveness, held=tuple((m.first, m.last, m.nbytes) for m in shares)
    )
    reused: dict[int, list[int]] = {}
    for move in shares:
        for consumer, operand in move.readers[1:]:
            reused.setdefault(consumer, []).append(operand)
    binds = memory_binds or len(shares) < len(moves)
    return SearchResult(chip, exprs, chosen, edges, liveness, reused, binds)


def affordable_shares(
    chip: ChipSpec, chosen: list[PlanPoint], liveness: Liveness, moves: list[SharedMove]
) -> list[SharedMove]:
    """The shared moves, in program order, whose held buffers still let the model fit."""
    kept: list[SharedMove] = []
    for move in sorted(moves, key=lambda m: m.readers):
        held = tuple((m.first, m.last, m.nbytes) for m in (*kept, move))
        trial = dataclasses.replace(liveness, held=held)
        if model_bytes(chosen, trial) <= chip.sram_bytes_per_core:
            kept.append(move)
    return kept


def model_liveness(module: ModuleOp, operators: list[Operator], elem_bytes: int) -> Liveness:
    """Which generics read each generic's output (through views and gathers; a view
    returned from the function is moved where the view stands, so the generic before it
    counts as a reader); the host tensors placed for the whole program (host tensors of
    `elem_bytes`, ids of `IDS_BYTES`, each once): the gathers' tables and ids, the gathers
    returned from the function, the host sources of returned views; and the returned views
    (`ReturnedView`)."""
    index = operator_index(operators)
    position: dict[int, int] = {}  # op → the index of the last generic before it (-1: none)
    current = -1
    for o in module.walk():
        current = index.get(id(o), current)
        position[id(o)] = current

    def readers(value: SSAValue) -> set[int]:
        found = set()
        for use in value.uses:
            user = use.operation
            found.add(index.get(id(user), position[id(user)]))
            if isinstance(user, ViewOp | GatherOp):
                found |= readers(user.results[0])
        return found

    reads = tuple(
        tuple(sorted(k for k in readers(o.result) if k > i)) for i, o in enumerate(operators)
    )
    placed: dict[tuple[int, int], tuple[tuple[int, ...], int]] = {}

    def place(value: SSAValue, eb: int) -> None:
        assert isinstance(value.type, TensorType)
        placed[(id(value), eb)] = (tuple(value.type.get_shape()), eb)

    returned: list[ReturnedView] = []
    for o in module.walk():
        if isinstance(o, GatherOp):
            for value, eb in ((o.table, elem_bytes), (o.ids, IDS_BYTES)):
                source, _ = through_views(value)
                if id(source.owner) not in index:  # a host tensor: placed for the program
                    place(value, eb)
                    if source is not value:
                        place(source, eb)
            if _leaves_chip(o.result):  # made on chip in host_layout
                place(o.result, elem_bytes)
        elif isinstance(o, ViewOp) and _returned(o.result):
            source, view = through_views(o.result)
            producer = index.get(id(source.owner))
            if producer is None:
                place(source, elem_bytes)  # a host tensor or a gather
            shape = tuple(tensor_type(o.result).get_shape())
            label = o.label.data
            assert isinstance(source.type, TensorType)
            returned.append(
                ReturnedView(
                    position[id(o)], shape, elem_bytes, producer, label,
                    tuple(source.type.get_shape()), view,
                )
            )
    return Liveness(reads, tuple(placed.values()), returned=tuple(returned))


def _returned(value: SSAValue) -> bool:
    """Whether `value` itself (not only views of it) leaves the chip: an operation other
    than a view, a generic or a gather reads it (the function's return)."""
    return any(
        not isinstance(use.operation, ViewOp | GatherOp | GenericOp) for use in value.uses
    )


def _leaves_chip(value: SSAValue) -> bool:
    """Whether `value` or a view of it is returned from the function."""
    return _returned(value) or any(
        isinstance(use.operation, ViewOp) and _leaves_chip(use.operation.results[0])
        for use in value.uses
    )


def operator_index(operators: list[Operator]) -> dict[int, int]:
    """id of each generic (and epilogue) -> the index of its operator."""
    return {id(g): i for i, o in enumerate(operators) for g in o.ops()}


def dataflow_edges(operators: list[Operator]) -> list[Edge]:
    """Which operator's output feeds which input of which operator, through which views;
    which inputs view a host value (a function argument placed on chip to be viewed); and
    which inputs are gathers of runtime ids."""
    index = operator_index(operators)
    edges = []
    placed: set[int] = set()  # viewed gather tables and ids, placed by their first reader
    for i, operator in enumerate(operators):
        for k, value in enumerate(operator.inputs):
            source, view = through_views(value)
            producer = index.get(id(source.owner))
            if isinstance(source.owner, GatherOp):
                spec = gather_spec(source.owner, placed, lambda v: index.get(id(v.owner)))
                edges.append(Edge(None, i, k, view, gather=spec))
            elif producer is not None:
                edges.append(Edge(producer, i, k, view))
            elif view is not None:
                assert isinstance(source.type, TensorType)
                edges.append(Edge(None, i, k, view, source.type.get_shape()))
    return edges
