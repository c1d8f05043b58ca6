"""Matmul benchmark: T10 compute-shift plans against replicate plans and a lower bound.

For each shape M x K x N (an input [M, K] times a constant weight [K, N]) the matmul example
model is compiled with both planners at the storage precision (`--precision fp32|fp16`) and
simulated with seeded random inputs (the simulator always computes the numbers; every result
is checked against numpy within the precision's `t10 run --check` tolerance).
The table shows the simulated cycles of both plans, a lower bound, their ratios and the
cores each plan uses.

Lower bound (`lower_bound`) of any plan on P' <= P cores (P = the chip's cores), in cycles:

    bound = min over P' in 1..P of  compute(P') + exchange(P')  +  sync

    compute(P')  = 2·M·K·N / (P' · peak)        peak = FLOP/cycle/core at the precision
    exchange(P') = max(0, 3·(M·N·K / P')^(2/3) - (M·K + K·N + M·N) / P')
                   · elem_bytes · exchange_cycles_per_byte     (4 bytes fp32, 2 fp16)
    sync         = sync_cycles                       (a BSP program syncs at least once)

compute(P') is the busiest core's share of the FLOPs at peak speed. exchange(P') is the
memory-independent communication lower bound of classical matmul (Ballard, Demmel, Holtz,
Lipshitz, Schwartz, SPAA 2012): some core performs at least M·N·K / P' multiply-adds, so by
the Loomis-Whitney inequality it touches at least 3·(M·N·K / P')^(2/3) elements of A, B and
C, of which it can hold at most an even share (M·K + K·N + M·N) / P' at the start; the rest
it must receive over the exchange. The bound ignores padding, kernel overheads and the
per-step syncs of real plans, so ratios to it are >= 1 and show the headroom left.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

import numpy as np
from onnx import numpy_helper

from t10.common import costs
from t10.common.chip_spec import ChipSpec, load_chip
from t10.common.tensor_expr import PRECISIONS, check_partials, element_bytes, precision_type
from t10.driver import check_tolerance, compile_model
from t10.errors import T10Error
from t10.examples.models import matmul
from t10.report import check_outputs, input_specs, random_inputs
from t10.sim.simulator import simulate

__all__ = [
    "DEFAULT_SHAPES",
    "BenchRow",
    "LowerBound",
    "add_arguments",
    "format_table",
    "lower_bound",
    "run_bench",
    "run_from_args",
]

Shape = tuple[int, int, int]

DEFAULT_SHAPES: tuple[Shape, ...] = (
    (256, 512, 512),
    (512, 768, 3072),
    (128, 4096, 4096),
    (1024, 4096, 1024),
    (2048, 2048, 2048),
    (2048, 2048, 4096),
)
"""M x K x N; all of them simulate with real numbers on the IPU MK2 in about three minutes on
two cores (4096x4096x4096 takes about one more minute on its own: `--shapes 4096x4096x4096`).
The last one does not fit the IPU MK2 with replicated plans; T10's rotating plans fit it."""


@dataclass(frozen=True)
class LowerBound:
    cycles: int
    compute_cycles: int
    exchange_cycles: int
    sync_cycles: int
    cores: int
    """The core count P' that attains the bound."""


def lower_bound(chip: ChipSpec, m: int, k: int, n: int, elem_bytes: int = 4) -> LowerBound:
    """The lower bound of the module docstring (cycles, rounded up)."""
    peak = costs.peak_flops_per_cycle(chip, "fp32" if elem_bytes == 4 else "fp16")
    volume = m * k * n
    data = m * k + k * n + m * n
    sync = costs.sync_cycles(chip)
    best: LowerBound | None = None
    for p in range(1, chip.cores + 1):
        compute = 2 * volume / (p * peak)
        words = max(0.0, 3 * (volume / p) ** (2 / 3) - data / p)
        exchange = words * elem_bytes * chip.exchange_cycles_per_byte
        total = math.ceil(compute + exchange) + sync
        if best is None or total < best.cycles:
            best = LowerBound(total, math.ceil(compute), math.ceil(exchange), sync, p)
    assert best is not None
    return best


@dataclass(frozen=True)
class PlanRun:
    cycles: int
    cores: int
    max_abs_error: float
    checked: bool
    """Whether the simulated product is within the precision's check tolerance of numpy."""


@dataclass(frozen=True)
class BenchRow:
    shape: Shape
    t10: PlanRun | str
    """The simulated run, or why there is none (e.g. "infeasible")."""
    replicate: PlanRun | str
    bound: LowerBound


def run_plan(
    chip: str,
    shape: Shape,
    planner: str,
    seed: int = 0,
    precision: str = "fp32",
    partials: str = "fp32",
) -> PlanRun | str:
    """Compile and simulate one matmul; "infeasible" when no plan fits the chip."""
    m, k, n = shape
    model = matmul(m=m, k=k, n=n, seed=seed)
    try:
        compiled = compile_model(model, chip, planner, precision=precision, partials=partials)
    except T10Error as e:
        if "does not fit" in str(e):
            return "infeasible"
        raise
    inputs = random_inputs(input_specs(compiled.module), seed)
    result = simulate(compiled.module, compiled.chip, inputs)
    weight = numpy_helper.to_array(model.graph.initializer[0])
    x = next(iter(inputs.values()))
    ref = x.astype(np.float64) @ weight.astype(np.float64)
    name, got = next(iter(result.outputs.items()))
    check = check_outputs({name: got}, {name: ref}, check_tolerance(precision, partials))
    cores = max((op.cores_used for op in result.report.ops), default=0)
    return PlanRun(result.report.total_cycles, cores, check.max_abs_error, check.passed)


