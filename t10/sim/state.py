"""What the simulator keeps while a program runs: the per-core value representation, the
buffers, each core's SRAM accounting, and the running cost of the current superstep.

Values while simulating:
- `index`: a Python int (uniform over cores) or an int64 array with one entry per chip core;
- a host tensor (function argument, `arith.constant dense<...>`, `core.store`): a numpy array;
- a `!core.buffer<S x T>` on N cores: a `Buffer` whose data is an `(N, *S)` array of T
  (float32 or float16: writing into an f16 buffer rounds to nearest even);
- kernel-body floats: numpy float32 arrays (one element per core and loop point).

Every op is vectorized over cores: there is no Python loop over cores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np

from t10.errors import T10Error
from t10.sim import costs
from t10.sim.chip_spec import ChipSpec

Index = int | np.ndarray
"""A per-core index value: uniform int, or an int64 array with one entry per chip core."""


def per_core(value: Index, cores: int) -> np.ndarray:
    """The value on each of the first `cores` cores."""
    if isinstance(value, np.ndarray):
        return value[:cores]
    return np.full(cores, value, dtype=np.int64)


def uniform(value: Index, what: str) -> int:
    """A value every core agrees on (e.g. a loop bound)."""
    if isinstance(value, np.ndarray):
        if value.size and np.any(value != value[0]):
            raise T10Error(f"{what} must be the same on every core")
        return int(value[0]) if value.size else 0
    return int(value)


@dataclass
class Buffer:
    """One `core.alloc`: the same-shaped buffer on each of the first `data.shape[0]` cores."""

    label: str
    data: np.ndarray
    elem_bytes: int
    freed: bool = False
    alloc_id: int = -1
    """The key of its allocation in `SimState.buffers`."""

    @property
    def cores(self) -> int:
        return self.data.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape[1:]

    @property
    def bytes_per_core(self) -> int:
        return prod(self.shape) * self.elem_bytes

    def check_usable(self, what: str, cores: int = 0) -> None:
        """Raise unless the buffer is not freed yet and lives on at least `cores` cores."""
        if self.freed:
            raise T10Error(f"{what}: buffer '{self.label}' is used after core.free")
        if self.cores < cores:
            have = f"lives on {self.cores} cores but the op uses {cores}"
            raise T10Error(f"{what}: buffer '{self.label}' {have}")


@dataclass
class StepCost:
    """What the ops of one `chip.superstep` cost (filled as they run)."""

    compute_cycles: int = 0
    exchange_cycles: int = 0
    exchanged_bytes: int = 0
    extra_syncs: int = 0
    cores_used: int = 0
    transient_peak: int = 0
    """Peak live bytes on any core counting exchange receive buffers that are not a
    `core.alloc` (the all-reduce's)."""

    def use_cores(self, cores: int) -> None:
        self.cores_used = max(self.cores_used, cores)

    def add_exchange(self, chip: ChipSpec, nbytes: int) -> None:
        """One exchange op whose busiest core sends or receives `nbytes`."""
        self.exchange_cycles += costs.exchange_cycles(chip, nbytes)
        self.exchanged_bytes += nbytes


@dataclass
class SimState:
    """Everything the interpreter functions share while one program runs."""

    chip: ChipSpec
    live: np.ndarray = field(init=False)
    """Bytes allocated on each core."""
    peak: np.ndarray = field(init=False)
    step: StepCost | None = None
    buffers: dict[int, tuple[str, int, int]] = field(default_factory=dict)
    """The live allocations: id → (label, cores, bytes per core), in allocation order."""
    allocations: int = 0
    """How many buffers were allocated so far (the next one's id)."""

    def __post_init__(self) -> None:
        self.live = np.zeros(self.chip.cores, dtype=np.int64)
        self.peak = np.zeros(self.chip.cores, dtype=np.int64)

    def allocate(self, label: str, cores: int, nbytes: int) -> int:
        """Account a buffer of `nbytes` on each of the first `cores` cores; returns its id."""
        self.check_fits(f"buffer '{label}'", cores, nbytes)
        self.live[:cores] += nbytes
        np.maximum(self.peak, self.live, out=self.peak)
        alloc_id = self.allocations
        self.allocations += 1
        self.buffers[alloc_id] = (label, cores, nbytes)
        return alloc_id

    def release(self, buffer: Buffer) -> None:
        self.live[: buffer.cores] -= buffer.bytes_per_core
        self.buffers.pop(buffer.alloc_id, None)

    def check_fits(self, what: str, cores: int, nbytes: int) -> None:
        if cores > self.chip.cores:
            raise T10Error(
                f"{what} is allocated on {cores} cores but chip '{self.chip.name}' has "
                f"{self.chip.cores}"
            )
        capacity = self.chip.sram_bytes_per_core
        over = np.flatnonzero(self.live[:cores] + nbytes > capacity)
        if over.size:
            c = int(over[0])
            raise T10Error(
                f"core {c}: {what} ({nbytes} bytes) does not fit in SRAM: "
                f"{int(self.live[c])} of {capacity} bytes already in use"
                f"{self.largest_on(c)}"
            )

    def largest_on(self, core: int, count: int = 3) -> str:
        """The `count` largest buffers live on `core`, worded for an error ('' if none)."""
        held = [(n, label) for label, cores, n in self.buffers.values() if core < cores]
        if not held:
            return ""
        held.sort(key=lambda item: -item[0])
        named = ", ".join(f"'{label}' ({n} bytes)" for n, label in held[:count])
        more = f" and {len(held) - count} more" if len(held) > count else ""
        return f"; the largest buffers live there: {named}{more}"

    def phase(self, op_name: str) -> StepCost:
        if self.step is None:
            raise T10Error(f"'{op_name}' must run inside a chip.superstep")
        return self.step

    def transient(self, what: str, cores: int, nbytes: int) -> None:
        """A receive buffer that lives only during the current exchange phase."""
        self.check_fits(what, cores, nbytes)
        step = self.phase(what)
        with_transient = self.live[:cores] + nbytes
        step.transient_peak = max(step.transient_peak, int(with_transient.max(initial=0)))
        np.maximum(self.peak[:cores], with_transient, out=self.peak[:cores])
