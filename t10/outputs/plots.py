"""`t10 run --plot FILE.png`: where the simulated time went and how full the cores were.

Two panels: the operators taking the most time (up to `TOP`), each a bar split into compute,
exchange and sync cycles; and the SRAM in use per core over the run, superstep by superstep
to the run's last cycle (the busiest core's peak and the program's cores' mean), against the
chip's SRAM per core.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

from t10.common.chip_spec import ChipSpec
from t10.outputs.figures import PHASE_COLOURS, message, plot, shorten
from t10.sim.interpreter_chip import SimReport

TOP = 20
"""The operators shown in the time breakdown (the rest are summed in one bar)."""
NAME_CHARS = 50
"""An operator's label at most (longer names keep their start and end)."""
PHASES = ("compute", "exchange", "sync")


def plot_run(sim: SimReport, chip: ChipSpec, path: str, title: str) -> None:
    if not sim.steps:
        plot(path, 8, 1, lambda fig: message(
            fig, f"{title}: no superstep ran on {chip.name}: nothing to plot"))
        return
    ops = sorted(sim.ops, key=lambda o: o.cycles, reverse=True)
    bars = [(shorten(o.name, NAME_CHARS), [o.compute_cycles, o.exchange_cycles,
                                           o.sync_cycles]) for o in ops[:TOP]]
    rest = ops[TOP:]
    if rest:
        bars.append((f"{len(rest)} other operators",
                     [sum(o.compute_cycles for o in rest), sum(o.exchange_cycles for o in rest),
                      sum(o.sync_cycles for o in rest)]))
    times = 0.6 + 0.3 * len(bars)

    def paint(fig: Any) -> None:
        top, bottom = fig.subplots(2, 1, height_ratios=[times, 2.6])
        fig.suptitle(f"{title}: {sim.total_cycles:,} cycles on {chip.name}")
        _times(top, bars)
        _sram(bottom, sim, chip)

    plot(path, 10, times + 3.6, paint)


def _times(ax: Any, bars: list[tuple[str, list[int]]]) -> None:
    """One bar per operator, top down, split into its phases."""
    ys = range(len(bars))
    left = [0] * len(bars)
    for k, phase in enumerate(PHASES):
        cycles = [b[1][k] for b in bars]
        ax.barh(ys, cycles, left=left, color=PHASE_COLOURS[phase], label=phase)
        left = [a + c for a, c in zip(left, cycles, strict=True)]
    ax.set_yticks(ys, [b[0] for b in bars])
    ax.invert_yaxis()
    ax.set_xlabel("cycles")
    ax.xaxis.set_major_formatter("{x:,.0f}")
    _legend_above(ax)


def _sram(ax: Any, sim: SimReport, chip: ChipSpec) -> None:
    """Each superstep's bytes per core from its first cycle to its last (every step drawn
    through its end: the run's last cycle included)."""
    edges = list(accumulate((s.cycles for s in sim.steps), initial=0))
    for values, colour, label in (
        ([s.sram_peak_bytes for s in sim.steps], "tab:red", "busiest core (peak)"),
        ([s.sram_mean_bytes for s in sim.steps], "tab:green", "mean over the cores"),
    ):
        ax.step(edges, [*values, values[-1]], where="post", color=colour, label=label)
    ax.axhline(chip.sram_bytes_per_core, color="black", linestyle="--", linewidth=1,
               label=f"SRAM per core ({chip.sram_bytes_per_core:,} B)")
    ax.set_xlabel("cycles")
    ax.set_ylabel("bytes per core")
    ax.xaxis.set_major_formatter("{x:,.0f}")
    ax.yaxis.set_major_formatter("{x:,.0f}")
    _legend_above(ax)


def _legend_above(ax: Any) -> None:
    """The legend in one line above `ax` (inside, it would hide bars or lines)."""
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncols=3, borderaxespad=0)
