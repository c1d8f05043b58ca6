"""Compute-shift plans and the distributed layouts they give each tensor.

A plan for a tensor expression with loop dims d0..dn-1 is:

- `factors` F_op: one spatial partition factor per loop dim. The cores form a grid with one
  axis per loop dim (axis d has F[d] cores); core (x0, .., xn-1) computes the sub-operator
  whose loop ranges are the x-th tiles. Tiles are ceil(size / F) long; padding is counted.
- optionally a `temporal_dim` d and `steps` N: the sub-operator's range of d is cut into N
  chunks computed one per step. Inputs that read d either hold all N chunks, or *rotate*:
  they hold a window of W = N / f_t chunks and slide it one chunk per step along a ring of
  f_t cores that runs along a grid axis the input does not read (the cores that would
  otherwise hold copies of the same sub-tensor).

Alignment (the initial skew): core x computes chunk `k(x, t) = (o(x) + t) mod N` at step t
with `o(x) = sum over rotations r of (N / f_r) * (x[ring_r] mod f_r)`. A rotating input's
window at ring position p starts at o(x), so the next ring member's window starts exactly W
chunks later; each step every core passes the chunk it just used to the previous ring member
and receives the chunk W ahead. With one rotation per ring axis this is Cannon's algorithm
generalised (2-D matmul with f = F[m] = F[n] is Cannon exactly).

```
  ring along grid axis n (f_t = 3), window W = 1:   core n=0   core n=1   core n=2
  step 0   A chunks held                               k0         k1         k2
  step 1   (each sends its chunk to n-1)               k1         k2         k0
```

The output may rotate too (`Rotation` with operand `OUTPUT`): a contraction whose reduction
dim g is split over F[g] cores cuts its output tile along the shift dim d (a parallel dim the
output reads) and rotates its *partial sums* on the ring of all F[g] cores of g instead of
all-reducing them at the end (a pipelined reduce-scatter). The output buffer is a window of W
zero-initialised chunks plus one slot and moves exactly like a rotating input: every step each
core adds its k-part's contribution to the chunk k(x, t) it holds, then passes that partial
chunk to the previous ring member. Chunk c starts on the core whose window holds it and
visits the ring members in turn, W steps apart, so after N steps it has received every
member's contribution exactly once. The finished chunks end where a window would be after
N - 1 steps: the output's layout is rotating with phase N - 1 (`Rotating.phase`).

```
  C = A·B, k split over F[k] = 3 cores (ring), n cut into N = 3 chunks, W = 1:
              core k=0       core k=1       core k=2        (+: adds its k-part)
  step 0      +c0            +c1            +c2             then each passes its chunk to k-1
  step 1      +c1 (from 1)   +c2 (from 2)   +c0 (from 0)
  step 2      +c2 = done     +c0 = done     +c1 = done      (no shift: phase N - 1 = 2)
```
Restrictions (exact and simple): only a contraction without a fused epilogue (the epilogue
needs finished tiles) rotates its output, on the ring of the one split reduction dim, in
F[g] pieces (every core that holds a k-part adds it; no all-reduce remains).

Two temporal dims: a plan may also cut an *outer* dim e (`outer_dim`) of its tile into
`outer_steps` N1 chunks; each outer step runs all N2 = `steps` inner steps, N1·N2 supersteps
in all. Each rotation goes along one of them (`Rotation.outer`) and the paces align per dim
(N1 a multiple of the pieces of every rotation along e, N2 of those along d); each dim has a
skew of its own (`Plan.skew(outer)`), and rings are distinct across both. At outer step t1,
inner step t2 core x computes outer chunk k1 = (o1(x) + t1) mod N1 and inner chunk
k2 = (o2(x) + t1·N2 + t2) mod N2: a tensor rotating along the inner dim shifts after every
superstep but the last (its window runs on across outer steps), one rotating along the outer
dim only after the last inner step of each outer step but the last, so its window holds
whatever it reads of the inner dim whole (it is only cut along its own dim). An operand
that reads both dims is cut along both (`core.kernel ... and (..) along [..]`). A rotating
output rotates along the outer dim (its chunk then has every inner step's contribution
before it moves), ending with phase N1 - 1.

```
  C = A·B, F = [1, 2, 2]: n outer in 2 steps, the output rotating on ring k;
  k inner in 2 steps, A rotating on ring n:
  (t1, t2) = (0, 0) (0, 1) | (1, 0) (1, 1)      A shifts after each of the first three,
                           ^ output shifts       the output once, at ^
```
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from math import ceil, lcm, prod

from t10.common import costs
from t10.common.chip_spec import ChipSpec
from t10.common.placements import Placement, placement_problem
from t10.common.tensor_expr import Access, ExprKind, TensorExpr
from t10.errors import T10Error

OUTPUT = -1
"""The `Rotation.operand` of the output (its partial sums rotate; see the module docstring)."""


@dataclass(frozen=True)
class Rotation:
    """Input `operand` (or the output: `OUTPUT`) rotates along the temporal dim (the outer one
    if `outer`: see "Two temporal dims") in rings of `pieces` cores on grid axis `ring_dim` (a
    loop dim the operand does not read)."""

    operand: int
    ring_dim: int
    pieces: int
    outer: bool = False


@dataclass(frozen=True)
class Plan:
    """Spatial `factors`; the (inner) temporal dim and its `steps` with `rotations`; optionally
    an outer temporal dim `outer_dim` cut into `outer_steps` (see "Two temporal dims"); where
    the grid's cores lie on the chip (`placement`, `t10.common.placements`; None: linear)."""

    factors: tuple[int, ...]
    temporal_dim: int | None = None
    steps: int = 1
    rotations: tuple[Rotation, ...] = ()
    outer_dim: int | None = None
    outer_steps: int = 1
    placement: Placement | None = None

    @cached_property
    def cores(self) -> int:
        return prod(self.factors)

    @property
    def total_steps(self) -> int:
        """Supersteps of the compute-shift loop (inner steps times outer steps)."""
        return self.steps * self.outer_steps

    def level_dim(self, outer: bool) -> int | None:
        """The temporal dim of a level (outer or inner)."""
        return self.outer_dim if outer else self.temporal_dim

    def level_steps(self, outer: bool) -> int:
        return self.outer_steps if outer else self.steps

    def rotation_of(self, operand: int) -> Rotation | None:
        """The rotation of input `operand` (or of the output: `OUTPUT`), if it rotates."""
        return next((r for r in self.rotations if r.operand == operand), None)

    def skew(self, outer: bool = False) -> tuple[tuple[int, int, int], ...]:
        """(grid axis, modulus, weight) terms of the start chunk o(x) of one level."""
        steps = self.level_steps(outer)
        return tuple(
            (r.ring_dim, r.pieces, steps // r.pieces) for r in self.rotations if r.outer == outer
        )


@dataclass(frozen=True)
class Rotating:
    """The temporal part of a layout: tensor dim `dim` is cut into `steps` chunks per tile; each
    core holds a window of W = steps/pieces chunks u0 .. u0+W-1 (mod steps) with
    u0 = (o(x) mod steps) + phase (o: see `Plan.skew`), chunk u in slot u mod `slots` of a
    buffer of `slots` chunk slots (the window plus one incoming chunk). `phase` is 0 before
    the steps; a rotating output ends with phase steps - 1 (its window after the last step;
    u0 is not reduced mod steps because the slots follow the steps run)."""

    dim: int
    ring_axis: int
    pieces: int
    steps: int
    skew: tuple[tuple[int, int, int], ...]
    phase: int = 0

    @property
    def window(self) -> int:
        return self.steps // self.pieces

    @property
    def slots(self) -> int:
        return self.window + 1


@dataclass(frozen=True)
class Layout:
    """How a tensor of `shape` lies on a core grid: tensor dim i is split along grid axis
    `axes[i]` (None: not split) into tiles of `tile[i]` elements (padded). Cores that differ
    only on grid axes no tensor dim uses hold copies, unless the tensor is `rotating`. The
    grid's cores lie on the chip as `placement` says (None: linear)."""

    shape: tuple[int, ...]
    grid: tuple[int, ...]
    axes: tuple[int | None, ...]
    tile: tuple[int, ...]
    rotating: Rotating | None = None
    placement: Placement | None = None

    @property
    def cores(self) -> int:
        return prod(self.grid)

    def local_shape(self) -> tuple[int, ...]:
        """Shape of the buffer each core holds."""
        if self.rotating is None:
            return self.tile
        r = self.rotating
        local = list(self.tile)
        local[r.dim] = self.tile[r.dim] // r.steps * r.slots
        return tuple(local)

    def local_elements(self) -> int:
        return prod(self.local_shape())


def placement(layout: Layout) -> Layout:
    """`layout` with its size-1 grid axes removed (axes renumbered): equal placements compare
    equal."""
    keep = [a for a, size in enumerate(layout.grid) if size > 1]
    renumber = {a: i for i, a in enumerate(keep)}
    rotating = layout.rotating
    if rotating is not None:
        rotating = Rotating(
            rotating.dim,
            renumber[rotating.ring_axis],
            rotating.pieces,
            rotating.steps,
            tuple((renumber[a], m, w) for a, m, w in rotating.skew if a in renumber),
            rotating.phase,
        )
    return replace(
        layout,
        grid=tuple(layout.grid[a] for a in keep),
        axes=tuple(None if a is None else renumber.get(a) for a in layout.axes),
        rotating=rotating,
        placement=None if layout.placement is None else layout.placement.renumbered(renumber),
    )


def same_placement(a: Layout, b: Layout) -> bool:
    """Whether `a` and `b` put every element on the same cores (size-1 grid axes do not
    count)."""
    return placement(a) == placement(b)


def host_layout(shape: tuple[int, ...], cores: int) -> Layout:
    """Where a function argument that only views read is placed: its largest dim split over
    up to `cores` cores (the views then move it on chip like any other relayout)."""
    if not shape:
        return Layout((), (1,), (), ())
    dim = max(range(len(shape)), key=lambda d: shape[d])
    parts = max(1, min(shape[dim], cores))
    tile = ceil(shape[dim] / parts)
    parts = ceil(shape[dim] / tile)
    return Layout(
        shape,
        (parts,),
        tuple(0 if d == dim else None for d in range(len(shape))),
        tuple(tile if d == dim else s for d, s in enumerate(shape)),
    )


def tile_sizes(expr: TensorExpr, plan: Plan) -> tuple[int, ...]:
    """Per-core loop extents, padded so that the temporal dims split into whole chunks."""
    tiles: list[int] = []
    for d, (size, f) in enumerate(zip(expr.loop_sizes, plan.factors, strict=True)):
        tile = ceil(size / f)
        if d == plan.temporal_dim:
            tile = ceil(tile / plan.steps) * plan.steps
        if d == plan.outer_dim:
            tile = ceil(tile / plan.outer_steps) * plan.outer_steps
        tiles.append(tile)
    return tuple(tiles)


def operand_layout(expr: TensorExpr, plan: Plan, access: Access, operand: int | None) -> Layout:
    """The layout the plan gives one operand (`operand` is the input index, None = output;
    a rotating output is laid out as its finished chunks lie after the last step)."""
    tiles = tile_sizes(expr, plan)
    rotating = None
    rot = plan.rotation_of(OUTPUT if operand is None else operand)
    if rot is not None:
        dim, steps = plan.level_dim(rot.outer), plan.level_steps(rot.outer)
        assert dim is not None
        rotating = Rotating(
            dim=access.dims.index(dim),
            ring_axis=rot.ring_dim,
            pieces=rot.pieces,
            steps=steps,
            skew=plan.skew(rot.outer),
            phase=steps - 1 if operand is None else 0,
        )
    return Layout(
        shape=access.shape,
        grid=plan.factors,
        axes=tuple(d if d is not None and plan.factors[d] > 1 else None for d in access.dims),
        tile=tuple(1 if d is None else tiles[d] for d in access.dims),
        rotating=rotating,
        placement=plan.placement,
    )


@lru_cache(maxsize=1 << 16)  # the memory reconciliation and transition sweep ask again and again
def input_layouts(expr: TensorExpr, plan: Plan) -> tuple[Layout, ...]:
    return tuple(operand_layout(expr, plan, a, i) for i, a in enumerate(expr.inputs))


@lru_cache(maxsize=1 << 16)
def output_layout(expr: TensorExpr, plan: Plan) -> Layout:
    return operand_layout(expr, plan, expr.output, None)


def step_sizes(expr: TensorExpr, plan: Plan) -> tuple[int, ...]:
    """Loop extents of the sub-operator one core computes in one step."""
    tiles = list(tile_sizes(expr, plan))
    if plan.temporal_dim is not None:
        tiles[plan.temporal_dim] //= plan.steps
    if plan.outer_dim is not None:
        tiles[plan.outer_dim] //= plan.outer_steps
    return tuple(tiles)


def kernel_cycles(chip: ChipSpec, expr: TensorExpr, sizes: tuple[int, ...]) -> int:
    """Cycles of one sub-operator with the given loop extents on one core."""
    if expr.kind is ExprKind.CONTRACTION:  # REDUCTION / ELEMENTWISE: element-wise cycles
        b, m, k, n = expr.matmul_dims(sizes)
        return costs.matmul_cycles(chip, b, m, k, n, expr.elem_bytes)
    return costs.elementwise_cycles(chip, prod(sizes), expr.relu_like, expr.body_ops)


def reduction_group(expr: TensorExpr, plan: Plan) -> int:
    """How many cores hold partial sums of the same output tile."""
    return prod(plan.factors[d] for d in expr.reduction_dims)


def partial_dims(expr: TensorExpr, plan: Plan) -> tuple[int, ...]:
    """The grid axes over which the operator's result holds partial sums that an all-reduce
    combines at the end: the split reduction dims but the ring of a rotating output (which
    sums over its ring while it rotates)."""
    out = plan.rotation_of(OUTPUT)
    ring = -1 if out is None else out.ring_dim
    return tuple(d for d in expr.reduction_dims if plan.factors[d] > 1 and d != ring)


def all_reduce_group(expr: TensorExpr, plan: Plan) -> int:
    """How many cores all-reduce each output tile at the end (over `partial_dims`)."""
    return prod(plan.factors[d] for d in partial_dims(expr, plan))


def rounds_partials(expr: TensorExpr, plan: Plan) -> bool:
    """Whether the plan accumulates partial sums (over steps along a reduction dim, or over
    the cores of a split reduction dim) that are wider than the storage (`partial_bytes`, e.g.
    fp32 partials of fp16 storage): they then accumulate in a buffer of their own that is
    rounded into the output once they are complete."""
    return (
        expr.elem_bytes < expr.partial_bytes
        and expr.kind is not ExprKind.ELEMENTWISE
        and (
            plan.temporal_dim in expr.reduction_dims
            or plan.outer_dim in expr.reduction_dims
            or reduction_group(expr, plan) > 1
        )
    )


@dataclass(frozen=True)
class Estimate:
    compute_cycles: int
    exchange_cycles: int
    sync_cycles: int
    sram_bytes: int

    @property
    def cycles(self) -> int:
        return self.compute_cycles + self.exchange_cycles + self.sync_cycles


def epilogue_elements(out_tile: int, group: int, rounding: bool) -> int:
    """Elements a fused epilogue computes per core: the output tile, in the compute phase of
    the operator's last step; after a split reduction, 1/group of it, between the all-reduce's
    reduce-scatter and its all-gather (`core.kernel ... scatter`), in the all-gather's
    superstep. After a rounding pass it runs over the tile in a superstep of its own."""
    return ceil(out_tile / group) if group > 1 and not rounding else out_tile


def output_rings(expr: TensorExpr, factors: tuple[int, ...], temporal: int) -> tuple[int, ...]:
    """The ring dims on which the output's partial sums may rotate along `temporal` (see the
    module docstring): a contraction without an epilogue whose output reads `temporal`, on
    its one split reduction dim (none when several are split)."""
    if (
        expr.kind is not ExprKind.CONTRACTION
        or expr.epilogue is not None
        or not expr.output.uses(temporal)
    ):
        return ()
    split = tuple(d for d in expr.reduction_dims if factors[d] > 1)
    return split if len(split) == 1 else ()


def rotation_choices(
    expr: TensorExpr, factors: tuple[int, ...], temporal: int, outer: int | None = None
) -> Iterator[tuple[Rotation, ...]]:
    """All ways to rotate the inputs that read `temporal` (or, with an `outer` temporal dim,
    either of the two: `Rotation.outer`): per input, no rotation or a ring on a distinct grid
    axis it does not read, with f_t dividing that axis (f_t > 1). An epilogue's inputs never
    rotate (they are read once, after the last step). The output may rotate too, last, along
    the outer dim if there is one, on its ring (`output_rings`) in F[ring] pieces."""
    levels = ((temporal, False),) if outer is None else ((outer, True), (temporal, False))
    out_dim, out_outer = levels[0]

    def choices(i: int, used: frozenset[int]) -> Iterator[tuple[Rotation, ...]]:
        if i == expr.own_inputs:
            yield ()
            for g in output_rings(expr, factors, out_dim):
                if g not in used:
                    yield (Rotation(OUTPUT, g, factors[g], out_outer),)
            return
        acc = expr.inputs[i]
        yield from choices(i + 1, used)
        for dim, along_outer in levels:
            if not acc.uses(dim):
                continue
            for g, fg in enumerate(factors):
                if g in used or acc.uses(g) or fg == 1:
                    continue
                for pieces in range(2, fg + 1):
                    if fg % pieces == 0:
                        for rest in choices(i + 1, used | {g}):
                            yield (Rotation(i, g, pieces, along_outer), *rest)

    yield from choices(0, frozenset())


def shiftable_dims(expr: TensorExpr) -> tuple[int, ...]:
    """The loop dims a plan may cut into steps. A reduction (not a contraction) computes each
    output chunk in one kernel, so it never shifts along a reduction dim: its kernels overwrite
    their output instead of accumulating into it (the output buffer needs no init to the
    combiner's identity), and the reduction dims' per-core origins follow from the grid."""
    if expr.kind is ExprKind.REDUCTION:
        return tuple(d for d in range(expr.rank) if expr.parallel[d])
    return tuple(range(expr.rank))


def temporal_plans(
    expr: TensorExpr, factors: tuple[int, ...], rotate: bool, levels: int = 1
) -> Iterator[Plan]:
    """Every plan with these spatial factors: no temporal split, and (if `rotate`) every
    temporal dim with every rotation choice, at the common pace N = lcm of the f_t, and (if
    `levels` is 2) every ordered pair of temporal dims (outer, inner) with every rotation
    choice that rotates something along each, at the common pace of each dim (outer
    rotations listed first)."""
    yield Plan(factors)
    if not rotate:
        return
    dims = shiftable_dims(expr)

    def fits(d: int, steps: int) -> bool:  # chunks would be empty otherwise
        return steps <= ceil(expr.loop_sizes[d] / factors[d])

    for d in dims:
        for rots in rotation_choices(expr, factors, d):
            if rots and fits(d, steps := lcm(*(r.pieces for r in rots))):
                yield Plan(factors, d, steps, rots)
    for e in dims if levels == 2 else ():
        for d in dims:
            if e == d:
                continue
            for rots in rotation_choices(expr, factors, d, e):
                outer = tuple(r for r in rots if r.outer)
                inner = tuple(r for r in rots if not r.outer)
                if not outer or not inner:
                    continue
                n1, n2 = lcm(*(r.pieces for r in outer)), lcm(*(r.pieces for r in inner))
                if fits(e, n1) and fits(d, n2):
                    yield Plan(factors, d, n2, outer + inner, e, n1)


def plan_problem(expr: TensorExpr, plan: Plan, chip: ChipSpec | None = None) -> str | None:
    """Why `plan` cannot run `expr` (on `chip`, if given; None if it can). Accepts what
    `temporal_plans` generates, and also steps that are a multiple of the pieces' lcm (a finer
    pace). The one plan validator: verifiers, the plan search and pinned plans all use it."""
    if chip is not None and plan.cores > chip.cores:
        return f"it uses {plan.cores} cores but chip '{chip.name}' has {chip.cores}"
    rank = expr.rank
    if len(plan.factors) != rank:
        return f"it has {len(plan.factors)} factors but the operator has {rank} loop dims"
    for d, (f, size) in enumerate(zip(plan.factors, expr.loop_sizes, strict=True)):
        if not 1 <= f <= size:
            return f"factor {f} of d{d} must be between 1 and the loop size {size}"
    if plan.placement is not None:
        problem = placement_problem(
            plan.factors, plan.placement, None if chip is None else chip.core_shape
        )
        if problem is not None:
            return f"its placement <{plan.placement}> does not fit: {problem}"
    return _steps_problem(expr, plan)


def _steps_problem(expr: TensorExpr, plan: Plan) -> str | None:
    """Why the temporal part of `plan` cannot run `expr`."""
    d = plan.temporal_dim
    if d is None:
        if plan.steps != 1 or plan.rotations or plan.outer_dim is not None:
            return "a plan without a shift dim must have 1 step and no rotations"
        return None
    if plan.outer_dim is None and (plan.outer_steps != 1 or any(r.outer for r in plan.rotations)):
        return "a plan with one shift dim has 1 outer step and no outer rotations"
    if plan.outer_dim == d:
        return f"the outer and the inner shift dim are both d{d}"
    for outer in (True, False) if plan.outer_dim is not None else (False,):
        problem = _level_problem(expr, plan, outer)
        if problem is not None:
            return problem
    operands: set[int] = set()
    rings: set[int] = set()
    for r in plan.rotations:
        problem = _rotation_problem(expr, plan, r)
        if problem is not None:
            return problem
        if r.operand in operands or r.ring_dim in rings:
            return "each operand rotates at most once and rings use distinct dims"
        operands.add(r.operand)
        rings.add(r.ring_dim)
    return None


def _level_problem(expr: TensorExpr, plan: Plan, outer: bool) -> str | None:
    """Why one temporal dim (outer or inner) of `plan` cannot run `expr`."""
    d, steps = plan.level_dim(outer), plan.level_steps(outer)
    assert d is not None
    what = "outer shift dim" if outer else "shift dim"
    if not 0 <= d < expr.rank:
        return f"{what} d{d} is not a loop dim"
    if d not in shiftable_dims(expr):
        return f"a reduction cannot shift along its reduction dim d{d}"
    tile = ceil(expr.loop_sizes[d] / plan.factors[d])
    if not 2 <= steps <= tile:
        return f"{steps} steps do not fit the tile of {tile} of {what} d{d}"
    rotations = [r for r in plan.rotations if r.outer == outer]
    if not rotations:
        return f"a plan that shifts d{d} rotates at least one input or its output along it"
    if steps % lcm(*(r.pieces for r in rotations)):
        return f"{steps} steps of d{d} must be a multiple of every rotation's pieces along it"
    return None


def _rotation_problem(expr: TensorExpr, plan: Plan, r: Rotation) -> str | None:
    """Why one rotation of `plan` cannot run `expr` (its level is checked)."""
    d = plan.level_dim(r.outer)
    assert d is not None
    rank = expr.rank
    if r.operand == OUTPUT:
        return output_rotation_problem(expr, plan, r)
    if not 0 <= r.operand < len(expr.inputs):
        return f"rotation of input {r.operand}: the operator has {len(expr.inputs)} inputs"
    if r.operand >= expr.own_inputs:
        return f"input {r.operand} is read by the epilogue, which never rotates"
    acc = expr.inputs[r.operand]
    if not acc.uses(d):
        return f"input {r.operand} does not read shift dim d{d}, so it cannot rotate"
    if not 0 <= r.ring_dim < rank or acc.uses(r.ring_dim):
        return f"ring d{r.ring_dim} of input {r.operand} must be a loop dim it does not read"
    if r.pieces < 2 or plan.factors[r.ring_dim] % r.pieces:
        return (
            f"input {r.operand} rotates in {r.pieces} pieces, which must be >= 2 and "
            f"divide the factor {plan.factors[r.ring_dim]} of ring d{r.ring_dim}"
        )
    return None


def output_rotation_problem(expr: TensorExpr, plan: Plan, rot: Rotation) -> str | None:
    """Why the output cannot rotate as `rot` in `plan` (None if it can); see the module
    docstring for the restrictions."""
    d, g = plan.level_dim(rot.outer), rot.ring_dim
    assert d is not None
    if expr.kind is not ExprKind.CONTRACTION:
        return "only a contraction's output (its partial sums) can rotate"
    if expr.epilogue is not None:
        return (
            "the output of an operator with a fused epilogue cannot rotate (the epilogue "
            "needs finished tiles)"
        )
    if not expr.output.uses(d):
        return f"the output does not read shift dim d{d}, so it cannot rotate"
    if plan.outer_dim is not None and not rot.outer:
        return (
            "with two shift dims the output rotates along the outer one (it shifts once its "
            "chunk has every inner step's contribution)"
        )
    if not 0 <= g < expr.rank or expr.parallel[g]:
        return f"the output's ring d{g} must be a reduction dim"
    if rot.pieces != plan.factors[g] or rot.pieces < 2:
        return (
            f"the output rotates in {rot.pieces} pieces, which must be the factor "
            f"{plan.factors[g]} (>= 2) of its ring d{g}: every core of the ring adds its part"
        )
    others = [r for r in expr.reduction_dims if r != g and plan.factors[r] > 1]
    if others:
        return (
            f"the output rotates on ring d{g}, so no other reduction dim may be split "
            f"(d{others[0]} has factor {plan.factors[others[0]]})"
        )
    return None


def format_plan(plan: Plan) -> str:
    """The plan in the syntax of `#rtensor.plan<...>` (without the brackets): one `shift`
    clause per temporal dim, outer first."""
    text = f"grid [{', '.join(map(str, plan.factors))}]"
    for outer in (True, False):
        d = plan.level_dim(outer)
        if d is None:
            continue
        rots = ", ".join(
            f"({'out' if r.operand == OUTPUT else r.operand}, d{r.ring_dim}, {r.pieces})"
            for r in plan.rotations
            if r.outer == outer
        )
        text += f" shift d{d} steps {plan.level_steps(outer)} rotate [{rots}]"
    if plan.placement is not None:
        text += f" {plan.placement}"
    return text


def validate_plan(chip: ChipSpec, expr: TensorExpr, plan: Plan) -> None:
    """Raise `T10Error` naming the operator if `plan` cannot run `expr` on `chip`."""
    problem = plan_problem(expr, plan, chip)
    if problem is not None:
        raise T10Error(
            f"operator '{expr.name}': pinned plan <{format_plan(plan)}> is invalid: {problem}"
        )
