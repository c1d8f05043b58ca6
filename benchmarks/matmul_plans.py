"""Matmul benchmark: T10 vs replicate plans vs a lower bound (same as `t10 bench-matmuls`).

    python benchmarks/matmul_plans.py [--chip NAME|FILE] [--shapes MxKxN,...] [--quiet]

The logic (and the lower-bound formula) lives in `t10/bench/matmuls.py`.
"""

import sys

from t10.tools.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench-matmuls", *sys.argv[1:]]))
