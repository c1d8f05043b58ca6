"""Property test: random chains of views (Slice, Concat, Transpose, Reshape, Split, Squeeze,
Unsqueeze, Pad, Gather of constants, Expand) mixed with element-wise ops and MatMuls, on
random shapes (1s and primes included), compiled and simulated on test-16 and ipu-mk2 and
compared with onnxruntime.

The default hypothesis profile (`ci`, tests/unit/conftest.py) runs a fixed set of examples;
`T10_HYPOTHESIS_PROFILE=long` (or `--hypothesis-profile=long`) runs hundreds of fresh ones.
A failure prints the graph (`onnx.printer.to_text`) of the shrunk example."""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import numpy as np
import onnx
import pytest
from helpers import CHIPS, assert_within_planned_sram
from hypothesis import given, note
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from t10.driver import CompileOptions, compile_model
from t10.reference import reference_session
from t10.sim.simulator import simulate

RTOL, ATOL, ATOL_RMS = 1e-4, 1e-5, 1e-6
"""|sim - ref| <= ATOL + ATOL_RMS * rms(ref) + RTOL * |ref| (the CLI's --check criterion): a
chain of MatMuls sums in another order than onnxruntime, so a small element that results
from cancellation differs by a few ulps of the output's scale."""
SIZES = (1, 2, 3, 4, 5, 6, 7)
MAX_ELEMENTS = 360
MAX_RANK = 4

Shape = tuple[int, ...]


@dataclass
class Graph:
    """An ONNX graph under construction: `current` is the tensor the next step transforms."""

    draw: st.DrawFn
    shape: Shape
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    inits: list[onnx.TensorProto] = field(default_factory=list)
    shapes: dict[str, Shape] = field(default_factory=dict)
    current: str = "x"

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{len(self.nodes) + len(self.inits)}"

    def ints(self, values: list[int]) -> str:
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def floats(self, shape: Shape) -> str:
        name = self.fresh("w")
        values = np.random.default_rng(len(self.inits)).standard_normal(shape)
        self.inits.append(numpy_helper.from_array(values.astype(np.float32), name))
        return name

    def node(self, op: str, inputs: list[str], shape: Shape, **attrs: object) -> str:
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        self.shapes[out] = shape
        return out

    def axis(self) -> int:
        return self.draw(st.integers(0, len(self.shape) - 1))


def _on(g: Graph, axis: int, size: int) -> Shape:
    """The current shape with `axis` of `size`."""
    return tuple(size if d == axis else s for d, s in enumerate(g.shape))


