"""`t10 bench`'s table: the case results of a sweep (`t10.bench.models.run_sweep`) grouped
into one row per (model, layers, batch, seq, phase, context, chip), t10's geometric-mean
speedup over each baseline, and the Markdown and JSON files (format: docs/bench.md)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from t10.bench.models import REFERENCE

__all__ = [
    "SHARES",
    "TIMINGS",
    "Summary",
    "failure",
    "format_markdown",
    "make_rows",
    "shares",
    "summarize",
    "to_json",
]

SHARES = ("compute", "exchange", "sync", "relayout")
"""Where a run's cycles go: the operators' compute, exchange and sync phases, and the
relayouts and gathers between operators (all their phases)."""

TIMINGS = ("compile_seconds", "simulate_seconds")
"""The figures of a case that are not deterministic (host seconds)."""

ROW_KEYS = ("model", "layers", "batch", "seq", "chip")
"""The columns that name a row (a served decoder's rows also `SERVING_KEYS`)."""
SERVING_KEYS = ("phase", "context")
"""What names a row of a served decoder besides `ROW_KEYS` (None in the others)."""
GROUP_KEYS = (*ROW_KEYS, *SERVING_KEYS)

FIGURES = ("tokens_per_second", "roofline_fraction", "binding", "offchip_busy_cycles",
           "wait_cycles")
"""The figures of a case the rows hold per planner beside its cycles: the tokens served per
second (prefill and decode), the bound over the cycles, the resource that binds, the off-chip
memory's busy cycles and the chip's waits for it (on a chip with off-chip memory); None where
they do not apply."""


def shares(case: Mapping[str, Any]) -> dict[str, float] | None:
    """The share of a fitting case's cycles in each of `SHARES` (they sum to 1)."""
    if case["status"] != "ok":
        return None
    parts = {s: case[f"{s}_cycles"] for s in SHARES}
    total = sum(parts.values())
    return {s: v / total if total else 0.0 for s, v in parts.items()}


def failure(case: Mapping[str, Any]) -> str | None:
    """Why a case has no cycles, in a few words (None when it has)."""
    if case["status"] == "ok":
        return None
    if case["status"] == "does not fit":
        needs = case.get("needed_sram_bytes_per_core")
        return "does not fit" + ("" if needs is None else f" (needs {_kb(needs)} KB/core)")
    if case["status"] != "error":
        return case["status"]  # "too big to compile here" (`t10.bench.capped`)
    words = case["error"].split()
    return "error: " + " ".join(words[:_WORDS]) + ("…" if len(words) > _WORDS else "")


_WORDS = 8


def make_rows(cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (model, layers, batch, seq, phase, context, chip), in the cases' order: per
    planner the case's status, cycles, peak SRAM and `FIGURES`; t10's speedup over every other
    planner where both fit; t10's cycles over the model's lower bound; each planner's shares;
    the row's seconds."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for case in cases:
        groups.setdefault(tuple(case.get(k) for k in GROUP_KEYS), []).append(case)
    rows = []
    for key, members in groups.items():
        by = {c["planner"]: c for c in members}
        ref = by.get(REFERENCE)
        t10 = ref["cycles"] if ref is not None and ref["status"] == "ok" else None
        bound = ref.get("bound_cycles") if ref is not None else None
        rows.append({
            **dict(zip(GROUP_KEYS, key, strict=True)),
            "status": {p: c["status"] for p, c in by.items()},
            "failure": {p: failure(c) for p, c in by.items()},
            "cycles": {p: c.get("cycles") for p, c in by.items()},
            "peak_sram_bytes_per_core": {p: c.get("peak_sram_bytes_per_core")
                                         for p, c in by.items()},
            "needed_sram_bytes_per_core": {p: c.get("needed_sram_bytes_per_core")
                                           for p, c in by.items()},
            "sram_bytes_per_core": members[0]["sram_bytes_per_core"],
            "varied": members[0].get("varied", {}),
            "speedup": {p: c["cycles"] / t10 if t10 and c["status"] == "ok" else None
                        for p, c in by.items() if p != REFERENCE},
            "t10_over_bound": t10 / bound if t10 and bound else None,
            **{f: {p: c.get(f) for p, c in by.items()} for f in FIGURES},
            "shares": {p: shares(c) for p, c in by.items()},
            **{t: sum(c.get(t) or 0.0 for c in members) for t in TIMINGS},
        })
    return rows


@dataclass(frozen=True)
class Summary:
    """t10 against one baseline over a sweep's rows."""

    baseline: str
    geomean_speedup: float | None
    """Over the rows where both fit (None: no such row)."""
    rows_both_fit: int
    rows_only_t10_fits: int
    rows_only_baseline_fits: int


def summarize(rows: Sequence[Mapping[str, Any]]) -> list[Summary]:
    baselines = list(dict.fromkeys(p for row in rows for p in row["speedup"]))
    out = []
    for b in baselines:
        both = [r["speedup"][b] for r in rows if r["speedup"].get(b) is not None]
        fits = [(r["status"].get(REFERENCE) == "ok", r["status"].get(b) == "ok") for r in rows]
        geomean = math.exp(sum(math.log(s) for s in both) / len(both)) if both else None
        out.append(Summary(b, geomean, len(both), fits.count((True, False)),
                           fits.count((False, True))))
    return out


# --------------------------------------------------------------------------------------------
# Markdown and JSON
# --------------------------------------------------------------------------------------------


def _cycles(row: Mapping[str, Any], planner: str) -> str:
    status = row["status"].get(planner)
    if status is None:
        return "-"
    return f"{row['cycles'][planner]:,}" if status == "ok" else row["failure"][planner]


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}×"


def _value(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:,}" if isinstance(x, int) and not isinstance(x, bool) else str(x)


def _kb(x: int | None) -> str:
    return "-" if x is None else f"{x / 1000:,.1f}"


def _figure(row: Mapping[str, Any], name: str) -> str:
    """t10's `name` figure of `row` in the table ('-' where there is none)."""
    x = row[name].get(REFERENCE)
    if x is None:
        return "-"
    if name == "tokens_per_second":
        return f"{x:,.0f}" if x >= 100 else f"{x:,.3g}"
    if name == "roofline_fraction":
        return f"{x:.2f}"
    return _value(x)


def serving(rows: Sequence[Mapping[str, Any]]) -> tuple[bool, bool]:
    """Whether the table shows (phases) the rows' phase and context and (figures) t10's
    `FIGURES`: with served decoders or on a chip with off-chip memory only, so other tables
    stay as they were."""
    phases = any(row.get("phase") is not None for row in rows)
    offchip = any(row.get("offchip_busy_cycles", {}).get(REFERENCE) is not None
                  for row in rows)
    return phases, phases or offchip


FIGURE_HEADERS = {
    "tokens_per_second": "tokens/s",
    "roofline_fraction": "fraction of roofline",
    "binding": "binding",
    "offchip_busy_cycles": "off-chip busy cycles",
    "wait_cycles": "wait cycles",
}


def format_markdown(
    rows: Sequence[Mapping[str, Any]], planners: Sequence[str], precision: str
) -> str:
    """The table, then one line per baseline: t10's geometric-mean speedup and the rows
    where only one of the two fits."""
    baselines = [p for p in planners if p != REFERENCE]
    varied = list(dict.fromkeys(path for row in rows for path in row.get("varied", {})))
    phases, figures = serving(rows)
    keys = [*ROW_KEYS[:4], *(SERVING_KEYS if phases else ()), ROW_KEYS[4]]
    header = [*keys, *varied]
    header += [f"{p} cycles" for p in planners]
    header += [f"{REFERENCE} speedup over {b}" for b in baselines]
    header += [f"{REFERENCE} ÷ bound"]
    header += [f"{REFERENCE} {FIGURE_HEADERS[f]}" for f in FIGURES if figures]
    header += [f"{p} peak SRAM KB/core" for p in planners]
    header += [f"{REFERENCE} {s} %" for s in SHARES]
    header += ["compile s", "simulate s"]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(keys) + "---:|" * (len(header) - len(keys)),
    ]
    for row in rows:
        share = row["shares"].get(REFERENCE)
        cells = ["-" if row.get(k) is None else str(row[k]) for k in keys]
        cells += [_value(row.get("varied", {}).get(path)) for path in varied]
        cells += [_cycles(row, p) for p in planners]
        cells += [_ratio(row["speedup"].get(b)) for b in baselines]
        cells += [_ratio(row["t10_over_bound"])]
        cells += [_figure(row, f) for f in FIGURES if figures]
        cells += [_kb(row["peak_sram_bytes_per_core"].get(p)) for p in planners]
        cells += ["-" if share is None else f"{100 * share[s]:.1f}" for s in SHARES]
        cells += [f"{row[t]:.1f}" for t in TIMINGS]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for s in summarize(rows):
        mean = "-" if s.geomean_speedup is None else f"{s.geomean_speedup:.2f}×"
        lines.append(
            f"- {REFERENCE} over {s.baseline}: geometric-mean speedup {mean} over the "
            f"{s.rows_both_fit} rows where both fit; {s.baseline} does not fit in "
            f"{s.rows_only_t10_fits} rows where {REFERENCE} fits"
            + (f", {REFERENCE} does not fit in {s.rows_only_baseline_fits} rows where "
               f"{s.baseline} fits" if s.rows_only_baseline_fits else "")
        )
    capacity = dict.fromkeys((r["chip"], r["sram_bytes_per_core"]) for r in rows)  # in order
    lines.append(
        f"- simulated cycles, timing only, {precision} storage; peak SRAM against "
        + ", ".join(f"{chip}'s {sram / 1000:,.1f} KB per core" for chip, sram in capacity)
        + f"; shares of {REFERENCE}'s cycles: compute, exchange and sync phases of the "
        "operators, and relayouts between them"
        + ("" if not figures else
           " (outside the waits for off-chip loads); tokens/s: the tokens a run serves "
           "(prefill batch × seq, decode batch) per simulated second; fraction of roofline: "
           "the bound ÷ the cycles; binding: the resource with the most cycles (compute and "
           "sync, exchange and relayouts, or the off-chip memory's busy cycles)")
        + "; seconds summed over the row's planners"
    )
    return "\n".join(lines)


def to_json(
    cases: Sequence[Mapping[str, Any]], settings: Mapping[str, Any]
) -> str:
    """The sweep's settings, every case, the rows and the summaries as JSON."""
    rows = make_rows(cases)
    document = {
        "settings": dict(settings),
        "cases": list(cases),
        "rows": rows,
        "summary": [s.__dict__ for s in summarize(rows)],
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"
