"""convert-linalg-to-rtensor: planned `linalg.generic` ops become `rtensor.generic` ops over
distributed tensors.

Host tensors (function arguments, constants) are distributed straight into the layout their
consumer's plan asks for; a value produced on chip in one layout and consumed in another gets
an `rtensor.relayout`, which later inputs listed in their operator's `t10.reused_inputs`
share (the plan search found the same tensor moved into the same layout twice). Results that
leave the chip are collected. Chains of `rtensor.view` ops fold into the map of the relayout
that feeds each consumer (a viewed function argument is first placed by `host_layout`); a
view returned from the function is moved on chip too, from its source's layout (a host
source placed by `host_layout` over the program's cores, once for all its returned views).

A gather of runtime ids (`rtensor.gather` on host tensors) becomes, for each operator that
reads it, an `rtensor.gather` on distributed tensors labelled `<consumer>/gather`: the table
and the ids placed by `host_layout` over the program's cores (the most any plan uses; a
constant table is a resident weight, placed once), the result directly in the layout the consumer
wants. Views of the ids are moved on chip first (a relayout into `host_layout`); a gather
read through views is refused. A gather returned from the function is made on chip in
`host_layout` and collected.

An operator planned by `vgm` (`t10.store` on its generic) loads and stores through homes,
`host_layout` over the module's `t10.home_cores`: a host tensor it reads is placed in its
home (once, where it is defined), every input is moved from its home into the plan's layout
(`<consumer>/relayout`, views folded in), and the result is moved into its home
(`rtensor.relayout "<op>/store"`, carrying the `t10.store` estimate) before it is collected
or read.

An operator whose generic names weights in `t10.cold` (kept cold by the plan search) reads
each from its home, `host_layout` over its plan's cores, placed once where the weight is
defined, through a relayout into the plan's layout (`<consumer>/relayout`) each time it runs.

Precision: distributed tensors take the storage element type the module's `t10.precision`
names (f32 when absent). An operator whose plan accumulates partial sums wider than the
storage (`rounds_partials`: fp16 storage with the module's `t10.partials` fp32, the default)
produces an accumulator of the partials' type, which an `rtensor.relayout` labelled with the
operator rounds into the storage type in place (same layout); with `t10.partials` equal to
the storage precision the operator accumulates in its output directly. A module whose
frontend found an integer constant that fp16 would round (`t10.fp16_inexact`) is refused at
fp16. At fp16 every finite float constant beyond fp16's range (weights, splats, constants in
generic bodies) is first saturated to ±65504 (`saturate_fp16_constants`), as onnxruntime's
fp16 converter clamps a model's constants: a known value is never stored or computed as ±inf
(a Hugging Face mask's float32 minimum masks as -65504); values computed beyond the range at
run time are still stored as ±inf, as on the chip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import copysign, isfinite

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from t10.common.attr_names import (
    ESTIMATE_ATTR,
    FP16_SATURATED_ATTR,
    GATHER_ATTR,
    HOME_CORES_ATTR,
    NAME_ATTR,
    PARTIALS_ATTR,
    PLAN_ATTR,
    PRECISION_ATTR,
    RELAYOUT_ATTR,
    REUSED_ATTR,
    STORE_ATTR,
)
from t10.common.epilogues import epilogue_inputs, epilogue_of, fused_tensor_expr, is_epilogue
from t10.common.locations import Located, fused_location
from t10.common.plans import Layout, host_layout, input_layouts, output_layout, rounds_partials
from t10.common.tensor_expr import (
    COMBINER_IDENTITY,
    FP16_MAX,
    PRECISIONS,
    ExprKind,
    at_precision,
    check_partials,
    check_storage,
    linalg_tensor_expr,
    op_name,
    precision_type,
)
from t10.common.view_maps import View
from t10.common.weights import cold_inputs, loads_ahead
from t10.errors import T10Error
from t10.planning.offchip_weights import offchip_inputs
from t10.planning.planned_record import check_record
from t10.t10_dialects import rtensor
from t10.t10_dialects.rtensor import PlanAttr, RTensorType, through_views
from t10.t10_dialects.syntax import int_array


def _is_splat_of(value: SSAValue, identity: float) -> bool:
    owner = value.owner
    if not isinstance(owner, arith.ConstantOp):
        return False
    dense = owner.value
    return isinstance(dense, DenseIntOrFPElementsAttr) and all(
        v == identity for v in dense.get_values()
    )


def _stored(tensor: Attribute, elem: Attribute, layout: Layout) -> RTensorType:
    """The distributed type of a host tensor type, stored as `elem`."""
    assert isinstance(tensor, TensorType)
    return RTensorType.of(TensorType(elem, tensor.get_shape()), layout)


def _relayout(
    source: SSAValue,
    wanted: RTensorType,
    label: str,
    view: View | None,
    estimate: Attribute | None,
) -> Operation:
    properties: dict[str, Attribute] = {"label": StringAttr(label)}
    if estimate is not None:
        properties["estimate"] = estimate
    if view is not None:
        properties["map"] = AffineMapAttr(view.map)
    if view is not None and view.guard is not None:
        properties["guard"] = AffineMapAttr(view.guard)
        properties["guard_shape"] = int_array(view.guard_shape)
    return rtensor.RelayoutOp.create(
        operands=[source], result_types=[wanted], properties=properties
    )


def _on_chip(
    value: SSAValue,
    cores: int,
    elem: Attribute,
    rewriter: PatternRewriter,
    at: InsertPoint | None = None,
) -> SSAValue:
    """`value` (a host tensor, or the collect of an on-chip one) as a distributed tensor: the
    on-chip one, or the host one placed by `host_layout` and stored as `elem` (the
    distribution inserted `at`, by default where the rewriter stands)."""
    if isinstance(value.owner, rtensor.CollectOp):
        return value.owner.source
    assert isinstance(value.type, TensorType)
    layout = host_layout(value.type.get_shape(), cores)
    op = rtensor.DistributeOp.create(
        operands=[value], result_types=[_stored(value.type, elem, layout)]
    )
    rewriter.insert(op, at)
    return op.results[0]


Placed = dict[tuple[SSAValue, Layout, Attribute], SSAValue]
"""Gather operands already placed on chip: (host value, layout, element type) → value."""


@dataclass
class Gathers:
    """What the gathers of one module share: their tables and ids are placed over `cores`
    (the most any operator's plan uses), each once."""

    cores: int
    placed: Placed = field(default_factory=dict)


def _placed(
    value: SSAValue,
    cores: int,
    elem: Attribute,
    label: str,
    rewriter: PatternRewriter,
    placed: Placed,
) -> SSAValue:
    """`value` (a host tensor, an on-chip one, or views of either) on chip: an on-chip value
    as it is, a host one in `host_layout` over `cores` (once per layout), a view moved
    through its map into `host_layout` by a relayout labelled `label`."""
    assert isinstance(value.type, TensorType)
    layout = host_layout(value.type.get_shape(), cores)
    key = (value, layout, elem)
    if key not in placed:
        # placed right after the definition, so that every later reader may share it
        source, view = through_views(value)
        on_chip = _on_chip(source, cores, elem, rewriter, _after(source))
        if view is not None:
            move = _relayout(on_chip, _stored(value.type, elem, layout), label, view, None)
            rewriter.insert(move, _after(on_chip))
            on_chip = move.results[0]
        placed[key] = on_chip
    return placed[key]


def _after(value: SSAValue) -> InsertPoint:
    """Right after the definition of `value` (a block argument: the block's start)."""
    owner = value.owner
    if isinstance(owner, Operation):
        return InsertPoint.after(owner)
    return InsertPoint.at_start(owner)


def _gather(
    op: rtensor.GatherOp,
    wanted: RTensorType,
    label: str,
    estimate: Attribute | None,
    rewriter: PatternRewriter,
    gathers: Gathers,
) -> SSAValue:
    """The host-level gather `op` made on chip into the distributed type `wanted`."""
    cores, placed = gathers.cores, gathers.placed
    table = _placed(op.table, cores, wanted.tensor.get_element_type(), label, rewriter, placed)
    ids = _placed(op.ids, cores, f32, label, rewriter, placed)  # integers stay exact
    properties: dict[str, Attribute] = {
        "label": StringAttr(label),
        **rtensor.gather_kind_properties(op.kind()),
    }
    if estimate is not None:
        properties["estimate"] = estimate
    gather = rtensor.GatherOp.create(
        operands=[table, ids], result_types=[wanted], properties=properties
    )
    gather.location = op.location  # the ONNX gather node, which its runtime errors name
    rewriter.insert(gather)
    return gather.results[0]


MoveKey = tuple[SSAValue, RTensorType, View | None]
"""A move between operators: the on-chip source, the destination type, the view."""


def _distributed(
    value: SSAValue,
    layout: Layout,
    elem: Attribute,
    consumer: Operation,
    rewriter: PatternRewriter,
    gathers: Gathers,
    moves: dict[MoveKey, SSAValue],
    reuse: bool,
    homes: bool,
    cold: bool = False,
) -> SSAValue:
    """`value` (a host tensor, the collect of an on-chip one, or views of either) in
    `layout`, stored as `elem`; views become the map of the relayout that feeds `consumer`;
    a gather of runtime ids is made straight into `layout`. Relayouts are recorded in
    `moves`; with `reuse` the input takes the one an earlier operator made. With `homes`
    (`t10.store`: the consumer loads from homes) a host tensor is placed in its home first,
    `host_layout` over the program's cores (once for all its readers), and loaded from it
    like an on-chip one. A `cold` weight (`t10.cold`) is placed in its home, `host_layout`
    over `layout`'s cores (once, where it is defined), and expanded from it."""
    wanted = _stored(value.type, elem, layout)
    source, view = through_views(value)
    if isinstance(source.owner, rtensor.GatherOp):
        label, estimate = f"{op_name(consumer)}/gather", consumer.attributes.get(GATHER_ATTR)
        if view is None:
            return _gather(source.owner, wanted, label, estimate, rewriter, gathers)
        # read through views: made in host_layout, then moved through the views
        assert isinstance(source.type, TensorType)
        made = _stored(source.type, elem, host_layout(source.type.get_shape(), gathers.cores))
        on_chip = _gather(source.owner, made, label, estimate, rewriter, gathers)
        op = _relayout(on_chip, wanted, f"{op_name(consumer)}/relayout", view, None)
        rewriter.insert(op)
        return op.results[0]
    label = f"{op_name(consumer)}/relayout"
    if view is None and not (homes or cold) and not isinstance(source.owner, rtensor.CollectOp):
        op: Operation = rtensor.DistributeOp.create(operands=[value], result_types=[wanted])
    else:
        if homes or cold:
            cores = gathers.cores if homes else layout.cores
            on_chip = _placed(source, cores, elem, label, rewriter, gathers.placed)
        else:
            on_chip = _on_chip(source, layout.cores, elem, rewriter)
        if view is None and on_chip.type == wanted:
            return on_chip  # already in place (a view moves even between equal types)
        key = (on_chip, wanted, view)
        if reuse:
            if key not in moves:
                raise T10Error(
                    f"operator '{op_name(consumer)}': '{REUSED_ATTR}' names an input that no "
                    f"earlier operator moves into the same layout ({wanted}); remove the "
                    "attribute or run t10-plan-search again"
                )
            return moves[key]
        estimate = consumer.attributes.get(RELAYOUT_ATTR)
        op = _relayout(on_chip, wanted, label, view, estimate)
        moves[key] = op.results[0]
    rewriter.insert(op)
    return op.results[0]


def _reused_inputs(op: GenericOp) -> set[int]:
    """The inputs whose move an earlier operator makes (`t10.reused_inputs`)."""
    attr = op.attributes.get(REUSED_ATTR)
    if attr is None:
        return set()
    if not isinstance(attr, DenseArrayBase) or not attr.elt_type == i64:
        raise T10Error(
            f"operator '{op_name(op)}': attribute '{REUSED_ATTR}' must be an array<i64: ...> "
            f"of input indices, got {attr}"
        )
    return set(attr.get_values())


@dataclass
class GenericToRTensor(RewritePattern):
    precision: str
    """The storage precision of distributed tensors (`t10.precision`)."""
    partials: str
    """The precision of partial sums carried across steps and cores (`t10.partials`)."""
    gathers: Gathers
    moves: dict[MoveKey, SSAValue] = field(default_factory=dict)
    """The relayouts made so far, for inputs that reuse them."""
    starts: list[tuple[Block, Operation | None]] = field(default_factory=list)
    """Per operator converted, in program order: its block and the op before the first op
    made for it (None: the block's first op)."""
    loads: list[tuple[rtensor.LoadOp, int, int]] = field(default_factory=list)
    """The loads of off-chip weights made so far, each with its operator's index in
    `starts` and how many operators ahead it starts (`t10.ahead`)."""

    def _load_input(self, value: SSAValue, layout: Layout, elem: Attribute,
                    consumer: Operation, rewriter: PatternRewriter) -> SSAValue:
        """An input kept off chip (a weight or a function argument, `value` or viewed by
        `value`) in `layout`: loaded into it, or, through views, loaded into `host_layout`
        over its cores and moved through the views (`place_loads` moves the load ahead)."""
        name = op_name(consumer)
        source, view = through_views(value)
        assert isinstance(source.type, TensorType)
        at = layout if view is None else host_layout(source.type.get_shape(), layout.cores)
        load = rtensor.LoadOp.create(
            operands=[source], result_types=[_stored(source.type, elem, at)],
            properties={"label": StringAttr(f"{name}/load")},
        )
        rewriter.insert(load)
        self.loads.append((load, len(self.starts), loads_ahead(consumer)))
        if view is None:
            return load.result
        estimate = consumer.attributes.get(RELAYOUT_ATTR)
        move = _relayout(load.result, _stored(value.type, elem, layout), f"{name}/relayout",
                         view, estimate)
        rewriter.insert(move)
        return move.results[0]

    def place_loads(self) -> None:
        """Moves each load of an off-chip weight `t10.ahead` operators ahead of its reader
        (to the first if there are fewer), before the ops made for that operator (its
        relayouts): the loads that start at one operator stand in their readers' order."""
        anchors: list[Operation] = []
        for block, before in self.starts:
            first = before.next_op if before is not None else block.first_op
            while isinstance(first, rtensor.LoadOp):
                first = first.next_op
            assert first is not None  # an operator makes at least its generic
            anchors.append(first)
        for load, index, ahead in self.loads:
            load.detach()
            anchor = anchors[max(index - ahead, 0)]
            block = anchor.parent_block()
            assert block is not None
            block.insert_op_before(load, anchor)
            weight = load.source.owner  # a constant, or a function argument's block
            if (isinstance(weight, Operation) and weight.parent_block() is block
                    and load.is_before_in_block(weight)):
                weight.detach()  # a constant: defined where it is loaded, if later
                block.insert_op_before(weight, load)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if is_epilogue(op):
            return  # lowered with its contraction
        plan_attr = op.attributes.get(PLAN_ATTR)
        if not isinstance(plan_attr, PlanAttr):
            raise T10Error(
                f"operator '{op_name(op)}' has no '{PLAN_ATTR}' attribute: run t10-plan-search "
                "before convert-linalg-to-rtensor (or pin a plan by hand)"
            )
        epilogue = epilogue_of(op)
        if epilogue is not None:  # what is made for the operator computes both nodes
            op.location = fused_location((op.location, epilogue.location))
        fused = linalg_tensor_expr(op) if epilogue is None else fused_tensor_expr(op, epilogue)
        expr = at_precision(fused, self.precision, self.partials, f"operator '{op_name(op)}'")
        elem = PRECISIONS[self.precision]
        plan = plan_attr.to_plan()
        if expr.kind is ExprKind.CONTRACTION and not _is_splat_of(op.outputs[0], 0.0):
            raise T10Error(
                f"operator '{expr.name}': a contraction must accumulate into a zero constant"
            )
        if expr.kind is ExprKind.REDUCTION:
            assert expr.combiner is not None
            identity = COMBINER_IDENTITY[expr.combiner]
            if not _is_splat_of(op.outputs[0], identity):
                raise T10Error(
                    f"operator '{expr.name}': a {expr.combiner} reduction must accumulate into a "
                    f"splat constant of its identity {identity}"
                )
        reused = _reused_inputs(op)
        store = op.attributes.get(STORE_ATTR)
        values = list(op.inputs)
        if epilogue is not None:
            values += epilogue_inputs(op, epilogue)
        cold = cold_inputs(op, values)
        offchip = offchip_inputs(op, values)
        block, before = op.parent_block(), op.prev_op
        assert block is not None
        layouts = input_layouts(expr, plan)
        # the inputs kept off chip first: those read through views are moved before the
        # operator's other moves, so that it waits for its loads before all of them
        placed = {
            i: self._load_input(values[i], layouts[i], elem, op, rewriter) for i in offchip
        }
        inputs = [
            placed[i] if i in placed
            else _distributed(
                v, lay, elem, op, rewriter, self.gathers, self.moves,
                i in reused, store is not None, i in cold,
            )
            for i, (v, lay) in enumerate(zip(values, layouts, strict=True))
        ]
        self.starts.append((block, before))
        result_type = op.res[0].type
        assert isinstance(result_type, TensorType)
        layout = output_layout(expr, plan)
        rounding = rounds_partials(expr, plan)
        properties = {
            "indexing_maps": op.indexing_maps,
            "iterator_types": op.iterator_types,
            "plan": plan_attr,
            "label": StringAttr(expr.name),
        }
        if ESTIMATE_ATTR in op.attributes:
            properties["estimate"] = op.attributes[ESTIMATE_ATTR]
        generic = rtensor.GenericOp.create(
            operands=inputs[: expr.own_inputs],
            result_types=[
                _stored(result_type, PRECISIONS[self.partials] if rounding else elem, layout)
            ],
            properties=properties,
            regions=[op.detach_region(op.body)],
        )
        new_ops: list[Operation] = [generic]
        if rounding:
            new_ops.append(
                rtensor.RelayoutOp.create(
                    operands=generic.results,
                    result_types=[_stored(result_type, elem, layout)],
                    properties={"label": StringAttr(expr.name)},
                )
            )
        if epilogue is not None:
            extra = inputs[expr.own_inputs :]
            new_ops.append(_epilogue(op, epilogue, new_ops[-1].results[0], extra))
        if store is not None:
            home = _stored(result_type, elem, host_layout(layout.shape, self.gathers.cores))
            if new_ops[-1].results[0].type != home:
                stored = new_ops[-1].results[0]
                new_ops.append(_relayout(stored, home, f"{expr.name}/store", None, store))
        collect = rtensor.CollectOp.create(
            operands=new_ops[-1].results, result_types=[result_type]
        )
        if epilogue is None:
            rewriter.replace(op, [*new_ops, collect])
            return
        rewriter.insert([*new_ops, collect], InsertPoint.before(op))
        rewriter.replace_all_uses_with(epilogue.results[0], collect.results[0])
        rewriter.erase(epilogue)
        rewriter.erase(op)


def _epilogue(
    contraction: GenericOp, epilogue: GenericOp, output: SSAValue, inputs: list[SSAValue]
) -> rtensor.EpilogueOp:
    """`epilogue` as an `rtensor.epilogue` on the contraction's distributed `output`; its
    block takes the output's element first, then its own inputs' (in `inputs` order)."""
    old = epilogue.body.block
    args = list(old.args)
    produced = contraction.results[0]
    own = [i for i, v in enumerate(epilogue.inputs) if v is not produced]
    reads = next(i for i, v in enumerate(epilogue.inputs) if v is produced)
    block = Block(
        arg_types=[
            args[reads].type, *(args[i].type for i in own), args[len(epilogue.inputs)].type
        ]
    )
    for i, value in enumerate(epilogue.inputs):
        target = block.args[1 + own.index(i)] if value is not produced else block.args[0]
        args[i].replace_all_uses_with(target)
    args[len(epilogue.inputs)].replace_all_uses_with(block.args[-1])
    for body_op in list(old.ops):
        body_op.detach()
        block.add_op(body_op)
    maps = epilogue.indexing_maps.data
    identity = maps[-1]
    return rtensor.EpilogueOp.create(
        operands=[output, *inputs],
        result_types=[output.type],
        properties={
            "label": StringAttr(op_name(contraction)),
            "indexing_maps": ArrayAttr([identity, *(maps[i] for i in own), identity]),
        },
        regions=[Region(block)],
    )


@dataclass
class MaterializeView(RewritePattern):
    """A view that leaves the chip (a function result) is made on chip: moved through its
    map into `host_layout` over its source's cores (carrying the view's `t10.relayout`
    estimate), then collected. A host source is placed
    by `host_layout` over the program's cores, once for all the views (and gathers) that
    read it."""

    elem: Attribute
    """The storage element type of distributed tensors."""
    gathers: Gathers

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.ViewOp, rewriter: PatternRewriter) -> None:
        users = [u for u in op.result.uses if not isinstance(u.operation, rtensor.ViewOp)]
        if not users:
            return
        source, view = through_views(op.result)
        label = f"{op.label.data}/relayout"
        on_chip = _placed(
            source, self.gathers.cores, self.elem, label, rewriter, self.gathers.placed
        )
        assert isinstance(on_chip.type, RTensorType)
        layout = host_layout(op.result.type.get_shape(), on_chip.type.get_layout().cores)
        wanted = _stored(op.result.type, self.elem, layout)
        move = _relayout(on_chip, wanted, label, view, op.attributes.get(RELAYOUT_ATTR))
        collect = rtensor.CollectOp.create(operands=move.results, result_types=[op.result.type])
        rewriter.insert([move, collect], InsertPoint.before(op))
        for use in users:
            use.operation.operands[use.index] = collect.results[0]


