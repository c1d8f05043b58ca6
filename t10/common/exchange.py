"""Layout geometry for the simulator: which part of a tensor each core holds, vectorized over
cores (no Python loop over cores).

A `Layout` (see `t10.common.plans`) puts a tensor on the cores of a row-major grid. Core x
holds, along tensor dim i split on grid axis a, the tile starting at `x[a] * tile[i]` (block 0
when the dim is not split); cores that differ only on unused axes hold copies. A rotating
layout cuts the tile along `rotating.dim` into `steps` chunks of `tile[dim] / steps` elements;
core x holds the window of chunks u = u0 .. u0 + W - 1 (taken mod `steps`), chunk u in buffer
slot `u mod slots` (W = window, slots = W + 1, one slot stays free for the incoming chunk),
from u0 = (o(x) mod steps) + phase (the phase is that of a rotating output after its last
step, `window_starts`).

Everything a core holds is a Cartesian product of per-dim interval unions: one interval per
dim, except the rotating dim whose window may wrap around the tile (two intervals). Overlaps
of such regions are products of per-dim interval overlaps, which is what `relayout_traffic`
uses to count the bytes a relayout must move. A view's move (`element_move`) counts the same
way per group of dims the view never mixes (`_factored_move`), and element by element only
where that does not apply (`_element_move`: a gather's explicit ids, or a source whose
elements have unequal numbers of holders).

Cores are numbered per layout, row-major over its grid. A move's source core s and its
destination core d are the same chip core when the layouts' placements put them there
(`beside`; with no placement, core i of every grid is chip core i): what a destination core
already holds in the source layout stays, and the rest moves. A move's traffic is counted in
the layouts' own core numbers and then put on the chip's cores (`CorePlaces`).
"""

from __future__ import annotations

import string
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import prod
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from t10.common.gathers import GatherKind
from t10.common.placements import core_ids
from t10.common.plans import Layout
from t10.common.traffic import Traffic
from t10.common.view_maps import View, eval_expr
from t10.errors import T10Error

IntArray: TypeAlias = NDArray[np.int64]
Array: TypeAlias = NDArray[Any]
"""A tensor's values (or per-core buffers of them), of any element type."""

PAIR_BUDGET = 1 << 21
"""Max (dst core, src core) pairs handled at once by `relayout_traffic` (bounds memory)."""


def grid_coords(grid: Sequence[int], cores: int | None = None) -> IntArray:
    """Row-major coordinates `(cores, len(grid))` of cores 0..cores-1 on `grid`.

    `cores` defaults to the grid's size; cores beyond the grid get coordinate 0 on every axis.
    """
    size = prod(grid)
    cores = size if cores is None else cores
    coords = np.zeros((cores, len(grid)), dtype=np.int64)
    inside = min(cores, size)
    if inside and grid:
        coords[:inside] = np.stack(np.unravel_index(np.arange(inside), tuple(grid)), axis=1)
    return coords


def linear_ids(grid: Sequence[int], coords: IntArray) -> IntArray:
    """Inverse of `grid_coords`: core ids of `(n, rank)` coordinates."""
    per_axis: tuple[IntArray, ...] = tuple(np.transpose(coords))
    return np.ravel_multi_index(per_axis, tuple(grid)).astype(np.int64)


def tile_origins(layout: Layout, coords: IntArray) -> IntArray:
    """`(cores, rank)` first logical index of each core's (spatial) tile."""
    origins = np.zeros((len(coords), len(layout.shape)), dtype=np.int64)
    for i, (axis, tile) in enumerate(zip(layout.axes, layout.tile, strict=True)):
        if axis is not None:
            origins[:, i] = coords[:, axis] * tile
    return origins


def window_starts(layout: Layout, coords: IntArray) -> IntArray:
    """u0 = (o(x) mod steps) + phase: each core's rotating window holds chunks u0 .. u0+W-1
    (mod steps), chunk u in slot u mod slots (0 for a non-rotating layout). u0 is not reduced
    mod steps: a rotating output's slots follow the steps it ran (see `Rotating`)."""
    r = layout.rotating
    start = np.zeros(len(coords), dtype=np.int64)
    if r is None:
        return start
    for axis, modulus, weight in r.skew:
        start += weight * (coords[:, axis] % modulus)
    return start % r.steps + r.phase


def chunk_size(layout: Layout) -> int:
    """Elements of one rotating chunk along the rotating dim."""
    assert layout.rotating is not None
    return layout.tile[layout.rotating.dim] // layout.rotating.steps


def local_indices(layout: Layout, coords: IntArray) -> list[IntArray]:
    """Per tensor dim, the `(cores, local extent)` logical index each buffer element holds;
    -1 where the element holds nothing (padding past the tensor, or the free rotating slot)."""
    origins = tile_origins(layout, coords)
    local = layout.local_shape()
    result: list[IntArray] = []
    for i, size in enumerate(layout.shape):
        r = layout.rotating
        if r is not None and i == r.dim:
            idx = _rotating_indices(layout, coords, origins[:, i])
        else:
            idx = origins[:, i, None] + np.arange(local[i], dtype=np.int64)
        result.append(np.where((idx >= 0) & (idx < size), idx, -1))
    return result


def _rotating_indices(layout: Layout, coords: IntArray, origin: IntArray) -> IntArray:
    r = layout.rotating
    assert r is not None
    chunk = chunk_size(layout)
    pos = np.arange(chunk * r.slots, dtype=np.int64)
    slot, within = pos // chunk, pos % chunk
    start = window_starts(layout, coords)[:, None]
    ahead = (slot[None, :] - start) % r.slots  # slot s holds chunk start + ahead, if < W
    chunk_id = (start + ahead) % r.steps
    idx = origin[:, None] + chunk_id * chunk + within[None, :]
    return np.where(ahead < r.window, idx, -1)


def _open_mesh(indices: list[IntArray], shape: Sequence[int]) -> tuple[IntArray, ...]:
    """Broadcastable `(cores, l0, l1, ...)` index arrays; -1 becomes the pad index `shape[i]`."""
    rank = len(indices)
    mesh: list[IntArray] = []
    for i, idx in enumerate(indices):
        full = np.where(idx < 0, shape[i], idx)
        dims = (len(idx),) + (1,) * i + (idx.shape[1],) + (1,) * (rank - i - 1)
        mesh.append(np.reshape(full, dims))
    return tuple(mesh)


def distribute(layout: Layout, tensor: Array) -> Array:
    """The `(layout cores, *local shape)` buffers holding `tensor` in `layout` (padding 0)."""
    if tensor.ndim == 0:
        return np.copy(np.broadcast_to(tensor, (layout.cores,)))
    coords = grid_coords(layout.grid)
    padded = np.pad(tensor, [(0, 1)] * tensor.ndim)
    return padded[_open_mesh(local_indices(layout, coords), tensor.shape)]


