"""Index maps of views: `result[i] = source[map(i)]`.

A view (Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Slice, Split) moves no arithmetic:
each result element is one source element. Its map is an affine map from result indices to
source indices built from `+`, `*` by a constant, `floordiv` and `mod` by a positive
constant, so that views compose (`AffineMap.compose`) and print as MLIR affine maps:

```
  Transpose perm [0, 2, 1, 3]      (d0, d1, d2, d3) -> (d0, d2, d1, d3)
  Reshape [8, 16, 768] -> [8, 16, 12, 64]
                                   (d0, d1, d2, d3) -> (d0, d1, d2 * 64 + d3)
  Slice [4:12:2] of a [16] tensor  (d0) -> (d0 * 2 + 4)
```

`View` composes chains of views (and the zero fill of padded ones) and gathers a viewed
tensor with numpy (the simulator's); `map_problem` checks a map reads inside its source;
`affine_fit` finds the map of known gather indices that are affine in their position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from t10.errors import T10Error

Shape = tuple[int, ...]


def transpose_map(perm: Sequence[int]) -> AffineMap:
    """`result = transpose(source, perm)`: result dim j is source dim perm[j]."""
    inverse = [0] * len(perm)
    for j, p in enumerate(perm):
        inverse[p] = j
    return AffineMap(len(perm), 0, tuple(AffineExpr.dimension(j) for j in inverse))


def loops_map(loops: int, read: Sequence[int]) -> AffineMap:
    """The map of ``loops`` loop dims reading a source whose dim i is loop ``read[i]`` (the
    other loops broadcast it)."""
    return AffineMap(loops, 0, tuple(AffineExpr.dimension(d) for d in read))


def reshape_map(source: Shape, result: Shape) -> AffineMap:
    """Row-major reshape. Dims are matched in groups of equal element counts (a split or a
    merge of neighbouring dims), so a map only mixes the dims that a reshape really mixes."""
    assert prod(source) == prod(result), (source, result)
    exprs: list[AffineExpr] = []
    i = j = 0
    while i < len(source) or j < len(result):
        src_group, dst_group = [i], [j]
        if i < len(source) and j < len(result):
            i, j = i + 1, j + 1
            while prod(source[g] for g in src_group) != prod(result[g] for g in dst_group):
                if prod(source[g] for g in src_group) < prod(result[g] for g in dst_group):
                    src_group.append(i)
                    i += 1
                else:
                    dst_group.append(j)
                    j += 1
        elif i < len(source):  # trailing size-1 source dims
            src_group, dst_group, i = [i], [], i + 1
        else:  # trailing size-1 result dims read nothing
            src_group, dst_group, j = [], [j], j + 1
        exprs.extend(
            _regroup([result[g] for g in dst_group], dst_group, [source[g] for g in src_group])
        )
    return AffineMap(len(result), 0, tuple(exprs))


def _regroup(dst_sizes: list[int], dst_dims: list[int], src_sizes: list[int]) -> list[AffineExpr]:
    """Source index exprs of one group: the row-major position over the group's result dims,
    cut into the group's source dims."""
    linear: AffineExpr = AffineExpr.constant(0)
    for size, d in zip(dst_sizes, dst_dims, strict=True):
        linear = linear * size + AffineExpr.dimension(d) if size > 1 else linear
    exprs: list[AffineExpr] = []
    for k, size in enumerate(src_sizes):
        inner = prod(src_sizes[k + 1 :])
        e = linear // inner if inner > 1 else linear
        if k > 0 and size != prod(dst_sizes) // inner:
            e = e % size
        exprs.append(e if size > 1 else AffineExpr.constant(0))
    return exprs


def slice_map(source: Shape, starts: Sequence[int], steps: Sequence[int]) -> AffineMap:
    """`result[i] = source[start + i * step]` per dim (a step may be negative)."""
    return AffineMap(
        len(source),
        0,
        tuple(
            AffineExpr.dimension(d) * step + start
            for d, (start, step) in enumerate(zip(starts, steps, strict=True))
        ),
    )


# --------------------------------------------------------------------------------------------
# Evaluation and checks
# --------------------------------------------------------------------------------------------


def affine_fit(values: np.ndarray, dims: Sequence[int]) -> AffineExpr | None:
    """``values`` (integers, one per position of their array) as ``c + Σ a_j · d_{dims[j]}``,
    array axis ``j`` read by loop dim ``dims[j]``, if they are exactly that (known Gather
    indices that are a view); None otherwise."""
    ints = np.asarray(values, dtype=np.int64)
    if ints.size == 0:
        return None
    positions = np.indices(ints.shape, dtype=np.int64)
    base = int(ints.item(0))
    expr = AffineExpr.constant(base)
    fitted = np.full(ints.shape, base, dtype=np.int64)
    for axis, dim in enumerate(dims):
        if ints.shape[axis] < 2:
            continue
        step = int(np.take(ints, 1, axis=axis).item(0)) - base
        if step:
            expr = expr + AffineExpr.dimension(dim) * step
            fitted = fitted + positions[axis] * step
    return expr if np.array_equal(fitted, ints) else None


