"""fp16 storage (`--precision fp16`, `t10-plan-search{precision=fp16}`): f16 buffers and
exchanges, fp16 matmul rates, fp32 accumulation, and numerics that really are rounded."""

from __future__ import annotations

import json
from math import prod
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from xdsl.dialects.builtin import StringAttr
from xdsl.dialects.linalg.ops import GenericOp

from t10 import driver
from t10.common.chip_spec import load_chip
from t10.common.epilogues import is_epilogue
from t10.common.plans import Plan, Rotation
from t10.common.tensor_expr import op_name
from t10.driver import CompileOptions, compile_model, run_model
from t10.errors import T10Error
from t10.examples.models import matmul, mlp
from t10.frontend import import_onnx
from t10.outputs.report import Tolerance, check_outputs, input_specs, random_inputs
from t10.passes.t10_fuse_elementwise import T10FuseElementwise
from t10.passes.t10_fuse_epilogue import T10FuseEpilogue
from t10.sim.simulator import SimResult, simulate
from t10.t10_dialects import core
from t10.t10_dialects.rtensor import PlanAttr
from t10.tools import cli


def _save(model: onnx.ModelProto, tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, path)
    return str(path)


def _half(x: np.ndarray) -> np.ndarray:
    """fp16 storage of fp32 values, read back as fp32."""
    return np.asarray(x, np.float32).astype(np.float16).astype(np.float32)


