"""The plan search's memory model against the simulator: whatever the SRAM per core, the
search either refuses the model with a "does not fit" error, or its plans run in the
simulator within the bound it recorded (`t10.model_bytes`), which is within the chip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import DATA, chip_file_with_sram, tiny_llama
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CHECK_TOLERANCES, CompileOptions, run_model
from t10.errors import T10Error

FRACTIONS = (0.9, 0.72, 0.6, 0.3)
"""SRAM per core as fractions of what the unconstrained plans need."""


def _ints(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _returned_views(path: Path) -> Path:
    """Outputs that are views: several of one input (also read by a MatMul), several of a
    MatMul output (also read by a Relu; made after a Neg that it outlives), one of the
    Relu's output."""
    node = helper.make_node
    nodes = [
        node("MatMul", ["x", "w"], ["m"]),
        node("Relu", ["m"], ["r"]),
        node("Neg", ["y"], ["n"]),
        node("Slice", ["x", "one", "three", "zero"], ["x_rows"]),
        node("Transpose", ["x"], ["x_t"], perm=[0, 2, 1]),
        node("Slice", ["m", "zero", "one", "zero"], ["m_first"]),
        node("Transpose", ["m"], ["m_t"], perm=[2, 1, 0]),
        node("Reshape", ["r", "flat"], ["r_flat"]),
    ]
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((40, 48)).astype(np.float32), "w")
    outputs = ("x_rows", "x_t", "m_first", "m_t", "r_flat", "n")
    graph = helper.make_graph(
        nodes,
        "returned_views",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 24, 40]),
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 24, 80]),
        ],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [weight, _ints("zero", [0]), _ints("one", [1]), _ints("three", [3]),
         _ints("flat", [4, -1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, path)
    return path


BUILT = {"llama": tiny_llama, "returned_views": _returned_views}


@pytest.mark.parametrize("model", ["llama", "returned_views", "mlp_3layer.torchscript.onnx"])
def test_plans_fit_the_simulator_at_every_sram_size(model: str, tmp_path: Path) -> None:
    path = BUILT[model](tmp_path / f"{model}.onnx") if model in BUILT else DATA / model
    free = run_model(str(path), CompileOptions(chip="test-16")).report
    needed = free.planned_sram_bytes_per_core
    assert free.peak_sram_bytes_per_core <= needed
    outcomes = []
    for fraction in FRACTIONS:
        sram = int(needed * fraction) // 4 * 4
        try:
            report = run_model(
                str(path),
                CompileOptions(chip=chip_file_with_sram(sram, tmp_path)),
                check=CHECK_TOLERANCES["fp32"],
            ).report
        except T10Error as err:
            assert f"does not fit chip 'sram{sram}'" in str(err)
            outcomes.append("refused")
            continue
        assert report.check.passed
        assert report.peak_sram_bytes_per_core <= report.planned_sram_bytes_per_core <= sram
        assert report.total_cycles >= free.total_cycles
        outcomes.append("fits")
    # the sizes reach both outcomes: squeezed plans that still run, then a refusal
    assert outcomes[0] == "fits" and outcomes[-1] == "refused"


def _views_of_big_input(path: Path) -> Path:
    """No operator: two nested Slices of a 133 KB input, both returned."""
    node = helper.make_node
    nodes = [
        node("Slice", ["x", "zero", "one", "zero"], ["a"]),
        node("Slice", ["a", "zero", "one", "one"], ["b"]),
    ]
    graph = helper.make_graph(
        nodes,
        "views_of_big_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 5, 11, 11, 11])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("a", "b")],
        [_ints("zero", [0]), _ints("one", [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, path)
    return path


def test_returned_views_of_an_input_fit_or_are_refused_by_the_search(tmp_path: Path) -> None:
    """The views are made from one placement of the input; the search counts it and the
    views' buffers, so a chip too small is refused by the search, never by the simulator."""
    path = _views_of_big_input(tmp_path / "views.onnx")
    free = run_model(
        str(path),
        CompileOptions(chip="test-16"),
        check=CHECK_TOLERANCES["fp32"],
    ).report
    assert free.check.passed
    needed = free.planned_sram_bytes_per_core
    assert free.peak_sram_bytes_per_core <= needed
    # the input is placed once: twice would not fit test-16
    assert 2 * 5 * 5 * 11 * 11 * 11 * 4 > free.sram_bytes_per_core > needed
    report = run_model(
        str(path),
        CompileOptions(chip=chip_file_with_sram(needed, tmp_path)),
        check=CHECK_TOLERANCES["fp32"],
    ).report
    assert report.check.passed
    assert report.peak_sram_bytes_per_core <= report.planned_sram_bytes_per_core == needed
    sram = needed - 4
    with pytest.raises(T10Error, match=f"does not fit chip 'sram{sram}'.*returned view 'Slice_"):
        run_model(str(path), CompileOptions(chip=chip_file_with_sram(sram, tmp_path)))


def _flat_view_of_short_input(path: Path) -> Path:
    """An input whose largest dim (12) is shorter than test-16's cores, returned flattened
    (its placement takes 12 cores, so the flat view lies over 12, not 16), beside a Neg."""
    node = helper.make_node
    graph = helper.make_graph(
        [node("Neg", ["y"], ["n"]), node("Reshape", ["x", "flat"], ["x_flat"])],
        "flat_view_of_short_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [12, 12, 12]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 4])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("n", "x_flat")],
        [_ints("flat", [12 * 12 * 12])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.save(model, path)
    return path


def test_a_returned_view_lies_over_its_placed_sources_cores(tmp_path: Path) -> None:
    """The search counts the view's buffer over the cores the input's placement takes: at
    exactly its bound the model runs, 4 bytes less and the search refuses it."""
    path = _flat_view_of_short_input(tmp_path / "flat.onnx")
    free = run_model(
        str(path),
        CompileOptions(chip="test-16"),
        check=CHECK_TOLERANCES["fp32"],
    ).report
    needed = free.planned_sram_bytes_per_core
    assert free.peak_sram_bytes_per_core == needed == 2 * 12 * 12 * 4  # source + view
    report = run_model(
        str(path),
        CompileOptions(chip=chip_file_with_sram(needed, tmp_path)),
        check=CHECK_TOLERANCES["fp32"],
    ).report
    assert report.check.passed
    sram = needed - 4
    with pytest.raises(T10Error, match=f"does not fit chip 'sram{sram}'.*returned view"):
        run_model(str(path), CompileOptions(chip=chip_file_with_sram(sram, tmp_path)))
