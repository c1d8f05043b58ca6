"""Layout geometry (`t10.common.exchange`): tiles, rotating windows and relayout traffic, on cases
small enough to check by hand."""

from __future__ import annotations

from math import prod

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common import exchange
from t10.common.exchange import (
    collect,
    distribute,
    grid_coords,
    held_intervals,
    linear_ids,
    relayout_traffic,
    window_starts,
)
from t10.common.plans import Layout, Rotating
from t10.common.view_maps import View

PADDED = Layout(shape=(5, 7), grid=(2, 2), axes=(0, 1), tile=(3, 4))

# A[4, 8] split on grid axis 0, its 8 columns cut into 4 chunks of 2 rotating in rings of 2
# along grid axis 1: window W = 2 chunks, 3 slots; o(x) = (2*(x1 % 2) + 2*(x0 % 2)) % 4.
ROTATING = Layout(
    shape=(4, 8),
    grid=(2, 2, 1),
    axes=(0, None),
    tile=(2, 8),
    rotating=Rotating(dim=1, ring_axis=1, pieces=2, steps=4, skew=((1, 2, 2), (0, 2, 2))),
)


def test_grid_coords_row_major_and_zero_outside() -> None:
    coords = grid_coords((2, 3), 8)
    assert coords.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [0, 0], [0, 0]]
    assert linear_ids((2, 3), coords[:6]).tolist() == list(range(6))


def test_padded_tiles_hold_zeros_past_the_tensor() -> None:
    t = np.arange(35, dtype=np.float32).reshape(5, 7)
    tiles = distribute(PADDED, t)
    assert tiles.shape == (4, 3, 4)
    np.testing.assert_array_equal(tiles[0], t[0:3, 0:4])
    np.testing.assert_array_equal(tiles[1, :, :3], t[0:3, 4:7])
    assert not tiles[1, :, 3].any()
    np.testing.assert_array_equal(tiles[3, :2, :3], t[3:5, 4:7])
    assert not tiles[3, 2].any() and not tiles[3, :, 3].any()
    np.testing.assert_array_equal(collect(PADDED, tiles), t)


def test_replicated_layout() -> None:
    lay = Layout(shape=(4,), grid=(2, 3), axes=(0,), tile=(2,))
    tiles = distribute(lay, np.arange(4.0))
    assert tiles[:, 0].tolist() == [0, 0, 0, 2, 2, 2]


def test_rotating_window_slots() -> None:
    assert window_starts(ROTATING, grid_coords(ROTATING.grid)).tolist() == [0, 2, 2, 0]
    t = np.arange(32, dtype=np.float32).reshape(4, 8)
    tiles = distribute(ROTATING, t)
    assert tiles.shape == (4, 2, 6)
    # core 1 = (0, 1, 0): chunks 2, 3 (columns 4:6, 6:8) in slots 2 and 0; slot 1 free
    np.testing.assert_array_equal(tiles[1, 0], [6, 7, 0, 0, 4, 5])
    # core 0: chunks 0, 1 in slots 0, 1
    np.testing.assert_array_equal(tiles[0, 1], [8, 9, 10, 11, 0, 0])
    np.testing.assert_array_equal(collect(ROTATING, tiles), t)


def test_rotating_window_wraps_around_the_tile() -> None:
    lay = Layout(
        shape=(6,),
        grid=(3,),
        axes=(None,),
        tile=(6,),
        rotating=Rotating(dim=0, ring_axis=0, pieces=3, steps=3, skew=((0, 3, 1),)),
    )
    # one chunk of 2 per core (window 1), so no wrap; check intervals per core
    (iv,) = held_intervals(lay, grid_coords(lay.grid))
    assert iv[:, 0].tolist() == [[0, 2], [2, 4], [4, 6]]
    wide = Layout(
        shape=(8,),
        grid=(2, 2),
        axes=(None,),
        tile=(8,),
        rotating=Rotating(dim=0, ring_axis=1, pieces=2, steps=4, skew=((1, 2, 2), (0, 2, 1))),
    )
    # o(x) = (2*x1 + x0) % 4: core 3 = (1, 1) starts at chunk 3 and wraps to chunk 0
    (iv,) = held_intervals(wide, grid_coords(wide.grid))
    assert iv[3].tolist() == [[6, 8], [0, 2]]
    # chunk u is stored in slot u % 3: u = 3 (data chunk 3) in slot 0, u = 4 (chunk 0) in 1
    tiles = distribute(wide, np.arange(8.0))
    np.testing.assert_array_equal(tiles[3], [6, 7, 0, 1, 0, 0])
    np.testing.assert_array_equal(collect(wide, tiles), np.arange(8.0))


def test_relayout_traffic_by_hand() -> None:
    """5x7 from 2x2 tiles of 3x4 to 4 row blocks of 2 (the last block is pure padding).

    dst 0 needs rows 0-1 (14), holds rows 0-1 x cols 0-3 (8) -> receives 6 from src 1;
    dst 1 needs rows 2-3 (14), holds row 2 x cols 4-6 (3) -> 11: src 0 sends row 2 x cols
    0-3 (4), src 2 row 3 x cols 0-3 (4), src 3 row 3 x cols 4-6 (3);
    dst 2 needs row 4 (7), holds row 4 x cols 0-3 (4) -> 3 from src 3.
    """
    rows = Layout(shape=(5, 7), grid=(4,), axes=(0, None), tile=(2, 7))
    sent, received = relayout_traffic(PADDED, rows)
    assert received.tolist() == [6, 11, 3, 0]
    assert sent.tolist() == [4, 6, 4, 6]


