"""Per-core cost functions (in cycles) of a `ChipSpec`, shared by the planner and the simulator.

Source of the formulas and constants: the per-core cost model fitted on a real Graphcore IPU
MK2 and published in the T10 authors' public artifacts (platformxlab/elk, yiqiliu2/voxelsim);
the chip file carries the constants (`docs/chips.md`), this module only combines them.

All functions are pure and return whole cycles: a fractional total is rounded **up**.  The
arithmetic is exact (decimal chip constants such as 0.28 are taken as the decimal they spell,
not as the nearest binary float), so an exchange of 100 bytes costs 28 cycles, not 29.

Each cost term is written once, here: `Affine` (an element-wise kernel, the exchange; from
`t10.common.exact`, which the interconnect's topologies share) and `MatmulKernel` hold a
chip's constants scaled to integers, and the functions below, the plan estimator
(`t10.common.estimator`), the moves' estimates and the simulator all cost through them.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from math import lcm

from t10.common.chip_spec import ChipSpec, MatmulCosts
from t10.common.exact import Affine
from t10.common.exact import exact as _exact
from t10.common.topologies.base import FloatArray
from t10.common.traffic import Traffic
from t10.errors import T10Error

__all__ = [
    "Affine",
    "MatmulKernel",
    "elementwise_cycles",
    "elementwise_rate",
    "exchange_rate",
    "matmul_kernel",
    "exchange_cycles",
    "exchange_cycles_and_loads",
    "exchange_floor",
    "kernel_rows_cols",
    "matmul_cycles",
    "matmul_cycles_floor",
    "peak_flops_per_cycle",
    "sync_cycles",
]


def _count(name: str, v: object, *, positive: bool = False) -> int:
    """`v` as a count, refusing a non-integer (callers may be untyped) or a too small one."""
    if isinstance(v, bool) or not isinstance(v, int) or v < int(positive):
        kind = "positive" if positive else "non-negative"
        raise ValueError(f"{name} must be a {kind} integer, got {v!r}")
    return v


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@lru_cache(maxsize=256)
def elementwise_rate(chip: ChipSpec, relu_like: bool = False, ops: int = 1) -> Affine:
    """The cost of an element-wise kernel of `ops` arithmetic ops per element, per element
    (`elementwise_cycles`; it costs `fixed_cycles` at zero elements, which callers that run no
    kernel then skip)."""
    c = chip.relu if relu_like else chip.elementwise
    return Affine(_exact(c.cycles_per_element) * ops, c.fixed_cycles)


@lru_cache(maxsize=64)
def exchange_rate(chip: ChipSpec) -> Affine:
    """The cycles of a uniform exchange (every core sends and receives n bytes) on an
    all-to-all chip, for n: `exchange_cycles(chip, Traffic.uniform(cores, n))` there, as a
    rate the plan search's estimator applies without building a `Traffic` (its fast path; a
    test holds the two equal). On a chip whose topology routes messages, the exchange's cost
    depends on who sends to whom: `t10.common.collectives` costs the shifts and all-reduces,
    and `exchange_floor` is the bound that holds on every topology."""
    return Affine(chip.exchange_cycles_per_byte)


def exchange_floor(chip: ChipSpec, nbytes: int) -> int:
    """The fewest cycles any exchange on `chip` whose busiest core sends or receives `nbytes`
    bytes takes, whoever it talks to: that core's port time, ⌈nbytes·exchange_cycles_per_byte⌉
    (a routing topology adds its links and latency; on an all-to-all chip it is the
    exchange's cost). For lower bounds, which cannot know the messages."""
    return exchange_rate(chip)(_count("nbytes", nbytes))


class MatmulKernel:
    """The matmul kernel's cost (`matmul_cycles`) for one element size, with the chip's
    constants scaled to integers."""

    def __init__(self, costs: MatmulCosts, elem_bytes: int) -> None:
        self.costs = costs
        self.elem_bytes = elem_bytes
        parts = [_exact(x) for x in (costs.inner_cycles, costs.k_cycles, costs.col_cycles,
                                     costs.fixed_cycles)]
        self.den = lcm(*(p.denominator for p in parts))
        self.inner, self.k, self.col, self.fixed = (int(p * self.den) for p in parts)

    def cycles(self, batch: int, m: int, k: int, n: int) -> int:
        """`matmul_cycles`: the product oriented by the chip's rule."""
        if batch == 0 or m == 0 or k == 0 or n == 0:
            return 0
        m, n = kernel_rows_cols(self.costs, m, n)
        return self.oriented(batch, m, k, n)

    def oriented(self, batch: int, m: int, k: int, n: int) -> int:
        """The cycles with m as the kernel's rows and n as its columns (sizes positive)."""
        c, eb = self.costs, self.elem_bytes
        rows = -(-m // c.row_block)
        kblocks = -(-(k * eb) // c.k_bytes_block)
        cols = -(-n // c.col_block)
        scaled = batch * (
            eb * self.inner * rows * kblocks * cols + self.k * kblocks * cols
            + self.col * cols + self.fixed
        )
        return -(-scaled // self.den)


@lru_cache(maxsize=64)
def matmul_kernel(chip: ChipSpec, elem_bytes: int) -> MatmulKernel:
    """The chip's `MatmulKernel` for `elem_bytes`-byte elements."""
    return MatmulKernel(chip.matmul, elem_bytes)


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
    return matmul_kernel(chip, elem_bytes).cycles(b, m, k, n)


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
    return 0 if n == 0 else elementwise_rate(chip, relu_like, ops)(n)


def exchange_cycles(chip: ChipSpec, traffic: Traffic) -> int:
    """Cycles of one exchange moving `traffic`: the one cost of the interconnect, which every
    exchange the simulator runs and the plan search estimates goes through.

    The chip's topology (`chip.topology`, `Topology.exchange_cycles`) costs it: on an
    all-to-all chip every core sends and receives at once, each at `exchange_cycles_per_byte`,
    so the exchange lasts `⌈busiest·exchange_cycles_per_byte⌉` cycles, where busiest is the
    most bytes one core sends or receives (IPU MK2: 0.28 cycles/byte); a mesh or a multi-chip
    system routes the exchange's messages over its links (`traffic.messages`; without them it
    refuses with a `T10Error`).  Moving nothing costs 0. Does not include the BSP sync
    (`sync_cycles`) that ends an exchange phase.
    """
    return chip.topology.exchange_cycles(traffic, chip.exchange_cycles_per_byte)


def exchange_cycles_and_loads(
    chip: ChipSpec, traffic: Traffic
) -> tuple[int, dict[str, FloatArray]]:
    """`exchange_cycles`, with the bytes every link carried (by link class; empty on an
    all-to-all chip), from one routing of the exchange: what the simulator records."""
    routed, loads = chip.topology.route(traffic)
    return routed.cycles(chip.topology.link_classes(), chip.exchange_cycles_per_byte), loads


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
