"""The `fastest` search (every operator's fastest plan on its own) and the replicate planner's
limit on an operator's temporaries (`within_share`), on random frontiers."""

from __future__ import annotations

import pickle
import random

import pytest
from helpers import chip_with, random_liveness, random_point

from t10.errors import DoesNotFit, T10Error
from t10.planning.memory_reconciliation import (
    OpOptions,
    choose_plans,
    fastest_plans,
    model_bytes,
    within_share,
)


def random_ops(rng: random.Random, n: int) -> list[OpOptions]:
    ops = []
    for i in range(n):
        points = sorted((random_point(rng) for _ in range(rng.randint(1, 4))),
                        key=lambda p: p.cycles)
        ops.append(OpOptions(f"op{i}", tuple(points)))
    return ops


def test_fastest_plans_take_each_fastest_plan_or_refuse() -> None:
    rng = random.Random(7)
    for _ in range(300):
        ops = random_ops(rng, rng.randint(1, 5))
        live = random_liveness(rng, len(ops))
        fastest = [op.points[0] for op in ops]
        capacity = rng.randint(20, 160)
        chip = chip_with(capacity)
        if model_bytes(fastest, live) <= capacity:
            assert fastest_plans(chip, ops, "t10", live) == fastest
            continue
        with pytest.raises(DoesNotFit, match="does not fit") as refused:
            fastest_plans(chip, ops, "t10", live)
        # what the search's own choice needs, whether smaller plans fit or not
        assert refused.value.needed_bytes == model_bytes(fastest, live) > capacity
        assert "every operator's fastest plan needs" in str(refused.value)
        try:
            choose_plans(chip, ops, "t10", live)
        except T10Error:  # nothing fits
            assert "the smallest plans need" in str(refused.value)
            assert "search=greedy" not in str(refused.value)
        else:  # smaller plans fit: the error says which search finds them
            assert "search=greedy" in str(refused.value)


def test_within_share_keeps_the_plans_within_the_share() -> None:
    rng = random.Random(3)
    chip = chip_with(100)
    for _ in range(300):
        (op,) = random_ops(rng, 1)
        share = rng.choice((0.2, 0.4, 0.6, 1.0))
        allowed = [p for p in op.points if p.transient_bytes <= share * 100]
        if not allowed:
            with pytest.raises(T10Error, match=f"operator 'op0' does not fit the share of SRAM "
                                               f"for temporaries: every plan needs more than "
                                               f"{share:g} of it"):
                within_share(op, chip, share)
            continue
        assert list(within_share(op, chip, share).points) == allowed


def test_within_share_keeps_a_pinned_plan() -> None:
    rng = random.Random(5)
    point = random_point(rng)
    pinned = OpOptions("op", (point,), pinned=True)
    assert within_share(pinned, chip_with(1), 0.1) is pinned


def test_does_not_fit_keeps_its_bytes_through_pickling() -> None:
    """Refusals come back from forked workers and Ray tasks pickled."""
    again = pickle.loads(pickle.dumps(DoesNotFit("the model does not fit", 1234)))
    assert isinstance(again, DoesNotFit)
    assert (str(again), again.needed_bytes) == ("the model does not fit", 1234)
