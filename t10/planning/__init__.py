"""The plan search as a library: its public API.

The names in `__all__` are what a tool or an embedding compiler needs: the options
(`PlanOptions`, `CompileOptions`, their defaults and choices), the planner registry
(`planner(name)` for each of `planner_names()`, `register_planner`), planning a module
(`plan_module`, which `t10-plan-search` runs), an operator's alternatives with the model
measured around each (`operator_alternatives`, which `t10 explain` prints), and the signals
that end the planning's worker processes (`ending_signals`, `Terminated`). The modules of the
package are its internals (`t10.planning.planners` is the package of the planners, not a
name here). Names load on first use (PEP 562), so importing one module of the package (the
options import `t10.planning.planners` first) imports no other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from t10.common.lazy_names import lazy_names

if TYPE_CHECKING:
    from t10.planning.alternatives import Alternative, OperatorAlternatives, operator_alternatives
    from t10.planning.compile_options import (
        DEFAULTS,
        SEARCHES,
        CompileOptions,
        PlanOptions,
        temporaries_planners,
    )
    from t10.planning.forked import Terminated, ending_signals
    from t10.planning.model_search import plan_module
    from t10.planning.offchip_weights import PRELOADS
    from t10.planning.plan_search import PLACEMENTS
    from t10.planning.planners import (
        Planner,
        planner,
        planner_names,
        register_planner,
    )

_HOMES: dict[str, str] = {
    "Alternative": "t10.planning.alternatives",
    "OperatorAlternatives": "t10.planning.alternatives",
    "operator_alternatives": "t10.planning.alternatives",
    "CompileOptions": "t10.planning.compile_options",
    "DEFAULTS": "t10.planning.compile_options",
    "PlanOptions": "t10.planning.compile_options",
    "PLACEMENTS": "t10.planning.plan_search",
    "PRELOADS": "t10.planning.offchip_weights",
    "SEARCHES": "t10.planning.compile_options",
    "temporaries_planners": "t10.planning.compile_options",
    "Terminated": "t10.planning.forked",
    "ending_signals": "t10.planning.forked",
    "plan_module": "t10.planning.model_search",
    "Planner": "t10.planning.planners",
    "planner": "t10.planning.planners",
    "planner_names": "t10.planning.planners",
    "register_planner": "t10.planning.planners",
}
"""Each public name → the module that defines it."""

__all__ = [
    "DEFAULTS",
    "PLACEMENTS",
    "PRELOADS",
    "SEARCHES",
    "Alternative",
    "CompileOptions",
    "OperatorAlternatives",
    "PlanOptions",
    "Planner",
    "Terminated",
    "ending_signals",
    "operator_alternatives",
    "plan_module",
    "planner",
    "planner_names",
    "register_planner",
    "temporaries_planners",
]


__getattr__, __dir__ = lazy_names("t10.planning", _HOMES, globals())
