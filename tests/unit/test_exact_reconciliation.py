"""The exact memory reconciliation: the least total cycles of every choice that fits, as the
whole-model byte count (`model_bytes`) says, with every kind of liveness; never slower than
the greedy."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from helpers import chip_with, random_liveness, random_point

from t10.bench.reconciliation import chip_file, plan
from t10.common.plans import Estimate, Plan
from t10.errors import T10Error
from t10.examples import zoo
from t10.planning.exact_reconciliation import exact_plans
from t10.planning.memory_reconciliation import (
    Liveness,
    OpOptions,
    PlanPoint,
    choose_plans,
    model_bytes,
)


def cheapest_fitting(ops: list[OpOptions], live: Liveness, capacity: int) -> int | None:
    """Brute force: the least total cycles of the choices that fit (None: none does)."""
    best = None
    for choice in itertools.product(*(op.points for op in ops)):
        if model_bytes(list(choice), live) <= capacity:
            cycles = sum(p.cycles for p in choice)
            best = cycles if best is None else min(best, cycles)
    return best


def test_exact_is_the_brute_force_optimum() -> None:
    rng = random.Random(3)
    checked = refused = 0
    for _ in range(120):
        n = rng.randint(1, 5)
        ops = [OpOptions(f"op{i}", tuple(random_point(rng) for _ in range(rng.randint(1, 3))))
               for i in range(n)]
        live = random_liveness(rng, n)
        sizes = sorted({model_bytes(list(c), live)
                        for c in itertools.product(*(op.points for op in ops))})
        for capacity in (sizes[0] - 1, sizes[len(sizes) // 2], sizes[-1]):
            want = cheapest_fitting(ops, live, capacity)
            if want is None:
                with pytest.raises(T10Error, match="no choice of plans fits"):
                    exact_plans(chip_with(capacity), ops, live)
                refused += 1
                continue
            got = exact_plans(chip_with(capacity), ops, live)
            assert [p in op.points for p, op in zip(got, ops, strict=True)] == [True] * n
            assert model_bytes(got, live) <= capacity
            assert sum(p.cycles for p in got) == want
            checked += 1
    assert checked > 200 and refused > 50


def test_the_greedy_is_never_faster_than_exact() -> None:
    rng = random.Random(8)
    for _ in range(60):
        n = rng.randint(2, 8)
        ops = [OpOptions(f"op{i}", tuple(sorted((random_point(rng) for _ in range(4)),
                                                key=lambda p: p.cycles)))
               for i in range(n)]
        live = random_liveness(rng, n)
        capacity = model_bytes([op.points[-1] for op in ops], live) + rng.randint(0, 40)
        try:
            greedy = choose_plans(chip_with(capacity), ops, liveness=live)
        except T10Error:
            continue
        exact = exact_plans(chip_with(capacity), ops, live)
        assert sum(p.cycles for p in exact) <= sum(p.cycles for p in greedy)


def test_pinned_operators_keep_their_plan() -> None:
    fast, small = PlanPoint(Plan((1,)), Estimate(10, 0, 0, 90), 0), PlanPoint(
        Plan((1,)), Estimate(50, 0, 0, 20), 0
    )
    ops = [OpOptions("a", (fast,), pinned=True), OpOptions("b", (fast, small))]
    assert exact_plans(chip_with(100), ops) == [fast, fast]


@pytest.mark.parametrize("sram", [120_000, 100_000])
def test_the_greedy_is_within_two_percent_of_exact_on_bert_base(
    sram: int, tmp_path: Path
) -> None:
    """ACCEPTANCE: BERT-base with 2 layers (batch 1, sequence 128, fp16) on the IPU MK2
    with a fifth or a sixth of its SRAM per core, where memory binds hard: the
    greedy's model estimate (operators, relayouts, gathers) is within 2% of the exact
    search's. (Without its budget starts the greedy was 6.6% slower at 100,000 bytes.)"""
    model = tmp_path / "bert-base-2.onnx"
    zoo.write("bert-base", str(model), 1, 128, 2)
    chip = chip_file(sram, tmp_path)
    greedy, exact = plan(str(model), chip, "greedy"), plan(str(model), chip, "exact")
    assert greedy.model_bytes <= sram and exact.model_bytes <= sram
    assert greedy.cycles <= 1.02 * exact.cycles
