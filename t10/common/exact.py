"""Exact arithmetic on the decimals a chip file spells, shared by the cost functions
(`t10.common.costs`) and the interconnect's topologies (`t10.common.topologies`).

A chip constant such as 0.28 is taken as the decimal it spells (28/100), not as the nearest
binary float, and a cost is rounded up once, at the end: 100 bytes at 0.28 cycles per byte
cost 28 cycles, not 29.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import lcm

__all__ = ["Affine", "exact", "rate"]


@lru_cache(maxsize=256)
def exact(x: float | Fraction) -> Fraction:
    """The decimal a chip constant spells (`repr` is the shortest round-tripping decimal)."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


class Affine:
    """⌈a·n + b⌉ cycles for n units (elements, bytes), with exact rational a and b (the
    decimals a chip file spells), in integer arithmetic."""

    def __init__(self, a: float | Fraction, b: float | Fraction = 0) -> None:
        fa, fb = exact(a), exact(b)
        self.den = lcm(fa.denominator, fb.denominator)
        self.a = int(fa * self.den)
        """`a` scaled by `den` (an integer)."""
        self.b = int(fb * self.den)

    def __call__(self, n: int) -> int:
        return -(-(self.a * n + self.b) // self.den)


@lru_cache(maxsize=256)
def rate(per_unit: float) -> Affine:
    """⌈per_unit·n⌉ as an `Affine`, built once per rate (the exchange's costs apply a few
    rates many times)."""
    return Affine(per_unit)
