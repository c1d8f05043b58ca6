"""The `vgm` planner's choice (Roller-style virtual global memory, the compiler baseline T10
is measured against).

Every tensor has a *home*: `host_layout` over all the program's cores (`cores`, the chip's).
Weights and function arguments are placed in their homes before the program; every operator
loads its inputs from their homes into its plan's layouts (`rtensor.relayout "<op>/relayout"`),
computes, and stores its output into its home (`"<op>/store"`), where its readers load it
from. Nothing stays in an operator's layout between operators, so each operator's plan is
chosen on its own: the plan of least load + compute + store cycles, each move estimated as
the simulator charges it (`transition_estimate`, `gather_estimate`), among its spatial plans
(`candidates`) whose buffers fit a core beside the homes live while it runs.

Memory (docs/DESIGN.md, memory contract): the homes of weights and arguments and the
program-long host tensors (gather tables and ids) for the whole program; an operator's
output home from its store to its last reader's load (or the move of a view of it returned
from the function); an operator's own buffers (its estimate's bytes: the loaded inputs, its
output, its scratch) while it loads, runs and stores. Homes do not depend on plans, so what
is live beside an operator is known before any plan is chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import prod

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Block, SSAValue

from t10.common import costs
from t10.common.attr_names import IDS_ATTR
from t10.common.chip_spec import ChipSpec
from t10.common.estimator import PlanEstimator
from t10.common.move_costs import GatherOperand, GatherSpec, transition_estimate
from t10.common.plans import (
    Estimate,
    Layout,
    Plan,
    host_layout,
    input_layouts,
    output_layout,
    same_placement,
)
from t10.common.tensor_expr import Access, TensorExpr
from t10.common.view_maps import View
from t10.errors import DoesNotFit
from t10.planning.layout_transitions import aligned_plan, gather_moves, summed
from t10.planning.memory_reconciliation import Liveness, OpOptions
from t10.planning.operators import Operator
from t10.planning.plan_search import plan_key
from t10.t10_dialects.rtensor import GatherOp, through_views


@dataclass(frozen=True)
class Load:
    """Input `operand` is loaded from the home of a tensor of shape `source` (an operator's
    output or a host tensor) through `view` (None: no views between)."""

    operand: int
    source: tuple[int, ...]
    view: View | None = None


@dataclass(frozen=True)
class VgmOperator:
    """One operator as the vgm choice sees it: its expression, its plans (`options`: the
    spatial frontier, or the pinned plan), its loads and its gathers of runtime ids."""

    expr: TensorExpr
    options: OpOptions
    loads: tuple[Load, ...]
    gathers: tuple[tuple[int, GatherSpec], ...] = ()


@dataclass(frozen=True)
class VgmPoint:
    """The chosen plan of an operator, its estimate and its moves' (None: nothing moves)."""

    plan: Plan
    estimate: Estimate
    loads: Estimate | None
    gathers: Estimate | None
    store: Estimate

    @property
    def cycles(self) -> int:
        moves = (self.loads, self.gathers, self.store)
        return self.estimate.cycles + sum(m.cycles for m in moves if m is not None)


def gather_spec(
    gather: GatherOp, placed: set[int], producer_of: Callable[[SSAValue], int | None]
) -> GatherSpec:
    """The gather's spec for the plan search: its kind and shapes, and where its table and
    ids come from (`producer_of`: the operator whose output a value is); a viewed table or
    ids is placed by the first gather that reads it (`placed`: those placed so far, in
    program order, as convert-linalg-to-rtensor places them)."""
    table, ids, _ = gather.tensors()
    operands: list[GatherOperand] = []
    for operand in (gather.table, gather.ids):
        origin, view = through_views(operand)
        places = view is not None and id(operand) not in placed
        if view is not None:
            placed.add(id(operand))
        assert isinstance(origin.type, TensorType)
        shape = tuple(origin.type.get_shape())
        operands.append(GatherOperand(producer_of(origin), view, shape, places))
    return GatherSpec(gather.kind(), table.get_shape(), ids.get_shape(), *operands,
                      known_ids=_known_ids(gather.ids))


