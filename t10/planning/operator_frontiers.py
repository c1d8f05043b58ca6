"""Many operators' plan searches: each distinct one once, the big ones side by side.

An operator's frontier (`operator_frontier`) is a pure function of the chip, its expression
(but for its name) and the planner's options. So it is searched once per process and kept
(`FRONTIER_CACHE_SIZE` of them, least recently used dropped): `t10-fuse-epilogue` asks for
the fastest plans of the operators the plan search then plans, and the layers of a model
are identical operators. A model's few big contractions (a transformer layer's projections
and feed-forward matmuls) take most of its planning time; on a machine with more than one
core they are searched side by side, largest first.

Workers are forked (`t10.planning.forked`): a fork starts in milliseconds and needs no
importable `__main__` (a script without a `__name__ == "__main__"` guard would run again in a
spawned worker). A process running other Python threads is not forked: it searches every
operator itself, as does `jobs=1`.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from math import prod

from t10.common.chip_spec import ChipSpec
from t10.common.plans import Estimate, Plan
from t10.common.tensor_expr import TensorExpr
from t10.errors import T10Error
from t10.planning.forked import (
    can_fork,
    end_with_parent,
    frozen_objects,
    held_signals,
    usable_cpus,
)
from t10.planning.plan_search import check_options, operator_frontier

BIG_SEARCH_POINTS = 1 << 22
"""Searches of expressions with fewer loop points than this take milliseconds: a worker pool
starts only for two or more bigger ones (then it takes the small ones too)."""
FRONTIER_CACHE_SIZE = 512

Frontier = list[tuple[Plan, Estimate]]
_Key = tuple[ChipSpec, TensorExpr, str, float, str]
_cache: OrderedDict[_Key, tuple[tuple[Plan, Estimate], ...]] = OrderedDict()


def check_jobs(what: str, jobs: int) -> None:
    """`jobs` is a worker count: 0 (one per usable CPU) or more."""
    if jobs < 0:
        raise T10Error(
            f"{what}: jobs must be 0 (one worker per CPU) or a positive count, not {jobs}"
        )


def clear_frontier_cache() -> None:
    """Forget every frontier searched so far (to time or count searches)."""
    _cache.clear()


def worker_count(jobs: int, big: int) -> int:
    """How many workers search `big` big expressions: none unless two or more can run at
    once in a process that may fork."""
    wanted = min(usable_cpus() if jobs == 0 else jobs, big)
    return wanted if wanted >= 2 and can_fork() else 0


def operator_frontiers(
    chip: ChipSpec,
    exprs: Sequence[TensorExpr],
    planner: str,
    min_utilization: float,
    jobs: int = 0,
    placement: str = "aware",
) -> list[Frontier]:
    """`operator_frontier` of every expression, in order, each distinct one searched once
    (or found from an earlier call): in up to `jobs` worker processes (0: one per usable
    CPU) when two or more big ones can run at once, otherwise in this process."""
    check_options("operator_frontiers", planner, min_utilization, placement)
    check_jobs("operator_frontiers", jobs)
    keys = [(chip, dataclasses.replace(e, name=""), planner, min_utilization, placement)
            for e in exprs]
    missing = {k: e for k, e in zip(keys, exprs, strict=True) if k not in _cache}
    found = _search(chip, list(missing.values()), planner, min_utilization, jobs, placement)
    for key, frontier in zip(missing, found, strict=True):
        _cache[key] = tuple(frontier)
    frontiers = []
    for key in keys:
        _cache.move_to_end(key)
        frontiers.append(list(_cache[key]))
    while len(_cache) > FRONTIER_CACHE_SIZE:
        _cache.popitem(last=False)
    return frontiers


def _search(
    chip: ChipSpec,
    exprs: Sequence[TensorExpr],
    planner: str,
    min_utilization: float,
    jobs: int,
    placement: str,
) -> list[Frontier]:
    search = partial(operator_frontier, chip, planner=planner, min_utilization=min_utilization,
                     placement=placement)
    big = sorted(
        (i for i, e in enumerate(exprs) if prod(e.loop_sizes) >= BIG_SEARCH_POINTS),
        key=lambda i: -prod(exprs[i].loop_sizes),
    )
    workers = worker_count(jobs, len(big))
    if not workers:
        return [search(e) for e in exprs]
    # every search in the workers, largest first: the small ones fill the gaps the big
    # ones leave at the end
    order = sorted(range(len(exprs)), key=lambda i: -prod(exprs[i].loop_sizes))
    context = multiprocessing.get_context("fork")
    with frozen_objects(), ProcessPoolExecutor(
        workers, mp_context=context, initializer=end_with_parent, initargs=(os.getpid(),)
    ) as pool:
        try:
            with held_signals():  # the first submission forks the workers
                pending = {i: pool.submit(search, exprs[i]) for i in order}
            return [pending[i].result() for i in range(len(exprs))]
        except BaseException:  # an error, or interrupted: the other searches are not wanted
            _kill_workers(pool)
            raise


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Stops `pool`'s searches at once: leaving the pool then waits only for the workers to
    be reaped, not for every search to end (the pool's processes are reached as Python
    3.14's `ProcessPoolExecutor.kill_workers` does; earlier ones have no public way)."""
    for worker in list((pool._processes or {}).values()):
        worker.kill()
