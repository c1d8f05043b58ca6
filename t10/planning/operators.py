"""The operators the plan search plans: a `linalg.generic` with the epilogue fused into it,
their tensor expressions at a storage precision, and the roles of their inputs."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, SSAValue

from t10.common.epilogues import epilogue_inputs, epilogue_of, fused_tensor_expr, is_epilogue
from t10.common.tensor_expr import TensorExpr, at_precision, linalg_tensor_expr
from t10.errors import T10Error
from t10.planning.memory_reconciliation import Operands
from t10.t10_dialects.rtensor import RTensorType, through_views

_LINALG_OPS_PLANNED = ("linalg.generic", "linalg.yield", "linalg.index")
"""The linalg ops the plan search understands (docs/DESIGN.md, frontend output contract)."""


def check_named_ops(module: ModuleOp, what: str) -> None:
    """Refuse linalg's named ops (linalg.matmul, linalg.add, ...): the planner sees only
    `linalg.generic`, and a named op left in place would never be planned or lowered."""
    for op in module.walk():
        if op.name.startswith("linalg.") and op.name not in _LINALG_OPS_PLANNED:
            raise T10Error(
                f"{what}: '{op.name}' is a named linalg op, which t10 does not plan; run "
                "xDSL's 'linalg-generalize-named-ops' pass first to make it a linalg.generic"
            )


_LOWERED_LEVELS = ("chip", "core", "cshift", "rtensor")
"""The levels below linalg, lowest first."""


def _level(op: Operation) -> str | None:
    """The level below linalg that `op` belongs to (None: linalg level; the rtensor views
    and gathers of host tensors come before planning)."""
    dialect = op.name.split(".")[0]
    if dialect == "rtensor":
        types = (*op.operand_types, *op.result_types)
        return dialect if any(isinstance(t, RTensorType) for t in types) else None
    return dialect if dialect in _LOWERED_LEVELS else None


def check_not_lowered(module: ModuleOp, what: str) -> None:
    """Refuse IR that a conversion has already lowered below linalg (e.g. the output of
    t10-compile): the plan search, and so t10-compile, takes linalg-level IR."""
    found: dict[str, str] = {}
    for op in module.walk():
        if (level := _level(op)) is not None:
            found.setdefault(level, op.name)
    for level in _LOWERED_LEVELS:
        if level in found:
            raise T10Error(
                f"{what}: the input is already lowered to the {level} level (it holds "
                f"'{found[level]}'); {what} takes linalg-level IR (an ONNX model, or the IR "
                "before t10-plan-search): simulate chip-level IR with -t t10-sim, or run the "
                "conversions after its level"
            )


@dataclass(frozen=True)
class Operator:
    """One planned operator: a generic, and the element-wise epilogue that runs on its cores
    (`t10.common.epilogues`); the plan and estimates are written on the generic."""

    generic: Operation
    epilogue: Operation | None = None

    @property
    def inputs(self) -> list[SSAValue]:
        own = list(self.generic.operands[: len(self.generic.operands) - 1])
        if self.epilogue is None:
            return own
        return own + epilogue_inputs(self.generic, self.epilogue)

    @property
    def result(self) -> SSAValue:
        return (self.epilogue or self.generic).results[0]

    def ops(self) -> tuple[Operation, ...]:
        return (self.generic,) if self.epilogue is None else (self.generic, self.epilogue)


def planned_operators(module: ModuleOp, epilogues: bool = True) -> list[Operator]:
    """The module's operators in program order: every generic but the marked epilogues,
    which join their contraction (every generic on its own with `epilogues` off)."""
    if not epilogues:
        return [Operator(o) for o in module.walk() if isinstance(o, GenericOp)]
    return [
        Operator(o, epilogue_of(o))
        for o in module.walk()
        if isinstance(o, GenericOp) and not is_epilogue(o)
    ]


def operand_roles(op: Operator) -> Operands:
    """Which inputs of `op` are weights (`arith.constant`: resident on chip), function
    arguments read directly, and function arguments or weights read through views."""
    constant, host = [], []
    staged: dict[int, tuple[int, ...]] = {}
    viewed_constants: dict[int, tuple[int, ...]] = {}
    for i, value in enumerate(op.inputs):
        source, view = through_views(value)
        is_constant = isinstance(source.owner, arith.ConstantOp)
        if view is None and is_constant:
            constant.append(i)
        elif view is None and isinstance(source.owner, Block):
            host.append(i)
        elif view is not None and (is_constant or isinstance(source.owner, Block)):
            assert isinstance(source.type, TensorType)
            shapes = viewed_constants if is_constant else staged
            shapes[i] = tuple(source.type.get_shape())
    return Operands(tuple(constant), tuple(host), staged, viewed_constants)


def operator_tensor_expr(op: Operator, precision: str, partials: str) -> TensorExpr:
    """The operator (with its epilogue) at the storage and partial-sum precisions."""
    if op.epilogue is None:
        assert isinstance(op.generic, GenericOp)
        expr = linalg_tensor_expr(op.generic)
    else:
        assert isinstance(op.generic, GenericOp) and isinstance(op.epilogue, GenericOp)
        expr = fused_tensor_expr(op.generic, op.epilogue)
    return at_precision(expr, precision, partials, "t10-plan-search")
