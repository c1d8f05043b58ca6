"""The memory reconciliation solved exactly: one plan per operator with the least total
operator cycles whose model fits the SRAM, as a mixed-integer linear program (HiGHS, through
`scipy.optimize.milp`). `choose_plans`' greedy makes the same choice approximately; this
measures how far it is from the optimum (`t10-plan-search{search=exact}`).

Every term of `model_bytes` is linear in the choice: x[i, j] = 1 when operator i takes its
frontier point j (one per operator). What is live at operator k (the module docstring of
`memory_reconciliation`) sums the resident bytes of every choice, the host inputs of the
operators after k, the staged inputs from k on, the outputs held across k, the held shared
moves, the program-long tensors, and the larger of k's transient bytes and k's moving
inputs (two constraints). The program-long tensors lie over the most cores any chosen plan
uses: one binary z[c] per core count c says which count that is (a plan may be chosen only
where some z[c'] with c' >= its cores is set, and the z[c] set needs a plan of c cores).
Each returned view adds a constraint for the moment it is made.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from t10.common.chip_spec import ChipSpec
from t10.errors import DoesNotFit, T10Error
from t10.planning.memory_reconciliation import Liveness, OpOptions, PlanPoint, model_bytes

TIME_LIMIT_SECONDS = 600.0
"""The solver's limit; past it the search says so instead of returning a choice that may not
be optimal."""


@dataclass
class _Rows:
    """Sparse rows `coefficients · x <= bound`, x = every (operator, point) then every z."""

    data: list[float]
    columns: list[int]
    row_of: list[int]
    bounds: list[float]

    def add(self, terms: dict[int, float], bound: float) -> None:
        row = len(self.bounds)
        for column, value in terms.items():
            if value:
                self.data.append(value)
                self.columns.append(column)
                self.row_of.append(row)
        self.bounds.append(bound)


def exact_plans(
    chip: ChipSpec, ops: Sequence[OpOptions], liveness: Liveness | None = None
) -> list[PlanPoint]:
    """The plans of least total cycles whose model fits `chip.sram_bytes_per_core` (ties:
    HiGHS's pick); raises `T10Error` when none fits or the solver gives up."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_array

    live = Liveness.none(len(ops)) if liveness is None else liveness
    capacity = chip.sram_bytes_per_core
    n = len(ops)
    if n == 0:
        return []
    offset = np.cumsum([0] + [len(op.points) for op in ops])
    points = [(i, j, p) for i, op in enumerate(ops) for j, p in enumerate(op.points)]
    cores = sorted({p.plan.cores for _, _, p in points})
    z = {c: int(offset[-1]) + k for k, c in enumerate(cores)}
    columns = int(offset[-1]) + len(cores)

    def column(i: int, j: int) -> int:
        return int(offset[i]) + j

    def choices(i: int, field: str) -> dict[int, float]:
        return {column(i, j): float(getattr(p, field)) for j, p in enumerate(ops[i].points)}

    def program_long() -> dict[int, float]:
        return {z[c]: float(live.program_long_bytes(c)) for c in cores}

    resident: dict[int, float] = {}
    for i in range(n):
        resident.update(choices(i, "resident_bytes"))
    held_fixed = _held_fixed(n, live)
    rows = _Rows([], [], [], [])
    for k in range(n):
        always = _summed(
            resident,
            *(choices(i, "host_bytes") for i in range(k + 1, n)),
            *(choices(i, "staged_bytes") for i in range(k, n)),
            *(choices(p, "output_bytes") for p in range(n) if p + 1 <= k < live.until[p]),
            program_long(),
        )
        moving = _summed(choices(k, "input_bytes"), *(choices(p, "output_bytes")
                                                       for p in live.producers[k]))
        rows.add(_summed(always, choices(k, "transient_bytes")), capacity - held_fixed[k])
        rows.add(_summed(always, moving), capacity - held_fixed[k])
    held_across = _held_fixed(n, live, gap=0)
    for view in live.returned:
        if view.producer is None:
            made_here = {z[c]: float(view.bytes_on(c)) for c in cores}
        else:
            made_here = {column(view.producer, j): float(view.bytes_on(p.plan.cores))
                         for j, p in enumerate(ops[view.producer].points)}
        made = _summed(
            resident,
            *(choices(i, f) for i in range(view.after + 1, n)
              for f in ("host_bytes", "staged_bytes")),
            *(choices(p, "output_bytes") for p in range(n) if p <= view.after < live.until[p]),
            program_long(),
            made_here,
        )
        rows.add(made, capacity - (held_across[view.after] if view.after >= 0 else 0))
    if not live.returned and n:  # no views: the program-long tensors alone must fit too
        rows.add(_summed(resident, program_long()), capacity)
    # the program's cores: a plan only under a chosen count, the chosen count reached
    for i, j, p in points:
        rows.add({column(i, j): 1.0, **{z[c]: -1.0 for c in cores if c >= p.plan.cores}}, 0.0)
    for c in cores:
        rows.add({z[c]: 1.0, **{column(i, j): -1.0 for i, j, p in points
                                if p.plan.cores == c}}, 0.0)
    # one plan per operator (a pinned one has one), one program core count
    one_each = _Rows([], [], [], [])
    for i in range(n):
        one_each.add({column(i, j): 1.0 for j in range(len(ops[i].points))}, 1.0)
    one_each.add({z[c]: 1.0 for c in cores}, 1.0)
    cost = np.zeros(columns)
    for i, j, p in points:
        cost[column(i, j)] = p.cycles

    def matrix(r: _Rows) -> csr_array:
        return csr_array((r.data, (r.row_of, r.columns)), shape=(len(r.bounds), columns))

    def between(r: _Rows, lower: float | np.ndarray) -> LinearConstraint:
        # scipy's annotations take scalar bounds only; it takes arrays
        return LinearConstraint(matrix(r), lower, np.array(r.bounds))  # pyright: ignore[reportArgumentType]

    with _native_output_to_stderr():
        result = milp(
            cost,
            integrality=np.ones(columns),
            bounds=Bounds(0, 1),
            constraints=[between(rows, -np.inf), between(one_each, np.array(one_each.bounds))],
            options={"time_limit": TIME_LIMIT_SECONDS},
        )
    if result.status == 2:
        raise DoesNotFit(
            f"t10-plan-search: no choice of plans fits {capacity} bytes of SRAM per core "
            "(the exact search proved it)"
        )
    if result.status != 0 or result.x is None:
        raise T10Error(
            f"t10-plan-search: the exact search gave up ({result.message}); use search=greedy"
        )
    x = np.round(result.x).astype(np.int64)
    chosen = [ops[i].points[j] for i, j, _ in points if x[column(i, j)]]
    if model_bytes(chosen, live) > capacity:  # the program above disagrees with the contract
        raise T10Error(
            f"internal error: the exact search's plans need {model_bytes(chosen, live)} bytes "
            f"of SRAM per core, more than {capacity}"
        )
    return chosen


@contextmanager
def _native_output_to_stderr() -> Iterator[None]:
    """HiGHS may print progress lines from native code to the process's standard output,
    which carries the IR (`t10-opt`) or a report: they go to standard error instead."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _summed(*terms: dict[int, float]) -> dict[int, float]:
    total: dict[int, float] = {}
    for term in terms:
        for column, value in term.items():
            total[column] = total.get(column, 0.0) + value
    return total


def _held_fixed(n: int, live: Liveness, gap: int = 1) -> list[int]:
    """Per operator, the bytes of the held shared moves live there (`Liveness.held`, from
    first + `gap` up to last excluded)."""
    held = [0] * n
    for first, last, nbytes in live.held:
        for k in range(first + gap, min(last, n)):
            held[k] += nbytes
    return held

