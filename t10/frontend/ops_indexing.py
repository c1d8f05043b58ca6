"""Index-driven data movement: Tile (``i mod size``), and GatherND / GatherElements of known
indices that are affine in their position (``view_maps.affine_fit``, as for Gather in
``ops_views``) as views: e.g. the ``mask[batch, key]`` GatherND the dynamo exporter makes of
Hugging Face's mask functions. Runtime indices, and known ones of any other pattern (DeBERTa's
relative positions), are a gather, as for Gather (``rtensor.gather ... nd batch_dims B`` /
``elements axis A``)."""

from __future__ import annotations

import onnx
from xdsl.ir.affine import AffineExpr, AffineMap

from t10.common.gathers import GatherKind
from t10.common.view_maps import affine_fit
from t10.frontend.importer import Importer, checked_axes, node_attributes
from t10.frontend.ops_views import checked_indices, define_view, gather, view_lowering


@view_lowering("GatherND", {"batch_dims"})
def lower_gather_nd(imp: Importer, node: onnx.NodeProto) -> None:
    """``out[i, rest] = data[batch(i), idx[i][0], ..., idx[i][k-1], rest]``: each index
    component an affine expression of the output's index dims."""
    _, source = imp.use(node.input[0])
    batch = int(node_attributes(node).get("batch_dims", 0))
    kind = GatherKind("nd", batch)
    if not imp.is_known(node.input[1]):
        gather(imp, node, kind)
        return
    raw = imp.known_input(node, node.input[1], "indices")
    if (problem := kind.problem(source, raw.shape)) is not None:
        raise imp.node_error(node, f"known indices {list(raw.shape)}: {problem}")
    k = raw.shape[-1]
    lead = raw.ndim - 1  # the output's index dims
    dim = AffineExpr.dimension
    exprs = [dim(j) for j in range(batch)]
    for j in range(k):
        component = checked_indices(imp, node, raw[..., j], source[batch + j])
        fitted = affine_fit(component, range(lead))
        if fitted is None:
            gather(imp, node, kind)
            return
        exprs.append(fitted)
    exprs += [dim(lead + j - batch - k) for j in range(batch + k, len(source))]
    shape = tuple(int(d) for d in raw.shape[:-1]) + source[batch + k :]
    define_view(imp, node, shape, AffineMap(len(shape), 0, tuple(exprs)))


@view_lowering("GatherElements", {"axis"})
def lower_gather_elements(imp: Importer, node: onnx.NodeProto) -> None:
    """``out[i] = data[i with axis replaced by idx[i]]``."""
    _, source = imp.use(node.input[0])
    axis = checked_axes(imp, node, [int(node_attributes(node).get("axis", 0))], len(source))[0]
    kind = GatherKind("elements", axis)
    if not imp.is_known(node.input[1]):
        gather(imp, node, kind)
        return
    raw = imp.known_input(node, node.input[1], "indices")
    if (problem := kind.problem(source, raw.shape)) is not None:
        raise imp.node_error(node, f"known indices {list(raw.shape)}: {problem}")
    indices = checked_indices(imp, node, raw, source[axis])
    fitted = affine_fit(indices, range(indices.ndim))
    if fitted is None:
        gather(imp, node, kind)
        return
    dim = AffineExpr.dimension
    exprs = [fitted if d == axis else dim(d) for d in range(len(source))]
    shape = tuple(int(d) for d in indices.shape)
    define_view(imp, node, shape, AffineMap(len(shape), 0, tuple(exprs)))


@view_lowering("Tile")
def lower_tile(imp: Importer, node: onnx.NodeProto) -> None:
    """Each dim repeated ``repeats`` times: ``out[i] = x[i mod size]``."""
    _, source = imp.use(node.input[0])
    repeats = imp.known_ints(node, node.input[1], "repeats")
    if len(repeats) != len(source) or any(r < 0 for r in repeats):
        raise imp.node_error(
            node, f"repeats {repeats} must be one non-negative count per input dim {list(source)}"
        )
    dim = AffineExpr.dimension
    exprs = [
        dim(d) if r == 1 else AffineExpr.constant(0) if s == 1 else dim(d) % s
        for d, (s, r) in enumerate(zip(source, repeats, strict=True))
    ]
    shape = tuple(s * r for s, r in zip(source, repeats, strict=True))
    define_view(imp, node, shape, AffineMap(len(shape), 0, tuple(exprs)))
