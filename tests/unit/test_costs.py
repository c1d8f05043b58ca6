"""Per-core cost functions: hand-computed values, monotonicity, zero cases."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from t10.common import costs
from t10.common.chip_spec import ChipSpec, ElementwiseCosts, load_chip
from t10.common.traffic import Traffic
from t10.errors import T10Error


@pytest.fixture(scope="module")
def ipu() -> ChipSpec:
    return load_chip("ipu-mk2")


@pytest.fixture(scope="module")
def lhs_rows(ipu: ChipSpec) -> ChipSpec:
    """The IPU MK2 with a kernel that always takes the left operand's rows as its rows."""
    return dataclasses.replace(
        ipu, matmul=dataclasses.replace(ipu.matmul, orientation="lhs-rows")
    )


# ---------------------------------------------------------------------------- matmul


@pytest.mark.parametrize(
    "batch, m, k, n, elem_bytes, expected",
    [
        # one block each way: 4·12·1·1·1 + 514·1·1 + 113·1 + 173
        (1, 6, 8, 16, 4, 48 + 514 + 113 + 173),
        # ⌈7/6⌉=2, ⌈9·4/32⌉=2, ⌈17/16⌉=2: 4·12·8 + 514·4 + 113·2 + 173 = 2839
        (1, 7, 9, 17, 4, 2839),
        (3, 7, 9, 17, 4, 3 * 2839),
        # fp16: 32/2 = 16 elements per k block: 2·12 + 514 + 113 + 173
        (1, 6, 16, 16, 2, 824),
        # fp16, k=17 -> 2 k blocks: 2·12·2 + 514·2 + 113 + 173
        (1, 6, 17, 16, 2, 48 + 1028 + 113 + 173),
        # 128³ fp32: rows 22, k blocks 16, cols 8
        (1, 128, 128, 128, 4, 4 * 12 * 22 * 16 * 8 + 514 * 16 * 8 + 113 * 8 + 173),
        # a single element still pays for full blocks
        (1, 1, 1, 1, 4, 48 + 514 + 113 + 173),
    ],
)
def test_matmul_hand_values(
    lhs_rows: ChipSpec, batch: int, m: int, k: int, n: int, elem_bytes: int, expected: int
) -> None:
    assert costs.matmul_cycles(lhs_rows, batch, m, k, n, elem_bytes) == expected


@pytest.mark.parametrize(
    "m, n, rows_cols",
    [
        (7, 17, (17, 7)),  # the larger side (17 > 16) is the rows
        (17, 7, (17, 7)),
        (100, 300, (300, 100)),
        (10, 16, (10, 16)),  # both <= 16: the smaller is the rows
        (16, 10, (10, 16)),
        (16, 16, (16, 16)),
    ],
)
def test_kernel_orientation_larger_rows(
    ipu: ChipSpec, m: int, n: int, rows_cols: tuple[int, int]
) -> None:
    assert ipu.matmul.orientation == "larger-rows"
    assert costs.kernel_rows_cols(ipu.matmul, m, n) == rows_cols


def test_matmul_cost_follows_orientation(ipu: ChipSpec, lhs_rows: ChipSpec) -> None:
    # 7x9 by 9x17, fp32, as the rows 17 x columns 7 product: ⌈17/6⌉=3, ⌈9·4/32⌉=2, ⌈7/16⌉=1:
    # 4·12·6 + 514·2 + 113 + 173 = 1602 (as written: 2839)
    assert costs.matmul_cycles(ipu, 1, 7, 9, 17, 4) == 1602
    assert costs.matmul_cycles(ipu, 1, 17, 9, 7, 4) == 1602
    assert costs.matmul_cycles(lhs_rows, 1, 7, 9, 17, 4) == 2839
    assert costs.matmul_cycles(lhs_rows, 1, 17, 9, 7, 4) == 1602


def test_matmul_128_cube_value(ipu: ChipSpec) -> None:
    assert costs.matmul_cycles(ipu, 1, 128, 128, 128, 4) == 202037


