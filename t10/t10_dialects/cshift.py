"""cshift: compute-shift execution of one operator over distributed tensors.

`cshift.compute_shift` makes a plan's execution explicit: the per-step sub-operator extents,
the number of steps along the shift dim, and which inputs rotate along which ring. Every
step each core computes its sub-operator on the chunks it holds, then every rotating input
passes one chunk to the previous core of its ring:

```
  step t:   [compute sub-op on chunk k(x,t)] -> [shift rings] -> sync
  k(x, t) = (o(x) + t) mod steps,   o(x) = skew of the rotating layouts
```

If the plan splits reduction dims over cores, the result holds per-core partial sums
(`partial = [d2]`) and `cshift.all_reduce` combines them across those grid axes. A result
that rotates (`rotate [..] out 2`: its partial sums rotate on the ring along grid axis 2, see
`t10.common.plans`) sums over its ring while it rotates, so that axis is not partial: it
comes out finished, in a rotating layout of phase steps - 1.

A plan with two temporal dims names the outer one first:
`cshift.compute_shift "mm"(%a, %b) outer steps 2 shift 1 steps 4 shift 2 ...`; each operand
rotates along the dim its layout's rotating dim is read at.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
)
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.ir import Dialect, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from t10.common.plans import OUTPUT, Layout, Plan, Rotation, partial_dims, step_sizes
from t10.t10_dialects.rtensor import RTensorType, check_plan, rtensor_type
from t10.t10_dialects.syntax import check_combiner, ints_of


@irdl_op_definition
class ComputeShiftOp(IRDLOperation):
    """One operator as compute-shift steps.

    - `step_sizes`: loop extents of the sub-operator a core computes in one step;
    - `shift_dim`: the loop dim cut into `steps` chunks (-1: one step, nothing rotates);
    - `outer_dim`, `outer_steps`: an outer loop dim cut into chunks too (each outer step runs
      all `steps` inner steps; operands rotating along it shift once per inner loop);
    - `rotate`: per input, the grid axis of its ring, or -1 if it does not rotate;
    - `rotate_out`: the grid axis of the result's ring, when its partial sums rotate;
    - `partial`: grid axes over which the result holds partial sums (never its ring).
    """

    name = "cshift.compute_shift"
    inputs = var_operand_def(RTensorType)
    result = result_def(RTensorType)
    label = prop_def(StringAttr)
    indexing_maps = prop_def(ArrayAttr[AffineMapAttr])
    iterator_types = prop_def(ArrayAttr[IteratorTypeAttr])
    step_sizes = prop_def(DenseArrayBase[I64])
    shift_dim = prop_def(IntegerAttr[I64])
    steps = prop_def(IntegerAttr[I64])
    outer_dim = opt_prop_def(IntegerAttr[I64])
    outer_steps = opt_prop_def(IntegerAttr[I64])
    rotate = prop_def(DenseArrayBase[I64])
    rotate_out = opt_prop_def(IntegerAttr[I64])
    partial = prop_def(DenseArrayBase[I64])
    body = region_def("single_block")
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$label `(` $inputs `)` (`outer` `steps` $outer_steps^ `shift` $outer_dim)? "
        "`steps` $steps `shift` $shift_dim `sizes` $step_sizes "
        "`rotate` $rotate (`out` $rotate_out^)? `partial` $partial attr-dict `:` "
        "`(` type($inputs) `)` `->` "
        "type($result) $body"
    )

    def verify_(self) -> None:
        what = f"cshift.compute_shift '{self.label.data}'"
        sizes = ints_of(self.step_sizes)
        rank = len(self.iterator_types.data)
        steps, shift = self.steps.value.data, self.shift_dim.value.data
        if len(sizes) != rank:
            raise VerifyException(f"{what}: {len(sizes)} step sizes for {rank} loop dims")
        if steps < 1 or (shift == -1) != (steps == 1) or not -1 <= shift < rank:
            raise VerifyException(f"{what}: a shift dim needs steps > 1, and only one")
        rotate = ints_of(self.rotate)
        if len(rotate) != len(self.inputs):
            raise VerifyException(f"{what}: needs one rotate entry per input")
        layouts = [rtensor_type(v).get_layout() for v in self.inputs]
        for i, (axis, layout) in enumerate(zip(rotate, layouts, strict=True)):
            ring = -1 if layout.rotating is None else layout.rotating.ring_axis
            if ring != axis:
                by_layout = "does not rotate" if ring < 0 else f"rotates on ring d{ring}"
                by_op = "not at all" if axis < 0 else f"on ring d{axis}"
                raise VerifyException(
                    f"{what}: input #{i} {by_layout} by its layout, but the op rotates it {by_op}"
                )
        out = rtensor_type(self.result).get_layout()
        out_ring = -1 if self.rotate_out is None else self.rotate_out.value.data
        if self.rotate_out is not None and not 0 <= out_ring < rank:
            raise VerifyException(
                f"{what}: the result's ring d{out_ring} (out) is not one of the {rank} grid axes"
            )
        if (out.rotating is None) != (out_ring < 0) or (
            out.rotating is not None and out.rotating.ring_axis != out_ring
        ):
            by_layout = (
                "does not rotate" if out.rotating is None
                else f"rotates on ring d{out.rotating.ring_axis}"
            )
            by_op = "not at all" if out_ring < 0 else f"on ring d{out_ring}"
            raise VerifyException(
                f"{what}: the result {by_layout} by its layout, but the op rotates it {by_op}"
            )
        grid = out.grid
        if len(grid) != rank:
            raise VerifyException(f"{what}: result grid {list(grid)} has not {rank} axes")
        for d in ints_of(self.partial):
            if not 0 <= d < rank or self.iterator_types.data[d].data != IteratorType.REDUCTION:
                raise VerifyException(f"{what}: partial axis d{d} is not a reduction dim")
        outer_dim = None if self.outer_dim is None else self.outer_dim.value.data
        if (outer_dim is None) != (self.outer_steps is None) or (
            outer_dim is not None and shift < 0
        ):
            raise VerifyException(f"{what}: an outer shift dim needs outer steps and a shift dim")
        maps = [m.data for m in self.indexing_maps.data]

        def along_outer(operand: int, layout: Layout) -> bool:
            assert layout.rotating is not None
            loop = maps[operand].results[layout.rotating.dim]
            return isinstance(loop, AffineDimExpr) and loop.position == outer_dim

        self._check_plan(what, Plan(
            factors=grid,
            temporal_dim=None if shift < 0 else shift,
            steps=steps,
            rotations=tuple(
                Rotation(i, axis, rotating.pieces, along_outer(i, layout))
                for i, (axis, layout) in enumerate(zip(rotate, layouts, strict=True))
                if axis >= 0 and (rotating := layout.rotating) is not None
            )
            + (
                ()
                if out.rotating is None
                else (Rotation(OUTPUT, out_ring, out.rotating.pieces, along_outer(-1, out)),)
            ),
            outer_dim=outer_dim,
            outer_steps=1 if self.outer_steps is None else self.outer_steps.value.data,
            placement=out.placement,
        ))

    def _check_plan(self, what: str, plan: Plan) -> None:
        """The plan that the result grid, steps and rotations spell must run the operator,
        give every operand its layout, and agree with `step_sizes` and `partial`."""
        expr = check_plan(what, self, plan)
        for name, want, got in (
            ("step sizes", step_sizes(expr, plan), ints_of(self.step_sizes)),
            (
                "partial axes",
                partial_dims(expr, plan),
                ints_of(self.partial),
            ),
        ):
            if tuple(want) != tuple(got):
                raise VerifyException(
                    f"{what}: {name} {list(got)} differ from the plan's {list(want)} (grid "
                    f"{list(plan.factors)}, {plan.steps} steps)"
                )


@irdl_op_definition
class AllReduceOp(IRDLOperation):
    """Combines (`combiner`: sum, max or min) the partial tiles held by the cores that differ
    only on grid `axes`: `cshift.all_reduce max %x over [1] : ...`."""

    name = "cshift.all_reduce"
    T: ClassVar = VarConstraint("T", base(RTensorType))
    source = operand_def(T)
    result = result_def(T)
    combiner = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure())
    assembly_format = "$combiner $source `over` $axes attr-dict `:` type($source)"

    def __init__(self, source: SSAValue, axes: DenseArrayBase[I64], combiner: StringAttr):
        super().__init__(
            operands=[source],
            result_types=[source.type],
            properties={"axes": axes, "combiner": combiner},
        )

    def verify_(self) -> None:
        check_combiner(self.combiner, "cshift.all_reduce")
        layout = rtensor_type(self.source).get_layout()
        grid, axes = layout.grid, ints_of(self.axes)
        split = {a for a in layout.axes if a is not None}
        if (
            not axes
            or len(set(axes)) != len(axes)
            or any(not 0 <= a < len(grid) or a in split for a in axes)
        ):
            raise VerifyException(
                f"cshift.all_reduce: axes {list(axes)} must be distinct axes of grid "
                f"{list(grid)} that the layout does not split a tensor dim along"
            )
        owner = self.source.owner
        if isinstance(owner, ComputeShiftOp) and tuple(ints_of(owner.partial)) != axes:
            raise VerifyException(
                f"cshift.all_reduce: axes {list(axes)} are not the partial axes "
                f"{list(ints_of(owner.partial))} of cshift.compute_shift '{owner.label.data}'"
            )


CShift = Dialect("cshift", [ComputeShiftOp, AllReduceOp], [])
