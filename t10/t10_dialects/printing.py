"""Printing IR without its weights: dense constants above a size print as MLIR prints them
with `--mlir-elide-elementsattrs-if-larger`, `dense_resource<__elided__> : type`.

An elided file parses back as the same program with its constants' values unknown: the
plan search and the lowerings need only their types, timing-only simulation runs it, and a
simulation with values stops at the first elided constant (`t10.sim.interpreter_arith`).
"""

from __future__ import annotations

from typing import IO, Any, cast

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

ELIDED = "__elided__"
"""The resource handle of an elided dense constant (MLIR's)."""

ELIDE_LARGER_THAN = 16
"""Dense constants with more elements than this are elided unless asked for (a splat is one
element)."""


class ElidingPrinter(Printer):
    """A `Printer` that prints dense elements attributes of more than `limit` elements as
    `dense_resource<__elided__>` (None: prints every one in full); `locations`: each op's
    location too (`loc(...)`, as `--print-debuginfo`)."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        limit: int | None = ELIDE_LARGER_THAN,
        locations: bool = False,
    ):
        super().__init__(stream=stream, print_debuginfo=locations)
        self.limit = limit

    def print_attribute(self, attribute: Attribute) -> None:
        printed: Attribute = attribute
        if self.limit is not None and isinstance(attribute, DenseIntOrFPElementsAttr):
            dense = cast(DenseIntOrFPElementsAttr[Any], attribute)
            dtype: Attribute = dense.type
            if len(dense) > self.limit and isinstance(dtype, TensorType):
                printed = DenseResourceAttr.from_params(ELIDED, dtype)
        super().print_attribute(printed)


def print_ir(
    op: Operation, stream: IO[str], weights: bool = False, locations: bool = False
) -> None:
    """Print `op` to `stream`, eliding dense constants of more than `ELIDE_LARGER_THAN`
    elements unless `weights`, with each op's location if `locations`."""
    ElidingPrinter(stream, None if weights else ELIDE_LARGER_THAN, locations).print_op(op)
    stream.write("\n")
