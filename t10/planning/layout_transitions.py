"""Layout transitions between a producer's output layout and a consumer's input layout.

When two operators' plans place the same tensor differently, the tensor crosses the chip in
an all-to-all exchange (one superstep). The plan search costs these transitions
(`t10.common.move_costs`): while it chooses plans (a quick bound; on a chip whose topology
routes, the move's estimate, since where the cores lie decides it), and for the chosen plans
(from the exchange geometry: what each core must receive that it does not hold, spread over
the cores that hold it). This module finds them: which edges need one, which moves several
readers share, the gathers, and the plans aligned to a neighbour's layout.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from t10.common.chip_spec import ChipSpec
from t10.common.move_costs import (
    IDS_BYTES,
    GatherOperand,
    GatherSpec,
    gather_bound,
    gather_estimate,
    quick_cycles,
    transition_estimate,
    viewed_layout,
)
from t10.common.plans import (
    Estimate,
    Layout,
    Plan,
    host_layout,
    input_layouts,
    operand_layout,
    output_layout,
    placement,
    plan_problem,
)
from t10.common.tensor_expr import Access, TensorExpr
from t10.common.view_maps import View
from t10.planning.memory_reconciliation import (
    Liveness,
    OpOptions,
    PlanPoint,
    PointColumns,
    ReturnedView,
    Swaps,
)


def returned_view_moves(
    chip: ChipSpec,
    liveness: Liveness,
    exprs: Sequence[TensorExpr],
    plans: Sequence[Plan],
    homes: int | None = None,
) -> list[Estimate]:
    """The moves that make the views returned from the function (`Liveness.returned`), as
    convert-linalg-to-rtensor makes them: each view's source moved through the view into
    `host_layout` of the view's shape over the source's cores. A source lies in its
    producer's output layout, or (a host tensor or a gather) in `host_layout` over the
    program's cores, the most any plan uses; with `homes` (vgm) every source lies in its
    home, `host_layout` over that many cores."""
    cores = homes or max((p.cores for p in plans), default=1)

    def source(view: ReturnedView) -> Layout:
        p = view.producer
        if p is None or homes:
            return host_layout(view.source, cores)
        return output_layout(exprs[p], plans[p])

    moves = []
    for view in liveness.returned:
        src = source(view)
        dst = host_layout(view.shape, src.cores)
        moves.append(transition_estimate(chip, src, dst, view.elem_bytes, view.view))
    return moves


@dataclass(frozen=True)
class Edge:
    """Input `operand` of operator `consumer` is the output of operator `producer`, read
    through `view` when the value passes views on its way (`producer` None: the views read
    a function argument of shape `source_shape`, placed as `host_layout` gives). With
    `gather`, the input is a gather of runtime ids (`producer` None), costed by
    `gather_estimate` (`gathers_into`); read through `view`, it is made in `host_layout` over
    the program's cores, then relayouted through the view (a transition, `transitions_into`)."""

    producer: int | None
    consumer: int
    operand: int
    view: View | None = None
    source_shape: tuple[int, ...] = ()
    gather: GatherSpec | None = None


def edge_layouts(
    exprs: Sequence[TensorExpr], plans: Sequence[Plan], edge: Edge
) -> tuple[Layout, Layout]:
    dst = input_layouts(exprs[edge.consumer], plans[edge.consumer])[edge.operand]
    if edge.producer is None:
        return host_layout(edge.source_shape, dst.cores), dst
    return output_layout(exprs[edge.producer], plans[edge.producer]), dst


