"""Reading an ONNX model and checking it before import: its external data (from its folder
only), its form (UTF-8 strings, supported opsets, outputs, non-negative dimensions), the ONNX
checker, strict shape inference with type checking (onnx's full check) and onnxruntime's CPU
kernels: t10 refuses what onnxruntime, the reference of ``--check``, refuses to load."""

from __future__ import annotations

import functools
import heapq
import os
import pathlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from t10.common import shapes_only
from t10.errors import T10Error

__all__ = [
    "CONVERT_TO_OPSET",
    "SUPPORTED_OPSETS",
    "accept_onnxruntime_ops",
    "check_form",
    "check_kernels",
    "check_model",
    "onnxruntime_only",
    "first_lines",
    "fix_dims",
    "in_topological_order",
    "load_external_data",
    "parse_model",
    "read_model",
    "strict_shape_inference",
    "weightless",
]

SUPPORTED_OPSETS = range(7, 29)
"""Default-domain opsets accepted: those onnxruntime, the reference of ``t10 run --check``,
guarantees (it warns below 7 and refuses above 28; tests/unit/test_cli_errors.py checks both
ends); they cover every opset of the ONNX node conformance cases the frontend is tested on.
Older models (legacy ``broadcast`` attributes, ``is_test`` Dropout) are refused with a
conversion hint (to ``CONVERT_TO_OPSET``)."""
CONVERT_TO_OPSET = 13


def read_model(path: pathlib.Path) -> onnx.ModelProto:
    """The model in file ``path``, with its external initializer data."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise T10Error(f"cannot read ONNX model '{path}': {e.strerror or e}") from None
    return parse_model(data, str(path), base_dir=path.parent)


def parse_model(data: bytes, name: str, base_dir: pathlib.Path | None) -> onnx.ModelProto:
    """The model serialized in ``data``; external tensor data is read from the model's folder
    ``base_dir`` (``load_external_data``)."""
    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # protobuf DecodeError and friends
        raise T10Error(
            f"cannot parse ONNX model '{name}': not a valid ONNX protobuf ({type(e).__name__}: {e})"
        ) from None
    if not model.HasField("graph"):
        raise T10Error(f"cannot parse ONNX model '{name}': the file contains no graph")
    load_external_data(model, name, base_dir)
    return model


def load_external_data(model: onnx.ModelProto, name: str, base_dir: pathlib.Path | None) -> None:
    """Read, in place, the data of every tensor ``model`` stores outside itself: initializers,
    a Constant's value and any other tensor attribute, sparse tensors, in subgraphs and
    functions too. As onnxruntime does, a location is relative to the model's folder
    ``base_dir`` and must stay inside it: no absolute path, no ``..`` or symbolic link leading
    out of it. A model given in memory (``base_dir`` None) has no folder to read from. The
    weights of a model in the shapes-only form (``t10.common.shapes_only``) have no data:
    they stay declared."""
    dataless = shapes_only.in_form(model)
    external = [
        (path, t)
        for path, t in _messages(model)
        if isinstance(t, onnx.TensorProto) and t.data_location == onnx.TensorProto.EXTERNAL
        and not (dataless and shapes_only.declared(t))
    ]
    for path, tensor in external:
        tensor.raw_data = _external_bytes(tensor, f"ONNX model '{name}': {path}", base_dir)
        tensor.data_location = onnx.TensorProto.DEFAULT
        del tensor.external_data[:]


def _external_bytes(tensor: onnx.TensorProto, where: str, base_dir: pathlib.Path | None) -> bytes:
    """The bytes of ``tensor``'s external data, from its file inside ``base_dir``."""
    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")
    where = f"{where}: tensor '{tensor.name}' has its data in file '{location}'"
    if base_dir is None:
        raise T10Error(f"{where}, but the model was not read from a file, so there is no "
                       "folder to read it from: give t10 the model's path")
    if not location:
        raise T10Error(f"{where}: an empty location names no file")
    if pathlib.PurePath(location).is_absolute() or pathlib.PureWindowsPath(location).anchor:
        raise T10Error(f"{where}, an absolute path; external data must lie in the model's "
                       "folder, at a path relative to it (as onnxruntime requires)")
    folder = base_dir.resolve()
    file = (folder / location).resolve()
    if not file.is_relative_to(folder):
        raise T10Error(f"{where}, which lies outside the model's folder '{folder}' (it leads "
                       f"to '{file}'); external data must lie in the model's folder")
    if not file.is_file():
        raise T10Error(f"{where}, which is not a file in the model's folder '{folder}'")
    try:
        offset, length = (int(info[k]) if k in info else None for k in ("offset", "length"))
    except ValueError:
        raise T10Error(f"{where}, at an offset or length that is not an integer") from None
    try:
        with file.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            start = offset or 0
            end = size if length is None else start + length
            if not 0 <= start <= end <= size:
                raise T10Error(f"{where}, at bytes {start} to {end}, but the file has {size} "
                               "bytes")
            f.seek(start)
            return f.read(end - start)
    except OSError as e:
        raise T10Error(f"{where}, which cannot be read: {e.strerror or e}") from None


