"""Small parse/print helpers shared by the dialects' custom attribute syntax."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    StringAttr,
    i64,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

NONE = -1
"""Stored for an absent entry (printed `-`)."""


def ints(values: Iterable[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr(IntAttr(v) for v in values)


def values(attr: ArrayAttr[IntAttr]) -> tuple[int, ...]:
    return tuple(a.data for a in attr.data)


def optional_values(attr: ArrayAttr[IntAttr]) -> tuple[int | None, ...]:
    return tuple(None if a.data == NONE else a.data for a in attr.data)


def print_int_list(printer: Printer, items: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(i) for i in items) + "]")


def print_dim_list(printer: Printer, items: Sequence[int | None]) -> None:
    """Loop dims print as `d<i>`, absent ones as `-`."""
    printer.print_string("[" + ", ".join("-" if i is None else f"d{i}" for i in items) + "]")


def parse_int_list(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)


def parse_dim(parser: AttrParser) -> int:
    ident = parser.parse_identifier()
    if not (ident.startswith("d") and ident[1:].isdigit()):
        parser.raise_error(f"expected a loop dim such as 'd0', got '{ident}'")
    return int(ident[1:])


def parse_dim_list(parser: AttrParser) -> list[int | None]:
    def item() -> int | None:
        if parser.parse_optional_punctuation("-") is not None:
            return None
        return parse_dim(parser)

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, item)


def encode_optional(items: Sequence[int | None]) -> ArrayAttr[IntAttr]:
    return ints(NONE if i is None else i for i in items)


def int_array(items: Sequence[int]) -> DenseArrayBase[I64]:
    """An i64 array property (printed `[1, 2]` by declarative formats)."""
    return DenseArrayBase.from_list(i64, list(items))


def ints_of(attr: DenseArrayBase[I64]) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())


def int_prop(value: int) -> IntegerAttr[I64]:
    return IntegerAttr(value, i64)


COMBINERS = ("sum", "max", "min")
"""How an all-reduce combines partial tiles."""


def check_combiner(attr: StringAttr, what: str) -> None:
    if attr.data not in COMBINERS:
        raise VerifyException(
            f"{what}: combiner '{attr.data}' is not one of {', '.join(COMBINERS)}"
        )
