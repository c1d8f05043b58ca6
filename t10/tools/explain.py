"""`t10 explain`: why the plan search chose an operator's plan.

The model is planned as `t10 run` plans it. For the operator asked about, every plan of its
Pareto frontier (bytes per core against cycles, hot; with their cold twins when the chosen
plan keeps its weights cold) is put in its place with every other operator's plan as chosen,
and the model is measured with it: its peak bytes per core (does it fit?) and its cycles
(the operators' and the relayouts' into the operator and its readers). The chosen plan is
the one of least model cycles among those that fit, as far as the search found it; where
another plan would have made the model faster, the explanation says the memory it had to fit.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from math import prod
from typing import IO, Any

import onnx

from t10.common.attr_names import COLD_ATTR, PLAN_ATTR
from t10.common.chip_spec import ChipSpec
from t10.common.locations import onnx_nodes
from t10.common.plans import Estimate, Layout, format_plan, input_layouts, output_layout
from t10.common.tensor_expr import element_bytes, op_name, precision_type
from t10.driver import compile_model
from t10.errors import T10Error
from t10.outputs.figures import log_ticks, plot, shorten
from t10.pass_instrumentation import PassObserver
from t10.passes.t10_plan_search import (
    SharedSearch,
    T10PlanSearch,
    dataflow_edges,
    model_liveness,
    with_shared_moves,
)
from t10.planning.cold_weights import with_cold_weights
from t10.planning.compile_options import DEFAULTS, CompileOptions, given_options
from t10.planning.memory_reconciliation import PlanPoint, model_bytes
from t10.planning.operators import Operator, operator_tensor_expr, planned_operators
from t10.planning.planners import planner, planner_names, planners


@dataclass(frozen=True)
class Alternative:
    """One plan of the operator, with the model measured around it."""

    point: PlanPoint
    model_bytes: int
    """The model's peak bytes per core with this plan, every other as chosen."""
    model_cycles: int
    """The model's cycles with this plan: operators, relayouts and gathers (moves an
    operator shares with another counted for each)."""
    chosen: bool


@dataclass(frozen=True)
class Explanation:
    chip: ChipSpec
    operator: str
    nodes: tuple[str, ...]
    sram_bytes: int
    """A core's SRAM."""
    alternatives: tuple[Alternative, ...]
    """The frontier, fastest (and fattest) plan first, and the chosen plan."""
    layouts: tuple[str, ...]
    """The chosen plan's tensors in words: its inputs, then its output."""
    moves_in: Estimate | None
    moves_out: tuple[tuple[str, Estimate | None], ...]
    """Each reader of the operator's output, and the relayouts into it (all its inputs')."""

    @property
    def chosen(self) -> Alternative:
        return next(a for a in self.alternatives if a.chosen)

    def reason(self) -> str:
        """Why this plan, in a sentence or two."""
        chosen = self.chosen
        fastest = min(self.alternatives, key=lambda a: a.point.cycles)
        better = [a for a in self.alternatives if a.model_cycles < chosen.model_cycles]
        fitting = [a for a in better if a.model_bytes <= self.sram_bytes]
        if chosen is fastest and not better:
            return "it is the operator's fastest plan, and the model fits with it"
        if fitting:
            return (
                f"the search did not find the best plan here: another plan that fits would "
                f"make the model {chosen.model_cycles - min(a.model_cycles for a in fitting):,} "
                "cycles faster (the memory reconciliation is greedy)"
            )
        if better:
            need = min(a.model_bytes for a in better)
            return (
                f"memory: every plan that would make the model faster needs the model to "
                f"hold at least {need:,} B per core, more than the {self.sram_bytes:,} B of "
                "SRAM"
            )
        return (
            f"transitions: the operator's faster plans ({fastest.point.cycles:,} cycles alone) "
            "cost more in moves into it and its readers than they save"
        )