def check_form(model: onnx.ModelProto, name: str) -> None:
    """What must hold before onnx's checker and shape inference see the model: they read
    strings as UTF-8 and trust dimensions (a negative one can abort the process in onnx's C++
    shape inference), and onnxruntime must implement the opset for ``--check``."""
    messages = list(_messages(model))
    for path, message in messages:
        _check_utf8(message, path, name)
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx") and o.version not in SUPPORTED_OPSETS:
            first, last = SUPPORTED_OPSETS[0], SUPPORTED_OPSETS[-1]
            fix = (
                f"re-export it at opset {last} or lower"
                if o.version > last
                else f"convert it with onnx.version_converter.convert_version(model, "
                f"{CONVERT_TO_OPSET})"
            )
            raise T10Error(
                f"ONNX model '{name}' uses opset {o.version} of the default domain; supported "
                f"are opsets {first} to {last} (those onnxruntime implements): {fix}"
            )
    if not model.graph.output:
        raise T10Error(f"ONNX model '{name}' has no graph outputs: there is nothing to compute")
    for path, message in messages:
        _check_dims_not_negative(message, path, name)


def _messages(message: Message, path: str = "") -> Iterator[tuple[str, Message]]:
    """Every protobuf message inside ``message`` (itself first) with its path, e.g.
    ``graph.node[3] ('mm').attribute[0] ('perm')`` (the name of a listed item that has one)."""
    yield path, message
    for field, value in _set_fields(message, FieldDescriptor.TYPE_MESSAGE):
        where = f"{path}.{field.name}" if path else field.name
        if not field.is_repeated:
            yield from _messages(value, where)
            continue
        for index, item in enumerate(value):
            label = getattr(item, "name", "")
            named = f" ('{label}')" if isinstance(label, str) and label else ""
            yield from _messages(item, f"{where}[{index}]{named}")


def _set_fields(message: Message, kind: int) -> Iterator[tuple[Any, Any]]:
    """The set fields of type ``kind`` (not ``ListFields``, which would copy every tensor's
    ``raw_data``)."""
    for field in message.DESCRIPTOR.fields:
        if field.type != kind:
            continue
        if field.is_repeated:
            if value := getattr(message, field.name):
                yield field, value
        elif message.HasField(field.name):
            yield field, getattr(message, field.name)


def _check_utf8(message: Message, path: str, name: str) -> None:
    """A string field that is not valid UTF-8 reaches Python as bytes: refuse it."""
    for field, value in _set_fields(message, FieldDescriptor.TYPE_STRING):
        where = f"{path}.{field.name}" if path else field.name
        items = enumerate(value) if field.is_repeated else [(None, value)]
        for index, text in items:
            if isinstance(text, bytes):
                at = where if index is None else f"{where}[{index}]"
                raise T10Error(
                    f"ONNX model '{name}': {at} is not valid UTF-8 ({text[:60]!r}); ONNX "
                    "strings must be UTF-8: fix the exporter or the name"
                )


def _check_dims_not_negative(message: Message, path: str, name: str) -> None:
    if isinstance(message, onnx.TensorShapeProto.Dimension):
        if message.HasField("dim_value") and message.dim_value < 0:
            raise T10Error(
                f"ONNX model '{name}': {path} is {message.dim_value}; a dimension cannot be "
                "negative"
            )
    elif isinstance(message, onnx.TensorProto | onnx.SparseTensorProto):
        for axis, size in enumerate(message.dims):
            if size < 0:
                raise T10Error(
                    f"ONNX model '{name}': {path} has size {size} at axis {axis}; a dimension "
                    "cannot be negative"
                )


