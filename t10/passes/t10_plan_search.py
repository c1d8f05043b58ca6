"""t10-plan-search: choose a compute-shift plan for every `linalg.generic` of a module.

An analysis pass: it changes no operation, it only writes attributes. It runs the plan-search
library's `plan_module` (`t10.planning.model_search`) with its options.

- on every generic: `t10.plan = #rtensor.plan<...>` (the chosen plan) and
  `t10.estimate = #rtensor.estimate<...>` (its cycles and bytes per core);
- on a generic whose inputs arrive in another layout than their producer's:
  `t10.relayout = #rtensor.estimate<...>`, the layout transitions into it;
- on an `rtensor.view` returned from the function: `t10.relayout = #rtensor.estimate<...>`,
  the move that makes it on chip (`layout_transitions.returned_view_moves`);
- on a generic whose inputs reuse the move an earlier generic makes of the same tensor into
  the same layout (`layout_transitions.SharedMove`, kept while the model still fits):
  `t10.reused_inputs = array<i64: ...>`, those inputs (not in its `t10.relayout`);
- on a generic whose weights stay cold (`t10.planning.cold_weights`: kept in a compact home,
  expanded into the plan's layouts each time it runs): `t10.cold = array<i64: ...>`, those
  inputs (their expansion is part of its `t10.relayout`);
- on a generic that reads a gather of runtime ids (`rtensor.gather`, not planned itself):
  `t10.gather = #rtensor.estimate<...>`, the gather into its layout for uniformly drawn ids
  (the ids are unknown at compile time: `t10.common.move_costs.gather_estimate`);
- on an `rtensor.gather` made on chip for no operator (returned from the function, or read
  by another gather): `t10.gather = #rtensor.estimate<...>`, its making
  (`layout_transitions.made_gather_moves`);
- on the module: `t10.chip` (the `chip` option as given), `t10.planner`, `t10.precision`,
  `t10.partials` and `t10.model_bytes`, the bytes per core the plans need at their peak (an
  upper bound of what the simulator measures).

`planner=vgm` (Roller-style virtual global memory, `t10.planning.vgm_plans`) keeps every tensor
in a home over all the chip's cores (`t10.home_cores` on the module): each generic's
`t10.relayout` is then its loads from the homes, and `t10.store = #rtensor.estimate<...>`
says that it stores its output into its home (the store's cost); every operator's plan is
its own cheapest load + compute + store within the SRAM beside the homes (no `search`, no
transition sweep, no shared moves; epilogues stay as marked).

`precision=fp16` plans for fp16 storage: every buffer and exchange takes 2 bytes per element
and matmuls run at the fp16 rate. Partial sums that a plan carries across steps or cores are
fp32 by default (`partials=fp32`: accumulated apart and rounded once,
`t10.common.plans.rounds_partials`); `partials=fp16` accumulates them in the fp16 output
itself (half the bytes moved and held, no rounding pass, less accurate).
The linalg IR keeps its f32 types (the host's); convert-linalg-to-rtensor reads
`t10.precision` and gives the distributed tensors f16 elements.

Per operator it builds the Pareto frontier of plans (`operator_frontier`), then picks one plan
per operator so that the whole model fits the chip's SRAM (`search`: T10's greedy
`choose_plans`, the exact `exact_plans`, or `fastest_plans`, every operator's fastest plan on
its own, the `replicate` planner's default, whose plans may also take at most `temporaries`
of a core's SRAM while they run, beyond their weights): weights (inputs
defined by `arith.constant`) stay resident, an operator's output lives until its last reader,
function arguments from the program's start until their reader (`model_liveness`). A generic
that already carries `t10.plan` is *pinned*: its plan is validated and kept,
only its estimate is recomputed, and the memory reconciliation never moves it. Finally a
sweep re-chooses plans to avoid costly layout transitions between producers and consumers
(`reduce_transitions`); with `greedy` or `exact` it also starts from the greedy's choice
among spatial plans only (`spatial_options`) and keeps whichever total is lower.

Epilogues marked by `t10-fuse-epilogue` are planned with their contraction (`Operator`).
When memory binds (every operator's fastest plan together would not fit) or the model does
not fit with them, the search also plans every generic on its own and keeps that if it is
faster (or fits): it then removes the `t10.epilogue` marks (and the contractions' `+E`
names), so the IR shows what was decided.

    xdsl-opt model.mlir -p 't10-plan-search{chip=ipu-mk2 planner=t10 min-utilization=0.5
                                            precision=fp32 partials=fp32 search=greedy}'
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from t10.planning import PlanOptions, plan_module


@dataclass(frozen=True)
class T10PlanSearch(PlanOptions, ModulePass):
    """Intra-operator Pareto search and inter-operator memory reconciliation (T10); its
    options are `PlanOptions`' and the two below."""

    name = "t10-plan-search"

    reuse: bool = True
    """Identical operators share one Pareto frontier, searched once (docs/DESIGN.md, "Reuse
    contract"). Off: every operator's frontier is searched on its own, which gives the same
    plans, slower (tests/unit/test_model_scaling.py compares the two)."""
    jobs: int = 0
    """Worker processes that search the big operators' frontiers side by side (with
    `reuse`), and plan the operators apart from their epilogues beside those with them:
    0 = one per CPU this process may use, 1 = all in this process. The plans are the same
    whatever the count (`t10.planning.operator_frontiers`, `t10.planning.forked`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plan_module(op, self, reuse=self.reuse, jobs=self.jobs)
