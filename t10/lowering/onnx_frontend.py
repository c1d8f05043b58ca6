"""ONNX → ``func`` + ``linalg.generic`` / ``tensor`` / ``arith`` (the linalg-level contract).

See ``docs/DESIGN.md`` ("Frontend output contract"). Every compute node becomes one or more
``linalg.generic`` ops whose indexing-map results are loop dims or the constant ``0``:

* contractions (MatMul, Gemm, the patch-embedding Conv of ``onnx_conv``) have the body
  ``mulf`` → ``addf(acc, p)`` → ``yield`` and a zero splat ``arith.constant`` as ``outs``;
* element-wise ops (Add, Sub, Mul, Div, Pow, Neg, Sqrt, Reciprocal, Exp, Tanh, Sigmoid, Erf,
  Gelu, Relu, the Gemm epilogue) are all-parallel generics with a ``tensor.empty`` as ``outs``
  and numpy broadcasting; their scalar bodies use ``arith`` ops, and ``math`` ops (exp, tanh,
  erf, sqrt, powf) where ``arith`` has none (see ``_ELEMENTWISE_BODIES``).

Static folding: a node whose inputs are all compile-time known (initializers, ``Constant``
nodes, results of folded nodes, empty values; any input of ``Shape``, since every shape is
static) is evaluated at import time by ``onnx_folding.evaluate`` (the ONNX reference
implementation, or numpy where that fails) and its outputs become known constants of any
element type. Empty (zero-size) values are known constants too: they have nothing to compute.
A known float32 constant read by compute becomes an ``arith.constant`` holding the exact bytes
(one value for a splat); other known constants serve only as attribute-like
inputs (a shape, axes, a ``Where`` condition) or feed further folding. ``Identity``, inference
``Dropout`` and ``Cast`` to float32 are pass-throughs; ``Where`` with a known condition is an
element-wise ``select``, ``Expand`` a broadcasting identity generic.

INT64 / INT32 / BOOL graph inputs are accepted when every use of them reaches a ``Cast`` to
FLOAT or the indices of a ``Gather`` (token ids: an ``rtensor.gather``) through
``INTEGER_PASSTHROUGH_OPS``: they become f32 arguments (the exact float of each integer)
tagged ``t10.onnx_type``.
"""

from __future__ import annotations

import functools
import os
import pathlib
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from math import prod
from typing import IO, Any

import numpy as np
import onnx
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from onnx import numpy_helper
from xdsl.context import Context
from xdsl.dialects import arith, func, math, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.utils.frontend import Frontend

from t10.common.attr_names import INDEX_BOUND_ATTR, NAME_ATTR, ONNX_TYPE_ATTR
from t10.common.tensor_expr import COMBINER_IDENTITY
from t10.common.view_maps import map_problem
from t10.errors import T10Error
from t10.lowering.onnx_conv import CONV_ATTRIBUTES, CONV_OPS
from t10.lowering.onnx_folding import BROADCAST_FOLDS, evaluate
from t10.lowering.onnx_views import VIEW_ATTRIBUTES, VIEW_OPS
from t10.t10_dialects import rtensor

__all__ = ["INTEGER_PASSTHROUGH_OPS", "OnnxFrontend", "SUPPORTED_OPS", "import_onnx"]

Shape = tuple[int, ...]
BodyFn = Callable[["_BodyBuilder", Sequence[SSAValue]], SSAValue]

_FLOAT = onnx.TensorProto.FLOAT
_INTEGER_INPUT_TYPES = {
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.BOOL: "bool",
}
"""Integer graph input types (→ ``t10.onnx_type``) accepted when they are only cast to FLOAT."""

INTEGER_PASSTHROUGH_OPS: frozenset[str] = frozenset({"Identity", *VIEW_OPS})
"""Ops an integer graph input may pass through (as their data input) on its way to a Cast to
FLOAT: they move values without computing on them."""

_NEVER_FOLDED = frozenset(
    {
        "Bernoulli",
        "Dropout",  # its own lowering refuses training mode instead of folding a random mask
        "Multinomial",
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
    }
)
"""Ops whose result is not a function of their inputs: never evaluated at import time."""
SUPPORTED_OPSETS = range(7, 29)
"""Default-domain opsets accepted: those onnxruntime, the reference of ``t10 run --check``,
guarantees (it warns below 7 and refuses above 28; tests/unit/test_cli_errors.py checks both
ends); they cover every opset of the ONNX node conformance cases the frontend is tested on.
Older models (legacy ``broadcast`` attributes, ``is_test`` Dropout) are refused with a
conversion hint (to ``_CONVERT_TO_OPSET``)."""
_CONVERT_TO_OPSET = 13


# --------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------


def import_onnx(model: str | os.PathLike[str] | onnx.ModelProto) -> ModuleOp:
    """Import an ONNX model (a file path or a ``ModelProto``) as a linalg-level module."""
    if isinstance(model, onnx.ModelProto):
        name = model.graph.name or "<in-memory model>"
        return _import_model_proto(model, name)
    path = pathlib.Path(model)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise T10Error(f"cannot read ONNX model '{path}': {e.strerror or e}") from None
    return _import_bytes(data, str(path), base_dir=path.parent)


@dataclass(frozen=True)
class OnnxFrontend(Frontend):
    """The ``xdsl-opt`` frontend for ``*.onnx`` files."""

    name = "onnx"

    def parse(self, ctx: Context, input: IO[bytes], input_name: str = "stdin") -> ModuleOp:
        base = pathlib.Path(input_name).parent if input_name not in ("", "stdin") else None
        return _import_bytes(input.read(), input_name, base_dir=base)


# --------------------------------------------------------------------------------------------
# Loading and validation
# --------------------------------------------------------------------------------------------


def _import_bytes(data: bytes, name: str, base_dir: pathlib.Path | None) -> ModuleOp:
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
            onnx.external_data_helper.load_external_data_for_model(model, str(base_dir))
        except Exception as e:
            raise T10Error(
                f"ONNX model '{name}': cannot load external initializer data: {e}"
            ) from None
    return _import_model_proto(model, name)


def _import_model_proto(model: onnx.ModelProto, name: str) -> ModuleOp:
    _check_form(model, name)
    foldable = _foldable_nodes(model.graph)
    _check_supported_ops(model, name, foldable)
    _check_model(model, name)
    return _Importer(_strict_shape_inference(model, name), name, foldable).run()


def _check_form(model: onnx.ModelProto, name: str) -> None:
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
                f"{_CONVERT_TO_OPSET})"
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


def _set_fields(message: Message, kind: int) -> Iterator[tuple[FieldDescriptor, Any]]:
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


def _check_model(model: onnx.ModelProto, name: str) -> None:
    """The ONNX checker, except that a model it refuses only for lack of output shapes (which
    exporters may leave out and onnxruntime accepts) passes once inference adds them."""
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        try:
            onnx.checker.check_model(onnx.shape_inference.infer_shapes(model))
        except Exception:
            if "of 'type' is required" in str(e):  # an output type inference could not fill
                _strict_shape_inference(model, name)  # raises with the root cause
            raise T10Error(f"invalid ONNX model '{name}': {_first_lines(e)}") from None


def _strict_shape_inference(model: onnx.ModelProto, name: str) -> onnx.ModelProto:
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=True)
    except Exception as e:
        raise T10Error(
            f"ONNX shape inference failed for model '{name}': {_first_lines(e)}"
        ) from None


def _first_lines(e: Exception, n: int = 6) -> str:
    """The first ``n`` non-empty lines of an onnx error message, joined on one line."""
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    text = " ".join(lines[:n])
    return text if len(lines) <= n else text + " ..."


