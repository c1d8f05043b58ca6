"""Whole-pipeline tests: ONNX models compiled to the chip level, simulated, and checked
against onnxruntime. The torch models were exported by both torch exporters
(scripts/export_torch_models.py); the transformer blocks beside them (scripts/export_hf_models.py)
are tested in test_hf_exports.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers import DATA, TRANSFORMER_PREFIXES, random_onnx_inputs, run_and_check
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp

from t10.common.chip_spec import load_chip
from t10.driver import (
    CHECK_TOLERANCES,
    CompileOptions,
    compile_model,
    compile_module,
    make_context,
    run_model,
)
from t10.errors import T10Error
from t10.examples.models import matmul, mlp
from t10.sim.simulator import simulate
from t10.t10_dialects.parsing import Parser
from t10.t10_dialects.rtensor import EstimateAttr

TORCH_MODELS = sorted(
    p.name for p in DATA.glob("*.onnx") if not p.name.startswith(TRANSFORMER_PREFIXES)
)


def compile_with_estimate(
    model: onnx.ModelProto | Path, chip: str, planner: str = "t10"
) -> tuple[ModuleOp, int]:
    """The chip-level module and the plan search's total estimated cycles."""
    compiled = compile_model(model, CompileOptions(chip=chip, planner=planner, fuse=False))
    estimated = sum(
        op.attributes["t10.estimate"].cycles.data
        for op in compiled.planned.walk()
        if isinstance(op, GenericOp) and isinstance(op.attributes.get("t10.estimate"), EstimateAttr)
    )
    return compiled.module, estimated


@pytest.mark.parametrize("name", TORCH_MODELS)
def test_torch_exports_match_onnxruntime(name: str, chip: str) -> None:
    path = DATA / name
    run_and_check(path, chip, fuse=False)


def test_builtin_mlp_matches_onnxruntime(chip: str) -> None:
    model = mlp(batch=8, sizes=(256, 512, 256, 10))
    result = run_and_check(model, chip, fuse=False).result
    assert result.report.total_cycles > 0
    assert result.report.peak_sram_bytes_per_core <= load_chip(chip).sram_bytes_per_core


def test_large_matmul_uses_the_chip_and_estimate_matches_simulation() -> None:
    """Acceptance: 1024x4096 by 4096x1024 on ipu-mk2 uses >= 90% of the cores, its estimate is
    within 10% of the simulated cycles, and it is no slower than the replicate plan."""
    chip = load_chip("ipu-mk2")
    model = matmul(1024, 4096, 1024)
    inputs = random_onnx_inputs(model)
    t10_module, t10_estimate = compile_with_estimate(model, "ipu-mk2", "t10")
    t10_report = simulate(t10_module, chip, inputs).report
    replicate_module, _ = compile_with_estimate(model, "ipu-mk2", "replicate")
    replicate_report = simulate(replicate_module, chip, inputs).report
    cores = max(op.cores_used for op in t10_report.ops)
    assert cores >= 0.9 * chip.cores
    assert abs(t10_estimate - t10_report.total_cycles) <= 0.1 * t10_report.total_cycles
    assert t10_report.total_cycles <= replicate_report.total_cycles


def test_rotation_fits_where_replication_does_not() -> None:
    """Acceptance: on test-16 a 256x512 by 512x512 matmul compiles with the t10 planner (by
    rotating) and is simulated exactly, while the replicate planner is refused clearly."""
    model = matmul(256, 512, 512)
    result = run_and_check(model, "test-16", fuse=False).result
    assert result.report.peak_sram_bytes_per_core <= 256 * 1024
    assert any(op.exchanged_bytes > 0 for op in result.report.ops)
    with pytest.raises(T10Error, match="does not fit chip 'test-16'"):
        compile_with_estimate(model, "test-16", "replicate")


def _graph_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, list[int]],
    outputs: list[str],
    weights: dict[str, list[int]] | None = None,
) -> onnx.ModelProto:
    """A float32 model whose outputs carry no shape (as some exporters write them)."""
    rng = np.random.default_rng(1)
    graph = onnx.helper.make_graph(
        nodes,
        "edge",
        [
            onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, s)
            for n, s in inputs.items()
        ],
        [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in outputs],
        [
            onnx.numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
            for n, s in (weights or {}).items()
        ],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


