"""What a gather of runtime ids reads: the one contract of `rtensor.gather` / `core.gather`
(shapes, the range of each id, which table and ids elements each result element reads),
shared by the verifiers, the plan search's cost, the lowering and the simulator.

Three kinds, ONNX's three gathers (`ids` hold integers; negative ones count from the end of
the dim they index, as in ONNX):

- `rows` (`Gather`, axis a): ``result[i.., j.., k..] = table[i.., ids[j..], k..]``, ``j`` at
  dim a; the table's dims with dim a replaced by the ids' dims.
- `elements` (`GatherElements`, axis a): ``result[p] = table[p with p[a] := ids[p]]``; ids of
  the table's rank, each dim but a at most the table's; the result has the ids' shape.
- `nd` (`GatherND`, batch_dims b, ids ``[..., q]``): ``result[b.., j.., k..] =
  table[b.., ids[b.., j.., 0], ..., ids[b.., j.., q-1], k..]``: a row gather over the q
  table dims after the b batch dims (flattened: row ``sum_c ids[.., c] * stride_c``), the
  stride of each component known from the table's shape; the result's shape is
  ``ids[:-1] + table[b + q:]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import Literal

import numpy as np

from t10.errors import T10Error

Array = np.ndarray
GatherMode = Literal["rows", "elements", "nd"]


@dataclass(frozen=True)
class GatherKind:
    """Which gather: `mode`, and `n`, the gathered axis (`rows`, `elements`) or the number of
    batch dims (`nd`)."""

    mode: GatherMode
    n: int

    def __str__(self) -> str:
        return {"rows": "axis", "elements": "elements axis", "nd": "nd batch_dims"}[
            self.mode
        ] + f" {self.n}"

    def problem(self, table: Sequence[int], ids: Sequence[int]) -> str | None:
        """Why gathering `ids` from `table` is malformed (None: it is well formed)."""
        rank, n = len(table), self.n
        if self.mode != "nd":
            if not 0 <= n < rank:
                return f"axis {n} is not a dim of the table {list(table)}"
            if not ids:
                return "ids must have rank >= 1"
            if self.mode == "elements":
                if len(ids) != rank:
                    return f"the ids {list(ids)} must have the table's rank {rank}"
                over = [d for d in range(rank) if d != n and ids[d] > table[d]]
                if over:
                    return (
                        f"dim {over[0]} of the ids {list(ids)} exceeds the table's "
                        f"{list(table)} (only the gathered axis {n} may)"
                    )
            return None
        if not ids:
            return "ids must have rank >= 1"
        q = ids[-1]
        if not 0 <= n < len(ids) or n >= rank:
            return f"batch_dims {n} must be below the ranks of the ids and the table"
        if tuple(ids[:n]) != tuple(table[:n]):
            return f"the batch dims of the ids {list(ids)} and the table {list(table)} differ"
        if not 1 <= q <= rank - n:
            return (
                f"index tuples of length {q} (the ids' last dim) must index 1 to {rank - n} "
                f"dims of the table {list(table)} after its {n} batch dims"
            )
        return None

    def shape(self, table: Sequence[int], ids: Sequence[int]) -> tuple[int, ...]:
        """The result's shape (of a well-formed gather)."""
        n = self.n
        if self.mode == "rows":
            return (*table[:n], *ids, *table[n + 1 :])
        if self.mode == "elements":
            return tuple(ids)
        return (*ids[:-1], *table[n + ids[-1] :])

    def limits(self, table: Sequence[int]) -> int | Array:
        """The size of the dim each id indexes (ids lie in [-size, size)): one size, or (`nd`)
        one per tuple component, along the ids' last dim."""
        if self.mode == "nd":
            # a well-formed nd gather reads table dims n .. n+q-1; q is the ids' last dim
            return np.asarray(table[self.n :], dtype=np.int64)
        return int(table[self.n])

    def _limits(self, table: Sequence[int], ids: Sequence[int]) -> int | Array:
        limits = self.limits(table)
        return limits if isinstance(limits, int) else limits[: ids[-1]]

    def sample(self, table: Sequence[int], ids: Sequence[int]) -> Array:
        """Ids drawn uniformly (seeded) in [0, size) of the dims they index: the plan search's
        typical ids."""
        return np.random.default_rng(0).integers(0, self._limits(table, ids), tuple(ids))

    def checked(self, what: str, ids: Array, table: Sequence[int], label: str) -> Array:
        """The ids (exact floats of integers) as int64 indices in [0, size): negative ids
        count from the end (ONNX); any other id is an error naming it."""
        size = np.broadcast_to(self._limits(table, ids.shape), ids.shape)
        bad = (ids < -size) | (ids >= size) | (ids != np.round(ids))
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            value, s = ids[at], int(size[at])
            shown = int(value) if np.isfinite(value) and value == round(value) else float(value)
            axis = self.n + at[-1] if self.mode == "nd" else self.n
            raise T10Error(
                f"{what}: id {shown} (at ids index {list(at)}) is out of range for axis {axis} "
                f"of '{label}' (size {s}): ids must be integers in [{-s}, {s})"
            )
        return ids.astype(np.int64) % size

    def ids_read(self, local: Sequence[int], ids: Sequence[int]) -> int:
        """How many ids a core holding a `local` tile of the result reads (at most)."""
        if self.mode == "rows":
            return prod(local[self.n : self.n + len(ids)])
        if self.mode == "elements":
            return prod(local)
        return prod(local[: len(ids) - 1]) * ids[-1]

    def sources(self, table: Sequence[int], index: Array) -> tuple[Array, list[Array]]:
        """The row-major table element, and the row-major ids elements (one array per id
        read: `nd` reads q), that every result element reads (`index`: ids in [0, size))."""
        strides = [prod(table[k + 1 :]) for k in range(len(table))]
        shape = self.shape(table, index.shape)
        numbered = np.reshape(np.arange(index.size, dtype=np.int64), index.shape)
        if self.mode == "rows":
            return _row_sources(table, strides, index, numbered, self.n)
        grid: list[Array] = [np.asarray(g) for g in np.indices(shape, sparse=True)]
        if self.mode == "elements":
            flat: Array = index.astype(np.int64) * strides[self.n]
            for d in range(len(table)):
                if d != self.n:
                    flat = flat + grid[d] * strides[d]
            return np.broadcast_to(flat, shape), [np.broadcast_to(numbered, shape)]
        b, q, lead = self.n, int(index.shape[-1]), index.ndim - 1
        rest = len(shape) - lead  # the table dims after the indexed ones

        def per_position(values: Array) -> Array:  # [ids[:-1]] -> the result's rank
            return np.reshape(values, values.shape + (1,) * rest)

        at: Array = np.zeros((1,) * len(shape), dtype=np.int64)
        for d in range(b):
            at = at + grid[d] * strides[d]
        ids_at: list[Array] = []
        for c in range(q):
            at = at + per_position(index[..., c].astype(np.int64)) * strides[b + c]
            ids_at.append(np.broadcast_to(per_position(numbered[..., c]), shape))
        for e in range(rest):
            at = at + grid[lead + e] * strides[b + q + e]
        return np.broadcast_to(at, shape), ids_at

    def take(self, table: Array, index: Array) -> Array:
        """The gathered values (`index`: ids in [0, size)): the table elements `sources`
        names."""
        at, _ = self.sources(table.shape, index)
        return np.reshape(table, -1)[at]


def _row_sources(
    table: Sequence[int], strides: list[int], index: Array, numbered: Array, axis: int
) -> tuple[Array, list[Array]]:
    rank = len(table) - 1 + index.ndim

    def along(values: Array, first: int) -> Array:
        return np.reshape(values, (1,) * first + values.shape + (1,) * (rank - first - values.ndim))

    flat = along(index.astype(np.int64) * strides[axis], axis)
    for k, size in enumerate(table):
        if k != axis:
            at = k if k < axis else k - 1 + index.ndim
            flat = flat + along(np.arange(size, dtype=np.int64) * strides[k], at)
    shape = (*table[:axis], *index.shape, *table[axis + 1 :])
    return np.broadcast_to(flat, shape), [np.broadcast_to(along(numbered, axis), shape)]
