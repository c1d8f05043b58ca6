"""The `replicate` planner, vendor-style: spatial partitions only (every core holds whole
copies of the sub-tensors it reads), every operator's fastest plan within a share of SRAM
for its temporaries (`t10.planning.memory_reconciliation.fastest_plans`, `within_share`);
every weight stays where its operator reads it (none cold)."""

from t10.planning.planners.registry import BenchConfig, Planner

REPLICATE = Planner(
    name="replicate",
    help="spatial partitions only",
    temporal_dims=0,
    search="fastest",
    temporaries=0.6,  # the vendor planner's default available memory proportion
    does_not_fit="the t10 planner (planner=t10), which rotates shared tensors among cores "
                 "instead of replicating them",
    bench=(BenchConfig("replicate", 1),),
)
