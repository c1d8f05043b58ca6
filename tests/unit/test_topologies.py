"""The interconnect's topologies: hand-computed exchanges, the vectorised router against a
brute-force one, the all-to-all cost against the original formula, and the chip file's
`topology` objects."""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from collections import defaultdict
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from t10.common import costs
from t10.common.chip_spec import chip_from_dict, load_chip
from t10.common.topologies import (
    DIRECTIONS,
    AllToAllTopology,
    MeshTopology,
    MultiChipTopology,
    Topology,
)
from t10.common.traffic import Traffic
from t10.errors import T10Error

A2A = AllToAllTopology()
E, W, S, N = (DIRECTIONS.index(d) for d in ("east", "west", "south", "north"))


def msgs(cores: int, *triples: tuple[int, int, int]) -> Traffic:
    src, dst, nbytes = zip(*triples, strict=True) if triples else ((), (), ())
    return Traffic.of_messages(cores, list(src), list(dst), list(nbytes))


def ring(cores: int, order: list[int], b: int) -> Traffic:
    """Each core of `order` sends `b` bytes to the next one round the ring."""
    return msgs(cores, *((c, order[(i + 1) % len(order)], b) for i, c in enumerate(order)))


# ---------------------------------------------------------------------------- hand-computed


def test_shift_ring() -> None:
    # 4 cores, each sends 100 bytes to its ring neighbour; cores at 0.28 cycles/byte.
    t = ring(4, [0, 1, 2, 3], 100)
    # all-to-all: every core sends and receives 100 bytes: ⌈100 · 0.28⌉ = 28
    assert A2A.exchange_cycles(t, 0.28) == 28
    # 1x4 torus, links 0.5 cycles/byte, 2 cycles/hop: each message takes one east hop
    # (3 -> 0 round the wrap), each east link carries 100 bytes: ⌈100 · 0.5⌉ = 50 > 28, one
    # hop of latency: 50 + 2 = 52
    torus = MeshTopology(1, 4, 0.5, 2, wrap=True)
    assert torus.link_loads(t)["mesh"][0, :, E].tolist() == [100] * 4
    assert torus.exchange_cycles(t, 0.28) == 52
    # 1x4 mesh: 3 -> 0 walks back west over 3 hops (links leaving cols 3, 2, 1); the busiest
    # link still carries 100 bytes (50 cycles), the longest path is 3 hops: 50 + 6 = 56
    line = MeshTopology(1, 4, 0.5, 2)
    loads = line.link_loads(t)["mesh"][0]
    assert loads[:, E].tolist() == [100, 100, 100, 0]
    assert loads[:, W].tolist() == [0, 100, 100, 100]
    assert line.exchange_cycles(t, 0.28) == 56


def test_all_gather_among_four_cores() -> None:
    # 2x2 mesh (cores 0 1 / 2 3), each core sends 100 bytes to each of the other three.
    t = msgs(4, *((s, d, 100) for s in range(4) for d in range(4) if s != d))
    mesh = MeshTopology(2, 2, 0.5, 2)
    # X then Y: 0->3 goes E from (0,0) then S from (0,1); 1->2 W from (0,1) then S from
    # (0,0); 2->1 E from (1,0) then N from (1,1); 3->0 W from (1,1) then N from (1,0). With
    # the one-hop messages, each of the 8 links carries 2 messages: 200 bytes.
    loads = mesh.link_loads(t)["mesh"]
    expected = np.zeros((2, 2, 4))
    for r, c, d in [(0, 0, E), (0, 0, S), (0, 1, W), (0, 1, S),
                    (1, 0, E), (1, 0, N), (1, 1, W), (1, 1, N)]:
        expected[r, c, d] = 200
    assert np.array_equal(loads, expected)
    # links ⌈200 · 0.5⌉ = 100; ports: each core sends 300 bytes, ⌈300 · 0.28⌉ = 84; the
    # diagonal messages take 2 hops: 100 + 2·2 = 104
    assert mesh.exchange_cycles(t, 0.28) == 104
    # all-to-all: the ports only: 84
    assert A2A.exchange_cycles(t, 0.28) == 84


def test_reduction_exchange() -> None:
    # A reduction's exchange on a 1x4 mesh: cores 1, 2, 3 each send their 100-byte partial
    # to core 0. West links leaving cols 1, 2, 3 carry 300, 200, 100 bytes.
    t = msgs(4, (1, 0, 100), (2, 0, 100), (3, 0, 100))
    mesh = MeshTopology(1, 4, 0.5, 2)
    assert mesh.link_loads(t)["mesh"][0, :, W].tolist() == [0, 300, 200, 100]
    # busiest link ⌈300 · 0.5⌉ = 150 > core 0's port ⌈300 · 0.28⌉ = 84; 3 hops: 150 + 6 = 156
    assert mesh.exchange_cycles(t, 0.28) == 156
    # all-to-all: core 0 receives one sender at a time: 84
    assert A2A.exchange_cycles(t, 0.28) == 84


