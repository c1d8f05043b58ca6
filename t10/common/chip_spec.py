"""Chip descriptions as data: the `ChipSpec` model and its JSON loader.

A chip file is a JSON object; its format and every field (with units) are documented in
`docs/chips.md`.  Built-in chips live in `t10/common/chips/<name>.json` and are read with
`importlib.resources`, so they work from an installed wheel as well as from a checkout.

`load_chip("ipu-mk2")` loads a built-in by name; `load_chip("my-chip.json")` loads a file.
Every problem with a chip file raises `T10Error` naming the file, the field and the problem.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

from t10.common.chip_fields import (
    MAX_CLOCK_HZ,
    MAX_COST,
    MAX_SRAM_BYTES,
    Reader,
    show,
)
from t10.common.offchip import OffChipMemory, parse_offchip
from t10.common.topologies import AllToAllTopology, MultiChipTopology, Topology, parse_topology
from t10.errors import T10Error

__all__ = [
    "ChipSpec",
    "ElementwiseCosts",
    "FlopsTable",
    "MatmulCosts",
    "builtin_chip_names",
    "chip_from_dict",
    "chip_parameter",
    "load_chip",
    "variant_changes",
    "vary_chip",
]

#: Precisions a chip may list under `flops_per_cycle_per_core`.
KNOWN_PRECISIONS: tuple[str, ...] = ("fp8", "fp16", "bf16", "fp32", "fp64")

#: Element-type spellings accepted as aliases of the precision keys.
PRECISION_ALIASES: dict[str, str] = {
    "f8": "fp8",
    "f16": "fp16",
    "f32": "fp32",
    "f64": "fp64",
}


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


class FlopsTable(Mapping[str, float]):
    """Read-only, hashable mapping precision (`"fp32"`, `"fp16"`, ...) -> FLOP/cycle/core."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, float]) -> None:
        self._items: dict[str, float] = dict(items)

    def __getitem__(self, key: str) -> float:
        return self._items[PRECISION_ALIASES.get(key, key)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        return PRECISION_ALIASES.get(key, key) in self._items

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._items.items())))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FlopsTable):
            return self._items == other._items
        if isinstance(other, Mapping):
            # isinstance cannot check the key and value types; dict equality needs none.
            return self._items == dict(cast("Mapping[object, object]", other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"FlopsTable({self._items!r})"


MatmulOrientation = Literal["lhs-rows", "larger-rows"]
"""`lhs-rows`: m is always the left operand's rows; `larger-rows`: m is the larger of the
two sides unless that is at most `col_block` (then the smaller) - the T10 authors' rule for the
IPU MK2."""
MATMUL_ORIENTATIONS: tuple[MatmulOrientation, ...] = ("lhs-rows", "larger-rows")


@dataclass(frozen=True)
class MatmulCosts:
    """Fitted per-core matmul cost constants (see `t10.common.costs.matmul_cycles`).

    cycles = b·(B·inner·⌈m/row_block⌉·⌈k·B/k_bytes_block⌉·⌈n/col_block⌉
                + k_cycles·⌈k·B/k_bytes_block⌉·⌈n/col_block⌉
                + col_cycles·⌈n/col_block⌉ + fixed_cycles)
    """

    row_block: int  # rows of the left operand per inner block (elements)
    k_bytes_block: int  # bytes of the reduction dimension per block
    col_block: int  # columns of the right operand per block (elements)
    inner_cycles: float  # cycles per (byte of element) × row-block × k-block × col-block
    k_cycles: float  # cycles per k-block × col-block
    col_cycles: float  # cycles per col-block
    fixed_cycles: float  # cycles per call (per batch entry)
    orientation: MatmulOrientation = "lhs-rows"
    """Which of the product's two sides the kernel takes as its rows m (the rest as its
    columns n): C = AB and Cᵀ = BᵀAᵀ are the same work, so a compiler may lay the tile out
    either way (`t10.common.costs.kernel_rows_cols`)."""


@dataclass(frozen=True)
class ElementwiseCosts:
    """Per-core cost of an element-wise kernel: `cycles_per_element·N + fixed_cycles`."""

    cycles_per_element: float
    fixed_cycles: float


@dataclass(frozen=True)
class ChipSpec:
    """One chip (or system of chips) as the planner and the simulator see it.

    Units: bytes, cycles, Hz, FLOP.  All per-core figures are for one core.
    """

    name: str
    cores: int
    sram_bytes_per_core: int
    clock_hz: float
    flops_per_cycle_per_core: FlopsTable
    exchange_cycles_per_byte: float
    sync_cycles: int
    matmul: MatmulCosts
    elementwise: ElementwiseCosts
    relu: ElementwiseCosts
    topology: Topology = field(default_factory=AllToAllTopology)
    offchip: OffChipMemory | None = None
    """Memory beside the cores that weights may be kept in and loaded from (None: none;
    `t10.common.offchip`)."""
    description: str = ""

    @property
    def total_sram_bytes(self) -> int:
        """SRAM of all cores together (bytes)."""
        return self.cores * self.sram_bytes_per_core

    @property
    def core_shape(self) -> tuple[int, ...]:
        """The shape the chip's cores form (`Topology.core_shape`)."""
        return self.topology.core_shape(self.cores)

    def one_chip(self) -> ChipSpec | None:
        """One chip of a multi-chip system, as a chip of its own (None for any other chip):
        its cores, its own topology, every other figure the system's. A program on it costs
        what the same program costs on the system's first chip."""
        if not isinstance(self.topology, MultiChipTopology):
            return None
        return replace(self, name=f"{self.name} (one chip)", cores=self.cores_per_chip,
                       topology=self.topology.inner)

    @property
    def cores_per_chip(self) -> int:
        """Cores of one chip (all cores unless the topology is multi-chip)."""
        if isinstance(self.topology, MultiChipTopology):
            return self.cores // self.topology.chips
        return self.cores

    def peak_flops_per_cycle(self, precision: str = "fp32") -> float:
        """Peak FLOP per cycle of one core at `precision` (`"fp32"`/`"f32"`, `"fp16"`, ...)."""
        key = PRECISION_ALIASES.get(precision, precision)
        if key not in self.flops_per_cycle_per_core:
            known = ", ".join(self.flops_per_cycle_per_core)
            raise T10Error(
                f"chip '{self.name}' has no peak figure for precision '{precision}'; "
                f"it lists: {known}"
            )
        return self.flops_per_cycle_per_core[key]

    def cycles_to_seconds(self, cycles: float) -> float:
        """Convert a cycle count to seconds at this chip's clock."""
        return cycles / self.clock_hz

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this chip (inverse of `chip_from_dict`)."""
        m, e, r = self.matmul, self.elementwise, self.relu
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        out.update(
            {
                "cores": self.cores,
                "sram_bytes_per_core": self.sram_bytes_per_core,
                "clock_hz": self.clock_hz,
                "flops_per_cycle_per_core": dict(self.flops_per_cycle_per_core),
                "exchange_cycles_per_byte": self.exchange_cycles_per_byte,
                "sync_cycles": self.sync_cycles,
                "matmul": {
                    "row_block": m.row_block,
                    "k_bytes_block": m.k_bytes_block,
                    "col_block": m.col_block,
                    "inner_cycles": m.inner_cycles,
                    "k_cycles": m.k_cycles,
                    "col_cycles": m.col_cycles,
                    "fixed_cycles": m.fixed_cycles,
                    "orientation": m.orientation,
                },
                "elementwise": {
                    "cycles_per_element": e.cycles_per_element,
                    "fixed_cycles": e.fixed_cycles,
                },
                "relu": {
                    "cycles_per_element": r.cycles_per_element,
                    "fixed_cycles": r.fixed_cycles,
                },
            }
        )
        out["topology"] = self.topology.to_json()
        if self.offchip is not None:
            out["offchip"] = self.offchip.to_json()
        return out


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _orientation(r: Reader) -> MatmulOrientation:
    if not r.has("orientation"):
        return "lhs-rows"
    value = r.string("orientation")
    for known in MATMUL_ORIENTATIONS:
        if value == known:
            return known
    r.fail("orientation", f"must be one of {', '.join(MATMUL_ORIENTATIONS)}, got {show(value)}")


def _elementwise(r: Reader) -> ElementwiseCosts:
    r.allow("cycles_per_element", "fixed_cycles")
    return ElementwiseCosts(
        cycles_per_element=r.number("cycles_per_element"),
        fixed_cycles=r.number("fixed_cycles", allow_zero=True),
    )


_TOP_LEVEL_FIELDS = (
    "name",
    "description",
    "cores",
    "sram_bytes_per_core",
    "clock_hz",
    "flops_per_cycle_per_core",
    "exchange_cycles_per_byte",
    "sync_cycles",
    "matmul",
    "elementwise",
    "relu",
    "topology",
    "offchip",
)
_MATMUL_FIELDS = (
    "row_block",
    "k_bytes_block",
    "col_block",
    "inner_cycles",
    "k_cycles",
    "col_cycles",
    "fixed_cycles",
    "orientation",
)


def chip_from_dict(obj: object, source: str = "<dict>", kind: str = "chip file") -> ChipSpec:
    """Validate a decoded chip JSON object and build its `ChipSpec`.

    `source` names the file (`kind`: or what else it is) in error messages.
    """
    r = Reader(source, obj, kind=kind)
    r.allow(*_TOP_LEVEL_FIELDS)
    name = r.string("name")
    description = r.string("description") if r.has("description") else ""
    cores = r.integer("cores")
    sram = r.integer("sram_bytes_per_core", high=MAX_SRAM_BYTES)
    clock = r.number("clock_hz", high=MAX_CLOCK_HZ)

    fr = r.sub("flops_per_cycle_per_core")
    flops: dict[str, float] = {}
    for key in fr.obj:
        if key not in KNOWN_PRECISIONS:
            fr.fail(key, f"is not a known precision; use one of {', '.join(KNOWN_PRECISIONS)}")
        flops[key] = fr.number(key)
    if "fp32" not in flops:
        fr.fail("fp32", "is missing (every chip needs an fp32 peak)")

    exchange = r.number("exchange_cycles_per_byte")
    sync = r.integer("sync_cycles", high=int(MAX_COST), allow_zero=True)

    mr = r.sub("matmul")
    mr.allow(*_MATMUL_FIELDS)
    matmul = MatmulCosts(
        row_block=mr.integer("row_block"),
        k_bytes_block=mr.integer("k_bytes_block"),
        col_block=mr.integer("col_block"),
        inner_cycles=mr.number("inner_cycles", allow_zero=True),
        k_cycles=mr.number("k_cycles", allow_zero=True),
        col_cycles=mr.number("col_cycles", allow_zero=True),
        fixed_cycles=mr.number("fixed_cycles", allow_zero=True),
        orientation=_orientation(mr),
    )
    elementwise = _elementwise(r.sub("elementwise"))
    relu = _elementwise(r.sub("relu"))
    topology = parse_topology(r, cores)
    return ChipSpec(
        name=name,
        cores=cores,
        sram_bytes_per_core=sram,
        clock_hz=clock,
        flops_per_cycle_per_core=FlopsTable(flops),
        exchange_cycles_per_byte=exchange,
        sync_cycles=sync,
        matmul=matmul,
        elementwise=elementwise,
        relu=relu,
        topology=topology,
        offchip=parse_offchip(r),
        description=description,
    )


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def _chips_dir() -> Any:
    return resources.files("t10.common").joinpath("chips")


def builtin_chip_names() -> list[str]:
    """Names of the chips shipped in `t10/common/chips/` (sorted)."""
    return sorted(
        p.name[: -len(".json")]
        for p in _chips_dir().iterdir()
        if p.name.endswith(".json") and p.is_file()
    )


def _parse_text(text: str, source: str) -> ChipSpec:
    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        """An object whose keys are each given once (json keeps the last of a repeated one)."""
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                shown = json.dumps(key)[1:-1]  # control characters escaped
                shown = shown if len(shown) <= 60 else shown[:60] + "..."
                raise T10Error(f"chip file '{source}': key '{shown}' is given twice in one "
                               "object; give each key once")
            obj[key] = value
        return obj

    try:
        obj = json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as e:
        raise T10Error(
            f"chip file '{source}': not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}"
        ) from None
    except (ValueError, RecursionError) as e:  # a 4,300-digit integer, nesting too deep
        raise T10Error(f"chip file '{source}': not usable JSON: {e}") from None
    return chip_from_dict(obj, source)


def _parameters(obj: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    """The dotted paths of the leaves of a chip's JSON object `obj` (not its name)."""
    for key, value in obj.items():
        if isinstance(value, Mapping):
            yield from _parameters(cast("Mapping[str, Any]", value), f"{prefix}{key}.")
        elif f"{prefix}{key}" not in ("name", "description"):
            yield f"{prefix}{key}"


def chip_parameter(chip: ChipSpec, path: str) -> Any:
    """The value of the parameter at the dotted `path` of `chip`'s JSON object
    (`topology.rows`), or a `T10Error` naming the parameters there are."""
    obj = chip.to_dict()
    if path not in _parameters(obj):
        raise T10Error(f"chip '{chip.name}' has no parameter '{path}': choose from "
                       f"{', '.join(_parameters(obj))}")
    value: Any = obj
    for key in path.split("."):
        value = value[key]
    return value


def vary_chip(chip: ChipSpec, path: str, value: str, name: str | None = None) -> ChipSpec:
    """`chip` with the parameter at the dotted `path` set to `value` (JSON text; a string
    parameter's value as it is), named `name` (default `chip[path=value]`): its JSON object
    edited and read back by `chip_from_dict`, so the variant is checked as a chip file is."""
    name = name or f"{chip.name}[{path}={value}]"
    old = chip_parameter(chip, path)
    new: Any = value
    if not isinstance(old, str):
        try:
            new = json.loads(value)
        except ValueError:
            new = None
        if not isinstance(new, int | float | bool) or isinstance(new, bool) != isinstance(
                old, bool):
            kind = "true or false" if isinstance(old, bool) else "a number"
            raise T10Error(f"chip variant '{name}': the value '{value}' of {path} is not "
                           f"{kind}")
    obj = chip.to_dict()
    where: dict[str, Any] = obj
    *inner, last = path.split(".")
    for key in inner:
        where = where[key]
    where[last] = new
    obj["name"] = name
    return chip_from_dict(obj, name, "chip variant")


def variant_changes(name: str) -> tuple[str, list[tuple[str, str]]]:
    """The base chip and the (path, value) changes of a variant's name
    `BASE[PATH=VALUE]...` (no changes: not a variant's name)."""
    changes: list[tuple[str, str]] = []
    while name.endswith("]") and "[" in name:
        base, _, change = name[:-1].rpartition("[")
        path, eq, value = change.partition("=")
        if not (base and eq and path and value):
            raise T10Error(f"chip variant '{name}': expected BASE[PARAMETER=VALUE], e.g. "
                           "ipu-mk2[sram_bytes_per_core=262144]")
        changes.insert(0, (path, value))
        name = base
    return name, changes


def load_chip(name_or_path: str | Path) -> ChipSpec:
    """Load a chip: a built-in name (see `builtin_chip_names()`), a path to a JSON file, or a
    variant of either, `BASE[PATH=VALUE]` (`vary_chip`)."""
    arg = str(name_or_path)
    if not isinstance(name_or_path, Path) and arg in builtin_chip_names():
        text = _chips_dir().joinpath(f"{arg}.json").read_text(encoding="utf-8")
        return _parse_text(text, f"t10/common/chips/{arg}.json")
    path = Path(arg)
    looks_like_path = (
        isinstance(name_or_path, Path) or arg.endswith(".json") or "/" in arg or "\\" in arg
    )
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise T10Error(f"chip file '{arg}': cannot be read: {e}") from None
        return _parse_text(text, arg)
    base, changes = variant_changes(arg) if not isinstance(name_or_path, Path) else (arg, [])
    if changes:
        chip = load_chip(base)
        for i, (key, value) in enumerate(changes):
            done = base + "".join(f"[{k}={v}]" for k, v in changes[: i + 1])
            chip = vary_chip(chip, key, value, done)
        return chip
    if path.exists():
        raise T10Error(f"chip file '{arg}' is not a file")
    if looks_like_path:
        raise T10Error(
            f"chip file '{arg}' does not exist; "
            f"built-in chips are: {', '.join(builtin_chip_names())}"
        )
    raise T10Error(
        f"unknown chip '{arg}': built-in chips are {', '.join(builtin_chip_names())}; "
        f"a path to a .json chip file works too (format: docs/chips.md)"
    )
