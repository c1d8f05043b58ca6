"""t10-inline-splats: one-value constants read by element-wise generics become body constants.

An input of an element-wise (all-parallel) `linalg.generic` that is an `arith.constant`
whose elements all hold one value (a splat, or a tensor of one element) is dropped from the
generic's operands, and the body uses an `arith.constant` of that value instead:

```
  %min = arith.constant dense<-3.40282347e+38> : tensor<f32>
  linalg.generic ins(%m, %min : ...) { ^bb0(%a, %b, %o): %p = arith.mulf %a, %b ... }
  ⇒ linalg.generic ins(%m : ...) { ^bb0(%a, %o): %b = arith.constant -3.40282347e+38 : f32
                                                  %p = arith.mulf %a, %b ... }
```

Why: a tensor operand is stored in the program's precision, a body constant is computed
at the body's (float32). In fp16 a LayerNorm epsilon of 1e-12 stored as a tensor becomes 0; as
a body constant it keeps its float32 value, and only the result is rounded when stored. (A
constant beyond fp16's range saturates to ±65504 either way: convert-linalg-to-rtensor.) An
inlined scalar also costs no SRAM, load or exchange.

A generic keeps at least one input (an all-constant generic is the frontend's to fold), and
a generic that already carries a plan (`t10.plan`) is left alone: its plan names operands by
position. An epilogue mark (`t10.epilogue`, an input's index) follows its input.
Contractions and reductions keep their operands (their bodies have a fixed form).
`t10-compile` runs this pass first, whatever its other options.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
)
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from t10.common.attr_names import EPILOGUE_ATTR, PLAN_ATTR
from t10.common.locations import Located


def splat_value(value: SSAValue) -> FloatAttr | None:
    """The value of every element of a float constant tensor, if `value` is one whose
    elements are all equal (a splat, or a tensor of one element)."""
    op = value.owner
    if not isinstance(op, arith.ConstantOp):
        return None
    dense = op.value
    if not isinstance(dense, DenseIntOrFPElementsAttr):
        return None
    element = dense.get_element_type()
    if not isinstance(element, Float16Type | Float32Type | Float64Type):
        return None
    values = np.frombuffer(dense.data.data, dtype=np.dtype(element.format))
    if values.size > 1 and (values[-1] != values[0] or (values != values[0]).any()):
        return None  # (the first test answers for most weights without a scan)
    return FloatAttr(float(values[0]), element)


def _is_elementwise(op: GenericOp) -> bool:
    return all(it.data == IteratorType.PARALLEL for it in op.iterator_types.data)


class InlineSplatOperands(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GenericOp) or PLAN_ATTR in op.attributes or not _is_elementwise(op):
            return
        splats = [splat_value(v) for v in op.inputs]
        kept = [i for i, s in enumerate(splats) if s is None]
        if not kept or len(kept) == len(splats):
            return
        old = op.body.block
        n_in = len(op.inputs)
        maps = op.indexing_maps.data
        block = Block(arg_types=[old.args[i].type for i in (*kept, *range(n_in, len(old.args)))])
        value_map: dict[SSAValue, SSAValue] = {}
        for new_arg, i in zip(block.args, (*kept, *range(n_in, len(old.args))), strict=True):
            value_map[old.args[i]] = new_arg
            new_arg.name_hint = old.args[i].name_hint
        for i, splat in enumerate(splats):
            if splat is not None:
                constant = arith.ConstantOp(splat)
                block.add_op(constant)
                value_map[old.args[i]] = constant.result
        for body_op in old.ops:
            clone = body_op.clone(value_mapper=value_map)
            block.add_op(clone)
            for was, now in zip(body_op.results, clone.results, strict=True):
                value_map[was] = now
        inlined = GenericOp(
            [op.inputs[i] for i in kept],
            list(op.outputs),
            Region(block),
            [AffineMapAttr(maps[i].data) for i in (*kept, *range(n_in, len(maps)))],
            list(op.iterator_types.data),
            [r.type for r in op.results],
        )
        inlined.attributes.update(op.attributes)
        if isinstance(mark := op.attributes.get(EPILOGUE_ATTR), IntegerAttr):
            if mark.value.data not in kept:
                return  # (a mark on a constant: the epilogue verifier's to report)
            inlined.attributes[EPILOGUE_ATTR] = IntegerAttr(kept.index(mark.value.data), 64)
        dropped = {op.inputs[i].owner for i, s in enumerate(splats) if s is not None}
        rewriter.replace(op, inlined)
        for constant in dropped:
            if isinstance(constant, Operation) and not any(r.uses for r in constant.results):
                rewriter.erase(constant)


@dataclass(frozen=True)
class T10InlineSplats(ModulePass):
    name = "t10-inline-splats"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(Located(InlineSplatOperands())).rewrite_module(op)
