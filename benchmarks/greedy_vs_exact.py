"""The memory reconciliation's greedy against the exact optimum on BERT-base under reduced
SRAM, as a Markdown table.

    python benchmarks/greedy_vs_exact.py [--depths 2,3,4] [--sram 160000,120000,100000]

The logic lives in `t10/bench/reconciliation.py`.
"""

import sys

from t10.bench.reconciliation import main

if __name__ == "__main__":
    sys.exit(main())
