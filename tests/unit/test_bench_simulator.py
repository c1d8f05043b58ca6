"""The simulator speed benchmark measures, checks outputs, and prints one row per model."""

import io

from t10.bench.simulator import format_table, measure
from t10.examples.models import mlp


def test_measure_and_table() -> None:
    row = measure("mlp", mlp(batch=4, sizes=(32, 64, 8)), "test-16", repeat=2)
    assert row.compile_seconds > 0 and row.simulate_seconds > 0
    assert row.onnxruntime_seconds > 0 and row.simulated_cycles > 0
    assert row.max_abs_error < 1e-4
    out = io.StringIO()
    out.write(format_table([row], "test-16"))
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("simulator wall time on test-16")
    assert lines[2].startswith("mlp") and f"{row.simulated_cycles:,}" in lines[2]
