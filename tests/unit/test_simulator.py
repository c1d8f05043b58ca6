"""The tile-level simulator on hand-written chip-level IR: numerics against numpy, and cycle
counts against hand computation with the test-16 chip's constants (IPU MK2 figures)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func, linalg, scf
from xdsl.dialects.builtin import Builtin, ModuleOp

from t10.common import costs
from t10.common.chip_spec import ChipSpec, load_chip
from t10.errors import T10Error
from t10.sim.simulator import simulate
from t10.t10_dialects.parsing import Parser
from t10.universe import DIALECTS

SYNC = 118


@pytest.fixture(scope="module")
def chip() -> ChipSpec:
    return load_chip("test-16")


def parse_unverified(text: str) -> ModuleOp:
    """Parsed as written, without the dialects' verifiers (the simulator runs them itself)."""
    ctx = Context()
    for dialect in (Builtin, func.Func, arith.Arith, scf.Scf, linalg.Linalg):
        ctx.load_dialect(dialect)
    for factory in DIALECTS.values():
        ctx.load_dialect(factory())
    return Parser(ctx, text).parse_module()


def parse(text: str) -> ModuleOp:
    module = parse_unverified(text)
    module.verify()
    return module


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


MATMUL_ATTRS = """{indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
    affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
    iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>,
    #linalg.iterator_type<reduction>]}"""

MUL_ADD = """{
        ^bb0(%p: f32, %q: f32, %acc: f32):
          %m = arith.mulf %p, %q : f32
          %r = arith.addf %acc, %m : f32
          linalg.yield %r : f32
        }"""

# --------------------------------------------------------------------------------------------
# Cannon's algorithm on a 2x2 grid: C[4x6] = A[4x8] @ B[8x6], loops (m, n, k), 2 steps.
# A rotates along ring d1 and B along ring d0; both windows start at o(x) = (x1 + x0) % 2.
# --------------------------------------------------------------------------------------------

LA = "<grid [2, 2, 1] axes [d0, -] tile [2, 8] rotate 1 ring d1 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>"  # noqa: E501
LB = "<grid [2, 2, 1] axes [-, d1] tile [8, 3] rotate 0 ring d0 x 2 steps 2 skew [(d1, 2, 1), (d0, 2, 1)]>"  # noqa: E501
LC = "<grid [2, 2, 1] axes [d0, d1] tile [2, 3]>"

CANNON = f"""
func.func @main(%A: tensor<4x8xf32> {{t10.name = "a"}}, %B: tensor<8x6xf32> {{t10.name = "b"}})
    -> (tensor<4x6xf32> {{t10.name = "c"}}) {{
  %y = chip.program "main" on 4 -> tensor<4x6xf32> {{
    %a = core.alloc "mm/in0" on 4 : !core.buffer<2x8xf32>
    %b = core.alloc "mm/in1" on 4 : !core.buffer<8x3xf32>
    %c = core.alloc "mm/out" on 4 : !core.buffer<2x3xf32>
    core.load %A into %a layout {LA} : tensor<4x8xf32>, !core.buffer<2x8xf32>
    core.load %B into %b layout {LB} : tensor<8x6xf32>, !core.buffer<8x3xf32>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %x0 = core.coord 0 of [2, 2, 1]
    %x1 = core.coord 1 of [2, 2, 1]
    %sum = arith.addi %x0, %x1 : index
    %o = arith.remui %sum, %c2 : index
    scf.for %t = %c0 to %c2 step %c1 {{
      %u = arith.addi %o, %t : index
      %slot = arith.remui %u, %c2 : index
      %off = arith.muli %slot, %c4 : index
      %next = arith.addi %u, %c1 : index
      %nslot = arith.remui %next, %c2 : index
      %noff = arith.muli %nslot, %c4 : index
      chip.superstep "mm" {{
        core.kernel "mm" on [2, 2, 1] sizes [2, 3, 4] of [4, 6, 8] ins(%a, %b) outs(%c)
            at (%off, %off, %c0) along [1, 0, -1] {MATMUL_ATTRS}
            : (!core.buffer<2x8xf32>, !core.buffer<8x3xf32>) -> !core.buffer<2x3xf32> {MUL_ADD}
      }} exchange {{
        core.shift %a ring 1 x 2 of [2, 2, 1] dim 1 size 4 from %off to %noff
            : !core.buffer<2x8xf32>
        core.shift %b ring 0 x 2 of [2, 2, 1] dim 0 size 4 from %off to %noff
            : !core.buffer<8x3xf32>
      }}
    }}
    %r = core.store %c layout {LC} : !core.buffer<2x3xf32> -> tensor<4x6xf32>
    chip.yield %r : tensor<4x6xf32>
  }}
  func.return %y : tensor<4x6xf32>
}}
"""


