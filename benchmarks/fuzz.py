"""Fuzz the entry points with mutated inputs and count how each run ends.

    python benchmarks/fuzz.py [--cases N] [--seed S] [--jobs J] [--timeout SECONDS] [--out DIR]

Seeds are small valid models (the built-in examples, view and element-wise chains, the
torch / Hugging Face exports under tests/unit/data) and the IR that `t10-opt` prints for them
(and for the matmul with pinned rotating plans) at every level. Each case mutates one seed —
ONNX: byte flips, truncation, dropped nodes or attributes, changed dims, attribute values,
element types, opsets, swapped op types, rewired inputs; IR: byte flips, truncation, dropped or
duplicated lines, changed integers, swapped op names, and in the attributes that restate others
(grids, sizes, bounds, layouts, plans) swapped or changed list entries and re-pointed dims —
and runs it: an ONNX model through `t10 run --check` (so a model that runs is compared with
onnxruntime), an IR file through `t10-opt` with the passes from its level on and the `t10-sim`
target (an IR mutant that changed only such an attribute and ran must simulate the numbers its
seed simulates on the same inputs, else it is a `wrong-result`). Every run is a forked child
of this process (the imports are paid once), with an address-space limit and a timeout, and
ends in one of:

| outcome | meaning |
|---|---|
| `success` | exit 0 (an ONNX model: its outputs matched onnxruntime) |
| `clean-error` | exit 1 or 2 with one line `t10: error: ...` / `t10-opt: error: ...` |
| `ort-refuses` | t10 ran the model, onnxruntime refused it for `--check` |
| `fp16-overflow` | ... as a warning of fp16's range explains (a mutated scale or weight) |
| `wrong-result` | t10 ran the model and its outputs differ from onnxruntime |
| `messy-error` | an error that is not one line |
| `internal-error` | a message with "internal error" |
| `traceback` | a Python traceback was printed |
| `abort` | the process died of a signal |
| `hang` | it ran past the timeout |

Everything but the first four is a defect; each defect's input, command and output are kept
in `--out` (default `build/fuzz`) with a `summary.json`, and the counts are printed. The
`ort-refuses` cases are kept too, to be read: onnxruntime refusing a model t10 ran is either
an invalid model t10 should refuse as well, or an onnxruntime limit.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import os
import pickle
import random
import re
import resource
import select
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "unit" / "data"
CHIP = "test-16"
MEMORY_LIMIT = 6 << 30
DEFECTS = ("messy-error", "internal-error", "traceback", "abort", "hang", "wrong-result")
KEPT = (*DEFECTS, "ort-refuses")
"""The outcomes whose cases are kept in `--out`, with the command and its output: the defects,
and the models onnxruntime refused (to tell an exporter's bad model from t10 accepting one)."""

_CONVERSIONS = ["convert-linalg-to-rtensor", "convert-rtensor-to-cshift", "convert-cshift-to-core",
                "convert-core-to-chip"]
_PLANNED = f"t10-fuse-elementwise,t10-fuse-epilogue{{chip={CHIP}}},t10-plan-search{{chip={CHIP}}}"
# Passes that print a seed model's IR at each level.
SEED_PIPELINES = {
    "frontend": "",
    "linalg": _PLANNED,
    **{level: ",".join([_PLANNED, *_CONVERSIONS[: i + 1]])
       for i, level in enumerate(["rtensor", "cshift", "core", "chip"])},
}


# Passes that take IR of each level on to the chip level; `t10-sim` then runs it.
LEVEL_PIPELINES = {
    "frontend": f"t10-compile{{chip={CHIP}}}",
    "linalg": ",".join(_CONVERSIONS),
    "rtensor": ",".join(_CONVERSIONS[1:]),
    "cshift": ",".join(_CONVERSIONS[2:]),
    "core": ",".join(_CONVERSIONS[3:]),
    "chip": "",
}
# --------------------------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------------------------


def _model(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]], outputs: list[str],
           inits: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "seed",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(v, name=k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model)


