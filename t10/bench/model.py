"""Whole-model plan benchmark: a zoo model compiled with the T10 planner, with the T10
planner but no contraction epilogues (element-wise readers of MatMuls planned as operators of
their own), and with the replicate baseline, all simulated on the same seeded inputs, so the
planners are compared on one model run by run.

Prints, side by side in one run: total simulated cycles of the three and their ratios; for
every contraction its cores (and the share of the chip's cores) and plan; and for every
operator the plan search's estimate against the simulated cycles (the largest relative gap).

    python benchmarks/model_plans.py [bert-base] [--batch 8] [--seq 128] [--chip ipu-mk2]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from t10.common.chip_spec import load_chip
from t10.driver import DEFAULTS, CompileOptions, run_model
from t10.errors import T10Error
from t10.examples import zoo
from t10.outputs.report import OpReport
from t10.planning.planners.replicate import REPLICATE


@dataclass(frozen=True)
class PlannerRun:
    planner: str
    total_cycles: int
    ops: tuple[OpReport, ...]
    compile_seconds: float
    simulate_seconds: float


def run_planner(model: Any, options: CompileOptions, seed: int) -> PlannerRun:
    run = run_model(model, options, seed=seed)
    return PlannerRun(
        options.planner if options.epilogues else f"{options.planner}, no epilogues",
        run.report.total_cycles,
        run.report.ops,
        run.compile_seconds,
        run.simulate_seconds,
    )


def relative_gap(op: OpReport) -> float | None:
    est, sim = op.estimated_cycles, op.cycles
    if est is None or not sim:
        return None
    return abs(est - sim) / sim


def print_runs(runs: Sequence[PlannerRun], cores: int, name: str) -> None:
    t10, *others = runs
    print(f"{name}: total simulated cycles")
    for run in runs:
        ratio = run.total_cycles / t10.total_cycles
        print(
            f"  {run.planner:<20} {run.total_cycles:>12,}  ({ratio:.3f}x of t10)  "
            f"compile {run.compile_seconds:.1f} s, simulate {run.simulate_seconds:.1f} s"
        )
    print(f"\ncontractions under the t10 plan (chip: {cores} cores)")
    for op in t10.ops:
        if op.kind == "contraction" and op.cores_used is not None:
            share = op.cores_used / cores
            print(f"  {op.name:<40} {op.cores_used:>6} cores ({share:6.1%})  {op.plan}")
    for run in runs:
        gaps = [(g, op.name) for op in run.ops if (g := relative_gap(op)) is not None]
        worst = max(gaps, default=(0.0, "-"))
        within = sum(g <= 0.10 for g, _ in gaps)
        print(
            f"\n{run.planner}: estimate vs simulation: {within}/{len(gaps)} operators within "
            f"10%; largest gap {worst[0]:.1%} ({worst[1]})"
        )


def main(argv: Sequence[str] | None = None) -> int:
    summary = (__doc__ or "").strip().split("\n")[0]
    parser = argparse.ArgumentParser(prog="model_plans", description=summary)
    parser.add_argument("model", nargs="?", default="bert-base", choices=sorted(zoo.ZOO))
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--chip", default=DEFAULTS.chip)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        cores = load_chip(args.chip).cores
        model = zoo.get(args.model).build(batch=args.batch, seq=args.seq, layers=args.layers)
        t10 = CompileOptions(chip=args.chip, planner="t10")
        runs = [
            run_planner(model, t10, args.seed),
            run_planner(model, replace(t10, epilogues=False), args.seed),
            run_planner(model, replace(t10, planner=REPLICATE.name), args.seed),
        ]
    except T10Error as e:
        print(f"model_plans: error: {e}", file=sys.stderr)
        return 1
    name = f"{args.model} ({args.layers} layer(s), batch {args.batch}, seq {args.seq})"
    name += f" on {args.chip}"
    print_runs(runs, cores, name)
    return 0