def reduce_transitions(
    chip: ChipSpec,
    exprs: Sequence[TensorExpr],
    options: Sequence[OpOptions],
    chosen: Sequence[PlanPoint],
    edges: Sequence[Edge],
    liveness: Liveness | None = None,
) -> tuple[list[PlanPoint], bool]:
    """Re-chooses each operator's plan, in program order, to minimise its own cycles plus the
    transitions into and out of it given its neighbours' plans, keeping the model in SRAM
    (pinned operators stay). The memory greedy ignores transitions; this sweep adds them. A
    sweep may free memory late in the program that an earlier operator could have used, so
    it runs again while it changes a plan, at most `SWEEPS` times. Also returns whether the
    SRAM ruled out a cheaper choice in the last sweep."""
    chosen = list(chosen)
    capacity = chip.sram_bytes_per_core
    live = Liveness.none(len(chosen)) if liveness is None else liveness
    touching: list[list[Edge]] = [[] for _ in chosen]
    for e in edges:
        touching[e.consumer].append(e)
        if e.producer is not None and e.producer != e.consumer:
            touching[e.producer].append(e)

    known: dict[tuple[int, Plan], tuple[Sequence[Layout], Layout]] = {}

    def layouts(i: int, point: PlanPoint) -> tuple[Sequence[Layout], Layout]:
        key = (i, point.plan)
        if key not in known:
            known[key] = input_layouts(exprs[i], point.plan), output_layout(exprs[i], point.plan)
        return known[key]

    moves: dict[tuple[Layout, Layout, int, View | None], int] = {}

    def quick(src: Layout, dst: Layout, elem_bytes: int, view: View | None) -> int:
        """`quick_cycles`, or on a chip whose topology routes the move's estimate (where its
        cores lie decides what it costs), remembered per layout pair (identical operators
        meet the same)."""
        key = (src, dst, elem_bytes, view)
        if key not in moves:
            moves[key] = (
                transition_estimate(chip, src, dst, elem_bytes, view).cycles
                if chip.topology.routes
                else quick_cycles(chip, src, dst, elem_bytes, view)
            )
        return moves[key]

    def cost(i: int, point: PlanPoint) -> int:
        ins, out = layouts(i, point)
        total = point.cycles
        for e in touching[i]:
            if e.consumer == i and e.gather is not None:
                total += gather_bound(chip, ins[e.operand], exprs[i].elem_bytes, e.gather)
            elif e.consumer == i:
                dst = ins[e.operand]
                src = (
                    host_layout(e.source_shape, dst.cores)
                    if e.producer is None
                    else layouts(e.producer, chosen[e.producer])[1]
                )
                total += quick(src, dst, exprs[i].elem_bytes, e.view)
            if e.producer == i:
                dst = layouts(e.consumer, chosen[e.consumer])[0][e.operand]
                total += quick(out, dst, exprs[i].elem_bytes, e.view)
        return total

    squeezed = False
    swaps: Swaps | None = None  # of `chosen`, made again when a plan changes
    for _ in range(SWEEPS):
        changed = squeezed = False
        for i, op in enumerate(options):
            if op.pinned:
                continue
            aligned = aligned_points(chip, exprs, options, chosen, touching[i], i)
            candidates = [*op.points, *aligned, *linear_twins(chip, exprs[i], op)]
            if swaps is None:
                swaps = Swaps(chosen, live)
            after = swaps.after_many(np.full(len(candidates), i), PointColumns.of(candidates))
            fits = [a <= capacity for a in after.tolist()]
            if any(fits):
                best, cheaper = cheapest(candidates, fits, partial(cost, i), squeezed)
                squeezed |= cheaper
                if best != chosen[i]:
                    changed = True
                    swaps = None
                chosen[i] = best
        if not changed:
            break
    return chosen, squeezed


SWEEPS = 3
"""At most this many sweeps of `reduce_transitions`."""


def cheapest(
    candidates: Sequence[PlanPoint],
    fits: Sequence[bool],
    cost: Callable[[PlanPoint], int],
    squeezed: bool,
) -> tuple[PlanPoint, bool]:
    """The fitting candidate of least `cost` (then fewest bytes, then first), and whether a
    candidate that does not fit costs less (not looked for when `squeezed` already says
    so). A cost is never below the plan's own cycles: candidates are costed in order of
    their cycles, and only while that bound could still win."""
    order = sorted(range(len(candidates)), key=lambda k: candidates[k].cycles)
    best: tuple[int, int, int] | None = None  # (cost, bytes, index)
    for k in order:
        if best is not None and candidates[k].cycles > best[0]:
            break
        if fits[k]:
            found = (cost(candidates[k]), candidates[k].estimate.sram_bytes, k)
            best = found if best is None or found < best else best
    assert best is not None, "some candidate fits"
    cheaper = squeezed
    for k in order:
        if cheaper or candidates[k].cycles >= best[0]:
            break
        cheaper = not fits[k] and cost(candidates[k]) < best[0]
    return candidates[best[2]], cheaper


