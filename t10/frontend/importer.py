"""The importer's state and its interface for op lowerings, and the op registry.

An op lowering is a function ``lower(imp: Importer, node: onnx.NodeProto) -> None`` registered
with ``@lowering("OpType", attributes=...)``. It reads its inputs with ``imp.use(name)`` (a
runtime value and its shape) or ``imp.known_input`` / ``imp.known_ints`` (compile-time
constants: shapes, axes), builds ops with ``imp.elementwise``, ``imp.reduction``,
``imp.contraction`` and ``imp.view`` (scalar bodies through a ``BodyBuilder``), or
``imp.emit`` for any other op, and names each result with ``imp.define(name, value, shape)``.
Errors are ``imp.node_error(node, message)``. An op that may compute on runtime integers is
registered with ``integers=rule``, its ``RangeRule`` (``integer_ranges``), which reads its
inputs' proven ranges with ``imp.range_of(name)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float32Type,
    FloatAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common import shapes_only
from t10.common.attr_names import IDS_ATTR, NAME_ATTR
from t10.common.tensor_expr import COMBINER_IDENTITY, EXACT_F16, EXACT_F32
from t10.common.view_maps import map_problem
from t10.errors import T10Error
from t10.frontend.folding import (
    BROADCAST_FOLDS,
    MAX_FOLDED_ELEMENTS,
    evaluate,
    may_fold,
    reads_values,
)
from t10.frontend.integer_ranges import BOOL, Interval, Range, Ranges, Unknown
from t10.frontend.loading import CONVERT_TO_OPSET, first_lines
from t10.t10_dialects import rtensor
from t10.t10_dialects.printing import ELIDED

__all__ = [
    "FLOAT",
    "FLOAT16",
    "FLOAT_TYPES",
    "SUPPORTED_OPS",
    "BodyBuilder",
    "BodyFn",
    "Importer",
    "Lowering",
    "OpLowering",
    "RangeRule",
    "Shape",
    "broadcast_exprs",
    "broadcast_shapes",
    "checked_axes",
    "computed_outputs",
    "dtype_name",
    "INTEGER_TYPES",
    "integer_ops",
    "last_axis_vector",
    "lowering",
    "node_attributes",
    "node_inputs",
    "op_key",
    "schema_inputs",
]

Shape = tuple[int, ...]
BodyFn = Callable[["BodyBuilder", Sequence[SSAValue]], SSAValue]
Lowering = Callable[["Importer", onnx.NodeProto], None]
RangeRule = Callable[["Importer", onnx.NodeProto], Ranges]
"""An op's rule of the integer range analysis (``integer_ranges``): what it proves of a node."""

FLOAT = onnx.TensorProto.FLOAT
FLOAT16 = onnx.TensorProto.FLOAT16
FLOAT_TYPES = (FLOAT, FLOAT16)
"""The float element types a value may have: a FLOAT16 one is held as float32 too (known ones
widened exactly where compute reads them; computed ones rounded by fp16 storage, at which
alone a model computing them compiles: ``Importer.fp16_values``)."""

INTEGER_TYPES: dict[int, str] = {
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.UINT16: "uint16",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.BOOL: "bool",
}
"""The integer element types a runtime value may have (ONNX type → ``t10.onnx_type``): it is
held as the exact float32 of each integer; the ops registered with a range rule keep it exact
(``integer_ranges``; docs/DESIGN.md, "Frontend output contract")."""


# --------------------------------------------------------------------------------------------
# The op registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpLowering:
    lower: Lowering
    attributes: frozenset[str] | None
    """The attributes the op may carry (others are refused naming the node); None: any (the
    lowering refuses the node whatever its attributes)."""
    integers: RangeRule | None
    """How the op maps the proven ranges of runtime integer and bool values
    (``integer_ranges``); None: it may not read or produce them."""


SUPPORTED_OPS: dict[str, OpLowering] = {}
"""``op_key`` → its lowering (nodes evaluated at compile time need none); filled by the
``ops_*`` modules, which the package imports."""


def op_key(op_type: str, domain: str = "") -> str:
    """The registry key of an operator: its type, prefixed by its domain outside the default
    one (``com.microsoft.FastGelu``)."""
    return op_type if domain in ("", "ai.onnx") else f"{domain}.{op_type}"


