"""Ops that pass their input on unchanged: Identity, inference Dropout and Cast to FLOAT."""

from __future__ import annotations

import onnx

from t10.frontend.importer import FLOAT, Importer, dtype_name, lowering, node_attributes


@lowering("Identity", integer_passthrough=True)
def lower_identity(imp: Importer, node: onnx.NodeProto) -> None:
    imp.pass_through(node)


@lowering("Dropout", attributes={"seed", "ratio"})  # no-ops in inference
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


@lowering("Cast", attributes={"to", "saturate", "round_mode"})  # no-ops f32 → f32
def lower_cast(imp: Importer, node: onnx.NodeProto) -> None:
    """Cast to FLOAT of a runtime value (float32, or an integer graph input already held as
    its exact float32) is the identity; any other target is refused. Casts of known values
    are folded."""
    to = int(node_attributes(node)["to"])
    if to != FLOAT:
        raise imp.node_error(
            node,
            f"Cast from FLOAT to {dtype_name(to)} is not supported: the compiler computes in "
            "float32 only (Cast from FLOAT to FLOAT is an identity)",
        )
    imp.pass_through(node)