def test_inter_chip_transfer() -> None:
    # 4 chips of a 2x2 mesh (cores 4c .. 4c+3 on chip c), chips in a ring, 2 links per
    # neighbouring pair at 1 cycle/byte each, 300 cycles per chip hop; inner links 0.5
    # cycles/byte, 2 cycles/hop.
    inner = MeshTopology(2, 2, 0.5, 2)
    system = MultiChipTopology(4, 4, "ring", 1, 2, 300, inner)
    # core 1 (chip 0) sends 1000 bytes to core 9 (chip 2): 2 chips away both ways round,
    # the tie goes the positive way, over the bundles 0 -> 1 and 1 -> 2. Core 4 (chip 1,
    # local 0) sends 100 bytes to core 7 (chip 1, local 3) over chip 1's mesh.
    t = msgs(16, (1, 9, 1000), (4, 7, 100))
    loads = system.link_loads(t)
    assert loads["chip-to-chip"].tolist() == [[1000, 0], [1000, 0], [0, 0], [0, 0]]
    assert loads["mesh"][1, 0, 0, E] == loads["mesh"][1, 0, 1, S] == 100
    assert loads["mesh"].sum() == 200  # the inter-chip message loads no on-chip link
    # bundles: 1000 bytes over 2 links, 500 each: ⌈500 · 1⌉ = 500; inner links ⌈100·0.5⌉ =
    # 50; core 1's port ⌈1000 · 0.28⌉ = 280. Latency: 2 chip hops · 300 = 600 (the inner
    # message's 2 hops · 2 = 4 are shorter): 500 + 600 = 1100
    assert system.exchange_cycles(t, 0.28) == 1100
    # every pair of chips linked: the direct bundle 0 -> 2, one chip hop: 500 + 300 = 800
    direct = dataclasses.replace(system, arrangement="all-to-all")
    assert direct.link_loads(t)["chip-to-chip"][0, 2] == 1000
    assert direct.exchange_cycles(t, 0.28) == 800


def test_moving_nothing_costs_nothing() -> None:
    for topo in (A2A, MeshTopology(2, 2, 1, 1), MultiChipTopology(2, 2, "ring", 1, 1, 9, A2A)):
        assert topo.exchange_cycles(msgs(4), 0.28) == 0
        assert topo.exchange_cycles(msgs(4, (0, 3, 0)), 0.28) == 0  # no bytes, no latency


def test_a_routing_topology_needs_the_messages() -> None:
    totals = Traffic.uniform(4, 8)
    assert A2A.exchange_cycles(totals, 0.25) == 2  # all-to-all reads only the totals
    for topo in (MeshTopology(2, 2, 1, 1), MultiChipTopology(2, 2, "ring", 1, 1, 9, A2A)):
        with pytest.raises(T10Error) as e:
            topo.exchange_cycles(totals, 0.25)
        assert str(e.value) == (
            f"the {topo.kind} topology routes each message over its links: the exchange's "
            "messages (source core, destination core, bytes) are needed, but only each "
            "core's totals were given"
        )


def test_a_message_to_a_core_the_topology_lacks() -> None:
    with pytest.raises(T10Error, match="^the 2x2 mesh has 4 cores, but the exchange has a "
                                       "message from or to core 4$"):
        MeshTopology(2, 2, 1, 1).link_loads(msgs(5, (0, 4, 1)))


def test_decimals_are_exact() -> None:
    # 100 bytes over a 0.28 cycles/byte link: 28 cycles (binary floats would give 29)
    t = msgs(2, (0, 1, 100))
    assert MeshTopology(1, 2, 0.28, 0).exchange_cycles(t, 0.01) == 28
    # a hop of 0.1 cycles, 3 hops: 0.3 -> 1 cycle, not 0.30000000000000004 -> 1 either way;
    # 30 hops of 0.1 are exactly 3
    line = MeshTopology(1, 31, 0.01, 0.1)
    assert line.latency_cycles(msgs(31, (0, 30, 1))) == 3


# ---------------------------------------------------------------------------- traffic