def _slice_bounds(g: Graph, n: int) -> tuple[int, int, int, int]:
    """(start, end, step, count) of a non-empty ONNX slice of a dim of size n."""
    step = g.draw(st.sampled_from([1, 1, 2, -1, -2]))
    start = g.draw(st.integers(0, n - 1))
    room = (n - start) if step > 0 else start + 1
    count = g.draw(st.integers(1, -(-room // abs(step))))
    end = start + step * count
    if end < 0:
        end = -n - 1  # ONNX: a negative end counts from the back; this one clamps to before 0
    return start, end, step, count


def slice_(g: Graph) -> tuple[str, Shape]:
    a = g.axis()
    start, end, step, count = _slice_bounds(g, g.shape[a])
    inputs = [g.current, g.ints([start]), g.ints([end]), g.ints([a]), g.ints([step])]
    shape = _on(g, a, count)
    return g.node("Slice", inputs, shape), shape


def transpose(g: Graph) -> tuple[str, Shape]:
    perm = g.draw(st.permutations(range(len(g.shape))))
    shape = tuple(g.shape[p] for p in perm)
    return g.node("Transpose", [g.current], shape, perm=list(perm)), shape


def _factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def reshape(g: Graph) -> tuple[str, Shape]:
    factors = g.draw(st.permutations(_factors(prod(g.shape))))
    rank = g.draw(st.integers(1, MAX_RANK))
    dims = [1] * rank
    for f in factors:
        dims[g.draw(st.integers(0, rank - 1))] *= f
    shape = tuple(dims)
    target = list(shape)
    if g.draw(st.booleans()):
        target[g.draw(st.integers(0, rank - 1))] = -1
    return g.node("Reshape", [g.current, g.ints(target)], shape), shape


def concat(g: Graph) -> tuple[str, Shape]:
    """The current tensor with a slice of itself, its negation, itself or an earlier tensor
    that fits, either order, or a roll (two slices swapped)."""
    a = g.axis()
    n = g.shape[a]
    fits = [
        name
        for name, s in g.shapes.items()
        if name != g.current
        and len(s) == len(g.shape)
        and all(s[d] == g.shape[d] for d in range(len(s)) if d != a)
        and prod(s) + prod(g.shape) <= MAX_ELEMENTS
    ]
    kind = g.draw(st.sampled_from(["self", "neg", "slice", "roll", "earlier"]))
    if kind == "earlier" and fits:
        other = g.draw(st.sampled_from(fits))
        pair = [g.current, other] if g.draw(st.booleans()) else [other, g.current]
        shape = _on(g, a, n + g.shapes[other][a])
        return g.node("Concat", pair, shape, axis=a), shape
    if kind == "roll" and n > 1:
        cut = g.draw(st.integers(1, n - 1))
        axes = g.ints([a])
        tail = g.node("Slice", [g.current, g.ints([cut]), g.ints([n]), axes], _on(g, a, n - cut))
        head = g.node("Slice", [g.current, g.ints([0]), g.ints([cut]), axes], _on(g, a, cut))
        return g.node("Concat", [tail, head], g.shape, axis=a), g.shape
    other, m = g.current, n
    if kind == "neg":
        other = g.node("Neg", [g.current], g.shape)
    elif kind == "slice":
        start, end, step, m = _slice_bounds(g, n)
        other = g.node(
            "Slice", [g.current, g.ints([start]), g.ints([end]), g.ints([a]), g.ints([step])],
            _on(g, a, m),
        )
    pair = [g.current, other] if g.draw(st.booleans()) else [other, g.current]
    shape = _on(g, a, n + m)
    axis = a - len(g.shape) if g.draw(st.booleans()) else a
    return g.node("Concat", pair, shape, axis=axis), shape


def split(g: Graph) -> tuple[str, Shape]:
    """Split into 2 or 3 parts: one part, or the parts concatenated in reverse order."""
    a = g.axis()
    n = g.shape[a]
    parts = g.draw(st.integers(1, min(3, n)))
    inner = st.integers(1, max(n - 1, 1))
    cuts = sorted(g.draw(st.sets(inner, min_size=parts - 1, max_size=parts - 1)))
    sizes = [b - s for s, b in zip([0, *cuts], [*cuts, n], strict=True)]
    outs = [g.fresh("part") + f"_{i}" for i in range(len(sizes))]
    g.nodes.append(
        helper.make_node("Split", [g.current, g.ints(sizes)], outs, axis=a)
    )
    if len(sizes) > 1 and g.draw(st.booleans()):
        return g.node("Concat", outs[::-1], g.shape, axis=a), g.shape
    k = g.draw(st.integers(0, len(sizes) - 1))
    shape = _on(g, a, sizes[k])
    return outs[k], shape


def squeeze(g: Graph) -> tuple[str, Shape]:
    ones = [d for d, s in enumerate(g.shape) if s == 1]
    if not ones or len(g.shape) == 1:
        return unsqueeze(g)
    axes = g.draw(st.lists(st.sampled_from(ones), min_size=1, unique=True))
    axes = axes[: len(g.shape) - 1]
    shape = tuple(s for d, s in enumerate(g.shape) if d not in axes)
    return g.node("Squeeze", [g.current, g.ints(axes)], shape), shape


def unsqueeze(g: Graph) -> tuple[str, Shape]:
    if len(g.shape) >= MAX_RANK:
        return squeeze(g) if 1 in g.shape else transpose(g)
    a = g.draw(st.integers(-len(g.shape) - 1, len(g.shape)))
    pos = a % (len(g.shape) + 1)
    shape = (*g.shape[:pos], 1, *g.shape[pos:])
    return g.node("Unsqueeze", [g.current, g.ints([a])], shape), shape


def pad(g: Graph) -> tuple[str, Shape]:
    """Pads in [-2, 2] per side (negative: crop, at least one element kept), any value."""
    before = [g.draw(st.integers(-min(2, s - 1), 2)) for s in g.shape]
    after = [
        g.draw(st.integers(-min(2, s - 1 + min(b, 0)), 2))
        for s, b in zip(g.shape, before, strict=True)
    ]
    shape = tuple(s + b + e for s, b, e in zip(g.shape, before, after, strict=True))
    if prod(shape) > MAX_ELEMENTS:
        return slice_(g)
    value = g.draw(st.sampled_from([None, 0.0, 1.5, -0.0, -3.0]))
    inputs = [g.current, g.ints(before + after)]
    if value is not None:
        name = g.fresh("v")
        g.inits.append(numpy_helper.from_array(np.array(value, dtype=np.float32), name))
        inputs.append(name)
    return g.node("Pad", inputs, shape), shape


def gather(g: Graph) -> tuple[str, Shape]:
    """A single index (drops the axis, rank >= 2) or an evenly spaced run of indices."""
    a = g.axis()
    n = g.shape[a]
    if len(g.shape) > 1 and g.draw(st.booleans()):
        index = g.draw(st.integers(-n, n - 1))
        name = g.fresh("i")
        g.inits.append(numpy_helper.from_array(np.array(index, dtype=np.int64), name))
        shape = tuple(s for d, s in enumerate(g.shape) if d != a)
        return g.node("Gather", [g.current, name], shape, axis=a), shape
    start, _, step, count = _slice_bounds(g, n)
    indices = [start + step * k for k in range(count)]
    if g.draw(st.booleans()):
        indices = [i - n for i in indices]  # negative indices wrap
    shape = _on(g, a, count)
    return g.node("Gather", [g.current, g.ints(indices)], shape, axis=a), shape


def expand(g: Graph) -> tuple[str, Shape]:
    """Broadcast a size-1 dim (or a new leading one) to 2 or 3."""
    k = g.draw(st.sampled_from([2, 3]))
    ones = [d for d, s in enumerate(g.shape) if s == 1]
    if ones:
        d = g.draw(st.sampled_from(ones))
        shape = tuple(k if i == d else s for i, s in enumerate(g.shape))
    elif len(g.shape) < MAX_RANK:
        shape = (k, *g.shape)
    else:
        return transpose(g)
    if prod(shape) > MAX_ELEMENTS:
        return transpose(g)
    return g.node("Expand", [g.current, g.ints(list(shape))], shape), shape


def elementwise(g: Graph) -> tuple[str, Shape]:
    """A unary op, or a binary op with a constant broadcast along some dims, or with a tensor
    of the same shape (an earlier one, or the current one: one input read twice)."""
    op = g.draw(st.sampled_from(["Relu", "Neg", "Tanh", "Add", "Mul", "Sub"]))
    if op in ("Relu", "Neg", "Tanh"):
        return g.node(op, [g.current], g.shape), g.shape
    same = [n for n, s in g.shapes.items() if s == g.shape]  # the current one too
    if same and g.draw(st.booleans()):
        other = g.draw(st.sampled_from(same))
    else:
        keep = [g.draw(st.booleans()) for _ in g.shape]
        other = g.floats(tuple(s if k else 1 for s, k in zip(g.shape, keep, strict=True)))
    return g.node(op, [g.current, other], g.shape), g.shape


def matmul(g: Graph) -> tuple[str, Shape]:
    n = g.draw(st.sampled_from(SIZES))
    shape = (*g.shape[:-1], n)
    if prod(shape) > MAX_ELEMENTS:
        return elementwise(g)
    w = g.floats((g.shape[-1], n))
    return g.node("MatMul", [g.current, w], shape), shape


STEPS = [
    slice_, transpose, reshape, concat, split, squeeze, unsqueeze, pad, gather, expand,
    elementwise, elementwise, matmul,
]


@st.composite
def chains(draw: st.DrawFn) -> onnx.ModelProto:
    dims: list[int] = []
    for _ in range(draw(st.integers(1, MAX_RANK))):
        dims.append(draw(st.sampled_from([s for s in SIZES if s * prod(dims) <= MAX_ELEMENTS])))
    shape = tuple(dims)
    g = Graph(draw, shape)
    g.shapes["x"] = shape
    outputs = []
    for _ in range(draw(st.integers(2, 8))):
        step = draw(st.sampled_from(STEPS))
        name, g.shape = step(g)
        if prod(g.shape) > MAX_ELEMENTS:  # a Concat may grow it: keep the first row
            g.shape = (1, *g.shape[1:])
            name = g.node("Slice", [name, g.ints([0]), g.ints([1]), g.ints([0])], g.shape)
        g.current = name
        g.shapes[name] = g.shape
        if draw(st.integers(0, 5)) == 0:
            outputs.append(name)
    if g.current == "x":
        g.current = g.node("Relu", ["x"], g.shape)
    outputs = sorted({*outputs, g.current} - {"x"})
    graph = helper.make_graph(
        g.nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        g.inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    return model


@pytest.mark.parametrize("chip", CHIPS)
@given(model=chains())
def test_view_chains_match_onnxruntime(chip: str, model: onnx.ModelProto) -> None:
    note(onnx.printer.to_text(model.graph))
    x = np.random.default_rng(0).standard_normal(
        [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    ).astype(np.float32)
    compiled = compile_model(model, CompileOptions(chip=chip))
    result = simulate(compiled.module, compiled.chip, {"x": x})
    assert_within_planned_sram(compiled, result)
    got = result.outputs
    want = reference_session(model).run(None, {"x": x})
    for vi, w in zip(model.graph.output, want, strict=True):
        atol = ATOL + ATOL_RMS * float(np.sqrt(np.mean(np.square(w, dtype=np.float64))))
        np.testing.assert_allclose(got[vi.name], w, rtol=RTOL, atol=atol, err_msg=vi.name)
