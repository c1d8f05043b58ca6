"""`t10-opt`: `xdsl-opt` with the t10 plugin and one-line errors.

The same flags, dialects, passes, frontends (ONNX for `.onnx`) and targets (`t10-sim`) as
`xdsl-opt` (it subclasses xDSL's `xDSLOptMain`), but every error is one line on stderr,
`t10-opt: error: <where>: <problem>`, and the exit code is 1, never a traceback:

- invalid IR: `<file>:<line>:<col>: <op name>: <message>`, the location of the failing
  operation in the input (ops a pass created have none); an attribute rejected while parsing
  is located at the operation that holds it; when the IR a pass produced does not verify the
  line ends with `(in the IR after pass 'P')`;
- parse errors: `<file>:<line>:<col>: <message>` (xDSL's caret picture of the line is left
  out: the location says where);
- pass, target and frontend options: `<pass>: unknown option ...`, `<pass>: option 'x'
  expects ...`, `<pass>: option 'x' is given twice`, `<pass>: <error of its constructor>`
  (e.g. an unknown chip); an unknown pass name, with close matches;
- input nested deeper than parsing, verifying or printing can follow (Python's recursion
  limit): `<where>: input nested too deeply ...`;
- a `T10Error` (or any xDSL `DiagnosticException`) from a pass, the target or the frontend:
  `<pass, target or input file>: <message>`;
- usage errors (unknown flag, unknown target), an unreadable input or unwritable output file;
- anything else is a bug: `internal error in <where>: <type>: <message>`.

With `--split-input-file` every chunk runs: each failing chunk prints its line and the others
their output (as `mlir-opt` does); the exit code is 1 if any chunk failed.  `--debug` turns
the one line back into the exception with its traceback (and xDSL's full diagnostic).
`--verify-diagnostics`, `--parsing-diagnostics` and `--shrink` behave as in `xdsl-opt`.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import inspect
import io
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import IO, Any, NoReturn, Union, cast, get_args, get_origin, get_type_hints

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.ir import Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import (
    ArgSpec,
    ArgSpecConvertible,
    PipelineLexer,
    SpecTokenKind,
    parse_pipeline,
    parse_spec,
)
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.utils.hints import isa
from xdsl.utils.lexer import Span
from xdsl.xdsl_opt_main import xDSLOptMain

from t10.common.files import check_output_path, same_file, write_text
from t10.common.locations import failing_op, where_from
from t10.errors import T10Error
from t10.pass_instrumentation import PassInstrumentation
from t10.planning import Terminated, ending_signals
from t10.t10_dialects.parsing import Parser

PROG = "t10-opt"


class _LocatingParser(Parser):
    """An MLIR parser that remembers where each operation starts in its input."""

    def __init__(self, ctx: Context, input: bytes, name: str) -> None:
        super().__init__(ctx, input, name)
        self.op_starts: dict[Operation, int] = {}
        self.failed_op_start: int | None = None
        """Where the innermost operation being parsed when parsing failed starts."""

    def parse_operation(self) -> Operation:
        start = self.pos
        try:
            op = super().parse_operation()
        except Exception:
            if self.failed_op_start is None:
                self.failed_op_start = start
            raise
        self.op_starts[op] = start
        return op


@dataclass
class _Chunk:
    """What t10-opt is doing with one input chunk: says where an error comes from."""

    line_offset: int
    stage: str
    """The input file while parsing, then the running pass, then the target."""
    parser: _LocatingParser | None = None
    module: ModuleOp | None = None
    verifying: bool = False
    last_pass: str | None = None
    """The pass that produced the IR being verified (None: the IR as parsed)."""
    failed: bool = False

    def parsing(self) -> bool:
        """Whether the chunk's input is being parsed (no module yet)."""
        return self.parser is not None and self.module is None

    def location(self, op: Operation | None = None) -> str | None:
        """Where `op` (default: the operation whose parsing failed) starts in the input file."""
        if self.parser is None:
            return None
        start = self.parser.failed_op_start if op is None else self.parser.op_starts.get(op)
        if start is None:
            return None
        return str(Span(start, start, self.parser.lexer.input, self.line_offset).get_location())


class _Buffer(io.StringIO):
    """The output to write to `-o`'s file: xdsl-opt's run() closes it, which keeps it."""

    def close(self) -> None:
        pass


