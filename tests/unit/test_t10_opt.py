"""`t10-opt`: xdsl-opt with one-line errors (exit code 1, no traceback; `--debug` re-raises).

The invalid-IR tests are generic: every case of every `*invalid*.mlir` under
tests/filecheck/dialects is run, so new cases are covered without editing this file.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

import t10.tools.opt
from t10.tools.opt import T10OptMain, main

DIALECT_TESTS = Path(__file__).parents[1] / "filecheck" / "dialects"
INVALID_FILES = sorted(DIALECT_TESTS.glob("**/*invalid*.mlir"))
T10_OPT = Path(sys.executable).parent / "t10-opt"

ALLOC = '%0 = core.alloc "x" on 4 : !core.buffer<4x8xf32>\n'
BAD_ALLOC = '\n%0 = core.alloc "x" on 0 : !core.buffer<4x8xf32>\n'  # the op is on line 2
PARSE_ERROR = '%0 = core.alloc "x" on : !core.buffer<4x8xf32>\n'
BAD_PLAN_ATTR = '"test.op"() {plan = #rtensor.plan<grid [2, 0]>} : () -> ()\n'
ERROR_LINE = re.compile(
    r"t10-opt: error: (?:(?P<file>[^ ]+):(?P<line>\d+):(?P<col>\d+): )?(?P<msg>[^ ].*)"
)


def one_line(text: str) -> str:
    return " ".join(text.split())


def run_in_process(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def run_subprocess(args: list[str], cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run([str(T10_OPT), *args], capture_output=True, text=True, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


# --------------------------------------------------------------------------------------------
# Every invalid-IR case of the dialect tests
# --------------------------------------------------------------------------------------------


@dataclass
class Case:
    text: str
    first_line: int
    """The line of the input file where the case starts (its `// -----` line)."""
    last_line: int


def split_cases(path: Path) -> list[Case]:
    """The chunks `--split-input-file` makes, with their line ranges in the file."""
    cases, line = [], 1
    for text in path.read_text().split("// -----"):
        cases.append(Case(text, line, line + text.count("\n")))
        line += text.count("\n")
    return cases


def xdsl_message(case: Case, tmp_path: Path) -> str:
    """What plain xdsl-opt raises for the case alone (padded so line numbers match)."""
    path = tmp_path / "case.mlir"
    path.write_text("\n" * (case.first_line - 1) + case.text)
    with pytest.raises(Exception) as raised:
        xDSLOptMain(args=[str(path)]).run()
    error = raised.value
    return one_line(error.msg if isinstance(error, ParseError) else str(error))


@pytest.mark.parametrize(
    "path", INVALID_FILES, ids=[str(p.relative_to(DIALECT_TESTS)) for p in INVALID_FILES]
)
def test_every_invalid_case_is_one_line(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = split_cases(path)
    code, _, err = run_in_process([str(path), "--split-input-file"], capsys)
    lines = err.splitlines()
    assert code == 1
    assert len(lines) == len(cases), err
    for number, (case, line) in enumerate(zip(cases, lines, strict=True), 1):
        where = f"{path.name} case {number} (line {case.first_line})"
        match = ERROR_LINE.fullmatch(line)
        assert match, f"{where}: not a one-line error: {line}"
        if match["file"] is not None:  # an op that was not parsed (e.g. implicit) has none
            assert match["file"] == str(path)
            assert case.first_line <= int(match["line"]) <= case.last_line, f"{where}: {line}"
        assert xdsl_message(case, tmp_path) in match["msg"], f"{where}: {line}"


def test_invalid_files_are_found() -> None:
    assert {p.parent.name for p in INVALID_FILES} >= {"chip", "core", "cshift", "rtensor"}


# --------------------------------------------------------------------------------------------
# Each class of error, in-process and as a subprocess
# --------------------------------------------------------------------------------------------

# (name, input file contents or None, arguments after the input, the expected line)
ERRORS = [
    ("unknown-pass", ALLOC, ["-p", "t10-plan-serch"],
     "unknown pass 't10-plan-serch' (did you mean 't10-plan-search'?)"),
    ("unknown-option", ALLOC, ["-p", "t10-plan-search{chip=test-16 nosuch=1}"],
     "t10-plan-search: unknown option 'nosuch' "
     "(options: chip, min-utilization, precision, partials, placement, planner, search, "
     "temporaries, preload, reuse, jobs)"),
    ("option-type", ALLOC, ["-p", "t10-fuse-epilogue{always=maybe}"],
     "t10-fuse-epilogue: option 'always' expects true or false, got 'maybe'"),
    ("option-no-value", ALLOC, ["-p", "t10-plan-search{chip}"],
     "t10-plan-search: option 'chip' expects a string, got no value"),
    ("option-value", ALLOC, ["-p", "t10-plan-search{chip=nosuch}"],
     re.compile(r"t10-plan-search: unknown chip 'nosuch': built-in chips are .*")),
    ("option-value-at-apply", ALLOC, ["-p", "t10-plan-search{planner=greedy}"],
     "t10-plan-search: unknown planner 'greedy'; choose one of t10, replicate, t10-multidim, vgm"),
    ("pipeline-syntax", ALLOC, ["-p", "t10-plan-search{chip=test-16,}"],
     re.compile(r"cannot parse 't10-plan-search\{chip=test-16,\}': .+ \(at column 30\)")),
    ("parse-error", PARSE_ERROR, [], "in.mlir:1:24: Expected integer literal"),
    ("attribute-verifier", BAD_PLAN_ATTR, [],
     "in.mlir:1:1: plan factors must be positive integers, got (2, 0)"),
    ("op-verifier", BAD_ALLOC, [], "in.mlir:2:1: core.alloc 'x': needs at least one core"),
    ("target-error", ALLOC, ["-t", "t10-sim"],
     "t10-sim: the module has no 't10.chip' attribute naming the chip; "
     "compile it first, e.g. -p 't10-compile{chip=ipu-mk2}'"),
    ("target-name", ALLOC, ["-t", "nosuch"],
     re.compile(r"argument -t/--target: invalid choice: 'nosuch' \(choose from t10-sim, .*\)")),
    ("target-option", ALLOC, ["-t", "t10-sim{seed=x}"],
     "t10-sim: option 'seed' expects an integer, got 'x'"),
    ("option-integer-for-float", ALLOC, ["-p", "t10-compile{min-utilization=1}"],
     "t10-compile: option 'min-utilization' expects a float with a decimal point (such as 1.0), "
     "got '1'"),
    ("target-option-value", ALLOC, ["-t", "t10-sim{seed=-1}"],
     "t10-sim: option 'seed' expects a non-negative integer, got -1"),
    ("target-report-directory", ALLOC, ["-t", 't10-sim{report="no/such/dir/r.json"}'],
     "t10-sim: option 'report' 'no/such/dir/r.json': directory 'no/such/dir' does not exist"),
    ("target-report-empty", ALLOC, ["-t", 't10-sim{report=""}'],
     "t10-sim: option 'report': the file name is empty"),
    ("repeated-option", ALLOC, ["-p", "t10-compile{chip=test-16 chip=ipu-mk2}"],
     "t10-compile: option 'chip' is given twice"),
    ("repeated-option-spelt-apart", ALLOC, ["-p", "t10-compile{fuse=true fuse=false}"],
     "t10-compile: option 'fuse' is given twice"),
    ("repeated-target-option", ALLOC, ["-t", "t10-sim{timing-only timing_only=false}"],
     "t10-sim: option 'timing-only' is given twice"),
    ("already-lowered", ALLOC, ["-p", "t10-compile{chip=test-16}"],
     "t10-compile: the input is already lowered to the core level (it holds 'core.alloc'); "
     "t10-compile takes linalg-level IR (an ONNX model, or the IR before t10-plan-search): "
     "simulate chip-level IR with -t t10-sim, or run the conversions after its level"),
    *[
        (f"nested-{what}", text, [], re.compile(
            r"in\.mlir:\d+:\d+: input nested too deeply \(t10-opt follows nesting up to "
            r"Python's recursion limit of \d+ calls\)"))
        for what, text in [
            ("regions", '"test.op"() ({\n' * 200 + "}) : () -> ()\n" * 200),
            ("attributes", '"test.op"() {a = ' + "[" * 2000 + "]" * 2000 + "} : () -> ()\n"),
            ("types", '"test.op"() : () -> ' + "tuple<" * 2000 + "i32" + ">" * 2000 + "\n"),
        ]
    ],
    ("unknown-flag", ALLOC, ["--frobnicate"], "unrecognized arguments: --frobnicate"),
    ("missing-input", None, [], "cannot read 'in.mlir': No such file or directory"),
    ("unwritable-output", ALLOC, ["-o", "no/such/dir/out.mlir"],
     "-o 'no/such/dir/out.mlir': directory 'no/such/dir' does not exist"),
]


def _write_input(contents: str | None, tmp_path: Path) -> None:
    if contents is not None:
        (tmp_path / "in.mlir").write_text(contents)


def _assert_one_line(code: int, out: str, err: str, expected: str | re.Pattern[str]) -> None:
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("t10-opt: error: ")
    message = lines[0].removeprefix("t10-opt: error: ")
    if isinstance(expected, str):
        assert message == expected
    else:
        assert expected.fullmatch(message), message


@pytest.mark.parametrize(
    ("name", "contents", "extra", "expected"), ERRORS, ids=[e[0] for e in ERRORS]
)
def test_error_in_process(
    name: str,
    contents: str | None,
    extra: list[str],
    expected: str | re.Pattern[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    _write_input(contents, tmp_path)
    _assert_one_line(*run_in_process(["in.mlir", *extra], capsys), expected)


# One of each class through the installed `t10-opt` script (each run costs a Python start-up).
SUBPROCESS_ERRORS = [e for e in ERRORS if e[0] in {
    "unknown-pass", "option-type", "option-value", "parse-error", "op-verifier", "target-error",
    "target-name", "missing-input",
}]


@pytest.mark.parametrize(
    ("name", "contents", "extra", "expected"), SUBPROCESS_ERRORS,
    ids=[e[0] for e in SUBPROCESS_ERRORS],
)
def test_error_as_subprocess(
    name: str, contents: str | None, extra: list[str], expected: str | re.Pattern[str],
    tmp_path: Path,
) -> None:
    _write_input(contents, tmp_path)
    _assert_one_line(*run_subprocess(["in.mlir", *extra], tmp_path), expected)


def test_frontend_error_names_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "garbage.onnx"
    model.write_bytes(b"not an onnx model")
    code, out, err = run_in_process([str(model)], capsys)
    _assert_one_line(code, out, err, re.compile(
        re.escape(f"{model}: cannot parse ONNX model '{model}': not a valid ONNX protobuf") + ".*"
    ))


def test_unknown_file_extension(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.txt"
    path.write_text(ALLOC)
    code, out, err = run_in_process([str(path)], capsys)
    _assert_one_line(
        code, out, err, f"'{path}': no frontend for '.txt' files (frontends: onnx, mlir)"
    )


# --------------------------------------------------------------------------------------------
# Errors raised by passes: the IR a pass produces, a bug in a pass
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BreakAlloc(ModulePass):
    """Gives every core.alloc zero cores: IR that does not verify."""

    name = "break-alloc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for alloc in op.walk():
            if alloc.name == "core.alloc":
                alloc.properties["cores"] = IntegerAttr(0, i64)


@dataclass(frozen=True)
class Crash(ModulePass):
    """A pass with a bug."""

    name = "crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise KeyError("boom")


class WithTestPasses(T10OptMain):
    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.register_pass(BreakAlloc.name, lambda: BreakAlloc)
        self.register_pass(Crash.name, lambda: Crash)


@pytest.fixture
def test_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(t10.tools.opt, "T10OptMain", WithTestPasses)


@pytest.mark.usefixtures("test_passes")
def test_ir_a_pass_breaks_names_op_and_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.mlir"
    path.write_text("\n\n" + ALLOC)
    code, out, err = run_in_process([str(path), "-p", "break-alloc"], capsys)
    _assert_one_line(code, out, err, f"{path}:3:1: core.alloc 'x': needs at least one core "
                     "(in the IR after pass 'break-alloc')")


@pytest.mark.usefixtures("test_passes")
def test_bug_in_a_pass_is_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.mlir"
    path.write_text(ALLOC)
    code, out, err = run_in_process([str(path), "-p", "crash"], capsys)
    _assert_one_line(code, out, err, "internal error in crash: KeyError: 'boom' "
                     "(run with --debug for the traceback)")


# --------------------------------------------------------------------------------------------
# --debug, --split-input-file, --verify-diagnostics, --help
# --------------------------------------------------------------------------------------------


def test_debug_raises_with_the_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.mlir"
    path.write_text(BAD_ALLOC)
    with pytest.raises(VerifyException, match="core.alloc 'x': needs at least one core"):
        main([str(path), "--debug"])
    code, _, err = run_subprocess([str(path), "--debug"], tmp_path)
    assert code == 1
    assert "Traceback (most recent call last)" in err
    assert "Operation does not verify: core.alloc 'x': needs at least one core" in err
    assert "t10-opt: error" not in err


def test_debug_shows_the_traceback_of_a_usage_error(tmp_path: Path) -> None:
    code, _, err = run_subprocess(["-p", "t10-plan-serch", "--debug"], tmp_path)
    assert code == 1
    assert "Traceback (most recent call last)" in err
    assert "unknown pass 't10-plan-serch'" in err


def test_split_input_file_runs_every_chunk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.mlir"
    path.write_text(f"{BAD_PLAN_ATTR}// -----\n{ALLOC}// -----\n{BAD_ALLOC}// -----\n{PARSE_ERROR}")
    code, out, err = run_in_process([str(path), "--split-input-file"], capsys)
    assert code == 1
    assert err.splitlines() == [
        f"t10-opt: error: {path}:1:1: plan factors must be positive integers, got (2, 0)",
        f"t10-opt: error: {path}:6:1: core.alloc 'x': needs at least one core",
        f"t10-opt: error: {path}:8:24: Expected integer literal",
    ]
    assert out.count('core.alloc "x" on 4') == 1  # the valid chunk's output


def test_verify_diagnostics_prints_as_xdsl_opt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.mlir"
    path.write_text(f"{BAD_ALLOC}// -----\n{BAD_PLAN_ATTR}")
    code, out, err = run_in_process([str(path), "--split-input-file", "--verify-diagnostics"],
                                    capsys)
    assert (code, err) == (0, "")
    assert "Operation does not verify: core.alloc 'x': needs at least one core" in out
    assert "plan factors must be positive integers, got (2, 0)" in out


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_in_process(["--help"], capsys)
    assert code == 0
    assert out.startswith("usage: t10-opt ")
    assert "--debug" in out and "t10-plan-search" in "".join(out.split())  # argparse wraps
    code, out, _ = run_in_process(["--version"], capsys)
    assert (code, out.split(" built")[0]) == (0, "t10-opt")


# --------------------------------------------------------------------------------------------
# Input text the lexer must never see (found by benchmarks/fuzz.py)
# --------------------------------------------------------------------------------------------


def test_input_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.mlir"
    path.write_bytes(b'builtin.module {\n  %0 = core.alloc "x\xb9" on 4 : !core.buffer<4xf32>\n}\n')
    code, _, err = run_in_process([str(path)], capsys)
    assert code == 1
    assert err == f"t10-opt: error: {path}:2:21: byte 0xb9 is not UTF-8 text\n"


def test_unclosed_string_is_refused_before_lexing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """xDSL's string regex backtracks exponentially on an unclosed literal: a truncated dense
    hex constant of a few hundred digits would run for hours."""
    path = tmp_path / "truncated.mlir"
    path.write_text('builtin.module {\n  %0 = arith.constant dense<"0x' + "3DAB" * 200)
    code, _, err = run_in_process([str(path)], capsys)
    assert code == 1
    assert err == f"t10-opt: error: {path}:2:29: string literal not closed on its line\n"


def test_quotes_in_comments_and_escapes_are_not_literals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ok.mlir"
    path.write_text('// a "quote in a comment\n"test.op"() {a = "x\\"y // z"} : () -> ()\n')
    code, out, err = run_in_process([str(path), "--allow-unregistered-dialect"], capsys)
    assert (code, err) == (0, "")
    assert '"test.op"() {a = "x\\22y // z"}' in out


@pytest.mark.parametrize(
    ("literal", "column", "problem"),
    [
        ('"3DAB\x0c968F"', 5, "string literal holds the control character 0x0c"),
        ('"x\\qy"', 2, "string literal has an invalid escape (use \\\", \\n, \\t, \\\\ or two "
                       "hex digits)"),
        ('"x\\"', 0, "string literal not closed on its line"),
    ],
)
def test_string_literals_the_lexer_cannot_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], literal: str, column: int, problem: str
) -> None:
    """Each of these made xDSL's lexer backtrack for hours (one found by benchmarks/fuzz.py
    flipping a byte of a dense constant)."""
    path = tmp_path / "bad.mlir"
    path.write_bytes(f'"test.op"() {{a = {literal}}} : () -> ()\n'.encode())
    code, _, err = run_in_process([str(path), "--allow-unregistered-dialect"], capsys)
    assert code == 1
    assert err == f"t10-opt: error: {path}:1:{18 + column}: {problem}\n"


def test_value_error_while_parsing_is_a_located_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """xDSL's linalg parser lets the ValueError of an unknown iterator type through (found by
    benchmarks/fuzz.py flipping a byte of 'parallel'): bad input, not an internal error."""
    path = tmp_path / "iterators.mlir"
    path.write_text(
        "func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, "
        "affine_map<(d0) -> (d0)>], iterator_types = [\"paralsel\"]} ins(%a : tensor<4xf32>) "
        "outs(%b : tensor<4xf32>) {\n"
        "  ^bb0(%x: f32, %y: f32):\n    linalg.yield %x : f32\n  } -> tensor<4xf32>\n"
        "  func.return %r : tensor<4xf32>\n}\n"
    )
    code, _, err = run_in_process([str(path)], capsys)
    assert code == 1
    assert err == (f"t10-opt: error: {path}:2:3: cannot parse: 'paralsel' is not a valid "
                   "IteratorType\n")
