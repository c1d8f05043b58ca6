"""Work done beside this process in a forked child (`ForkedCall`), and when forking is safe.

A fork starts in milliseconds and shares this process's memory (the IR, the frontiers found
so far) until either side writes to it; the child's result comes back pickled. A fork copies
the locks other threads hold at that moment, so a process running other Python threads
never forks (`can_fork`). Native pools that sit idle between calls (numpy's BLAS threads)
are no hazard: a child runs pure Python and exits without running this process's exit
handlers.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Generic, TypeVar, cast

from t10.errors import T10Error

T = TypeVar("T")


def can_fork() -> bool:
    """Whether this process may fork workers: the platform forks, and no other Python
    thread runs."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class frozen_objects:
    """A context in which the collector leaves the objects made so far alone: it would touch
    every object a forked child shares with this process, copying their pages."""

    def __enter__(self) -> None:
        gc.freeze()

    def __exit__(self, *_: object) -> None:
        gc.unfreeze()


class ForkedCall(Generic[T]):
    """`work()` run in a forked child (check `can_fork` first). `result()` waits for its
    value, or raises the `T10Error` it raised; it runs `work()` in this process instead when
    the child failed otherwise (so that a bug surfaces here, with its traceback).
    `cancel()` stops a child whose result is not wanted."""

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
        self.receiving = receiving
        with frozen_objects():
            self.child = multiprocessing.get_context("fork").Process(
                target=_run, args=(work, sending, receiving), daemon=True
            )
            self.child.start()
        sending.close()

    def result(self) -> T:
        try:
            status, value = self.receiving.recv()
        except (EOFError, OSError):  # the child died before it answered
            status, value = "failed", None
        finally:
            self.receiving.close()
            self.child.join()
        if status == "ok":
            return cast(T, value)
        if isinstance(value, T10Error):
            raise value
        return self.work()

    def cancel(self) -> None:
        self.child.kill()
        self.child.join()
        self.receiving.close()


def _run(work: Callable[[], object], sending: Connection, receiving: Connection) -> None:
    """In the child: the work, its answer sent to the parent. The child's copy of the read
    end is closed first: were it kept, a parent that died (killed for memory, say) would
    leave the child blocked forever writing a large answer into a pipe only it can read."""
    receiving.close()
    try:
        answer: tuple[str, object] = ("ok", work())
    except T10Error as e:
        answer = ("error", e)
    except BaseException:  # the parent runs the work again and shows the bug
        answer = ("failed", traceback.format_exc())
    try:
        sending.send(answer)
    except Exception:  # an unpicklable value: the parent runs the work itself
        sending.send(("failed", traceback.format_exc()))
    sending.close()


class InProcessCall(Generic[T]):
    """`ForkedCall`'s interface for work done here, when `result()` asks for it."""

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work

    def result(self) -> T:
        return self.work()

    def cancel(self) -> None:
        pass


def call_beside(work: Callable[[], T], jobs: int) -> ForkedCall[T] | InProcessCall[T]:
    """`work()` started in a forked child when `jobs` (0: one per usable CPU) allows a second
    process and this one may fork; otherwise done here when its result is asked for."""
    workers = usable_cpus() if jobs == 0 else jobs
    if workers >= 2 and can_fork():
        return ForkedCall(work)
    return InProcessCall(work)
