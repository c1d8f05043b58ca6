"""The supported-op table of docs/ops.md, rendered from the op registry (``SUPPORTED_OPS``,
filled by the ``ops_*`` modules that importing the package ``t10.frontend`` imports).

The table sits between ``BEGIN`` and ``END`` in docs/ops.md; ``python -m t10.frontend.ops_doc``
rewrites it there, and a unit test fails while the file and the registry disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from t10.common.files import write_text
from t10.errors import T10Error
from t10.frontend.graph import WHY_UNSUPPORTED
from t10.frontend.importer import SUPPORTED_OPS

__all__ = ["BEGIN", "END", "OPS_DOC", "render_table", "with_table"]

OPS_DOC = Path(__file__).resolve().parents[2] / "docs" / "ops.md"
BEGIN = "<!-- BEGIN ops table: generated from SUPPORTED_OPS by python -m t10.frontend.ops_doc -->"
END = "<!-- END ops table -->"


def render_table() -> str:
    """One row per supported op type, in name order: the module of its lowering, the
    attributes it accepts and whether it may compute on runtime integers; then the op types
    the design refuses, with the reason the error gives."""
    rows = [
        f"{len(SUPPORTED_OPS)} op types.",
        "",
        "| op | lowered in | attributes | runtime integers / BOOL |",
        "|---|---|---|---|",
    ]
    for op in sorted(SUPPORTED_OPS):
        entry = SUPPORTED_OPS[op]
        module = entry.lower.__module__.rsplit(".", 1)[-1]
        if entry.attributes is None:
            attributes = "(folded at compile time only: see below)"
        else:
            attributes = ", ".join(f"`{a}`" for a in sorted(entry.attributes)) or "none"
        integers = "yes" if entry.integers is not None else "no"
        rows.append(f"| `{op}` | `{module}` | {attributes} | {integers} |")
    rows += ["", "Refused by design (the error says why):", "", "| op | why |", "|---|---|"]
    rows += [f"| `{op}` | {why} |" for op, why in sorted(WHY_UNSUPPORTED.items())]
    return "\n".join(rows) + "\n"


def with_table(text: str) -> str:
    """``text`` (docs/ops.md) with the lines between its markers replaced by the table."""
    start, end = text.find(BEGIN + "\n"), text.find("\n" + END)
    if start < 0 or end < start:
        raise T10Error(
            f"the ops doc has no table markers: put '{BEGIN}' and '{END}' on lines of their own"
        )
    head = text[: start + len(BEGIN) + 1]
    return head + render_table() + text[end + 1 :]


def main() -> int:
    """Rewrite the table in docs/ops.md (or the file given)."""
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else OPS_DOC
    try:
        write_text(path, with_table(path.read_text()), "the ops doc")
    except OSError as e:
        print(f"ops_doc: error: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 1
    except T10Error as e:
        print(f"ops_doc: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
