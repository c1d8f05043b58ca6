"""The planner registry (`t10.planning.planners`): a planner defined and registered outside t10
is offered and run everywhere a built-in one is, and no t10 module outside the planners' own
checks a planner by its name."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import onnx
import pytest

import t10
import t10.tools.opt
from t10.examples.models import mlp
from t10.planning.planners import planner, planner_names, register_planner, registry
from t10.planning.planners.replicate import REPLICATE
from t10.planning.planners.vgm import VGM
from t10.tools.cli import main

PACKAGE = Path(t10.__file__).parent
NAMES = ("vgm", "replicate", "t10-multidim")
"""The planner names scanned for (`"t10"` is too common a string to scan)."""
ALLOWED = (PACKAGE / "planning" / "planners",)
"""Where a planner's name may be written: the planners' own modules and the registry."""
OP = "fc1/MatMul"

# a module, no larger than the test needs, that t10-plan-search plans
MATMUL = """builtin.module {
  func.func @main(%x: tensor<16x32xf32> {t10.name = "input"}) -> (tensor<16x8xf32> {t10.name = "output"}) {
    %w = arith.constant dense<1.000000e+00> : tensor<32x8xf32>
    %z = arith.constant dense<0.000000e+00> : tensor<16x8xf32>
    %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<16x32xf32>, tensor<32x8xf32>) outs(%z : tensor<16x8xf32>) attrs = {t10.name = "fc/MatMul"} {
    ^bb0(%a: f32, %c: f32, %acc: f32):
      %p = arith.mulf %a, %c : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    } -> tensor<16x8xf32>
    func.return %mm : tensor<16x8xf32>
  }
}
"""  # noqa: E501


@pytest.fixture(scope="module")
def test_planners() -> Iterator[tuple[str, str]]:
    """`test-replicate` (a copy of replicate) and `test-vgm` (of vgm), registered here, for
    this module's tests only."""
    added = [dataclasses.replace(REPLICATE, name="test-replicate", bench=()),
             dataclasses.replace(VGM, name="test-vgm", bench=())]
    for p in added:
        register_planner(p)
    yield added[0].name, added[1].name
    for p in added:
        registry._PLANNERS.pop(p.name)  # pyright: ignore[reportPrivateUsage]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("registry") / "mlp.onnx"
    onnx.save_model(mlp(batch=4, sizes=(32, 48, 16)), path)
    return path


def test_registered_after_the_built_in_planners(test_planners: tuple[str, str]) -> None:
    assert planner_names() == ("t10", "replicate", "t10-multidim", "vgm", *test_planners)


@pytest.mark.parametrize("command", ["run", "compile", "explain"])
def test_the_cli_offers_it(
    command: str,
    test_planners: tuple[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # no line wrapped (at a hyphen)
    assert main([command, "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--planner {t10,replicate,t10-multidim,vgm,test-replicate,test-vgm}" in text
    assert "test-replicate: spatial partitions only;" in text
    assert "with --planner replicate or test-replicate: the share" in text


def test_t10_run_plans_with_it_as_with_the_planner_it_copies(
    model: Path, test_planners: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", str(model), "--chip", "test-16", "--check"]
    assert main([*argv, "--planner", "replicate"]) == 0
    replicated = capsys.readouterr().out
    assert main([*argv, "--planner", test_planners[0], "--temporaries", "0.6"]) == 0
    copied = capsys.readouterr().out
    assert "; planner test-replicate;" in copied
    assert copied.replace("test-replicate", "replicate") == replicated


def test_its_options_are_checked_by_what_it_declares(
    model: Path, test_planners: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy of vgm takes no search, nor (like vgm) temporaries."""
    argv = ["run", str(model), "--chip", "test-16", "--planner", test_planners[1]]
    assert main([*argv, "--search", "greedy"]) == 2
    assert ("--planner test-vgm chooses every operator's plan on its own: it takes no --search"
            in capsys.readouterr().err)
    assert main([*argv, "--temporaries", "0.5"]) == 2
    assert ("--temporaries is a rule of --planner replicate or --planner test-replicate, not "
            "of --planner test-vgm" in capsys.readouterr().err)


def test_t10_explain_takes_it(
    model: Path, test_planners: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["explain", str(model), "--op", OP, "--chip", "test-16"]
    assert main([*argv, "--planner", "replicate"]) == 0
    replicated = capsys.readouterr().out
    assert main([*argv, "--planner", test_planners[0]]) == 0
    assert capsys.readouterr().out == replicated
    assert main([*argv, "--planner", test_planners[1]]) == 1
    assert capsys.readouterr().err.strip().endswith(
        "t10 explain covers the planners that trade plans between operators (t10, replicate, "
        "t10-multidim, test-replicate); test-vgm plans each operator on its own"
    )


def test_t10_plan_search_takes_it(
    tmp_path: Path, test_planners: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "matmul.mlir"
    source.write_text(MATMUL)
    planned = {}
    for name in ("replicate", *test_planners):
        pipeline = f"t10-plan-search{{chip=test-16 planner={name}}}"
        assert t10.tools.opt.main([str(source), "-p", pipeline]) == 0
        planned[name] = capsys.readouterr().out
    assert 't10.planner = "test-replicate"' in planned["test-replicate"]
    assert planned["test-replicate"].replace("test-replicate", "replicate") == planned["replicate"]
    assert "t10.home_cores = 16" in planned["test-vgm"]  # its hook: vgm's homes


def test_an_unknown_planner_lists_the_registered_ones(
    tmp_path: Path, test_planners: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "matmul.mlir"
    source.write_text(MATMUL)
    pipeline = "t10-plan-search{chip=test-16 planner=nosuch}"
    assert t10.tools.opt.main([str(source), "-p", pipeline]) == 1
    assert ("t10-plan-search: unknown planner 'nosuch'; choose one of t10, replicate, "
            "t10-multidim, vgm, test-replicate, test-vgm") in capsys.readouterr().err


def test_the_built_in_planners_declare_what_they_did() -> None:
    """The declarations that replaced the former tables, value for value."""
    former = {
        "t10": (1, "greedy", None, True),
        "replicate": (0, "fastest", 0.6, False),
        "t10-multidim": (2, "greedy", None, True),
        "vgm": (0, None, None, False),
    }
    for name, declared in former.items():
        p = planner(name)
        assert (p.temporal_dims, p.search, p.temporaries, p.cold_weights) == declared, name


def planner_name_literals(package: Path, allowed: tuple[Path, ...]) -> list[str]:
    """Every string literal that is a planner's name in `package`'s modules outside
    `allowed`, as "file:line: 'name'"."""
    found = []
    for path in sorted(package.rglob("*.py")):
        if any(path.is_relative_to(a) for a in allowed):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and node.value in NAMES:
                found.append(f"{path.relative_to(package.parent)}:{node.lineno}: {node.value!r}")
    return found


def test_no_module_outside_the_planners_names_a_planner() -> None:
    """A list or check of planners reads the registry: a planner's name written elsewhere is
    a list or a check that a new planner would miss."""
    found = planner_name_literals(PACKAGE, ALLOWED)
    assert not found, "planner names outside t10/planning/planners:\n" + "\n".join(found)
