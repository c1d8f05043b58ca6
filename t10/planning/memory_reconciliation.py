"""Memory reconciliation: T10's inter-operator search, one plan per operator for the whole
model. No IR here; the model search (`t10.planning.model_search`, run by `t10-plan-search`)
drives it with the per-operator Pareto frontiers of `t10.planning.plan_search`.

All operators' weights live on chip at once, so one operator's fast-but-fat plan steals SRAM
from the others (unless it keeps them cold: a plan point with `cold` weights holds only their
compact homes resident and expands them while it runs, `t10.planning.cold_weights`).
The model's bytes per core (`model_bytes`) = the *resident* bytes of every
operator (its weights, in its layout) + the largest *peak* over the operators in program
order and the views returned between them (`peaks`, `Liveness`, `returned_peak`); what is
live at each point is the memory contract of docs/DESIGN.md.

`choose_plans` starts from every operator's fastest plan and, while the model does not fit,
moves the operator whose next smaller plan costs the least extra time per byte saved
(greedy dtime / dbytes). When several operators hold the largest peak, moving one alone
saves nothing, so moving all of them together is a candidate too. If the greedy gets stuck,
it falls back to the smallest model `smallest_model` finds and moves operators back to
faster plans while the model still fits. Its moves only trade time for the bytes at hand,
so it may shrink peaks early and pay for weights late, or the reverse: when its choice is
more than `CLOSE_ENOUGH` slower than every operator's fastest plan, it also starts from
splits of the SRAM between weights and the rest (`budget_starts`) and keeps the fastest
result. `t10.planning.exact_reconciliation` solves the same choice exactly (tests hold the
greedy within 2% of it on BERT-base). Pinned operators have a single plan and never move.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from math import prod

import numpy as np

from t10.common.chip_spec import ChipSpec
from t10.common.estimator import estimate
from t10.common.plans import (
    Estimate,
    Plan,
    host_layout,
    input_layouts,
    output_layout,
    validate_plan,
)
from t10.common.tensor_expr import TensorExpr
from t10.common.view_maps import View
from t10.errors import DoesNotFit, T10Error
from t10.planning.planners import planner as planner_of

# --------------------------------------------------------------------------------------------
# What lives when
# --------------------------------------------------------------------------------------------


def resident_bytes(expr: TensorExpr, plan: Plan, constant_inputs: Collection[int]) -> int:
    """Per-core bytes of the constant inputs (weights) in the plan's layout: they stay on
    chip for the whole program."""
    layouts = input_layouts(expr, plan)
    return sum(layouts[i].local_elements() for i in constant_inputs) * expr.elem_bytes


def split_bytes(
    expr: TensorExpr, plan: Plan, est: Estimate, constant_inputs: Collection[int]
) -> tuple[int, int]:
    """(resident, transient) per-core bytes of a plan: `est.sram_bytes` split into the
    constant inputs and everything else (activations, rotation buffers, reduction scratch)."""
    resident = resident_bytes(expr, plan, constant_inputs)
    return resident, est.sram_bytes - resident


@dataclass(frozen=True)
class Operands:
    """Where an operator's inputs come from, as far as memory is concerned: `constant` ones
    are weights (resident), `host` ones are function arguments it reads directly (placed in
    its layout before the program runs), `staged` ones are function arguments it reads
    through views (input index → the argument's shape: placed by `host_layout` before the
    program, moved into its layout when it runs), `viewed_constants` are weights it reads
    through views (placed by `host_layout` for the whole program, moved when it runs). The
    rest are outputs of other operators."""

    constant: tuple[int, ...] = ()
    host: tuple[int, ...] = ()
    staged: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    viewed_constants: Mapping[int, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class PlanPoint:
    """One frontier plan of an operator, with its bytes split for the model's memory."""

    plan: Plan
    estimate: Estimate
    resident_bytes: int
    output_bytes: int = 0
    """Its output tile, live from the operator to the last one that reads it."""
    input_bytes: int = 0
    """Its inputs other than weights in its layouts (part of the estimate)."""
    host_bytes: int = 0
    """Its host inputs in its layouts (part of the estimate), live from the program's start."""
    staged_bytes: int = 0
    """Its staged inputs in `host_layout` (not part of the estimate), live from the start."""
    cold: tuple[int, ...] = ()
    """Its weights kept *cold* (input indices): each lies in its home, `host_layout` over the
    plan's cores, for the whole program, and is expanded into the plan's layout (`expand`)
    every time the operator runs; the expanded copy is transient. Empty: every weight is
    *hot*, resident in the plan's layout."""
    expand_cycles: int = 0
    """A bound of the relayouts from the cold weights' homes into the plan's layouts (as
    transitions are bounded while choosing; the chosen plan's are recorded exactly)."""
    home_bytes: int = 0
    """The cold weights' homes (resident, not part of the estimate)."""
    viewed_bytes: int = 0
    """The weights it reads through views, placed by `host_layout` (resident, not part of the
    estimate, which holds their copies moved into its layouts as inputs)."""
    offchip: tuple[int, ...] = ()
    """Its host tensors kept in off-chip memory (input indices: weights, function arguments),
    loaded for it: transient, like its other inputs (`t10.planning.offchip_weights`)."""
    load_cycles: int = 0
    """The loads of its off-chip tensors, as if nothing hid them (while choosing; the chosen
    plans' loads are scheduled ahead, `schedule_loads`)."""
    load_bytes: int = 0
    """The per-core bytes its loads fill (held from their start until it has run)."""
    offchip_bytes: int = 0
    """The bytes its off-chip tensors take there (each whole, once)."""
    loads_viewed: bool = False
    """Whether one of its off-chip tensors is read through views: then it is moved first,
    and the operator waits for its loads before its moves rather than after them."""
    ahead: int | None = None
    """Pinned with its plan: its loads start this many operators ahead (None: as
    `schedule_loads` chooses)."""

    @property
    def transient_bytes(self) -> int:
        return self.estimate.sram_bytes - (
            self.resident_bytes - self.home_bytes - self.viewed_bytes
        )

    @property
    def cycles(self) -> int:
        """The operator's own cycles, with the expansion of its cold weights and the loads
        of its off-chip ones."""
        return self.estimate.cycles + self.expand_cycles + self.load_cycles

    @cached_property
    def row(self) -> tuple[int, ...]:
        """Its `_COLUMNS` fields, then its plan's cores (a row of `PointColumns`)."""
        return (
            self.resident_bytes, self.output_bytes, self.input_bytes, self.host_bytes,
            self.staged_bytes, self.transient_bytes, self.cycles, self.plan.cores,
        )


