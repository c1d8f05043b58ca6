"""Importing a checked, shape-inferred graph: its inputs become the arguments of
``func.func @main`` (float32, or the exact floats of integer and BOOL inputs), each node is
folded or lowered by its registered lowering (runtime integer values only by the ops that keep
them exact), and the graph outputs are returned."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue

from t10.common.attr_names import (
    FLOAT16_TYPE,
    FP16_INEXACT_ATTR,
    FP16_VALUES_ATTR,
    INDEX_BOUND_ATTR,
    INPUT_RANGE_ATTR,
    NAME_ATTR,
    ONNX_TYPE_ATTR,
    SHAPES_ONLY_ATTR,
)
from t10.common.locations import locate
from t10.common.tensor_expr import EXACT_F32
from t10.errors import T10Error
from t10.frontend import integer_ranges
from t10.frontend.importer import (
    FLOAT16,
    FLOAT_TYPES,
    INTEGER_TYPES,
    SUPPORTED_OPS,
    Importer,
    Shape,
    dtype_name,
    integer_ops,
    op_key,
)
from t10.frontend.ops_compile_time import lower_fold_only
from t10.frontend.runtime_checks import check_runtime_shapes
from t10.t10_dialects import rtensor

__all__ = ["check_supported_ops", "import_graph"]


def import_graph(
    model: onnx.ModelProto,
    model_name: str,
    foldable: set[int],
    initializers: Iterable[onnx.TensorProto] | None = None,
    input_ranges: Mapping[str, tuple[int, int]] | None = None,
) -> ModuleOp:
    """The module of a checked, shape-inferred ``model``; ``foldable``: the indices of the
    nodes evaluated at import time (``folding.foldable_nodes``); ``initializers``: the
    model's, when ``model`` is its ``loading.weightless`` copy (default: ``model``'s own);
    ``input_ranges``: integer inputs' declared ranges [lo, hi] (``check_input_ranges``)."""
    imp = Importer(model, model_name, foldable, initializers)
    declared = check_input_ranges(imp, input_ranges or {})
    arg_names: list[str] = []
    arg_shapes: list[Shape] = []
    arg_attrs: list[DictionaryAttr] = []
    for vi in imp.graph.input:
        if vi.name in imp.initializers:
            continue  # an initializer listed as an input is a constant
        arg_names.append(vi.name)
        arg_shapes.append(_static_input_shape(imp, vi, "graph input"))
        attrs = _value_attrs(vi)
        if (interval := declared.get(vi.name)) is not None:
            attrs[INPUT_RANGE_ATTR] = DenseArrayBase.from_list(i64, [interval.lo, interval.hi])
        arg_attrs.append(DictionaryAttr(attrs))

    block = Block(arg_types=[TensorType(f32, s) for s in arg_shapes])
    for name, arg, shape in zip(arg_names, block.args, arg_shapes, strict=True):
        if 0 in shape:
            imp.define_empty(name, shape)  # the argument stays, unread
        else:
            imp.define(name, arg, shape)
            if imp.elem_type(name) in INTEGER_TYPES:
                imp.ranges[name] = declared.get(name) or integer_ranges.NARROW_TYPES.get(
                    imp.elem_type(name)
                ) or integer_ranges.Unknown(
                    f"input '{name}'",
                    f"declare the range of its values (`--input-range {name}=LO:HI` on t10 "
                    "run / compile; the simulator checks every input against it)",
                )

    for index, node in enumerate(imp.graph.node):
        imp.node_name = node.name or f"{node.op_type}_{index}"
        imp.node_op, imp.node_domain = node.op_type, node.domain
        check_runtime_shapes(imp, node)
        if imp.fold_empty_results(node):
            continue  # before folding: an empty result needs no evaluation
        if imp.folds(index, node):
            imp.fold(node)
            continue
        _check_attributes(imp, node)
        inputs = _integer_values(imp, [n for n in node.input if n and not imp.is_known(n)])
        _check_integer_values(imp, node, inputs)
        made = len(imp.ops), len(imp.constants)
        entry = SUPPORTED_OPS[op_key(node.op_type, node.domain)]
        entry.lower(imp, node)
        locate([*imp.ops[made[0] :], *imp.constants[made[1] :]], imp.node_name)
        if imp.fp16_values is None:
            computed = [n for n in node.output if n in imp.values and imp.elem_type(n) == FLOAT16]
            if computed:
                imp.fp16_values = f"'{computed[0]}' of node '{imp.node_name}' ({node.op_type})"
        outputs = _integer_values(imp, [n for n in node.output if n in imp.values])
        _check_integer_values(imp, node, outputs)
        if (rule := entry.integers) is not None and (inputs or outputs):
            integer_ranges.check_node(imp, node, rule(imp, node), outputs)

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
        res_attrs=ArrayAttr([
            DictionaryAttr(_value_attrs(vi)) for vi in imp.graph.output
        ]),
    )
    module = ModuleOp([main])
    if imp.fp16_inexact is not None:
        module.attributes[FP16_INEXACT_ATTR] = StringAttr(imp.fp16_inexact)
    if imp.fp16_values is not None:
        module.attributes[FP16_VALUES_ATTR] = StringAttr(imp.fp16_values)
    if declared := [n for n in imp.initializers if n in imp.elided]:
        module.attributes[SHAPES_ONLY_ATTR] = StringAttr(declared[0])
    module.verify()
    return module


