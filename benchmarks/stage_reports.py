"""Whether each zoo model at full width and one layer reports the same, lowered in one process
(`t10 run`) and stage by stage through text IR (a `t10-opt` pipeline run one stage per
process), as a Markdown table: column-for-column equality of the two JSON reports.

    python benchmarks/stage_reports.py [--models bert-base,vit-base] [--chip ipu-mk2]

Timing only (the reports' figures, not output values). The same comparison runs on every
test model and on every zoo architecture at toy widths in tests/unit/test_every_model.py.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from t10.driver import compile_model, simulate_compiled
from t10.examples.zoo import ZOO

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "unit"))
from helpers import lowered_stage_by_stage  # noqa: E402  (the tests' own stage-by-stage path)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(ZOO))
    p.add_argument("--chip", default="ipu-mk2")
    args = p.parse_args()
    print("| model | ops | total cycles | estimate | bound | reports equal | seconds |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for name in args.models.split(","):
        start = time.perf_counter()
        compiled = compile_model(ZOO[name].build(layers=1), args.chip)
        report = simulate_compiled(compiled.module, compiled.chip, timing_only=True).report
        staged_module = lowered_stage_by_stage(compiled.planned)
        staged = simulate_compiled(staged_module, compiled.chip, timing_only=True).report
        print(f"| {name} | {len(report['ops'])} | {report['total_cycles']:,} | "
              f"{report['estimated_total_cycles']:,} | {report['bound_cycles']:,} | "
              f"{'yes' if staged == report else 'NO'} | {time.perf_counter() - start:.0f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
