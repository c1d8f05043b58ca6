"""The `t10` command: compile an ONNX model for a chip, simulate it, explain an operator's
plan, benchmark models and plans (a synopsis; every option: `t10 COMMAND --help`,
docs/usage.md).

```
t10 run MODEL.onnx [--chip NAME|FILE] [--planner t10|replicate|vgm|...] [--precision fp32|fp16]
                   [--partials fp32|fp16] [--search greedy|exact|fastest]
                   [--temporaries SHARE]
                   [--inputs IN.npz] [--outputs OUT.npz]
                   [--check [--rtol R] [--atol A] [--atol-rms F]] [--report R.json]
                   [--timing-only] [--link-map MAP.png]
t10 compile MODEL.onnx [--chip ...] [--planner ...] [--precision ...] [--partials ...]
                       [--search ...] [--temporaries ...]
                       [--emit linalg|rtensor|cshift|core|chip] [-o FILE] [--weights]
t10 explain MODEL.onnx --op NAME [--chip ...] [--planner ...] [--precision ...]
                       [--plot | -o FILE.png]
t10 bench [--models M,...] [--layers N] [--seq N] [--batches B,...] [--max-batch N]
          [--phases prefill,decode [--contexts N,...]]
          [--chips C,...] [--vary PARAMETER=VALUE,...] [--planners P,...]
          [--precision fp32|fp16] [--out DIR] [--quick] [--address ADDRESS | --serial]
t10 bench-matmuls [--chip NAME|FILE] [--shapes MxKxN,...] [--precision fp32|fp16]
t10 zoo NAME [--batch N] [--seq N | --image-size N] [--layers N] [--seed S] [--token-ids]
             [--phase prefill|decode [--context N]] [--shapes-only] -o FILE.onnx
t10 zoo --list
```

Every failure the user can cause (a missing or bad model, an unsupported operator, a bad
chip, a model that does not fit, a bad option) ends with exit code 1 (2 for command-line
usage errors) and one line `t10: error: ...` on stderr, never a traceback. Set
`T10_TRACEBACK=1` to see the traceback of an internal error.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from inspect import signature
from pathlib import Path
from typing import IO, Any, NoReturn

from xdsl.utils.exceptions import DiagnosticException

from t10.bench import matmuls, models
from t10.bench.sweep import FILES, files, run_and_write
from t10.common.chip_spec import builtin_chip_names, load_chip
from t10.common.files import check_output_path, output_file, output_paths_problem, write_text
from t10.common.tensor_expr import PRECISIONS
from t10.driver import (
    DEFAULTS,
    CompileOptions,
    check_tolerance,
    compile_model,
    run_model,
)
from t10.errors import T10Error
from t10.outputs.figures import check_plot_path
from t10.outputs.npz_files import inputs_reader, save_npz
from t10.outputs.plots import link_mesh, plot_link_map, plot_run
from t10.outputs.report import Tolerance, format_report
from t10.outputs.trace import chrome_trace
from t10.pass_instrumentation import Observers, PassInstrumentation
from t10.passes.t10_compile import LEVELS, pass_names
from t10.planning import (
    PLACEMENTS,
    PRELOADS,
    SEARCHES,
    Planner,
    Terminated,
    ending_signals,
    planner,
    planner_names,
    temporaries_planners,
)
from t10.t10_dialects.printing import ELIDE_LARGER_THAN, print_ir
from t10.tools.explain import explain, format_explanation, plot_explanation, plot_file_name
from t10.tools.progress import Progress

__all__ = ["main", "make_parser"]


class UsageError(Exception):
    """A command-line usage error (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


# --------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------


def _check_paths(outputs: Mapping[str, str | None], inputs: Mapping[str, str | None]) -> None:
    """The output files given (by option) can be written, and none is one of the run's
    input files (by option) or another output: that would overwrite it."""
    for option, path in outputs.items():
        if path:
            check_output_path(path, option)
    problem = output_paths_problem(outputs, inputs)
    if problem is not None:
        raise UsageError(problem)


def _chip_file(chip: str) -> str | None:
    """The file `--chip` reads (None for a built-in chip)."""
    return None if chip in builtin_chip_names() else chip


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def _check_planner_options(args: argparse.Namespace) -> None:
    chosen = planner(args.planner)
    if args.temporaries is not None and chosen.temporaries is None:
        takers = " or ".join(f"--planner {name}" for name in temporaries_planners())
        raise UsageError(
            f"--temporaries is a rule of {takers}, not of --planner {args.planner}"
        )
    if args.search is not None and chosen.search is None:
        raise UsageError(f"--planner {args.planner} chooses every operator's plan on its own: "
                         "it takes no --search")


def _options(args: argparse.Namespace) -> CompileOptions:
    """The compile options the command line gives: every option whose destination is a
    field's name (the others, e.g. `fuse`, which no flag sets, keep their defaults)."""
    return CompileOptions(**_flags(args, (f.name for f in fields(CompileOptions))))


def _flags(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The parsed flags whose destinations are among `names` (a flag's destination is the
    name of the option or parameter it sets)."""
    given = vars(args)
    return {name: given[name] for name in names if name in given}


def _cmd_run(args: argparse.Namespace, out: IO[str]) -> int:
    _check_planner_options(args)
    if args.timing_only and (args.check or args.outputs):
        given = "--check" if args.check else "--outputs"
        raise UsageError(f"--timing-only computes no output values: it cannot take {given}")
    _check_paths(
        {"--outputs": args.outputs, "--report": args.report, "--trace": args.trace,
         "--plot": args.plot, "--link-map": args.link_map},
        {"the model": args.model, "--inputs": args.inputs, "--chip": _chip_file(args.chip)},
    )
    if args.plot:
        check_plot_path(args.plot, "--plot")
    if args.link_map:
        check_plot_path(args.link_map, "--link-map")
        link_mesh(load_chip(args.chip), "--link-map")
    inputs = inputs_reader(args.inputs, "--inputs") if args.inputs is not None else None
    default = check_tolerance(args.precision, args.partials)
    tolerance = Tolerance(
        default.rtol if args.rtol is None else args.rtol,
        default.atol if args.atol is None else args.atol,
        default.atol_rms if args.atol_rms is None else args.atol_rms,
    )
    with Progress(f"t10 run {args.model}", quiet=args.quiet) as progress:
        result = run_model(
            args.model,
            _options(args),
            inputs=inputs,
            seed=args.seed,
            check=tolerance if args.check else None,
            timing_only=args.timing_only,
            observer=progress,
            input_ranges=_input_ranges(args),
            dims=_dims(args),
            verify_each=args.verify_each,
        )
    report_text = result.report.to_json()
    if args.json:
        out.write(report_text)
    else:
        print(format_report(result.report), file=out)
    if args.trace or args.plot or args.link_map:
        spec, title = load_chip(args.chip), Path(args.model).name
        if args.trace:
            write_text(args.trace, json.dumps(chrome_trace(result.sim, spec, title)), "--trace")
        if args.plot:
            plot_run(result.sim, spec, args.plot, title)
        if args.link_map:
            plot_link_map(result.sim, spec, args.link_map, title)
    if args.outputs:
        save_npz(args.outputs, result.outputs, "--outputs")
    if args.report:
        write_text(args.report, report_text, "--report")
    if result.check is not None and not result.check.passed:
        failed = ", ".join(
            f"'{name}'" + ("" if o.problem is None else f" ({o.problem})")
            for name, o in result.check.outputs.items()
            if not o.passed
        )
        raise T10Error(
            f"simulated outputs differ from onnxruntime beyond tolerance in {failed}: max abs "
            f"error {result.check.max_abs_error:.3g}, max rel error "
            f"{result.check.max_rel_error:.3g} (criterion {tolerance.describe()})"
        )
    return 0


def _cmd_compile(args: argparse.Namespace, out: IO[str]) -> int:
    _check_planner_options(args)
    if args.output != "-":
        _check_paths({"-o": args.output}, {"the model": args.model,
                                           "--chip": _chip_file(args.chip)})
    shown = PassInstrumentation(
        sys.stderr,
        frozenset(args.print_ir_after or ()),
        args.print_ir_after_all,
        args.time_passes,
        args.weights,
        args.print_debuginfo,
    )
    options = _options(args)
    shown.check_names(pass_names(options, args.emit), "--print-ir-after")
    with Progress(f"t10 compile {args.model}", quiet=args.quiet) as progress:
        compiled = compile_model(
            args.model,
            options,
            emit=args.emit,
            observer=Observers(progress, shown),
            input_ranges=_input_ranges(args),
            dims=_dims(args),
            verify_each=args.verify_each,
        )
    shown.timing_report()

    def emit(stream: IO[str]) -> None:
        print_ir(compiled.module, stream, args.weights, args.print_debuginfo)

    if args.output and args.output != "-":
        with output_file(args.output, "-o") as fresh, open(fresh, "w", encoding="utf-8") as f:
            emit(f)
    else:
        emit(out)
    return 0


def _cmd_explain(args: argparse.Namespace, out: IO[str]) -> int:
    _check_planner_options(args)
    if args.output:
        _check_paths({"-o": args.output},
                     {"the model": args.model, "--chip": _chip_file(args.chip)})
        check_plot_path(args.output, "-o")
    with Progress(f"t10 explain {args.model}", quiet=args.quiet) as progress:
        found = explain(
            args.model,
            args.op,
            _options(args),
            observer=progress,
            input_ranges=_input_ranges(args),
            dims=_dims(args),
            verify_each=args.verify_each,
        )
    format_explanation(found, out)
    if args.plot or args.output:
        path = args.output or plot_file_name(found.operator)
        plot_explanation(found, path)
        print(f"\nplot      {path}", file=out)
    return 0


def _cmd_bench(args: argparse.Namespace, out: IO[str]) -> int:
    sweep = models.make_sweep(**_flags(args, signature(models.make_sweep).parameters))
    cap = None if args.case_memory is None else int(args.case_memory * 2**30)
    print(run_and_write(sweep, Path(args.out), args.address, args.serial, quiet=args.quiet,
                        case_memory=cap), file=out)
    print(f"\nwrote {', '.join(str(Path(args.out) / f) for f in files(sweep))}", file=out)
    return 0


def _cmd_bench_matmuls(args: argparse.Namespace, out: IO[str]) -> int:
    return matmuls.run_from_args(args, out)


def _cmd_zoo(args: argparse.Namespace, out: IO[str]) -> int:
    from t10.examples import zoo

    if args.list:
        print(zoo.format_list(), file=out)
        return 0
    if args.name is None:
        raise UsageError(f"missing zoo model NAME: choose from {', '.join(zoo.ZOO)} "
                         "(or --list)")
    model = zoo.get(args.name)
    seq = args.seq
    if args.image_size is not None:
        if seq is not None:
            raise T10Error("give either --seq or --image-size, not both")
        seq = model.seq_for_image(args.image_size)
    if args.output is None:
        raise UsageError("missing -o FILE.onnx")
    written = zoo.write(model, args.output, args.batch, seq, args.layers, args.seed,
                        token_ids=args.token_ids, phase=args.phase, context=args.context,
                        shapes_only=args.shapes_only)
    listed = model.inputs(args.batch, seq, args.token_ids, phase=args.phase,
                          layers=args.layers, context=args.context)
    shown = [f"{name} {dtype} [{', '.join(map(str, shape))}]" for name, dtype, shape in listed
             if not name.startswith("past_key_values.")]
    if cache := [shape for name, _, shape in listed if name.startswith("past_key_values.")]:
        shown.append(f"past_key_values.{{0..{args.layers - 1}}}.key/.value float32 "
                     f"[{', '.join(map(str, cache[0]))}]")
    inputs = ", ".join(shown)
    where = f"; weights in {written.data_path}" if written.data_path else ""
    if args.shapes_only:
        where = (f"; shapes only: {written.weight_bytes / 1e6:,.1f} MB of weights declared "
                 "without data (timing-only runs)")
    layers = f"{args.layers} layer{'s' if args.layers != 1 else ''}"
    print(f"wrote {model.name} ({layers}; inputs {inputs}) to {written.path}: "
          f"{written.file_bytes / 1e6:,.1f} MB{where}", file=out)
    return 0


# --------------------------------------------------------------------------------------------
# Argument parsing
# --------------------------------------------------------------------------------------------


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got '{text}'") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got '{text}'")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got '{text}'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got '{text}'")
    return value


def _path(text: str) -> str:
    """A file or directory name: not empty (an empty one names no file)."""
    if not text:
        raise argparse.ArgumentTypeError("expected a file name, got ''")
    return text


def _npz_path(text: str) -> str:
    if not text.endswith(".npz"):
        raise argparse.ArgumentTypeError(f"expected a file name ending in .npz, got '{text}'")
    return text


def _input_range(text: str) -> tuple[str, tuple[int, int]]:
    name, eq, bounds = text.rpartition("=")
    lo, colon, hi = bounds.partition(":")
    try:
        if not (name and eq and colon):
            raise ValueError
        return name, (int(lo), int(hi))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME=LO:HI (an integer input and the integers its values lie in, e.g. "
            f"attention_mask=0:1), got '{text}'"
        ) from None


def _input_ranges(args: argparse.Namespace) -> dict[str, tuple[int, int]]:
    """The `--input-range`s given, by input name (each input at most once)."""
    ranges: dict[str, tuple[int, int]] = {}
    for name, bounds in args.input_range or ():
        if name in ranges:
            raise UsageError(f"--input-range gives input '{name}' twice")
        ranges[name] = bounds
    return ranges


def _dim(text: str) -> tuple[str, int]:
    name, sep, size = text.partition("=")
    if not (name and sep) or not size.strip().isdigit() or int(size) < 1:
        raise argparse.ArgumentTypeError(
            f"expected NAME=SIZE (a symbolic dimension of the model's inputs and its size, "
            f"at least 1, e.g. batch=1), got '{text}'"
        )
    return name, int(size)


def _dims(args: argparse.Namespace) -> dict[str, int]:
    """The `--dim`s given, by dimension name (each at most once)."""
    dims: dict[str, int] = {}
    for name, size in args.dim or ():
        if name in dims:
            raise UsageError(f"--dim gives dimension '{name}' twice")
        dims[name] = size
    return dims


def _fraction(text: str) -> float:
    value = _non_negative(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got '{text}'")
    return value


def _share(text: str) -> float:
    value = _fraction(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0 and at most 1, got '{text}'")
    return value


def _positive(text: str) -> int:
    value = _seed(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got '{text}'")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a positive number, got '{text}'")
    return value


def _positives(text: str) -> list[int]:
    try:
        return [_positive(t) for t in text.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of positive "
                                         f"integers, got '{text}'") from None


def _names(choices: Sequence[str], what: str) -> Any:
    def parse(text: str) -> list[str]:
        names = [t.strip() for t in text.split(",")]
        unknown = [n for n in names if n not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {what} '{unknown[0]}': choose from "
                                             f"{', '.join(choices)}")
        return names

    return parse


def _chips(text: str) -> list[str]:
    chips = [t.strip() for t in text.split(",")]
    if not all(chips):
        raise argparse.ArgumentTypeError(f"expected comma-separated chip names or files, got "
                                         f"'{text}'")
    return chips


def _vary(text: str) -> tuple[str, list[str]]:
    path, eq, values = text.partition("=")
    given = [v.strip() for v in values.split(",")]
    if not (eq and path.strip() and all(given)):
        raise argparse.ArgumentTypeError(f"expected PARAMETER=VALUE,... (e.g. "
                                         f"sram_bytes_per_core=262144,393216), got '{text}'")
    return path.strip(), list(dict.fromkeys(given))


def _tolerance_defaults(field: str) -> str:
    """The defaults of one tolerance `field`, as `check_tolerance` gives them."""
    fp32, fp16, partials = (
        getattr(check_tolerance(*precisions), field)
        for precisions in (("fp32",), ("fp16",), ("fp16", "fp16"))
    )
    text = f"default {fp32:g}; fp16: {fp16:g}"
    return text if partials == fp16 else f"{text}; --partials fp16: {partials:g}"


def _bench_options(p: argparse.ArgumentParser) -> None:
    from t10.examples.zoo import PHASES, ZOO

    layers = ", ".join(f"{m} {n}" for m, n in models.DEFAULT_LAYERS.items())
    quick = models.QUICK
    p.add_argument("--models", type=_names(tuple(ZOO), "zoo model"), metavar="M,...",
                   help=f"zoo models (default: all: {', '.join(ZOO)})")
    p.add_argument("--layers", type=_positive, metavar="N",
                   help=f"layers of every model (default per model: {layers})")
    p.add_argument("--seq", type=_positive, metavar="N",
                   help="tokens per sequence (default: each model's, 128; ViT 197); with "
                        "--phases, the prefill's")
    p.add_argument("--phases", type=_names(PHASES, "phase"), metavar="P,...",
                   help="run the decoders (llama2-7b, opt-1.3b) as served: prefill of --seq "
                        "tokens, decode of one token per sequence after --contexts cached "
                        "ones (default: the model as it is); rows gain tokens/s")
    p.add_argument("--contexts", type=_positives, metavar="N,...",
                   help="--phases decode: the cached tokens, each a row (default 128)")
    p.add_argument("--batches", type=_positives, metavar="B,...",
                   help="batch sizes (default: 1, 2, 4, ... up to --max-batch, until a batch "
                        "where no planner fits)")
    p.add_argument("--max-batch", type=_positive, default=models.MAX_BATCH, metavar="N",
                   help=f"where the default batches stop (default {models.MAX_BATCH})")
    p.add_argument("--chips", type=_chips, default=[DEFAULTS.chip], metavar="C,...",
                   help=f"built-in chip names or chip JSON files (default {DEFAULTS.chip}); "
                        "a variant of one is BASE[PARAMETER=VALUE]")
    p.add_argument("--vary", type=_vary, metavar="PARAMETER=VALUE,...",
                   help="run variants of each chip with one parameter of its JSON (a dotted "
                        "path: sram_bytes_per_core, topology.link_cycles_per_byte) at each "
                        "value instead; adds vary.png")
    p.add_argument("--planners", type=_names(tuple(models.PLANNER_CONFIGS),
                                             "planner configuration"), metavar="P,...",
                   help="planner configurations, t10 among them: "
                        f"{', '.join(models.PLANNER_CONFIGS)} (default: "
                        f"{', '.join(models.DEFAULT_CONFIGS)}; t10-linear places every "
                        "plan linearly, beside t10 on a mesh or a multi-chip system; "
                        "t10-no-overlap and t10-next-op load off-chip weights right before "
                        "their operator or one operator ahead)")
    p.add_argument("--precision", default="fp16", choices=tuple(PRECISIONS),
                   help="storage precision (default fp16)")
    p.add_argument("--out", default="build/bench", metavar="DIR", type=_path,
                   help=f"where to write {', '.join(FILES)} (default build/bench)")
    p.add_argument("--quick", action="store_true",
                   help=f"{' and '.join(quick['models'])}, {quick['layers']} layer, batches "
                        f"{', '.join(map(str, quick['batches']))} (options given still apply; "
                        "about two minutes on two cores)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar (none is shown when stderr is not a terminal)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--address", metavar="ADDRESS",
                       help="run the cases on this Ray cluster (e.g. ray://head:10001 or "
                            "head:6379; default: a local Ray on this machine's CPUs)")
    where.add_argument("--serial", action="store_true",
                       help="run the cases one after another, each in a process of its own, "
                            "without Ray")
    p.add_argument("--case-memory", type=_positive_float, metavar="GiB",
                   help="the memory one case may take; a case that needs more is a row "
                        "'too big to compile here' (default: three quarters of this "
                        "machine's memory shared by the cases run at once)")


def _planner_help(planner: Planner) -> str:
    default = " (default)" if planner.name == DEFAULTS.planner else ""
    return f"{planner.name}: {planner.help}{default}"


def _compile_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", metavar="MODEL.onnx", type=_path, help="the ONNX model")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on the terminal (none is shown when stderr is not one)")
    p.add_argument("--chip", default=DEFAULTS.chip, metavar="NAME|FILE", type=_path,
                   help=f"built-in chip name or chip JSON file (default {DEFAULTS.chip}; "
                        "format: docs/chips.md)")
    p.add_argument("--planner", default=DEFAULTS.planner, choices=planner_names(),
                   help="; ".join(_planner_help(planner(n)) for n in planner_names()))
    p.add_argument("--min-utilization", type=_fraction, default=DEFAULTS.min_utilization,
                   metavar="U", help="prune plans using fewer than U x the useful cores "
                                     f"(default {DEFAULTS.min_utilization})")
    p.add_argument("--precision", default=DEFAULTS.precision, choices=tuple(PRECISIONS),
                   help="storage precision: fp32 (default) or fp16 (2-byte buffers and "
                        "exchanges, fp16 matmul rate)")
    p.add_argument("--partials", default=DEFAULTS.partials, choices=tuple(PRECISIONS),
                   help="precision of the partial sums a plan carries across steps and "
                        "cores: fp32 (default: accumulated apart, rounded once) or fp16 "
                        "(with --precision fp16: accumulated in the output, half the bytes, "
                        "less accurate)")
    p.add_argument("--placement", default=DEFAULTS.placement, choices=PLACEMENTS,
                   help="where a plan's grid lies on a chip whose cores are linked by a mesh "
                        "or by chip-to-chip links: aware (default: the cheapest of the "
                        "placements that lay its rings along rows or columns, folded so that "
                        "every shift is at most two hops, and the linear one) or oblivious "
                        "(grid core i on chip core i)")
    p.add_argument("--preload", default=DEFAULTS.preload, choices=tuple(PRELOADS),
                   help="on a chip with off-chip memory, when the weights kept there load: "
                        "planned (default: as many operators ahead as hides them, within the "
                        "SRAM), next (at most one operator ahead) or none (right before their "
                        "operator); the last two are baselines")
    p.add_argument("--search", default=DEFAULTS.search, choices=SEARCHES,
                   help="how plans are chosen under the SRAM limit: greedy (T10's moves of "
                        "least time per byte saved; t10's default), exact (the fastest choice "
                        "that fits, a mixed-integer program: seconds for mid-sized models) or "
                        "fastest (every operator's fastest plan on its own, as a vendor "
                        "planner does; replicate's default)")
    takers = temporaries_planners()
    p.add_argument("--temporaries", type=_share, default=DEFAULTS.temporaries, metavar="SHARE",
                   help=f"with --planner {' or '.join(takers)}: the share of a core's SRAM "
                        "(0 < SHARE <= 1) an operator may take while it runs, beyond its "
                        f"weights (default {planner(takers[0]).temporaries}, the vendor "
                        "planner's)")
    p.add_argument("--no-epilogues", dest="epilogues", action="store_false",
                   help="plan element-wise readers of a MatMul (bias, activation, residual) "
                        "as operators of their own instead of running them on its cores")
    p.add_argument("--verify-each", action="store_true",
                   help="verify the IR after every pass, naming the pass that breaks it "
                        "(default: after the last pass only; verifying costs about what a "
                        "pass does)")
    p.add_argument("--dim", type=_dim, action="append", metavar="NAME=SIZE",
                   help="the size of the symbolic dimension NAME of the model's inputs "
                        "(repeatable; e.g. batch=1 sequence=128): the compiler needs static "
                        "shapes, and exported models often leave batch and sequence symbolic")
    p.add_argument("--input-range", type=_input_range, action="append", metavar="NAME=LO:HI",
                   help="the integers the values of integer input NAME lie in (repeatable): "
                        "integer arithmetic on a graph input (e.g. positions as a cumulative "
                        "sum of attention_mask) needs it to be proven exact; the simulator "
                        "refuses inputs outside it")


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="t10", description=(
        "T10 on xDSL: compile ONNX models into compute-shift programs for inter-core "
        "connected chips, and simulate them tile by tile."))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser("run", help="compile and simulate a model; print the report",
                         description="Compile MODEL.onnx for a chip, simulate it with real "
                                     "numbers and print cycles, plans and SRAM per operator.")
    _compile_options(run)
    run.add_argument("--inputs", metavar="IN.npz", type=_path,
                     help="input arrays keyed by ONNX input name (numpy.savez), each of the "
                          "input's exact shape and dtype: float32, or the integer dtype the "
                          "model declares (INT64, INT32, ..., UINT8, BOOL) with |x| <= 2**24; "
                          "nothing is cast (default: seeded random)")
    run.add_argument("--seed", type=_seed, default=0,
                     help="seed of the random inputs: standard-normal float32, and integers "
                          "in [0, 2) for integer (INT64, ..., UINT8, BOOL) inputs (default 0)")
    run.add_argument("--outputs", metavar="OUT.npz", type=_npz_path,
                     help="save the simulated outputs, keyed by ONNX output name, to OUT.npz "
                          "(its directory must exist)")
    run.add_argument("--check", action="store_true",
                     help="compare with onnxruntime; exit 1 past tolerance")
    run.add_argument("--rtol", type=_non_negative, default=None,
                     help=f"relative tolerance of --check ({_tolerance_defaults('rtol')})")
    run.add_argument("--atol", type=_non_negative, default=None,
                     help=f"absolute tolerance of --check ({_tolerance_defaults('atol')})")
    run.add_argument("--atol-rms", type=_non_negative, default=None, metavar="F",
                     help="absolute tolerance of --check per unit of each output's root "
                          f"mean square, added to --atol ({_tolerance_defaults('atol_rms')})")
    run.add_argument("--json", action="store_true",
                     help="print the report as JSON (the --report format) instead of text")
    run.add_argument("--report", metavar="REPORT.json", type=_path,
                     help="write the report as JSON (format: docs/report.md)")
    run.add_argument("--trace", metavar="TRACE.json", type=_path,
                     help="write the simulated run as a Chrome trace (JSON; open it in "
                          "Perfetto): supersteps and their phases per operator and core "
                          "group, SRAM per core as a counter")
    run.add_argument("--plot", metavar="PLOT.png", type=_path,
                     help="draw the time per operator (compute, exchange, sync) and the SRAM "
                          "in use per core over the run")
    run.add_argument("--link-map", metavar="MAP.png", type=_path,
                     help="on a mesh chip, draw the bytes each link carried over the run as "
                          "a heat map over the grid, one panel per direction")
    run.add_argument("--timing-only", action="store_true",
                     help="simulate cycles and SRAM without computing values (the same "
                          "report, much faster; not with --check or --outputs)")
    run.set_defaults(handler=_cmd_run)

    comp = sub.add_parser("compile", help="print the IR at one level",
                          description="Compile MODEL.onnx and print (or write) the IR at one "
                                      "level; 'linalg' is right after plan search.")
    _compile_options(comp)
    comp.add_argument("--emit", default="chip", choices=LEVELS,
                      help="IR level to print (default chip)")
    comp.add_argument("-o", "--output", metavar="FILE", type=_path,
                      help="write the IR to FILE ('-': standard output)")
    comp.add_argument("--weights", action="store_true",
                      help=f"print dense constants (weights) in full (default: those of more "
                           f"than {ELIDE_LARGER_THAN} elements print as "
                           "dense_resource<__elided__>, which simulates only with "
                           "--timing-only)")
    comp.add_argument("--print-debuginfo", action="store_true",
                      help="print each op's location: the ONNX nodes it was made for, as "
                           "loc(\"node\") or loc(fused[...])")
    comp.add_argument("--print-ir-after", type=_names(pass_names(), "pass"), metavar="PASS,...",
                      help="print the IR after these passes to stderr (names as in "
                           f"t10-opt pipelines: {', '.join(pass_names())})")
    comp.add_argument("--print-ir-after-all", action="store_true",
                      help="print the IR after every pass to stderr")
    comp.add_argument("--time-passes", action="store_true",
                      help="print each pass's wall time (and the verification's) to stderr")
    comp.set_defaults(handler=_cmd_compile)

    ex = sub.add_parser("explain", help="why an operator got its plan: its frontier, the "
                        "chosen plan, its layouts and moves",
                        description="Plan MODEL.onnx as 'run' does and explain one operator's "
                                    "plan: every plan of its frontier with the model measured "
                                    "around it (peak bytes per core, cycles), the chosen one "
                                    "marked and why, its tensors' layouts in words and the "
                                    "moves into and out of it.")
    _compile_options(ex)
    ex.add_argument("--op", required=True, metavar="NAME",
                    help="the operator: its name in the report, or an ONNX node it computes")
    ex.add_argument("--plot", action="store_true",
                    help="also draw the frontier as a PNG (in the current directory unless "
                         "-o: explain-<the operator's name, cut to 40 characters>-<8 hex "
                         "digits of its hash>.png)")
    ex.add_argument("-o", "--output", metavar="FILE.png", type=_path,
                    help="write the plot to FILE.png")
    ex.set_defaults(handler=_cmd_explain)

    b = sub.add_parser("bench", help="benchmark zoo models under every planner",
                       description="Compile and simulate (timing only) zoo models at several "
                                   "batch sizes under every planner configuration; print "
                                   "and write the table (bench.md, bench.json) and plots "
                                   "(docs/bench.md).")
    _bench_options(b)
    b.set_defaults(handler=_cmd_bench)

    bm = sub.add_parser("bench-matmuls", help="benchmark T10 vs replicate plans on matmuls",
                        description=matmuls.__doc__.splitlines()[0] if matmuls.__doc__ else None)
    matmuls.add_arguments(bm)
    bm.set_defaults(handler=_cmd_bench_matmuls)

    z = sub.add_parser("zoo", help="write a built-in model (BERT, ViT, Llama 2, OPT, ResNet-50, "
                                   "NeRF)",
                       description="Write a seeded float32 ONNX model of the zoo (published "
                                   "dimensions, static shapes; docs/zoo.md), or list them.")
    z.add_argument("name", nargs="?", metavar="NAME", help="the model (see --list)")
    z.add_argument("--list", action="store_true",
                   help="list the models: layers, dimensions, default inputs")
    z.add_argument("--batch", type=int, default=None,
                   help="batch size (default 1; nerf: rays, default 64)")
    z.add_argument("--seq", type=int, default=None,
                   help="sequence length (default 128; ViT: tokens incl. CLS, default 197; "
                        "nerf: samples per ray, default 64)")
    z.add_argument("--image-size", type=int, default=None, metavar="N",
                   help="ViT and resnet50: image side in pixels (ViT: a multiple of 16; "
                        "default 224)")
    z.add_argument("--layers", type=int, default=1,
                   help="how many layers, up to the published count (default 1)")
    z.add_argument("--seed", type=int, default=0, help="seed of the weights (default 0)")
    z.add_argument("--token-ids", action="store_true",
                   help="opt-1.3b: take int64 token ids through the embedding table instead "
                        "of hidden states")
    z.add_argument("--phase", choices=("prefill", "decode"), default=None,
                   help="llama2-7b, opt-1.3b: with a KV cache as Hugging Face exports it: "
                        "prefill (--seq tokens, returning present.{i}.key/.value) or decode "
                        "(one new token per sequence after --context cached ones)")
    z.add_argument("--context", type=int, default=None, metavar="N",
                   help="--phase decode: the cached tokens before the new one (default 128)")
    z.add_argument("--shapes-only", action="store_true",
                   help="declare the weights without their data (no weight bytes written), "
                        "for t10 run --timing-only at full scale (docs/zoo.md)")
    z.add_argument("-o", "--output", metavar="FILE.onnx", type=_path,
                   help="the model file (weights over 1 GiB go to FILE.onnx.data)")
    z.set_defaults(handler=_cmd_zoo)
    return parser


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _one_line(message: str) -> str:
    return " ".join(message.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `t10` command; returns the exit code (0 ok, 1 error, 2 usage error, 128 + the
    signal's number when SIGINT, SIGTERM or SIGHUP ended it)."""
    with ending_signals():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    out = sys.stdout
    try:
        parser = make_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.error("missing COMMAND (run, compile, bench, bench-matmuls or zoo)")
        return int(args.handler(args, out))
    except UsageError as e:
        print(f"t10: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0
    except (T10Error, DiagnosticException) as e:
        print(f"t10: error: {_one_line(str(e))}", file=sys.stderr)
        return 1
    except MemoryError:
        print("t10: error: out of host memory", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("t10: error: interrupted", file=sys.stderr)
        return 130
    except Terminated as e:  # the workers are stopped on the way here
        try:
            print(f"t10: error: {e}", file=sys.stderr)
        except OSError:  # SIGHUP: the terminal is gone
            pass
        return 128 + e.signum
    except BrokenPipeError:  # the reader went away (`t10 zoo --list | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit-time flush does not complain
        return 0
    except Exception as e:
        if os.environ.get("T10_TRACEBACK"):
            raise
        print(f"t10: error: internal error: {type(e).__name__}: {_one_line(str(e))} "
              "(set T10_TRACEBACK=1 for the traceback)", file=sys.stderr)
        return 1


def console_main() -> NoReturn:
    """The `t10` executable: `main`, its output flushed, then an exit that skips tearing the
    interpreter down (freeing a big model's IR and weights object by object takes longer
    than planning a small model; the OS reclaims the memory at once)."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader went away: nothing more can be said
        pass
    os._exit(code)


if __name__ == "__main__":
    console_main()