def plan_point(
    expr: TensorExpr,
    plan: Plan,
    est: Estimate,
    operands: Operands,
    cold: tuple[int, ...] = (),
    expand_cycles: int = 0,
    offchip: tuple[int, ...] = (),
) -> PlanPoint:
    """The point of `plan`; `cold`: weights (of `operands.constant`) kept cold, expanded in
    (at most) `expand_cycles` (`t10.planning.cold_weights`); `offchip`: weights kept off
    chip (`t10.planning.offchip_weights`)."""
    layouts = input_layouts(expr, plan)
    eb = expr.elem_bytes
    hot = [i for i in operands.constant if i not in cold and i not in offchip]
    viewed_kept = {i: s for i, s in operands.viewed_constants.items() if i not in offchip}
    staged_kept = {i: s for i, s in operands.staged.items() if i not in offchip}
    viewed_loaded = {  # loaded into host_layout, then moved through their views
        i: s for i, s in (*operands.staged.items(), *operands.viewed_constants.items())
        if i in offchip
    }

    def placed(shapes: Mapping[int, tuple[int, ...]]) -> int:
        """Bytes of inputs placed by `host_layout` over the cores of their final layout."""
        return sum(
            host_layout(shape, layouts[i].cores).local_elements() for i, shape in shapes.items()
        ) * eb

    homes = placed({i: expr.inputs[i].shape for i in cold})
    viewed = placed(viewed_kept)
    return PlanPoint(
        plan,
        est,
        resident_bytes(expr, plan, hot) + viewed + homes,
        output_bytes=output_layout(expr, plan).local_elements() * eb,
        input_bytes=sum(lay.local_elements() for i, lay in enumerate(layouts) if i not in hot)
        * eb + placed(viewed_loaded),
        host_bytes=sum(layouts[i].local_elements() for i in operands.host if i not in offchip)
        * eb,
        staged_bytes=placed(staged_kept),
        cold=cold,
        expand_cycles=expand_cycles,
        home_bytes=homes,
        viewed_bytes=viewed,
        offchip=offchip,
    )


@dataclass(frozen=True)
class OpOptions:
    """The plans one operator may take, fastest (and fattest) first; pinned: exactly one."""

    name: str
    points: tuple[PlanPoint, ...]
    pinned: bool = False
    operands: Operands = Operands()

    def point(self, chip: ChipSpec, expr: TensorExpr, plan: Plan) -> PlanPoint:
        """A plan of this operator outside its frontier, estimated."""
        return plan_point(expr, plan, estimate(chip, expr, plan), self.operands)


def op_options(
    expr: TensorExpr,
    frontier: Sequence[tuple[Plan, Estimate]],
    operands: Operands,
    pinned: bool = False,
) -> OpOptions:
    """The options of an operator from its frontier (fastest plan first)."""
    points = tuple(plan_point(expr, plan, est, operands) for plan, est in frontier)
    return OpOptions(expr.name, points, pinned, operands)


def within_share(op: OpOptions, chip: ChipSpec, share: float) -> OpOptions:
    """`op` with only the plans that take at most `share` of a core's SRAM while they run
    (beyond their resident weights): a vendor-style planner's limit on an operator's
    temporaries. Pinned operators keep their plan."""
    limit = int(share * chip.sram_bytes_per_core)
    kept = tuple(p for p in op.points if p.transient_bytes <= limit)
    if op.pinned or len(kept) == len(op.points):
        return op
    if not kept:
        least = min(p.transient_bytes for p in op.points)
        raise DoesNotFit(
            f"operator '{op.name}' does not fit the share of SRAM for temporaries: every plan "
            f"needs more than {share:g} of it while it runs (the smallest {least} bytes per "
            f"core, {limit} allowed); raise temporaries (at most 1) or use planner=t10"
        )
    return replace(op, points=kept)


def pinned_options(
    chip: ChipSpec, expr: TensorExpr, plan: Plan, operands: Operands
) -> OpOptions:
    """The options of an operator whose plan is fixed (validated, estimate recomputed)."""
    validate_plan(chip, expr, plan)
    return op_options(expr, [(plan, estimate(chip, expr, plan))], operands, pinned=True)


@dataclass(frozen=True)
class ReturnedView:
    """A view returned from the function, made on chip after operator `after` (-1: before
    every operator): a relayout of its source into `host_layout` of `shape` (stored, then
    freed). `producer`: the operator whose output it views (its destination lies over that
    operator's cores); None: a host tensor, placed over the program's cores (its bytes are
    among `Liveness.program_long`)."""

    after: int
    shape: tuple[int, ...]
    elem_bytes: int
    producer: int | None
    label: str
    source: tuple[int, ...] = ()
    """The shape of the tensor it views."""
    view: View | None = None
    """The views from that tensor to it, composed (`through_views`)."""

    def bytes_per_core(self, points: Sequence[PlanPoint]) -> int:
        """Its destination's bytes per core."""
        cores = program_cores(points) if self.producer is None else points[self.producer].plan.cores
        return self.bytes_on(cores)

    def bytes_on(self, cores: int) -> int:
        """Its destination's bytes per core when its source lies over `cores` cores: the
        destination takes the source's cores, which for a host source are those
        `host_layout` places it over (fewer than `cores` when its largest dim is shorter)."""
        host_source = self.source if self.producer is None else ()
        return _destination_bytes(self.shape, host_source, cores, self.elem_bytes)


