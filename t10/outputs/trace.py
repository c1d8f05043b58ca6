"""`t10 run --trace FILE.json`: the simulated run in the Chrome trace-event format (JSON; opens
in Perfetto and chrome://tracing).

Time is the simulated chip's (cycles at its clock, in microseconds as the format counts them;
the trace's span is the report's time). Three processes of tracks:

- **chip**: one track of every superstep in program order, named by its operator, each with
  its phases as nested slices (`compute`, `exchange`, `sync`), and two counter tracks: the
  SRAM in use per core (`peak`: the busiest core's peak while the superstep ran; `mean`: the
  program's cores on average when it ended) and the cores the superstep used; on a chip whose
  topology routes, a third, `busiest link utilisation` (the superstep's busiest link's busy
  cycles ÷ its exchange cycles, 0 when it exchanges nothing; docs/report.md), and each
  superstep's slice names its busiest link and that link's bytes (`busiest_link`,
  `busiest_link_bytes`);
- **operators**: a track per operator (fused chains and relayouts are operators of their own,
  as in the report), holding its supersteps;
- **core groups**: a track per number of cores a superstep runs on, holding its supersteps.
"""

from __future__ import annotations

from typing import Any

from t10.common.chip_spec import ChipSpec
from t10.sim.interpreter_chip import SimReport

CHIP, OPERATORS, CORE_GROUPS = 1, 2, 3
"""The trace's processes (pids)."""
LINK_COUNTER = "busiest link utilisation"


def chrome_trace(sim: SimReport, chip: ChipSpec, title: str = "t10") -> dict[str, Any]:
    """The trace-event JSON object of `sim` on `chip` (`title` names the chip process)."""
    per_us = chip.clock_hz / 1e6

    def us(cycles: int) -> float:
        return cycles / per_us

    events: list[dict[str, Any]] = [
        _meta(CHIP, None, "process_name", f"{title} on {chip.name}"),
        _meta(CHIP, 0, "thread_name", "supersteps"),
        _meta(OPERATORS, None, "process_name", "operators"),
        _meta(CORE_GROUPS, None, "process_name", "core groups"),
    ]
    for pid, order in ((CHIP, 0), (OPERATORS, 1), (CORE_GROUPS, 2)):
        events.append({"ph": "M", "pid": pid, "name": "process_sort_index",
                       "args": {"sort_index": order}})
    routes = chip.topology.routes
    operators: dict[str, int] = {}
    groups: dict[int, int] = {}
    start = 0
    for step in sim.steps:
        if step.label not in operators:
            operators[step.label] = len(operators)
            events.append(_meta(OPERATORS, operators[step.label], "thread_name", step.label))
        if step.cores_used not in groups:
            groups[step.cores_used] = len(groups)
            events.append(_meta(CORE_GROUPS, groups[step.cores_used], "thread_name",
                                f"{step.cores_used:,} cores"))
        op_tid, group_tid = operators[step.label], groups[step.cores_used]
        args: dict[str, Any] = {
            "compute_cycles": step.compute_cycles,
            "exchange_cycles": step.exchange_cycles,
            "sync_cycles": step.sync_cycles,
            "wait_cycles": step.wait_cycles,
            "cores": step.cores_used,
        }
        if routes:
            link = step.busiest_link
            args["busiest_link"] = None if link is None else link.name
            args["busiest_link_bytes"] = 0 if link is None else link.nbytes
        for pid, tid in ((CHIP, 0), (OPERATORS, op_tid), (CORE_GROUPS, group_tid)):
            events.append(_slice(pid, tid, step.label, us(start), us(step.cycles), args))
        at = start
        for phase, cycles in (
            ("wait", step.wait_cycles),
            ("compute", step.compute_cycles),
            ("exchange", step.exchange_cycles),
            ("sync", step.sync_cycles),
        ):
            if cycles:
                events.append(_slice(CHIP, 0, phase, us(at), us(cycles), {"cycles": cycles}))
            at += cycles
        events.append({"ph": "C", "pid": CHIP, "name": "SRAM per core (bytes)", "ts": us(start),
                       "args": {"peak": step.sram_peak_bytes, "mean": step.sram_mean_bytes}})
        events.append({"ph": "C", "pid": CHIP, "name": "cores used", "ts": us(start),
                       "args": {"cores": step.cores_used}})
        if routes:
            events.append({"ph": "C", "pid": CHIP, "name": LINK_COUNTER, "ts": us(start),
                           "args": {"utilisation": step.link_utilisation or 0.0}})
        start += step.cycles
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {"chip": chip.name, "clock_hz": chip.clock_hz,
                      "total_cycles": sim.total_cycles},
    }


def _meta(pid: int, tid: int | None, name: str, value: str) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "M", "pid": pid, "name": name, "args": {"name": value}}
    if tid is not None:
        event["tid"] = tid
    return event


def _slice(
    pid: int, tid: int, name: str, ts: float, dur: float, args: dict[str, Any]
) -> dict[str, Any]:
    return {"ph": "X", "pid": pid, "tid": tid, "name": name, "ts": ts, "dur": dur, "args": args}
