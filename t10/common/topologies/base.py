"""The interface every topology implements (`Topology`), the cost of an exchange on it, and
the routing and parsing helpers the topologies share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import NDArray

from t10.common.chip_fields import Reader, show
from t10.common.exact import rate
from t10.common.traffic import Messages, Traffic, whole_bytes
from t10.errors import T10Error

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class LinkClass:
    """Links of one kind: each carries a byte in `cycles_per_byte` cycles, and the bytes the
    topology puts on one entry of `link_loads` are shared by `parallel` such links."""

    cycles_per_byte: float
    parallel: int = 1

    def cycles(self, loads: FloatArray) -> int:
        """Cycles the busiest entry of `loads` takes: ⌈⌈bytes / parallel⌉ × cycles_per_byte⌉
        (whole bytes, each link taking its whole share)."""
        return self.busiest_cycles(float(loads.max(initial=0.0)))

    def busiest_cycles(self, nbytes: float) -> int:
        """`cycles` of loads whose busiest entry is `nbytes`."""
        return rate(self.cycles_per_byte)(-(-whole_bytes(nbytes) // self.parallel))


@dataclass(frozen=True)
class Routed:
    """An exchange as its cost reads it once routed: the most bytes one core sends or
    receives (`busiest`), the busiest link's bytes per link class (`links`) and the longest
    path's latency (`latency`, cycles)."""

    busiest: float
    links: dict[str, float]
    latency: int

    def cycles(self, classes: Mapping[str, LinkClass], core_cycles_per_byte: float) -> int:
        """`Topology.exchange_cycles` of the exchange (`classes`: the topology's link
        classes)."""
        busiest = whole_bytes(self.busiest)
        if busiest == 0:
            return 0
        ports = rate(core_cycles_per_byte)(busiest)
        links = max((classes[k].busiest_cycles(v) for k, v in self.links.items()), default=0)
        return max(ports, links) + self.latency

    def scaled(self, factor: int) -> Routed:
        """The same messages, each carrying `factor` times its bytes (exact while the bytes
        are whole numbers below 2**53: the loads and port totals are sums of them; nothing
        moves at factor 0, so no path's latency counts)."""
        if factor == 0:
            return Routed(0.0, {}, 0)
        return Routed(self.busiest * factor, {k: v * factor for k, v in self.links.items()},
                      self.latency)


class Topology(ABC):
    """How the cores of a chip are connected: where each message of an exchange goes and what
    the exchange then costs."""

    kind: ClassVar[str]
    """The `kind` of the chip file's `topology` object."""

    routes: ClassVar[bool] = True
    """Whether the cost reads the exchange's messages (who sends how much to whom), which
    then must be given (`Traffic.messages`), not only each core's totals."""

    @abstractmethod
    def link_loads(self, traffic: Traffic) -> dict[str, FloatArray]:
        """The bytes each directed link carries in the exchange `traffic`, by link class (the
        keys of `link_classes`); an array's index names the link (per topology)."""

    @abstractmethod
    def link_classes(self) -> dict[str, LinkClass]:
        """The cost of each class of link `link_loads` reports."""

    @abstractmethod
    def latency_cycles(self, traffic: Traffic) -> int:
        """The latency of the exchange's longest path, over the messages that carry bytes."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The chip file's `topology` object (inverse of `parse_topology`)."""

    def exchange_cycles(self, traffic: Traffic, core_cycles_per_byte: float) -> int:
        """Cycles of the exchange `traffic`: the busiest link's or the busiest core port's time
        (whichever is longer; a core sends and receives at `core_cycles_per_byte`), plus the
        longest path's latency. Moving nothing costs 0."""
        return self.routed(traffic).cycles(self.link_classes(), core_cycles_per_byte)

    def routed(self, traffic: Traffic) -> Routed:
        """What `exchange_cycles` reads of the exchange `traffic` once it is routed."""
        return self.route(traffic)[0]

    def route(self, traffic: Traffic) -> tuple[Routed, dict[str, FloatArray]]:
        """`routed`, with the bytes on every link it was read from (`link_loads`; empty when
        nothing moves), routed once for both."""
        busiest = max(float(traffic.sent.max(initial=0.0)),
                      float(traffic.received.max(initial=0.0)))
        if whole_bytes(busiest) == 0:
            return Routed(0.0, {}, 0), {}
        loads = self.link_loads(traffic)
        links = {k: float(v.max(initial=0.0)) for k, v in loads.items()}
        return Routed(busiest, links, self.latency_cycles(traffic)), loads

    def core_shape(self, cores: int) -> tuple[int, ...]:
        """The shape the chip's `cores` cores form, core ids row-major over it
        (`t10.common.placements`): one line of cores unless a topology lays them out."""
        return (cores,)

    def representatives(self, cores: int) -> IntArray:
        """For each of the first `cores` cores, a core that stands for it in routing: two
        messages whose sources have one representative, and whose destinations have one,
        load the same links and take paths of the same latency (their core ports aside).
        Every core stands for itself unless a topology knows better."""
        return np.arange(cores, dtype=np.int64)

    def messages(self, traffic: Traffic) -> Messages:
        """The exchange's messages that carry bytes, which a routing topology needs."""
        if traffic.messages is None:
            raise T10Error(
                f"the {self.kind} topology routes each message over its links: the exchange's "
                "messages (source core, destination core, bytes) are needed, but only each "
                "core's totals were given"
            )
        return traffic.messages.carrying_bytes()


