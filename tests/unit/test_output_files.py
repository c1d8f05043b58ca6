"""Output files are written whole or not at all (`t10.common.files.output_file`): a write
cut short (a full disk, a file size limit), an error or Ctrl-C leaves the old file as it was
and no partial or temporary file; a failed write is one error line naming the file and the
reason. No output may be one of the run's inputs or another output, and no path is empty."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import t10.tools.cli
import t10.tools.opt
from t10.common.chip_spec import load_chip
from t10.common.files import output_file, write_text
from t10.errors import T10Error
from t10.tools.cli import main

CHIP = "test-16"
OLD = "the old content\n"


def _relu() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="u")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "relu.onnx"
    onnx.save_model(_relu(), path)
    return path


def _error(capsys: pytest.CaptureFixture[str], prog: str = "t10") -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    return lines[0]


# ------------------------------------------------------------------------------- the helper


def test_replaces_the_file_whole_keeping_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text(OLD)
    path.chmod(0o640)
    write_text(path, "new\n", "--x")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["out.txt"]


def test_a_symbolic_link_keeps_pointing_at_the_new_file(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text(OLD)
    (tmp_path / "link.txt").symlink_to("real.txt")
    write_text(tmp_path / "link.txt", "new\n", "--x")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "new\n"


class _Stop(BaseException):
    pass


@pytest.mark.parametrize(
    ("failure", "raised"),
    [
        (OSError(28, "No space left on device"), T10Error),
        (KeyboardInterrupt(), KeyboardInterrupt),
        (ValueError("a bug"), ValueError),
        (_Stop(), _Stop),
    ],
)
def test_a_failed_write_leaves_the_old_file(
    tmp_path: Path, failure: BaseException, raised: type[BaseException]
) -> None:
    path = tmp_path / "out.txt"
    path.write_text(OLD)
    with pytest.raises(raised) as e, output_file(path, "--x") as fresh:
        Path(fresh).write_text("part of the new")
        raise failure
    if raised is T10Error:
        assert str(e.value) == f"cannot write --x '{path}': No space left on device"
    assert path.read_text() == OLD
    assert os.listdir(tmp_path) == ["out.txt"]


def test_a_device_is_written_in_place() -> None:
    write_text("/dev/null", "text", "--x")
    with pytest.raises(T10Error, match=r"^cannot write --x '/dev/full': No space left on device$"):
        write_text("/dev/full", "text\n" * 10_000, "--x")


# ------------------------------------------------------- every writer, under a file size limit

_LIMITED = """
import contextlib, io, json, resource, signal, sys
import matplotlib.figure
import t10.tools.cli, t10.tools.opt, t10.examples.__main__
fig = matplotlib.figure.Figure()
fig.savefig(io.BytesIO())  # matplotlib's caches are written before the limit
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (200, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
tools = {"t10": t10.tools.cli.main, "t10-opt": t10.tools.opt.main,
         "examples": t10.examples.__main__.main}
for tool, argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = tools[tool](argv)
        except Exception as e:  # a traceback: shown as the error
            code = -1
            err.write(repr(e))
    print(json.dumps([code, err.getvalue()]), flush=True)
"""


def _writers(model: Path, d: Path) -> list[tuple[str, list[str], str, str]]:
    """(tool, argv, the file it writes, what the error calls it) of every writer."""
    mlir = d / "in.mlir"
    mlir.write_text("builtin.module {\n" + "builtin.module {}\n" * 20 + "}\n")
    run = ["run", str(model), "--chip", CHIP]
    return [
        ("t10", [*run, "--outputs", str(d / "o.npz")], "o.npz", "--outputs"),
        ("t10", [*run, "--report", str(d / "r.json")], "r.json", "--report"),
        ("t10", [*run, "--trace", str(d / "t.json")], "t.json", "--trace"),
        ("t10", [*run, "--plot", str(d / "p.png")], "p.png", "the plot"),
        ("t10", ["compile", str(model), "--chip", CHIP, "-o", str(d / "c.mlir")], "c.mlir",
         "-o"),
        ("t10", ["explain", str(model), "--chip", CHIP, "--op", "u", "-o", str(d / "e.png")],
         "e.png", "the plot"),
        ("t10", ["zoo", "nerf", "--layers", "1", "-o", str(d / "z.onnx")], "z.onnx",
         "zoo model"),
        ("examples", ["matmul", "-o", str(d / "m.onnx")], "m.onnx", "-o"),
        ("t10-opt", [str(mlir), "-o", str(d / "x.mlir")], "x.mlir", "-o"),
    ]


def test_a_write_past_the_file_size_limit_leaves_every_old_file(
    model: Path, tmp_path: Path
) -> None:
    """Each writer in a process whose files may not grow past 200 bytes: one line naming the
    file and the reason, the old file intact, nothing else left in the directory."""
    d = tmp_path / "out"
    d.mkdir()
    writers = _writers(model, d)
    before = set(os.listdir(d))
    for _, _, name, _ in writers:
        (d / name).write_text(OLD)
    done = subprocess.run(
        [sys.executable, "-B", "-c", _LIMITED, json.dumps([w[:2] for w in writers])],
        capture_output=True, text=True, check=False, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(writers), done.stdout
    wrong = []
    for (tool, _, name, what), (code, err) in zip(writers, results, strict=True):
        prog = "python -m t10.examples" if tool == "examples" else tool
        expected = f"{prog}: error: cannot write {what} '{d / name}': File too large\n"
        if code != 1 or err != expected or (d / name).read_bytes() != OLD.encode():
            wrong.append(f"{name}: exit {code}, {err.strip()!r}, file "
                         f"{(d / name).read_bytes()[:20]!r}")
    assert not wrong, "\n".join(wrong)
    assert set(os.listdir(d)) == before | {name for _, _, name, _ in writers}


# ------------------------------------------------------------------ t10-opt and interrupts


def test_t10_opt_leaves_its_output_file_when_the_pipeline_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "in.mlir").write_text("builtin.module {}\n")
    out = tmp_path / "out.mlir"
    out.write_text(OLD)
    argv = [str(tmp_path / "in.mlir"), "-p", "t10-plan-search{chip=nosuch}", "-o", str(out)]
    assert t10.tools.opt.main(argv) == 1
    assert "unknown chip 'nosuch'" in _error(capsys, "t10-opt")
    assert out.read_text() == OLD
    assert t10.tools.opt.main([str(tmp_path / "in.mlir"), "-o", str(out)]) == 0
    assert out.read_text().startswith("builtin.module {\n}\n")


def test_t10_opt_leaves_its_output_file_when_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(self: Any, prog: Any) -> str:
        raise KeyboardInterrupt

    (tmp_path / "in.mlir").write_text("builtin.module {}\n")
    out = tmp_path / "out.mlir"
    out.write_text(OLD)
    monkeypatch.setattr(t10.tools.opt.T10OptMain, "output_resulting_program", interrupted)
    assert t10.tools.opt.main([str(tmp_path / "in.mlir"), "-o", str(out)]) == 130
    assert _error(capsys, "t10-opt") == "t10-opt: error: interrupted"
    assert out.read_text() == OLD
    assert sorted(os.listdir(tmp_path)) == ["in.mlir", "out.mlir"]


def test_t10_opt_writes_to_a_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.mlir").write_text("builtin.module {}\n")
    assert t10.tools.opt.main([str(tmp_path / "in.mlir"), "-o", "/dev/null"]) == 0
    assert t10.tools.opt.main([str(tmp_path / "in.mlir"), "-o", "/dev/full"]) == 1
    assert _error(capsys, "t10-opt") == (
        "t10-opt: error: cannot write -o '/dev/full': No space left on device"
    )


def test_compile_interrupted_while_writing_leaves_the_old_file(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def interrupted(module: Any, stream: Any, *args: Any) -> None:
        stream.write("builtin.module {\n")
        raise KeyboardInterrupt

    out = tmp_path / "out.mlir"
    out.write_text(OLD)
    monkeypatch.setattr(t10.tools.cli, "print_ir", interrupted)
    assert main(["compile", str(model), "--chip", CHIP, "-o", str(out)]) == 130
    assert _error(capsys) == "t10: error: interrupted"
    assert out.read_text() == OLD
    assert sorted(os.listdir(tmp_path)) == ["out.mlir", "relu.onnx"]


# --------------------------------------------------------- outputs onto inputs, empty paths


@pytest.fixture
def files(model: Path, tmp_path: Path) -> Iterator[dict[str, Path]]:
    chip = tmp_path / "chip.json"
    chip.write_text(json.dumps(load_chip(CHIP).to_dict()))
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.ones((2, 3), np.float32))
    os.link(model, tmp_path / "hard.onnx")
    (tmp_path / "soft.json").symlink_to("chip.json")
    found = {"model": model, "chip": chip, "inputs": inputs}
    contents = {name: path.read_bytes() for name, path in found.items()}
    yield found
    for name, path in found.items():  # no input was touched
        assert path.read_bytes() == contents[name], name


SAME = [
    (["run", "{model}", "--inputs", "{inputs}", "--report", "{inputs}"],
     "--report '{inputs}' is the file of --inputs '{inputs}'"),
    (["run", "{model}", "--chip", "{chip}", "--trace", "{chip}"],
     "--trace '{chip}' is the file of --chip '{chip}'"),
    (["run", "{model}", "--trace", "{model}"], "--trace '{model}' is the file of the model "
                                               "'{model}'"),
    (["run", "{model}", "--plot", "{dir}/hard.onnx"],
     "--plot '{dir}/hard.onnx' is the file of the model '{model}'"),
    (["run", "{model}", "--chip", "{chip}", "--report", "{dir}/soft.json"],
     "--report '{dir}/soft.json' is the file of --chip '{chip}'"),
    (["run", "{model}", "--outputs", "{dir}/x.npz", "--report", "{dir}/x.npz"],
     "--outputs '{dir}/x.npz' and --report '{dir}/x.npz' are one file"),
    (["run", "{model}", "--trace", "{dir}/t.json", "--report", "{dir}/./t.json"],
     "--report '{dir}/./t.json' and --trace '{dir}/t.json' are one file"),
    (["compile", "{model}", "-o", "{model}"], "-o '{model}' is the file of the model"),
    (["explain", "{model}", "--chip", "{chip}", "--op", "u", "-o", "{chip}"],
     "-o '{chip}' is the file of --chip '{chip}'"),
]


@pytest.mark.parametrize(("argv", "message"), SAME, ids=[f"same{i}" for i in range(len(SAME))])
def test_an_output_onto_an_input_or_another_output_is_a_usage_error(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    argv: list[str], message: str,
) -> None:
    names = {**{k: str(v) for k, v in files.items()}, "dir": str(tmp_path)}
    argv = [a.format(**names) for a in argv]
    if "--chip" not in argv:
        argv += ["--chip", CHIP]
    before = set(os.listdir(tmp_path))
    assert main(argv) == 2
    line = _error(capsys)
    assert message.format(**names) in line, line
    assert line.endswith(("give another file name", "give each its own name")), line
    assert set(os.listdir(tmp_path)) == before


EMPTY = [
    ["run", "{model}", "--report", ""],
    ["run", "{model}", "--trace", ""],
    ["run", "{model}", "--plot", ""],
    ["run", "{model}", "--inputs", ""],
    ["run", "{model}", "--chip", ""],
    ["run", ""],
    ["compile", "{model}", "-o", ""],
    ["compile", ""],
    ["explain", "{model}", "--op", "u", "-o", ""],
    ["zoo", "nerf", "-o", ""],
    ["bench", "--out", "", "--serial"],
]


@pytest.mark.parametrize("argv", EMPTY, ids=[" ".join(a) for a in EMPTY])
def test_an_empty_path_is_a_usage_error(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], argv: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(t10.tools.cli, "run_and_write", _no_bench)
    assert main([a.format(model=model) for a in argv]) == 2
    line = _error(capsys)
    assert re.search(r"argument .*: expected a file name, got ''", line), line
    assert sorted(os.listdir(tmp_path)) == ["relu.onnx"]


def _no_bench(*args: Any, **kwargs: Any) -> str:
    raise AssertionError("the benchmark ran")


def test_empty_chips_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(t10.tools.cli, "run_and_write", _no_bench)
    assert main(["bench", "--chips", "", "--serial"]) == 2
    assert "argument --chips: expected comma-separated chip names or files, got ''" in (
        _error(capsys))


def test_examples_empty_output(capsys: pytest.CaptureFixture[str]) -> None:
    from t10.examples.__main__ import main as examples_main

    with pytest.raises(SystemExit):
        examples_main(["matmul", "-o", ""])
    assert "-o: empty file name" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["run", "{model}", "--plot", "{dir}/p.foo"],
                                  ["explain", "{model}", "--op", "u", "-o", "{dir}/p.foo"]])
def test_a_plot_format_matplotlib_does_not_write_is_refused_first(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], argv: list[str],
) -> None:
    def compiled(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the model was compiled")

    monkeypatch.setattr(t10.tools.cli, "run_model", compiled)
    monkeypatch.setattr(t10.tools.cli, "explain", compiled)
    assert main([a.format(model=model, dir=tmp_path) for a in argv] + ["--chip", CHIP]) == 1
    option = "--plot" if argv[0] == "run" else "-o"
    assert _error(capsys).startswith(
        f"t10: error: {option} '{tmp_path}/p.foo': matplotlib cannot write .foo files: give a "
        "name ending in .png (or ")
    assert os.listdir(tmp_path) == ["relu.onnx"]
