"""Printed IR re-reads as the same numbers: a bare hex literal in a dense float literal is the
element type's bit pattern (as in MLIR), which is how xDSL's printer writes ±inf, NaN and
finite values no short decimal form reads back exactly (`t10.t10_dialects.parsing`).

The property prints random float arrays (every bit pattern class: ±inf, NaN with payloads,
-0.0, denormals, extremes; splats; shapes up to rank 3, past the 100 elements above which
the printer writes a hex string) and reads them back the way t10-opt does; the end-to-end
test runs an ONNX model with a -inf constant stage by stage through t10-opt text files.
"""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    ModuleOp,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
)

from t10.common.chip_spec import load_chip
from t10.driver import CompileOptions, check_against_reference, check_tolerance, run_model
from t10.outputs.report import input_specs, random_inputs
from t10.sim.simulator import simulate
from t10.tools.opt import T10OptMain, main

EXAMPLES = int(os.environ.get("T10_PROPERTY_EXAMPLES", "60"))
T10_OPT = Path(sys.executable).parent / "t10-opt"

# element type -> (exponent bits, fraction bits)
LAYOUTS: dict[AnyFloat, tuple[int, int]] = {f16: (5, 10), bf16: (8, 7), f32: (8, 23), f64: (11, 52)}


def special_bits(exponent: int, fraction: int) -> list[int]:
    """±0, ±inf, NaNs (quiet, with a payload, negative), the smallest and largest denormal
    and normal, the largest finite and 1.0, as bit patterns."""
    sign = 1 << (exponent + fraction)
    inf = ((1 << exponent) - 1) << fraction
    quiet = 1 << (fraction - 1)
    one = ((1 << (exponent - 1)) - 1) << fraction
    positive = [0, inf, inf | quiet, inf | quiet | 1, inf | quiet | (quiet >> 1), 1,
                (1 << fraction) - 1, 1 << fraction, inf - 1, one]
    return positive + [b | sign for b in positive]


@st.composite
def float_arrays(draw: st.DrawFn) -> DenseIntOrFPElementsAttr:
    """A dense float attribute holding what xDSL can hold (each element a Python float
    packed by the element type: a payload the packing drops is not in the data)."""
    element = draw(st.sampled_from(list(LAYOUTS)))
    exponent, fraction = LAYOUTS[element]
    bits = st.one_of(
        st.sampled_from(special_bits(exponent, fraction)),
        st.integers(0, (1 << (1 + exponent + fraction)) - 1),
    )
    shape = draw(st.lists(st.integers(1, 5), max_size=3))
    count = math.prod(shape)
    patterns = [draw(bits)] * count if draw(st.booleans()) else draw(
        st.lists(bits, min_size=count, max_size=count)
    )
    size = element.compile_time_size
    values = [element.unpack(b.to_bytes(size, "little"), 1)[0] for b in patterns]
    return DenseIntOrFPElementsAttr(TensorType(element, shape), BytesAttr(element.pack(values)))


def read_as_t10_opt(text: str) -> ModuleOp:
    """`text` parsed the way t10-opt parses an input file."""
    module = T10OptMain(args=[]).parse_chunk(io.BytesIO(text.encode()), "mlir")
    assert module is not None
    return module


@settings(max_examples=EXAMPLES)
@given(float_arrays())
def test_printed_dense_floats_read_back_bit_for_bit(attr: DenseIntOrFPElementsAttr) -> None:
    text = str(ModuleOp([ConstantOp(attr)]))
    (op,) = read_as_t10_opt(text).ops
    assert isinstance(op, ConstantOp)
    back = op.value
    assert isinstance(back, DenseIntOrFPElementsAttr)
    assert back.type == attr.type, text
    assert back.data.data.hex() == attr.data.data.hex(), text


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("dense<[-0xFF800000]> : tensor<1xf32>",
         "a hexadecimal float literal is a bit pattern and has no sign: set the sign bit "
         "instead"),
        ("dense<[0x1FF80, 0x0]> : tensor<2xbf16>",
         "hexadecimal float literal 0x1FF80 does not fit the 16 bits of bf16"),
        ("dense<[(0x7F800000, 0x0)]> : tensor<1xcomplex<f32>>",
         "a hexadecimal part of a complex literal is not supported: write the dense attribute "
         "as a hex string"),
    ],
)
def test_hex_float_a_bit_pattern_cannot_mean_is_refused(
    literal: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "in.mlir"
    path.write_text(f"%0 = arith.constant {literal}\n")
    assert main([str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"t10-opt: error: {path}:1:28: {message}\n"


def test_hex_in_integer_literals_is_still_a_value(capsys: pytest.CaptureFixture[str]) -> None:
    (op,) = read_as_t10_opt("%0 = arith.constant dense<[0x10, -3]> : tensor<2xi32>\n").ops
    assert isinstance(op, ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr)
    assert op.value.get_values() == (16, -3)


def minus_inf_model(reduce: bool) -> onnx.ModelProto:
    """Where(x > 0, x, -inf), Max(x, -inf) and Exp of the Where, each reading the -inf
    constant (`reduce`: and the Where's row maxima, whose init is a -inf splat)."""
    node = helper.make_node
    nodes = [
        node("Greater", ["x", "zero"], ["mask"], name="gt"),
        node("Where", ["mask", "x", "ninf"], ["w"], name="where"),
        node("Max", ["x", "ninf"], ["mx"], name="max"),
        node("Exp", ["w"], ["e"], name="exp"),
    ]
    outputs = {"w": [4, 6], "mx": [4, 6], "e": [4, 6]}
    if reduce:
        nodes.append(node("ReduceMax", ["w", "axes"], ["m"], name="rmax", keepdims=0))
        outputs["m"] = [4]
    graph = helper.make_graph(
        nodes,
        "minus_inf",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs.items()],
        [
            numpy_helper.from_array(np.array(0, np.float32), "zero"),
            numpy_helper.from_array(np.array(-np.inf, np.float32), "ninf"),
            numpy_helper.from_array(np.array([1], np.int64), "axes"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return model


def t10_opt(*args: str, cwd: Path) -> str:
    done = subprocess.run([str(T10_OPT), *args], capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("reduce", [False, True], ids=["elementwise", "reduction"])
def test_minus_inf_model_stage_by_stage_computes_as_t10_run(
    reduce: bool, tmp_path: Path
) -> None:
    model = minus_inf_model(reduce)
    onnx.save_model(model, tmp_path / "m.onnx")
    t10_opt("m.onnx", "-o", "front.mlir", cwd=tmp_path)
    assert "dense<0xff800000>" in (tmp_path / "front.mlir").read_text()
    compile_ = ("front.mlir", "-p", "t10-compile{chip=test-16}")
    t10_opt(*compile_, "-o", "chip.mlir", cwd=tmp_path)
    assert "total " in t10_opt(*compile_, "-t", "t10-sim", cwd=tmp_path)

    module = read_as_t10_opt((tmp_path / "chip.mlir").read_text())
    inputs = random_inputs(input_specs(module), 0)
    staged = simulate(module, load_chip("test-16"), inputs).outputs
    assert check_against_reference(model, inputs, staged, check_tolerance("fp32")).passed
    direct = run_model(model, CompileOptions(chip="test-16"), inputs=inputs).outputs
    assert staged.keys() == direct.keys()
    for name, values in direct.items():
        np.testing.assert_array_equal(staged[name], values, err_msg=name)