def test_cannon_matmul_numerics_and_cycles(chip: ChipSpec) -> None:
    a, b = rand(4, 8), rand(8, 6, seed=1)
    result = simulate(parse(CANNON), chip, {"a": a, "b": b})
    np.testing.assert_allclose(result.outputs["c"], a @ b, rtol=1e-5, atol=1e-5)

    # per step: matmul 2x4x3 on f32 = 4*12*1*1*1 + 514*1*1 + 113*1 + 173 = 848 cycles;
    # A shifts 2x4 f32 = 32 B -> ceil(8.96) = 9; B shifts 4x3 f32 = 48 B -> ceil(13.44) = 14
    assert costs.matmul_cycles(chip, 1, 2, 4, 3, 4) == 848
    report = result.report
    (mm,) = report.ops
    assert (mm.name, mm.supersteps, mm.cores_used) == ("mm", 2, 4)
    assert (mm.compute_cycles, mm.exchange_cycles, mm.sync_cycles) == (2 * 848, 2 * 23, 2 * SYNC)
    assert mm.exchanged_bytes == 2 * (32 + 48)
    assert mm.cycles == report.total_cycles == 2 * (848 + 23 + SYNC)
    assert report.seconds == pytest.approx(report.total_cycles / chip.clock_hz)
    assert mm.sram_bytes_per_core == report.peak_sram_bytes_per_core == 64 + 96 + 24


# --------------------------------------------------------------------------------------------
# Element-wise: Y[m, n] = max(X^T[m, n] + bias[n], 0) on grid [2, 1] (m split), X stored
# transposed (map (d1, d0)), bias 1-D and replicated.
# --------------------------------------------------------------------------------------------

RELU_BIAS = """
func.func @main(%X: tensor<6x4xf32> {t10.name = "x"}, %bias: tensor<6xf32> {t10.name = "bias"})
    -> (tensor<4x6xf32> {t10.name = "y"}) {
  %y = chip.program "main" on 2 -> tensor<4x6xf32> {
    %x = core.alloc "act/in0" on 2 : !core.buffer<6x2xf32>
    %b = core.alloc "act/in1" on 2 : !core.buffer<6xf32>
    %o = core.alloc "act/out" on 2 : !core.buffer<2x6xf32>
    core.load %X into %x layout <grid [2, 1] axes [-, d0] tile [6, 2]>
        : tensor<6x4xf32>, !core.buffer<6x2xf32>
    core.load %bias into %b layout <grid [2, 1] axes [-] tile [6]>
        : tensor<6xf32>, !core.buffer<6xf32>
    %c0 = arith.constant 0 : index
    chip.superstep "act" {
      core.kernel "act" on [2, 1] sizes [2, 6] of [4, 6] ins(%x, %b) outs(%o) at (%c0, %c0, %c0)
          along [-1, -1, -1] {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>,
          affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
          iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]}
          : (!core.buffer<6x2xf32>, !core.buffer<6xf32>) -> !core.buffer<2x6xf32> {
      ^bb0(%v: f32, %w: f32, %out: f32):
        %s = arith.addf %v, %w : f32
        %z = arith.constant 0.0 : f32
        %r = arith.maximumf %s, %z : f32
        linalg.yield %r : f32
      }
    } exchange {
    }
    %r = core.store %o layout <grid [2, 1] axes [d0, -] tile [2, 6]>
        : !core.buffer<2x6xf32> -> tensor<4x6xf32>
    chip.yield %r : tensor<4x6xf32>
  }
  func.return %y : tensor<4x6xf32>
}
"""


