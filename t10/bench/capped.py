"""Bench cases in processes of their own, each under a memory cap.

A sweep runs many models, some of which the compiler cannot plan within this machine's memory.
Each case runs in a process that ends with it (a forked child one after another with
`--serial`, a Ray worker that runs one task otherwise), so its memory returns to the machine,
and under a cap on its data memory (`RLIMIT_DATA`: its heap and private mappings, which is where
Python's and numpy's allocations go): beyond it an allocation fails, and the case becomes a row
whose status is `TOO_BIG` instead of the kernel's out-of-memory killer ending the whole sweep.
The cap holds per process: the plan search's forked workers each have their own.
"""

from __future__ import annotations

import faulthandler
import os
import resource
import signal
from collections import deque
from functools import partial
from typing import Any

from t10.bench.models import Case, case_fields, run_case
from t10.errors import T10Error
from t10.planning.forked import ForkedCall, can_fork

TOO_BIG = "too big to compile here"
"""The status of a case that needed more memory than its cap."""
MEMORY_SHARE = 0.75
"""The share of the machine's memory the cases run at once may take together by default."""


def default_case_memory(parallel: int) -> int:
    """Bytes one case may take when `parallel` cases run at once: `MEMORY_SHARE` of the
    machine's memory, shared evenly."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return int(total * MEMORY_SHARE) // max(parallel, 1)


def run_case_capped(case: Case, cap: int | None) -> dict[str, Any]:
    """`run_case` with this process's data memory capped at `cap` bytes (None: not capped); a
    case that needs more is a `TOO_BIG` row. Only for a process that ends with the case: the
    cap stays."""
    if cap is None:
        return run_case(case)
    faulthandler.disable()  # a native crash under the cap is the case's row, not a dump
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = cap if hard == resource.RLIM_INFINITY else min(cap, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    try:
        return run_case(case)
    except MemoryError:
        return too_big(case, cap)


def too_big(case: Case, cap: int | None) -> dict[str, Any]:
    """The row of a case that needed more than `cap` bytes of memory (None: more than its
    machine had)."""
    limit = "its machine had" if cap is None else f"{cap / 2**30:.1f} GiB"
    return {**case_fields(case), "status": TOO_BIG,
            "error": f"needed more than {limit} of memory to compile "
                     "(--case-memory sets the cap)",
            "needed_sram_bytes_per_core": None}


class ProcessExecutor:
    """Runs each case in a forked process of its own (`run_case_capped`, under `cap` bytes;
    None: `default_case_memory` for one case at a time), one after another,
    in submission order; where this process may not fork (another Python thread runs), in
    this process without a cap. A case whose process a signal ended is a `TOO_BIG` row."""

    def __init__(self, cap: int | None = None) -> None:
        if cap is not None and cap <= 0:
            raise T10Error(f"the memory cap of a case must be positive, not {cap} bytes")
        self.cap = default_case_memory(1) if cap is None else cap
        self.queue: deque[Case] = deque()

    def submit(self, case: Case) -> None:
        self.queue.append(case)

    def next_result(self) -> dict[str, Any]:
        case = self.queue.popleft()
        if not can_fork():
            return run_case(case)
        call = ForkedCall(partial(run_case_capped, case, self.cap),
                          died=partial(self._died, case))
        return call.result()

    def _died(self, case: Case, code: int | None) -> dict[str, Any]:
        """The row of a case whose process ended without answering: killed by a signal, the
        kernel's out-of-memory killer's SIGKILL or a native library that did not survive a
        failed allocation under the cap (SIGSEGV, SIGABRT), it was too big."""
        if code is not None and code < 0:
            row = too_big(case, self.cap)
            row["error"] += f"; its process ended by {signal.Signals(-code).name}"
            return row
        raise T10Error(f"case {case.model} batch {case.batch} on {case.chip} with "
                       f"{case.planner}: its process ended with exit code {code}")
