"""Memory reconciliation: T10's inter-operator search, one plan per operator for the whole
model. No IR here; the `t10-plan-search` pass (`t10/passes/t10_plan_search.py`) drives it
with the per-operator Pareto frontiers of `t10.passes.plan_search`.

All operators' weights live on chip at once, so one operator's fast-but-fat plan steals SRAM
from the others. Model memory per core = the sum over operators of their *resident* bytes
(constant inputs, the weights, in the operator's layout: on chip for the whole program) + the
max over operators of their *transient* bytes (activations, rotation buffers, reduction
scratch: live only while the operator runs).

`choose_plans` starts from every operator's fastest plan and, while the model does not fit,
moves the operator whose next smaller plan costs the least extra time per byte saved
(greedy dtime / dbytes). When several operators share the largest transient bytes, moving
one alone saves nothing, so moving all of them together is a candidate too. If the greedy gets
stuck, it falls back to the exact smallest model (`smallest_model`) and moves operators back
to faster plans while the model still fits. Pinned operators have a single plan and never
move.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from t10.errors import T10Error
from t10.passes.plan import Estimate, Plan, estimate, input_layouts
from t10.passes.plan_search import validate_plan
from t10.passes.tensor_expr import TensorExpr
from t10.sim.chip_spec import ChipSpec

# --------------------------------------------------------------------------------------------
# Resident and transient bytes
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
class PlanPoint:
    """One frontier plan of an operator, with its bytes split for the model's memory."""

    plan: Plan
    estimate: Estimate
    resident_bytes: int

    @property
    def transient_bytes(self) -> int:
        return self.estimate.sram_bytes - self.resident_bytes

    @property
    def cycles(self) -> int:
        return self.estimate.cycles


@dataclass(frozen=True)
class OpOptions:
    """The plans one operator may take, fastest (and fattest) first; pinned: exactly one."""

    name: str
    points: tuple[PlanPoint, ...]
    pinned: bool = False
    constant_inputs: tuple[int, ...] = ()

    def point(self, chip: ChipSpec, expr: TensorExpr, plan: Plan) -> PlanPoint:
        """A plan of this operator outside its frontier, estimated."""
        est = estimate(chip, expr, plan)
        return PlanPoint(plan, est, resident_bytes(expr, plan, self.constant_inputs))


def op_options(
    expr: TensorExpr,
    frontier: Sequence[tuple[Plan, Estimate]],
    constant_inputs: Collection[int],
    pinned: bool = False,
) -> OpOptions:
    """The options of an operator from its frontier (fastest plan first)."""
    points = tuple(
        PlanPoint(plan, est, resident_bytes(expr, plan, constant_inputs))
        for plan, est in frontier
    )
    return OpOptions(expr.name, points, pinned, tuple(sorted(constant_inputs)))


def pinned_options(
    chip: ChipSpec, expr: TensorExpr, plan: Plan, constant_inputs: Collection[int]
) -> OpOptions:
    """The options of an operator whose plan is fixed (validated, estimate recomputed)."""
    validate_plan(chip, expr, plan)
    return op_options(expr, [(plan, estimate(chip, expr, plan))], constant_inputs, pinned=True)


def model_bytes(points: Sequence[PlanPoint]) -> int:
    """Per-core bytes of a model: all resident bytes + the largest transient bytes."""
    if not points:
        return 0
    return sum(p.resident_bytes for p in points) + max(p.transient_bytes for p in points)


# --------------------------------------------------------------------------------------------
# The greedy
# --------------------------------------------------------------------------------------------