class T10OptMain(xDSLOptMain):
    """`xdsl-opt` whose errors are one line each (see the module docstring)."""

    version_format = PROG + " built from xdsl version {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None) -> None:
        self.failures = 0
        self._chunk: _Chunk | None = None
        self._output: _Buffer | None = None
        super().__init__(description="t10's modular optimizer driver (xdsl-opt)", args=args)
        _check_spec(self.args.target, self.available_targets)
        if self.args.frontend:
            _check_spec(self.args.frontend, self.available_frontends)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.prog = PROG
        arg_parser.add_argument(
            "--print-ir-after",
            type=lambda text: [n.strip() for n in text.split(",")],
            default=[],
            metavar="PASS,...",
            help="print the IR after these passes of the pipeline to stderr",
        )
        arg_parser.add_argument(
            "--print-ir-after-all",
            action="store_true",
            help="print the IR after every pass of the pipeline to stderr",
        )
        arg_parser.add_argument(
            "--debug",
            default=False,
            action="store_true",
            help="on an error, raise it with its traceback instead of printing one line",
        )
        arg_parser.error = _usage_error  # one line and exit code 1, not usage + exit code 2

    def setup_pipeline(self) -> None:
        """Check every pass and its options first, then track which pass runs."""
        specs = list(parse_pipeline(self.args.passes))
        _check_repeated_options(self.args.passes)
        for spec in specs:
            if spec.name not in self.available_passes:
                raise T10Error(_unknown("pass", spec.name, self.available_passes))
            _instantiate(self.available_passes[spec.name](), spec)
        super().setup_pipeline()
        verify = self.pipeline.callback
        shown = PassInstrumentation(
            sys.stderr,
            frozenset(self.args.print_ir_after),
            self.args.print_ir_after_all,
            weights=True,  # as the output IR prints
            locations=self.args.print_debuginfo,
        )
        shown.check_names([p.name for p in self.pipeline.passes], "--print-ir-after")

        def callback(
            previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None
        ) -> None:
            chunk = self._current_chunk()
            chunk.verifying, chunk.last_pass = True, previous.name if previous else None
            if verify is not None:
                verify(previous, module, next_pass)
            chunk.verifying = False
            if previous is not None:
                shown.after_pass(previous, module)
            if next_pass is not None:
                chunk.stage = next_pass.name

        self.pipeline = PassPipeline(self.pipeline.passes, callback)

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        try:
            stream, extension = super().get_input_stream()
        except OSError as e:
            raise T10Error(f"cannot read '{self.args.input_file}': {e.strerror or e}") from None
        if extension not in self.available_frontends:
            stream.close()
            raise T10Error(
                f"'{self.args.input_file}': no frontend for '.{extension}' files "
                f"(frontends: {', '.join(self.available_frontends)})"
            )
        return stream, extension

    def prepare_output(self) -> IO[str]:
        """Standard output, or for `-o FILE` a buffer: FILE is written whole once every chunk
        succeeded (`run`), and left as it was if any fails or on an interrupt."""
        path = self.args.output_file
        if path is None:
            return sys.stdout
        check_output_path(path, "-o")
        if self.args.input_file is not None and same_file(path, self.args.input_file):
            raise T10Error(f"-o '{path}' is the input file: it would be overwritten; give "
                           "another file name")
        self._output = _Buffer()
        return self._output

    def run(self) -> None:
        super().run()
        if self._output is not None and not self.failures:
            self._chunk = None  # a write error is not the last chunk's
            write_text(self.args.output_file, self._output.getvalue(), "-o")

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        """Parse as xdsl-opt does, with a parser that remembers where each op starts."""
        self._chunk = _Chunk(start_offset, self.get_input_name())
        name = parse_spec(self.args.frontend or file_extension).name
        factory = self.available_frontends[name]
        try:
            # a frontend is a reader function (one parameter) or a factory of a Frontend class
            if inspect.signature(factory).parameters or not issubclass(
                cast(Callable[[], type], factory)(), MLIRFrontend
            ):
                return super().parse_chunk(chunk, file_extension, start_offset)
            data = chunk.read()
            _check_text(data, self.get_input_name(), start_offset)
            parser = _LocatingParser(self.ctx, data, self.get_input_name())
            self._chunk.parser = parser
            return parser.parse_module(not self.args.no_implicit_module)
        except Exception as e:
            self._fail_chunk(e)
            return None

    def apply_passes(self, prog: ModuleOp) -> None:
        self._current_chunk().module = prog
        try:
            super().apply_passes(prog)
        except Exception as e:
            self._fail_chunk(e)

    def output_resulting_program(self, prog: ModuleOp) -> str:
        chunk = self._current_chunk()
        if chunk.failed:  # run() prints a chunk whose passes failed: there is nothing to print
            return ""
        chunk.stage = parse_spec(self.args.target).name
        try:
            return super().output_resulting_program(prog)
        except Exception as e:
            self._fail_chunk(e)
            return ""

    def describe(self, error: BaseException) -> str:
        """The one line that names the problem with `error` and where it happened."""
        return describe(error, self._chunk)

    def _current_chunk(self) -> _Chunk:
        assert self._chunk is not None, "run() parses a chunk before it processes it"
        return self._chunk

    def _fail_chunk(self, error: Exception) -> None:
        """Report `error` and go on with the next chunk, unless xdsl-opt's run() handles it."""
        args = self.args
        if args.debug or args.shrink or args.verify_diagnostics or args.parsing_diagnostics:
            raise error
        _print_error(self.describe(error))
        self.failures += 1
        self._current_chunk().failed = True


