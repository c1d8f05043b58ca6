"""The library API: build the context, compile an ONNX model, simulate it, check it.

```
  options = CompileOptions(chip="ipu-mk2", precision="fp16")   # every option has a default
  compiled = compile_model("model.onnx", options)              # Compiled: module, planned, chip
  result = run_model("model.onnx", options, check=check_tolerance("fp16"))
  result.report.total_cycles, result.outputs["output"], result.check.passed
```

The `t10` command, the benchmarks, the `t10-sim` target and the tests all compile and run
through these functions; the passes run in one `xdsl.passes.PassPipeline` whose callback
verifies the IR after every pass, so a pass that breaks the IR is named.
"""

from __future__ import annotations

import gc
import os
import pathlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import VerifyException

from t10.common.attr_names import PLANNER_ATTR, PRECISION_ATTR, SHAPES_ONLY_ATTR
from t10.common.chip_spec import ChipSpec
from t10.common.locations import failing_op, where_from
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.frontend.loading import read_model
from t10.outputs.report import (
    CheckReport,
    InputReader,
    RunReport,
    Tolerance,
    build_report,
    check_outputs,
    input_specs,
    kernel_ops,
    planned_sram,
    random_inputs,
    recorded_bound,
    recorded_ops,
)
from t10.pass_instrumentation import PassObserver, PassTime
from t10.passes.t10_compile import LEVELS, pipeline
from t10.passes.t10_plan_search import T10PlanSearch
from t10.planning.compile_options import DEFAULTS, CompileOptions, given_options
from t10.reference import reference_outputs
from t10.sim.simulator import SimReport, simulate
from t10.t10_dialects import DIALECTS

__all__ = [
    "CHECK_TOLERANCES",
    "DEFAULTS",
    "CompileOptions",
    "Compiled",
    "InputReader",
    "RunResult",
    "check_against_reference",
    "check_tolerance",
    "compile_model",
    "compile_module",
    "load_model",
    "make_context",
    "run_model",
    "run_passes",
    "simulate_compiled",
]

CHECK_TOLERANCES: dict[str, Tolerance] = {
    "fp32": Tolerance(rtol=1e-4, atol=1e-5, atol_rms=1e-6),
    "fp16": Tolerance(rtol=1e-2, atol=1e-3, atol_rms=1e-2),
}
"""Default tolerance of a check against onnxruntime per storage precision (with fp32
partials): fp16 storage rounds every intermediate to 11 significant bits, so its absolute
floor follows each output's magnitude."""

FP16_PARTIALS_TOLERANCE = Tolerance(rtol=3e-2, atol=1e-3, atol_rms=3e-2)
"""fp16 partial sums round at every step and at every add of a cross-core reduction: the
error of a sum of S partials grows like S·2^-11 of the partial sums' magnitude at worst
(about √S·2^-11 typically), so the floor is three times fp32 partials' for the step and
core counts plans use."""


def check_tolerance(precision: str, partials: str = "fp32") -> Tolerance:
    """The default tolerance of a check at `precision` storage with `partials` partial sums."""
    if partials == "fp16":
        return FP16_PARTIALS_TOLERANCE
    return CHECK_TOLERANCES[precision]


def make_context() -> Context:
    """A context that knows xDSL's dialects and ours (for passes and printing)."""
    ctx = Context()
    for name, factory in {**get_all_dialects(), **DIALECTS}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


def run_passes(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    observer: PassObserver | None = None,
    verify_each: bool = True,
) -> None:
    """Apply `passes` to `module` in order, verifying the IR after each (`verify_each`), or
    only after the last (verifying costs about what a pass does: half the compile time of a
    long graph); the `observer` is told each pass as it starts, then its IR and time. IR that
    does not verify is an internal error naming the pass (without `verify_each`: the passes,
    and how to name the one)."""
    started = time.perf_counter()
    names = [p.name for p in passes]

    def callback(previous: ModulePass | None, op: ModuleOp, next_pass: ModulePass | None) -> None:
        nonlocal started
        if previous is None:
            if observer is not None and next_pass is not None:
                observer.stage(next_pass.name)
            started = time.perf_counter()
            return
        ran = time.perf_counter()
        if verify_each or next_pass is None:
            try:
                op.verify()
            except VerifyException as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                bad = failing_op(op, e)
                source = None if bad is None else where_from(bad)
                at = "" if source is None else f" at {source}"
                after, how = f"pass '{previous.name}'", ""
                if not verify_each and len(names) > 1:
                    after = f"passes {', '.join(names)}"
                    how = (" (compile with --verify-each, or call with verify_each=True, to name "
                           "the pass that broke it)")
                raise T10Error(f"internal error: the IR after {after} does not verify{at}: "
                               f"{first}{how}") from None
        if observer is not None:
            seconds = PassTime(previous.name, ran - started, time.perf_counter() - ran)
            observer.after_pass(previous, op, seconds)
            if next_pass is not None:
                observer.stage(next_pass.name)
        started = time.perf_counter()

    with collector_paused():
        PassPipeline(tuple(passes), callback).apply(make_context(), module)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for a while: the passes make and drop millions
    of objects but few cycles, and its sweeps over the whole IR cost more time (some 5% of
    compiling BERT-base) than the memory they return before the passes end."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _check_options(options: CompileOptions, emit: str) -> ChipSpec:
    if emit not in LEVELS:
        raise T10Error(f"unknown IR level '{emit}': choose from {', '.join(LEVELS)}")
    return given_options(options).validate()