_INTEGER_NAMES = ", ".join(dtype_name(t) for t in INTEGER_TYPES)
"""The integer (and BOOL) element types runtime values may have, for messages."""

_DATA_DEPENDENT_SHAPE = "its result's shape depends on the values; t10 compiles static shapes"
_CONTROL_FLOW = (
    "control flow; t10 compiles straight-line graphs (export with loops unrolled and "
    "branches fixed)"
)
WHY_UNSUPPORTED = {
    "NonZero": _DATA_DEPENDENT_SHAPE,
    "Unique": _DATA_DEPENDENT_SHAPE,
    "Compress": _DATA_DEPENDENT_SHAPE,
    "Loop": _CONTROL_FLOW,
    "If": _CONTROL_FLOW,
    "Scan": _CONTROL_FLOW,
}
"""Why t10's design refuses these operators (said beside them in the error)."""


def check_supported_ops(model: onnx.ModelProto, name: str, foldable: set[int]) -> None:
    """Every node that is not folded needs a lowering."""
    counts = Counter(
        op_key(n.op_type, n.domain)
        for i, n in enumerate(model.graph.node)
        if i not in foldable and op_key(n.op_type, n.domain) not in SUPPORTED_OPS
    )
    if counts:
        found = ", ".join(
            f"{op} ({c}: {WHY_UNSUPPORTED[op]})" if op in WHY_UNSUPPORTED else f"{op} ({c})"
            for op, c in sorted(counts.items())
        )
        raise T10Error(
            f"unsupported ONNX operators in model '{name}': {found}; "
            f"supported: {', '.join(sorted(SUPPORTED_OPS))}"
        )


