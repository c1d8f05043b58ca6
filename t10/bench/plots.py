"""`t10 bench`'s plots from the rows of `t10.bench.table.make_rows`, one band per row (model,
layers, batch, chip), top down in the table's order:

- speedup.png: t10's speedup over each baseline (log scale, the value at each bar; where there
  is none, why); when no row has one, a line saying so;
- memory.png: each planner's peak SRAM per core against the row's chip's SRAM per core; where
  a planner does not fit, what it would need (hatched), or why there is nothing to draw;
- breakdown.png: where each planner's cycles go, one panel per planner;
- vary.png (a sweep over a chip parameter, `--vary`): each planner's total cycles against
  the parameter's value, one panel per model, batch and base chip; × where it does not fit.

A planner has one colour in every plot, whatever the order of `--planners`
(`planner_colour`). The figures are `t10.outputs.figures`': its text sizes and resolution,
as tall as their rows need up to its maximum."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from t10.bench.models import PLANNER_CONFIGS, REFERENCE
from t10.bench.table import SHARES
from t10.outputs.figures import MAX_WIDTH, PHASE_COLOURS, TEXT_PT, log_ticks, message, plot

__all__ = ["PLOTS", "VARY_PLOT", "planner_colour", "write_plots", "write_vary_plot"]

PLOTS = ("speedup.png", "memory.png", "breakdown.png")
VARY_PLOT = "vary.png"

PALETTE = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d",
           "#666666")
"""The planners' colours (ColorBrewer Dark2: apart from the phases' colours)."""

Row = Mapping[str, Any]

WIDTH = 8.0
"""Inches: the speedup and memory plots; the breakdown adds a panel per planner."""
FRAME = 1.8
"""Inches of a figure's height around its rows: title, legend, axis labels."""
BAR, GAP = 0.2, 0.3
"""Inches of a row's height per bar, and between rows."""


def planner_colour(name: str) -> str:
    """The colour of planner configuration `name` in every plot: by its place among
    `PLANNER_CONFIGS`, a name outside them by a hash of it among the colours left."""
    known = list(PLANNER_CONFIGS)
    if name in known:
        index = known.index(name)
    else:
        index = len(known) + zlib.crc32(name.encode()) % max(1, len(PALETTE) - len(known))
    return PALETTE[index % len(PALETTE)]


def write_plots(rows: Sequence[Row], planners: Sequence[str], out: Path) -> None:
    """The three figures of the module docstring, into the directory `out`."""
    several = len({r["chip"] for r in rows}) > 1
    labels = [_label(r, several) for r in rows]
    baselines = [p for p in planners if p != REFERENCE]
    if any(r["speedup"].get(b) is not None for r in rows for b in baselines):
        plot(out / "speedup.png", WIDTH, _height(len(rows), len(baselines)),
             _drawing(_speedup, rows, baselines, labels))
    else:
        others = " or ".join(baselines)
        why = (f"{REFERENCE} and {others} never both fit (memory.png: what they need)"
               if baselines else f"the sweep ran {REFERENCE} alone")
        plot(out / "speedup.png", WIDTH, 1.0,
             lambda fig: message(fig, f"no speedup to show: {why}"))
    plot(out / "memory.png", WIDTH, _height(len(rows), len(planners)),
         _drawing(_memory, rows, planners, labels))
    plot(out / "breakdown.png", min(MAX_WIDTH, 3 + 1.6 * len(planners)), _height(len(rows), 1),
         _drawing(_breakdown, rows, planners, labels))


PANEL = 2.4
"""Inches of a panel's height in vary.png."""


def write_vary_plot(rows: Sequence[Row], planners: Sequence[str], parameter: str,
                    out: Path) -> None:
    """vary.png (the module docstring) into the directory `out`."""
    panels: dict[str, list[Row]] = {}
    for r in rows:
        base = r["chip"].rpartition("[")[0]
        panels.setdefault(f"{_label(r, False)}, {base}", []).append(r)
    plot(out / VARY_PLOT, WIDTH, FRAME + PANEL * len(panels),
         lambda fig: _vary(fig, panels, planners, parameter))


