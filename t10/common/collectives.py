"""The messages of the compute-shift loop's collectives, as `Traffic` a topology routes: a
ring shift (`shift_traffic`) and the exchange of a reduce-scatter or an all-gather over grid
axes (`group_traffic`), and their cycles for the plan search (`shift_cycles`,
`group_cycles`), costed once per pattern.

The cores of an op's grid are numbered row-major (`exchange.linear_ids`); they sit on the
chip's cores as the op's placement says (`on_chip`, `t10.common.placements`). The simulator
runs every shift and group exchange with these messages, and the plan search's estimator
costs the same exchanges with them, so on a chip whose topology routes messages the
estimate of a plan's shifts and all-reduces is the simulated one.
"""

from __future__ import annotations

from functools import lru_cache
from math import prod

import numpy as np
from numpy.typing import NDArray

from t10.common.chip_spec import ChipSpec
from t10.common.exchange import grid_coords, linear_ids
from t10.common.placements import Placement, core_ids
from t10.common.topologies import LinkClass, Routed
from t10.common.traffic import Traffic

__all__ = [
    "group_cycles",
    "group_pairs",
    "group_traffic",
    "on_chip",
    "shift_cycles",
    "shift_sources",
    "shift_traffic",
]

IntArray = NDArray[np.int64]


