"""ONNX → ``func`` + ``linalg.generic`` / ``tensor`` / ``arith`` (the linalg-level contract).

See ``docs/DESIGN.md`` ("Frontend output contract"). Every compute node becomes one or more
``linalg.generic`` ops whose indexing-map results are loop dims or the constant ``0``:

* contractions (MatMul, Gemm, the im2col Conv of ``ops_conv`` and of each ConvTranspose
  phase, the input and recurrent products of the unrolled RNN / GRU / LSTM of
  ``ops_recurrent``) have the body ``mulf`` → ``addf(acc, p)`` → ``yield`` and a zero splat
  ``arith.constant`` as ``outs``;
* element-wise ops (those of ``ops_elementwise``, the Gemm epilogue, and the comparisons,
  logic, Where, Cast and CastLike of ``ops_logical``) are all-parallel generics with a
  ``tensor.empty`` as ``outs`` and numpy broadcasting; their scalar bodies use ``arith`` ops,
  and ``math`` ops (exp, tanh, erf, sqrt, powf, cos, sin, ...) where ``arith`` has none.

The supported op types are the keys of ``SUPPORTED_OPS``; docs/ops.md lists them (generated
by ``ops_doc``).

Static folding: a node whose inputs are all compile-time known (initializers, ``Constant``
nodes, results of folded nodes, empty values; the inputs of which ``Shape``, ``Size``,
``EyeLike`` and ``CastLike`` read only the shape and element type, since both are static:
``folding.SHAPE_READERS``) is evaluated at import time by ``folding.evaluate`` (the ONNX reference
implementation, or numpy where that fails) and its outputs become known constants of any
element type. Empty (zero-size) values are known constants too: they have nothing to compute.
A known float32 constant read by compute becomes an ``arith.constant`` holding the exact bytes
(one value for a splat); other known constants serve only as attribute-like
inputs (a shape, axes, a ``Where`` condition) or feed further folding. ``Identity`` and
inference ``Dropout`` are pass-throughs; ``Where`` is an element-wise ``select``, ``Expand`` a
broadcasting identity generic.

INT64 / INT32 / INT16 / UINT16 / INT8 / UINT8 / BOOL runtime values (graph inputs tagged
``t10.onnx_type``, comparison results, casts, quantised values: ``ops_quantize``) are held as
the exact float32 of each integer; only the ops registered with a range rule (``integers=``;
docs/ops.md marks them; Gather indices become an ``rtensor.gather``) read or produce them:
``integer_ranges`` proves every value they compute exact (its static range analysis).

FLOAT16 values (fp16-typed models) are float values too: known ones fold in fp16, as the model
says, and are widened exactly where compute reads them; a FLOAT16 value computed at run time is
rounded to fp16 by the operator that writes it, which only fp16 storage does, so the module
names the first (``t10.fp16_values``) and compiles at ``--precision fp16`` only; FLOAT16 graph
inputs and outputs are tagged ``t10.onnx_type`` float16.

Modules: ``loading`` (reading and checking a model), ``folding`` (static folding),
``importer`` (the importer state, its interface for op lowerings and the op registry),
``integer_ranges`` (the range analysis of runtime integers),
``graph`` (the walk over the graph: arguments, nodes, results), ``ops_doc`` (the op table of
docs/ops.md) and one ``ops_*`` module per kind of op; a new op is one function registered with
``@importer.lowering`` in the module of its kind (imported below), then
``python -m t10.frontend.ops_doc`` to list it in docs/ops.md.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

import onnx
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.frontend import Frontend

# Each ops_* module registers its lowerings in importer.SUPPORTED_OPS when imported.
from t10.frontend import (
    ops_attention,  # noqa: F401
    ops_batchnorm,  # noqa: F401
    ops_compile_time,  # noqa: F401
    ops_conv,  # noqa: F401
    ops_conv_transpose,  # noqa: F401
    ops_einsum,  # noqa: F401
    ops_elementwise,  # noqa: F401
    ops_indexing,  # noqa: F401
    ops_logical,  # noqa: F401
    ops_matmul,  # noqa: F401
    ops_passthrough,  # noqa: F401
    ops_pooling,  # noqa: F401
    ops_quantize,  # noqa: F401
    ops_recurrent,  # noqa: F401
    ops_reductions,  # noqa: F401
    ops_resample,  # noqa: F401
    ops_scatter,  # noqa: F401
    ops_topk,  # noqa: F401
    ops_views,  # noqa: F401
)
from t10.frontend.folding import foldable_nodes
from t10.frontend.graph import check_supported_ops, import_graph
from t10.frontend.importer import SUPPORTED_OPS
from t10.frontend.loading import (
    SUPPORTED_OPSETS,
    accept_onnxruntime_ops,
    check_form,
    check_kernels,
    check_model,
    fix_dims,
    in_topological_order,
    load_external_data,
    parse_model,
    read_model,
    strict_shape_inference,
    weightless,
)

__all__ = ["SUPPORTED_OPS", "SUPPORTED_OPSETS", "OnnxFrontend", "import_onnx"]


def import_onnx(
    model: str | os.PathLike[str] | onnx.ModelProto,
    input_ranges: Mapping[str, tuple[int, int]] | None = None,
    dims: Mapping[str, int] | None = None,
) -> ModuleOp:
    """Import an ONNX model (a file path or a ``ModelProto``) as a linalg-level module.
    ``input_ranges``: the ranges [lo, hi] the values of integer inputs lie in, declared by the
    user, so that integer arithmetic on them is proven exact (``integer_ranges``); recorded as
    the argument's ``t10.range``, which the simulator checks every input against. ``dims``:
    the sizes of symbolic dimensions by name (``batch``, ``sequence``, ...), since the
    compiler needs static shapes (``loading.fix_dims``)."""
    if isinstance(model, onnx.ModelProto):
        name = model.graph.name or "<in-memory model>"
        load_external_data(model, name, None)  # refuses external data: there is no folder
        return _import_model(model, name, input_ranges, dims)
    path = pathlib.Path(model)
    return _import_model(read_model(path), str(path), input_ranges, dims)


@dataclass(frozen=True)
class OnnxFrontend(Frontend):
    """The ``xdsl-opt`` frontend for ``*.onnx`` files."""

    name = "onnx"

    def parse(self, ctx: Context, input: IO[bytes], input_name: str = "stdin") -> ModuleOp:
        base = pathlib.Path(input_name).parent if input_name not in ("", "stdin") else None
        return _import_model(parse_model(input.read(), input_name, base_dir=base), input_name)


def _import_model(
    model: onnx.ModelProto,
    name: str,
    input_ranges: Mapping[str, tuple[int, int]] | None = None,
    dims: Mapping[str, int] | None = None,
) -> ModuleOp:
    check_form(model, name)
    model = in_topological_order(model)
    foldable = foldable_nodes(model.graph)
    check_supported_ops(model, name, foldable)
    skeleton = weightless(model)
    fix_dims(skeleton, dims or {}, name)
    accept_onnxruntime_ops(skeleton)
    check_model(skeleton, name)
    inferred = strict_shape_inference(skeleton, name)
    check_kernels(inferred, name)
    return import_graph(inferred, name, foldable, model.graph.initializer, input_ranges)