@cache
def _destination_bytes(shape: tuple[int, ...], host_source: tuple[int, ...], cores: int,
                       elem_bytes: int) -> int:
    """`ReturnedView.bytes_on` (the greedy asks it for the same few plans again and again)."""
    if host_source:
        cores = host_layout(host_source, cores).cores
    return host_layout(shape, cores).local_elements() * elem_bytes


def program_cores(points: Sequence[PlanPoint]) -> int:
    """The most cores any chosen plan uses (1 without operators): where host tensors that no
    single operator owns are placed."""
    return max((p.plan.cores for p in points), default=1)


@dataclass(frozen=True)
class Liveness:
    """Who reads each operator's output, and what lives for the whole program.

    `readers[p]`: the operators that read operator p's output, ascending (through views and
    gathers; none: a returned output leaves the chip right after p). `program_long`: the
    (shape, bytes per element) of the tensors placed by `host_layout` for the whole
    program (gather tables and ids, returned gathers, sources of returned views), over the
    most cores any chosen plan uses. `returned`: the views returned from the function."""

    readers: tuple[tuple[int, ...], ...]
    program_long: tuple[tuple[tuple[int, ...], int], ...] = ()
    held: tuple[tuple[int, int, int], ...] = ()
    """(first, last, bytes per core): a buffer also live at every operator strictly
    between operators first and last (a move shared by their inputs)."""
    returned: tuple[ReturnedView, ...] = ()
    producers: tuple[tuple[int, ...], ...] = field(init=False, compare=False)
    """Per operator, the operators whose outputs it reads (derived from `readers`)."""
    until: np.ndarray = field(init=False, compare=False)
    """Per operator p, `live_until(p)` (derived)."""
    reads: tuple[np.ndarray, np.ndarray] = field(init=False, compare=False)
    """Every (producer, reader) pair, as two index arrays (derived)."""

    def __post_init__(self) -> None:
        producers: list[list[int]] = [[] for _ in self.readers]
        for p, readers in enumerate(self.readers):
            for k in readers:
                producers[k].append(p)
        object.__setattr__(self, "producers", tuple(tuple(ps) for ps in producers))
        viewed = [-1] * len(self.readers)
        for v in self.returned:
            if v.producer is not None:
                viewed[v.producer] = max(viewed[v.producer], v.after)
        until = [max(self.last_use(p), viewed[p] + 1) for p in range(len(self.readers))]
        object.__setattr__(self, "until", np.array(until, dtype=np.int64))
        pairs = [(p, k) for p, readers in enumerate(self.readers) for k in readers]
        edges = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        object.__setattr__(self, "reads", (edges[:, 0], edges[:, 1]))

    @cached_property
    def shapes(self) -> _LiveShapes:
        """Index arrays of `readers` for `Swaps.after_many`."""
        return _LiveShapes.of(self)

    @staticmethod
    def none(ops: int) -> Liveness:
        """No output outlives its operator."""
        return Liveness(((),) * ops)

    def last_use(self, p: int) -> int:
        return max(self.readers[p], default=p)

    def live_until(self, p: int) -> int:
        """Operator p's output is live at every operator strictly between p and this one:
        up to its last reader, and through the operator after which its last returned view
        is made (the view is moved once that operator has run)."""
        return int(self.until[p])

    def program_long_bytes(self, cores: int) -> int:
        return sum(
            prod(host_layout(shape, cores).local_shape()) * eb for shape, eb in self.program_long
        )


@dataclass(frozen=True)
class _LiveShapes:
    """Per operator i (as CSR rows): its readers, and the gaps of the range its output is held
    over (`live_until`) that are not readers: between i and its first reader, between
    consecutive readers, and after its last reader up to `until[i]` (start, stop: the
    operators strictly between, non-empty gaps only); `last[i]` = `last_use(i)`."""

    reader_ptr: np.ndarray
    readers: np.ndarray
    gap_ptr: np.ndarray
    gap_start: np.ndarray
    gap_stop: np.ndarray
    last: np.ndarray
    until: np.ndarray

    @staticmethod
    def of(liveness: Liveness) -> _LiveShapes:
        gaps: list[tuple[int, int]] = []
        gap_ptr = [0]
        for i, readers in enumerate(liveness.readers):
            stops = (*readers, liveness.live_until(i))
            gaps += [(a + 1, b) for a, b in zip((i, *readers), stops, strict=True) if b > a + 1]
            gap_ptr.append(len(gaps))
        counts = [len(r) for r in liveness.readers]
        span = np.array(gaps, dtype=np.int64).reshape(-1, 2)
        return _LiveShapes(
            np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]),
            np.array([k for r in liveness.readers for k in r], dtype=np.int64),
            np.array(gap_ptr, dtype=np.int64),
            span[:, 0],
            span[:, 1],
            np.array([liveness.last_use(i) for i in range(len(liveness.readers))],
                     dtype=np.int64),
            liveness.until,
        )


@dataclass(frozen=True)
class _PeakParts:
    """Operator k's peak = `always[k] + max(running[k], moving[k])` (see the module
    docstring): what is live whatever the phase, k's transient bytes, and its inputs with
    its producers' outputs while they move."""

    always: np.ndarray
    running: np.ndarray
    moving: np.ndarray

    @staticmethod
    def of(columns: PointColumns, liveness: Liveness) -> _PeakParts:
        n = len(columns.cores)
        host, staged = columns["host_bytes"], columns["staged_bytes"]
        output = columns["output_bytes"]
        # host inputs of operators after k, staged inputs of k and after: suffix sums
        later_host = np.concatenate([np.cumsum(host[::-1])[::-1][1:], [0]])
        staged_from = np.cumsum(staged[::-1])[::-1]
        # output of p: held at every k strictly between p and its last reader
        held = _held_between(n, np.arange(n), liveness.until, output, liveness, 1)
        always = later_host + staged_from + held + liveness.program_long_bytes(
            columns.program_cores()
        )
        running = columns["transient_bytes"]
        producer, reader = liveness.reads
        read = np.bincount(reader, weights=output[producer], minlength=n)
        moving = columns["input_bytes"] + read.astype(np.int64)
        return _PeakParts(always, running, moving)

    def peaks(self) -> np.ndarray:
        return self.always + np.maximum(self.running, self.moving)