def test_elementwise_relu_bias_broadcast(chip: ChipSpec) -> None:
    x, bias = rand(6, 4), rand(6, seed=2)
    result = simulate(parse(RELU_BIAS), chip, {"x": x, "bias": bias})
    np.testing.assert_allclose(result.outputs["y"], np.maximum(x.T + bias, 0), rtol=1e-6)
    (act,) = result.report.ops
    # add + max on 12 elements: 0.5 * 12 * 2 ops + 300 = 312 (the relu rate is for a lone
    # max); no exchange; one sync
    assert (act.compute_cycles, act.exchange_cycles, act.sync_cycles) == (312, 0, SYNC)
    assert act.exchanged_bytes == 0 and act.cores_used == 2
    assert result.report.total_cycles == 312 + SYNC


# --------------------------------------------------------------------------------------------
# Padded layout: a 5x7 tensor in 3x4 tiles on grid [2, 2]; y = 2 * x - x.
# --------------------------------------------------------------------------------------------

PADDED = """
func.func @main(%X: tensor<5x7xf32> {t10.name = "x"}) -> (tensor<5x7xf32> {t10.name = "y"}) {
  %y = chip.program "main" on 4 -> tensor<5x7xf32> {
    %x = core.alloc "p/in0" on 4 : !core.buffer<3x4xf32>
    %o = core.alloc "p/out" on 4 : !core.buffer<3x4xf32>
    core.load %X into %x layout <grid [2, 2] axes [d0, d1] tile [3, 4]>
        : tensor<5x7xf32>, !core.buffer<3x4xf32>
    %c0 = arith.constant 0 : index
    chip.superstep "p" {
      core.kernel "p" on [2, 2] sizes [3, 4] of [5, 7] ins(%x) outs(%o) at (%c0, %c0) along [-1, -1]
          {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
          iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>]}
          : (!core.buffer<3x4xf32>) -> !core.buffer<3x4xf32> {
      ^bb0(%v: f32, %out: f32):
        %two = arith.constant 2.0 : f32
        %d = arith.mulf %v, %two : f32
        %s = arith.subf %d, %v : f32
        %n = arith.negf %s : f32
        %m = arith.negf %n : f32
        linalg.yield %m : f32
      }
    } exchange {
    }
    %r = core.store %o layout <grid [2, 2] axes [d0, d1] tile [3, 4]>
        : !core.buffer<3x4xf32> -> tensor<5x7xf32>
    chip.yield %r : tensor<5x7xf32>
  }
  func.return %y : tensor<5x7xf32>
}
"""


def test_padded_layout(chip: ChipSpec) -> None:
    x = rand(5, 7)
    result = simulate(parse(PADDED), chip, {"x": x})
    np.testing.assert_allclose(result.outputs["y"], x, rtol=1e-6)
    # padding is computed too: 12 elements per core, 4 body ops: 0.5 * 12 * 4 + 300
    assert result.report.ops[0].compute_cycles == 324


# --------------------------------------------------------------------------------------------
# Split reduction: C[2x3] = A[2x4] @ B[4x3] with k split over 2 cores, then an all-reduce.
# --------------------------------------------------------------------------------------------

