"""The tensor-expression view of a `linalg.generic` that the planner and the lowerings share.

An operator is a loop nest over named loop dims with affine accesses, e.g. matmul
`C[d0,d1] += A[d0,d2] * B[d2,d1]`. Each operand dim is read at one loop dim, or at the
constant 0 (a broadcast dim of size 1).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum
from itertools import islice
from math import prod
from typing import cast

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    Float16Type,
    Float32Type,
    StringAttr,
    TensorType,
)
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Operation
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr

from t10.common.attr_names import FP16_INEXACT_ATTR, FP16_VALUES_ATTR, NAME_ATTR
from t10.errors import T10Error


class ExprKind(Enum):
    CONTRACTION = "contraction"
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"


COMBINER_IDENTITY: dict[str, float] = {"sum": 0.0, "max": float("-inf"), "min": float("inf")}
"""The identity of each combiner a reduction (and an all-reduce) may use."""


@dataclass(frozen=True)
class Access:
    """How one operand is read: per tensor dim, its loop dim (None = broadcast constant 0)."""

    dims: tuple[int | None, ...]
    shape: tuple[int, ...]

    def uses(self, loop_dim: int) -> bool:
        return loop_dim in self.dims


@dataclass(frozen=True)
class Epilogue:
    """An element-wise chain applied to a contraction's finished output tile on the cores that
    hold it (`t10-fuse-epilogue`): a bias add, an activation, a residual add. Its own inputs
    are the operator's last `inputs` inputs, read at the contraction's output (parallel) loop
    dims; they never rotate. It costs an element-wise kernel over the output tile (over 1/R
    of it after a reduction split over R cores: `t10.common.plans.epilogue_elements`) and no
    exchange."""

    inputs: int
    body_ops: int
    relu_like: bool


@dataclass(frozen=True)
class TensorExpr:
    name: str
    loop_sizes: tuple[int, ...]
    parallel: tuple[bool, ...]
    inputs: tuple[Access, ...]
    output: Access
    kind: ExprKind
    elem_bytes: int
    """Bytes per stored element (4 fp32, 2 fp16): every buffer's size and the matmul rate."""
    relu_like: bool
    combiner: str | None = None
    """How a reduction combines values over its reduction dims: sum, max or min (None for an
    element-wise op; sum for a contraction)."""
    body_ops: int = 1
    """Arithmetic ops per element of an element-wise or reduction body (constants and the
    yield do not count): a fused chain costs what its ops cost."""
    epilogue: Epilogue | None = None
    """A contraction's fused element-wise epilogue (its inputs are the last of `inputs`)."""
    partial_bytes: int = 4
    """Bytes of a partial sum that a plan carries across steps or cores (the precision of
    partial sums: 4 for fp32 partials, 2 for fp16). Partials wider than the storage
    (`elem_bytes`) accumulate in a buffer of their own that is rounded into the output once
    complete (`t10.common.plans.rounds_partials`); partials as narrow as the storage
    accumulate in the output itself, rounded at every step and every exchange."""

    @property
    def rank(self) -> int:
        return len(self.loop_sizes)

    @property
    def own_inputs(self) -> int:
        """How many inputs the loop nest itself reads (the epilogue's come after them)."""
        return len(self.inputs) - (self.epilogue.inputs if self.epilogue else 0)

    @property
    def reduction_dims(self) -> tuple[int, ...]:
        return tuple(d for d, par in enumerate(self.parallel) if not par)

    def matmul_dims(self, sizes: tuple[int, ...]) -> tuple[int, int, int, int]:
        """(batch, m, k, n) of a contraction whose loop dims have the given sizes.

        batch: parallel dims read by both inputs; m: parallel dims only the first input reads;
        n: parallel dims only the second reads; k: reduction dims.
        """
        a, b = self.inputs[:2]
        batch = m = n = k = 1
        for d, size in enumerate(sizes):
            if not self.parallel[d]:
                k *= size
            elif a.uses(d) and not b.uses(d):
                m *= size
            elif b.uses(d) and not a.uses(d):
                n *= size
            else:
                batch *= size
        return batch, m, k, n

    def flops(self) -> int:
        return 2 * prod(self.loop_sizes) if self.kind is ExprKind.CONTRACTION else 0