@pytest.mark.parametrize("shape", [(0, 6, 8, 16), (1, 0, 8, 16), (1, 6, 0, 16), (1, 6, 8, 0)])
def test_matmul_zero_size(ipu: ChipSpec, shape: tuple[int, int, int, int]) -> None:
    assert costs.matmul_cycles(ipu, *shape, 4) == 0


@pytest.mark.parametrize("dim", range(4))
def test_matmul_monotone(ipu: ChipSpec, dim: int) -> None:
    base = [2, 10, 20, 30]
    prev = 0
    for size in range(1, 80):
        shape = list(base)
        shape[dim] = size
        cyc = costs.matmul_cycles(ipu, *shape, 4)
        assert cyc >= prev
        prev = cyc


def test_matmul_constant_within_a_block(ipu: ChipSpec) -> None:
    # padding to blocks: m 1..6, k 1..8 (fp32), n 1..16 cost the same
    first = costs.matmul_cycles(ipu, 1, 1, 1, 1, 4)
    assert costs.matmul_cycles(ipu, 1, 6, 8, 16, 4) == first
    assert costs.matmul_cycles(ipu, 1, 7, 8, 16, 4) > first


def test_matmul_bad_args(ipu: ChipSpec) -> None:
    with pytest.raises(ValueError, match="m must be a non-negative integer"):
        costs.matmul_cycles(ipu, 1, -1, 8, 16, 4)
    with pytest.raises(ValueError, match="elem_bytes must be a positive integer"):
        costs.matmul_cycles(ipu, 1, 6, 8, 16, 0)


def test_matmul_uses_chip_constants(lhs_rows: ChipSpec) -> None:
    chip = dataclasses.replace(
        lhs_rows,
        matmul=dataclasses.replace(
            lhs_rows.matmul, inner_cycles=1, k_cycles=0, col_cycles=0, fixed_cycles=0
        ),
    )
    # 4·1·⌈12/6⌉·⌈8·4/32⌉·⌈32/16⌉ = 16
    assert costs.matmul_cycles(chip, 1, 12, 8, 32, 4) == 16


def test_matmul_fractional_constants_round_up(ipu: ChipSpec) -> None:
    chip = dataclasses.replace(
        ipu,
        matmul=dataclasses.replace(
            ipu.matmul, inner_cycles=0.1, k_cycles=0, col_cycles=0, fixed_cycles=0.5
        ),
    )
    # 2·(4·0.1·1·1·1 + 0.5) = 1.8 -> 2
    assert costs.matmul_cycles(chip, 2, 6, 8, 16, 4) == 2


# ---------------------------------------------------------------------------- element-wise


@pytest.mark.parametrize(
    "n, relu_like, expected",
    [
        (1000, False, 800),
        (1000, True, 700),
        (1, False, 301),  # 300.5 rounds up
        (1, True, 201),
        (3, False, 302),
        (0, False, 0),
        (0, True, 0),
    ],
)
def test_elementwise(ipu: ChipSpec, n: int, relu_like: bool, expected: int) -> None:
    assert costs.elementwise_cycles(ipu, n, relu_like) == expected


def test_elementwise_default_not_relu(ipu: ChipSpec) -> None:
    assert costs.elementwise_cycles(ipu, 10) == 305


def test_elementwise_monotone(ipu: ChipSpec) -> None:
    values = [costs.elementwise_cycles(ipu, n) for n in range(0, 200)]
    assert values == sorted(values)
    assert all(
        costs.elementwise_cycles(ipu, n, True) <= costs.elementwise_cycles(ipu, n)
        for n in range(200)
    )


def test_elementwise_uses_relu_constants(ipu: ChipSpec) -> None:
    chip = dataclasses.replace(ipu, relu=ElementwiseCosts(cycles_per_element=2, fixed_cycles=0))
    assert costs.elementwise_cycles(chip, 10, relu_like=True) == 20
    assert costs.elementwise_cycles(chip, 10, relu_like=False) == 305


