"""`t10.planning.operator_alternatives` (what `t10 explain` prints) measures a module as it was
planned: it refuses a module planned otherwise, or not at all, and a planner that trades no
plans between operators."""

from __future__ import annotations

import pytest

from t10.driver import CompileOptions, compile_model
from t10.errors import T10Error
from t10.examples.models import mlp
from t10.frontend import import_onnx
from t10.planning import operator_alternatives


def test_the_alternatives_hold_the_plan_the_search_recorded() -> None:
    options = CompileOptions(chip="test-16")
    module = compile_model(mlp(), options, emit="linalg").module
    found = operator_alternatives(module, options, "fc2/Relu")
    assert found.operator == "fc2/MatMul+fc2/Add+fc2/Relu"
    assert found.nodes == ("fc2/MatMul", "fc2/Add", "fc2/Relu")
    assert sum(a.chosen for a in found.alternatives) == 1
    assert [name for name, _ in found.layouts] == ["input 0", "input 1", "epilogue input 0",
                                                   "output"]
    assert [name for name, _ in found.moves_out] == ["fc3/MatMul+fc3/Add"]


@pytest.mark.parametrize(
    ("planned", "asked", "message"),
    [
        (CompileOptions(chip="test-16"), CompileOptions(chip="test-16", precision="fp16"),
         "operator_alternatives: the module was planned with t10.precision = fp32, not fp16 "
         "as the options say"),
        (CompileOptions(chip="test-16"), CompileOptions(chip="ipu-mk2"),
         "operator_alternatives: the module was planned with t10.chip = test-16, not ipu-mk2 "
         "as the options say"),
        (None, CompileOptions(chip="test-16"),
         "operator_alternatives: the module is not planned (no 't10.chip'): plan it first "
         '(plan_module, or compile_model(..., emit="linalg"))'),
        (CompileOptions(chip="test-16", planner="vgm"),
         CompileOptions(chip="test-16", planner="vgm"),
         "operator_alternatives: planner vgm plans each operator on its own; alternatives are "
         "measured for the planners that trade plans (t10, replicate, t10-multidim)"),
    ],
)
def test_refusals(planned: CompileOptions | None, asked: CompileOptions, message: str) -> None:
    if planned is None:
        module = import_onnx(mlp())
    else:
        module = compile_model(mlp(), planned, emit="linalg").module
    with pytest.raises(T10Error) as error:
        operator_alternatives(module, asked, "fc1/MatMul")
    assert str(error.value) == message
