"""Planning a module: every operator's plan chosen under the SRAM limit and recorded on its
generic (`plan_module`, what `t10-plan-search` does; its docstring lists the attributes).

`ModelSearch` plans the operators of one module with a `PlanOptions`: each operator's options
(its Pareto frontier, or its pinned plan), shared between identical operators (`SharedSearch`);
the choice under the SRAM limit (greedy, exact or fastest), the transition sweep, the moves
readers share (`with_shared_moves`); with and without the epilogues where memory binds; or,
for `vgm`, every operator from and to its homes. A planner's `plan` hook
(`t10.planning.planners.Planner`) calls `plan_model` or `plan_vgm`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, StringAttr, i64

from t10.common.attr_names import (
    AHEAD_ATTR,
    CHIP_ATTR,
    COLD_ATTR,
    GATHER_ATTR,
    MODEL_BYTES_ATTR,
    OFFCHIP_ATTR,
    PARTIALS_ATTR,
    PLANNER_ATTR,
    PRECISION_ATTR,
    RELAYOUT_ATTR,
    REUSED_ATTR,
    STORE_ATTR,
)
from t10.common.chip_spec import ChipSpec
from t10.common.epilogues import unmark_epilogue
from t10.common.placements import on_first_chip
from t10.common.plans import Estimate, Plan
from t10.common.tensor_expr import (
    TensorExpr,
    check_storage,
    element_bytes,
    op_name,
    precision_type,
)
from t10.common.weights import cold_attr, cold_inputs, loads_ahead
from t10.errors import DoesNotFit, T10Error
from t10.planning.cold_weights import cold_point, expand_estimate, with_cold_weights
from t10.planning.compile_options import PLAN_SEARCH, PlanOptions, check_choice_options
from t10.planning.dataflow import dataflow_edges, made_gathers, model_liveness
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
    choose_from,
    choose_plans,
    fastest_plans,
    model_bytes,
    op_options,
    pinned_options,
    within_share,
)
from t10.planning.offchip_weights import (
    LoadSchedule,
    offchip_inputs,
    offchip_point,
    schedule_loads,
    with_offchip_weights,
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
from t10.planning.plan_attributes import (
    pinned_plan,
    record_loads,
    record_made_gathers,
    record_plan,
    record_returned_views,
)
from t10.planning.plan_search import operator_frontier
from t10.planning.planned_record import model_bound_of, record_planned_ops
from t10.planning.planners import planner
from t10.planning.vgm_plans import (
    HomeLiveness,
    VgmOperator,
    choose_vgm,
    host_home_bytes,
    loads_and_gathers,
    vgm_model_bytes,
)


def plan_module(
    module: ModuleOp, options: PlanOptions, *, reuse: bool = True, jobs: int = 0
) -> None:
    """Plans every operator of `module` (linalg level, every generic named: the frontend's
    output, fused or not) under `options` and records the plans on the IR, with the options
    and the model's bytes per core on the module (`t10-plan-search`; `reuse` and `jobs` are
    its options: `T10PlanSearch`)."""
    chip = options.validate(PLAN_SEARCH)
    check_jobs(PLAN_SEARCH, jobs)
    check_named_ops(module, PLAN_SEARCH)
    check_not_lowered(module, PLAN_SEARCH)
    check_storage(module.attributes, options.precision)
    bound = model_bound_of(chip, module, options.precision, options.partials)
    search = ModelSearch(options, reuse, jobs)
    peak = planner(options.planner).plan(search, chip, module)
    module.attributes[CHIP_ATTR] = StringAttr(options.chip)
    module.attributes[PLANNER_ATTR] = StringAttr(options.planner)
    module.attributes[PRECISION_ATTR] = StringAttr(options.precision)
    module.attributes[PARTIALS_ATTR] = StringAttr(options.partials)
    module.attributes[MODEL_BYTES_ATTR] = IntegerAttr(peak, 64)
    record_planned_ops(chip, module, bound)


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
    preload: str = "planned"
    """When off-chip weights load (`PlanOptions.preload`)."""

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

    @cached_property
    def loads(self) -> LoadSchedule:
        """When the off-chip weights load, and the operators' waits for them."""
        n = len(self.chosen)
        moves = [sum(e.cycles for e in self.transitions(i) if e is not None) for i in range(n)]
        between = [0] * (n + 1)  # the views returned before each operator, made where they stand
        for view, move in zip(self.liveness.returned, self.returned_moves, strict=True):
            between[view.after + 1] += move.cycles
        return schedule_loads(self.chip, self.exprs, self.chosen, moves, between[:n],
                              self.liveness, self.preload)

    @property
    def total_cycles(self) -> int:
        """The model's estimated cycles: operators, relayouts, gathers, the moves that make
        returned views and the waits for off-chip weights."""
        total = sum(point.estimate.cycles for point in self.chosen)
        total += sum(move.cycles for move in self.returned_moves)
        for i in range(len(self.chosen)):
            total += sum(e.cycles for e in self.transitions(i) if e is not None)
        return total + self.loads.wait_cycles

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
            if point.offchip:
                record_loads(operator.generic, point.offchip, self.loads.ahead[i],
                             self.loads.waits[i])
            if i in self.reused:
                reused = DenseArrayBase.from_list(i64, sorted(self.reused[i]))
                operator.generic.attributes[REUSED_ATTR] = reused


