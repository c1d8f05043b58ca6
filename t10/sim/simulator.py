"""The tile-level chip simulator: runs a `chip`-level module with real numbers, counts cycles
and checks that every core's buffers fit in its SRAM.

```
  result = simulate(module, load_chip("ipu-mk2"), {"input": x})
  result.outputs["output"]            # numpy array
  result.report.total_cycles          # BSP cycles of the whole program
  result.report.op("fc1/MatMul")      # per-operator breakdown (OpStats)
```

The module holds `func.func @main` whose arguments and results carry `t10.name`; its body is a
`chip.program` (plus `arith.constant` host tensors). The semantics of each op are in
`interpreter_arith` (index arithmetic, loops, kernel-body floats), `interpreter_core` (buffers,
kernels, exchanges) and `interpreter_chip` (supersteps and the report); `state` holds what
they share (per-core values, buffers, SRAM accounting, the current superstep's cost).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError, VerifyException

from t10.common.attr_names import FP16_SATURATED_ATTR, NAME_ATTR, ONNX_TYPE_ATTR
from t10.common.chip_spec import ChipSpec
from t10.common.input_ranges import check_in_range, declared_range
from t10.common.model_inputs import check_inputs_match
from t10.common.tensor_expr import EXACT_F32
from t10.errors import T10Error
from t10.sim.interpreter_arith import (
    ArithFunctions,
    FuncFunctions,
    LinalgFunctions,
    MathFunctions,
    ScfFunctions,
)
from t10.sim.interpreter_chip import ChipFunctions, OpStats, ReportBuilder, SimReport
from t10.sim.interpreter_core import CoreFunctions
from t10.sim.sim_impl import SimulationStopped
from t10.sim.state import NoValues, SimState

__all__ = ["OpStats", "SimReport", "SimResult", "simulate"]


@dataclass(frozen=True)
class SimResult:
    outputs: dict[str, np.ndarray]
    report: SimReport


class _CurrentOp(Interpreter.Listener):
    """Remembers the op being run, to name it when xDSL has no implementation for it."""

    op: Operation | None = None

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self.op = op


def _main(module: ModuleOp) -> func.FuncOp:
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    for f in funcs:
        if f.sym_name.data == "main":
            return f
    if len(funcs) == 1:
        return funcs[0]
    raise T10Error("the module to simulate needs a 'func.func @main'")


def _attr_strings(attrs: object, count: int, key: str) -> list[str | None]:
    """The string attribute `key` of each of `count` arguments / results (None when absent)."""
    entries = list(getattr(attrs, "data", ()) or ())
    values: list[str | None] = []
    for i in range(count):
        entry = entries[i] if i < len(entries) else None
        value = entry.data.get(key) if isinstance(entry, DictionaryAttr) else None
        values.append(value.data if isinstance(value, StringAttr) else None)
    return values


def _attr_names(attrs: object, count: int, kind: str) -> list[str]:
    """`t10.name` of each argument / result (`input<i>` / `output<i>` when absent)."""
    names = _attr_strings(attrs, count, NAME_ATTR)
    return [name if name is not None else f"{kind}{i}" for i, name in enumerate(names)]


def _check_inputs(main: func.FuncOp, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The inputs as the program's float32 arguments. They must be exactly the model's: every
    input by name, none else, each with its argument's shape and the dtype of the model's
    input (float32, or the type in `t10.onnx_type`: an integer type or float16, computed with
    as its exact float32 value), and within its declared range (`t10.range`,
    `t10.common.input_ranges`): nothing is cast."""
    arg_types = main.function_type.inputs.data
    names = _attr_names(main.arg_attrs, len(arg_types), "input")
    dtypes = [
        np.dtype(onnx_type or np.float32)
        for onnx_type in _attr_strings(main.arg_attrs, len(arg_types), ONNX_TYPE_ATTR)
    ]
    shapes = [tuple(t.get_shape()) if isinstance(t, TensorType) else () for t in arg_types]
    given = {name: np.asanyarray(value) for name, value in inputs.items()}  # NoValues stays
    check_inputs_match(
        list(zip(names, shapes, dtypes, strict=True)),
        {name: (value.shape, value.dtype) for name, value in given.items()},
    )
    entries = list(main.arg_attrs.data) if main.arg_attrs is not None else []
    for i, name in enumerate(names):
        entry = entries[i] if i < len(entries) else None
        declared = declared_range(name, entry if isinstance(entry, DictionaryAttr) else None)
        if declared is not None:
            check_in_range(name, given[name], declared)
    return [_as_float32(name, given[name]) for name in names]


