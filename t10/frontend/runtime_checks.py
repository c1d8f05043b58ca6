"""The shape rules onnxruntime's kernels check when they RUN a node, checked on the actual
(fixed, folded) shapes before the node is folded or lowered: onnx's shape inference on the
graph does not see shapes only computed inside it (an Expand by a folded shape), and empty
values, which t10 supports, meet kernels that refuse some of them. t10 refuses such a node as
onnxruntime does, naming the node and the shapes, instead of computing a different program."""

from __future__ import annotations

from collections.abc import Callable

import onnx

from t10.frontend.importer import Importer

__all__ = ["check_runtime_shapes"]


def check_runtime_shapes(imp: Importer, node: onnx.NodeProto) -> None:
    """Raise the ``T10Error`` onnxruntime's kernel would give when running ``node``."""
    if node.domain in ("", "ai.onnx") and (check := _CHECKS.get(node.op_type)) is not None:
        check(imp, node)


def _concat(imp: Importer, node: onnx.NodeProto) -> None:
    """Non-empty inputs agree on every dim but the axis (onnxruntime skips empty inputs)."""
    inputs = [(n, imp.shape_of(n)) for n in node.input if n and not imp.is_empty(n)]
    if not inputs:
        return
    first, shape = inputs[0]
    axis = next((a.i for a in node.attribute if a.name == "axis"), 0) % max(len(shape), 1)
    for name, other in inputs[1:]:
        if len(other) != len(shape):
            return  # onnx's shape inference refuses different ranks
        for d, (a, b) in enumerate(zip(shape, other, strict=True)):
            if d != axis and a != b:
                raise imp.node_error(
                    node,
                    f"its inputs disagree on the non-concat axis {d}: '{first}' has shape "
                    f"{list(shape)}, '{name}' has shape {list(other)} (onnxruntime refuses "
                    "it: non concat axis dimensions must match)",
                )


def _conv(imp: Importer, node: onnx.NodeProto) -> None:
    """onnxruntime's Conv / ConvTranspose refuse an input of an empty spatial dim."""
    shape = imp.shape_of(node.input[0])
    if 0 in shape[2:]:
        raise imp.node_error(
            node,
            f"its input '{node.input[0]}' of shape {list(shape)} has an empty spatial dim "
            f"(onnxruntime refuses it: invalid input shape {list(shape[2:])})",
        )


def _pool(imp: Importer, node: onnx.NodeProto) -> None:
    """onnxruntime's pooling kernels refuse an empty input unless its batch is empty."""
    shape = imp.shape_of(node.input[0])
    if 0 in shape[1:] and shape[0] != 0:
        raise imp.node_error(
            node,
            f"its input '{node.input[0]}' of shape {list(shape)} is empty but not in its "
            "batch dim (onnxruntime refuses it: only N can be zero)",
        )


_CHECKS: dict[str, Callable[[Importer, onnx.NodeProto], None]] = {
    "Concat": _concat,
    "Conv": _conv,
    "ConvInteger": _conv,
    "ConvTranspose": _conv,
    "MaxPool": _pool,
    "AveragePool": _pool,
    "GlobalMaxPool": _pool,
    "GlobalAveragePool": _pool,
}
