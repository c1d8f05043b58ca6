"""Bench cases in processes of their own under a memory cap (`t10.bench.capped`): the same
results as in this process, a case over its cap or killed by a signal is a row "too big to
compile here", never the end of the sweep. (A module of its own: the Ray tests' module keeps
Ray's threads running, and a process with other threads runs cases without forking.)"""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
from test_bench_models import PLANNERS, tiny_sweep, untimed

from t10.bench.capped import TOO_BIG, ProcessExecutor, default_case_memory
from t10.bench.models import SerialExecutor, run_sweep
from t10.bench.table import format_markdown, make_rows
from t10.errors import T10Error
from t10.planning.forked import ForkedCall, can_fork


@pytest.fixture(autouse=True)
def forking() -> None:
    assert can_fork(), "another Python thread runs: cases would run without forking"


@pytest.fixture(scope="module")
def serial() -> list[dict[str, Any]]:
    return run_sweep(tiny_sweep(batches=[1, 2]), SerialExecutor())


def test_each_case_in_a_process_of_its_own(serial: list[dict[str, Any]]) -> None:
    """`--serial` runs each case in a forked process under a memory cap: the same results."""
    cases = run_sweep(tiny_sweep(batches=[1, 2]), ProcessExecutor(default_case_memory(1)))
    assert untimed(cases) == untimed(serial)


def data_bytes() -> int:
    """This process's data memory (what RLIMIT_DATA caps), from /proc."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmData:"))
    return int(line.split()[1]) * 1024


def test_a_case_over_its_memory_cap_is_a_row() -> None:
    """A case that needs more memory than its cap is a row "too big to compile here" (its
    process's allocation fails), not an out-of-memory kill of the sweep; the table says so."""
    cap = data_bytes() + 2**20
    cases = run_sweep(tiny_sweep(batches=[1]), ProcessExecutor(cap))
    assert [c["status"] for c in cases] == [TOO_BIG] * len(PLANNERS)
    assert all(c["error"].startswith("needed more than") for c in cases)
    assert "too big to compile here" in format_markdown(make_rows(cases), PLANNERS, "fp16")


def test_a_case_killed_for_memory_is_a_row() -> None:
    """A case whose process a signal ends (SIGKILL, as the out-of-memory killer sends; SIGSEGV
    from a native library whose allocation failed under the cap) is a row too, naming the
    signal; any other early end is an error naming the case."""
    executor = ProcessExecutor(2**40)
    (case,) = tiny_sweep(batches=[1]).cases("bert-base", "test-16", 1)[:1]
    for signum in (signal.SIGKILL, signal.SIGSEGV):
        row = executor._died(case, -signum)
        assert row["status"] == TOO_BIG and row["error"].endswith(signum.name)
    with pytest.raises(T10Error, match="its process ended with exit code 3"):
        executor._died(case, 3)
    call = ForkedCall(lambda: os.kill(os.getpid(), signal.SIGKILL), died=lambda code: code)
    assert call.result() == -signal.SIGKILL


def test_a_case_memory_cap_is_positive() -> None:
    with pytest.raises(T10Error, match="must be positive"):
        ProcessExecutor(0)