def lowering(
    *op_types: str,
    attributes: Iterable[str] | None = (),
    integers: RangeRule | None = None,
    domain: str = "",
) -> Callable[[Lowering], Lowering]:
    """Register the decorated function as the lowering of ``op_types`` of ``domain`` (default:
    ONNX's); ``integers``: its range rule, if it may compute on runtime integers
    (``integer_ranges``)."""

    def register(lower: Lowering) -> Lowering:
        accepted = None if attributes is None else frozenset(attributes)
        for key in (op_key(op_type, domain) for op_type in op_types):
            assert key not in SUPPORTED_OPS, f"{key} has two lowerings"
            SUPPORTED_OPS[key] = OpLowering(lower, accepted, integers)
        return lower

    return register


def integer_ops() -> frozenset[str]:
    """The ops that may compute on runtime integer / bool values."""
    return frozenset(op for op, entry in SUPPORTED_OPS.items() if entry.integers is not None)


# --------------------------------------------------------------------------------------------
# Node, type and shape helpers for lowerings
# --------------------------------------------------------------------------------------------


def node_inputs(node: onnx.NodeProto) -> list[str]:
    """Node inputs with trailing omitted optional inputs ('') dropped."""
    names = list(node.input)
    while names and names[-1] == "":
        names.pop()
    return names


def node_attributes(node: onnx.NodeProto) -> dict[str, Any]:
    """Attribute name → Python value (strings are bytes)."""
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def schema_inputs(
    imp: Importer, node: onnx.NodeProto, required: Sequence[str], optional: Sequence[str] = ()
) -> list[str]:
    """The input names of ``node``, one per input its operator's schema lists (its
    ``required`` ones, then its ``optional`` ones: '' where omitted). No ONNX schema checks an
    operator outside ONNX's domain (onnxruntime's contrib ops): a node missing a required
    input, or with more inputs than the schema lists, is refused here."""
    names = list(node.input)
    formals = [*required, *optional]
    if len(names) > len(formals):
        raise imp.node_error(
            node, f"it has {len(names)} inputs; {node.op_type} takes at most {len(formals)} "
            f"({', '.join(formals)}): remove the others"
        )
    names += [""] * (len(formals) - len(names))
    if missing := [role for role, name in zip(required, names, strict=False) if not name]:
        raise imp.node_error(
            node, f"its required input(s) {', '.join(missing)} are missing: give the node "
            f"its inputs {', '.join(required)}"
        )
    return names


def computed_outputs(
    imp: Importer, node: onnx.NodeProto, formals: Sequence[str], computed: Iterable[int]
) -> list[str]:
    """The output names of ``node``, one per output its operator's schema lists (``formals``:
    '' where not requested); a node with more outputs, or requesting one t10 does not compute
    (not in ``computed``: onnxruntime's contrib ops save statistics for training), is refused,
    naming them."""
    names = list(node.output)
    if len(names) > len(formals):
        raise imp.node_error(
            node, f"it has {len(names)} outputs; {node.op_type} has at most {len(formals)} "
            f"({', '.join(formals)}): remove the others"
        )
    names += [""] * (len(formals) - len(names))
    kept = set(computed)
    if refused := [f"{formals[i]} ('{n}')" for i, n in enumerate(names) if n and i not in kept]:
        raise imp.node_error(
            node, f"it requests its output(s) {', '.join(refused)}, which t10 does not compute "
            f"(it computes {', '.join(formals[i] for i in sorted(kept))}): leave them out "
            "of the node (give '' as their names); inference does not read them"
        )
    return names


def last_axis_vector(
    imp: Importer, node: onnx.NodeProto, name: str, role: str, shape: Shape
) -> tuple[SSAValue, Shape]:
    """Input ``name`` (``node``'s ``role``), one value per index of the last axis of
    ``shape``: a 1-D tensor of that length, as onnxruntime's contrib kernels require (a
    bias, a gamma)."""
    value, given = imp.use(name)
    if given != shape[-1:]:
        raise imp.node_error(
            node, f"{role} '{name}' has shape {list(given)}; it must hold one value per "
            f"index of the last axis of the input (shape {list(shape)}): shape {list(shape[-1:])}"
        )
    return value, given


def checked_axes(imp: Importer, node: onnx.NodeProto, axes: Sequence[int], rank: int) -> list[int]:
    """``axes`` of a rank-``rank`` tensor made non-negative; each must be in range, none
    repeated."""
    result = []
    for a in axes:
        if not -rank <= a < rank:
            raise imp.node_error(node, f"axis {a} is out of range for rank {rank}")
        result.append(a % rank)
    if len(set(result)) != len(result):
        raise imp.node_error(node, f"axes {list(axes)} repeat an axis")
    return result


