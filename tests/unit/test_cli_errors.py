"""Bad input to `t10 run` / `t10 compile` ends in one clear `t10: error:` line (exit 1, or 2
for a usage error): bad `--inputs`, options, output paths, chip files and models, each named
with its problem, never a traceback, an internal error or a silent cast. `--check` matches
NaN and infinities exactly. The cases that made onnx abort the process run in a subprocess."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper
from xdsl.dialects.builtin import ModuleOp

import t10.driver
import t10.tools.cli
from t10.common.chip_spec import ChipSpec, load_chip
from t10.driver import CHECK_TOLERANCES, CompileOptions, compile_model, run_model
from t10.errors import T10Error
from t10.frontend import SUPPORTED_OPSETS
from t10.outputs.npz_files import inputs_reader
from t10.outputs.report import Tolerance, check_outputs, input_specs
from t10.reference import reference_outputs, reference_session
from t10.sim.simulator import simulate
from t10.tools.cli import main

CHIP = "test-16"
DATA = Path(__file__).parent / "data"


def _model(
    nodes: Sequence[onnx.NodeProto],
    inputs: Sequence[tuple[str, int, Sequence[int | str | None]]],
    outputs: Sequence[tuple[str, int, Sequence[int | str | None]]],
    inits: Sequence[onnx.TensorProto] = (),
    opset: int = 17,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes),
        "g",
        [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in outputs],
        list(inits),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _mask_model() -> onnx.ModelProto:
    """y = scores + float(mask): a float32 and an INT64 input."""
    return _model(
        [helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["scores", "m"], ["y"])],
        [("scores", TensorProto.FLOAT, [2, 3]), ("mask", TensorProto.INT64, [2, 3])],
        [("y", TensorProto.FLOAT, [2, 3])],
    )


def _unary(op: str, opset: int = 17, dims: Sequence[int | str | None] = (2, 3)) -> onnx.ModelProto:
    return _model([helper.make_node(op, ["x"], ["y"], name="u")],
                  [("x", TensorProto.FLOAT, dims)], [("y", TensorProto.FLOAT, dims)], opset=opset)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("models")
    saved = {
        "mask": _mask_model(),
        "log": _unary("Log"),
        "relu": _unary("Relu"),
        "keywords": _model(
            [helper.make_node("Relu", ["x"], ["file"]),
             helper.make_node("Neg", ["x"], ["allow_pickle"])],
            [("x", TensorProto.FLOAT, [2, 3])],
            [("file", TensorProto.FLOAT, [2, 3]), ("allow_pickle", TensorProto.FLOAT, [2, 3])],
        ),
    }
    paths = {name: d / f"{name}.onnx" for name in saved}
    for name, model in saved.items():
        onnx.save_model(model, paths[name])
    return paths


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line of the last command: no traceback, no internal error."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("t10: error: "), err
    assert "Traceback" not in err and "internal error" not in err, err
    return lines[0]


def _fails(argv: list[str], code: int, pattern: str, capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would become an internal error
        assert main(argv) == code
    line = _error(capsys)
    assert re.search(pattern, line), line


# ---------------------------------------------------------------------------------- --inputs

_F32 = np.zeros((2, 3), np.float32)
_I64 = np.ones((2, 3), np.int64)
_EXPECTS = r"\(the model takes scores float32 \[2, 3\], mask int64 \[2, 3\]"


@pytest.mark.parametrize(
    ("arrays", "pattern"),
    [
        ({"scores": _F32}, "missing input 'mask' " + _EXPECTS),
        ({"scores": _F32, "mask": _I64, "extra": _F32}, "unknown input 'extra'"),
        ({"scores": np.zeros((3, 2), np.float32), "mask": _I64},
         r"input 'scores' has shape \[3, 2\], expected \[2, 3\]"),
        ({"scores": np.zeros(6, np.float32), "mask": _I64.reshape(3, 2)},
         r"input 'scores' has shape \[6\], expected \[2, 3\]; input 'mask' has shape \[3, 2\]"),
        *(
            ({"scores": _F32.astype(dtype), "mask": _I64},
             f"input 'scores' has dtype {np.dtype(dtype)}, expected float32 .*nothing is cast")
            for dtype in (np.float64, np.float16, np.int32, np.bool_, np.complex64, ">f4")
        ),
        ({"scores": np.full((2, 3), "a"), "mask": _I64},
         "input 'scores' has dtype <U1, expected float32"),
        ({"scores": _F32, "mask": _I64.astype(np.int32)},
         "input 'mask' has dtype int32, expected int64"),
        ({"scores": _F32, "mask": _I64.astype(np.float32)},
         "input 'mask' has dtype float32, expected int64"),
    ],
)
def test_inputs_must_match_exactly(
    models: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    arrays: dict[str, np.ndarray],
    pattern: str,
) -> None:
    _savez(tmp_path / "in.npz", arrays)
    argv = ["run", str(models["mask"]), "--chip", CHIP, "--inputs", str(tmp_path / "in.npz")]
    _fails(argv, 1, "the inputs do not match the model: .*" + pattern, capsys)


def _savez(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """numpy.savez of named arrays (its typing takes no mapping of names)."""
    np.savez(path, **arrays)  # pyright: ignore[reportArgumentType]


def _npy(p: Path) -> None:
    with open(p, "wb") as f:  # np.save(path) would append .npy to the name
        np.save(f, _F32)


def _pickle(p: Path) -> None:
    import pickle

    p.write_bytes(pickle.dumps({"scores": _F32}))


def _truncated(p: Path) -> None:
    np.savez(p.with_suffix(".full.npz"), scores=_F32)
    data = p.with_suffix(".full.npz").read_bytes()
    p.write_bytes(data[: len(data) // 2])


def _object_array(p: Path) -> None:
    np.savez(p, scores=np.array([None, 1], dtype=object))


def _not_npy_entry(p: Path) -> None:
    with zipfile.ZipFile(p, "w") as archive:
        archive.writestr("scores", "text")


def _directory(p: Path) -> None:
    p.mkdir()


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (_npy, "is a single .npy array, not a .npz archive: save the inputs with numpy.savez"),
        (_pickle, "is not a .npz archive: save the inputs with numpy.savez"),
        (_truncated, r"is not a readable .npz archive \(BadZipFile"),
        (_object_array, "entry 'scores' is an object array, which needs pickle"),
        (_not_npy_entry, "entry 'scores' is not a .npy array"),
        (_directory, "cannot read: Is a directory"),
        (lambda p: None, "no such file"),
    ],
)
def test_inputs_file_errors(
    models: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], None],
    pattern: str,
) -> None:
    path = tmp_path / "in.npz"
    make(path)
    argv = ["run", str(models["mask"]), "--chip", CHIP, "--inputs", str(path)]
    _fails(argv, 1, re.escape(f"--inputs '{path}'") + ".*" + pattern, capsys)


def _npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _zeros_entry(archive: zipfile.ZipFile, name: str, shape: tuple[int, ...],
                 data_bytes: int) -> None:
    """An .npy entry of float32 `shape` whose data is `data_bytes` zeros, streamed (deflated,
    small on disk)."""
    with archive.open(name, "w", force_zip64=True) as entry:
        np.lib.format.write_array_header_1_0(
            entry, {"descr": "<f4", "fortran_order": False, "shape": shape})
        chunk = bytes(2**20)
        for start in range(0, data_bytes, len(chunk)):
            entry.write(chunk[: min(len(chunk), data_bytes - start)])


@pytest.fixture
def decompressed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes read from zip entries (decompressed), counted."""
    counted = [0]
    read = zipfile.ZipExtFile.read

    def counting(self: zipfile.ZipExtFile, n: int = -1) -> bytes:
        data = read(self, n)
        counted[0] += len(data)
        return data

    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting)
    return counted


