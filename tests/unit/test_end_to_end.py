"""Whole-pipeline tests: ONNX models compiled to the chip level, simulated, and checked
against onnxruntime. The torch models were exported by both torch exporters
(scripts/export_torch_models.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp

from t10.errors import T10Error
from t10.examples.models import matmul, mlp
from t10.lowering.onnx_frontend import import_onnx
from t10.passes.t10_compile import pipeline
from t10.sim.chip_spec import load_chip
from t10.sim.simulator import SimResult, simulate
from t10.t10_dialects.rtensor import EstimateAttr

DATA = Path(__file__).parent / "data"
TORCH_MODELS = sorted(p.name for p in DATA.glob("*.onnx"))


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    initializers = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(seed)
    return {
        i.name: rng.standard_normal(
            [d.dim_value for d in i.type.tensor_type.shape.dim]
        ).astype(np.float32)
        for i in model.graph.input
        if i.name not in initializers
    }


def compile_model(
    model: onnx.ModelProto | Path, chip: str, planner: str = "t10"
) -> tuple[ModuleOp, int]:
    """The chip-level module and the plan search's total estimated cycles."""
    module = import_onnx(model)
    passes = pipeline(chip, planner, 0.5)
    passes[0].apply(Context(), module)
    estimated = sum(
        op.attributes["t10.estimate"].cycles.data  # type: ignore[union-attr]
        for op in module.walk()
        if isinstance(op, GenericOp) and isinstance(op.attributes.get("t10.estimate"), EstimateAttr)
    )
    for p in passes[1:]:
        p.apply(Context(), module)
    module.verify()
    return module, estimated


def run_and_check(model: onnx.ModelProto, path: str | Path, chip: str) -> SimResult:
    module, _ = compile_model(path if isinstance(path, Path) else model, chip)
    inputs = random_inputs(model)
    result = simulate(module, load_chip(chip), inputs)
    session = ort.InferenceSession(
        str(path) if isinstance(path, Path) else model.SerializeToString()
    )
    expected = session.run(None, inputs)
    for output, want in zip(model.graph.output, expected, strict=True):
        np.testing.assert_allclose(result.outputs[output.name], want, rtol=1e-4, atol=1e-5)
    return result


@pytest.mark.parametrize("chip", ["test-16", "ipu-mk2"])
@pytest.mark.parametrize("name", TORCH_MODELS)
def test_torch_exports_match_onnxruntime(name: str, chip: str) -> None:
    path = DATA / name
    run_and_check(onnx.load(path), path, chip)


@pytest.mark.parametrize("chip", ["test-16", "ipu-mk2"])
def test_builtin_mlp_matches_onnxruntime(chip: str) -> None:
    model = mlp(batch=8, sizes=(256, 512, 256, 10))
    result = run_and_check(model, "mlp", chip)
    assert result.report.total_cycles > 0
    assert result.report.peak_sram_bytes_per_core <= load_chip(chip).sram_bytes_per_core


def test_large_matmul_uses_the_chip_and_estimate_matches_simulation() -> None:
    """Acceptance: 1024x4096 by 4096x1024 on ipu-mk2 uses >= 90% of the cores, its estimate is
    within 10% of the simulated cycles, and it is no slower than the replicate plan."""
    chip = load_chip("ipu-mk2")
    model = matmul(1024, 4096, 1024)
    inputs = random_inputs(model)
    t10_module, t10_estimate = compile_model(model, "ipu-mk2", "t10")
    t10_report = simulate(t10_module, chip, inputs).report
    replicate_module, _ = compile_model(model, "ipu-mk2", "replicate")
    replicate_report = simulate(replicate_module, chip, inputs).report
    cores = max(op.cores_used for op in t10_report.ops)
    assert cores >= 0.9 * chip.cores
    assert abs(t10_estimate - t10_report.total_cycles) <= 0.1 * t10_report.total_cycles
    assert t10_report.total_cycles <= replicate_report.total_cycles


def test_rotation_fits_where_replication_does_not() -> None:
    """Acceptance: on test-16 a 256x512 by 512x512 matmul compiles with the t10 planner (by
    rotating) and is simulated exactly, while the replicate planner is refused clearly."""
    model = matmul(256, 512, 512)
    result = run_and_check(model, "matmul", "test-16")
    assert result.report.peak_sram_bytes_per_core <= 256 * 1024
    assert any(op.exchanged_bytes > 0 for op in result.report.ops)
    with pytest.raises(T10Error, match="does not fit chip 'test-16'"):
        compile_model(model, "test-16", "replicate")
