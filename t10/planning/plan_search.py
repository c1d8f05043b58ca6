"""Plan search: T10's intra-operator search, the Pareto frontier of plans of one operator over
(bytes per core, cycles), and the validation of pinned plans. No IR here; the model search
(`t10.planning.model_search`, run by `t10-plan-search`) drives it, and
`t10.planning.memory_reconciliation` then picks one frontier plan per operator for the whole
model.

The estimate of a plan (`t10.common.estimator.estimate`) depends on its spatial factors only
through the per-core *tiles* ceil(size / F), the ring factors (a rotation in p pieces needs
p | F[ring]) and the reduction group G = prod F[reduction dims] (the all-reduce moves
(G - 1) * ceil(T / G) elements, which is not monotone in G). So the search enumerates *tile
vectors* - per loop dim, the smallest factor of every distinct tile (`factor_candidates`) -
and *realises* every plan of a tile vector with the cheapest factors that give the same
tiles: ring dims get the smallest multiple of their pieces with the same tile, reduction dims
the group minimising the all-reduce (fewest cores on ties). This finds exactly the values of
the Pareto frontier of the whole space {every F with prod F <= cores} x `temporal_plans(F)`
(tested against brute force), with O(sqrt(size)) candidates per dim instead of `size`, on an
all-to-all chip. On a chip whose topology routes (a mesh, a multi-chip system) a shift's or
an all-reduce's cost also depends on which chip cores the grid's placement puts each ring
and group on, so other factors with the same tiles may cost less than the realised ones: there
the frontier is that of the realised factors.

Utilisation: a tile vector is kept if the factors with its tiles can use at least
`min_utilization` of the cores the operator can use; it is realised with the fewest cores.

Speed: plans are costed by `t10.common.estimator.PlanEstimator` (exact integer arithmetic,
cached kernel costs). The spatial-only plan of each tile vector is evaluated
first; it is a lower bound on the cycles of every rotating plan of the same tiles (a temporal
split never makes the compute cheaper and adds syncs), so a tile vector whose
(memory lower bound, spatial cycles) is already dominated is skipped. Each rotating
candidate is bounded the same way (its exact buffer bytes, the spatial cycles plus its own
syncs and shifts) before it is realised and costed. Pruning is strict-dominance only, so the
frontier is exact, ties included.

Two temporal dims (`planner="t10-multidim"`): after every tile vector's one-dim plans, its
two-dim plans, each ordered pair of shiftable dims (outer, inner), with every rotation set
that rotates something along each; bounded per tile vector (`rotating_floors`) and per
partial rotation set (`_Bound`), then costed exactly like the others.

Placement (`placement="aware"`, on a chip whose topology routes): every plan that shifts or
all-reduces is costed with each placement of its grid that lays its rings along the chip's
dims, folded (`t10.common.placements.placements_with_rings`), and with the linear one; the
cheapest is the plan's (`_Search.placed`), so a placed plan is never slower than its linear
twin. The bounds above charge shifts at the core ports' rate, which no placement beats;
the spatial plan's cycles bound its rotating plans' with the spatial plan's own cheapest
placement. `placement="oblivious"` costs every plan linearly (grid core i on chip core i).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from math import ceil, lcm, prod

from t10.common.chip_spec import ChipSpec
from t10.common.estimator import PlanEstimator
from t10.common.placements import placements_with_rings
from t10.common.plans import (
    OUTPUT,
    Estimate,
    Plan,
    Rotation,
    shiftable_dims,
)
from t10.common.tensor_expr import TensorExpr
from t10.errors import T10Error
from t10.planning.planners import planner as planner_of

# --------------------------------------------------------------------------------------------
# Spatial factors
# --------------------------------------------------------------------------------------------


def factor_candidates(size: int, max_factor: int) -> list[int]:
    """For one loop dim, the smallest factor (<= min(size, max_factor)) of every distinct tile
    size ceil(size / f), ascending: O(sqrt(size)) values.

    A larger factor with the same tile gives every core the same work and memory; it only
    matters for rotation pieces and the reduction group, which the search handles by
    realising factors inside the tile's range (`factor_range`).
    """
    limit = min(size, max_factor)
    out: list[int] = []
    f = 1
    while f <= limit:
        out.append(f)
        tile = -(-size // f)
        if tile == 1:
            break
        f = -(-size // (tile - 1))  # smallest factor with a smaller tile
    return out


def factor_range(size: int, max_factor: int, lo: int) -> int:
    """The largest factor <= min(size, max_factor) with the same tile as `lo`."""
    limit = min(size, max_factor)
    tile = -(-size // lo)
    if tile == 1:
        return limit
    return min(limit, -(-size // (tile - 1)) - 1)


def max_useful_cores(chip: ChipSpec, expr: TensorExpr) -> int:
    """Cores an operator can use at most: prod over loop dims of min(size, cores), capped."""
    return min(chip.cores, prod(min(s, chip.cores) for s in expr.loop_sizes))


def min_cores_for(chip: ChipSpec, expr: TensorExpr, min_utilization: float) -> int:
    """The utilisation threshold: plans must (be able to) use at least this many cores."""
    return max(1, ceil(min_utilization * max_useful_cores(chip, expr)))


def spatial_factors(expr: TensorExpr, cores: int, min_cores: int) -> Iterator[tuple[int, ...]]:
    """Tuples of candidate factors (one `factor_candidates` value per loop dim) with product
    <= `cores` that stand for at least `min_cores` cores: a tuple stands for every factor
    tuple with the same tiles, so its reach is the product of the `factor_range` upper ends.
    Lexicographic order."""
    sizes = expr.loop_sizes
    cands = [factor_candidates(s, cores) for s in sizes]
    his = [[factor_range(s, cores, lo) for lo in c] for s, c in zip(sizes, cands, strict=True)]
    rest = [1] * (len(sizes) + 1)  # rest[d]: the largest reach of dims d..
    for d in reversed(range(len(sizes))):
        rest[d] = rest[d + 1] * min(sizes[d], cores)

    def rec(d: int, used: int, reach: int, acc: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if d == len(sizes):
            yield acc
            return
        for lo, hi in zip(cands[d], his[d], strict=True):
            if used * lo > cores:
                break
            if reach * hi * rest[d + 1] < min_cores:
                continue
            yield from rec(d + 1, used * lo, reach * hi, (*acc, lo))

    yield from rec(0, 1, 1, ())


# --------------------------------------------------------------------------------------------
# Pareto frontier
# --------------------------------------------------------------------------------------------


def plan_key(plan: Plan) -> tuple:
    """Deterministic tie-break between plans with equal estimates: fewer cores first."""
    return (
        plan.cores,
        plan.factors,
        -1 if plan.temporal_dim is None else plan.temporal_dim,
        plan.steps,
        tuple((r.operand, r.ring_dim, r.pieces, r.outer) for r in plan.rotations),
        -1 if plan.outer_dim is None else plan.outer_dim,
        plan.outer_steps,
        () if plan.placement is None else (plan.placement.lines, plan.placement.folds),
    )


class _Frontier:
    """Pareto-optimal (bytes, cycles) points, bytes ascending and cycles strictly descending;
    equal points keep the plan with the smallest `plan_key`."""

    def __init__(self) -> None:
        self.bytes: list[int] = []
        self.cycles: list[int] = []
        self.items: list[tuple[tuple, Plan, Estimate]] = []

    def beaten(self, nbytes: int, cycles: int) -> bool:
        """Whether some point is at least as good on both and better on one."""
        i = bisect.bisect_right(self.bytes, nbytes) - 1
        if i < 0:
            return False
        return self.cycles[i] < cycles or (self.cycles[i] == cycles and self.bytes[i] < nbytes)

    def fewest_beating_bytes(self, nbytes: int, cycles: int) -> int | None:
        """The fewest bytes of a point with at most `nbytes` bytes and `cycles` cycles (None:
        there is none). Any (b, c) with b above it and c >= `cycles` is beaten."""
        i = bisect.bisect_right(self.bytes, nbytes) - 1
        # cycles descend along the points: the first with at most `cycles`
        m = bisect.bisect_left(self.cycles, -cycles, key=lambda c: -c)
        return self.bytes[m] if m <= i else None

    def add(self, plan: Plan, est: Estimate) -> None:
        b, c = est.sram_bytes, est.cycles
        if self.beaten(b, c):
            return
        key = plan_key(plan)
        pos = bisect.bisect_left(self.bytes, b)
        if pos < len(self.bytes) and self.bytes[pos] == b and self.cycles[pos] == c:
            if key < self.items[pos][0]:
                self.items[pos] = (key, plan, est)
            return
        end = pos
        while end < len(self.bytes) and self.cycles[end] >= c:
            end += 1
        self.bytes[pos:end] = [b]
        self.cycles[pos:end] = [c]
        self.items[pos:end] = [(key, plan, est)]

    def points(self) -> list[tuple[Plan, Estimate]]:
        """Memory descending, cycles ascending (the fastest plan first)."""
        return [(plan, est) for _, plan, est in reversed(self.items)]


def pareto_frontier(points: Sequence[tuple[Plan, Estimate]]) -> list[tuple[Plan, Estimate]]:
    """The Pareto frontier over (sram_bytes, cycles) of any (plan, estimate) pairs."""
    frontier = _Frontier()
    for plan, est in points:
        frontier.add(plan, est)
    return frontier.points()


# --------------------------------------------------------------------------------------------
# Intra-operator search
# --------------------------------------------------------------------------------------------


PLACEMENTS = ("aware", "oblivious")
"""How a plan's grid is placed on the chip's cores: the cheapest of the placements that lay
its rings along the chip's dims and the linear one (`aware`), or linearly (`oblivious`)."""