def test_inputs_bomb_is_refused_before_its_data_is_decompressed(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    decompressed: list[int],
) -> None:
    """An entry of 256 MiB of zeros (256 KiB on disk) for an input of 24 bytes: its header's
    shape is refused, having decompressed the headers only."""
    path = tmp_path / "in.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        _zeros_entry(archive, "scores.npy", (2**26,), 2**28)
        archive.writestr("mask.npy", _npy_bytes(_I64))
    assert path.stat().st_size < 2**20
    argv = ["run", str(models["mask"]), "--chip", CHIP, "--inputs", str(path)]
    _fails(argv, 1, r"input 'scores' has shape \[67108864\], expected \[2, 3\]", capsys)
    assert decompressed[0] < 2**16


def test_inputs_entry_longer_than_its_header_is_refused_unread(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    decompressed: list[int],
) -> None:
    """The right header over far more data than it declares: the archive is damaged (numpy
    would read the first 24 bytes and ignore the rest)."""
    path = tmp_path / "in.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        _zeros_entry(archive, "scores.npy", (2, 3), 24 + 2**26)
        archive.writestr("mask.npy", _npy_bytes(_I64))
    argv = ["run", str(models["mask"]), "--chip", CHIP, "--inputs", str(path)]
    _fails(argv, 1, "entry 'scores.npy' holds 67,109,016 bytes where its header says 152: "
                    "the archive is damaged", capsys)
    assert decompressed[0] < 2**16