def test_traffic_of_messages() -> None:
    t = msgs(3, (0, 1, 5), (0, 2, 2), (2, 2, 1))
    assert t.sent.tolist() == [7, 0, 1] and t.received.tolist() == [0, 5, 3]
    assert t.messages is not None and t.messages.src.tolist() == [0, 0, 2]
    both = t + msgs(4, (3, 0, 4))
    assert both.sent.tolist() == [7, 0, 1, 4] and both.messages is not None
    assert both.messages.dst.tolist() == [1, 2, 2, 0]
    assert (t + Traffic.uniform(3, 1)).messages is None  # totals only: messages unknown
    with pytest.raises(ValueError, match="dst must be core ids from 0 to 2"):
        Traffic.of_messages(3, [0], [3], [1])
    with pytest.raises(ValueError, match="nbytes must be finite and non-negative"):
        Traffic.of_messages(3, [0], [1], [-1])


# ---------------------------------------------------------------------------- brute force


def walk(start: int, end: int, length: int, wrap: bool) -> tuple[int, int]:
    """(direction, hops) along one line: +1 or -1 and how many steps."""
    ahead = (end - start) % length
    if wrap:
        return (1, ahead) if ahead <= length - ahead else (-1, length - ahead)
    return (1, end - start) if end >= start else (-1, start - end)


def brute_mesh(rows: int, cols: int, wrap: bool, src: list[int], dst: list[int],
               nbytes: list[int]) -> tuple[np.ndarray, int]:
    """Loads [row, col, direction] and the most hops, walking each message hop by hop."""
    loads = np.zeros((rows, cols, 4))
    most = 0
    for s, d, b in zip(src, dst, nbytes, strict=True):
        r, c = divmod(s, cols)
        r1, c1 = divmod(d, cols)
        sx, kx = walk(c, c1, cols, wrap)
        for _ in range(kx):
            loads[r, c, E if sx > 0 else W] += b
            c = (c + sx) % cols
        sy, ky = walk(r, r1, rows, wrap)
        for _ in range(ky):
            loads[r, c, S if sy > 0 else N] += b
            r = (r + sy) % rows
        assert (r, c) == (r1, c1)
        if b:
            most = max(most, kx + ky)
    return loads, most


def cycles(loads: dict[str, np.ndarray], per_byte: dict[str, tuple[float, int]],
           t: Traffic, core_per_byte: float, latency: Fraction) -> int:
    """The cost formula, from the loads, in fractions."""
    if t.busiest() == 0:
        return 0
    links = max((math.ceil(math.ceil(math.ceil(v.max()) / per_byte[k][1])
                           * Fraction(repr(per_byte[k][0]))) for k, v in loads.items()),
                default=0)
    ports = math.ceil(t.busiest() * Fraction(repr(core_per_byte)))
    return max(links, ports) + math.ceil(latency)


def messages(cores: int) -> st.SearchStrategy[tuple[list[int], list[int], list[int]]]:
    one = st.tuples(st.integers(0, cores - 1), st.integers(0, cores - 1), st.integers(0, 1000))
    return st.lists(one, max_size=200).map(
        lambda ms: ([m[0] for m in ms], [m[1] for m in ms], [m[2] for m in ms]))


@st.composite
def mesh_case(draw: st.DrawFn) -> tuple[MeshTopology, tuple[list[int], list[int], list[int]]]:
    rows, cols = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    mesh = MeshTopology(rows, cols, draw(st.sampled_from([0.28, 0.5, 1, 0.03125])),
                        draw(st.sampled_from([0, 1, 0.1, 9])), draw(st.booleans()))
    return mesh, draw(messages(rows * cols))


@given(mesh_case())
def test_mesh_routes_like_a_walk_hop_by_hop(
    case: tuple[MeshTopology, tuple[list[int], list[int], list[int]]],
) -> None:
    mesh, (src, dst, nbytes) = case
    t = Traffic.of_messages(mesh.cores, src, dst, nbytes)
    expected, most = brute_mesh(mesh.rows, mesh.cols, mesh.wrap, src, dst, nbytes)
    assert np.array_equal(mesh.link_loads(t)["mesh"], expected)
    latency = most * Fraction(repr(float(mesh.cycles_per_hop)))
    assert mesh.latency_cycles(t) == math.ceil(latency)
    assert mesh.exchange_cycles(t, 0.28) == cycles(
        {"mesh": expected}, {"mesh": (mesh.link_cycles_per_byte, 1)}, t, 0.28, latency)


