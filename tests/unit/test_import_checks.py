"""What the frontend refuses before importing a model, as onnxruntime refuses it: a type an
operator does not take (onnx's full check: shape inference with type checking), external
data outside the model's folder, a value of more elements than int64 counts; and the IR-3
models the onnx package ships, which it imports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from t10.errors import T10Error
from t10.frontend import SUPPORTED_OPS, import_onnx
from t10.frontend.loading import read_model
from t10.reference import reference_session

OPSET = 17
LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
SINGLE = onnx.defs.OpSchema.FormalParameterOption.Single


def _model(
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: list[onnx.TensorProto] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return model


def _ort_refusal(model: onnx.ModelProto) -> str | None:
    """Why onnxruntime refuses to load ``model`` (None: it loads it)."""
    try:
        reference_session(model)
    except Exception as e:
        return str(e)
    return None


def _import_error(model: onnx.ModelProto) -> str:
    with pytest.raises(T10Error) as e:
        import_onnx(model)
    return str(e.value)


# --------------------------------------------------------------------------------------------
# Types an operator does not take
# --------------------------------------------------------------------------------------------


def _one_input_ops() -> list[str]:
    """The registered ops whose schema (at OPSET) has one required input, one required
    output and no required attribute: each is a one-node model of one input."""
    ops = []
    for key in sorted(k for k in SUPPORTED_OPS if isinstance(k, str)):
        if not onnx.defs.has(key, OPSET, ""):
            continue
        schema = onnx.defs.get_schema(key, OPSET, "")
        required = [p for p in schema.inputs if p.option == SINGLE]
        if (
            schema.inputs
            and schema.inputs[0].option == SINGLE
            and len(required) == 1
            and schema.min_output == 1
            and not any(a.required for a in schema.attributes.values())
        ):
            ops.append(key)
    return ops


_TYPES = [TensorProto.BOOL, TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT]
_REFUSED_TYPES = [
    (op, t)
    for op in _one_input_ops()
    for t in _TYPES
    if onnx.helper.tensor_dtype_to_string(t).split(".")[1].lower()
    not in {s[len("tensor(") : -1] for s in onnx.defs.get_schema(op, OPSET, "").inputs[0].types}
]


def test_the_type_checks_cover_many_ops() -> None:
    assert len({op for op, _ in _REFUSED_TYPES}) >= 40


@pytest.mark.parametrize(("op", "elem_type"), _REFUSED_TYPES)
def test_an_input_type_its_operator_does_not_take_is_refused_as_onnxruntime_refuses(
    op: str, elem_type: int
) -> None:
    shape = [3] if op == "ConstantOfShape" else [2, 3]  # its input is a shape
    model = _model(
        [helper.make_node(op, ["x"], ["y"])],
        [helper.make_tensor_value_info("x", elem_type, shape)],
        [helper.make_value_info("y", onnx.TypeProto())],
    )
    type_name = f"tensor({onnx.helper.tensor_dtype_to_string(elem_type).split('.')[1].lower()})"
    refusal = _ort_refusal(model)
    assert refusal is not None and "Type Error" in refusal and type_name in refusal
    schema = onnx.defs.get_schema(op, OPSET, "")
    formal = schema.inputs[0]
    message = _import_error(model)
    if not schema.has_type_and_shape_inference_function:  # onnx infers its function body
        assert message.startswith(f"ONNX model 'g': node '{op}_0' ({op}): ")
        assert f"has unsupported type: {type_name}" in message
        return
    assert message == (
        f"ONNX model 'g': node '{op}_0' ({op}): its input {formal.name} 'x' is a {type_name}, "
        f"which {op} (opset {schema.since_version}) does not take: {formal.type_str} is one of "
        + ", ".join(sorted(formal.types))
    )


_TAKEN_TYPES = [
    (op, t)
    for op in _one_input_ops()
    for t in _TYPES
    if (op, t) not in _REFUSED_TYPES
    and op not in ("ConstantOfShape", "Resize")  # a shape of [2, 3]; scales or sizes needed
]


@pytest.mark.parametrize(("op", "elem_type"), _TAKEN_TYPES)
def test_a_type_onnxruntime_has_no_kernel_for_is_refused_and_only_that(
    op: str, elem_type: int
) -> None:
    """ONNX allows the type, onnxruntime's CPU kernels may not take it (a Relu of int64):
    refused iff onnxruntime refuses the model."""
    model = _model(
        [helper.make_node(op, ["x"], ["y"])],
        [helper.make_tensor_value_info("x", elem_type, [2, 3])],
        [helper.make_value_info("y", onnx.TypeProto())],
    )
    refusal = _ort_refusal(model)
    try:
        import_onnx(model)
        message = ""
    except T10Error as e:
        message = str(e)
    no_kernel = "has no CPU kernel"
    if refusal is None:
        assert no_kernel not in message
        return
    assert "Could not find an implementation" in refusal
    type_name = f"tensor({onnx.helper.tensor_dtype_to_string(elem_type).split('.')[1].lower()})"
    since = onnx.defs.get_schema(op, OPSET, "").since_version
    assert message.startswith(
        f"ONNX model 'g': node '{op}_0' ({op}): onnxruntime, the reference of --check, "
        f"{no_kernel} for {op}-{since} with "
    )
    assert type_name in message and message.endswith(", so it cannot run the model")


def test_the_kernel_check_refuses_some_types_onnx_allows() -> None:
    model = _model(
        [helper.make_node("Where", ["c", "a", "b"], ["y"], name="w")],
        [helper.make_tensor_value_info(n, TensorProto.BOOL, [3]) for n in "cab"],
        [helper.make_tensor_value_info("y", TensorProto.BOOL, [3])],
    )
    assert "Could not find an implementation for Where(16)" in (_ort_refusal(model) or "")
    assert _import_error(model) == (
        "ONNX model 'g': node 'w' (Where): onnxruntime, the reference of --check, has no CPU "
        "kernel for Where-16 with B = tensor(bool), T = tensor(bool), so it cannot run the model"
    )


def test_a_float_where_condition_and_mismatched_concat_dims_are_refused_naming_the_node() -> None:
    where = _model(
        [helper.make_node("Where", ["c", "a", "b"], ["y"], name="w")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in "cab"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    assert "Type 'tensor(float)' of input parameter (c)" in (_ort_refusal(where) or "")
    assert _import_error(where) == (
        "ONNX model 'g': node 'w' (Where): its input condition 'c' is a tensor(float), which "
        "Where (opset 16) does not take: B is one of tensor(bool)"
    )
    concat = _model(
        [helper.make_node("Concat", ["a", "b"], ["y"], axis=1)],
        [
            helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
            helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    assert "Can't merge shape info" in (_ort_refusal(concat) or "")
    assert _import_error(concat) == (
        "ONNX model 'g': node 'Concat_0' (Concat): Can't merge shape info. Both inferred and "
        "declared dimension have values but they differ. Inferred=3 Declared=2 Dimension=0"
    )


def test_operands_of_one_type_variable_of_two_types_are_refused() -> None:
    model = _model(
        [helper.make_node("Add", ["x", "z"], ["y"], name="add")],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("z", TensorProto.INT64, [3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    assert "bound to different types" in (_ort_refusal(model) or "")
    assert _import_error(model) == (
        "ONNX model 'g': node 'add' (Add): its input B 'z' is a tensor(int64), but another of "
        "its T operands is of another type; Add takes one type for all of them"
    )


def test_a_declared_output_type_the_node_does_not_compute_is_refused() -> None:
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [3])],
    )
    assert "does not match expected type" in (_ort_refusal(model) or "")
    assert _import_error(model) == (
        "ONNX model 'g': node 'Relu_0' (Relu): its output is a tensor(float), but the model "
        "declares it a tensor(int64)"
    )


# --------------------------------------------------------------------------------------------
# External data
# --------------------------------------------------------------------------------------------


def _external(name: str, location: str, values: np.ndarray) -> onnx.TensorProto:
    tensor = numpy_helper.from_array(values, name)
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(values.nbytes))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


_VALUES = np.arange(4, dtype=np.float32)
_X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
_Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])


def _with_external(holder: str, location: str) -> tuple[onnx.ModelProto, str]:
    """A model adding external data held by ``holder`` to its input, and the protobuf path of
    the external tensor."""
    add = helper.make_node("Add", ["x", "c"], ["y"])
    if holder == "initializer":
        model = _model([add], [_X], [_Y], [_external("c", location, _VALUES)])
        return model, "graph.initializer[0] ('c')"
    if holder == "Constant":
        const = helper.make_node("Constant", [], ["c"], value=_external("c", location, _VALUES))
        return _model([const, add], [_X], [_Y]), "graph.node[0].attribute[0] ('value').t"
    if holder == "sparse Constant":
        sparse = helper.make_sparse_tensor(
            _external("c", location, _VALUES),
            numpy_helper.from_array(np.arange(4, dtype=np.int64), "i"),
            [4],
        )
        const = helper.make_node("Constant", [], ["c"], sparse_value=sparse)
        return (
            _model([const, add], [_X], [_Y]),
            "graph.node[0].attribute[0] ('sparse_value').sparse_tensor.values",
        )
    assert holder == "subgraph"
    branch = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], value=_external("c", location, _VALUES))],
        "branch",
        [],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [4])],
    )
    cond = numpy_helper.from_array(np.array(True), "cond")
    if_node = helper.make_node("If", ["cond"], ["c"], then_branch=branch, else_branch=branch)
    model = _model([if_node, add], [_X], [_Y], [cond])
    return model, (
        "graph.node[0].attribute[0] ('else_branch').g.node[0].attribute[0] ('value').t"
    )


_HOLDERS = ["initializer", "Constant", "sparse Constant", "subgraph"]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """The model's folder and a folder beside it, each with a file `data` of other values."""
    model_dir, other = tmp_path / "m", tmp_path / "elsewhere"
    model_dir.mkdir()
    other.mkdir()
    _VALUES.tofile(model_dir / "data")
    (_VALUES * 100).tofile(other / "data")
    return model_dir, other