def test_relayout_traffic_spreads_over_replicas() -> None:
    replicated = Layout(shape=(4,), grid=(2,), axes=(None,), tile=(4,))
    split = Layout(shape=(4,), grid=(4,), axes=(0,), tile=(1,))
    sent, received = relayout_traffic(replicated, split)
    # dst 0 and 1 already hold their element; dst 2 and 3 get half from each replica
    assert received.tolist() == [0, 0, 1, 1]
    assert sent.tolist() == [1, 1, 0, 0]
    sent, received = relayout_traffic(split, replicated)
    # dst 0 gets elements 1, 2, 3 from src 1, 2, 3; dst 1 gets 0, 2, 3
    assert received.tolist() == [3, 3, 0, 0]
    assert sent.tolist() == [1, 1, 2, 2]


def test_relayout_traffic_from_a_rotating_layout() -> None:
    whole = Layout(shape=(4, 8), grid=(2,), axes=(0, None), tile=(2, 8))
    sent, received = relayout_traffic(ROTATING, whole)
    # dst 0 = rows 0-1 holds columns 0:4 as ROTATING core 0 -> needs 8 more, from core 1
    # dst 1 = rows 2-3 as ROTATING core 1 holds rows 0-1 -> needs all 16, from cores 2 and 3
    assert received.tolist() == [8, 16, 0, 0]
    assert sent.tolist() == [0, 8, 8, 8]


PAIRS = [
    (PADDED, Layout(shape=(5, 7), grid=(4,), axes=(0, None), tile=(2, 7))),
    (
        Layout(shape=(12, 10), grid=(4, 3), axes=(0, 1), tile=(3, 4)),
        Layout(shape=(12, 10), grid=(2, 6), axes=(1, None), tile=(5, 12)),
    ),
    (ROTATING, Layout(shape=(4, 8), grid=(2, 2), axes=(None, 1), tile=(4, 4))),
    (Layout(shape=(4, 8), grid=(8,), axes=(None, 0), tile=(4, 1)), ROTATING),
]


@pytest.mark.parametrize(("src", "dst"), PAIRS)
def test_relayout_traffic_keyed_equals_pairwise(
    src: Layout, dst: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyed = relayout_traffic(src, dst)
    monkeypatch.setattr(exchange, "DENSE_KEY_LIMIT", 0)
    monkeypatch.setattr(exchange, "PAIR_BUDGET", 7)  # several blocks of dst cores
    pairwise = relayout_traffic(src, dst)
    for a, b in zip(keyed, pairwise, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-9)
    assert keyed[0].sum() == pytest.approx(keyed[1].sum())


@settings(max_examples=60, deadline=None)
@given(st.permutations(range(3)), st.lists(st.integers(0, 2), min_size=3, max_size=3),
       st.lists(st.integers(1, 4), min_size=3, max_size=3), st.booleans())
def test_a_shifted_permutation_is_injective_without_counting(
    perm: list[int], shifts: list[int], result: list[int], padded: bool
) -> None:
    """A view whose map permutes its dims and shifts them (a Concat's padded input, a
    transpose) reads no source element twice: the shortcut agrees with the count."""
    dims = [AffineExpr.dimension(p) + s for p, s in zip(perm, shifts, strict=True)]
    amap = AffineMap(3, 0, tuple(dims))
    source = tuple(result[p] + 2 for p in perm)  # every shifted index inside, padded or not
    view = View(amap, amap if padded else None, source if padded else ())
    assert exchange._shifted_permutation(amap)
    numbered = np.reshape(np.arange(1, prod(source) + 1), source)
    reads = np.bincount(np.reshape(view.gather(numbered, tuple(result)), -1))
    assert reads[1:].max(initial=0) <= 1
    assert exchange._is_injective(view, result, source)
    broadcast = AffineMap(3, 0, (AffineExpr.dimension(0), AffineExpr.dimension(0),
                                 AffineExpr.dimension(2)))
    assert not exchange._shifted_permutation(broadcast)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=3, max_size=3),
       st.lists(st.integers(0, 2), min_size=3, max_size=3),
       st.lists(st.sampled_from([0, 1, 2, 3, 4, 8]), min_size=3, max_size=3),
       st.one_of(st.none(), st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(1, 2))))
def test_a_mixed_radix_view_reads_no_element_twice(
    result: list[int], where: list[int], coefficients: list[int],
    guard: tuple[int, int, int] | None,
) -> None:
    """Whenever the shortcut calls a linear view injective (each source index a mixed-radix
    number of its own dims; a guard may pin a dim), counting the reads agrees."""
    dims = [AffineExpr.dimension(d) for d in range(3)]
    exprs: list[AffineExpr] = []
    for k in range(3):
        expr: AffineExpr = AffineExpr.constant(0)
        for d in range(3):
            if where[d] == k:
                expr = expr + dims[d] * coefficients[d]
        exprs.append(expr)
    amap = AffineMap(3, 0, tuple(exprs))
    source = tuple(
        1 + sum(coefficients[d] * (result[d] - 1) for d in range(3) if where[d] == k)
        for k in range(3)
    )
    if guard is None:
        view = View(amap)
    else:  # dim `d` admitted where d - lo lies in [0, width)
        d, lo, width = guard
        view = View(amap, AffineMap(3, 0, (dims[d] - lo,)), (width,))
    if not exchange._mixed_radix(view, result):
        return
    numbered = np.reshape(np.arange(1, prod(source) + 1), source)
    reads = np.bincount(np.reshape(view.gather(numbered, tuple(result)), -1))
    assert reads[1:].max(initial=0) <= 1, (amap, result, guard)
