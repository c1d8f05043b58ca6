"""Whole-model plans: a zoo model under the T10 planner (with and without contraction
epilogues) and the replicate baseline, simulated side by side (by default BERT-base at batch
8, seq 128 on ipu-mk2, the size the planners are compared at).

    python benchmarks/model_plans.py [MODEL] [--batch N] [--seq N] [--layers N] [--chip NAME|FILE]

The logic lives in `t10/bench/model.py`.
"""

import sys

from t10.bench.model import main

if __name__ == "__main__":
    sys.exit(main())