@dataclass(frozen=True)
class _ReturnedParts:
    """Each returned view's bytes while it is made (`returned_peak`) as
    `base[r] + destination[r]`: what one plan changes apart from its destination (the host
    and staged inputs of the operators after it, the outputs live across it and the
    program-long tensors), and its destination's bytes per core."""

    after: np.ndarray
    base: np.ndarray
    destination: np.ndarray
    producer: np.ndarray
    """Each view's producer (-1: a host tensor)."""

    @staticmethod
    def of(
        points: Sequence[PlanPoint], columns: PointColumns, liveness: Liveness
    ) -> _ReturnedParts:
        n = len(points)
        later = np.concatenate(
            [np.cumsum((columns["host_bytes"] + columns["staged_bytes"])[::-1])[::-1], [0]]
        )
        across = _held_between(
            n, np.arange(n), liveness.until, columns["output_bytes"], liveness, 0
        )
        after = np.array([v.after for v in liveness.returned], dtype=np.int64)
        base = later[after + 1] + np.concatenate([[0], across])[after + 1]  # none before all
        base += liveness.program_long_bytes(program_cores(points))
        destination = np.array([v.bytes_per_core(points) for v in liveness.returned],
                               dtype=np.int64)
        producer = np.array(
            [-1 if v.producer is None else v.producer for v in liveness.returned],
            dtype=np.int64,
        )
        return _ReturnedParts(after, base, destination, producer)


_COLUMNS = (
    "resident_bytes", "output_bytes", "input_bytes", "host_bytes", "staged_bytes",
    "transient_bytes", "cycles",
)


@dataclass(frozen=True)
class PointColumns:
    """Fields of a list of plan points, one array each (row r: point r), and their cores."""

    fields: dict[str, np.ndarray]
    cores: np.ndarray

    @staticmethod
    def of(points: Sequence[PlanPoint]) -> PointColumns:
        table = np.array([p.row for p in points], dtype=np.int64).reshape(
            len(points), len(_COLUMNS) + 1
        )
        fields = {name: table[:, k] for k, name in enumerate(_COLUMNS)}
        return PointColumns(fields, table[:, len(_COLUMNS)])

    def program_cores(self) -> int:
        """`program_cores` of these points."""
        return int(self.cores.max()) if len(self.cores) else 1

    def __getitem__(self, name: str) -> np.ndarray:
        return self.fields[name]

    def rows(self, rows: np.ndarray) -> PointColumns:
        return PointColumns({k: v[rows] for k, v in self.fields.items()}, self.cores[rows])


def _held_between(
    n: int,
    first: np.ndarray,
    last: np.ndarray,
    nbytes: np.ndarray,
    liveness: Liveness,
    gap: int,
) -> np.ndarray:
    """Per point k in 0..n-1, the bytes of the buffers (and of `liveness.held`) live at k:
    a buffer of `nbytes[j]` from `first[j] + gap` up to `last[j]` (excluded), when that
    range is not empty."""
    if liveness.held:
        extra = np.array(liveness.held, dtype=np.int64).reshape(-1, 3)
        first = np.concatenate([first, extra[:, 0]])
        last = np.concatenate([last, extra[:, 1]])
        nbytes = np.concatenate([nbytes, extra[:, 2]])
    kept = last > first + gap
    change = np.zeros(n + 1, dtype=np.int64)
    np.add.at(change, first[kept] + gap, nbytes[kept])
    np.add.at(change, last[kept], -nbytes[kept])
    return np.cumsum(change[:n])


def peaks(points: Sequence[PlanPoint], liveness: Liveness) -> np.ndarray:
    """Per operator in program order: the bytes per core live at its peak, resident bytes
    aside (see the module docstring)."""
    return _PeakParts.of(PointColumns.of(points), liveness).peaks()


def returned_peak(points: Sequence[PlanPoint], liveness: Liveness) -> tuple[int, int | None]:
    """The bytes per core live while the returned views are made, resident bytes aside, at
    the heaviest of them (and its index in `liveness.returned`; None: there is none, the
    bytes are the program-long tensors alone)."""
    if not liveness.returned:
        return liveness.program_long_bytes(program_cores(points)), None
    parts = _ReturnedParts.of(points, PointColumns.of(points), liveness)
    live = parts.base + parts.destination
    heaviest = int(np.argmax(live))  # the first of the heaviest
    return int(live[heaviest]), heaviest


def model_bytes(points: Sequence[PlanPoint], liveness: Liveness | None = None) -> int:
    """Per-core bytes of a model: all resident bytes + the largest peak (`peaks`, or while
    the returned views are made: `returned_peak`)."""
    live = Liveness.none(len(points)) if liveness is None else liveness
    peak = int(peaks(points, live).max()) if points else 0
    return sum(p.resident_bytes for p in points) + max(peak, returned_peak(points, live)[0])


# --------------------------------------------------------------------------------------------
# The greedy
# --------------------------------------------------------------------------------------------