class _Greedy:
    """State of the memory reconciliation: one frontier index per operator."""

    def __init__(self, ops: Sequence[OpOptions]) -> None:
        self.ops = ops
        self.idx = [0] * len(ops)
        # min_resident_after[i][j]: the smallest resident bytes of op i's plans after j (none:
        # a value no plan reaches): can moving later ever shrink the weights?
        self.min_resident_after: list[list[int]] = []
        for op in ops:
            after = [0] * len(op.points)
            least = 1 << 62
            for j in reversed(range(len(op.points))):
                after[j] = least
                least = min(least, op.points[j].resident_bytes)
            self.min_resident_after.append(after)

    def point(self, i: int, j: int | None = None) -> PlanPoint:
        return self.ops[i].points[self.idx[i] if j is None else j]

    def chosen(self) -> list[PlanPoint]:
        return [self.point(i) for i in range(len(self.ops))]

    def moves(self) -> list[tuple[float, int, dict[int, int]]]:
        """Candidate moves (extra cycles per byte saved, tie-break, {op: new index}): for each
        op, its first later plan that shrinks the model; and, when several ops share the
        largest transient bytes, moving all of them below it."""
        chosen = self.chosen()
        resident = sum(p.resident_bytes for p in chosen)
        transients = [p.transient_bytes for p in chosen]
        top = max(transients)
        holders = [i for i, t in enumerate(transients) if t == top]
        second = max((t for t in transients if t != top), default=0)
        now = resident + top
        found: list[tuple[float, int, dict[int, int]]] = []
        for i, op in enumerate(self.ops):
            cur = chosen[i]
            others = second if holders == [i] else top
            if others == top and self.min_resident_after[i][self.idx[i]] >= cur.resident_bytes:
                continue  # only smaller weights could help, and there are none later
            for j in range(self.idx[i] + 1, len(op.points)):
                p = op.points[j]
                after = resident - cur.resident_bytes + p.resident_bytes + max(
                    p.transient_bytes, others
                )
                if after < now:
                    found.append(((p.cycles - cur.cycles) / (now - after), i, {i: j}))
                    break
        if len(holders) > 1:
            group = self._group_move(holders, top)
            if group:
                after = model_bytes([self.point(i, group.get(i)) for i in range(len(self.ops))])
                if after < now:
                    extra = sum(self.point(i, j).cycles - chosen[i].cycles
                                for i, j in group.items())
                    found.append((extra / (now - after), min(group), group))
        return found

    def _group_move(self, holders: list[int], top: int) -> dict[int, int] | None:
        """For each holder of the largest transient bytes `top`, its first later plan below
        `top`; None if some holder has none."""
        group = {}
        for i in holders:
            points = self.ops[i].points
            j = next(
                (j for j in range(self.idx[i] + 1, len(points))
                 if points[j].transient_bytes < top),
                None,
            )
            if j is None:
                return None
            group[i] = j
        return group

    def run(self, capacity: int) -> bool:
        """Move operators until the model fits; False if stuck."""
        while model_bytes(self.chosen()) > capacity:
            moves = self.moves()
            if not moves:
                return False
            _, _, move = min(moves, key=lambda m: (m[0], m[1]))
            for i, j in move.items():
                self.idx[i] = j
        return True

    def relax(self, capacity: int) -> None:
        """Move operators back to faster plans while the model still fits (largest saving
        first); used after a fallback to the smallest model."""
        while True:
            best: tuple[int, int, int] | None = None
            for i, op in enumerate(self.ops):
                cur = self.idx[i]
                for j in range(cur):
                    self.idx[i] = j
                    fits = model_bytes(self.chosen()) <= capacity
                    self.idx[i] = cur
                    if fits:
                        gain = op.points[cur].cycles - op.points[j].cycles
                        if gain > 0 and (best is None or gain > best[0]):
                            best = (gain, i, j)
                        break
            if best is None:
                return
            self.idx[best[1]] = best[2]


def smallest_model(ops: Sequence[OpOptions]) -> tuple[int, list[int]]:
    """The exact minimum of the model's per-core bytes over every choice of frontier plans,
    and one choice (frontier index per op) achieving it: for each bound on the transient
    bytes, every op takes its smallest-weights plan within the bound."""
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
            total = model_bytes([op.points[j] for op, j in zip(ops, choice, strict=True)])
            if best is None or total < best[0]:
                best = (total, choice)
    assert best is not None
    return best


def _does_not_fit(chip: ChipSpec, ops: Sequence[OpOptions], planner: str) -> T10Error:
    least, choice = smallest_model(ops)
    points = [op.points[j] for op, j in zip(ops, choice, strict=True)]
    # the three largest operators in the smallest model (stable: earlier ops first on ties)
    biggest = sorted(range(len(ops)), key=lambda i: -points[i].estimate.sram_bytes)[:3]
    names = ", ".join(
        f"'{ops[i].name}' ({points[i].resident_bytes} bytes of resident weights + "
        f"{points[i].transient_bytes} bytes while it runs)"
        for i in biggest
    )
    fix = f"use a chip with more SRAM per core or more cores than {chip.cores}"
    if planner == "replicate":
        fix += (", or the t10 planner (planner=t10), which rotates shared tensors among cores "
                "instead of replicating them")
    return T10Error(
        f"the model does not fit chip '{chip.name}': it has {chip.sram_bytes_per_core} bytes "
        f"of SRAM per core, but the smallest plans need {least} bytes per core; the largest "
        f"operators: {names}; {fix}"
    )


def choose_plans(
    chip: ChipSpec, ops: Sequence[OpOptions], planner: str = "t10"
) -> list[PlanPoint]:
    """One plan per operator so that the model fits `chip.sram_bytes_per_core` (see the
    module docstring for the greedy). Pinned operators never move. Raises `T10Error` when no
    choice fits (`planner` only words the suggested fix)."""
    for op in ops:
        if not op.points:
            raise T10Error(f"operator '{op.name}': the plan search found no plan")
    capacity = chip.sram_bytes_per_core
    greedy = _Greedy(ops)
    if not greedy.run(capacity):
        least, choice = smallest_model(ops)
        if least > capacity:
            raise _does_not_fit(chip, ops, planner)
        greedy.idx = choice
        greedy.relax(capacity)
    return greedy.chosen()
