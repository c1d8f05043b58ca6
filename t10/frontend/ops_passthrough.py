"""Ops that pass their input on unchanged: Identity and inference Dropout."""

from __future__ import annotations

import onnx

from t10.frontend.importer import Importer, lowering
from t10.frontend.integer_ranges import BOOL, Ranges, keeps_input


def _dropout_ranges(imp: Importer, node: onnx.NodeProto) -> Ranges:
    """The data (float, by ONNX) passes on; the mask is a bool."""
    return Ranges((imp.range_of(node.input[0]), BOOL)[: len(node.output)])


@lowering("Identity", integers=keeps_input)
def lower_identity(imp: Importer, node: onnx.NodeProto) -> None:
    imp.pass_through(node)


# integers: its mask is a bool (its data is float, by ONNX); a used mask is refused below
@lowering("Dropout", attributes={"seed", "ratio"}, integers=_dropout_ranges)
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
