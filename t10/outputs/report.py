"""The run report: what the plan search chose and what the simulator measured, per operator.

`build_report` joins the plan-search view of a module (`planned_ops`: every `linalg.generic`
with its `t10.plan` / `t10.estimate`) with a simulator `SimReport` (per-superstep-label
figures) into one `RunReport` (`t10/outputs/run_report.py`); `format_report` renders it as
text, `RunReport.to_json` as JSON. The CLI (`t10 run`) and the `t10-sim` xdsl-opt target
both print through these, so the text and the `--report` JSON always agree. The JSON format
is documented in `docs/report.md`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, TensorType

from t10.common.attr_names import (
    FLOAT16_TYPE,
    INDEX_BOUND_ATTR,
    NAME_ATTR,
    ONNX_TYPE_ATTR,
)
from t10.common.chip_spec import ChipSpec
from t10.common.input_ranges import declared_range
from t10.common.tensor_expr import (
    is_mul_add,
)
from t10.common.traffic import whole_bytes
from t10.outputs.run_report import (
    CheckReport,
    LinkClassReport,
    LinkReport,
    OffchipReport,
    OpReport,
    OutputCheck,
    RunReport,
    Tolerance,
)
from t10.planning.planned_record import (
    PlannedOp,
    model_bound_of,
    planned_ops,
    planned_sram,
    recorded_bound,
    recorded_ops,
)
from t10.sim.interpreter_chip import OpStats, SimReport
from t10.sim.state import NoValues

__all__ = [
    "MOVES",
    "CheckReport",
    "InputReader",
    "InputSpec",
    "OpReport",
    "OutputCheck",
    "PlannedOp",
    "RunReport",
    "Tolerance",
    "build_report",
    "check_outputs",
    "format_report",
    "input_specs",
    "kernel_ops",
    "model_bound_of",
    "planned_ops",
    "planned_sram",
    "random_inputs",
    "recorded_bound",
    "recorded_ops",
]


# --------------------------------------------------------------------------------------------
# The module side: inputs and plans
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InputSpec:
    """One graph input of `@main`: its ONNX name, static shape and, for an integer or FLOAT16
    ONNX input (a float32 argument holding integers or fp16 values), its ONNX type
    (`t10.onnx_type`: int64, int32, bool or float16)."""

    name: str
    shape: tuple[int, ...]
    onnx_type: str | None = None
    index_bound: int = 2
    """Random integer inputs are drawn in [0, index_bound): 2 (a 0/1 mask) unless the input
    indexes a gather (`t10.index_bound`, the size of the dim its ids index: token ids)..."""
    declared: tuple[int, int] | None = None
    """...and within its declared range [lo, hi] (`t10.range`): in both where they meet, else
    in the declared one."""

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of its values: float32, or its ONNX type's."""
        return np.dtype(self.onnx_type or np.float32)

    @property
    def integer(self) -> bool:
        """Whether it holds integers (of an integer or bool ONNX type)."""
        return self.onnx_type not in (None, FLOAT16_TYPE)

    def draws(self) -> tuple[int, int]:
        """The integers [lo, hi] random values of this input are drawn from."""
        lo, hi = 0, self.index_bound - 1
        if self.declared is None:
            return lo, hi
        meet = max(lo, self.declared[0]), min(hi, self.declared[1])
        return meet if meet[0] <= meet[1] else self.declared


InputReader = Callable[[Sequence[InputSpec]], Mapping[str, np.ndarray]]
"""What reads a model's inputs given what the model takes (`run_model`)."""


def _main_func(module: ModuleOp) -> func.FuncOp | None:
    funcs = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    return next((f for f in funcs if f.sym_name.data == "main"), funcs[0] if funcs else None)