@st.composite
def multi_chip_case(
    draw: st.DrawFn,
) -> tuple[MultiChipTopology, tuple[list[int], list[int], list[int]]]:
    chips = draw(st.integers(1, 5))
    inner: AllToAllTopology | MeshTopology
    if draw(st.booleans()):
        inner = MeshTopology(draw(st.integers(1, 4)), draw(st.integers(1, 4)), 0.5, 2,
                             draw(st.booleans()))
        per_chip = inner.cores
    else:
        inner, per_chip = A2A, draw(st.integers(1, 6))
    system = MultiChipTopology(chips, per_chip, draw(st.sampled_from(["ring", "all-to-all"])),
                               draw(st.sampled_from([1, 0.04140625])), draw(st.integers(1, 5)),
                               draw(st.sampled_from([0, 300, 0.5])), inner)
    return system, draw(messages(chips * per_chip))


@given(multi_chip_case())
def test_multi_chip_routes_like_a_walk_chip_by_chip(
    case: tuple[MultiChipTopology, tuple[list[int], list[int], list[int]]],
) -> None:
    system, (src, dst, nbytes) = case
    n, per = system.chips, system.cores_per_chip
    t = Traffic.of_messages(n * per, src, dst, nbytes)
    inside: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    bundles = np.zeros((n, 2) if system.arrangement == "ring" else (n, n))
    chip_hops = 0
    for s, d, b in zip(src, dst, nbytes, strict=True):
        a, z = s // per, d // per
        if a == z:
            inside[a].append((s % per, d % per, b))
            continue
        if system.arrangement == "all-to-all":
            bundles[a, z] += b
            hops = 1
        else:
            step, hops = walk(a, z, n, wrap=True)
            for _ in range(hops):
                bundles[a, 0 if step > 0 else 1] += b
                a = (a + step) % n
        chip_hops = max(chip_hops, hops if b else 0)
    loads = system.link_loads(t)
    assert np.array_equal(loads["chip-to-chip"], bundles)
    latency = chip_hops * Fraction(repr(float(system.link_latency_cycles)))
    per_byte = {"chip-to-chip": (system.link_cycles_per_byte, system.links_per_pair)}
    inner = system.inner
    if isinstance(inner, MeshTopology):
        expected = np.zeros((n, inner.rows, inner.cols, 4))
        for chip, ms in inside.items():
            s, d, b = (list(x) for x in zip(*ms, strict=True))
            expected[chip], most = brute_mesh(inner.rows, inner.cols, inner.wrap, s, d, b)
            latency = max(latency, most * Fraction(repr(float(inner.cycles_per_hop))))
        assert np.array_equal(loads["mesh"], expected)
        per_byte["mesh"] = (inner.link_cycles_per_byte, 1)
    else:
        assert set(loads) == {"chip-to-chip"}
    assert system.latency_cycles(t) == math.ceil(latency)
    assert system.exchange_cycles(t, 0.28) == cycles(loads, per_byte, t, 0.28, latency)


@given(
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(1, 8)),
             min_size=1, max_size=40),
    st.sampled_from([0.28, 0.1, 1, 0.5, 0.04140625, 3, 0.333]),
)
def test_all_to_all_costs_as_before(shares: list[tuple[int, int, int]], per_byte: float) -> None:
    """The all-to-all topology costs every exchange exactly as `costs.exchange_cycles` (the
    formula the simulator and the plan search use), fractional shares included."""
    sent = np.array([s / k for s, _, k in shares])
    received = np.array([r / k for _, r, k in shares])
    t = Traffic(sent, received)
    chip = dataclasses.replace(load_chip("test-16"), exchange_cycles_per_byte=per_byte)
    assert A2A.exchange_cycles(t, per_byte) == costs.exchange_cycles(chip, t)
    assert A2A.exchange_cycles(t, per_byte) == math.ceil(t.busiest() * Fraction(repr(per_byte)))


def test_routing_is_vectorised() -> None:
    """A million messages on a 100x100 torus in one pass (about 0.4 s on a loaded machine; a
    per-message or per-hop loop would take minutes)."""
    rng = np.random.default_rng(0)
    n = 1_000_000
    t = Traffic.of_messages(10_000, rng.integers(0, 10_000, n), rng.integers(0, 10_000, n),
                            rng.integers(0, 1000, n))
    torus = MeshTopology(100, 100, 0.03125, 9, wrap=True)
    start = time.perf_counter()
    assert torus.exchange_cycles(t, 0.015625) > 0
    assert time.perf_counter() - start < 5


# ---------------------------------------------------------------------------- chip files


def chip_with(topology: dict[str, Any], cores: int = 16) -> dict[str, Any]:
    d = copy.deepcopy(load_chip("test-16").to_dict())
    d["cores"], d["topology"] = cores, topology
    return d


MESH = {"kind": "mesh", "rows": 4, "cols": 4, "wrap": True, "link_cycles_per_byte": 0.5,
        "cycles_per_hop": 2}