def check_cores(what: str, cores: int, src: IntArray, dst: IntArray) -> None:
    """Refuse a message from or to a core the topology does not have."""
    top = int(max(src.max(initial=0), dst.max(initial=0)))
    if top >= cores:
        raise T10Error(f"{what} has {cores} cores, but the exchange has a message from or to "
                       f"core {top}")


def ring_steps(start: IntArray, end: IntArray, length: int, wrap: bool) -> IntArray:
    """Signed steps from `start` to `end` along a line of `length` positions: the direct way,
    or with `wrap` (a ring) the shorter way round, a tie going the positive way."""
    steps = end - start
    if not wrap:
        return steps
    ahead = np.where(steps < 0, steps + length, steps)
    return np.where(2 * ahead <= length, ahead, ahead - length)


def line_loads(lines: int, length: int, line: IntArray, start: IntArray, steps: IntArray,
               nbytes: FloatArray) -> FloatArray:
    """Bytes on each directed link of `lines` lines (or rings) of `length` positions, as an
    array [line, direction (0 positive, 1 negative), position the link leaves]: message i
    leaves `start[i]` on line `line[i]` and takes `steps[i]` steps (signed, |steps| < length;
    on a ring the positions wrap round).

    Difference arrays over a doubled line (position p and p + length are the same link), so
    the cost is two `bincount`s whatever the lengths of the paths."""
    k = np.abs(steps)
    negative = steps < 0
    # positive: links start .. start+k-1; negative: start-k+1 .. start, shifted by a length
    first = np.where(negative, start - k + 1 + length, start)
    width = 2 * length + 1
    row = (line * 2 + negative) * width
    index = np.concatenate([row + first, row + first + k])
    weight = np.concatenate([nbytes, -nbytes])
    diff = np.bincount(index, weights=weight, minlength=lines * 2 * width)
    acc = np.cumsum(np.reshape(diff.astype(np.float64, copy=False), (lines, 2, width)),
                    axis=2)[:, :, : 2 * length]
    return acc[:, :, :length] + acc[:, :, length:]


T = TypeVar("T", bound=Topology)

Parser = Callable[[Reader, int, str], T]
"""Reads a `topology` object for `cores` cores; the string says whose cores they are, for
the size mismatch's message ("'cores' is 16")."""


def parse_kind(r: Reader, parsers: Mapping[str, Parser[T]], cores: int, whose: str) -> T:
    """The topology of the object `r` by its `kind`, one of `parsers`."""
    kind = r.string("kind")
    if kind not in parsers:
        known = ", ".join(f'"{k}"' for k in parsers)
        r.fail("kind", f"must be one of {known}, got {show(kind)}")
    return parsers[kind](r, cores, whose)