@dataclass
class MaterializeGather(RewritePattern):
    """A gather that leaves the chip (a function result, or views of it that are) or that
    another gather reads is made on chip in `host_layout` over the program's cores (carrying
    its `t10.gather` estimate), then collected."""

    elem: Attribute
    """The storage element type of distributed tensors."""
    gathers: Gathers

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: rtensor.GatherOp, rewriter: PatternRewriter) -> None:
        result = op.result.type
        if not isinstance(result, TensorType):
            return
        if not op.result.uses:  # every reader made its own gather
            rewriter.erase(op)
            return
        layout = host_layout(result.get_shape(), self.gathers.cores)
        gather = _gather(
            op,
            _stored(result, self.elem, layout),
            f"{op.label.data}/gather",
            op.attributes.get(GATHER_ATTR),
            rewriter,
            self.gathers,
        )
        collect = rtensor.CollectOp.create(operands=[gather], result_types=[result])
        rewriter.insert(collect)
        rewriter.replace(op, [], [collect.results[0]])


def _program_cores(module: ModuleOp) -> int:
    """The most cores any planned operator of `module` uses, or its homes lie over
    (`t10.home_cores`; 1 when there is neither)."""
    homes = module.attributes.get(HOME_CORES_ATTR)
    if homes is not None and not (isinstance(homes, IntegerAttr) and homes.value.data >= 1):
        raise T10Error(
            f"module attribute '{HOME_CORES_ATTR}' must be a positive integer, got {homes}"
        )
    planned = max(
        (
            plan.to_plan().cores
            for o in module.walk()
            if isinstance(plan := o.attributes.get(PLAN_ATTR), PlanAttr)
        ),
        default=1,
    )
    return planned if homes is None else max(planned, homes.value.data)