def eval_expr(expr: AffineExpr, dims: Sequence[np.ndarray]) -> np.ndarray:
    """`expr` evaluated elementwise over numpy index arrays (one per map dim)."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return np.asarray(expr.value, dtype=np.int64)
    assert isinstance(expr, AffineBinaryOpExpr), expr
    lhs, rhs = eval_expr(expr.lhs, dims), eval_expr(expr.rhs, dims)
    match expr.kind:
        case AffineBinaryOpKind.Add:
            return lhs + rhs
        case AffineBinaryOpKind.Mul:
            return lhs * rhs
        case AffineBinaryOpKind.FloorDiv:
            return lhs // rhs
        case AffineBinaryOpKind.Mod:
            return lhs % rhs
        case AffineBinaryOpKind.CeilDiv:
            return -(-lhs // rhs)
    raise AssertionError(expr.kind)


def _bounds(expr: AffineExpr, sizes: Sequence[int]) -> tuple[int, int] | None:
    """Interval [lo, hi] of `expr` over dims in [0, size); None: not a supported expr."""
    if isinstance(expr, AffineDimExpr):
        return 0, sizes[expr.position] - 1
    if isinstance(expr, AffineConstantExpr):
        return expr.value, expr.value
    if not isinstance(expr, AffineBinaryOpExpr):
        return None
    lhs, rhs = _bounds(expr.lhs, sizes), _bounds(expr.rhs, sizes)
    if lhs is None or rhs is None:
        return None
    if expr.kind is AffineBinaryOpKind.Add:
        return lhs[0] + rhs[0], lhs[1] + rhs[1]
    if expr.kind is AffineBinaryOpKind.Mul:
        corners = [a * b for a in lhs for b in rhs]
        return min(corners), max(corners)
    if rhs[0] != rhs[1] or rhs[0] <= 0:
        return None  # floordiv / mod by a positive constant only
    c = rhs[0]
    if expr.kind is AffineBinaryOpKind.FloorDiv:
        return lhs[0] // c, lhs[1] // c
    if expr.kind is AffineBinaryOpKind.Mod:
        return (lhs[0], lhs[1]) if 0 <= lhs[0] and lhs[1] < c else (0, c - 1)
    return None


def map_problem(
    view: AffineMap, source: Shape, result: Shape, padded: bool = False
) -> str | None:
    """Why `view` is not a view of a `source` tensor as a `result` tensor (None: it is);
    `padded` views may read outside the source (those elements are zero)."""
    if view.num_symbols:
        return "the map must have no symbols"
    if view.num_dims != len(result):
        return f"the map has {view.num_dims} dims but the result has rank {len(result)}"
    if len(view.results) != len(source):
        return f"the map has {len(view.results)} results but the source has rank {len(source)}"
    for k, (expr, size) in enumerate(zip(view.results, source, strict=True)):
        bounds = _bounds(expr, result)
        if bounds is None:
            return (
                f"result {k} ({expr}) is not built from dims, constants, +, * and floordiv/mod "
                "by a positive constant"
            )
        if not padded and (bounds[0] < 0 or bounds[1] >= size):
            return (
                f"result {k} ({expr}) ranges over [{bounds[0]}, {bounds[1]}], outside [0, {size})"
            )
    return None


# --------------------------------------------------------------------------------------------
# Chains of views
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    """A chain of views composed into one: `result[i] = source[map(i)]` where every result of
    `guard(i)` lies inside `guard_shape`, and 0 elsewhere (the zero fill of padded views: a
    Concat is the sum of its inputs, each padded into the result)."""

    map: AffineMap
    guard: AffineMap | None = None
    guard_shape: tuple[int, ...] = ()

    def through(self, inner: AffineMap, padded: bool, inner_source: Shape) -> View:
        """This chain continued by a view `inner` (closer to the source), which reads
        `inner_source`; `padded`: `inner` may read outside it (zero fill)."""
        mapped = inner.compose(self.map)
        guard, shape = self.guard, self.guard_shape
        if padded:
            guard = mapped if guard is None else AffineMap(
                guard.num_dims, 0, (*guard.results, *mapped.results)
            )
            shape = (*shape, *inner_source)
        return View(mapped, guard, shape)

    def valid(self, index: Sequence[np.ndarray]) -> np.ndarray | bool:
        """Where the view reads its source (False: a zero-filled element)."""
        if self.guard is None:
            return True
        ok: np.ndarray | bool = True
        for expr, size in zip(self.guard.results, self.guard_shape, strict=True):
            value = eval_expr(expr, index)
            ok = ok & (value >= 0) & (value < size)
        return ok

    def gather(self, source: np.ndarray, result: Shape, what: str = "a view") -> np.ndarray:
        """The viewed tensor of shape `result`. A read outside `source` where the guard admits
        it (IR whose map and guard disagree with its shapes) is an error naming `what`."""
        grids = list(np.indices(result, dtype=np.int64)) if result else []
        valid = np.broadcast_to(self.valid(grids), result)
        index: list[np.ndarray] = []
        for k, (expr, size) in enumerate(zip(self.map.results, source.shape, strict=True)):
            at = np.where(valid, np.broadcast_to(eval_expr(expr, grids), result), 0)
            outside = (at < 0) | (at >= size)
            if outside.any():
                first = tuple(int(i) for i in np.argwhere(outside)[0])
                raise T10Error(
                    f"{what}: its map reads index {int(at[first])} of source dim {k} (size "
                    f"{size}) at result index {list(first)}, outside the source where its "
                    "guard admits the element"
                )
            index.append(at)
        return np.where(valid, source[tuple(index)], np.zeros((), dtype=source.dtype))