def _check_attributes(imp: Importer, node: onnx.NodeProto) -> None:
    allowed = SUPPORTED_OPS[op_key(node.op_type, node.domain)].attributes
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
    if tt.elem_type not in FLOAT_TYPES and tt.elem_type not in INTEGER_TYPES:
        raise imp.error(
            f"{role} '{vi.name}' has element type {dtype_name(tt.elem_type)}; "
            "only FLOAT and FLOAT16 tensors (FLOAT16 at --precision fp16), and "
            f"{_INTEGER_NAMES} ones (held as exact float32 values), are supported"
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
        fix = (
            f"give it a size with `--dim {d.dim_param}=SIZE` (t10 run / compile / explain; "
            f"import_onnx(..., dims={{'{d.dim_param}': SIZE}}))"
            if d.dim_param
            else "re-export the model with static shapes, or fix the dimensions with "
            "onnx.tools.update_model_dims.update_inputs_outputs_dims(model, "
            f"{{'{vi.name}': [{example}]}}, {{<outputs>}}) using concrete sizes"
        )
        raise imp.error(
            f"{role} '{vi.name}' has {what} at axis {i}; the compiler needs static shapes: "
            f"{fix}"
        )
    return tuple(dims)


def _integer_values(imp: Importer, names: list[str]) -> list[str]:
    """The integer and BOOL values among ``names``."""
    return [n for n in names if imp.elem_type(n) in INTEGER_TYPES]


def _check_integer_values(imp: Importer, node: onnx.NodeProto, names: list[str]) -> None:
    """A node that reads (inputs) or defines (outputs) the runtime integer values ``names``
    must be one of ``integer_ops()``, which have a range rule (``integer_ranges``): integers
    are held as exact floats. (A fold-only op refuses the node itself, naming its runtime
    input.)"""
    entry = SUPPORTED_OPS[op_key(node.op_type, node.domain)]
    if not names or entry.integers is not None or entry.lower is lower_fold_only:
        return
    role = "produces" if names[0] in node.output else "reads"
    raise imp.node_error(
        node,
        f"it {role} the {dtype_name(imp.elem_type(names[0]))} value '{names[0]}' at run time; "
        "t10 holds runtime integers and bools as exact float32 values and computes on them "
        f"only with {', '.join(sorted(integer_ops()))} (whose results stay exact in a proven "
        "range); cast the value to FLOAT first if float arithmetic is meant",
    )


def _value_attrs(vi: onnx.ValueInfoProto) -> dict[str, Attribute]:
    """``t10.name`` of a graph input or output, and its ``t10.onnx_type`` when its float32
    values stand for another ONNX type: an integer / bool one (exact floats, given and
    returned as that type) or FLOAT16 (fp16 values, given and returned as such)."""
    attrs: dict[str, Attribute] = {NAME_ATTR: StringAttr(vi.name)}
    elem_type = vi.type.tensor_type.elem_type
    if (onnx_type := INTEGER_TYPES.get(elem_type)) is not None:
        attrs[ONNX_TYPE_ATTR] = StringAttr(onnx_type)
    elif elem_type == FLOAT16:
        attrs[ONNX_TYPE_ATTR] = StringAttr(FLOAT16_TYPE)
    return attrs


def _check_output_type(imp: Importer, vi: onnx.ValueInfoProto) -> None:
    tt = vi.type.tensor_type
    if vi.type.WhichOneof("value") not in (None, "tensor_type") or tt.elem_type not in (
        0,
        *FLOAT_TYPES,
        *INTEGER_TYPES,
    ):
        kind = (
            dtype_name(tt.elem_type)
            if vi.type.HasField("tensor_type")
            else f"a {vi.type.WhichOneof('value')} value"
        )
        raise imp.error(
            f"graph output '{vi.name}' has element type {kind}; only FLOAT and FLOAT16 tensors "
            f"(FLOAT16 at --precision fp16), and {_INTEGER_NAMES} ones (computed as exact "
            "float32 values), are supported"
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


def check_input_ranges(
    imp: Importer, input_ranges: Mapping[str, tuple[int, int]]
) -> dict[str, integer_ranges.Interval]:
    """The declared ranges as intervals, each checked: it names an integer (not BOOL) graph
    input and is an interval of integers float32 holds exactly, within the input's type if
    narrow (``integer_ranges.NARROW_TYPES``)."""
    inputs = {
        vi.name: imp.elem_type(vi.name)
        for vi in imp.graph.input
        if vi.name not in imp.initializers
    }
    integer = [n for n, t in inputs.items() if t in INTEGER_TYPES and t != onnx.TensorProto.BOOL]
    takes = f"its integer inputs: {', '.join(integer)}" if integer else "it has no integer inputs"
    declared: dict[str, integer_ranges.Interval] = {}
    for name, (lo, hi) in input_ranges.items():
        if name not in inputs:
            raise imp.error(f"a range is declared for '{name}', which is not an input of the "
                            f"model ({takes})")
        if name not in integer:
            raise imp.error(f"a range is declared for input '{name}', which is "
                            f"{dtype_name(inputs[name])}: only integer inputs take one "
                            f"({takes})")
        if lo > hi or max(abs(lo), abs(hi)) > EXACT_F32:
            raise imp.error(f"the range [{lo}, {hi}] declared for input '{name}' must have "
                            "lo <= hi, both within +-2**24 (the integers t10 holds exactly)")
        bounds = integer_ranges.NARROW_TYPES.get(inputs[name])
        if bounds is not None and not bounds.lo <= lo <= hi <= bounds.hi:
            raise imp.error(f"the range [{lo}, {hi}] declared for input '{name}' must lie "
                            f"within its type {dtype_name(inputs[name])}: {bounds}")
        declared[name] = integer_ranges.Interval(lo, hi)
    return declared


def _index_bounds(block: Block) -> dict[int, int]:
    """Function arguments that (through views) index a gather: argument index → the size of
    the dim they index (the smallest, for the tuples of a GatherND; ids must lie below it;
    `t10 run` draws random ids there)."""
    bounds: dict[int, int] = {}
    for op in block.ops:
        if isinstance(op, rtensor.GatherOp):
            source, _ = rtensor.through_views(op.ids)
            table, ids = op.table.type, op.ids.type
            if isinstance(source, BlockArgument) and isinstance(table, TensorType):
                assert isinstance(ids, TensorType)
                limits = op.kind().limits(table.get_shape())
                if not isinstance(limits, int):  # GatherND: the tuple's components
                    limits = int(limits[: ids.get_shape()[-1]].min())
                size = limits
                bounds[source.index] = min(size, bounds.get(source.index, size))
    return bounds
