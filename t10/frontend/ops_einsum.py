"""Einsum as the ops it names: one operand is a transpose view, or a sum-reduction (then a
view into the output's index order); two operands are one contraction when they share exactly
one summed index (``bhqd,bhkd->bhqk``), or an element-wise product of views when nothing is
summed (``i,j->ij``). Ellipses, repeated indices within an operand (diagonals), more operands,
several summed indices and an index summed over one operand only are refused."""

from __future__ import annotations

import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.errors import T10Error
from t10.frontend.importer import Importer, Shape, lowering, node_attributes


def _parse(
    imp: Importer, node: onnx.NodeProto, shapes: list[Shape]
) -> tuple[list[str], str, dict[str, int]]:
    """The operand terms, the output term (implicit: the indices used once, sorted) and the
    size of each index."""
    equation = node_attributes(node)["equation"].decode().replace(" ", "")
    lhs, arrow, out = equation.partition("->")
    terms = lhs.split(",")
    if not arrow:
        out = "".join(sorted(c for c in set(lhs) if lhs.count(c) == 1 and c != ","))

    def refuse(why: str) -> T10Error:
        return imp.node_error(node, f"equation '{equation}': {why}")

    if "." in equation:
        raise refuse("ellipses ('...') are not supported; name every index")
    if len(terms) != len(shapes):
        raise refuse(f"{len(terms)} operand terms for {len(shapes)} inputs")
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes, strict=True):
        if len(term) != len(shape):
            raise refuse(f"term '{term}' has {len(term)} indices for an input of shape {shape}")
        if len(set(term)) != len(term):
            raise refuse(f"term '{term}' repeats an index (a diagonal), which is not supported")
        for index, size in zip(term, shape, strict=True):
            if sizes.setdefault(index, size) != size:
                raise refuse(f"index '{index}' has sizes {sizes[index]} and {size}")
    if len(set(out)) != len(out) or any(c not in sizes for c in out):
        raise refuse(f"output '{out}' repeats an index or names one no operand has")
    if not out:
        raise refuse("a rank-0 (scalar) result is not supported")
    return terms, out, sizes


def _view_to(
    imp: Importer, value: tuple[SSAValue, Shape], term: str, order: str, index: int
) -> tuple[SSAValue, Shape]:
    """``value`` (indexed by ``term``) viewed in the index order ``order``, size 1 where it
    lacks an index (broadcast); itself when that changes nothing."""
    shape = tuple(value[1][term.index(c)] if c in term else 1 for c in order)
    if term == order:
        return value
    view = AffineMap(len(order), 0, tuple(AffineExpr.dimension(order.index(c)) for c in term))
    return imp.view(value[0], value[1], shape, view, index), shape


@lowering("Einsum", attributes={"equation"})
def lower_einsum(imp: Importer, node: onnx.NodeProto) -> None:
    inputs = [imp.use(n) for n in node.input]
    terms, out, sizes = _parse(imp, node, [s for _, s in inputs])
    summed = sorted(set("".join(terms)) - set(out))
    if len(inputs) == 1:
        term, value = terms[0], inputs[0]
        if summed:
            axes = [term.index(c) for c in summed]
            value = imp.reduction([value], axes, False, "sum", index=0)
            term = "".join(c for c in term if c not in summed)
        result, shape = _view_to(imp, value, term, out, 1)
    elif len(inputs) == 2 and not summed:
        pairs = zip(inputs, terms, strict=True)
        views = [_view_to(imp, v, t, out, k) for k, (v, t) in enumerate(pairs)]
        shape = tuple(sizes[c] for c in out)
        result = imp.elementwise(views, shape, lambda bb, x: bb.mul(x[0], x[1]), 2)
    elif len(inputs) == 2 and len(summed) == 1 and all(summed[0] in t for t in terms):
        loops = out + summed[0]
        exprs = [[AffineExpr.dimension(loops.index(c)) for c in t] for t in terms]
        shape = tuple(sizes[c] for c in out)
        outs = [AffineExpr.dimension(d) for d in range(len(out))]
        (a, _), (b, _) = inputs
        result = imp.contraction(a, exprs[0], b, exprs[1], outs, shape, len(out))
    else:
        raise imp.node_error(
            node,
            f"{len(inputs)} operands summing over {summed or 'nothing'}: t10 supports Einsum "
            "of one operand, or of two that share exactly one summed index (one contraction) "
            "or sum nothing (a product)",
        )
    imp.define(node.output[0], result, shape)
