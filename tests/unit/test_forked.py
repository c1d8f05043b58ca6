"""Work beside the compiling process: values, errors and failures come back as if the work
had run here."""

from __future__ import annotations

import os
import time

import pytest

from t10.errors import T10Error
from t10.planning import forked
from t10.planning.forked import ForkedCall, InProcessCall, call_beside, can_fork

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs a platform that forks")


def test_a_forked_call_returns_its_value_from_the_child() -> None:
    call = ForkedCall(lambda: (os.getpid(), [1, 2, 3]))
    pid, value = call.result()
    assert value == [1, 2, 3] and pid != os.getpid()


def test_a_user_facing_error_in_the_child_is_raised_here() -> None:
    def refuse() -> None:
        raise T10Error("model 'm' does not fit")

    with pytest.raises(T10Error, match="does not fit"):
        ForkedCall(refuse).result()


def test_a_child_that_fails_otherwise_leaves_the_work_to_this_process() -> None:
    """A bug shows with its traceback here, not as a lost result."""
    parent = os.getpid()

    def work() -> str:
        if os.getpid() != parent:
            raise ValueError("a bug")
        return "done here"

    assert ForkedCall(work).result() == "done here"
    with pytest.raises(ZeroDivisionError):
        ForkedCall(lambda: 1 // 0).result()


def test_an_unpicklable_value_is_computed_here() -> None:
    parent = os.getpid()
    assert ForkedCall(lambda: (lambda: os.getpid() == parent)).result()()


def test_a_cancelled_call_stops_its_child() -> None:
    call = ForkedCall(lambda: os.pause())
    call.cancel()
    assert not call.child.is_alive()


def test_one_job_or_one_cpu_works_here(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(call_beside(lambda: 1, jobs=1), InProcessCall)
    monkeypatch.setattr(forked, "usable_cpus", lambda: 1)
    assert isinstance(call_beside(lambda: 1, jobs=0), InProcessCall)
    monkeypatch.setattr(forked, "usable_cpus", lambda: 2)
    call = call_beside(lambda: 1, jobs=0)
    assert isinstance(call, ForkedCall) and call.result() == 1


def test_a_child_whose_parent_stops_listening_exits() -> None:
    """A parent that stops reading (it died, say, killed for memory) must not leave its child
    blocked forever writing a large answer: the child holds no read end of its own pipe."""
    def large() -> bytes:
        time.sleep(0.2)
        return bytes(1 << 20)

    call = ForkedCall(large)
    call.receiving.close()
    call.child.join(timeout=30)
    assert not call.child.is_alive()
