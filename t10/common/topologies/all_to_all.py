"""`all-to-all`: every core reaches every other at the same cost (the IPU's exchange).

No links to route: an exchange lasts as long as its busiest core port,
⌈busiest core's sent or received bytes × exchange_cycles_per_byte⌉, so the per-core totals
are all it reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from t10.common.chip_fields import Reader
from t10.common.topologies.base import FloatArray, IntArray, LinkClass, Topology
from t10.common.traffic import Traffic


@dataclass(frozen=True)
class AllToAllTopology(Topology):
    """Every core reaches every other core at the same cost."""

    kind: ClassVar[str] = "all-to-all"
    routes: ClassVar[bool] = False

    def link_loads(self, traffic: Traffic) -> dict[str, FloatArray]:
        return {}

    def link_classes(self) -> dict[str, LinkClass]:
        return {}

    def latency_cycles(self, traffic: Traffic) -> int:
        return 0

    def representatives(self, cores: int) -> IntArray:
        """No links: core 0 stands for every core."""
        return np.zeros(cores, dtype=np.int64)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def chip_loads(self, chip: IntArray, src: IntArray, dst: IntArray, nbytes: FloatArray,
                   chips: int) -> dict[str, FloatArray]:
        """As a multi-chip system's chip (`MeshTopology.chip_loads`): no links."""
        return {}

    def path_latency(self, src: IntArray, dst: IntArray) -> int:
        """As a multi-chip system's chip: no latency."""
        return 0


def parse(r: Reader, cores: int, whose: str) -> AllToAllTopology:
    r.allow("kind")
    return AllToAllTopology()

