"""chip: the BSP program a chip runs — the final dialect the simulator executes.

```
  %y = chip.program "main" on 16 -> tensor<64x64xf32> {
    ... core.alloc / core.load (done before the program starts) ...
    chip.superstep "fc1" {          // compute phase: core.kernel ops on every core
    } exchange {                    // exchange phase: core.shift / core.all_reduce / core.relayout
    }                               // then one chip-wide sync
    scf.for %t = ... { chip.superstep ... }
    chip.yield %out : tensor<64x64xf32>
  }
```
A superstep costs its slowest core's compute, plus its exchange, plus one sync.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Dialect
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException

from t10.t10_dialects import core

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


Chip = Dialect("chip", [ProgramOp, YieldOp, SuperstepOp], [])