def input_specs(module: ModuleOp) -> list[InputSpec]:
    """The inputs of the module's `@main`, in argument order, named by their `t10.name`."""
    main = _main_func(module)
    if main is None:
        return []
    specs: list[InputSpec] = []
    attrs = main.arg_attrs.data if main.arg_attrs is not None else ()
    for i, arg in enumerate(main.body.block.args):
        name, onnx_type, bound, declared = f"input{i}", None, 2, None
        if i < len(attrs) and isinstance(attrs[i], DictionaryAttr):
            attr = attrs[i].data.get(NAME_ATTR)
            if isinstance(attr, StringAttr):
                name = attr.data
            attr = attrs[i].data.get(ONNX_TYPE_ATTR)
            if isinstance(attr, StringAttr):
                onnx_type = attr.data
            attr = attrs[i].data.get(INDEX_BOUND_ATTR)
            if isinstance(attr, IntegerAttr):
                bound = attr.value.data
            declared = declared_range(name, attrs[i])
        shape = tuple(arg.type.get_shape()) if isinstance(arg.type, TensorType) else ()
        specs.append(InputSpec(name, shape, onnx_type, bound, declared))
    return specs


def random_inputs(
    specs: Sequence[InputSpec], seed: int = 0, timing_only: bool = False
) -> dict[str, np.ndarray]:
    """Seeded inputs, drawn in argument order from one generator: standard-normal float32
    (float16 for a FLOAT16 input), and for an integer input integers of its ONNX type in
    `InputSpec.draws` (a 0/1 mask, or token ids below the size of the table they index,
    within a declared range). With
    `timing_only` a float input is `NoValues` (a timing-only run reads no float value; a
    decoder's KV caches at batch 8 would take gigabytes): the generator still draws it, a
    slice at a time, when an integer input follows, so the integers are those of a run
    with values."""
    rng = np.random.default_rng(seed)
    inputs: dict[str, np.ndarray] = {}
    for k, s in enumerate(specs):
        if s.integer:
            inputs[s.name] = rng.integers(*s.draws(), s.shape, endpoint=True).astype(s.dtype)
        elif not timing_only:
            inputs[s.name] = rng.standard_normal(s.shape).astype(s.dtype)
        else:
            if any(later.integer for later in specs[k + 1:]):
                left = prod(s.shape)
                while left:  # the same draws, without holding them
                    left -= len(rng.standard_normal(min(left, _DRAWN_AT_ONCE)))
            inputs[s.name] = NoValues.of(s.shape, s.dtype)
    return inputs


_DRAWN_AT_ONCE = 1 << 22
"""Floats drawn at a time to advance the generator past a timing-only input."""


def kernel_ops(module: ModuleOp) -> list[PlannedOp]:
    """The operators of a core- or chip-level module (one per `core.kernel` label): their
    kind from the kernel's iterators; plans and estimates are unknown at that level."""
    kinds: dict[str, str] = {}
    for op in module.walk():
        label = op.properties.get("label")
        iterators = op.properties.get("iterator_types")
        if op.name != "core.kernel" or not isinstance(label, StringAttr):
            continue
        reduction = any(
            "reduction" in str(it) for it in getattr(iterators, "data", ())
        )
        body = op.regions[0].block
        kind = "elementwise"
        if reduction:
            kind = "contraction" if is_mul_add(body) else "reduction"
        kinds.setdefault(label.data, kind)
    return [PlannedOp(name, kind, None, None, None) for name, kind in kinds.items()]


# --------------------------------------------------------------------------------------------
# Numerical check
# --------------------------------------------------------------------------------------------


def check_outputs(
    sim: Mapping[str, np.ndarray], ref: Mapping[str, np.ndarray], tolerance: Tolerance
) -> CheckReport:
    """Compare every reference output with the simulated one of the same name (criterion:
    `Tolerance`; `max_abs_error` and `max_rel_error` are over the elements finite on both
    sides, the latter over those where ref != 0)."""
    outputs: dict[str, OutputCheck] = {}
    for name, r in ref.items():
        r64 = np.asarray(r, dtype=np.float64)
        got = sim.get(name)
        if got is None or np.shape(got) != r64.shape:
            outputs[name] = OutputCheck(
                shape=r64.shape,
                max_abs_error=math.inf,
                max_rel_error=math.inf,
                atol=tolerance.atol,
                nonfinite_mismatches=0,
                passed=False,
                problem="missing" if got is None else f"shape {list(np.shape(got))}",
            )
            continue
        outputs[name] = _compare(np.asarray(got, dtype=np.float64), r64, tolerance)
    return CheckReport(tolerance.rtol, tolerance.atol, tolerance.atol_rms, outputs)


