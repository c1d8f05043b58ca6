"""Making and saving the PNG figures of `t10 run --plot` and `t10 explain --plot`
(matplotlib's object API: no global pyplot state)."""

from __future__ import annotations

from typing import Any

from t10.common.files import output_file
from t10.errors import T10Error


def new_figure(width: float, height: float) -> Any:
    """A matplotlib `Figure`; a T10Error naming the extra to install if matplotlib is not."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise T10Error("--plot needs matplotlib, not installed: pip install "
                       "'t10-xdsl[bench]'") from None
    return Figure(figsize=(width, height))


def save_figure(fig: Any, path: str, dpi: int) -> None:
    """Lay `fig` out and write it whole to `path` (`output_file`; its format from its
    suffix, PNG without one): an unwritable path is a T10Error."""
    fig.tight_layout()
    with output_file(path, "the plot") as fresh:
        fig.savefig(fresh, dpi=dpi)
