"""Matmul benchmark: T10 compute-shift plans against replicate plans and a lower bound.

For each shape M x K x N (an input [M, K] times a constant weight [K, N]) the matmul example
model is compiled with both planners at the storage precision (`--precision fp32|fp16`) and
simulated with seeded random inputs (the simulator always computes the numbers; every result
is checked against numpy within the precision's `t10 run --check` tolerance).
The table shows the simulated cycles of both plans, a lower bound, their ratios and the
cores each plan uses. On a chip whose topology routes (a mesh, a multi-chip system) it also
shows T10's plans placed linearly (`placement=oblivious`) beside the placed ones, and their
ratio.

The lower bound is the operator's (`t10.common.bounds.operator_bound`, docs/DESIGN.md): the
busiest core's share of the multiply-adds at the matmul kernel's best rate with its per-call
costs paid once, plus the elements that core must receive because its SRAM cannot hold all
it touches (Loomis-Whitney: a core doing W multiply-adds touches at least 3·W^(2/3) elements;
Ballard, Demmel, Holtz, Lipshitz, Schwartz, SPAA 2012), plus one sync per superstep it
forces. It ignores padding, the layout transition of the input and the per-step syncs and
shifts of real plans, so ratios to it are >= 1 and show the headroom left.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import IO

import numpy as np
from onnx import numpy_helper

from t10.common.bounds import Bound, operator_bound
from t10.common.chip_spec import ChipSpec, load_chip
from t10.common.tensor_expr import (
    PRECISIONS,
    element_bytes,
    matmul_expr,
    precision_type,
)
from t10.driver import DEFAULTS, CompileOptions, check_tolerance, compile_model
from t10.errors import T10Error
from t10.examples.models import matmul
from t10.outputs.report import check_outputs, input_specs, random_inputs
from t10.planning.planners.replicate import REPLICATE
from t10.sim.simulator import simulate

__all__ = [
    "DEFAULT_SHAPES",
    "BenchRow",
    "add_arguments",
    "format_table",
    "run_matmuls",
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
    bound: Bound
    linear: PlanRun | str | None = None
    """T10 placed linearly (`placement=oblivious`), on a chip whose topology routes."""


def run_plan(options: CompileOptions, shape: Shape, seed: int = 0) -> PlanRun | str:
    """Compile and simulate one matmul; "infeasible" when no plan fits the chip."""
    m, k, n = shape
    model = matmul(m=m, k=k, n=n, seed=seed)
    try:
        compiled = compile_model(model, options)
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
    tolerance = check_tolerance(options.precision, options.partials)
    check = check_outputs({name: got}, {name: ref}, tolerance)
    cores = max((op.cores_used for op in result.report.ops), default=0)
    return PlanRun(result.report.total_cycles, cores, check.max_abs_error, check.passed)


def run_matmuls(
    options: CompileOptions = DEFAULTS,
    shapes: Sequence[Shape] = DEFAULT_SHAPES,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> list[BenchRow]:
    """Every shape under the t10 and the replicate planners (`options` gives the rest), and
    t10 placed linearly on a chip whose topology routes."""
    chip = load_chip(options.chip)
    elem_bytes = element_bytes(precision_type(options.precision, "t10 bench"), "t10 bench")
    rows = []
    for shape in shapes:
        if progress:
            progress(f"{'x'.join(map(str, shape))} ...")
        t10 = run_plan(replace(options, planner="t10"), shape, seed)
        rep = run_plan(replace(options, planner=REPLICATE.name), shape, seed)
        bound = operator_bound(chip, matmul_expr(*shape, elem_bytes))
        linear = None
        if chip.topology.routes:
            linear = run_plan(replace(options, planner="t10", placement="oblivious"), shape,
                              seed)
        rows.append(BenchRow(shape, t10, rep, bound, linear))
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
    placed = any(r.linear is not None for r in rows)
    header = ("M x K x N", "T10 cycles", "replicate cycles", "lower bound",
              "T10/bound", "replicate/T10", "T10 cores", "replicate cores",
              *(("T10 linear cycles", "linear/T10") if placed else ()))
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
            *((_cycles(r.linear or "-"), _ratio(r.linear or "-", r.t10)) if placed else ()),
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
    lines += [
        f"lower bound = the busiest core's {precision} kernel cycles at the best rate + what its "
        "SRAM forces it to receive + its syncs (t10/common/bounds.py);",
        "infeasible = no plan of that planner fits the SRAM; replicate/T10 = 1.00 where the "
        "fastest plan needs no rotation, so both planners pick it.",
    ]
    if placed:
        lines.append("T10 linear = T10 with every plan placed linearly (--placement oblivious): "
                     "grid core i on chip core i.")
    bad = [
        r for r in rows for p in (r.t10, r.replicate, r.linear)
        if isinstance(p, PlanRun) and not p.checked
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
    p.add_argument("--chip", default=DEFAULTS.chip, metavar="NAME|FILE",
                   help=f"built-in chip name or chip JSON file (default {DEFAULTS.chip})")
    p.add_argument("--shapes", type=_shapes, metavar="MxKxN,...",
                   default=list(DEFAULT_SHAPES),
                   help="matmul shapes (default: "
                        + ",".join("x".join(map(str, s)) for s in DEFAULT_SHAPES) + ")")
    p.add_argument("--precision", choices=PRECISIONS, default=DEFAULTS.precision,
                   help="storage precision: fp32 (default) or fp16 (2-byte buffers and "
                        "exchanges, fp16 matmul rate)")
    p.add_argument("--partials", choices=PRECISIONS, default=DEFAULTS.partials,
                   help="precision of partial sums across steps and cores: fp32 (default) "
                        "or fp16 (with --precision fp16)")
    p.add_argument("--seed", type=int, default=0, help="seed of weights and inputs")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def run_from_args(args: argparse.Namespace, out: IO[str]) -> int:
    options = CompileOptions(chip=args.chip, precision=args.precision, partials=args.partials)
    chip = options.validate()

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    rows = run_matmuls(options, args.shapes, args.seed, None if args.quiet else progress)
    print(format_table(rows, chip, args.precision, args.partials), file=out)
    return 0