def shift_sources(grid: tuple[int, ...], ring: int, pieces: int) -> IntArray:
    """The core each core of `grid` receives from in a `core.shift` on grid axis `ring` in
    rings of `pieces` cores: the next core of its ring (coordinate c on the ring axis receives
    from ⌊c/pieces⌋·pieces + (c+1) mod pieces, every other coordinate the same)."""
    ids = np.arange(prod(grid), dtype=np.int64)
    c = _coord(grid, ring, ids)
    return ids + (c // pieces * pieces + (c + 1) % pieces - c) * prod(grid[ring + 1:])


def _coord(grid: tuple[int, ...], axis: int, ids: IntArray) -> IntArray:
    """The coordinate on grid `axis` of the cores `ids` (row-major)."""
    return ids // prod(grid[axis + 1:]) % grid[axis]


def shift_traffic(grid: tuple[int, ...], ring: int, pieces: int, nbytes: int) -> Traffic:
    """A ring shift (`shift_sources`) of `nbytes` per core: one message of `nbytes` from each
    core's ring successor to it, so every core sends and receives `nbytes`."""
    cores = prod(grid)
    src = shift_sources(grid, ring, pieces)
    return Traffic.of_messages(cores, src, np.arange(cores), np.full(cores, nbytes))


def group_pairs(grid: tuple[int, ...], axes: tuple[int, ...]) -> tuple[IntArray, IntArray]:
    """(src, dst): every ordered pair of distinct members of each group, a group being the
    cores of `grid` that differ only on the grid `axes`."""
    coords = grid_coords(grid)
    cores = prod(grid)
    members = grid_coords([grid[a] for a in axes])
    src: list[IntArray] = []
    dst: list[IntArray] = []
    for member in members:
        other = np.copy(coords)
        other[:, list(axes)] = member
        to = linear_ids(grid, other)
        differ = to != np.arange(cores)
        src.append(np.flatnonzero(differ))
        dst.append(to[differ])
    if not src:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(src).astype(np.int64), np.concatenate(dst).astype(np.int64)


def group_traffic(grid: tuple[int, ...], axes: tuple[int, ...], nbytes: int) -> Traffic:
    """The exchange of a reduce-scatter or of an all-gather over grid `axes` whose runs are
    `nbytes` each: every member of a group sends every other member one run (in a
    reduce-scatter its partial sums of the receiver's run, in an all-gather its own finished
    run), so each core sends and receives (group - 1)·`nbytes`."""
    src, dst = group_pairs(grid, axes)
    return Traffic.of_messages(prod(grid), src, dst, np.full(len(src), nbytes))


def on_chip(chip: ChipSpec, grid: tuple[int, ...], placement: Placement | None,
            traffic: Traffic) -> Traffic:
    """`traffic` among the cores of `grid` (row-major), its cores placed on `chip` as
    `placement` says (`t10.common.placements`; None: linear)."""
    ids = core_ids(grid, placement, chip.core_shape)
    return traffic.placed(ids, ids, chip.cores)


@lru_cache(maxsize=256)
def _classes(chip: ChipSpec, grid: tuple[int, ...],
             placement: Placement | None) -> tuple[IntArray, IntArray]:
    """The distinct representatives (`Topology.representatives`) of the chip cores the
    cores of `grid` sit on, and each grid core's index among them."""
    ids = core_ids(grid, placement, chip.core_shape)
    reps, index = np.unique(chip.topology.representatives(chip.cores)[ids],
                            return_inverse=True)
    return reps, index.astype(np.int64)


def _routed_pairs(reps: IntArray, chip: ChipSpec, pairs: IntArray, busiest: int) -> Routed:
    """The routed exchange of `pairs[i, j]` 1-byte messages from cores of representative
    `reps[i]` to cores of representative `reps[j]`, each core sending and receiving `busiest`
    bytes: messages between the same representatives take the same links and latency, so
    they are routed as one carrying their bytes together."""
    links, latency = _route_classes(chip, reps.tobytes(), pairs.tobytes())
    return Routed(float(busiest), links, latency)


@lru_cache(maxsize=1 << 16)
def _route_classes(chip: ChipSpec, reps: bytes, pairs: bytes) -> tuple[dict[str, float], int]:
    """The links' loads and the latency of `_routed_pairs` (the arrays as bytes: many
    patterns pair the same representatives alike)."""
    ids = np.frombuffer(reps, dtype=np.int64)
    counts = np.reshape(np.frombuffer(pairs, dtype=np.int64), (len(ids), len(ids)))
    i, j = np.nonzero(counts)
    routed = chip.topology.routed(Traffic.of_messages(chip.cores, ids[i], ids[j], counts[i, j]))
    return routed.links, routed.latency


@lru_cache(maxsize=1 << 16)
def _shift_unit(chip: ChipSpec, grid: tuple[int, ...], ring: int, pieces: int,
                placement: Placement | None) -> Routed:
    """`shift_traffic(grid, ring, pieces, 1)` placed and routed (by representatives:
    `_routed_pairs`)."""
    cores = prod(grid)
    reps, index = _classes(chip, grid, placement)
    if len(reps) == cores:
        return chip.topology.routed(
            on_chip(chip, grid, placement, shift_traffic(grid, ring, pieces, 1)))
    u = len(reps)
    src = index[shift_sources(grid, ring, pieces)]
    pairs: IntArray = np.reshape(np.bincount(src * u + index, minlength=u * u), (u, u))
    return _routed_pairs(reps, chip, pairs, 1)


@lru_cache(maxsize=1 << 16)
def _group_unit(chip: ChipSpec, grid: tuple[int, ...], axes: tuple[int, ...],
                placement: Placement | None) -> Routed:
    """`group_traffic(grid, axes, 1)` placed and routed. Its cores·(group - 1) messages are
    many on a large chip; by representatives (`_routed_pairs`) they are the members of each
    group per representative, paired."""
    cores = prod(grid)
    members = prod(grid[a] for a in axes)
    reps, index = _classes(chip, grid, placement)
    if members == 1 or len(reps) == cores:
        return chip.topology.routed(
            on_chip(chip, grid, placement, group_traffic(grid, axes, 1)))
    u = len(reps)
    ids = np.arange(cores, dtype=np.int64)
    group = np.zeros(cores, np.int64)  # each core's group, numbered row-major over the rest
    for a in range(len(grid)):
        if a not in axes:
            group = group * grid[a] + _coord(grid, a, ids)
    groups = cores // members
    # members of each group per representative
    held: IntArray = np.reshape(np.bincount(group * u + index, minlength=groups * u), (groups, u))
    # ordered pairs of members by representatives, less each member to itself
    pairs: IntArray = np.matmul(np.transpose(held), held)
    pairs[np.diag_indices(u)] -= held.sum(axis=0)
    return _routed_pairs(reps, chip, pairs, members - 1)


@lru_cache(maxsize=64)
def _link_classes(chip: ChipSpec) -> dict[str, LinkClass]:
    return chip.topology.link_classes()


def _cycles(chip: ChipSpec, unit: Routed, nbytes: int) -> int:
    return unit.scaled(nbytes).cycles(_link_classes(chip), chip.exchange_cycles_per_byte)


def shift_cycles(chip: ChipSpec, grid: tuple[int, ...], ring: int, pieces: int,
                 nbytes: int, placement: Placement | None = None) -> int:
    """`costs.exchange_cycles(chip, on_chip(chip, grid, placement, shift_traffic(grid, ring,
    pieces, nbytes)))`, the pattern routed once per (chip, grid, ring, pieces, placement):
    every message carries the same bytes, so the routed loads scale with them."""
    return _cycles(chip, _shift_unit(chip, grid, ring, pieces, placement), nbytes)


def group_cycles(chip: ChipSpec, grid: tuple[int, ...], axes: tuple[int, ...],
                 nbytes: int, placement: Placement | None = None) -> int:
    """`costs.exchange_cycles(chip, on_chip(chip, grid, placement, group_traffic(grid, axes,
    nbytes)))`, the pattern routed once per (chip, grid, group axes, placement)."""
    key = tuple(sorted(a for a in set(axes) if grid[a] > 1))
    return _cycles(chip, _group_unit(chip, grid, key, placement), nbytes)
