"""Off-chip weights: on a chip with off-chip memory (`t10.common.offchip`), an operator's
weights may live there instead of in SRAM, and be loaded into its plan's layouts for it.

While choosing plans, each frontier plan of an operator with weights gets an *off-chip twin*
(`with_offchip_weights`): no resident bytes for its weights, which are transient (live
around the operator only), and the loads' cycles added as if nothing hid them (`load_cycles`:
the loads run one after another on the memory's channel). The memory reconciliation then
trades over hot, cold and off-chip plans alike; the twins are offered only where the model
does not fit on chip as it is.

Once the plans are chosen, `schedule_loads` decides how far ahead of its operator each
operator's loads start (`t10.ahead`: a number of operators), walking the program in order
as the simulator runs it: the loads of one operator start together, before the moves into
the operator `ahead` operators earlier; the channel serves them in program order; the
operator waits, right before its first superstep, until all of them have arrived. Each
operator takes the fewest operators ahead that makes its loads arrive in time, or, when
none does, as early as they can arrive; never further ahead than the SRAM allows (its
weights are then live on the cores from the load's start: added to every peak between, on
top of the earlier operators' preloads) nor ahead of an earlier operator's loads. The
estimated wait of each operator is the simulator's (`t10.load`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import prod

import numpy as np
from xdsl.ir import Operation, SSAValue

from t10.common.attr_names import AHEAD_ATTR, COLD_ATTR, OFFCHIP_ATTR
from t10.common.chip_spec import ChipSpec
from t10.common.offchip import load_cycles
from t10.common.plans import Estimate, Layout, Plan, host_layout, input_layouts
from t10.common.tensor_expr import TensorExpr, op_name
from t10.common.weights import cold_inputs, is_host_tensor, named_indices
from t10.errors import DoesNotFit, T10Error
from t10.planning.memory_reconciliation import (
    Liveness,
    Operands,
    OpOptions,
    PlanPoint,
    peaks,
    plan_point,
)
from t10.t10_dialects.rtensor import through_views


def _soonest(starts: np.ndarray, free: int, room: np.ndarray, held: int, cycles: int,
             k: int, first_issue: int, ready: int) -> tuple[int, int]:
    """(operators ahead, arrival) of operator `k`'s loads: the fewest ahead that arrive by
    `ready`, else the earliest arrival, starting no earlier than operator `first_issue`
    and only where the SRAM has room for the `held` bytes at every operator between."""
    best, arrive = 0, max(int(starts[k]), free) + cycles
    for issue in range(k - 1, first_issue - 1, -1):
        if arrive <= ready or room[issue] < held:
            break
        at = max(int(starts[issue]), free) + cycles
        if at < arrive:
            best, arrive = k - issue, at
    return best, arrive


def _pinned_ahead(name: str, ahead: int, k: int, first_issue: int) -> int:
    """A pinned `t10.ahead` of operator `k` as the lowering places it (at most to the first
    operator); its loads may not start before an earlier operator's."""
    best = min(ahead, k)
    if k - best < first_issue:
        raise T10Error(
            f"operator '{name}': its pinned '{AHEAD_ATTR} = {ahead}' starts its loads before "
            f"those of an earlier operator; loads start in their readers' order: pin at most "
            f"{k - first_issue}"
        )
    return best


PRELOADS: dict[str, int | None] = {"planned": None, "next": 1, "none": 0}
"""The `preload` option: the most operators ahead an operator's loads may start (None: as
many as hide them)."""


def offchip_inputs(op: Operation, inputs: Sequence[SSAValue]) -> tuple[int, ...]:
    """The inputs of the operator whose generic is `op` (its `inputs`, epilogue's included)
    that `t10.offchip` names, ascending (`t10.common.weights`): host tensors (weights or
    function arguments) it reads directly or through views; none may also be cold."""
    offchip = named_indices(op, inputs, OFFCHIP_ATTR)
    for i in offchip:
        if not is_host_tensor(through_views(inputs[i])[0]):
            raise T10Error(
                f"operator '{op_name(op)}': '{OFFCHIP_ATTR}' names input {i}, which is not a "
                "weight or a function argument it reads (directly or through views); only "
                "those may be kept off chip"
            )
    both = sorted(set(offchip) & set(cold_inputs(op, inputs)))
    if both:
        raise T10Error(
            f"operator '{op_name(op)}': input {both[0]} is named by both '{COLD_ATTR}' and "
            f"'{OFFCHIP_ATTR}'; a weight lives in one place"
        )
    return offchip


def offchip_candidates(operands: Operands) -> tuple[int, ...]:
    """The inputs an operator may keep off chip: its host tensors (weights and function
    arguments), read directly or through views."""
    return tuple(sorted({*operands.constant, *operands.host, *operands.staged,
                         *operands.viewed_constants}))


def _loaded(expr: TensorExpr, plan: Plan, operands: Operands, offchip: Sequence[int]
            ) -> list[tuple[int, Layout]]:
    """(bytes off chip, layout it is loaded into) of each input in `offchip`: the plan's
    layout, or for one read through views, `host_layout` over its cores (then moved)."""
    layouts = input_layouts(expr, plan)
    viewed = {**operands.staged, **operands.viewed_constants}
    out = []
    for i in offchip:
        shape = viewed.get(i, expr.inputs[i].shape)
        layout = host_layout(shape, layouts[i].cores) if i in viewed else layouts[i]
        out.append((prod(shape) * expr.elem_bytes, layout))
    return out


