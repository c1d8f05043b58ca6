"""Interpreter functions for the `arith`, `math`, `scf` and `linalg.yield` ops that appear around
and inside core kernels, on per-core values (see `t10.sim.state`): index arithmetic on ints or
per-core int64 arrays, and the float ops of kernel bodies on float32 arrays.

`arith.cmpf` gives bool arrays and `arith.select` picks between float32 arrays by one.
Float ops follow IEEE semantics without numpy warnings: kernels run their bodies over padded
tiles too (then zero the padding), so `0 / 0` or `sqrt(-1)` there is expected, not an error.
"""

from __future__ import annotations

from collections.abc import Callable
from math import erf, prod
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, math, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from t10.common.attr_names import IDS_ATTR
from t10.errors import T10Error
from t10.sim.sim_impl import sim_impl
from t10.sim.state import Index, NoValues, uniform
from t10.t10_dialects.printing import ELIDED


def _as_index(x: Any) -> Index:
    if isinstance(x, np.ndarray) and x.ndim:
        return x.astype(np.int64, copy=False)
    return int(x)


def _check_divisor(b: Index) -> None:
    if np.any(np.asarray(b) == 0):
        raise T10Error("index arithmetic divides by zero")


def _divsi(a: Index, b: Index) -> Index:
    _check_divisor(b)
    q = np.abs(a) // np.abs(b)
    return np.where(np.sign(a) * np.sign(b) < 0, -q, q)


def _floordiv(a: Index, b: Index) -> Index:
    _check_divisor(b)
    return a // b


def _ceildiv(a: Index, b: Index) -> Index:
    _check_divisor(b)
    return -((-a) // b)


def _rem(a: Index, b: Index) -> Index:
    _check_divisor(b)
    return np.fmod(a, b)


INDEX_BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivUIOp: _floordiv,
    arith.DivSIOp: _divsi,
    arith.FloorDivSIOp: _floordiv,
    arith.CeilDivSIOp: _ceildiv,
    arith.CeilDivUIOp: _ceildiv,
    arith.RemUIOp: _rem,
    arith.RemSIOp: _rem,
    arith.MinSIOp: np.minimum,
    arith.MinUIOp: np.minimum,
    arith.MaxSIOp: np.maximum,
    arith.MaxUIOp: np.maximum,
}
"""The binary index ops: their results become per-core index values (`_as_index`)."""

FLOAT_BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
}
"""The binary float ops of kernel bodies, on float32 arrays."""


def _unordered(a: Any, b: Any) -> Any:
    return np.isnan(a) | np.isnan(b)


CMPF_PREDICATES: dict[str, Callable[[Any, Any], Any]] = {
    "false": lambda a, b: np.zeros(np.broadcast(a, b).shape, dtype=bool),
    "oeq": np.equal,
    "ogt": np.greater,
    "oge": np.greater_equal,
    "olt": np.less,
    "ole": np.less_equal,
    "one": lambda a, b: np.not_equal(a, b) & ~_unordered(a, b),
    "ord": lambda a, b: ~_unordered(a, b),
    "ueq": lambda a, b: np.equal(a, b) | _unordered(a, b),
    "ugt": lambda a, b: np.greater(a, b) | _unordered(a, b),
    "uge": lambda a, b: np.greater_equal(a, b) | _unordered(a, b),
    "ult": lambda a, b: np.less(a, b) | _unordered(a, b),
    "ule": lambda a, b: np.less_equal(a, b) | _unordered(a, b),
    "une": np.not_equal,
    "uno": _unordered,
    "true": lambda a, b: np.ones(np.broadcast(a, b).shape, dtype=bool),
}
"""`arith.cmpf` predicate name → comparison on float arrays (ordered: false on NaN)."""


_erf64 = np.vectorize(erf, otypes=[np.float64])


def _erf(x: Any) -> np.ndarray:
    """The error function of float32 values, computed in float64 (numpy has no erf)."""
    return _erf64(x).astype(np.float32)


MATH_FUNCTIONS: dict[type[Operation], Callable[..., Any]] = {
    math.ExpOp: np.exp,
    math.TanhOp: np.tanh,
    math.ErfOp: _erf,
    math.SqrtOp: np.sqrt,
    math.PowFOp: np.power,
    math.AbsFOp: np.abs,
    math.LogOp: np.log,
    math.CosOp: np.cos,
    math.SinOp: np.sin,
    math.FloorOp: np.floor,
    math.CeilOp: np.ceil,
    math.TruncOp: np.trunc,
    math.TanOp: np.tan,
    math.AtanOp: np.arctan,
    math.AsinOp: np.arcsin,
    math.AcosOp: np.arccos,
    math.SinhOp: np.sinh,
    math.CoshOp: np.cosh,
    math.AsinhOp: np.arcsinh,
    math.AcoshOp: np.arccosh,
    math.AtanhOp: np.arctanh,
    math.RoundEvenOp: np.rint,  # half to even
}
"""The `math` ops of element-wise kernel bodies, on float32 arrays (float32 in, float32 out)."""