MAX_ELEMENTS = 2**63 - 1
"""The most elements a value may have: onnxruntime and numpy count them in int64."""

_SHAPE_FLOATS = 64
"""Known float inputs up to this many elements are given to shape inference by value: the
scales a Resize's output shape follows from have one per dim."""


def _static_shape(vi: onnx.ValueInfoProto) -> Shape | None:
    """The shape of a tensor value info if every dim is a number, else None."""
    tt = vi.type.tensor_type
    if not tt.HasField("shape") or not all(d.HasField("dim_value") for d in tt.shape.dim):
        return None
    return tuple(int(d.dim_value) for d in tt.shape.dim)


def _np_dtype_name(dtype: np.dtype) -> str:
    """The ONNX name of a numpy dtype (``int64`` → ``INT64``)."""
    try:
        return dtype_name(onnx.helper.np_dtype_to_tensor_dtype(dtype))
    except (KeyError, ValueError, TypeError):
        return str(dtype)


def dtype_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"<data type {elem_type}>"


# --------------------------------------------------------------------------------------------
# Shape and affine-map helpers
# --------------------------------------------------------------------------------------------


def broadcast_shapes(*shapes: Shape) -> Shape | None:
    """Numpy multidirectional broadcasting; None when the shapes are incompatible. In Python
    integers: numpy refuses a result of more than 2**63 - 1 elements as it refuses
    incompatible shapes, which ``Importer.define`` refuses as too large instead."""
    rank = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    result: list[int] = []
    for sizes in zip(*padded, strict=True):
        kinds = set(sizes) - {1}
        if len(kinds) > 1:
            return None
        result.append(kinds.pop() if kinds else 1)
    return tuple(result)


def broadcast_exprs(in_shape: Shape, out_dims: Sequence[int], out_sizes: Shape) -> list[AffineExpr]:
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


def _tensor_type(shape: Shape) -> TensorType[Float32Type]:
    return TensorType(f32, shape)


def _dense(shape: Shape, arr: np.ndarray) -> DenseIntOrFPElementsAttr:
    """``arr`` as float32; a broadcast of one value (a folded ConstantOfShape) as a splat."""
    if _is_broadcast_scalar(arr):
        return _splat(shape, arr.flat[0])
    owner = arr.base
    while isinstance(owner, np.ndarray):
        owner = owner.base
    whole = arr.dtype == "<f4" and arr.flags.c_contiguous
    if isinstance(owner, bytes) and whole and arr.nbytes == len(owner):
        data = owner  # an initializer's raw data, read as is: no copy of a model's weights
    else:
        data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
    return DenseIntOrFPElementsAttr(_tensor_type(shape), BytesAttr(data))


def _is_broadcast_scalar(arr: np.ndarray) -> bool:
    """Whether ``arr`` is one value broadcast (every stride 0) to more than one element."""
    return arr.size > 1 and not any(arr.strides)


def _splat(shape: Shape, value: float) -> DenseIntOrFPElementsAttr:
    """A float32 constant of ``shape`` whose every element is ``value``, stored as that one
    value (its size is checked by the plan search, not allocated here)."""
    return DenseIntOrFPElementsAttr(_tensor_type(shape), BytesAttr(np.float32(value).tobytes()))


