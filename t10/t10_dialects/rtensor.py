"""rtensor: distributed (rotating) tensors, the level where every operator carries its plan.

A value of type `!rtensor.tensor<SHAPE x T, LAYOUT>` is one logical tensor spread over the
cores of a grid (one grid axis per loop dim of the operator that uses it). The layout says
which grid axis splits each tensor dim, the per-core tile, and whether the tensor rotates:

```
  #rtensor.layout<grid [2, 2, 1] axes [d0, -] tile [32, 64] rotate 1 ring d1 x 2 steps 2
                  skew [(d1, 2, 1), (d0, 2, 1)]>

  A[64 x 64], cores (x0, x1):   (0,0): A[0:32, k0]  (0,1): A[0:32, k1]   <- ring along d1
                                (1,0): A[32:64, k1] (1,1): A[32:64, k0]     window of 1 chunk,
                                                                           skewed by x0
```

Plans are attributes the plan search writes and users can read, edit or pin:
`#rtensor.plan<grid [4, 4, 1] shift d2 steps 4 rotate [(0, d1, 4), (1, d0, 4)]>`; `out`
names the output, whose partial sums rotate on the ring of a split reduction dim:
`#rtensor.plan<grid [2, 4, 1] shift d0 steps 4 rotate [(out, d1, 4)]>`. Such an output is
laid out as its finished chunks lie after the last step: a rotating layout with
`phase` N - 1 (its window starts at chunk (o(x) + phase) mod N).

Plans and layouts may end with where the grid's cores lie on the chip (`placed`, see
`PlacementAttr` and `t10.common.placements`; linear without it):
`#rtensor.plan<grid [1, 8, 8] shift d1 steps 8 rotate [(out, d2, 8)] placed [[d2:8], [d1:8]]
fold [(d2, 8)]>` runs each ring of d2 down a column of an 8x8 mesh, folded.

Precision: the element type T of a distributed tensor is its storage type on chip (f32, or
f16 under `t10-plan-search{precision=fp16}`). Host tensors stay f32: `rtensor.distribute`
rounds into a narrower T and `rtensor.collect` widens back; an `rtensor.relayout` may round
an f32 partial-sum accumulator into f16 storage. Kernel bodies always compute in f32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from xdsl.dialects.builtin import (
    I64,
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    f16,
    f32,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    OpResult,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarOperand,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from t10.common.gathers import GatherKind
from t10.common.placements import Placement, placement_problem
from t10.common.plans import (
    OUTPUT,
    Layout,
    Plan,
    Rotating,
    Rotation,
    format_plan,
    input_layouts,
    output_layout,
    plan_problem,
    rounds_partials,
)
from t10.common.tensor_expr import ExprKind, TensorExpr, tensor_expr_of
from t10.common.view_maps import View, map_problem
from t10.common.weights import is_host_tensor
from t10.errors import T10Error
from t10.t10_dialects.syntax import (
    encode_optional,
    ints,
    ints_of,
    optional_values,
    parse_dim,
    parse_dim_list,
    parse_int_list,
    print_dim_list,
    print_int_list,
    values,
)


@irdl_attr_definition
class PlacementAttr(ParametrizedAttribute):
    """Where a grid's cores lie on the chip (`t10.common.placements`): the parts of grid axes
    laid along each dim of the chip's cores (`d1:4`: 4 positions of axis d1), major first,
    and the folded axes with their ring lengths:
    `#rtensor.placement<[[d1:4, d0:12], [d1:4, d2:12]] fold [(d0, 6), (d2, 12)]>`. No dims
    (`<linear>`): grid core i is chip core i. Plans and layouts spell it as a `placed [..]`
    clause."""

    name = "rtensor.placement"

    lines: ArrayAttr[ArrayAttr[IntAttr]]
    """Per dim, its parts flattened: axis, extent, axis, extent, ..."""
    folds: ArrayAttr[ArrayAttr[IntAttr]]

    @staticmethod
    def of(placement: Placement | None) -> PlacementAttr:
        if placement is None:
            return PlacementAttr(ArrayAttr(()), ArrayAttr(()))
        return PlacementAttr(
            ArrayAttr(ints(x for part in line for x in part) for line in placement.lines),
            ArrayAttr(ints(f) for f in placement.folds),
        )

    def to_placement(self) -> Placement | None:
        if not self.lines.data:
            return None
        lines = [values(line) for line in self.lines.data]
        folds = [values(f) for f in self.folds.data]
        return Placement(
            tuple(tuple(zip(line[::2], line[1::2], strict=False)) for line in lines),
            tuple((f[0], f[1]) for f in folds if len(f) == 2),
        )

    def print_parameters(self, printer: Printer) -> None:
        placement = self.to_placement()
        text = "linear" if placement is None else str(placement).removeprefix("placed ")
        printer.print_string(f"<{text}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        placement = None
        if parser.parse_optional_keyword("linear") is None:
            placement = parse_placement_body(parser)
        parser.parse_punctuation(">")
        attr = cls.of(placement)
        return (attr.lines, attr.folds)

    def verify(self) -> None:
        if any(len(f.data) != 2 for f in self.folds.data):
            raise VerifyException("a placement's fold is (grid axis, ring length)")
        if any(len(line.data) % 2 for line in self.lines.data):
            raise VerifyException("a placement's part is (grid axis, extent)")
        if self.folds.data and not self.lines.data:
            raise VerifyException("a linear placement folds no axis")

    def problem(self, grid: Sequence[int]) -> str | None:
        """Why this placement does not place `grid` (None if it does, or is linear)."""
        placement = self.to_placement()
        return None if placement is None else placement_problem(grid, placement)


def parse_placement_body(parser: AttrParser) -> Placement:
    """`[[d0:4], [d1:2, d2:8]] fold [(d2, 4)]` (the fold optional)."""

    def part() -> tuple[int, int]:
        axis = parse_dim(parser)
        parser.parse_punctuation(":")
        return axis, parser.parse_integer(allow_negative=False)

    lines = parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE,
        lambda: tuple(parser.parse_comma_separated_list(parser.Delimiter.SQUARE, part)),
    )

    def fold() -> tuple[int, int]:
        parser.parse_punctuation("(")
        axis = parse_dim(parser)
        parser.parse_punctuation(",")
        length = parser.parse_integer()
        parser.parse_punctuation(")")
        return axis, length

    folds: list[tuple[int, int]] = []
    if parser.parse_optional_keyword("fold") is not None:
        folds = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, fold)
    return Placement(tuple(lines), tuple(folds))


def parse_placed_clause(parser: AttrParser) -> Placement | None:
    """An optional `placed [..] fold [..]` clause of a plan or a layout."""
    if parser.parse_optional_keyword("placed") is None:
        return None
    return parse_placement_body(parser)


def verify_placement(what: str, grid: Sequence[int], placement: PlacementAttr) -> None:
    """A plan's or a layout's placement places its grid."""
    problem = placement.problem(grid)
    if problem is not None:
        raise VerifyException(f"{what} placement <{placement.to_placement()}> does not "
                              f"place grid {list(grid)}: {problem}")


@irdl_attr_definition
class PlanAttr(ParametrizedAttribute):
    """A compute-shift plan: spatial factors per loop dim, optional temporal dim and steps,
    an optional outer temporal dim and its steps, and the rotating operands as (input index
    or -1 for the output, ring grid axis, pieces[, 1 if it rotates along the outer dim])."""

    name = "rtensor.plan"

    factors: ArrayAttr[IntAttr]
    temporal: IntAttr
    steps: IntAttr
    rotations: ArrayAttr[ArrayAttr[IntAttr]]
    outer: IntAttr
    outer_steps: IntAttr
    placement: PlacementAttr

    @staticmethod
    def from_plan(plan: Plan) -> PlanAttr:
        return PlanAttr(
            ints(plan.factors),
            IntAttr(-1 if plan.temporal_dim is None else plan.temporal_dim),
            IntAttr(plan.steps),
            ArrayAttr(
                ints((r.operand, r.ring_dim, r.pieces, *((1,) if r.outer else ())))
                for r in plan.rotations
            ),
            IntAttr(-1 if plan.outer_dim is None else plan.outer_dim),
            IntAttr(plan.outer_steps),
            PlacementAttr.of(plan.placement),
        )

    def to_plan(self) -> Plan:
        return Plan(
            factors=values(self.factors),
            temporal_dim=None if self.temporal.data < 0 else self.temporal.data,
            steps=self.steps.data,
            rotations=tuple(_rotation(values(r)) for r in self.rotations.data),
            outer_dim=None if self.outer.data < 0 else self.outer.data,
            outer_steps=self.outer_steps.data,
            placement=self.placement.to_placement(),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{format_plan(self.to_plan())}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        parser.parse_keyword("grid")
        factors = parse_int_list(parser)
        levels: list[tuple[int, int, list[tuple[int, int, int]]]] = []

        def rotation() -> tuple[int, int, int]:
            parser.parse_punctuation("(")
            if parser.parse_optional_keyword("out") is not None:
                operand = OUTPUT
            else:
                operand = parser.parse_integer(allow_negative=False)
            parser.parse_punctuation(",")
            ring = parse_dim(parser)
            parser.parse_punctuation(",")
            pieces = parser.parse_integer()
            parser.parse_punctuation(")")
            return (operand, ring, pieces)

        while len(levels) < 2 and parser.parse_optional_keyword("shift") is not None:
            dim = parse_dim(parser)
            parser.parse_keyword("steps")
            steps = parser.parse_integer()
            parser.parse_keyword("rotate")
            levels.append(
                (dim, steps, parser.parse_comma_separated_list(parser.Delimiter.SQUARE, rotation))
            )
        placement = parse_placed_clause(parser)
        parser.parse_punctuation(">")
        plan = Plan(tuple(factors))
        if levels:
            dim, steps, rotations = levels[-1]
            plan = Plan(tuple(factors), dim, steps, tuple(Rotation(*r) for r in rotations))
        if len(levels) == 2:
            dim, steps, rotations = levels[0]
            outer = tuple(Rotation(*r, outer=True) for r in rotations)
            plan = replace(plan, rotations=outer + plan.rotations, outer_dim=dim, outer_steps=steps)
        attr = cls.from_plan(replace(plan, placement=placement))
        return (
            attr.factors, attr.temporal, attr.steps, attr.rotations, attr.outer,
            attr.outer_steps, attr.placement,
        )

    def verify(self) -> None:
        plan = self.to_plan()
        if not plan.factors or any(f < 1 for f in plan.factors):
            raise VerifyException(f"plan factors must be positive integers, got {plan.factors}")
        verify_placement("the plan's", plan.factors, self.placement)
        rank = len(plan.factors)
        if plan.temporal_dim is None:
            if plan.steps != 1 or plan.rotations or plan.outer_dim is not None:
                raise VerifyException("a plan without a shift dim has 1 step and no rotations")
            return
        if plan.outer_dim is None and (
            plan.outer_steps != 1 or any(r.outer for r in plan.rotations)
        ):
            raise VerifyException("a plan with one shift dim has no outer steps or rotations")
        if plan.outer_dim == plan.temporal_dim:
            raise VerifyException(f"plan shifts d{plan.temporal_dim} twice")
        for outer in (True, False) if plan.outer_dim is not None else (False,):
            _verify_plan_level(plan, outer)
        rings = [r.ring_dim for r in plan.rotations]
        if len(set(rings)) != len(rings):
            raise VerifyException("rotations of a plan must use distinct ring dims")
        operands = [r.operand for r in plan.rotations]
        if len(set(operands)) != len(operands) or any(o < OUTPUT for o in operands):
            raise VerifyException("each rotation names a distinct input, or the output (out)")
        for r in plan.rotations:
            what = "the output" if r.operand == OUTPUT else f"input {r.operand}"
            if not 0 <= r.ring_dim < rank or r.ring_dim == plan.level_dim(r.outer):
                raise VerifyException(f"rotation ring dim d{r.ring_dim} is not a valid ring")
            if r.pieces < 2 or plan.factors[r.ring_dim] % r.pieces:
                raise VerifyException(
                    f"rotation of {what} in {r.pieces} pieces must divide the "
                    f"factor {plan.factors[r.ring_dim]} of its ring dim d{r.ring_dim}"
                )
            if r.operand == OUTPUT and r.pieces != plan.factors[r.ring_dim]:
                raise VerifyException(
                    f"the output rotates on the whole ring d{r.ring_dim}: its pieces must be "
                    f"the factor {plan.factors[r.ring_dim]}, got {r.pieces}"
                )
            if plan.level_steps(r.outer) % r.pieces:
                raise VerifyException(
                    f"plan steps {plan.level_steps(r.outer)} must be a multiple of every "
                    f"rotation's pieces ({r.pieces}): paces must align"
                )


def _rotation(fields: tuple[int, ...]) -> Rotation:
    """A rotation from its `PlanAttr` fields (operand, ring, pieces[, 1 if outer])."""
    operand, ring, pieces, *outer = fields
    return Rotation(operand, ring, pieces, bool(outer))


def _verify_plan_level(plan: Plan, outer: bool) -> None:
    """One temporal dim of a plan attribute: a loop dim, 2 steps or more, a rotation."""
    d, steps = plan.level_dim(outer), plan.level_steps(outer)
    assert d is not None
    if not 0 <= d < len(plan.factors):
        raise VerifyException(f"plan shift dim d{d} is not a loop dim")
    if steps < 2 or not any(r.outer == outer for r in plan.rotations):
        raise VerifyException(f"a plan that shifts d{d} needs at least 2 steps and a rotation")


ESTIMATE_FIELDS = ("cycles", "compute", "exchange", "sync", "bytes")


@irdl_attr_definition
class EstimateAttr(ParametrizedAttribute):
    """The plan search's estimate for the chosen plan (cycles and bytes per core)."""

    name = "rtensor.estimate"

    cycles: IntAttr
    compute: IntAttr
    exchange: IntAttr
    sync: IntAttr
    bytes: IntAttr

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            "<" + ", ".join(f"{f} = {getattr(self, f).data}" for f in ESTIMATE_FIELDS) + ">"
        )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        found: list[Attribute] = []
        for i, field in enumerate(ESTIMATE_FIELDS):
            if i:
                parser.parse_punctuation(",")
            parser.parse_keyword(field)
            parser.parse_punctuation("=")
            found.append(IntAttr(parser.parse_integer()))
        parser.parse_punctuation(">")
        return found


