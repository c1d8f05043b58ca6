"""The public Python API (`t10.__all__`) and the embedding example of docs/embedding.md."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys
from types import ModuleType

import numpy as np
import pytest
from xdsl.passes import ModulePass

import t10
from t10.universe import PASSES

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "embedding"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("embedding_pipeline", EXAMPLE / "pipeline.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def test_every_public_name_resolves() -> None:
    for name in t10.__all__:
        value = getattr(t10, name)
        assert getattr(value, "__name__", name) == name or name == "DIALECTS"
    assert sorted(dir(t10)) == sorted({*dir(t10)} | set(t10.__all__))


def test_public_pass_classes_are_the_registered_passes() -> None:
    public = {
        cls.name: cls
        for cls in (getattr(t10, n) for n in t10.__all__)
        if isinstance(cls, type) and issubclass(cls, ModulePass)
    }
    assert public == {name: factory() for name, factory in PASSES.items()}


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 't10' has no attribute 'plan_search'"):
        _ = t10.plan_search  # type: ignore[attr-defined]


def test_import_is_lazy() -> None:
    """`import t10` (done by xdsl-opt's plugin) loads none of the compiler."""
    code = "import sys, t10; print(sorted(m for m in sys.modules if m.startswith('t10')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the package and the PEP 562 helper that loads its names on first use, nothing else
    assert out.stdout.strip() == "['t10', 't10.common', 't10.common.lazy_names']"


@pytest.mark.parametrize("chip", ["test-16", "ipu-mk2"])
def test_embedding_example_matches_numpy(chip: str) -> None:
    example = _example()
    x = np.random.default_rng(1).standard_normal((16, 32)).astype(np.float32)
    result = example.compile_and_simulate((EXAMPLE / "mlp.mlir").read_text(), chip, x)
    np.testing.assert_allclose(result.outputs["y"], example.reference(x), rtol=1e-5, atol=1e-5)
    names = [op.name for op in result.report.ops]
    assert names[0] == "matmul0" and "bias_relu" in names and names[-1] == "matmul1"
    assert result.report.total_cycles == sum(op.cycles for op in result.report.ops)


def test_the_package_says_it_is_typed() -> None:
    """PEP 561: `t10/py.typed` is in the package and in its package data, so a typed
    downstream compiler type-checks its use of t10 instead of seeing it untyped."""
    root = pathlib.Path(t10.__file__).parent
    assert (root / "py.typed").is_file()
    pyproject = (root.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '"t10" = ["py.typed"]' in pyproject