def _known_ids(ids: SSAValue) -> tuple[int, ...] | None:
    """The ids, flattened, when they are the frontend's constant (`t10.ids`)."""
    op = ids.owner
    if not (isinstance(op, arith.ConstantOp) and IDS_ATTR in op.attributes
            and isinstance(op.value, DenseIntOrFPElementsAttr)):
        return None
    count = prod(op.value.get_shape())
    raw = np.frombuffer(op.value.data.data, dtype="<f4")
    return tuple(int(i) for i in np.broadcast_to(raw, (count,)))


def loads_and_gathers(
    operator: Operator, placed: set[int] | None = None
) -> tuple[tuple[Load, ...], tuple[tuple[int, GatherSpec], ...]]:
    """What `operator` loads from homes, and the gathers of runtime ids it reads (made
    straight into its layout from the table and ids in their homes; a gather read through
    views is made in its home, then loaded through them). `placed`: see `gather_spec`
    (default: none yet)."""
    placed = set() if placed is None else placed
    loads, gathers = [], []
    for k, value in enumerate(operator.inputs):
        source, view = through_views(value)
        if isinstance(source.owner, GatherOp):
            spec = gather_spec(source.owner, placed, lambda _: None)  # outputs are in homes
            gathers.append((k, spec))
            if view is not None:
                loads.append(Load(k, spec.kind.shape(spec.table, spec.ids), view))
        else:
            assert isinstance(source.type, TensorType)
            loads.append(Load(k, tuple(source.type.get_shape()), view))
    return tuple(loads), tuple(gathers)


def host_home_bytes(operators: Sequence[Operator], cores: int, elem_bytes: int) -> int:
    """Bytes per core of the homes of the weights and function arguments the operators
    read (each once), placed for the whole program."""
    homes: dict[int, tuple[int, ...]] = {}
    for operator in operators:
        for value in operator.inputs:
            source, _ = through_views(value)
            if isinstance(source.owner, arith.ConstantOp | Block):
                assert isinstance(source.type, TensorType)
                homes[id(source)] = tuple(source.type.get_shape())
    return sum(home_bytes(shape, cores, elem_bytes) for shape in homes.values())


def home_bytes(shape: tuple[int, ...], cores: int, elem_bytes: int) -> int:
    return host_layout(shape, cores).local_elements() * elem_bytes


def move_floor(chip: ChipSpec, src: Layout, dst: Layout, elem_bytes: int, view: View | None) -> int:
    """A lower bound of `transition_estimate`'s cycles (`relayout_traffic`: a core receives
    what its destination buffer needs and its source buffer lacks, requested from every
    holder in equal shares). A move that is not free costs a sync; without a view its
    exchange is at least the bytes of: what core 0 (whose tiles are whole) receives, what it
    sends (its source tile times the destination's copies, less what its copies keep, over
    its copies), and the elements missing anywhere spread over all senders."""
    if view is None and same_placement(src, dst):
        return 0
    sync = costs.sync_cycles(chip)
    if view is not None:
        return sync
    src_copies, dst_copies = _copies(src), _copies(dst)
    received = prod(dst.tile) - src.local_elements()
    sent = (prod(src.tile) * dst_copies - src_copies * dst.local_elements()) / src_copies
    missing = prod(src.shape) * (dst_copies - src_copies) / src.cores
    most = int(max(received, sent, missing, 0) * elem_bytes)
    return sync + costs.exchange_floor(chip, most)


def _copies(layout: Layout) -> int:
    """How many cores hold each element (grid axes that split no dim replicate)."""
    return prod(layout.grid) // prod(layout.grid[a] for a in set(layout.axes) if a is not None)