@dataclass(frozen=True)
class ModelSearch:
    """The plan search of one module under `options` (what a planner's `plan` hook calls)."""

    options: PlanOptions
    reuse: bool = True
    """Identical operators share one Pareto frontier, searched once (`T10PlanSearch.reuse`)."""
    jobs: int = 0
    """Worker processes for the frontiers and the plans apart from the epilogues
    (`T10PlanSearch.jobs`)."""

    def expr(self, op: Operator) -> TensorExpr:
        """`op`'s tensor expression at the options' precisions."""
        return operator_tensor_expr(op, self.options.precision, self.options.partials)

    def elem_bytes(self) -> int:
        """The bytes of a stored element."""
        return element_bytes(precision_type(self.options.precision, PLAN_SEARCH), PLAN_SEARCH)

    def choice(self) -> tuple[str, float | None]:
        """The search and the temporaries share (`check_choice_options`)."""
        o = self.options
        return check_choice_options(PLAN_SEARCH, o.planner, o.search, o.temporaries)

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
            call_beside(
                lambda: self.plan_operators(chip, op, apart, frontiers).costed(), self.jobs
            )
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
        result = self.on_one_chip(chip, op, operators, result)
        result = dataclasses.replace(result, preload=self.options.preload)
        result.record(op, operators)
        plans = [point.plan for point in result.chosen]
        elem_bytes = self.elem_bytes()
        gathers, specs = made_gathers(op, operators)
        moves = made_gather_moves(chip, specs, result.exprs, plans, elem_bytes)
        record_made_gathers(gathers, moves)
        return max(model_bytes(result.chosen, result.liveness), result.loads.preload_peak)

    def on_one_chip(
        self, chip: ChipSpec, module: ModuleOp, operators: list[Operator], result: SearchResult
    ) -> SearchResult:
        """On a multi-chip system, the model planned on one chip instead, when it fits and
        is faster there: every operator on the system's cores may still lose to one chip
        when the moves between operators cross the chip-to-chip links (an operator's plans
        on one chip rarely stay on its frontier, each beaten by plans on more cores). The
        one chip's plans are costed again on the whole system (recorded as pins, which
        `result.record` overwrites if they lose). Not tried with a pinned operator."""
        one = chip.one_chip()
        if one is None or any(pinned_plan(o.generic) is not None for o in operators):
            return result
        frontiers = SharedSearch()
        if self.reuse:
            self.search_shared(one, operators, frontiers)
        try:
            alone = self.plan_operators(one, module, operators, frontiers)
        except DoesNotFit:
            return result
        on_chip_zero = [
            dataclasses.replace(p, plan=dataclasses.replace(
                p.plan, placement=on_first_chip(p.plan.placement))) for p in alone.chosen
        ]
        dataclasses.replace(alone, chip=chip, chosen=on_chip_zero).record(module, operators)
        pinned = self.plan_operators(chip, module, operators, SharedSearch())
        return pinned if pinned.total_cycles < result.total_cycles else result

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
        exprs = [self.expr(o) for o in operators]
        elem_bytes = self.elem_bytes()
        liveness = model_liveness(module, operators, elem_bytes)
        resident = host_home_bytes(operators, cores, elem_bytes)
        homes = HomeLiveness.of(
            exprs, liveness, cores, resident + liveness.program_long_bytes(cores)
        )
        placed: set[int] = set()  # viewed gather tables and ids, placed by their first reader
        ops = [
            VgmOperator(
                e, self.operator_options(chip, o, e, frontiers), *loads_and_gathers(o, placed)
            )
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
        exprs = [self.expr(o) for o in operators]
        options = [
            self.operator_options(chip, o, e, frontiers)
            for o, e in zip(operators, exprs, strict=True)
        ]
        edges = dataflow_edges(operators)
        liveness = model_liveness(module, operators, self.elem_bytes())
        fastest = [min(o.points, key=lambda p: p.cycles) for o in options]
        too_big = model_bytes(fastest, liveness) > chip.sram_bytes_per_core
        search, _ = self.choice()

        def choose(options: list[OpOptions]) -> list[PlanPoint]:
            if search == "exact":
                return exact_plans(chip, options, liveness)
            if search == "fastest":
                return fastest_plans(chip, options, self.options.planner, liveness)
            return choose_plans(chip, options, self.options.planner, liveness)

        # cold twins trade time for memory: looked for only where memory binds and the hot
        # plans alone do not fit or end more than CLOSE_ENOUGH slower than the fastest
        # (each twin's expansion is costed by the exchange geometry: seconds on big models)
        cold = too_big and search != "fastest" and planner(self.options.planner).cold_weights
        # off-chip twins only where nothing fits on chip (`t10.planning.offchip_weights`)
        offchip = too_big and chip.offchip is not None

        def fitted(options: list[OpOptions]) -> list[PlanPoint]:
            """`choose(options)`, or none where memory binds and off-chip memory may help
            (where the weights alone overflow the SRAM, without running the greedy)."""
            if offchip and _weights_overflow(chip, options):
                return []
            try:
                return choose(options)
            except DoesNotFit:
                if not (cold or offchip):
                    raise
                return []

        chosen = fitted(options)
        if chosen:
            cold = cold and sum(p.cycles for p in chosen) > (1 + CLOSE_ENOUGH) * sum(
                p.cycles for p in fastest
            )
        if cold:
            options = self.cold_options(chip, exprs, options, frontiers)
            chosen = fitted(options) if offchip else choose(options)
        if offchip and not chosen:
            options = [with_offchip_weights(chip, e, o) for e, o in zip(exprs, options,
                                                                         strict=True)]
            if search != "greedy":
                chosen = choose(options)
            else:
                return self.offchip_result(chip, exprs, options, edges, liveness)
        result = self.swept(chip, exprs, options, chosen, edges, liveness, too_big)
        spatial = spatial_options(options) if search != "fastest" else None
        if spatial is not None:
            try:
                start = choose_plans(chip, spatial, self.options.planner, liveness)
            except DoesNotFit:
                return result
            other = self.swept(chip, exprs, spatial, start, edges, liveness, too_big)
            if other.total_cycles < result.total_cycles:
                return other
        return result

    def offchip_result(
        self,
        chip: ChipSpec,
        exprs: list[TensorExpr],
        options: list[OpOptions],
        edges: list[Edge],
        liveness: Liveness,
    ) -> SearchResult:
        """The greedy's plans with host tensors off chip (`offchip_weights`): started from
        every operator's fastest off-chip plan and moved back to faster ones (`choose_from`)
        within the SRAM less a share kept for the loads ahead, for each share of
        `PRELOAD_SHARES`; the fastest, the waits for the loads included."""
        start = [next((j for j, p in enumerate(o.points) if p.offchip), 0) for o in options]
        best: SearchResult | None = None
        for share in PRELOAD_SHARES:
            room = dataclasses.replace(
                chip, sram_bytes_per_core=int(chip.sram_bytes_per_core * (1 - share))
            )
            try:
                chosen = choose_from(room, options, start, self.options.planner, liveness)
            except DoesNotFit:
                if best is None and not share:
                    raise
                continue
            swept = self.swept(room, exprs, options, chosen, edges, liveness, True)
            result = dataclasses.replace(swept, chip=chip)
            if best is None or result.total_cycles < best.total_cycles:
                best = result
        assert best is not None  # the first share, 0, fitted or raised
        return best

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
        """Search the frontiers `operator_options` will look up, each distinct expression once, side
        by side in up to `jobs` workers."""
        keys: dict[TensorExpr, TensorExpr] = {}
        for o in operators:
            if pinned_plan(o.generic) is None:
                e = self.expr(o)
                keys.setdefault(dataclasses.replace(e, name=""), e)
        planner_name, utilization = self.options.planner, self.options.min_utilization
        found = operator_frontiers(chip, list(keys.values()), planner_name, utilization, self.jobs,
                                   self.options.placement)
        frontiers.frontiers.update(zip(keys, found, strict=True))

    def operator_options(
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
            return pinned_weights(chip, op, expr, options)
        _, share = self.choice()
        if not self.reuse:
            planner_name, utilization = self.options.planner, self.options.min_utilization
            frontier = operator_frontier(chip, expr, planner_name, utilization,
                                         self.options.placement)
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


def pinned_weights(chip: ChipSpec, op: Operator, expr: TensorExpr, options: OpOptions
                   ) -> OpOptions:
    """The pinned plan's point with its host tensors where `t10.cold` (all of its weights,
    or none) or `t10.offchip` (any of its host tensors, with a `t10.ahead` if given) keep
    them."""
    operands = options.operands
    cold = cold_inputs(op.generic, op.inputs)
    offchip = offchip_inputs(op.generic, op.inputs)
    name = op_name(op.generic)
    if cold and set(cold) != set(operands.constant):
        raise T10Error(
            f"operator '{name}': '{COLD_ATTR}' must name all of its weights (inputs "
            f"{list(operands.constant)}) or be left out"
        )
    point = options.points[0]
    if cold:
        twin = cold_point(chip, expr, point.plan, point.estimate, operands)
    elif offchip:
        if chip.offchip is None:
            raise T10Error(
                f"operator '{name}': '{OFFCHIP_ATTR}' keeps its weights in off-chip memory, "
                f"but chip '{chip.name}' has none; remove the attribute"
            )
        twin = offchip_point(chip, expr, point.plan, point.estimate, operands, offchip)
        if AHEAD_ATTR in op.generic.attributes:
            twin = dataclasses.replace(twin, ahead=loads_ahead(op.generic))
    else:
        return options
    return dataclasses.replace(options, points=(twin,))


def _weights_overflow(chip: ChipSpec, options: list[OpOptions]) -> bool:
    """Whether the operators' resident bytes alone, each at its least, exceed the SRAM: no
    choice of their plans fits (a quick test before a greedy that would end stuck)."""
    least = sum(min(p.resident_bytes for p in o.points) for o in options)
    return least > chip.sram_bytes_per_core


PRELOAD_SHARES = (0.0, 0.25, 0.5)
"""Shares of the SRAM the plans of a model with host tensors off chip leave to the loads
ahead, each tried (as ELK tries several splits of a core's memory between running and
preloading)."""


@dataclass
class SharedSearch:
    """What identical operators share within the planning of one module (keys: the
    expression without its name): the frontier, and the options built from it per operand
    roles."""

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


