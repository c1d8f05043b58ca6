"""Simulator speed: compile and simulation wall time beside onnxruntime's (the simulator must
stay fast enough to run whole models in tests).

    python benchmarks/simulator_speed.py [--chip NAME|FILE] [--repeat N]

The logic lives in `t10/bench/simulator.py`.
"""

import sys

from t10.bench.simulator import main

if __name__ == "__main__":
    sys.exit(main())