def _op_key(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"


def _may_fold(node: onnx.NodeProto) -> bool:
    """Default-domain nodes without subgraphs or randomness."""
    subgraph = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    return (
        node.domain in ("", "ai.onnx")
        and node.op_type not in _NEVER_FOLDED
        and not any(a.type in subgraph for a in node.attribute)
    )


def _foldable_nodes(graph: onnx.GraphProto) -> set[int]:
    """Indices of the nodes evaluated at import time: ``_may_fold`` nodes whose inputs are all
    known (initializers, outputs of foldable nodes), and every ``Shape`` (shapes are static)."""
    known = {t.name for t in graph.initializer}
    foldable: set[int] = set()
    for index, node in enumerate(graph.node):
        if not _may_fold(node):
            continue
        if node.op_type == "Shape" or all(n in known for n in node.input if n):
            foldable.add(index)
            known.update(o for o in node.output if o)
    return foldable


def _check_supported_ops(model: onnx.ModelProto, name: str, foldable: set[int]) -> None:
    """Every node that is not folded needs a lowering."""
    counts = Counter(
        _op_key(n)
        for i, n in enumerate(model.graph.node)
        if i not in foldable and _op_key(n) not in SUPPORTED_OPS
    )
    if counts:
        found = ", ".join(f"{op} ({c})" for op, c in sorted(counts.items()))
        raise T10Error(
            f"unsupported ONNX operators in model '{name}': {found}; "
            f"supported: {', '.join(sorted(SUPPORTED_OPS))}"
        )


def _static_shape(vi: onnx.ValueInfoProto) -> Shape | None:
    """The shape of a tensor value info if every dim is a number, else None."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape") or not all(d.HasField("dim_value") for d in tt.shape.dim):
        return None
    return tuple(int(d.dim_value) for d in tt.shape.dim)


def _np_dtype_name(dtype: np.dtype) -> str:
    """The ONNX name of a numpy dtype (``int64`` → ``INT64``)."""
    try:
        return _dtype_name(onnx.helper.np_dtype_to_tensor_dtype(dtype))
    except (KeyError, ValueError, TypeError):
        return str(dtype)


def _dtype_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"<data type {elem_type}>"


# --------------------------------------------------------------------------------------------
# Shape and affine-map helpers
# --------------------------------------------------------------------------------------------


def _broadcast_shapes(*shapes: Shape) -> Shape | None:
    """Numpy multidirectional broadcasting; None when the shapes are incompatible."""
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _broadcast_exprs(
    in_shape: Shape, out_dims: Sequence[int], out_sizes: Shape
) -> list[AffineExpr]:
    """Index expressions reading ``in_shape`` broadcast (numpy-aligned, to the right) to loops.

    ``out_dims[i]`` is the loop dimension of broadcast-result dim ``i``, ``out_sizes[i]`` its
    size. Leading missing dims are omitted; size-1 dims broadcast against a larger size read 0.
    """
    offset = len(out_dims) - len(in_shape)
    assert offset >= 0
    exprs: list[AffineExpr] = []
    for i, size in enumerate(in_shape):
        if size == 1 and out_sizes[offset + i] != 1:
            exprs.append(AffineExpr.constant(0))
        else:
            exprs.append(AffineExpr.dimension(out_dims[offset + i]))
    return exprs


def _name_hint(name: str) -> str | None:
    """A printable SSA name for an ONNX value name (``fc1/Add_output`` → ``fc1_Add_output``)."""
    hint = re.sub(r"[^\w$.-]", "_", name)
    if hint and hint[0].isdigit():
        hint = "v" + hint
    return hint if hint and SSAValue.is_valid_name(hint) else None


def _map(num_dims: int, exprs: Sequence[AffineExpr]) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(num_dims, 0, tuple(exprs)))


def _identity_map(rank: int) -> AffineMapAttr:
    return AffineMapAttr(AffineMap.identity(rank))


def _tensor_type(shape: Shape) -> TensorType:
    return TensorType(f32, shape)


def _dense(shape: Shape, arr: np.ndarray) -> DenseIntOrFPElementsAttr:
    """``arr`` as float32; a broadcast of one value (a folded ConstantOfShape) as a splat."""
    if _is_broadcast_scalar(arr):
        return _splat(shape, arr.flat[0])
    data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
    return DenseIntOrFPElementsAttr(_tensor_type(shape), BytesAttr(data))


def _is_broadcast_scalar(arr: np.ndarray) -> bool:
    """Whether ``arr`` is one value broadcast (every stride 0) to more than one element."""
    return arr.size > 1 and not any(arr.strides)


def _splat(shape: Shape, value: float) -> DenseIntOrFPElementsAttr:
    """A float32 constant of ``shape`` whose every element is ``value``, stored as that one
    value (its size is checked by the plan search, not allocated here)."""
    return DenseIntOrFPElementsAttr(_tensor_type(shape), BytesAttr(np.float32(value).tobytes()))


class _BodyBuilder:
    """Collects the scalar ``arith`` / ``math`` ops of an element-wise body."""

    def __init__(self, block: Block) -> None:
        self.block = block

    def _add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def const(self, value: float) -> SSAValue:
        return self._add(arith.ConstantOp(FloatAttr(float(value), f32)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.AddfOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.SubfOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.MulfOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.DivfOp(a, b))

    def max(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.MaximumfOp(a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.MinimumfOp(a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        return self._add(arith.NegfOp(a))

    def abs(self, a: SSAValue) -> SSAValue:
        return self._add(math.AbsFOp(a))

    def log(self, a: SSAValue) -> SSAValue:
        return self._add(math.LogOp(a))

    def pow(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(math.PowFOp(a, b))

    def exp(self, a: SSAValue) -> SSAValue:
        return self._add(math.ExpOp(a))

    def tanh(self, a: SSAValue) -> SSAValue:
        return self._add(math.TanhOp(a))

    def erf(self, a: SSAValue) -> SSAValue:
        return self._add(math.ErfOp(a))

    def sqrt(self, a: SSAValue) -> SSAValue:
        return self._add(math.SqrtOp(a))

    def cmpf_one(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """``a != b`` (ordered: false when either is NaN), an ``i1``."""
        return self._add(arith.CmpfOp(a, b, "one"))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.SelectOp(c, a, b))


# --------------------------------------------------------------------------------------------
# The importer
# --------------------------------------------------------------------------------------------


class _Importer:
    def __init__(self, model: onnx.ModelProto, model_name: str, foldable: set[int]) -> None:
        self.model = model
        self.graph = model.graph
        self.model_name = model_name
        self.foldable = foldable
        self.constants: list[Operation] = []  # initializers, emitted first
        self.ops: list[Operation] = []  # everything else, in graph order
        self.values: dict[str, SSAValue] = {}
        self.shapes: dict[str, Shape] = {}
        self.known: dict[str, np.ndarray] = {}  # folded values (initializers are read lazily)
        self.masks: dict[str, SSAValue] = {}  # known conditions as float32 0/1 constants
        self.initializers = {t.name: t for t in self.graph.initializer}
        self.elem_types = {
            vi.name: vi.type.tensor_type.elem_type
            for vi in (*self.graph.input, *self.graph.value_info, *self.graph.output)
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type
        }  # from shape inference: the ONNX element type of (nearly) every value
        self.node_name = ""
        self.node_op = ""
        self.consumed = {n for node in self.graph.node for n in node.input} | {
            vi.name for vi in self.graph.output
        }
        self.opset = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
            _CONVERT_TO_OPSET,
        )
        self.opsets = {o.domain or "": o.version for o in model.opset_import}

    # -- errors --------------------------------------------------------------------------

    def error(self, msg: str) -> T10Error:
        return T10Error(f"ONNX model '{self.model_name}': {msg}")

    def node_error(self, node: onnx.NodeProto, msg: str) -> T10Error:
        return self.error(f"node '{self.node_name}' ({node.op_type}): {msg}")

    # -- value types -----------------------------------------------------------------------

    def static_input_shape(self, vi: onnx.ValueInfoProto, role: str) -> Shape:
        """The static shape of a float32 graph input (or an integer one only cast to FLOAT);
        clear errors otherwise."""
        if not vi.type.HasField("tensor_type"):
            kind = vi.type.WhichOneof("value") or "unknown"
            raise self.error(
                f"{role} '{vi.name}' is not a tensor (its ONNX type is {kind}); "
                "only tensors are supported"
            )
        tt = vi.type.tensor_type
        if tt.elem_type in _INTEGER_INPUT_TYPES:
            self.check_integer_input(vi.name, tt.elem_type)
        elif tt.elem_type != _FLOAT:
            raise self.error(
                f"{role} '{vi.name}' has element type {_dtype_name(tt.elem_type)}; "
                "only float32 (FLOAT) tensors are supported"
            )
        if not tt.HasField("shape"):
            raise self.error(
                f"{role} '{vi.name}' has no shape (unknown rank); the compiler needs static "
                "shapes: re-export the model with static input shapes"
            )
        dims: list[int] = []
        for i, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value") and d.dim_value >= 0:
                dims.append(d.dim_value)
                continue
            if d.HasField("dim_value"):
                raise self.error(
                    f"{role} '{vi.name}' has the negative size {d.dim_value} at axis {i}"
                )
            what = f"symbolic dimension '{d.dim_param}'" if d.dim_param else "an unknown dimension"
            example = ", ".join(
                str(e.dim_value) if e.HasField("dim_value") else f"<{e.dim_param or 'size'}>"
                for e in tt.shape.dim
            )
            raise self.error(
                f"{role} '{vi.name}' has {what} at axis {i}; the compiler needs static shapes: "
                "re-export the model with static shapes, or fix the dimensions with "
                "onnx.tools.update_model_dims.update_inputs_outputs_dims(model, "
                f"{{'{vi.name}': [{example}]}}, {{<outputs>}}) using concrete sizes"
            )
        return tuple(dims)

    def check_integer_input(self, name: str, elem_type: int) -> None:
        """Every use of integer graph input ``name`` must reach a Cast to FLOAT or the indices
        of a Gather, through ``INTEGER_PASSTHROUGH_OPS`` (as their data input); ``Shape``
        reads only its shape."""
        consumers: dict[str, list[tuple[str, onnx.NodeProto]]] = {}
        for index, node in enumerate(self.graph.node):
            for n in node.input:
                consumers.setdefault(n, []).append((node.name or f"{node.op_type}_{index}", node))
        outputs = {vi.name for vi in self.graph.output}
        prefix = f"graph input '{name}' has element type {_dtype_name(elem_type)}"
        fix = (
            "an integer graph input may only be cast to FLOAT (Cast to=FLOAT) or be the "
            "indices of a Gather, directly or through "
            f"{', '.join(sorted(INTEGER_PASSTHROUGH_OPS))}; t10 computes float32 only"
        )
        pending = [name]
        while pending:
            value = pending.pop()
            if value in outputs:
                raise self.error(f"{prefix}; it reaches graph output '{value}': {fix}")
            for node_name, node in consumers.get(value, []):
                is_data = node.input[0] == value
                if node.op_type in INTEGER_PASSTHROUGH_OPS and is_data:
                    pending.extend(o for o in node.output[:1] if o)
                elif (
                    node.op_type == "Shape"
                    or (node.op_type == "Cast" and _attributes(node).get("to") == _FLOAT)
                    or (node.op_type == "Gather" and node.input[1] == value and not is_data)
                ):
                    continue
                else:
                    via = "" if value == name else f" (as '{value}')"
                    raise self.error(
                        f"{prefix}; node '{node_name}' ({node.op_type}) reads it{via}: {fix}"
                    )

    def check_output_type(self, vi: onnx.ValueInfoProto) -> None:
        tt = vi.type.tensor_type
        if vi.type.WhichOneof("value") not in (None, "tensor_type") or tt.elem_type not in (
            0,
            _FLOAT,
        ):
            kind = (
                _dtype_name(tt.elem_type)
                if vi.type.HasField("tensor_type")
                else f"a {vi.type.WhichOneof('value')} value"
            )
            raise self.error(
                f"graph output '{vi.name}' has element type {kind}; "
                "only float32 (FLOAT) tensors are supported"
            )

    def check_output_shape(self, vi: onnx.ValueInfoProto, shape: Shape) -> None:
        """Static dims declared on a graph output must match the computed shape."""
        tt = vi.type.tensor_type
        if not tt.HasField("shape"):
            return
        declared = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if len(declared) != len(shape) or any(
            d is not None and d != s for d, s in zip(declared, shape, strict=False)
        ):
            pretty = [d if d is not None else "?" for d in declared]
            raise self.error(
                f"graph output '{vi.name}' is declared with shape {pretty} "
                f"but computes shape {list(shape)}"
            )

    # -- values ----------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        self.ops.append(op)
        return op

    def define(self, name: str, value: SSAValue, shape: Shape) -> None:
        if 0 in shape and not isinstance(value.owner, arith.ConstantOp):
            raise self.error(
                f"node '{self.node_name}' ({self.node_op}): its result '{name}' would be empty "
                f"(shape {list(shape)}), which this operator's lowering does not produce"
            )
        if value.name_hint is None and (hint := _name_hint(name)):
            value.name_hint = hint
        self.values[name] = value
        self.shapes[name] = shape

    def initializer_array(self, t: onnx.TensorProto) -> np.ndarray:
        shape = tuple(int(d) for d in t.dims)
        if (
            t.data_type == _FLOAT
            and t.raw_data
            and len(t.raw_data) == 4 * int(np.prod(shape, dtype=np.int64))
        ):
            return np.frombuffer(t.raw_data, dtype="<f4").reshape(shape)  # no copy
        try:
            return numpy_helper.to_array(t)
        except Exception as e:
            raise self.error(f"cannot read initializer '{t.name}': {_first_lines(e)}") from None

    def add_constant(self, name: str, arr: np.ndarray, *, hoist: bool) -> SSAValue:
        shape = tuple(int(d) for d in arr.shape)
        op = arith.ConstantOp(_dense(shape, arr))
        (self.constants if hoist else self.ops).append(op)
        self.define(name, op.result, shape)
        return op.result

    # -- known (compile-time) values -------------------------------------------------------

    def is_known(self, name: str) -> bool:
        return name in self.known or name in self.initializers

    def is_empty(self, name: str) -> bool:
        """Whether ``name`` is a known value without elements (an empty value is always
        known: it has nothing to compute)."""
        if name in self.known:
            return self.known[name].size == 0
        return name in self.initializers and 0 in self.initializers[name].dims

    def define_empty(self, name: str, shape: Shape) -> None:
        """Output ``name`` is empty: a known constant of its ONNX element type, computed by
        nothing (its readers fold, or drop it, as for a Concat input)."""
        dtype = onnx.helper.tensor_dtype_to_np_dtype(self.elem_type(name))
        self.known[name] = np.empty(shape, dtype)

    def elem_type(self, name: str) -> int:
        """The ONNX element type of value ``name`` (a known value's, or shape inference's)."""
        if self.is_known(name):
            return onnx.helper.np_dtype_to_tensor_dtype(self.constant(name).dtype)
        return self.elem_types.get(name, _FLOAT)

    def constant(self, name: str) -> np.ndarray:
        """The value of a known name (an initializer, or a folded node's output)."""
        if name not in self.known:
            self.known[name] = self.initializer_array(self.initializers[name])
        return self.known[name]

    def known_input(self, node: onnx.NodeProto, name: str, role: str) -> np.ndarray:
        """An attribute-like input (shape, axes, condition): it must be known."""
        if not self.is_known(name):
            raise self.node_error(
                node,
                f"{role} '{name}' must be a compile-time constant (an initializer, a Constant "
                "node, or computed from those and from shapes): it is computed at run time",
            )
        return self.constant(name)

    def shape_of(self, name: str) -> Shape:
        if self.is_known(name):
            return tuple(int(d) for d in self.constant(name).shape)
        return self.use(name)[1]

    def folds(self, index: int, node: onnx.NodeProto) -> bool:
        """Nodes folded statically (``_foldable_nodes``), and those whose inputs all became
        known during import (empty values)."""
        return index in self.foldable or (
            _may_fold(node) and all(self.is_known(n) for n in node.input if n)
        )

    def fold(self, node: onnx.NodeProto) -> None:
        """Evaluate ``node`` (``onnx_folding.evaluate``); its outputs become known. Only
        ``Shape`` may read a runtime value: it gets a stand-in array of that shape."""
        shapes = [] if node.op_type in BROADCAST_FOLDS else self.inferred_shapes(node)
        for name, shape in zip(node.output, shapes, strict=False):
            if name and shape is not None and prod(shape) > MAX_FOLDED_ELEMENTS:
                raise self.node_error(
                    node,
                    f"all its inputs are compile-time constants, but its result '{name}' "
                    f"would be a constant of shape {list(shape)} ({prod(shape):,} elements), "
                    f"more than t10 builds at compile time ({MAX_FOLDED_ELEMENTS:,})",
                )
        feeds = {
            n: self.constant(n)
            if self.is_known(n)
            else np.broadcast_to(np.float32(0), self.shape_of(n))
            for n in node.input
            if n
        }
        try:
            results = evaluate(node, feeds, self.opsets)
        except Exception as e:
            raise self.node_error(
                node,
                "all its inputs are compile-time constants, but evaluating it at compile time "
                f"failed: {type(e).__name__}: {_first_lines(e, 2)}",
            ) from None
        for name, value in zip(node.output, results, strict=False):
            if name:
                self.known[name] = value

    def fold_empty_results(self, node: onnx.NodeProto) -> bool:
        """A node that reads an empty value and whose results (by ONNX shape inference of the
        node alone, on the shapes and known values of its inputs) are all empty defines them
        as known empty values; returns whether it did."""
        if not any(self.is_empty(n) for n in node.input if n):
            return False
        shapes = self.inferred_shapes(node)
        if any(s is None or 0 not in s for n, s in zip(node.output, shapes, strict=True) if n):
            return False
        for name, shape in zip(node.output, shapes, strict=True):
            if name and shape is not None:
                self.define_empty(name, shape)
        return True

    def inferred_shapes(self, node: onnx.NodeProto) -> list[Shape | None]:
        """The static output shapes of ``node`` alone (None where inference leaves a dim
        unknown): known integer / bool inputs (shapes, axes, indices) as initializers, the
        others as typed graph inputs (shape inference needs no float values)."""
        names = list(dict.fromkeys(n for n in node.input if n))
        valued = [n for n in names if self.is_known(n) and self.constant(n).dtype.kind in "biu"]
        graph = onnx.helper.make_graph(
            [node],
            "node",
            [
                onnx.helper.make_tensor_value_info(n, self.elem_type(n), self.shape_of(n))
                for n in names
                if n not in valued
            ],
            [onnx.helper.make_value_info(o, onnx.TypeProto()) for o in node.output if o],
            [numpy_helper.from_array(self.constant(n), n) for n in valued],
        )
        model = onnx.helper.make_model(graph, opset_imports=self.model.opset_import)
        model.ir_version = self.model.ir_version
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.output
        except Exception as e:
            raise self.node_error(node, f"shape inference failed: {_first_lines(e, 2)}") from None
        shapes = dict(zip((o for o in node.output if o), inferred, strict=True))
        return [_static_shape(shapes[n]) if n else None for n in node.output]

    def use(self, name: str) -> tuple[SSAValue, Shape]:
        """The runtime value named ``name``; a known float32 constant becomes an
        ``arith.constant`` on first use (initializers hoisted); other known values are refused."""
        if name not in self.values:
            if not self.is_known(name):
                raise self.error(f"value '{name}' (used by '{self.node_name}') is not defined")
            arr = self.constant(name)
            if arr.size == 0 and self.node_op:
                raise self.error(
                    f"node '{self.node_name}' ({self.node_op}) computes with the empty value "
                    f"'{name}' (shape {list(arr.shape)}) and its result is not empty; t10 "
                    "computes non-empty tensors only: an empty value may be a Concat input "
                    "(it adds nothing), a graph output, or make its readers' results empty"
                )
            if arr.dtype != np.float32:
                origin = "initializer" if name in self.initializers else "constant"
                user = (
                    "the graph outputs"
                    if self.node_op == ""
                    else f"node '{self.node_name}' ({self.node_op})"
                )
                raise self.error(
                    f"{origin} '{name}' has element type {_np_dtype_name(arr.dtype)} and "
                    f"{user} computes with it; t10 computes float32 (FLOAT) tensors only: a "
                    "non-float constant may only be an attribute-like input (a shape, axes, a "
                    "Where condition) or an input of nodes evaluated at compile time"
                )
            self.add_constant(name, arr, hoist=name in self.initializers)
        return self.values[name], self.shapes[name]

    def known_ints(self, node: onnx.NodeProto, name: str, role: str) -> list[int]:
        """A known integer input (a shape, axes, starts, ...) as a list."""
        return [int(v) for v in self.known_input(node, name, role).reshape(-1)]

    def mask(self, node: onnx.NodeProto, name: str) -> tuple[SSAValue, Shape]:
        """Known condition ``name`` as a float32 0/1 ``arith.constant`` (made once)."""
        cond = self.known_input(node, name, "condition")
        if name not in self.masks:
            one_value = cond.flat[0:1] if _is_broadcast_scalar(cond) else cond
            values = np.broadcast_to(one_value.astype(bool).astype(np.float32), cond.shape)
            op = arith.ConstantOp(_dense(cond.shape, values))
            self.ops.append(op)
            if hint := _name_hint(f"{name}_f32"):
                op.result.name_hint = hint
            self.masks[name] = op.result
        return self.masks[name], tuple(int(d) for d in cond.shape)

    # -- generic builders ------------------------------------------------------------------

    def view(
        self,
        source: SSAValue,
        source_shape: Shape,
        shape: Shape,
        view: AffineMap,
        index: int | None = None,
        padded: bool = False,
    ) -> SSAValue:
        """``result[i] = source[view(i)]`` as an ``rtensor.view`` (no arithmetic); `padded`:
        reads outside the source give 0."""
        properties: dict[str, Attribute] = {
            "label": self.generic_name(index),
            "map": AffineMapAttr(view),
        }
        if padded:
            properties["padded"] = UnitAttr()
        op = rtensor.ViewOp.create(
            operands=[source], result_types=[_tensor_type(shape)], properties=properties
        )
        problem = map_problem(view, source_shape, shape, padded)
        assert problem is None, problem
        self.emit(op)
        return op.results[0]

    def generic_name(self, index: int | None) -> StringAttr:
        return StringAttr(self.node_name if index is None else f"{self.node_name}:{index}")

    def elementwise(
        self,
        inputs: Sequence[tuple[SSAValue, Shape]],
        out_shape: Shape,
        body: BodyFn,
        index: int | None = None,
    ) -> SSAValue:
        rank = len(out_shape)
        if rank == 0:
            raise self.error(
                f"node '{self.node_name}': element-wise ops on rank-0 (scalar) tensors are not "
                "supported; give the values at least one dimension (shape [1])"
            )
        loops = list(range(rank))
        maps = [_map(rank, _broadcast_exprs(s, loops, out_shape)) for _, s in inputs]
        maps.append(_identity_map(rank))
        empty = tensor.EmptyOp([], _tensor_type(out_shape))
        self.emit(empty)
        block = Block(arg_types=[f32] * (len(inputs) + 1))
        result = body(_BodyBuilder(block), block.args[: len(inputs)])
        block.add_op(YieldOp(result))
        op = GenericOp(
            [v for v, _ in inputs],
            [empty.tensor],
            Region(block),
            maps,
            [IteratorTypeAttr.parallel()] * rank,
            [_tensor_type(out_shape)],
        )
        op.attributes[NAME_ATTR] = self.generic_name(index)
        self.emit(op)
        return op.results[0]

    def contraction(
        self,
        a: SSAValue,
        a_exprs: Sequence[AffineExpr],
        b: SSAValue,
        b_exprs: Sequence[AffineExpr],
        out_exprs: Sequence[AffineExpr],
        out_shape: Shape,
        num_parallel: int,
        index: int | None = None,
    ) -> SSAValue:
        """``out[out_exprs] += a[a_exprs] * b[b_exprs]``; the last loop is the reduction."""
        n = num_parallel + 1
        zero = arith.ConstantOp(_splat(out_shape, 0.0))
        self.emit(zero)
        block = Block(arg_types=[f32, f32, f32])
        p = arith.MulfOp(block.args[0], block.args[1])
        s = arith.AddfOp(block.args[2], p.result)
        block.add_ops([p, s, YieldOp(s.result)])
        op = GenericOp(
            [a, b],
            [zero.result],
            Region(block),
            [_map(n, a_exprs), _map(n, b_exprs), _map(n, out_exprs)],
            [IteratorTypeAttr.parallel()] * num_parallel + [IteratorTypeAttr.reduction()],
            [_tensor_type(out_shape)],
        )
        op.attributes[NAME_ATTR] = self.generic_name(index)
        self.emit(op)
        return op.results[0]

    def reduction(
        self,
        inputs: Sequence[tuple[SSAValue, Shape]],
        axes: Sequence[int],
        keepdims: bool,
        combiner: str,
        body: BodyFn = lambda bb, x: x[0],
        index: int | None = None,
    ) -> tuple[SSAValue, Shape]:
        """``out = combine over axes of body(inputs)``, the inputs broadcast (numpy) to one
        shape; one loop per dim of that shape (``axes`` are reduction loops), plus with
        ``keepdims`` a size-1 parallel loop per reduced axis that only the output reads. The
        output starts as a splat of the combiner's identity."""
        shape = _broadcast_shapes(*(s for _, s in inputs))
        assert shape is not None
        rank = len(shape)
        kept = [d for d in range(rank) if d not in axes]
        out_shape = (
            tuple(1 if d in axes else shape[d] for d in range(rank))
            if keepdims
            else (tuple(shape[d] for d in kept))
        )
        if not out_shape:
            raise self.error(
                f"node '{self.node_name}': a reduction to a rank-0 (scalar) tensor is not "
                "supported; keep the reduced dims (keepdims=1)"
            )
        extra = {d: rank + i for i, d in enumerate(axes)} if keepdims else {}
        n = rank + len(extra)
        loops = list(range(rank))
        maps = [_map(n, _broadcast_exprs(s, loops, shape)) for _, s in inputs]
        dim = AffineExpr.dimension
        out_exprs = [dim(extra.get(d, d)) for d in range(rank) if keepdims or d not in axes]
        maps.append(_map(n, out_exprs))
        init = arith.ConstantOp(_splat(out_shape, COMBINER_IDENTITY[combiner]))
        self.emit(init)
        block = Block(arg_types=[f32] * (len(inputs) + 1))
        bb = _BodyBuilder(block)
        value = body(bb, block.args[: len(inputs)])
        combine = {"sum": arith.AddfOp, "max": arith.MaximumfOp, "min": arith.MinimumfOp}
        result = bb._add(combine[combiner](block.args[-1], value))
        block.add_op(YieldOp(result))
        iterators = [
            IteratorTypeAttr.reduction() if d in axes else IteratorTypeAttr.parallel()
            for d in range(rank)
        ] + [IteratorTypeAttr.parallel()] * len(extra)
        op = GenericOp(
            [v for v, _ in inputs],
            [init.result],
            Region(block),
            maps,
            iterators,
            [_tensor_type(out_shape)],
        )
        op.attributes[NAME_ATTR] = self.generic_name(index)
        self.emit(op)
        return op.results[0], out_shape

    # -- driver ----------------------------------------------------------------------------

    def run(self) -> ModuleOp:
        arg_names: list[str] = []
        arg_shapes: list[Shape] = []
        arg_attrs: list[DictionaryAttr] = []
        for vi in self.graph.input:
            if vi.name in self.initializers:
                continue  # an initializer listed as an input is a constant
            arg_names.append(vi.name)
            arg_shapes.append(self.static_input_shape(vi, "graph input"))
            attrs: dict[str, Attribute] = {NAME_ATTR: StringAttr(vi.name)}
            if (onnx_type := _INTEGER_INPUT_TYPES.get(vi.type.tensor_type.elem_type)) is not None:
                attrs[ONNX_TYPE_ATTR] = StringAttr(onnx_type)
            arg_attrs.append(DictionaryAttr(attrs))

        block = Block(arg_types=[_tensor_type(s) for s in arg_shapes])
        for name, arg, shape in zip(arg_names, block.args, arg_shapes, strict=True):
            if 0 in shape:
                self.define_empty(name, shape)  # the argument stays, unread
            else:
                self.define(name, arg, shape)

        for index, node in enumerate(self.graph.node):
            self.node_name = node.name or f"{node.op_type}_{index}"
            self.node_op = node.op_type
            if self.folds(index, node):
                self.fold(node)
                continue
            if self.fold_empty_results(node):
                continue
            _check_attributes(self, node)
            SUPPORTED_OPS[_op_key(node)](self, node)

        results: list[SSAValue] = []
        result_shapes: list[Shape] = []
        self.node_name, self.node_op = "<graph outputs>", ""
        for vi in self.graph.output:
            self.check_output_type(vi)
            value, shape = self.use(vi.name)
            self.check_output_shape(vi, shape)
            results.append(value)
            result_shapes.append(shape)
        self.emit(func.ReturnOp(*results))
        block.add_ops([*self.constants, *self.ops])
        for index, bound in _index_bounds(block).items():
            arg_attrs[index] = DictionaryAttr(
                {**arg_attrs[index].data, INDEX_BOUND_ATTR: IntegerAttr(bound, i64)}
            )

        main = func.FuncOp(
            "main",
            (list(block.arg_types), [_tensor_type(s) for s in result_shapes]),
            Region(block),
            arg_attrs=ArrayAttr(arg_attrs),
            res_attrs=ArrayAttr(
                [DictionaryAttr({NAME_ATTR: StringAttr(vi.name)}) for vi in self.graph.output]
            ),
        )
        module = ModuleOp([main])
        module.verify()
        return module


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


# --------------------------------------------------------------------------------------------
# Operator lowerings
# --------------------------------------------------------------------------------------------


def _inputs(node: onnx.NodeProto) -> list[str]:
    """Node inputs with trailing omitted optional inputs ('') dropped."""
    names = list(node.input)
    while names and names[-1] == "":
        names.pop()
    return names


def _attributes(node: onnx.NodeProto) -> dict[str, Any]:
    """Attribute name → Python value (strings are bytes)."""
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _lower_clip(imp: _Importer, node: onnx.NodeProto) -> None:
    """max(min(x, hi), lo): bounds from the optional inputs (opset 11+) or the min / max
    attributes (older opsets); a missing bound does not clip."""
    names = list(node.input) + [""] * (3 - len(node.input))
    attrs = _attributes(node)
    inputs = [imp.use(names[0])]
    bounds: list[tuple[str, int | float]] = []  # (combine, input slot or constant)
    for combine, name, attr in (("max", names[1], "min"), ("min", names[2], "max")):
        if name:
            bounds.append((combine, len(inputs)))
            inputs.append(imp.use(name))
        elif attr in attrs:
            bounds.append((combine, float(attrs[attr])))
    out_shape = _broadcast_shapes(*(s for _, s in inputs))
    if out_shape is None or out_shape != inputs[0][1]:
        raise imp.node_error(node, "min and max must be scalars broadcast to the input")

    def body(bb: _BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
        value = x[0]
        for combine, bound in bounds:
            limit = x[bound] if isinstance(bound, int) else bb.const(bound)
            value = bb.max(value, limit) if combine == "max" else bb.min(value, limit)
        return value

    imp.define(node.output[0], imp.elementwise(inputs, out_shape, body), out_shape)


def _lower_elementwise(imp: _Importer, node: onnx.NodeProto) -> None:
    """An op of ``_ELEMENTWISE_BODIES`` or Gelu: one generic over the broadcast input shape."""
    inputs = [imp.use(n) for n in node.input]
    out_shape = _broadcast_shapes(*(s for _, s in inputs))
    if out_shape is None:
        shapes = " and ".join(str(list(s)) for _, s in inputs)
        raise imp.node_error(node, f"input shapes {shapes} are not broadcast-compatible")
    body = _elementwise_body(imp, node)
    imp.define(node.output[0], imp.elementwise(inputs, out_shape, body), out_shape)


def _elementwise_body(imp: _Importer, node: onnx.NodeProto) -> BodyFn:
    if node.op_type != "Gelu":
        return _ELEMENTWISE_BODIES[node.op_type]
    approximate = _attributes(node).get("approximate", b"none")
    if approximate not in _GELU_BODIES:
        raise imp.node_error(
            node,
            f"approximate={approximate.decode(errors='replace')!r} is not a Gelu approximation "
            f"(supported: {', '.join(a.decode() for a in _GELU_BODIES)})",
        )
    return _GELU_BODIES[approximate]


def _sigmoid(bb: _BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    """1 / (1 + exp(-x))."""
    one = bb.const(1.0)
    return bb.div(one, bb.add(one, bb.exp(bb.neg(x[0]))))


def _gelu(bb: _BodyBuilder, x: SSAValue, phi: SSAValue) -> SSAValue:
    """0.5 · x · (1 + phi), phi the (approximated) erf(x / √2)."""
    return bb.mul(bb.mul(bb.const(0.5), x), bb.add(bb.const(1.0), phi))


def _gelu_erf(bb: _BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    """0.5 · x · (1 + erf(x / √2))."""
    return _gelu(bb, x[0], bb.erf(bb.mul(x[0], bb.const(_SQRT_HALF))))


def _gelu_tanh(bb: _BodyBuilder, x: Sequence[SSAValue]) -> SSAValue:
    """0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))."""
    cube = bb.mul(x[0], bb.mul(x[0], x[0]))
    inner = bb.add(x[0], bb.mul(bb.const(0.044715), cube))
    return _gelu(bb, x[0], bb.tanh(bb.mul(bb.const(_SQRT_2_OVER_PI), inner)))


_SQRT_HALF = 0.7071067811865476
_SQRT_2_OVER_PI = 0.7978845608028654

_ELEMENTWISE_BODIES: dict[str, BodyFn] = {
    "Add": lambda bb, x: bb.add(x[0], x[1]),
    "Sub": lambda bb, x: bb.sub(x[0], x[1]),
    "Mul": lambda bb, x: bb.mul(x[0], x[1]),
    "Div": lambda bb, x: bb.div(x[0], x[1]),
    "Pow": lambda bb, x: bb.pow(x[0], x[1]),
    "Neg": lambda bb, x: bb.neg(x[0]),
    "Reciprocal": lambda bb, x: bb.div(bb.const(1.0), x[0]),
    "Relu": lambda bb, x: bb.max(x[0], bb.const(0.0)),
    "Sqrt": lambda bb, x: bb.sqrt(x[0]),
    "Exp": lambda bb, x: bb.exp(x[0]),
    "Tanh": lambda bb, x: bb.tanh(x[0]),
    "Erf": lambda bb, x: bb.erf(x[0]),
    "Sigmoid": _sigmoid,
    "Abs": lambda bb, x: bb.abs(x[0]),
    "Log": lambda bb, x: bb.log(x[0]),
    "Max": lambda bb, x: functools.reduce(bb.max, x),
    "Min": lambda bb, x: functools.reduce(bb.min, x),
}
"""op_type → the scalar body of its element-wise generic (Gelu: ``_GELU_BODIES``)."""

_GELU_BODIES: dict[bytes, BodyFn] = {b"none": _gelu_erf, b"tanh": _gelu_tanh}
"""Gelu's ``approximate`` attribute → body."""


def _lower_matmul(imp: _Importer, node: onnx.NodeProto) -> None:
    """numpy.matmul semantics: N-D batched with batch broadcasting, 1-D operands promoted."""
    (a, sa), (b, sb) = (imp.use(n) for n in node.input)
    if not sa or not sb:
        raise imp.node_error(node, "MatMul operands must have rank >= 1")
    has_m, has_n = len(sa) >= 2, len(sb) >= 2
    k = sa[-1]
    k_b = sb[-2] if has_n else sb[0]
    if k != k_b:
        raise imp.node_error(
            node, f"contraction sizes differ: {list(sa)} @ {list(sb)} ({k} vs {k_b})"
        )
    batch_a, batch_b = sa[:-2], sb[:-2]
    batch = _broadcast_shapes(batch_a, batch_b)
    if batch is None:
        raise imp.node_error(
            node, f"batch dims of {list(sa)} @ {list(sb)} are not broadcast-compatible"
        )
    nb = len(batch)
    # Loop order: batch..., m?, n?, k (reduction last).
    batch_loops = list(range(nb))
    d_m = nb if has_m else None
    d_n = nb + int(has_m) if has_n else None
    d_k = nb + int(has_m) + int(has_n)
    dim = AffineExpr.dimension

    a_exprs = _broadcast_exprs(batch_a, batch_loops, batch)
    if d_m is not None:
        a_exprs.append(dim(d_m))
    a_exprs.append(dim(d_k))
    b_exprs = _broadcast_exprs(batch_b, batch_loops, batch)
    b_exprs.append(dim(d_k))
    if d_n is not None:
        b_exprs.append(dim(d_n))

    out_exprs = [dim(d) for d in batch_loops]
    out_shape = list(batch)
    if d_m is not None:
        out_exprs.append(dim(d_m))
        out_shape.append(sa[-2])
    if d_n is not None:
        out_exprs.append(dim(d_n))
        out_shape.append(sb[-1])
    result = imp.contraction(a, a_exprs, b, b_exprs, out_exprs, tuple(out_shape), d_k)
    imp.define(node.output[0], result, tuple(out_shape))


def _lower_gemm(imp: _Importer, node: onnx.NodeProto) -> None:
    attrs = _attributes(node)
    alpha = float(attrs.get("alpha", 1.0))
    beta = float(attrs.get("beta", 1.0))
    for key, value in (("alpha", alpha), ("beta", beta)):
        if not np.isfinite(value):
            raise imp.node_error(
                node,
                f"{key} = {value} is not finite: the product of an infinite scale depends on "
                "where it is applied (t10 scales A·B, onnxruntime each term of its sum), so "
                "the result is not defined",
            )
    trans_a = bool(attrs.get("transA", 0))
    trans_b = bool(attrs.get("transB", 0))
    names = _inputs(node)
    (a, sa), (b, sb) = imp.use(names[0]), imp.use(names[1])
    if len(sa) != 2 or len(sb) != 2:
        raise imp.node_error(node, f"Gemm operands must be 2-D, got {list(sa)} and {list(sb)}")
    m, k = (sa[1], sa[0]) if trans_a else sa
    k_b, n = (sb[1], sb[0]) if trans_b else sb
    if k != k_b:
        raise imp.node_error(
            node,
            f"contraction sizes differ: A{list(sa)} (transA={int(trans_a)}) and "
            f"B{list(sb)} (transB={int(trans_b)}) ({k} vs {k_b})",
        )
    out_shape = (m, n)
    dim = AffineExpr.dimension
    d_m, d_n, d_k = dim(0), dim(1), dim(2)
    a_exprs = [d_k, d_m] if trans_a else [d_m, d_k]
    b_exprs = [d_n, d_k] if trans_b else [d_k, d_n]

    c: tuple[SSAValue, Shape] | None = None
    if len(names) > 2 and beta != 0.0:
        c = imp.use(names[2])
        if _broadcast_shapes(c[1], out_shape) != out_shape:
            raise imp.node_error(
                node,
                f"bias C of shape {list(c[1])} is not unidirectionally broadcastable to "
                f"{list(out_shape)}",
            )
    needs_epilogue = alpha != 1.0 or c is not None
    product = imp.contraction(
        a, a_exprs, b, b_exprs, [d_m, d_n], out_shape, 2, 0 if needs_epilogue else None
    )
    if not needs_epilogue:
        imp.define(node.output[0], product, out_shape)
        return

    def body(bb: _BodyBuilder, args: Sequence[SSAValue]) -> SSAValue:
        p = args[0] if alpha == 1.0 else bb.mul(bb.const(alpha), args[0])
        if len(args) == 1:
            return p
        cv = args[1] if beta == 1.0 else bb.mul(bb.const(beta), args[1])
        return bb.add(p, cv)

    ins = [(product, out_shape)] + ([c] if c is not None else [])
    imp.define(node.output[0], imp.elementwise(ins, out_shape, body, index=1), out_shape)


def _lower_identity(imp: _Importer, node: onnx.NodeProto) -> None:
    value, shape = imp.use(node.input[0])
    imp.values[node.output[0]] = value
    imp.shapes[node.output[0]] = shape


def _lower_dropout(imp: _Importer, node: onnx.NodeProto) -> None:
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
    _lower_identity(imp, node)


def _is_constant_false(imp: _Importer, name: str) -> bool:
    return imp.is_known(name) and not imp.constant(name).any()


def _lower_cast(imp: _Importer, node: onnx.NodeProto) -> None:
    """Cast to FLOAT of a runtime value (float32, or an integer graph input already held as
    its exact float32) is the identity; any other target is refused. Casts of known values
    are folded."""
    to = int(_attributes(node)["to"])
    if to != _FLOAT:
        raise imp.node_error(
            node,
            f"Cast from FLOAT to {_dtype_name(to)} is not supported: the compiler computes in "
            "float32 only (Cast from FLOAT to FLOAT is an identity)",
        )
    _lower_identity(imp, node)


def _lower_where(imp: _Importer, node: onnx.NodeProto) -> None:
    """``select(c != 0, x, y)`` with the known condition as a float32 0/1 input, all three
    broadcast (numpy)."""
    cond, x, y = node.input
    if not imp.is_known(cond):
        raise imp.node_error(
            node,
            f"the condition '{cond}' is computed at run time; t10 supports Where only with a "
            "compile-time constant condition (e.g. a causal mask built from shapes)",
        )
    inputs = [imp.mask(node, cond), imp.use(x), imp.use(y)]
    out_shape = _broadcast_shapes(*(s for _, s in inputs))
    if out_shape is None:
        shapes = ", ".join(str(list(s)) for _, s in inputs)
        raise imp.node_error(node, f"input shapes {shapes} are not broadcast-compatible")

    def body(bb: _BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        return bb.select(bb.cmpf_one(v[0], bb.const(0.0)), v[1], v[2])

    imp.define(node.output[0], imp.elementwise(inputs, out_shape, body), out_shape)


def _lower_expand(imp: _Importer, node: onnx.NodeProto) -> None:
    """Broadcast (numpy) the input to the known shape: an identity generic."""
    x = imp.use(node.input[0])
    target = tuple(int(d) for d in imp.known_input(node, node.input[1], "shape").reshape(-1))
    out_shape = _broadcast_shapes(x[1], target)
    if out_shape is None:
        raise imp.node_error(
            node, f"input shape {list(x[1])} does not broadcast to shape {list(target)}"
        )
    if out_shape == x[1]:
        _lower_identity(imp, node)
        return
    if 0 in out_shape:
        imp.define_empty(node.output[0], out_shape)
        return
    imp.define(node.output[0], imp.elementwise([x], out_shape, lambda bb, v: v[0]), out_shape)


def _lower_fold_only(imp: _Importer, node: onnx.NodeProto) -> None:
    """The ops that only compute constants (shape arithmetic, masks): reached only when an
    input is a runtime value."""
    runtime = [n for n in node.input if n and not imp.is_known(n)]
    raise imp.node_error(
        node,
        f"the result needs a runtime value, which t10 does not compute: input '{runtime[0]}' "
        f"is computed at run time, and t10 evaluates {node.op_type} only at compile time "
        "(all inputs initializers, Constant nodes, shapes or values computed from those)",
    )


def _axis(imp: _Importer, node: onnx.NodeProto, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise imp.node_error(node, f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def _reduce_axes(imp: _Importer, node: onnx.NodeProto, rank: int) -> list[int]:
    """The sorted axes a Reduce* node reduces (the `axes` attribute, or the known `axes`
    input of the newer opsets); no axes: all, unless noop_with_empty_axes."""
    attrs = _attributes(node)
    names = _inputs(node)
    if len(names) > 1:
        axes = [int(a) for a in imp.known_input(node, names[1], "axes").reshape(-1)]
    else:
        axes = [int(a) for a in attrs.get("axes", [])]
    if not axes:
        return [] if attrs.get("noop_with_empty_axes", 0) else list(range(rank))
    result = sorted({_axis(imp, node, a, rank) for a in axes})
    if len(result) != len(axes):
        raise imp.node_error(node, f"axes {axes} repeat an axis")
    return result


_REDUCE_COMBINERS = {"ReduceSum": "sum", "ReduceMean": "sum", "ReduceMax": "max"}


def _lower_reduce(imp: _Importer, node: onnx.NodeProto) -> None:
    """ReduceSum / ReduceMax: one reduction generic; ReduceMean: a sum, then a scale."""
    x = imp.use(node.input[0])
    axes = _reduce_axes(imp, node, len(x[1]))
    if not axes:
        _lower_identity(imp, node)
        return
    keepdims = bool(_attributes(node).get("keepdims", 1))
    combiner = _REDUCE_COMBINERS[node.op_type]
    if node.op_type != "ReduceMean":
        value, shape = imp.reduction([x], axes, keepdims, combiner)
        imp.define(node.output[0], value, shape)
        return
    total, shape = imp.reduction([x], axes, keepdims, combiner, index=0)
    scale = 1.0 / int(np.prod([x[1][a] for a in axes]))
    mean = imp.elementwise([(total, shape)], shape, lambda bb, v: bb.mul(v[0], bb.const(scale)), 1)
    imp.define(node.output[0], mean, shape)


def _lower_softmax(imp: _Importer, node: onnx.NodeProto) -> None:
    """max-reduce → exp(x - max) → sum-reduce → div, each a generic (opset 13+ semantics:
    along one axis)."""
    if imp.opset < 13:
        raise imp.node_error(
            node,
            f"Softmax of opset {imp.opset} (2-D coercion) is not supported; convert the model "
            "with onnx.version_converter.convert_version(model, 13)",
        )
    x = imp.use(node.input[0])
    shape = x[1]
    axis = _axis(imp, node, int(_attributes(node).get("axis", -1)), len(shape))
    top = imp.reduction([x], [axis], True, "max", index=0)
    e = imp.elementwise([x, top], shape, lambda bb, v: bb.exp(bb.sub(v[0], v[1])), 1)
    total = imp.reduction([(e, shape)], [axis], True, "sum", index=2)
    y = imp.elementwise([(e, shape), total], shape, lambda bb, v: bb.div(v[0], v[1]), 3)
    imp.define(node.output[0], y, shape)


def _lower_layer_norm(imp: _Importer, node: onnx.NodeProto) -> None:
    """Normalise over the dims from `axis` on: mean (sum, scale) → x - mean → square-mean (sum
    of squares, scale, + epsilon, sqrt) → divide → · scale + bias."""
    names = _inputs(node)
    attrs = _attributes(node)
    x = imp.use(names[0])
    shape = x[1]
    axis = _axis(imp, node, int(attrs.get("axis", -1)), len(shape))
    eps = float(attrs.get("epsilon", 1e-5))
    if not (np.isfinite(eps) and eps >= 0):
        raise imp.node_error(
            node,
            f"epsilon = {eps} must be finite and >= 0: with a negative one the result is NaN "
            "or ill-conditioned wherever the variance is near -epsilon",
        )
    axes = list(range(axis, len(shape)))
    scale = 1.0 / int(np.prod(shape[axis:]))
    total, rshape = imp.reduction([x], axes, True, "sum", index=0)
    mean = imp.elementwise(
        [(total, rshape)], rshape, lambda bb, v: bb.mul(v[0], bb.const(scale)), 1
    )
    d = imp.elementwise([x, (mean, rshape)], shape, lambda bb, v: bb.sub(v[0], v[1]), 2)
    squares, _ = imp.reduction(
        [(d, shape)], axes, True, "sum", lambda bb, v: bb.mul(v[0], v[0]), index=3
    )
    std = imp.elementwise(
        [(squares, rshape)],
        rshape,
        lambda bb, v: bb.sqrt(bb.add(bb.mul(v[0], bb.const(scale)), bb.const(eps))),
        4,
    )
    operands = [(d, shape), (std, rshape), *(imp.use(n) for n in names[1:3])]
    if _broadcast_shapes(*(s for _, s in operands)) != shape:
        raise imp.node_error(node, "Scale and B must broadcast to the shape of X")

    def affine(bb: _BodyBuilder, v: Sequence[SSAValue]) -> SSAValue:
        y = bb.div(v[0], v[1])
        if len(v) > 2:
            y = bb.mul(y, v[2])
        return bb.add(y, v[3]) if len(v) > 3 else y

    imp.define(node.output[0], imp.elementwise(operands, shape, affine, 5), shape)
    outputs = list(node.output) + ["", ""]
    if outputs[1]:
        imp.define(outputs[1], mean, rshape)
    if outputs[2]:
        inv = imp.elementwise([(std, rshape)], rshape, lambda bb, v: bb.div(bb.const(1.0), v[0]), 6)
        imp.define(outputs[2], inv, rshape)


MAX_FOLDED_ELEMENTS = 2**28
"""The largest constant static folding builds on the host (1 GiB of float32): the size is
checked, by shape inference of the node, before any memory is taken."""

FOLD_ONLY_OPS = frozenset({"Constant", "ConstantOfShape", "Equal", "Range", "Shape"})
"""Ops supported only when evaluated at compile time (see ``_foldable_nodes``)."""

SUPPORTED_OPS: dict[str, Callable[[_Importer, onnx.NodeProto], None]] = {
    **dict.fromkeys(_REDUCE_COMBINERS, _lower_reduce),
    "LayerNormalization": _lower_layer_norm,
    "Softmax": _lower_softmax,
    **dict.fromkeys(_ELEMENTWISE_BODIES, _lower_elementwise),
    **dict.fromkeys(FOLD_ONLY_OPS, _lower_fold_only),
    "Cast": _lower_cast,
    "Clip": _lower_clip,
    **CONV_OPS,
    "Dropout": _lower_dropout,
    "Expand": _lower_expand,
    "Gelu": _lower_elementwise,
    "Gemm": _lower_gemm,
    "Identity": _lower_identity,
    "MatMul": _lower_matmul,
    **VIEW_OPS,
    "Where": _lower_where,
}
"""op_type → lowering function (nodes evaluated at compile time need none)."""

_ALLOWED_ATTRIBUTES: dict[str, frozenset[str]] = {
    "Cast": frozenset({"to", "saturate", "round_mode"}),  # saturate/rounding: no-ops f32 → f32
    **CONV_ATTRIBUTES,
    "Dropout": frozenset({"seed", "ratio"}),  # no-ops in inference
    "Gelu": frozenset({"approximate"}),
    "Clip": frozenset({"min", "max"}),  # opsets 1-6 bounds
    "Gemm": frozenset({"alpha", "beta", "transA", "transB"}),
    **dict.fromkeys(_REDUCE_COMBINERS, frozenset({"axes", "keepdims", "noop_with_empty_axes"})),
    **VIEW_ATTRIBUTES,
    "Softmax": frozenset({"axis"}),
    "LayerNormalization": frozenset({"axis", "epsilon", "stash_type"}),  # stash: f32 anyway
}


def _check_attributes(imp: _Importer, node: onnx.NodeProto) -> None:
    if node.op_type in FOLD_ONLY_OPS:
        return  # refused by _lower_fold_only, whatever its attributes
    allowed = _ALLOWED_ATTRIBUTES.get(node.op_type, frozenset())
    bad = sorted(a.name for a in node.attribute if a.name not in allowed)
    if bad:
        hint = f"supported: {', '.join(sorted(allowed))}" if allowed else "it takes none"
        raise imp.node_error(
            node, f"unsupported attribute(s) {', '.join(bad)} on {node.op_type} ({hint})"
        )
