"""Integer arithmetic on runtime integers, exact by the frontend's static range
analysis (t10/frontend/integer_ranges.py): RoBERTa-style position ids and the other integer
ops against onnxruntime in fp32 and fp16, the refusals (unknown range, beyond fp16, beyond
float32, Div), OPT-style positions from a graph input's declared range (`--input-range`), and
properties: every proven interval holds onnxruntime's values, t10's values equal them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import onnx
import pytest
from helpers import randn, run_and_check
from hypothesis import event, given
from hypothesis import strategies as st
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from t10 import driver
from t10.errors import T10Error
from t10.frontend import import_onnx, integer_ranges
from t10.frontend.integer_ranges import Interval, Range
from t10.outputs.report import input_specs, random_inputs
from t10.reference import reference_session
from t10.tools.cli import main

node = helper.make_node
F, I64, I32, B = T.FLOAT, T.INT64, T.INT32, T.BOOL
PAD = 1  # RoBERTa's padding id


def int_model(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[int, list[int]]],
    outputs: dict[str, int],
    weights: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    """``inputs``: name → (element type, shape); ``outputs``: name → element type (shapes
    left to inference)."""
    graph = helper.make_graph(
        nodes,
        "integers",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()],
        [numpy_helper.from_array(w, n) for n, w in (weights or {}).items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model


def position_ids_model(mask_type: int = I64, batch: int = 2, seq: int = 12) -> onnx.ModelProto:
    """RoBERTa's ``create_position_ids_from_input_ids``: ``mask = Cast(Not(Equal(ids, pad)))``,
    ``cumsum(mask, 1) * mask + pad``, then a Gather into a position table; both the INT64
    position ids and the embeddings are outputs."""
    return int_model(
        [
            node("Equal", ["input_ids", "pad"], ["is_pad"]),
            node("Not", ["is_pad"], ["keep"]),
            node("Cast", ["keep"], ["mask"], to=mask_type),
            node("CumSum", ["mask", "axis"], ["cs"], name="cs"),
            node("Mul", ["cs", "mask"], ["masked"]),
            node("Cast", ["masked"], ["masked64"], to=I64),
            node("Add", ["masked64", "pad"], ["position_ids"]),
            node("Gather", ["table", "position_ids"], ["embeddings"]),
        ],
        {"input_ids": (I64, [batch, seq])},
        {"position_ids": I64, "embeddings": F},
        {
            "pad": np.array([PAD], np.int64),
            "axis": np.array(1, np.int64),
            "table": randn(seq + 2, 8),
        },
    )


def token_ids(batch: int, seq: int, seed: int = 0) -> np.ndarray:
    """Ids below 50, the padding id at the end of the second sequence and scattered."""
    ids = np.random.default_rng(seed).integers(0, 50, (batch, seq))
    ids[-1, -3:] = PAD
    ids[0, 2] = PAD
    return ids.astype(np.int64)


@pytest.mark.parametrize("mask_type", [I64, I32], ids=["int64", "int32"])
def test_position_ids_match_onnxruntime(chip: str, mask_type: int) -> None:
    run_and_check(position_ids_model(mask_type), chip, {"input_ids": token_ids(2, 12)})


def test_position_ids_fp16() -> None:
    """Position ids in [1, 13] are exact in fp16 storage: equal to onnxruntime's."""
    model = position_ids_model()
    ids = token_ids(2, 12)
    result = driver.run_model(
        model,
        driver.CompileOptions(chip="test-16", precision="fp16"),
        inputs={"input_ids": ids},
        check=driver.CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed, result.check
    want = reference_session(model).run(["position_ids"], {"input_ids": ids})[0]
    np.testing.assert_array_equal(result.outputs["position_ids"], want)


def integer_ops_model() -> onnx.ModelProto:
    """Sub, Neg, Abs, Max, Min, Add, Sign, ReduceSum / ReduceMax / ReduceMin and an
    exclusive reversed CumSum of runtime integers of proven ranges, cast back to FLOAT."""
    return int_model(
        [
            node("Cast", ["b"], ["m"], to=I64),  # [0, 1]
            node("Where", ["b", "lo", "hi"], ["w"]),  # [-7, 9]
            node("Sub", ["w", "m"], ["d"]),
            node("Neg", ["d"], ["n"]),
            node("Abs", ["n"], ["a"]),
            node("Max", ["a", "w"], ["mx"]),
            node("Min", ["mx", "three"], ["mn"]),
            node("Add", ["mn", "d"], ["md"]),
            node("Add", ["md", "m"], ["s"]),
            node("Max", ["s", "zero"], ["r"]),
            node("Sign", ["d"], ["sg"]),
            node("CumSum", ["s", "axis"], ["c"], exclusive=1, reverse=1),
            node("ReduceSum", ["c", "axis"], ["rs"], keepdims=1),
            node("ReduceMax", ["s", "axis"], ["rmax"], keepdims=1),
            node("ReduceMin", ["s", "axis"], ["rmin"], keepdims=1),
            node("Concat", ["rs", "rmax", "rmin", "r", "sg"], ["t"], axis=1),
            node("Cast", ["t"], ["y"], to=F),
            node("ReduceMin", ["x", "axis"], ["xmin"], keepdims=0),
        ],
        {"b": (B, [3, 7]), "x": (F, [3, 7])},
        {"t": I64, "y": F, "xmin": F},
        {
            "lo": np.array([-7, 2, 0, 5, -1, 9, 3], np.int64),
            "hi": np.array([[4], [-3], [8]], np.int64),
            "three": np.array([3], np.int64),
            "zero": np.array([0], np.int64),
            "axis": np.array([1], np.int64),
        },
    )


def booleans(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, shape).astype(bool)


def test_integer_ops_match_onnxruntime(chip: str) -> None:
    run_and_check(integer_ops_model(), chip, {"b": booleans(3, 7), "x": randn(3, 7)})


# --------------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------------


def test_unknown_range_is_refused() -> None:
    model = int_model(
        [node("Add", ["n", "one"], ["y"], name="add")],
        {"n": (I64, [3])},
        {"y": I64},
        {"one": np.array([1], np.int64)},
    )
    with pytest.raises(
        T10Error,
        match=r"^ONNX model 'integers': node 'add' \(Add\): integer Add needs proven ranges of its "
        r"inputs to stay exact, but the range of input 'n' is unknown; declare the range of its "
        r"values \(`--input-range n=LO:HI` on t10 run / compile; the simulator checks every "
        r"input against it\)$",
    ):
        import_onnx(model)


def test_truncated_float_has_no_range() -> None:
    model = int_model(
        [node("Cast", ["x"], ["xi"], to=I64), node("Mul", ["xi", "xi"], ["y"], name="sq")],
        {"x": (F, [3])},
        {"y": I64},
    )
    with pytest.raises(
        T10Error, match=r"node 'sq' \(Mul\): .* the range of 'xi' \(a float truncated by Cast\)"
    ):
        import_onnx(model)


def cumsum_beyond_fp16() -> onnx.ModelProto:
    """40 · mask summed over 64 positions: [0, 2560], beyond fp16's exact 2048."""
    return int_model(
        [
            node("Cast", ["b"], ["m"], to=I64),
            node("Mul", ["m", "forty"], ["m40"]),
            node("CumSum", ["m40", "axis"], ["c"], name="cs"),
            node("Cast", ["c"], ["y"], to=F),
        ],
        {"b": (B, [2, 64])},
        {"y": F},
        {"forty": np.array([40], np.int64), "axis": np.array(1, np.int64)},
    )


def test_range_beyond_fp16_refuses_fp16_and_computes_fp32() -> None:
    model = cumsum_beyond_fp16()
    with pytest.raises(
        T10Error,
        match=r"^fp16 storage would round the integers computed by node 'cs' \(CumSum\) "
        r"\(results and partial sums\) in the proven range \[0, 2560\]: integers that must "
        r"stay exact \(fp16 holds every integer with \|x\| <= 2048\); compile with "
        r"--precision fp32$",
    ):
        driver.compile_model(model, driver.CompileOptions(chip="test-16", precision="fp16"))
    b = np.ones((2, 64), bool)
    b[1, ::3] = False
    run_and_check(model, "test-16", {"b": b})


def test_range_beyond_float32_is_refused() -> None:
    model = int_model(
        [
            node("Cast", ["b"], ["m"], to=I64),
            node("ReduceSum", ["m", "axis"], ["s"], keepdims=1),  # [0, 5]
            node("Mul", ["s", "big"], ["y"], name="scale"),
        ],
        {"b": (B, [2, 5])},
        {"y": I64},
        {"big": np.array([2**22], np.int64), "axis": np.array([1], np.int64)},
    )
    with pytest.raises(
        T10Error,
        match=r"node 'scale' \(Mul\): integer Mul computes values \(results and partial sums\) "
        r"in the proven range \[0, 20971520\], beyond the integers float32 holds exactly "
        r"\(\|x\| <= 2\*\*24\); bound its inputs",
    ):
        import_onnx(model)


def test_integer_div_is_refused_by_name() -> None:
    """Integer Div truncates; the float division t10 computes would not: refused."""
    model = int_model(
        [
            node("Cast", ["b"], ["m"], to=I64),
            node("Div", ["m", "two"], ["y"], name="div"),
        ],
        {"b": (B, [4])},
        {"y": I64},
        {"two": np.array([2], np.int64)},
    )
    with pytest.raises(
        T10Error,
        match=r"node 'div' \(Div\): it reads the INT64 value 'm' at run time; t10 holds runtime "
        r"integers and bools as exact float32 values and computes on them only with Abs, Add, ",
    ):
        import_onnx(model)


def test_sums_bound_partial_sums_of_either_sign() -> None:
    """k elements of [a, b] sum to k·[a, b]: with mixed signs every partial sum of n elements
    lies within n times each bound (the sum of magnitudes), not within the total's range."""
    assert Interval(-3, 5).sums(0, 4) == Interval(-12, 20)
    assert Interval(2, 5).sums(1, 4) == Interval(2, 20)
    assert Interval(-5, -2).sums(0, 3) == Interval(-15, 0)
    assert Interval(-2, 3) * Interval(-4, 1) == Interval(-12, 8)
    assert Interval(-2, 3).abs() == Interval(0, 3)


# --------------------------------------------------------------------------------------------
# Property: the analysis is sound
# --------------------------------------------------------------------------------------------


@contextmanager
def proven_ranges() -> Iterator[dict[str, Range]]:
    """The ranges the analysis records while importing inside the block."""
    ranges: dict[str, Range] = {}
    check = integer_ranges.check_node

    def spy(imp, node, proven, outputs):  # noqa: ANN001, ANN202
        check(imp, node, proven, outputs)
        ranges.update({n: imp.ranges[n] for n in outputs})

    with mock.patch.object(integer_ranges, "check_node", spy):
        yield ranges


UNARY = ["Neg", "Abs", "Sign"]  # onnxruntime has no integer Relu
BINARY = ["Add", "Sub", "Mul", "Max", "Min"]
REDUCE = ["ReduceSum", "ReduceMax", "ReduceMin"]

step = st.one_of(
    st.tuples(st.sampled_from(UNARY), st.just(0), st.just(0)),
    st.tuples(st.sampled_from(BINARY), st.integers(0, 5), st.just(0)),
    st.tuples(st.sampled_from(REDUCE), st.integers(0, 1), st.just(0)),
    st.tuples(st.just("CumSum"), st.integers(0, 1), st.integers(0, 3)),
)


def integer_chain(
    rows: int,
    cols: int,
    bounds: list[int],
    steps: list[tuple[str, int, int]],
    seed: int,
    declared: bool = False,
) -> tuple[onnx.ModelProto, list[str]]:
    """A runtime INT64 value of a known interval (a Where between two constants of it; with
    `declared`, the graph input ``v0`` whose range is to be declared), then random integer
    ops (an operand of a binary op: an earlier value); every value an output (the model, the
    value names)."""
    rng = np.random.default_rng(seed)
    lo, hi = bounds
    weights = {
        "p": rng.integers(lo, hi + 1, (rows, cols)),
        "q": rng.integers(lo, hi + 1, (rows, cols)),
        "axis0": np.array([0], np.int64),
        "axis1": np.array([1], np.int64),
    }
    nodes = [] if declared else [node("Where", ["b", "p", "q"], ["v0"])]
    values = ["v0"]
    for i, (op, choice, flags) in enumerate(steps):
        x, out = values[-1], f"v{i + 1}"
        if op in UNARY:
            nodes.append(node(op, [x], [out]))
        elif op in BINARY:
            nodes.append(node(op, [x, values[choice % len(values)]], [out]))
        elif op in REDUCE:
            nodes.append(node(op, [x, f"axis{choice}"], [out], keepdims=1))
        else:
            exclusive, reverse = flags & 1, flags >> 1
            axis = f"axis{choice}"
            nodes.append(node(op, [x, axis], [out], exclusive=exclusive, reverse=reverse))
        values.append(out)
    start = "v0" if declared else "b"
    outputs = dict.fromkeys(values[1:] if declared else values, I64)
    model = int_model(nodes, {start: (I64 if declared else B, [rows, cols])}, outputs, weights)
    return model, [*outputs]


chains = {
    "rows": st.integers(1, 3),
    "cols": st.integers(1, 6),
    "bounds": st.tuples(st.integers(-20, 20), st.integers(-20, 20)).map(sorted),
    "steps": st.lists(step, min_size=1, max_size=4),
    "seed": st.integers(0, 2**16),
}


@given(**chains)
def test_proven_ranges_hold_onnxruntime_values(
    rows: int, cols: int, bounds: list[int], steps: list[tuple[str, int, int]], seed: int
) -> None:
    """onnxruntime's values of an ``integer_chain`` lie in the proven intervals, for random
    conditions (the analysis is sound)."""
    model, values = integer_chain(rows, cols, bounds, steps, seed)
    with proven_ranges() as ranges:
        try:
            import_onnx(model)
        except T10Error as e:  # the last steps may grow past float32: refused, not wrong
            assert "beyond the integers float32 holds exactly" in str(e)
    session = reference_session(model)
    for trial in range(3):
        feeds = {"b": booleans(rows, cols, seed=seed + trial)}
        for name, got in zip(values, session.run(values, feeds), strict=True):
            if name in ranges:
                proven = ranges[name]
                assert isinstance(proven, Interval), (name, proven)
                assert proven.lo <= got.min() and got.max() <= proven.hi, (name, proven, got)


@given(**chains)
def test_integer_chains_equal_onnxruntime(
    rows: int, cols: int, bounds: list[int], steps: list[tuple[str, int, int]], seed: int
) -> None:
    """t10's values of an ``integer_chain`` equal onnxruntime's, in fp32 and in fp16 storage
    (which refuses the model exactly when a proven range leaves fp16's exact integers)."""
    model, values = integer_chain(rows, cols, bounds, steps, seed)
    with proven_ranges() as ranges:
        try:
            import_onnx(model)
        except T10Error:
            event("beyond float32")
            return  # refused (test_proven_ranges_hold_onnxruntime_values)
    feeds = {"b": booleans(rows, cols, seed=seed)}
    want = reference_session(model).run(values, feeds)
    beyond_fp16 = any(isinstance(r, Interval) and r.magnitude > 2048 for r in ranges.values())
    for precision in ("fp32", "fp16"):
        try:
            result = driver.run_model(
                model,
                driver.CompileOptions(chip="test-16", precision=precision),
                inputs=feeds,
            )
        except T10Error as e:
            assert precision == "fp16" and beyond_fp16, e
            assert "fp16 storage would round the integers computed by node" in str(e)
            event("fp16 refused")
            continue
        assert precision == "fp32" or not beyond_fp16
        for name, expected in zip(values, want, strict=True):
            np.testing.assert_array_equal(result.outputs[name], expected, err_msg=name)


# --------------------------------------------------------------------------------------------
# Declared ranges of graph inputs
# --------------------------------------------------------------------------------------------

MASK = {"attention_mask": (0, 1)}


def opt_positions_model(batch: int = 2, seq: int = 10) -> onnx.ModelProto:
    """OPT's learned positions: ``cumsum(attention_mask, 1) * attention_mask - 1``, offset by
    2, gather a position table; plus the token embeddings. The positions are arithmetic on
    the graph input ``attention_mask``, whose range only the user can declare."""
    return int_model(
        [
            node("CumSum", ["attention_mask", "axis"], ["cs"], name="positions"),
            node("Mul", ["cs", "attention_mask"], ["masked"]),
            node("Sub", ["masked", "one"], ["position_ids0"]),
            node("Add", ["position_ids0", "offset"], ["position_ids"]),
            node("Gather", ["pos_table", "position_ids"], ["pos"]),
            node("Gather", ["tok_table", "input_ids"], ["tok"]),
            node("Add", ["tok", "pos"], ["embeddings"]),
        ],
        {"input_ids": (I64, [batch, seq]), "attention_mask": (I64, [batch, seq])},
        {"position_ids": I64, "embeddings": F},
        {
            "axis": np.array(1, np.int64),
            "one": np.array([1], np.int64),
            "offset": np.array([2], np.int64),
            "pos_table": randn(seq + 2, 8),
            "tok_table": randn(50, 8, seed=1),
        },
    )


def left_padded(batch: int, seq: int) -> dict[str, np.ndarray]:
    mask = np.ones((batch, seq), np.int64)
    mask[-1, :3] = 0  # the last sequence is left-padded, as OPT's generation pads
    ids = np.random.default_rng(0).integers(0, 50, (batch, seq))
    return {"input_ids": ids, "attention_mask": mask}


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_positions_of_a_declared_mask_match_onnxruntime(chip: str, precision: str) -> None:
    model, feeds = opt_positions_model(), left_padded(2, 10)
    result = driver.run_model(
        model,
        driver.CompileOptions(chip=chip, precision=precision),
        inputs=feeds,
        check=driver.CHECK_TOLERANCES[precision],
        input_ranges=MASK,
    )
    assert result.check is not None and result.check.passed, result.check
    want = reference_session(model).run(["position_ids"], feeds)[0]
    np.testing.assert_array_equal(result.outputs["position_ids"], want)


def test_the_declared_range_is_in_the_ir_and_random_inputs_keep_to_it() -> None:
    module = import_onnx(opt_positions_model(), MASK)
    assert 't10.name = "attention_mask", t10.onnx_type = "int64", t10.range = array<i64: 0, 1>' \
        in str(module)
    inputs = random_inputs(input_specs(module), seed=3)
    assert set(np.unique(inputs["attention_mask"])) == {0, 1}
    assert inputs["input_ids"].max() < 50  # a gather's ids: below its table's size
    wide = import_onnx(opt_positions_model(), {"attention_mask": (3, 7)})
    drawn = random_inputs(input_specs(wide))["attention_mask"]
    assert drawn.min() >= 3 and drawn.max() <= 7


def test_an_undeclared_mask_is_refused_naming_the_fix() -> None:
    with pytest.raises(
        T10Error,
        match=r"node 'positions' \(CumSum\): integer CumSum needs proven ranges of its inputs "
        r"to stay exact, but the range of input 'attention_mask' is unknown; declare the range "
        r"of its values \(`--input-range attention_mask=LO:HI`",
    ):
        import_onnx(opt_positions_model())


def test_an_input_outside_its_declared_range_is_refused() -> None:
    feeds = left_padded(2, 10)
    feeds["attention_mask"][0, 4] = 2
    with pytest.raises(
        T10Error,
        match=r"^input 'attention_mask' holds 2, outside \[0, 1\], the range the model was "
        r"compiled for \(--input-range attention_mask=0:1\)",
    ):
        driver.run_model(
            opt_positions_model(),
            driver.CompileOptions(chip="test-16"),
            inputs=feeds,
            input_ranges=MASK,
        )


@pytest.mark.parametrize(
    ("ranges", "message"),
    [
        ({"mask": (0, 1)}, r"a range is declared for 'mask', which is not an input of the "
                           r"model \(its integer inputs: input_ids, attention_mask\)"),
        ({"attention_mask": (1, 0)}, r"the range \[1, 0\] declared for input 'attention_mask' "
                                     r"must have lo <= hi"),
        (
            {"attention_mask": (0, 2**24 + 1)},
            r"the range \[0, 16777217\] declared for input 'attention_mask' must have lo <= hi, "
            r"both within \+-2\*\*24",
        ),
        ({"tok_table": (0, 1)}, r"a range is declared for 'tok_table', which is not an input"),
    ],
    ids=["unknown", "empty", "beyond-f32", "initializer"],
)
def test_bad_declarations_are_refused(ranges: dict[str, tuple[int, int]], message: str) -> None:
    with pytest.raises(T10Error, match=r"^ONNX model 'integers': " + message):
        import_onnx(opt_positions_model(), ranges)


@pytest.mark.parametrize(("elem", "name"), [(F, "FLOAT"), (B, "BOOL")])
def test_only_integer_inputs_take_a_range(elem: int, name: str) -> None:
    model = int_model([node("Identity", ["x"], ["y"])], {"x": (elem, [3])}, {"y": elem})
    with pytest.raises(
        T10Error,
        match=rf"a range is declared for input 'x', which is {name}: only integer inputs "
        r"take one \(it has no integer inputs\)",
    ):
        import_onnx(model, {"x": (0, 1)})


def test_run_takes_input_ranges_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "opt.onnx"
    onnx.save(opt_positions_model(), path)
    argv = ["run", str(path), "--chip", "test-16", "--check"]
    assert main([*argv, "--input-range", "attention_mask=0:1"]) == 0
    assert "check   PASSED" in capsys.readouterr().out
    assert main([*argv, "--input-range", "attention_mask=0"]) == 2
    assert "expected NAME=LO:HI" in capsys.readouterr().err
    assert main([*argv, *["--input-range", "attention_mask=0:1"] * 2]) == 2
    assert "--input-range gives input 'attention_mask' twice" in capsys.readouterr().err
    assert main(argv) == 1
    assert "--input-range attention_mask=LO:HI" in capsys.readouterr().err


@given(**chains)
def test_declared_input_ranges_are_sound(
    rows: int, cols: int, bounds: list[int], steps: list[tuple[str, int, int]], seed: int
) -> None:
    """Integer ops on a graph input of a random declared range: on inputs drawn in it, the
    proven intervals hold onnxruntime's values and t10's values equal them (fp32)."""
    model, values = integer_chain(rows, cols, bounds, steps, seed, declared=True)
    declared = {"v0": (bounds[0], bounds[1])}
    with proven_ranges() as ranges:
        try:
            import_onnx(model, declared)
        except T10Error as e:
            assert "beyond the integers float32 holds exactly" in str(e)
            event("beyond float32")
            return
    feeds = {"v0": np.random.default_rng(seed).integers(bounds[0], bounds[1] + 1, (rows, cols))}
    want = reference_session(model).run(values, feeds)
    result = driver.run_model(
        model,
        driver.CompileOptions(chip="test-16"),
        inputs=feeds,
        input_ranges=declared,
    )
    for name, expected in zip(values, want, strict=True):
        proven = ranges[name]
        assert isinstance(proven, Interval), (name, proven)
        assert proven.lo <= expected.min() and expected.max() <= proven.hi, (name, proven)
        np.testing.assert_array_equal(result.outputs[name], expected, err_msg=name)
