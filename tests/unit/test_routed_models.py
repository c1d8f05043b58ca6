"""Models on the chips whose interconnect routes (a mesh, a torus, a multi-chip pod): every
exchange (shifts, all-reduces, relayouts, gathers) carries its messages, the simulator routes
them over the chip's links, and the plan search's estimate of every op is its simulated cost;
the outputs match onnxruntime as on an all-to-all chip."""

from __future__ import annotations

import numpy as np
import pytest
from test_every_model import MODELS, assert_consistent

from t10.common.chip_spec import ChipSpec, load_chip
from t10.common.topologies.mesh import MeshTopology
from t10.common.traffic import Traffic
from t10.driver import CompileOptions, check_tolerance, run_model
from t10.sim.state import StepCost

ROUTED_CHIPS = ("mesh-64", "wormhole-n150", "blackhole-p150", "ipu-pod4")
ROUTED_MODELS = (
    "example:mlp",
    "example:bert-ffn",
    "returned_gathers",
    "zoo:bert-base",
    "zoo:llama2-7b",
    "zoo:opt-1.3b",
    "zoo:resnet50",
)


@pytest.mark.parametrize("name", ROUTED_MODELS)
@pytest.mark.parametrize("chip", ROUTED_CHIPS)
def test_routed_estimates_equal_the_simulation_and_outputs_match(chip: str, name: str) -> None:
    run = run_model(MODELS[name](), CompileOptions(chip=chip), check=check_tolerance("fp32"))
    assert run.check is not None and run.check.passed, run.check
    assert_consistent(run.report, chip)



def test_the_wafer_patch_runs_a_model() -> None:
    # 2,304 cores on a 48x48 mesh: one small model (each plan's rings and groups routed)
    run = run_model(MODELS["example:mlp"](), CompileOptions(chip="wafer-48x48"),
                    check=check_tolerance("fp32"))
    assert run.check is not None and run.check.passed, run.check
    assert_consistent(run.report, "wafer-48x48")


def _walk(mesh: MeshTopology, src: int, dst: int) -> list[tuple[int, int, int]]:
    """The links [row, col, direction] a message takes, hop by hop (X then Y, on a torus the
    shorter way round, a tie east or south)."""
    (r, c), (r1, c1) = divmod(src, mesh.cols), divmod(dst, mesh.cols)
    links = []
    for size, along, axis in ((mesh.cols, c1, 1), (mesh.rows, r1, 0)):
        at = (r, c)[axis]
        ahead = (along - at) % size if mesh.wrap else along - at
        step = 1 if ahead >= 0 and (not mesh.wrap or 2 * ahead <= size) else -1
        while at != along:
            links.append((r, c, (2 if axis == 0 else 0) + (step < 0)))
            at = (at + step) % size
            r, c = (at, c) if axis == 0 else (r, at)
    return links


def test_mesh_link_loads_equal_a_recount_of_the_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On mesh-64 the busiest link of every superstep, of every op and of the run, and the
    run's bytes per link, equal a hop-by-hop recount of the messages the simulator sent."""
    chip = load_chip("mesh-64")
    mesh = chip.topology
    assert isinstance(mesh, MeshTopology)
    sent: list[tuple[StepCost, list[Traffic]]] = []  # per superstep that exchanged
    add_exchange = StepCost.add_exchange

    def record(self: StepCost, chip: ChipSpec, traffic: Traffic) -> None:
        if not sent or sent[-1][0] is not self:
            sent.append((self, []))
        sent[-1][1].append(traffic)
        add_exchange(self, chip, traffic)

    monkeypatch.setattr(StepCost, "add_exchange", record)
    run = run_model(MODELS["example:mlp"](), CompileOptions(chip="mesh-64"),
                    timing_only=True)
    (cls,) = mesh.link_classes().values()

    def recount(traffics: list[Traffic]) -> np.ndarray:
        loads = np.zeros((mesh.rows, mesh.cols, 4))
        for t in traffics:
            assert t.messages is not None
            m = t.messages
            for s, d, n in zip(m.src.tolist(), m.dst.tolist(), m.nbytes.tolist(), strict=True):
                for link in _walk(mesh, s, d):
                    loads[link] += n
        return loads

    def busiest(loads: np.ndarray) -> tuple[tuple[int, ...], int]:
        flat = int(np.argmax(loads))
        return tuple(int(i) for i in np.unravel_index(flat, loads.shape)), int(loads.max())

    per_step = [recount(ts) for _, ts in sent]
    moving = [loads for loads in per_step if loads.any()]
    linked = [s for s in run.sim.steps if s.busiest_link is not None]
    assert len(moving) == len(linked) > 0
    for loads, step in zip(moving, linked, strict=True):
        assert step.busiest_link is not None
        index, nbytes = busiest(loads)
        assert (step.busiest_link.index, step.busiest_link.nbytes) == (index, nbytes)
        utilisation = cls.busiest_cycles(nbytes) / step.exchange_cycles
        assert step.link_utilisation == utilisation and 0 < utilisation <= 1
    total = sum(per_step, np.zeros((mesh.rows, mesh.cols, 4)))
    assert run.sim.link_bytes is not None
    assert np.array_equal(run.sim.link_bytes["mesh"], total)
    assert run.sim.busiest_link is not None
    assert (run.sim.busiest_link.index, run.sim.busiest_link.nbytes) == busiest(total)
    links = run.report.links
    assert links is not None and links.busiest_bytes == int(total.max())
    assert links.classes["mesh"].bytes == int(total.sum())
    assert links.classes["mesh"].links == mesh.cores * 4
    per_op: dict[str, np.ndarray] = {}
    for loads, step in zip(moving, linked, strict=True):
        per_op[step.label] = per_op.get(step.label, 0) + loads
    rows = {op.name: op.busiest_link_bytes for op in run.report.ops}
    assert rows == {name: int(per_op[name].max()) if name in per_op else 0 for name in rows}
