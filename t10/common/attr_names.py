"""Names of the discardable `t10.*` attributes that carry decisions between passes.

The pass that writes an attribute documents what it means (t10-plan-search: plans, estimates,
moves and the module attributes; t10-fuse-epilogue: epilogue marks; the ONNX frontend: names,
types and index bounds). Every reader and writer takes the name from here, so a misspelt name
is an import error rather than an attribute that is never found.
"""

NAME_ATTR = "t10.name"
"""An operator's or function argument's name in the source model (StringAttr)."""
ONNX_TYPE_ATTR = "t10.onnx_type"
"""A function argument's or result's ONNX element type when the IR type (f32) stands for
another: int64, int32 or bool (exact integers: ids, masks) or `FLOAT16_TYPE`."""
FLOAT16_TYPE = "float16"
"""The `t10.onnx_type` of a FLOAT16 argument or result: fp16 values, given and returned as
numpy float16 arrays (every other `t10.onnx_type` is an integer type)."""
IDS_ATTR = "t10.ids"
"""On an `arith.constant` (UnitAttr): known gather ids (a model's non-affine constant indices),
whose values decide the gather's traffic, so a timing-only simulation keeps them."""
INDEX_BOUND_ATTR = "t10.index_bound"
"""The exclusive upper bound of the values an index argument may hold (a table size)."""
INPUT_RANGE_ATTR = "t10.range"
"""The declared range [lo, hi] of an integer function argument (array<i64: lo, hi>): the
integer arithmetic on it is proven exact under it, and the simulator refuses inputs outside
it."""
PLAN_ATTR = "t10.plan"
"""The chosen (or pinned) plan of a `linalg.generic` (#rtensor.plan)."""
ESTIMATE_ATTR = "t10.estimate"
"""The cost model's estimate of that plan (#rtensor.estimate)."""
RELAYOUT_ATTR = "t10.relayout"
"""The estimated cost of moving a generic's inputs into its plan's layouts (#rtensor.estimate)."""
GATHER_ATTR = "t10.gather"
"""The estimated cost of the gathers into a generic's inputs (#rtensor.estimate)."""
STORE_ATTR = "t10.store"
"""On a generic planned by `vgm`: its output is stored into its home after it runs (and its
inputs are loaded from theirs); the estimated cost of the store (#rtensor.estimate)."""
REUSED_ATTR = "t10.reused_inputs"
"""Inputs of a generic that reuse an earlier reader's relayout of the same value."""
COLD_ATTR = "t10.cold"
"""The weights of a generic kept cold (`t10.common.weights`)."""
OFFCHIP_ATTR = "t10.offchip"
"""The weights of a generic kept in off-chip memory (`t10.common.weights`)."""
AHEAD_ATTR = "t10.ahead"
"""How many operators before a generic its off-chip weights start loading."""
LOAD_ATTR = "t10.load"
"""The estimated wait of a generic for its off-chip weights (#rtensor.estimate)."""
EPILOGUE_ATTR = "t10.epilogue"
"""Marks the element-wise reader fused into a contraction's plan."""
CHIP_ATTR = "t10.chip"
"""The chip a module was planned for (module attribute)."""
PLANNER_ATTR = "t10.planner"
"""The planner that chose the plans: t10, t10-multidim, replicate or vgm (module
attribute)."""
HOME_CORES_ATTR = "t10.home_cores"
"""The cores the homes of the `vgm` planner lie over (module attribute, i64)."""
FP16_INEXACT_ATTR = "t10.fp16_inexact"
"""Module attribute of the ONNX frontend: a known integer constant computed with as an integer
that fp16 storage would round (StringAttr naming it); fp16 compilation refuses the module."""
FP16_VALUES_ATTR = "t10.fp16_values"
"""Module attribute of the ONNX frontend: the model has FLOAT16 values (StringAttr naming the
first); only fp16 storage computes them as the model's types say, so fp32 compilation refuses
the module."""
SHAPES_ONLY_ATTR = "t10.shapes_only"
"""Module attribute of the ONNX frontend: the model is in the shapes-only form
(`t10.common.shapes_only`), its weights elided constants (StringAttr naming the first); a
simulation with values refuses it."""
FP16_SATURATED_ATTR = "t10.fp16_saturated"
"""Module attribute of fp16 compilation: the warning naming the finite constants beyond fp16's
range that were saturated to ±65504 and can change a result (StringAttr; absent: none)."""
PRECISION_ATTR = "t10.precision"
"""The precision the module was compiled at: fp32 or fp16 (module attribute)."""
PARTIALS_ATTR = "t10.partials"
"""The precision of partial sums carried across steps and cores: fp32 or fp16 (module
attribute)."""
MODEL_BYTES_ATTR = "t10.model_bytes"
"""The plan search's peak bytes per core of the model with the chosen plans: resident weights
plus the largest peak of the operators and moves between them (module attribute, i64; the
report's plan-search bound)."""
BOUND_ATTR = "t10.bound"
"""The model's lower bound in cycles, over its operators as they entered the plan search
(module attribute, i64)."""
PLANNED_OPS_ATTR = "t10.planned_ops"
"""What the plan search chose, per reported step, for the report of a lowered module (module
attribute): an array of dictionaries {name, kind[, plan][, estimate][, sram][, bound]}, in
program order, written by `t10-plan-search` (`t10.planning.planned_record`)."""