def _ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def view_chain_seed() -> onnx.ModelProto:
    """Slice, Concat, Transpose, Reshape and an element-wise tail: a roll and a permutation."""
    rng = np.random.default_rng(1)
    node = helper.make_node
    return _model(
        [
            node("Slice", ["x", "s0", "e0", "a0"], ["lo"]),
            node("Slice", ["x", "s1", "e1", "a0"], ["hi"]),
            node("Concat", ["hi", "lo"], ["rolled"], axis=1),
            node("Transpose", ["rolled"], ["t"], perm=[1, 0]),
            node("Reshape", ["t", "shape"], ["r"]),
            node("Mul", ["r", "scale"], ["m"]),
            node("Tanh", ["m"], ["y"]),
        ],
        {"x": [4, 6]},
        ["y"],
        {"s0": _ints(0), "e0": _ints(2), "s1": _ints(2), "e1": _ints(6), "a0": _ints(1),
         "shape": _ints(2, 12), "scale": rng.standard_normal((2, 12)).astype(np.float32)},
    )


def reduction_seed() -> onnx.ModelProto:
    """Softmax, LayerNormalization and a MatMul with a broadcast bias."""
    rng = np.random.default_rng(2)
    node = helper.make_node
    return _model(
        [
            node("MatMul", ["x", "w"], ["mm"]),
            node("Add", ["mm", "b"], ["h"]),
            node("Softmax", ["h"], ["s"], axis=-1),
            node("LayerNormalization", ["s", "g", "beta"], ["y"], axis=-1, epsilon=1e-5),
            node("ReduceMean", ["y"], ["z"], axes=[1], keepdims=1),
        ],
        {"x": [3, 5, 8]},
        ["y", "z"],
        {"w": rng.standard_normal((8, 7)).astype(np.float32),
         "b": rng.standard_normal((7,)).astype(np.float32),
         "g": rng.standard_normal((7,)).astype(np.float32),
         "beta": rng.standard_normal((7,)).astype(np.float32)},
    )


def selection_seed() -> onnx.ModelProto:
    """A bilinear Resize, norms, log-sum-exp, ArgMax, Trilu, CastLike and Size."""
    node = helper.make_node
    return _model(
        [
            node("Resize", ["x", "", "", "sizes"], ["up"], mode="linear"),
            node("LpNormalization", ["up"], ["unit"], axis=-1, p=2),
            node("ReduceLogSumExp", ["unit"], ["lse"], axes=[2], keepdims=1),
            node("ArgMax", ["unit"], ["arg"], axis=3, keepdims=1),
            node("CastLike", ["arg", "lse"], ["argf"]),
            node("Trilu", ["unit"], ["tri"], upper=0),
            node("Size", ["tri"], ["n"]),
            node("CastLike", ["n", "tri"], ["nf"]),
            node("Mul", ["tri", "nf"], ["scaled"]),
            node("Add", ["scaled", "argf"], ["y"]),
        ],
        {"x": [1, 2, 3, 4]},
        ["y", "lse"],
        {"sizes": _ints(1, 2, 6, 6)},
    )


def routing_seed() -> onnx.ModelProto:
    """A router's top-2 (TopK) scattered into a gate (ScatterElements), a known permutation
    (a Gather of non-affine indices) and a ScatterND write."""
    rng = np.random.default_rng(4)
    node = helper.make_node
    return _model(
        [
            node("MatMul", ["x", "router"], ["logits"]),
            node("TopK", ["logits", "k"], ["top", "chosen"], axis=-1),
            node("ScatterElements", ["zeros", "chosen", "top"], ["gate"], axis=1),
            node("Gather", ["gate", "perm"], ["shuffled"], axis=1),
            node("ScatterND", ["shuffled", "rows", "patch"], ["y"], reduction="add"),
        ],
        {"x": [4, 6]},
        ["y"],
        {"router": rng.standard_normal((6, 5)).astype(np.float32), "k": _ints(2),
         "zeros": np.zeros((4, 5), np.float32), "perm": _ints(3, 0, 4, 1, 2),
         "rows": _ints(2, 0).reshape(2, 1),
         "patch": rng.standard_normal((2, 5)).astype(np.float32)},
    )


