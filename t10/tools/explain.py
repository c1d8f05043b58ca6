"""`t10 explain`: why the plan search chose an operator's plan.

The model is planned as `t10 run` plans it. For the operator asked about, every plan of its
Pareto frontier is put in its place with every other operator's plan as chosen, and the model
is measured with it (`t10.planning.operator_alternatives`: its peak bytes per core and its
cycles). The chosen plan is the one of least model cycles among those that fit, as far as the
search found it; where another plan would have made the model faster, the explanation says
the memory it had to fit. This module words, prints and plots it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from math import prod
from typing import IO, Any

import onnx

from t10.common.chip_spec import ChipSpec
from t10.common.plans import Estimate, Layout, format_plan
from t10.driver import compile_model
from t10.errors import T10Error
from t10.outputs.figures import log_ticks, plot, shorten
from t10.pass_instrumentation import PassObserver
from t10.planning import (
    DEFAULTS,
    Alternative,
    CompileOptions,
    operator_alternatives,
    planner,
    planner_names,
)


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


def explain(
    model: str | os.PathLike[str] | onnx.ModelProto,
    op: str,
    options: CompileOptions = DEFAULTS,
    *,
    observer: PassObserver | None = None,
    input_ranges: Mapping[str, tuple[int, int]] | None = None,
    dims: Mapping[str, int] | None = None,
    verify_each: bool = True,
) -> Explanation:
    """Plan `model` as `t10 run` does with these options and explain the plan of operator
    `op` (its `t10.name`, or the name of an ONNX node it computes)."""
    if isinstance(options, CompileOptions):  # otherwise compile_model says what it must be
        name = options.planner
        if name in planner_names() and planner(name).search is None:  # unknown: compile_model
            traded = ", ".join(n for n in planner_names() if planner(n).search is not None)
            raise T10Error("t10 explain covers the planners that trade plans between operators "
                           f"({traded}); {name} plans each operator on its own")
    compiled = compile_model(
        model,
        options,
        emit="linalg",
        observer=observer,
        input_ranges=input_ranges,
        dims=dims,
        verify_each=verify_each,
    )
    if observer is not None:
        observer.stage("explain")
    found = operator_alternatives(compiled.module, options, op)
    return Explanation(
        chip=compiled.chip,
        operator=found.operator,
        nodes=found.nodes,
        sram_bytes=compiled.chip.sram_bytes_per_core,
        alternatives=found.alternatives,
        layouts=tuple(_layout_words(n, lay, found.elem_bytes) for n, lay in found.layouts),
        moves_in=found.moves_in,
        moves_out=found.moves_out,
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
