"""The run report as data: `RunReport` (one per run), its `OpReport` rows and its
`CheckReport`, and their JSON (`RunReport.to_json`, format: docs/report.md).

The field names are the JSON keys, in the JSON order; `t10/outputs/report.py` builds a
report (`build_report`) and renders it as text (`format_report`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

__all__ = ["CheckReport", "LinkClassReport", "LinkReport", "OffchipReport", "OpReport",
           "OutputCheck", "RunReport", "Tolerance"]


@dataclass(frozen=True)
class Tolerance:
    """How close simulated outputs must be to the reference, elementwise in every output:
    |sim - ref| <= atol + atol_rms * rms(ref) + rtol * |ref|, where rms(ref) is the root mean
    square of the output's finite elements; NaN and infinities must match exactly (same
    positions, same infinities). The `atol_rms` term scales the absolute floor with the
    output's magnitude: low-precision storage rounds every intermediate relative to the
    values flowing through, so an output element near zero carries an error of the order of
    its neighbours' magnitude, not its own."""

    rtol: float
    atol: float
    atol_rms: float = 0.0

    def floor(self, ref: np.ndarray) -> float:
        """The absolute part of the criterion for an output whose finite elements are `ref`."""
        if not self.atol_rms or not ref.size:
            return self.atol
        return self.atol + self.atol_rms * float(np.sqrt(np.mean(np.square(ref))))

    def describe(self) -> str:
        scaled = f" + {self.atol_rms:g}·rms(ref)" if self.atol_rms else ""
        return f"|sim - ref| <= {self.atol:g}{scaled} + {self.rtol:g}·|ref|"


@dataclass(frozen=True)
class OutputCheck:
    """One output against the reference (an entry of `CheckReport.outputs`)."""

    shape: tuple[int, ...]
    """The reference output's shape."""
    max_abs_error: float
    """Max of |sim − ref| over the elements finite on both sides (inf when the output is
    missing or has another shape)."""
    max_rel_error: float
    """Max of |sim − ref| / |ref| over those elements with ref ≠ 0."""
    atol: float
    """The absolute floor for this output: `atol + atol_rms·rms(ref)`."""
    nonfinite_mismatches: int
    """Elements where one side is NaN and the other not, or the infinities differ."""
    passed: bool
    problem: str | None = None
    """For a failed output whose cause is not the tolerance alone: a missing output, a wrong
    shape, or the count and first index of the NaN / infinity mismatches (absent from the
    JSON when None)."""

    def to_dict(self) -> dict[str, Any]:
        plain: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        plain["shape"] = list(self.shape)
        if self.problem is None:
            del plain["problem"]
        return plain


@dataclass(frozen=True)
class CheckReport:
    """Simulated outputs against a reference (`--check`): per output and overall, within
    the tolerance `rtol`, `atol`, `atol_rms` (criterion: `Tolerance`)."""

    rtol: float
    atol: float
    atol_rms: float
    outputs: Mapping[str, OutputCheck]
    """Per ONNX output name."""

    @property
    def tolerance(self) -> Tolerance:
        return Tolerance(self.rtol, self.atol, self.atol_rms)

    @property
    def passed(self) -> bool:
        """Whether every output passed."""
        return all(o.passed for o in self.outputs.values())

    @property
    def max_abs_error(self) -> float:
        """Max over the outputs of their `max_abs_error`."""
        return max((o.max_abs_error for o in self.outputs.values()), default=0.0)

    @property
    def max_rel_error(self) -> float:
        """Max over the outputs of their `max_rel_error`."""
        return max((o.max_rel_error for o in self.outputs.values()), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rtol": self.rtol,
            "atol": self.atol,
            "atol_rms": self.atol_rms,
            "passed": self.passed,
            "outputs": {name: o.to_dict() for name, o in self.outputs.items()},
        }