def transitions_into(
    chip: ChipSpec,
    exprs: Sequence[TensorExpr],
    plans: Sequence[Plan],
    edges: Sequence[Edge],
    consumer: int,
    reused: Collection[int] = (),
) -> Estimate | None:
    """The summed estimate of the transitions into `consumer`'s inputs (None: there are
    none), but those into the `reused` inputs (moved by an earlier operator, `SharedMove`);
    gathers are costed apart (`gathers_into`), but for the move of one read through views
    from where it is made (`host_layout` over the program's cores)."""
    cores = max(p.cores for p in plans)

    def layouts(e: Edge) -> tuple[Layout, Layout]:
        if e.gather is None:
            return edge_layouts(exprs, plans, e)
        made = e.gather.kind.shape(e.gather.table, e.gather.ids)
        dst = input_layouts(exprs[consumer], plans[consumer])[e.operand]
        return host_layout(made, cores), dst

    found = [
        transition_estimate(chip, *layouts(e), exprs[consumer].elem_bytes, e.view)
        for e in edges
        if e.consumer == consumer
        and (e.gather is None or e.view is not None)
        and e.operand not in reused
    ]
    return summed([e for e in found if e.cycles])


@dataclass(frozen=True)
class SharedMove:
    """Several inputs read one operator's output through the same view in the same layout
    (say q, k and v projections of one activation): the first reader's move serves them
    all, its buffer held from the first reader to the last. `readers`: (operator, input)
    in program order, the first one makes the move."""

    readers: tuple[tuple[int, int], ...]
    nbytes: int
    """The moved buffer's bytes per core."""

    @property
    def first(self) -> int:
        return self.readers[0][0]

    @property
    def last(self) -> int:
        return self.readers[-1][0]


def shared_moves(
    exprs: Sequence[TensorExpr], plans: Sequence[Plan], edges: Sequence[Edge]
) -> list[SharedMove]:
    """The moves between operators that more than one input could share: same producer,
    same view, same destination layout, not rotating (a rotating input is shifted in place
    by its reader). Host tensors are loaded straight into each reader's layout, so only
    outputs of operators move."""
    groups: dict[tuple[int, View | None, Layout], list[Edge]] = {}
    for e in edges:
        if e.producer is None:
            continue
        src, dst = edge_layouts(exprs, plans, e)
        if dst.rotating is not None or (e.view is None and src == dst):
            continue
        groups.setdefault((e.producer, e.view, dst), []).append(e)
    return [
        SharedMove(
            tuple(sorted((e.consumer, e.operand) for e in group)),
            dst.local_elements() * exprs[group[0].consumer].elem_bytes,
        )
        for (_, _, dst), group in groups.items()
        if len(group) > 1
    ]


def gathers_into(
    chip: ChipSpec,
    exprs: Sequence[TensorExpr],
    plans: Sequence[Plan],
    edges: Sequence[Edge],
    consumer: int,
) -> Estimate | None:
    """The summed estimate of the gathers of runtime ids into `consumer` (None: there are
    none); table and ids lie on the program's cores, the most any plan uses."""
    cores = max(p.cores for p in plans)

    def source(operand: GatherOperand, shape: tuple[int, ...]) -> Layout:
        p = operand.producer
        return host_layout(shape, cores) if p is None else output_layout(exprs[p], plans[p])

    found: list[Estimate] = []
    for e in edges:
        if e.consumer == consumer and e.gather is not None:
            dst = input_layouts(exprs[consumer], plans[consumer])[e.operand]
            viewed = e.view is not None
            eb = exprs[consumer].elem_bytes
            found += gather_moves(chip, e.gather, dst, viewed, eb, cores, source)
    return summed(found)


def gather_moves(
    chip: ChipSpec,
    spec: GatherSpec,
    dst: Layout,
    viewed: bool,
    elem_bytes: int,
    cores: int,
    source: Callable[[GatherOperand, tuple[int, ...]], Layout],
) -> list[Estimate]:
    """The supersteps of a gather into `dst` (`viewed`: its reader reads it through views,
    so it is made in `host_layout` over `cores` instead), as convert-linalg-to-rtensor makes
    them under the gather's label: the relayouts of a viewed table or ids into `host_layout`
    over `cores` that this gather makes (`GatherOperand.places`), then the gather
    (`gather_estimate`). `source`: the layout a table or ids (of the given shape) lies in."""
    moves: list[Estimate] = []
    read: list[Layout] = []
    for operand, shape, eb in (
        (spec.table_from, spec.table, elem_bytes),
        (spec.ids_from, spec.ids, IDS_BYTES),
    ):
        if operand.view is None:
            read.append(source(operand, shape))
            continue
        read.append(host_layout(shape, cores))
        if operand.places:
            src = source(operand, operand.source)
            moves.append(transition_estimate(chip, src, read[-1], eb, operand.view))
    if viewed:
        dst = host_layout(spec.kind.shape(spec.table, spec.ids), cores)
    moves.append(gather_estimate(chip, dst, elem_bytes, spec, cores, *read))
    return [m for m in moves if m.cycles]


