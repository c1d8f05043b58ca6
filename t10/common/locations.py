"""Where each op came from: the ONNX node's name as the op's MLIR location, through every level.

The frontend locates every op it makes for a node at `loc("<node name>")` (`node_location`).
Every rewrite pattern of our passes runs `Located`: the ops it inserts while rewriting an op
take that op's location (unless they have one), and a `T10Error` it raises names the node,
so an error in any lowering says which ONNX node it is about. `--print-debuginfo` (t10-opt,
xdsl-opt) prints the locations.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    FusedLoc,
    LocationAttr,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import VerifyException

from t10.errors import T10Error


def node_location(name: str) -> NameLoc:
    """The location of the ops made for the ONNX node `name`."""
    return NameLoc(StringAttr(name), NoneAttr())


def onnx_nodes(op: Operation) -> list[str]:
    """The names of the ONNX nodes `op` was made for (several where ops were fused)."""
    return [n.desc.data for n in _node_locations(op.location)]


def where_from(op: Operation) -> str | None:
    """`ONNX node 'a'` or `ONNX nodes 'a', 'b'`: where `op` came from, if it is known."""
    nodes = onnx_nodes(op)
    if not nodes:
        return None
    return f"ONNX node{'s' if len(nodes) > 1 else ''} " + ", ".join(f"'{n}'" for n in nodes)


def locate(ops: list[Operation], name: str) -> None:
    """Locate `ops` and every op nested in them at the ONNX node `name`."""
    location = node_location(name)
    for op in ops:
        for inner in op.walk():
            inner.location = location


def _node_locations(location: Attribute) -> tuple[NameLoc, ...]:
    found = cast(ArrayAttr[Attribute], location.locations).data if isinstance(
        location, FusedLoc
    ) else (location,)
    return tuple(n for n in found if isinstance(n, NameLoc))


def fused_location(locations: Iterable[Attribute]) -> LocationAttr:
    """One location for what was made from ops at `locations`: their node locations, the
    one or all of them fused (`loc(fused["a", "b"])`), or unknown."""
    held = NodeNames()
    for location in locations:
        held = held.then(NodeNames.at(location))
    return held.location()


@dataclass
class NodeNames:
    """The node locations of an op made by merging others, in order, each once: what
    `fused_location` gives, built up merge by merge. `then` costs the smaller of the two
    (a long chain of merges stays linear)."""

    order: deque[NameLoc] = field(default_factory=deque[NameLoc])
    seen: set[NameLoc] = field(default_factory=set[NameLoc])

    @staticmethod
    def at(location: Attribute) -> NodeNames:
        return NodeNames.of(_node_locations(location))

    @staticmethod
    def of(names: Iterable[NameLoc]) -> NodeNames:
        held = NodeNames()
        for name in names:
            if name not in held.seen:
                held.order.append(name)
                held.seen.add(name)
        return held

    def then(self, other: NodeNames) -> NodeNames:
        """These names, then those of `other` not among them (both are used up)."""
        if len(self.order) >= len(other.order):
            for name in other.order:
                if name not in self.seen:
                    self.order.append(name)
                    self.seen.add(name)
            return self
        if self.seen.isdisjoint(other.seen):
            other.order.extendleft(reversed(self.order))
            other.seen |= self.seen
            return other
        return NodeNames.of([*self.order, *other.order])

    def location(self) -> LocationAttr:
        """The one node location, all of them fused, or unknown."""
        if not self.order:
            return UnknownLoc()
        return self.order[0] if len(self.order) == 1 else FusedLoc(list(self.order), NoneAttr())


def locate_by_contents(ops: Iterable[Operation]) -> None:
    """Locate each of `ops` that has no location (a superstep grouping the ops of one or
    more operators) at the locations of the ops it holds (`fused_location`)."""
    for op in ops:
        if isinstance(op.location, UnknownLoc):
            op.location = fused_location(inner.location for inner in op.walk())


def failing_op(root: Operation, error: VerifyException) -> Operation | None:
    """The op under `root` whose own verifier raises `error`'s message (xDSL's exception
    names no op), visited innermost first as `Operation.verify` visits them."""
    for op in root.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            if str(e) == str(error):
                return op
    return None


def naming_node(error: T10Error, op: Operation) -> T10Error:
    """`error`, its message prefixed by the ONNX nodes `op` was made for (`where_from`) when
    the message names none of them already."""
    where, message = where_from(op), str(error)
    if where is not None and not any(f"'{n}" in message for n in onnx_nodes(op)):
        error.args = (f"{where}: {message}",)
    return error


@dataclass
class Located(RewritePattern):
    """`pattern`, with the ops it inserts while rewriting an op located where that op is, and
    its errors naming that op's ONNX node (`naming_node`)."""

    pattern: RewritePattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        def inherit(new: Operation) -> None:
            for inner in new.walk():
                if isinstance(inner.location, UnknownLoc):
                    inner.location = op.location

        handlers = rewriter.operation_insertion_handler
        handlers.append(inherit)
        try:
            self.pattern.match_and_rewrite(op, rewriter)
        except T10Error as error:
            raise naming_node(error, op) from None
        finally:
            handlers.remove(inherit)
