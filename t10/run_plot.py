"""`t10 run --plot FILE.png`: where the simulated time went and how full the cores were.

Two panels: the operators taking the most time (up to `TOP`), each a bar split into compute,
exchange and sync cycles; and the SRAM in use per core over the run, superstep by superstep
(the busiest core's peak and the program's cores' mean), against the chip's SRAM per core.
"""

from __future__ import annotations

from t10.common.chip_spec import ChipSpec
from t10.figures import new_figure, save_figure
from t10.sim.interpreter_chip import SimReport

TOP = 20
"""The operators shown in the time breakdown (the rest are summed in one bar)."""


def plot_run(sim: SimReport, chip: ChipSpec, path: str, title: str) -> None:
    ops = sorted(sim.ops, key=lambda o: o.cycles, reverse=True)
    shown = ops[:TOP]
    rest = ops[TOP:]
    names = [o.name if len(o.name) <= 48 else o.name[:45] + "..." for o in shown]
    phases = {
        "compute": [o.compute_cycles for o in shown],
        "exchange": [o.exchange_cycles for o in shown],
        "sync": [o.sync_cycles for o in shown],
    }
    if rest:
        names.append(f"{len(rest)} other operators")
        phases["compute"].append(sum(o.compute_cycles for o in rest))
        phases["exchange"].append(sum(o.exchange_cycles for o in rest))
        phases["sync"].append(sum(o.sync_cycles for o in rest))
    fig = new_figure(10, 4 + 0.28 * len(names))
    top, bottom = fig.subplots(2, 1, height_ratios=[max(3, 0.28 * len(names)), 3])
    ys = list(range(len(names)))[::-1]
    left = [0] * len(names)
    for phase, colour in (("compute", "tab:blue"), ("exchange", "tab:orange"),
                          ("sync", "tab:gray")):
        top.barh(ys, phases[phase], left=left, color=colour, label=phase)
        left = [a + b for a, b in zip(left, phases[phase], strict=True)]
    top.set_yticks(ys, names, fontsize=7)
    top.set_xlabel("cycles")
    top.set_title(f"{title}: {sim.total_cycles:,} cycles on {chip.name}")
    top.legend(fontsize=8)
    starts, peaks, means = [], [], []
    at = 0
    for step in sim.steps:
        starts.append(at)
        peaks.append(step.sram_peak_bytes)
        means.append(step.sram_mean_bytes)
        at += step.cycles
    bottom.step(starts, peaks, where="post", color="tab:red", label="busiest core (peak)")
    bottom.step(starts, means, where="post", color="tab:green", label="mean over the cores")
    bottom.axhline(chip.sram_bytes_per_core, color="black", linestyle="--", linewidth=1,
                   label="SRAM per core")
    bottom.set_xlabel("cycles")
    bottom.set_ylabel("bytes per core")
    bottom.legend(fontsize=8)
    save_figure(fig, path, 100)
