"""Whole-model scaling: compile and timing-only simulation seconds, total cycles and peak RSS
of BERT-base (batch 1) and BERT-large (batch 4) by depth, as a Markdown table.

    python benchmarks/model_scaling.py [--model bert-base|bert-large|all] [--depths 1,2,4]
                                       [--quick] [--chip ipu-mk2] [--precision fp16]

The logic lives in `t10/bench/scaling.py`.
"""

import sys

from t10.bench.scaling import main

if __name__ == "__main__":
    sys.exit(main())
