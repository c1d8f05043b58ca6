"""Importing a checked, shape-inferred graph: its inputs become the arguments of
``func.func @main`` (float32, or the exact floats of integer inputs that are only cast to
FLOAT or index a Gather), each node is folded or lowered by its registered lowering, and the
graph outputs are returned."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue

from t10.common.attr_names import INDEX_BOUND_ATTR, NAME_ATTR, ONNX_TYPE_ATTR
from t10.common.locations import locate
from t10.errors import T10Error
from t10.frontend.importer import (
    FLOAT,
    SUPPORTED_OPS,
    Importer,
    Shape,
    dtype_name,
    integer_passthrough_ops,
    node_attributes,
)
from t10.t10_dialects import rtensor

__all__ = ["check_supported_ops", "import_graph"]

_INTEGER_INPUT_TYPES: dict[int, str] = {
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.BOOL: "bool",
}
"""Integer graph input types (→ ``t10.onnx_type``) accepted when they are only cast to FLOAT."""


def import_graph(
    model: onnx.ModelProto,
    model_name: str,
    foldable: set[int],
    initializers: Iterable[onnx.TensorProto] | None = None,
) -> ModuleOp:
    """The module of a checked, shape-inferred ``model``; ``foldable``: the indices of the
    nodes evaluated at import time (``folding.foldable_nodes``); ``initializers``: the
    model's, when ``model`` is its ``loading.weightless`` copy (default: ``model``'s own)."""
    imp = Importer(model, model_name, foldable, initializers)
    arg_names: list[str] = []
    arg_shapes: list[Shape] = []
    arg_attrs: list[DictionaryAttr] = []
    for vi in imp.graph.input:
        if vi.name in imp.initializers:
            continue  # an initializer listed as an input is a constant
        arg_names.append(vi.name)
        arg_shapes.append(_static_input_shape(imp, vi, "graph input"))
        attrs: dict[str, Attribute] = {NAME_ATTR: StringAttr(vi.name)}
        if (onnx_type := _INTEGER_INPUT_TYPES.get(vi.type.tensor_type.elem_type)) is not None:
            attrs[ONNX_TYPE_ATTR] = StringAttr(onnx_type)
        arg_attrs.append(DictionaryAttr(attrs))

    block = Block(arg_types=[TensorType(f32, s) for s in arg_shapes])
    for name, arg, shape in zip(arg_names, block.args, arg_shapes, strict=True):
        if 0 in shape:
            imp.define_empty(name, shape)  # the argument stays, unread
        else:
            imp.define(name, arg, shape)

    for index, node in enumerate(imp.graph.node):
        imp.node_name = node.name or f"{node.op_type}_{index}"
        imp.node_op = node.op_type
        if imp.folds(index, node):
            imp.fold(node)
            continue
        if imp.fold_empty_results(node):
            continue
        _check_attributes(imp, node)
        made = len(imp.ops), len(imp.constants)
        SUPPORTED_OPS[op_key(node)].lower(imp, node)
        locate([*imp.ops[made[0] :], *imp.constants[made[1] :]], imp.node_name)

    results: list[SSAValue] = []
    result_shapes: list[Shape] = []
    imp.node_name, imp.node_op = "<graph outputs>", ""
    for vi in imp.graph.output:
        _check_output_type(imp, vi)
        value, shape = imp.use(vi.name)
        _check_output_shape(imp, vi, shape)
        results.append(value)
        result_shapes.append(shape)
    imp.emit(func.ReturnOp(*results))
    block.add_ops([*imp.constants, *imp.ops])
    for index, bound in _index_bounds(block).items():
        arg_attrs[index] = DictionaryAttr(
            {**arg_attrs[index].data, INDEX_BOUND_ATTR: IntegerAttr(bound, i64)}
        )

    main = func.FuncOp(
        "main",
        (list(block.arg_types), [TensorType(f32, s) for s in result_shapes]),
        Region(block),
        arg_attrs=ArrayAttr(arg_attrs),
        res_attrs=ArrayAttr(
            [DictionaryAttr({NAME_ATTR: StringAttr(vi.name)}) for vi in imp.graph.output]
        ),
    )
    module = ModuleOp([main])
    module.verify()
    return module


def op_key(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"


def check_supported_ops(model: onnx.ModelProto, name: str, foldable: set[int]) -> None:
    """Every node that is not folded needs a lowering."""
    counts = Counter(
        op_key(n)
        for i, n in enumerate(model.graph.node)
        if i not in foldable and op_key(n) not in SUPPORTED_OPS
    )
    if counts:
        found = ", ".join(f"{op} ({c})" for op, c in sorted(counts.items()))
        raise T10Error(
            f"unsupported ONNX operators in model '{name}': {found}; "
            f"supported: {', '.join(sorted(SUPPORTED_OPS))}"
        )


def _check_attributes(imp: Importer, node: onnx.NodeProto) -> None:
    allowed = SUPPORTED_OPS[op_key(node)].attributes
    if allowed is None:
        return
    bad = sorted(a.name for a in node.attribute if a.name not in allowed)
    if bad:
        hint = f"supported: {', '.join(sorted(allowed))}" if allowed else "it takes none"
        raise imp.node_error(
            node, f"unsupported attribute(s) {', '.join(bad)} on {node.op_type} ({hint})"
        )


def _static_input_shape(imp: Importer, vi: onnx.ValueInfoProto, role: str) -> Shape:
    """The static shape of a float32 graph input (or an integer one only cast to FLOAT);
    clear errors otherwise."""
    if not vi.type.HasField("tensor_type"):
        kind = vi.type.WhichOneof("value") or "unknown"
        raise imp.error(
            f"{role} '{vi.name}' is not a tensor (its ONNX type is {kind}); "
            "only tensors are supported"
        )
    tt = vi.type.tensor_type
    if tt.elem_type in _INTEGER_INPUT_TYPES:
        _check_integer_input(imp, vi.name, tt.elem_type)
    elif tt.elem_type != FLOAT:
        raise imp.error(
            f"{role} '{vi.name}' has element type {dtype_name(tt.elem_type)}; "
            "only float32 (FLOAT) tensors are supported"
        )
    if not tt.HasField("shape"):
        raise imp.error(
            f"{role} '{vi.name}' has no shape (unknown rank); the compiler needs static "
            "shapes: re-export the model with static input shapes"
        )
    dims: list[int] = []
    for i, d in enumerate(tt.shape.dim):
        if d.HasField("dim_value") and d.dim_value >= 0:
            dims.append(d.dim_value)
            continue
        if d.HasField("dim_value"):
            raise imp.error(f"{role} '{vi.name}' has the negative size {d.dim_value} at axis {i}")
        what = f"symbolic dimension '{d.dim_param}'" if d.dim_param else "an unknown dimension"
        example = ", ".join(
            str(e.dim_value) if e.HasField("dim_value") else f"<{e.dim_param or 'size'}>"
            for e in tt.shape.dim
        )
        raise imp.error(
            f"{role} '{vi.name}' has {what} at axis {i}; the compiler needs static shapes: "
            "re-export the model with static shapes, or fix the dimensions with "
            "onnx.tools.update_model_dims.update_inputs_outputs_dims(model, "
            f"{{'{vi.name}': [{example}]}}, {{<outputs>}}) using concrete sizes"
        )
    return tuple(dims)


def _check_integer_input(imp: Importer, name: str, elem_type: int) -> None:
    """Every use of integer graph input ``name`` must reach a Cast to FLOAT or the indices
    of a Gather, through ``integer_passthrough_ops()`` (as their data input); ``Shape``
    reads only its shape."""
    consumers: dict[str, list[tuple[str, onnx.NodeProto]]] = {}
    for index, node in enumerate(imp.graph.node):
        for n in node.input:
            consumers.setdefault(n, []).append((node.name or f"{node.op_type}_{index}", node))
    outputs = {vi.name for vi in imp.graph.output}
    passthrough = integer_passthrough_ops()
    prefix = f"graph input '{name}' has element type {dtype_name(elem_type)}"
    fix = (
        "an integer graph input may only be cast to FLOAT (Cast to=FLOAT) or be the "
        "indices of a Gather, directly or through "
        f"{', '.join(sorted(passthrough))}; t10 computes float32 only"
    )
    pending = [name]
    while pending:
        value = pending.pop()
        if value in outputs:
            raise imp.error(f"{prefix}; it reaches graph output '{value}': {fix}")
        for node_name, node in consumers.get(value, []):
            is_data = node.input[0] == value
            if node.op_type in passthrough and is_data:
                pending.extend(o for o in node.output[:1] if o)
            elif (
                node.op_type == "Shape"
                or (node.op_type == "Cast" and node_attributes(node).get("to") == FLOAT)
                or (node.op_type == "Gather" and node.input[1] == value and not is_data)
            ):
                continue
            else:
                via = "" if value == name else f" (as '{value}')"
                raise imp.error(
                    f"{prefix}; node '{node_name}' ({node.op_type}) reads it{via}: {fix}"
                )


def _check_output_type(imp: Importer, vi: onnx.ValueInfoProto) -> None:
    tt = vi.type.tensor_type
    if vi.type.WhichOneof("value") not in (None, "tensor_type") or tt.elem_type not in (
        0,
        FLOAT,
    ):
        kind = (
            dtype_name(tt.elem_type)
            if vi.type.HasField("tensor_type")
            else f"a {vi.type.WhichOneof('value')} value"
        )
        raise imp.error(
            f"graph output '{vi.name}' has element type {kind}; "
            "only float32 (FLOAT) tensors are supported"
        )


def _check_output_shape(imp: Importer, vi: onnx.ValueInfoProto, shape: Shape) -> None:
    """Static dims declared on a graph output must match the computed shape."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return
    declared = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
    if len(declared) != len(shape) or any(
        d is not None and d != s for d, s in zip(declared, shape, strict=False)
    ):
        pretty = [d if d is not None else "?" for d in declared]
        raise imp.error(
            f"graph output '{vi.name}' is declared with shape {pretty} "
            f"but computes shape {list(shape)}"
        )


def _index_bounds(block: Block) -> dict[int, int]:
    """Function arguments that (through views) index a Gather: argument index → the size of
    the gathered axis (ids must lie below it; `t10 run` draws random ids there)."""
    bounds: dict[int, int] = {}
    for op in block.ops:
        if isinstance(op, rtensor.GatherOp):
            source, _ = rtensor.through_views(op.ids)
            table = op.table.type
            if isinstance(source, BlockArgument) and isinstance(table, TensorType):
                size = table.get_shape()[op.axis.value.data]
                bounds[source.index] = min(size, bounds.get(source.index, size))
    return bounds
