"""Cold weights as the IR records them: `t10.cold = array<i64: ...>` on an operator's generic
names the inputs (weights: `arith.constant`s it reads directly, its epilogue's counted after
its own) that stay in a compact *home* for the whole program, `host_layout` over the cores of
the operator's plan, and are expanded into the plan's layouts each time the operator runs
(docs/DESIGN.md, "Cold weights"). `t10-plan-search` writes it (a user may edit or pin it with
the plan); convert-linalg-to-rtensor lowers it to the home and the expanding relayout.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.ir import Operation, SSAValue

from t10.common.attr_names import COLD_ATTR
from t10.common.tensor_expr import op_name
from t10.errors import T10Error


def cold_inputs(op: Operation, inputs: Sequence[SSAValue]) -> tuple[int, ...]:
    """The inputs of the operator whose generic is `op` (its `inputs`, epilogue's included)
    that `t10.cold` names, ascending; an attribute that is not an array of distinct indices
    of weights is an error naming the problem."""
    attr = op.attributes.get(COLD_ATTR)
    if attr is None:
        return ()
    if not isinstance(attr, DenseArrayBase) or attr.get_element_type() != i64:
        raise T10Error(
            f"operator '{op_name(op)}': attribute '{COLD_ATTR}' must be an array<i64: ...> of "
            f"input indices, got {attr}"
        )
    indices = tuple(int(i) for i in attr.get_values())
    if len(set(indices)) != len(indices):
        raise T10Error(f"operator '{op_name(op)}': '{COLD_ATTR}' names an input twice: {attr}")
    for i in indices:
        if not 0 <= i < len(inputs) or not isinstance(inputs[i].owner, arith.ConstantOp):
            raise T10Error(
                f"operator '{op_name(op)}': '{COLD_ATTR}' names input {i}, which is not a "
                "weight it reads directly (an arith.constant); only weights may be kept cold"
            )
    return tuple(sorted(indices))


def cold_attr(indices: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(indices))