@dataclass
class Compiled:
    """A compiled module, and a clone taken right after plan search (plans visible)."""

    module: ModuleOp
    planned: ModuleOp
    chip: ChipSpec
    bound: int | None = None
    """The model's lower bound (`t10.outputs.report.model_bound_of`), taken as the module
    entered the plan search (the same for every planner) and recorded on it (`recorded_bound`)."""


def compile_module(
    module: ModuleOp,
    options: CompileOptions = DEFAULTS,
    *,
    emit: str = "chip",
    observer: PassObserver | None = None,
    verify_each: bool = True,
) -> Compiled:
    """Lower the linalg `module` in place with the passes of `t10.passes.t10_compile.pipeline`
    down to the `emit` level (`observer`, `verify_each`: see `run_passes`)."""
    spec = _check_options(options, emit)
    planned: list[ModuleOp] = []

    class KeepPlans:
        def stage(self, name: str) -> None:
            if observer is not None:
                observer.stage(name)

        def after_pass(
            self, p: ModulePass, module: ModuleOp, time: PassTime | None = None
        ) -> None:
            if isinstance(p, T10PlanSearch):
                planned.append(module.clone())
            if observer is not None:
                observer.after_pass(p, module, time)

    passes = pipeline(options, emit)
    run_passes(module, passes, KeepPlans(), verify_each)
    return Compiled(
        module=module, planned=planned[0], chip=spec, bound=recorded_bound(planned[0])
    )


def compile_model(
    model: str | os.PathLike[str] | onnx.ModelProto,
    options: CompileOptions = DEFAULTS,
    *,
    emit: str = "chip",
    observer: PassObserver | None = None,
    input_ranges: Mapping[str, tuple[int, int]] | None = None,
    dims: Mapping[str, int] | None = None,
    verify_each: bool = True,
) -> Compiled:
    """Import the ONNX `model` (a file or a proto; `input_ranges`: the declared ranges of
    integer inputs, `dims`: the sizes of symbolic dimensions, `import_onnx`) and compile it
    (`compile_module`)."""
    module = _imported(model, options, emit, observer, input_ranges, dims)
    return compile_module(module, options, emit=emit, observer=observer,
                          verify_each=verify_each)


def _imported(
    model: str | os.PathLike[str] | onnx.ModelProto,
    options: CompileOptions,
    emit: str,
    observer: PassObserver | None,
    input_ranges: Mapping[str, tuple[int, int]] | None,
    dims: Mapping[str, int] | None,
) -> ModuleOp:
    """`model` imported, once the options are checked (before the model is read)."""
    _check_options(options, emit)
    if observer is not None:
        observer.stage("import")
    return import_onnx(model, input_ranges, dims)


def load_model(path: str | os.PathLike[str]) -> onnx.ModelProto:
    """The ONNX model in the file `path`, its external data read as the frontend reads it."""
    return read_model(pathlib.Path(path))


def check_against_reference(
    model: onnx.ModelProto,
    inputs: Mapping[str, np.ndarray],
    outputs: Mapping[str, np.ndarray],
    tolerance: Tolerance,
) -> CheckReport:
    """Compare simulated `outputs` with onnxruntime's on the same `inputs` (run in fp32)."""
    return check_outputs(outputs, reference_outputs(model, dict(inputs)), tolerance)


@dataclass
class RunResult:
    report: RunReport
    outputs: dict[str, np.ndarray]
    check: CheckReport | None
    compile_seconds: float
    """Importing and compiling the model."""
    simulate_seconds: float
    """Simulating it (not the check against onnxruntime)."""
    sim: SimReport
    """What the simulator measured, superstep by superstep (`report` is built from it)."""