def test_inputs_entry_given_twice_is_refused(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("scores.npy", _npy_bytes(_F32))
            archive.writestr("mask.npy", _npy_bytes(_I64))
            archive.writestr("scores.npy", _npy_bytes(_F32 + 1))
    argv = ["run", str(models["mask"]), "--chip", CHIP, "--inputs", str(path)]
    _fails(argv, 1, re.escape(f"--inputs '{path}': entry 'scores.npy' appears twice"), capsys)


def test_many_unknown_inputs_are_counted_not_listed(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A thousand extra entries (in a file, or given to run_model): the first names and how
    many more, in a short line."""
    path = tmp_path / "in.npz"
    extra = _npy_bytes(np.zeros(1, np.float32))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("scores.npy", _npy_bytes(_F32))
        archive.writestr("mask.npy", _npy_bytes(_I64))
        for i in range(1000):
            archive.writestr(f"e{i}.npy", extra)
    listed = "unknown inputs 'e0', 'e1', 'e2', 'e3', 'e4' and 995 more " + _EXPECTS
    argv = ["run", str(models["mask"]), "--chip", CHIP, "--inputs", str(path)]
    _fails(argv, 1, "the inputs do not match the model: " + listed, capsys)
    inputs = {"scores": _F32, "mask": _I64, **{f"e{i}": _F32 for i in range(1000)}}
    with pytest.raises(T10Error) as e:
        run_model(str(models["mask"]), CompileOptions(chip=CHIP), inputs=inputs)
    assert re.search(listed, str(e.value)) and len(str(e.value)) < 300


class MaskProgram:
    """The mask model's chip-level module and chip. Its repr is short: hypothesis prints a
    test's arguments for every example, and printing a module field by field took minutes."""

    def __init__(self, module: ModuleOp, chip: ChipSpec) -> None:
        self.module, self.chip = module, chip

    def __repr__(self) -> str:
        return f"MaskProgram(<the mask model on {self.chip.name}>)"


@pytest.fixture(scope="module")
def mask_program(models: dict[str, Path]) -> MaskProgram:
    """The mask model compiled once."""
    compiled = compile_model(str(models["mask"]), CompileOptions(chip=CHIP))
    return MaskProgram(compiled.module, compiled.chip)


_ARRAYS = st.dictionaries(
    st.sampled_from(["scores", "mask", "extra", "x"]),
    st.tuples(st.sampled_from([(2, 3), (3, 2), (6,), ()]),
              st.sampled_from(["<f4", "<i8", "<i4", "<f8", "|b1", ">f4"])),
)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_ARRAYS)
@example({"scores": ((2, 3), "<f4"), "mask": ((2, 3), "<i8")})
def test_inputs_file_decides_as_the_simulator(
    mask_program: MaskProgram, tmp_path: Path, arrays: dict[str, tuple[Any, str]]
) -> None:
    """Whatever arrays a file holds, reading it from the entries' headers refuses exactly
    what the simulator refuses given the arrays, with the same message, and else gives the
    same arrays."""
    module, chip = mask_program.module, mask_program.chip
    given_arrays = {name: np.zeros(shape, dtype) for name, (shape, dtype) in arrays.items()}
    path = tmp_path / "in.npz"
    _savez(path, given_arrays)
    try:
        simulate(module, chip, given_arrays, timing_only=True)
        refused = None
    except T10Error as e:
        refused = str(e)
    try:
        read = inputs_reader(str(path), "--inputs")(input_specs(module))
    except T10Error as e:
        assert str(e) == refused
    else:
        assert refused is None, refused
        assert read.keys() == given_arrays.keys()
        for name, value in read.items():
            assert value.dtype == given_arrays[name].dtype
            np.testing.assert_array_equal(value, given_arrays[name])


# ------------------------------------------------------------------ options and output paths


@pytest.mark.parametrize(
    ("extra", "code", "pattern"),
    [
        (["--seed=-1"], 2, "argument --seed: expected a non-negative integer, got '-1'"),
        (["--seed", "1.5"], 2, "argument --seed: expected an integer, got '1.5'"),
        (["--outputs", "OUT"], 2, "argument --outputs: expected a file name ending in .npz"),
        (["--outputs", "{tmp}"], 2, "argument --outputs: expected a file name ending in .npz"),
        (["--outputs", "{tmp}/dir.npz"], 1, "--outputs '.*dir.npz' is a directory"),
        (["--outputs", "{tmp}/no/o.npz"], 1, "--outputs '.*o.npz': directory '.*no' does not "
                                             "exist"),
        (["--report", "{tmp}/no/r.json"], 1, "--report '.*r.json': directory '.*no' does not"),
    ],
)
def test_run_option_errors(
    models: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    code: int,
    pattern: str,
) -> None:
    (tmp_path / "dir.npz").mkdir()
    argv = ["run", str(models["relu"]), "--chip", CHIP, *(a.format(tmp=tmp_path) for a in extra)]
    _fails(argv, code, pattern, capsys)


def test_compile_output_path_errors(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compile", str(models["relu"]), "--chip", CHIP, "-o"]
    _fails([*argv, str(tmp_path)], 1, "-o '.*' is a directory; give a file name", capsys)
    _fails([*argv, str(tmp_path / "no" / "x.mlir")], 1, "directory '.*no' does not exist", capsys)


def test_outputs_named_like_savez_arguments(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outputs `file` and `allow_pickle` are saved as such, exactly at the given path."""
    x = np.array([[-1.5, 0, 2], [3, -4, 5]], np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    out = tmp_path / "out.npz"
    argv = ["run", str(models["keywords"]), "--chip", CHIP, "--inputs", str(tmp_path / "in.npz"),
            "--outputs", str(out), "--check"]
    assert main(argv) == 0
    assert "PASSED" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npz", "out.npz"]
    with np.load(out, allow_pickle=False) as data:
        assert data.files == ["file", "allow_pickle"]
        np.testing.assert_array_equal(data["file"], np.maximum(x, 0))
        np.testing.assert_array_equal(data["allow_pickle"], -x)


# -------------------------------------------------------------------------------- chip files


@pytest.mark.parametrize(
    ("field", "value", "pattern"),
    [
        ("cores", 10**12, "'cores' must be an integer from 1 to 1048576, got 1000000000000"),
        ("cores", 0, "'cores' must be an integer from 1 to 1048576, got 0"),
        ("cores", -3, "'cores' must be an integer from 1 to 1048576, got -3"),
        ("cores", 2.5, "'cores' must be an integer from 1 to 1048576, got 2.5"),
        ("cores", "8", "'cores' must be an integer from 1 to 1048576, got \"8\""),
        ("cores", True, "'cores' must be an integer from 1 to 1048576, got true"),
        ("sram_bytes_per_core", 0, "'sram_bytes_per_core' must be an integer from 1 to"),
        ("clock_hz", -1, r"'clock_hz' must be a number > 0 and <= 1e\+12, got -1"),
        ("sync_cycles", 10**30, "'sync_cycles' must be an integer from 0 to 1000000000"),
    ],
)
def test_absurd_chip_figures(
    models: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    field: str,
    value: object,
    pattern: str,
) -> None:
    chip = load_chip(CHIP).to_dict()
    chip[field] = value
    chip.pop("topology")
    path = tmp_path / "chip.json"
    path.write_text(json.dumps(chip))
    for command in ("run", "compile"):
        _fails([command, str(models["relu"]), "--chip", str(path)], 1,
               f"chip file '{re.escape(str(path))}': field {pattern}", capsys)


# ------------------------------------------------------------------------------------ models


def _non_utf8(model: onnx.ModelProto, placeholder: str) -> bytes:
    """The serialized model with `placeholder` replaced by bytes of the same length that are
    not UTF-8 (protobuf only lets Python set valid strings)."""
    return model.SerializeToString().replace(placeholder.encode(), b"BAD\xff\xfeNAME")


def _renamed_node() -> bytes:
    model = _unary("Relu")
    model.graph.node[0].name = "BADXXNAME"
    return _non_utf8(model, "BADXXNAME")


def _renamed_output() -> bytes:
    model = _unary("Relu")
    model.graph.node[0].output[0] = model.graph.output[0].name = "BADXXNAME"
    return _non_utf8(model, "BADXXNAME")


def _other_domain() -> bytes:
    """A Relu of another domain is not ONNX's Relu."""
    model = _unary("Relu")
    model.graph.node[0].domain = "com.microsoft"
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model.SerializeToString()


def _no_outputs() -> bytes:
    model = _unary("Relu")
    del model.graph.output[:]
    return model.SerializeToString()


MODEL_ERRORS: list[tuple[str, Callable[[], bytes], str]] = [
    ("node-name", _renamed_node, r"graph.node\[0\].name is not valid UTF-8 "
                                 r"\(b'BAD\\xff\\xfeNAME'\); ONNX strings must be UTF-8"),
    ("output-name", _renamed_output, r"graph.node\[0\] \('u'\).output\[0\] is not valid UTF-8"),
    ("opset-30", lambda: _unary("Relu", 30).SerializeToString(),
     "uses opset 30 of the default domain; supported are opsets 7 to 28 .*: re-export it at "
     "opset 28 or lower"),
    ("opset-99", lambda: _unary("Relu", 99).SerializeToString(), "uses opset 99"),
    ("opset-6", lambda: _unary("Relu", 6).SerializeToString(),
     "uses opset 6 .*convert it with onnx.version_converter.convert_version"),
    ("no-outputs", _no_outputs, "has no graph outputs: there is nothing to compute"),
    ("other-domain", _other_domain, r"unsupported ONNX operators in model .*: "
                                    r"com.microsoft.Relu \(1\); supported: Abs"),
    ("symbolic-dim", lambda: _unary("Relu", dims=("N", 3)).SerializeToString(),
     "graph input 'x' has symbolic dimension 'N' at axis 0; the compiler needs static shapes: "
     r"give it a size with `--dim N=SIZE` \(t10 run / compile / explain;"),
    ("unknown-dim", lambda: _unary("Relu", dims=(None, 3)).SerializeToString(),
     "graph input 'x' has an unknown dimension at axis 0"),
    ("empty-file", lambda: b"", "the file contains no graph"),
    ("text-file", lambda: b"this is not an onnx model", "not a valid ONNX protobuf"),
    ("truncated", lambda: _mask_model().SerializeToString()[:40], "not a valid ONNX protobuf"),
]


@pytest.mark.parametrize(("make", "pattern"), [c[1:] for c in MODEL_ERRORS],
                         ids=[c[0] for c in MODEL_ERRORS])
def test_model_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[], bytes], pattern: str
) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(make())
    for command in ("run", "compile"):
        _fails([command, str(path), "--chip", CHIP], 1, pattern, capsys)


def _slice_model(x_dims: Sequence[int], value_info: Sequence[int] | None = None,
                 weight_dims: Sequence[int] | None = None) -> onnx.ModelProto:
    """A Slice along axis 1: onnx's shape inference asserts (the process aborts) when that
    axis' size is negative."""
    ints = [helper.make_tensor(n, TensorProto.INT64, [1], [v])
            for n, v in (("b", 0), ("e", 1), ("a", 1))]
    model = _model([helper.make_node("Slice", ["x", "b", "e", "a"], ["s"]),
                    helper.make_node("Relu", ["s"], ["y"])],
                   [("x", TensorProto.FLOAT, x_dims)], [("y", TensorProto.FLOAT, [2, 1, 4])],
                   ints)
    if value_info is not None:
        model.graph.value_info.append(
            helper.make_tensor_value_info("s", TensorProto.FLOAT, list(value_info)))
    if weight_dims is not None:
        weight = helper.make_tensor("w", TensorProto.FLOAT, [1], [1.0])
        weight.dims[:] = weight_dims
        model.graph.initializer.append(weight)
    return model


ABORTS = [
    (_slice_model([2, -1, 4]), r"graph.input\[0\] \('x'\).type.tensor_type.shape.dim\[1\] is -1; "
                               "a dimension cannot be negative"),
    (_slice_model([2, 3, 4], value_info=[2, -5, 4]),
     r"graph.value_info\[0\] \('s'\).type.tensor_type.shape.dim\[1\] is -5"),
    (_slice_model([2, 3, 4], weight_dims=[-1]),
     r"graph.initializer\[3\] \('w'\) has size -1 at axis 0; a dimension cannot be negative"),
]


_DRIVER = """
import contextlib, io, json, sys
from t10.tools.cli import main
for path in sys.argv[1:]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["run", path, "--chip", "test-16"])
    print(json.dumps([code, err.getvalue()]), flush=True)
"""


def test_negative_dims_refused_in_a_subprocess(tmp_path: Path) -> None:
    """A real process (one for all cases, warnings as errors): the refusal comes before onnx's
    shape inference could abort it."""
    paths = []
    for i, (model, _) in enumerate(ABORTS):
        paths.append(str(tmp_path / f"m{i}.onnx"))
        onnx.save_model(model, paths[-1])
    done = subprocess.run([sys.executable, "-W", "error", "-c", _DRIVER, *paths],
                          capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(results) == len(ABORTS)
    for (code, err), (_, pattern) in zip(results, ABORTS, strict=True):
        assert code == 1 and err.startswith("t10: error: ") and len(err.splitlines()) == 1
        assert re.search(pattern, err), err


def test_opset_range_is_onnxruntimes() -> None:
    """Both ends of SUPPORTED_OPSETS: onnxruntime runs them, refuses the next one up, and the
    onnx library knows the newest."""
    first, last = SUPPORTED_OPSETS[0], SUPPORTED_OPSETS[-1]
    assert (first, last) == (7, 28)
    assert onnx.defs.onnx_opset_version() >= last
    for opset in (first, last):
        model = _unary("Relu", opset)
        x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
        (got,) = reference_session(model).run(None, {"x": x})
        np.testing.assert_array_equal(got, np.maximum(x, 0))
    with pytest.raises(Exception, match=f"support for domain ai.onnx is till opset {last}"):
        reference_session(_unary("Relu", last + 1))


@pytest.mark.parametrize("opset", [SUPPORTED_OPSETS[0], SUPPORTED_OPSETS[-1]])
def test_supported_opset_ends_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], opset: int
) -> None:
    path = tmp_path / "m.onnx"
    onnx.save_model(_unary("Relu", opset), path)
    assert main(["run", str(path), "--chip", CHIP, "--check"]) == 0
    assert "PASSED" in capsys.readouterr().out