def _vary(fig: Any, panels: Mapping[str, Sequence[Row]], planners: Sequence[str],
          parameter: str) -> None:
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (title, rows) in zip(axes, panels.items(), strict=True):
        values = [r["varied"][parameter] for r in rows]
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        xs = values if numeric else list(range(len(values)))
        for j, p in enumerate(planners):
            # each planner's marks smaller and higher than the last: equal ones stay visible
            colour, size = planner_colour(p), max(3.0, 8.0 - 2.5 * j)
            fit = [(x, r["cycles"][p]) for x, r in zip(xs, rows, strict=True)
                   if r["status"].get(p) == "ok"]
            ax.plot([x for x, _ in fit], [c for _, c in fit], "o-", color=colour,
                    markersize=size)
            unfit = [x for x, r in zip(xs, rows, strict=True)
                     if r["status"].get(p) not in (None, "ok")]
            ax.plot(unfit, [0.05 + 0.07 * j] * len(unfit), "x", color=colour,
                    markersize=size + 1, markeredgewidth=2, linestyle="none",
                    transform=ax.get_xaxis_transform())
        if not numeric:
            ax.set_xticks(xs, [str(v) for v in values])
        else:
            ax.xaxis.set_major_formatter("{x:,g}")
        ax.set_ylim(bottom=0)
        ax.set_title(title)
        ax.set_ylabel("cycles")
        ax.yaxis.set_major_formatter("{x:,.0f}")
    axes[-1].set_xlabel(f"{parameter} (×: does not fit)")
    fig.suptitle(f"total cycles against the chip's {parameter}")
    fig.legend(handles=[_patch(p, planner_colour(p)) for p in planners],
               loc="outside lower center", ncols=min(len(planners), 4))


Painter = Callable[[Any, Sequence[Row], Sequence[str], list[str]], None]


def _drawing(paint: Painter, rows: Sequence[Row], planners: Sequence[str],
             labels: list[str]) -> Callable[[Any], None]:
    return lambda fig: paint(fig, rows, planners, labels)


def _label(row: Row, several_chips: bool) -> str:
    layers = f"{row['layers']} layer{'s' if row['layers'] != 1 else ''}"
    chip = f", {row['chip']}" if several_chips else ""
    phase = row.get("phase")
    served = ("" if phase is None else f", prefill {row['seq']}" if phase == "prefill"
              else f", decode after {row['context']}")
    return f"{row['model']} ({layers}){served}, batch {row['batch']}{chip}"


def _height(rows: int, bars: int) -> float:
    """The height for `rows` rows of `bars` bars each (`t10.outputs.figures.plot` caps it)."""
    return FRAME + rows * (BAR * bars + GAP)


class _Bands:
    """The rows of a figure's axes, top down: each a band of `per_row` bars (0.8 of it),
    and whether a bar is tall enough to write a line of text by it."""

    def __init__(self, fig: Any, rows: int, per_row: int) -> None:
        self.rows, self.per_row = rows, per_row
        self.height = 0.8 / per_row
        self.row_points = 72 * (fig.get_size_inches()[1] - FRAME) / max(rows, 1)
        self.texts = self.points() >= 1.3 * TEXT_PT

    def points(self) -> float:
        """A bar's height in points."""
        return self.row_points * self.height

    def y(self, row: int, bar: int) -> float:
        return row + (bar - (self.per_row - 1) / 2) * self.height

    def label(self, ax: Any, labels: list[str]) -> None:
        """The rows on `ax`'s y axis, each labelled; the labels smaller than `TEXT_PT` only
        when there are more rows than the tallest figure holds at that size."""
        ax.set_yticks(range(self.rows), labels,
                      fontsize=min(TEXT_PT, self.row_points / 1.3))
        ax.set_ylim(self.rows - 0.5, -0.5)

    def bars(self, ax: Any, spans: list[tuple[float, float, float]], **style: Any) -> None:
        """A bar at each (y, x0, x1), as one collection (a figure of a hundred rows has
        thousands of bars: drawn one by one, they take a minute)."""
        from matplotlib.collections import PolyCollection

        h = self.height / 2
        ax.add_collection(PolyCollection(
            [[(a, y - h), (b, y - h), (b, y + h), (a, y + h)] for y, a, b in spans],
            linewidth=0.8 if "hatch" in style else 0, **style))

    def missing(self, ax: Any, at: list[tuple[float, float, str]]) -> None:
        """`× why` right of each (x, y, why); a bare × where bars are too thin for text."""
        if self.texts:
            for x, y, why in at:
                ax.annotate(f"× {why}", (x, y), xytext=(4, 0), textcoords="offset points",
                            ha="left", va="center", color="0.25")
        elif at:
            size = min(6.0, self.points())
            ax.plot([x for x, _, _ in at], [y for _, y, _ in at], "x", color="0.25",
                    markersize=size, linestyle="none")


