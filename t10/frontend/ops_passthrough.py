"""Ops that pass their input on unchanged: Identity and inference Dropout."""

from __future__ import annotations

import onnx

from t10.frontend.importer import Importer, lowering


@lowering("Identity", integers=True)
def lower_identity(imp: Importer, node: onnx.NodeProto) -> None:
    imp.pass_through(node)


# integers: its data is float (ONNX); a runtime training_mode or a used mask is refused below
@lowering("Dropout", attributes={"seed", "ratio"}, integers=True)
def lower_dropout(imp: Importer, node: onnx.NodeProto) -> None:
    """Inference Dropout is the identity (the ratio is ignored); no training mode, no mask."""
    names = list(node.input)
    if len(names) > 2 and names[2] and not _is_constant_false(imp, names[2]):
        raise imp.node_error(
            node,
            f"training mode is not supported: training_mode '{names[2]}' is not a constant "
            "false (export the model in inference mode)",
        )
    if len(node.output) > 1 and node.output[1] in imp.consumed:
        raise imp.node_error(
            node,
            f"the mask output '{node.output[1]}' is used; only inference Dropout (an identity "
            "whose mask is unused) is supported",
        )
    imp.pass_through(node)


def _is_constant_false(imp: Importer, name: str) -> bool:
    return imp.is_known(name) and not imp.constant(name).any()
