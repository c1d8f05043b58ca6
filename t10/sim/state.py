"""What the simulator keeps while a program runs: the per-core value representation, the
buffers, each core's SRAM accounting, and the running cost of the current superstep.

Values while simulating:
- `index`: a Python int (uniform over cores) or an int64 array with one entry per chip core;
- a host tensor (function argument, `arith.constant dense<...>`, `core.store`): a numpy array;
- a `!core.buffer<S x T>` on N cores: a `Buffer` whose data is an `(N, *S)` array of T
  (float32 or float16: writing into an f16 buffer rounds to nearest even);
- kernel-body floats: numpy float32 arrays (one element per core and loop point).

Every op is vectorized over cores: there is no Python loop over cores.

Timing-only mode (`SimState.timing_only`) runs the same ops with the same checks, cycle and
SRAM accounting, but buffers and host tensors hold no values (`NoValues`: shape and dtype
only, no memory): kernels skip their arithmetic and weights are never read. Values that data
movement alone carries from the program's arguments (the ids of a gather, whose traffic they
decide) still move.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from math import prod

import numpy as np
from xdsl.ir import SSAValue

from t10.common import costs
from t10.common.chip_spec import ChipSpec
from t10.common.traffic import Traffic
from t10.errors import DoesNotFit, T10Error
from t10.sim.links import LinkBytes, add_loads

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


class NoValues(np.ndarray):
    """A stand-in for an array in timing-only mode: its shape and dtype, no values and no
    memory (a read-only broadcast of one zero; writing into it raises). Slices and views of
    it are `NoValues` too."""

    @staticmethod
    def of(shape: tuple[int, ...], dtype: np.dtype | type) -> NoValues:
        return np.broadcast_to(np.zeros((), dtype), shape).view(NoValues)


def has_values(array: object) -> bool:
    return not isinstance(array, NoValues)


@dataclass
class Buffer:
    """One `core.alloc`: the same-shaped buffer on each of the first `data.shape[0]` cores."""

    label: str
    data: np.ndarray
    elem_bytes: int
    freed: bool = False
    alloc_id: int = -1
    """The key of its allocation in `SimState.buffers`."""
    written: int = 0
    """On how many of its first cores something was written (loaded, computed, received)."""

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

    def check_readable(self, what: str, cores: int) -> None:
        """Raise unless the buffer is usable and was written on its first `cores` cores."""
        self.check_usable(what, cores)
        if self.written < cores:
            raise T10Error(
                f"{what}: reads buffer '{self.label}' on {cores} cores, but only "
                f"{self.written} were ever written (loaded, computed or received)"
            )

    def mark_written(self, cores: int) -> None:
        self.written = max(self.written, cores)

    def drop_values(self) -> None:
        """Timing-only mode: what the buffer holds is no longer known."""
        if has_values(self.data):
            self.data = NoValues.of(self.data.shape, self.data.dtype)

    def writable(self) -> np.ndarray:
        """Its data, given storage first if it held no values (timing-only mode; the
        caller then writes every element it reads later)."""
        if not has_values(self.data):
            self.data = np.zeros(self.data.shape, self.data.dtype)
        return self.data


@dataclass(frozen=True)
class Region:
    """What one exchange writes on each of the first `cores` cores: elements
    `[offsets[c], offsets[c] + size)` along buffer dim `dim`, or (dim -1) everything."""

    cores: int
    dim: int = -1
    offsets: np.ndarray | None = None
    size: int = 0

    def overlap(self, other: Region) -> int | None:
        """The first core on which both regions hold an element (None if none)."""
        cores = min(self.cores, other.cores)
        if self.dim < 0 or other.dim < 0 or self.dim != other.dim:
            return 0 if cores else None
        assert self.offsets is not None and other.offsets is not None
        a, b = self.offsets[:cores], other.offsets[:cores]
        hit = np.flatnonzero((a < b + other.size) & (b < a + self.size))
        return int(hit[0]) if hit.size else None


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

    link_bytes: LinkBytes = field(default_factory=dict)
    """On a routing chip: the bytes each link carried in the exchanges so far (empty
    otherwise)."""
    received: dict[int, list[tuple[str, Region]]] = field(default_factory=dict)
    """Per buffer (allocation id), what the exchange ops so far wrote into it."""

    def receive(self, what: str, buffer: Buffer, region: Region) -> None:
        """An exchange op writes `region` of `buffer` on every core; no two exchanges of one
        superstep may write one element (the order of their arrival is not defined)."""
        done = self.received.setdefault(buffer.alloc_id, [])
        for other, earlier in done:
            core = region.overlap(earlier)
            if core is not None:
                raise T10Error(
                    f"{what}: core {core} receives into elements of buffer '{buffer.label}' "
                    f"that {other} also writes in this superstep"
                )
        done.append((what, region))

    def use_cores(self, cores: int) -> None:
        self.cores_used = max(self.cores_used, cores)

    def add_exchange(self, chip: ChipSpec, traffic: Traffic) -> None:
        """One exchange op moving `traffic` (its busiest core's bytes are the report's
        exchanged bytes; on a routing chip its link loads add to `link_bytes`)."""
        cycles, loads = costs.exchange_cycles_and_loads(chip, traffic)
        self.exchange_cycles += cycles
        self.exchanged_bytes += traffic.busiest()
        add_loads(self.link_bytes, loads)


@dataclass
class SimState:
    """Everything the interpreter functions share while one program runs."""

    chip: ChipSpec
    live: np.ndarray = field(init=False)
    """Bytes allocated on each core."""
    live_total: int = 0
    """Bytes allocated on all cores together (the sum of `live`)."""
    peak: np.ndarray = field(init=False)
    step: StepCost | None = None
    buffers: dict[int, tuple[str, int, int]] = field(default_factory=dict)
    """The live allocations: id → (label, cores, bytes per core), in allocation order."""
    allocations: int = 0
    """How many buffers were allocated so far (the next one's id)."""
    program_cores: int = 0
    """The cores of the running `chip.program` (0: none runs)."""
    timing_only: bool = False
    """Count cycles and bytes without computing values (see the module docstring)."""
    overflows: dict[str, tuple[int, str]] = field(default_factory=dict)
    """fp16 stores of finite values beyond ±65504 (they hold ±inf) by op: (count, first)."""
    clock: int = 0
    """Cycles the program has run so far: its supersteps and its waits for loads."""
    offchip_free: int = 0
    """When the off-chip memory finishes the loads started so far (`t10.common.offchip`)."""
    arriving: dict[SSAValue, tuple[int, str]] = field(default_factory=dict)
    """Buffers being loaded from off-chip memory that no superstep has read yet: when each
    arrives, and its load's label."""
    offchip_loaded: int = 0
    """Bytes the off-chip memory has sent so far (each load's tensor once)."""
    offchip_busy: int = 0
    """Cycles the off-chip memory has spent loading so far."""
    offchip_tensors: dict[SSAValue, int] = field(default_factory=dict)
    """The tensors loaded from off-chip memory so far, with the bytes each takes there."""

    def __post_init__(self) -> None:
        self.live = np.zeros(self.chip.cores, dtype=np.int64)
        self.peak = np.zeros(self.chip.cores, dtype=np.int64)

    def allocate(self, label: str, cores: int, nbytes: int) -> int:
        """Account a buffer of `nbytes` on each of the first `cores` cores; returns its id."""
        self.check_fits(f"buffer '{label}'", cores, nbytes)
        self.live[:cores] += nbytes
        self.live_total += cores * nbytes
        np.maximum(self.peak, self.live, out=self.peak)
        alloc_id = self.allocations
        self.allocations += 1
        self.buffers[alloc_id] = (label, cores, nbytes)
        return alloc_id

    def note_overflow(self, what: str, values: np.ndarray, dtype: np.dtype) -> None:
        """Count the finite `values` that an f16 buffer stores as ±inf (|x| > 65504 rounds to
        ±inf): the fp16 program computes with ±inf where the model's fp32 semantics have a
        number, as IEEE fp16 hardware would store it (`overflow_warnings` says when it
        matters)."""
        if dtype != np.float16:
            return
        values = np.asarray(values, dtype=np.float32)
        with np.errstate(over="ignore"):
            lost = np.isinf(values.astype(np.float16)) & np.isfinite(values)
        count = int(lost.sum())
        if count:
            seen, first = self.overflows.get(what, (0, ""))
            if not first:
                at = tuple(int(i) for i in np.argwhere(lost)[0])
                first = f"{float(values[at]):.6g} at index {list(at)}"
            self.overflows[what] = (seen + count, first)

    def overflow_warnings(self, outputs: Mapping[str, np.ndarray]) -> list[str]:
        """The fp16 overflow that can have changed the result: when an output holds NaN or
        ±inf and some store overflowed, the first op (in program order) that stored a finite
        value as ±inf, where the non-finite values can start. An overflow whose ±inf no output
        shows (absorbed on the way: a max, a mask, an exp of -inf) is not reported."""
        bad = {name: int(np.size(v) - np.isfinite(v).sum()) for name, v in outputs.items()}
        bad = {name: n for name, n in bad.items() if n}
        if not self.overflows or not bad:
            return []
        what, (count, first) = next(iter(self.overflows.items()))
        named = ", ".join(f"'{name}' {n}" for name, n in bad.items())
        later = len(self.overflows) - 1
        more = f" ({later} later op(s) overflowed too)" if later else ""
        return [
            f"fp16 overflow: outputs hold NaN or ±inf ({named} value(s)) after {what} stored "
            f"{count} finite value(s) beyond fp16's range (|x| <= 65504) as ±inf, first "
            f"{first}{more}; --precision fp32 computes them"
        ]

    def release(self, buffer: Buffer) -> None:
        self.live[: buffer.cores] -= buffer.bytes_per_core
        self.live_total -= buffer.cores * buffer.bytes_per_core
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
            raise DoesNotFit(
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

    def check_in_program(self, what: str) -> None:
        """Coordinates exist only on the cores of a running program (the verifiers check
        that its grids fit in it)."""
        if not self.program_cores:
            raise T10Error(f"{what} must run inside a chip.program")

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
