"""Interpreter functions for the `chip` dialect (the BSP program) and the cycle report.

A superstep costs: the sum of its kernels' cycles (every core of a kernel's grid runs the same
sub-operator, so the slowest core is any core), plus for each exchange op the exchange cycles
of its busiest core's bytes, plus one sync (plus one more per all-reduce: it runs as a
reduce-scatter and an all-gather phase). Per operator label, the report adds these up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from math import prod

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl_terminator,
    register_impls,
)

from t10.common import costs, offchip
from t10.common.topologies.base import LinkClass
from t10.errors import DoesNotFit, T10Error
from t10.sim.interpreter_core import load_into
from t10.sim.links import BusiestLink, LinkBytes, add_loads, busiest_link
from t10.sim.sim_impl import sim_impl
from t10.sim.state import SimState, StepCost
from t10.t10_dialects import chip


@dataclass(frozen=True)
class OpStats:
    """What the supersteps labelled `name` cost, summed over them."""

    name: str
    compute_cycles: int
    exchange_cycles: int
    sync_cycles: int
    supersteps: int
    """BSP supersteps, one per sync: a `chip.superstep` whose all-reduce ends in an
    all-gather (a superstep of its own) counts two."""
    exchanged_bytes: int
    """Per superstep the busiest core's bytes of each exchange op, summed."""
    cores_used: int
    """Most cores any of its kernels or exchange ops runs on."""
    sram_bytes_per_core: int
    """Peak bytes live on the busiest core while these supersteps run."""
    busiest_link: BusiestLink | None = None
    """On a routing chip: the busiest link over these supersteps' exchanges together
    (t10/sim/links.py; None when they move nothing, and on other chips)."""
    wait_cycles: int = 0
    """Cycles the chip waited for loads from off-chip memory labelled `name`."""

    @property
    def cycles(self) -> int:
        return self.compute_cycles + self.exchange_cycles + self.sync_cycles + self.wait_cycles


@dataclass(frozen=True)
class Superstep:
    """One `chip.superstep` as it ran, in program order (with an all-reduce's all-gather:
    two BSP supersteps, `sync_cycles` two syncs)."""

    label: str
    compute_cycles: int
    exchange_cycles: int
    sync_cycles: int
    cores_used: int
    sram_peak_bytes: int
    """Peak bytes live on the busiest core while it ran."""
    sram_mean_bytes: int
    """Bytes live per core of the program, on average, when it ended."""
    busiest_link: BusiestLink | None = None
    """On a routing chip: its exchanges' busiest link (None when they move nothing, and on
    other chips)."""
    link_utilisation: float | None = None
    """On a routing chip, when it exchanges: the busiest link's busy cycles over its
    exchange cycles (t10/sim/links.py)."""
    wait_cycles: int = 0
    """A wait for loads from off-chip memory (labelled with the load) before a superstep:
    an entry of its own, with no compute, exchange or sync."""

    @property
    def cycles(self) -> int:
        return self.compute_cycles + self.exchange_cycles + self.sync_cycles + self.wait_cycles


@dataclass(frozen=True)
class OffchipUse:
    """The off-chip memory over a run."""

    loaded_bytes: int
    """Bytes it sent (each load's tensor once)."""
    busy_cycles: int
    """Cycles it spent loading (the loads' cycles, summed)."""
    held_bytes: int
    """Bytes of the tensors loaded from it (each once): what it holds for the program."""


@dataclass(frozen=True)
class SimReport:
    total_cycles: int
    seconds: float
    peak_sram_bytes_per_core: int
    ops: list[OpStats]
    warnings: list[str] = field(default_factory=list)
    steps: list[Superstep] = field(default_factory=list)
    """Every superstep in program order (`ops` sums them per label)."""
    link_bytes: LinkBytes | None = None
    """On a routing chip: the bytes each link carried over the run, by link class
    (`Topology.link_loads`'s arrays); None on other chips."""
    busiest_link: BusiestLink | None = None
    """On a routing chip: the busiest link over the whole run."""
    offchip: OffchipUse | None = None
    """On a chip with off-chip memory: what its loads did (None on other chips)."""

    def op(self, name: str) -> OpStats:
        """The stats of the operator label `name`."""
        for stats in self.ops:
            if stats.name == name:
                return stats
        raise T10Error(f"no superstep is labelled '{name}'; labels: {[s.name for s in self.ops]}")