def describe(error: BaseException, chunk: _Chunk | None = None) -> str:
    """The one line for `error`, raised while t10-opt processed `chunk` (if any)."""
    if isinstance(error, ParseError):
        span = error.span
        if chunk is not None:  # the location in the input file, not in the chunk
            span = dataclasses.replace(span, line_offset=chunk.line_offset)
        return f"{span.get_location()}: {_one_line(error.msg)}"
    if isinstance(error, ArgSpecParseError):
        return _spec_parse_error(error)
    message = _one_line(str(error))
    where = None
    if chunk is not None:
        where = chunk.stage
        if isinstance(error, VerifyException) and chunk.verifying and chunk.module:
            if (op := failing_op(chunk.module, error)) is not None:
                where = chunk.location(op)
                if where is None:
                    where = where_from(op)
                message = _named(op.name, message)
                if chunk.last_pass is not None:
                    message += f" (in the IR after pass '{chunk.last_pass}')"
        elif (parsed_at := chunk.location()) is not None:
            where = parsed_at
    if isinstance(error, DiagnosticException):
        return message if where is None else _named(where, message)
    if isinstance(error, ValueError) and chunk is not None and chunk.parsing():
        # xDSL's parsers let some attribute constructors' ValueErrors through (e.g. an
        # unknown linalg iterator type): bad input, located at the op being parsed
        message = f"cannot parse: {message}"
        return message if where is None else _named(where, message)
    if isinstance(error, RecursionError):
        # parsing, verifying and printing recurse into nested regions, attributes and types
        message = (
            "input nested too deeply (t10-opt follows nesting up to Python's recursion limit "
            f"of {sys.getrecursionlimit()} calls)"
        )
        return message if where is None else _named(where, message)
    return (
        f"internal error{f' in {where}' if where else ''}: {type(error).__name__}: {message} "
        "(run with --debug for the traceback)"
    )


_COMMENT_OR_STRING = re.compile(rb'//[^\n]*|"[^"\\\n]*(?:\\.[^"\\\n]*)*(?P<closed>"?)')
"""A comment, or a string literal up to its closing quote (if any on its line): runs of plain
characters between escapes, so it cannot backtrack."""
_BAD_IN_STRING = re.compile(rb'[\v\f]|\\(?!["nt\\]|[0-9A-Fa-f]{2})')


def _check_text(data: bytes, name: str, line_offset: int) -> None:
    """Refuse input that is not UTF-8, or whose string literals xDSL's lexer would not match,
    before the lexer sees it: its string regex backtracks exponentially on a literal it
    cannot match (a truncated `dense<"0x...`, a control character or a bad escape in one),
    taking hours. A literal is `"` ... `"` on one line, without \\v or \\f, whose escapes
    are \\", \\n, \\t, \\\\ or two hex digits (the lexer's rule)."""

    def where(pos: int) -> str:
        line = data.count(b"\n", 0, pos) + 1 + line_offset
        column = pos - (data.rfind(b"\n", 0, pos) + 1) + 1
        return f"{name}:{line}:{column}"

    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise T10Error(f"{where(e.start)}: byte 0x{data[e.start]:02x} is not UTF-8 text") from None
    for token in _COMMENT_OR_STRING.finditer(data):
        text = token.group()
        if text.startswith(b"//"):
            continue
        if not token.group("closed"):
            raise T10Error(f"{where(token.start())}: string literal not closed on its line")
        if (bad := _BAD_IN_STRING.search(text)) is not None:
            problem = (
                f"holds the control character 0x{text[bad.start()]:02x}"
                if bad.group()[:1] != b"\\"
                else "has an invalid escape (use \\\", \\n, \\t, \\\\ or two hex digits)"
            )
            raise T10Error(f"{where(token.start() + bad.start())}: string literal {problem}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run `t10-opt`; returns the exit code (0 ok, 1 error, 128 + the signal's number when
    SIGINT, SIGTERM or SIGHUP ended it)."""
    with ending_signals():
        return _main(list(sys.argv[1:] if argv is None else argv))


def _main(args: list[str]) -> int:
    tool: T10OptMain | None = None
    try:
        tool = T10OptMain(args=args)
        tool.run()
    except SystemExit as e:  # --help, --version, --shrink
        return e.code if isinstance(e.code, int) else 0
    except KeyboardInterrupt:
        _print_error("interrupted")
        return 130
    except Terminated as e:  # the workers are stopped on the way here
        try:
            _print_error(str(e))
        except OSError:  # SIGHUP: the terminal is gone
            pass
        return 128 + e.signum
    except BaseException as e:  # an ArgSpecParseError is a BaseException
        if "--debug" in args:
            raise
        _print_error(tool.describe(e) if tool is not None else describe(e))
        return 1
    return 1 if tool.failures else 0


def _print_error(message: str) -> None:
    sys.stdout.flush()  # the output of earlier chunks comes first
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _usage_error(message: str) -> NoReturn:
    raise T10Error(message)


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _named(name: str, message: str) -> str:
    """`name: message`, unless the message already starts with the name."""
    return message if message.startswith(name) else f"{name}: {message}"


def _spec_parse_error(error: ArgSpecParseError) -> str:
    """One line from xDSL's message: a heading, the location, the spec, carets, the problem."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    spec, carets, problem = lines[-3], lines[-2], lines[-1].strip()
    return f"cannot parse '{spec}': {problem} (at column {carets.index('^') + 1})"


