"""What moving a tensor between layouts costs: a relayout (`transition_estimate`, with a
cheap bound while plans are chosen, `quick_cycles`) and a gather of runtime ids
(`gather_estimate`, bounded by `gather_bound`), from the traffic the exchange geometry gives
(`t10.common.exchange`) and the chip's cost terms (`t10.common.costs`). Grid axes of size 1
do not change which core holds what, so layouts that differ only in such axes are the same
placement and need no exchange."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from t10.common import costs
from t10.common.chip_spec import ChipSpec
from t10.common.exchange import element_move, gather_traffic, relayout_exchange
from t10.common.gathers import GatherKind
from t10.common.plans import Estimate, Layout, host_layout, same_placement
from t10.common.view_maps import View

__all__ = [
    "IDS_BYTES",
    "GatherOperand",
    "GatherSpec",
    "gather_bound",
    "gather_estimate",
    "quick_cycles",
    "transition_estimate",
    "viewed_layout",
]


def quick_cycles(
    chip: ChipSpec, src: Layout, dst: Layout, elem_bytes: int, view: View | None = None
) -> int:
    """A quick ranking of a move used while searching (the move's estimate,
    `transition_estimate`, is what is recorded): every core receives its whole destination
    buffer (nothing when the placements agree), at its port's rate (`costs.exchange_floor`);
    through a view, every core also copies its whole buffer into place (all it does when the
    view leaves every element in place). It is neither bound of the move's exchange: it
    counts no sender, and a move into more copies than the source holds makes a holder send
    more than any core receives (the estimate then exceeds it, on an all-to-all chip too). It
    leaves out a routing chip's links and hops, which the messages decide (between chips they
    can cost many times the port time): the transition sweep ranks moves there by their
    estimate instead."""
    copy = 0
    if view is not None:
        copy = costs.elementwise_cycles(chip, dst.local_elements())
        viewed = viewed_layout(src, view, dst.shape)
        if viewed is not None and same_placement(viewed, dst):
            return copy + costs.sync_cycles(chip)
    elif same_placement(src, dst):
        return 0
    received = dst.local_elements() * elem_bytes
    return copy + costs.exchange_floor(chip, received) + costs.sync_cycles(chip)


def transition_estimate(
    chip: ChipSpec, src: Layout, dst: Layout, elem_bytes: int, view: View | None = None
) -> Estimate:
    """Cycles of the exchange superstep that moves a tensor from `src` to `dst` (through
    `view`, if given): the busiest core's sent or received bytes over the exchange, the
    busiest core's copy of what it already holds into place (views only), plus one sync.
    On a chip whose topology routes, the exchange is its messages (who sends what to whom)."""
    routes = chip.topology.routes
    if view is None:
        if same_placement(src, dst):
            return Estimate(0, 0, 0, 0)
        traffic = relayout_exchange(src, dst, elem_bytes, routes, chip.core_shape)
        compute = 0
    else:
        move = element_move(src, dst, view, routes, chip.core_shape)
        traffic = move.traffic(elem_bytes)
        compute = costs.elementwise_cycles(chip, int(move.copied.max(initial=0.0)))
    return Estimate(
        compute_cycles=compute,
        exchange_cycles=costs.exchange_cycles(chip, traffic),
        sync_cycles=costs.sync_cycles(chip),
        sram_bytes=dst.local_elements() * elem_bytes,
    )


def gather_bound(chip: ChipSpec, dst: Layout, elem_bytes: int, spec: GatherSpec) -> int:
    """A quick ranking of a gather used while searching (`gather_estimate` is what is
    recorded): every core receives its whole buffer and the ids it reads at its port's rate
    (`costs.exchange_floor`, as `quick_cycles`), copies its buffer into place, plus one sync."""
    ids = spec.kind.ids_read(dst.local_shape(), spec.ids)
    received = dst.local_elements() * elem_bytes + ids * IDS_BYTES
    return (
        costs.elementwise_cycles(chip, dst.local_elements())
        + costs.exchange_floor(chip, received)
        + costs.sync_cycles(chip)
    )


def gather_estimate(
    chip: ChipSpec,
    dst: Layout,
    elem_bytes: int,
    spec: GatherSpec,
    cores: int,
    table: Layout | None = None,
    ids: Layout | None = None,
) -> Estimate:
    """The gather's cost for its known ids or else ids drawn uniformly (seeded) below the
    sizes they index, with
    table and ids placed by `host_layout` over `cores` as the lowering places host values
    (`table`, `ids`: an operator's output read as it is, in that operator's output layout):
    the simulator's own traffic count on a typical set of ids. Skewed ids (many readers of
    one row) cost more; the simulator measures the ids it is given."""
    sample = (
        spec.kind.sample(spec.table, spec.ids)
        if spec.known_ids is None
        else np.reshape(np.array(spec.known_ids, dtype=np.int64), tuple(spec.ids))
    )
    traffic, copied = gather_traffic(
        host_layout(spec.table, cores) if table is None else table,
        host_layout(spec.ids, cores) if ids is None else ids,
        dst,
        sample,
        spec.kind,
        elem_bytes,
        IDS_BYTES,
        chip.topology.routes,
        chip.core_shape,
    )
    return Estimate(
        compute_cycles=costs.elementwise_cycles(chip, copied),
        exchange_cycles=costs.exchange_cycles(chip, traffic),
        sync_cycles=costs.sync_cycles(chip),
        sram_bytes=dst.local_elements() * elem_bytes,
    )


IDS_BYTES = 4
"""Ids are kept as f32 (exact integers) whatever the storage precision."""


@dataclass(frozen=True)
class GatherOperand:
    """Where a gather's table or ids come from, as convert-linalg-to-rtensor places them:
    `producer`'s output (None: a host value, placed by `host_layout` over the program's
    cores) read as it is, or, through `view` (its source of shape `source`), relayouted into
    `host_layout` over the program's cores, by the first reader's gather (`places`)."""

    producer: int | None = None
    view: View | None = None
    source: tuple[int, ...] = ()
    places: bool = False


@dataclass(frozen=True)
class GatherSpec:
    """A gather of runtime ids: its kind, the table's and the ids' shapes, and where they come
    from (default: host values)."""

    kind: GatherKind
    table: tuple[int, ...]
    ids: tuple[int, ...]
    table_from: GatherOperand = GatherOperand()
    ids_from: GatherOperand = GatherOperand()
    known_ids: tuple[int, ...] | None = None
    """The ids, flattened, when the model knows them (a constant marked `t10.ids`: indices
    not affine in their position); the estimate counts them, as the simulator does."""


def viewed_layout(src: Layout, view: View, shape: tuple[int, ...]) -> Layout | None:
    """The layout of the `view` (of `shape`) that leaves every element on the core that holds
    it in `src`, when the view only permutes dims or splits them (`d_j * c + d_k` with
    `d_k` of size c) and the splits fall on tile boundaries; None otherwise."""
    if src.rotating is not None or view.guard is not None:
        return None
    axes: list[int | None] = [None] * len(shape)
    tile = list(shape)
    for expr, axis, t in zip(view.map.results, src.axes, src.tile, strict=True):
        if axis is None:
            continue
        if isinstance(expr, AffineDimExpr):
            outer, inner = expr.position, 1
        else:
            split = _split_dims(expr, shape)
            if split is None:
                return None
            outer, inner = split
        if t % inner:
            return None
        axes[outer], tile[outer] = axis, t // inner
    return Layout(shape, src.grid, tuple(axes), tuple(tile), placement=src.placement)


def _split_dims(expr: AffineExpr, shape: tuple[int, ...]) -> tuple[int, int] | None:
    """(j, c) when `expr` is `d_j * c + d_k` with dim k of size c."""
    if not (isinstance(expr, AffineBinaryOpExpr) and expr.kind is AffineBinaryOpKind.Add):
        return None
    mul, minor = expr.lhs, expr.rhs
    if not (
        isinstance(minor, AffineDimExpr)
        and isinstance(mul, AffineBinaryOpExpr)
        and mul.kind is AffineBinaryOpKind.Mul
        and isinstance(mul.lhs, AffineDimExpr)
        and isinstance(mul.rhs, AffineConstantExpr)
        and shape[minor.position] == mul.rhs.value
    ):
        return None
    return mul.lhs.position, mul.rhs.value