def _layout_words(name: str, layout: Layout, elem_bytes: int) -> str:
    """`name [shape]: dim i split n ways, ...; c copies; tile per core (bytes)`."""
    dims = []
    for i, (size, axis) in enumerate(zip(layout.shape, layout.axes, strict=True)):
        pieces = 1 if axis is None else layout.grid[axis]
        dims.append(f"dim {i} ({size}) split {pieces} ways" if pieces > 1 else f"dim {i} whole")
    used = {a for a in layout.axes if a is not None}
    copies = prod(g for a, g in enumerate(layout.grid) if a not in used)
    local = layout.local_shape()
    text = (
        f"{name} {list(layout.shape)}: {', '.join(dims)}; "
        f"{'one copy' if copies == 1 else f'{copies} copies'} over {layout.cores:,} cores; "
        f"{'×'.join(map(str, local))} per core ({prod(local) * elem_bytes:,} B)"
    )
    r = layout.rotating
    if r is not None:
        text += f"; rotates dim {r.dim} in {r.steps} steps around rings of {r.pieces} cores"
    return text


def _find(operators: list[Operator], name: str) -> int:
    for i, o in enumerate(operators):
        if op_name(o.generic) == name or any(name in onnx_nodes(g) for g in o.ops()):
            return i
    known = ", ".join(op_name(o.generic) for o in operators)
    raise T10Error(f"no operator is named '{name}' or made from an ONNX node of that name "
                   f"(operators: {known})")


def explain(
    model: str | os.PathLike[str] | onnx.ModelProto,
    op: str,
    options: CompileOptions = DEFAULTS,
    *,
    observer: PassObserver | None = None,
    input_ranges: Mapping[str, tuple[int, int]] | None = None,
    dims: Mapping[str, int] | None = None,
) -> Explanation:
    """Plan `model` as `t10 run` does with these options and explain the plan of operator
    `op` (its `t10.name`, or the name of an ONNX node it computes)."""
    name = given_options(options).planner
    if name in planner_names() and planner(name).search is None:  # unknown: compile_model says
        traded = ", ".join(p.name for p in planners() if p.search is not None)
        raise T10Error("t10 explain covers the planners that trade plans between operators "
                       f"({traded}); {name} plans each operator on its own")
    compiled = compile_model(
        model,
        options,
        emit="linalg",
        observer=observer,
        input_ranges=input_ranges,
        dims=dims,
    )
    if observer is not None:
        observer.stage("explain")
    module, spec = compiled.module, compiled.chip
    operators = planned_operators(module)
    target = _find(operators, op)
    planning = T10PlanSearch(**options.plan_options(), reuse=False)
    exprs = [operator_tensor_expr(o, options.precision, options.partials) for o in operators]
    shared = SharedSearch()
    # every operator's plan is pinned now: its options are the chosen point
    chosen = [
        planning.options(spec, o, e, shared).points[0]
        for o, e in zip(operators, exprs, strict=True)
    ]
    generic = operators[target].generic
    pins = {k: generic.attributes.pop(k) for k in (PLAN_ATTR, COLD_ATTR) if k in generic.attributes}
    try:
        frontier = planning.options(spec, operators[target], exprs[target], shared)
    finally:
        generic.attributes.update(pins)
    if chosen[target].cold:
        frontier = with_cold_weights(spec, exprs[target], frontier)
    points = list(frontier.points)
    if chosen[target] not in points:
        points.append(chosen[target])
    elem = element_bytes(precision_type(options.precision, "--precision"), "--precision")
    liveness = model_liveness(module, operators, elem)
    edges = dataflow_edges(operators)
    readers = sorted({e.consumer for e in edges if e.producer == target})
    base = with_shared_moves(spec, exprs, chosen, edges, liveness, False).costed()
    alternatives = []
    for point in points:
        placed = [*chosen[:target], point, *chosen[target + 1 :]]
        result = with_shared_moves(spec, exprs, placed, edges, liveness, False)
        # the moves into the other operators are the base's: neither their producers' plans
        # nor the moves they share changed
        changed = {k for k in {*base.reused, *result.reused}
                   if base.reused.get(k) != result.reused.get(k)}
        kept = set(base.known) - {target, *readers} - changed
        result.known.update({k: base.known[k] for k in kept})
        alternatives.append(
            Alternative(
                point,
                model_bytes(placed, result.liveness),
                result.total_cycles,
                point == chosen[target],
            )
        )
    expr, plan = exprs[target], chosen[target].plan
    names = [f"input {k}" for k in range(expr.own_inputs)]
    names += [f"epilogue input {k}" for k in range(len(expr.inputs) - expr.own_inputs)]
    layouts = [
        _layout_words(n, lay, expr.elem_bytes)
        for n, lay in zip(names, input_layouts(expr, plan), strict=True)
    ]
    layouts.append(_layout_words("output", output_layout(expr, plan), expr.elem_bytes))
    return Explanation(
        chip=spec,
        operator=op_name(generic),
        nodes=tuple(n for g in operators[target].ops() for n in onnx_nodes(g)),
        sram_bytes=spec.sram_bytes_per_core,
        alternatives=tuple(alternatives),
        layouts=tuple(layouts),
        moves_in=base.transitions(target)[0],
        moves_out=tuple((op_name(operators[i].generic), base.transitions(i)[0]) for i in readers),
    )


