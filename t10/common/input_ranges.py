"""Declared ranges of integer inputs as the IR records them: `t10.range = array<i64: lo, hi>`
on an argument of `@main` says its values lie in [lo, hi]. The ONNX frontend writes it when a
user declares the range (`--input-range`), and proves the integer arithmetic on that input
exact under it; so the simulator refuses any input outside it, and `t10 run` draws its random
inputs within it (docs/DESIGN.md, "Integer values").
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, i64

from t10.common.attr_names import INPUT_RANGE_ATTR
from t10.errors import T10Error

__all__ = ["check_in_range", "declared_range"]


def declared_range(name: str, attrs: DictionaryAttr | None) -> tuple[int, int] | None:
    """The range [lo, hi] an argument's attributes declare, or None; an attribute that is not
    `array<i64: lo, hi>` with lo <= hi is an error naming the argument."""
    attr = attrs.data.get(INPUT_RANGE_ATTR) if attrs is not None else None
    if attr is None:
        return None
    values = (
        attr.get_values()
        if isinstance(attr, DenseArrayBase) and attr.get_element_type() == i64
        else ()
    )
    if len(values) != 2 or values[0] > values[1]:
        raise T10Error(f"input '{name}': '{INPUT_RANGE_ATTR}' must be array<i64: lo, hi> with "
                       f"lo <= hi, got {attr}")
    lo, hi = values
    assert isinstance(lo, int) and isinstance(hi, int)
    return lo, hi


def check_in_range(name: str, value: NDArray[Any], declared: tuple[int, int]) -> None:
    """`value` (an integer input) lies in its `declared` range; else an error naming the input,
    a value outside and the range."""
    lo, hi = declared
    flat = np.ravel(value)
    outside = np.flatnonzero((flat < lo) | (flat > hi))
    if outside.size:
        bad = int(flat[outside[0]])
        raise T10Error(
            f"input '{name}' holds {bad}, outside [{lo}, {hi}], the range the model was "
            f"compiled for (--input-range {name}={lo}:{hi}); its integer arithmetic is exact "
            "only within it: recompile with a range that holds every input"
        )
