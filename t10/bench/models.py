"""Whole-model benchmark (`t10 bench`): zoo models × batch sizes × chips × planner
configurations, each case compiled and simulated timing-only (`t10 run --timing-only`).

A *case* is one (model, layers, batch, seq, chip, planner configuration, precision), and for
a decoder served (`--phases`) its phase and, in decode, its context (the cached tokens). Its
result is a plain dict (`run_case`; fields: docs/bench.md) so that it travels back from a Ray
worker as it is. `run_sweep` schedules the cases of a `Sweep` on an executor (`SerialExecutor`
in this process, or `t10.bench.ray.RayExecutor`): with the default batches (1, 2, 4, ...) a
model's next batch is submitted once every planner has finished the previous one and at least
one of them fitted, so the sweep's cases, and therefore its table, do not depend on the
executor or on the order in which cases finish.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

import onnx
from xdsl.utils.exceptions import DiagnosticException

from t10.common.chip_spec import chip_parameter, load_chip, variant_changes
from t10.driver import DEFAULTS, CompileOptions, run_model
from t10.errors import DoesNotFit, T10Error
from t10.examples import zoo
from t10.outputs.report import MOVES
from t10.planning.planners import planners

__all__ = [
    "BINDINGS",
    "DEFAULT_LAYERS",
    "MAX_BATCH",
    "DEFAULT_CONFIGS",
    "PLANNER_CONFIGS",
    "QUICK",
    "REFERENCE",
    "SHAPES_ONLY_BYTES",
    "Case",
    "Executor",
    "SerialExecutor",
    "Sweep",
    "make_sweep",
    "run_case",
    "run_sweep",
]

_CONFIGS = sorted(((p, config) for p in planners() for config in p.bench),
                  key=lambda pc: pc[1].column)
PLANNER_CONFIGS: dict[str, CompileOptions] = {
    config.name: replace(CompileOptions(planner=p.name), **config.options())
    for p, config in _CONFIGS
}
"""Planner configuration name → the compile options it sets (a case sets the chip and the
precision), from every planner's `Planner.bench`: T10 (rotating
plans, the greedy memory reconciliation), the vendor-style baseline (operators planned one
at a time, spatial plans within a share of SRAM for temporaries), T10's fastest plan per
operator without memory reconciliation (it may not fit), the Roller-style baseline
(every tensor in a home over all cores, load-compute-store), T10 with its plans placed
linearly (`t10-linear`: the gain of placing them, on a mesh or a multi-chip system), and T10's
plans with the weights kept off chip loaded right before their operator (`t10-no-overlap`)
or at most one operator ahead (`t10-next-op`): the gain of planning the loads, on a chip with
off-chip memory."""
DEFAULT_CONFIGS = tuple(config.name for _, config in _CONFIGS if config.default)
"""The configurations `t10 bench` runs unless told which: all but `t10-linear`,
`t10-no-overlap` and `t10-next-op`."""

REFERENCE = "t10"
"""The configuration whose speedup over every other one the table shows."""

DEFAULT_LAYERS: dict[str, int] = {
    "bert-base": 2,
    "bert-large": 2,
    "vit-base": 2,
    "vit-large": 2,
    "opt-1.3b": 2,
    "llama2-7b": 1,
    "resnet50": 16,
    "nerf": 8,
}
"""Layers per model when `--layers` is not given: a few layers, so that a sweep over every
batch finishes in minutes per model on a small machine (identical layers plan alike, so the
cycles grow about linearly with depth); Llama 2 7B's 32 layers need 13 GB of fp16 weights,
against the IPU MK2's 0.9 GB of SRAM: one layer (405 MB in fp16) is what fits. ResNet-50's
blocks differ from stage to stage, so it runs whole (16 blocks, 51 MB of fp16 weights; its
planning takes minutes per batch: docs/zoo.md). NeRF runs its whole 8-layer MLP."""

MAX_BATCH = 128
"""The default batches double from 1 up to at most this."""

QUICK: dict[str, Any] = {"models": ("bert-base", "vit-base"), "layers": 1, "batches": (1, 2)}
"""`--quick`: BERT-base and ViT-base, one layer, batches 1 and 2 (about two minutes on two
cores)."""


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    model: str
    layers: int
    batch: int
    seq: int
    chip: str
    planner: str
    """A key of `PLANNER_CONFIGS`."""
    precision: str
    config: zoo.ZooConfig | None = None
    """Replaces the model's published configuration (tests shrink models with it)."""
    phase: str | None = None
    """None: the model as `t10 zoo` writes it without `--phase`; a decoder's `prefill` (the
    prompt's `seq` tokens) or `decode` (`seq` is 1: one new token per sequence) form
    (`zoo.PHASES`, docs/zoo.md "Prefill and decode")."""
    context: int | None = None
    """In decode, the cached tokens before the new one (the KV cache's positions); else None."""

    @property
    def tokens(self) -> int | None:
        """The tokens one run serves: a prefill's batch × seq, a decode step's batch (one new
        token per sequence); None without a phase."""
        return None if self.phase is None else self.batch * self.seq


