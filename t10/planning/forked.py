"""Work done beside this process in a forked child (`ForkedCall`), and when forking is safe.

A fork starts in milliseconds and shares this process's memory (the IR, the frontiers found
so far) until either side writes to it; the child's result comes back pickled. A fork copies
the locks other threads hold at that moment, so a process running other Python threads
never forks (`can_fork`). Native pools that sit idle between calls (numpy's BLAS threads)
are no hazard: a child runs pure Python and exits without running this process's exit
handlers.

Workers end with this process, lest they hold its caller's stdout and stderr open: each dies
of SIGINT, SIGTERM and SIGHUP as by default, and on Linux of its parent's death, however the
parent died (`end_with_parent`). A program that forks them turns SIGTERM and SIGHUP into
`Terminated` (`ending_signals`), which unwinds as SIGINT's KeyboardInterrupt does, through
the code that stops the workers.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from types import FrameType
from typing import Generic, TypeVar, cast

from t10.errors import T10Error

T = TypeVar("T")

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""The signals that end a process by default, which `ending_signals` turns into `Terminated`."""
_STOPPING_SIGNALS = (signal.SIGINT, *ENDING_SIGNALS)
"""The signals a worker dies of; `held_signals` holds their Python handlers."""
_PR_SET_PDEATHSIG = 1
"""Linux's prctl option: the signal a process receives when its parent dies."""


class Terminated(BaseException):
    """One of `ENDING_SIGNALS` arrived (`ending_signals`). Like KeyboardInterrupt, no
    `except Exception` stops it on its way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = signum


@contextmanager
def ending_signals() -> Iterator[None]:
    """A context in which SIGTERM and SIGHUP raise `Terminated` in this (the main) thread,
    so that the process ends cleanly, its workers stopped. A signal the caller ignores
    (`nohup`) or handles stays so; a second one ends the process at once. Elsewhere than
    in the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken = [s for s in ENDING_SIGNALS if signal.getsignal(s) == signal.SIG_DFL]
    for signum in taken:
        signal.signal(signum, _raise_terminated)
    try:
        yield
    finally:
        for signum in taken:
            signal.signal(signum, signal.SIG_DFL)


def _raise_terminated(signum: int, _: FrameType | None) -> None:
    signal.signal(signum, signal.SIG_DFL)
    raise Terminated(signum)


@contextmanager
def held_signals() -> Iterator[None]:
    """A context in which the Python handlers of `_STOPPING_SIGNALS` wait: a signal arriving
    in it is raised again as it ends. For code that would lose what a handler raises: the
    callbacks of a fork, where Python prints it and goes on, or a native library's wait
    (blocking the signals would not do: a native thread, numpy's say, would take them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in _STOPPING_SIGNALS}
    held = [s for s, handler in previous.items() if callable(handler)]
    arrived: list[int] = []
    for signum in held:
        signal.signal(signum, lambda signum, _: arrived.append(signum))
    try:
        yield
    finally:
        for signum in held:
            signal.signal(signum, previous[signum])
        for signum in arrived:
            signal.raise_signal(signum)


def end_with_parent(parent: int) -> None:
    """In a worker just forked by the process `parent`: the signals that end a process end
    it (it inherited its parent's handlers, which would turn them into exceptions the work
    may catch), and on Linux so does its parent's death (the worker would otherwise wait
    forever for work, or to hand in an answer nobody reads)."""
    for signum in _STOPPING_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before it could be watched
        os._exit(1)


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
    the child failed otherwise (so that a bug surfaces here, with its traceback), or, when
    the child died without answering, gives `died(exit code)` if that is set.
    `cancel()` stops a child whose result is not wanted."""

    def __init__(
        self, work: Callable[[], T], died: Callable[[int | None], T] | None = None
    ) -> None:
        self.work = work
        self.died = died
        """What `result()` gives when the child ended without answering (killed for memory,
        say), from its exit code; None: `work()` is run here instead."""
        context = multiprocessing.get_context("fork")
        receiving, sending = context.Pipe(duplex=False)
        self.receiving = receiving
        self.child = context.Process(
            target=_run, args=(work, sending, receiving, os.getpid()), daemon=True
        )
        try:
            with frozen_objects(), held_signals():
                self.child.start()
        except BaseException:
            if self.child.pid is not None:  # interrupted as it forked
                self.cancel()
            raise
        finally:
            sending.close()

    def result(self) -> T:
        try:
            status, value = self.receiving.recv()
        except (EOFError, OSError):  # the child died before it answered
            status, value = "failed", None
        except BaseException:  # interrupted: the answer is no longer wanted
            self.cancel()
            raise
        finally:
            self.receiving.close()
            self.child.join()
        if status == "ok":
            return cast(T, value)
        if isinstance(value, T10Error):
            raise value
        if value is None and self.died is not None:
            return self.died(self.child.exitcode)
        return self.work()

    def cancel(self) -> None:
        self.child.kill()
        self.child.join()
        self.receiving.close()


def _run(
    work: Callable[[], object], sending: Connection, receiving: Connection, parent: int
) -> None:
    """In the child: the work, its answer sent to the parent. The child's copy of the read
    end is closed first: were it kept, a parent that died (killed for memory, say) would
    leave the child blocked forever writing a large answer into a pipe only it can read."""
    end_with_parent(parent)
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
