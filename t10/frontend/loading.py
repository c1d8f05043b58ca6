"""Reading an ONNX model and checking it before import: its form (UTF-8 strings, supported
opsets, outputs, non-negative dimensions), the ONNX checker and strict shape inference."""

from __future__ import annotations

import pathlib
from collections.abc import Iterator, Mapping
from typing import Any

import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from onnx.external_data_helper import load_external_data_for_model

from t10.errors import T10Error

__all__ = [
    "CONVERT_TO_OPSET",
    "SUPPORTED_OPSETS",
    "check_form",
    "check_model",
    "first_lines",
    "fix_dims",
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
    """The model serialized in ``data``; external initializer data is read from ``base_dir``."""
    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # protobuf DecodeError and friends
        raise T10Error(
            f"cannot parse ONNX model '{name}': not a valid ONNX protobuf ({type(e).__name__}: {e})"
        ) from None
    if not model.HasField("graph"):
        raise T10Error(f"cannot parse ONNX model '{name}': the file contains no graph")
    if base_dir is not None and any(
        t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer
    ):
        try:
            load_external_data_for_model(model, str(base_dir))
        except Exception as e:
            raise T10Error(
                f"ONNX model '{name}': cannot load external initializer data: {e}"
            ) from None
    return model


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
    initializer whose data is external or of the wrong size is kept for the checker."""
    skeleton = onnx.ModelProto()
    _copy_fields(model, skeleton, skip="graph")
    _copy_fields(model.graph, skeleton.graph, skip="initializer")
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
    matches its shape."""
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


def check_model(model: onnx.ModelProto, name: str) -> None:
    """The ONNX checker, except that a model it refuses only for lack of output shapes (which
    exporters may leave out and onnxruntime accepts) passes once inference adds them."""
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        try:
            onnx.checker.check_model(onnx.shape_inference.infer_shapes(model))
        except Exception:
            if "of 'type' is required" in str(e):  # an output type inference could not fill
                strict_shape_inference(model, name)  # raises with the root cause
            raise T10Error(f"invalid ONNX model '{name}': {first_lines(e)}") from None


def strict_shape_inference(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as e:
        raise T10Error(
            f"ONNX shape inference failed for model '{name}': {first_lines(e)}"
        ) from None


def first_lines(e: Exception, n: int = 6) -> str:
    """The first ``n`` non-empty lines of an onnx error message, joined on one line."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    text = " ".join(lines[:n])
    return text if len(lines) <= n else text + " ..."