@irdl_attr_definition
class LayoutAttr(ParametrizedAttribute):
    """Where a tensor's tiles live on a core grid; see the module docstring."""

    name = "rtensor.layout"

    grid: ArrayAttr[IntAttr]
    axes: ArrayAttr[IntAttr]
    tile: ArrayAttr[IntAttr]
    rotating: ArrayAttr[IntAttr]
    """Empty, or (dim, ring axis, pieces, steps), or (dim, ring axis, pieces, steps, phase)
    with 0 < phase < steps (printed `phase P`; a phase of 0 is not spelled)."""
    skew: ArrayAttr[ArrayAttr[IntAttr]]
    placement: PlacementAttr

    @staticmethod
    def from_layout(layout: Layout) -> LayoutAttr:
        r = layout.rotating
        return LayoutAttr(
            ints(layout.grid),
            encode_optional(layout.axes),
            ints(layout.tile),
            ints(() if r is None else _rotating_fields(r)),
            ArrayAttr(ints(s) for s in (() if r is None else r.skew)),
            PlacementAttr.of(layout.placement),
        )

    def to_layout(self, shape: Sequence[int]) -> Layout:
        rotating = None
        if self.rotating.data:
            dim, ring, pieces, steps, *phase = values(self.rotating)
            rotating = Rotating(dim, ring, pieces, steps, _skew_terms(self.skew), *phase)
        return Layout(
            shape=tuple(shape),
            grid=values(self.grid),
            axes=optional_values(self.axes),
            tile=values(self.tile),
            rotating=rotating,
            placement=self.placement.to_placement(),
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<grid ")
        print_int_list(printer, values(self.grid))
        printer.print_string(" axes ")
        print_dim_list(printer, optional_values(self.axes))
        printer.print_string(" tile ")
        print_int_list(printer, values(self.tile))
        if self.rotating.data:
            dim, ring, pieces, steps, *phase = values(self.rotating)
            printer.print_string(f" rotate {dim} ring d{ring} x {pieces} steps {steps} skew [")
            printer.print_string(
                ", ".join(f"(d{a}, {m}, {w})" for a, m, w in (values(s) for s in self.skew.data))
            )
            printer.print_string("]")
            if phase:
                printer.print_string(f" phase {phase[0]}")
        placement = self.placement.to_placement()
        if placement is not None:
            printer.print_string(f" {placement}")
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        parser.parse_keyword("grid")
        grid = parse_int_list(parser)
        parser.parse_keyword("axes")
        axes = parse_dim_list(parser)
        parser.parse_keyword("tile")
        tile = parse_int_list(parser)
        rotating: list[int] = []
        skew: list[tuple[int, int, int]] = []
        if parser.parse_optional_keyword("rotate") is not None:
            dim = parser.parse_integer()
            parser.parse_keyword("ring")
            ring = parse_dim(parser)
            parser.parse_keyword("x")
            pieces = parser.parse_integer()
            parser.parse_keyword("steps")
            steps = parser.parse_integer()
            parser.parse_keyword("skew")

            def term() -> tuple[int, int, int]:
                parser.parse_punctuation("(")
                axis = parse_dim(parser)
                parser.parse_punctuation(",")
                modulus = parser.parse_integer()
                parser.parse_punctuation(",")
                weight = parser.parse_integer()
                parser.parse_punctuation(")")
                return axis, modulus, weight

            skew = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, term)
            rotating = [dim, ring, pieces, steps]
            if parser.parse_optional_keyword("phase") is not None:
                rotating.append(parser.parse_integer())
        placement = parse_placed_clause(parser)
        parser.parse_punctuation(">")
        return (
            ints(grid),
            encode_optional(axes),
            ints(tile),
            ints(rotating),
            ArrayAttr(ints(s) for s in skew),
            PlacementAttr.of(placement),
        )

    def verify(self) -> None:
        grid = values(self.grid)
        if not grid or any(g < 1 for g in grid):
            raise VerifyException(f"layout grid must be positive integers, got {list(grid)}")
        verify_placement("the layout's", grid, self.placement)
        axes = optional_values(self.axes)
        tile = values(self.tile)
        if len(axes) != len(tile):
            raise VerifyException("layout needs one axis entry and one tile size per tensor dim")
        for a in axes:
            if a is not None and not 0 <= a < len(grid):
                raise VerifyException(f"layout axis d{a} is not an axis of grid {list(grid)}")
        used = [a for a in axes if a is not None]
        if len(set(used)) != len(used):
            raise VerifyException("two tensor dims of a layout cannot split along one grid axis")
        if any(t < 1 for t in tile):
            raise VerifyException(f"layout tile sizes must be positive, got {list(tile)}")
        if self.rotating.data:
            if len(self.rotating.data) not in (4, 5):
                raise VerifyException("layout rotation needs (dim, ring, pieces, steps[, phase])")
            dim, ring, pieces, steps, *phase = values(self.rotating)
            if phase and not 0 < phase[0] < steps:
                raise VerifyException(
                    f"rotation phase {phase[0]} must lie between 1 and the steps ({steps}) - 1 "
                    "(a phase of 0 is not spelled)"
                )
            if not 0 <= dim < len(tile):
                raise VerifyException(f"rotating dim {dim} is not a tensor dim")
            if not 0 <= ring < len(grid) or ring in used:
                raise VerifyException(
                    f"ring axis d{ring} must be a grid axis the tensor does not split on"
                )
            if (
                pieces < 2
                or steps < 2
                or grid[ring] % pieces
                or steps % pieces
                or tile[dim] % steps
            ):
                raise VerifyException(
                    f"rotation in {pieces} pieces over {steps} steps must divide the ring axis "
                    f"({grid[ring]} cores), the steps and the tile ({tile[dim]})"
                )
            for axis, modulus, weight in _skew_terms(self.skew):
                if not 0 <= axis < len(grid) or modulus < 1 or weight < 0:
                    raise VerifyException(
                        f"skew term (d{axis}, {modulus}, {weight}) needs a grid axis, a positive "
                        "modulus and a non-negative weight"
                    )
            _verify_skew(_skew_terms(self.skew), grid, ring, pieces, steps)
        elif self.skew.data:
            raise VerifyException("only a rotating layout has a skew")


