"""The `t10` planner (the default): compute-shift plans whose tensors rotate among cores
along one temporal dim (`t10.planning.plan_search`), traded between operators by T10's greedy
memory reconciliation (`t10.planning.memory_reconciliation.choose_plans`)."""

from t10.planning.planners.registry import BenchConfig, Planner

T10 = Planner(
    name="t10",
    help="compute-shift plans with rotating tensors",
    temporal_dims=1,
    search="greedy",
    cold_weights=True,
    bench=(
        BenchConfig("t10", 0),
        BenchConfig("t10-fastest", 2, search="fastest"),
        # beside t10 on a mesh or a multi-chip system: the gain of placing the plans
        BenchConfig("t10-linear", 4, placement="oblivious", default=False),
        # on a chip with off-chip memory, the same plans with the weights loaded right
        # before their operator (load, then compute) or at most one operator ahead: the
        # gain of planning the loads
        BenchConfig("t10-no-overlap", 5, preload="none", default=False),
        BenchConfig("t10-next-op", 6, preload="next", default=False),
    ),
)
