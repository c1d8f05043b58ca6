"""The shapes-only form of an ONNX model: its weights declared without their data, for
timing-only runs of models too big to write out (Llama 2 7B is 26 GB in float32).

A model in this form (``t10 zoo --shapes-only`` writes it; docs/zoo.md) has

- the metadata entry ``t10.weights`` = ``shapes-only`` (``model.metadata_props``), and
- each weight as an initializer of its element type and shape whose data is EXTERNAL, at the
  location ``__t10_shapes_only__``, which names no file: there is no data anywhere.

Both must be there: a model without the entry reads such a location as a missing file. The
frontend imports each such weight as an elided constant (``dense_resource<__elided__>``),
which the plan search and the lowerings need only the type of and a timing-only simulation
runs; a run with values refuses the model.
"""

from __future__ import annotations

import onnx

__all__ = ["LOCATION", "METADATA_KEY", "METADATA_VALUE", "declare", "declared", "in_form"]

METADATA_KEY = "t10.weights"
METADATA_VALUE = "shapes-only"
LOCATION = "__t10_shapes_only__"


def declare(name: str, data_type: int, dims: tuple[int, ...]) -> onnx.TensorProto:
    """The initializer ``name`` declared with its type and shape, without data."""
    t = onnx.TensorProto(name=name, data_type=data_type, dims=list(dims),
                         data_location=onnx.TensorProto.EXTERNAL)
    entry = t.external_data.add()
    entry.key, entry.value = "location", LOCATION
    return t


def in_form(model: onnx.ModelProto) -> bool:
    """Whether ``model`` declares the shapes-only form (its metadata entry)."""
    return any(p.key == METADATA_KEY and p.value == METADATA_VALUE for p in model.metadata_props)


def declared(t: onnx.TensorProto) -> bool:
    """Whether tensor ``t`` is declared without data (its location is ``LOCATION``)."""
    return t.data_location == onnx.TensorProto.EXTERNAL and any(
        e.key == "location" and e.value == LOCATION for e in t.external_data
    )