def check_options(
    what: str, planner: str, min_utilization: float, placement: str = "aware"
) -> None:
    """`planner`, `min_utilization` and `placement` are valid (`what`: the pass or function
    named)."""
    planner_of(planner, what)
    if not 0.0 <= min_utilization <= 1.0:
        raise T10Error(f"{what}: min-utilization must be between 0 and 1, got {min_utilization}")
    if placement not in PLACEMENTS:
        raise T10Error(f"{what}: unknown placement '{placement}'; choose one of "
                       f"{', '.join(PLACEMENTS)}")


class _Bound:
    """Lower bounds on the (bytes, cycles) of every completion of a partial rotation set in
    `_Search.rotation_sets`: `held` elements of the decided readers (`rotated`, or `plain`
    when whole), `after[j]` the least of the readers from j on, then the fixed inputs
    (`others` bytes) and the output (`out_bytes`, the least of staying whole and rotating);
    cycles from `cycles` plus a sync per step beyond the first, every level having 2 steps
    or more. A complete set's steps are known, and so are its kernels (`extra_kernel`:
    what its steps' kernels cost beyond the tile's one): `whole_beaten` bounds it with its
    output whole (`whole`: the output's bytes and the spatial plan's cycles),
    `output_beaten` with its output rotating (`output`)."""

    def __init__(
        self,
        frontier: _Frontier,
        rotated: Callable[[int, int, int], int],
        level_tiles: list[int],
        plain: list[int],
        after: list[int],
        fixed: tuple[int, int, int],
        cycles: int,
        sync: int,
        rate: tuple[int, int],
        extra_kernel: Callable[[tuple[int, ...]], int],
        whole: tuple[int, int],
        output: _OutputBound | None,
    ) -> None:
        self.frontier = frontier
        self.rotated = rotated
        self.level_tiles = level_tiles
        self.after = after
        self.others, self.out_bytes, self.eb = fixed
        self.cycles = cycles
        self.sync = sync
        self.plain = plain
        self.rate_num, self.rate_den = rate
        self.extra_kernel = extra_kernel
        self.whole_bytes, self.whole_cycles = whole
        self.output = output

    def beaten(
        self, j: int, steps: tuple[int, ...], held: int, moving: tuple[int, ...]
    ) -> bool:
        """A tensor of `local` elements rotating along a level of N >= s steps shifts a chunk
        of at least local / N elements at least N - 1 times: (s - 1) / s of its bytes."""
        nbytes = (held + self.after[j]) * self.eb + self.others + self.out_bytes
        return self.frontier.beaten(nbytes, self.shifting(self.cycles, steps, moving))

    def next_pieces(
        self,
        j: int,
        steps: tuple[int, ...],
        held: int,
        moving: tuple[int, ...],
        reader: tuple[int, int, int],
    ) -> int:
        """The next pieces worth trying after `reader` = (input, level, p) was beaten: as p
        grows, the reader holds no more elements, and the level's steps lcm(s, p) >= max(s,
        p) only add cycles; so every larger p is beaten too until the reader's elements fall
        to the fewest bytes of a point that beats its cycles with steps max(s, p). `j`,
        `steps`, `held` and `moving`: the child's, but for the reader's own elements in
        `held` and its level's steps."""
        i, level, p = reader
        low = (*steps[:level], max(steps[level], p), *steps[level + 1 :])
        rest = self.after[j] * self.eb + self.others + self.out_bytes
        nbytes = (held + self.rotated(i, level, p)) * self.eb + rest
        fewest = self.frontier.fewest_beating_bytes(nbytes, self.shifting(self.cycles, low, moving))
        if fewest is None:
            return p + 1
        tile = self.level_tiles[level]
        per_chunk = self.plain[i] // tile * self.eb  # rotated = per_chunk * (ceil(t/p) + 1)
        if per_chunk == 0:
            return tile + 1  # its bytes never change
        chunks = (fewest - rest - held * self.eb) // per_chunk - 1  # ceil(t / p') <= chunks
        if chunks < 1:
            return tile + 1
        return max(p + 1, -(-tile // chunks))

    def shifting(self, cycles: int, steps: tuple[int, ...], moving: tuple[int, ...]) -> int:
        """`cycles` plus the least exchange of the readers' `moving` elements and a sync per
        step beyond the first (2 steps or more per level)."""
        total = 1
        for n, elements in zip(steps, moving, strict=False):
            n = max(n, 2)
            total *= n
            cycles += self.rate_num * elements * self.eb * (n - 1) // (self.rate_den * n)
        return cycles + (total - 1) * self.sync

    def whole_beaten(self, steps: tuple[int, ...], held: int, moving: tuple[int, ...]) -> bool:
        """Whether the frontier beats the plan of a complete set of readers whose output
        stays whole."""
        nbytes = held * self.eb + self.others + self.whole_bytes
        cycles = self.whole_cycles + self.extra_kernel(steps)
        return self.frontier.beaten(nbytes, self.shifting(cycles, steps, moving))

    def output_beaten(
        self, steps: tuple[int, ...], held: int, moving: tuple[int, ...], pieces: int
    ) -> bool:
        """Whether the frontier beats the plan of a complete set of readers whose output
        also rotates in `pieces` along the first level of `steps`: the output holds a window
        of at least its tile / t * (ceil(t / pieces) + 1) elements of a level tile t (and as
        many wide partials), from `out_floor`, and shifts a chunk of at least its tile /
        steps[0] partials steps[0] - 1 times."""
        out = self.output
        assert out is not None
        local = out.tile // out.level_tile * (-(-out.level_tile // pieces) + 1)
        nbytes = held * self.eb + self.others + local * out.bytes_per_element
        first = steps[0]
        shift = -(-self.rate_num * (out.tile // first * out.acc_bytes) // self.rate_den)
        cycles = out.cycles + self.extra_kernel(steps) + (first - 1) * shift
        return self.frontier.beaten(nbytes, self.shifting(cycles, steps, moving))


@dataclass(frozen=True)
class _OutputBound:
    """What `_Bound.output_beaten` knows of a rotating output: its unpadded `tile`, the
    first level's tile, the bytes per element of its window (with wide partials), the
    bytes per element it shifts, and `out_floor`."""

    tile: int
    level_tile: int
    bytes_per_element: int
    acc_bytes: int
    cycles: int


class _Search:
    """The search over one operator; see the module docstring."""

    def __init__(
        self, chip: ChipSpec, expr: TensorExpr, levels: int, min_cores: int, place: bool
    ) -> None:
        self.cores = chip.cores
        self.shape = chip.core_shape
        self.place = place and chip.topology.routes
        self.expr = expr
        self.rotate = levels > 0
        self.levels = levels
        self.min_cores = min_cores
        self.fast = PlanEstimator(chip, expr)
        self.sizes = expr.loop_sizes
        self.red = expr.reduction_dims
        self.par = tuple(d for d in range(expr.rank) if d not in self.red)
        self.in_dims = self.fast.in_dims
        # loop dims each input could rotate around (the ones it does not read)
        self.ring_dims = tuple(
            tuple(g for g in range(expr.rank) if g not in dims) if i < expr.own_inputs else ()
            for i, dims in enumerate(self.in_dims)
        )
        self._hi = [
            {lo: factor_range(size, self.cores, lo) for lo in factor_candidates(size, self.cores)}
            for size in self.sizes
        ]
        self.frontier = _Frontier()
        self._groups: dict[tuple, tuple[int, ...] | None] = {}
        self._pieces: dict[tuple[int, int], list[int]] = {}

    # ---- factor realisation

    def hi(self, d: int, lo: int) -> int:
        """The largest factor of d with the tile of candidate `lo`."""
        return self._hi[d][lo]

    def pieces(self, lo: int, hi: int) -> list[int]:
        """The pieces p >= 2 a ring dim with factors lo..hi (one tile) can rotate in: those
        with a multiple among the factors, ascending (cached)."""
        key = (lo, hi)
        found = self._pieces.get(key)
        if found is None:
            found = [p for p in range(2, hi + 1) if -(-lo // p) * p <= hi]
            self._pieces[key] = found
        return found

    def tiles(self, lows: tuple[int, ...]) -> list[int]:
        return [-(-s // f) for s, f in zip(self.sizes, lows, strict=True)]

    def best_group(
        self, out_tile: int, specs: tuple[tuple[int, int, int], ...], budget: int
    ) -> tuple[int, ...] | None:
        """Reduction factors, one per (lo, hi, multiple-of) spec with product <= budget, that
        minimise the all-reduce volume (G-1)*ceil(T/G), then G, then lexicographically."""
        key = (out_tile, specs, budget)
        if key in self._groups:
            return self._groups[key]
        best: tuple[int, int, tuple[int, ...]] | None = None

        def rec(i: int, group: int, acc: tuple[int, ...]) -> None:
            nonlocal best
            if i == len(specs):
                cand = ((group - 1) * -(-out_tile // group), group, acc)
                if best is None or cand < best:
                    best = cand
                return
            lo, hi, mult = specs[i]
            f = -(-lo // mult) * mult
            limit = min(hi, budget // group)
            while f <= limit:
                rec(i + 1, group * f, (*acc, f))
                f += mult

        rec(0, 1, ())
        result = None if best is None else best[2]
        self._groups[key] = result
        return result

    def realise(
        self,
        lows: tuple[int, ...],
        rings: dict[int, int],
        out_tile: int,
        out_ring: int | None = None,
    ) -> tuple[int, ...] | None:
        """The cheapest factors with the tiles of `lows` where ring dim g (-> pieces p) is a
        multiple of p, and the ring of a rotating output (`out_ring`) exactly its pieces; None
        if no such factors fit the chip."""
        factors = list(lows)
        for g, p in rings.items():
            factors[g] = -(-lows[g] // p) * p
        used = prod(factors[d] for d in self.par)
        if used > self.cores:
            return None
        if self.red:
            specs = tuple(
                (factors[d], factors[d], 1)
                if d == out_ring
                else (lows[d], self.hi(d, lows[d]), rings.get(d, 1))
                for d in self.red
            )
            group = self.best_group(out_tile, specs, self.cores // used)
            if group is None:
                return None
            for d, f in zip(self.red, group, strict=True):
                factors[d] = f
        return tuple(factors)

    # ---- plans

    def out_tile(self, tiles: Sequence[int]) -> int:
        return prod(tiles[d] for d in self.fast.out_dims)

    def spatial(self, lows: tuple[int, ...]) -> tuple[Plan, Estimate] | None:
        factors = self.realise(lows, {}, self.out_tile(self.tiles(lows)))
        if factors is None:
            return None
        return self.placed(Plan(factors))

    def placed(self, plan: Plan) -> tuple[Plan, Estimate]:
        """`plan` with its cheapest placement (see the module docstring), and its estimate;
        the linear one wins ties."""
        best = (plan, self.fast.estimate(plan))
        rings = [(r.ring_dim, r.pieces) for r in plan.rotations]
        groups = [d for d in self.red if plan.factors[d] > 1]
        if not self.place or not (rings or groups):
            return best
        for placement in placements_with_rings(plan.factors, rings, groups, self.shape):
            candidate = replace(plan, placement=placement)
            est = self.fast.estimate(candidate)
            if est.cycles < best[1].cycles:
                best = (candidate, est)
        return best

    def out_ring(self, lows: tuple[int, ...]) -> int | None:
        """The reduction dim on whose ring the output could rotate with these tiles
        (`t10.common.plans.output_rings`): the one split reduction dim (its factor range
        then starts at 2 or more)."""
        if not self.rotate or not self.fast.output_rotates:
            return None
        split = [g for g in self.red if lows[g] > 1]
        return split[0] if len(split) == 1 else None

    def memory_bound(self, lows: tuple[int, ...], spatial: Plan, est: Estimate) -> int:
        """A lower bound on the bytes of every rotating plan with these tiles: each input that
        could rotate holds at least one chunk more than 1/P of its tile along some dim; so does
        an output that could rotate (and its accumulator of wider partials), which then needs
        no all-reduce receive buffer."""
        tiles = self.tiles(lows)
        eb = self.fast.eb
        saved = 0
        for dims, rings in zip(self.in_dims, self.ring_dims, strict=True):
            pmax = max((self.hi(g, lows[g]) for g in rings), default=1)
            saved += self.most_saved(tiles, dims, pmax) * eb
        ring = self.out_ring(lows)
        if ring is not None:
            rounding = self.fast.wide_partials
            saved += self.most_saved(tiles, self.fast.out_dims, self.hi(ring, lows[ring])) * (
                eb + (self.fast.partial_bytes if rounding else 0)
            )
            group = prod(spatial.factors[d] for d in self.red)
            moved = (group - 1) * -(-self.out_tile(tiles) // group)
            saved += moved * (self.fast.partial_bytes if rounding else eb)
        return est.sram_bytes - saved

    @staticmethod
    def most_saved(tiles: Sequence[int], dims: Sequence[int], pmax: int) -> int:
        """The most elements a tensor reading `dims` saves by rotating in at most `pmax`
        pieces along one of them (0 for a broadcast scalar, or nowhere to rotate)."""
        if not dims or pmax < 2:
            return 0
        local = prod(tiles[d] for d in dims)
        least = min(local // tiles[d] * (-(-tiles[d] // pmax) + 1) for d in set(dims))
        return max(0, local - least)

    def out_floor(self, tiles: Sequence[int]) -> int:
        """A lower bound on the cycles of every plan with these tiles whose output rotates,
        before its shifts and their syncs: the tile's kernel, one sync, and the rounding
        superstep (its partials are split over cores, so they round when wider than the storage)."""
        rounding = self.fast.wide_partials
        return (
            self.fast.kernel(tiles)
            + self.fast.sync * (1 + rounding)
            + (self.fast.reduce_ew(0) if rounding else 0)
        )

    def rotating(
        self, lows: tuple[int, ...], spatial: Plan, floor_cycles: int, levels: int
    ) -> Iterator[Plan]:
        """The rotating plans with the tiles of `lows` (one per distinct estimate) that a cheap
        lower bound does not rule out against the current frontier. `spatial` is the tiles'
        spatial plan and `floor_cycles` its cycles: its all-reduce and cycles bound every
        plan's that rotates inputs only from below; `out_floor` bounds those whose output
        rotates (they have no all-reduce). Plans with one temporal dim, or with two (outer,
        inner): every ordered pair of shiftable dims; `levels` says which."""
        tiles = self.tiles(lows)
        eb = self.fast.eb
        sync, exchange = self.fast.sync, self.fast.exchange
        group = prod(spatial.factors[d] for d in self.red)
        # the spatial plan's all-reduce is the least of any plan with these tiles
        moved = (group - 1) * -(-self.out_tile(tiles) // group)
        out_ring = self.out_ring(lows)
        out_floor = self.out_floor(tiles) if out_ring is not None else 0
        rounding = self.fast.wide_partials
        acc_bytes = self.fast.partial_bytes if rounding else eb
        whole_kernel = self.fast.kernel(tiles)
        shiftable = [d for d in shiftable_dims(self.expr) if tiles[d] >= 2]
        level_sets = (
            [(d,) for d in shiftable]
            if levels == 1
            else [(e, d) for e in shiftable for d in shiftable if e != d]
        )
        for dims in level_sets:
            level_tiles = [tiles[x] for x in dims]
            # per input (and the output): elements = rest * prod padded[l]**power[l], padded[l]
            # = the level's tile rounded up to whole chunks
            split = [self.split_at(tiles, in_dims, dims) for in_dims in self.in_dims]
            out_rest, out_powers = self.split_at(tiles, self.fast.out_dims, dims)
            reads = [[(lv, w) for lv, w in enumerate(powers) if w] for _, powers in split]
            out_reads = [(lv, w) for lv, w in enumerate(out_powers) if w]
            readers = [(i, [lv for lv, _ in its]) for i, its in enumerate(reads) if its]
            ring = out_ring if out_powers[0] else None
            inner = len(dims) - 1
            reduces_in_time = any(x in self.red for x in dims)
            bound = self.subtree_bound(
                tiles, lows, dims, split, readers, ring, moved, floor_cycles, out_floor
            )
            for rots, steps in self.rotation_sets(lows, level_tiles, readers, ring, bound):
                total = prod(steps)
                padded = [-(-t // n) * n for t, n in zip(level_tiles, steps, strict=True)]
                rotation = {i: (p, lv) for i, _, p, lv in rots}
                elements = inner_exchange = outer_exchange = 0
                for i, its in enumerate(reads):
                    local = split[i][0]
                    for lv, w in its:
                        local *= padded[lv] ** w
                    rot = rotation.get(i)
                    if rot is None:
                        elements += local
                        continue
                    # window of n/p chunks plus one incoming chunk; each input its own shift
                    p, lv = rot
                    chunk = local // steps[lv]
                    elements += chunk * (steps[lv] // p + 1)
                    if lv == inner:
                        inner_exchange += exchange(chunk * eb)
                    else:
                        outer_exchange += exchange(chunk * eb)
                out_tile = out_rest
                for lv, w in out_reads:
                    out_tile *= padded[lv] ** w
                shifts = (total - 1) * (sync + inner_exchange) + (steps[0] - 1) * outer_exchange
                # the floors count the tile's kernel once; the plan runs it on a step's tile
                # `total` times (the same kernel `estimate` counts)
                step_tiles = list(tiles)
                for x, t, n in zip(dims, padded, steps, strict=True):
                    step_tiles[x] = t // n
                shifts += total * self.fast.kernel(step_tiles) - whole_kernel
                out_rot = rotation.get(OUTPUT)
                if out_rot is None:
                    memory = (elements + out_tile + moved) * eb
                    cycles = floor_cycles + shifts
                    if rounding and (moved or reduces_in_time):
                        # wide partials in their own buffer (and the all-reduce's width)
                        memory += out_tile * self.fast.partial_bytes
                        memory += moved * (self.fast.partial_bytes - eb)
                else:
                    out_local = out_tile // steps[0] * (steps[0] // out_rot[0] + 1)
                    memory = (elements + out_local) * eb
                    memory += out_local * self.fast.partial_bytes if rounding else 0
                    out_shifts = steps[0] - 1 if inner else total - 1
                    cycles = out_floor + shifts + out_shifts * exchange(
                        out_tile // steps[0] * acc_bytes
                    )
                if self.frontier.beaten(memory, cycles):
                    continue
                factors = self.realise(
                    lows, {g: p for _, g, p, _ in rots}, out_tile, ring if out_rot else None
                )
                if factors is None:
                    continue
                rotations = tuple(Rotation(i, g, p, lv < inner) for i, g, p, lv in rots)
                plan = Plan(factors, dims[-1], steps[-1], rotations)
                if inner:
                    plan = replace(plan, outer_dim=dims[0], outer_steps=steps[0])
                yield plan

    def subtree_bound(
        self,
        tiles: Sequence[int],
        lows: tuple[int, ...],
        dims: tuple[int, ...],
        split: list[tuple[int, tuple[int, ...]]],
        readers: list[tuple[int, list[int]]],
        out_ring: int | None,
        moved: int,
        floor_cycles: int,
        out_floor: int,
    ) -> _Bound:
        """Whether every rotation set that `rotation_sets` can still complete from a partial
        one is beaten by the frontier (see `_Bound`). Bytes: a reader that rotates along the
        level with tile t in p pieces holds at least local / t * (ceil(t / p) + 1) elements
        (whatever the steps: padding only adds); an undecided one at least its least over all
        its choices; the output at least the least of staying whole (plus the spatial
        all-reduce's buffer) and rotating. Cycles: the spatial plan's (or `out_floor` while
        the output may rotate) plus a sync per extra step, each level having 2 steps or
        more."""
        eb = self.fast.eb
        level_tiles = [tiles[x] for x in dims]
        plain = [rest * prod(t**w for t, w in zip(level_tiles, powers, strict=True))
                 for rest, powers in split]

        def rotated(i: int, level: int, p: int) -> int:
            return plain[i] // level_tiles[level] * (-(-level_tiles[level] // p) + 1)

        least = list(plain)
        for i, its_levels in readers:
            pmax = max((self.hi(g, lows[g]) for g in self.ring_dims[i]), default=1)
            if pmax >= 2:
                least[i] = min([plain[i]] + [rotated(i, lv, pmax) for lv in its_levels])
        reader_ids = {i for i, _ in readers}
        fixed = sum(plain[i] for i in range(len(plain)) if i not in reader_ids)
        after = [0] * (len(readers) + 1)  # after[j]: least elements of readers j..
        for j in reversed(range(len(readers))):
            after[j] = after[j + 1] + least[readers[j][0]]
        out_tile = self.out_tile(tiles)
        out_bytes = (out_tile + moved) * eb
        cycles = floor_cycles
        whole = (out_bytes, floor_cycles)
        output = None
        if out_ring is not None:
            pmax = self.hi(out_ring, lows[out_ring])
            out_local = out_tile // level_tiles[0] * (-(-level_tiles[0] // pmax) + 1)
            wide = self.fast.partial_bytes if self.fast.wide_partials else 0
            out_bytes = min(out_bytes, out_local * (eb + wide))
            cycles = min(cycles, out_floor)
            acc_bytes = self.fast.partial_bytes if self.fast.wide_partials else eb
            output = _OutputBound(out_tile, level_tiles[0], eb + wide, acc_bytes, out_floor)
        whole_kernel = self.fast.kernel(tiles)

        def extra_kernel(steps: tuple[int, ...]) -> int:
            """What the kernels of `steps` steps cost beyond the tile's one (as `rotating`)."""
            step_tiles = list(tiles)
            for x, n in zip(dims, steps, strict=True):
                step_tiles[x] = -(-tiles[x] // n)
            return prod(steps) * self.fast.kernel(step_tiles) - whole_kernel

        # both floors count the tile's kernel once; the steps' kernels add up to no less
        # than its floor (`PlanEstimator.kernel_floor`)
        cycles -= whole_kernel - self.fast.kernel_floor(tiles)
        return _Bound(
            self.frontier, rotated, level_tiles, plain, after, (fixed * eb, out_bytes, eb), cycles,
            self.fast.sync, (self.fast.exchange.a, self.fast.exchange.den), extra_kernel,
            whole, output,
        )

    @staticmethod
    def split_at(
        tiles: Sequence[int], dims: Sequence[int], levels: Sequence[int]
    ) -> tuple[int, tuple[int, ...]]:
        """(product of the tiles of `dims` other than the `levels` dims, how often `dims`
        reads each of them)."""
        return (
            prod(tiles[x] for x in dims if x not in levels),
            tuple(sum(1 for x in dims if x == d) for d in levels),
        )

    def rotation_sets(
        self,
        lows: tuple[int, ...],
        level_tiles: Sequence[int],
        readers: list[tuple[int, list[int]]],
        out_ring: int | None,
        bound: _Bound | None = None,
    ) -> list[tuple[tuple[tuple[int, int, int, int], ...], tuple[int, ...]]]:
        """Every set of (input, ring dim, pieces, level) that rotates something along each
        level (temporal dim, outer first), with each level's steps, like `rotation_choices`
        but over the factor ranges of the tiles: a reader rotates along a level it reads in
        p pieces on ring g if some factor with g's tile is a multiple of p, the cores still
        fit (counting the smallest such factors) and each level's steps lcm(p) fit its tile.
        The output (`OUTPUT`), last, rotates along the first level on `out_ring` (if not None
        and not taken) in p pieces for every factor p of the ring's tile (its factor is
        exactly p). A `bound` skips partial sets all of whose completions the frontier
        beats."""
        found: list[tuple[tuple[tuple[int, int, int, int], ...], tuple[int, ...]]] = []
        rings: set[int] = set()
        levels = len(level_tiles)

        def rec(
            j: int,
            used: int,
            steps: tuple[int, ...],
            acc: tuple[tuple[int, int, int, int], ...],
            held: int = 0,
            moving: tuple[int, ...] = (0, 0),
            checked: bool = False,
        ) -> None:
            """`held`: the least elements the readers before j hold, `moving`: the elements
            of those that rotate along each level, unpadded (see `_Bound`); `checked`: the
            bound is known not to rule them out."""
            if not checked and bound is not None and bound.beaten(j, steps, held, moving):
                return
            if j == len(readers):
                # something rotates along every level
                if all(n > 1 for n in steps) and (
                    bound is None or not bound.whole_beaten(steps, held, moving)
                ):
                    found.append((acc, steps))
                if out_ring is None or out_ring in rings or not all(n > 1 for n in steps[1:]):
                    return
                lo, hi = lows[out_ring], self.hi(out_ring, lows[out_ring])
                for p in range(max(2, lo), min(hi, level_tiles[0]) + 1):
                    first = lcm(steps[0], p)
                    if first <= level_tiles[0] and used // lo * p <= self.cores:
                        out_steps = (first, *steps[1:])
                        if bound is None or not bound.output_beaten(out_steps, held, moving, p):
                            found.append(((*acc, (OUTPUT, out_ring, p, 0)), out_steps))
                return
            i, its_levels = readers[j]
            whole = 0 if bound is None else bound.plain[i]
            rec(j + 1, used, steps, acc, held + whole, moving)
            for level in its_levels:
                for g in self.ring_dims[i]:
                    if g in rings:
                        continue
                    lo, hi = lows[g], self.hi(g, lows[g])
                    rings.add(g)
                    pieces = self.pieces(lo, hi)
                    end = bisect.bisect_right(pieces, level_tiles[level])
                    now_moving = (*moving[:level], moving[level] + whole, *moving[level + 1 :])
                    k = 0
                    while k < end:
                        p = pieces[k]
                        k += 1
                        new_steps = lcm(steps[level], p)
                        now_used = used // lo * (-(-lo // p) * p)
                        if new_steps > level_tiles[level] or now_used > self.cores:
                            continue
                        more = (*steps[:level], new_steps, *steps[level + 1 :])
                        if bound is None:
                            rec(j + 1, now_used, more, (*acc, (i, g, p, level)))
                            continue
                        now_held = held + bound.rotated(i, level, p)
                        # the child's own first check, made here: most children fail it,
                        # and so do the larger pieces after them (`next_pieces`)
                        if bound.beaten(j + 1, more, now_held, now_moving):
                            after = bound.next_pieces(j + 1, steps, held, now_moving, (i, level, p))
                            k = bisect.bisect_left(pieces, after, k, end)
                            continue
                        rec(
                            j + 1,
                            now_used,
                            more,
                            (*acc, (i, g, p, level)),
                            now_held,
                            now_moving,
                            checked=True,
                        )
                    rings.discard(g)

        rec(0, prod(lows), (1,) * levels, ())
        return found

    def run(self) -> list[tuple[Plan, Estimate]]:
        bounds: list[tuple[tuple[int, ...], Plan, int, int]] = []
        for lows in spatial_factors(self.expr, self.cores, self.min_cores):
            found = self.spatial(lows)
            if found is None:
                continue
            plan, est = found
            self.frontier.add(plan, est)
            if self.rotate:
                nbytes = self.memory_bound(lows, plan, est)
                bounds.append((lows, plan, est.cycles, nbytes))
        # one temporal dim first, fastest tile vectors first: they tighten the frontier the
        # most before the far more numerous plans with two
        for levels in range(1, self.levels + 1):
            for floor, nbytes, lows, spatial, cycles in sorted(
                (min(self.rotating_floors(lows, cycles, levels)), nbytes, lows, spatial, cycles)
                for lows, spatial, cycles, nbytes in bounds
            ):
                if self.frontier.beaten(nbytes, floor):
                    continue
                for plan in self.rotating(lows, spatial, cycles, levels):
                    self.frontier.add(*self.placed(plan))
        return self.frontier.points()

    def rotating_floors(
        self, lows: tuple[int, ...], spatial_cycles: int, levels: int
    ) -> tuple[int, int]:
        """Lower bounds on the cycles of the plans with these tiles and `levels` temporal dims
        whose output stays whole, and whose output rotates (a huge number where there are
        none): at least 2 steps per level (a sync each beyond the first), and every rotating
        tensor of `local` elements shifts at least half its bytes (a chunk of local / N, N - 1
        times); the first bound starts from the spatial plan's cycles, the second from
        `out_floor`. With two levels at least two tensors rotate."""
        none = 1 << 62
        tiles = self.tiles(lows)
        rate, den = self.fast.exchange.a, self.fast.exchange.den
        eb = self.fast.eb
        shiftable = [d for d in shiftable_dims(self.expr) if tiles[d] >= 2]
        halves = sorted(
            rate * prod(tiles[d] for d in dims) * eb // (2 * den)
            for dims, rings in zip(self.in_dims, self.ring_dims, strict=True)
            if any(self.hi(g, lows[g]) >= 2 for g in rings) and any(d in dims for d in shiftable)
        )
        syncs = (2**levels - 1) * self.fast.sync
        # the spatial plan and `out_floor` count the tile's kernel once; the steps' kernels
        # add up to no less than its floor (`PlanEstimator.kernel_floor`)
        slack = self.fast.kernel(tiles) - self.fast.kernel_floor(tiles)
        whole = none
        if len(halves) >= levels:
            whole = spatial_cycles - slack + syncs + sum(halves[:levels])
        rotated = none
        ring = self.out_ring(lows)
        if ring is not None and len(halves) >= levels - 1:
            acc = self.fast.partial_bytes if self.fast.wide_partials else eb
            out_half = rate * self.out_tile(tiles) * acc // (2 * den)
            rotated = self.out_floor(tiles) - slack + syncs + out_half + sum(halves[: levels - 1])
        return whole, rotated


def operator_frontier(
    chip: ChipSpec, expr: TensorExpr, planner: str = "t10", min_utilization: float = 0.5,
    placement: str = "aware",
) -> list[tuple[Plan, Estimate]]:
    """The Pareto frontier of one operator's plans over (sram_bytes, cycles), memory
    descending / cycles ascending (the fastest plan first); equal points keep the plan with
    fewer cores. `planner` "t10" searches rotating plans, "t10-multidim" also those with two
    temporal dims, "replicate" spatial ones only (its `Planner.temporal_dims`). Plans stand
    for at least `min_utilization` of the cores the operator can use (see
    `spatial_factors`); if none does, the threshold is dropped. `placement` (`PLACEMENTS`)
    says how plans are placed on the chip's cores."""
    check_options("operator_frontier", planner, min_utilization, placement)
    levels = planner_of(planner).temporal_dims
    min_cores = min_cores_for(chip, expr, min_utilization)
    place = placement == "aware"
    frontier = _Search(chip, expr, levels, min_cores, place).run()
    if not frontier:
        frontier = _Search(chip, expr, levels, 1, place).run()
    return frontier