def collect(layout: Layout, buffers: Array, what: str | None = None) -> Array:
    """The logical tensor held by `buffers` (`(>= layout cores, *local shape)`) in `layout`.

    Cores that hold copies of one tile must agree; with `what` (the op, for the error) that
    is checked (a partial sum nobody all-reduced is not the tensor)."""
    shape = layout.shape
    held = buffers[: layout.cores]
    if what is not None:
        _check_copies_agree(what, layout, held)
    if not shape:
        return buffers[0].copy()
    coords = grid_coords(layout.grid)
    out = np.zeros(tuple(s + 1 for s in shape), dtype=buffers.dtype)
    out[_open_mesh(local_indices(layout, coords), shape)] = held
    return out[tuple(slice(0, s) for s in shape)]


def _copy_axes(layout: Layout) -> list[int]:
    """The grid axes of more than one core along which cores hold copies of one tile: no
    tensor dim splits along them, and they are not a rotation's ring."""
    split = {a for a in layout.axes if a is not None}
    if layout.rotating is not None:
        split.add(layout.rotating.ring_axis)
    return [a for a, n in enumerate(layout.grid) if n > 1 and a not in split]


def _check_copies_agree(what: str, layout: Layout, held: Array) -> None:
    """Along each copy axis, every core's buffer equals the first core's (NaN equals NaN)."""
    grid = layout.grid
    tiles = np.reshape(held, (*grid, *held.shape[1:]))
    for axis in _copy_axes(layout):
        first = tiles.take([0], axis=axis)
        differ = tiles != first
        if not differ.any():
            continue
        differ &= ~(np.isnan(tiles) & np.isnan(first))
        if not differ.any():
            continue
        at = tuple(int(p) for p in np.argwhere(differ)[0])
        core = int(np.ravel_multi_index(at[: len(grid)], grid))
        other = int(np.ravel_multi_index(at[:axis] + (0,) + at[axis + 1 : len(grid)], grid))
        local = list(at[len(grid) :])
        raise T10Error(
            f"{what}: cores {other} and {core}, which share a tile, hold different values at "
            f"{local} in it ({float(tiles[at[:axis] + (0,) + at[axis + 1 :]])} and "
            f"{float(tiles[at])}); copies must agree (are partial sums missing their "
            "core.all_reduce?)"
        )


# --------------------------------------------------------------------------------------------
# Regions as per-dim interval unions, and the traffic of a relayout
# --------------------------------------------------------------------------------------------


def held_intervals(layout: Layout, coords: IntArray) -> list[IntArray]:
    """Per tensor dim, `(cores, k, 2)` disjoint half-open intervals [start, end) of logical
    indices a core holds (its tile, or its window when rotating), clipped to the tensor."""
    origins = tile_origins(layout, coords)
    result: list[IntArray] = []
    r = layout.rotating
    for i, (size, tile) in enumerate(zip(layout.shape, layout.tile, strict=True)):
        origin = origins[:, i]
        if r is not None and i == r.dim:
            chunk = chunk_size(layout)
            start = window_starts(layout, coords) % r.steps
            first_end = np.minimum(start + r.window, r.steps)
            wrapped = np.maximum(start + r.window - r.steps, 0)
            iv = np.stack(
                [
                    np.stack([origin + start * chunk, origin + first_end * chunk], axis=1),
                    np.stack([origin, origin + wrapped * chunk], axis=1),
                ],
                axis=1,
            )
        else:
            iv = np.stack([origin, origin + tile], axis=1)[:, None, :]
        result.append(np.minimum(iv, size))
    return result


def measure(intervals: list[IntArray]) -> IntArray:
    """Elements in each core's region (product over dims of the interval lengths)."""
    total = np.ones(len(intervals[0]) if intervals else 1, dtype=np.int64)
    for iv in intervals:
        total *= np.maximum(iv[..., 1] - iv[..., 0], 0).sum(axis=1)
    return total


def intersect(a: list[IntArray], b: list[IntArray]) -> list[IntArray]:
    """Per-core intersection of two regions over the same cores (`(n, ka*kb, 2)` per dim)."""
    out: list[IntArray] = []
    for x, y in zip(a, b, strict=True):
        lo = np.maximum(x[:, :, None, 0], y[:, None, :, 0])
        hi = np.maximum(np.minimum(x[:, :, None, 1], y[:, None, :, 1]), lo)
        out.append(np.reshape(np.stack([lo, hi], axis=-1), (len(x), -1, 2)))
    return out


def overlap_matrix(a: list[IntArray], b: list[IntArray]) -> IntArray:
    """`(len(a cores), len(b cores))` elements in common between every pair of regions."""
    total = np.ones((len(a[0]), len(b[0])), dtype=np.int64) if a else np.ones((1, 1), np.int64)
    for x, y in zip(a, b, strict=True):
        lo = np.maximum(x[:, None, :, None, 0], y[None, :, None, :, 0])
        hi = np.minimum(x[:, None, :, None, 1], y[None, :, None, :, 1])
        total *= np.maximum(hi - lo, 0).sum(axis=(2, 3))
    return total


def beside(src: Layout, dst: Layout, shape: tuple[int, ...] | None) -> IntArray:
    """For each core of `dst`'s grid, the core of `src`'s grid on the same chip core (-1:
    none), on a chip whose cores form `shape` (`ChipSpec.core_shape`; needed only when a
    layout is placed)."""
    places = CorePlaces.of(src, dst, shape)
    if places is None:
        d = np.arange(dst.cores, dtype=np.int64)
        return np.where(d < src.cores, d, -1)
    where = np.full(places.cores, -1, dtype=np.int64)
    where[places.src] = np.arange(src.cores)
    return where[places.dst]


@dataclass(frozen=True)
class CorePlaces:
    """The chip core of each source core (`src`) and of each destination core (`dst`) of a
    move, on a chip of `cores` cores."""

    src: IntArray
    dst: IntArray
    cores: int

    @staticmethod
    def of(src: Layout, dst: Layout, shape: tuple[int, ...] | None) -> CorePlaces | None:
        """Where the layouts' cores lie (None: neither is placed, so grid core i is chip core
        i and a move's traffic needs no renumbering)."""
        if src.placement is None and dst.placement is None:
            return None
        if shape is None:
            raise ValueError("a move between placed layouts needs the chip's core shape")
        return CorePlaces(core_ids(src.grid, src.placement, shape),
                          core_ids(dst.grid, dst.placement, shape), prod(shape))

    def place(self, traffic: Traffic) -> Traffic:
        """`traffic` (senders numbered as the source's cores, receivers as the
        destination's) on the chip's cores."""
        if traffic.messages is not None:
            return traffic.placed(self.src, self.dst, self.cores)
        sent, received = np.zeros(self.cores), np.zeros(self.cores)
        np.add.at(sent, self.src, traffic.sent[: len(self.src)])
        np.add.at(received, self.dst, traffic.received[: len(self.dst)])
        return Traffic(sent, received)