def _verify_skew(
    skew: tuple[tuple[int, int, int], ...], grid: tuple[int, ...], ring: int, pieces: int,
    steps: int,
) -> None:
    """A skew is the start chunk o(x) of its steps (`Plan.skew`): one term (ring, pieces,
    steps / pieces) per rotation along them, on distinct grid axes whose size the pieces
    divide, among them the layout's own ring."""
    axes = [axis for axis, _, _ in skew]
    spelt = "[" + ", ".join(f"(d{a}, {m}, {w})" for a, m, w in skew) + "]"
    if len(set(axes)) != len(axes):
        raise VerifyException(f"skew {spelt} names a grid axis twice")
    for axis, modulus, weight in skew:
        if grid[axis] % modulus or steps % modulus or weight != steps // modulus:
            raise VerifyException(
                f"skew term (d{axis}, {modulus}, {weight}) is not a ring of {modulus} cores "
                f"dividing grid axis d{axis} ({grid[axis]} cores) and the steps ({steps}), "
                f"weighted steps / {modulus} = {steps // modulus}"
            )
    if (ring, pieces, steps // pieces) not in skew:
        raise VerifyException(
            f"skew {spelt} has no term (d{ring}, {pieces}, {steps // pieces}) for the "
            "layout's own ring"
        )


def _rotating_fields(r: Rotating) -> tuple[int, ...]:
    """The `rotating` parameter of a layout: the phase only when it is not 0."""
    return (r.dim, r.ring_axis, r.pieces, r.steps, *((r.phase,) if r.phase else ()))


def _skew_terms(skew: ArrayAttr[ArrayAttr[IntAttr]]) -> tuple[tuple[int, int, int], ...]:
    """The (grid axis, modulus, weight) terms of a skew (the parser reads three per term)."""
    return tuple((axis, modulus, weight) for axis, modulus, weight in map(values, skew.data))


def layout_problem(layout: Layout) -> str | None:
    """Why `layout` cannot hold its tensor (rank, dynamic or uncovered dims), or None."""
    if len(layout.tile) != len(layout.shape):
        return (
            f"layout of rank {len(layout.tile)} does not fit a tensor of rank {len(layout.shape)}"
        )
    for i, (size, tile, axis) in enumerate(
        zip(layout.shape, layout.tile, layout.axes, strict=True)
    ):
        if size < 0:
            return f"dim {i} is dynamic; only static shapes can be distributed"
        parts = 1 if axis is None else layout.grid[axis]
        if tile * parts < size:
            return f"tiles of {tile} over {parts} cores do not cover dim {i} of size {size}"
    return None


def print_shaped(printer: Printer, shape: Sequence[int], element_type: Attribute) -> None:
    """`4x8xf32`, or `f32` for rank 0."""
    printer.print_string("".join(f"{d}x" for d in shape))
    printer.print_attribute(element_type)


@irdl_attr_definition
class RTensorType(ParametrizedAttribute, TypeAttribute):
    """`!rtensor.tensor<64x128xf32, #rtensor.layout<...>>`: a distributed tensor."""

    name = "rtensor.tensor"

    tensor: TensorType
    layout: LayoutAttr

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        print_shaped(printer, self.tensor.get_shape(), self.tensor.get_element_type())
        printer.print_string(", ")
        printer.print_attribute(self.layout)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        parser.parse_punctuation("<")
        shape, elem = parser.parse_ranked_shape()
        parser.parse_punctuation(",")
        layout = parser.parse_attribute()
        parser.parse_punctuation(">")
        return (TensorType(elem, shape), layout)

    def get_layout(self) -> Layout:
        return self.layout.to_layout(self.tensor.get_shape())

    def verify(self) -> None:
        problem = layout_problem(self.get_layout())
        if problem is not None:
            raise VerifyException(problem)

    @staticmethod
    def of(tensor: TensorType, layout: Layout) -> RTensorType:
        return RTensorType(tensor, LayoutAttr.from_layout(layout))


def rtensor_type(value: SSAValue) -> RTensorType:
    """The type of a distributed-tensor operand or result (its op's constraint checked it)."""
    return SSAValue.get(value, type=RTensorType).type


def tensor_type(value: SSAValue) -> TensorType:
    """The type of a host-tensor operand or result (its op's constraint checked it)."""
    return SSAValue.get(value, type=TensorType).type


def _stores(wide: TensorType, narrow: TensorType) -> bool:
    """Whether `narrow` stores the tensor type `wide`: same shape and element type, or f16
    storage of f32 values (the conversion rounds to nearest even, or widens back exactly)."""
    elems = (wide.get_element_type(), narrow.get_element_type())
    return wide.get_shape() == narrow.get_shape() and (elems[0] == elems[1] or elems == (f32, f16))


def _check_same_tensor(op: str, host: TensorType, chip: RTensorType) -> None:
    """A host tensor and its distributed form have the same shape; the distributed one may
    store the host's f32 values as f16."""
    if not _stores(host, chip.tensor):
        raise VerifyException(
            f"{op}: host tensor {host} and distributed tensor {chip.tensor} differ (only f32 "
            "may be stored as f16)"
        )


@irdl_op_definition
class DistributeOp(IRDLOperation):
    """Places a host tensor (an input or a weight) on the chip in the given layout."""

    name = "rtensor.distribute"
    source = operand_def(TensorType)
    result = result_def(RTensorType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def verify_(self) -> None:
        _check_same_tensor(self.name, tensor_type(self.source), rtensor_type(self.result))


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Loads a host tensor kept in off-chip memory (a weight, an `arith.constant`, or a
    function argument) into the given layout, starting where it stands in the program
    (`t10.offchip` / `t10.ahead` of the plan search put it there); `label` names it in
    reports (`<consumer>/load`)."""

    name = "rtensor.load"
    label = prop_def(StringAttr)
    source = operand_def(TensorType)
    result = result_def(RTensorType)
    assembly_format = "$label $source attr-dict `:` type($source) `->` type($result)"

    def verify_(self) -> None:
        if not is_host_tensor(self.source):
            raise VerifyException(
                f"rtensor.load '{self.label.data}': loads a host tensor (an arith.constant or "
                "a function argument) from off-chip memory; its source is neither"
            )
        _check_same_tensor(self.name, tensor_type(self.source), rtensor_type(self.result))


@irdl_op_definition
class CollectOp(IRDLOperation):
    """Gathers a distributed tensor back to the host."""

    name = "rtensor.collect"
    source = operand_def(RTensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def verify_(self) -> None:
        _check_same_tensor(self.name, tensor_type(self.result), rtensor_type(self.source))


@irdl_op_definition
class RelayoutOp(IRDLOperation):
    """Moves a distributed tensor into another layout (an all-to-all exchange); `label`
    names it in reports (`<consumer>/relayout`), `estimate` is the plan search's. With a
    `map`, the move also applies a view (the result is another tensor type). It may also
    round f32 into f16 storage (the rounding of an fp32 partial-sum accumulator, labelled
    with its operator and costed as an element-wise pass)."""

    name = "rtensor.relayout"
    label = prop_def(StringAttr)
    source = operand_def(RTensorType)
    result = result_def(RTensorType)
    estimate = opt_prop_def(EstimateAttr)
    map = opt_prop_def(AffineMapAttr)
    """A view folded into the move: `result[i] = source[map(i)]` (absent: the identity)."""
    guard = opt_prop_def(AffineMapAttr)
    """With `map`: where `guard(i)` leaves `guard_shape`, result[i] is 0 (a padded view)."""
    guard_shape = opt_prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$label $source (`map` $map^)? (`guard` $guard^ `in` $guard_shape)? attr-dict `:` "
        "type($source) `->` type($result)"
    )

    def view(self) -> View | None:
        return view_of(self.map, self.guard, self.guard_shape)

    def verify_(self) -> None:
        src, dst = rtensor_type(self.source), rtensor_type(self.result)
        check_guard(self.name, self.map, self.guard, self.guard_shape, dst.tensor)
        if self.map is not None:
            _check_view(
                "rtensor.relayout", self.map, src.tensor, dst.tensor, self.guard is not None
            )
        elif not _stores(src.tensor, dst.tensor):
            raise VerifyException(
                f"rtensor.relayout changes the tensor type from {src.tensor} to {dst.tensor} "
                "(without a view map it may only round f32 to f16)"
            )


def view_of(
    view: AffineMapAttr | None,
    guard: AffineMapAttr | None,
    guard_shape: DenseArrayBase[I64] | None,
) -> View | None:
    """The `View` that a relayout's `map`, `guard` and `guard_shape` properties describe."""
    if view is None:
        return None
    if guard is None or guard_shape is None:
        return View(view.data)
    return View(view.data, guard.data, ints_of(guard_shape))


def check_guard(
    op: str,
    view: AffineMapAttr | None,
    guard: AffineMapAttr | None,
    guard_shape: DenseArrayBase[I64] | None,
    result: TensorType,
) -> None:
    """A guard comes with a map and a shape, and has one result per shape entry."""
    if (guard is None) != (guard_shape is None) or (guard is not None and view is None):
        raise VerifyException(f"{op}: a guard needs a map, a guard map and a guard shape")
    if guard is None or guard_shape is None:
        return
    if guard.data.num_dims != len(result.get_shape()) or len(guard.data.results) != len(
        ints_of(guard_shape)
    ):
        raise VerifyException(
            f"{op}: guard {guard.data} must map the result's {len(result.get_shape())} dims to "
            f"one index per guard shape entry {list(ints_of(guard_shape))}"
        )


def _check_view(
    op: str, view: AffineMapAttr, source: TensorType, result: TensorType, padded: bool = False
) -> None:
    """`view` reads a `source` tensor as a `result` tensor of the same element type."""
    if source.element_type != result.element_type:
        raise VerifyException(
            f"{op}: a view keeps the element type, got {source.element_type} -> "
            f"{result.element_type}"
        )
    problem = map_problem(view.data, source.get_shape(), result.get_shape(), padded)
    if problem is not None:
        raise VerifyException(
            f"{op}: map {view.data} is not a view of {source} as {result}: {problem}"
        )


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A data-movement-only operator before planning: `result[i] = source[map(i)]` (see
    `t10.common.view_maps`; Transpose, Reshape, Slice, … in the ONNX frontend).

    Views are not planned by themselves: the plan search costs each one as part of the
    layout transition into every operator that reads it, and convert-linalg-to-rtensor folds
    chains of views into the `rtensor.relayout` (with the composed map) that feeds that
    operator, so a view costs what the exchange it implies costs, and nothing when the data
    already lies where it is read."""

    name = "rtensor.view"
    label = prop_def(StringAttr)
    source = operand_def(TensorType)
    map = prop_def(AffineMapAttr)
    padded = opt_prop_def(UnitAttr)
    """The map may read outside the source; those result elements are 0."""
    result = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$label $source `map` $map (`padded` $padded^)? attr-dict `:` type($source) `->` "
        "type($result)"
    )

    def verify_(self) -> None:
        _check_view(
            self.name,
            self.map,
            tensor_type(self.source),
            tensor_type(self.result),
            self.padded is not None,
        )


GATHER_KIND_FORMAT = "(`elements` $elements^)? (`axis` $axis^)? (`nd` `batch_dims` $batch_dims^)?"
"""How a gather's kind reads (`t10.common.gathers`): `axis A` (ONNX Gather), `elements axis
A` (GatherElements), `nd batch_dims B` (GatherND)."""


class GatherKindOp(IRDLOperation):
    """The kind of a gather of runtime ids (`rtensor.gather`, `core.gather`): exactly one of
    `axis` (with `elements`: a GatherElements) and `batch_dims` (a GatherND)."""

    axis = opt_prop_def(IntegerAttr[I64])
    batch_dims = opt_prop_def(IntegerAttr[I64])
    elements = opt_prop_def(UnitAttr)

    def kind(self) -> GatherKind:
        """The kind (a VerifyException when the properties name none or two)."""
        if (self.axis is None) == (self.batch_dims is None):
            raise VerifyException(f"{self.name}: give exactly one of axis and nd batch_dims")
        if self.batch_dims is not None:
            if self.elements is not None:
                raise VerifyException(f"{self.name}: elements gathers along an axis, not nd")
            return GatherKind("nd", self.batch_dims.value.data)
        assert self.axis is not None
        mode = "elements" if self.elements is not None else "rows"
        return GatherKind(mode, self.axis.value.data)


def gather_kind_properties(kind: GatherKind) -> dict[str, Attribute]:
    """The properties that spell `kind` on a gather op."""
    if kind.mode == "nd":
        return {"batch_dims": IntegerAttr(kind.n, i64)}
    props: dict[str, Attribute] = {"axis": IntegerAttr(kind.n, i64)}
    if kind.mode == "elements":
        props["elements"] = UnitAttr()
    return props


@irdl_op_definition
class GatherOp(GatherKindOp):
    """A data-dependent move, an ONNX gather of runtime indices (token ids into an embedding
    table; `t10.common.gathers` says what each kind reads): `axis A` is `Gather`
    (`result[i.., j.., k..] = table[i.., ids[j..], k..]` with `j` at dim A), `elements axis A`
    `GatherElements`, `nd batch_dims B` `GatherND`. Negative ids count from the end of the dim
    they index, out-of-range ids are a runtime error.

    Before planning (builtin tensors) it is not planned: like a view, the plan search costs it
    as the transition into each operator that reads it, an upper bound since the ids are only
    known at run time. convert-linalg-to-rtensor emits it on distributed tensors (table and
    ids placed by `host_layout`, the result in its reader's layout); `ids` hold the exact
    float of each integer."""

    name = "rtensor.gather"
    label = prop_def(StringAttr)
    table = operand_def(TensorType | RTensorType)
    ids = operand_def(TensorType | RTensorType)
    result = result_def(TensorType | RTensorType)
    estimate = opt_prop_def(EstimateAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        f"$label $table `[` $ids `]` {GATHER_KIND_FORMAT} attr-dict `:` `(` type($table) `,` "
        "type($ids) `)` `->` type($result)"
    )

    def tensors(self) -> tuple[TensorType, TensorType, TensorType]:
        """The table, ids and result tensor types (of distributed tensors: their tensors)."""

        def tensor(value: SSAValue) -> TensorType:
            t = value.type
            return t.tensor if isinstance(t, RTensorType) else tensor_type(value)

        return tensor(self.table), tensor(self.ids), tensor(self.result)

    def verify_(self) -> None:
        kinds = {isinstance(v.type, RTensorType) for v in (self.table, self.ids, self.result)}
        if len(kinds) != 1:
            raise VerifyException(
                "rtensor.gather: table, ids and result are all host tensors or all distributed"
            )
        table, ids, result = self.tensors()
        kind = self.kind()
        problem = kind.problem(table.get_shape(), ids.get_shape())
        if problem is not None:
            raise VerifyException(f"rtensor.gather: {problem}")
        want = kind.shape(table.get_shape(), ids.get_shape())
        if tuple(result.get_shape()) != want:
            raise VerifyException(
                f"rtensor.gather: gathering {ids} from {table} ({kind}) gives shape "
                f"{list(want)}, not {result}"
            )
        if result.get_element_type() != table.get_element_type():
            raise VerifyException(
                f"rtensor.gather: the result's element type {result.get_element_type()} is not "
                f"the table's {table.get_element_type()}"
            )
        if ids.get_element_type() not in (f32, f16):
            raise VerifyException(
                f"rtensor.gather: ids hold integers as floats (f32), got {ids.get_element_type()}"
            )


@irdl_op_definition
class GenericOp(IRDLOperation):
    """A tensor expression (as `linalg.generic`) over distributed tensors, run by `plan`.

    The operands' and the result's layouts must be the ones the plan gives them.
    """

    name = "rtensor.generic"
    inputs = var_operand_def(RTensorType)
    result = result_def(RTensorType)
    indexing_maps = prop_def(ArrayAttr[AffineMapAttr])
    iterator_types = prop_def(ArrayAttr[IteratorTypeAttr])
    plan = prop_def(PlanAttr)
    estimate = opt_prop_def(EstimateAttr)
    label = prop_def(StringAttr)
    body = region_def("single_block")
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$label `(` $inputs `)` attr-dict `:` `(` type($inputs) `)` `->` type($result) $body"
    )

    def verify_(self) -> None:
        what = f"rtensor.generic '{self.label.data}'"
        plan = self.plan.to_plan()
        expr = check_plan(what, self, plan)
        inputs = {rtensor_type(v).tensor.get_element_type() for v in self.inputs}
        want = f32 if rounds_partials(expr, plan) else next(iter(inputs), None)
        got = rtensor_type(self.result).tensor.get_element_type()
        if want is not None and got != want:
            why = " (an fp32 partial-sum accumulator)" if want == f32 else ""
            raise VerifyException(
                f"{what}: the result's element type is {got}, expected {want}{why}"
            )


class PlannedOp(Protocol):
    """What `check_plan` reads of a generic over distributed tensors that a plan runs
    (`rtensor.generic`, `cshift.compute_shift`)."""

    @property
    def inputs(self) -> VarOperand: ...
    @property
    def result(self) -> OpResult: ...
    @property
    def indexing_maps(self) -> ArrayAttr[AffineMapAttr]: ...
    @property
    def iterator_types(self) -> ArrayAttr[IteratorTypeAttr]: ...
    @property
    def body(self) -> Region: ...


def check_plan(what: str, op: PlannedOp, plan: Plan) -> TensorExpr:
    """The tensor expression of `op`, after checking that `plan` can run it and gives its
    operands and result their layouts."""
    assert isinstance(op, Operation)  # both ops are: lets `tensor_expr_of` name it
    inputs = [rtensor_type(v) for v in op.inputs]
    result = rtensor_type(op.result)
    try:
        expr = tensor_expr_of(
            op,
            op.indexing_maps,
            tuple(it.data == IteratorType.PARALLEL for it in op.iterator_types.data),
            tuple(t.tensor for t in inputs),
            result.tensor,
            op.body.block,
        )
    except T10Error as e:
        raise VerifyException(f"{what}: {e}") from None
    problem = plan_problem(expr, plan)
    if problem is not None:
        raise VerifyException(f"{what}: {problem}")
    expected = (*input_layouts(expr, plan), output_layout(expr, plan))
    actual = (*(t.get_layout() for t in inputs), result.get_layout())
    for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
        if want != got:
            operand = "result" if i == len(expected) - 1 else f"input #{i}"
            raise VerifyException(
                f"{what}: {operand} has layout {LayoutAttr.from_layout(got)} but the plan "
                f"gives it {LayoutAttr.from_layout(want)}"
            )
    return expr


def epilogue_input_layout(out: Layout, amap: AffineMap, shape: tuple[int, ...]) -> Layout:
    """The layout an epilogue input read at `amap` (over the output's dims; results are dims
    or the constant 0) needs: each of its dims lies like the output dim it is read at."""
    axes: list[int | None] = []
    tile: list[int] = []
    for e in amap.results:
        position = e.position if isinstance(e, AffineDimExpr) else None
        axes.append(None if position is None else out.axes[position])
        tile.append(1 if position is None else out.tile[position])
    return Layout(shape, out.grid, tuple(axes), tuple(tile), placement=out.placement)


@irdl_op_definition
class EpilogueOp(IRDLOperation):
    """An element-wise chain (a bias add, an activation, a residual add) applied to an
    operator's finished output on the cores that hold its tiles: `inputs[0]` is that output,
    the other inputs lie on the same grid, each dim like the output dim it is read at, so no
    data moves. The result has the layout of `inputs[0]`; maps and body as an element-wise
    `linalg.generic` over the output's dims (the first and the output map are the identity).

    ```
      output tile on core x:  out[x] = body(acc[x], bias[x], ...)   (acc: inputs[0])
    ```
    """

    name = "rtensor.epilogue"
    inputs = var_operand_def(RTensorType)
    result = result_def(RTensorType)
    indexing_maps = prop_def(ArrayAttr[AffineMapAttr])
    label = prop_def(StringAttr)
    body = region_def("single_block")
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$label `(` $inputs `)` attr-dict `:` `(` type($inputs) `)` `->` type($result) $body"
    )

    def verify_(self) -> None:
        what = f"rtensor.epilogue '{self.label.data}'"
        types = [rtensor_type(v) for v in self.inputs]
        if not types:
            raise VerifyException(f"{what}: needs the operator's output as its first input")
        maps = [m.data for m in self.indexing_maps.data]
        rank = len(types[0].tensor.get_shape())
        identity = AffineMap.identity(rank)
        if len(maps) != len(types) + 1 or maps[0] != identity or maps[-1] != identity:
            raise VerifyException(
                f"{what}: needs one map per input and the result, the first and the last the "
                f"identity over {rank} dims"
            )
        try:
            expr = tensor_expr_of(
                self,
                self.indexing_maps,
                (True,) * rank,
                tuple(t.tensor for t in types),
                rtensor_type(self.result).tensor,
                self.body.block,
            )
        except T10Error as e:
            raise VerifyException(f"{what}: {e}") from None
        assert expr.kind is ExprKind.ELEMENTWISE
        if self.result.type != types[0]:
            raise VerifyException(
                f"{what}: the result type {self.result.type} must be the first input's "
                f"{types[0]}"
            )
        out = types[0].get_layout()
        if out.rotating is not None:
            raise VerifyException(f"{what}: the operator's output may not rotate")
        for i, (t, amap) in enumerate(zip(types[1:], maps[1:], strict=False), start=1):
            want = epilogue_input_layout(out, amap, tuple(t.tensor.get_shape()))
            if t.get_layout() != want:
                raise VerifyException(
                    f"{what}: input #{i} has layout {LayoutAttr.from_layout(t.get_layout())}; "
                    f"read at {amap} it must lie like the output: {LayoutAttr.from_layout(want)}"
                )


def through_views(value: SSAValue) -> tuple[SSAValue, View | None]:
    """The value that `value` views through a chain of `rtensor.view` ops, and the composed
    view (`value[i] = source[map(i)]`, guarded by the padded views; None when `value` is no
    view)."""
    if not isinstance(value.owner, ViewOp):
        return value, None
    composed = View(AffineMap.identity(len(tensor_type(value).get_shape())))
    while isinstance(value.owner, ViewOp):
        view = value.owner
        composed = composed.through(
            view.map.data, view.padded is not None, tensor_type(view.source).get_shape()
        )
        value = view.source
    return value, composed


RTensor = Dialect(
    "rtensor",
    [DistributeOp, LoadOp, CollectOp, RelayoutOp, ViewOp, GatherOp, GenericOp, EpilogueOp],
    [PlanAttr, PlacementAttr, EstimateAttr, LayoutAttr, RTensorType],
)