def run_model(
    model_path: str | onnx.ModelProto,
    options: CompileOptions = DEFAULTS,
    *,
    inputs: Mapping[str, np.ndarray] | InputReader | None = None,
    seed: int = 0,
    check: Tolerance | None = None,
    timing_only: bool = False,
    observer: PassObserver | None = None,
    input_ranges: Mapping[str, tuple[int, int]] | None = None,
    dims: Mapping[str, int] | None = None,
    verify_each: bool = True,
) -> RunResult:
    """Compile and simulate `model_path` (a file, or a model in memory) on `inputs` (default:
    seeded random ones; an `InputReader` is given the compiled model's inputs and returns
    the arrays, so it can check a file against them before reading it); `check` compares
    with onnxruntime (run in fp32 whatever the precision) within that tolerance
    (`check_tolerance` gives the default one). `timing_only`
    simulates cycles and SRAM without values (the same report, no outputs; the inputs matter
    only as a gather's ids), so it cannot `check`; a model in the shapes-only form
    (`t10.common.shapes_only`) runs only so. The `observer` is told the stages:
    `"import"`, each pass, `"simulate"` and, with `check`, `"check"`; `verify_each`: see
    `run_passes`."""
    if check is not None and not isinstance(check, Tolerance):  # untyped callers
        raise T10Error(f"check must be a Tolerance (check_tolerance(precision) gives the "
                       f"default one) or None, not {type(check).__name__} {check!r}")
    if timing_only and check is not None:
        raise T10Error("a timing-only simulation computes no values to check")
    start = time.perf_counter()
    module = _imported(model_path, options, "chip", observer, input_ranges, dims)
    if not timing_only and SHAPES_ONLY_ATTR in module.attributes:
        name = model_path if isinstance(model_path, str) else model_path.graph.name
        raise T10Error(
            f"ONNX model '{name}' is in the shapes-only form (its weights are declared "
            "without data, as t10 zoo --shapes-only writes them), so it cannot run with values: "
            "simulate it with --timing-only, or write the model without --shapes-only"
        )
    compiled = compile_module(module, options, observer=observer, verify_each=verify_each)
    compiled_at = time.perf_counter()
    if observer is not None:
        observer.stage("simulate")

    # the pipeline verified the module after its last pass
    simulated = simulate_compiled(
        compiled.module, compiled.chip, inputs, seed, timing_only,
        check=None if check is None else _reference_check(model_path, check, observer),
        model=model_path if isinstance(model_path, str) else None,
        verified=True,
    )
    return RunResult(simulated.report, simulated.outputs, simulated.check,
                     compiled_at - start, simulated.seconds, simulated.sim)


def _reference_check(
    model_path: str | onnx.ModelProto, tolerance: Tolerance, observer: PassObserver | None
) -> Callable[[Mapping[str, np.ndarray], Mapping[str, np.ndarray]], CheckReport]:
    """What checks simulated outputs against onnxruntime's on the same inputs."""

    def check(inputs: Mapping[str, np.ndarray], outputs: Mapping[str, np.ndarray]
              ) -> CheckReport:
        if observer is not None:
            observer.stage("check")
        model = load_model(model_path) if isinstance(model_path, str) else model_path
        return check_against_reference(model, inputs, outputs, tolerance)

    return check


@dataclass
class Simulated:
    """What `simulate_compiled` gives: the run report, the outputs (none when timing only),
    the check against onnxruntime (if asked) and what the simulator measured."""

    report: RunReport
    outputs: dict[str, np.ndarray]
    check: CheckReport | None
    sim: SimReport
    seconds: float
    """Simulating (not the check)."""


def simulate_compiled(
    module: ModuleOp,
    chip: ChipSpec,
    inputs: Mapping[str, np.ndarray] | InputReader | None = None,
    seed: int = 0,
    timing_only: bool = False,
    *,
    check: Callable[[Mapping[str, np.ndarray], Mapping[str, np.ndarray]], CheckReport]
    | None = None,
    model: str | None = None,
    verified: bool = False,
) -> Simulated:
    """Simulate a `chip`-level module on `inputs` (default: seeded random ones; an
    `InputReader` is given the module's inputs, as in `run_model`) and build its report
    from the module alone: the plans, estimates and bounds the plan search recorded on it
    (`recorded_ops`, `recorded_bound`; they survive every lowering and the text IR), the
    planner, precision and planned bytes from its attributes. So `t10 run` and the
    `t10-sim` target at the end of a stage-by-stage `t10-opt` pipeline give one report. A
    module with no record (planned by an older t10) has each operator's kind from its
    kernels and no plans. `check(inputs, outputs)` compares with a reference; `model` is the
    report's model file; `verified`: see `simulate`."""
    if inputs is None:
        inputs = random_inputs(input_specs(module), seed, timing_only)
    elif callable(inputs):
        inputs = inputs(input_specs(module))
    start = time.perf_counter()
    result = simulate(module, chip, inputs, timing_only, verified=verified)
    seconds = time.perf_counter() - start
    checked = None if check is None else check(inputs, result.outputs)
    planner = module.attributes.get(PLANNER_ATTR)
    precision = module.attributes.get(PRECISION_ATTR)
    recorded = recorded_ops(module)
    report = build_report(
        chip,
        result.report,
        kernel_ops(module) if recorded is None else recorded,
        model=model,
        planner=planner.data if isinstance(planner, StringAttr) else None,
        precision=precision.data if isinstance(precision, StringAttr) else None,
        check=checked,
        planned_sram_bytes=planned_sram(module),
        bound_cycles=recorded_bound(module),
    )
    return Simulated(report, result.outputs, checked, result.report, seconds)
