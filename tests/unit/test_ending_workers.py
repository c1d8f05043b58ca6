"""The plan search's worker processes end with the process that forked them: on SIGTERM,
SIGHUP and SIGINT, which end `t10` cleanly (one line, exit status 128 + the signal), and on
its death however it died (SIGKILL too). A worker that outlived it would hold the caller's
stdout and stderr open, and whatever reads them to the end would wait forever."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import default_ending_signals, float_model
from onnx import helper, numpy_helper

from t10.planning.forked import Terminated, can_fork, end_with_parent, ending_signals

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not can_fork(), reason="needs Linux (/proc, PR_SET_PDEATHSIG)"
)

STARTED = 180.0
"""Seconds `t10` may take to fork its workers (imports and shape inference on a loaded
machine)."""
ENDED = 30.0
"""Seconds everything may take to end after the signal (a worker left behind never does)."""
PR_GET_PDEATHSIG = 2


@pytest.fixture(scope="module")
def two_matmuls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two big MatMuls: their plan searches run in two workers for several seconds."""
    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
        for n, s in (("w1", (1024, 1024)), ("w2", (1024, 2048)))
    ]
    model = float_model(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]),
         helper.make_node("MatMul", ["h", "w2"], ["y"])],
        {"x": [512, 1024]}, ["y"], weights,
    )
    path = tmp_path_factory.mktemp("ending") / "two_matmuls.onnx"
    onnx.save(model, path)
    return path


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread or the process ended
            pass
    return found


def _living_in_group(group: int) -> list[int]:
    """The processes of process group `group` that have not died (zombies have)."""
    living = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] not in "ZX":
            living.append(int(stat.parent.name))
    return living


def _start(argv: list[str], workers: int) -> subprocess.Popen[bytes]:
    """`argv` started in a process group of its own, once it has `workers` children."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=default_ending_signals)
    deadline = time.monotonic() + STARTED
    while len(_children(proc.pid)) < workers:
        if proc.poll() is not None or time.monotonic() > deadline:
            err = _end(proc)
            pytest.fail(f"no {workers} workers: {err[-2000:]}")
        time.sleep(0.02)
    return proc


def _end(proc: subprocess.Popen[bytes]) -> str:
    """Whatever is left of `proc`'s group killed (so that a failing test leaves nothing);
    what `proc` wrote to stderr."""
    for pid in _living_in_group(proc.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return proc.communicate(timeout=ENDED)[1].decode()


def _outputs_after(proc: subprocess.Popen[bytes], signum: int) -> tuple[str, str]:
    """`proc`'s stdout and stderr to their ends after `signum`, which must come within
    `ENDED` seconds, when no process of its group may be left."""
    os.kill(proc.pid, signum)
    try:
        out, err = proc.communicate(timeout=ENDED)
    except subprocess.TimeoutExpired:
        left = _living_in_group(proc.pid)
        _end(proc)
        pytest.fail(f"stdout and stderr still open {ENDED:g} s after "
                    f"{signal.Signals(signum).name}; left: {left}")
    deadline = time.monotonic() + ENDED
    while (left := _living_in_group(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes {left} outlived their parent"
    return out.decode(), err.decode()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_t10_ends_with_its_workers_on_a_signal(two_matmuls: Path, signum: int) -> None:
    proc = _start([sys.executable, "-m", "t10.tools.cli", "run", "--timing-only", str(two_matmuls)],
                     workers=2)
    _, err = _outputs_after(proc, signum)
    message = "interrupted" if signum == signal.SIGINT else (
        f"terminated by {signal.Signals(signum).name}")
    assert (proc.returncode, err) == (128 + signum, f"t10: error: {message}\n")


def test_the_workers_of_a_killed_t10_end(two_matmuls: Path) -> None:
    proc = _start([sys.executable, "-m", "t10.tools.cli", "run", "--timing-only", str(two_matmuls)],
                     workers=2)
    _outputs_after(proc, signal.SIGKILL)


_FORKED_CALL = """
import time
from t10.planning.forked import ForkedCall
ForkedCall(lambda: time.sleep(600)).result()
"""


def test_the_child_of_a_killed_forked_call_ends() -> None:
    proc = _start([sys.executable, "-c", _FORKED_CALL], workers=1)
    _outputs_after(proc, signal.SIGKILL)


_SIGNAL_AS_IT_FORKS = """
import multiprocessing, os, signal, sys
os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGTERM))
"""

_T10_SIGNALLED_AS_IT_FORKS = _SIGNAL_AS_IT_FORKS + """
from t10.tools.cli import main
code = main(sys.argv[1:])
print(code, multiprocessing.active_children())
"""


def test_t10_signalled_as_it_forks_ends_and_reaps_its_workers(two_matmuls: Path) -> None:
    """Python ignores what a handler raises in a fork's callbacks: the signals wait until
    the workers are forked, then end `t10`, which kills and reaps them."""
    done = subprocess.run(
        [sys.executable, "-c", _T10_SIGNALLED_AS_IT_FORKS, "run", "--timing-only",
         str(two_matmuls)],
        capture_output=True, text=True, timeout=STARTED, check=False,
    )
    assert (done.stdout, done.stderr) == ("143 []\n", "t10: error: terminated by SIGTERM\n")


_FORKED_CALL_SIGNALLED_AS_IT_FORKS = _SIGNAL_AS_IT_FORKS + """
import time
from t10.planning.forked import ForkedCall, Terminated, ending_signals
try:
    with ending_signals():
        ForkedCall(lambda: time.sleep(600))
        time.sleep(600)
except Terminated:
    print(multiprocessing.active_children())
"""


def test_a_forked_call_signalled_as_it_forks_kills_its_child() -> None:
    done = subprocess.run([sys.executable, "-c", _FORKED_CALL_SIGNALLED_AS_IT_FORKS],
                          capture_output=True, text=True, timeout=ENDED, check=False)
    assert (done.stdout, done.stderr) == ("[]\n", "")


def test_a_worker_dies_with_its_parent_or_at_once_if_that_is_gone() -> None:
    """The worker asks for SIGKILL at its parent's death; if the parent died before it
    asked, it exits (then its parent is not the one it was forked by)."""
    for parent, expected in ((os.getpid(), signal.SIGKILL), (-1, 1)):
        child = os.fork()
        if child == 0:
            try:
                end_with_parent(parent)
                asked = ctypes.c_int()
                ctypes.CDLL(None).prctl(PR_GET_PDEATHSIG, ctypes.byref(asked), 0, 0, 0)
                os._exit(asked.value)
            finally:
                os._exit(100)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == expected


def test_ending_signals_raise_terminated_and_leave_ignored_ones_alone() -> None:
    hangup = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    # SIGTERM as by default, whatever an earlier test left (an in-process Ray installs its own)
    terminate = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with pytest.raises(Terminated) as raised, ending_signals():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
        assert raised.value.signum == signal.SIGTERM
        assert str(raised.value) == "terminated by SIGTERM"
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, hangup)
        signal.signal(signal.SIGTERM, terminate)
