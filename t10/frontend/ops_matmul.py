"""Contractions: MatMul and Gemm. Each is one ``linalg.generic`` with the body ``mulf`` →
``addf(acc, p)`` → ``yield`` over a zero splat ``arith.constant`` (``Importer.contraction``);
Gemm's scaling and bias are an element-wise epilogue."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr

from t10.frontend.importer import (
    BodyBuilder,
    Importer,
    Shape,
    broadcast_exprs,
    broadcast_shapes,
    lowering,
    node_attributes,
    node_inputs,
)


@lowering("MatMul")
def lower_matmul(imp: Importer, node: onnx.NodeProto) -> None:
    """numpy.matmul semantics: N-D batched with batch broadcasting, 1-D operands promoted."""
    result, shape = matmul(imp, node, imp.use(node.input[0]), imp.use(node.input[1]))
    imp.define(node.output[0], result, shape)


def matmul(
    imp: Importer, node: onnx.NodeProto, lhs: tuple[SSAValue, Shape], rhs: tuple[SSAValue, Shape]
) -> tuple[SSAValue, Shape]:
    """``lhs @ rhs`` (numpy.matmul) as one contraction, and its shape."""
    (a, sa), (b, sb) = lhs, rhs
    if not sa or not sb:
        raise imp.node_error(node, "MatMul operands must have rank >= 1")
    has_m, has_n = len(sa) >= 2, len(sb) >= 2
    k = sa[-1]
    k_b = sb[-2] if has_n else sb[0]
    if k != k_b:
        raise imp.node_error(
            node, f"contraction sizes differ: {list(sa)} @ {list(sb)} ({k} vs {k_b})"
        )
    batch_a, batch_b = sa[:-2], sb[:-2]
    batch = broadcast_shapes(batch_a, batch_b)
    if batch is None:
        raise imp.node_error(
            node, f"batch dims of {list(sa)} @ {list(sb)} are not broadcast-compatible"
        )
    nb = len(batch)
    # Loop order: batch..., m?, n?, k (reduction last).
    batch_loops = list(range(nb))
    d_m = nb if has_m else None
    d_n = nb + int(has_m) if has_n else None
    d_k = nb + int(has_m) + int(has_n)
    dim = AffineExpr.dimension

    a_exprs = broadcast_exprs(batch_a, batch_loops, batch)
    if d_m is not None:
        a_exprs.append(dim(d_m))
    a_exprs.append(dim(d_k))
    b_exprs = broadcast_exprs(batch_b, batch_loops, batch)
    b_exprs.append(dim(d_k))
    if d_n is not None:
        b_exprs.append(dim(d_n))

    out_exprs = [dim(d) for d in batch_loops]
    out_shape = list(batch)
    if d_m is not None:
        out_exprs.append(dim(d_m))
        out_shape.append(sa[-2])
    if d_n is not None:
        out_exprs.append(dim(d_n))
        out_shape.append(sb[-1])
    result = imp.contraction(a, a_exprs, b, b_exprs, out_exprs, tuple(out_shape), d_k)
    return result, tuple(out_shape)


@lowering("Gemm", attributes={"alpha", "beta", "transA", "transB"})
def lower_gemm(imp: Importer, node: onnx.NodeProto) -> None:
    attrs = node_attributes(node)
    alpha = float(attrs.get("alpha", 1.0))
    beta = float(attrs.get("beta", 1.0))
    for key, value in (("alpha", alpha), ("beta", beta)):
        if not np.isfinite(value):
            raise imp.node_error(
                node,
                f"{key} = {value} is not finite: the product of an infinite scale depends on "
                "where it is applied (t10 scales A·B, onnxruntime each term of its sum), so "
                "the result is not defined",
            )
    trans_a = bool(attrs.get("transA", 0))
    trans_b = bool(attrs.get("transB", 0))
    names = node_inputs(node)
    (a, sa), (b, sb) = imp.use(names[0]), imp.use(names[1])
    if len(sa) != 2 or len(sb) != 2:
        raise imp.node_error(node, f"Gemm operands must be 2-D, got {list(sa)} and {list(sb)}")
    m, k = (sa[1], sa[0]) if trans_a else sa
    k_b, n = (sb[1], sb[0]) if trans_b else sb
    if k != k_b:
        raise imp.node_error(
            node,
            f"contraction sizes differ: A{list(sa)} (transA={int(trans_a)}) and "
            f"B{list(sb)} (transB={int(trans_b)}) ({k} vs {k_b})",
        )
    out_shape = (m, n)
    dim = AffineExpr.dimension
    d_m, d_n, d_k = dim(0), dim(1), dim(2)
    a_exprs = [d_k, d_m] if trans_a else [d_m, d_k]
    b_exprs = [d_n, d_k] if trans_b else [d_k, d_n]

    c: tuple[SSAValue, Shape] | None = None
    if len(names) > 2 and beta != 0.0:
        c = imp.use(names[2])
        if broadcast_shapes(c[1], out_shape) != out_shape:
            raise imp.node_error(
                node,
                f"bias C of shape {list(c[1])} is not unidirectionally broadcastable to "
                f"{list(out_shape)}",
            )
    needs_epilogue = alpha != 1.0 or c is not None
    product = imp.contraction(
        a, a_exprs, b, b_exprs, [d_m, d_n], out_shape, 2, 0 if needs_epilogue else None
    )
    if not needs_epilogue:
        imp.define(node.output[0], product, out_shape)
        return

    def body(bb: BodyBuilder, args: Sequence[SSAValue]) -> SSAValue:
        p = args[0] if alpha == 1.0 else bb.mul(bb.const(alpha), args[0])
        if len(args) == 1:
            return p
        cv = args[1] if beta == 1.0 else bb.mul(bb.const(beta), args[1])
        return bb.add(p, cv)

    ins = [(product, out_shape)] + ([c] if c is not None else [])
    imp.define(node.output[0], imp.elementwise(ins, out_shape, body, index=1), out_shape)