def host_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The numpy value of a dense constant (float tensors become float32)."""
    elem = attr.get_element_type()
    if not isinstance(elem, IntegerType | Float16Type | Float32Type | Float64Type):
        raise T10Error(f"the simulator cannot read constants of element type {elem}")
    raw = np.frombuffer(attr.data.data, dtype=np.dtype(elem.format))
    shape = tuple(attr.get_shape())
    if raw.size == 1 and prod(shape) != 1:
        raw = np.broadcast_to(raw, (prod(shape),))  # splat
    dtype = np.float32 if raw.dtype.kind == "f" else np.int64
    return raw.reshape(shape).astype(dtype)


class ArithFunctions(InterpreterFunctions):
    """Index arithmetic on per-core values, and the float ops of kernel bodies on arrays.

    Besides the methods below, one `run_<op>` per entry of `INDEX_BINARY` and `FLOAT_BINARY`
    is added before the implementations are registered.

    `timing_only`: float dense constants (the weights) become `NoValues` of their shape;
    integer ones and known gather ids (`t10.ids`) keep their values (ids decide traffic)."""

    def __init__(self, timing_only: bool = False):
        self.timing_only = timing_only

    @sim_impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        value: Attribute = op.value
        if isinstance(value, IntegerAttr):
            return (int(value.value.data),)
        if isinstance(value, FloatAttr):
            return (np.float32(value.value.data),)
        if (
            self.timing_only
            and isinstance(value, DenseResourceAttr | DenseIntOrFPElementsAttr)
            and IDS_ATTR not in op.attributes
        ):
            vtype = value.type
            if isinstance(vtype, TensorType) and not isinstance(
                vtype.get_element_type(), IntegerType
            ):
                return (NoValues.of(tuple(vtype.get_shape()), np.float32),)
        if isinstance(value, DenseIntOrFPElementsAttr):
            return (host_array(value),)
        if isinstance(value, DenseResourceAttr) and value.resource_handle.data == ELIDED:
            raise T10Error(
                "arith.constant: the values of this constant were elided when the IR was "
                "printed (dense_resource<__elided__>): print it with its weights (t10 compile "
                "--weights), or simulate without values (t10-sim{timing-only=true})"
            )
        raise T10Error(f"arith.constant: unsupported value {value}")

    @sim_impl(arith.NegfOp)
    def run_negf(self, interpreter: Interpreter, op: arith.NegfOp, args: PythonValues):
        return (np.negative(args[0]),)

    @sim_impl(arith.CmpfOp)
    def run_cmpf(self, interpreter: Interpreter, op: arith.CmpfOp, args: PythonValues):
        predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        return (CMPF_PREDICATES[predicate](*args),)

    @sim_impl(arith.SelectOp)
    def run_select(self, interpreter: Interpreter, op: arith.SelectOp, args: PythonValues):
        return (np.where(*args).astype(np.float32, copy=False),)


class MathFunctions(InterpreterFunctions):
    """The `math` ops of kernel bodies: one `run_<op>` per entry of `MATH_FUNCTIONS` is added
    before the implementations are registered."""


def _table_impl(op_type: type[Operation], fn: Callable[..., Any], to_index: bool) -> Any:
    def run(self: Any, interpreter: Interpreter, op: Operation, args: PythonValues):
        if to_index:
            return (_as_index(fn(*args)),)
        with np.errstate(all="ignore"):
            return (fn(*args),)

    return sim_impl(op_type)(run)


def _add_impls(
    functions: type[InterpreterFunctions],
    table: dict[type[Operation], Callable[..., Any]],
    to_index: bool = False,
) -> None:
    for op_type, fn in table.items():
        name = "run_" + op_type.name.split(".", 1)[1]
        setattr(functions, name, _table_impl(op_type, fn, to_index))


_add_impls(ArithFunctions, INDEX_BINARY, to_index=True)
_add_impls(ArithFunctions, FLOAT_BINARY)
register_impls(ArithFunctions)
_add_impls(MathFunctions, MATH_FUNCTIONS)
register_impls(MathFunctions)


@register_impls
class FuncFunctions(InterpreterFunctions):
    """`func.return` of the program's `main` (it calls no functions). xDSL's own
    `FuncFunctions` would do, but importing it loads every interpreter xDSL has (0.2 s of
    each `t10` command)."""

    @impl_terminator(func.ReturnOp)
    def run_return(
        self, interpreter: Interpreter, op: func.ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


@register_impls
class ScfFunctions(InterpreterFunctions):
    """`scf.for` with bounds every core agrees on; the induction variable is a Python int."""

    @sim_impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues):
        lb, ub, step, *carried = args
        lo, hi = uniform(lb, "scf.for lower bound"), uniform(ub, "scf.for upper bound")
        stride = uniform(step, "scf.for step")
        if stride <= 0:
            raise T10Error(f"scf.for: step must be positive, got {stride}")
        values = tuple(carried)
        for i in range(lo, hi, stride):
            values = interpreter.run_ssacfg_region(op.body, (i, *values), "scf.for")
        return values

    @impl_terminator(scf.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: scf.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


@register_impls
class LinalgFunctions(InterpreterFunctions):
    """Only the terminator of kernel bodies (the bodies are run by `core.kernel`)."""

    @impl_terminator(LinalgYieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: LinalgYieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