SPLIT_K = f"""
func.func @main(%A: tensor<2x4xf32> {{t10.name = "a"}}, %B: tensor<4x3xf32> {{t10.name = "b"}})
    -> (tensor<2x3xf32> {{t10.name = "c"}}) {{
  %y = chip.program "main" on 2 -> tensor<2x3xf32> {{
    %a = core.alloc "k/in0" on 2 : !core.buffer<2x2xf32>
    %b = core.alloc "k/in1" on 2 : !core.buffer<2x3xf32>
    %c = core.alloc "k/out" on 2 : !core.buffer<2x3xf32>
    core.load %A into %a layout <grid [1, 1, 2] axes [-, d2] tile [2, 2]>
        : tensor<2x4xf32>, !core.buffer<2x2xf32>
    core.load %B into %b layout <grid [1, 1, 2] axes [d2, -] tile [2, 3]>
        : tensor<4x3xf32>, !core.buffer<2x3xf32>
    %c0 = arith.constant 0 : index
    chip.superstep "k" {{
      core.kernel "k" on [1, 1, 2] sizes [2, 3, 2] of [2, 3, 4] ins(%a, %b) outs(%c)
          at (%c0, %c0, %c0)
          along [-1, -1, -1] {MATMUL_ATTRS}
          : (!core.buffer<2x2xf32>, !core.buffer<2x3xf32>) -> !core.buffer<2x3xf32> {MUL_ADD}
    }} exchange {{
      core.all_reduce "sum" %c over [2] of [1, 1, 2] : !core.buffer<2x3xf32>
    }}
    %r = core.store %c layout <grid [1, 1, 2] axes [-, -] tile [2, 3]>
        : !core.buffer<2x3xf32> -> tensor<2x3xf32>
    chip.yield %r : tensor<2x3xf32>
  }}
  func.return %y : tensor<2x3xf32>
}}
"""


def test_all_reduce_of_a_split_reduction(chip: ChipSpec) -> None:
    a, b = rand(2, 4), rand(4, 3, seed=3)
    result = simulate(parse(SPLIT_K), chip, {"a": a, "b": b})
    np.testing.assert_allclose(result.outputs["c"], a @ b, rtol=1e-5, atol=1e-5)
    (k,) = result.report.ops
    # matmul 2x2x3: 4*12 + 514 + 113 + 173 = 848; all-reduce of 6 elements over R = 2:
    # (R-1)*ceil(6/2) = 3 elements = 12 B per phase -> 2 * ceil(3.36) = 8 cycles,
    # adds 0.5 * 3 + 300 -> 302 cycles, and one extra sync
    assert (k.compute_cycles, k.exchange_cycles, k.sync_cycles) == (848 + 302, 8, 2 * SYNC)
    assert k.exchanged_bytes == 24
    # 16 + 24 + 24 allocated, plus the 12-byte receive buffer
    assert k.sram_bytes_per_core == result.report.peak_sram_bytes_per_core == 76


# --------------------------------------------------------------------------------------------
# Relayout: 5x7 from 3x4 tiles on [2, 2] to blocks of 2 rows on [4] (see test_layouts).
# --------------------------------------------------------------------------------------------

RELAYOUT = """
func.func @main(%X: tensor<5x7xf32> {t10.name = "x"}) -> (tensor<5x7xf32> {t10.name = "y"}) {
  %y = chip.program "main" on 4 -> tensor<5x7xf32> {
    %s = core.alloc "r/src" on 4 : !core.buffer<3x4xf32>
    %d = core.alloc "r/dst" on 4 : !core.buffer<2x7xf32>
    core.load %X into %s layout <grid [2, 2] axes [d0, d1] tile [3, 4]>
        : tensor<5x7xf32>, !core.buffer<3x4xf32>
    chip.superstep "r" {
    } exchange {
      core.relayout "y/relayout" %s to %d of tensor<5x7xf32>
          layouts <grid [2, 2] axes [d0, d1] tile [3, 4]>
          -> <grid [4] axes [d0, -] tile [2, 7]> : !core.buffer<3x4xf32>, !core.buffer<2x7xf32>
    }
    core.free %s : !core.buffer<3x4xf32>
    %r = core.store %d layout <grid [4] axes [d0, -] tile [2, 7]>
        : !core.buffer<2x7xf32> -> tensor<5x7xf32>
    chip.yield %r : tensor<5x7xf32>
  }
  func.return %y : tensor<5x7xf32>
}
"""


