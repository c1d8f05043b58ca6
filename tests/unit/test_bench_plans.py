"""The plan-quality benchmark (`t10/bench/plans.py`) and the plan-quality goals it reports."""

from __future__ import annotations

import pytest

from t10.bench import plans as bench_plans
from t10.bench.plans import REFERENCES, best_within, run_shape
from t10.common.chip_spec import load_chip


@pytest.fixture(scope="module")
def results() -> list[bench_plans.ShapeResult]:
    chip = load_chip("ipu-mk2")
    return [run_shape(chip, ref) for ref in REFERENCES]


def test_fp16_partials_beat_the_authors_planner_within_the_sram(
    results: list[bench_plans.ShapeResult],
) -> None:
    """The plan search's goal: with fp16 storage and fp16 partials, the best plan that fits 624 KiB
    per core is estimated at most the T10 authors' planner's best correct plan; with fp32
    partials no slower than this planner was before."""
    sram = load_chip("ipu-mk2").sram_bytes_per_core
    for r in results:
        half = best_within(r.frontiers["fp16"], sram)
        full = best_within(r.frontiers["fp32"], sram)
        assert half is not None and full is not None
        assert half[1].cycles <= r.reference.cycles, r.reference.shape
        assert full[1].cycles <= r.reference.start_cycles, r.reference.shape


def test_fp16_partials_are_never_slower_at_any_budget(
    results: list[bench_plans.ShapeResult],
) -> None:
    for r in results:
        for kib in bench_plans.BUDGETS_KIB:
            half = best_within(r.frontiers["fp16"], kib * 1024)
            full = best_within(r.frontiers["fp32"], kib * 1024)
            if full is not None:
                assert half is not None and half[1].cycles <= full[1].cycles


def test_table_lists_every_shape_and_budget(
    results: list[bench_plans.ShapeResult], capsys: pytest.CaptureFixture[str]
) -> None:
    text = bench_plans.format_results(load_chip("ipu-mk2"), results[-1:])
    assert "| 53x97·97x331 | 2,754 (768 B) | 2,156 |" in text
    assert text.count("| 53x97·97x331 | fp") == 2 and "≤ 32 KiB" in text
    assert bench_plans.main(["--chip", "test-16", "--quick"]) == 0
    assert "Best matmul plans on test-16" in capsys.readouterr().out
