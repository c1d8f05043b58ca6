"""Many operators' plan searches (`t10.planning.operator_frontiers`): side by side in worker
processes they give exactly the frontiers of searching one by one; each distinct expression
is searched once per process; a bad worker count is one clear error."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest

from t10.bench.plans import matmul_expr
from t10.common.chip_spec import load_chip
from t10.errors import T10Error
from t10.planning import operator_frontiers as frontiers_module
from t10.planning.operator_frontiers import (
    BIG_SEARCH_POINTS,
    clear_frontier_cache,
    operator_frontiers,
    worker_count,
)
from t10.planning.plan_search import operator_frontier

SHAPES = [(256, 128, 128), (128, 256, 192), (8, 16, 8), (256, 128, 160)]
"""Three big searches (at least `BIG_SEARCH_POINTS` loop points) and a small one."""


def test_side_by_side_equals_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frontiers_module, "usable_cpus", lambda: 2)
    chip = load_chip("ipu-mk2")
    exprs = [matmul_expr(s, "fp16", "fp32") for s in SHAPES]
    assert sum(m * k * n >= BIG_SEARCH_POINTS for m, k, n in SHAPES) == 3
    assert worker_count(0, 3) == 2
    clear_frontier_cache()
    parallel = operator_frontiers(chip, exprs, "t10", 0.5, jobs=0)
    serial = [operator_frontier(chip, e, "t10", 0.5) for e in exprs]
    assert parallel == serial
    assert all(parallel)


def test_each_distinct_expression_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    searched: list[str] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        searched.append(args[1].name)
        return operator_frontier(*args, **kwargs)

    monkeypatch.setattr(frontiers_module, "operator_frontier", counted)
    chip = load_chip("test-16")
    a = matmul_expr((16, 24, 8), "fp32", "fp32")
    renamed = dataclasses.replace(a, name="another")
    b = matmul_expr((8, 24, 16), "fp32", "fp32")
    clear_frontier_cache()
    first = operator_frontiers(chip, [a, renamed, b], "t10", 0.5, jobs=1)
    assert len(searched) == 2
    assert first[0] == first[1] == operator_frontier(chip, a, "t10", 0.5)
    again = operator_frontiers(chip, [b, a], "t10", 0.5, jobs=1)
    assert len(searched) == 2  # found from the first call
    assert again == [first[2], first[0]]
    operator_frontiers(chip, [a], "replicate", 0.5, jobs=1)  # another planner: a new search
    assert len(searched) == 3


def test_no_workers_when_one_cpu_or_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frontiers_module, "usable_cpus", lambda: 1)
    assert worker_count(0, 5) == 0
    monkeypatch.setattr(frontiers_module, "usable_cpus", lambda: 4)
    assert worker_count(0, 5) == 4
    assert worker_count(1, 5) == 0
    assert worker_count(3, 2) == 2
    assert worker_count(0, 1) == 0
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert worker_count(0, 5) == 0  # a fork would copy the other thread's locks
    finally:
        stop.set()
        other.join()


def test_bad_jobs_is_one_error() -> None:
    chip = load_chip("test-16")
    with pytest.raises(T10Error, match=r"^operator_frontiers: jobs must be 0 \(one worker per "
                                       r"CPU\) or a positive count, not -2$"):
        operator_frontiers(chip, [matmul_expr((4, 4, 4), "fp32", "fp32")], "t10", 0.5, -2)
