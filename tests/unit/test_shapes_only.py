"""Models in the shapes-only form (``t10 zoo --shapes-only``, ``t10.common.shapes_only``):
their weights declared without data, imported as elided constants; a timing-only run counts
what the model with its weights counts, a run with values refuses with one line, and no fold
reads an elided weight."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from t10.common import shapes_only
from t10.driver import CHECK_TOLERANCES, CompileOptions, run_model
from t10.errors import T10Error
from t10.examples.zoo import ZOO

REFUSAL = (
    "is in the shapes-only form (its weights are declared without data, as t10 zoo "
    "--shapes-only writes them), so it cannot run with values: simulate it with "
    "--timing-only, or write the model without --shapes-only"
)


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize(
    "name, phase",
    [("llama2-7b", "prefill"), ("llama2-7b", "decode"), ("opt-1.3b", "prefill"),
     ("opt-1.3b", "decode"), ("bert-base", None)],
)
def test_timing_only_counts_what_the_model_with_weights_counts(
    name: str, phase: str | None
) -> None:
    """OPT's and BERT's position rows are a Gather of the (elided) position table that
    folding would evaluate: its result is elided too; BERT's token rows are a runtime gather
    from the elided token table."""
    cfg = replace(ZOO[name].config, hidden=64, heads=4, intermediate=96,
                  vocab=min(ZOO[name].config.vocab, 50))
    seq, context = (None, 5) if phase == "decode" else (6, None)
    weighted = ZOO[name].build(2, seq, 2, config=cfg, phase=phase, context=context)
    declared, _ = ZOO[name].build_shapes_only(2, seq, 2, config=cfg, phase=phase,
                                              context=context)
    options = CompileOptions(chip="test-16", precision="fp16")
    full = run_model(weighted, options, timing_only=True).report
    shapes = run_model(declared, options, timing_only=True).report
    assert shapes.total_cycles == full.total_cycles > 0
    assert shapes.peak_sram_bytes_per_core == full.peak_sram_bytes_per_core
    assert shapes.ops == full.ops


def test_the_file_holds_no_weight_bytes(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 2 7B at full size, 2 layers, decode: 1.6 GB of weights declared in a file of a
    few kilobytes (no data file), each weight at the documented location."""
    from t10.tools.cli import main

    path = tmp_path / "llama.onnx"
    assert main(["zoo", "llama2-7b", "--layers", "2", "--phase", "decode", "--context", "1024",
                 "--shapes-only", "-o", str(path)]) == 0
    out = capsys.readouterr().out
    assert "; shapes only: 1,619.1 MB of weights declared without data (timing-only runs)" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["llama.onnx"]
    assert path.stat().st_size < 100_000
    model = onnx.load(str(path), load_external_data=False)
    assert shapes_only.in_form(model)
    weights = [t for t in model.graph.initializer if shapes_only.declared(t)]
    assert len(weights) == 2 * 9 + 1  # 7 projections and 2 norms per layer, the final norm
    assert all(not t.raw_data and t.data_type == TensorProto.FLOAT for t in weights)
    assert {e.value for t in weights for e in t.external_data} == {"__t10_shapes_only__"}
    assert [t.dims for t in weights if t.name == "layer1.mlp.down_proj.weight"] == [[11008, 4096]]


def test_a_run_with_values_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from t10.tools.cli import main

    path = tmp_path / "opt.onnx"
    cfg = replace(ZOO["opt-1.3b"].config, hidden=64, heads=4, intermediate=96)
    declared, _ = ZOO["opt-1.3b"].build_shapes_only(1, 4, config=cfg)
    onnx.save(declared, path)
    for flags in ([], ["--check"]):
        assert main(["run", str(path), "--chip", "test-16", *flags]) == 1
        assert _one_line_error(capsys) == f"t10: error: ONNX model '{path}' {REFUSAL}"
    assert main(["run", str(path), "--chip", "test-16", "--timing-only"]) == 0
    assert "total " in capsys.readouterr().out
    with pytest.raises(T10Error, match="^ONNX model 'opt-1.3b' is in the shapes-only form"):
        run_model(declared, CompileOptions(chip="test-16"), check=CHECK_TOLERANCES["fp32"])


def _model(*, form: bool) -> onnx.ModelProto:
    """``y = Where(w > 0, x, 0)`` with the weight ``w`` declared without data: the
    condition would be folded from w's values."""
    w = shapes_only.declare("w", TensorProto.FLOAT, (2, 8))
    nodes = [helper.make_node("Greater", ["w", "zero"], ["positive"], name="positive"),
             helper.make_node("Where", ["positive", "x", "zero"], ["y"], name="where")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
        [w, onnx.numpy_helper.from_array(np.zeros((), np.float32), "zero")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    if form:
        helper.set_model_props(model, {"t10.weights": "shapes-only"})
    return model


def test_no_fold_reads_an_elided_weight(tmp_path: Path) -> None:
    with pytest.raises(T10Error) as e:
        run_model(_model(form=True), CompileOptions(chip="test-16"), timing_only=True)
    assert str(e.value) == (
        "ONNX model 'g': node 'positive' (Greater) needs the values of weight 'w' at compile "
        "time, but the model is in the shapes-only form (its weights are declared without "
        "data): write it with its weights (without --shapes-only)")
    path = tmp_path / "m.onnx"
    onnx.save(_model(form=False), path)  # without the metadata entry: a missing file
    with pytest.raises(T10Error, match="tensor 'w' has its data in file '__t10_shapes_only__', "
                                       "which is not a file in the model's folder"):
        run_model(str(path), CompileOptions(chip="test-16"), timing_only=True)