class BodyBuilder:
    """Collects the scalar ``arith`` / ``math`` ops of a generic's body: each method adds one
    op to the block and returns its result."""

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

    def cos(self, a: SSAValue) -> SSAValue:
        return self._add(math.CosOp(a))

    def sin(self, a: SSAValue) -> SSAValue:
        return self._add(math.SinOp(a))

    def floor(self, a: SSAValue) -> SSAValue:
        return self._add(math.FloorOp(a))

    def ceil(self, a: SSAValue) -> SSAValue:
        return self._add(math.CeilOp(a))

    def trunc(self, a: SSAValue) -> SSAValue:
        return self._add(math.TruncOp(a))

    def unary(self, op: Callable[[SSAValue], Operation], a: SSAValue) -> SSAValue:
        """A one-operand ``math`` op (``math.TanOp``, ``math.RoundEvenOp``, ...); the element-wise
        bodies may use those of ``tensor_expr.ELEMENTWISE_BODY_OPS``."""
        return self._add(op(a))

    def cmpf(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """``arith.cmpf`` with ``predicate`` (``oeq``, ``olt``, ``une``, ...), an ``i1``."""
        return self._add(arith.CmpfOp(a, b, predicate))

    def cmpf_one(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """``a != b`` (ordered: false when either is NaN), an ``i1``."""
        return self.cmpf("one", a, b)

    def flag(self, c: SSAValue) -> SSAValue:
        """The ``i1`` ``c`` as a float 0 / 1."""
        return self.select(c, self.const(1.0), self.const(0.0))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._add(arith.SelectOp(c, a, b))


# --------------------------------------------------------------------------------------------
# The importer
# --------------------------------------------------------------------------------------------


class Importer:
    """The state of one import: the values defined so far (runtime SSA values with their
    shapes, and known compile-time arrays) and the ops built, in graph order.

    What a lowering uses: ``use``, ``known_input``, ``known_ints``, ``is_known``,
    ``is_empty``, ``constant``, ``shape_of`` and ``mask`` to read inputs; ``elementwise``,
    ``reduction``, ``contraction``, ``view``, ``add_constant`` and ``emit`` to build;
    ``define``, ``define_empty`` and ``pass_through`` to name results; ``node_error`` to
    refuse a node; ``opset`` (of the default domain) and ``consumed`` (the value names some
    node or graph output reads).

    The weights of a model in the shapes-only form (``t10.common.shapes_only``) are known
    but have no values: ``elided`` holds their shapes, and those of what folding computes
    from them; ``use`` makes each an elided constant (``dense_resource<__elided__>``), and
    ``constant`` refuses them: nothing at compile time may read their values."""

    def __init__(
        self,
        model: onnx.ModelProto,
        model_name: str,
        foldable: set[int],
        initializers: Iterable[onnx.TensorProto] | None = None,
    ) -> None:
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
        self.fp16_inexact: str | None = None  # integers fp16 storage would round
        self.fp16_values: str | None = None  # the first FLOAT16 value computed at run time
        self.ranges: dict[str, Range] = {}  # runtime integer values' ranges (integer_ranges)
        if initializers is None:
            initializers = self.graph.initializer
        self.initializers = {t.name: t for t in initializers}
        self.elided: dict[str, tuple[Shape, str]] = {
            t.name: (tuple(int(d) for d in t.dims), t.name)
            for t in self.initializers.values()
            if shapes_only.declared(t)
        }  # value → its shape and the weight it is (or is computed from)
        self.elem_types = {
            vi.name: vi.type.tensor_type.elem_type
            for vi in (*self.graph.input, *self.graph.value_info, *self.graph.output)
            if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type
        }  # from shape inference: the ONNX element type of (nearly) every value
        self.node_name = ""
        self.node_op = ""
        self.node_domain = ""  # of the node being lowered (its op key: ``op_key``)
        self.consumed = {n for node in self.graph.node for n in node.input} | {
            vi.name for vi in self.graph.output
        }
        self.opset = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
            CONVERT_TO_OPSET,
        )
        self.opsets = {o.domain or "": o.version for o in model.opset_import}

    # -- errors --------------------------------------------------------------------------

    def error(self, msg: str) -> T10Error:
        return T10Error(f"ONNX model '{self.model_name}': {msg}")

    def node_error(self, node: onnx.NodeProto, msg: str) -> T10Error:
        return self.error(f"node '{self.node_name}' ({node.op_type}): {msg}")

    # -- values ----------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        self.ops.append(op)
        return op

    def define(self, name: str, value: SSAValue, shape: Shape) -> None:
        if prod(shape) > MAX_ELEMENTS:
            made = f"node '{self.node_name}' ({self.node_op}): its result" if self.node_op else (
                "graph input")
            raise self.error(
                f"{made} '{name}' has shape {list(shape)}: {prod(shape):.3g} elements, more "
                "than a tensor can have (2**63 - 1: onnxruntime and numpy count elements in "
                "int64); no chip holds it"
            )
        if 0 in shape and not isinstance(value.owner, arith.ConstantOp):
            raise self.error(
                f"node '{self.node_name}' ({self.node_op}): its result '{name}' would be empty "
                f"(shape {list(shape)}), which this operator's lowering does not produce"
            )
        if value.name_hint is None and (hint := _name_hint(name)):
            value.name_hint = hint
        self.values[name] = value
        self.shapes[name] = shape

    def pass_through(self, node: onnx.NodeProto) -> None:
        """Output 0 of ``node`` is its input 0, unchanged."""
        value, shape = self.use(node.input[0])
        self.values[node.output[0]] = value
        self.shapes[node.output[0]] = shape

    def initializer_array(self, t: onnx.TensorProto) -> np.ndarray:
        shape = tuple(int(d) for d in t.dims)
        raw = t.raw_data if t.data_type == FLOAT else b""  # each read copies the bytes
        if raw and len(raw) == 4 * int(np.prod(shape, dtype=np.int64)):
            return np.frombuffer(raw, dtype="<f4").reshape(shape)  # no further copy
        try:
            return numpy_helper.to_array(t)
        except Exception as e:
            raise self.error(f"cannot read initializer '{t.name}': {first_lines(e)}") from None

    def constant_ids(self, ids: np.ndarray) -> SSAValue:
        """Known gather ids (integers, |id| <= 2**24) as an ``arith.constant`` of their exact
        floats, marked ``t10.ids``: not bound to a name (a reader of the ONNX value may read
        it as known)."""
        op = arith.ConstantOp(_dense(tuple(ids.shape), ids.astype(np.float32)))
        op.attributes[IDS_ATTR] = UnitAttr()
        self.ops.append(op)
        return op.result

    def add_constant(self, name: str, arr: np.ndarray, *, hoist: bool) -> SSAValue:
        shape = tuple(int(d) for d in arr.shape)
        op = arith.ConstantOp(_dense(shape, arr))
        (self.constants if hoist else self.ops).append(op)
        self.define(name, op.result, shape)
        return op.result

    # -- known (compile-time) values -------------------------------------------------------

    def is_known(self, name: str) -> bool:
        return name in self.known or name in self.initializers or name in self.elided

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
        if name in self.elided:
            return self.elem_types.get(name, FLOAT)  # an initializer's: FLOAT (weightless)
        if self.is_known(name):
            return onnx.helper.np_dtype_to_tensor_dtype(self.constant(name).dtype)
        return self.elem_types.get(name, FLOAT)

    def constant(self, name: str) -> np.ndarray:
        """The value of a known name (an initializer, or a folded node's output)."""
        if name in self.elided:
            raise self.elided_error(name)
        if name not in self.known:
            self.known[name] = self.initializer_array(self.initializers[name])
        return self.known[name]

    def elided_error(self, name: str) -> T10Error:
        """The refusal of a compile-time read of the values of ``name``, which are elided."""
        weight = self.elided[name][1]
        what = f"weight '{weight}'" if weight == name else (
            f"'{name}', computed from weight '{weight}',")
        return self.error(
            f"node '{self.node_name}' ({self.node_op}) needs the values of {what} at compile "
            "time, but the model is in the shapes-only form (its weights are declared without "
            "data): write it with its weights (without --shapes-only)"
        )

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
        if name in self.elided:
            return self.elided[name][0]
        if self.is_known(name):
            return tuple(int(d) for d in self.constant(name).shape)
        return self.use(name)[1]

    def folds(self, index: int, node: onnx.NodeProto) -> bool:
        """Nodes folded statically (``foldable_nodes``), and those whose inputs all became
        known during import (empty values)."""
        return index in self.foldable or (
            may_fold(node) and all(self.is_known(n) for n in reads_values(node))
        )

    def check_builds(
        self, node: onnx.NodeProto, what: str, shape: Sequence[int], why: str = ""
    ) -> None:
        """Refuse ``node``'s constant ``what`` of ``shape``, which t10 would build on the host,
        when it has more than MAX_FOLDED_ELEMENTS elements: checked before any memory is
        taken (a shape of the model's, however large, is never allocated unchecked)."""
        if prod(shape) > MAX_FOLDED_ELEMENTS:
            raise self.node_error(
                node,
                f"{why}its {what} would be a constant of shape {list(shape)} ({prod(shape):,} "
                f"elements), more than t10 builds at compile time ({MAX_FOLDED_ELEMENTS:,})",
            )

    def fold(self, node: onnx.NodeProto) -> None:
        """Evaluate ``node`` (``folding.evaluate``); its outputs become known. A runtime value
        or an elided one (only where ``SHAPE_READERS`` reads just its shape and type) is given
        as a stand-in array of its shape and element type. A node reading the values of an
        elided one is not evaluated: its float outputs are elided too."""
        if elided := [n for n in reads_values(node) if n in self.elided]:
            self.fold_elided(node, self.elided[elided[0]][1])
            return
        shapes = [] if node.op_type in BROADCAST_FOLDS else self.inferred_shapes(node)
        for name, shape in zip(node.output, shapes, strict=False):
            if name and shape is not None:
                self.check_builds(node, f"result '{name}'", shape,
                                  "all its inputs are compile-time constants, but ")
        feeds = {
            n: self.constant(n)
            if self.is_known(n) and n not in self.elided
            else np.broadcast_to(
                onnx.helper.tensor_dtype_to_np_dtype(self.elem_type(n)).type(0), self.shape_of(n)
            )
            for n in node.input
            if n
        }
        try:
            results = evaluate(node, feeds, self.opsets)
        except Exception as e:
            raise self.node_error(
                node,
                "all its inputs are compile-time constants, but evaluating it at compile time "
                f"failed: {type(e).__name__}: {first_lines(e, 2)}",
            ) from None
        for name, value in zip(node.output, results, strict=False):
            if name:
                self.known[name] = value

    def fold_elided(self, node: onnx.NodeProto, weight: str) -> None:
        """``node``'s outputs elided, computed from the elided ``weight``: each must be a
        float of a static shape (a value computed with, not a shape or axes)."""
        for name, shape in zip(node.output, self.inferred_shapes(node), strict=True):
            if not name:
                continue
            if shape is None or self.elem_types.get(name) not in FLOAT_TYPES:
                raise self.elided_error(weight)
            self.elided[name] = (shape, weight)

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
        unknown): known integer / bool inputs (shapes, axes, indices) and small known float
        ones (a Resize's scales) as initializers, the others as typed graph inputs (shape
        inference reads no other float values)."""
        names = list(dict.fromkeys(n for n in node.input if n))
        valued = [
            n
            for n in names
            if self.is_known(n)
            and n not in self.elided
            and (self.constant(n).dtype.kind in "biu" or self.constant(n).size <= _SHAPE_FLOATS)
        ]
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
        # IR 4 on: initializers need not be graph inputs (under IR 3 they would have no type)
        model.ir_version = max(self.model.ir_version, 4)
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph.output
        except Exception as e:
            raise self.node_error(node, f"shape inference failed: {first_lines(e, 2)}") from None
        shapes = dict(zip((o for o in node.output if o), inferred, strict=True))
        return [_static_shape(shapes[n]) if n else None for n in node.output]

    def use(self, name: str) -> tuple[SSAValue, Shape]:
        """The runtime value named ``name``; a known float32 constant becomes an
        ``arith.constant`` on first use (initializers hoisted); other known values are refused."""
        if name not in self.values:
            if not self.is_known(name):
                raise self.error(f"value '{name}' (used by '{self.node_name}') is not defined")
            if name in self.elided and self.elem_type(name) in FLOAT_TYPES:  # else: refused below
                shape = self.elided[name][0]
                op = arith.ConstantOp(DenseResourceAttr.from_params(ELIDED, _tensor_type(shape)))
                (self.constants if name in self.initializers else self.ops).append(op)
                self.define(name, op.result, shape)
                return op.result, shape
            arr = self.constant(name)
            if arr.size == 0 and self.node_op:
                raise self.error(
                    f"node '{self.node_name}' ({self.node_op}) computes with the empty value "
                    f"'{name}' (shape {list(arr.shape)}) and its result is not empty; t10 "
                    "computes non-empty tensors only: an empty value may be a Concat input "
                    "(it adds nothing), a graph output, or make its readers' results empty"
                )
            integer_op = op_key(self.node_op, self.node_domain) in integer_ops()
            if arr.dtype.kind in "biu" and (integer_op or not self.node_op):
                # an integer op, or the graph outputs (node_op ""), uses it as exact floats
                arr = self._exact_float(name, arr)
            if arr.dtype == np.float16:
                arr = arr.astype(np.float32)  # exact
            if arr.dtype != np.float32:
                origin = "initializer" if name in self.initializers else "constant"
                user = (
                    "the graph outputs"
                    if self.node_op == ""
                    else f"node '{self.node_name}' ({self.node_op})"
                )
                raise self.error(
                    f"{origin} '{name}' has element type {_np_dtype_name(arr.dtype)} and "
                    f"{user} computes with it; t10 computes float (FLOAT, FLOAT16) tensors only: a "
                    "non-float constant may only be an attribute-like input (a shape, axes, a "
                    "Where condition) or an input of nodes evaluated at compile time"
                )
            self.add_constant(name, arr, hoist=name in self.initializers)
        return self.values[name], self.shapes[name]

    def _exact_float(self, name: str, arr: np.ndarray) -> np.ndarray:
        """A known integer / bool constant read by an integer op, as its exact float32."""
        worst = int(np.max(np.abs(arr.astype(np.float64)), initial=0))
        if worst > EXACT_F32:
            raise self.error(
                f"node '{self.node_name}' ({self.node_op}) computes with the "
                f"{_np_dtype_name(arr.dtype)} constant '{name}', whose value {worst} (in "
                f"magnitude) is not exact in float32, which t10 computes with (|x| <= 2**24): "
                "use a smaller constant"
            )
        values = arr.astype(np.float32)
        with np.errstate(over="ignore"):  # beyond fp16's range: inf, rounded too
            rounded = values.astype(np.float16).astype(np.float32) != values
        if rounded.any():
            self.mark_fp16_inexact(
                f"{_np_dtype_name(arr.dtype)} constant '{name}' (value "
                f"{int(arr.reshape(-1)[int(np.argmax(rounded))])}) read by node "
                f"'{self.node_name}' ({self.node_op or 'graph outputs'})"
            )
        return values

    def positions(self, name: str, length: int, axis: int, rank: int) -> tuple[SSAValue, Shape]:
        """A constant holding 0, 1, ..., length - 1 along ``axis`` of a rank-``rank`` shape of
        1s (the positions an op compares with); fp16 storage rounds those above 2048
        (``mark_fp16_inexact``)."""
        shape = (1,) * axis + (length,) + (1,) * (rank - axis - 1)
        values = np.arange(length, dtype=np.float32).reshape(shape)
        if length - 1 > EXACT_F16:
            self.mark_fp16_inexact(f"positions 0 to {length - 1} of node '{self.node_name}'")
        return self.add_constant(name, values, hoist=False), shape

    def mark_fp16_inexact(self, what: str) -> None:
        """Integers that must stay exact and fp16 storage would round (the first found is
        named in the ``t10.fp16_inexact`` module attribute, which fp16 compilation refuses)."""
        if self.fp16_inexact is None:
            self.fp16_inexact = what

    def range_of(self, name: str) -> Range:
        """The proven range of value ``name``: [0, 1] for a bool, a known integer constant's
        hull, the recorded range of a runtime integer (``integer_ranges``)."""
        if self.elem_type(name) == onnx.TensorProto.BOOL:
            return BOOL
        if name in self.elided:  # a float weight, of values unknown
            return Unknown(f"the {dtype_name(self.elem_type(name))} constant '{name}'")
        if not self.is_known(name):
            return self.ranges.get(
                name, Unknown(f"the {dtype_name(self.elem_type(name))} '{name}'")
            )
        arr = self.constant(name)
        if arr.dtype.kind not in "biu":
            return Unknown(f"the {_np_dtype_name(arr.dtype)} constant '{name}'")
        return Interval(int(arr.min()), int(arr.max())) if arr.size else Interval(0, 0)

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
        maps = [_map(rank, broadcast_exprs(s, loops, out_shape)) for _, s in inputs]
        maps.append(_identity_map(rank))
        empty = tensor.EmptyOp([], _tensor_type(out_shape))
        self.emit(empty)
        block = Block(arg_types=[f32] * (len(inputs) + 1))
        result = body(BodyBuilder(block), block.args[: len(inputs)])
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
        shape = broadcast_shapes(*(s for _, s in inputs))
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
        maps = [_map(n, broadcast_exprs(s, loops, shape)) for _, s in inputs]
        dim = AffineExpr.dimension
        out_exprs = [dim(extra.get(d, d)) for d in range(rank) if keepdims or d not in axes]
        maps.append(_map(n, out_exprs))
        init = arith.ConstantOp(_splat(out_shape, COMBINER_IDENTITY[combiner]))
        self.emit(init)
        block = Block(arg_types=[f32] * (len(inputs) + 1))
        bb = BodyBuilder(block)
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