def _speedup(fig: Any, rows: Sequence[Row], baselines: Sequence[str], labels: list[str]) -> None:
    ax = fig.subplots()
    bands = _Bands(fig, len(rows), len(baselines))
    values = [s for r in rows for b in baselines if (s := r["speedup"].get(b)) is not None]
    # decades left and right of 1×, and room for the values written by the bars
    left = -math.log10(min(*values, 1.0))
    right = math.log10(max(*values, 1.0))
    pad = 0.2 * (left + right) + 0.35  # at least 0.5× to 2×: three ticks
    missing = []
    for j, b in enumerate(baselines):
        bars = []
        for i, r in enumerate(rows):
            s = r["speedup"].get(b)
            if s is not None:
                bars.append((bands.y(i, j), s))
                continue
            down = [p for p in (REFERENCE, b) if r["status"].get(p) != "ok"]
            why = "; ".join(f"{p} {r['status'].get(p, 'not run')}" for p in down)
            missing.append((1.0, bands.y(i, j), why))
        bands.bars(ax, [(y, 1.0, s) for y, s in bars], color=planner_colour(b))
        # the bar's end marked too: a speedup of 1.00× has no width
        ax.plot([s for _, s in bars], [y for y, _ in bars], "|", color=planner_colour(b),
                markersize=bands.points(), markeredgewidth=2, linestyle="none")
        if bands.texts:
            for y, s in bars:
                ax.annotate(f"{s:.2f}×", (s, y), xytext=(3 if s >= 1 else -3, 0),
                            textcoords="offset points", ha="left" if s >= 1 else "right",
                            va="center")
    if missing and bands.texts:  # room right of 1× for why there is no speedup
        right = max(right, 0.9 * (left + pad) - pad)
    bands.missing(ax, missing)
    ax.set_xscale("log")
    ax.set_xlim(10 ** -(left + pad), 10 ** (right + pad))
    log_ticks(ax.xaxis, "{x:g}×")
    ax.axvline(1.0, color="black", linewidth=0.8)
    bands.label(ax, labels)
    ax.set_xlabel(f"the baseline's cycles ÷ {REFERENCE}'s, log scale\n(right of 1×: "
                  f"{REFERENCE} is faster; ×: no speedup)")
    fig.suptitle(f"{REFERENCE}'s speedup over each baseline")
    fig.legend(handles=[_patch(f"over {b}", planner_colour(b)) for b in baselines],
               loc="outside lower center", ncols=min(len(baselines), 4))


def _memory(fig: Any, rows: Sequence[Row], planners: Sequence[str], labels: list[str]) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax = fig.subplots()
    bands = _Bands(fig, len(rows), len(planners))
    capacities = [r["sram_bytes_per_core"] / 1000 for r in rows]
    widest = max(capacities)
    missing = []
    needed = False
    for j, p in enumerate(planners):
        fits, needs = [], []
        for i, r in enumerate(rows):
            peak = r["peak_sram_bytes_per_core"].get(p)
            need = r["needed_sram_bytes_per_core"].get(p)
            if peak is not None:
                fits.append((bands.y(i, j), peak / 1000))
            elif need is not None:
                needs.append((bands.y(i, j), need / 1000))
            else:
                missing.append((0.0, bands.y(i, j), f"{p} {r['status'].get(p, 'not run')}"))
        colour = planner_colour(p)
        bands.bars(ax, [(y, 0.0, kb) for y, kb in fits], color=colour)
        bands.bars(ax, [(y, 0.0, kb) for y, kb in needs], facecolor="none", hatch="//",
                   edgecolor=colour)
        widest = max([widest] + [kb for _, kb in fits + needs])
        needed = needed or bool(needs)
    bands.missing(ax, missing)
    ax.vlines(capacities, [i - 0.45 for i in range(len(rows))],
              [i + 0.45 for i in range(len(rows))], colors="black", linestyles="--",
              linewidth=1)
    ax.set_xlim(0, 1.05 * widest)
    bands.label(ax, labels)
    ax.set_xlabel("KB per core (1 KB = 1000 B)")
    fig.suptitle("peak SRAM per core of each planner")
    handles = [_patch(p, planner_colour(p)) for p in planners]
    if needed:
        handles.append(Patch(fill=False, hatch="//", edgecolor="0.25",
                             label="does not fit: what it would need"))
    handles.append(Line2D([], [], color="black", linestyle="--", linewidth=1,
                          label="the chip's SRAM per core"))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 3))


def _breakdown(fig: Any, rows: Sequence[Row], planners: Sequence[str],
               labels: list[str]) -> None:
    panels = fig.subplots(1, len(planners), sharey=True, squeeze=False)[0]
    bands = _Bands(fig, len(rows), 1)
    for ax, p in zip(panels, planners, strict=True):
        shown = [(i, s) for i, r in enumerate(rows) if (s := r["shares"].get(p)) is not None]
        left = [0.0] * len(shown)
        for part in SHARES:
            right = [a + 100 * s[part] for a, (_, s) in zip(left, shown, strict=True)]
            bands.bars(ax, [(i, a, b) for (i, _), a, b in zip(shown, left, right, strict=True)],
                       color=PHASE_COLOURS[part])
            left = right
        bands.missing(ax, [(0.0, i, r["status"].get(p, "not run")) for i, r in enumerate(rows)
                           if r["shares"].get(p) is None])
        ax.set_xlim(0, 100)
        ax.set_title(p, color=planner_colour(p))
        ax.set_xlabel("% of cycles")
    bands.label(panels[0], labels)
    fig.suptitle("where each planner's cycles go (×: none, the planner does not fit)")
    fig.legend(handles=[_patch(s, PHASE_COLOURS[s]) for s in SHARES],
               loc="outside lower center", ncols=len(SHARES))


def _patch(label: str, colour: str) -> Any:
    from matplotlib.patches import Patch

    return Patch(color=colour, label=label)
