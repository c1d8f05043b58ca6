"""The Python entry points (`compile_model`, `run_model`, `simulate`, `import_onnx`,
`load_chip`) raise one `T10Error` naming the problem for every kind of bad input: never
another exception, never a silently cast, dropped or approximated value."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from t10.common.chip_spec import chip_from_dict, load_chip
from t10.driver import CompileOptions, compile_model, run_model
from t10.errors import T10Error
from t10.frontend import import_onnx
from t10.sim.simulator import simulate

CHIP = "test-16"


def _model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[int, list[int]]],
    outputs: list[str],
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _relu(shape: list[int] | None = None) -> onnx.ModelProto:
    return _model(
        [helper.make_node("Relu", ["x"], ["y"], name="act")],
        {"x": (TensorProto.FLOAT, shape or [4, 8])},
        ["y"],
    )


def _saved(tmp_path: Path, model: onnx.ModelProto, name: str = "m.onnx") -> str:
    path = tmp_path / name
    onnx.save_model(model, str(path))
    return str(path)


def _raises(call: Callable[[], object], *words: str) -> str:
    """`call` raises a T10Error whose one-line message contains every word."""
    with pytest.raises(T10Error) as info:
        call()
    message = str(info.value)
    assert "\n" not in message.strip(), message
    for word in words:
        assert word in message, (word, message)
    return message


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


def test_missing_and_malformed_models(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.onnx")
    _raises(lambda: compile_model(missing, CompileOptions(chip=CHIP)), "nope.onnx")
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07this is not a model")
    _raises(lambda: compile_model(str(garbage), CompileOptions(chip=CHIP)), "garbage.onnx")
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(_relu().SerializeToString()[:20])
    _raises(lambda: import_onnx(str(truncated)), "truncated.onnx")


def test_unsupported_operator_is_named() -> None:
    model = _model(
        [helper.make_node("Hardmax", ["x"], ["y"], name="odd")], {"x": (TensorProto.FLOAT, [4])},
        ["y"],
    )
    _raises(lambda: compile_model(model, CompileOptions(chip=CHIP)), "unsupported", "Hardmax")


def test_unsupported_opset_and_no_outputs() -> None:
    _raises(lambda: import_onnx(_model([], {"x": (TensorProto.FLOAT, [4])}, [], opset=99)), "99")
    no_outputs = _model(
        [helper.make_node("Relu", ["x"], ["y"])], {"x": (TensorProto.FLOAT, [4])}, []
    )
    _raises(lambda: import_onnx(no_outputs), "no graph outputs")


def test_negative_dim_is_refused_before_shape_inference() -> None:
    _raises(lambda: import_onnx(_relu([4, -1])), "'x'", "-1")


def test_model_that_fits_no_plan() -> None:
    _raises(lambda: compile_model(_relu([4096, 4096]), CompileOptions(chip=CHIP)), "does not fit")


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "emit", "words"),
    [
        (CompileOptions(chip="no-such-chip"), "chip", ("no-such-chip",)),
        (CompileOptions(chip=CHIP, planner="greedy"), "chip", ("greedy", "replicate")),
        (CompileOptions(chip=CHIP, precision="fp8"), "chip", ("fp8",)),
        (CompileOptions(chip=CHIP), "llvm", ("llvm", "chip")),
    ],
)
def test_bad_compile_options(options: CompileOptions, emit: str, words: tuple[str, ...]) -> None:
    _raises(lambda: compile_model(_relu(), options, emit=emit), *words)


def test_bad_chip_figures_name_the_field() -> None:
    good = load_chip(CHIP)
    assert good.cores == 16
    _raises(lambda: load_chip("/no/such/chip.json"), "chip.json")
    _raises(lambda: chip_from_dict({"name": "x", "cores": -3}), "cores")


# --------------------------------------------------------------------------------------------
# Input arrays
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("inputs", "words"),
    [
        ({}, ("missing", "'x'")),
        ({"x": np.zeros((4, 8), np.float32), "z": np.zeros(3, np.float32)}, ("'z'",)),
        ({"x": np.zeros((8, 4), np.float32)}, ("'x'", "[8, 4]", "[4, 8]")),
        ({"x": np.zeros((4, 8), np.float64)}, ("'x'", "float64", "float32")),
        ({"x": np.zeros((4, 8), np.float16)}, ("'x'", "float16")),
        ({"x": np.zeros((4, 8), np.int64)}, ("'x'", "int64")),
        ({"x": np.zeros((4, 8), np.complex64)}, ("'x'", "complex64")),
    ],
)
def test_run_model_refuses_inputs_that_are_not_the_models(
    tmp_path: Path, inputs: dict[str, np.ndarray], words: tuple[str, ...]
) -> None:
    path = _saved(tmp_path, _relu())
    _raises(lambda: run_model(path, CompileOptions(chip=CHIP), inputs=inputs), *words)


@pytest.mark.parametrize("check", [True, 1e-5, "fp32"])
def test_run_model_refuses_a_check_that_is_not_a_tolerance(tmp_path: Path, check: object) -> None:
    path = _saved(tmp_path, _relu())
    _raises(lambda: run_model(path, CompileOptions(chip=CHIP), check=check),  # type: ignore[arg-type]
            "check must be a Tolerance", "check_tolerance", repr(check))


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (np.zeros((4, 8), np.float64), ("'x'", "float64", "float32")),
        (np.zeros((4, 8), np.int32), ("'x'", "int32")),
        (np.zeros((4, 8), bool), ("'x'", "bool")),
        (np.zeros((2, 8), np.float32), ("'x'", "[2, 8]")),
    ],
)
def test_simulate_refuses_inputs_that_are_not_the_programs(
    value: np.ndarray, words: tuple[str, ...]
) -> None:
    compiled = compile_model(_relu(), CompileOptions(chip=CHIP))
    _raises(lambda: simulate(compiled.module, compiled.chip, {"x": value}), *words)


def test_simulate_takes_an_integer_input_in_its_declared_dtype() -> None:
    model = _model(
        [helper.make_node("Cast", ["ids"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("Relu", ["f"], ["y"])],
        {"ids": (TensorProto.INT64, [4])},
        ["y"],
    )
    compiled = compile_model(model, CompileOptions(chip=CHIP))
    ids = np.array([3, -1, 0, 7], np.int64)
    out = simulate(compiled.module, compiled.chip, {"ids": ids}).outputs["y"]
    np.testing.assert_array_equal(out, np.maximum(ids, 0).astype(np.float32))
    _raises(
        lambda: simulate(compiled.module, compiled.chip, {"ids": ids.astype(np.int32)}),
        "'ids'", "int32", "int64",
    )


def test_simulation_overflow_and_nan_are_values_not_warnings() -> None:
    """A product whose terms overflow to +inf and -inf is NaN, as in onnxruntime; numpy's
    "invalid value encountered in matmul" warning is not printed."""
    w = np.full((8, 3), 3e38, np.float32)
    w[1] = -3e38
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    compiled = compile_model(model, CompileOptions(chip=CHIP))
    x = np.full((4, 8), 2.0, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = simulate(compiled.module, compiled.chip, {"x": x}).outputs
    assert np.isnan(out["y"]).all()


@pytest.mark.parametrize("where", ["input", "kernel"])
def test_fp16_overflow_is_reported(tmp_path: Path, where: str) -> None:
    """A finite value input or computed beyond fp16's ±65504 is stored as ±inf, as on IEEE
    fp16 hardware, and when it reaches an output the report says where: a warning naming the
    load or kernel, the count and the first value. (A constant saturates instead:
    test_fp16_finite.py.)"""
    w = np.ones((8, 3), np.float32)
    x = np.ones((4, 8), np.float32)
    if where == "input":
        x[3, 0] = -7e4
    else:
        w[:, 2] = 1e4  # each product is 8e4
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(w, "w")],
    )
    path = _saved(tmp_path, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    result = run_model(path, CompileOptions(chip=CHIP, precision="fp16"), inputs={"x": x})
    (warning,) = result.report.warnings
    assert "fp16 overflow" in warning and "--precision fp32" in warning
    assert ("core.kernel 'mm'" if where == "kernel" else "core.load") in warning
    assert not np.isfinite(result.outputs["y"]).all()
    assert run_model(path, CompileOptions(chip=CHIP), inputs={"x": x}).report.warnings == ()
