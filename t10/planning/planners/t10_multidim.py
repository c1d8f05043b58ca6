"""The `t10-multidim` planner: `t10`'s plans and also those with two temporal dims
(`t10.common.plans`), a larger space that takes several times longer to search."""

from t10.planning.planners.registry import Planner

T10_MULTIDIM = Planner(
    name="t10-multidim",
    help="also plans cut along two dims over time",
    temporal_dims=2,
    search="greedy",
    cold_weights=True,
)
