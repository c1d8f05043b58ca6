"""Whether given inputs are exactly those a model takes, by name, shape and dtype: one rule
for arrays (the simulator) and for an inputs file's headers before its arrays are read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from t10.errors import T10Error

__all__ = ["SHOWN_NAMES", "check_inputs_match"]

Signature = tuple[tuple[int, ...], np.dtype[Any]]
"""An input's shape and dtype."""

SHOWN_NAMES = 5
"""How many unknown input names an error lists (then their count)."""


def check_inputs_match(
    expected: Sequence[tuple[str, tuple[int, ...], np.dtype[Any]]],
    given: Mapping[str, Signature],
) -> None:
    """Refuse `given` inputs (name: shape, dtype) unless they are exactly the `expected`
    ones (name, shape, dtype): every input by name, none else, each of its shape and dtype
    (nothing is cast). One error lists every problem and what the model takes."""
    names = {name for name, _, _ in expected}
    problems = [f"missing input '{name}'" for name, _, _ in expected if name not in given]
    unknown = [name for name in given if name not in names]
    if unknown:
        problems.append(_unknown(unknown))
    cast = ""
    for name, shape, dtype in expected:
        if name not in given:
            continue
        got_shape, got_dtype = given[name]
        if got_dtype != dtype:
            problems.append(f"input '{name}' has dtype {got_dtype}, expected {dtype}")
            cast = "; nothing is cast: convert with array.astype(DTYPE) if that is exact"
        if tuple(got_shape) != tuple(shape):
            problems.append(f"input '{name}' has shape {list(got_shape)}, expected "
                            f"{list(shape)}")
    if problems:
        takes = ", ".join(f"{name} {dtype} {list(shape)}" for name, shape, dtype in expected)
        raise T10Error(f"the inputs do not match the model: {'; '.join(problems)} (the model "
                       f"takes {takes}{cast})")


def _unknown(names: Sequence[str]) -> str:
    """`unknown input 'x'`, or the first names of many and how many there are."""
    if len(names) == 1:
        return f"unknown input '{names[0]}'"
    shown = ", ".join(f"'{name}'" for name in names[:SHOWN_NAMES])
    more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
    return f"unknown inputs {shown}{more}"
