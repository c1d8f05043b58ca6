"""Simulator speed benchmark: how long compiling and simulating a model takes on this machine,
beside onnxruntime running the same model on the same inputs.

The simulator executes every core's kernels with real numbers (batched over cores), so its
wall time is the price of a cycle-level answer with checked numerics; onnxruntime's time is
the floor for computing the same numbers on the host. Each model is also checked against
onnxruntime (rtol 1e-4, atol 1e-5), so a fast but wrong simulation cannot pass unnoticed.

    python benchmarks/simulator_speed.py [--chip NAME|FILE] [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

import numpy as np
import onnx
import onnxruntime as ort

from t10.driver import DEFAULTS, CompileOptions, compile_model
from t10.examples import zoo
from t10.examples.models import bert_ffn, matmul, mlp
from t10.outputs.report import input_specs, random_inputs
from t10.planning.operator_frontiers import clear_frontier_cache
from t10.reference import reference_outputs
from t10.sim.simulator import simulate

MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "mlp 8x256-512-256-10": lambda: mlp(),
    "bert-ffn 128 rows": lambda: bert_ffn(rows=128),
    "bert-ffn 1024 rows (batch 8, seq 128)": lambda: bert_ffn(rows=1024),
    "matmul 1024x4096x1024": lambda: matmul(1024, 4096, 1024),
    "bert-base layer (zoo, seq 128)": lambda: zoo.get("bert-base").build(batch=1, seq=128),
}


@dataclass(frozen=True)
class SpeedRow:
    model: str
    compile_seconds: float
    simulate_seconds: float
    onnxruntime_seconds: float
    simulated_cycles: int
    max_abs_error: float

    @property
    def slowdown(self) -> float:
        return self.simulate_seconds / max(self.onnxruntime_seconds, 1e-9)


def _best_of(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(name: str, model: onnx.ModelProto, chip_name: str, repeat: int) -> SpeedRow:
    clear_frontier_cache()  # every model's compile time with its own plan searches
    start = time.perf_counter()
    compiled = compile_model(model, CompileOptions(chip=chip_name))
    compile_seconds = time.perf_counter() - start
    inputs = random_inputs(input_specs(compiled.module), seed=0)
    start = time.perf_counter()
    result = simulate(compiled.module, compiled.chip, inputs)
    simulate_seconds = time.perf_counter() - start
    expected = reference_outputs(model, inputs)
    session = ort.InferenceSession(model.SerializeToString())  # timed with its optimizations
    ort_seconds = _best_of(repeat, lambda: session.run(None, inputs))
    error = 0.0
    for output, want in expected.items():
        got = result.outputs[output]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        error = max(error, float(np.max(np.abs(got - want))))
    return SpeedRow(
        name,
        compile_seconds,
        simulate_seconds,
        ort_seconds,
        result.report.total_cycles,
        error,
    )


def format_table(rows: Sequence[SpeedRow], chip: str) -> str:
    header = (
        f"simulator wall time on {chip} beside onnxruntime (same model, same inputs; "
        "outputs checked)\n"
        f"{'model':<40}{'compile s':>10}{'simulate s':>12}{'onnxruntime s':>15}"
        f"{'sim/ort':>10}{'sim cycles':>13}{'max abs err':>13}"
    )
    lines = [
        f"{r.model:<40}{r.compile_seconds:>10.2f}{r.simulate_seconds:>12.2f}"
        f"{r.onnxruntime_seconds:>15.4f}{r.slowdown:>10.0f}{r.simulated_cycles:>13,}"
        f"{r.max_abs_error:>13.1e}"
        for r in rows
    ]
    return "\n".join([header, *lines])


def main(argv: Sequence[str] | None = None, out: IO[str] = sys.stdout) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--chip", default=DEFAULTS.chip)
    parser.add_argument("--repeat", type=int, default=5, help="onnxruntime runs (best of)")
    args = parser.parse_args(argv)
    rows = [measure(name, build(), args.chip, args.repeat) for name, build in MODELS.items()]
    print(format_table(rows, args.chip), file=out)
    return 0