def matmul_expr(m: int, k: int, n: int, elem_bytes: int = 4) -> TensorExpr:
    """C[d0, d1] += A[d0, d2] * B[d2, d1], an m×k by k×n product, as the frontend imports a
    2-D MatMul named `matmul`."""
    return TensorExpr(
        name="matmul",
        loop_sizes=(m, n, k),
        parallel=(True, True, False),
        inputs=(Access((0, 2), (m, k)), Access((2, 1), (k, n))),
        output=Access((0, 1), (m, n)),
        kind=ExprKind.CONTRACTION,
        elem_bytes=elem_bytes,
        relu_like=False,
        combiner="sum",
        body_ops=2,
    )


def _access(map_attr: AffineMapAttr, shape: tuple[int, ...], what: str) -> Access:
    dims: list[int | None] = []
    for expr in map_attr.data.results:
        if isinstance(expr, AffineDimExpr):
            dims.append(expr.position)
        elif isinstance(expr, AffineConstantExpr) and expr.value == 0:
            dims.append(None)
        else:
            raise T10Error(
                f"{what}: indexing map result '{expr}' is not a loop dim or the constant 0; "
                "only projected permutations with broadcast dims are supported"
            )
    return Access(tuple(dims), shape)


def _shape(type_: Attribute, what: str) -> tuple[int, ...]:
    if not isinstance(type_, TensorType):
        raise T10Error(f"{what}: expected a ranked tensor, got {type_}")
    shape = tuple(type_.get_shape())
    if any(s < 0 for s in shape):
        raise T10Error(f"{what}: dynamic shape {type_} is not supported; use static shapes")
    return shape


def element_bytes(type_: Attribute, what: str) -> int:
    if isinstance(type_, Float32Type):
        return 4
    if isinstance(type_, Float16Type):
        return 2
    raise T10Error(f"{what}: element type {type_} is not supported (f32 or f16)")


PRECISIONS: dict[str, Attribute] = {"fp32": Float32Type(), "fp16": Float16Type()}
"""Storage precision -> the element type of distributed tensors and core buffers."""

EXACT_F32 = 2**24
"""Every integer with |x| <= this is exact in float32 (runtime integers are held as floats)."""

EXACT_F16 = 2**11
"""Every integer with |x| <= this is exact in fp16."""

FP16_MAX = 65504.0
"""The largest finite fp16 value: fp16 storage saturates a finite constant beyond ±this to it
(convert-linalg-to-rtensor); a value computed beyond it is stored as ±inf."""


def precision_type(precision: str, what: str, kind: str = "precision") -> Attribute:
    """The element type of `precision` (a T10Error names the valid ones; `kind` names the
    option in it: `precision` or `partials`)."""
    if precision not in PRECISIONS:
        raise T10Error(
            f"{what}: unknown {kind} '{precision}'; choose one of {', '.join(PRECISIONS)}"
        )
    return PRECISIONS[precision]


def check_partials(precision: str, partials: str, what: str) -> None:
    """`precision` and `partials` name precisions, and partial sums are at least as wide as
    the storage."""
    storage = element_bytes(precision_type(precision, what), what)
    if element_bytes(precision_type(partials, what, "partials"), what) < storage:
        raise T10Error(
            f"{what}: partials '{partials}' are narrower than the '{precision}' storage; "
            f"use partials={precision} or wider"
        )


def check_storage(module_attributes: Mapping[str, Attribute], precision: str) -> None:
    """The module's values can be stored at `precision`: not fp16 when it computes with
    integers fp16 would round (`t10.fp16_inexact`), not fp32 when the model's values are
    FLOAT16 (`t10.fp16_values`: fp32 storage would not round them as the model says)."""
    inexact = module_attributes.get(FP16_INEXACT_ATTR)
    if precision == "fp16" and isinstance(inexact, StringAttr):
        raise T10Error(
            f"fp16 storage would round the {inexact.data}: integers that must stay "
            "exact (fp16 holds every integer with |x| <= 2048); compile with --precision fp32"
        )
    float16 = module_attributes.get(FP16_VALUES_ATTR)
    if precision == "fp32" and isinstance(float16, StringAttr):
        raise T10Error(
            f"the model computes FLOAT16 values ({float16.data}), each rounded to fp16, "
            "which fp32 storage would not do: compile with --precision fp16"
        )


