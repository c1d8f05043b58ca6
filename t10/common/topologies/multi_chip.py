"""`multi-chip`: `chips` chips, each an `inner` topology (all-to-all or mesh) of
`cores_per_chip` cores, cores numbered chip by chip, joined by chip-to-chip links.

The chips are arranged as a `ring` (chip c linked to chips c ± 1 round the ring) or
`all-to-all` (every pair of chips linked directly). Between two linked chips run
`links_per_pair` parallel links in each direction, each carrying a byte in
`link_cycles_per_byte` cycles; a bundle's bytes are shared evenly by its links.

A message inside one chip routes through the inner topology. A message between chips loads
its source core's send port and its destination core's receive port (as every message does)
and every chip-to-chip bundle on its chip-level path: on a ring the shorter way round, a tie
going the positive way (chip c to c + 1); on `all-to-all` the direct bundle. Its on-chip legs
(from the source core to the chip's links, from the links to the destination core) are not
routed: they load no on-chip link and add no on-chip latency. Its latency is
`link_latency_cycles` per chip-to-chip hop.

A chip-to-chip bundle is named by its source chip and direction on a ring
(`link_loads(...)["chip-to-chip"]` is [chip, direction], 0 towards chip + 1, 1 towards
chip - 1; on a 2-chip ring only direction 0 is used, the two chips being one bundle apart),
and by [source chip, destination chip] on `all-to-all`. The inner links keep their names
with the chip in front (a mesh's [chip, row, col, direction]).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from t10.common.chip_fields import Reader, show
from t10.common.exact import Affine
from t10.common.topologies import all_to_all, mesh
from t10.common.topologies.all_to_all import AllToAllTopology
from t10.common.topologies.base import (
    FloatArray,
    IntArray,
    LinkClass,
    Parser,
    Topology,
    check_cores,
    line_loads,
    parse_kind,
    ring_steps,
)
from t10.common.topologies.mesh import MeshTopology
from t10.common.traffic import Traffic

Arrangement = Literal["ring", "all-to-all"]
ARRANGEMENTS: tuple[Arrangement, ...] = ("ring", "all-to-all")
MAX_LINKED_CHIPS = 1024
"""The most chips of the `all-to-all` arrangement (its links number chips²)."""
CHIP_LINKS = "chip-to-chip"
"""The link class of the chip-to-chip bundles."""

ChipTopology = AllToAllTopology | MeshTopology
"""What one chip of a multi-chip system may be."""


@dataclass(frozen=True)
class MultiChipTopology(Topology):
    """`chips` chips of `cores_per_chip` cores each, joined by chip-to-chip links."""

    chips: int
    cores_per_chip: int
    arrangement: Arrangement
    link_cycles_per_byte: float
    links_per_pair: int
    link_latency_cycles: float
    inner: ChipTopology
    kind: ClassVar[str] = "multi-chip"

    def _split(self, traffic: Traffic) -> tuple[IntArray, IntArray, IntArray, IntArray,
                                                FloatArray]:
        """(source chip, destination chip, local source, local destination, bytes) of the
        messages that carry bytes."""
        m = self.messages(traffic)
        check_cores(f"the {self.kind} topology of {self.chips} chips", self.chips *
                    self.cores_per_chip, m.src, m.dst)
        a, s = np.divmod(m.src, self.cores_per_chip)
        b, d = np.divmod(m.dst, self.cores_per_chip)
        return a, b, s, d, m.nbytes

    def _chip_steps(self, a: IntArray, b: IntArray) -> IntArray:
        """Signed chip-to-chip hops of each message (all-to-all: one, towards its chip)."""
        if self.arrangement == "ring":
            return ring_steps(a, b, self.chips, wrap=True)
        return (a != b).astype(np.int64)

    def link_loads(self, traffic: Traffic) -> dict[str, FloatArray]:
        a, b, s, d, nbytes = self._split(traffic)
        inside = a == b
        loads = self.inner.chip_loads(a[inside], s[inside], d[inside], nbytes[inside],
                                      self.chips)
        out = ~inside
        if self.arrangement == "ring":
            ring = line_loads(1, self.chips, np.zeros_like(a[out]), a[out],
                              self._chip_steps(a[out], b[out]), nbytes[out])
            loads[CHIP_LINKS] = ring[0].T
        else:
            pairs = np.bincount(a[out] * self.chips + b[out], weights=nbytes[out],
                                minlength=self.chips**2)
            loads[CHIP_LINKS] = np.reshape(pairs.astype(np.float64, copy=False),
                                           (self.chips, self.chips))
        return loads

    def link_classes(self) -> dict[str, LinkClass]:
        return {**self.inner.link_classes(),
                CHIP_LINKS: LinkClass(self.link_cycles_per_byte, self.links_per_pair)}

    def latency_cycles(self, traffic: Traffic) -> int:
        a, b, s, d, _ = self._split(traffic)
        inside = a == b
        hops = np.abs(self._chip_steps(a[~inside], b[~inside]))
        return max(self.inner.path_latency(s[inside], d[inside]),
                   Affine(self.link_latency_cycles)(int(hops.max(initial=0))))

    def core_shape(self, cores: int) -> tuple[int, ...]:
        return (self.chips, *self.inner.core_shape(self.cores_per_chip))

    def representatives(self, cores: int) -> IntArray:
        """Chips of the all-to-all kind: a chip's first core stands for all its cores (no
        on-chip links, and the on-chip legs of a message between chips are not routed)."""
        ids = np.arange(cores, dtype=np.int64)
        if isinstance(self.inner, AllToAllTopology):
            return ids // self.cores_per_chip * self.cores_per_chip
        return ids

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "chips": self.chips,
            "arrangement": self.arrangement,
            "link_cycles_per_byte": self.link_cycles_per_byte,
            "links_per_pair": self.links_per_pair,
            "link_latency_cycles": self.link_latency_cycles,
            "inner": self.inner.to_json(),
        }


CHIP_PARSERS: dict[str, Parser[ChipTopology]] = {"all-to-all": all_to_all.parse, "mesh": mesh.parse}


def _arrangement(r: Reader) -> Arrangement:
    value = r.string("arrangement")
    for known in ARRANGEMENTS:
        if value == known:
            return known
    r.fail("arrangement", f"must be one of {', '.join(ARRANGEMENTS)}, got {show(value)}")


def parse(r: Reader, cores: int, whose: str) -> MultiChipTopology:
    r.allow("kind", "chips", "arrangement", "link_cycles_per_byte", "links_per_pair",
            "link_latency_cycles", "inner")
    chips = r.integer("chips")
    where = r.prefix[:-1]
    if cores % chips:
        r.fail_raw(f"field '{where}.chips' ({chips}) must divide 'cores' ({cores}) "
                   f"so that every chip has the same number of cores")
    per_chip = cores // chips
    arrangement = _arrangement(r)
    if arrangement == "all-to-all" and chips > MAX_LINKED_CHIPS:
        r.fail_raw(f"field '{where}.chips' ({chips}) is too many for the all-to-all arrangement "
                   f"(every pair of chips linked): at most {MAX_LINKED_CHIPS}")
    link_cycles = r.number("link_cycles_per_byte")
    links = r.integer("links_per_pair")
    latency = r.number("link_latency_cycles", allow_zero=True)
    inner: ChipTopology = AllToAllTopology()
    if r.has("inner"):
        inner = parse_kind(r.sub("inner"), CHIP_PARSERS, per_chip,
                           f"each of the {chips} chips has {per_chip} cores "
                           f"('cores' {cores} / '{where}.chips' {chips})")
    return MultiChipTopology(chips, per_chip, arrangement, link_cycles, links, latency, inner)