def run_bench(
    chip_name: str,
    shapes: Sequence[Shape] = DEFAULT_SHAPES,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    precision: str = "fp32",
    partials: str = "fp32",
) -> list[BenchRow]:
    chip = load_chip(chip_name)
    elem_bytes = element_bytes(precision_type(precision, "t10 bench"), "t10 bench")
    rows = []
    for shape in shapes:
        if progress:
            progress(f"{'x'.join(map(str, shape))} ...")
        t10 = run_plan(chip_name, shape, "t10", seed, precision, partials)
        rep = run_plan(chip_name, shape, "replicate", seed, precision, partials)
        rows.append(BenchRow(shape, t10, rep, lower_bound(chip, *shape, elem_bytes)))
    return rows


def _cycles(r: PlanRun | str) -> str:
    return r if isinstance(r, str) else f"{r.cycles:,}"


def _cores(r: PlanRun | str) -> str:
    return "-" if isinstance(r, str) else str(r.cores)


def _ratio(a: PlanRun | str | int, b: PlanRun | str | int) -> str:
    def value(x: PlanRun | str | int) -> int | None:
        return x if isinstance(x, int) else (None if isinstance(x, str) else x.cycles)

    va, vb = value(a), value(b)
    return "-" if va is None or vb is None else f"{va / vb:.2f}"


def format_table(
    rows: Sequence[BenchRow], chip: ChipSpec, precision: str = "fp32", partials: str = "fp32"
) -> str:
    header = ("M x K x N", "T10 cycles", "replicate cycles", "lower bound",
              "T10/bound", "replicate/T10", "T10 cores", "replicate cores")
    body = [
        (
            "x".join(map(str, r.shape)),
            _cycles(r.t10),
            _cycles(r.replicate),
            f"{r.bound.cycles:,}",
            _ratio(r.t10, r.bound.cycles),
            _ratio(r.replicate, r.t10),
            _cores(r.t10),
            _cores(r.replicate),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in (header, *body)) for i in range(len(header))]
    lines = [
        f"matmul plans on {chip.name} ({chip.cores} cores, {chip.sram_bytes_per_core:,} B SRAM "
        f"per core), {precision} storage, {partials} partial sums, simulated cycles",
        "  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths,
                                                                               strict=True))),
    ]
    for row in body:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    elem_bytes = element_bytes(precision_type(precision, "t10 bench"), "t10 bench")
    lines += [
        f"lower bound = 2MKN/(P'·peak {precision}) + max(0, 3(MNK/P')^(2/3) - (MK+KN+MN)/P')·"
        f"{elem_bytes} B·exchange cycles/B + 1 sync, minimised over P' <= cores (t10/bench.py);",
        "infeasible = no plan of that planner fits the SRAM; replicate/T10 = 1.00 where the "
        "fastest plan needs no rotation, so both planners pick it.",
    ]
    bad = [
        r for r in rows for p in (r.t10, r.replicate) if isinstance(p, PlanRun) and not p.checked
    ]
    if bad:
        lines.append("WARNING: simulated numbers differ from numpy for "
                     + ", ".join("x".join(map(str, r.shape)) for r in bad))
    return "\n".join(lines)


def _shape(text: str) -> Shape:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match or min(int(g) for g in match.groups()) < 1:
        raise argparse.ArgumentTypeError(f"expected a shape MxKxN of positive integers, "
                                         f"got '{text}'")
    m, k, n = (int(g) for g in match.groups())
    return (m, k, n)


def _shapes(text: str) -> list[Shape]:
    return [_shape(t) for t in text.split(",") if t.strip()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--chip", default="ipu-mk2", metavar="NAME|FILE",
                   help="built-in chip name or chip JSON file (default ipu-mk2)")
    p.add_argument("--shapes", type=_shapes, metavar="MxKxN,...",
                   default=list(DEFAULT_SHAPES),
                   help="matmul shapes (default: "
                        + ",".join("x".join(map(str, s)) for s in DEFAULT_SHAPES) + ")")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32",
                   help="storage precision: fp32 (default) or fp16 (2-byte buffers and "
                        "exchanges, fp16 matmul rate)")
    p.add_argument("--partials", choices=PRECISIONS, default="fp32",
                   help="precision of partial sums across steps and cores: fp32 (default) "
                        "or fp16 (with --precision fp16)")
    p.add_argument("--seed", type=int, default=0, help="seed of weights and inputs")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def run_from_args(args: argparse.Namespace, out: IO[str]) -> int:
    chip = load_chip(args.chip)

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    check_partials(args.precision, args.partials, "--partials")
    rows = run_bench(
        args.chip,
        args.shapes,
        args.seed,
        None if args.quiet else progress,
        args.precision,
        args.partials,
    )
    print(format_table(rows, chip, args.precision, args.partials), file=out)
    return 0

