"""Einsum as a view, a reduction, one contraction or a product (ops_einsum), against
onnxruntime on both chips; the forms it refuses name the node and the reason."""

from __future__ import annotations

import pytest
from helpers import randn, run_and_check, typed_model
from onnx import TensorProto, helper

from t10.errors import T10Error
from t10.frontend import import_onnx

F = TensorProto.FLOAT


def einsum(equation: str, *shapes: list[int]) -> tuple:
    names = ["a", "b", "c"][: len(shapes)]
    inputs = {n: (F, s) for n, s in zip(names, shapes, strict=True)}
    model = typed_model(
        [helper.make_node("Einsum", names, ["y"], name="es", equation=equation)], inputs, ["y"]
    )
    return model, {n: randn(*s, seed=k) for k, (n, (_, s)) in enumerate(inputs.items())}


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("bhqd,bhkd->bhqk", ([2, 3, 4, 5], [2, 3, 6, 5])),  # attention scores
        ("ij,jk", ([3, 4], [4, 5])),  # implicit output
        ("ki,kj->ij", ([4, 3], [4, 5])),
        ("bij,bjk->bik", ([2, 3, 4], [2, 4, 5])),  # the conformance cases' forms (DOUBLE there)
        ("ij->i", ([3, 4],)),
        ("ij->ji", ([3, 4],)),
        ("ijk->ki", ([2, 3, 4],)),  # a sum over j, then a transpose
        ("i,j->ij", ([3], [4])),  # outer product
        ("ij,j->ij", ([3, 4], [4])),
    ],
)
def test_einsum_matches_onnxruntime(chip: str, equation: str, shapes: tuple) -> None:
    model, inputs = einsum(equation, *shapes)
    run_and_check(model, chip, inputs)


@pytest.mark.parametrize(
    ("equation", "shapes", "message"),
    [
        ("...ij,...jk->...ik", ([2, 3, 4], [2, 4, 5]), "ellipses"),
        ("ii->i", ([3, 3],), "term 'ii' repeats an index"),
        ("ij,jk,kl->il", ([2, 3], [3, 4], [4, 5]), "3 operands summing over"),
        ("ijk,jkl->il", ([2, 3, 4], [3, 4, 5]), r"2 operands summing over \['j', 'k'\]"),
        ("ij,kl->ik", ([2, 3], [4, 5]), r"2 operands summing over \['j', 'l'\]"),
        ("ij->", ([2, 3],), "a rank-0"),
    ],
)
def test_einsum_refusals(equation: str, shapes: tuple, message: str) -> None:
    model, _ = einsum(equation, *shapes)
    with pytest.raises(T10Error, match=rf"node 'es' \(Einsum\): .*{message}"):
        import_onnx(model)