@dataclass
class MoveCosts:
    """The estimates of moves between layouts, each costed once per pass (identical
    operators, and the candidate plans of one, meet the same moves)."""

    chip: ChipSpec
    cores: int
    """The cores the homes (and the gathers' tables and ids) lie over."""
    known: dict[tuple[object, ...], Estimate] = field(default_factory=dict)
    gathered: dict[tuple[object, ...], list[Estimate]] = field(default_factory=dict)

    def moves(self, op: VgmOperator, plan: Plan) -> list[tuple[Layout, Layout, View | None]]:
        """(source, destination, view) of the loads of `op` under `plan`, then its store's."""
        ins, out = input_layouts(op.expr, plan), output_layout(op.expr, plan)
        loads = [
            (host_layout(load.source, self.cores), ins[load.operand], load.view)
            for load in op.loads
        ]
        return [*loads, (out, host_layout(out.shape, self.cores), None)]

    def floor(self, op: VgmOperator, plan: Plan, est: Estimate) -> int:
        """A lower bound of `costed(..).cycles` (`move_floor`; a gather costs a sync)."""
        eb = op.expr.elem_bytes
        moves = sum(
            move_floor(self.chip, src, dst, eb, view) for src, dst, view in self.moves(op, plan)
        )
        return est.cycles + moves + len(op.gathers) * costs.sync_cycles(self.chip)

    def costed(self, op: VgmOperator, plan: Plan, est: Estimate) -> VgmPoint:
        eb = op.expr.elem_bytes
        *loads, store = [self.move(*m, eb) for m in self.moves(op, plan)]
        ins = input_layouts(op.expr, plan)
        viewed = {load.operand for load in op.loads}
        gathers = [
            move
            for k, spec in op.gathers
            for move in self.gather(ins[k], k in viewed, eb, spec)
        ]
        return VgmPoint(plan, est, summed([e for e in loads if e.cycles]), summed(gathers), store)

    def move(self, src: Layout, dst: Layout, view: View | None, elem_bytes: int) -> Estimate:
        key = (src, dst, view, elem_bytes)
        if key not in self.known:
            self.known[key] = transition_estimate(self.chip, src, dst, elem_bytes, view)
        return self.known[key]

    def gather(
        self, dst: Layout, viewed: bool, elem_bytes: int, spec: GatherSpec
    ) -> list[Estimate]:
        """The gather's supersteps (`gather_moves`), its table and ids in their homes."""
        key = (dst, viewed, elem_bytes, spec)
        if key not in self.gathered:
            self.gathered[key] = gather_moves(
                self.chip, spec, dst, viewed, elem_bytes, self.cores,
                lambda _, shape: host_layout(shape, self.cores),
            )
        return self.gathered[key]


def candidates(chip: ChipSpec, op: VgmOperator, cores: int) -> list[tuple[Plan, Estimate]]:
    """The plans `op` may take: the pinned one; else its spatial frontier (over bytes and
    cycles) and the spatial plans that place an input loaded without views, or the output,
    exactly as its home (that move is then free), which the frontier may leave out.
    Not every spatial plan: costing every tile vector's moves through views takes minutes
    on a BERT layer."""
    found = {p.plan: p.estimate for p in op.options.points}
    if op.options.pinned:
        return list(found.items())
    expr = op.expr
    homes: list[tuple[Access, int | None, Layout]] = [
        (expr.inputs[load.operand], load.operand, host_layout(load.source, cores))
        for load in op.loads
        if load.view is None
    ]
    homes.append((expr.output, None, host_layout(expr.output.shape, cores)))
    fast = PlanEstimator(chip, expr)
    for access, operand, home in homes:
        plan = aligned_plan(expr, access, operand, home)
        if plan is not None and plan not in found and plan.cores <= chip.cores:
            found[plan] = fast.estimate(plan)
    return list(found.items())


def best_point(op: VgmOperator, moves: MoveCosts, budget: int) -> VgmPoint | None:
    """The plan of least load + compute + store cycles (then fewest bytes, then
    `plan_key`) among those whose bytes are within `budget` (None: none is); candidates
    are costed in order of their `MoveCosts.floor`, while it could still win."""
    fitting = [(p, e) for p, e in candidates(moves.chip, op, moves.cores) if e.sram_bytes <= budget]
    floors = sorted((moves.floor(op, p, e), e.sram_bytes, plan_key(p), p, e) for p, e in fitting)
    best: tuple[int, int, tuple, VgmPoint] | None = None
    for floor, nbytes, key, plan, est in floors:
        if best is not None and floor > best[0]:
            break
        point = moves.costed(op, plan, est)
        found = (point.cycles, nbytes, key, point)
        if best is None or found[:3] < best[:3]:
            best = found
    return None if best is None else best[3]