def test_relayout_moves_data_and_counts_bytes(chip: ChipSpec) -> None:
    x = rand(5, 7)
    result = simulate(parse(RELAYOUT), chip, {"x": x})
    np.testing.assert_array_equal(result.outputs["y"], x)
    (r,) = result.report.ops
    # busiest core: dst 1 receives 11 elements = 44 B -> ceil(12.32) = 13 cycles
    assert (r.compute_cycles, r.exchange_cycles, r.sync_cycles) == (0, 13, SYNC)
    assert r.exchanged_bytes == 44
    assert r.cores_used == 4
    assert r.sram_bytes_per_core == 48 + 56


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def _alloc_program(shapes: list[tuple[str, str]], free_first: bool = False) -> str:
    lines = [
        f'    %{name} = core.alloc "{name}" on 4 : !core.buffer<{shape}xf32>'
        for name, shape in shapes
    ]
    if free_first:
        first, shape = shapes[0]
        lines.insert(1, f"    core.free %{first} : !core.buffer<{shape}xf32>")
    body = "\n".join(lines)
    return f"""
func.func @main() {{
  chip.program "main" on 4 -> {{
{body}
    chip.yield
  }}
  func.return
}}
"""


def test_sram_overflow_names_core_buffer_and_bytes(chip: ChipSpec) -> None:
    module = parse(_alloc_program([("big", "384x128"), ("more", "256x128")]))
    with pytest.raises(T10Error) as err:
        simulate(module, chip, {})
    assert str(err.value) == (
        "core 0: buffer 'more' (131072 bytes) does not fit in SRAM: "
        "196608 of 262144 bytes already in use; the largest buffers live there: "
        "'big' (196608 bytes)"
    )


def test_free_releases_sram(chip: ChipSpec) -> None:
    module = parse(_alloc_program([("big", "384x128"), ("more", "256x128")], free_first=True))
    report = simulate(module, chip, {}).report
    assert report.peak_sram_bytes_per_core == 196608
    assert report.total_cycles == 0 and report.ops == []


def test_missing_input(chip: ChipSpec) -> None:
    with pytest.raises(T10Error, match="missing input 'bias'"):
        simulate(parse(RELU_BIAS), chip, {"x": rand(6, 4)})


def test_wrong_input_shape(chip: ChipSpec) -> None:
    with pytest.raises(T10Error, match=r"input 'x' has shape \[4, 6\], expected \[6, 4\]"):
        simulate(parse(RELU_BIAS), chip, {"x": rand(4, 6), "bias": rand(6)})


def test_program_larger_than_chip() -> None:
    tiny = load_chip("test-16")
    module = parse(_alloc_program([("a", "4")]).replace("on 4 ->", "on 32 ->"))
    with pytest.raises(T10Error, match="32 cores but chip 'test-16' has 16"):
        simulate(module, tiny, {})


