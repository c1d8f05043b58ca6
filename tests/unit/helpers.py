"""Plain helpers shared by the unit tests (fixtures are in conftest.py): the chips, ONNX model
builders, seeded inputs, and the compile-simulate-compare check against onnxruntime, all on
`t10.driver`. Test modules import them as `from helpers import ...`."""

from __future__ import annotations

import dataclasses
import io
import json
import random
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir.affine import AffineMap
from xdsl.printer import Printer

from t10.common.chip_spec import ChipSpec, load_chip
from t10.common.exchange import ViewMove, grid_coords, local_indices
from t10.common.plans import Estimate, Layout, Plan
from t10.driver import Compiled, CompileOptions, compile_model, make_context, run_passes
from t10.examples.zoo import ZOO
from t10.frontend import import_onnx
from t10.lowering.convert_core_to_chip import ConvertCoreToChip
from t10.lowering.convert_cshift_to_core import ConvertCShiftToCore
from t10.lowering.convert_linalg_to_rtensor import ConvertLinalgToRTensor
from t10.lowering.convert_rtensor_to_cshift import ConvertRTensorToCShift
from t10.outputs.report import planned_sram
from t10.planning.forked import ENDING_SIGNALS
from t10.planning.memory_reconciliation import Liveness, PlanPoint, ReturnedView
from t10.reference import reference_session
from t10.sim.simulator import SimResult, simulate
from t10.t10_dialects.parsing import Parser

CHIPS = ["test-16", "ipu-mk2"]
"""The built-in chips the numerical tests run on (the `chip` fixture of conftest.py)."""
DATA = Path(__file__).parent / "data"
"""The torch and Hugging Face exports (data/EXPORTS.md)."""
TRANSFORMER_PREFIXES = ("hf_", "attn_")
"""The exports of test_hf_exports.py; the others are test_end_to_end.py's."""
RTOL, ATOL = 1e-4, 1e-5
"""How close the simulated outputs must be to onnxruntime's."""


# --------------------------------------------------------------------------------------------
# Compile, simulate, compare
# --------------------------------------------------------------------------------------------