def format_explanation(e: Explanation, stream: IO[str]) -> None:
    """The explanation as text: the frontier with the chosen plan marked, why, the layouts
    and the moves."""
    w = stream.write
    w(f"operator  {e.operator}  (ONNX nodes: {', '.join(e.nodes)})\n")
    w(f"chip      {e.chip.name}: {e.chip.cores:,} cores, {e.sram_bytes:,} B SRAM per core\n\n")
    plans = [
        format_plan(a.point.plan) + (f" cold {list(a.point.cold)}" if a.point.cold else "")
        for a in e.alternatives
    ]
    width = max(len(p) for p in plans)
    w(f"   {'plan':<{width}}    cycles    B/core  model B/core  fits  model cycles\n")
    for a, text in zip(e.alternatives, plans, strict=True):
        p, fits = a.point, "yes" if a.model_bytes <= e.sram_bytes else "no"
        w(f"{'=>' if a.chosen else '  '} {text:<{width}}  {p.cycles:>8,}  "
          f"{p.estimate.sram_bytes:>8,}  {a.model_bytes:>12,}  {fits:<4}  {a.model_cycles:>12,}\n")
    w(f"\nwhy       {e.reason()}\n\nlayouts of the chosen plan\n")
    for line in e.layouts:
        w(f"  {line}\n")
    w("\nmoves\n")
    w(f"  into it: {_cycles(e.moves_in)}\n")
    for name, est in e.moves_out:
        w(f"  into its reader {name} (all of its inputs): {_cycles(est)}\n")
    if not e.moves_out:
        w("  it has no readers among the operators (its output is the model's)\n")


def _cycles(est: Estimate | None) -> str:
    if est is None:
        return "none"
    return (f"{est.cycles:,} cycles ({est.exchange_cycles:,} exchange, {est.sync_cycles:,} "
            "sync)")


def plot_file_name(operator: str) -> str:
    """The default file of `t10 explain --plot`: `explain-<the operator's name, its characters
    other than letters, digits, '-', '_' and '.' as '_', cut to 40>-<8 hex digits of a hash of
    the whole name>.png`, short enough for any file system and one per operator (a fused
    operator's name can be hundreds of characters long)."""
    slug = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in operator)
    digest = hashlib.sha256(operator.encode()).hexdigest()[:8]
    return f"explain-{slug[:40]}-{digest}.png"


def plot_explanation(e: Explanation, path: str) -> None:
    """A figure at `path`: the frontier (bytes per core against cycles, log axes: the plans'
    few KB and the SRAM's hundreds in one view) with the chosen plan marked, each plan's model
    (peak and cycles), and the SRAM per core."""

    def paint(fig: Any) -> None:
        ax = fig.subplots()
        points = [a.point for a in e.alternatives]
        ax.plot([p.estimate.sram_bytes for p in points], [p.cycles for p in points], "o-",
                color="tab:blue", label="the operator's plans (its bytes, its cycles)")
        ax.plot([a.model_bytes for a in e.alternatives],
                [a.model_cycles for a in e.alternatives], "s", color="tab:gray", alpha=0.6,
                label="the model with that plan (its peak, its cycles)")
        c = e.chosen
        ax.plot([c.point.estimate.sram_bytes, c.model_bytes], [c.point.cycles, c.model_cycles],
                "*", markersize=16, color="tab:red", label="the chosen plan")
        ax.axvline(e.sram_bytes, color="black", linestyle="--", linewidth=1,
                   label=f"SRAM per core ({e.sram_bytes:,} B)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        for axis in (ax.xaxis, ax.yaxis):
            log_ticks(axis, "{x:,.0f}")
        ax.set_xlabel("bytes per core (log scale)")
        ax.set_ylabel("cycles (log scale)")
        ax.set_title(shorten(e.operator, 70))
        fig.legend(loc="outside lower center", ncols=2)

    plot(path, 8, 5.5, paint)