@dataclass(frozen=True)
class OpReport:
    """One operator's row: what the plan search chose and estimated, what the simulator
    measured. Cycles are chip clock cycles; the simulated fields are None for an operator
    the simulator never ran, the plan-search ones without plan attributes."""

    name: str
    """Operator name (`t10.name`; the simulator's superstep label); `X/relayout` for the
    layout transition into operator `X` (under `vgm`: its loads from the homes), `X/store`
    for the move of `X`'s output into its home (`vgm`), `X/gather` for a gather of runtime
    ids read by `X`; `V/relayout` also for the move that makes a returned view `V` on chip,
    `G/gather` for gather node `G` made on chip for no operator, `X/load` for the wait for
    operator `X`'s off-chip weights."""
    kind: str | None
    """`contraction`, `elementwise`, `reduction` (from the tensor expression), `relayout`,
    `store`, `gather` or `load`."""
    plan: str | None
    """The chosen plan as printed, e.g. `#rtensor.plan<grid [4, 4, 1] shift d2 steps 4>`."""
    cores_used: int | None
    """Most cores any of its supersteps runs on."""
    cycles: int | None
    """`compute_cycles + exchange_cycles + sync_cycles + wait_cycles`."""
    compute_cycles: int | None
    """Per superstep the slowest core's compute, summed."""
    exchange_cycles: int | None
    """Per superstep the exchange phase, summed."""
    sync_cycles: int | None
    """One chip sync per superstep, summed."""
    wait_cycles: int | None
    """`X/load`: the chip's waits for the loads of `X`'s off-chip weights (0 elsewhere)."""
    supersteps: int | None
    """BSP supersteps labelled with this name, one per sync."""
    exchanged_bytes: int | None
    """Per superstep the busiest core's exchanged bytes, summed."""
    sram_bytes_per_core: int | None
    """Most bytes live on one core while it runs."""
    estimated_cycles: int | None
    """The plan search's estimate (`t10.estimate`; `t10.relayout`, `t10.store`, `t10.gather`
    for a move); a move shared by several readers is listed once, under its first reader."""
    estimated_sram_bytes_per_core: int | None
    """The plan search's per-core bytes for this op."""
    bound_cycles: int | None
    """A lower bound of the cycles of every plan of this operator that fits a core's SRAM
    (`t10.common.bounds.operator_bound`), at its planned precision; None for `relayout` and
    `gather` rows."""
    busiest_link_bytes: int | None = None
    """On a routing chip (absent from the JSON on others): the bytes of the busiest link
    over its supersteps' exchanges together (0 when they move nothing)."""

    def to_dict(self, links: bool = False) -> dict[str, Any]:
        """The JSON object; `busiest_link_bytes` only with `links` (a routing chip)."""
        plain = {f.name: getattr(self, f.name) for f in fields(self)}
        if not links:
            del plain["busiest_link_bytes"]
        return plain


