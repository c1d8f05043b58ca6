"""Whole-model scaling benchmark: how compiling and simulating a model grows with its depth (whole
models must compile in seconds). For BERT-base (batch 1) and BERT-large (batch 4) at several
layer counts, one Markdown table of the compile seconds (ONNX import included, as `t10 run`),
the timing-only simulation seconds (`t10 run --timing-only`), the total simulated cycles and the
peak RSS.

    python benchmarks/model_scaling.py [--model bert-base|bert-large|all] [--depths 1,2,4]
                                       [--quick] [--chip ipu-mk2] [--precision fp16] [--seq 128]

Each depth is exported by the zoo first (not timed), then measured in a fresh Python process
(`--child`), so that its peak RSS is its own and no cache outlives it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from t10.driver import DEFAULTS, CompileOptions, run_model
from t10.errors import T10Error
from t10.examples import zoo

DEPTHS = {"bert-base": (1, 2, 4, 8, 12), "bert-large": (1, 2, 4, 8, 16, 24)}
BATCH = {"bert-base": 1, "bert-large": 4}
QUICK_DEPTHS = (1, 2)
"""`--quick`: BERT-base at these depths only."""


@dataclass(frozen=True)
class Measurement:
    compile_seconds: float
    simulate_seconds: float
    total_cycles: int
    peak_rss_bytes: int


@dataclass(frozen=True)
class Row:
    model: str
    layers: int
    batch: int
    measured: Measurement


def measure(model_path: str, chip: str, precision: str) -> Measurement:
    """Compile `model_path` (import included) and simulate it timing-only, in this process;
    the peak RSS is this process's so far."""
    run = run_model(model_path, CompileOptions(chip=chip, precision=precision), timing_only=True)
    return Measurement(run.compile_seconds, run.simulate_seconds, run.report.total_cycles,
                       peak_rss())


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
    """The rows as a Markdown table, one line per model and depth."""
    lines = [
        "| model | layers | batch | compile s | simulate s | total s | total cycles "
        "| peak RSS GB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        m = row.measured
        lines.append(
            f"| {row.model} | {row.layers} | {row.batch} | {m.compile_seconds:.1f} "
            f"| {m.simulate_seconds:.1f} | {m.compile_seconds + m.simulate_seconds:.1f} "
            f"| {m.total_cycles:,} | {m.peak_rss_bytes / 1e9:.2f} |"
        )
    return "\n".join(lines)


def _depths(text: str) -> tuple[int, ...]:
    try:
        depths = tuple(int(d) for d in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of layer "
                                         "counts") from None
    if not depths or min(depths) < 1:
        raise argparse.ArgumentTypeError(f"'{text}': layer counts start at 1")
    return depths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--model", choices=[*DEPTHS, "all"], default="all")
    parser.add_argument("--depths", type=_depths, help="layer counts (default: per model)")
    parser.add_argument("--quick", action="store_true",
                        help=f"BERT-base at {', '.join(map(str, QUICK_DEPTHS))} layers only")
    parser.add_argument("--chip", default=DEFAULTS.chip)
    parser.add_argument("--precision", default="fp16")
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--child", metavar="MODEL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.child:
            print(json.dumps(asdict(measure(args.child, args.chip, args.precision))))
            return 0
        models = list(DEPTHS) if args.model == "all" else [args.model]
        if args.quick:
            models = ["bert-base"]
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            for name in models:
                limit = zoo.get(name).config.layers
                depths = args.depths or (QUICK_DEPTHS if args.quick else DEPTHS[name])
                for layers in (d for d in depths if d <= limit):
                    path = os.path.join(tmp, f"{name}-{layers}.onnx")
                    zoo.write(name, path, BATCH[name], args.seq, layers)
                    measured = measure_apart(path, args.chip, args.precision)
                    rows.append(Row(name, layers, BATCH[name], measured))
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
