"""`t10 bench`'s plots (matplotlib, PNG) from the rows of `t10.bench_table.make_rows`:
speedup.png (t10 over each baseline per model and batch), memory.png (peak SRAM per core per
planner against the chip's capacity) and breakdown.png (where each planner's cycles go). matplotlib
is imported here only, when the plots are drawn, and draws without a display (no pyplot)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from t10.bench_models import REFERENCE
from t10.bench_table import SHARES
from t10.common.files import output_file

__all__ = ["PLOTS", "write_plots"]

PLOTS = ("speedup.png", "memory.png", "breakdown.png")


def _label(row: Mapping[str, Any]) -> str:
    chips = f"\n{row['chip']}" if row.get("several_chips") else ""
    return f"{row['model']} ×{row['layers']}\nb{row['batch']}{chips}"


def write_plots(rows: Sequence[Mapping[str, Any]], planners: Sequence[str], out: Path) -> None:
    """The three PNGs of the module docstring, into the directory `out`."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    several = len({r["chip"] for r in rows}) > 1
    labels = [_label({**r, "several_chips": several}) for r in rows]
    width = max(6.0, 0.9 * len(rows) + 2)
    xs = list(range(len(rows)))

    def bars(
        ax: Any,
        series: Mapping[str, Sequence[float | None]],
        unfit: Mapping[str, Sequence[float | None]] | None = None,
    ) -> None:
        """Grouped bars, one colour per series; a missing value is a red × on the axis, or
        (`unfit`) an empty hatched bar up to what the planner would need."""
        step = 0.8 / max(len(series), 1)
        for i, (name, values) in enumerate(series.items()):
            offset = (i - (len(series) - 1) / 2) * step
            color = f"C{i}"
            ax.bar([x + offset for x, v in zip(xs, values, strict=True) if v is not None],
                   [v for v in values if v is not None], step, label=name, color=color)
            needs = (unfit or {}).get(name, [None] * len(xs))
            for x, v, need in zip(xs, values, needs, strict=True):
                if v is not None:
                    continue
                if need is not None:  # does not fit: the bytes it would need
                    ax.bar(x + offset, need, step, fill=False, hatch="//", edgecolor=color)
                ax.text(x + offset, 0, "×", ha="center", va="bottom", color="red")
        ax.set_xticks(xs, labels, fontsize=7)
        if series:  # a sweep of t10 alone has no speedups to show
            # drawn from the colours: a series that never fits has no bar to take one from
            handles = [Patch(color=f"C{i}", label=name) for i, name in enumerate(series)]
            ax.legend(handles=handles, fontsize=7)

    def save(fig: Any, ax: Any, title: str, ylabel: str, name: str) -> None:
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(ylabel)
        with output_file(out / name, "the plot") as fresh:
            fig.savefig(fresh, dpi=100, bbox_inches="tight")  # room for every label

    baselines = [p for p in planners if p != REFERENCE]
    fig = Figure(figsize=(width, 4))
    ax = fig.add_subplot()
    bars(ax, {f"over {b}": [r["speedup"].get(b) for r in rows] for b in baselines})
    ax.axhline(1.0, color="grey", linewidth=0.8)
    save(fig, ax, f"speedup of {REFERENCE} (× = a planner does not fit)",
         "speedup (cycles ratio)", "speedup.png")

    fig = Figure(figsize=(width, 4))
    ax = fig.add_subplot()
    bars(ax, {p: [_kb(r["peak_sram_bytes_per_core"].get(p)) for r in rows] for p in planners},
         {p: [_kb(r["needed_sram_bytes_per_core"].get(p)) for r in rows] for p in planners})
    for chip in sorted({r["chip"] for r in rows}):
        capacity = next(r["sram_bytes_per_core"] for r in rows if r["chip"] == chip)
        ax.axhline(capacity / 1000, color="red", linewidth=0.8, linestyle="--")
        ax.text(0, capacity / 1000, f" {chip} SRAM", va="bottom", fontsize=7, color="red")
    save(fig, ax, "peak SRAM per core (× = does not fit; hatched: what it would need)",
         "KB per core", "memory.png")

    fig = Figure(figsize=(width, 4))
    ax = fig.add_subplot()
    step = 0.8 / len(planners)
    colors = {s: f"C{i}" for i, s in enumerate(SHARES)}
    for i, p in enumerate(planners):
        at = [x + (i - (len(planners) - 1) / 2) * step for x in xs]
        bottom = [0.0] * len(rows)
        for s in SHARES:
            values = [100 * r["shares"][p][s] if r["shares"].get(p) else 0.0 for r in rows]
            ax.bar(at, values, step * 0.9, bottom=bottom, color=colors[s],
                   label=s if i == 0 else None, edgecolor="white", linewidth=0.3)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        for x in at:
            ax.text(x, 100, p, rotation=90, ha="center", va="bottom", fontsize=6)
    ax.set_xticks(xs, labels, fontsize=7)
    ax.set_ylim(0, 130)
    ax.legend(fontsize=7, loc="upper left", ncols=len(SHARES))
    save(fig, ax, "where the cycles go, per planner (empty: does not fit)", "% of cycles",
         "breakdown.png")


def _kb(x: int | None) -> float | None:
    return None if x is None else x / 1000