# --------------------------------------------------------------------------------------------
# The batched-matmul contraction against einsum, on index patterns kernels can have
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_loops", "b_loops", "out_loops", "spec"),
    [
        ((0, 2), (2, 1), (0, 1), "mk,kn->mn"),
        ((0, 2), (1, 2), (1, 0), "mk,nk->nm"),  # B transposed, output transposed
        ((3, 0, 2), (3, 2, 1), (3, 0, 1), "bmk,bkn->bmn"),  # batch dim d3
        ((None, 2), (2, 1), (0, 1), "xk,kn->xn"),  # A's row broadcast, m only in the output
        ((0, 2), (2, None), (0,), "mk,kx->m"),  # matrix-vector
    ],
)
def test_contract_matches_einsum(
    a_loops: tuple[int | None, ...],
    b_loops: tuple[int | None, ...],
    out_loops: tuple[int, ...],
    spec: str,
) -> None:
    from t10.sim.interpreter_core import contract

    sizes = (3, 4, 5, 2)  # m, n, k, b
    cores = 2

    def shape(loops: tuple[int | None, ...]) -> tuple[int, ...]:
        return (cores, *(1 if d is None else sizes[d] for d in loops))

    a, b = rand(*shape(a_loops)), rand(*shape(b_loops), seed=4)
    got = contract(a, a_loops, b, b_loops, out_loops, sizes)
    ins, out = spec.split("->")
    lhs, rhs = ins.split(",")
    want = np.broadcast_to(np.einsum(f"z{lhs},z{rhs}->z{out}", a, b), got.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------------
# Refusals: IR the simulator cannot give one meaning to is one T10Error naming the op
# --------------------------------------------------------------------------------------------


RELAYOUT_OP = "core.relayout \"y/relayout\" %s to %d"


def _refused(chip: ChipSpec, text: str, inputs: dict[str, np.ndarray]) -> str:
    """The message of the one T10Error the simulator raises (no other exception)."""
    with pytest.raises(T10Error) as info:
        simulate(parse_unverified(text), chip, inputs)
    return str(info.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (  # the source was never loaded
            ("    core.load %X into %s layout <grid [2, 2] axes [d0, d1] tile [3, 4]>\n"
             "        : tensor<5x7xf32>, !core.buffer<3x4xf32>\n", ""),
            "core.relayout of 'r/src' to 'r/dst': reads buffer 'r/src' on 4 cores, but only 0 "
            "were ever written (loaded, computed or received)",
        ),
        (  # the relayout reads 4x4 tiles from a buffer of 3x4 tiles (the verifier says so too)
            ("layouts <grid [2, 2] axes [d0, d1] tile [3, 4]>",
             "layouts <grid [2, 2] axes [d0, d1] tile [4, 4]>"),
            "the module to simulate does not verify: core.load: buffer 'r/src' is laid out as "
            "#rtensor.layout<grid [2, 2] axes [d0, d1] tile [3, 4]> here but as "
            "#rtensor.layout<grid [2, 2] axes [d0, d1] tile [4, 4]> by core.relayout",
        ),
        (  # a grid larger than the program (a core.coord with no core to stand for)
            ("    chip.superstep \"r\" {\n",
             "    %x = core.coord 2 of [1, 2, 3]\n    chip.superstep \"r\" {\n"),
            "the module to simulate does not verify: core.coord: "
            "grid [1, 2, 3] uses 6 cores but the enclosing chip.program runs on 4",
        ),
    ],
)
def test_refusals(chip: ChipSpec, edit: tuple[str, str], message: str) -> None:
    assert edit[0] in RELAYOUT
    assert _refused(chip, RELAYOUT.replace(*edit), {"x": rand(5, 7)}) == message


def test_two_exchanges_writing_one_buffer_in_one_superstep(chip: ChipSpec) -> None:
    """Valid IR (the verifiers cannot see it): which relayout arrives last is not defined."""
    relayout = RELAYOUT[RELAYOUT.index(RELAYOUT_OP):RELAYOUT.index("    }\n    core.free")]
    text = RELAYOUT.replace(relayout, relayout + "      " + relayout.lstrip())
    parse(text)
    assert _refused(chip, text, {"x": rand(5, 7)}) == (
        "core.relayout of 'r/src' to 'r/dst': core 0 receives into elements of buffer 'r/dst' "
        "that core.relayout of 'r/src' to 'r/dst' also writes in this superstep"
    )