@pytest.mark.parametrize("holder", ["initializer", "Constant"])
def test_external_data_is_read_from_the_models_folder_not_the_current_one(
    holder: str, folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    model_dir, other = folders
    model, _ = _with_external(holder, "data")
    onnx.save(model, str(model_dir / "m.onnx"))
    monkeypatch.chdir(other)  # its ./data holds other values
    loaded = read_model(Path("..") / "m" / "m.onnx")
    tensor = next(t for t in loaded.graph.initializer) if holder == "initializer" else (
        loaded.graph.node[0].attribute[0].t
    )
    np.testing.assert_array_equal(numpy_helper.to_array(tensor), _VALUES)
    import_onnx(Path("..") / "m" / "m.onnx")


@pytest.mark.parametrize("holder", _HOLDERS)
@pytest.mark.parametrize("escape", ["absolute", "parent", "symlink"])
def test_external_data_outside_the_models_folder_is_refused(
    holder: str, escape: str, folders: tuple[Path, Path]
) -> None:
    model_dir, other = folders
    location = {
        "absolute": str(other / "data"),
        "parent": "../elsewhere/data",
        "symlink": "link",
    }[escape]
    (model_dir / "link").symlink_to(other / "data")
    model, path = _with_external(holder, location)
    file = model_dir / "m.onnx"
    onnx.save(model, str(file))
    where = f"ONNX model '{file}': {path}: tensor 'c' has its data in file '{location}'"
    folder = model_dir.resolve()
    expected = {
        "absolute": f"{where}, an absolute path; external data must lie in the model's folder, "
        "at a path relative to it (as onnxruntime requires)",
        "parent": f"{where}, which lies outside the model's folder '{folder}' (it leads to "
        f"'{(other / 'data').resolve()}'); external data must lie in the model's folder",
    }
    expected["symlink"] = expected["parent"]
    with pytest.raises(T10Error) as e:
        import_onnx(file)
    assert str(e.value) == expected[escape]


def test_external_data_of_a_model_given_in_memory_is_refused() -> None:
    model, path = _with_external("Constant", "data")
    assert _import_error(model) == (
        f"ONNX model 'g': {path}: tensor 'c' has its data in file 'data', but the model was "
        "not read from a file, so there is no folder to read it from: give t10 the model's path"
    )


def test_external_data_beyond_its_file_is_refused(folders: tuple[Path, Path]) -> None:
    model_dir, _ = folders
    model, path = _with_external("initializer", "data")
    model.graph.initializer[0].external_data[1].value = "8"  # offset 8 of a 16-byte file
    file = model_dir / "m.onnx"
    onnx.save(model, str(file))
    with pytest.raises(T10Error) as e:
        import_onnx(file)
    assert str(e.value) == (
        f"ONNX model '{file}': {path}: tensor 'c' has its data in file 'data', at bytes 8 to "
        "24, but the file has 16 bytes"
    )


# --------------------------------------------------------------------------------------------
# Sizes beyond int64
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "shapes", "made"),
    [
        ("Relu", [[2**62, 4]], "graph input 'x0'"),
        ("Relu", [[3, 2**62]], "graph input 'x0'"),
        ("Add", [[2**40, 1], [1, 2**40]], "node 'Add_0' (Add): its result 'y'"),
        ("MatMul", [[2**40, 2], [2, 2**40]], "node 'MatMul_0' (MatMul): its result 'y'"),
    ],
)
def test_a_value_of_more_elements_than_int64_counts_is_refused_naming_it(
    op: str, shapes: list[list[int]], made: str
) -> None:
    inputs = [
        helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, s) for i, s in enumerate(shapes)
    ]
    model = _model(
        [helper.make_node(op, [vi.name for vi in inputs], ["y"])],
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    shape = shapes[0] if made.startswith("graph") else [2**40, 2**40]
    count = np.prod(shape, dtype=object)
    assert _import_error(model) == (
        f"ONNX model 'g': {made} has shape {shape}: {count:.3g} elements, more than a tensor "
        "can have (2**63 - 1: onnxruntime and numpy count elements in int64); no chip holds it"
    )


def _resize(mode: str) -> list[onnx.NodeProto]:
    sizes = numpy_helper.from_array(np.array([2**16, 2**14], np.int64), "sizes")
    return [helper.make_node("Constant", [], ["s"], value=sizes),
            helper.make_node("Resize", ["x", "", "", "s"], ["y"], mode=mode)]


def _cumsum() -> list[onnx.NodeProto]:
    axis = numpy_helper.from_array(np.array(0, np.int64), "axis")
    return [helper.make_node("Constant", [], ["a"], value=axis),
            helper.make_node("CumSum", ["x", "a"], ["y"])]


@pytest.mark.parametrize(
    ("nodes", "made"),
    [
        (_resize("linear"), "node 'Resize_1' (Resize): its interpolation weights along axis 0 "
                            "would be a constant of shape [32768, 65536]"),
        (_resize("nearest"), "node 'Resize_1' (Resize): its input positions would be a "
                             "constant of shape [32768, 16384]"),
        ([helper.make_node("Trilu", ["x"], ["y"])],
         "node 'Trilu_0' (Trilu): its mask would be a constant of shape [32768, 16384]"),
        (_cumsum(), "node 'CumSum_1' (CumSum): its triangle would be a constant of shape "
                    "[32768, 32768]"),
    ],
)
def test_a_constant_the_frontend_builds_beyond_its_limit_is_refused_before_it_is_built(
    nodes: list[onnx.NodeProto], made: str
) -> None:
    """A constant t10 builds on the host from a node's shapes (interpolation weights,
    positions, masks) is refused naming the node when it has more than MAX_FOLDED_ELEMENTS
    elements, before numpy is asked for the memory (a mutated dim once made numpy refuse an
    array too big, an internal error)."""
    model = _model(
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2**15, 2**14])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    assert _import_error(model).startswith(f"ONNX model 'g': {made} (")
    assert _import_error(model).endswith("more than t10 builds at compile time (268,435,456)")