def random_onnx_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded standard-normal float32 arrays for the graph inputs that are not initializers."""
    initializers = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(seed)
    return {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
            np.float32
        )
        for i in model.graph.input
        if i.name not in initializers
    }


def through_text(module: ModuleOp) -> ModuleOp:
    """`module` printed as `t10-opt -o` prints it, and read back as `t10-opt` reads it."""
    text = io.StringIO()
    Printer(text).print_op(module)
    return Parser(make_context(), text.getvalue()).parse_module()


def lowered_stage_by_stage(planned: ModuleOp) -> ModuleOp:
    """A module after `t10-plan-search` lowered to the chip level as a `t10-opt` pipeline run
    stage by stage lowers it: read back from its text before each stage and after the last
    (the stages of tests/filecheck/pipeline/stage-by-stage.mlir)."""
    module = through_text(planned)
    for stage in (
        [ConvertLinalgToRTensor(), ConvertRTensorToCShift()],
        [ConvertCShiftToCore(), ConvertCoreToChip()],
    ):
        run_passes(module, stage)
        module = through_text(module)
    return module


@contextmanager
def default_signal(signum: int) -> Iterator[None]:
    """`signum` at its default action within the block, whatever the test run inherited:
    under `nohup` SIGHUP is ignored (and SIGINT in a shell's background job), and t10 leaves
    a signal it started with ignored ignored."""
    previous = signal.signal(signum, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signum, previous)


def default_ending_signals() -> None:
    """The signals t10 ends on at their default action (a child's `preexec_fn`: see
    `default_signal`)."""
    for signum in (signal.SIGINT, *ENDING_SIGNALS):
        signal.signal(signum, signal.SIG_DFL)


class Checked(NamedTuple):
    compiled: Compiled
    result: SimResult


def run_and_check(
    model: onnx.ModelProto | Path,
    chip: str,
    inputs: dict[str, np.ndarray] | None = None,
    *,
    seed: int = 0,
    planner: str = "t10",
    fuse: bool = True,
) -> Checked:
    """Compile `model` (a proto, or a model file: its weights may sit beside it) for `chip`,
    simulate it on `inputs` (default `random_onnx_inputs` with `seed`) and assert every output
    is within RTOL / ATOL of onnxruntime's on the same inputs (integer dtypes included)."""
    proto = onnx.load(model) if isinstance(model, Path) else model
    compiled = compile_model(model, CompileOptions(chip=chip, planner=planner, fuse=fuse))
    inputs = random_onnx_inputs(proto, seed) if inputs is None else inputs
    result = simulate(compiled.module, compiled.chip, inputs)
    assert_within_planned_sram(compiled, result)
    expected = reference_session(model).run(None, inputs)
    for output, want in zip(proto.graph.output, expected, strict=True):
        np.testing.assert_allclose(result.outputs[output.name], want, rtol=RTOL, atol=ATOL)
    return Checked(compiled, result)


def assert_within_planned_sram(compiled: Compiled, result: SimResult) -> None:
    """The memory contract (docs/DESIGN.md): the simulated peak is within the plan search's
    bound, `t10.model_bytes`."""
    planned = planned_sram(compiled.planned)
    assert planned is not None
    assert result.report.peak_sram_bytes_per_core <= planned


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    """Seeded standard-normal float32 values of `shape`."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def float_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, list[int]],
    outputs: list[str],
    initializers: list[onnx.TensorProto],
    opset: int = 17,
) -> onnx.ModelProto:
    """A model of FLOAT inputs (name → shape) and FLOAT outputs left to shape inference."""
    graph = helper.make_graph(
        nodes,
        "views",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def typed_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[int, list[int]]],
    outputs: list[str] | dict[str, list[int]],
    weights: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    """``inputs``: name → (ONNX element type, shape); outputs are FLOAT, of the given shape or
    (a list of names) left to shape inference."""
    shapes = outputs if isinstance(outputs, dict) else dict.fromkeys(outputs)
    graph = helper.make_graph(
        nodes,
        "folding",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in shapes.items()],
        [numpy_helper.from_array(w, n) for n, w in (weights or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model


def generics(model: onnx.ModelProto) -> list[GenericOp]:
    """The `linalg.generic` ops `model` imports as."""
    return [op for op in import_onnx(model).walk() if isinstance(op, GenericOp)]


def tiny_llama(path: Path) -> Path:
    """A Llama decoder layer whose residual stream and rotary tables outlive operators."""
    config = dataclasses.replace(ZOO["llama2-7b"].config, hidden=64, heads=4, intermediate=96)
    onnx.save(ZOO["llama2-7b"].build(2, 8, config=config), path)
    return path


def chip_file_with_sram(sram: int, directory: Path) -> str:
    """A chip file: test-16 with `sram` bytes per core."""
    spec = json.loads(resources.files("t10.common").joinpath("chips/test-16.json").read_text())
    path = directory / f"sram{sram}.json"
    path.write_text(json.dumps({**spec, "name": f"sram{sram}", "sram_bytes_per_core": sram}))
    return str(path)


# --------------------------------------------------------------------------------------------
# Exchange traffic, brute force
# --------------------------------------------------------------------------------------------


def holdings(layout: Layout, view: AffineMap | None, source: tuple[int, ...]) -> list[set[int]]:
    """Per core, the flat source indices its buffer holds (brute force)."""
    local = local_indices(layout, grid_coords(layout.grid))
    out = []
    for c in range(layout.cores):
        held = set()
        for idx in np.ndindex(*layout.local_shape()):
            point = [int(local[d][c, i]) for d, i in enumerate(idx)]
            if min(point) < 0:
                continue
            if view is not None:
                point = list(view.eval(point, []))
            held.add(int(np.ravel_multi_index(point, source)))
        out.append(held)
    return out


def assert_brute_force_move(
    move: ViewMove, held: list[set[int]], need: list[set[int]], source: tuple[int, ...]
) -> None:
    """`move` against a brute-force count: each destination core receives what it needs and
    does not hold, copies what it holds; each holder sends its share of every request."""
    for c, wanted in enumerate(need):
        own = held[c] if c < len(held) else set()
        assert move.received[c] == len(wanted - own)
        assert move.copied[c] == len(wanted & own)
    holders = {e: sum(e in h for h in held) for e in range(int(np.prod(source)))}
    for c, own in enumerate(held):
        requests = sum(
            1 / holders[e]
            for d, wanted in enumerate(need)
            for e in wanted - (held[d] if d < len(held) else set())
            if e in own
        )
        assert move.sent[c] == pytest.approx(requests)


# -- random memory-reconciliation instances ------------------------------------------------


def chip_with(sram: int) -> ChipSpec:
    """test-16 with `sram` bytes per core."""
    return dataclasses.replace(load_chip("test-16"), sram_bytes_per_core=sram)


def random_point(rng: random.Random) -> PlanPoint:
    return PlanPoint(
        Plan((rng.choice((1, 2, 4, 8)),)),
        Estimate(rng.randint(1, 99), 0, 0, rng.randint(10, 60)),
        rng.randint(0, 20),
        *(rng.randint(0, 15) for _ in range(4)),
    )


def random_liveness(rng: random.Random, n: int) -> Liveness:
    returned = tuple(
        ReturnedView(rng.randrange(-1, n), (rng.randint(1, 40),), 4,
                     rng.choice([None, rng.randrange(n)]), f"view{r}")
        for r in range(rng.choice((0, 0, 1, 2)))
    )
    returned = tuple(v for v in returned if v.producer is None or v.producer <= v.after)
    return Liveness(
        tuple(tuple(sorted(rng.sample(range(p + 1, n), rng.randint(0, n - p - 1))))
              for p in range(n)),
        (((rng.randint(1, 40),), 4),) if rng.random() < 0.5 else (),
        held=((rng.randrange(n), n, rng.randint(1, 30)),) if rng.random() < 0.3 else (),
        returned=returned,
    )


def with_random_weights(
    model: onnx.ModelProto, seed: int = 0, opset: int | None = None
) -> onnx.ModelProto:
    """`model` with each ConstantOfShape weight (as the onnx package's `light_*` models and
    our weightless exports ship them) an initializer of seeded random values: He normal for
    the weights of Conv / Gemm (fan in: all dims but the first), positive variances and
    scales near one for BatchNormalization, N(0, 0.1²) for everything else; converted to
    `opset` if given."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    role: dict[str, str] = {}
    for node in graph.node:
        if node.op_type == "BatchNormalization":
            role.update({node.input[1]: "scale", node.input[4]: "variance"})
    rng = np.random.default_rng(seed)
    made = []
    for node in [n for n in graph.node if n.op_type == "ConstantOfShape"]:
        shape = tuple(int(d) for d in inits[node.input[0]])
        name = node.output[0]
        if role.get(name) in ("scale", "variance"):
            value = 1.0 + 0.1 * np.abs(rng.standard_normal(shape))
        elif len(shape) >= 2:
            value = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[1:]))
        else:
            value = 0.1 * rng.standard_normal(shape)
        made.append(numpy_helper.from_array(value.astype(np.float32), name))
        graph.node.remove(node)
    used = {i for n in graph.node for i in n.input}
    unread = {t.name for t in graph.initializer if t.name not in used}  # the weights' shapes
    kept_inits = [t for t in graph.initializer if t.name not in unread]
    del graph.initializer[:]
    graph.initializer.extend([*kept_inits, *made])
    names = {t.name for t in made} | unread
    kept = [i for i in graph.input if i.name not in names]
    del graph.input[:]
    graph.input.extend(kept)
    model.ir_version = max(model.ir_version, 4)  # initializers need not be graph inputs
    return model if opset is None else onnx.version_converter.convert_version(model, opset)
