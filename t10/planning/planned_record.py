"""The plan search's choices as the report reads them, and their record on the module.

`planned_ops` reads every reported step (operator or data move) of a module right after the
plan search; `t10-plan-search` records them, with each operator's lower bound and the model's
(`model_bound_of`), as the module attributes `t10.planned_ops` and `t10.bound`, which every
lowering keeps, so a chip-level module alone (in memory or read back from text) gives the
report `t10 run` gives (`recorded_ops`, `recorded_bound`).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, SSAValue

from t10.common.attr_names import (
    BOUND_ATTR,
    EPILOGUE_ATTR,
    ESTIMATE_ATTR,
    GATHER_ATTR,
    LOAD_ATTR,
    MODEL_BYTES_ATTR,
    PARTIALS_ATTR,
    PLAN_ATTR,
    PLANNED_OPS_ATTR,
    PRECISION_ATTR,
    RELAYOUT_ATTR,
    STORE_ATTR,
)
from t10.common.bounds import model_bound, operator_bound
from t10.common.chip_spec import ChipSpec
from t10.common.epilogues import epilogue_of, fused_tensor_expr
from t10.common.tensor_expr import (
    TensorExpr,
    at_precision,
    element_bytes,
    linalg_tensor_expr,
    op_name,
    precision_type,
)
from t10.common.weights import is_host_tensor
from t10.errors import T10Error
from t10.t10_dialects.rtensor import EstimateAttr, GatherOp, ViewOp, through_views

__all__ = [
    "check_record",
    "PlannedOp",
    "model_bound_of",
    "planned_ops",
    "planned_sram",
    "record_planned_ops",
    "recorded_bound",
    "recorded_ops",
]


@dataclass(frozen=True)
class PlannedOp:
    """One reported step (an operator or a data move) as the plan search left it: its
    `t10.name`, kind, plan and estimate, and its lower bound once recorded
    (`recorded_ops`)."""

    name: str
    kind: str
    plan: str | None
    estimated_cycles: int | None
    estimated_sram_bytes_per_core: int | None
    bound_cycles: int | None = None


def planned_ops(module: ModuleOp) -> list[PlannedOp]:
    """Every reported step of a module after `t10-plan-search`, in program order."""
    return [step for step, _ in _planned_steps(module)]


def _planned_steps(module: ModuleOp) -> list[tuple[PlannedOp, TensorExpr | None]]:
    """`planned_ops`, each with the tensor expression a planned operator was planned as
    (for its bound; None for a move or an unplanned generic)."""
    precision, partials = (
        attr.data if isinstance(attr := module.attributes.get(key), StringAttr) else "fp32"
        for key in (PRECISION_ATTR, PARTIALS_ATTR)
    )
    out: list[tuple[PlannedOp, TensorExpr | None]] = []
    for op in module.walk():
        if isinstance(op, ViewOp) and RELAYOUT_ATTR in op.attributes:  # a returned view
            move = op.attributes[RELAYOUT_ATTR]
            out.append(_planned(f"{op.label.data}/relayout", "relayout", None, move))
        if isinstance(op, GatherOp) and GATHER_ATTR in op.attributes:  # made for no operator
            move = op.attributes[GATHER_ATTR]
            out.append(_planned(f"{op.label.data}/gather", "gather", None, move))
        if not isinstance(op, GenericOp) or EPILOGUE_ATTR in op.attributes:
            continue  # an epilogue is reported with its contraction
        plan = op.attributes.get(PLAN_ATTR)
        relayout = op.attributes.get(RELAYOUT_ATTR)
        if relayout is not None:
            out.append(_planned(f"{op_name(op)}/relayout", "relayout", None, relayout))
        gather = op.attributes.get(GATHER_ATTR)
        if gather is not None:
            out.append(_planned(f"{op_name(op)}/gather", "gather", None, gather))
        epilogue = epilogue_of(op)
        expr = linalg_tensor_expr(op) if epilogue is None else fused_tensor_expr(op, epilogue)
        wait = op.attributes.get(LOAD_ATTR)
        if isinstance(wait, IntegerAttr):  # waits for its off-chip weights
            out.append((PlannedOp(f"{op_name(op)}/load", "load", None, wait.value.data, 0),
                        None))
        est = op.attributes.get(ESTIMATE_ATTR)
        if plan is None:
            out.append(_planned(op_name(op), expr.kind.value, None, est))
        else:
            planned = at_precision(expr, precision, partials, "the report")
            out.append(_planned(op_name(op), expr.kind.value, str(plan), est, planned))
        store = op.attributes.get(STORE_ATTR)
        if isinstance(store, EstimateAttr) and store.cycles.data:  # else already home
            out.append(_planned(f"{op_name(op)}/store", "store", None, store))
    return out


def model_bound_of(chip: ChipSpec, module: ModuleOp, precision: str, partials: str) -> int:
    """The model's lower bound (`t10.common.bounds.model_bound`) over its operators as they
    enter the plan search: element-wise chains fused, epilogues marked (`t10-fuse-epilogue`,
    which no planner option changes), at the storage and partial-sum precisions. It is the
    same whichever planner runs: a planner may run a marked epilogue apart (where that is
    faster or fits), which only costs more, as the bound of an epilogue fused is at most
    the bounds of its contraction and of itself apart."""
    exprs = []
    hosted: dict[SSAValue, int] = {}  # each host tensor's elements (weights, arguments)
    for op in module.walk():
        if isinstance(op, GenericOp):
            for value in op.inputs:
                source, _ = through_views(value)
                if is_host_tensor(source) and isinstance(source.type, TensorType):
                    hosted[source] = prod(source.type.get_shape())
        if isinstance(op, GenericOp) and EPILOGUE_ATTR not in op.attributes:
            epilogue = epilogue_of(op)
            expr = linalg_tensor_expr(op) if epilogue is None else fused_tensor_expr(op, epilogue)
            exprs.append(at_precision(expr, precision, partials, "the report"))
    elem = element_bytes(precision_type(precision, "the report"), "the report")
    return model_bound(chip, exprs, elem * sum(hosted.values()))


def planned_sram(module: ModuleOp) -> int | None:
    """The plan search's bytes per core at the model's peak (`t10.model_bytes`), if any."""
    attr = module.attributes.get(MODEL_BYTES_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def _planned(
    name: str,
    kind: str,
    plan: str | None,
    est: Attribute | None,
    expr: TensorExpr | None = None,
) -> tuple[PlannedOp, TensorExpr | None]:
    cycles = getattr(est, "cycles", None)
    sram = getattr(est, "bytes", None)
    step = PlannedOp(
        name=name,
        kind=kind,
        plan=plan,
        estimated_cycles=None if cycles is None else cycles.data,
        estimated_sram_bytes_per_core=None if sram is None else sram.data,
    )
    return step, expr


def record_planned_ops(chip: ChipSpec, module: ModuleOp, bound: int) -> None:
    """Record `planned_ops` of a module the plan search has just planned, each operator
    with its lower bound on `chip`, and the model's `bound` (`model_bound_of` the module as
    it entered the plan search)."""
    records: list[Attribute] = []
    for p, expr in _planned_steps(module):
        entry: dict[str, Attribute] = {"name": StringAttr(p.name), "kind": StringAttr(p.kind)}
        if p.plan is not None:
            entry["plan"] = StringAttr(p.plan)
        if p.estimated_cycles is not None:
            entry["estimate"] = IntegerAttr(p.estimated_cycles, 64)
        if p.estimated_sram_bytes_per_core is not None:
            entry["sram"] = IntegerAttr(p.estimated_sram_bytes_per_core, 64)
        if expr is not None:
            entry["bound"] = IntegerAttr(operator_bound(chip, expr).cycles, 64)
        records.append(DictionaryAttr(entry))
    module.attributes[BOUND_ATTR] = IntegerAttr(bound, 64)
    module.attributes[PLANNED_OPS_ATTR] = ArrayAttr(records)


def recorded_ops(module: ModuleOp) -> list[PlannedOp] | None:
    """The steps `record_planned_ops` recorded on a (lowered) module; None if none were."""
    records = module.attributes.get(PLANNED_OPS_ATTR)
    if not isinstance(records, ArrayAttr):
        return None
    out: list[PlannedOp] = []
    for record in records:
        fields = record.data if isinstance(record, DictionaryAttr) else {}
        name, kind, plan = (
            f.data if isinstance(f := fields.get(key), StringAttr) else None
            for key in ("name", "kind", "plan")
        )
        estimate, sram, bound = (
            f.value.data if isinstance(f := fields.get(key), IntegerAttr) else None
            for key in ("estimate", "sram", "bound")
        )
        if name is None or kind is None:
            raise T10Error(
                f"module attribute '{PLANNED_OPS_ATTR}': entry {record} has no string 'name' "
                "and 'kind'; it is written by t10-plan-search, rerun that"
            )
        out.append(PlannedOp(name, kind, plan, estimate, sram, bound_cycles=bound))
    return out


def check_record(module: ModuleOp, pass_name: str) -> None:
    """Refuse a module whose plans differ from those `t10-plan-search` recorded for the
    report (a `t10.plan` edited after the search): lowered, its report would show plans it
    does not run."""
    recorded = recorded_ops(module)
    if recorded is None:
        return
    planned = {p.name: p.plan for p in recorded if p.plan is not None}
    for op in module.walk():
        if not isinstance(op, GenericOp) or EPILOGUE_ATTR in op.attributes:
            continue  # an epilogue runs with its contraction's plan
        plan = op.attributes.get(PLAN_ATTR)
        name = op_name(op)
        if plan is not None and planned.get(name) != str(plan):
            was = planned.get(name)
            raise T10Error(
                f"{pass_name}: operator '{name}' has the plan {plan}, but the module's "
                f"'{PLANNED_OPS_ATTR}' records "
                + ("none for it" if was is None else f"{was}")
                + " (a plan edited after t10-plan-search); rerun t10-plan-search, which "
                "keeps a generic's t10.plan as pinned and records it"
            )


def recorded_bound(module: ModuleOp) -> int | None:
    """The model's bound `record_planned_ops` recorded on a module, if any."""
    attr = module.attributes.get(BOUND_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else None
