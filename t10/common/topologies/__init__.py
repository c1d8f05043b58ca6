"""The interconnect of a chip: topologies behind one interface (`Topology`), each routing an
exchange's messages over its links and costing the exchange (`Topology.exchange_cycles`),
and the parser of a chip file's `topology` object (`parse_topology`; format in
docs/chips.md).

- `all-to-all` (`all_to_all`): every core reaches every other at the same cost (the IPU).
- `mesh` (`mesh`): a 2-D mesh or torus with dimension-ordered routing.
- `multi-chip` (`multi_chip`): chips of an inner topology joined by chip-to-chip links.
"""

from __future__ import annotations

from t10.common.chip_fields import Reader
from t10.common.topologies import all_to_all, mesh, multi_chip
from t10.common.topologies.all_to_all import AllToAllTopology
from t10.common.topologies.base import LinkClass, Parser, Routed, Topology, parse_kind
from t10.common.topologies.mesh import DIRECTIONS, MeshTopology
from t10.common.topologies.multi_chip import ARRANGEMENTS, MultiChipTopology

__all__ = [
    "ARRANGEMENTS",
    "DIRECTIONS",
    "AllToAllTopology",
    "LinkClass",
    "MeshTopology",
    "MultiChipTopology",
    "Routed",
    "Topology",
    "parse_topology",
]

PARSERS: dict[str, Parser[Topology]] = {
    "all-to-all": all_to_all.parse,
    "mesh": mesh.parse,
    "multi-chip": multi_chip.parse,
}


def parse_topology(top: Reader, cores: int) -> Topology:
    """The topology of a chip file's top-level object `top` (all-to-all when it gives
    none), for its `cores` cores."""
    if not top.has("topology"):
        return AllToAllTopology()
    return parse_kind(top.sub("topology"), PARSERS, cores, f"'cores' is {cores}")