def _compare(got: np.ndarray, ref: np.ndarray, tolerance: Tolerance) -> OutputCheck:
    """One output: NaN and infinities must sit at the same positions on both sides (the same
    infinity), the finite elements within `tolerance` (its rms over the finite reference)."""
    both_finite = np.isfinite(got) & np.isfinite(ref)
    # a NaN or an infinity on either side not matched by the same on the other (no arithmetic
    # on non-finite values, so no RuntimeWarning)
    mismatch = ~both_finite & ~(np.isnan(got) & np.isnan(ref)) & (got != ref)
    g, r = got[both_finite], ref[both_finite]
    diff = np.abs(g - r)
    nonzero = r != 0
    floor = tolerance.floor(ref[np.isfinite(ref)])
    count = int(mismatch.sum())
    problem = None
    if count:
        first = tuple(int(i) for i in np.argwhere(mismatch)[0])
        problem = (
            f"{count} element{'s' if count > 1 else ''} whose NaN or infinity the other side "
            f"does not match, first at {list(first)}: sim {got[first]:g}, ref {ref[first]:g}"
        )
    return OutputCheck(
        shape=ref.shape,
        max_abs_error=float(diff.max()) if diff.size else 0.0,
        max_rel_error=float((diff[nonzero] / np.abs(r[nonzero])).max())
        if nonzero.any()
        else 0.0,
        atol=floor,
        nonfinite_mismatches=count,
        passed=bool(np.all(diff <= floor + tolerance.rtol * np.abs(r))) and not count,
        problem=problem,
    )


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------


MOVES = ("relayout", "gather", "store")
"""Name suffixes (and kinds) of the data-movement steps (`X/relayout`, `X/gather`,
`X/store`); `X/load` (kind `load`) is the chip's wait for `X`'s off-chip weights."""


def _sim_op(planned: PlannedOp | None, stats: OpStats | None, name: str) -> OpReport:
    def sim(field: str) -> int | None:
        return None if stats is None else int(getattr(stats, field))

    moved = name.rsplit("/", 1)[-1] if "/" in name else None
    kind = planned.kind if planned is not None else (
        moved if moved in (*MOVES, "load") else None
    )
    return OpReport(
        name=name,
        kind=kind,
        plan=None if planned is None else planned.plan,
        cores_used=sim("cores_used"),
        cycles=sim("cycles"),
        compute_cycles=sim("compute_cycles"),
        exchange_cycles=sim("exchange_cycles"),
        sync_cycles=sim("sync_cycles"),
        wait_cycles=sim("wait_cycles"),
        supersteps=sim("supersteps"),
        exchanged_bytes=sim("exchanged_bytes"),
        sram_bytes_per_core=sim("sram_bytes_per_core"),
        estimated_cycles=None if planned is None else planned.estimated_cycles,
        estimated_sram_bytes_per_core=(
            None if planned is None else planned.estimated_sram_bytes_per_core
        ),
        bound_cycles=None if planned is None else planned.bound_cycles,
        busiest_link_bytes=(
            None if stats is None else stats.busiest_link.nbytes if stats.busiest_link else 0
        ),
    )


def link_report(sim: SimReport) -> LinkReport | None:
    """The run's links (None unless the chip routes)."""
    if sim.link_bytes is None:
        return None
    link = sim.busiest_link
    return LinkReport(
        busiest=None if link is None else link.name,
        busiest_bytes=0 if link is None else link.nbytes,
        busiest_cycles=0 if link is None else link.busy_cycles,
        classes={k: LinkClassReport(int(v.size), whole_bytes(float(v.sum())),
                                    whole_bytes(float(v.max(initial=0.0))))
                 for k, v in sim.link_bytes.items()},
    )