class _Greedy:
    """State of the memory reconciliation: one frontier index per operator."""

    def __init__(self, ops: Sequence[OpOptions], liveness: Liveness) -> None:
        self.ops = ops
        self.liveness = liveness
        self.idx = [0] * len(ops)
        # every op's points in one list (op i's from offset[i]), with their columns
        self.flat_columns = PointColumns.of([p for op in ops for p in op.points])
        counts = np.array([len(op.points) for op in ops], dtype=np.int64)
        self.offset = np.cumsum(counts) - counts
        self.counts = counts

    def point(self, i: int, j: int | None = None) -> PlanPoint:
        return self.ops[i].points[self.idx[i] if j is None else j]

    def chosen(self) -> list[PlanPoint]:
        return [self.point(i) for i in range(len(self.ops))]

    def swaps(self) -> Swaps:
        return Swaps(self.chosen(), self.liveness)

    def moves(self, swaps: Swaps) -> list[tuple[float, int, dict[int, int]]]:
        """Candidate moves (extra cycles per byte saved, tie-break, {op: new index}) from the
        current choice (`swaps`): for each op, its first later plan that shrinks the model;
        and, when several ops hold the largest peak, moving all of them below it."""
        now = swaps.total
        found: list[tuple[float, int, dict[int, int]]] = []
        cycles = self.flat_columns["cycles"]
        current = np.array(self.idx, dtype=np.int64)
        ops, j = np.arange(len(self.ops)), current + 1
        while True:  # all ops' next plans at once, then the next ones of those that did not shrink
            more = j < self.counts[ops]
            ops, j = ops[more], j[more]
            if not len(ops):
                break
            rows = self.offset[ops] + j
            after = swaps.after_many(ops, self.flat_columns.rows(rows))
            shrinks = after < now
            extra = cycles[rows] - cycles[self.offset[ops] + current[ops]]
            for i, jj, e, a in zip(
                ops[shrinks].tolist(), j[shrinks].tolist(), extra[shrinks].tolist(),
                after[shrinks].tolist(), strict=True,
            ):
                found.append((e / (now - a), i, {i: jj}))
            ops, j = ops[~shrinks], j[~shrinks] + 1
        found.sort(key=lambda m: m[1])
        top = int(swaps.peaks.max())
        holders = np.flatnonzero(swaps.peaks == top).tolist()
        if len(holders) > 1:
            group = self._group_move(holders, swaps, top)
            if group:
                after = model_bytes(
                    [self.point(i, group.get(i)) for i in range(len(self.ops))], self.liveness
                )
                if after < now:
                    extra = sum(self.point(i, j).cycles - self.point(i).cycles
                                for i, j in group.items())
                    found.append((extra / (now - after), min(group), group))
        return found

    def _group_move(self, holders: list[int], swaps: Swaps, top: int) -> dict[int, int] | None:
        """For each holder of the largest peak `top`, its first later plan that brings its
        own peak below `top`; None if some holder has none."""
        group = {}
        for k in holders:
            points = self.ops[k].points
            j = next(
                (j for j in range(self.idx[k] + 1, len(points))
                 if swaps.own_peak(k, points[j]) < top),
                None,
            )
            if j is None:
                return None
            group[k] = j
        return group

    def cycles(self) -> int:
        return sum(p.cycles for p in self.chosen())

    def run(self, capacity: int) -> bool:
        """Move operators until the model fits; False if stuck."""
        while (swaps := self.swaps()).total > capacity:
            moves = self.moves(swaps)
            if not moves:
                return False
            _, _, move = min(moves, key=lambda m: (m[0], m[1]))
            for i, j in move.items():
                self.idx[i] = j
        return True

    def relax(self, capacity: int) -> None:
        """Move operators back to faster plans while the model still fits (largest saving
        first); used after a fallback to the smallest model and from `budget_starts`."""
        cycles = self.flat_columns["cycles"]
        while True:
            swaps = self.swaps()
            current = np.array(self.idx, dtype=np.int64)
            # every op's faster plans at once (ops ascending, plans fastest first)
            ops = np.repeat(np.arange(len(self.ops)), current)
            j = np.arange(len(ops)) - np.repeat(np.cumsum(current) - current, current)
            rows = self.offset[ops] + j
            after = swaps.after_many(ops, self.flat_columns.rows(rows))
            fits = after <= capacity
            ops, j = ops[fits], j[fits]
            if not len(ops):
                return
            first = np.concatenate([[True], ops[1:] != ops[:-1]])  # each op's fastest that fits
            ops, j = ops[first], j[first]
            gain = cycles[self.offset[ops] + current[ops]] - cycles[self.offset[ops] + j]
            best = int(np.argmax(gain))  # the first op of the largest saving
            if gain[best] <= 0:
                return
            self.idx[int(ops[best])] = int(j[best])


