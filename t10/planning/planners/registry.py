"""The planner interface and the name → planner registry (re-exported by
`t10.planning.planners`, whose import registers the built-in planners).

A planner is one module that declares a `Planner` and registers it: its name and help, its
plan space, its own search and options, its cold-weight behaviour and how the plan search
(`t10.planning.model_search`) plans a model under it (`plan`). Everything that lists or
checks planners (the pass options, `CompileOptions`, the CLI, `t10 explain`, the benchmarks)
reads this registry, in the order the planners were registered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from xdsl.dialects.builtin import ModuleOp

from t10.common.chip_spec import ChipSpec
from t10.errors import T10Error


class ModelPlanning(Protocol):
    """The plan search of one module, as a planner's `plan` hook sees it (the library's
    `t10.planning.model_search.ModelSearch`, with the options it plans under)."""

    def plan_model(self, chip: ChipSpec, module: ModuleOp, /) -> int:
        """Plans traded between operators under the SRAM limit; the model's bytes per core."""
        ...

    def plan_vgm(self, chip: ChipSpec, module: ModuleOp, /) -> int:
        """Every operator's plan on its own, loaded from and stored to homes over all cores
        (`t10.planning.vgm_plans`); the model's bytes per core."""
        ...


def plan_traded(planning: ModelPlanning, chip: ChipSpec, module: ModuleOp) -> int:
    """The plans of a planner with a search: chosen together under the SRAM limit."""
    return planning.plan_model(chip, module)


@dataclass(frozen=True)
class BenchConfig:
    """A configuration of `t10 bench` that runs a planner (`t10.bench.models.PLANNER_CONFIGS`)."""

    name: str
    column: int
    """Its place among every planner's configurations (the tables' and plots' order)."""
    search: str | None = None
    """The `search` it sets (None: the planner's own)."""
    placement: str | None = None
    """The `placement` it sets (`t10.planning.plan_search.PLACEMENTS`; None: the compile
    options' default)."""
    preload: str | None = None
    """The `preload` it sets (`t10.planning.offchip_weights.PRELOADS`; None: the compile
    options' default)."""
    default: bool = True
    """Whether `t10 bench` runs it unless `--planners` names the configurations."""

    def options(self) -> dict[str, str]:
        """The compile options it sets (`CompileOptions` fields, beside the planner): the
        ones it gives; the others keep their one default, `CompileOptions`'."""
        given = {"search": self.search, "placement": self.placement, "preload": self.preload}
        return {name: value for name, value in given.items() if value is not None}


@dataclass(frozen=True)
class Planner:
    """One planner: what it plans and how the plan search (`plan_module`, `t10-plan-search`)
    runs it."""

    name: str
    help: str
    """One line for `t10 run --help` and the docs."""
    temporal_dims: int
    """How many temporal dims its plans may have (0: spatial partitions only)."""
    search: str | None
    """Its own way of choosing plans under the SRAM limit (the `search` option's default:
    `greedy`, `exact` or `fastest`); None: it chooses every operator's plan on its own and
    takes no `search` (nor trades plans between operators for `t10 explain`)."""
    temporaries: float | None = None
    """The default share of a core's SRAM an operator's plan may take while it runs, beyond
    its resident weights, when it takes the `temporaries` option; None: it takes none."""
    cold_weights: bool = False
    """Its operators may keep their weights cold where memory binds
    (`t10.planning.cold_weights`)."""
    plan: Callable[[ModelPlanning, ChipSpec, ModuleOp], int] = plan_traded
    """How the plan search plans a model under it (`plan_module` calls it with the module's
    `ModelPlanning`, the chip and the module); returns the model's bytes per core."""
    does_not_fit: str = ""
    """What the error of a model that does not fit adds to its fix (after ", or ")."""
    bench: tuple[BenchConfig, ...] = ()
    """Its configurations in `t10 bench`."""


_PLANNERS: dict[str, Planner] = {}


def register_planner(planner: Planner) -> Planner:
    """Adds `planner` to the registry (after the others) and returns it."""
    if planner.name in _PLANNERS:
        raise T10Error(f"planner '{planner.name}' is registered already")
    _PLANNERS[planner.name] = planner
    return planner


def planner_names() -> tuple[str, ...]:
    """Every registered planner's name, in the order they were registered."""
    return tuple(_PLANNERS)


def planners() -> tuple[Planner, ...]:
    """Every registered planner, in the order they were registered."""
    return tuple(_PLANNERS.values())


def planner(name: str, what: str = "planner") -> Planner:
    """The planner named `name`; otherwise a T10Error naming `what` (the pass or function
    that takes it) and the planners to choose from."""
    found = _PLANNERS.get(name)
    if found is None:
        raise T10Error(
            f"{what}: unknown planner '{name}'; choose one of {', '.join(planner_names())}"
        )
    return found
