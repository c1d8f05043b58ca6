"""Whole-model scaling benchmark: how compiling and simulating a model grows with its size (whole
models must compile in seconds). One Markdown table of the compile seconds (ONNX import
included, as `t10 run`), the timing-only simulation seconds (`t10 run --timing-only`), the CPU
seconds (the process and its plan-search workers), the total simulated cycles and the peak RSS
of the process and of its largest worker, for:

- BERT-base (batch 1) and BERT-large (batch 4) by depth (`--depths`);
- ResNet-50 (16 bottleneck blocks) by batch (`--batches`);
- a chain of N element-wise ops on a 64x64 tensor (`python -m t10.examples chain`) by length
  (`--nodes`): its time per node shows whether the compiler is linear in the graph's size;
- any ONNX file given with `--export` (a real export, e.g. GPT-2 small made by
  scripts/export_gpt2_small.py; the project does not depend on torch).

    python benchmarks/model_scaling.py [--model bert-base|bert-large|resnet50|chain|all]
        [--depths 1,2,4] [--batches 1,8,32] [--nodes 1000,10000] [--export FILE.onnx]
        [--quick] [--chip ipu-mk2] [--precision fp16] [--seq 128]

Each case is written first (not timed), then measured in a fresh Python process (`--child`),
so that its peak RSS is its own and no cache outlives it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial

import onnx

from t10.driver import DEFAULTS, CompileOptions, run_model
from t10.errors import T10Error
from t10.examples import zoo
from t10.examples.models import chain

DEPTHS = {"bert-base": (1, 2, 4, 8, 12), "bert-large": (1, 2, 4, 8, 16, 24)}
BATCH = {"bert-base": 1, "bert-large": 4}
RESNET_BATCHES = (1, 8, 32)
CHAIN_NODES = (1000, 2000, 5000, 10000)
MODELS = (*DEPTHS, "resnet50", "chain")
QUICK_DEPTHS = (1, 2)
"""`--quick`: BERT-base at these depths only."""


@dataclass(frozen=True)
class Measurement:
    compile_seconds: float
    simulate_seconds: float
    total_cycles: int
    peak_rss_bytes: int
    cpu_seconds: float = 0.0
    """User and system time of the process and its ended workers."""
    worker_peak_rss_bytes: int = 0
    """The largest peak RSS of an ended worker (0: none ran)."""


@dataclass(frozen=True)
class Row:
    model: str
    layers: int
    """Layers (BERT), bottleneck blocks (ResNet-50), nodes (a chain); 0: as exported."""
    batch: int
    measured: Measurement


def measure(model_path: str, chip: str, precision: str) -> Measurement:
    """Compile `model_path` (import included) and simulate it timing-only, in this process;
    the peak RSS is this process's so far. The IR is verified after the last pass, as `t10
    run` does."""
    run = run_model(model_path, CompileOptions(chip=chip, precision=precision),
                    timing_only=True, verify_each=False)
    own, workers = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    cpu = own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime
    return Measurement(run.compile_seconds, run.simulate_seconds, run.report.total_cycles,
                       peak_rss(), cpu, workers.ru_maxrss * 1024)  # KiB on Linux


def peak_rss() -> int:
    """This process's peak resident bytes: Linux's VmHWM, which starts afresh at exec (the
    `ru_maxrss` of a forked child starts from its parent's), else `ru_maxrss`."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def measure_apart(model_path: str, chip: str, precision: str) -> Measurement:
    """`measure` in a fresh Python process."""
    command = [sys.executable, "-m", "t10.bench.scaling", "--child", model_path,
               "--chip", chip, "--precision", precision]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise T10Error(f"measuring '{model_path}' failed: {last}")
    return Measurement(**json.loads(done.stdout.strip().splitlines()[-1]))


def format_table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table, one line per model and size."""
    lines = [
        "| model | layers / nodes | batch | compile s | simulate s | total s | CPU s "
        "| total cycles | peak RSS GB | workers' peak RSS GB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        m = row.measured
        lines.append(
            f"| {row.model} | {row.layers or '-'} | {row.batch or '-'} "
            f"| {m.compile_seconds:.1f} | {m.simulate_seconds:.1f} "
            f"| {m.compile_seconds + m.simulate_seconds:.1f} | {m.cpu_seconds:.1f} "
            f"| {m.total_cycles:,} | {m.peak_rss_bytes / 1e9:.2f} "
            f"| {m.worker_peak_rss_bytes / 1e9:.2f} |"
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class Case:
    """One model to measure: `write(path)` makes it."""

    model: str
    layers: int
    batch: int
    write: Callable[[str], object]


def cases(args: argparse.Namespace) -> list[Case]:
    """The cases the options ask for, in order."""
    models = list(MODELS) if args.model == "all" else [args.model]
    if args.quick:
        models = ["bert-base"]
    found: list[Case] = []
    for name in models:
        if name == "resnet50":
            blocks = zoo.get(name).config.layers
            for batch in args.batches or RESNET_BATCHES:
                found.append(Case(name, blocks, batch, partial(
                    zoo.write, name, batch=batch, seq=224, layers=blocks)))
        elif name == "chain":
            for nodes in args.nodes or CHAIN_NODES:
                found.append(Case(name, nodes, 1, partial(_write_chain, nodes)))
        else:
            limit = zoo.get(name).config.layers
            depths = args.depths or (QUICK_DEPTHS if args.quick else DEPTHS[name])
            found += [
                Case(name, layers, BATCH[name], partial(
                    zoo.write, name, batch=BATCH[name], seq=args.seq, layers=layers))
                for layers in depths if layers <= limit
            ]
    return found


def _write_chain(nodes: int, path: str) -> None:
    onnx.save(chain(nodes=nodes), path)


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of "
                                         "counts") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"'{text}': counts start at 1")
    return sizes


def _listed(sizes: Sequence[int]) -> str:
    return ",".join(map(str, sizes))


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line's options."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--model", choices=[*MODELS, "all"], default="all")
    parser.add_argument("--depths", type=_sizes, help="BERT layer counts (default: per model)")
    parser.add_argument("--batches", type=_sizes,
                        help=f"ResNet-50 batches (default {_listed(RESNET_BATCHES)})")
    parser.add_argument("--nodes", type=_sizes,
                        help=f"chain lengths (default {_listed(CHAIN_NODES)})")
    parser.add_argument("--export", metavar="FILE.onnx", action="append", default=[],
                        help="also measure this ONNX file as it is (repeatable)")
    parser.add_argument("--quick", action="store_true",
                        help=f"BERT-base at {_listed(QUICK_DEPTHS)} layers only")
    parser.add_argument("--chip", default=DEFAULTS.chip)
    parser.add_argument("--precision", default="fp16")
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--child", metavar="MODEL", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(argv)
    try:
        if args.child:
            print(json.dumps(asdict(measure(args.child, args.chip, args.precision))))
            return 0
        rows = []
        for export in args.export:
            rows.append(Row(os.path.basename(export), 0, 0,
                            measure_apart(export, args.chip, args.precision)))
            print(format_table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            for case in cases(args):
                path = os.path.join(tmp, f"{case.model}-{case.layers}-{case.batch}.onnx")
                case.write(path)
                measured = measure_apart(path, args.chip, args.precision)
                rows.append(Row(case.model, case.layers, case.batch, measured))
                for f in (path, path + ".data"):
                    if os.path.exists(f):
                        os.remove(f)
                print(format_table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    except T10Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"chip {args.chip}, precision {args.precision}, sequence {args.seq}; compile "
          "includes the ONNX import; simulate is timing-only\n")
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