SHAPES_ONLY_BYTES = 1 << 28
"""A case's model is built in the shapes-only form (its weights declared without data,
`t10.common.shapes_only`; the same cycles, plans and SRAM timing only) when its weights and
constants would take more bytes than this (256 MiB): Llama-2-7B's or OPT-1.3B's layers."""

_cached: tuple[tuple[Any, ...], onnx.ModelProto] | None = None


def _model(case: Case) -> onnx.ModelProto:
    """The case's zoo model; the last one built is kept, so the planners of one row (run one
    after another in a process) build it once."""
    global _cached
    key = (case.model, case.layers, case.batch, case.seq, case.config, case.phase,
           case.context)
    if _cached is None or _cached[0] != key:
        _cached = None  # free the previous model before building the next
        entry = zoo.get(case.model)
        form = {"config": case.config, "phase": case.phase, "context": case.context}
        model, nbytes = entry.build_shapes_only(case.batch, case.seq, case.layers, **form)
        if nbytes <= SHAPES_ONLY_BYTES:
            model = entry.build(case.batch, case.seq, case.layers, **form)
        _cached = (key, model)
    return _cached[1]




def case_fields(case: Case) -> dict[str, Any]:
    """What every result of `case` holds: the case, its chip's SRAM per core and the chip
    parameters it varies."""
    result: dict[str, Any] = asdict(case)
    chip = load_chip(case.chip)
    result["sram_bytes_per_core"] = chip.sram_bytes_per_core
    result["varied"] = {path: chip_parameter(chip, path)
                        for path, _ in variant_changes(case.chip)[1]}
    return result


BINDINGS = ("compute", "exchange", "offchip")
"""The resources a run's `binding` names: the operators' compute and sync phases, the
exchange (the operators' exchange phases and the moves between them), the off-chip memory
(its busy cycles: on a chip with one)."""


def binding(parts: Mapping[str, int | None]) -> str:
    """The resource of `BINDINGS` with the most cycles in `parts` (a part that is None is not
    there), the first of them on a tie."""
    return max((name for name in BINDINGS if parts.get(name) is not None),
               key=lambda name: parts[name] or 0)


def run_case(case: Case) -> dict[str, Any]:
    """Compile and simulate one case (timing only). A `T10Error` (the model does not fit, an
    unsupported size) is the result's `status` and `error`, not an exception."""
    result = case_fields(case)
    try:
        options = replace(PLANNER_CONFIGS[case.planner], chip=case.chip, precision=case.precision)
        run = run_model(_model(case), options, timing_only=True, verify_each=False)
    except DiagnosticException as e:  # T10Error included
        unfit = isinstance(e, DoesNotFit)
        return {**result, "status": "does not fit" if unfit else "error",
                "error": " ".join(str(e).split()),
                "needed_sram_bytes_per_core": e.needed_bytes if unfit else None}
    report = run.report
    # the simulated ops, whose simulated figures are all set; `X/load` rows (the waits for
    # off-chip loads) are neither work nor moves
    ops = [op for op in report.ops if op.cycles is not None]
    work = [op for op in ops if op.kind not in (*MOVES, "load")]
    parts = {
        "compute_cycles": sum(op.compute_cycles or 0 for op in work),
        "exchange_cycles": sum(op.exchange_cycles or 0 for op in work),
        "sync_cycles": sum(op.sync_cycles or 0 for op in work),
        "relayout_cycles": sum(op.cycles or 0 for op in ops if op.kind in MOVES),
    }
    offchip = report.offchip
    cycles, bound = report.total_cycles, report.bound_cycles
    return {
        **result,
        "status": "ok",
        "error": None,
        "needed_sram_bytes_per_core": None,
        "cycles": cycles,
        "seconds": report.seconds,
        "peak_sram_bytes_per_core": report.peak_sram_bytes_per_core,
        "bound_cycles": bound,
        **parts,
        "tokens_per_second": (None if case.tokens is None or not report.seconds
                              else case.tokens / report.seconds),
        "roofline_fraction": bound / cycles if bound is not None and cycles else None,
        "binding": binding({
            "compute": parts["compute_cycles"] + parts["sync_cycles"],
            "exchange": parts["exchange_cycles"] + parts["relayout_cycles"],
            "offchip": None if offchip is None else offchip.busy_cycles,
        }),
        "offchip_busy_cycles": None if offchip is None else offchip.busy_cycles,
        "wait_cycles": None if offchip is None else offchip.wait_cycles,
        "compile_seconds": run.compile_seconds,
        "simulate_seconds": run.simulate_seconds,
    }