def recurrent_seed() -> onnx.ModelProto:
    """An LSTM then a GRU over a short sequence, quantised and dequantised."""
    rng = np.random.default_rng(5)
    node = helper.make_node

    def w(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    return _model(
        [
            node("LSTM", ["x", "lw", "lr", "lb"], ["h"], hidden_size=3),
            node("Squeeze", ["h", "one"], ["seq"]),
            node("GRU", ["seq", "gw", "gr"], ["g"], hidden_size=2, direction="bidirectional"),
            node("QuantizeLinear", ["g", "scale", "zero"], ["q"]),
            node("DequantizeLinear", ["q", "scale", "zero"], ["y"]),
        ],
        {"x": [3, 2, 4]},
        ["y"],
        {"lw": w(1, 12, 4), "lr": w(1, 12, 3), "lb": w(1, 24), "one": _ints(1),
         "gw": w(2, 6, 3), "gr": w(2, 6, 2), "scale": np.array(0.05, np.float32),
         "zero": np.array(3, np.uint8)},
    )


def onnx_seeds(exports: bool = True) -> dict[str, onnx.ModelProto]:
    """The small built-in seeds, and (`exports`) the torch / Hugging Face exports."""
    from t10.examples.models import matmul, mlp

    seeds = {
        "mlp": mlp(batch=4, sizes=(16, 32, 8)),
        "matmul": matmul(m=8, k=12, n=16),
        "views": view_chain_seed(),
        "reductions": reduction_seed(),
        "selections": selection_seed(),
        "routing": routing_seed(),
        "recurrent": recurrent_seed(),
    }
    for path in sorted(DATA.glob("*.torchscript.onnx")) if exports else []:
        seeds[path.name.removesuffix(".onnx")] = onnx.load_model(str(path))
    return seeds


# --------------------------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------------------------

OP_TYPES = ["Relu", "Sigmoid", "Add", "Mul", "MatMul", "Transpose", "Softmax", "Concat",
            "Reshape", "Slice", "Gather", "Conv", "Identity", "ReduceSum", "Where", "Pad",
            "NoSuchOp", "Cast", "Expand", "Split", "Squeeze", "Unsqueeze", "Gemm", "Erf",
            "ArgMax", "Resize", "Trilu", "ReduceL2", "ReduceLogSumExp", "CastLike", "Size",
            "IsNaN", "Round", "LpNormalization", "EyeLike", "TopK", "ScatterElements",
            "ScatterND", "LSTM", "GRU", "RNN", "QuantizeLinear", "DequantizeLinear",
            "GatherElements"]
DIMS = [0, -1, 1, 2, 3, 5, 7, 64, 1_000_003, 2**31]
ELEM_TYPES = [TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT64, TensorProto.INT32,
              TensorProto.BOOL, TensorProto.STRING, TensorProto.UINT8, TensorProto.COMPLEX64]
OPSETS = [1, 6, 9, 11, 13, 18, 21, 30, 99]


def _flip_bytes(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        buf[rng.randrange(len(buf))] = rng.randrange(256)
    return bytes(buf)


def _shapes(model: onnx.ModelProto) -> list[onnx.TensorShapeProto]:
    g = model.graph
    return [v.type.tensor_type.shape for v in [*g.input, *g.output, *g.value_info]
            if v.type.HasField("tensor_type") and v.type.tensor_type.HasField("shape")]


def mutate_model(model: onnx.ModelProto, rng: random.Random) -> tuple[str, bytes]:
    """One mutation of `model`: its name and the mutated file's bytes."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    kind = rng.choice(["flip", "truncate", "drop-node", "drop-attribute", "dim", "attribute",
                       "elem-type", "opset", "op-type", "rewire", "drop-outputs",
                       "initializer-dim", "duplicate-node", "rename"])
    if kind == "flip":
        return kind, _flip_bytes(m.SerializeToString(), rng)
    if kind == "truncate":
        data = m.SerializeToString()
        return kind, data[: rng.randrange(len(data))]
    nodes = list(g.node)
    if kind == "drop-node" and nodes:
        g.node.remove(rng.choice(nodes))
    elif kind == "duplicate-node" and nodes:
        g.node.append(rng.choice(nodes))
    elif kind == "drop-attribute":
        with_attrs = [n for n in nodes if n.attribute]
        if with_attrs:
            n = rng.choice(with_attrs)
            n.attribute.remove(rng.choice(list(n.attribute)))
    elif kind == "attribute":
        with_attrs = [n for n in nodes if n.attribute]
        if with_attrs:
            a = rng.choice(list(rng.choice(with_attrs).attribute))
            if a.ints:
                a.ints[rng.randrange(len(a.ints))] = rng.choice([-3, -1, 0, 1, 2, 5, 99])
            elif a.type == onnx.AttributeProto.INT:
                a.i = rng.choice([-3, -1, 0, 1, 2, 5, 99])
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = rng.choice([0.0, -1.0, 1e30, float("nan"), float("inf")])
    elif kind == "dim":
        dims = [d for s in _shapes(m) for d in s.dim]
        if dims:
            rng.choice(dims).dim_value = rng.choice(DIMS)
    elif kind == "initializer-dim" and g.initializer:
        t = rng.choice(list(g.initializer))
        if t.dims:
            t.dims[rng.randrange(len(t.dims))] = rng.choice(DIMS)
    elif kind == "elem-type":
        values = [v for v in [*g.input, *g.output] if v.type.HasField("tensor_type")]
        if values:
            rng.choice(values).type.tensor_type.elem_type = rng.choice(ELEM_TYPES)
    elif kind == "opset":
        m.opset_import[0].version = rng.choice(OPSETS)
    elif kind == "op-type" and nodes:
        rng.choice(nodes).op_type = rng.choice(OP_TYPES)
    elif kind == "rewire" and nodes:
        names = [v.name for v in g.input] + [o for n in nodes for o in n.output]
        n = rng.choice(nodes)
        if n.input:
            n.input[rng.randrange(len(n.input))] = rng.choice(names)
    elif kind == "drop-outputs":
        del g.output[:]
    elif kind == "rename":
        values = list(g.input) + list(g.output)
        rng.choice(values).name = rng.choice(["", "allow_pickle", "x y", "\u00e9t\u00e9", "file"])
    return kind, m.SerializeToString()


OP_NAMES = ["core.kernel", "core.shift", "core.all_reduce", "core.coord", "core.relayout",
            "core.load", "core.alloc", "chip.superstep", "chip.program", "rtensor.distribute",
            "rtensor.collect", "rtensor.relayout", "rtensor.generic", "cshift.compute_shift",
            "cshift.all_reduce", "rtensor.view", "linalg.generic", "arith.constant"]
INTEGER = re.compile(r"(?<![\w.#%])-?\d+(?![\w.])")


ATTRIBUTES = re.compile(
    r"<grid [^>]*>"  # a layout or a plan
    r"|\bon \[[^\]]*\]( axes \[[^\]]*\])?( scatter)? sizes \[[^\]]*\] of \[[^\]]*\]"  # kernel
    r"|\balong \[[^\]]*\]"  # a kernel's slice dims
    r"|\bring \d+ x \d+ of \[[^\]]*\] dim \d+ size \d+"  # core.shift
    r"|\bover \[[^\]]*\]( of \[[^\]]*\])?"  # all-reduces and all-gathers
    r"|\bsteps \d+ shift -?\d+ sizes \[[^\]]*\] rotate \[[^\]]*\]( out \d+)? partial \[[^\]]*\]"
    r"|\bouter steps \d+ shift \d+"  # cshift.compute_shift
    r"|\bon \d+ \S"  # core.alloc, chip.program
)
"""The attributes that restate what other attributes, operands or types already say (grids,
sizes, bounds, layouts, rings, plans): a change either fails to verify or, since a plan does
not change what a program computes, leaves the numbers as they were."""
LIST = re.compile(r"\[(-?\d+(?:, -?\d+)+)\]")
DIM_REF = re.compile(r"(?<=\bd)\d+\b")
ATTRIBUTE_KINDS = ("list-swap", "list-entry", "dim-ref")


def _attribute_spots(lines: list[str], pattern: re.Pattern[str]) -> list[tuple[int, int, int]]:
    """(line, start, end) of each match of `pattern` inside an attribute (`ATTRIBUTES`)."""
    return [(i, a.start() + m.start(), a.start() + m.end())
            for i, line in enumerate(lines) for a in ATTRIBUTES.finditer(line)
            for m in pattern.finditer(a.group())]


def _in_attribute(line: str, start: int) -> bool:
    return any(a.start() <= start < a.end() for a in ATTRIBUTES.finditer(line))


def mutate_attribute(lines: list[str], kind: str, rng: random.Random) -> bool:
    """Mutate one attribute (`ATTRIBUTES`) in `lines`: swap two entries of an integer list
    (a grid, sizes, bounds, axes, a tile), change one entry, or point a loop-dim or grid-axis
    reference (`dN`: a layout's axes or ring, a plan's shift) elsewhere. False: no spot."""
    spots = _attribute_spots(lines, DIM_REF if kind == "dim-ref" else LIST)
    if not spots:
        return False
    i, start, end = rng.choice(spots)
    old = lines[i][start:end]
    if kind == "dim-ref":
        new = str(rng.choice([n for n in range(4) if n != int(old)]))
    else:
        entries = [int(v) for v in old[1:-1].split(", ")]
        j = rng.randrange(len(entries))
        if kind == "list-swap":
            k = rng.choice([k for k in range(len(entries)) if entries[k] != entries[j]] or [j])
            entries[j], entries[k] = entries[k], entries[j]
        else:
            n = entries[j]
            entries[j] = rng.choice([n + 1, n - 1, 2 * n, n // 2, 1, 0, -1])
        new = "[" + ", ".join(map(str, entries)) + "]"
    lines[i] = lines[i][:start] + new + lines[i][end:]
    return True


def mutate_ir(text: str, rng: random.Random) -> tuple[str, bytes, bool]:
    """One mutation of an IR text: its name, the mutated file's bytes and whether it mutated
    only an attribute that restates others (`ATTRIBUTES`), so that a mutant that runs must
    compute the seed's numbers."""
    lines = text.splitlines(keepends=True)
    kind = rng.choice(["flip", "truncate", "drop-line", "duplicate-line", "integer", "integer",
                       "integer", "op-name", *ATTRIBUTE_KINDS, *ATTRIBUTE_KINDS])
    if kind in ATTRIBUTE_KINDS:
        same_numbers = mutate_attribute(lines, kind, rng)
        return kind, "".join(lines).encode(), same_numbers
    same_numbers = False
    if kind == "flip":
        return kind, _flip_bytes(text.encode(), rng), False
    if kind == "truncate":
        return kind, text.encode()[: rng.randrange(len(text.encode()))], False
    if kind == "drop-line":
        del lines[rng.randrange(len(lines))]
    elif kind == "duplicate-line":
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == "integer":
        spots = [(i, m) for i, line in enumerate(lines) for m in INTEGER.finditer(line)]
        if spots:
            i, m = rng.choice(spots)
            n = int(m.group())
            new = rng.choice([0, 1, -1, n + 1, n - 1, 2 * n, 7, 10**9])
            same_numbers = _in_attribute(lines[i], m.start())
            lines[i] = lines[i][: m.start()] + str(new) + lines[i][m.end():]
    elif kind == "op-name":
        spots = [(i, m) for i, line in enumerate(lines)
                 for m in re.finditer(r"\b(core|chip|rtensor|cshift|linalg|arith)\.\w+", line)]
        if spots:
            i, m = rng.choice(spots)
            lines[i] = lines[i][: m.start()] + rng.choice(OP_NAMES) + lines[i][m.end():]
    return kind, "".join(lines).encode(), same_numbers


# --------------------------------------------------------------------------------------------
# Running one case in a forked child
# --------------------------------------------------------------------------------------------


def _entry(name: str) -> Callable[[], object]:
    (ep,) = [e for e in entry_points(group="console_scripts") if e.name == name]
    return ep.load()


@dataclass
class Ended:
    code: int | None  # exit code; None: killed by a signal or the timeout
    signal: int | None
    timed_out: bool
    output: str
    seconds: float


def run_forked(tool: str, argv: list[str], timeout: float, outputs: Path | None = None) -> Ended:
    """Run console script `tool` with `argv` in a forked child; stdout and stderr together.
    `outputs`: where the child saves the outputs its `-t t10-sim` simulates."""
    main = _entry(tool)
    read_end, write_end = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        faulthandler.disable()  # a crash is what we count, not what we print
        os.dup2(write_end, 1)
        os.dup2(write_end, 2)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        if outputs is not None:
            _save_simulated_outputs(outputs)
        sys.argv = [tool, *argv]
        code = 0
        try:
            result = main()
            code = result if isinstance(result, int) else 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # an escaped exception is what we count: print it as Python would
            import traceback

            traceback.print_exc()
            code = 1
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    os.close(write_end)
    chunks: list[bytes] = []
    timed_out = False
    while True:
        left = timeout - (time.monotonic() - start)
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([read_end], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    output = b"".join(chunks).decode("utf-8", errors="replace")
    seconds = time.monotonic() - start
    if timed_out:
        return Ended(None, None, True, output, seconds)
    if os.WIFSIGNALED(status):
        return Ended(None, os.WTERMSIG(status), False, output, seconds)
    return Ended(os.WEXITSTATUS(status), None, False, output, seconds)


NONFINITE_MISMATCH = "whose NaN or infinity the other side does not match"
"""What `--check` says of an output whose NaN / ±inf onnxruntime does not have."""


def _save_simulated_outputs(path: Path) -> None:
    """In a case's child: make the simulations `t10-opt -t t10-sim` runs save their outputs
    (name -> array, in order) to `path`."""
    import t10.driver

    simulate = t10.driver.simulate

    def saving(*args: Any, **kwargs: Any) -> Any:
        result = simulate(*args, **kwargs)
        path.write_bytes(pickle.dumps(list(result.outputs.items())))
        return result

    t10.driver.simulate = saving


def same_outputs(expected: Path, got: Path) -> bool:
    """Whether the outputs saved at `got` are those at `expected`: the same names, in order,
    and values within `t10 run --check`'s fp32 tolerance (another plan may sum in another
    order)."""
    from t10.driver import check_tolerance
    from t10.outputs.report import check_outputs

    want = pickle.loads(expected.read_bytes())
    have = pickle.loads(got.read_bytes()) if got.exists() else []
    names = [n for n, _ in want]
    return names == [n for n, _ in have] and check_outputs(
        dict(have), dict(want), check_tolerance("fp32")
    ).passed


SATURATED_WARNING = "constant value(s) beyond fp16's range saturated to ±65504"
"""What the report's warning says of constants that fp16 storage saturated."""


def classify(tool: str, ended: Ended) -> str:
    if ended.timed_out:
        return "hang"
    if ended.signal is not None:
        return "abort"
    out = ended.output
    if "Traceback (most recent call last)" in out:
        return "traceback"
    if "internal error" in out:
        return "internal-error"
    if ended.code == 0:
        return "success"
    errors = [line for line in out.splitlines() if line.startswith(f"{tool}: error:")]
    usage = ended.code == 2 and any(line.startswith("usage:") for line in out.splitlines())
    if len(errors) != 1 and not usage:
        return "messy-error"
    if errors and "differ from onnxruntime" in errors[0]:
        # a value computed beyond fp16's ±65504 is stored as ±inf, as on the chip; the report
        # warns (`warning fp16 overflow: ...`) only when outputs then hold NaN or ±inf, and a
        # mismatch is the overflow's (a mutation's scale, not a wrong number) only where
        # those NaN / ±inf are what differs; a constant beyond the range is saturated to
        # ±65504 at compile time, and the report warns of it (`warning fp16: ... saturated`)
        overflowed = "warning fp16 overflow" in out and NONFINITE_MISMATCH in errors[0]
        overflowed = overflowed or SATURATED_WARNING in out
        return "fp16-overflow" if overflowed else "wrong-result"
    if errors and "onnxruntime could not run the model" in errors[0]:
        return "ort-refuses"
    return "clean-error"


def case_outcome(case: Case, ended: Ended, saved: Path) -> str:
    """How `case` ended (`classify`); an IR mutant that must keep its seed's numbers
    (`Case.expected`) and ran, but simulated others (saved at `saved`), is a `wrong-result`
    (said at the end of its output)."""
    outcome = classify(case.tool, ended)
    if outcome == "success" and case.expected and not same_outputs(case.expected, saved):
        ended.output += "\nfuzz: the simulated outputs differ from the seed's\n"
        return "wrong-result"
    return outcome


# --------------------------------------------------------------------------------------------
# The campaign
# --------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    suffix: str
    data: bytes
    tool: str
    argv: list[str]  # "{}" stands for the case's file
    expected: Path | None = None
    """An IR case whose mutation must keep the numbers: the seed's simulated outputs."""


# Plans pinned on the matmul seed (8x12 @ 12x16), so that the IR seeds rotate: a Cannon plan
# (both inputs rotate) and one whose output's partial sums rotate.
PINNED_PLANS = {
    "cannon": "#rtensor.plan<grid [2, 2, 1] shift d2 steps 2 rotate [(0, d1, 2), (1, d0, 2)]>",
    "rotating-out": "#rtensor.plan<grid [1, 2, 2] shift d1 steps 4 rotate [(out, d2, 2)]>",
}


def ir_seeds(models: dict[str, onnx.ModelProto], workdir: Path, timeout: float) -> dict[str, str]:
    """The IR of each small seed model at every level, printed by `t10-opt` itself, and of
    the matmul seed with each of `PINNED_PLANS`."""
    seeds: dict[str, str] = {}

    def compile_seed(name: str, path: Path) -> None:
        for level, upto in SEED_PIPELINES.items():
            ended = run_forked("t10-opt", [str(path), *(["-p", upto] if upto else [])], timeout)
            if ended.code != 0:
                raise SystemExit(f"fuzz: the seed {name} does not compile to {level}:\n"
                                 f"{ended.output}")
            seeds[f"{name}.{level}"] = ended.output

    for name in ("mlp", "matmul", "views", "reductions", "selections"):
        path = workdir / f"seed-{name}.onnx"
        onnx.save_model(models[name], str(path))
        compile_seed(name, path)
    for name, plan in PINNED_PLANS.items():
        path = workdir / f"seed-{name}.mlir"
        path.write_text(pin_plan(seeds["matmul.frontend"], plan))
        compile_seed(name, path)
    return seeds


def pin_plan(matmul: str, plan: str) -> str:
    """The IR `matmul` of the matmul seed with `plan` pinned on its generic."""
    named = '{t10.name = "matmul"}'
    assert matmul.count(named) == 1, "the matmul seed's generic is no longer named so"
    return matmul.replace(named, f'{{t10.name = "matmul", t10.plan = {plan}}}')


def ir_argv(seed: str) -> list[str]:
    """`t10-opt`'s arguments for IR seed `seed` (or a mutant of it) at its level: the passes
    to the chip level and the simulation."""
    passes = LEVEL_PIPELINES[seed.rsplit(".", 1)[1]]
    return ["{}", *(["-p", passes] if passes else []), "-t", "t10-sim"]


def seed_output(name: str, text: str, workdir: Path, timeout: float) -> Path | None:
    """Where the simulated outputs of IR seed `name` (`text`) are saved (the inputs of seed
    0); None if it does not simulate as printed (said on stderr: its mutants still run)."""
    path = workdir / f"seed-{name}.mlir"
    path.write_text(text)
    outputs = workdir / f"seed-{name}.outputs"
    argv = [str(path) if a == "{}" else a for a in ir_argv(name)]
    ended = run_forked("t10-opt", argv, timeout, outputs)
    if ended.code == 0 and outputs.exists():
        return outputs
    print(f"fuzz: the IR seed {name} does not simulate as printed, its mutants' numbers are "
          f"not compared: {ended.output.strip()}", file=sys.stderr)
    return None


def cases(models: dict[str, onnx.ModelProto], irs: dict[str, str], count: int,
          seed: int, outputs: Callable[[str], Path | None]) -> Iterator[Case]:
    """`count` cases, 60% ONNX (when there are IR seeds); an IR case whose mutation must
    keep the numbers is compared with its seed's `outputs`."""
    rng = random.Random(seed)
    onnx_names, ir_names = sorted(models), sorted(irs)
    for i in range(count):
        if not ir_names or (onnx_names and rng.random() < 0.6):
            name = rng.choice(onnx_names)
            kind, data = mutate_model(models[name], rng)
            extra = rng.choice([[], [], ["--precision", "fp16"], ["--planner", "replicate"],
                                ["--chip", "ipu-mk2"]])
            yield Case(f"{i:05d}-{name}-{kind}", ".onnx", data, "t10",
                       ["run", "{}", "--chip", CHIP, "--check", *extra])
        else:
            name = rng.choice(ir_names)
            kind, data, same_numbers = mutate_ir(irs[name], rng)
            yield Case(f"{i:05d}-{name}-{kind}", ".mlir", data, "t10-opt", ir_argv(name),
                       outputs(name) if same_numbers else None)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--cases", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--out", type=Path, default=ROOT / "build" / "fuzz")
    p.add_argument("--inputs", choices=["all", "onnx", "ir"], default="all",
                   help="mutate ONNX models, IR files or both (default)")
    p.add_argument("--no-exports", action="store_true",
                   help="leave out the torch / Hugging Face exports (faster cases)")
    p.add_argument("--quiet", action="store_true", help="print only the final counts")
    args = p.parse_args(argv)
    if args.cases < 0 or args.jobs < 1 or args.timeout <= 0:
        p.error("--cases must be >= 0, --jobs >= 1, --timeout > 0")

    # Everything the children run is imported once, here.
    import onnxruntime  # noqa: F401

    import t10.sim.simulator  # noqa: F401
    import t10.tools.cli  # noqa: F401

    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "cases"
    work.mkdir(exist_ok=True)
    models = onnx_seeds(exports=not args.no_exports)
    irs = ir_seeds(models, work, args.timeout) if args.inputs != "onnx" else {}
    saved: dict[str, Path | None] = {}

    def outputs(name: str) -> Path | None:
        """The seed's simulated outputs (simulated when a case first needs them)."""
        if name not in saved:
            saved[name] = seed_output(name, irs[name], work, args.timeout)
        return saved[name]

    if args.inputs == "ir":
        models = {}
    counts: Counter[str] = Counter()
    defects: list[dict[str, object]] = []
    start = time.monotonic()

    def finish(case: Case, path: Path, ended: Ended) -> None:
        outcome = case_outcome(case, ended, _outputs_path(path))
        _outputs_path(path).unlink(missing_ok=True)
        counts[outcome] += 1
        if outcome in KEPT:
            keep = args.out / outcome
            keep.mkdir(exist_ok=True)
            kept = keep / path.name
            kept.write_bytes(path.read_bytes())
            command = [case.tool, *[str(kept) if a == "{}" else a for a in case.argv]]
            (keep / f"{path.stem}.txt").write_text(
                " ".join(command) + "\n\n" + ended.output, encoding="utf-8")
            if outcome in DEFECTS:
                defects.append({"case": case.name, "outcome": outcome, "command": command,
                                "output": ended.output[-2000:]})
        path.unlink(missing_ok=True)
        if not args.quiet:
            done = sum(counts.values())
            print(f"\r{done}/{args.cases} {dict(counts)}", end="", file=sys.stderr, flush=True)

    # Each case runs in a runner process (forked from this one), which forks the case's child
    # and writes how it ended beside the case's file.
    running: dict[int, tuple[Case, Path]] = {}

    def reap() -> None:
        pid, _ = os.wait()
        case, path = running.pop(pid)
        finish(case, path, _read_result(path))

    for case in cases(models, irs, args.cases, args.seed, outputs):
        path = work / f"{case.name}{case.suffix}"
        path.write_bytes(case.data)
        while len(running) >= args.jobs:
            reap()
        pid = os.fork()
        if pid == 0:
            argv_ = [str(path) if a == "{}" else a for a in case.argv]
            saving = _outputs_path(path) if case.expected else None
            _write_result(path, run_forked(case.tool, argv_, args.timeout, saving))
            os._exit(0)
        running[pid] = (case, path)
    while running:
        reap()
    seconds = time.monotonic() - start
    if not args.quiet:
        print(file=sys.stderr)
    summary = {"cases": args.cases, "seed": args.seed, "seconds": round(seconds, 1),
               "counts": dict(counts), "defects": defects}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    print(f"fuzz: {args.cases} cases, seed {args.seed}, {seconds:.0f} s")
    for outcome in ("success", "clean-error", "ort-refuses", "fp16-overflow", *DEFECTS):
        print(f"  {outcome:15} {counts.get(outcome, 0)}")
    print(f"defects kept in {args.out}")
    return 1 if any(counts.get(d) for d in DEFECTS) else 0


def _outputs_path(path: Path) -> Path:
    return path.with_suffix(path.suffix + ".outputs")


def _result_path(path: Path) -> Path:
    return path.with_suffix(path.suffix + ".result.json")


def _write_result(path: Path, ended: Ended) -> None:
    _result_path(path).write_text(json.dumps(ended.__dict__), encoding="utf-8")


def _read_result(path: Path) -> Ended:
    result = _result_path(path)
    try:
        ended = Ended(**json.loads(result.read_text(encoding="utf-8")))
    except (OSError, ValueError):  # the runner itself died
        ended = Ended(None, signal.SIGKILL, False, "(the fuzz runner died)", 0.0)
    result.unlink(missing_ok=True)
    return ended


if __name__ == "__main__":
    sys.exit(main())
