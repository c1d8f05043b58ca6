"""Where an operator's host tensors live, as the IR records it on the operator's generic
(each names inputs by index, its epilogue's counted after its own; docs/DESIGN.md, "Cold
weights" and "Off-chip weights"):

- `t10.cold = array<i64: ...>`: weights (`arith.constant`s it reads directly) that stay in a
  compact *home* for the whole program, `host_layout` over the cores of the operator's
  plan, expanded into the plan's layouts each time the operator runs;
- `t10.offchip = array<i64: ...>`: host tensors (weights, or function arguments such as a
  decoder's KV cache; read directly or through views) kept in the chip's off-chip memory
  and loaded for the operator (`t10.common.offchip`), the loads starting `t10.ahead = N :
  i64` operators before it (0, or absent: right before it), so that they arrive while the
  operators between run; read by `t10.planning.offchip_weights.offchip_inputs`, which
  follows the views.

`t10-plan-search` writes them (a user may edit or pin them with the plan);
convert-linalg-to-rtensor lowers them to the homes and expanding relayouts, and to the
`rtensor.load`s.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64
from xdsl.ir import BlockArgument, Operation, SSAValue

from t10.common.attr_names import AHEAD_ATTR, COLD_ATTR, OFFCHIP_ATTR
from t10.common.tensor_expr import op_name
from t10.errors import T10Error

MAX_AHEAD = 2**20


def named_indices(op: Operation, inputs: Sequence[SSAValue], key: str) -> tuple[int, ...]:
    """The inputs the array attribute `key` names, ascending (none when absent); an attribute
    that is not an array of distinct input indices is an error naming the problem."""
    attr = op.attributes.get(key)
    if attr is None:
        return ()
    if not isinstance(attr, DenseArrayBase) or attr.get_element_type() != i64:
        raise T10Error(
            f"operator '{op_name(op)}': attribute '{key}' must be an array<i64: ...> of "
            f"input indices, got {attr}"
        )
    indices = tuple(int(i) for i in attr.get_values())
    if len(set(indices)) != len(indices):
        raise T10Error(f"operator '{op_name(op)}': '{key}' names an input twice: {attr}")
    for i in indices:
        if not 0 <= i < len(inputs):
            raise T10Error(f"operator '{op_name(op)}': '{key}' names input {i}, but it has "
                           f"{len(inputs)} inputs")
    return tuple(sorted(indices))


def cold_inputs(op: Operation, inputs: Sequence[SSAValue]) -> tuple[int, ...]:
    """The inputs of the operator whose generic is `op` (its `inputs`, epilogue's included)
    that `t10.cold` names, ascending: weights it reads directly."""
    cold = named_indices(op, inputs, COLD_ATTR)
    for i in cold:
        if not isinstance(inputs[i].owner, arith.ConstantOp):
            raise T10Error(
                f"operator '{op_name(op)}': '{COLD_ATTR}' names input {i}, which is not a "
                "weight it reads directly (an arith.constant); only weights may be kept cold"
            )
    return cold


def is_host_tensor(value: SSAValue) -> bool:
    """A weight (an `arith.constant`) or a function argument."""
    return isinstance(value.owner, arith.ConstantOp) or (
        isinstance(value, BlockArgument) and isinstance(value.owner.parent_op(), func.FuncOp)
    )


def loads_ahead(op: Operation) -> int:
    """`t10.ahead`: how many operators before this one its off-chip weights start loading
    (0 when absent)."""
    attr = op.attributes.get(AHEAD_ATTR)
    if attr is None:
        return 0
    if (not isinstance(attr, IntegerAttr) or not 0 <= attr.value.data <= MAX_AHEAD
            or OFFCHIP_ATTR not in op.attributes):
        raise T10Error(
            f"operator '{op_name(op)}': attribute '{AHEAD_ATTR}' must be an integer from 0 to "
            f"{MAX_AHEAD} (operators ahead) on an operator with '{OFFCHIP_ATTR}' weights, "
            f"got {attr}"
        )
    return attr.value.data


def cold_attr(indices: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(indices))
