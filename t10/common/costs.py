"""Per-core cost functions (in cycles) of a `ChipSpec`, shared by the planner and the simulator.

Source of the formulas and constants: the per-core cost model fitted on a real Graphcore IPU
MK2 and published in the T10 authors' public artifacts (platformxlab/elk, yiqiliu2/voxelsim);
the chip file carries the constants (`docs/chips.md`), this module only combines them.

All functions are pure and return whole cycles: a fractional total is rounded **up**.  The
arithmetic is exact (decimal chip constants such as 0.28 are taken as the decimal they spell,
not as the nearest binary float), so `exchange_cycles(chip, 100)` is 28, not 29.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from t10.common.chip_spec import ChipSpec, MatmulCosts
from t10.errors import T10Error

__all__ = [
    "elementwise_cycles",
    "exchange_cycles",
    "kernel_rows_cols",
    "matmul_cycles",
    "matmul_cycles_floor",
    "peak_flops_per_cycle",
    "sync_cycles",
]


@lru_cache(maxsize=256)
def _exact(x: float) -> Fraction:
    """The decimal a chip constant spells (`repr` is the shortest round-tripping decimal)."""
    return Fraction(repr(x)) if isinstance(x, float) else Fraction(x)


def _count(name: str, v: object, *, positive: bool = False) -> int:
    """`v` as a count, refusing a non-integer (callers may be untyped) or a too small one."""
    if isinstance(v, bool) or not isinstance(v, int) or v < int(positive):
        kind = "positive" if positive else "non-negative"
        raise ValueError(f"{name} must be a {kind} integer, got {v!r}")
    return v


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def kernel_rows_cols(costs: MatmulCosts, m: int, n: int) -> tuple[int, int]:
    """The (rows, columns) the matmul kernel takes for an m×n product, by the chip's
    `orientation`: `lhs-rows` keeps (m, n); `larger-rows` takes the larger side as rows unless
    it is at most `col_block`, then the smaller (the T10 authors' rule for the IPU MK2).
    C = AB and Cᵀ = BᵀAᵀ are the same work and give the same numbers, so only the cost
    follows the orientation."""
    if costs.orientation == "lhs-rows":
        return m, n
    small, large = sorted((m, n))
    return (small, large) if large <= costs.col_block else (large, small)


def matmul_cycles(chip: ChipSpec, batch: int, m: int, k: int, n: int, elem_bytes: int) -> int:
    """Cycles of one core multiplying `batch` pairs of (m×k)·(k×n) matrices.

    The kernel first orients the product (`kernel_rows_cols`: m and n below are its rows and
    columns). With B = `elem_bytes` and the chip's `matmul` constants (IPU MK2 values in
    brackets):

        b·( B·inner·⌈m/row_block⌉·⌈k/(k_bytes_block/B)⌉·⌈n/col_block⌉      [inner=12, row_block=6]
            + k_cycles·⌈k/(k_bytes_block/B)⌉·⌈n/col_block⌉       [k_cycles=514, k_bytes_block=32]
            + col_cycles·⌈n/col_block⌉                           [col_cycles=113, col_block=16]
            + fixed_cycles )                                     [fixed_cycles=173]

    `⌈k/(k_bytes_block/B)⌉` is computed as `⌈k·B/k_bytes_block⌉` (the number of
    `k_bytes_block`-byte chunks of a row of A).  Any zero size (batch, m, k or n) costs 0.
    """
    b, m, k, n = (_count(x, v) for x, v in (("batch", batch), ("m", m), ("k", k), ("n", n)))
    _count("elem_bytes", elem_bytes, positive=True)
    if b == 0 or m == 0 or k == 0 or n == 0:
        return 0
    c = chip.matmul
    m, n = kernel_rows_cols(c, m, n)
    rows = _ceil_div(m, c.row_block)
    kblocks = _ceil_div(k * elem_bytes, c.k_bytes_block)
    cols = _ceil_div(n, c.col_block)
    per_batch = (
        elem_bytes * _exact(c.inner_cycles) * rows * kblocks * cols
        + _exact(c.k_cycles) * kblocks * cols
        + _exact(c.col_cycles) * cols
        + _exact(c.fixed_cycles)
    )
    return math.ceil(b * per_batch)


def matmul_cycles_floor(
    chip: ChipSpec, macs: int, m: int, k: int, n: int, elem_bytes: int
) -> int:
    """A lower bound of the summed `matmul_cycles` of kernel calls that do `macs` multiply-adds
    together, no batch entry of them on more than an m×k by k×n product.

    Each ceiling of `matmul_cycles` is at least its argument, and at least 1 per batch entry
    (`entries` ≥ ⌈macs/(m·k·n)⌉ of them): the inner term costs at least
    `B·inner·B/(row_block·k_bytes_block·col_block)` cycles per multiply-add (the chip's peak
    rate on the IPU MK2), the k-blocks × col-blocks number at least
    `macs·B/(k_bytes_block·col_block·rows)` and the col-blocks `macs/(col_block·rows·k)`,
    where the kernel's rows are at most max(m, n) in either orientation. Zero macs cost 0.
    """
    macs = _count("macs", macs)
    m, k, n = (_count(x, v, positive=True) for x, v in (("m", m), ("k", k), ("n", n)))
    b = _count("elem_bytes", elem_bytes, positive=True)
    if macs == 0:
        return 0
    c = chip.matmul
    rows = max(m, n)
    entries = _ceil_div(macs, m * k * n)
    per_mac = Fraction(b * b, c.row_block * c.k_bytes_block * c.col_block)
    inner = _exact(c.inner_cycles) * per_mac * macs
    kblocks = max(entries, Fraction(macs * b, c.k_bytes_block * c.col_block * rows))
    cols = max(entries, Fraction(macs, c.col_block * rows * k))
    return math.ceil(
        inner
        + _exact(c.k_cycles) * kblocks
        + _exact(c.col_cycles) * cols
        + _exact(c.fixed_cycles) * entries
    )


def elementwise_cycles(
    chip: ChipSpec, n_elements: int, relu_like: bool = False, ops: int = 1
) -> int:
    """Cycles of one core applying an element-wise kernel of `ops` arithmetic ops per element
    to `n_elements` elements.

    `⌈cycles_per_element·N·ops + fixed_cycles⌉` with the chip's `elementwise` constants
    (IPU MK2: 0.5·N·ops + 300), or its `relu` constants when `relu_like` (IPU MK2:
    0.5·N + 200). Zero elements cost 0.
    """
    n = _count("n_elements", n_elements)
    if n == 0:
        return 0
    c = chip.relu if relu_like else chip.elementwise
    return math.ceil(_exact(c.cycles_per_element) * n * ops + _exact(c.fixed_cycles))


def exchange_cycles(chip: ChipSpec, nbytes: int) -> int:
    """Cycles for one core to send or receive `nbytes` bytes over the on-chip exchange.

    `⌈nbytes·exchange_cycles_per_byte⌉` (IPU MK2: 0.28 cycles/byte).  Zero bytes cost 0.
    Does not include the BSP sync (`sync_cycles`) that ends an exchange phase.
    """
    nb = _count("nbytes", nbytes)
    return math.ceil(_exact(chip.exchange_cycles_per_byte) * nb)


def sync_cycles(chip: ChipSpec) -> int:
    """Cycles of one BSP synchronisation across the chip (IPU MK2: 118)."""
    return chip.sync_cycles


def peak_flops_per_cycle(chip: ChipSpec, precision: str = "fp32") -> float:
    """Peak FLOP per cycle of **one core** at `precision` (`"fp32"`/`"f32"`, `"fp16"`, ...).

    IPU MK2: fp32 32, fp16 128.  Multiply by `chip.cores` for the whole chip and by
    `chip.clock_hz` for FLOP/s.  An unknown precision raises `T10Error`.
    """
    # Untyped callers may pass a non-string.
    if not isinstance(precision, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise T10Error(f"precision must be a string such as 'fp32', got {precision!r}")
    return chip.peak_flops_per_cycle(precision)