def _own_source_region(src: Layout, near: IntArray) -> list[IntArray]:
    """What each destination core already holds in the source layout: the region of the
    source core beside it (`near`, `beside`; empty where there is none)."""
    coords = grid_coords(src.grid)[np.maximum(near, 0)]
    region = held_intervals(src, coords)
    outside = near < 0
    for iv in region:
        iv[outside] = 0
    return region


@dataclass(frozen=True)
class _Keyed:
    """A region per core, factored per dim: core c's intervals along dim i are
    `values[i][keys[i][c]]` (each dim has few distinct intervals)."""

    values: list[IntArray]
    keys: list[IntArray]

    @staticmethod
    def of(region: list[IntArray]) -> _Keyed:
        values: list[IntArray] = []
        keys: list[IntArray] = []
        for iv in region:
            flat = np.reshape(iv, (len(iv), -1))
            uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
            values.append(np.reshape(uniq, (len(uniq), -1, 2)))
            keys.append(np.reshape(inverse, -1))
        return _Keyed(values, keys)

    @property
    def grid(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self.values)

    def totals(self, weights: Array) -> Array:
        """Dense tensor over key tuples: the sum of `weights` of the cores with each key."""
        out = np.zeros(self.grid)
        np.add.at(out, tuple(self.keys), weights)
        return out

    def at(self, dense: Array) -> Array:
        """Per core, the entry of a dense key tensor at its key."""
        return dense[tuple(self.keys)]


def _contract(weights: Array, tables: list[Array], to_src: bool) -> Array:
    """Σ over one side's keys of weights[key] · Π_i tables[i][dst key_i, src key_i]."""
    rank = len(tables)
    dst, src = string.ascii_letters[:rank], string.ascii_letters[rank : 2 * rank]
    pairs = "".join(f",{d}{s}" for d, s in zip(dst, src, strict=True))
    subscripts = f"{dst if to_src else src}{pairs}->{src if to_src else dst}"
    return np.einsum(subscripts, weights, *(t.astype(np.float64) for t in tables), optimize=True)


DENSE_KEY_LIMIT = 1 << 22
"""Largest dense key tensor `relayout_traffic` builds before falling back to blocked pairs."""


MOVE_CACHE = 4096
"""How many relayouts' traffic `relayout_traffic` and `element_move` remember: a model's
identical layers move identical layouts, and the plan search and the simulator ask for the
same moves."""


def _read_only(*arrays: Array) -> None:
    """Cached results are shared: no caller may change them."""
    for a in arrays:
        a.setflags(write=False)


@lru_cache(maxsize=MOVE_CACHE)
def relayout_traffic(
    src: Layout, dst: Layout, shape: tuple[int, ...] | None = None
) -> tuple[Array, Array]:
    """Elements each core sends and receives to move a tensor from `src` to `dst`
    (remembered: the arrays are read-only).

    A destination core receives what it needs (its tile, or its window) minus what it already
    holds in `src`. Every missing element is requested from the source cores that hold it,
    spread evenly over those replicas, so a source core sends the sum of its shares (a float:
    shares may split elements). Both arrays have one entry per core of the larger grid.

    With need(d), kept(d) = need(d) ∩ own(d) and held(s), the share of (d, s) is
    |need(d) ∩ held(s)| - |kept(d) ∩ held(s)|: products over tensor dims of per-dim overlaps.
    Cores are grouped by their per-dim interval keys so that the sums over the other side are
    small einsums over key tables; `_blocked_traffic` computes the same pair by pair. Cores
    are the layouts' own (`beside`: `shape` places them).
    """
    near = beside(src, dst, shape)
    if not src.shape:
        src, dst = _as_1d(src), _as_1d(dst)
    need = held_intervals(dst, grid_coords(dst.grid))
    kept = intersect(need, _own_source_region(src, near))
    held = held_intervals(src, grid_coords(src.grid))
    missing = (measure(need) - measure(kept)).astype(np.float64)
    keyed = [_Keyed.of(r) for r in (need, kept, held)]
    if max(prod(k.grid) for k in keyed) > DENSE_KEY_LIMIT:
        return _blocked_traffic(src, dst, need, kept, held, missing)
    need_k, kept_k, held_k = keyed
    tables = [
        [overlap_matrix([v], [w]) for v, w in zip(side.values, held_k.values, strict=True)]
        for side in (need_k, kept_k)
    ]
    count = held_k.totals(np.ones(src.cores))
    holders = need_k.at(_contract(count, tables[0], False)) - kept_k.at(
        _contract(count, tables[1], False)
    )
    weight = np.divide(missing, holders, out=np.zeros(len(holders)), where=holders > 0)
    per_key = _contract(need_k.totals(weight), tables[0], True) - _contract(
        kept_k.totals(weight), tables[1], True
    )
    sent, received = _pad(held_k.at(per_key), missing, max(src.cores, dst.cores))
    _read_only(sent, received)
    return sent, received


@dataclass(frozen=True)
class Flows:
    """Elements moved core to core: `elements[i]` (a float: shares of replicated elements)
    from source core `src[i]` to destination core `dst[i]`; only pairs that move something,
    each pair once."""

    src: IntArray
    dst: IntArray
    elements: Array

    def traffic(self, cores: int, elem_bytes: int) -> Traffic:
        """The exchange among `cores` cores moving these flows of `elem_bytes`-byte elements,
        as messages."""
        return Traffic.of_messages(cores, self.src, self.dst, self.elements * elem_bytes)


def relayout_exchange(
    src: Layout, dst: Layout, elem_bytes: int, messages: bool,
    shape: tuple[int, ...] | None = None,
) -> Traffic:
    """The exchange of the relayout from `src` to `dst` of `elem_bytes`-byte elements: each
    core's totals (`relayout_traffic`), or with `messages` who sends how much to whom
    (`relayout_flows`; a topology that routes needs them); on the cores of a chip of core
    shape `shape` when a layout is placed (`CorePlaces`)."""
    cores = max(src.cores, dst.cores)
    if messages:
        traffic = relayout_flows(src, dst, shape).traffic(cores, elem_bytes)
    else:
        sent, received = relayout_traffic(src, dst, shape)
        traffic = Traffic.of_elements(sent, received, elem_bytes)
    places = CorePlaces.of(src, dst, shape)
    return traffic if places is None else places.place(traffic)


