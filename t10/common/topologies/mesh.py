"""`mesh`: a 2-D mesh of `rows × cols` cores (core id = row·cols + col), or with `wrap` a
torus.

Routing is dimension-ordered: a message first travels along its source's row to its
destination's column (X), then along that column to its destination's row (Y). On a torus
each leg goes the shorter way round; a tie (half-way round) goes the positive way (east,
south). Every directed link carries a byte in `link_cycles_per_byte` cycles, and a path
costs `cycles_per_hop` cycles per hop of latency.

A link is named by the core it leaves and its direction: `link_loads(...)["mesh"]` is an
array [row, col, direction], direction 0 east (col + 1), 1 west (col - 1), 2 south
(row + 1), 3 north (row - 1). Links that would leave a mesh without `wrap` do not exist and
carry 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from t10.common.chip_fields import Reader
from t10.common.exact import Affine
from t10.common.topologies.base import (
    FloatArray,
    IntArray,
    LinkClass,
    Topology,
    check_cores,
    line_loads,
    ring_steps,
)
from t10.common.traffic import Traffic

DIRECTIONS = ("east", "west", "south", "north")
"""The direction axis of a mesh link's name."""


@dataclass(frozen=True)
class MeshTopology(Topology):
    """A 2-D mesh (a torus with `wrap`) of `rows × cols` cores, numbered row-major."""

    rows: int
    cols: int
    link_cycles_per_byte: float
    cycles_per_hop: float
    wrap: bool = False
    kind: ClassVar[str] = "mesh"

    @property
    def cores(self) -> int:
        return self.rows * self.cols

    def core_shape(self, cores: int) -> tuple[int, ...]:
        return (self.rows, self.cols)

    def _legs(self, src: IntArray, dst: IntArray) -> tuple[IntArray, IntArray, IntArray,
                                                            IntArray, IntArray]:
        """(source row, source col, destination col, X steps, Y steps) of each message."""
        r0, c0 = np.divmod(src, self.cols)
        r1, c1 = np.divmod(dst, self.cols)
        return (r0, c0, c1, ring_steps(c0, c1, self.cols, self.wrap),
                ring_steps(r0, r1, self.rows, self.wrap))

    def chip_loads(self, chip: IntArray, src: IntArray, dst: IntArray, nbytes: FloatArray,
                   chips: int) -> dict[str, FloatArray]:
        """The link loads of messages inside `chips` copies of this mesh (message i inside
        copy `chip[i]`, between its local core ids): {"mesh": [chip, row, col, direction]}."""
        check_cores(f"the {self.rows}x{self.cols} mesh", self.cores, src, dst)
        r0, c0, c1, dx, dy = self._legs(src, dst)
        x = line_loads(chips * self.rows, self.cols, chip * self.rows + r0, c0, dx, nbytes)
        y = line_loads(chips * self.cols, self.rows, chip * self.cols + c1, r0, dy, nbytes)
        x = np.transpose(np.reshape(x, (chips, self.rows, 2, self.cols)), (0, 1, 3, 2))
        y = np.transpose(np.reshape(y, (chips, self.cols, 2, self.rows)), (0, 3, 1, 2))
        return {"mesh": np.concatenate([x, y], axis=3)}

    def path_latency(self, src: IntArray, dst: IntArray) -> int:
        """⌈cycles_per_hop × the most hops any of these messages takes⌉."""
        _, _, _, dx, dy = self._legs(src, dst)
        hops = np.abs(dx) + np.abs(dy)
        return Affine(self.cycles_per_hop)(int(hops.max(initial=0)))

    def link_loads(self, traffic: Traffic) -> dict[str, FloatArray]:
        """{"mesh": bytes per link [row, col, direction]}."""
        m = self.messages(traffic)
        loads = self.chip_loads(np.zeros_like(m.src), m.src, m.dst, m.nbytes, 1)
        return {k: v[0] for k, v in loads.items()}

    def link_classes(self) -> dict[str, LinkClass]:
        return {"mesh": LinkClass(self.link_cycles_per_byte)}

    def latency_cycles(self, traffic: Traffic) -> int:
        m = self.messages(traffic)
        return self.path_latency(m.src, m.dst)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "rows": self.rows,
            "cols": self.cols,
            "wrap": self.wrap,
            "link_cycles_per_byte": self.link_cycles_per_byte,
            "cycles_per_hop": self.cycles_per_hop,
        }


def parse(r: Reader, cores: int, whose: str) -> MeshTopology:
    r.allow("kind", "rows", "cols", "wrap", "link_cycles_per_byte", "cycles_per_hop")
    topo = MeshTopology(
        rows=r.integer("rows"),
        cols=r.integer("cols"),
        link_cycles_per_byte=r.number("link_cycles_per_byte"),
        cycles_per_hop=r.number("cycles_per_hop", allow_zero=True),
        wrap=r.boolean("wrap") if r.has("wrap") else False,
    )
    if topo.cores != cores:
        r.fail_raw(f"field '{r.prefix[:-1]}' is a {topo.rows}x{topo.cols} mesh "
                   f"({topo.cores} cores) but {whose}")
    return topo
