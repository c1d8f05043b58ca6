"""chip: the BSP program a chip runs — the final dialect the simulator executes.

```
  %y = chip.program "main" on 16 -> tensor<64x64xf32> {
    ... core.alloc / core.load (done before the program starts) ...
    chip.load "fc2/load" %w into %b layout <...>   // from off-chip memory, while steps run
    chip.superstep "fc1" {          // compute phase: core.kernel ops on every core
    } exchange {                    // exchange phase: core.shift / core.all_reduce / core.relayout
    }                               // then one chip-wide sync
    scf.for %t = ... { chip.superstep ... }
    chip.yield %out : tensor<64x64xf32>
  }
```
A superstep costs its slowest core's compute, plus its exchange, plus one sync. A
`chip.load` starts where it stands in the program (once the off-chip memory has finished the
loads before it) and runs beside the supersteps; the first superstep that reads its buffer
waits until it has arrived (`t10.common.offchip`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException

from t10.common.weights import is_host_tensor
from t10.t10_dialects import core
from t10.t10_dialects.core import BufferType
from t10.t10_dialects.rtensor import LayoutAttr, tensor_type

COMPUTE_OPS = (core.KernelOp,)
EXCHANGE_OPS = (
    core.ShiftOp, core.AllReduceOp, core.AllGatherOp, core.RelayoutOp, core.GatherOp
)


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """The chip program of one function, on the first `cores` cores of the chip."""

    name = "chip.program"
    label = prop_def(StringAttr)
    cores = prop_def(IntegerAttr[I64])
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    assembly_format = "$label `on` $cores attr-dict `->` type($outputs) $body"

    def verify_(self) -> None:
        if self.cores.value.data < 1:
            raise VerifyException("chip.program: needs at least one core")
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("chip.program: body must end with chip.yield")
        if tuple(last.operand_types) != tuple(self.result_types):
            raise VerifyException("chip.program: chip.yield types differ from the results")


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "chip.yield"
    values = var_operand_def(TensorType)
    traits = traits_def(IsTerminator())
    assembly_format = "($values^ `:` type($values))? attr-dict"


@irdl_op_definition
class SuperstepOp(IRDLOperation):
    """One BSP superstep of operator `label`: compute, exchange, sync."""

    name = "chip.superstep"
    label = prop_def(StringAttr)
    compute = region_def()
    exchange = region_def()
    traits = traits_def(NoTerminator())
    assembly_format = "$label $compute `exchange` $exchange attr-dict"

    def verify_(self) -> None:
        for region, allowed, phase in (
            (self.compute, COMPUTE_OPS, "compute"),
            (self.exchange, EXCHANGE_OPS, "exchange"),
        ):
            if len(region.blocks) > 1:
                raise VerifyException(f"chip.superstep: the {phase} phase has one block")
            for op in region.blocks[0].ops if region.blocks else ():
                if not isinstance(op, allowed):
                    raise VerifyException(
                        f"chip.superstep '{self.label.data}': '{op.name}' cannot run in the "
                        f"{phase} phase"
                    )


@irdl_op_definition
class LoadOp(core.BufferLayoutOp):
    """Loads a host tensor kept in off-chip memory (a weight, an `arith.constant`, or a
    function argument) into `buffer` following `layout`: it starts where it stands, between
    supersteps, and runs beside them; `label` names the wait of the superstep that first
    reads the buffer before it has arrived."""

    name = "chip.load"
    label = prop_def(StringAttr)
    source = operand_def(TensorType)
    buffer = operand_def(BufferType)
    layout = prop_def(LayoutAttr)
    assembly_format = (
        "$label $source `into` $buffer `layout` $layout attr-dict `:` type($source) `,` "
        "type($buffer)"
    )

    def buffer_layouts(self) -> list[tuple[SSAValue, LayoutAttr, TensorType]]:
        return [(self.buffer, self.layout, tensor_type(self.source))]

    def verify_(self) -> None:
        what = f"chip.load '{self.label.data}'"
        if not is_host_tensor(self.source):
            raise VerifyException(
                f"{what}: loads a host tensor (an arith.constant or a function argument) from "
                "off-chip memory; its source is neither"
            )
        parent = self.parent_op()
        if parent is not None and isinstance(parent, SuperstepOp):
            raise VerifyException(f"{what}: runs between supersteps, not in one")
        core.check_buffer_layout(what, self.buffer, self.layout, tensor_type(self.source))
        core.check_layout_ops(self)


Chip = Dialect("chip", [ProgramOp, YieldOp, SuperstepOp, LoadOp], [])