ELIDED_BYTES = 1 << 16
"""Floating-point initializers larger than this are left out of what onnx's checker and
shape inference see (`weightless`)."""

_FLOAT_FIELDS: dict[int, tuple[str, int]] = {
    onnx.TensorProto.FLOAT: ("float_data", 4),
    onnx.TensorProto.DOUBLE: ("double_data", 8),
    onnx.TensorProto.FLOAT16: ("int32_data", 2),
    onnx.TensorProto.BFLOAT16: ("int32_data", 2),
}
"""Floating element types: the typed field that may hold their values, their bytes."""


def fix_dims(model: onnx.ModelProto, dims: Mapping[str, int], name: str) -> None:
    """Give every symbolic dimension named in ``dims`` its size wherever the graph declares a
    shape (inputs, outputs, value infos), in place (``model`` is a ``weightless`` copy), as
    onnxruntime's free dimension overrides do. A name that is no symbolic dimension of the
    graph's inputs, or a size below 1, is refused."""
    declared = [*model.graph.input, *model.graph.output, *model.graph.value_info]
    shapes = [
        vi.type.tensor_type.shape
        for vi in declared
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")
    ]
    symbolic = sorted({
        d.dim_param
        for vi in model.graph.input
        if vi.type.HasField("tensor_type")
        for d in vi.type.tensor_type.shape.dim
        if d.HasField("dim_param")
    })
    for dim, size in dims.items():
        if dim not in symbolic:
            listed = ", ".join(symbolic) if symbolic else "none"
            raise T10Error(f"ONNX model '{name}': a size is given for dimension '{dim}', but "
                           f"no graph input has a symbolic dimension of that name (they have: "
                           f"{listed})")
        if size < 1:
            raise T10Error(f"ONNX model '{name}': dimension '{dim}' is given the size {size}; "
                           "a size must be at least 1")
    for shape in shapes:
        for d in shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                d.dim_value = dims[d.dim_param]  # clears dim_param (a oneof)