# ------------------------------------------------------------------------- --check: NaN, Inf


def test_check_matches_nan_and_inf_exactly(
    models: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """log: NaN for negative inputs, -inf for 0; the simulation has them where onnxruntime
    does, so --check passes (and no RuntimeWarning escapes)."""
    x = np.array([[-1, 0, 2], [np.inf, np.nan, 0.5]], np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    argv = ["run", str(models["log"]), "--chip", CHIP, "--inputs", str(tmp_path / "in.npz"),
            "--check", "--report", str(tmp_path / "r.json")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(argv) == 0
    captured = capsys.readouterr()
    assert "PASSED" in captured.out and captured.err == ""
    check = json.loads((tmp_path / "r.json").read_text())["check"]["outputs"]["y"]
    assert check["passed"] and check["nonfinite_mismatches"] == 0


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (lambda r: r.__setitem__((0, 2), np.nan),
         r"1 element whose NaN or infinity the other side does not match, first at \[0, 2\]: "
         "sim 0.693147, ref nan"),
        (lambda r: r.__setitem__((0, 1), np.inf),
         r"first at \[0, 1\]: sim -inf, ref inf"),
        (lambda r: r.__setitem__((1, 1), 1.0), r"first at \[1, 1\]: sim nan, ref 1"),
        (lambda r: r.__setitem__((slice(None), 2), np.nan),
         r"2 elements whose .* first at \[0, 2\]"),
    ],
)
def test_check_fails_on_nan_or_inf_mismatch(
    models: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[np.ndarray], None],
    pattern: str,
) -> None:
    def changed(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        ref = reference_outputs(model, inputs)
        change(ref["y"])
        return ref

    monkeypatch.setattr(t10.driver, "reference_outputs", changed)
    x = np.array([[-1, 0, 2], [3, np.nan, 0.5]], np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    argv = ["run", str(models["log"]), "--chip", CHIP, "--inputs", str(tmp_path / "in.npz"),
            "--check"]
    _fails(argv, 1, "differ from onnxruntime beyond tolerance in 'y' .*" + pattern, capsys)


def test_check_outputs_nonfinite_rules() -> None:
    """Same NaN / same infinity pass; a finite element next to an infinity is still held to
    the tolerance (rms over the finite elements only), without RuntimeWarnings."""
    ref = np.array([np.nan, np.inf, -np.inf, 1.0, 2.0])
    tol = Tolerance(rtol=0, atol=1e-3, atol_rms=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = check_outputs({"y": ref.copy()}, {"y": ref}, tol).outputs["y"]
        assert same.passed and same.max_abs_error == 0
        assert same.atol == pytest.approx(1e-3 + 1e-3 * np.sqrt(2.5))
        off = check_outputs({"y": ref + [0, 0, 0, 0.01, 0]}, {"y": ref}, tol).outputs["y"]
        assert not off.passed and off.nonfinite_mismatches == 0
        assert off.max_abs_error == pytest.approx(0.01)
        flipped = check_outputs({"y": -ref}, {"y": ref}, tol).outputs["y"]
        assert flipped.nonfinite_mismatches == 2 and not flipped.passed


def test_fp32_check_floor_follows_the_output_scale(tmp_path: Path) -> None:
    """A Gemm with alpha = 1e30 (found by benchmarks/fuzz.py): the outputs of the next layers
    are sums whose terms cancel, so onnxruntime and the simulator, adding in different orders,
    differ by float32 rounding of the terms (~1e-8 of the output's scale), far above 1e-4 of
    the small elements themselves. The fp32 default floor (1e-6 of the rms) accepts that."""
    model = onnx.load_model(str(DATA / "mlp_3layer.torchscript.onnx"))
    gemm = next(n for n in model.graph.node if n.op_type == "Gemm")
    next(a for a in gemm.attribute if a.name == "alpha").f = 1e30
    path = tmp_path / "alpha.onnx"
    onnx.save_model(model, str(path))
    result = run_model(str(path), CompileOptions(chip=CHIP), check=CHECK_TOLERANCES["fp32"])
    assert result.check is not None and result.check.passed
    strict = run_model(
        str(path),
        CompileOptions(chip=CHIP),
        check=Tolerance(rtol=1e-4, atol=1e-5, atol_rms=0),
    )
    assert strict.check is not None and not strict.check.passed


def test_check_prints_no_onnxruntime_warnings(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """onnxruntime warns on stderr about an unused initializer; `t10 run --check` keeps its
    stderr to its own messages."""
    unused = onnx.numpy_helper.from_array(np.ones(3, dtype=np.float32), "unused")
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [unused],
    )
    path = tmp_path / "unused.onnx"
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert main(["run", str(path), "--chip", CHIP, "--check"]) == 0
    assert capfd.readouterr().err == ""


def test_zero_size_input_runs_and_matches(tmp_path: Path) -> None:
    """A graph input with a 0 dim gives an empty output, as in onnxruntime (not an error)."""
    path = tmp_path / "empty.onnx"
    path.write_bytes(_unary("Relu", dims=(0, 3)).SerializeToString())
    assert main(["run", str(path), "--chip", CHIP, "--check"]) == 0
