"""The `t10` command (run / compile / bench-matmuls), the report and the `t10-sim` target."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import chip_file_with_sram
from onnx import TensorProto, helper

from t10.common.bounds import operator_bound
from t10.common.chip_spec import load_chip
from t10.common.tensor_expr import matmul_expr
from t10.driver import CompileOptions, check_tolerance, compile_model, make_context, run_model
from t10.examples.models import matmul, mlp
from t10.outputs.report import input_specs, random_inputs
from t10.tools.cli import main

REPORT_KEYS = {
    "chip", "cores", "sram_bytes_per_core", "total_cycles", "seconds",
    "estimated_total_cycles", "peak_sram_bytes_per_core", "ops",
}
OP_KEYS = {
    "name", "kind", "plan", "cores_used", "cycles", "compute_cycles", "exchange_cycles",
    "sync_cycles", "estimated_cycles", "sram_bytes_per_core",
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    out = {
        "mlp": d / "mlp.onnx",
        "mm": d / "mm.onnx",
        "mm_big": d / "mm_big.onnx",
        "unsupported": d / "hardmax.onnx",
        "garbage": d / "garbage.onnx",
    }
    onnx.save_model(mlp(batch=4, sizes=(32, 48, 16)), out["mlp"])
    onnx.save_model(matmul(m=24, k=40, n=32), out["mm"])
    onnx.save_model(matmul(m=256, k=512, n=512), out["mm_big"])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    graph = helper.make_graph([helper.make_node("Hardmax", ["x"], ["y"], name="h")], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save_model(model, out["unsupported"])
    out["garbage"].write_bytes(b"this is not an onnx model")
    out["mask"] = d / "mask.onnx"
    onnx.save_model(_attention_mask_model(), out["mask"])
    return out


def _attention_mask_model() -> onnx.ModelProto:
    """y = scores + (1 - float(mask)) · -10000 with an INT64 mask input (BERT's)."""
    node = helper.make_node
    graph = helper.make_graph(
        [
            node("Cast", ["mask"], ["mf"], to=TensorProto.FLOAT),
            node("Sub", ["one", "mf"], ["inv"]),
            node("Mul", ["inv", "big_neg"], ["bias"]),
            node("Add", ["scores", "bias"], ["y"]),
        ],
        "mask",
        [
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [2, 6]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, [2, 6]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 6])],
        [
            helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0]),
            helper.make_tensor("big_neg", TensorProto.FLOAT, [1], [-10000.0]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _symbolic_model() -> onnx.ModelProto:
    """An exported model's symbolic dims: scores and mask [batch, sequence] (shared names),
    a MatMul to [batch, sequence, 4], an output and a value info declared symbolically (one of
    them with a derived name, as exporters write)."""
    node = helper.make_node
    graph = helper.make_graph(
        [
            node("Cast", ["mask"], ["mf"], to=TensorProto.FLOAT),
            node("Mul", ["scores", "mf"], ["masked"]),
            node("Unsqueeze", ["masked", "last"], ["col"]),
            node("MatMul", ["col", "w"], ["y"]),
        ],
        "symbolic",
        [
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["batch", "sequence"]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", 4])],
        [
            helper.make_tensor("last", TensorProto.INT64, [1], [-1]),
            helper.make_tensor("w", TensorProto.FLOAT, [1, 4], [0.5, -1.0, 2.0, 0.25]),
        ],
        value_info=[helper.make_tensor_value_info("col", TensorProto.FLOAT,
                                                  ["batch", "sequence", "unk__1"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("t10: error: ")
    return lines[0]


# ------------------------------------------------------------------------------------- run


def test_run_check_passes(
    models: dict[str, Path], chip: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(models["mlp"]), "--chip", chip, "--check"]) == 0
    out = capsys.readouterr().out
    assert f"chip    {chip}:" in out
    assert "cycles =" in out and "µs" in out
    assert "peak" in out and "PASSED" in out
    assert "fc1/MatMul" in out and "fc2/Add" in out
    assert "#rtensor.plan<grid" in out


def test_dims_give_symbolic_dimensions_their_sizes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--dim` sizes the symbolic dims of every input (and what is declared of the others);
    the result matches onnxruntime run on the symbolic model."""
    path = tmp_path / "symbolic.onnx"
    onnx.save(_symbolic_model(), path)
    argv = ["run", str(path), "--chip", "test-16", "--check", "--dim", "batch=3",
            "--dim", "sequence=5"]
    assert main(argv) == 0
    assert "PASSED" in capsys.readouterr().out
    assert main(["compile", str(path), "--chip", "test-16", "--emit", "linalg", "--dim",
                 "batch=2", "--dim", "sequence=7"]) == 0
    assert "%scores: tensor<2x7xf32>" in capsys.readouterr().out
    result = run_model(
        _symbolic_model(),
        CompileOptions(chip="test-16"),
        check=None,
        dims={"batch": 1, "sequence": 2},
    )
    assert result.outputs["y"].shape == (1, 2, 4)


@pytest.mark.parametrize(
    ("dims", "message"),
    [
        (["--dim", "batch=3"], "graph input 'scores' has symbolic dimension 'sequence' at axis 1;"
         " the compiler needs static shapes: give it a size with `--dim sequence=SIZE`"),
        (["--dim", "batch=3", "--dim", "seq=5"], "a size is given for dimension 'seq', but no "
         r"graph input has a symbolic dimension of that name \(they have: batch, sequence\)"),
        (["--dim", "batch=3", "--dim", "batch=4"], "--dim gives dimension 'batch' twice"),
        (["--dim", "batch=0"], "argument --dim: expected NAME=SIZE"),
        (["--dim", "batch"], "argument --dim: expected NAME=SIZE"),
    ],
)
def test_dim_errors(
    dims: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "symbolic.onnx"
    onnx.save(_symbolic_model(), path)
    assert main(["run", str(path), "--chip", "test-16", *dims]) in (1, 2)
    assert re.search(message, _error_line(capsys))


def test_run_with_the_exact_search_where_memory_binds(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--search exact` chooses the plans that fit a squeezed chip, and they run and check."""
    needed = run_model(
        str(models["mlp"]),
        CompileOptions(chip="test-16"),
    ).report.planned_sram_bytes_per_core
    chip = chip_file_with_sram(int(needed * 0.9) // 4 * 4, tmp_path)
    assert main(["run", str(models["mlp"]), "--chip", chip, "--search", "exact", "--check"]) == 0
    assert "PASSED" in capsys.readouterr().out


def test_run_outputs_and_report(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs, report_path = tmp_path / "out.npz", tmp_path / "report.json"
    argv = ["run", str(models["mlp"]), "--chip", "test-16", "--check",
            "--outputs", str(outputs), "--report", str(report_path)]
    assert main(argv) == 0
    capsys.readouterr()
    with np.load(outputs) as data:
        assert data.files == ["output"]
        assert data["output"].shape == (4, 16)
    report = json.loads(report_path.read_text())
    assert REPORT_KEYS <= report.keys()
    assert {"max_abs_error", "max_rel_error"} <= report.keys()
    assert report["chip"] == "test-16" and report["cores"] == 16
    assert report["check"]["passed"] is True
    assert report["max_abs_error"] <= 1e-4
    assert report["total_cycles"] == sum(op["cycles"] or 0 for op in report["ops"])
    names = [op["name"] for op in report["ops"]]
    # each MatMul runs its bias add (and ReLU) as its epilogue
    assert {"fc1/MatMul+fc1/Add+fc1/Relu", "fc2/MatMul+fc2/Add"} <= set(names)
    for op in report["ops"]:
        assert OP_KEYS <= op.keys()
        if op["kind"] in ("contraction", "elementwise"):
            assert op["plan"].startswith("#rtensor.plan<grid")
            assert op["estimated_cycles"] > 0
        else:
            assert op["kind"] == "relayout" and op["name"].endswith("/relayout")
            assert op["estimated_cycles"] > 0
    kinds = {op["name"]: op["kind"] for op in report["ops"]}
    assert kinds["fc1/MatMul+fc1/Add+fc1/Relu"] == "contraction"
    assert report["peak_sram_bytes_per_core"] <= report["sram_bytes_per_core"]


def test_run_inputs_npz_matches_seeded(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = compile_model(str(models["mm"]), CompileOptions(chip="test-16"), emit="linalg").module
    inputs = random_inputs(input_specs(module), seed=5)
    np.savez(tmp_path / "in.npz", **inputs)
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    assert main(["run", str(models["mm"]), "--chip", "test-16", "--seed", "5",
                 "--outputs", str(a)]) == 0
    assert main(["run", str(models["mm"]), "--chip", "test-16", "--inputs",
                 str(tmp_path / "in.npz"), "--outputs", str(b), "--check"]) == 0
    capsys.readouterr()
    with np.load(a) as ra, np.load(b) as rb:
        np.testing.assert_array_equal(ra["output"], rb["output"])


def test_run_integer_input(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Random integer inputs are 0/1 of the input's dtype; --inputs takes int64 arrays;
    --check feeds onnxruntime the integers."""
    module = compile_model(
        str(models["mask"]),
        CompileOptions(chip="test-16"),
        emit="linalg",
    ).module
    specs = input_specs(module)
    assert [(s.name, s.onnx_type) for s in specs] == [("scores", None), ("mask", "int64")]
    inputs = random_inputs(specs, seed=2)
    assert inputs["mask"].dtype == np.int64 and set(np.unique(inputs["mask"])) == {0, 1}
    assert inputs["scores"].dtype == np.float32
    argv = ["run", str(models["mask"]), "--chip", "test-16", "--check"]
    assert main([*argv, "--seed", "2"]) == 0
    assert "PASSED" in capsys.readouterr().out
    mask = np.array([[1, 1, 1, 0, 0, 0], [1, -7, 1, 1, 1, 2**24]], dtype=np.int64)
    np.savez(tmp_path / "in.npz", scores=inputs["scores"], mask=mask)
    outputs = tmp_path / "out.npz"
    assert main([*argv, "--inputs", str(tmp_path / "in.npz"), "--outputs", str(outputs)]) == 0
    assert "PASSED" in capsys.readouterr().out
    with np.load(outputs) as data:
        want = inputs["scores"] + (1 - mask.astype(np.float64)) * -10000
        np.testing.assert_allclose(data["y"], want, rtol=1e-6)


@pytest.mark.parametrize(
    ("mask", "message"),
    [
        (np.full((2, 6), 2**24 + 1, np.int64), "integer value 16777217 .* is not exactly "
         r"representable in float32"),
        (np.ones((2, 6), np.float32), r"input 'mask' has dtype float32, expected int64 \(the "
         r"model takes scores float32 \[2, 6\], mask int64 \[2, 6\]; nothing is cast"),
    ],
)
def test_run_integer_input_errors(
    models: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    mask: np.ndarray,
    message: str,
) -> None:
    np.savez(tmp_path / "in.npz", scores=np.zeros((2, 6), np.float32), mask=mask)
    argv = ["run", str(models["mask"]), "--chip", "test-16", "--inputs", str(tmp_path / "in.npz")]
    assert main(argv) == 1
    assert re.search(message, _error_line(capsys))


def test_run_check_fails_past_tolerance(
    models: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import t10.driver

    real = t10.driver.reference_outputs

    def off_by_a_bit(model: onnx.ModelProto, inputs: dict) -> dict:
        return {k: v + 1e-3 for k, v in real(model, inputs).items()}

    monkeypatch.setattr(t10.driver, "reference_outputs", off_by_a_bit)
    argv = ["run", str(models["mm"]), "--chip", "test-16", "--check"]
    assert main(argv) == 1
    out = capsys.readouterr()
    assert "FAILED" in out.out
    assert "beyond tolerance" in out.err and len(out.err.strip().splitlines()) == 1
    assert main([*argv, "--atol", "1e-2"]) == 0
    assert "PASSED" in capsys.readouterr().out


# --------------------------------------------------------------------------------- compile

LEVEL_OPS = {
    "linalg": ("linalg.generic", "t10.plan = #rtensor.plan<grid", "t10.estimate"),
    "rtensor": ("rtensor.generic", "rtensor.distribute"),
    "cshift": ("cshift.compute_shift",),
    "core": ("core.kernel", "core.alloc"),
    "chip": ("chip.program", "chip.superstep", "core.kernel"),
}


@pytest.mark.parametrize("level", list(LEVEL_OPS))
def test_compile_emit(
    models: dict[str, Path], level: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compile", str(models["mlp"]), "--chip", "test-16", "--emit", level]) == 0
    out = capsys.readouterr().out
    assert out.startswith("builtin.module")
    for text in LEVEL_OPS[level]:
        assert text in out
    if level != "linalg":
        assert "linalg.generic" not in out


def test_compile_output_file(models: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "mm.mlir"
    assert main(["compile", str(models["mm"]), "--chip", "test-16", "-o", str(target)]) == 0
    assert "chip.program" in target.read_text()


# ---------------------------------------------------------------------------------- errors


def test_error_unsupported_op(models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(models["unsupported"]), "--chip", "test-16"]) == 1
    assert "Hardmax" in _error_line(capsys)


def test_error_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nope.onnx")]) == 1
    assert "nope.onnx" in _error_line(capsys)


def test_error_bad_model(models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(models["garbage"])]) == 1
    assert "garbage.onnx" in _error_line(capsys)


def test_error_bad_chip(models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(models["mm"]), "--chip", "no-such-chip"]) == 1
    assert "no-such-chip" in _error_line(capsys)


def test_error_infeasible(models: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(models["mm_big"]), "--chip", "test-16", "--planner", "replicate"]
    assert main(argv) == 1
    assert "does not fit" in _error_line(capsys)


def test_error_bad_inputs(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.savez(tmp_path / "in.npz", wrong=np.zeros((24, 40), np.float32))
    argv = ["run", str(models["mm"]), "--chip", "test-16", "--inputs", str(tmp_path / "in.npz")]
    assert main(argv) == 1
    assert "wrong" in _error_line(capsys)
    assert main([*argv[:-1], str(tmp_path / "missing.npz")]) == 1
    assert "missing.npz" in _error_line(capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "m.onnx", "--planner", "magic"],
        ["run", "m.onnx", "--search", "optimal"],
        ["run", "m.onnx", "--temporaries", "0.5"],
        ["run", "m.onnx", "--planner", "replicate", "--temporaries", "0"],
        ["compile", "m.onnx", "--planner", "vgm", "--search", "greedy"],
        ["compile", "m.onnx", "--emit", "llvm"],
        ["run", "m.onnx", "--rtol", "-1"],
        ["run"],
        [],
        ["frobnicate"],
    ],
)
def test_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    _error_line(capsys)


def test_subprocess_smoke(models: dict[str, Path]) -> None:
    ok = subprocess.run(
        [sys.executable, "-m", "t10.tools.cli", "run", str(models["mm"]), "--chip", "test-16",
         "--check"],
        capture_output=True, text=True, check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert "PASSED" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "t10.tools.cli", "run", "/nonexistent/model.onnx"],
        capture_output=True, text=True, check=False,
    )
    assert bad.returncode == 1
    assert bad.stderr.startswith("t10: error: ") and len(bad.stderr.splitlines()) == 1


# ---------------------------------------------------------------------------------- target


def test_t10_sim_target(models: dict[str, Path]) -> None:
    import io

    from xdsl.dialects.builtin import ModuleOp

    from t10.errors import T10Error
    from t10.targets import T10SimTarget

    module = compile_model(str(models["mm"]), CompileOptions(chip="test-16")).module
    out = io.StringIO()
    T10SimTarget(seed=0).emit(make_context(), module, out)
    text = out.getvalue()
    assert "chip    test-16:" in text and "cycles =" in text
    assert any(line.split()[:2] == ["matmul", "contraction"] for line in text.splitlines())
    with pytest.raises(T10Error, match="t10.chip"):
        T10SimTarget().emit(make_context(), ModuleOp([]), io.StringIO())


def test_universe_registers_target() -> None:
    from t10.targets import T10SimTarget
    from t10.universe import T10_UNIVERSE

    assert T10_UNIVERSE.all_targets["t10-sim"]() is T10SimTarget


# ----------------------------------------------------------------------------------- bench


def test_bench_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench-matmuls", "--chip", "test-16", "--shapes", "32x64x48", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "32x64x48" in out and "T10/bound" in out
    assert "fp32 storage, fp32 partial sums, simulated cycles" in out
    assert "WARNING" not in out


def test_bench_on_a_routing_chip_shows_t10_placed_linearly_beside(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench-matmuls", "--chip", "mesh-64", "--shapes", "256x1024x1024",
                 "--quiet"]) == 0
    header, row = capsys.readouterr().out.splitlines()[1:3]
    assert header.split("  ")[-2:] == ["T10 linear cycles", "linear/T10"]
    # the placed plan folds its rings of 8 (tests/unit/test_placements.py): 35 cycles fewer
    t10, linear, ratio = row.split()[1], row.split()[-2], row.split()[-1]
    assert int(linear.replace(",", "")) - int(t10.replace(",", "")) == 35
    assert ratio == "1.00"


def test_bench_fp16_bound_is_the_fp16_operator_bound(
    capsys: pytest.CaptureFixture[str],
) -> None:
    shape = ["--chip", "test-16", "--shapes", "64x256x128", "--quiet"]
    assert main(["bench-matmuls", *shape, "--precision", "fp16"]) == 0
    out = capsys.readouterr().out
    assert "fp16 storage, fp32 partial sums, simulated cycles" in out
    assert "fp16 kernel cycles" in out and "WARNING" not in out
    chip = load_chip("test-16")
    half, full = (operator_bound(chip, matmul_expr(64, 256, 128, b)).cycles for b in (2, 4))
    assert f"{half:,}" in out.splitlines()[2].split()
    assert half < full


def test_run_help_states_the_check_tolerances_check_uses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each tolerance's help gives the defaults `check_tolerance` applies (fp32, fp16, fp16
    partials), so the help cannot drift from them."""
    assert main(["run", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for field, option in (("rtol", "--rtol RTOL"), ("atol", "--atol ATOL"),
                          ("atol_rms", "--atol-rms F")):
        fp32, fp16, partials = (getattr(check_tolerance(*p), field)
                                for p in (("fp32",), ("fp16",), ("fp16", "fp16")))
        said = text[text.rindex(option):]  # its help, after the usage line
        said = said[: said.index(")")]
        assert f"default {fp32:g}; fp16: {fp16:g}" in said
        assert (f"--partials fp16: {partials:g}" in said) == (partials != fp16)
