"""Lower bounds of an operator's and a model's cycles on a chip.

`operator_bound(chip, expr)` is at most the estimate (which the simulator's cycles equal) of
every plan of `expr` whose buffers fit a core's SRAM: every plan the search may choose and
the simulator can run. An operator's plan starts from its own input layouts, replicated or
not (moving data into them is the layout transition's cost), so the only exchange a plan
cannot avoid is the one its SRAM or its core count forces. For a plan on P' <= P cores
(P = the chip's cores):

- compute: the busiest core does at least ⌈V/P'⌉ of the V loop points (padding only adds),
  at the kernel's best rate with its per-call costs paid at least once
  (`costs.matmul_cycles_floor`, `costs.elementwise_cycles`), plus a fused epilogue over at
  least ⌈output/P'⌉ elements;
- exchange: a contraction whose loop dims are each read by two of A, B and C touches at least
  3·W^(2/3) elements on a core doing W multiply-adds (Loomis-Whitney / HBL: W² ≤ |A|·|B|·|C|,
  batch dims included), of which it holds at most SRAM / elem_bytes at the start; the rest it
  receives, at `elem_bytes` or more each (Ballard et al. 2012, memory-dependent form). A
  plan that splits a reduction dim receives at least one partial element (an all-reduce or
  a rotating output); costed at the core's port alone (`costs.exchange_floor`), which a
  routing topology's links and latency only add to;
- sync: one per superstep; a plan that exchanges has at least two (a shift follows a step
  that is not the last; an all-reduce adds two supersteps).

Without a split reduction dim a plan uses at most Q = ∏ parallel loop sizes cores usefully,
so the bound is the lesser of that plan on min(P, Q) cores and a split one on P cores.

A model's bound is the sum of its operators'; on a chip with off-chip memory, at least the
larger of that and the time its memory takes to send the host tensors (weights and inputs)
the cores' SRAM cannot hold (all of them less the whole SRAM, each read once:
`offchip_bound`), as the loads run beside the operators (the roofline of compute, exchange
and off-chip bytes).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from math import prod

from t10.common import costs
from t10.common.chip_spec import ChipSpec
from t10.common.tensor_expr import ExprKind, TensorExpr

__all__ = ["Bound", "model_bound", "offchip_bound", "operator_bound"]


@dataclass(frozen=True)
class Bound:
    """A lower bound of an operator's cycles, by part (as `t10.common.plans.Estimate`)."""

    compute_cycles: int
    exchange_cycles: int
    sync_cycles: int
    cores: int
    """The core count the bound is attained at."""

    @property
    def cycles(self) -> int:
        return self.compute_cycles + self.exchange_cycles + self.sync_cycles


def operator_bound(chip: ChipSpec, expr: TensorExpr) -> Bound:
    """The operator's lower bound on `chip` (module docstring)."""
    parallel = prod(s for s, par in zip(expr.loop_sizes, expr.parallel, strict=True) if par)
    whole = _bound(chip, expr, min(chip.cores, parallel), split=False)
    if not expr.reduction_dims or parallel >= chip.cores:
        return whole
    return min(whole, _bound(chip, expr, chip.cores, split=True), key=lambda b: b.cycles)


def model_bound(chip: ChipSpec, exprs: Iterable[TensorExpr], host_bytes: int = 0) -> int:
    """The sum of the operators' bounds (a layout transition or a gather is bounded by 0),
    or the off-chip bound of `host_bytes` of host tensors if larger (module docstring)."""
    return max(sum(operator_bound(chip, e).cycles for e in exprs),
               offchip_bound(chip, host_bytes))


def offchip_bound(chip: ChipSpec, host_bytes: int) -> int:
    """Cycles the chip's off-chip memory takes at least to send the part of `host_bytes`
    (weights and inputs) that the cores' SRAM cannot hold (0 on a chip without off-chip
    memory)."""
    if chip.offchip is None:
        return 0
    streamed = max(0, host_bytes - chip.total_sram_bytes)
    return math.ceil(streamed / chip.offchip.bytes_per_cycle)


def _bound(chip: ChipSpec, expr: TensorExpr, cores: int, split: bool) -> Bound:
    points = -(-prod(expr.loop_sizes) // cores)
    compute = _compute(chip, expr, points)
    if expr.epilogue is not None:
        epi = expr.epilogue
        out = -(-prod(expr.output.shape) // cores)
        compute += costs.elementwise_cycles(chip, out, epi.relu_like, epi.body_ops)
    words = _received(chip, expr, points) if expr.kind is ExprKind.CONTRACTION else 0
    if split:  # an all-reduce or a rotating output receives at least one partial sum
        words = max(words, 1)
    exchange = costs.exchange_floor(chip, words * expr.elem_bytes)
    syncs = 2 if words else 1
    return Bound(compute, exchange, syncs * costs.sync_cycles(chip), cores)


def _compute(chip: ChipSpec, expr: TensorExpr, points: int) -> int:
    """Kernel cycles of the busiest core, which computes at least `points` loop points."""
    if expr.kind is ExprKind.CONTRACTION:
        _, m, k, n = expr.matmul_dims(expr.loop_sizes)
        return costs.matmul_cycles_floor(chip, points, m, k, n, expr.elem_bytes)
    return costs.elementwise_cycles(chip, points, expr.relu_like, expr.body_ops)


def _received(chip: ChipSpec, expr: TensorExpr, macs: int) -> int:
    """Elements a core doing `macs` multiply-adds must receive: at least ⌈3·macs^(2/3)⌉
    touched, at most SRAM / elem_bytes held (0 unless every loop dim is read by two of the
    operands A, B, C, the condition of the HBL exponents (1/2, 1/2, 1/2))."""
    a, b = expr.inputs[:2]
    readers = (a.dims, b.dims, expr.output.dims)
    if any(sum(d in r for r in readers) < 2 for d in range(expr.rank)):
        return 0
    touched = _ceil_cbrt(27 * macs * macs)
    return max(0, touched - chip.sram_bytes_per_core // expr.elem_bytes)


def _ceil_cbrt(x: int) -> int:
    """The least integer t with t³ >= x (x >= 0)."""
    t = round(x ** (1 / 3))
    while t**3 < x:
        t += 1
    while t > 0 and (t - 1) ** 3 >= x:
        t -= 1
    return t