def made_gather_moves(
    chip: ChipSpec,
    specs: Sequence[GatherSpec],
    exprs: Sequence[TensorExpr],
    plans: Sequence[Plan],
    elem_bytes: int,
    homes: int | None = None,
) -> list[Estimate | None]:
    """The supersteps of each gather made on chip for no operator (returned from the
    function, or read by another gather), as convert-linalg-to-rtensor makes them: in
    `host_layout` over the program's cores, the most any plan uses (`gather_moves`), from
    its table and ids in their producers' output layouts or, host values, in `host_layout`
    over those cores; with `homes` (vgm) every value lies in its home over that many
    cores. None: a gather that moves nothing."""
    cores = homes or max((p.cores for p in plans), default=1)

    def source(operand: GatherOperand, shape: tuple[int, ...]) -> Layout:
        p = operand.producer
        if p is None or homes:
            return host_layout(shape, cores)
        return output_layout(exprs[p], plans[p])

    return [
        summed(gather_moves(chip, spec, host_layout(spec.kind.shape(spec.table, spec.ids),
                                                    cores), False, elem_bytes, cores, source))
        for spec in specs
    ]


def summed(moves: Sequence[Estimate]) -> Estimate | None:
    """Moves into one operator run one after another (a superstep each): their cycles add
    up, their buffers do not all live at once (the largest counts). None: no moves."""
    if not moves:
        return None
    return Estimate(
        sum(e.compute_cycles for e in moves),
        sum(e.exchange_cycles for e in moves),
        sum(e.sync_cycles for e in moves),
        max(e.sram_bytes for e in moves),
    )


def aligned_plan(
    expr: TensorExpr, access: Access, operand: int | None, target: Layout
) -> Plan | None:
    """The spatial plan of `expr` that places the operand read by `access` exactly as `target`
    (so no transition is needed: on the same chip cores too), if there is one. Frontiers
    keep only Pareto plans, so such a plan is often missing from them although it is best in
    context."""
    target = placement(target)
    if target.rotating is not None or len(target.axes) != len(access.dims):
        return None
    factors = [1] * expr.rank
    loops: dict[int, int] = {}  # the loop dim of each grid axis of the target
    for loop, axis in zip(access.dims, target.axes, strict=True):
        if axis is not None:
            if loop is None:
                return None
            factors[loop] = target.grid[axis]
            loops[axis] = loop
    placed = target.placement
    if placed is not None and any(a not in loops for line in placed.lines for a, _ in line):
        return None
    plan = Plan(tuple(factors), placement=None if placed is None else placed.renumbered(loops))
    if plan_problem(expr, plan) is not None:
        return None
    if placement(operand_layout(expr, plan, access, operand)) != target:
        return None
    return plan


def linear_twins(chip: ChipSpec, expr: TensorExpr, option: OpOptions) -> list[PlanPoint]:
    """The operator's placed plans laid linearly instead: slower on their own, but maybe not
    with their neighbours' moves (their layouts lie where a linear neighbour's do)."""
    return [
        option.point(chip, expr, replace(p.plan, placement=None))
        for p in option.points
        if p.plan.placement is not None
    ]


def aligned_points(
    chip: ChipSpec,
    exprs: Sequence[TensorExpr],
    options: Sequence[OpOptions],
    chosen: Sequence[PlanPoint],
    edges: Sequence[Edge],
    i: int,
) -> list[PlanPoint]:
    """Plans of operator `i` that match a neighbour's chosen layout of a shared tensor."""
    expr = exprs[i]
    plans = []
    for e in edges:
        if e.producer is None or (e.view is not None and e.consumer != i):
            continue
        if e.consumer == i:
            src = output_layout(exprs[e.producer], chosen[e.producer].plan)
            if e.view is not None:
                viewed = viewed_layout(src, e.view, expr.inputs[e.operand].shape)
                if viewed is None:
                    continue
                src = viewed
            plans.append(aligned_plan(expr, expr.inputs[e.operand], e.operand, src))
        if e.producer == i:
            dst = input_layouts(exprs[e.consumer], chosen[e.consumer].plan)[e.operand]
            plans.append(aligned_plan(expr, expr.output, None, dst))
    unique = {p for p in plans if p is not None and p.cores <= chip.cores}
    return [options[i].point(chip, expr, p) for p in sorted(unique, key=lambda p: p.factors)]