# ---------------------------------------------------------------------------- exchange / sync


@pytest.mark.parametrize(
    "nbytes, expected", [(0, 0), (1, 1), (3, 1), (4, 2), (25, 7), (100, 28), (1000, 280)]
)
def test_exchange(ipu: ChipSpec, nbytes: int, expected: int) -> None:
    assert costs.exchange_cycles(ipu, Traffic.uniform(16, nbytes)) == expected


def test_exchange_is_exact_decimal(ipu: ChipSpec) -> None:
    # 0.1 * 30 is 3.0000000000000004 in binary floating point; the cost model says 3
    chip = dataclasses.replace(ipu, exchange_cycles_per_byte=0.1)
    assert costs.exchange_cycles(chip, Traffic.uniform(1, 30)) == 3
    # 0.28 * 100 is 28.000000000000004 in binary floating point
    assert costs.exchange_cycles(ipu, Traffic.uniform(1, 100)) == 28


def test_exchange_monotone(ipu: ChipSpec) -> None:
    values = [costs.exchange_cycles(ipu, Traffic.uniform(4, n)) for n in range(0, 500)]
    assert values == sorted(values)


def test_exchange_bad_args(ipu: ChipSpec) -> None:
    with pytest.raises(ValueError, match="nbytes"):
        Traffic.uniform(4, -1)


@given(
    sent=st.lists(st.floats(0, 1e6), min_size=1, max_size=40),
    received=st.lists(st.floats(0, 1e6), min_size=1, max_size=40),
)
def test_exchange_lasts_as_long_as_its_busiest_core(
    sent: list[float], received: list[float]
) -> None:
    # all-to-all: every core sends and receives at once, so the busiest direction of the
    # busiest core sets the time
    ipu = load_chip("ipu-mk2")
    traffic = Traffic(np.array(sent), np.array(received))
    busiest = math.ceil(max(*sent, *received) - 1e-9)
    assert traffic.busiest() == busiest
    assert costs.exchange_cycles(ipu, traffic) == costs.exchange_cycles(
        ipu, Traffic.uniform(len(sent), busiest)
    )


@given(cores=st.integers(1, 2000), nbytes=st.integers(0, 10**9))
def test_the_estimators_exchange_rate_is_the_exchange_cost(cores: int, nbytes: int) -> None:
    for chip in (load_chip("ipu-mk2"), load_chip("test-16")):
        assert costs.exchange_rate(chip)(nbytes) == costs.exchange_cycles(
            chip, Traffic.uniform(cores, nbytes)
        )


def test_traffic_adds_core_by_core() -> None:
    a = Traffic(np.array([1.0, 2.0]), np.array([0.5, 0.0]))
    b = Traffic.of_elements(np.array([3.0]), np.array([1.0]), 2)
    both = a + b
    assert both.sent.tolist() == [7.0, 2.0] and both.received.tolist() == [2.5, 0.0]


def test_sync(ipu: ChipSpec) -> None:
    assert costs.sync_cycles(ipu) == 118
    assert costs.sync_cycles(load_chip("test-16")) == 118


# ---------------------------------------------------------------------------- peak


def test_peak_flops(ipu: ChipSpec) -> None:
    assert costs.peak_flops_per_cycle(ipu, "fp32") == 32
    assert costs.peak_flops_per_cycle(ipu, "fp16") == 128
    assert costs.peak_flops_per_cycle(ipu, "f32") == 32
    assert costs.peak_flops_per_cycle(ipu) == 32
    # ≈ 250 TFLOP/s fp16 per chip (BRIEF §2)
    chip_fp16 = costs.peak_flops_per_cycle(ipu, "fp16") * ipu.cores * ipu.clock_hz
    assert 245e12 < chip_fp16 < 255e12


def test_peak_flops_unknown(ipu: ChipSpec) -> None:
    with pytest.raises(T10Error, match="precision 'bf16'"):
        costs.peak_flops_per_cycle(ipu, "bf16")
