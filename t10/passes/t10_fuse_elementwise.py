"""t10-fuse-elementwise: element-wise producers fuse into the generics that read them.

An element-wise `linalg.generic` P whose result only one generic C reads (an element-wise op
or a reduction, not a contraction) and reads without broadcasting (C's map of P's result is a
permutation of C's loops, so nothing is recomputed) is inlined into C: C reads P's inputs
through P's maps composed with C's map, and C's body computes P's body first. Chains collapse
to one operator:

```
  Div → Erf → Add → Mul → Mul   (an exported GELU: five operators, four layout transitions)
  ⇒ one generic "Div+Erf+Add+Mul+Mul" whose body is the whole chain
```

Generics are visited in program order, and each fuses its first fusable input again and again
until none is left (a producer is complete when its reader is visited). The fusions are first
planned on plain lists (the fused op's inputs in order, its members in body order), so a chain
of N ops costs about N list steps, and each fused op is then built once: its members' body ops
are moved into one block (nothing is cloned).

The fused operator is planned, lowered and simulated like any other: one kernel per core,
no exchange or sync between the former operators. A generic that already carries a plan
(`t10.plan`) is left alone, so pinned plans keep their meaning. Run it before the plan search
(`t10-compile` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Block, BlockArgument, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from t10.common.attr_names import NAME_ATTR, PLAN_ATTR
from t10.common.locations import NodeNames, naming_node
from t10.common.tensor_expr import is_mul_add, loop_accesses, op_name
from t10.errors import T10Error

Key = tuple[SSAValue, AffineMapAttr]
"""An input of a fused op: the value, read through the map from the op's loops."""


@dataclass
class _Group:
    """A generic and the producers planned to fuse into it: the fused op's inputs (`keys`, in
    the root's loop space, in order; `seen` their set, None while they may repeat), its
    members in body order (producers first), its name and node locations."""

    root: GenericOp
    keys: list[Key]
    seen: set[Key] | None
    members: list[GenericOp]
    name: str
    names: NodeNames

    @staticmethod
    def of(op: GenericOp) -> _Group:
        maps = op.indexing_maps.data
        keys = [(v, maps[i]) for i, v in enumerate(op.inputs)]
        return _Group(op, keys, None, [op], op_name(op), NodeNames.at(op.location))