# --------------------------------------------------------------------------------------------
# IR-3 models
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["densenet121", "inception_v2"])
def test_the_ir3_light_models_import_as_shipped(name: str) -> None:
    """Their initializers are graph inputs (IR 3); those read by a node's own shape
    inference (an Unsqueeze's) are not, in the one-node model it is inferred in."""
    model = onnx.load(str(LIGHT / f"light_{name}.onnx"))
    assert model.ir_version == 3
    module = import_onnx(model)
    assert module.ops.first is not None


# --------------------------------------------------------------------------------------------
# Interpolating Resize: the ranks and axes onnxruntime interpolates
# --------------------------------------------------------------------------------------------


def _resize(mode: str, source: list[int], sizes: list[int], antialias: int) -> onnx.ModelProto:
    model = _model(
        [helper.make_node("Resize", ["x", "", "", "s"], ["y"], mode=mode, antialias=antialias)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, source)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(sizes, np.int64), "s")],
    )
    model.opset_import[0].version = 19  # antialias
    return model


def _resizes() -> list[tuple[str, list[int], list[int], int]]:
    """Every subset of the axes of ranks 1 to 5 grown 2 → 3, and of rank 4 shrunk 4 → 2,
    in both interpolating modes, with and without antialias."""
    cases = []
    for mode in ("linear", "cubic"):
        for antialias in (0, 1):
            for rank in range(1, 6):
                for bits in range(1 << rank):
                    axes = [a for a in range(rank) if bits >> a & 1]
                    cases.append((mode, [2] * rank, [3 if a in axes else 2 for a in range(rank)],
                                  antialias))
                    if rank == 4:
                        shrunk = [2 if a in axes else 4 for a in range(rank)]
                        cases.append((mode, [4] * rank, shrunk, antialias))
    return cases


@pytest.mark.parametrize(("mode", "source", "sizes", "antialias"), _resizes())
def test_an_interpolating_resize_is_refused_iff_onnxruntime_refuses_it(
    mode: str, source: list[int], sizes: list[int], antialias: int
) -> None:
    model = _resize(mode, source, sizes, antialias)
    session = reference_session(model)
    try:
        session.run(None, {"x": np.zeros(source, np.float32)})
        refused = False
    except Exception as e:
        assert "ScalesValidation" in str(e)
        refused = True
    try:
        import_onnx(model)
        message = ""
    except T10Error as e:
        message = str(e)
    assert ("is not supported by onnxruntime" in message) == refused, message