class ReportBuilder:
    """Accumulates superstep costs per label, in first-seen order."""

    def __init__(self) -> None:
        self._ops: dict[str, OpStats] = {}
        self._steps: list[Superstep] = []
        self._links: LinkBytes = {}
        self._op_links: dict[str, LinkBytes] = {}

    def add(
        self, label: str, step: StepCost, sync_cycles: int, sram_bytes: int, mean_bytes: int,
        classes: Mapping[str, LinkClass],
    ) -> None:
        """One superstep; `classes`: the chip topology's link classes."""
        link = busiest_link(step.link_bytes, classes)
        self._steps.append(
            Superstep(
                label,
                step.compute_cycles,
                step.exchange_cycles,
                sync_cycles,
                step.cores_used,
                sram_bytes,
                mean_bytes,
                link,
                link.busy_cycles / step.exchange_cycles if link else None,
            )
        )
        add_loads(self._links, step.link_bytes)
        add_loads(self._op_links.setdefault(label, {}), step.link_bytes)
        t = self._ops.get(label) or OpStats(label, 0, 0, 0, 0, 0, 0, 0)
        self._ops[label] = replace(
            t,
            compute_cycles=t.compute_cycles + step.compute_cycles,
            exchange_cycles=t.exchange_cycles + step.exchange_cycles,
            sync_cycles=t.sync_cycles + sync_cycles,
            supersteps=t.supersteps + 1 + step.extra_syncs,
            exchanged_bytes=t.exchanged_bytes + step.exchanged_bytes,
            cores_used=max(t.cores_used, step.cores_used),
            sram_bytes_per_core=max(t.sram_bytes_per_core, sram_bytes),
            busiest_link=busiest_link(self._op_links[label], classes),
        )

    def add_wait(self, label: str, cycles: int, sram_bytes: int, mean_bytes: int) -> None:
        """A wait of `cycles` for the loads labelled `label`."""
        self._steps.append(Superstep(label, 0, 0, 0, 0, sram_bytes, mean_bytes,
                                     wait_cycles=cycles))
        t = self._ops.get(label) or OpStats(label, 0, 0, 0, 0, 0, 0, 0)
        self._ops[label] = replace(
            t, wait_cycles=t.wait_cycles + cycles,
            sram_bytes_per_core=max(t.sram_bytes_per_core, sram_bytes),
        )

    def build(
        self, state: SimState, outputs: Mapping[str, np.ndarray], notes: Sequence[str] = ()
    ) -> SimReport:
        """The report; `notes`: the compiler's warnings, before the simulation's."""
        ops = list(self._ops.values())
        routes, classes = state.chip.topology.routes, state.chip.topology.link_classes()
        total = sum(op.cycles for op in ops)
        return SimReport(
            total_cycles=total,
            seconds=total / state.chip.clock_hz,
            peak_sram_bytes_per_core=int(state.peak.max(initial=0)),
            ops=ops,
            warnings=[*notes, *state.overflow_warnings(outputs)],
            steps=self._steps,
            link_bytes=self._links if routes else None,
            busiest_link=busiest_link(self._links, classes),
            offchip=None if state.chip.offchip is None else OffchipUse(
                state.offchip_loaded, state.offchip_busy, sum(state.offchip_tensors.values())
            ),
        )


