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

from t10.common.attr_names import AHEAD_ATTR
from t10.common.chip_spec import ChipSpec
from t10.common.offchip import load_cycles
from t10.common.plans import Estimate, Plan, input_layouts
from t10.common.tensor_expr import TensorExpr
from t10.errors import DoesNotFit, T10Error
from t10.planning.memory_reconciliation import (
    Liveness,
    Operands,
    OpOptions,
    PlanPoint,
    peaks,
    plan_point,
)


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


def weight_load_cycles(
    chip: ChipSpec, expr: TensorExpr, plan: Plan, weights: Sequence[int]
) -> int:
    """Cycles of the loads of `weights` (input indices) into `plan`'s layouts, one after
    another on the off-chip memory's channel."""
    memory = chip.offchip
    assert memory is not None
    layouts = input_layouts(expr, plan)
    total = 0
    for i in weights:
        per_core = layouts[i].local_elements() * expr.elem_bytes
        tensor_bytes = prod(expr.inputs[i].shape) * expr.elem_bytes
        total += load_cycles(memory, chip.exchange_cycles_per_byte, tensor_bytes, per_core)
    return total


def offchip_point(
    chip: ChipSpec, expr: TensorExpr, plan: Plan, est: Estimate, operands: Operands
) -> PlanPoint:
    """`plan` with every weight of the operator kept off chip."""
    weights = tuple(operands.constant)
    point = plan_point(expr, plan, est, operands, offchip=weights)
    return replace(point, load_cycles=weight_load_cycles(chip, expr, plan, weights))


def with_offchip_weights(chip: ChipSpec, expr: TensorExpr, options: OpOptions) -> OpOptions:
    """`options` with the off-chip twin of every plan that holds weights resident (cold or
    hot), fastest first; pinned options as they are."""
    if options.pinned or not options.operands.constant or chip.offchip is None:
        return options
    twins = [
        offchip_point(chip, expr, point.plan, point.estimate, options.operands)
        for point in options.points
        if not point.offchip and point.resident_bytes > point.viewed_bytes
    ]
    twins = [t for t in twins if t not in options.points]
    points = sorted((*options.points, *twins), key=lambda p: p.cycles)
    return replace(options, points=tuple(points))


def offchip_bytes(exprs: Sequence[TensorExpr], chosen: Sequence[PlanPoint]) -> int:
    """The bytes the weights kept off chip take there (each tensor once)."""
    return sum(
        prod(expr.inputs[i].shape) * expr.elem_bytes
        for expr, point in zip(exprs, chosen, strict=True)
        for i in point.offchip
    )


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
    liveness: Liveness,
    preload: str = "planned",
) -> LoadSchedule:
    """The loads' schedule (module docstring); `moves`: per operator, the cycles of the
    relayouts and gathers that run right before it; `preload`: a key of `PRELOADS`."""
    most = PRELOADS[preload]
    n = len(chosen)
    if not any(p.offchip for p in chosen):
        return LoadSchedule((0,) * n, (0,) * n)
    memory = chip.offchip
    assert memory is not None
    offchip = offchip_bytes(exprs, chosen)
    if offchip > memory.capacity_bytes:
        raise DoesNotFit(
            f"the weights kept off chip take {offchip:,} bytes, more than chip '{chip.name}''s "
            f"off-chip memory holds ({memory.capacity_bytes:,} bytes)"
        )
    live = sum(p.resident_bytes for p in chosen) + peaks(chosen, liveness)
    room = chip.sram_bytes_per_core - live  # per operator: what preloads may still take
    starts = np.zeros(n + 1, dtype=np.int64)  # when each operator's first move starts
    ahead, waits = [0] * n, [0] * n
    free = 0  # when the channel ends the loads started so far
    first_issue = 0  # no load starts before an earlier operator's loads
    for k, point in enumerate(chosen):
        ready = int(starts[k]) + moves[k]  # the operator's first superstep, unless it waits
        if point.offchip:
            layouts = input_layouts(exprs[k], point.plan)
            held = sum(layouts[i].local_elements() for i in point.offchip)
            held *= exprs[k].elem_bytes
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
        starts[k + 1] = ready + waits[k] + point.estimate.cycles
    peak = int((chip.sram_bytes_per_core - room).max()) if any(ahead) else 0
    return LoadSchedule(tuple(ahead), tuple(waits), peak)
