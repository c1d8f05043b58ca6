"""`t10 run --plot FILE.png`: where the simulated time went and how full the cores were.

Two panels: the operators taking the most time (up to `TOP`), each a bar split into compute,
exchange and sync cycles; and the SRAM in use per core over the run, superstep by superstep
to the run's last cycle (the busiest core's peak and the program's cores' mean), against the
chip's SRAM per core.

`t10 run --link-map FILE.png` (`plot_link_map`, a mesh chip): the bytes each link carried
over the run, a heat map over the grid per direction.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import numpy as np

from t10.common.chip_spec import ChipSpec
from t10.common.topologies.mesh import DIRECTIONS, MeshTopology
from t10.errors import T10Error
from t10.outputs.figures import PHASE_COLOURS, message, plot, shorten
from t10.sim.interpreter_chip import SimReport

TOP = 20
"""The operators shown in the time breakdown (the rest are summed in one bar)."""
NAME_CHARS = 50
"""An operator's label at most (longer names keep their start and end)."""
PHASES = ("compute", "exchange", "sync", "wait")


def plot_run(sim: SimReport, chip: ChipSpec, path: str, title: str) -> None:
    if not sim.steps:
        plot(path, 8, 1, lambda fig: message(
            fig, f"{title}: no superstep ran on {chip.name}: nothing to plot"))
        return
    ops = sorted(sim.ops, key=lambda o: o.cycles, reverse=True)
    bars = [(shorten(o.name, NAME_CHARS), [o.compute_cycles, o.exchange_cycles,
                                           o.sync_cycles, o.wait_cycles]) for o in ops[:TOP]]
    rest = ops[TOP:]
    if rest:
        bars.append((f"{len(rest)} other operators",
                     [sum(o.compute_cycles for o in rest), sum(o.exchange_cycles for o in rest),
                      sum(o.sync_cycles for o in rest), sum(o.wait_cycles for o in rest)]))
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


def link_mesh(chip: ChipSpec, option: str) -> MeshTopology:
    """The mesh whose links `option` draws: a T10Error unless the chip is one mesh."""
    topology = chip.topology
    if not isinstance(topology, MeshTopology):
        raise T10Error(f"{option} draws the links of a mesh, but chip '{chip.name}' has the "
                       f"{topology.kind} topology: give a mesh chip (e.g. --chip mesh-64)")
    return topology


def plot_link_map(sim: SimReport, chip: ChipSpec, path: str, title: str) -> None:
    """`t10 run --link-map`: the bytes each link of the mesh carried over the run, one
    panel per direction, each cell the link leaving that core (row, column) that way, on one
    colour scale; links off the edge of a mesh without wrap are blank."""
    mesh = link_mesh(chip, "--link-map")
    loads = (sim.link_bytes or {}).get("mesh", np.zeros((mesh.rows, mesh.cols, 4)))
    shown = np.array(loads, dtype=np.float64)
    if not mesh.wrap:
        shown[:, -1, 0] = shown[:, 0, 1] = shown[-1, :, 2] = shown[0, :, 3] = np.nan
    top = max(float(np.nanmax(shown, initial=0.0)), 1.0)
    link = sim.busiest_link
    busiest = "nothing moved" if link is None else (
        f"busiest link row {link.index[0]}, col {link.index[1]} {DIRECTIONS[link.index[2]]}: "
        f"{link.nbytes:,} bytes")
    panel = 4.2 * mesh.rows / max(mesh.rows, mesh.cols)

    def paint(fig: Any) -> None:
        axes = fig.subplots(2, 2, sharex=True, sharey=True)
        fig.suptitle(f"{title}: bytes per link over the run on {chip.name} "
                     f"({mesh.rows}x{mesh.cols} mesh)\n{busiest}")
        images = []
        for k, ax in enumerate(axes.flat):
            images.append(ax.imshow(shown[:, :, k], cmap="viridis", vmin=0.0, vmax=top,
                                    origin="upper", interpolation="nearest"))
            ax.set_title(f"links going {DIRECTIONS[k]}")
            ax.set_xlabel("column")
            ax.set_ylabel("row")
            ax.label_outer()
        fig.colorbar(images[0], ax=axes, label="bytes", format="{x:,.0f}")

    plot(path, 10, 2 * panel + 1.6, paint)
