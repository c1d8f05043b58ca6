"""Progress on a terminal (`t10.tools.progress`), quiet otherwise; `t10 run --json`."""

from __future__ import annotations

import io
import json
import pathlib
import threading

import pytest

from t10.driver import CompileOptions, run_model
from t10.examples.models import mlp
from t10.passes.t10_compile import pass_names
from t10.tools.cli import main
from t10.tools.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Watching(Progress):
    """A Progress that also counts the threads while each stage starts."""

    threads: list[int]

    def stage(self, name: str) -> None:
        self.threads = [*getattr(self, "threads", []), threading.active_count()]
        super().stage(name)


def test_a_terminal_sees_every_stage_and_no_thread_starts() -> None:
    stream = Terminal()
    before = threading.active_count()
    with Watching("t10 run mlp", stream) as progress:
        run_model(mlp(), CompileOptions(chip="test-16"), timing_only=True, observer=progress)
    shown = stream.getvalue()
    for stage in ["importing the model", *pass_names(), "simulating"]:
        assert stage in shown
    assert [name for name, _ in progress.done] == ["importing the model", *pass_names()]
    assert progress.current == "simulating"
    assert set(progress.threads) == {before}  # the plan search may fork its workers


@pytest.mark.parametrize("stream", [io.StringIO(), Terminal()])
def test_quiet_when_not_a_terminal_or_asked(stream: io.StringIO) -> None:
    with Progress("t10 run mlp", stream, quiet=isinstance(stream, Terminal)) as progress:
        run_model(mlp(), CompileOptions(chip="test-16"), timing_only=True, observer=progress)
    assert stream.getvalue() == ""


def test_run_json_is_the_report(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    model, report = tmp_path / "mlp.onnx", tmp_path / "r.json"
    model.write_bytes(mlp().SerializeToString())
    assert main(["run", str(model), "--chip", "test-16", "--json", "--report", str(report)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == json.loads(report.read_text())
    assert captured.err == ""