@dataclass
class _Fusion:
    """The fusions of one module, planned (`visit` each generic in program order), then made
    (`make`)."""

    groups: dict[GenericOp, _Group] = field(default_factory=dict)
    """The groups of more than one member, by root."""
    parent: dict[GenericOp, tuple[GenericOp, AffineMap | None]] = field(default_factory=dict)
    """Each fused member: the member that reads its result, and through which map (None: the
    identity)."""
    dropped: dict[SSAValue, int] = field(default_factory=dict)
    """Uses of a value that fusions merged away (two reads of it by one fused op)."""
    made: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """For each made group's root result, the result of the generic that replaced it (a
    later group's planned inputs name the former)."""

    def uses(self, value: SSAValue) -> int:
        return sum(1 for _ in value.uses) - self.dropped.get(value, 0)

    def fusable_producer(self, value: SSAValue) -> bool:
        """An unplanned element-wise generic (with the producers fused into it) with an
        identity output map, read only here, whose body does not read its output's initial
        value."""
        op = value.owner
        return (
            isinstance(op, GenericOp)
            and op not in self.parent
            and PLAN_ATTR not in op.attributes
            and all(it.data == IteratorType.PARALLEL for it in op.iterator_types.data)
            and op.indexing_maps.data[-1].data == AffineMap.identity(len(op.iterator_types))
            and not op.body.block.args[-1].uses
            and self.uses(value) == 1
        )

    def visit(self, op: GenericOp) -> None:
        """Fuses into `op` its first fusable input while there is one: an element-wise
        producer read at distinct loop dims with every loop of size > 1 taking part, so each
        produced element is computed once (`op` neither planned nor a contraction)."""
        if PLAN_ATTR in op.attributes:
            return
        parallel = [it.data == IteratorType.PARALLEL for it in op.iterator_types.data]
        if not all(parallel) and len(op.inputs) == 2 and is_mul_add(op.body.block):
            return
        loop_sizes, _, _ = loop_accesses(
            f"operator '{op_name(op)}'", op.indexing_maps, len(parallel),
            tuple(v.type for v in op.inputs), op.outputs[0].type,
        )
        needed = {d for d, size in enumerate(loop_sizes) if size > 1}
        group = _Group.of(op)
        fresh = len(group.keys)  # the inputs that may be fusable (the others were checked)
        while True:
            index = next(
                (i for i, (v, m) in enumerate(group.keys[:fresh])
                 if _reads_once(m.data, needed) and self.fusable_producer(v)),
                None,
            )
            if index is None:
                break
            fresh = self.merge(group, index)
        if len(group.members) > 1:
            self.groups[op] = group

    def merge(self, group: _Group, index: int) -> int:
        """Plans the producer of `group`'s input `index` into it, as one rewrite would fuse
        it: the group's other inputs, then the producer's not among them (read through their
        maps composed with the group's), its body first. Returns how many of the new inputs
        may be fusable: the group's own, unless the producer is read through another map."""
        value, read_attr = group.keys[index]
        producer = value.owner
        assert isinstance(producer, GenericOp)
        taken = self.groups.pop(producer, None) or _Group.of(producer)
        read = read_attr.data
        same = read == AffineMap.identity(read.num_dims)
        self.parent[producer] = (group.root, None if same else read)
        mine = group.keys[:index] + group.keys[index + 1:]
        if group.seen is None:
            mine, seen = self.unique(mine)
        else:
            seen = group.seen
            seen.discard(group.keys[index])
        theirs = taken.keys if same else [
            (v, AffineMapAttr(m.data.compose(read))) for v, m in taken.keys
        ]
        if taken.seen is None or not same:
            theirs, their_seen = self.unique(theirs)
        else:
            their_seen = taken.seen
        # the two lists joined without repeats, hashing the shorter one's keys only
        if len(mine) <= len(theirs):
            both = [k for k in mine if k in their_seen]
            their_seen.update(mine)
            seen = their_seen
        else:
            both = [k for k in theirs if k in seen]
            seen.update(theirs)
        for v, _ in both:
            self.dropped[v] = self.dropped.get(v, 0) + 1
        if both:
            repeated = set(both)
            theirs = [k for k in theirs if k not in repeated]
        group.keys, group.seen = mine + theirs, seen
        group.members = taken.members + group.members
        group.name = f"{taken.name}+{group.name}"
        group.names = taken.names.then(group.names)
        return len(mine) if same else len(group.keys)

    def unique(self, keys: list[Key]) -> tuple[list[Key], set[Key]]:
        """`keys` without repeats (first kept; each repeat is a use merged away)."""
        seen: set[Key] = set()
        kept = []
        for key in keys:
            if key in seen:
                self.dropped[key[0]] = self.dropped.get(key[0], 0) + 1
            else:
                seen.add(key)
                kept.append(key)
        return kept, seen

    def to_root(
        self, member: GenericOp, memo: dict[GenericOp, AffineMap | None]
    ) -> AffineMap | None:
        """The map from the fused op's loops to `member`'s (None: the identity): the reads
        on the way from the member up to the root, composed (a loop, not a recursion: a
        chain of fusions is as deep as it is long)."""
        path = []
        while member not in memo and member in self.parent:
            path.append(member)
            member = self.parent[member][0]
        if member not in memo:  # the root
            memo[member] = None
        above = memo[member]
        for step in reversed(path):
            read = self.parent[step][1]
            if read is not None:
                above = read if above is None else read.compose(above)
            memo[step] = above
        return above

    def make(self, group: _Group) -> None:
        """Replaces the group's members by one generic: the fused inputs, and one body of
        the members' ops in order, moved. Groups are made in program order."""
        root = group.root
        keys = [(self.made.get(v, v), m) for v, m in group.keys]
        types = [SSAValue.get(v, type=TensorType).type.element_type for v, _ in keys]
        block = Block(arg_types=[*types, root.body.block.args[-1].type])
        slots = {key: block.args[i] for i, key in enumerate(keys)}
        yielded: dict[GenericOp, SSAValue] = {}
        memo: dict[GenericOp, AffineMap | None] = {}
        kept_names: dict[SSAValue, str | None] = {}
        for member in group.members:
            body = member.body.block
            to_root = self.to_root(member, memo)
            maps = member.indexing_maps.data
            for j, value in enumerate(member.inputs):
                owner = value.owner
                if isinstance(owner, GenericOp) and owner in yielded:
                    target = yielded[owner]
                else:
                    amap = maps[j] if to_root is None else AffineMapAttr(
                        maps[j].data.compose(to_root))
                    target = slots[(value, amap)]
                body.args[j].replace_all_uses_with(target)
            if member is root:
                body.args[-1].replace_all_uses_with(block.args[-1])
            for body_op in list(body.ops):
                body.detach_op(body_op)
                if isinstance(body_op, YieldOp) and member is not root:
                    result = body_op.operands[0]
                    yielded[member] = result
                    if not isinstance(result, BlockArgument):
                        kept_names.setdefault(result, result.name_hint)
                    body_op.erase()
                else:
                    block.add_op(body_op)
        # replacing a value names its replacement after it: the fused op's arguments are new
        # (unnamed) and each produced value keeps its own name
        for arg in block.args:
            arg.name_hint = None
        for value, name in kept_names.items():
            value.name_hint = name
        fused = GenericOp(
            [v for v, _ in keys],
            list(root.outputs),
            Region(block),
            [*(m for _, m in keys), root.indexing_maps.data[-1]],
            list(root.iterator_types.data),
            [r.type for r in root.results],
        )
        fused.attributes[NAME_ATTR] = StringAttr(group.name)
        fused.location = group.names.location()
        self.made[root.results[0]] = fused.results[0]
        Rewriter.replace_op(root, fused)
        for member in reversed(group.members[:-1]):
            init = member.outputs[0].owner
            Rewriter.erase_op(member)
            if isinstance(init, tensor.EmptyOp) and not init.tensor.uses:
                Rewriter.erase_op(init)


def _reads_once(read: AffineMap, needed: set[int]) -> bool:
    """Whether a read through `read` touches each element once: distinct loop dims (no
    broadcast), every loop of size > 1 among them."""
    dims = [e.position for e in read.results if isinstance(e, AffineDimExpr)]
    return len(dims) == len(read.results) and len(set(dims)) == len(dims) and needed <= set(dims)


@dataclass(frozen=True)
class T10FuseElementwise(ModulePass):
    name = "t10-fuse-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fusion = _Fusion()
        for generic in [g for g in op.walk() if isinstance(g, GenericOp)]:
            try:
                fusion.visit(generic)
            except T10Error as error:
                raise naming_node(error, generic) from None
        for group in fusion.groups.values():
            fusion.make(group)
