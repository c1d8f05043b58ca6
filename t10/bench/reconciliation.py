"""The memory reconciliation's greedy against the exact optimum: BERT-base at a few depths
(batch 1, sequence 128, fp16) on the IPU MK2 with less SRAM per core, where memory binds.
Per case, a Markdown row with each search's estimated model cycles (operators, relayouts and
gathers, as the plan search writes them), the ratio greedy ÷ exact, the model's bytes per
core and the seconds each plan search took (the exact one reuses the frontiers the greedy's
searched, so its seconds are those of choosing).

    python benchmarks/greedy_vs_exact.py [--depths 2,3,4] [--sram 160000,120000,100000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from t10.common.files import write_text
from t10.driver import run_passes
from t10.errors import T10Error
from t10.examples import zoo
from t10.frontend import import_onnx
from t10.outputs.report import planned_ops, planned_sram
from t10.passes.t10_compile import pipeline
from t10.planning.compile_options import CompileOptions

DEPTHS = (2, 3, 4)
SRAM = (160_000, 120_000, 100_000)


@dataclass(frozen=True)
class Planned:
    cycles: int
    model_bytes: int
    seconds: float


def chip_file(sram: int, directory: Path) -> str:
    """The IPU MK2 with `sram` bytes of SRAM per core."""
    spec = json.loads(resources.files("t10.common").joinpath("chips/ipu-mk2.json").read_text())
    path = directory / f"ipu-mk2-sram{sram}.json"
    write_text(path, json.dumps({**spec, "name": f"ipu-mk2-sram{sram}",
                                 "sram_bytes_per_core": sram}), "chip file")
    return str(path)


def plan(model: str, chip: str, search: str) -> Planned:
    """The plan search's estimate of `model` on `chip` with `search` (fp16)."""
    module = import_onnx(model)
    passes = pipeline(CompileOptions(chip=chip, precision="fp16", search=search), emit="linalg")
    start = time.perf_counter()
    run_passes(module, passes)
    seconds = time.perf_counter() - start
    cycles = sum(op.estimated_cycles or 0 for op in planned_ops(module))
    return Planned(cycles, planned_sram(module) or 0, seconds)


def _counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"'{text}': counts start at 1")
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--depths", type=_counts, default=DEPTHS, help="BERT-base layers")
    parser.add_argument("--sram", type=_counts, default=SRAM, help="bytes per core")
    args = parser.parse_args(argv)
    print("| layers | SRAM B/core | greedy cycles | exact cycles | greedy ÷ exact "
          "| greedy B/core | exact B/core | greedy s | exact s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for layers in args.depths:
            model = str(Path(tmp) / f"bert-base-{layers}.onnx")
            zoo.write("bert-base", model, 1, 128, layers)
            for sram in args.sram:
                chip = chip_file(sram, Path(tmp))
                row = [f"{layers}", f"{sram:,}"]
                try:
                    greedy, exact = plan(model, chip, "greedy"), plan(model, chip, "exact")
                except T10Error as e:
                    print(f"| {' | '.join(row)} | {e} |||||||")
                    continue
                row += [f"{greedy.cycles:,}", f"{exact.cycles:,}",
                        f"{greedy.cycles / exact.cycles:.4f}", f"{greedy.model_bytes:,}",
                        f"{exact.model_bytes:,}", f"{greedy.seconds:.1f}",
                        f"{exact.seconds:.1f}"]
                print(f"| {' | '.join(row)} |", flush=True)
    return 0