class Swaps:
    """The model's bytes if one operator took another plan, the others unchanged. A plan's
    bytes shift whole ranges of the peaks by the same amount, except at the operator itself
    and its readers: the range maxima of the current peaks (`_RangeMax`, constant time each)
    and a recount at those few operators give the answer."""

    def __init__(self, points: Sequence[PlanPoint], liveness: Liveness) -> None:
        self.points = points
        self.liveness = liveness
        self.columns = PointColumns.of(points)
        self.parts = _PeakParts.of(self.columns, liveness)
        self.peaks = self.parts.peaks()
        self.resident = sum(p.resident_bytes for p in points)
        peak = int(self.peaks.max()) if points else 0
        self.total = self.resident + max(peak, returned_peak(points, liveness)[0])
        cores = sorted((p.plan.cores for p in points), reverse=True)
        self.most_cores = cores[0]
        self.next_most_cores = cores[1] if len(cores) > 1 else 0
        self._program_long: dict[int, int] = {}

    def _program_long_bytes(self, cores: int) -> int:
        if cores not in self._program_long:
            self._program_long[cores] = self.liveness.program_long_bytes(cores)
        return self._program_long[cores]

    def own_peak(self, i: int, new: PlanPoint) -> int:
        """Operator i's own peak if it took `new`."""
        old = self.points[i]
        moving = int(self.parts.moving[i]) + new.input_bytes - old.input_bytes
        always = int(self.parts.always[i]) + new.staged_bytes - old.staged_bytes
        return always + max(new.transient_bytes, moving)

    def after(self, i: int, new: PlanPoint) -> int:
        """`model_bytes` if operator i took `new`."""
        return int(self.after_many(np.array([i], dtype=np.int64), PointColumns.of([new]))[0])

    def after_many(self, ops: np.ndarray, new: PointColumns) -> np.ndarray:
        """`after(ops[c], new's point c)` for every candidate c at once (`new`: the candidates'
        columns), each in time independent of the model's length."""
        shapes, cur = self.liveness.shapes, self.columns
        d = {name: new[name] - cur[name][ops] for name in _COLUMNS}
        dout = d["output_bytes"]
        until = shapes.until[ops]
        peaks = self.peaks
        # before the operator: the prefix maxima; after its output's life: the suffix maxima
        tail = np.maximum(shapes.last[ops] + 1, until)
        before = np.concatenate([[_NEVER], np.maximum.accumulate(peaks)])[ops]
        beyond = np.concatenate([np.maximum.accumulate(peaks[::-1])[::-1], [_NEVER]])[tail]
        peak = np.maximum(0, np.maximum(before + d["host_bytes"] + d["staged_bytes"], beyond))
        # the held gaps, each shifted by the output's change
        owner, gap = _expand(shapes.gap_ptr, ops)
        if len(gap):
            top = self.range_table.maxima(shapes.gap_start[gap], shapes.gap_stop[gap])
            np.maximum.at(peak, owner, top + dout[owner])
        # its own peak
        always, running, moving = self.parts.always, self.parts.running, self.parts.moving
        own = always[ops] + d["staged_bytes"] + np.maximum(
            new["transient_bytes"], moving[ops] + d["input_bytes"]
        )
        peak = np.maximum(peak, own)
        # its readers, recounted
        owner, at = _expand(shapes.reader_ptr, ops)
        if len(at):
            k = shapes.readers[at]
            change = dout[owner]
            recount = (
                always[k]
                + np.where(k < until[owner], change, 0)
                + np.maximum(running[k], moving[k] + change)
            )
            np.maximum.at(peak, owner, recount)
        most = self._most_cores(ops, new.cores)
        if self.liveness.returned:
            peak = np.maximum(peak, self._returned_after(ops, d, new.cores, most))
        resident = self.resident + d["resident_bytes"]
        return resident + peak + self._program_long_changes(most)

    def _most_cores(self, ops: np.ndarray, cores: np.ndarray) -> np.ndarray:
        """`program_cores` if each operator ops[c] took a plan on cores[c]."""
        old = self.columns.cores[ops]
        others = np.where(old == self.most_cores, self.next_most_cores, self.most_cores)
        return np.maximum(others, cores)

    def _program_long_changes(self, most: np.ndarray) -> np.ndarray:
        """How the program-long tensors' bytes change when the most cores a plan uses become
        `most[c]`: they lie over those cores."""
        if not self.liveness.program_long:
            return np.zeros(len(most), dtype=np.int64)
        base = self._program_long_bytes(self.most_cores)
        values = np.unique(most)
        change = np.array([self._program_long_bytes(int(c)) - base for c in values])
        return np.where(most == self.most_cores, 0, change[np.searchsorted(values, most)])

    def _returned_after(
        self, ops: np.ndarray, d: Mapping[str, np.ndarray], cores: np.ndarray, most: np.ndarray
    ) -> np.ndarray:
        """`returned_peak` (with today's program-long tensors) if each operator ops[c] took
        a plan that changes its columns by d[...][c], on cores[c] (most[c]: the most cores
        any plan then uses), per candidate: the heaviest returned view's bytes."""
        views = self._returned_parts
        after, o = views.after[None, :], ops[:, None]
        live = views.base[None, :] + np.where(
            after < o, (d["host_bytes"] + d["staged_bytes"])[:, None], 0
        )  # host and staged inputs of the operators after the view
        held = (o <= after) & (after < self.liveness.until[ops][:, None])
        live += np.where(held, d["output_bytes"][:, None], 0)  # the output live across it
        # a destination lies over its producer's cores, or the program's for a host one
        returned = self.liveness.returned
        destination = np.repeat(views.destination[None, :], len(ops), axis=0)
        hosted = np.flatnonzero(views.producer < 0)
        if len(hosted):
            values, where = np.unique(most, return_inverse=True)
            table = np.array([[returned[r].bytes_on(int(c)) for r in hosted] for c in values],
                             dtype=np.int64)
            destination[:, hosted] = table[where]
        rows, cols = np.nonzero(ops[:, None] == views.producer[None, :])
        destination[rows, cols] = [
            returned[r].bytes_on(int(c)) for r, c in zip(cols, cores[rows], strict=True)
        ]
        return (live + destination).max(axis=1)

    @cached_property
    def _returned_parts(self) -> _ReturnedParts:
        return _ReturnedParts.of(self.points, self.columns, self.liveness)

    @cached_property
    def range_table(self) -> _RangeMax:
        return _RangeMax(self.peaks)


_NEVER = -(1 << 62)
"""Below any byte count: the maximum of an empty range."""