_node = onnx.helper.make_node
EDGE_CASES = {
    "batched matmul": _graph_model(
        [_node("MatMul", ["a", "b"], ["y"])], {"a": [2, 3, 4], "b": [2, 4, 5]}, ["y"]
    ),
    "broadcast batch matmul": _graph_model(
        [_node("MatMul", ["a", "b"], ["y"])], {"a": [2, 1, 3, 4], "b": [3, 4, 5]}, ["y"]
    ),
    "vector-matrix": _graph_model(
        [_node("MatMul", ["a", "w"], ["y"])], {"a": [4]}, ["y"], {"w": [4, 3]}
    ),
    "dot product (rank-0 result)": _graph_model(
        [_node("MatMul", ["a", "b"], ["y"])], {"a": [4], "b": [4]}, ["y"]
    ),
    "scalar add": _graph_model([_node("Add", ["a", "s"], ["y"])], {"a": [3, 5]}, ["y"], {"s": []}),
    "gemm transA alpha beta": _graph_model(
        [_node("Gemm", ["a", "w", "c"], ["y"], transA=1, alpha=0.5, beta=2.0)],
        {"a": [7, 5]},
        ["y"],
        {"w": [7, 3], "c": [3]},
    ),
    "gemm transB column bias": _graph_model(
        [_node("Gemm", ["a", "w", "c"], ["y"], transB=1)],
        {"a": [5, 7]},
        ["y"],
        {"w": [3, 7], "c": [5, 1]},
    ),
    "two-sided broadcast": _graph_model(
        [_node("Sub", ["a", "b"], ["y"])], {"a": [3, 1], "b": [1, 4]}, ["y"]
    ),
    "identity output": _graph_model([_node("Identity", ["a"], ["y"])], {"a": [3, 4]}, ["y"]),
    "square of an input": _graph_model([_node("Mul", ["a", "a"], ["y"])], {"a": [127, 131]}, ["y"]),
    "two outputs": _graph_model(
        [_node("Relu", ["a"], ["y"]), _node("Add", ["y", "a"], ["z"])], {"a": [6, 10]}, ["y", "z"]
    ),
    "prime sizes": _graph_model(
        [_node("MatMul", ["a", "w"], ["h"]), _node("Relu", ["h"], ["y"])],
        {"a": [127, 131]},
        ["y"],
        {"w": [131, 61]},
    ),
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_cases_match_onnxruntime(case: str, chip: str) -> None:
    run_and_check(EDGE_CASES[case], chip, fuse=False)


def test_whole_model_fits_only_with_rotation() -> None:
    """Memory reconciliation over a whole MLP: with all weights resident, T10's plans fit
    test-16's 256 KiB per core (some operators rotate), the replicate planner's cannot."""
    model = mlp(batch=64, sizes=(256, 1024, 512, 64))
    result = run_and_check(model, "test-16", fuse=False).result
    assert result.report.peak_sram_bytes_per_core <= 256 * 1024
    with pytest.raises(T10Error, match="does not fit chip 'test-16'"):
        compile_with_estimate(model, "test-16", "replicate")


PADDED_REDUCTION = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<5x7xf32> {t10.name = "a"}, %b: tensor<7x3xf32> {t10.name = "b"})
    -> (tensor<5x3xf32> {t10.name = "y"}) {
  %ea = tensor.empty() : tensor<5x7xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<5x7xf32>) outs(%ea : tensor<5x7xf32>)
      attrs = {t10.name = "a+1", t10.plan = #rtensor.plan<grid [1, 2]>} {
  ^bb0(%x: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %x, %one : f32
    linalg.yield %s : f32
  } -> tensor<5x7xf32>
  %eb = tensor.empty() : tensor<7x3xf32>
  %b1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<7x3xf32>) outs(%eb : tensor<7x3xf32>)
      attrs = {t10.name = "b+1", t10.plan = #rtensor.plan<grid [2, 1]>} {
  ^bb0(%x: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %s = arith.addf %x, %one : f32
    linalg.yield %s : f32
  } -> tensor<7x3xf32>
  %z = arith.constant dense<0.0> : tensor<5x3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
      affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a1, %b1 : tensor<5x7xf32>, tensor<7x3xf32>) outs(%z : tensor<5x3xf32>)
      attrs = {t10.name = "mm", t10.plan = #rtensor.plan<grid [1, 1, 2]>} {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<5x3xf32>
  func.return %y : tensor<5x3xf32>
}
"""


def test_padding_stays_zero_through_a_reduction() -> None:
    """7 does not split in 2: tiles of 4 pad k with one element. `x + 1` turns padding into
    ones unless kernels zero it; the matmul then reads both padded operands where their
    producers left them (pinned plans, same placement: no relayout re-zeroes them)."""
    module = Parser(make_context(), PADDED_REDUCTION).parse_module()
    compile_module(module, CompileOptions(chip="test-16"))
    assert not any(op.name == "core.relayout" for op in module.walk())
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal((7, 3)).astype(np.float32)
    result = simulate(module, load_chip("test-16"), {"a": a, "b": b})
    np.testing.assert_allclose(result.outputs["y"], (a + 1) @ (b + 1), rtol=1e-5, atol=1e-5)


def _projections(seq: int = 16, hidden: int = 64) -> onnx.ModelProto:
    """Three projections (q, k, v) of one on-chip activation, as in attention."""
    rng = np.random.default_rng(4)
    weights = [
        onnx.numpy_helper.from_array(
            rng.standard_normal((hidden, hidden)).astype(np.float32) * 0.1, f"w{name}"
        )
        for name in "qkv"
    ]
    nodes = [onnx.helper.make_node("Tanh", ["x"], ["h"], name="act")]
    nodes += [
        onnx.helper.make_node("MatMul", ["h", f"w{name}"], [name], name=f"{name}_proj")
        for name in "qkv"
    ]
    graph = onnx.helper.make_graph(
        nodes,
        "projections",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [seq, hidden])],
        [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [seq, hidden])
         for n in "qkv"],
        weights,
    )
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])


def test_projections_of_one_activation_share_its_move(chip: str, tmp_path: Path) -> None:
    """q, k and v read the activation in the same layout: one relayout serves all three, and
    the estimate still matches the simulation op by op."""
    path = tmp_path / "projections.onnx"
    onnx.save(_projections(), path)
    report = run_model(str(path), CompileOptions(chip=chip), check=CHECK_TOLERANCES["fp32"]).report
    assert report.check.passed
    moves = [op.name for op in report.ops if op.kind == "relayout"]
    assert moves == ["q_proj/relayout"]
    assert report.estimated_total_cycles == report.total_cycles
    assert report.peak_sram_bytes_per_core <= report.planned_sram_bytes_per_core
