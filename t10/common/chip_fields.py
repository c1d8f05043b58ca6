"""Typed, strict reading of a chip file's JSON objects (`t10.common.chip_spec` and the
topologies of `t10.common.topologies` read through it): every problem raises `T10Error`
naming the file, the field and the problem."""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from t10.errors import T10Error

__all__ = ["MAX_CLOCK_HZ", "MAX_COST", "MAX_COUNT", "MAX_SRAM_BYTES", "Reader", "show"]

#: Upper bounds of the figures a chip file may give (the lower bounds are 1 for counts, 0 or
#: "> 0" for costs, per field in docs/chips.md). Far beyond any real chip (an IPU-POD64 has
#: 94,208 cores), they keep a mistyped figure from exhausting memory or overflowing the
#: 64-bit integers of the IR instead of failing with the field's name.
MAX_COUNT = 2**20
"""cores, matmul blocks (elements or bytes), mesh rows and columns, chips."""
MAX_SRAM_BYTES = 2**40
MAX_CLOCK_HZ = 1e12
MAX_COST = 1e9
"""Cycles of any cost constant, FLOP per cycle."""


class Reader:
    """Typed access to one JSON object, raising errors that name the file and the field."""

    def __init__(self, source: str, obj: object, prefix: str = "",
                 kind: str = "chip file") -> None:
        self.source = source
        self.prefix = prefix
        self.kind = kind
        """What `source` names in errors: a chip file, or a chip variant (`vary_chip`)."""
        if not isinstance(obj, dict):
            what = f"field '{prefix[:-1]}'" if prefix else "the top level"
            self.fail_raw(f"{what} must be a JSON object, got {show(obj)}")
        self.obj: dict[str, Any] = obj

    def fail_raw(self, problem: str) -> NoReturn:
        raise T10Error(f"{self.kind} '{self.source}': {problem}")

    def fail(self, key: str, problem: str) -> NoReturn:
        self.fail_raw(f"field '{self.prefix}{key}' {problem}")

    def _get(self, key: str) -> Any:
        if key not in self.obj:
            self.fail(key, "is missing")
        return self.obj[key]

    def has(self, key: str) -> bool:
        return key in self.obj

    def string(self, key: str) -> str:
        v = self._get(key)
        if not isinstance(v, str) or not v.strip():
            self.fail(key, f"must be a non-empty string, got {show(v)}")
        return v

    def integer(self, key: str, *, high: int = MAX_COUNT, allow_zero: bool = False) -> int:
        """A JSON integer (not a bool, not 16.0) from 1 (0 with `allow_zero`) to `high`."""
        v = self._get(key)
        low = 0 if allow_zero else 1
        if not (isinstance(v, int) and not isinstance(v, bool) and low <= v <= high):
            self.fail(key, f"must be an integer from {low} to {high}, got {show(v)}")
        return v

    def number(self, key: str, *, high: float = MAX_COST, allow_zero: bool = False) -> float:
        """A finite JSON number > 0 (>= 0 with `allow_zero`) and <= `high`."""
        v = self._get(key)
        ok = (
            isinstance(v, int | float)
            and not isinstance(v, bool)
            and (isinstance(v, int) or math.isfinite(v))
            and (v > 0 or (allow_zero and v == 0))
            and v <= high
        )
        if not ok:
            low = ">= 0" if allow_zero else "> 0"
            self.fail(key, f"must be a number {low} and <= {high:g}, got {show(v)}")
        return v

    def boolean(self, key: str) -> bool:
        v = self._get(key)
        if not isinstance(v, bool):
            self.fail(key, f"must be true or false, got {show(v)}")
        return v

    def sub(self, key: str) -> Reader:
        return Reader(self.source, self._get(key), f"{self.prefix}{key}.", self.kind)

    def allow(self, *keys: str) -> None:
        """Reject any key not in `keys` (checked first, so a typo is not reported as missing)."""
        for k in self.obj:
            if k not in keys:
                self.fail(k, f"is unknown; allowed fields here: {', '.join(keys)}")


def show(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, int) and abs(v) >= 10**16:
        return f"an integer of {len(str(abs(v)))} digits"
    return json.dumps(v) if isinstance(v, str) else repr(v)
