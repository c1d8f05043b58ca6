"""Off-chip memory (DRAM, HBM, an IPU's streaming memory): where weights too large for the
cores' SRAM live, and what loading them costs.

A chip file may give an `offchip` object (docs/chips.md): its capacity, its bandwidth and
its latency. Weights the plan search keeps off chip (`t10.offchip` on an operator) are
loaded into the cores' SRAM by `chip.load` ops while earlier supersteps run: the loads run
one after another on the off-chip memory's one channel, concurrently with compute and
exchange, and a superstep that reads a buffer still being loaded waits for it.

A load's cost (`load_cycles`): the latency, plus the longer of the tensor's bytes over the
memory's bandwidth (read once, however many cores hold copies) and the busiest receiving
core's bytes at its exchange port rate (`exchange_cycles_per_byte`): the data enters the
cores through the exchange, which copies it to every core that holds it (as in ELK's model;
the links of a routing chip are not charged for it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from t10.common.chip_fields import MAX_COST, Reader

__all__ = ["OffChipMemory", "load_cycles", "parse_offchip"]

MAX_OFFCHIP_BYTES = 2**50
"""A petabyte: beyond any memory beside one system (an IPU-POD4 holds up to 448 GB)."""


@dataclass(frozen=True)
class OffChipMemory:
    """The memory beside the cores; units: bytes, cycles of the chip's clock."""

    capacity_bytes: int
    """What it holds (all weights kept off chip together)."""
    bytes_per_cycle: float
    """Its sustained read bandwidth, all channels together."""
    latency_cycles: int
    """From a load's start to its first byte on a core."""

    def to_json(self) -> dict[str, int | float]:
        return {
            "capacity_bytes": self.capacity_bytes,
            "bytes_per_cycle": self.bytes_per_cycle,
            "latency_cycles": self.latency_cycles,
        }


def parse_offchip(top: Reader) -> OffChipMemory | None:
    """The `offchip` object of a chip file's top level (None: the chip has none)."""
    if not top.has("offchip"):
        return None
    r = top.sub("offchip")
    r.allow("capacity_bytes", "bytes_per_cycle", "latency_cycles")
    return OffChipMemory(
        capacity_bytes=r.integer("capacity_bytes", high=MAX_OFFCHIP_BYTES),
        bytes_per_cycle=r.number("bytes_per_cycle"),
        latency_cycles=r.integer("latency_cycles", high=int(MAX_COST), allow_zero=True),
    )


def load_cycles(
    memory: OffChipMemory, exchange_cycles_per_byte: float, tensor_bytes: int,
    busiest_core_bytes: int,
) -> int:
    """Cycles of one load of a tensor of `tensor_bytes` into the cores, of which the busiest
    core receives `busiest_core_bytes` (0 bytes: nothing to load, 0 cycles)."""
    if tensor_bytes == 0:
        return 0
    streaming = tensor_bytes / memory.bytes_per_cycle
    receiving = busiest_core_bytes * exchange_cycles_per_byte
    return memory.latency_cycles + math.ceil(max(streaming, receiving))