# --------------------------------------------------------------------------------------------
# The sweep
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sweep:
    models: tuple[str, ...]
    layers: Mapping[str, int]
    """Per model."""
    batches: tuple[int, ...] | None
    """None: 1, 2, 4, ... up to `max_batch`, until a batch where no planner fits."""
    chips: tuple[str, ...]
    planners: tuple[str, ...]
    precision: str = "fp16"
    seq: int | None = None
    """None: each model's default (`t10 zoo`: 128 tokens, ViT 197)."""
    max_batch: int = MAX_BATCH
    configs: Mapping[str, zoo.ZooConfig] = field(default_factory=dict)
    """Per model, a configuration replacing the published one (tests)."""
    vary: str | None = None
    """The chip parameter whose values the chips are variants of (`chips` are then
    `BASE[vary=VALUE]`, `t10.common.chip_spec.vary_chip`)."""
    phases: tuple[str, ...] | None = None
    """None: each model as it is; else every model (a decoder) in each of these serving forms
    (`zoo.PHASES`): prefill of `seq` tokens, decode of one token after each of `contexts`."""
    contexts: tuple[int, ...] | None = None
    """Decode's cached tokens (None: the zoo's default, 128)."""

    def cases(self, model: str, chip: str, batch: int) -> list[Case]:
        """Every case of one model, chip and batch: per phase and context, per planner."""
        entry = zoo.get(model)
        seq = entry.default_seq if self.seq is None else self.seq
        forms: list[tuple[str | None, int, int | None]] = [(None, seq, None)]
        if self.phases is not None:
            contexts = self.contexts or (entry.default_seq,)
            forms = [form for phase in self.phases
                     for form in ([(phase, seq, None)] if phase == "prefill"
                                  else [(phase, 1, context) for context in contexts])]
        return [
            Case(model, self.layers[model], batch, tokens, chip, planner, self.precision,
                 self.configs.get(model), phase, context)
            for phase, tokens, context in forms
            for planner in self.planners
        ]


def make_sweep(
    models: Sequence[str] | None = None,
    layers: int | None = None,
    batches: Sequence[int] | None = None,
    chips: Sequence[str] = (DEFAULTS.chip,),
    planners: Sequence[str] | None = None,
    precision: str = "fp16",
    seq: int | None = None,
    max_batch: int = MAX_BATCH,
    quick: bool = False,
    configs: Mapping[str, zoo.ZooConfig] | None = None,
    vary: tuple[str, Sequence[str]] | None = None,
    phases: Sequence[str] | None = None,
    contexts: Sequence[int] | None = None,
) -> Sweep:
    """A checked sweep: every name known, every size valid (a `T10Error` otherwise).
    `None` means the default: every zoo model at `DEFAULT_LAYERS`, doubling batches, every
    available planner configuration; `quick` replaces the defaults with `QUICK`. `vary`,
    (a chip parameter's dotted path, its values): the chips are the variants of each of
    `chips` with the parameter at each value (`BASE[path=value]`) instead. `phases`: every
    model, a decoder, in these serving forms (`zoo.PHASES`), decode after each of `contexts`
    cached tokens (default the zoo's 128)."""
    if quick:
        models = models or QUICK["models"]
        layers = layers or QUICK["layers"]
        batches = batches or QUICK["batches"]
    models = tuple(dict.fromkeys(models or zoo.ZOO))
    for name in models:
        zoo.get(name)
    planners = tuple(dict.fromkeys(planners or DEFAULT_CONFIGS))
    for name in planners:
        if name not in PLANNER_CONFIGS:
            raise T10Error(f"unknown planner configuration '{name}': choose from "
                           f"{', '.join(PLANNER_CONFIGS)}")
    if REFERENCE not in planners:
        raise T10Error(f"the planners must include '{REFERENCE}', whose speedups the table "
                       "shows")
    if vary is not None:
        path, values = vary
        chips = [f"{chip}[{path}={value}]" for chip in chips for value in values]
    for chip in chips:
        load_chip(chip)
    if batches is not None and (not batches or min(batches) < 1):
        raise T10Error(f"batch sizes must be positive integers, got {list(batches)}")
    if max_batch < 1:
        raise T10Error(f"the largest batch must be a positive integer, got {max_batch}")
    configs = dict(configs or {})
    per_model = {m: layers or DEFAULT_LAYERS.get(m, 1) for m in models}
    forms = _forms(models, phases, contexts)
    for m in models:  # sizes checked on the graph alone (no weights made)
        for phase, context in forms:
            zoo.get(m).build_shapes_only(1, None if phase == "decode" else seq, per_model[m],
                                         config=configs.get(m), phase=phase, context=context)
    return Sweep(models, per_model, None if batches is None else tuple(sorted(set(batches))),
                 tuple(dict.fromkeys(chips)), planners, precision, seq, max_batch, configs,
                 None if vary is None else vary[0],
                 None if phases is None else tuple(dict.fromkeys(phases)),
                 None if contexts is None else tuple(sorted(set(contexts))))