def build_report(
    chip: ChipSpec,
    sim: SimReport,
    planned: Sequence[PlannedOp] | None = None,
    *,
    model: str | None = None,
    planner: str | None = None,
    precision: str | None = None,
    check: CheckReport | None = None,
    planned_sram_bytes: int | None = None,
    bound_cycles: int | None = None,
) -> RunReport:
    """The run report (format: docs/report.md).

    Ops are listed in the simulator's order; a simulated op takes kind, plan and estimate
    from the planned op of the same name (the layout transition into operator X is named
    "X/relayout", with kind "relayout"; a gather of runtime ids read by X "X/gather", kind
    "gather"); planned ops the simulator never ran come last
    with null simulated figures. `planned=None` (the plan attributes are gone, e.g. in the
    `t10-sim` target) leaves every plan and estimate null. `bound_cycles`: the model's lower
    bound (`model_bound_of`), None where unknown.
    """
    by_name = {p.name: p for p in planned or ()}
    seen: set[str] = set()
    ops: list[OpReport] = []
    for stats in sim.ops:
        p = by_name.get(stats.name) if stats.name not in seen else None
        seen.add(stats.name)
        ops.append(_sim_op(p, stats, stats.name))
    ops.extend(_sim_op(p, None, p.name) for p in planned or () if p.name not in seen)
    estimates = [p.estimated_cycles for p in planned or ()]
    total = int(sim.total_cycles)
    return RunReport(
        model=model,
        chip=chip.name,
        planner=planner,
        precision=precision,
        cores=chip.cores,
        sram_bytes_per_core=chip.sram_bytes_per_core,
        clock_hz=chip.clock_hz,
        total_cycles=total,
        seconds=float(sim.seconds),
        estimated_total_cycles=(
            sum(e for e in estimates if e is not None)
            if planned is not None
            and all(e is not None for e in estimates)
            and all(op.estimated_cycles is not None for op in ops)
            else None
        ),
        bound_cycles=bound_cycles,
        total_over_bound=total / bound_cycles if bound_cycles else None,
        peak_sram_bytes_per_core=int(sim.peak_sram_bytes_per_core),
        planned_sram_bytes_per_core=planned_sram_bytes,
        warnings=tuple(sim.warnings),
        ops=tuple(ops),
        links=link_report(sim),
        offchip=offchip_report(sim, chip, ops),
        check=check,
    )


def offchip_report(sim: SimReport, chip: ChipSpec, ops: Sequence[OpReport]
                   ) -> OffchipReport | None:
    """The run's off-chip memory (None unless the chip has one)."""
    if sim.offchip is None or chip.offchip is None:
        return None
    return OffchipReport(
        capacity_bytes=chip.offchip.capacity_bytes,
        held_bytes=sim.offchip.held_bytes,
        loaded_bytes=sim.offchip.loaded_bytes,
        busy_cycles=sim.offchip.busy_cycles,
        wait_cycles=sum(op.wait_cycles or 0 for op in ops),
    )


# --------------------------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------------------------


def _n(v: int | None) -> str:
    return "-" if v is None else f"{v:,}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int) -> list[str]:
    """Columns before index `left` are left-aligned, the rest right-aligned (the last one,
    the plan, is left-aligned too)."""
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    last = len(header) - 1

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.ljust(w) if i < left or i == last else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _links_line(links: LinkReport) -> str:
    """The busiest link over the run and each link class's bytes (a routing chip)."""
    busiest = ("busiest none (nothing moved)" if links.busiest is None else
               f"busiest {links.busiest} {links.busiest_bytes:,} B "
               f"({links.busiest_cycles:,} cycles)")
    classes = "; ".join(f"{k}: {c.links:,} links, {c.bytes:,} B in all"
                        for k, c in links.classes.items())
    return f"links   {busiest}; {classes}"


