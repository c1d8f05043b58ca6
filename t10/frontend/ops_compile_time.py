"""Ops t10 supports only when evaluated at compile time (see ``folding.foldable_nodes``):
shape arithmetic."""

from __future__ import annotations

import onnx

from t10.frontend.importer import Importer, lowering


@lowering("Constant", "ConstantOfShape", "EyeLike", "Range", "Shape", "Size", attributes=None)
def lower_fold_only(imp: Importer, node: onnx.NodeProto) -> None:
    """Reached only when an input is a runtime value: refused, whatever the attributes."""
    runtime = [n for n in node.input if n and not imp.is_known(n)]
    raise imp.node_error(
        node,
        f"the result needs a runtime value, which t10 does not compute: input '{runtime[0]}' "
        f"is computed at run time, and t10 evaluates {node.op_type} only at compile time "
        "(all inputs initializers, Constant nodes, shapes or values computed from those)",
    )