def _expand(ptr: np.ndarray, ops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For CSR rows `ptr` and the rows `ops` (repeats allowed): for every entry of those
    rows, the position in `ops` it belongs to and its index in the flat array."""
    counts = ptr[ops + 1] - ptr[ops]
    owner = np.repeat(np.arange(len(ops)), counts)
    first = np.repeat(ptr[ops] - (np.cumsum(counts) - counts), counts)
    return owner, first + np.arange(len(owner))


class _RangeMax:
    """The maxima of an integer array over index ranges, each in constant time: level k of
    the table holds the maxima of the runs of 2**k elements (a sparse table)."""

    def __init__(self, values: np.ndarray) -> None:
        levels = [values]
        width = 1
        while 2 * width <= len(values):
            previous = levels[-1]
            levels.append(np.maximum(previous[:-width], previous[width:]))
            width *= 2
        self.table = levels

    def maxima(self, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """max(values[start[c]:stop[c]]) for every c (all ranges non-empty)."""
        k = np.frexp((stop - start).astype(np.float64))[1] - 1  # floor(log2(length))
        out = np.empty(len(start), dtype=np.int64)
        for level in np.unique(k):
            sel = k == level
            row = self.table[level]
            out[sel] = np.maximum(row[start[sel]], row[stop[sel] - (1 << int(level))])
        return out


def smallest_model(
    ops: Sequence[OpOptions], liveness: Liveness | None = None
) -> tuple[int, list[int]]:
    """The smallest model's per-core bytes found, and one choice (frontier index per op)
    achieving it: for each bound on the transient bytes, every op takes its smallest-weights
    plan within the bound. Exact when no output outlives its operator and no host tensors
    are placed before the program (`Liveness.none`): the peaks are then the transients."""
    live = Liveness.none(len(ops)) if liveness is None else liveness
    # per op: its transient bytes ascending, and at each position the (first) plan with the
    # smallest weights among those up to it
    per_op: list[tuple[list[int], list[int]]] = []
    for op in ops:
        order = sorted(range(len(op.points)), key=lambda j: op.points[j].transient_bytes)
        ts = [op.points[j].transient_bytes for j in order]
        lightest: list[int] = []
        best_j = order[0] if order else 0
        for j in order:
            if op.points[j].resident_bytes < op.points[best_j].resident_bytes:
                best_j = j
            lightest.append(best_j)
        per_op.append((ts, lightest))
    best: tuple[int, list[int]] | None = None
    for bound in sorted({t for ts, _ in per_op for t in ts}):
        choice = []
        for ts, lightest in per_op:
            k = bisect.bisect_right(ts, bound) - 1
            if k < 0:
                break
            choice.append(lightest[k])
        else:
            total = model_bytes([op.points[j] for op, j in zip(ops, choice, strict=True)], live)
            if best is None or total < best[0]:
                best = (total, choice)
    if best is None:  # no operator
        return model_bytes([], live), []
    return best


def _does_not_fit(
    chip: ChipSpec,
    ops: Sequence[OpOptions],
    planner: str,
    liveness: Liveness,
    fastest: bool = False,
    smallest: int | None = None,
) -> DoesNotFit:
    """The error for a model whose smallest plans (or, `fastest`, every operator's fastest
    plan) exceed the chip's SRAM: what the bytes are (the heaviest weights, and what is live
    at the peak). Its `needed_bytes` are those of the choice the search's rule makes: the
    smallest plans, or every operator's fastest plan (`smallest`: what the smallest plans
    need when they do not fit either; None: they fit)."""
    if fastest:
        points = [op.points[0] for op in ops]
        least = model_bytes(points, liveness)
        which = "every operator's fastest plan needs"
        if smallest is not None:
            which = f"the smallest plans need {smallest} and {which}"
    else:
        least, choice = smallest_model(ops, liveness)
        points = [op.points[j] for op, j in zip(ops, choice, strict=True)]
        which = "the smallest plans need"
    resident = sum(p.resident_bytes for p in points)
    weights = f"{resident} bytes of resident weights"
    heaviest = sorted(range(len(ops)), key=lambda i: -points[i].resident_bytes)[:3]
    if resident:
        weights += " (the most: " + ", ".join(
            f"'{ops[i].name}' {points[i].resident_bytes}"
            for i in heaviest
            if points[i].resident_bytes
        ) + ")"
    fix = f"use a chip with more SRAM per core or more cores than {chip.cores}"
    if not ops:
        fix = "use a chip with more SRAM per core (a model without operators runs on one core)"
    elif hint := planner_of(planner).does_not_fit:
        fix += f", or {hint}"
    if fastest and smallest is None:  # smaller plans fit
        fix = "use search=greedy or search=exact, which trade time for memory"
    return DoesNotFit(
        f"the model does not fit chip '{chip.name}': it has {chip.sram_bytes_per_core} bytes "
        f"of SRAM per core, but {which} {least} bytes per core: {weights} + "
        f"{_peak_words(ops, points, liveness)}; {fix}",
        least,
    )


def _peak_words(ops: Sequence[OpOptions], points: Sequence[PlanPoint], liveness: Liveness) -> str:
    """What is live at the model's peak, in words."""
    returned, r = returned_peak(points, liveness)
    live = peaks(points, liveness) if points else np.zeros(1, dtype=np.int64)
    if returned > live.max() or not points:
        if r is None:
            return f"{returned} bytes of host tensors placed for the whole program"
        view = liveness.returned[r]
        return f"{returned} bytes while the returned view '{view.label}' is made on chip"
    k = int(np.argmax(live))  # the first operator at the peak
    own = points[k].transient_bytes
    peak = f"{int(live[k])} bytes while '{ops[k].name}' runs"
    if live[k] > own:
        peak += f" ({own} of its own, {int(live[k]) - own} of tensors live across it)"
    return peak


def _choosable(ops: Sequence[OpOptions], liveness: Liveness | None) -> Liveness:
    """`liveness` (default `Liveness.none`) once every operator has a plan to choose."""
    for op in ops:
        if not op.points:
            raise T10Error(f"operator '{op.name}': the plan search found no plan")
    return Liveness.none(len(ops)) if liveness is None else liveness


def choose_plans(
    chip: ChipSpec,
    ops: Sequence[OpOptions],
    planner: str = "t10",
    liveness: Liveness | None = None,
) -> list[PlanPoint]:
    """One plan per operator so that the model fits `chip.sram_bytes_per_core` (see the
    module docstring for the greedy); `liveness` defaults to `Liveness.none`. Pinned
    operators never move. Raises `T10Error` when no choice fits (`planner` only words the
    suggested fix)."""
    live = _choosable(ops, liveness)
    capacity = chip.sram_bytes_per_core
    if not ops:  # nothing to choose; returned views may still not fit
        if model_bytes([], live) > capacity:
            raise _does_not_fit(chip, ops, planner, live)
        return []
    greedy = _Greedy(ops, live)
    if _fell_back(greedy, chip, ops, planner, live):
        greedy.relax(capacity)
    fastest = sum(op.points[0].cycles for op in ops)  # no choice is faster
    if greedy.cycles() > fastest * (1 + CLOSE_ENOUGH):
        # the greedy may have traded the wrong bytes: start it elsewhere too
        fitted = []
        for start in budget_starts(ops, capacity):
            other = _Greedy(ops, live)
            other.idx = start
            if other.run(capacity):
                fitted.append(other)
        best = greedy
        for other in sorted(fitted, key=_Greedy.cycles)[:RELAXED_STARTS]:
            other.relax(capacity)
            if other.cycles() * (1 + CLOSE_ENOUGH) < best.cycles():
                best = other
        greedy = best
    return greedy.chosen()


