"""Placement: where the cores of a plan's grid lie on the chip's physical cores.

A chip's cores form a *core shape* (`Topology.core_shape`): `(cores,)` for an all-to-all
chip, `(rows, cols)` for a mesh or torus, `(chips, *inner shape)` for a multi-chip system;
core ids are row-major over it. A grid's core x (row-major over the grid) sits on a chip core
chosen in one of two ways:

- *linear* (`None`, the topology-oblivious default): grid core i is chip core i.
- a `Placement`: each dim d of the core shape lays the *parts* `lines[d]` along it, the first
  the most major. A part (a, e) is e positions of grid axis a: an axis lies whole in one part
  of its size, or is split into parts whose extents multiply to its size, the first part
  met (in dim order, then along the dim) the most major digit of its coordinate. x's
  position on dim d is the row-major number of its digits on the parts of `lines[d]`.
  A *folded* axis (`folds`: axis, ring length n; it lies whole in one part) has its
  coordinate c = q·n + j laid at q·n + fold(j), fold(j) = 2j for 2j < n, else
  2(n - 1 - j) + 1: the ring 0, 1, .., n - 1 visits positions 0, 2, 4, .. up and .., 5, 3, 1
  down, so consecutive ring members (the wrap included) are at most two positions apart
  (WaferLLM's interleaved ring). An axis laid last on its dim and folded on its ring length
  puts every shift along it within two hops of a mesh.

Every grid axis of more than one core is laid, and size-1 axes are not, so that two grids
differing only in size-1 axes place alike (`plans.placement`). A placement fits a chip when
each dim holds its parts (the product of their extents at most the dim's size). The grid's
cores then occupy a corner box of the core shape; grid core 0 is chip core 0 in every
placement, linear or not.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations
from math import prod

import numpy as np
from numpy.typing import NDArray

from t10.errors import T10Error

__all__ = [
    "Placement",
    "check_fits",
    "core_ids",
    "fold_positions",
    "on_first_chip",
    "placement_problem",
    "placements_with_rings",
    "without_single_axes",
]

IntArray = NDArray[np.int64]
Part = tuple[int, int]
"""(grid axis, extent): positions of one grid axis laid along a dim."""


@dataclass(frozen=True)
class Placement:
    """The parts laid along each dim of the chip's core shape (`lines`, major first) and the
    folded axes with their ring lengths (`folds`); see the module docstring."""

    lines: tuple[tuple[Part, ...], ...]
    folds: tuple[tuple[int, int], ...] = ()

    def renumbered(self, renumber: Mapping[int, int]) -> Placement:
        """The same placement with grid axis a called `renumber[a]`."""
        return Placement(
            tuple(tuple((renumber[a], e) for a, e in line) for line in self.lines),
            tuple(sorted((renumber[a], n) for a, n in self.folds)),
        )

    def __str__(self) -> str:
        lines = ", ".join(
            "[" + ", ".join(f"d{a}:{e}" for a, e in line) + "]" for line in self.lines
        )
        text = f"placed [{lines}]"
        if self.folds:
            text += " fold [" + ", ".join(f"(d{a}, {n})" for a, n in self.folds) + "]"
        return text


def without_single_axes(grid: Sequence[int], placement: Placement | None) -> Placement | None:
    """`placement` with the grid's size-1 axes removed (the others renumbered in order), as
    `plans.placement` compares layouts."""
    if placement is None:
        return None
    kept = (a for a, n in enumerate(grid) if n > 1)
    return placement.renumbered({a: i for i, a in enumerate(kept)})


def fold_positions(n: int) -> IntArray:
    """The position of each member j of a folded ring of `n` (module docstring)."""
    j = np.arange(n, dtype=np.int64)
    return np.where(2 * j < n, 2 * j, 2 * (n - 1 - j) + 1)


def placement_problem(
    grid: Sequence[int], placement: Placement, shape: Sequence[int] | None = None
) -> str | None:
    """Why `placement` does not place `grid` (on a chip of core shape `shape`, when given),
    or None."""
    extents: dict[int, list[int]] = {}
    for a, e in (part for line in placement.lines for part in line):
        if not 0 <= a < len(grid):
            return f"d{a} is not an axis of grid {list(grid)}"
        if grid[a] == 1:
            return f"axis d{a} of grid {list(grid)} has one core and is laid on no dim"
        if e < 2:
            return f"a part of axis d{a} must lay 2 or more of its positions, not {e}"
        extents.setdefault(a, []).append(e)
    for a, n in enumerate(grid):
        if n > 1 and prod(extents.get(a, [1])) != n:
            laid = "x".join(map(str, extents.get(a, []))) or "nothing"
            return f"axis d{a} of grid {list(grid)} has {n} cores but its parts lay {laid}"
    folded = [a for a, _ in placement.folds]
    if len(set(folded)) != len(folded):
        return "an axis is folded twice"
    for a, n in placement.folds:
        if len(extents.get(a, [])) != 1:
            return f"folded axis d{a} must lie whole in one part"
        if n < 2 or grid[a] % n:
            return f"a fold of {n} does not divide axis d{a} of grid {list(grid)}"
    if shape is not None:
        if len(placement.lines) != len(shape):
            return (f"it has {len(placement.lines)} lines of parts, but the chip's cores form "
                    f"{'x'.join(map(str, shape))}: one line per dim")
        for d, line in enumerate(placement.lines):
            size = prod(e for _, e in line)
            if size > shape[d]:
                return (f"dim {d} of the chip has {shape[d]} cores, but the parts laid on it "
                        f"take {size}")
    return None


def on_first_chip(placement: Placement | None) -> Placement | None:
    """A placement on one chip of a multi-chip system (its own core shape) as the same cores
    of the system's first chip (whose core shape is the chip, then the chip's own)."""
    if placement is None:
        return None
    return Placement(((), *placement.lines), placement.folds)


def check_fits(
    what: str, grid: Sequence[int], placement: Placement | None, shape: Sequence[int]
) -> None:
    """Raise `T10Error` naming `what` unless `placement` places `grid` on a chip of core
    shape `shape`."""
    if placement is None:
        return
    problem = placement_problem(grid, placement, shape)
    if problem is not None:
        raise T10Error(f"{what}: its cores cannot be {placement} on this chip: {problem}")


def core_ids(
    grid: Sequence[int], placement: Placement | None, shape: Sequence[int]
) -> IntArray:
    """The chip core of each core of `grid` (row-major) on a chip of core shape `shape`
    (the placement fits it: `placement_problem`)."""
    return _core_ids(tuple(grid), placement, tuple(shape))


@lru_cache(maxsize=1024)
def _core_ids(
    grid: tuple[int, ...], placement: Placement | None, shape: tuple[int, ...]
) -> IntArray:
    cores = prod(grid)
    if placement is None:
        ids = np.arange(cores, dtype=np.int64)
    else:
        coords: IntArray = np.reshape(np.indices(grid, dtype=np.int64), (len(grid), cores))
        for a, n in placement.folds:
            q, j = np.divmod(coords[a], n)
            coords[a] = q * n + fold_positions(n)[j]
        below = dict(enumerate(grid))  # the extent of the parts of each axis not yet met
        ids = np.zeros(cores, dtype=np.int64)
        for d, line in enumerate(placement.lines):
            pos = np.zeros(cores, dtype=np.int64)
            for a, e in line:
                below[a] //= e
                pos = pos * e + coords[a] // below[a] % e
            ids = ids * shape[d] + pos
    ids.flags.writeable = False
    return ids


def placements_with_rings(
    grid: Sequence[int], rings: Sequence[tuple[int, int]], groups: Sequence[int],
    shape: Sequence[int],
) -> Iterator[Placement]:
    """Placements of `grid` on core shape `shape` that lay each ring (axis, length) of
    `rings` whole and last on a dim of its own, folded on its length (so every shift along it
    is within two positions): one per way of giving the rings dims. The other axes fill the
    dims row-major as a linear placement would (the innermost on the last dim, an axis split
    where a dim is full), those of `groups` (an all-reduce's axes) innermost of them. None
    if the rings do not fit so, or a ring's axis has two lengths."""
    ring_of = dict(rings)
    if len(ring_of) != len(set(rings)) or len(ring_of) > len(shape):
        return
    rest = sorted((a for a, n in enumerate(grid) if n > 1 and a not in ring_of),
                  key=lambda a: (a in groups, a))
    seen: set[Placement] = set()
    for dims in permutations(range(len(shape)), len(ring_of)):
        at = dict(zip(ring_of, dims, strict=True))
        room = [shape[d] // prod(grid[a] for a in ring_of if at[a] == d)
                for d in range(len(shape))]
        parts = _fill(grid, rest, room)
        if parts is None:
            continue
        lines = tuple(
            (*parts[d], *((a, grid[a]) for a in ring_of if at[a] == d))
            for d in range(len(shape))
        )
        placement = Placement(lines, tuple(sorted(ring_of.items())))
        if placement not in seen and placement_problem(grid, placement, shape) is None:
            seen.add(placement)
            yield placement


def _fill(grid: Sequence[int], axes: Sequence[int],
          room: Sequence[int]) -> list[list[Part]] | None:
    """`axes` (major first) laid over dims of `room` positions, the last dim filled first: an
    axis that does not fit what is left of a dim puts its largest factor that does there and
    the rest on the dims before. None if they do not fit."""
    parts: list[list[Part]] = [[] for _ in room]
    left = list(room)
    d = len(room) - 1
    for a in reversed(axes):
        n = grid[a]
        while n > 1:
            if d < 0:
                return None
            e = max((f for f in range(2, min(n, left[d]) + 1) if n % f == 0), default=1)
            if e > 1:
                parts[d].insert(0, (a, e))
                left[d] //= e
                n //= e
            if n > 1:
                d -= 1
    return parts