@lru_cache(maxsize=MOVE_CACHE)
def relayout_flows(src: Layout, dst: Layout, shape: tuple[int, ...] | None = None) -> Flows:
    """`relayout_traffic` pair by pair (remembered: the arrays are read-only): destination
    core d receives from source core s its weight missing(d) / holders(d) times the share of
    (d, s), so the flows' sums per core are `relayout_traffic`'s arrays.

    Only the pairs whose regions overlap along the dim where fewest do are visited
    (`_overlapping_pairs`), not every pair of cores: a large grid (ipu-pod4's 5,888 cores)
    costs about as much as the pairs that move something."""
    near = beside(src, dst, shape)
    if not src.shape:
        src, dst = _as_1d(src), _as_1d(dst)
    need_iv = held_intervals(dst, grid_coords(dst.grid))
    kept_iv = intersect(need_iv, _own_source_region(src, near))
    missing = (measure(need_iv) - measure(kept_iv)).astype(np.float64)
    need, kept = _Keyed.of(need_iv), _Keyed.of(kept_iv)
    held = _Keyed.of(held_intervals(src, grid_coords(src.grid)))
    need_tables, kept_tables = _overlap_tables(need, held), _overlap_tables(kept, held)
    d, s = _overlapping_pairs(need.keys, held.keys, need_tables)
    share = (_pair_overlaps(need_tables, need.keys, held.keys, d, s)
             - _pair_overlaps(kept_tables, kept.keys, held.keys, d, s))
    holders = np.bincount(d, weights=share, minlength=dst.cores)
    weight = np.divide(missing, holders, out=np.zeros(len(holders)), where=holders > 0)
    flow = weight[d] * share
    moved = flow > 0
    flows = Flows(s[moved], d[moved], flow[moved])
    _read_only(flows.src, flows.dst, flows.elements)
    return flows


def _overlap_tables(a: _Keyed, b: _Keyed) -> list[IntArray]:
    """Per dim, the overlap of every interval key of `a` with every one of `b`."""
    return [overlap_matrix([v], [w]) for v, w in zip(a.values, b.values, strict=True)]


def _pair_overlaps(tables: list[IntArray], a_keys: list[IntArray], b_keys: list[IntArray],
                   i: IntArray, j: IntArray) -> Array:
    """Elements in common between core `i[k]`'s region of one side and core `j[k]`'s of the
    other: the product over dims of `tables[dim][a key, b key]`."""
    total = np.ones(len(i))
    for table, ka, kb in zip(tables, a_keys, b_keys, strict=True):
        total *= table[ka[i], kb[j]]
    return total


def _overlapping_pairs(a_keys: list[IntArray], b_keys: list[IntArray],
                       tables: list[IntArray]) -> tuple[IntArray, IntArray]:
    """Every (core i of one side, core j of the other) whose regions overlap: per dim (or
    group of dims), core i's key is `a_keys[dim][i]`, and `tables[dim]` is the overlap of
    every key of one side with every key of the other. Cores are grouped by key tuple; group
    pairs are enumerated along the dim where fewest overlap, the other dims filter them, and
    the groups expand back to cores."""
    a_groups, a_of = np.unique(np.stack(a_keys, axis=1), axis=0, return_inverse=True)
    b_groups, b_of = np.unique(np.stack(b_keys, axis=1), axis=0, return_inverse=True)
    overlaps = [t > 0 for t in tables]

    def candidates(dim: int) -> int:
        on_a = np.bincount(a_groups[:, dim], minlength=overlaps[dim].shape[0])
        on_b = np.bincount(b_groups[:, dim], minlength=overlaps[dim].shape[1])
        return int(on_a @ overlaps[dim] @ on_b)

    dim = min(range(len(overlaps)), key=candidates)
    ka, kb = np.nonzero(overlaps[dim])
    ga, gb = _cross(ka, kb, a_groups[:, dim], b_groups[:, dim])
    keep = np.ones(len(ga), dtype=bool)
    for other, table in enumerate(overlaps):
        if other != dim:
            keep &= table[a_groups[ga, other], b_groups[gb, other]]
    return _cross(ga[keep], gb[keep], np.reshape(a_of, -1), np.reshape(b_of, -1))


def _members_of(classes: IntArray, wanted: IntArray) -> tuple[IntArray, IntArray]:
    """Every (k, j) with `classes[j] == wanted[k]`, as two arrays."""
    n = max(int(classes.max(initial=-1)), int(wanted.max(initial=-1))) + 1
    order = np.argsort(classes, kind="stable")
    counts = np.bincount(classes, minlength=n)
    starts = np.cumsum(counts) - counts
    size = counts[wanted]
    k = np.repeat(np.arange(len(wanted)), size)
    within = np.arange(len(k)) - np.repeat(np.cumsum(size) - size, size)
    return k, order[starts[wanted][k] + within].astype(np.int64)


def _cross(
    a: IntArray, b: IntArray, a_classes: IntArray, b_classes: IntArray
) -> tuple[IntArray, IntArray]:
    """Every (i, j) with `a_classes[i] == a[k]` and `b_classes[j] == b[k]` for some k (the
    class pairs (a[k], b[k]) distinct)."""
    k, i = _members_of(a_classes, a)
    k2, j = _members_of(b_classes, b[k])
    return i[k2], j


def _as_1d(layout: Layout) -> Layout:
    return Layout((1,), layout.grid, (None,), (1,), placement=layout.placement)


def _pad(sent: Array, received: Array, n: int) -> tuple[Array, Array]:
    out_sent, out_received = np.zeros(n), np.zeros(n)
    out_sent[: len(sent)] = sent
    out_received[: len(received)] = received
    return out_sent, out_received