def at_precision(expr: TensorExpr, precision: str, partials: str, what: str) -> TensorExpr:
    """`expr` (built from f32 linalg IR) as planned for `precision` storage with `partials`
    partial sums."""
    check_partials(precision, partials, what)
    return replace(
        expr,
        elem_bytes=element_bytes(precision_type(precision, what), what),
        partial_bytes=element_bytes(precision_type(partials, what, "partials"), what),
    )


ELEMENTWISE_BODY_OPS = (
    arith.AddfOp,
    arith.SubfOp,
    arith.MulfOp,
    arith.DivfOp,
    arith.MaximumfOp,
    arith.MinimumfOp,
    arith.NegfOp,
    arith.CmpfOp,
    arith.SelectOp,
    arith.ConstantOp,
    math.ExpOp,
    math.TanhOp,
    math.ErfOp,
    math.SqrtOp,
    math.PowFOp,
    math.AbsFOp,
    math.LogOp,
    math.CosOp,
    math.SinOp,
    math.FloorOp,
    math.CeilOp,
    math.TruncOp,
    math.TanOp,
    math.AtanOp,
    math.AsinOp,
    math.AcosOp,
    math.SinhOp,
    math.CoshOp,
    math.AsinhOp,
    math.AcoshOp,
    math.AtanhOp,
    math.RoundEvenOp,
)
"""The scalar ops an element-wise body may contain (the simulator implements each)."""


def is_mul_add(body: Block) -> bool:
    """Whether the body is `acc + a * b` (a contraction's)."""
    if len(body.args) != 3:
        return False
    ops = list(islice(body.ops, 4))  # a fused body may be long: no need to list it
    if len(ops) != 3:
        return False
    mul, add, yld = ops
    a, b, acc = body.args
    return (
        isinstance(mul, arith.MulfOp)
        and {mul.lhs, mul.rhs} == {a, b}
        and isinstance(add, arith.AddfOp)
        and {add.lhs, add.rhs} == {acc, mul.result}
        and isinstance(yld, YieldOp)
        and tuple(yld.operands) == (add.result,)
    )


_COMBINERS: dict[type[Operation], str] = {
    arith.AddfOp: "sum",
    arith.MaximumfOp: "max",
    arith.MinimumfOp: "min",
}


def reduction_combiner(body: Block) -> str | None:
    """The combiner of a body `combine(acc, f(inputs))` (acc = the output block argument, used
    only by the combine; f any element-wise chain of the inputs), or None."""
    ops = list(body.ops)
    if len(ops) < 2 or not isinstance(ops[-1], YieldOp) or len(ops[-1].operands) != 1:
        return None
    combine = ops[-2]
    if len(combine.results) != 1 or ops[-1].operands[0] is not combine.results[0]:
        return None
    name = _COMBINERS.get(type(combine))
    acc = body.args[-1]
    if name is None or len(combine.operands) != 2 or acc not in combine.operands:
        return None
    if list(combine.operands).count(acc) != 1 or len(list(acc.uses)) != 1:
        return None
    if not all(isinstance(op, ELEMENTWISE_BODY_OPS) for op in ops[:-2]):
        return None
    return name


def _storage_type(
    input_types: tuple[Attribute, ...], output_type: Attribute, what: str
) -> Attribute:
    """The element type the operator's inputs are stored in (its output's when it has no
    inputs): it sets the kernel's rate (`elem_bytes`). The output may be wider: an fp32
    partial-sum accumulator of fp16 inputs (`t10.common.plans.rounds_partials`)."""
    elems = {_element_type(t) for t in input_types}
    if len(elems) > 1:
        names = ", ".join(sorted(str(e) for e in elems))
        raise T10Error(f"{what}: inputs mix element types ({names}); use one precision")
    if elems:
        return elems.pop()
    return _element_type(output_type)


def _element_type(type_: Attribute) -> Attribute:
    """The element type of a tensor type; any other type is its own (`isinstance`, not
    xDSL's `isa` of a generic type, which builds its constraint on every call)."""
    if isinstance(type_, TensorType):
        element: Attribute = cast(TensorType[Attribute], type_).get_element_type()
        return element
    return type_


def body_arith_ops(body: Block) -> int:
    """Ops that compute (not constants, not the yield): at least 1."""
    return max(1, sum(not isinstance(o, arith.ConstantOp) for o in body.ops) - 1)