@dataclass(frozen=True)
class LinkClassReport:
    """One class of links over the run (an entry of `LinkReport.classes`)."""

    links: int
    """Links of the class as its `Topology.link_loads` array names them (its size; a
    chip-to-chip entry is a bundle of parallel links)."""
    bytes: int
    """Bytes all its links carried over the run, summed."""
    busiest_bytes: int
    """The most bytes one of its links carried over the run."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class LinkReport:
    """The links of a routing chip over the run (t10/sim/links.py: busy cycles, busiest)."""

    busiest: str | None
    """The busiest link over the run, named by its class and index (e.g. `mesh [2, 3, 0]`:
    the link leaving the core at row 2, column 3 eastwards); None when nothing moved."""
    busiest_bytes: int
    """Its bytes over the run."""
    busiest_cycles: int
    """Its busy cycles for those bytes."""
    classes: Mapping[str, LinkClassReport]
    """Per link class (`Topology.link_classes`)."""

    def to_dict(self) -> dict[str, Any]:
        plain: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        plain["classes"] = {k: c.to_dict() for k, c in self.classes.items()}
        return plain


@dataclass(frozen=True)
class OffchipReport:
    """The off-chip memory of a chip that has one, over the run."""

    capacity_bytes: int
    """What it holds (the chip file's `offchip.capacity_bytes`)."""
    held_bytes: int
    """Bytes of the tensors the program loads from it (each once)."""
    loaded_bytes: int
    """Bytes it sent over the run (each load's tensor once)."""
    busy_cycles: int
    """Cycles it spent loading (its loads run one after another, beside the supersteps)."""
    wait_cycles: int
    """Cycles the chip waited for loads (the `X/load` rows' cycles, summed)."""

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class RunReport:
    """The run report (docs/report.md): the chip, the simulated totals against the plan
    search's estimates and the model's bound, one `OpReport` per operator and, after a
    check, the `CheckReport`. Cycles are chip clock cycles, bytes are per core."""

    model: str | None
    """The model path given to `t10 run` (None in the `t10-sim` target)."""
    chip: str
    """Chip name (`name` in the chip file)."""
    planner: str | None
    """`t10`, `t10-multidim`, `replicate` or `vgm`."""
    precision: str | None
    """Storage precision, `fp32` or `fp16`."""
    cores: int
    """Cores of the chip."""
    sram_bytes_per_core: int
    """SRAM capacity of one core (bytes)."""
    clock_hz: float
    """Chip clock."""
    total_cycles: int
    """Simulated cycles of the whole program (sum of the ops' `cycles`)."""
    seconds: float
    """`total_cycles / clock_hz`."""
    estimated_total_cycles: int | None
    """Sum of the ops' `estimated_cycles` (plan search), layout transitions included; None
    when a simulated op has no estimate."""
    bound_cycles: int | None
    """The model's lower bound, the same under every planner, at most `total_cycles`; None
    without plan attributes."""
    total_over_bound: float | None
    """`total_cycles / bound_cycles` (None when the bound is None or 0)."""
    peak_sram_bytes_per_core: int
    """Most bytes live on one core at any time (simulated)."""
    planned_sram_bytes_per_core: int | None
    """The plan search's bytes per core at the model's peak (`t10.model_bytes`), an upper
    bound of `peak_sram_bytes_per_core`; None without plan attributes."""
    warnings: tuple[str, ...]
    """What the run computed differently from the model's fp32 semantics without failing
    (fp16 saturation and overflow)."""
    ops: tuple[OpReport, ...]
    """One row per operator, in the order the program first runs it."""
    links: LinkReport | None = None
    """On a routing chip: its links over the run (absent from the JSON on others)."""
    offchip: OffchipReport | None = None
    """On a chip with off-chip memory: its use over the run (absent from the JSON on
    others)."""
    check: CheckReport | None = None
    """With `--check`: the outputs against onnxruntime (absent from the JSON otherwise, as
    `max_abs_error` and `max_rel_error` are)."""

    @property
    def max_abs_error(self) -> float | None:
        """With `--check`: max over outputs and elements finite on both sides of
        |sim − ref|."""
        return None if self.check is None else self.check.max_abs_error

    @property
    def max_rel_error(self) -> float | None:
        """With `--check`: max of |sim − ref| / |ref| over those elements with ref ≠ 0."""
        return None if self.check is None else self.check.max_rel_error

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, keys in the documented order (non-finite numbers kept)."""
        plain: dict[str, Any] = {
            f.name: getattr(self, f.name) for f in fields(self)
            if f.name not in ("ops", "links", "offchip", "check")
        }
        plain["warnings"] = list(self.warnings)
        plain["ops"] = [op.to_dict(self.links is not None) for op in self.ops]
        if self.links is not None:
            plain["links"] = self.links.to_dict()
        if self.offchip is not None:
            plain["offchip"] = self.offchip.to_dict()
        if self.check is not None:
            plain["max_abs_error"] = self.max_abs_error
            plain["max_rel_error"] = self.max_rel_error
            plain["check"] = self.check.to_dict()
        return plain

    def to_json(self) -> str:
        """The report as JSON text (docs/report.md), a non-finite number as null."""
        return json.dumps(_json_safe(self.to_dict()), indent=2, allow_nan=False) + "\n"


def _json_safe(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj]
    return obj
