"""Fixtures shared by the unit tests (plain helpers are in helpers.py), and the Hypothesis
profiles of the property tests (test_view_chains.py).

`ci` (the default): a fixed, bounded set of examples, so `make test` stays fast and
deterministic. `long`: many fresh random examples, to hunt for new failures:

    T10_HYPOTHESIS_PROFILE=long .venv/bin/pytest -q tests/unit/test_view_chains.py
    .venv/bin/pytest -q tests/unit/test_view_chains.py --hypothesis-profile=long
"""

from __future__ import annotations

import os

import pytest
from helpers import CHIPS
from hypothesis import HealthCheck, settings

_COMMON = {
    "deadline": None,  # a compile + simulate takes a variable fraction of a second
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("ci", max_examples=40, derandomize=True, **_COMMON)
settings.register_profile("long", max_examples=400, **_COMMON)
settings.load_profile(os.environ.get("T10_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(params=CHIPS)
def chip(request: pytest.FixtureRequest) -> str:
    """Each built-in chip the numerical tests run on, by name (a test parametrizes `chip`
    itself to run on others)."""
    return request.param