def is_relu_like_body(body: Block) -> bool:
    """A body that is a single max / min (with a constant): the chip's `relu` rate."""
    return body_arith_ops(body) == 1 and any(
        isinstance(op, arith.MaximumfOp | arith.MinimumfOp) for op in body.ops
    )


def op_name(op: Operation) -> str:
    name = op.attributes.get(NAME_ATTR)
    return name.data if isinstance(name, StringAttr) else op.name


def loop_accesses(
    what: str,
    indexing_maps: ArrayAttr[AffineMapAttr],
    loops: int,
    input_types: tuple[Attribute, ...],
    output_type: Attribute,
) -> tuple[tuple[int, ...], tuple[Access, ...], Access]:
    """The loop sizes and the operands' accesses of a generic-like op with `loops` loops
    (what `tensor_expr_of` builds on, without looking at the body)."""
    maps = tuple(indexing_maps.data)
    if len(maps) != len(input_types) + 1:
        raise T10Error(f"{what}: expected one indexing map per operand")
    inputs = tuple(
        _access(m, _shape(t, what), f"{what} input #{i}")
        for i, (m, t) in enumerate(zip(maps, input_types, strict=False))
    )
    output = _access(maps[-1], _shape(output_type, what), f"{what} output")
    loop_sizes = [0] * loops
    for acc in (*inputs, output):
        for d, size in zip(acc.dims, acc.shape, strict=True):
            if d is not None:
                if loop_sizes[d] not in (0, size):
                    raise T10Error(f"{what}: loop dim d{d} has sizes {loop_sizes[d]} and {size}")
                loop_sizes[d] = size
            elif size != 1:
                raise T10Error(f"{what}: a broadcast (constant 0) dim must have size 1")
    if 0 in loop_sizes:
        raise T10Error(f"{what}: every loop dim must be read by some operand")
    if any(d is None for d in output.dims):
        raise T10Error(f"{what}: the output may not have broadcast dims")
    return tuple(loop_sizes), inputs, output


def tensor_expr_of(
    op: Operation,
    indexing_maps: ArrayAttr[AffineMapAttr],
    parallel: tuple[bool, ...],
    input_types: tuple[Attribute, ...],
    output_type: Attribute,
    body: Block,
) -> TensorExpr:
    """Build the tensor expression from the parts a generic-like op has."""
    name = op_name(op)
    what = f"operator '{name}'"
    loop_sizes, inputs, output = loop_accesses(
        what, indexing_maps, len(parallel), input_types, output_type
    )
    elem = _storage_type(input_types, output_type, what)
    combiner: str | None = None
    if all(parallel):
        for body_op in body.ops:
            if not isinstance(body_op, (*ELEMENTWISE_BODY_OPS, YieldOp)):
                raise T10Error(f"{what}: element-wise body op '{body_op.name}' is not supported")
        kind = ExprKind.ELEMENTWISE
    elif len(inputs) == 2 and is_mul_add(body):
        kind = ExprKind.CONTRACTION
    elif (combiner := reduction_combiner(body)) is not None:
        kind = ExprKind.REDUCTION
    else:
        raise T10Error(
            f"{what}: only element-wise ops, multiply-accumulate contractions and reductions "
            "combine(acc, f(inputs)) with combine one of arith.addf/maximumf/minimumf are "
            "supported"
        )
    return TensorExpr(
        name=name,
        loop_sizes=loop_sizes,
        parallel=parallel,
        inputs=inputs,
        output=output,
        kind=kind,
        elem_bytes=element_bytes(elem, what),
        partial_bytes=element_bytes(_element_type(output_type), what),
        relu_like=kind is not ExprKind.REDUCTION and is_relu_like_body(body),
        combiner="sum" if kind is ExprKind.CONTRACTION else combiner,
        body_ops=body_arith_ops(body),
    )


def linalg_tensor_expr(op: GenericOp) -> TensorExpr:
    parallel = tuple(it.data == IteratorType.PARALLEL for it in op.iterator_types.data)
    return tensor_expr_of(
        op,
        op.indexing_maps,
        parallel,
        tuple(v.type for v in op.inputs),
        op.outputs[0].type,
        op.body.block,
    )