MULTI = {"kind": "multi-chip", "chips": 2, "arrangement": "ring", "link_cycles_per_byte": 1,
         "links_per_pair": 2, "link_latency_cycles": 300,
         "inner": {"kind": "mesh", "rows": 2, "cols": 4, "wrap": False,
                   "link_cycles_per_byte": 0.5, "cycles_per_hop": 2}}


@pytest.mark.parametrize(
    "topology, expected",
    [
        (MESH, MeshTopology(4, 4, 0.5, 2, wrap=True)),
        ({k: v for k, v in MESH.items() if k != "wrap"}, MeshTopology(4, 4, 0.5, 2)),
        (MULTI, MultiChipTopology(2, 8, "ring", 1, 2, 300, MeshTopology(2, 4, 0.5, 2))),
        ({k: v for k, v in MULTI.items() if k != "inner"},
         MultiChipTopology(2, 8, "ring", 1, 2, 300, A2A)),
        ({"kind": "all-to-all"}, A2A),
    ],
)
def test_topology_objects_parse_and_round_trip(topology: dict[str, Any],
                                               expected: Topology) -> None:
    chip = chip_from_dict(chip_with(topology))
    assert chip.topology == expected
    assert chip_from_dict(chip.to_dict()) == chip


def test_cores_per_chip() -> None:
    assert chip_from_dict(chip_with(MULTI)).cores_per_chip == 8
    assert chip_from_dict(chip_with(MESH)).cores_per_chip == 16


@pytest.mark.parametrize(
    "topology, cores, message",
    [
        ({"kind": "torus"}, 16,
         'field \'topology.kind\' must be one of "all-to-all", "mesh", "multi-chip", '
         'got "torus"'),
        ({**MESH, "hops": 1}, 16,
         "field 'topology.hops' is unknown; allowed fields here: kind, rows, cols, wrap, "
         "link_cycles_per_byte, cycles_per_hop"),
        ({**MESH, "wrap": "yes"}, 16, "field 'topology.wrap' must be true or false, got \"yes\""),
        ({**MESH, "rows": 2.0}, 16,
         "field 'topology.rows' must be an integer from 1 to 1048576, got 2.0"),
        ({**MESH, "link_cycles_per_byte": 0}, 16,
         "field 'topology.link_cycles_per_byte' must be a number > 0 and <= 1e+09, got 0"),
        ({k: v for k, v in MESH.items() if k != "cycles_per_hop"}, 16,
         "field 'topology.cycles_per_hop' is missing"),
        (MESH, 8, "field 'topology' is a 4x4 mesh (16 cores) but 'cores' is 8"),
        ({**MULTI, "chips": 3}, 16,
         "field 'topology.chips' (3) must divide 'cores' (16) so that every chip has the "
         "same number of cores"),
        ({**MULTI, "chips": 4}, 16,
         "field 'topology.inner' is a 2x4 mesh (8 cores) but each of the 4 chips has 4 cores "
         "('cores' 16 / 'topology.chips' 4)"),
        ({**MULTI, "inner": MULTI}, 16,
         'field \'topology.inner.kind\' must be one of "all-to-all", "mesh", '
         'got "multi-chip"'),
        ({**MULTI, "inner": {"kind": "all-to-all", "rows": 2}}, 16,
         "field 'topology.inner.rows' is unknown; allowed fields here: kind"),
        ({**MULTI, "arrangement": "star"}, 16,
         "field 'topology.arrangement' must be one of ring, all-to-all, got \"star\""),
        ({**MULTI, "chips": 2048, "arrangement": "all-to-all", "inner": {"kind": "all-to-all"}},
         2048, "field 'topology.chips' (2048) is too many for the all-to-all arrangement (every "
         "pair of chips linked): at most 1024"),
        ({**MULTI, "links_per_pair": 0}, 16,
         "field 'topology.links_per_pair' must be an integer from 1 to 1048576, got 0"),
        ({**MULTI, "link_latency_cycles": -1}, 16,
         "field 'topology.link_latency_cycles' must be a number >= 0 and <= 1e+09, got -1"),
        ({**MULTI, "inter_chip_cycles_per_byte": 1}, 16,
         "field 'topology.inter_chip_cycles_per_byte' is unknown; allowed fields here: kind, "
         "chips, arrangement, link_cycles_per_byte, links_per_pair, link_latency_cycles, "
         "inner"),
    ],
)
def test_bad_topology_objects(topology: dict[str, Any], cores: int, message: str) -> None:
    with pytest.raises(T10Error) as e:
        chip_from_dict(chip_with(topology, cores), "x.json")
    assert str(e.value) == f"chip file 'x.json': {message}"