def weightless(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` for onnx's checker and shape inference, without the data of its
    large floating-point initializers: each becomes a graph input of its type and shape.
    Both serialize the whole model (three copies of a BERT's weights, seconds each) and
    neither reads float values to infer a shape (shape inputs are integers, or tiny); the
    one check they make of such data, that its size matches the shape, is made here. An
    initializer whose data is external or of the wrong size is kept for the checker. Each
    unnamed node is given the name the importer gives it, so their messages name it too."""
    skeleton = onnx.ModelProto()
    _copy_fields(model, skeleton, skip="graph")
    _copy_fields(model.graph, skeleton.graph, skip="initializer")
    for index, node in enumerate(skeleton.graph.node):
        node.name = node.name or f"{node.op_type}_{index}"  # as the importer names it
    inputs = {vi.name for vi in model.graph.input}
    for t in model.graph.initializer:
        if not _elidable(t):
            skeleton.graph.initializer.append(t)
        elif t.name not in inputs:
            skeleton.graph.input.append(
                onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            )
    return skeleton


def _elidable(t: onnx.TensorProto) -> bool:
    """A floating-point initializer over ``ELIDED_BYTES`` whose data lies in the model and
    matches its shape, or one declared without data (``shapes_only``)."""
    if shapes_only.declared(t):
        return True
    if t.data_type not in _FLOAT_FIELDS or t.data_location == onnx.TensorProto.EXTERNAL:
        return False
    field, size = _FLOAT_FIELDS[t.data_type]
    count = 1
    for d in t.dims:
        count *= d
    if count * size <= ELIDED_BYTES:
        return False
    if t.HasField("segment"):
        return False
    raw = len(t.raw_data)
    typed = len(getattr(t, field))
    return (raw, typed) in ((count * size, 0), (0, count))


def in_topological_order(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model``, or a copy whose nodes are in an order where every value is defined before it
    is read, as onnxruntime sorts them (ONNX asks exporters for that order; some tools, e.g.
    onnxruntime's fp16 converter with ``keep_io_types``, do not keep it). The order is the
    model's wherever it allows: each node goes as early as its inputs let it, ties by its
    place in the model. A graph that no order fixes (a cycle, an undefined value) is returned
    as it is, for the ONNX checker to name its fault."""
    nodes = model.graph.node
    defined = {vi.name for vi in model.graph.input} | {t.name for t in model.graph.initializer}
    defined |= {t.values.name for t in model.graph.sparse_initializer} | {""}
    producer = {o: i for i, node in enumerate(nodes) for o in node.output if o}
    waiting = [
        {producer[n] for n in node.input if n not in defined and n in producer}
        for node in nodes
    ]
    if all(all(p < i for p in w) for i, w in enumerate(waiting)):
        return model  # already in order
    readers: dict[int, list[int]] = {}
    for i, w in enumerate(waiting):
        for p in w:
            readers.setdefault(p, []).append(i)
    ready = [i for i, w in enumerate(waiting) if not w]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for r in readers.get(i, ()):
            waiting[r].discard(i)
            if not waiting[r]:
                heapq.heappush(ready, r)
    if len(order) < len(nodes):
        return model  # a cycle: the checker names it
    ordered = onnx.ModelProto()
    _copy_fields(model, ordered, skip="graph")
    _copy_fields(model.graph, ordered.graph, skip="node")
    ordered.graph.node.extend(nodes[i] for i in order)
    return ordered


def _copy_fields(source: Message, target: Message, skip: str) -> None:
    """Copy the set fields of ``source`` into ``target`` (same type), all but ``skip``."""
    for field in source.DESCRIPTOR.fields:
        if field.name == skip:
            continue
        value = getattr(source, field.name)
        if field.is_repeated:
            getattr(target, field.name).extend(value)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            if source.HasField(field.name):
                getattr(target, field.name).CopyFrom(value)
        elif source.HasField(field.name) if field.has_presence else value:
            setattr(target, field.name, value)


def accept_onnxruntime_ops(model: onnx.ModelProto) -> None:
    """Register with onnx the schema onnxruntime defines for each operator of ``model``'s
    default domain that ONNX does not (SimplifiedLayerNormalization, which onnxruntime's
    transformer optimizer writes there), so that onnx's checker and shape inference take
    the node as onnxruntime's loader does: its types checked, its output shapes left to its
    lowering. (Other domains, onnxruntime's ``com.microsoft`` among them, onnx does not
    check.) An operator neither defines stays unknown: the checker refuses it."""
    unknown = {
        n.op_type
        for n in model.graph.node
        if n.domain in ("", "ai.onnx") and not onnx.defs.has(n.op_type)
    }
    if not unknown:  # nearly every model: onnxruntime's schemas are not even listed
        return
    for schema in _onnxruntime_schemas().values():
        if schema.name in unknown:
            onnx.defs.register_schema(_onnx_schema(schema))
            _REGISTERED.add(schema.name)


_REGISTERED: set[str] = set()
"""The default-domain operators `accept_onnxruntime_ops` registered with onnx."""


def onnxruntime_only(op_type: str) -> bool:
    """Whether ``op_type`` of the default domain is onnxruntime's, not ONNX's (registered by
    `accept_onnxruntime_ops`): onnx's reference evaluator cannot run it."""
    return op_type in _REGISTERED or not onnx.defs.has(op_type)


@functools.cache
def _onnxruntime_schemas() -> dict[str, Any]:
    """onnxruntime's schemas of the default domain that ONNX lacks, by operator (the newest
    version of each)."""
    from onnxruntime.capi.onnxruntime_pybind11_state import (
        get_all_operator_schema,  # pyright: ignore[reportAttributeAccessIssue] (not in its stubs)
    )

    schemas: dict[str, Any] = {}
    for s in get_all_operator_schema():
        newest = schemas.get(s.name)
        if s.domain == "" and (newest is None or newest.since_version < s.since_version):
            schemas[s.name] = s
    return {name: s for name, s in schemas.items() if not onnx.defs.has(name)}


def _onnx_schema(schema: Any) -> onnx.defs.OpSchema:
    """onnxruntime's ``schema`` as an ``onnx.defs.OpSchema`` (both are ONNX's C++ OpSchema;
    their Python bindings differ)."""
    S = onnx.defs.OpSchema

    def formal(p: Any) -> onnx.defs.OpSchema.FormalParameter:
        option = getattr(S.FormalParameterOption, p.option.name)
        return S.FormalParameter(p.name, p.typeStr, p.description, param_option=option,
                                 is_homogeneous=p.isHomogeneous)

    def attribute(a: Any) -> onnx.defs.OpSchema.Attribute:
        default = onnx.AttributeProto.FromString(a._default_value)  # serialized; empty: none
        if default.name:
            return S.Attribute(a.name, default, a.description)
        return S.Attribute(a.name, getattr(S.AttrType, a.type.name), a.description,
                           required=a.required)

    return S(
        schema.name,
        schema.domain,
        schema.since_version,
        schema.doc or "",
        inputs=[formal(p) for p in schema.inputs],
        outputs=[formal(p) for p in schema.outputs],
        type_constraints=[
            (t.type_param_str, list(t.allowed_type_strs), t.description)
            for t in schema.type_constraints
        ],
        attributes=[attribute(a) for a in schema.attributes.values()],
    )


_UNTYPED = ("of 'type' is required", "Unrecognized type value case")
"""The checker's messages for a value without a type (no type, an empty one)."""


def check_model(model: onnx.ModelProto, name: str) -> None:
    """The ONNX checker, except that a model it refuses only for lack of output shapes (which
    exporters may leave out and onnxruntime accepts) passes once inference adds them."""
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        try:
            onnx.checker.check_model(onnx.shape_inference.infer_shapes(model))
        except Exception:
            if any(m in str(e) for m in _UNTYPED):  # an output type inference could not fill
                strict_shape_inference(model, name)  # raises with the root cause
            raise T10Error(f"invalid ONNX model '{name}': {first_lines(e)}") from None


def strict_shape_inference(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    """``model`` with the shapes and types of its values inferred, as onnx's full check infers
    them: strictly, and checking each node's input and output types against its operator's
    type constraints, as onnxruntime's loader does (a Relu of a bool, a Where of a float
    condition, an Add of a float and an int64 are refused there too)."""
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    except Exception as e:
        raise T10Error(_inference_failure(model, name, e)) from None


_AT_NODE = re.compile(r"\(op_type:([^,)]*), node name: ([^)]*)\): (?:\[\w+\] )?(.*)", re.S)
_BAD_TYPE = re.compile(r"(\w+) typestr: \w+, has unsupported type: (\S+)")
_MIXED_TYPE = re.compile(r"(\w+) has inconsistent type (\S+)")
_ELEM_TYPES = re.compile(
    r"Inferred elem type differs from existing elem type: \((\d+)\) vs \((\d+)\)"
)


def _inference_failure(model: onnx.ModelProto, name: str, e: Exception) -> str:
    """One line for a failure of onnx's shape inference: the node it names (``weightless``
    names every node) and the reason, said plainly where it is a type."""
    match = _AT_NODE.search(str(e))
    if match is None:
        return f"ONNX shape inference failed for model '{name}': {first_lines(e)}"
    op_type, node_name, reason = match.groups()
    reason = first_lines(ValueError(reason))
    node = next((n for n in model.graph.node if n.name == node_name), None)
    if node is not None and (typed := _type_reason(model, node, reason)):
        reason = typed
    return f"ONNX model '{name}': node '{node_name}' ({op_type}): {reason}"


def _type_reason(model: onnx.ModelProto, node: onnx.NodeProto, reason: str) -> str | None:
    """``reason`` said with the value and the types its operator takes, when it is a type
    that ``node``'s operator does not take (None when it is not, or the schema does not say)."""
    if found := _ELEM_TYPES.fullmatch(reason):
        inferred, declared = (_type_name(int(t)) for t in found.groups())
        return f"its output is a {inferred}, but the model declares it a {declared}"
    found = _BAD_TYPE.fullmatch(reason) or _MIXED_TYPE.fullmatch(reason)
    opset = next((o.version for o in model.opset_import if o.domain == node.domain), 1)
    if found is None or not onnx.defs.has(node.op_type, opset, node.domain):
        return None
    param, given = found.groups()
    schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
    sides = (("input", schema.inputs, node.input), ("output", schema.outputs, node.output))
    for kind, formals, values in sides:
        for i, formal in enumerate(formals):
            if formal.name != param:
                continue
            one = formal.option != onnx.defs.OpSchema.FormalParameterOption.Variadic
            what = f"its {kind} {param}" + (f" '{values[i]}'" if one and i < len(values) else "")
            var = formal.type_str
            if found.re is _MIXED_TYPE:
                return (f"{what} is a {given}, but another of its {var} operands is of another "
                        f"type; {node.op_type} takes one type for all of them")
            allowed = ", ".join(sorted(formal.types))
            return (f"{what} is a {given}, which {node.op_type} (opset {schema.since_version}) "
                    f"does not take: {var} is one of {allowed}")
    return None


_CAST_TO_FLOAT = {"tensor(float16)": "tensor(float)", "tensor(bfloat16)": "tensor(float)"}
"""The types onnxruntime runs a node in float where it has no kernel for them: it inserts
casts (its InsertCastTransformer)."""


def check_kernels(model: onnx.ModelProto, name: str) -> None:
    """Refuse a node of the default domain that onnxruntime, the reference of ``--check``,
    has no CPU kernel for: its operator's version has kernels, none for the node's types
    (a Relu of an int64, a Where of bools), even run in float (``_CAST_TO_FLOAT``).
    ``model`` is shape-inferred: every value has its type."""
    types = {
        vi.name: vi.type
        for vi in (*model.graph.input, *model.graph.value_info, *model.graph.output)
    }
    for t in model.graph.initializer:
        types[t.name] = onnx.helper.make_tensor_type_proto(t.data_type, None)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx") or not onnx.defs.has(node.op_type, opset):
            continue
        schema = onnx.defs.get_schema(node.op_type, opset)
        kernels = [
            k for k in _cpu_kernels().get(node.op_type, [])
            if k.version_range[0] <= schema.since_version <= k.version_range[1]
        ]
        if not kernels:
            continue
        bound = _bound_types(schema, node, types)
        as_float = {t: _CAST_TO_FLOAT.get(v, v) for t, v in bound.items()}
        if not any(
            all(t not in b or b[t] in c for t, c in k.type_constraints.items())
            for k in kernels
            for b in (bound, as_float)
        ):
            variables = {f.type_str for f in (*schema.inputs, *schema.outputs)} & bound.keys()
            given = ", ".join(
                f"{t} = {bound[t]}" for t in sorted(variables) if not t.startswith("tensor(")
            )
            raise T10Error(
                f"ONNX model '{name}': node '{node.name}' ({node.op_type}): onnxruntime, the "
                f"reference of --check, has no CPU kernel for {node.op_type}-"
                f"{schema.since_version} with {given}, so it cannot run the model"
            )


def _bound_types(
    schema: onnx.defs.OpSchema, node: onnx.NodeProto, types: Mapping[str, onnx.TypeProto]
) -> dict[str, str]:
    """The type each type variable (and formal parameter) of ``node`` is bound to, by its
    first present value, as onnxruntime matches kernels (``tensor(float)``)."""
    bound: dict[str, str] = {}
    sides = ((schema.inputs, node.input), (schema.outputs, node.output))
    for formals, values in sides:
        for i, formal in enumerate(formals):
            variadic = formal.option == onnx.defs.OpSchema.FormalParameterOption.Variadic
            present = [v for v in (values[i:] if variadic else values[i : i + 1]) if v]
            if not present or present[0] not in types:
                continue
            tensor = types[present[0]]
            if tensor.HasField("tensor_type"):
                type_name = _type_name(tensor.tensor_type.elem_type)
                bound.setdefault(formal.type_str, type_name)
                bound.setdefault(formal.name, type_name)
    return bound


@functools.cache
def _cpu_kernels() -> dict[str, list[Any]]:
    """onnxruntime's CPU kernels of the default domain by operator (its kernel registry; not
    in its public API, imported here so that reading IR alone does not load onnxruntime)."""
    from onnxruntime.capi._pybind_state import (
        get_all_opkernel_def,  # pyright: ignore[reportAttributeAccessIssue] (not in its stubs)
    )

    kernels: dict[str, list[Any]] = {}
    for k in get_all_opkernel_def():
        if k.provider == "CPUExecutionProvider" and k.domain in ("", "ai.onnx"):
            kernels.setdefault(k.op_name, []).append(k)
    return kernels


def _type_name(elem_type: int) -> str:
    """``tensor(float)`` for ``TensorProto.FLOAT``, as onnx and onnxruntime name types."""
    return f"tensor({onnx.helper.tensor_dtype_to_string(elem_type).split('.')[-1].lower()})"


def first_lines(e: Exception, n: int = 6) -> str:
    """The first ``n`` non-empty lines of an onnx error message, joined on one line."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    text = " ".join(lines[:n])
    return text if len(lines) <= n else text + " ..."
