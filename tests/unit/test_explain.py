"""`t10 explain`: an operator's frontier, the chosen plan and why."""

from __future__ import annotations

import io
import pathlib
import re
import tempfile

import numpy as np
import onnx
import pytest
from helpers import chip_file_with_sram
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.common.attr_names import MODEL_BYTES_ATTR, REUSED_ATTR
from t10.driver import CompileOptions, compile_model, run_model
from t10.errors import T10Error
from t10.examples import zoo
from t10.examples.models import mlp
from t10.tools.cli import main
from t10.tools.explain import explain, format_explanation, plot_file_name


@pytest.fixture(scope="module")
def tight_chip(tmp_path_factory: pytest.TempPathFactory) -> str:
    """test-16 with 75,000 B per core: the MLP fits, but not with its fastest plans."""
    return chip_file_with_sram(75_000, tmp_path_factory.mktemp("chips"))


@pytest.mark.parametrize("op", ["fc1/MatMul", "fc2/Relu", "fc3/Add"])
def test_the_chosen_plan_is_the_models(tight_chip: str, op: str) -> None:
    """The chosen alternative is the plan the search recorded, and the model measured around
    it is the model the search planned: its peak and its estimated cycles."""
    e = explain(mlp(), op, CompileOptions(chip=tight_chip))
    run = run_model(mlp(), CompileOptions(chip=tight_chip), timing_only=True)
    planned = compile_model(mlp(), CompileOptions(chip=tight_chip), emit="linalg").module
    assert e.chosen.model_bytes == planned.attributes[MODEL_BYTES_ATTR].value.data
    assert e.chosen.model_cycles == run.report.estimated_total_cycles
    assert e.chosen.model_bytes <= e.sram_bytes
    assert sum(a.chosen for a in e.alternatives) == 1


