"""`Traffic`: what one exchange moves, as the exchange's cost (`costs.exchange_cycles`) reads it.

Every exchange the simulator runs and every exchange the plan search estimates is described
here and costed by that one function, so the interconnect's model changes in one place.
On an all-to-all chip (the IPU's exchange) a core's time is its bytes, and the exchange lasts
as long as its busiest core, so the bytes each core sends and receives are all the cost
reads. A topology that routes messages over links (`t10.common.topologies`) needs, in
addition, who talks to whom: `Traffic.of_messages` records the messages (`Messages`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["Messages", "Traffic", "whole_bytes"]

ROUNDING = 1e-9
"""Shares of an element held by several cores are fractions; a total within this of a whole
byte is that byte (the sums of shares carry float error)."""


def whole_bytes(nbytes: float) -> int:
    """`nbytes` (a sum of shares) as whole bytes, rounded up."""
    return math.ceil(nbytes - ROUNDING)


@dataclass(frozen=True)
class Messages:
    """Who sends how many bytes to whom: message i goes from core `src[i]` to core `dst[i]`
    and carries `nbytes[i]` bytes."""

    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    nbytes: NDArray[np.float64]

    def carrying_bytes(self) -> Messages:
        """The messages that carry at least one byte (the others take no path)."""
        keep = self.nbytes > 0
        return Messages(self.src[keep], self.dst[keep], self.nbytes[keep])


@dataclass(frozen=True)
class Traffic:
    """The bytes each core of an exchange sends (`sent`) and receives (`received`), one entry
    per core (possibly fractional: a core serving a share of a replicated element), and,
    when known, the exchange's `messages` (None when only the per-core totals are known)."""

    sent: NDArray[np.float64]
    received: NDArray[np.float64]
    messages: Messages | None = None

    @staticmethod
    def of_messages(cores: int, src: ArrayLike, dst: ArrayLike, nbytes: ArrayLike) -> Traffic:
        """The exchange of the messages `src[i]` -> `dst[i]` of `nbytes[i]` bytes among
        `cores` cores; each core's `sent` and `received` are its messages' bytes (a message
        from a core to itself counts on both, as the per-core totals callers give do)."""
        s, d = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        b = np.asarray(nbytes, dtype=np.float64)
        if not (s.ndim == d.ndim == b.ndim == 1 and len(s) == len(d) == len(b)):
            raise ValueError("src, dst and nbytes must be 1-D arrays of one length, got "
                             f"shapes {s.shape}, {d.shape}, {b.shape}")
        for name, ids in (("src", s), ("dst", d)):
            if len(ids) and not (0 <= ids.min() and ids.max() < cores):
                raise ValueError(f"{name} must be core ids from 0 to {cores - 1}")
        if not np.all(np.isfinite(b) & (b >= 0)):
            raise ValueError("nbytes must be finite and non-negative")
        sent = np.bincount(s, weights=b, minlength=cores).astype(np.float64)
        received = np.bincount(d, weights=b, minlength=cores).astype(np.float64)
        return Traffic(sent, received, Messages(s, d, b))

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
        rows and its ids); the shorter array is padded with cores that move nothing. The
        messages are both's when both give theirs, else unknown (None)."""
        n = max(len(self.sent), len(other.sent))
        sent, received = np.zeros(n), np.zeros(n)
        for t in (self, other):
            sent[: len(t.sent)] += t.sent
            received[: len(t.received)] += t.received
        a, b = self.messages, other.messages
        messages = None if a is None or b is None else Messages(
            np.concatenate([a.src, b.src]), np.concatenate([a.dst, b.dst]),
            np.concatenate([a.nbytes, b.nbytes]))
        return Traffic(sent, received, messages)

    def placed(self, src_cores: NDArray[np.int64], dst_cores: NDArray[np.int64],
               cores: int) -> Traffic:
        """The same exchange with the sender numbered i here sitting on chip core
        `src_cores[i]` and the receiver numbered j on `dst_cores[j]`, among `cores` chip
        cores (a grid's cores placed on the chip: `t10.common.placements`). Its messages must
        be known."""
        if self.messages is None:
            raise ValueError("only an exchange whose messages are known can be placed")
        m = self.messages
        return Traffic.of_messages(cores, src_cores[m.src], dst_cores[m.dst], m.nbytes)

    def busiest(self) -> int:
        """The most bytes any one core sends or receives, whole."""
        most = max(float(self.sent.max(initial=0.0)), float(self.received.max(initial=0.0)))
        return whole_bytes(most)
