"""Runtime masks and selections (ops_logical, ops_indexing): comparisons, IsNaN, IsInf, logic,
Where with a runtime condition, Trilu, OneHot, Cast and CastLike between FLOAT / INT64 / INT32 /
BOOL, Size and EyeLike of runtime values, Cos / Sin / Floor / Ceil / Sign / Sum, and the views
Tile, GatherND, GatherElements and Gather of affine known indices, checked against onnxruntime
on both chips in fp32 and fp16; integer exactness and the refusals."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers import randn, run_and_check, typed_model
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto as T
from onnx import helper

from t10 import driver
from t10.errors import T10Error
from t10.frontend import import_onnx

node = helper.make_node
F, I64, I32, B = T.FLOAT, T.INT64, T.INT32, T.BOOL


def fp16_exact(*shape: int, seed: int = 0) -> np.ndarray:
    """Seeded values exact in fp16, so that fp16 storage compares them as fp32 does."""
    return randn(*shape, seed=seed).astype(np.float16).astype(np.float32)


def check_fp16(model: onnx.ModelProto, chip: str, inputs: dict[str, np.ndarray]) -> None:
    result = driver.run_model(
        model,
        driver.CompileOptions(chip=chip, precision="fp16"),
        inputs=inputs,
        check=driver.CHECK_TOLERANCES["fp16"],
    )
    assert result.check is not None and result.check.passed, result.check


def padding_mask(shape: tuple[int, ...], seed: int = 0, dtype: type = np.int64) -> np.ndarray:
    """A mixed 0 / 1 mask whose first column is 1 (no row fully masked)."""
    mask = np.random.default_rng(seed).integers(0, 2, shape)
    mask[..., 0] = 1
    return mask.astype(dtype)


def bert_mask_chain(dtype: int = I64) -> onnx.ModelProto:
    """An integer attention_mask [B, S] turned into a score bias by runtime comparisons and
    logic (as Transformers 5 mask functions export), masking scores before a softmax."""
    return typed_model(
        [
            node("Unsqueeze", ["mask", "axes"], ["m4"]),  # [B, 1, 1, S]
            node("Equal", ["m4", "zero"], ["pad"]),
            node("Not", ["pad"], ["keep"]),
            node("GreaterOrEqual", ["scores", "floor"], ["big"]),
            node("Or", ["big", "keep"], ["either"]),
            node("And", ["either", "keep"], ["attend"]),
            node("Where", ["attend", "scores", "neg"], ["masked"]),
            node("Softmax", ["masked"], ["p"], axis=-1),
            node("Cast", ["attend"], ["af"], to=F),
            node("Xor", ["pad", "big"], ["x"]),
            node("Cast", ["x"], ["xf"], to=F),
            node("Sum", ["p", "af", "xf"], ["y"]),
        ],
        {"scores": (F, [2, 3, 4, 8]), "mask": (dtype, [2, 8])},
        {"y": [2, 3, 4, 8]},
        {
            "axes": np.array([1, 2], np.int64),
            "zero": np.array(0, onnx.helper.tensor_dtype_to_np_dtype(dtype)),
            "floor": np.float32(-0.5).reshape(1),
            "neg": np.float32(-1e4).reshape(1),
        },
    )


@pytest.mark.parametrize("dtype", [I64, I32, B], ids=["int64", "int32", "bool"])
def test_mask_chain_matches_onnxruntime(chip: str, dtype: int) -> None:
    np_dtype = onnx.helper.tensor_dtype_to_np_dtype(dtype)
    inputs = {"scores": randn(2, 3, 4, 8), "mask": padding_mask((2, 8), dtype=np_dtype)}
    run_and_check(bert_mask_chain(dtype), chip, inputs)


def test_mask_chain_fp16(chip: str) -> None:
    inputs = {"scores": fp16_exact(2, 3, 4, 8), "mask": padding_mask((2, 8))}
    check_fp16(bert_mask_chain(), chip, inputs)


COMPARISONS = ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]


@pytest.mark.parametrize("op", COMPARISONS)
def test_comparisons_broadcast_and_nan(chip: str, op: str) -> None:
    """[4, 6] against a [6] row, ties and NaN included (ordered: false on NaN)."""
    model = typed_model(
        [node(op, ["a", "b"], ["c"]), node("Cast", ["c"], ["y"], to=F)],
        {"a": (F, [4, 6]), "b": (F, [6])},
        {"y": [4, 6]},
    )
    a = np.round(randn(4, 6)).astype(np.float32)
    b = np.round(randn(6, seed=1)).astype(np.float32)
    a[0, 0], b[1] = np.nan, np.nan
    run_and_check(model, chip, {"a": a, "b": b})


def casts_model() -> onnx.ModelProto:
    """FLOAT → INT64 / INT32 (truncation), → BOOL; INT64 → INT32 → BOOL → INT64 → FLOAT."""
    return typed_model(
        [
            node("Cast", ["x"], ["xi"], to=I64),
            node("Cast", ["x"], ["x32"], to=I32),
            node("Cast", ["x"], ["xb"], to=B),
            node("Cast", ["xi"], ["a"], to=F),
            node("Cast", ["x32"], ["b"], to=F),
            node("Cast", ["xb"], ["c"], to=F),
            node("Cast", ["n"], ["n32"], to=I32),
            node("Cast", ["n32"], ["nb"], to=B),
            node("Cast", ["nb"], ["n64"], to=I64),
            node("Cast", ["n64"], ["d"], to=F),
            node("Cast", ["n32"], ["e"], to=F),
            node("Sum", ["a", "b", "c", "d", "e"], ["y"]),
        ],
        {"x": (F, [3, 8]), "n": (I64, [3, 8])},
        {"y": [3, 8]},
    )


def test_casts_match_onnxruntime(chip: str) -> None:
    x = (randn(3, 8) * 40).astype(np.float32)
    x[0, :4] = [0.0, -0.0, 2.5, -2.5]
    n = np.random.default_rng(2).integers(-(2**24), 2**24, (3, 8))
    run_and_check(casts_model(), chip, {"x": x, "n": n})


def test_castlike_size_and_eyelike_match_onnxruntime(chip: str) -> None:
    """CastLike casts to the element type of its second input, a runtime value whose values it
    does not read (FLOAT → INT64 truncates, INT64 → FLOAT); Size and EyeLike read only the
    shape of a runtime input (and EyeLike its element type): both fold."""
    model = typed_model(
        [
            node("CastLike", ["x", "n"], ["xi"]),  # FLOAT → INT64: truncation
            node("CastLike", ["xi", "x"], ["a"]),  # INT64 → FLOAT
            node("Size", ["x"], ["size"]),
            node("CastLike", ["size", "x"], ["sf"]),
            node("EyeLike", ["n"], ["eye"], k=1),  # INT64, as n
            node("CastLike", ["eye", "x"], ["ef"]),
            node("Sum", ["a", "sf", "ef"], ["y"]),
        ],
        {"x": (F, [3, 8]), "n": (I64, [3, 8])},
        {"y": [3, 8]},
    )
    x = (randn(3, 8) * 40).astype(np.float32)
    n = np.random.default_rng(2).integers(-100, 100, (3, 8))
    run_and_check(model, chip, {"x": x, "n": n})


@pytest.mark.parametrize(("positive", "negative"), [(1, 1), (1, 0), (0, 1), (0, 0)])
def test_isnan_and_isinf_match_onnxruntime(positive: int, negative: int, chip: str) -> None:
    model = typed_model(
        [
            node("IsNaN", ["x"], ["nan"]),
            node("IsInf", ["x"], ["inf"], detect_positive=positive, detect_negative=negative),
            node("Cast", ["nan"], ["a"], to=F),
            node("Cast", ["inf"], ["b"], to=F),
            node("Mul", ["b", "two"], ["b2"]),
            node("Add", ["a", "b2"], ["y"]),
        ],
        {"x": (F, [2, 8])},
        {"y": [2, 8]},
        {"two": np.array([2.0], np.float32)},
    )
    x = randn(2, 8)
    x[0, :5] = [np.nan, np.inf, -np.inf, 3.4e38, -0.0]
    run_and_check(model, chip, {"x": x})


@given(
    shape=st.lists(st.integers(1, 5), min_size=2, max_size=4),
    k=st.one_of(st.none(), st.integers(-6, 6)),
    upper=st.integers(0, 1),
    integer=st.booleans(),
)
def test_trilu_matches_onnxruntime(
    shape: list[int], k: int | None, upper: int, integer: bool
) -> None:
    """Any batch dims, k (none: 0) and triangle, of floats (an infinity outside the triangle
    gives 0) or of runtime INT64 values."""
    weights = {} if k is None else {"k": np.array(k, np.int64)}
    model = typed_model(
        [
            node("Trilu", ["x"] if k is None else ["x", "k"], ["t"], upper=upper),
            node("Cast", ["t"], ["y"], to=F),
        ],
        {"x": (I64 if integer else F, shape)},
        {"y": shape},
        weights,
    )
    x = randn(*shape)
    if integer:
        x = np.round(x * 10).astype(np.int64)
    else:  # the corners off the diagonal: one is outside the triangle for most k
        x[..., 0, -1], x[..., -1, 0] = np.inf, -np.inf
    run_and_check(model, "test-16", {"x": x})


@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    depth=st.integers(1, 6),
    axis_draw=st.integers(0, 7),
    float_indices=st.booleans(),
    integer_values=st.booleans(),
)
def test_one_hot_matches_onnxruntime(
    shape: list[int], depth: int, axis_draw: int, float_indices: bool, integer_values: bool
) -> None:
    """Runtime indices (INT64, or FLOAT truncated), negative and out-of-range ones included,
    any depth and axis, FLOAT or INT64 values."""
    rank = len(shape) + 1
    axis = axis_draw % (2 * rank) - rank
    values = np.array([3, -7], np.int64) if integer_values else np.array([0.5, 2.0], np.float32)
    model = typed_model(
        [
            node("OneHot", ["i", "depth", "values"], ["h"], axis=axis),
            node("Cast", ["h"], ["y"], to=F),
        ],
        {"i": (F if float_indices else I64, shape)},
        ["y"],
        # onnxruntime takes float indices with float values only with a float depth
        {"depth": np.array(depth, np.float32 if float_indices and not integer_values
                           else np.int64), "values": values},
    )
    rng = np.random.default_rng(depth)
    if float_indices:
        i = rng.uniform(-depth - 2, depth + 2, shape).astype(np.float32)
    else:
        i = rng.integers(-depth - 2, depth + 2, shape)
    run_and_check(model, "test-16", {"i": i})


def test_positions_beyond_fp16_are_refused_not_rounded() -> None:
    """ArgMax over, and OneHot of a depth of, more than 2049 positions: fp16 storage would
    round the positions compared (2049 reads as 2048), so fp16 compilation is refused; fp32
    gives the exact position."""
    argmax = typed_model([node("ArgMax", ["x"], ["a"], axis=1, keepdims=0),
                          node("Cast", ["a"], ["y"], to=F)], {"x": (F, [2, 3000])}, ["y"])
    x = np.zeros((2, 3000), np.float32)
    x[:, 2049] = 5.0
    one_hot = typed_model([node("OneHot", ["i", "depth", "values"], ["y"])], {"i": (F, [2])},
                          ["y"], {"depth": np.array(3000, np.float32),
                                  "values": np.array([0, 1], np.float32)})
    for model, inputs in ((argmax, {"x": x}), (one_hot, {"i": np.array([2049, 3], np.float32)})):
        with pytest.raises(T10Error, match=r"fp16 storage would round the positions 0 to 2999 "
                                           r"of node '(ArgMax|OneHot)_0'"):
            driver.run_model(
                model,
                driver.CompileOptions(chip="test-16", precision="fp16"),
                inputs=inputs,
            )
        run_and_check(model, "test-16", inputs)


def test_integer_inputs_beyond_fp16_are_refused_not_rounded() -> None:
    model = casts_model()
    n = np.full((3, 8), 2049, dtype=np.int64)  # exact in fp32, not in fp16
    with pytest.raises(
        T10Error,
        match=r"input 'n' \(int64\): value 2049 at index \[0, 0\] is "
        r"not exact in fp16 storage",
    ):
        driver.run_model(
            model,
            driver.CompileOptions(chip="test-16", precision="fp16"),
            inputs={"x": randn(3, 8), "n": n},
        )
    n[:] = 4096  # exact in fp16
    n[1:] = -2048
    check_fp16(model, "test-16", {"x": fp16_exact(3, 8), "n": n})


def unary_model(ops: list[str]) -> onnx.ModelProto:
    nodes = [node(op, ["x"], [f"u{i}"]) for i, op in enumerate(ops)]
    nodes.append(node("Sum", [f"u{i}" for i in range(len(ops))], ["y"]))
    return typed_model(nodes, {"x": (F, [5, 12])}, {"y": [5, 12]})


def test_cos_sin_floor_ceil_sign_sum(chip: str) -> None:
    x = randn(5, 12) * 3
    x[0, :5] = [0.0, -0.0, 1.0, -1.0, 2.5]
    run_and_check(unary_model(["Cos", "Sin", "Floor", "Ceil", "Sign"]), chip, {"x": x})


def test_cos_sin_fp16(chip: str) -> None:
    check_fp16(unary_model(["Cos", "Sin", "Floor", "Ceil", "Sign"]), chip, {"x": fp16_exact(5, 12)})


def test_sum_of_one_and_of_broadcast_inputs(chip: str) -> None:
    model = typed_model(
        [node("Sum", ["x"], ["s"]), node("Sum", ["s", "r", "c"], ["y"])],
        {"x": (F, [4, 6]), "r": (F, [6]), "c": (F, [4, 1])},
        {"y": [4, 6]},
    )
    run_and_check(model, chip, {"x": randn(4, 6), "r": randn(6, seed=1), "c": randn(4, 1, seed=2)})


def test_indexing_views_match_onnxruntime(chip: str) -> None:
    """Tile, GatherND (batch_dims 0 and 1), GatherElements and a 2-D Gather of known affine
    indices, on a runtime bool and a float."""
    b, s = 2, 6
    pairs = np.stack(np.broadcast_arrays(np.arange(b)[:, None], np.arange(s)[None, :]), -1)
    model = typed_model(
        [
            node("Cast", ["mask"], ["mb"], to=B),
            node("GatherND", ["mb", "pairs"], ["g"]),  # mask[b, s]: [b, s]
            node("Cast", ["g"], ["gf"], to=F),
            node("Tile", ["gf", "reps"], ["t"]),  # [b, 2s]
            node("GatherElements", ["x", "rev"], ["ge"], axis=1),  # x[:, 2s-1-j]
            node("Flatten", ["x"], ["flat"], axis=0),  # [1, b*2s]
            node("Gather", ["flat", "rows"], ["gr"], axis=1),  # [1, b, 2s]
            node("Squeeze", ["gr", "zero"], ["sq"]),
            node("GatherND", ["x", "cols"], ["nd"], batch_dims=1),  # x[i, 2j]: [b, s]
            node("Tile", ["nd", "reps"], ["ndt"]),
            node("Sum", ["t", "ge", "sq", "ndt"], ["y"]),
        ],
        {"x": (F, [b, 2 * s]), "mask": (I64, [b, s])},
        {"y": [b, 2 * s]},
        {
            "pairs": pairs.astype(np.int64),
            "reps": np.array([1, 2], np.int64),
            "rev": np.broadcast_to(np.arange(2 * s)[::-1] - 2 * s, (b, 2 * s)).astype(np.int64),
            "rows": (np.arange(b)[:, None] * 2 * s + np.arange(2 * s)).astype(np.int64),
            "zero": np.array([0], np.int64),
            "cols": np.broadcast_to((np.arange(s) * 2)[:, None], (b, s, 1)).astype(np.int64),
        },
    )
    run_and_check(model, chip, {"x": randn(b, 2 * s), "mask": padding_mask((b, s))})


# --------------------------------------------------------------------------------------------
# Property: masks from runtime comparisons feeding Where and softmax
# --------------------------------------------------------------------------------------------


@given(
    batch=st.integers(1, 3),
    seq=st.integers(1, 9),
    heads=st.integers(1, 3),
    op=st.sampled_from(COMPARISONS),
    threshold=st.sampled_from([-0.5, 0.0, 1.0]),
    seed=st.integers(0, 2**16),
    chip=st.sampled_from(["test-16", "ipu-mk2"]),
)
def test_runtime_masks_property(
    batch: int, seq: int, heads: int, op: str, threshold: float, seed: int, chip: str
) -> None:
    """scores masked where `mask != 0 and scores <op> threshold`, softmax over keys; the
    first key always attends so no row is all masked."""
    model = typed_model(
        [
            node("Unsqueeze", ["mask", "axes"], ["m4"]),
            node("Cast", ["m4"], ["mb"], to=B),
            node(op, ["scores", "t"], ["cmp"]),
            node("And", ["mb", "cmp"], ["attend"]),
            node("Where", ["attend", "scores", "neg"], ["masked"]),
            node("Softmax", ["masked"], ["y"], axis=-1),
        ],
        {"scores": (F, [batch, heads, seq, seq]), "mask": (I64, [batch, seq])},
        {"y": [batch, heads, seq, seq]},
        {
            "axes": np.array([1, 2], np.int64),
            "t": np.float32(threshold).reshape(1),
            "neg": np.float32(-1e9).reshape(1),
        },
    )
    scores = np.round(randn(batch, heads, seq, seq, seed=seed) * 2) / 2  # ties at threshold
    scores[..., 0] = threshold + 1.0 if op in ("Greater", "GreaterOrEqual") else threshold
    if op == "Less":
        scores[..., 0] = threshold - 1.0
    run_and_check(model, chip, {"scores": scores, "mask": padding_mask((batch, seq), seed)})


# --------------------------------------------------------------------------------------------
# Refusals
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "inputs", "weights", "message"),
    [
        (
            [node("Add", ["n", "n"], ["s"], name="add"), node("Cast", ["s"], ["y"], to=F)],
            {"n": (I64, [3])},
            {},
            r"node 'add' \(Add\): integer Add needs proven ranges of its inputs to stay exact, "
            r"but the range of input 'n' is unknown; declare the range of its values "
            r"\(`--input-range n=LO:HI`",
        ),
        (
            [node("Cast", ["x"], ["d"], name="c", to=T.DOUBLE), node("Cast", ["d"], ["y"], to=F)],
            {"x": (F, [3])},
            {},
            r"node 'c' \(Cast\): Cast from FLOAT to DOUBLE of a runtime value is not supported",
        ),
        (
            [node("Equal", ["n", "big"], ["e"], name="eq"), node("Cast", ["e"], ["y"], to=F)],
            {"n": (I64, [3])},
            {"big": np.array([2**24 + 1], np.int64)},
            r"node 'eq' \(Equal\) computes with the INT64 constant 'big', whose value 16777217",
        ),
        (
            [node("GatherElements", ["x", "i"], ["y"], name="ge")],
            {"x": (F, [3, 4]), "i": (I64, [4, 5])},
            {},
            r"node 'ge' \(GatherElements\): runtime indices \[4, 5\]: dim 1 of the ids \[4, 5\] "
            r"exceeds the table's \[3, 4\] \(only the gathered axis 0 may\)",
        ),
        (
            [node("GatherND", ["x", "i"], ["y"], name="nd")],
            {"x": (F, [3, 4])},
            {"i": np.array([[2], [3], [1]], np.int64)},
            r"node 'nd' \(GatherND\): indices \[2, 3, 1\] are out of range for size 3",
        ),
        (
            [node("Tile", ["x", "r"], ["y"], name="tile")],
            {"x": (F, [3, 4]), "r": (I64, [2])},
            {},
            r"node 'tile' \(Tile\): repeats 'r' must be a compile-time constant",
        ),
    ],
    ids=[
        "int-add",
        "cast-double",
        "int-constant-2^24",
        "runtime-elements-shape",
        "nd-out-of-range",
        "tile",
    ],
)
def test_refusals_name_the_node(
    nodes: list[onnx.NodeProto],
    inputs: dict[str, tuple[int, list[int]]],
    weights: dict[str, np.ndarray],
    message: str,
) -> None:
    with pytest.raises(T10Error, match=message):
        import_onnx(typed_model(nodes, inputs, ["y"], weights))


@pytest.mark.parametrize(("exclusive", "reverse"), [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize(("axis", "shape"), [(1, [3, 5, 4]), (-1, [2, 7]), (0, [6])])
def test_cumsum_matches_onnxruntime(
    chip: str, exclusive: int, reverse: int, axis: int, shape: list[int]
) -> None:
    """Every direction, an infinite element included (it must not make other sums NaN)."""
    model = typed_model(
        [node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)],
        {"x": (F, shape)},
        {"y": shape},
        {"axis": np.array(axis, np.int64)},
    )
    x = randn(*shape)
    x.flat[1] = np.inf
    run_and_check(model, chip, {"x": x})


def test_cumsum_fp16() -> None:
    model = typed_model(
        [node("CumSum", ["x", "axis"], ["y"])],
        {"x": (F, [4, 9])},
        {"y": [4, 9]},
        {"axis": np.array(1, np.int64)},
    )
    check_fp16(model, "test-16", {"x": fp16_exact(4, 9)})


def test_integer_constant_beyond_fp16_refuses_fp16_storage() -> None:
    """A known INT64 value selected into an integer result must stay exact: fp16 storage would
    round 3001, so fp16 compilation is refused; fp32 computes it."""
    model = typed_model(
        [
            node("Cast", ["x"], ["b"], to=B),
            node("Where", ["b", "n", "big"], ["w"], name="pick"),
            node("Cast", ["w"], ["y"], to=F),
        ],
        {"x": (F, [2, 3]), "n": (I64, [2, 3])},
        {"y": [2, 3]},
        {"big": np.array([3001, 7, 2], np.int64)},
    )
    inputs = {"x": np.round(randn(2, 3)), "n": padding_mask((2, 3))}
    with pytest.raises(
        T10Error,
        match=r"fp16 storage would round the INT64 constant 'big' \(value 3001\) read by node "
        r"'pick' \(Where\): integers that must stay exact",
    ):
        driver.compile_model(model, driver.CompileOptions(chip="test-16", precision="fp16"))
    run_and_check(model, "test-16", inputs)
