"""The estimate of one operator's plan (`estimate`): its cycles and bytes per core, from the
chip's cost terms (`t10.common.costs`), as the lowering will run it. `PlanEstimator` holds
what one (chip, expression) needs, with kernel costs cached, for the plan search, which
costs many plans of one operator."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from t10.common import collectives, costs
from t10.common.chip_spec import ChipSpec
from t10.common.plans import OUTPUT, Estimate, Plan, epilogue_elements
from t10.common.tensor_expr import ExprKind, TensorExpr

__all__ = ["PlanEstimator", "estimate"]


def estimate(chip: ChipSpec, expr: TensorExpr, plan: Plan) -> Estimate:
    """The analytical time and per-core memory of a plan: the plan search's cost model, and
    the one every estimate of an operator's plan is made with.

    Time: every step is a BSP superstep (compute, then the shift of every rotating input,
    each a `core.shift` of its own costed on its own, then a sync); the last step does not
    shift. With two temporal dims there are `total_steps` supersteps; a tensor rotating along
    the outer dim shifts only at the end of each inner loop but the last. A reduction dim split
    over R cores ends with an all-reduce: a reduce-scatter and an all-gather superstep, each
    moving (R-1)/R of the output tile, plus the additions. Partial sums wider than the storage
    (`rounds_partials`) accumulate and move at their own width in a tile of their own, then a
    superstep of its own rounds it into the output (an element-wise pass over the tile).
    A rotating output (`OUTPUT`) shifts its partial chunk at the partial-sum width in a
    `core.shift` of its own (its own exchange op, after the inputs' shifts) and needs no
    all-reduce over its ring; it holds its window plus one slot, and its rounding pass runs
    over that buffer.
    A fused epilogue (`TensorExpr.epilogue`) adds an element-wise kernel over the output tile,
    or over its part after a split reduction (`epilogue_elements`); it writes the output in
    place.
    Each shift and each exchange of an all-reduce costs what `costs.exchange_cycles` charges
    for the messages the simulator sends (`t10.common.collectives`): a routing topology's
    links and latency, or, on an all-to-all chip, the busiest core's bytes at the exchange
    rate (`costs.exchange_rate`, applied directly).
    Memory: every input's local buffer (rotating ones hold their window plus one incoming
    chunk; an epilogue's inputs are laid out like the output tile), the output's buffer (plus
    the accumulator when rounding), and the all-reduce's receive buffer.
    """
    return PlanEstimator(chip, expr).estimate(plan)


class PlanEstimator:
    """`estimate` for one (chip, expression): plan by plan, with its kernels' costs cached."""

    def __init__(self, chip: ChipSpec, expr: TensorExpr) -> None:
        self.expr = expr
        self.sizes = expr.loop_sizes
        self.eb = expr.elem_bytes
        self.in_dims = tuple(tuple(d for d in a.dims if d is not None) for a in expr.inputs)
        self.out_dims = tuple(d for d in expr.output.dims if d is not None)
        self.red = expr.reduction_dims
        self.sync = costs.sync_cycles(chip)
        self.contraction = expr.kind is ExprKind.CONTRACTION
        # whether the output may rotate its partial sums at all (`output_rings`)
        self.output_rotates = self.contraction and expr.epilogue is None
        # partial sums wider than the storage accumulate apart and are rounded (rounds_partials)
        self.partial_bytes = expr.partial_bytes
        self.wide_partials = (
            expr.elem_bytes < expr.partial_bytes and expr.kind is not ExprKind.ELEMENTWISE
        )
        self.matmul = costs.matmul_kernel(chip, expr.elem_bytes)
        self.kernel_ew = costs.elementwise_rate(chip, expr.relu_like, expr.body_ops)
        self.reduce_ew = costs.elementwise_rate(chip)
        self.chip = chip
        self.exchange = costs.exchange_rate(chip)
        # an all-to-all chip costs an exchange by its busiest core alone (the fast path)
        self.routes = chip.topology.routes
        self._kernels: dict[tuple[int, ...], int] = {}
        self._kernel_floors: dict[tuple[int, ...], int] = {}
        self.epilogue: costs.Affine | None = None
        if expr.epilogue is not None:
            epi = expr.epilogue
            self.epilogue = costs.elementwise_rate(chip, epi.relu_like, epi.body_ops)

    def kernel(self, sizes: Sequence[int]) -> int:
        """Cycles of one step's kernel with the loop extents `sizes` on one core (cached)."""
        key = tuple(sizes)
        cycles = self._kernels.get(key)
        if cycles is None:  # `plans.kernel_cycles`, through the chip's terms directly
            if self.contraction:
                cycles = self.matmul.cycles(*self.expr.matmul_dims(key))
            else:
                elements = prod(key)
                cycles = self.kernel_ew(elements) if elements else 0
            self._kernels[key] = cycles
        return cycles

    def kernel_floor(self, sizes: Sequence[int]) -> int:
        """A lower bound of `kernel` that splitting keeps: for any step counts n_d,
        prod(n_d) * kernel(ceil(sizes_d / n_d)) >= kernel_floor(sizes). `kernel` itself is
        such a bound in a fixed orientation (every term rounds up per dim, and the fixed
        cost is paid per call); the chip's orientation rule may turn a step's product the
        cheaper way, so a contraction's floor is its cheaper orientation."""
        key = tuple(sizes)
        cycles = self._kernel_floors.get(key)
        if cycles is None:
            if self.contraction:
                b, m, k, n = self.expr.matmul_dims(key)
                cycles = min(self.matmul.oriented(b, m, k, n), self.matmul.oriented(b, n, k, m))
            else:
                cycles = self.kernel(key)
            self._kernel_floors[key] = cycles
        return cycles

    def shift(self, plan: Plan, ring: int, pieces: int, nbytes: int) -> int:
        """Cycles of one `core.shift` of `nbytes` per core on the plan's grid, in rings of
        `pieces` cores along grid axis `ring` (`collectives.shift_traffic`)."""
        if not self.routes:
            return self.exchange(nbytes)
        return collectives.shift_cycles(self.chip, plan.factors, ring, pieces, nbytes,
                                         plan.placement)

    def group(self, plan: Plan, axes: tuple[int, ...], nbytes: int) -> int:
        """Cycles of a reduce-scatter's (or an all-gather's) exchange over grid `axes` of the
        plan's grid, runs of `nbytes` (`collectives.group_traffic`)."""
        if not self.routes:
            members = prod(plan.factors[a] for a in axes)
            return self.exchange((members - 1) * nbytes)
        return collectives.group_cycles(self.chip, plan.factors, axes, nbytes, plan.placement)

    def estimate(self, plan: Plan) -> Estimate:
        factors, temporal, steps = plan.factors, plan.temporal_dim, plan.steps
        outer, outer_steps = plan.outer_dim, plan.outer_steps
        tiles = [-(-s // f) for s, f in zip(self.sizes, factors, strict=True)]
        if temporal is not None:
            tiles[temporal] = -(-tiles[temporal] // steps) * steps
        if outer is not None:
            tiles[outer] = -(-tiles[outer] // outer_steps) * outer_steps
        rotations = {r.operand: r for r in plan.rotations}
        eb = self.eb
        elements = inner_exchange = outer_exchange = 0
        for i, dims in enumerate(self.in_dims):
            local = prod(tiles[d] for d in dims)
            r = rotations.get(i)
            if r is None:
                elements += local
                continue
            # window of n/p chunks plus one incoming chunk; each input has its own core.shift
            n = outer_steps if r.outer else steps
            chunk = local // n
            elements += chunk * (n // r.pieces + 1)
            cycles = self.shift(plan, r.ring_dim, r.pieces, chunk * eb)
            if r.outer:
                outer_exchange += cycles
            else:
                inner_exchange += cycles
        out_tile = prod(tiles[d] for d in self.out_dims)
        out_rot = rotations.get(OUTPUT)
        out_local = out_tile
        out_steps = 1
        if out_rot is not None:
            out_steps = outer_steps if out_rot.outer else steps
            out_local = out_tile // out_steps * (out_steps // out_rot.pieces + 1)
        memory = (elements + out_local) * eb
        if temporal is not None:
            tiles[temporal] //= steps
        if outer is not None:
            tiles[outer] //= outer_steps
        total = steps * outer_steps
        compute = total * self.kernel(tiles)
        exchange = (total - 1) * inner_exchange + (outer_steps - 1) * outer_exchange
        syncs = total
        group = prod(factors[d] for d in self.red)
        rounding = self.wide_partials and (
            group > 1 or temporal in self.red or outer in self.red
        )
        acc_bytes = self.partial_bytes if rounding else eb
        ring = -1
        if out_rot is not None:  # its own shift, at the partial-sum width; no all-reduce
            shifts = outer_steps - 1 if out_rot.outer else total - 1
            chunk_bytes = out_tile // out_steps * acc_bytes
            exchange += shifts * self.shift(plan, out_rot.ring_dim, out_rot.pieces, chunk_bytes)
            group //= out_rot.pieces
            ring = out_rot.ring_dim
        if group > 1:  # over the split reduction dims but the output's ring (`partial_dims`)
            run = -(-out_tile // group)
            moved = (group - 1) * run
            axes = tuple(d for d in self.red if factors[d] > 1 and d != ring)
            exchange += 2 * self.group(plan, axes, run * acc_bytes)
            compute += self.reduce_ew(moved)
            syncs += 2
            memory += moved * acc_bytes
        if rounding:
            compute += self.reduce_ew(out_local)
            syncs += 1
            memory += out_local * self.partial_bytes
        if self.epilogue is not None:
            compute += self.epilogue(epilogue_elements(out_tile, group, rounding))
            syncs += 1 if rounding else 0
        return Estimate(compute, exchange, syncs * self.sync, memory)