def choose_from(
    chip: ChipSpec,
    ops: Sequence[OpOptions],
    start: Sequence[int],
    planner: str = "t10",
    liveness: Liveness | None = None,
) -> list[PlanPoint]:
    """`choose_plans` started from the plans `start` (an index per operator) instead of the
    fastest: the greedy's moves until the model fits (else the smallest model), then moves
    back to faster plans while it still fits. For a model far larger than the SRAM (its
    weights off chip), it starts near where it must end."""
    live = _choosable(ops, liveness)
    greedy = _Greedy(ops, live)
    greedy.idx = list(start)
    _fell_back(greedy, chip, ops, planner, live)
    greedy.relax(chip.sram_bytes_per_core)
    return greedy.chosen()


def _fell_back(
    greedy: _Greedy, chip: ChipSpec, ops: Sequence[OpOptions], planner: str, live: Liveness
) -> bool:
    """Runs `greedy` until the model fits; when it gets stuck, it takes the smallest model
    instead (refused when even that does not fit). Whether it fell back."""
    if greedy.run(chip.sram_bytes_per_core):
        return False
    least, choice = smallest_model(ops, live)
    if least > chip.sram_bytes_per_core:
        raise _does_not_fit(chip, ops, planner, live)
    greedy.idx = choice
    return True


def fastest_plans(
    chip: ChipSpec,
    ops: Sequence[OpOptions],
    planner: str = "t10",
    liveness: Liveness | None = None,
) -> list[PlanPoint]:
    """Every operator's fastest plan, each chosen on its own (no time traded for memory, as a
    vendor-style planner does); raises `T10Error` when they do not fit together."""
    live = _choosable(ops, liveness)
    chosen = [op.points[0] for op in ops]
    capacity = chip.sram_bytes_per_core
    if model_bytes(chosen, live) > capacity:
        try:
            choose_plans(chip, ops, planner, live)
        except DoesNotFit as smaller:  # no smaller choice fits either
            raise _does_not_fit(
                chip, ops, planner, live, fastest=True, smallest=smaller.needed_bytes
            ) from None
        raise _does_not_fit(chip, ops, planner, live, fastest=True)
    return chosen


BUDGET_STARTS = 16
"""How many transient budgets `budget_starts` tries."""
RELAXED_STARTS = 2
"""How many of the fastest fitted starts move operators back to faster plans (`relax`):
the fastest fitted start is nearly always the fastest relaxed one."""
CLOSE_ENOUGH = 0.005
"""The greedy's choice within this fraction of every operator's fastest plan (a lower bound
of any choice) is kept as it is; slower, it gives way to the greedy's from a
`budget_starts` start that is faster by more than this fraction (less is not worth a
different plan whose moves the transition sweep has yet to cost)."""


def budget_starts(ops: Sequence[OpOptions], capacity: int) -> list[list[int]]:
    """Starting choices for the greedy that split the SRAM between weights and the rest
    differently from its own path: for a budget B on every operator's transient bytes, each
    operator's fastest plans within B, then the cheapest steps (least extra time per resident
    byte saved, along each operator's lower convex hull) until the resident bytes fit in
    `capacity` - B. The greedy's moves only ever trade time for the model's bytes at hand;
    a start with smaller peaks and larger weights, or the reverse, can end faster."""
    transients = sorted({p.transient_bytes for op in ops for p in op.points})
    floor = max(min(p.transient_bytes for p in op.points) for op in ops)
    budgets = [t for t in transients if floor <= t < capacity]
    if len(budgets) > BUDGET_STARTS:
        step = (len(budgets) - 1) / (BUDGET_STARTS - 1)
        budgets = [budgets[round(k * step)] for k in range(BUDGET_STARTS)]
    starts = []
    for budget in budgets:
        start = _fastest_within(ops, budget, capacity - budget)
        if start is not None and start not in starts:
            starts.append(start)
    return starts


def _fastest_within(
    ops: Sequence[OpOptions], transient: int, resident: int
) -> list[int] | None:
    """Per operator a plan with at most `transient` transient bytes, the fastest such choices
    stepped down their convex hulls of (resident bytes, cycles) until the resident bytes
    total at most `resident` (None: they cannot)."""
    hulls: list[list[int]] = []
    for op in ops:
        allowed = [j for j, p in enumerate(op.points) if p.transient_bytes <= transient]
        if not allowed:
            return None
        hulls.append(_resident_hull(op.points, allowed))
    at = [0] * len(ops)
    total = sum(ops[i].points[h[0]].resident_bytes for i, h in enumerate(hulls))
    steps: list[tuple[float, int]] = []
    for i, hull in enumerate(hulls):
        if len(hull) > 1:
            heapq.heappush(steps, (_hull_slope(ops[i].points, hull, 0), i))
    while total > resident and steps:
        _, i = heapq.heappop(steps)
        points, hull = ops[i].points, hulls[i]
        total -= points[hull[at[i]]].resident_bytes - points[hull[at[i] + 1]].resident_bytes
        at[i] += 1
        if at[i] + 1 < len(hull):
            heapq.heappush(steps, (_hull_slope(points, hull, at[i]), i))
    if total > resident:
        return None
    return [hull[a] for hull, a in zip(hulls, at, strict=True)]


def _resident_hull(points: Sequence[PlanPoint], allowed: list[int]) -> list[int]:
    """The plans on the lower convex hull of (resident bytes, cycles) among `allowed`, from
    the fastest down to the lightest (each step saves resident bytes at a rising price)."""
    order = sorted(allowed, key=lambda j: (points[j].cycles, points[j].resident_bytes))
    hull: list[int] = []
    for j in order:
        if hull and points[j].resident_bytes >= points[hull[-1]].resident_bytes:
            continue  # slower and no lighter
        while len(hull) >= 2 and _hull_slope(points, hull[-2:], 0) >= _slope(
            points[hull[-1]], points[j]
        ):
            hull.pop()
        hull.append(j)
    return hull


def _hull_slope(points: Sequence[PlanPoint], hull: Sequence[int], at: int) -> float:
    return _slope(points[hull[at]], points[hull[at + 1]])


def _slope(a: PlanPoint, b: PlanPoint) -> float:
    """Extra cycles per resident byte saved from plan a to the lighter, slower plan b."""
    return (b.cycles - a.cycles) / max(a.resident_bytes - b.resident_bytes, 1)