def _three_readers() -> onnx.ModelProto:
    """relu(x) read by three MatMuls whose plans want it in one layout: its move into them is
    made once and shared."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Relu", ["x"], ["h"], name="act")]
    weights = []
    for n in "qkv":
        nodes.append(helper.make_node("MatMul", ["h", f"w{n}"], [n], name=f"{n}_proj"))
        weights.append(numpy_helper.from_array(
            rng.standard_normal((64, 64)).astype(np.float32), f"w{n}"
        ))
    nodes.append(helper.make_node("Add", ["q", "k"], ["qk"], name="add1"))
    nodes.append(helper.make_node("Add", ["qk", "v"], ["y"], name="add2"))
    graph = helper.make_graph(
        nodes,
        "three_readers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 64])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("op", ["q_proj", "k_proj", "v_proj"])
def test_the_chosen_plan_counts_the_shared_moves(op: str) -> None:
    """Where readers share a move, the model measured around the chosen plan is still the
    model the search planned (it once counted every reader's move apart)."""
    model = _three_readers()
    planned = compile_model(model, CompileOptions(chip="test-16"), emit="linalg").module
    assert any(REUSED_ATTR in o.attributes for o in planned.walk())
    e = explain(model, op, CompileOptions(chip="test-16"))
    run = run_model(model, CompileOptions(chip="test-16"), timing_only=True)
    assert e.chosen.model_cycles == run.report.estimated_total_cycles
    assert e.chosen.model_bytes == planned.attributes[MODEL_BYTES_ATTR].value.data


def test_memory_is_the_reason_when_faster_plans_do_not_fit(tight_chip: str) -> None:
    e = explain(mlp(), "fc1/MatMul", CompileOptions(chip=tight_chip))
    faster = [a for a in e.alternatives if a.model_cycles < e.chosen.model_cycles]
    assert faster and all(a.model_bytes > e.sram_bytes for a in faster)
    assert e.reason().startswith("memory: every plan that would make the model faster needs")
    assert "75,000 B of SRAM" in e.reason()


def test_the_fastest_plan_when_memory_does_not_bind() -> None:
    e = explain(mlp(), "fc1/MatMul", CompileOptions(chip="test-16"))
    assert e.chosen.point.cycles == min(a.point.cycles for a in e.alternatives)
    assert e.reason() == "it is the operator's fastest plan, and the model fits with it"
    text = io.StringIO()
    format_explanation(e, text)
    lines = text.getvalue().splitlines()
    assert lines[0] == ("operator  fc1/MatMul+fc1/Add+fc1/Relu  (ONNX nodes: fc1/MatMul, "
                        "fc1/Add, fc1/Relu)")
    assert sum(line.startswith("=> grid [") for line in lines) == 1
    assert any(line.startswith("  input 1 [256, 512]: ") for line in lines)
    assert any(line.startswith("  into its reader fc2/MatMul+fc2/Add+fc2/Relu") for line in lines)


def test_cli_on_a_bert_base_ffn_matmul(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's case: a BERT-base FFN matmul (sequence 32 to keep it quick), the frontier
    and the chosen plan printed, the plot written."""
    model = tmp_path / "bert.onnx"
    zoo.write("bert-base", model, batch=1, seq=32, layers=1)
    plot = tmp_path / "fc1.png"
    code = main(["explain", str(model), "--op", "layer0/mlp/fc1/MatMul", "--precision", "fp16",
                 "-o", str(plot)])
    assert code == 0
    text = capsys.readouterr().out
    assert text.startswith("operator  layer0/mlp/fc1/MatMul")
    assert "chip      ipu-mk2: 1,472 cores, 638,976 B SRAM per core" in text
    assert sum(line.startswith("=> grid [") for line in text.splitlines()) == 1
    assert "\nwhy       " in text and f"plot      {plot}" in text
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("op", "planner", "message"),
    [
        ("nosuch", "t10", "no operator is named 'nosuch' or made from an ONNX node"),
        ("fc1/MatMul", "vgm", "vgm plans each operator on its own"),
    ],
)
def test_bad_requests(op: str, planner: str, message: str) -> None:
    with pytest.raises(T10Error, match=message):
        explain(mlp(), op, CompileOptions(chip="test-16", planner=planner))


def _long_fused_model() -> onnx.ModelProto:
    """MatMul, Add and Relu, fused into one operator of a 500-character name (names as long
    as a Hugging Face export's, three of them joined)."""
    rng = np.random.default_rng(0)
    names = ["encoder/layer.0/intermediate/dense/" * 5 + op for op in ("MatMul", "Add", "Relu")]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"], name=names[0]),
         helper.make_node("Add", ["m", "b"], ["a"], name=names[1]),
         helper.make_node("Relu", ["a"], ["y"], name=names[2])],
        "long_names",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 64])],
        [numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_default_plot_file_of_a_long_fused_operator(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--plot` without `-o` writes a short file name for an operator named with 500
    characters, asked for by that name or by one of its nodes' (it once wrote
    explain-<the name asked for>.png: "File name too long")."""
    model = tmp_path / "long.onnx"
    onnx.save(_long_fused_model(), model)
    nodes = [n.name for n in _long_fused_model().graph.node]
    operator = "+".join(nodes)
    assert len(operator) >= 500
    for k, op in enumerate([operator, nodes[2]]):
        out = tmp_path / f"out{k}"
        out.mkdir()
        monkeypatch.chdir(out)
        assert main(["explain", str(model), "--op", op, "--chip", "test-16", "--plot"]) == 0
        text = capsys.readouterr().out
        assert text.startswith(f"operator  {operator}  (ONNX nodes: ")
        [written] = out.iterdir()
        assert written.name == plot_file_name(operator)
        assert f"plot      {written.name}" in text
        assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@given(st.text(min_size=1, max_size=600), st.text(min_size=1, max_size=600))
def test_default_plot_file_names_are_short_safe_and_one_per_operator(a: str, b: str) -> None:
    """Any operator name gives a name of at most 62 characters, of letters, digits, '-', '_'
    and '.' only (no path, no hidden file), that a file can have; two names give two."""
    name = plot_file_name(a)
    assert len(name) <= 62 and re.fullmatch(r"explain-[A-Za-z0-9._-]*-[0-9a-f]{8}\.png", name)
    assert (plot_file_name(b) == name) == (a == b)
    with tempfile.TemporaryDirectory() as d:
        (pathlib.Path(d) / name).write_bytes(b"")
