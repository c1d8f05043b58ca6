"""`CompileOptions`: the compile options are declared once (the passes share their fields and
defaults), parse from a textual pipeline as the passes' options, and are checked in one place
with messages that name the pass, or the command-line option from the driver."""

from __future__ import annotations

import dataclasses

import pytest
from xdsl.utils.arg_spec import parse_pipeline

from t10.driver import compile_model
from t10.errors import T10Error
from t10.examples.models import mlp
from t10.passes.t10_compile import T10Compile
from t10.passes.t10_fuse_epilogue import T10FuseEpilogue
from t10.passes.t10_plan_search import T10PlanSearch
from t10.planning.compile_options import DEFAULTS, CompileOptions, PlanOptions
from t10.tools.explain import explain


def _defaults(cls: type) -> dict[str, object]:
    return {f.name: f.default for f in dataclasses.fields(cls)}


def test_the_passes_take_the_options_with_their_defaults() -> None:
    plan = _defaults(PlanOptions)
    assert _defaults(T10Compile) == _defaults(CompileOptions)
    assert {k: v for k, v in _defaults(T10PlanSearch).items() if k in plan} == plan
    assert set(_defaults(T10PlanSearch)) - set(plan) == {"reuse", "jobs"}
    fuse = _defaults(T10FuseEpilogue)
    assert {k: fuse[k] for k in ("chip", "min_utilization", "precision", "partials")} == {
        k: plan[k] for k in ("chip", "min_utilization", "precision", "partials")
    }


def test_a_textual_pipeline_parses_into_the_options() -> None:
    (spec,) = parse_pipeline("t10-plan-search{chip=test-16 planner=vgm}")
    search = T10PlanSearch.from_pass_spec(spec)
    assert search.plan_options() == PlanOptions(chip="test-16", planner="vgm").plan_options()
    (spec,) = parse_pipeline("t10-compile{precision=fp16 partials=fp16 epilogues=false}")
    compile_pass = T10Compile.from_pass_spec(spec)
    assert dataclasses.asdict(compile_pass) == dataclasses.asdict(
        CompileOptions(precision="fp16", partials="fp16", epilogues=False)
    )


def test_options_are_given_by_name() -> None:
    with pytest.raises(TypeError):
        CompileOptions("test-16")  # type: ignore[misc]
    assert dataclasses.replace(DEFAULTS, chip="test-16").chip == "test-16"


BAD = [
    (CompileOptions(precision="bf8"), "--precision: unknown precision 'bf8'; choose one of "
     "fp32, fp16"),
    (CompileOptions(partials="bf8"), "--partials: unknown partials 'bf8'; choose one of "
     "fp32, fp16"),
    (CompileOptions(partials="fp16"), "--partials: partials 'fp16' are narrower than the "
     "'fp32' storage; use partials=fp32 or wider"),
    (CompileOptions(planner="greedy"), "t10-plan-search: unknown planner 'greedy'; choose one "
     "of t10, replicate, t10-multidim, vgm"),
    (CompileOptions(min_utilization=1.5), "t10-plan-search: min-utilization must be between "
     "0 and 1, got 1.5"),
    (CompileOptions(search="optimal"), "t10-plan-search: unknown search 'optimal'; choose one "
     "of greedy, exact, fastest"),
    (CompileOptions(planner="vgm", search="greedy"), "t10-plan-search: planner=vgm chooses "
     "every operator's plan on its own; search is a rule of the other planners"),
    (CompileOptions(temporaries=0.5), "t10-plan-search: temporaries (the share of SRAM an "
     "operator may use while it runs) is a rule of planner=replicate, not of planner=t10"),
    (CompileOptions(planner="replicate", temporaries=1.5), "t10-plan-search: temporaries must "
     "be a share of SRAM in (0, 1], not 1.5"),
]


@pytest.mark.parametrize(("options", "message"), BAD)
def test_validate_names_the_option_from_the_driver(options: CompileOptions, message: str) -> None:
    with pytest.raises(T10Error) as e:
        options.validate()
    assert str(e.value) == message


@pytest.mark.parametrize(("options", "message"), BAD)
def test_validate_names_the_pass(options: CompileOptions, message: str) -> None:
    with pytest.raises(T10Error) as e:
        options.validate("t10-compile")
    assert str(e.value) == "t10-compile: " + message.split(": ", 1)[1]


def test_the_driver_refuses_options_given_one_by_one() -> None:
    with pytest.raises(T10Error) as e:
        compile_model(mlp(), "test-16")  # type: ignore[arg-type]
    assert str(e.value) == ("the compile options must be a CompileOptions, not str 'test-16': "
                            "pass CompileOptions(chip=..., ...)")
    with pytest.raises(T10Error, match="must be a CompileOptions, not str 'test-16'"):
        explain(mlp(), "fc1/MatMul", "test-16")  # type: ignore[arg-type]


def test_validate_loads_the_chip() -> None:
    assert CompileOptions(chip="test-16").validate().cores == 16
    with pytest.raises(T10Error, match="unknown chip 'nosuch'"):
        CompileOptions(chip="nosuch").validate()