class EraseUnused(RewritePattern):
    """Drops what the conversion left without users: collects of values that stay on chip,
    the output inits of linalg (`tensor.empty`, zero constants), unused relayouts."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(
            op,
            rtensor.CollectOp
            | rtensor.ViewOp
            | rtensor.GatherOp
            | tensor.EmptyOp
            | arith.ConstantOp,
        ):
            if not any(r.uses for r in op.results):
                rewriter.erase(op)


MASK_EXTREME = float(np.finfo(np.float32).max)
"""A constant of at least this magnitude (float32's extreme) stands for ±infinity (a Hugging Face
mask): its saturation to ±FP16_MAX keeps that meaning, so it is not reported."""


@dataclass
class Saturation:
    """What `saturate_fp16_constants` saturated that can change a result: values below
    MASK_EXTREME in magnitude."""

    count: int = 0
    largest: float = 0.0
    node: str = ""

    def note(self, values: np.ndarray, op: Operation) -> None:
        reported = np.abs(values[np.isfinite(values) & (np.abs(values) > FP16_MAX)])
        reported = reported[reported < MASK_EXTREME]
        if not reported.size:
            return
        self.count += int(reported.size)
        self.largest = max(self.largest, float(reported.max()))
        self.node = self.node or _node_of(op)

    def warning(self) -> str:
        return (
            f"fp16: {self.count} constant value(s) beyond fp16's range saturated to ±65504 "
            f"(largest |x| {self.largest:.6g}, first in node '{self.node}'): results that "
            "depend on them differ from the fp32 model"
        )


def _node_of(constant: Operation) -> str:
    """The ONNX node name of the op that holds `constant` in its body or first uses it."""
    users = [use.operation for use in constant.results[0].uses]
    for op in [constant, *users]:
        while op is not None:
            name = op.attributes.get(NAME_ATTR)
            if isinstance(name, StringAttr):
                return name.data
            op = op.parent_op()
    return "?"


def _saturated(values: np.ndarray) -> np.ndarray | None:
    """`values` with each finite element beyond ±FP16_MAX made ±FP16_MAX (None: none is)."""
    over = np.isfinite(values) & (np.abs(values) > FP16_MAX)
    if not over.any():
        return None
    return np.where(over, np.copysign(FP16_MAX, values), values).astype(values.dtype)


def saturate_fp16_constants(module: ModuleOp) -> None:
    """Every float `arith.constant` of `module` (dense or scalar) with its finite values
    beyond fp16's range saturated to ±FP16_MAX; ±inf and NaN stay. Integer-valued constants
    need no exception: fp16 compilation refuses those beyond 2048 (`t10.fp16_inexact`).
    What was saturated below MASK_EXTREME is recorded as the module's FP16_SATURATED_ATTR
    (the warning the simulator's report gives)."""
    saturation = Saturation()
    for op in module.walk():
        if not isinstance(op, arith.ConstantOp):
            continue
        value = op.value
        if isinstance(value, FloatAttr):
            number = value.value.data
            if isfinite(number) and abs(number) > FP16_MAX:
                saturation.note(np.array([number]), op)
                op.value = FloatAttr(copysign(FP16_MAX, number), value.type)
        elif isinstance(value, DenseIntOrFPElementsAttr) and isinstance(
            element := value.get_element_type(), Float16Type | Float32Type | Float64Type
        ):
            values = np.frombuffer(value.data.data, dtype=np.dtype(element.format))
            saturated = _saturated(values)
            if saturated is not None:
                saturation.note(values.astype(np.float64), op)
                op.value = DenseIntOrFPElementsAttr(value.type, BytesAttr(saturated.tobytes()))
    if saturation.count:
        module.attributes[FP16_SATURATED_ATTR] = StringAttr(saturation.warning())


def _module_string(module: ModuleOp, name: str) -> str:
    """A string module attribute (fp32 when absent)."""
    value = module.attributes.get(name, StringAttr("fp32"))
    if not isinstance(value, StringAttr):
        raise T10Error(f"module attribute '{name}' must be a string, got {value}")
    return value.data


@dataclass(frozen=True)
class ConvertLinalgToRTensor(ModulePass):
    name = "convert-linalg-to-rtensor"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        precision = _module_string(op, PRECISION_ATTR)
        elem = precision_type(precision, f"module attribute '{PRECISION_ATTR}'")
        check_storage(op.attributes, precision)
        partials = _module_string(op, PARTIALS_ATTR)
        check_partials(precision, partials, f"module attribute '{PARTIALS_ATTR}'")
        check_record(op, self.name)
        if precision == "fp16":
            saturate_fp16_constants(op)
        gathers = Gathers(_program_cores(op))
        generics = GenericToRTensor(precision, partials, gathers)
        PatternRewriteWalker(Located(generics), apply_recursively=False).rewrite_module(op)
        generics.place_loads()
        PatternRewriteWalker(
            Located(MaterializeGather(elem, gathers)), apply_recursively=False
        ).rewrite_module(op)
        PatternRewriteWalker(
            Located(MaterializeView(elem, gathers)), apply_recursively=False
        ).rewrite_module(op)
        PatternRewriteWalker(EraseUnused(), walk_reverse=True).rewrite_module(op)