def _unknown(kind: str, name: str, known: Sequence[str] | dict[str, Any]) -> str:
    close = difflib.get_close_matches(name, list(known), n=3)
    hint = f"did you mean {', '.join(repr(c) for c in close)}?" if close else (
        f"{PROG} --help lists them"
    )
    return f"unknown {kind} '{name}' ({hint})"


def _check_spec(text: str, registry: dict[str, Callable[..., Any]]) -> None:
    """Check a `-t`/`-f` spec's options as the pipeline's are checked (new-style entries)."""
    spec = parse_spec(text)
    _check_repeated_options(text)
    factory = registry[spec.name]  # xDSLOptMain has checked the name
    if not inspect.signature(factory).parameters:
        _instantiate(factory(), spec)


def _check_repeated_options(text: str) -> None:
    """Refuse a pass (target, frontend) option given twice in a spec that parses (xDSL
    would keep the last one silently); `timing-only` and `timing_only` are one option."""
    lexer = PipelineLexer(text)
    name, seen, in_options, at_key = "", set[str](), False, False
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        kind, word = token.kind, token.span.text
        if kind is SpecTokenKind.L_BRACE:
            seen, in_options, at_key = set(), True, True
            continue
        if kind is SpecTokenKind.R_BRACE:
            in_options = False
        elif not in_options and kind is SpecTokenKind.IDENT:
            name = word
        elif in_options and at_key and kind is SpecTokenKind.IDENT:
            option = word.replace("_", "-")
            if option in seen:
                raise T10Error(f"{name}: option '{option}' is given twice")
            seen.add(option)
        at_key = in_options and kind is SpecTokenKind.SPACE


def _instantiate(cls: type[ArgSpecConvertible], spec: ArgSpec) -> ArgSpecConvertible:
    """`cls.from_spec(spec)`, its errors as one line naming the pass (target, frontend)."""
    try:
        return cls.from_spec(spec)
    except ValueError as e:
        raise T10Error(f"{spec.name}: {_option_problem(cls, spec) or _one_line(str(e))}") from e
    except DiagnosticException as e:
        raise T10Error(_named(spec.name, _one_line(str(e)))) from e


def _option_problem(cls: type[ArgSpecConvertible], spec: ArgSpec) -> str | None:
    """The first option of `spec` that `cls` does not have or whose value has the wrong type."""
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name != "name"}
    hints = get_type_hints(cls)
    for option, value in spec.parameters.items():
        field = fields.get(option.replace("-", "_"))
        if field is None:
            options = ", ".join(name.replace("_", "-") for name in fields) or "none"
            return f"unknown option '{option}' (options: {options})"
        expected = hints[field.name]
        if not _fits(value, expected):
            return f"option '{option}' expects {_describe_type(expected)}, got {_show(value)}"
    return None


def _fits(value: tuple[Any, ...], expected: Any) -> bool:
    """Whether xDSL's spec conversion accepts `value` for a field of type `expected`."""
    if not value:
        return NoneType in get_args(expected)
    return (len(value) == 1 and isa(value[0], expected)) or isa(value, expected)


_TYPE_NAMES = {
    bool: "true or false",
    int: "an integer",
    float: "a float with a decimal point (such as 1.0)",
    str: "a string",
}


def _describe_type(expected: Any) -> str:
    origin, args = get_origin(expected), get_args(expected)
    if origin in (Union, UnionType):
        return " or ".join(_describe_type(a) for a in args if a is not NoneType)
    if origin is tuple:
        return f"a comma-separated list of ({_describe_type(args[0])})"
    return _TYPE_NAMES.get(expected, str(expected))


def _show(value: tuple[Any, ...]) -> str:
    if not value:
        return "no value"
    return "'" + ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in value) + "'"


if __name__ == "__main__":
    sys.exit(main())
