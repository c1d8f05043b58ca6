"""The compile options: how a model is planned and lowered, declared once with their defaults
and their checks.

`CompileOptions` is what the driver (`t10.driver`), `t10 explain`, the benchmarks and the
`t10` command take. The passes are built from it and share its fields: `t10-plan-search`'s
options are a `PlanOptions` (its base), `t10-compile`'s a `CompileOptions`, so an option
keeps one name, type, default and check whether it comes from a textual pipeline
(`t10-plan-search{chip=test-16 planner=vgm}`), the command line or Python.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from t10.common.chip_spec import ChipSpec, load_chip
from t10.common.tensor_expr import check_partials, precision_type
from t10.errors import T10Error
from t10.planning.offchip_weights import PRELOADS
from t10.planning.plan_search import check_options
from t10.planning.planners import planner as planner_of
from t10.planning.planners import planners

PLAN_SEARCH = "t10-plan-search"
"""The pass whose rules the planner, min-utilization, search and temporaries options are
(named by the driver's errors about them)."""

SEARCHES = ("greedy", "exact", "fastest")
"""How plans are chosen under the SRAM limit: T10's greedy (`choose_plans`), the exact
optimum (`exact_plans`), or every operator's fastest plan on its own (`fastest_plans`)."""


def temporaries_planners() -> tuple[str, ...]:
    """The planners that take the `temporaries` option."""
    return tuple(p.name for p in planners() if p.temporaries is not None)


def check_choice_options(
    what: str, planner: str, search: str | None, temporaries: float | None
) -> tuple[str, float | None]:
    """The search (given, or the planner's own) and the temporaries proportion (for the
    planners that take it, given or their own; None for the others, which limit nothing
    but the whole model's bytes)."""
    if search is not None and search not in SEARCHES:
        raise T10Error(f"{what}: unknown search '{search}'; choose one of {', '.join(SEARCHES)}")
    chosen = planner_of(planner, what)
    if chosen.search is None and search is not None:
        raise T10Error(
            f"{what}: planner={planner} chooses every operator's plan on its own; search is a "
            "rule of the other planners"
        )
    if temporaries is not None:
        if chosen.temporaries is None:
            takers = " or ".join(f"planner={name}" for name in temporaries_planners())
            raise T10Error(
                f"{what}: temporaries (the share of SRAM an operator may use while it runs) "
                f"is a rule of {takers}, not of planner={planner}"
            )
        if not 0 < temporaries <= 1:
            raise T10Error(
                f"{what}: temporaries must be a share of SRAM in (0, 1], not {temporaries}"
            )
    share = None if chosen.temporaries is None else temporaries or chosen.temporaries
    return search or chosen.search or "greedy", share


@dataclass(frozen=True, kw_only=True)
class CostOptions:
    """What an operator's plans cost: the chip, the plans that count and the precisions (the
    options of `t10-fuse-epilogue`, which weighs fusions with the plans' costs, and the base of
    `PlanOptions`)."""

    chip: str = "ipu-mk2"
    """A built-in chip name or a chip JSON file."""
    min_utilization: float = 0.5
    """Plans must be able to use at least this fraction of the cores an operator can use."""
    precision: str = "fp32"
    """Storage precision: `fp32` or `fp16`."""
    partials: str = "fp32"
    """Precision of the partial sums a plan carries across steps and cores: `fp32`, or the
    storage's (`fp16` with `precision=fp16`)."""
    placement: str = "aware"
    """How a plan's grid lies on the chip's cores (on a chip whose topology routes):
    `aware`, the cheapest of the placements that lay its rings along the chip's dims, folded,
    and the linear one; or `oblivious`, linear (grid core i on chip core i)."""

    def cost_options(self) -> dict[str, Any]:
        """The `CostOptions` fields and their values (to build a pass that takes them)."""
        return {f.name: getattr(self, f.name) for f in fields(CostOptions)}


@dataclass(frozen=True, kw_only=True)
class PlanOptions(CostOptions):
    """How operators are planned: the options of `t10-plan-search` (its base class)."""

    planner: str = "t10"
    """A registered planner (`t10.planning.planners`): `t10` (rotating tensors),
    `t10-multidim`, `replicate` (spatial partitions only) or `vgm` (every tensor in a home
    over all cores)."""
    search: str | None = None
    """How plans are chosen under the SRAM limit: `greedy` (T10's Δtime/Δbytes moves,
    `memory_reconciliation.choose_plans`), `exact` (the least total operator cycles that
    fit, a mixed-integer program: `exact_reconciliation`; for models up to mid size) or
    `fastest` (every operator's fastest plan, chosen on its own; the model may not fit).
    Default: the planner's own (`Planner.search`: greedy for t10, fastest for replicate).
    The transition sweep follows each."""
    temporaries: float | None = None
    """For the planners that take it (`replicate`): the share of SRAM (0 < share <= 1) an
    operator's plan may take while it runs, beyond its resident weights (default the
    planner's `Planner.temporaries`, 0.6 for replicate)."""
    preload: str = "planned"
    """When the weights kept in off-chip memory load (`t10.planning.offchip_weights`):
    `planned` (as many operators ahead as hides them, within the SRAM), `next` (at most
    one operator ahead) or `none` (right before their operator: load, then compute); the
    last two are the baselines that measure the planning."""

    def validate(self, what: str | None = None) -> ChipSpec:
        """The chip, once every option is valid: otherwise a T10Error naming `what` (the pass
        that takes the options) or, without it (the driver), the command-line option
        (`--precision`, `--partials`) or the pass whose rule the option breaks."""
        precision_type(self.precision, what or "--precision")
        check_partials(self.precision, self.partials, what or "--partials")
        check_options(what or PLAN_SEARCH, self.planner, self.min_utilization, self.placement)
        check_choice_options(what or PLAN_SEARCH, self.planner, self.search, self.temporaries)
        if self.preload not in PRELOADS:
            raise T10Error(f"{what or PLAN_SEARCH}: unknown preload '{self.preload}'; choose "
                           f"one of {', '.join(PRELOADS)}")
        return load_chip(self.chip)

    def plan_options(self) -> dict[str, Any]:
        """The `PlanOptions` fields and their values (to build a pass that takes them)."""
        return {f.name: getattr(self, f.name) for f in fields(PlanOptions)}


@dataclass(frozen=True, kw_only=True)
class CompileOptions(PlanOptions):
    """How a model is compiled: the plan options and the fusions before planning (the options
    of `t10-compile`, the driver, `t10 explain`, the benchmarks and the `t10` command)."""

    fuse: bool = True
    """Fuse element-wise chains first (t10-fuse-elementwise)."""
    epilogues: bool = True
    """With `fuse`, also run element-wise readers of contractions as their epilogues
    (t10-fuse-epilogue)."""


DEFAULTS = CompileOptions()
"""Every option at its default (for help texts and the defaults of other tools)."""


def given_options(options: object) -> CompileOptions:
    """`options`, refused unless a `CompileOptions` (a chip name where the options go is the
    old call `compile_model(model, "ipu-mk2")`)."""
    if not isinstance(options, CompileOptions):
        raise T10Error(
            f"the compile options must be a CompileOptions, not {type(options).__name__} "
            f"{options!r}: pass CompileOptions(chip=..., ...)"
        )
    return options
