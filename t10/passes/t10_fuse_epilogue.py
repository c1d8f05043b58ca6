"""t10-fuse-epilogue: element-wise readers of a contraction run on its cores, as its epilogue.

An element-wise `linalg.generic` E that is the only reader of a contraction C's result and
reads it at the identity map (E's loops are C's output dims) is marked `t10.epilogue = N`
(N: the input that reads C), and C is renamed `C+E`. The plan search then plans the two as
one operator — C's plan, with E's other inputs laid out like C's output tile — and the
lowering runs E as an element-wise kernel on the cores that hold each finished output tile
(`rtensor.epilogue`): a bias add, a GELU, a residual add after a MatMul costs an
element-wise pass over the tile and no exchange, instead of a relayout, a kernel and a sync
of its own.

```
  %c = linalg.generic {...matmul...} ins(%x, %w) {t10.name = "fc/MatMul"}
  %e = linalg.generic {...add...}    ins(%c, %b) {t10.name = "fc/Add"}
  ⇒ %c: t10.name = "fc/MatMul+fc/Add";  %e: t10.epilogue = 0
```

E's other inputs must be defined before C (weights, function arguments, earlier results).
Generics that carry a `t10.plan` are left alone. Run it after `t10-fuse-elementwise` (so
element-wise chains such as bias + GELU are one generic) and before the plan search;
`t10-compile` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from t10.passes.epilogue import EPILOGUE_ATTR, PLAN_ATTR, epilogue_problem, mark_epilogue
from t10.passes.tensor_expr import ExprKind, linalg_tensor_expr

GENERIC = "linalg.generic"


class MarkEpilogue(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != GENERIC or PLAN_ATTR in op.attributes or not op.results:
            return
        uses = list(op.results[0].uses)
        if not uses:
            return
        reader = uses[0].operation
        if reader.name != GENERIC or PLAN_ATTR in reader.attributes:
            return
        if EPILOGUE_ATTR in reader.attributes:
            return
        if linalg_tensor_expr(op).kind is not ExprKind.CONTRACTION:  # type: ignore[arg-type]
            return
        if epilogue_problem(op, reader) is not None:
            return
        mark_epilogue(op, reader)
        rewriter.handle_operation_modification(op)
        rewriter.handle_operation_modification(reader)


@dataclass(frozen=True)
class T10FuseEpilogue(ModulePass):
    name = "t10-fuse-epilogue"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(MarkEpilogue(), apply_recursively=False).rewrite_module(op)