def _forms(models: Sequence[str], phases: Sequence[str] | None,
           contexts: Sequence[int] | None) -> list[tuple[str | None, int | None]]:
    """The (phase, context) forms a sweep's models run in, once `phases` and `contexts` are
    checked: every model a decoder, contexts only for decode."""
    if phases is None:
        if contexts is not None:
            raise T10Error("--contexts (decode's cached tokens) applies only with --phases "
                           "decode")
        return [(None, None)]
    if not phases:
        raise T10Error(f"--phases needs at least one of {', '.join(zoo.PHASES)}")
    for phase in phases:
        if phase not in zoo.PHASES:
            raise T10Error(f"unknown phase '{phase}': choose from {', '.join(zoo.PHASES)}")
    others = [m for m in models if not zoo.get(m).decoder]
    if others:
        decoders = ", ".join(name for name, m in zoo.ZOO.items() if m.decoder)
        raise T10Error(f"--phases applies only to the decoders ({decoders}), not to "
                       f"{', '.join(others)}: the other models have no KV cache")
    if contexts is not None:
        if "decode" not in phases:
            raise T10Error("--contexts (decode's cached tokens) applies only with --phases "
                           "decode")
        if not contexts or min(contexts) < 1:
            raise T10Error(f"contexts must be positive integers, got {list(contexts)}")
    return [(phase, context) for phase in dict.fromkeys(phases)
            for context in ([None] if phase == "prefill" else list(contexts or [None]))]


class Executor(Protocol):
    """Runs cases: `submit` one, `next_result` waits for any submitted one to finish."""

    def submit(self, case: Case) -> None: ...

    def next_result(self) -> dict[str, Any]: ...


class SerialExecutor:
    """Runs each case in this process, in submission order."""

    def __init__(self) -> None:
        self.queue: deque[Case] = deque()

    def submit(self, case: Case) -> None:
        self.queue.append(case)

    def next_result(self) -> dict[str, Any]:
        return run_case(self.queue.popleft())


Progress = Callable[[int, int, dict[str, Any]], None]
"""Called after each case with (cases done, cases submitted so far, its result)."""


def run_sweep(
    sweep: Sweep, executor: Executor, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """The results of every case of `sweep`, ordered by model, chip, batch and planner."""
    submitted = 0
    waiting: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    expected: dict[tuple[str, str, int], int] = {}
    results: list[dict[str, Any]] = []

    def submit(model: str, chip: str, batch: int) -> None:
        nonlocal submitted
        cases = sweep.cases(model, chip, batch)
        waiting[(model, chip, batch)] = []
        expected[(model, chip, batch)] = len(cases)
        for case in cases:
            executor.submit(case)
        submitted += len(cases)

    for model in sweep.models:
        for chip in sweep.chips:
            for batch in sweep.batches or (1,):
                submit(model, chip, batch)
    while waiting:
        result = executor.next_result()
        results.append(result)
        if progress is not None:
            progress(len(results), submitted, result)
        key = (result["model"], result["chip"], result["batch"])
        done = waiting[key]
        done.append(result)
        if len(done) < expected[key]:
            continue
        del waiting[key]
        model, chip, batch = key
        fitted = any(r["status"] == "ok" for r in done)
        if sweep.batches is None and fitted and 2 * batch <= sweep.max_batch:
            submit(model, chip, 2 * batch)
    order = {name: i for i, name in enumerate(sweep.planners)}
    models = {name: i for i, name in enumerate(sweep.models)}
    chips = {name: i for i, name in enumerate(sweep.chips)}
    phases = {name: i for i, name in enumerate(sweep.phases or ())}
    return sorted(results, key=lambda r: (models[r["model"]], chips[r["chip"]], r["batch"],
                                          phases.get(r["phase"], -1), r["context"] or 0,
                                          order[r["planner"]]))