def _offchip_line(offchip: OffchipReport, total: int) -> str:
    """What the off-chip memory held and sent, how busy it was, and the chip's waits."""
    busy = f" ({offchip.busy_cycles / total:.1%} of the run)" if total else ""
    return (f"offchip {offchip.held_bytes:,} B held of {offchip.capacity_bytes:,} B; "
            f"{offchip.loaded_bytes:,} B loaded in {offchip.busy_cycles:,} busy cycles{busy}; "
            f"the chip waited {offchip.wait_cycles:,} cycles for loads")


def format_report(report: RunReport) -> str:
    """The readable report: totals, per-op table, peak SRAM against capacity, check."""
    lines: list[str] = []
    if report.model:
        lines.append(f"model   {report.model}")
    chip_line = (
        f"chip    {report.chip}: {report.cores:,} cores, "
        f"{report.sram_bytes_per_core:,} B SRAM per core, "
        f"{report.clock_hz / 1e9:g} GHz"
    )
    if report.planner:
        chip_line += f"; planner {report.planner}"
    if report.precision:
        chip_line += f"; precision {report.precision}"
    lines.append(chip_line)
    total = f"total   {report.total_cycles:,} cycles = {report.seconds * 1e6:,.3f} µs"
    if report.estimated_total_cycles is not None:
        total += f" (plan-search estimate {report.estimated_total_cycles:,} cycles)"
    lines.append(total)
    if report.bound_cycles is not None:
        ratio = report.total_over_bound
        lines.append(
            f"bound   {report.bound_cycles:,} cycles"
            + ("" if ratio is None else f" (total ÷ bound {ratio:.2f})")
        )
    peak, cap = report.peak_sram_bytes_per_core, report.sram_bytes_per_core
    sram = f"SRAM    peak {peak:,} B per core of {cap:,} B ({100 * peak / cap:.1f}% used)"
    if report.planned_sram_bytes_per_core is not None:
        sram += f" (plan-search bound {report.planned_sram_bytes_per_core:,} B)"
    lines.append(sram)
    if report.links is not None:
        lines.append(_links_line(report.links))
    if report.offchip is not None:
        lines.append(_offchip_line(report.offchip, report.total_cycles))
    lines.extend(f"warning {w}" for w in report.warnings)
    lines.append("")
    waits = any(op.wait_cycles for op in report.ops)  # a column only where the chip waits
    header = (
        "op", "kind", "cores", "cycles", "compute", "exchange", "sync", *(("wait",) * waits),
        "estimate", "bound", "SRAM/core", "plan",
    )
    rows = [
        (
            op.name,
            op.kind or "-",
            _n(op.cores_used),
            _n(op.cycles),
            _n(op.compute_cycles),
            _n(op.exchange_cycles),
            _n(op.sync_cycles),
            *((_n(op.wait_cycles),) * waits),
            _n(op.estimated_cycles),
            _n(op.bound_cycles),
            _n(op.sram_bytes_per_core),
            op.plan or "-",
        )
        for op in report.ops
    ]
    lines.extend(_table(header, rows, left=2))
    if report.check is not None:
        lines.extend(["", *_check_lines(report.check)])
    return "\n".join(lines)


def _check_lines(check: CheckReport) -> list[str]:
    """The check's verdict, then (when there is more to say) one line per output."""
    verdict = "PASSED" if check.passed else "FAILED"
    tolerance = check.tolerance
    lines = [
        f"check   {verdict} against onnxruntime ({tolerance.describe()}): max abs error "
        f"{check.max_abs_error:.3g}, max rel error {check.max_rel_error:.3g}"
    ]
    if len(check.outputs) > 1 or not check.passed or tolerance.atol_rms:
        for name, o in check.outputs.items():
            status = "ok" if o.passed else "FAILED"
            extra = "" if o.problem is None else f" ({o.problem})"
            floor = f" (atol {o.atol:.3g})" if tolerance.atol_rms else ""
            lines.append(
                f"        {name}: max abs {o.max_abs_error:.3g}, "
                f"max rel {o.max_rel_error:.3g}{floor}: {status}{extra}"
            )
    return lines
