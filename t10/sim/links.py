"""The links an exchange loads on a routing chip (`Topology.routes`): which link was the
busiest and how busy it was.

A link is named as its topology's `link_loads` names it: its link class and its index in
that class's array (a mesh's [row, col, direction]). A link's **busy cycles** for some
bytes are what its class charges for them in one exchange (`LinkClass.busiest_cycles`:
⌈⌈bytes / parallel⌉ × cycles_per_byte⌉); the **busiest link** is the one with the most busy
cycles (on a tie the first class, then the first index in row-major order), and a
superstep's **link utilisation** is its busiest link's busy cycles over its bytes summed
across the superstep's exchanges, divided by the superstep's exchange cycles (at most 1:
every exchange lasts at least its busiest link's time).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from t10.common.topologies.base import FloatArray, LinkClass
from t10.common.traffic import whole_bytes

LinkBytes = dict[str, FloatArray]
"""Bytes per link, by link class (`Topology.link_loads`'s arrays)."""


@dataclass(frozen=True)
class BusiestLink:
    link_class: str
    index: tuple[int, ...]
    nbytes: int
    busy_cycles: int

    @property
    def name(self) -> str:
        """E.g. `mesh [2, 3, 0]`."""
        return f"{self.link_class} {list(self.index)}"


def add_loads(total: LinkBytes, loads: Mapping[str, FloatArray]) -> None:
    """Add `loads` into `total`, link by link."""
    for k, v in loads.items():
        total[k] = total[k] + v if k in total else v.copy()


def busiest_link(loads: Mapping[str, FloatArray],
                 classes: Mapping[str, LinkClass]) -> BusiestLink | None:
    """The busiest link of `loads` (None when no link carries a byte)."""
    best: BusiestLink | None = None
    for name, array in loads.items():
        if not array.size:
            continue
        cls = classes[name]
        # per class the most bytes is the most busy cycles (one rate per class)
        flat = int(np.argmax(array))
        nbytes = whole_bytes(float(array.flat[flat]))
        busy = cls.busiest_cycles(nbytes)
        if nbytes and (best is None or busy > best.busy_cycles):
            index = tuple(int(i) for i in np.unravel_index(flat, array.shape))
            best = BusiestLink(name, index, nbytes, busy)
    return best