def test_mlp_fp16_matches_onnxruntime_within_fp16_tolerance(chip: str, tmp_path: Path) -> None:
    path = _save(mlp(batch=8, sizes=(256, 512, 256, 10)), tmp_path, "mlp")
    result = run_model(
        path,
        CompileOptions(chip=chip, precision="fp16"),
        check=driver.CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed
    assert result.report.precision == "fp16"
    fp32 = run_model(path, CompileOptions(chip=chip)).report
    assert fp32.precision == "fp32"
    assert result.report.peak_sram_bytes_per_core < fp32.peak_sram_bytes_per_core


def _simulate_with_plans(
    path: str, chip: str, precision: str
) -> tuple[SimResult, list[tuple[str, str, int]]]:
    """Simulate `path` at `precision` with the plans the fp32 search chose (pinned); also
    return every buffer's label, element type and bytes per core, in program order."""
    fp32 = compile_model(path, CompileOptions(chip=chip), emit="linalg")
    plans = {op_name(op): op.attributes["t10.plan"] for op in fp32.module.walk()
             if isinstance(op, GenericOp) and not is_epilogue(op)}
    module = import_onnx(path)
    driver.run_passes(module, (T10FuseElementwise(), T10FuseEpilogue()))  # the fp32 operators
    for op in module.walk():
        if isinstance(op, GenericOp) and not is_epilogue(op):
            op.attributes["t10.plan"] = plans[op_name(op)]
    driver.compile_module(module, driver.CompileOptions(chip=chip, precision=precision))
    buffers = []
    for op in module.walk():
        if isinstance(op, core.AllocOp):
            tensor = op.result.type.tensor
            elem = tensor.get_element_type()
            nbytes = prod(tensor.get_shape()) * elem.bitwidth // 8
            buffers.append((op.label.data, str(elem), nbytes))
    inputs = random_inputs(input_specs(module), 0)
    return simulate(module, fp32.chip, inputs), buffers


def test_same_plans_halve_exchange_and_buffer_bytes(chip: str, tmp_path: Path) -> None:
    """With the fp32 plans pinned, every buffer and every exchange of fp16 is half as big,
    except the fp32 partial-sum accumulators and the all-reduces that move them."""
    path = _save(mlp(batch=8, sizes=(256, 512, 256, 10)), tmp_path, "mlp")
    full, full_buffers = _simulate_with_plans(path, chip, "fp32")
    half, half_buffers = _simulate_with_plans(path, chip, "fp16")
    # fp16 has one more buffer per accumulator: the f16 output it is rounded into
    accumulators = {label for label, elem, _ in half_buffers if elem == "f32"}
    rounded = [i for i, (label, elem, _) in enumerate(half_buffers) if label in accumulators
               and elem == "f16" and half_buffers[i - 1][:2] == (label, "f32")]
    kept = [b for i, b in enumerate(half_buffers) if i not in rounded]
    assert [b[0] for b in kept] == [b[0] for b in full_buffers]
    for (label, elem, nbytes), (_, _, full_bytes) in zip(kept, full_buffers, strict=True):
        assert nbytes * (1 if elem == "f32" else 2) == full_bytes, label
    halved = 0
    for a, b in zip(full.report.ops, half.report.ops, strict=True):
        assert a.name == b.name
        if b.name in accumulators:  # the all-reduce moves fp32 partial sums
            assert b.exchanged_bytes <= a.exchanged_bytes
        else:
            assert 2 * b.exchanged_bytes == a.exchanged_bytes, b.name
            halved += a.exchanged_bytes > 0
    assert halved > 0
    if not accumulators:
        assert 2 * half.report.peak_sram_bytes_per_core == full.report.peak_sram_bytes_per_core


def test_partial_sums_accumulate_in_f32_then_round(tmp_path: Path) -> None:
    """A pinned plan that shifts along k (8 steps) and splits k over 2 cores: f16 operands, an
    f32 accumulator (4 bytes, also in the all-reduce) rounded once into f16, the estimate
    equal to the simulation, the result one rounding of the fp32 sum of fp16 operands."""
    model = matmul(256, 512, 512)
    module = import_onnx(model)
    plan = Plan((1, 8, 2), temporal_dim=2, steps=8, rotations=(Rotation(0, 1, 8),))
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    generic.attributes["t10.plan"] = PlanAttr.from_plan(plan)
    compiled = driver.compile_module(
        module,
        driver.CompileOptions(chip="test-16", precision="fp16", fuse=False),
    )
    (planned,) = [op for op in compiled.planned.walk() if isinstance(op, GenericOp)]
    estimate = planned.attributes["t10.estimate"].cycles.data
    assert module.attributes["t10.precision"] == StringAttr("fp16")
    allocs = [
        (op.label.data, str(op.result.type.tensor.get_element_type()))
        for op in module.walk()
        if isinstance(op, core.AllocOp)
    ]
    assert sorted(allocs) == [
        ("input", "f16"), ("matmul", "f16"), ("matmul", "f32"), ("matmul/in1", "f16")
    ]
    x = random_inputs(input_specs(module), 0)
    result = simulate(module, load_chip("test-16"), x)
    assert result.report.op("matmul").cycles == estimate
    w = numpy_helper.to_array(model.graph.initializer[0])
    want = _half(_half(x["input"]).astype(np.float64) @ _half(w).astype(np.float64))
    np.testing.assert_allclose(result.outputs["output"], want, rtol=2**-10, atol=1e-6)


def test_planner_fits_in_fp16_what_fp32_cannot(tmp_path: Path) -> None:
    """64x1024 by 1024x1024: 4.5 MiB of fp32 tensors exceed test-16's 4 MiB, fp16 fits."""
    model = matmul(64, 1024, 1024)
    path = _save(model, tmp_path, "mm")
    with pytest.raises(T10Error, match="does not fit chip 'test-16'"):
        compile_model(path, CompileOptions(chip="test-16"))
    result = run_model(path, CompileOptions(chip="test-16", precision="fp16"))
    assert result.report.peak_sram_bytes_per_core <= 256 * 1024
    fp16 = compile_model(path, CompileOptions(chip="test-16", precision="fp16"))
    x = random_inputs(input_specs(fp16.module), 0)
    w = numpy_helper.to_array(model.graph.initializer[0])
    want = _half(_half(x["input"]).astype(np.float64) @ _half(w).astype(np.float64))
    np.testing.assert_allclose(result.outputs["output"], want, rtol=2**-10, atol=1e-6)


def test_fp16_numerics_are_fp16_storage_not_fp32(tmp_path: Path) -> None:
    """The fp16 outputs differ from fp32's and match a numpy model of fp16 storage (inputs,
    weights and every operator's output rounded to fp16; fp32 accumulation) to one ulp."""
    model = mlp(batch=8, sizes=(64, 48, 10))
    path = _save(model, tmp_path, "mlp")
    fp16 = run_model(path, CompileOptions(chip="test-16", precision="fp16")).outputs["output"]
    fp32 = run_model(path, CompileOptions(chip="test-16")).outputs["output"]
    w = {t.name: _half(numpy_helper.to_array(t)) for t in model.graph.initializer}
    compiled = compile_model(path, CompileOptions(chip="test-16"))
    x = random_inputs(input_specs(compiled.module), 0)["input"]
    h = _half(_half(x).astype(np.float64) @ w["fc1.weight"])
    h = np.maximum(_half(h + w["fc1.bias"]), 0)  # the max of fp16 numbers is one
    h = _half(h.astype(np.float64) @ w["fc2.weight"])
    want = _half(h + w["fc2.bias"])
    np.testing.assert_allclose(fp16, want, rtol=2**-10, atol=1e-6)
    assert not np.allclose(fp16, fp32, rtol=1e-4, atol=1e-5)
    assert np.array_equal(fp16, _half(fp16))  # every value is an fp16 number


def test_bad_precision_is_one_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "model.onnx", "--precision", "bf8"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'bf8'" in err and "fp32" in err and "fp16" in err
    with pytest.raises(T10Error, match="unknown precision 'bf8'; choose one of fp32, fp16"):
        compile_model("model.onnx", CompileOptions(precision="bf8"))


def test_cli_run_fp16_reports_precision_and_uses_fp16_tolerance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _save(mlp(batch=8, sizes=(64, 48, 10)), tmp_path, "mlp")
    report = tmp_path / "r.json"
    args = ["run", path, "--chip", "test-16", "--precision", "fp16", "--check"]
    outputs = tmp_path / "out.npz"
    assert cli.main([*args, "--report", str(report), "--outputs", str(outputs)]) == 0
    out = capsys.readouterr().out
    assert "precision fp16" in out and "<= 0.001 + 0.01·rms(ref) + 0.01·|ref|" in out
    data = json.loads(report.read_text())
    assert data["precision"] == "fp16" and data["check"]["rtol"] == 1e-2
    assert data["check"]["atol_rms"] == 1e-2
    rms = float(np.sqrt(np.mean(np.square(np.load(outputs)["output"]))))  # ~ the reference's
    assert data["check"]["outputs"]["output"]["atol"] == pytest.approx(1e-3 + 1e-2 * rms, 1e-3)
    assert cli.main(["compile", path, "--chip", "test-16", "--precision", "fp16",
                     "--emit", "core"]) == 0
    assert "!core.buffer<" in (ir := capsys.readouterr().out) and "xf16>" in ir


def test_fp16_tolerance_follows_the_output_scale() -> None:
    """An element near zero among large ones carries rounding error of their scale: the
    fp16 default allows 1e-2 of the output's root mean square (here about 81.6) on top."""
    ref = {"y": np.array([100.0, -100.0, 0.01])}
    sim = {"y": ref["y"] + np.array([0.5, -0.5, 0.8])}
    fp16 = driver.CHECK_TOLERANCES["fp16"]
    assert check_outputs(sim, ref, fp16).passed
    assert check_outputs(sim, ref, fp16).outputs["y"].atol == pytest.approx(1e-3 + 0.8165, 1e-4)
    assert not check_outputs(sim, ref, Tolerance(fp16.rtol, fp16.atol)).passed
    assert not check_outputs({"y": ref["y"] + np.array([0, 0, 0.9])}, ref, fp16).passed


# ------------------------------------------------------------------------- fp16 partials


def _dyadic(x: np.ndarray) -> np.ndarray:
    """`x` rounded to multiples of 1/64 in [-1, 1]: fp16 numbers whose products and sums of up
    to 2^12 terms are exact in fp32 whatever the order of the additions, so only the fp16
    roundings of partial sums (what the tests below model) can differ from exact."""
    return (np.clip(np.round(x * 32), -64, 64) / 64).astype(np.float32)


def _pinned_matmul(m: int, k: int, n: int, plan: Plan, partials: str) -> tuple[
    driver.Compiled, onnx.ModelProto
]:
    model = matmul(m, k, n)
    weight = model.graph.initializer[0]
    weight.CopyFrom(numpy_helper.from_array(_dyadic(numpy_helper.to_array(weight)), "weight"))
    module = import_onnx(model)
    (generic,) = [op for op in module.walk() if isinstance(op, GenericOp)]
    generic.attributes["t10.plan"] = PlanAttr.from_plan(plan)
    compiled = driver.compile_module(
        module,
        driver.CompileOptions(chip="test-16", precision="fp16", partials=partials, fuse=False),
    )
    return compiled, model


def _estimate_and_run(compiled: driver.Compiled) -> tuple[int, SimResult, dict]:
    (planned,) = [op for op in compiled.planned.walk() if isinstance(op, GenericOp)]
    x = {name: _dyadic(v) for name, v in random_inputs(input_specs(compiled.module), 0).items()}
    result = simulate(compiled.module, compiled.chip, x)
    return planned.attributes["t10.estimate"].cycles.data, result, x


def test_fp16_partials_add_in_fp16_across_cores() -> None:
    """k split over 2 cores: each core's half-sum is stored in f16 and the all-reduce adds the
    two f16 halves in f16: exactly half(half(x0 w0) + half(x1 w1)); no f32 buffer."""
    plan = Plan((1, 8, 2))
    compiled, model = _pinned_matmul(16, 256, 64, plan, "fp16")
    estimate, result, x = _estimate_and_run(compiled)
    assert result.report.op("matmul").cycles == estimate
    types = {str(op.result.type.tensor.get_element_type())
             for op in compiled.module.walk() if isinstance(op, core.AllocOp)}
    assert types == {"f16"}
    xh = _half(x["input"])
    wh = _half(numpy_helper.to_array(model.graph.initializer[0]))
    want = _half(_half(xh[:, :128] @ wh[:128]) + _half(xh[:, 128:] @ wh[128:]))
    np.testing.assert_array_equal(result.outputs["output"], want)
    fp32_partials, _ = _pinned_matmul(16, 256, 64, plan, "fp32")
    assert not np.array_equal(
        simulate(fp32_partials.module, fp32_partials.chip, x).outputs["output"],
        result.outputs["output"],
    )


def test_fp16_partials_round_at_every_step() -> None:
    """k in 8 steps (A rotating on a ring of 8 along n): the core holding output columns p
    adds the k-chunks p, p+1, ... (mod 8) into its f16 tile, rounding after each step."""
    plan = Plan((1, 8, 1), temporal_dim=2, steps=8, rotations=(Rotation(0, 1, 8),))
    compiled, model = _pinned_matmul(16, 256, 64, plan, "fp16")
    estimate, result, x = _estimate_and_run(compiled)
    assert result.report.op("matmul").cycles == estimate
    xh = _half(x["input"])
    wh = _half(numpy_helper.to_array(model.graph.initializer[0]))
    want = np.zeros((16, 64), np.float32)
    for p in range(8):
        cols = slice(8 * p, 8 * p + 8)
        for t in range(8):
            ks = slice(32 * ((p + t) % 8), 32 * ((p + t) % 8) + 32)
            want[:, cols] = _half(want[:, cols] + xh[:, ks] @ wh[ks, cols])
    np.testing.assert_array_equal(result.outputs["output"], want)
    assert not np.array_equal(want, _half(xh @ wh))  # rounding once would differ


def test_fp16_partials_are_cheaper_and_match_onnxruntime(chip: str, tmp_path: Path) -> None:
    """The search with fp16 partials: never slower than with fp32 partials, and within the
    fp16-partials tolerance of onnxruntime."""
    path = _save(mlp(batch=16, sizes=(512, 1024, 256)), tmp_path, "mlp")
    tolerance = driver.check_tolerance("fp16", "fp16")
    half = run_model(
        path,
        CompileOptions(chip=chip, precision="fp16", partials="fp16"),
        check=tolerance,
    )
    assert half.check is not None and half.check.passed
    full = run_model(path, CompileOptions(chip=chip, precision="fp16"))
    assert half.report.total_cycles <= full.report.total_cycles
    assert half.report.estimated_total_cycles == half.report.total_cycles


def test_partials_narrower_than_storage_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _save(mlp(batch=8, sizes=(64, 48, 10)), tmp_path, "mlp")
    assert cli.main(["run", path, "--chip", "test-16", "--partials", "fp16"]) == 1
    assert capsys.readouterr().err.strip() == (
        "t10: error: --partials: partials 'fp16' are narrower than the 'fp32' storage; use "
        "partials=fp32 or wider"
    )
    args = ["run", path, "--chip", "test-16", "--precision", "fp16", "--partials", "fp16"]
    assert cli.main([*args, "--check"]) == 0
    assert "<= 0.001 + 0.03·rms(ref) + 0.03·|ref|" in capsys.readouterr().out
