"""Plan quality: our best matmul plans beside the T10 authors' planner, per memory budget.

    python benchmarks/plan_quality.py [--chip ipu-mk2] [--quick]

The logic lives in `t10/bench/plans.py`.
"""

import sys

from t10.bench.plans import main

if __name__ == "__main__":
    sys.exit(main())