def _blocked_traffic(
    src: Layout,
    dst: Layout,
    need: list[IntArray],
    kept: list[IntArray],
    held: list[IntArray],
    missing: Array,
) -> tuple[Array, Array]:
    """`relayout_traffic` over explicit (dst core, src core) pairs, `PAIR_BUDGET` at a time."""
    sent = np.zeros(src.cores)
    step = max(1, PAIR_BUDGET // max(src.cores, 1))
    for first in range(0, dst.cores, step):
        rows = slice(first, min(first + step, dst.cores))
        need_r, kept_r = [iv[rows] for iv in need], [iv[rows] for iv in kept]
        shares = overlap_matrix(need_r, held) - overlap_matrix(kept_r, held)
        holders = shares.sum(axis=1)
        weight = np.divide(missing[rows], holders, out=np.zeros(len(holders)), where=holders > 0)
        sent += weight @ shares
    out_sent, received = _pad(sent, missing, max(src.cores, dst.cores))
    _read_only(out_sent, received)
    return out_sent, received


# --------------------------------------------------------------------------------------------
# Views and gathers: relayouts that also re-index the tensor (by a map, or by runtime ids)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewMove:
    """What moving a tensor from `src` into a view of it laid out as `dst` costs each core:
    elements sent and received (floats: shares of replicated elements, as in
    `relayout_traffic`) and elements a core already holds but copies into place. `in_place`:
    every core's destination buffer is its source buffer read in another shape (nothing
    moves at all)."""

    sent: Array
    received: Array
    copied: Array
    in_place: bool
    flows: Flows | None = None
    """Who sends how many elements to whom, when asked for (`element_move`'s `messages`)."""
    places: CorePlaces | None = None
    """Where the layouts' cores lie on the chip (None: grid core i is chip core i)."""

    def traffic(self, elem_bytes: int) -> Traffic:
        """The exchange of this move of `elem_bytes`-byte elements on the chip's cores, with
        its messages when its flows are known."""
        if self.flows is None:
            traffic = Traffic.of_elements(self.sent, self.received, elem_bytes)
        else:
            traffic = self.flows.traffic(len(self.sent), elem_bytes)
        return traffic if self.places is None else self.places.place(traffic)


CHUNK_ELEMENTS = 1 << 22
"""Destination buffer elements `element_move` handles at once (bounds memory)."""


def flat_sources(
    layout: Layout, source: Sequence[int], view: View | None, cores: slice | None = None
) -> IntArray:
    """`(cores, local elements)`: the row-major index into the `source` tensor of what each
    buffer element holds, -1 for padding and zero fill; with `view`, `layout` places the
    viewed tensor. `cores` selects a range of the layout's cores."""
    coords = grid_coords(layout.grid)[cores or slice(None)]
    local = local_indices(layout, coords)
    shape = (len(coords), *layout.local_shape())
    index = [np.broadcast_to(i, shape) for i in _open_mesh(local, layout.shape)]
    valid = np.ones(shape, dtype=bool)
    for i, size in zip(index, layout.shape, strict=True):
        valid &= i < size  # _open_mesh marks padding with the dim's size
    if view is not None:
        valid &= view.valid(index)
        index = [np.broadcast_to(eval_expr(e, index), shape) for e in view.map.results]
    if not source:
        flat = np.zeros(shape, dtype=np.int64)
    else:
        clipped = tuple(np.where(valid, i, 0) for i in index)
        flat = np.ravel_multi_index(clipped, tuple(source))
    return np.reshape(np.where(valid, flat, -1), (len(coords), -1)).astype(np.int64)


def _is_injective(view: View, result: Sequence[int], source: Sequence[int]) -> bool:
    """Whether no two (not zero-filled) elements of the viewed tensor read the same source
    element: at once when the map shifts and permutes all of its dims (a Concat's padded
    inputs, transposes), else counted element by element."""
    if not source:
        return prod(result) <= 1
    if _shifted_permutation(view.map) or _mixed_radix(view, result):
        return True
    numbered = np.reshape(np.arange(1, prod(source) + 1), tuple(source))  # 0: zero fill
    reads = np.bincount(np.reshape(view.gather(numbered, tuple(result)), -1))
    return bool(reads[1:].max(initial=0) <= 1)


def _shifted_permutation(amap: AffineMap) -> bool:
    """Whether each result of `amap` is one of its dims plus a constant, every dim exactly
    once: distinct indices then map to distinct indices."""
    dims: list[int] = []
    for expr in amap.results:
        if (isinstance(expr, AffineBinaryOpExpr) and expr.kind is AffineBinaryOpKind.Add
                and isinstance(expr.rhs, AffineConstantExpr)):
            expr = expr.lhs
        if not isinstance(expr, AffineDimExpr):
            return False
        dims.append(expr.position)
    return sorted(dims) == list(range(amap.num_dims))


def _linear_terms(expr: AffineExpr) -> dict[int, int] | None:
    """The coefficient of each dim in `expr`, a sum of dims times constants plus a constant
    (None: anything else, a floordiv or a mod)."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}
    if isinstance(expr, AffineConstantExpr):
        return {}
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind is AffineBinaryOpKind.Add:
        lhs, rhs = _linear_terms(expr.lhs), _linear_terms(expr.rhs)
        if lhs is None or rhs is None:
            return None
        return {d: lhs.get(d, 0) + rhs.get(d, 0) for d in {*lhs, *rhs}}
    if isinstance(expr, AffineBinaryOpExpr) and expr.kind is AffineBinaryOpKind.Mul:
        for factor, term in ((expr.rhs, expr.lhs), (expr.lhs, expr.rhs)):
            if isinstance(factor, AffineConstantExpr):
                inner = _linear_terms(term)
                return None if inner is None else {d: c * factor.value for d, c in inner.items()}
    return None


def _mixed_radix(view: View, result: Sequence[int]) -> bool:
    """Whether `view` reads distinct source elements at distinct (admitted) result indices
    because each source index is a mixed-radix number of its own result dims (a reshape that
    splits dims, a padded one): every result dim that ranges over more than one admitted
    value appears in one source index only, whose positive coefficients, in increasing
    order, each exceed the largest sum the smaller ones reach. A guard `d + c` in `[0, g)`
    narrows dim d's range."""
    sizes = list(result)
    if view.guard is not None:
        for expr, size in zip(view.guard.results, view.guard_shape, strict=True):
            terms = _linear_terms(expr)
            if terms is not None and len(terms) == 1 and next(iter(terms.values())) == 1:
                (dim,) = terms
                sizes[dim] = min(sizes[dim], size)  # at most `size` values of the dim
    used: set[int] = set()
    for expr in view.map.results:
        terms = _linear_terms(expr)
        if terms is None:
            return False
        reach = 0
        for coefficient, dim in sorted((c, d) for d, c in terms.items() if sizes[d] > 1 and c):
            if coefficient <= reach or dim in used:
                return False
            used.add(dim)
            reach += coefficient * (sizes[dim] - 1)
    return all(d in used for d, size in enumerate(sizes) if size > 1)


def _distinct_per_row(flat: IntArray) -> IntArray:
    """`flat` with repeated entries of a row replaced by -1."""
    ordered = np.sort(flat, axis=1)
    repeat = np.zeros(ordered.shape, dtype=bool)
    repeat[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
    return np.where(repeat, -1, ordered)


def element_move(
    src: Layout, dst: Layout, sources: View | IntArray, messages: bool = False,
    shape: tuple[int, ...] | None = None,
) -> ViewMove:
    """`_element_move`, remembered for views (the arrays are then read-only)."""
    if isinstance(sources, View):
        return _view_move(src, dst, sources, messages, shape)
    return _element_move(src, dst, sources, messages, shape)


@lru_cache(maxsize=MOVE_CACHE)
def _view_move(
    src: Layout, dst: Layout, view: View, messages: bool, shape: tuple[int, ...] | None
) -> ViewMove:
    move = _factored_move(src, dst, view, messages, shape)
    if move is None:
        move = _element_move(src, dst, view, messages, shape)
    _read_only(move.sent, move.received, move.copied)
    if move.flows is not None:
        _read_only(move.flows.src, move.flows.dst, move.flows.elements)
    return move


def _element_move(
    src: Layout, dst: Layout, sources: View | IntArray, messages: bool,
    shape: tuple[int, ...] | None,
) -> ViewMove:
    """Moves the tensor laid out as `src` into a tensor laid out as `dst` whose every element
    is one source element: `sources` is a `View` of the source, or the explicit row-major
    index into the source of every destination element (an int array of the destination
    tensor's shape, -1: zero fill; a gather of runtime ids).

    Element by element (views are counted per group of dims by `_factored_move`, with the
    same result, where it applies): a destination core receives the distinct source elements
    it needs and does not hold; each is requested from the cores holding it (the replicas of its
    source tile, `replicas` of them; for a rotating `src`, the cores whose window holds it),
    spread evenly over them. With `messages`, also who sends how much to whom (`flows`).
    What a destination core holds is what the source core beside it holds (`beside`: `shape`
    places them).
    """
    if isinstance(sources, View):
        view = sources

        def needed(rows: slice) -> IntArray:
            return flat_sources(dst, src.shape, view, rows)

        injective = _is_injective(view, dst.shape, src.shape)
    else:
        table = np.reshape(np.asarray(sources, dtype=np.int64), -1)

        def needed(rows: slice) -> IntArray:
            at = flat_sources(dst, dst.shape, None, rows)
            return np.where(at >= 0, table[np.maximum(at, 0)], -1)

        injective = False
    holding = _Holding.of(src)
    near = beside(src, dst, shape)
    ncores = max(src.cores, dst.cores)
    received, copied = np.zeros(ncores), np.zeros(ncores)
    flows: list[Flows] = []
    per_chunk = max(1, CHUNK_ELEMENTS // max(dst.local_elements(), 1))
    for first in range(0, dst.cores, per_chunk):
        rows = slice(first, min(first + per_chunk, dst.cores))
        need = needed(rows)
        if not injective:
            need = _distinct_per_row(need)
        valid = need >= 0
        core = np.arange(rows.start, rows.stop)
        holds, buckets = holding.locate(need, valid, near[rows])
        missing = valid & ~holds
        received[rows] = missing.sum(axis=1)
        copied[rows] = holds.sum(axis=1)
        holding.request(buckets, missing)
        if messages:
            flows.append(holding.flows(core, buckets, missing))
    sent = np.zeros(ncores)
    sent[: src.cores] = holding.sent()
    in_place = isinstance(sources, View) and _in_place(src, dst, sources, near, received)
    if in_place:
        copied[:] = 0.0
    return ViewMove(sent, received, copied, in_place, _joined(flows) if messages else None,
                    CorePlaces.of(src, dst, shape))


def _in_place(src: Layout, dst: Layout, view: View, near: IntArray, received: Array) -> bool:
    """Whether every core's destination buffer of the `view` is its source buffer read in
    another shape: nothing received, and element by element the same source index at the same
    place on the same core (`near`: `beside`)."""
    return (
        not received.any()
        and src.local_elements() == dst.local_elements()
        and src.cores == dst.cores
        and bool(np.array_equal(near, np.arange(dst.cores)))
        and bool(np.array_equal(flat_sources(src, src.shape, None),
                                flat_sources(dst, src.shape, view)))
    )


def _joined(parts: list[Flows]) -> Flows:
    """The flows of all `parts` (of distinct pairs)."""
    return Flows(
        np.concatenate([p.src for p in parts]).astype(np.int64),
        np.concatenate([p.dst for p in parts]).astype(np.int64),
        np.concatenate([p.elements for p in parts]).astype(np.float64),
    )


class _Holding(ABC):
    """Which cores of a source layout hold which elements, and the requests made to them
    (`element_move`), counted per bucket: a source tile (plain layouts) or an element
    (rotating ones, whose windows are not tiles)."""

    def __init__(self, buckets: int) -> None:
        self.requests = np.zeros(buckets)

    @staticmethod
    def of(src: Layout) -> _Holding:
        return _TileHolding(src) if src.rotating is None else _ElementHolding(src)

    @abstractmethod
    def locate(self, need: IntArray, valid: Array, core: IntArray) -> tuple[Array, IntArray]:
        """Whether each destination core holds each needed element (`core`, one per row: the
        source core beside it, -1 for none), and the element's request bucket."""

    def request(self, buckets: IntArray, missing: Array) -> None:
        self.requests += np.bincount(buckets[missing], minlength=len(self.requests))

    @abstractmethod
    def sent(self) -> Array:
        """Elements each source core sends: its even share of the requests it can serve."""

    @abstractmethod
    def flows(self, core: IntArray, buckets: IntArray, missing: Array) -> Flows:
        """The flows serving the `missing` elements of destination cores `core` (one per
        row), of request `buckets`: each element's even share from each core holding it."""


class _TileHolding(_Holding):
    def __init__(self, src: Layout) -> None:
        self.src = src
        self.split = [
            (d, a, t)
            for d, (a, t) in enumerate(zip(src.axes, src.tile, strict=True))
            if a is not None
        ]
        self.coords = grid_coords(src.grid)
        super().__init__(max(prod(src.grid[a] for _, a, _ in self.split), 1))

    def locate(self, need: IntArray, valid: Array, core: IntArray) -> tuple[Array, IntArray]:
        src = self.src
        element = np.unravel_index(np.where(valid, need, 0), src.shape) if src.shape else ()
        holds = valid & ((core >= 0) & (core < src.cores))[:, None]
        tile_id = np.zeros(need.shape, dtype=np.int64)
        at = np.minimum(np.maximum(core, 0), src.cores - 1)
        for d, a, t in self.split:
            block = element[d] // t
            holds &= block == self.coords[at, a][:, None]
            tile_id = tile_id * src.grid[a] + block
        return holds, tile_id

    def own_tile(self) -> IntArray:
        """The request bucket (tile) of each source core."""
        own_tile = np.zeros(self.src.cores, dtype=np.int64)
        for _, a, _ in self.split:
            own_tile = own_tile * self.src.grid[a] + self.coords[:, a]
        return own_tile

    def sent(self) -> Array:
        own_tile = self.own_tile()
        replicas = self.src.cores // len(self.requests)
        return self.requests[own_tile] / replicas

    def flows(self, core: IntArray, buckets: IntArray, missing: Array) -> Flows:
        tiles = len(self.requests)
        rows = np.broadcast_to(core[:, None], missing.shape)[missing]
        pairs, count = np.unique(rows * tiles + buckets[missing], return_counts=True)
        dst, tile = np.divmod(pairs, tiles)
        k, holder = _members_of(self.own_tile(), tile)
        replicas = self.src.cores // tiles
        return Flows(holder, dst[k], count[k] / replicas)


class _ElementHolding(_Holding):
    def __init__(self, src: Layout) -> None:
        self.cores = src.cores
        self.held = flat_sources(src, src.shape, None)
        self.stride = max(prod(src.shape), 1) + 1
        own = np.arange(src.cores)[:, None] * self.stride + self.held
        self.keys = np.sort(own[self.held >= 0])
        super().__init__(self.stride - 1)

    def locate(self, need: IntArray, valid: Array, core: IntArray) -> tuple[Array, IntArray]:
        keys = core[:, None] * self.stride + need
        holds = valid & ((core >= 0) & (core < self.cores))[:, None] & np.isin(keys, self.keys)
        return holds, need

    def sent(self) -> Array:
        held = self.held
        holders = np.bincount(held[held >= 0], minlength=len(self.requests))
        share = np.divide(
            self.requests, holders, out=np.zeros(len(self.requests)), where=holders > 0
        )
        return np.where(held >= 0, share[np.maximum(held, 0)], 0.0).sum(axis=1)

    def flows(self, core: IntArray, buckets: IntArray, missing: Array) -> Flows:
        held = self.held
        at = held >= 0
        holder_core = np.broadcast_to(np.arange(self.cores)[:, None], held.shape)[at]
        holders = np.bincount(held[at], minlength=len(self.requests))
        rows = np.broadcast_to(core[:, None], missing.shape)[missing]
        wanted = buckets[missing]
        k, occurrence = _members_of(held[at], wanted)
        pairs, pair_of = np.unique(
            rows[k] * self.cores + holder_core[occurrence], return_inverse=True
        )
        elements = np.bincount(np.reshape(pair_of, -1), weights=1.0 / holders[wanted[k]])
        dst, src = np.divmod(pairs, self.cores)
        return Flows(src, dst, elements)


# --------------------------------------------------------------------------------------------
# View moves counted per group of dims, not per element
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _DimGroup:
    """One independent part of a view: the source dims `source` whose indices are computed
    from the result dims `result` alone (by `view.map`'s results `source`), and the guard
    results `guards` that read only `result`. A view's groups partition its result dims,
    source dims and guard results."""

    result: tuple[int, ...]
    source: tuple[int, ...]
    guards: tuple[int, ...]


def _dim_groups(view: View, rank: int) -> list[_DimGroup]:
    """The connected parts of `view` (result dims joined when one map or guard result reads
    them together; a result reading no dim, a constant, is a part of its own)."""
    root = list(range(rank))

    def find(d: int) -> int:
        while root[d] != d:
            d = root[d]
        return d

    guard = view.guard.results if view.guard is not None else ()
    reads = [sorted(e.used_dims()) for e in (*view.map.results, *guard)]
    for dims in reads:
        for d in dims[1:]:
            root[find(d)] = find(dims[0])
    parts: dict[object, tuple[list[int], list[int], list[int]]] = {}
    for d in range(rank):
        parts.setdefault(find(d), ([], [], []))[0].append(d)
    for k, dims in enumerate(reads):
        key: object = find(dims[0]) if dims else ("constant", k)
        is_source = k < len(view.map.results)
        parts.setdefault(key, ([], [], []))[1 if is_source else 2].append(
            k if is_source else k - len(view.map.results))
    return [_DimGroup(tuple(r), tuple(s), tuple(g)) for r, s, g in parts.values()]


def _keyed_indices(local: list[IntArray], dims: Sequence[int], cores: int
                   ) -> tuple[IntArray, list[IntArray]]:
    """A layout's cores grouped by the logical indices they hold along `dims` (`local`: its
    `local_indices`): each core's key, and per dim the `(keys, 1, .., extent, .., 1)` open
    mesh of each key's indices (-1: none)."""
    if not dims:
        return np.zeros(cores, dtype=np.int64), []
    joined = np.concatenate([local[d] for d in dims], axis=1)
    uniq, inverse = np.unique(joined, axis=0, return_inverse=True)
    bounds = np.cumsum([local[d].shape[1] for d in dims])[:-1]
    parts = np.split(uniq, bounds, axis=1)
    mesh: list[IntArray] = []
    for n, part in enumerate(parts):
        shape = [len(uniq)] + [1] * len(parts)
        shape[n + 1] = part.shape[1]
        mesh.append(np.reshape(part, shape))
    return np.reshape(inverse, -1).astype(np.int64), mesh


@dataclass(frozen=True)
class _Sets:
    """`rows` sets of integers in [0, columns): the distinct (row, value) entries, sorted."""

    row: IntArray
    value: IntArray
    rows: int
    columns: int

    @staticmethod
    def of(flat: IntArray, columns: int) -> _Sets:
        """Row r: the entries >= 0 of `flat[r]`."""
        rows = np.broadcast_to(np.arange(len(flat))[:, None], flat.shape)[flat >= 0]
        cells = np.unique(rows * columns + flat[flat >= 0])
        row, value = np.divmod(cells, columns)
        return _Sets(row, value, len(flat), columns)

    def sizes(self) -> IntArray:
        return np.bincount(self.row, minlength=self.rows)

    def overlaps(self, other: _Sets) -> IntArray:
        """`(rows, other.rows)`: the size of every intersection of a row with one of
        `other`'s (the entries of equal value joined)."""
        order = np.argsort(other.value, kind="stable")
        values = other.value[order]
        first = np.searchsorted(values, self.value, side="left")
        count = np.searchsorted(values, self.value, side="right") - first
        mine = np.repeat(np.arange(len(self.value)), count)
        within = np.arange(len(mine)) - np.repeat(np.cumsum(count) - count, count)
        theirs = other.row[order[np.repeat(first, count) + within]]
        cells = self.row[mine] * other.rows + theirs
        counts: IntArray = np.bincount(cells, minlength=self.rows * other.rows)
        return np.reshape(counts, (self.rows, other.rows)).astype(np.int64)

    def intersections(self, other: _Sets, pairs: IntArray) -> _Sets:
        """Row k: row `pairs[k, 0]` of these sets intersected with row `pairs[k, 1]` of
        `other`'s (an empty set where that is -1)."""
        starts = np.searchsorted(self.row, np.arange(self.rows + 1))
        first, count = starts[pairs[:, 0]], np.diff(starts)[pairs[:, 0]]
        k = np.repeat(np.arange(len(pairs)), count)
        at = np.repeat(first, count) + np.arange(len(k)) - np.repeat(np.cumsum(count) - count,
                                                                      count)
        value = self.value[at]
        wanted: IntArray = pairs[k, 1] * self.columns + value
        theirs: IntArray = other.row * self.columns + other.value  # sorted by row, value
        found = np.asarray(np.searchsorted(theirs, wanted), dtype=np.int64)
        hit: Array = (pairs[k, 1] >= 0) & (found < len(theirs))
        hit[hit] = theirs[found[hit]] == wanted[hit]
        return _Sets(k[hit], value[hit], len(pairs), self.columns)


def _group_sets(
    view: View, group: _DimGroup, dst: tuple[Layout, list[IntArray]],
    src: tuple[Layout, list[IntArray]],
) -> tuple[IntArray, _Sets, IntArray, _Sets] | None:
    """For one group of `view` (the layouts with their `local_indices`): each destination
    core's key and, per key, the set of source indices (row-major over the group's source
    dims) its buffer reads; each source core's key and, per key, the set it holds. None: the
    view reads outside its source where its guard admits the element (left to the
    element-wise move, which reports it)."""
    sizes = tuple(src[0].shape[p] for p in group.source)
    columns = max(prod(sizes), 1)
    dst_key, dst_mesh = _keyed_indices(dst[1], group.result, dst[0].cores)
    mesh: list[IntArray] = [np.zeros((), dtype=np.int64)] * len(dst[0].shape)
    for d, index in zip(group.result, dst_mesh, strict=True):
        mesh[d] = index
    valid = _held(dst_mesh)
    if view.guard is not None:
        for g in group.guards:
            at = eval_expr(view.guard.results[g], mesh)
            valid = valid & (at >= 0) & (at < view.guard_shape[g])
    read = [eval_expr(view.map.results[p], mesh) for p in group.source]
    if any(np.any(valid & ((at < 0) | (at >= n))) for at, n in zip(read, sizes, strict=True)):
        return None
    src_key, src_mesh = _keyed_indices(src[1], group.source, src[0].cores)
    return (dst_key, _Sets.of(_flat_rows(read, sizes, valid), columns),
            src_key, _Sets.of(_flat_rows(src_mesh, sizes, _held(src_mesh)), columns))


def _held(mesh: list[IntArray]) -> Array:
    """Where every index of an open mesh is one (not -1)."""
    valid: Array = np.ones((1,), dtype=bool)
    for index in mesh:
        valid = valid & (index >= 0)
    return valid


def _flat_rows(index: list[IntArray], sizes: Sequence[int], valid: Array) -> IntArray:
    """`(keys, -1)`: the row-major position over dims of `sizes` of the broadcast `index`
    arrays (keys first), -1 where not `valid`."""
    flat = np.zeros((1,), dtype=np.int64)
    for at, size in zip(index, sizes, strict=True):
        flat = flat * size + at
    flat, valid = np.broadcast_arrays(flat, valid)
    return np.reshape(np.where(valid, flat, -1), (len(flat), -1))


@lru_cache(maxsize=MOVE_CACHE)
def _replicas(src: Layout) -> int | None:
    """How many of `src`'s cores hold each element of its tensor, when every element has as
    many (None: they differ, as a rotating layout's windows may make them, or the count is
    too costly to know). Per dim, the cut points of every core's intervals split the dim
    into segments each core holds whole or not at all; the holders of each cell of
    segments are a contraction of the cores' key counts."""
    if not src.shape:
        return src.cores
    keyed = _Keyed.of(held_intervals(src, grid_coords(src.grid)))
    covers: list[Array] = []
    for values, size in zip(keyed.values, src.shape, strict=True):
        cuts = np.unique(np.concatenate([[0, size], np.reshape(values, -1)]))
        cuts = cuts[cuts <= size]
        lo, hi = cuts[:-1], cuts[1:]
        inside = (values[:, :, None, 0] <= lo) & (hi <= values[:, :, None, 1])
        covers.append(np.transpose(inside.any(axis=1)).astype(np.float64))  # (segments, keys)
    if prod(keyed.grid) > DENSE_KEY_LIMIT or prod(len(c) for c in covers) > DENSE_KEY_LIMIT:
        return None
    count = keyed.totals(np.ones(src.cores))
    holders = _contract(count, covers, False)
    counts = np.unique(holders)
    return int(counts[0]) if len(counts) == 1 and counts[0] > 0 else None


def _factored_move(
    src: Layout, dst: Layout, view: View, messages: bool, shape: tuple[int, ...] | None
) -> ViewMove | None:
    """`_element_move` of a view counted per group of dims (`_dim_groups`), for a source
    whose elements all have as many holders (`_replicas`): what a destination core reads,
    holds and lacks, and what a source core holds, are products over the groups of sets
    small enough to enumerate, so every count is a product of per-group overlaps (as
    `relayout_traffic`'s are of per-dim ones). The same numbers as element by element;
    None where this does not apply."""
    replicas = _replicas(src)
    if replicas is None:
        return None
    near = beside(src, dst, shape)
    groups = _dim_groups(view, len(dst.shape))
    dst_local = (dst, local_indices(dst, grid_coords(dst.grid)))
    src_local = (src, local_indices(src, grid_coords(src.grid)))
    need_keys: list[IntArray] = []
    kept_keys: list[IntArray] = []
    held_keys: list[IntArray] = []
    need_tables: list[IntArray] = []
    kept_tables: list[IntArray] = []
    need_sizes, kept_sizes = np.ones(dst.cores), np.ones(dst.cores)
    for group in groups:
        sets = _group_sets(view, group, dst_local, src_local)
        if sets is None:
            return None
        dst_key, need, src_key, held = sets
        near_key = np.where(near >= 0, src_key[np.maximum(near, 0)], -1)
        pairs, kept_key = np.unique(np.stack([dst_key, near_key], axis=1), axis=0,
                                    return_inverse=True)
        kept = need.intersections(held, pairs)
        need_tables.append(need.overlaps(held))
        kept_tables.append(kept.overlaps(held))
        need_sizes *= need.sizes()[dst_key]
        kept_sizes *= kept.sizes()[np.reshape(kept_key, -1)]
        need_keys.append(dst_key)
        kept_keys.append(np.reshape(kept_key, -1).astype(np.int64))
        held_keys.append(src_key)
    d, s = _overlapping_pairs(need_keys, held_keys, need_tables)
    share = (_pair_overlaps(need_tables, need_keys, held_keys, d, s)
             - _pair_overlaps(kept_tables, kept_keys, held_keys, d, s))
    moved = share > 0
    d, s, flow = d[moved], s[moved], share[moved] / replicas
    ncores = max(src.cores, dst.cores)
    sent, received, copied = np.zeros(ncores), np.zeros(ncores), np.zeros(ncores)
    sent[: src.cores] = np.bincount(s, weights=flow, minlength=src.cores)
    received[: dst.cores] = need_sizes - kept_sizes
    copied[: dst.cores] = kept_sizes
    in_place = _in_place(src, dst, view, near, received)
    if in_place:
        copied[:] = 0.0
    flows = Flows(s, d, flow) if messages else None
    return ViewMove(sent, received, copied, in_place, flows, CorePlaces.of(src, dst, shape))


# --------------------------------------------------------------------------------------------
# Gathers of runtime ids
# --------------------------------------------------------------------------------------------


def gather_traffic(
    table: Layout,
    ids: Layout,
    dst: Layout,
    index: Array,
    kind: GatherKind,
    table_bytes: int,
    ids_bytes: int,
    messages: bool = False,
    shape: tuple[int, ...] | None = None,
) -> tuple[Traffic, int]:
    """The bytes each core sends and receives (with `messages`, who sends how much to whom),
    and the most elements one core copies into place, of the gather `kind` of `index` (ids
    in [0, size)) from `table` into `dst` (a GatherND reads q ids per element): the table's
    rows and the ids move in one exchange (on the chip's cores: `shape` places them)."""
    table_at, ids_at = kind.sources(table.shape, index)
    rows = element_move(table, dst, table_at, messages, shape)
    traffic = rows.traffic(table_bytes)
    for at in ids_at:
        traffic = traffic + element_move(ids, dst, at, messages, shape).traffic(ids_bytes)
    return traffic, int(rows.copied.max(initial=0.0))