@register_impls
class ChipFunctions(InterpreterFunctions):
    def __init__(self, state: SimState, report: ReportBuilder):
        self.state = state
        self.report = report

    @sim_impl(chip.ProgramOp)
    def run_program(self, interpreter: Interpreter, op: chip.ProgramOp, args: PythonValues):
        cores = op.cores.value.data
        if cores > self.state.chip.cores:
            raise T10Error(
                f"chip.program '{op.label.data}' runs on {cores} cores but chip "
                f"'{self.state.chip.name}' has {self.state.chip.cores}"
            )
        self.state.program_cores = cores
        try:
            return interpreter.run_ssacfg_region(op.body, (), "chip.program")
        finally:
            self.state.program_cores = 0

    @impl_terminator(chip.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: chip.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @sim_impl(chip.SuperstepOp)
    def run_superstep(self, interpreter: Interpreter, op: chip.SuperstepOp, args: PythonValues):
        label = op.label.data
        if self.state.step is not None:
            raise T10Error(f"chip.superstep '{label}' cannot nest in another superstep")
        self._wait_for_loads(op)
        step = self.state.step = StepCost()
        try:
            interpreter.run_ssacfg_region(op.compute, (), "compute")
            interpreter.run_ssacfg_region(op.exchange, (), "exchange")
        finally:
            self.state.step = None
        sram = max(int(self.state.live.max(initial=0)), step.transient_peak)
        syncs = (1 + step.extra_syncs) * costs.sync_cycles(self.state.chip)
        cores = self.state.program_cores or self.state.chip.cores
        self.report.add(label, step, syncs, sram, self.state.live_total // cores,
                        self.state.chip.topology.link_classes())
        self.state.clock += step.compute_cycles + step.exchange_cycles + syncs
        return ()

    def _wait_for_loads(self, step: chip.SuperstepOp) -> None:
        """Before `step` runs: wait until the loads from off-chip memory it reads from have
        arrived, with every load of the same label (one operator's loads are waited for
        together; the wait is labelled with the one that arrives last)."""
        state = self.state
        labels = {
            label
            for buffer, (_, label) in state.arriving.items()
            if any(step.is_ancestor(use.operation) for use in buffer.uses)
        }
        if not labels:
            return
        group = [(b, at, lb) for b, (at, lb) in state.arriving.items() if lb in labels]
        for buffer, _, _ in group:
            del state.arriving[buffer]
        _, ready, label = max(group, key=lambda g: g[1])
        if ready > state.clock:
            cores = state.program_cores or state.chip.cores
            self.report.add_wait(label, ready - state.clock, int(state.live.max(initial=0)),
                                 state.live_total // cores)
            state.clock = ready

    @sim_impl(chip.LoadOp)
    def run_load(self, interpreter: Interpreter, op: chip.LoadOp, args: PythonValues):
        state, label = self.state, op.label.data
        what = f"chip.load '{label}'"
        memory = state.chip.offchip
        if memory is None:
            raise T10Error(
                f"{what}: chip '{state.chip.name}' has no off-chip memory to load from (a chip "
                "file's 'offchip' object, docs/chips.md); plan the model for this chip again"
            )
        host, buffer = args
        layout = load_into(state, op, host, buffer, what)
        per_core, tensor_bytes = buffer.bytes_per_core, prod(layout.shape) * buffer.elem_bytes
        if op.source not in state.offchip_tensors:
            state.offchip_tensors[op.source] = tensor_bytes
            held = sum(state.offchip_tensors.values())
            if held > memory.capacity_bytes:
                raise DoesNotFit(
                    f"{what}: the tensors loaded from off-chip memory so far take {held:,} "
                    f"bytes there, more than chip '{state.chip.name}' holds "
                    f"({memory.capacity_bytes:,} bytes)"
                )
        start = max(state.clock, state.offchip_free)
        cycles = offchip.load_cycles(
            memory, state.chip.exchange_cycles_per_byte, tensor_bytes, per_core
        )
        state.offchip_free = start + cycles
        state.offchip_loaded += tensor_bytes
        state.offchip_busy += cycles
        state.arriving[op.buffer] = (state.offchip_free, label)
        return ()