def offchip_point(
    chip: ChipSpec, expr: TensorExpr, plan: Plan, est: Estimate, operands: Operands,
    offchip: Sequence[int] | None = None,
) -> PlanPoint:
    """`plan` with the inputs `offchip` (default: every host tensor it reads) kept off chip,
    their loads costed one after another on the memory's channel."""
    memory = chip.offchip
    assert memory is not None
    kept = offchip_candidates(operands) if offchip is None else tuple(sorted(offchip))
    loads = _loaded(expr, plan, operands, kept)
    eb = expr.elem_bytes
    return replace(
        plan_point(expr, plan, est, operands, offchip=kept),
        load_cycles=sum(
            load_cycles(memory, chip.exchange_cycles_per_byte, nbytes,
                        layout.local_elements() * eb)
            for nbytes, layout in loads
        ),
        load_bytes=sum(layout.local_elements() for _, layout in loads) * eb,
        offchip_bytes=sum(nbytes for nbytes, _ in loads),
        loads_viewed=any(i in operands.staged or i in operands.viewed_constants for i in kept),
    )


def with_offchip_weights(chip: ChipSpec, expr: TensorExpr, options: OpOptions) -> OpOptions:
    """`options` with the off-chip twin of every plan (its host tensors kept off chip),
    fastest first; pinned options, and those of an operator that reads no host tensor, as
    they are."""
    if options.pinned or not offchip_candidates(options.operands) or chip.offchip is None:
        return options
    twins = [
        offchip_point(chip, expr, point.plan, point.estimate, options.operands)
        for point in options.points
        if not point.offchip and not point.cold
    ]
    twins = [t for t in twins if t not in options.points]
    points = sorted((*options.points, *twins), key=lambda p: p.cycles)
    return replace(options, points=tuple(points))


@dataclass(frozen=True)
class LoadSchedule:
    """Per operator: how many operators ahead its off-chip weights start loading, and how
    long it waits for them (both 0 for an operator without)."""

    ahead: tuple[int, ...]
    waits: tuple[int, ...]
    preload_peak: int = 0
    """The largest of the operators' peaks with the preloads live at them, resident bytes
    included (0: nothing is preloaded): what the model's bytes are at least."""

    @property
    def wait_cycles(self) -> int:
        return sum(self.waits)


def schedule_loads(
    chip: ChipSpec,
    exprs: Sequence[TensorExpr],
    chosen: Sequence[PlanPoint],
    moves: Sequence[int],
    between: Sequence[int],
    liveness: Liveness,
    preload: str = "planned",
) -> LoadSchedule:
    """The loads' schedule (module docstring); `moves`: per operator, the cycles of its
    relayouts and gathers, which run right before it; `between`: per operator, the cycles of
    the moves that make the views returned between the operator before and its own moves
    (and its loads: they stand after those views); `preload`: a key of `PRELOADS`."""
    most = PRELOADS[preload]
    n = len(chosen)
    if not any(p.offchip for p in chosen):
        return LoadSchedule((0,) * n, (0,) * n)
    memory = chip.offchip
    assert memory is not None
    offchip = sum(p.offchip_bytes for p in chosen)
    if offchip > memory.capacity_bytes:
        raise DoesNotFit(
            f"the tensors kept off chip take {offchip:,} bytes, more than chip '{chip.name}''s "
            f"off-chip memory holds ({memory.capacity_bytes:,} bytes)"
        )
    live = sum(p.resident_bytes for p in chosen) + peaks(chosen, liveness)
    room = chip.sram_bytes_per_core - live  # per operator: what preloads may still take
    starts = np.zeros(n + 1, dtype=np.int64)  # when each operator's first move starts
    starts[0] = between[0] if n else 0
    ahead, waits = [0] * n, [0] * n
    free = 0  # when the channel ends the loads started so far
    first_issue = 0  # no load starts before an earlier operator's loads
    for k, point in enumerate(chosen):
        # when it waits: before its first superstep, or before its moves if one moves a load
        ready = int(starts[k]) + (0 if point.loads_viewed else moves[k])
        if point.offchip:
            held = point.load_bytes
            if point.ahead is not None:
                best = _pinned_ahead(exprs[k].name, point.ahead, k, first_issue)
                if (room[k - best:k] < held).any():
                    raise DoesNotFit(
                        f"operator '{exprs[k].name}': its pinned '{AHEAD_ATTR} = {point.ahead}' "
                        f"holds its weights ({held:,} bytes per core) where the SRAM has "
                        f"no room for them; pin fewer operators ahead"
                    )
                arrive = max(int(starts[k - best]), free) + point.load_cycles
            else:
                earliest = first_issue if most is None else max(first_issue, k - most)
                best, arrive = _soonest(starts, free, room, held, point.load_cycles, k,
                                        earliest, ready)
            ahead[k], free = best, arrive
            first_issue = k - best
            room[first_issue:k] -= held
            waits[k] = max(0, arrive - ready)
        starts[k + 1] = int(starts[k]) + moves[k] + waits[k] + point.estimate.cycles + (
            between[k + 1] if k + 1 < n else 0
        )
    peak = int((chip.sram_bytes_per_core - room).max()) if any(ahead) else 0
    return LoadSchedule(tuple(ahead), tuple(waits), peak)