def _as_float32(name: str, value: np.ndarray) -> np.ndarray:
    """The float32 value of an input (a float32 one as it is: it may be `NoValues`; a float16
    one widened, exactly); integer inputs must be exactly representable."""
    if value.dtype == np.float32:
        return value
    if isinstance(value, NoValues):
        return NoValues.of(value.shape, np.float32)
    if value.dtype.kind in "iu" and value.size:
        worst = int(np.max(np.abs(value.astype(np.float64))))
        if worst > EXACT_F32:
            raise T10Error(
                f"input '{name}': integer value {worst} (in magnitude) is not exactly "
                f"representable in float32, which t10 computes with (|x| <= 2**24 = "
                f"{EXACT_F32})"
            )
    return value.astype(np.float32)


def _check_verifies(module: ModuleOp) -> None:
    """The simulator runs only IR that means one thing (grids that fit the program and the
    buffers, layouts that agree, ...): the dialects' verifiers say so."""
    try:
        module.verify()
    except VerifyException as e:
        lines = str(e).strip().splitlines()
        first = lines[0] if lines else type(e).__name__
        raise T10Error(f"the module to simulate does not verify: {first}") from None


def simulate(
    module: ModuleOp,
    chip: ChipSpec,
    inputs: Mapping[str, np.ndarray],
    timing_only: bool = False,
    verified: bool = False,
) -> SimResult:
    """Run the `chip`-level `module` on `chip` with the named `inputs` (it must verify; see
    docs/DESIGN.md, the chip IR contract, for what else the simulator refuses).
    `timing_only`: the same cycles and SRAM without computing values (`t10.sim.state`); the
    outputs are then empty, and the inputs matter only where data movement carries them to
    a gather's ids. `verified`: the caller has just verified `module` unchanged since (as
    the driver's pipeline does after its last pass), so it is not verified again."""
    if not verified:
        _check_verifies(module)
    main = _main(module)
    args = _check_inputs(main, inputs)
    state = SimState(chip, timing_only=timing_only)
    report = ReportBuilder()
    current = _CurrentOp()
    interpreter = Interpreter(module, listeners=(current,))
    for functions in (
        FuncFunctions(),
        ArithFunctions(timing_only),
        MathFunctions(),
        ScfFunctions(),
        LinalgFunctions(),
        CoreFunctions(state),
        ChipFunctions(state, report),
    ):
        interpreter.register_implementations(functions)
    try:
        with np.errstate(all="ignore"):  # inf and NaN are results (as on the chip), not warnings
            results = interpreter.run_ssacfg_region(main.body, tuple(args), "main")
    except SimulationStopped as stopped:
        raise stopped.error from None
    except InterpretationError:
        name = current.op.name if current.op is not None else "?"
        raise T10Error(f"the simulator cannot run '{name}'") from None
    names = _attr_names(main.res_attrs, len(results), "output")
    types = _attr_strings(main.res_attrs, len(results), ONNX_TYPE_ATTR)
    outputs = {  # integer / bool / float16 outputs: exact floats, returned as the model's type
        name: np.asarray(value) if onnx_type is None else np.asarray(value).astype(onnx_type)
        for name, value, onnx_type in zip(names, results, types, strict=True)
    }
    if timing_only:
        outputs = {}
    saturated = module.attributes.get(FP16_SATURATED_ATTR)
    notes = [saturated.data] if isinstance(saturated, StringAttr) else []
    return SimResult(outputs=outputs, report=report.build(state, outputs, notes))