def test_shifts_receiving_into_one_slot(chip: ChipSpec) -> None:
    """Cannon's shifts of A twice into the same slot in one superstep."""
    shift = (
        "core.shift %a ring 1 x 2 of [2, 2, 1] dim 1 size 4 from %off to %noff\n"
        "            : !core.buffer<2x8xf32>\n"
    )
    text = CANNON.replace(shift, shift + "        " + shift)
    parse(text)
    assert _refused(chip, text, {"a": rand(4, 8), "b": rand(8, 6)}) == (
        "core.shift of 'mm/in0': core 0 receives into elements of buffer 'mm/in0' that "
        "core.shift of 'mm/in0' also writes in this superstep"
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (  # a loop without its grid axis (an IndexError before)
            ('core.kernel "mm" on [2, 2, 1]', 'core.kernel "mm" on [2, 2]'),
            "core.kernel 'mm': grid [2, 2] needs one axis per loop (3), or axes to say where "
            "each loop runs",
        ),
        (  # 3 of the 4 cores: the shift's rings would not be the layout's
            ("core.shift %b ring 0 x 2 of [2, 2, 1]", "core.shift %b ring 0 x 2 of [2, 2, 3]"),
            "core.shift: grid [2, 2, 3] uses 12 cores but the enclosing chip.program runs on 4",
        ),
        (  # skew from a coordinate on another grid
            ("%x1 = core.coord 1 of [2, 2, 1]", "%x1 = core.coord 1 of [1, 4, 1]"),
            "core.kernel 'mm': an offset uses core.coord 1 of [1, 4, 1], a grid other than the "
            "op's [2, 2, 1]",
        ),
    ],
)
def test_mutated_cannon_is_refused(chip: ChipSpec, edit: tuple[str, str], message: str) -> None:
    assert edit[0] in CANNON
    got = _refused(chip, CANNON.replace(*edit), {"a": rand(4, 8), "b": rand(8, 6)})
    assert got == f"the module to simulate does not verify: {message}"


def test_coordinate_outside_a_program(chip: ChipSpec) -> None:
    text = """
func.func @main() {
  %x = core.coord 0 of [2, 2]
  func.return
}
"""
    assert _refused(chip, text, {}) == "core.coord must run inside a chip.program"


def test_partial_sums_without_their_all_reduce(chip: ChipSpec) -> None:
    """Split-k partial sums stored without the all-reduce: the two cores that share the
    output tile hold different copies, and no copy is the product."""
    reduce = '      core.all_reduce "sum" %c over [2] of [1, 1, 2] : !core.buffer<2x3xf32>\n'
    assert reduce in SPLIT_K
    text = SPLIT_K.replace(reduce, "")
    parse(text)
    a = np.arange(8, dtype=np.float32).reshape(2, 4)  # integers: every sum is exact
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    # core 0 holds a[0, :2] @ b[:2, 0] = 0*0 + 1*3 = 3, core 1 a[0, 2:] @ b[2:, 0] = 2*6 + 3*9
    assert _refused(chip, text, {"a": a, "b": b}) == (
        "core.store of 'k/out': cores 0 and 1, which share a tile, hold different values at "
        "[0, 0] in it (3.0 and 39.0); copies must agree (are partial sums missing their "
        "core.all_reduce?)"
    )


SHIFTED = RELAYOUT.replace(
    "-> <grid [4] axes [d0, -] tile [2, 7]> :",
    "-> <grid [4] axes [d0, -] tile [2, 7]> view affine_map<(d0, d1) -> (d0, d1 + 1)> as "
    "tensor<5x7xf32> guard affine_map<(d0, d1) -> (d1 + 1)> in [7] :",
)


def test_guarded_view_reads_inside_its_source(chip: ChipSpec) -> None:
    x = rand(5, 7)
    got = simulate(parse_unverified(SHIFTED), chip, {"x": x}).outputs["y"]
    np.testing.assert_array_equal(got, np.pad(x[:, 1:], ((0, 0), (0, 1))))


def test_guard_that_admits_reads_outside_the_source(chip: ChipSpec) -> None:
    """A guard that disagrees with the map (found by benchmarks/fuzz.py mutating a guard's
    shape): the element it admits has no source element to read."""
    text = SHIFTED.replace("in [7]", "in [1000000000]")
    assert _refused(chip, text, {"x": rand(5, 7)}) == (
        "core.relayout of 'r/src' to 'r/dst': its map reads index 7 of source dim 1 (size 7) "
        "at result index [0, 6], outside the source where its guard admits the element"
    )
