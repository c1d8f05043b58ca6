"""Plan-quality benchmark: the plan search's best matmul plans beside the T10 authors' later
planner (platformxlab/elk, `TensorExpression.search_optimal_config`), on the same IPU MK2
constants at fp16 storage, per memory budget along the Pareto frontier.

The reference figures are that planner's best correct plan per shape (cycles, bytes per core),
measured once with its own cost model on the same constants; "ours before" is this
planner's best plan before the kernel orientation, fp16 partials and the output-rotating
plans. Ours are the plan search's estimates (`t10.common.estimator.estimate`, equal to the
simulated cycles), with fp32 partial sums (the default) and with fp16 partials (as that planner
reduces).

    python benchmarks/plan_quality.py [--chip ipu-mk2] [--quick]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.linalg.ops import GenericOp

from t10.common.chip_spec import ChipSpec, load_chip
from t10.common.plans import Estimate, Plan, format_plan
from t10.common.tensor_expr import TensorExpr, at_precision, linalg_tensor_expr
from t10.examples.models import matmul
from t10.frontend import import_onnx
from t10.planning.compile_options import DEFAULTS
from t10.planning.plan_search import operator_frontier

Shape = tuple[int, int, int]


@dataclass(frozen=True)
class Reference:
    shape: Shape
    cycles: int
    """The authors' planner: cycles of its best correct plan."""
    bytes: int | None
    """Bytes per core of that plan (None: not recorded)."""
    start_cycles: int
    """Ours before the kernel orientation, fp16 partials and the output-rotating plans."""


REFERENCES = (
    Reference((1024, 768, 3072), 46_371, 236_288, 53_876),
    Reference((1024, 3072, 768), 47_558, 231_472, 53_822),
    Reference((1024, 1024, 4096), 73_600, None, 87_060),
    Reference((4096, 4096, 4096), 1_092_344, 585_776, 1_452_121),
    Reference((53, 97, 331), 2_754, 768, 2_156),
)
BUDGETS_KIB = (624, 512, 384, 256, 128, 64, 32)
PARTIALS = ("fp32", "fp16")


def matmul_expr(shape: Shape, precision: str, partials: str) -> TensorExpr:
    """The tensor expression of an M×K·K×N matmul model, as the plan search sees it."""
    m, k, n = shape
    module = import_onnx(matmul(m, k, n))
    generic = next(op for op in module.walk() if isinstance(op, GenericOp))
    return at_precision(linalg_tensor_expr(generic), precision, partials, "plan quality")


def best_within(
    frontier: Sequence[tuple[Plan, Estimate]], budget: int
) -> tuple[Plan, Estimate] | None:
    fits = [(plan, est) for plan, est in frontier if est.sram_bytes <= budget]
    return min(fits, key=lambda point: point[1].cycles) if fits else None


@dataclass(frozen=True)
class ShapeResult:
    reference: Reference
    frontiers: dict[str, list[tuple[Plan, Estimate]]]
    """Per partials precision."""
    seconds: float


def run_shape(chip: ChipSpec, reference: Reference, precision: str = "fp16") -> ShapeResult:
    start = time.perf_counter()
    frontiers = {
        partials: operator_frontier(chip, matmul_expr(reference.shape, precision, partials))
        for partials in PARTIALS
    }
    return ShapeResult(reference, frontiers, time.perf_counter() - start)


def _shape(shape: Shape) -> str:
    m, k, n = shape
    return f"{m}x{k}·{k}x{n}"


def _point(point: tuple[Plan, Estimate] | None) -> str:
    if point is None:
        return "does not fit"
    return f"{point[1].cycles:,} ({point[1].sram_bytes:,} B)"


def format_results(chip: ChipSpec, results: Sequence[ShapeResult]) -> str:
    sram = chip.sram_bytes_per_core
    lines = [
        f"Best matmul plans on {chip.name} ({chip.cores} cores, {sram:,} B per core), fp16 "
        "storage: estimated cycles (bytes per core)",
        "",
        "| M×K·K×N | authors' planner | ours before | ours, fp32 partials | ours, fp16 "
        "partials | fp16 ÷ authors' | best fp16-partials plan |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        ref = r.reference
        best = {p: best_within(r.frontiers[p], sram) for p in PARTIALS}
        half = best["fp16"]
        ratio = "-" if half is None else f"{half[1].cycles / ref.cycles:.3f}"
        ref_bytes = "" if ref.bytes is None else f" ({ref.bytes:,} B)"
        lines.append(
            f"| {_shape(ref.shape)} | {ref.cycles:,}{ref_bytes} | {ref.start_cycles:,} | "
            f"{_point(best['fp32'])} | {_point(half)} | {ratio} | "
            f"{'-' if half is None else format_plan(half[0])} |"
        )
    lines += ["", "Along the frontier: the best estimate within each memory budget", ""]
    header = " | ".join(f"≤ {kib} KiB" for kib in BUDGETS_KIB)
    lines += [f"| M×K·K×N | partials | {header} |", "|---|---|" + "---|" * len(BUDGETS_KIB)]
    for r in results:
        for partials in PARTIALS:
            cells = []
            for kib in BUDGETS_KIB:
                point = best_within(r.frontiers[partials], kib * 1024)
                cells.append("-" if point is None else f"{point[1].cycles:,}")
            lines.append(f"| {_shape(r.reference.shape)} | {partials} | {' | '.join(cells)} |")
    total = sum(r.seconds for r in results)
    lines += ["", f"search time: {total:.1f} s for {len(results)} shapes x 2 partials"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chip", default=DEFAULTS.chip, help="built-in chip or chip JSON file")
    parser.add_argument("--quick", action="store_true",
                        help="only the smallest and one 1024 shape")
    args = parser.parse_args(argv)
    chip = load_chip(args.chip)
    refs = [REFERENCES[0], REFERENCES[-1]] if args.quick else list(REFERENCES)
    print(format_results(chip, [run_shape(chip, ref) for ref in refs]))
    return 0
