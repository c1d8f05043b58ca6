"""docs/ops.md lists exactly the frontend's op registry (`SUPPORTED_OPS`): its table is
rendered from the registry (`t10.frontend.ops_doc`), so the list is kept in one place."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from t10.errors import T10Error
from t10.frontend import SUPPORTED_OPS
from t10.frontend.graph import WHY_UNSUPPORTED
from t10.frontend.ops_doc import BEGIN, END, OPS_DOC, render_table, with_table

REGENERATE = "regenerate it with: python -m t10.frontend.ops_doc"


def test_docs_ops_md_holds_the_registrys_table() -> None:
    text = OPS_DOC.read_text()
    assert with_table(text) == text, f"docs/ops.md disagrees with SUPPORTED_OPS: {REGENERATE}"


def test_the_table_has_one_row_per_registered_op() -> None:
    supported, refused = render_table().split("Refused by design")
    assert re.findall(r"^\| `([\w.]+)` \|", supported, re.MULTILINE) == sorted(SUPPORTED_OPS)
    assert re.findall(r"^\| `(\w+)` \|", refused, re.MULTILINE) == sorted(WHY_UNSUPPORTED)
    assert f"{len(SUPPORTED_OPS)} op types." in render_table()


def test_an_op_added_to_the_registry_makes_the_doc_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    text = OPS_DOC.read_text()
    monkeypatch.setitem(SUPPORTED_OPS, "NewOp", SUPPORTED_OPS["Relu"])
    assert with_table(text) != text
    assert "| `NewOp` | `ops_elementwise` | none | yes |" in with_table(text)


def test_the_generator_rewrites_only_the_table(tmp_path: Path) -> None:
    doc = tmp_path / "ops.md"
    doc.write_text(f"# before\n\n{BEGIN}\n| stale |\n{END}\n\nafter\n")
    run = subprocess.run(
        [sys.executable, "-m", "t10.frontend.ops_doc", str(doc)], capture_output=True, text=True
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert doc.read_text() == f"# before\n\n{BEGIN}\n{render_table()}{END}\n\nafter\n"


def test_a_doc_without_markers_is_refused_naming_them(tmp_path: Path) -> None:
    with pytest.raises(T10Error, match="no table markers"):
        with_table("# ops\n")
    doc = tmp_path / "ops.md"
    doc.write_text("# ops\n")
    run = subprocess.run(
        [sys.executable, "-m", "t10.frontend.ops_doc", str(doc)], capture_output=True, text=True
    )
    assert run.returncode == 1
    assert run.stderr.startswith("ops_doc: error: the ops doc has no table markers")
    assert run.stderr.count("\n") == 1