@dataclass(frozen=True)
class HomeLiveness:
    """The bytes per core the homes take beside each operator and returned view."""

    resident: int
    """The homes placed for the whole program (weights, arguments, gather tables and ids)."""
    beside: tuple[int, ...]
    """Per operator, the output homes live while it loads, runs and stores (its own
    included)."""
    returned: tuple[int, ...]
    """Per returned view (`Liveness.returned`), the output homes live while it is made, and
    its destination."""

    @staticmethod
    def of(
        exprs: Sequence[TensorExpr], liveness: Liveness, cores: int, resident: int
    ) -> HomeLiveness:
        n = len(exprs)
        own = np.array(
            [home_bytes(e.output.shape, cores, e.elem_bytes) for e in exprs], dtype=np.int64
        )
        # operator p's home is live from its store to its last reader's loads (inclusive)
        change = np.zeros(n + 2, dtype=np.int64)
        for p in range(n):
            change[p] += own[p]
            change[liveness.live_until(p) + 1] -= own[p]
        beside = np.cumsum(change[:n])
        returned = []
        for view in liveness.returned:
            across = sum(
                int(own[p]) for p in range(view.after + 1) if liveness.live_until(p) > view.after
            )
            source = host_layout(view.source, cores).cores
            returned.append(across + home_bytes(view.shape, source, view.elem_bytes))
        return HomeLiveness(resident, tuple(int(b) for b in beside), tuple(returned))


def choose_vgm(
    chip: ChipSpec,
    ops: Sequence[VgmOperator],
    homes: HomeLiveness,
    cores: int,
) -> list[VgmPoint]:
    """Each operator's `best_point` within the SRAM beside the homes live while it runs;
    a `T10Error` when one has none, or the returned views do not fit."""
    capacity = chip.sram_bytes_per_core
    moves = MoveCosts(chip, cores)
    chosen = []
    for op, beside in zip(ops, homes.beside, strict=True):
        point = best_point(op, moves, capacity - homes.resident - beside)
        if point is None:
            least = min(e.sram_bytes for _, e in candidates(chip, op, cores))
            raise _does_not_fit(
                chip,
                homes.resident + beside + least,
                homes.resident,
                f"{beside + least} bytes while '{op.expr.name}' runs ({least} of its own, "
                f"{beside} of output homes live across it)",
            )
        chosen.append(point)
    need = vgm_model_bytes(chosen, homes)
    if need > capacity:
        raise _does_not_fit(
            chip,
            need,
            homes.resident,
            f"{need - homes.resident} bytes while a returned view is made on chip",
        )
    return chosen


def vgm_model_bytes(chosen: Sequence[VgmPoint], homes: HomeLiveness) -> int:
    """Per-core bytes of the model at its peak: the program-long homes, plus the most live
    beside an operator (its own buffers and the homes) or a returned view."""
    peaks = [b + p.estimate.sram_bytes for b, p in zip(homes.beside, chosen, strict=True)]
    return homes.resident + max([*peaks, *homes.returned], default=0)


def _does_not_fit(chip: ChipSpec, need: int, resident: int, peak: str) -> DoesNotFit:
    return DoesNotFit(
        f"the model does not fit chip '{chip.name}': it has {chip.sram_bytes_per_core} bytes "
        f"of SRAM per core, but the smallest plans need {need} bytes per core (planner=vgm): "
        f"{resident} bytes of homes placed for the whole program (weights, arguments, gather "
        f"tables and ids) + {peak}; use a chip with more SRAM per core or more cores than "
        f"{chip.cores}, or the t10 planner (planner=t10), which keeps tensors where their "
        "readers need them",
        need,
    )
