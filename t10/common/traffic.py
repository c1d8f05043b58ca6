"""`Traffic`: what one exchange moves, as the exchange's cost (`costs.exchange_cycles`) reads it.

Every exchange the simulator runs and every exchange the plan search estimates is described
here and costed by that one function, so the interconnect's model changes in one place.
Today's chips are all-to-all (the IPU's exchange): a core's time is its bytes, and the
exchange lasts as long as its busiest core, so the bytes each core sends and receives are
all the cost reads. A topology that routes messages over links needs, in addition, which
cores talk to which; it joins this description when such a topology is modelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Traffic"]

ROUNDING = 1e-9
"""Shares of an element held by several cores are fractions; a total within this of a whole
byte is that byte (the sums of shares carry float error)."""


@dataclass(frozen=True)
class Traffic:
    """The bytes each core of an exchange sends (`sent`) and receives (`received`), one entry
    per core (possibly fractional: a core serving a share of a replicated element)."""

    sent: NDArray[np.float64]
    received: NDArray[np.float64]

    @staticmethod
    def uniform(cores: int, nbytes: int) -> Traffic:
        """Each of `cores` cores sends and receives `nbytes` bytes (a shift, an all-reduce's
        exchange, or the bound of a move where every core receives its whole buffer)."""
        # untyped callers may pass anything
        whole = isinstance(nbytes, int) and not isinstance(nbytes, bool)  # pyright: ignore[reportUnnecessaryIsInstance]
        if not whole or nbytes < 0:
            raise ValueError(f"nbytes must be a non-negative integer, got {nbytes!r}")
        each = np.full(cores, nbytes, dtype=np.float64)
        return Traffic(each, each)

    @staticmethod
    def of_elements(
        sent: NDArray[np.float64], received: NDArray[np.float64], elem_bytes: int
    ) -> Traffic:
        """`sent` and `received` counted in elements of `elem_bytes` bytes."""
        return Traffic(sent * elem_bytes, received * elem_bytes)

    def __add__(self, other: Traffic) -> Traffic:
        """Both exchanges at once (one exchange op moving two tensors: a gather's table
        rows and its ids); the shorter array is padded with cores that move nothing."""
        n = max(len(self.sent), len(other.sent))
        sent, received = np.zeros(n), np.zeros(n)
        for t in (self, other):
            sent[: len(t.sent)] += t.sent
            received[: len(t.received)] += t.received
        return Traffic(sent, received)

    def busiest(self) -> int:
        """The most bytes any one core sends or receives, whole."""
        most = max(float(self.sent.max(initial=0.0)), float(self.received.max(initial=0.0)))
        return math.ceil(most - ROUNDING)
