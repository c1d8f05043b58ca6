"""Making and saving the PNG figures of `t10 run --plot` and `t10 explain --plot`
(matplotlib's object API: no global pyplot state)."""

from __future__ import annotations

import os
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


def plot_format(path: str) -> str:
    """The image format matplotlib writes `path` in: its suffix's (PNG without one); a
    T10Error for a suffix matplotlib does not write."""
    suffix = os.path.splitext(path)[1]
    fmt = suffix[1:].lower() if suffix else "png"
    formats = new_figure(1, 1).canvas.get_supported_filetypes()
    if fmt not in formats:
        raise T10Error(f"cannot write the plot '{path}': matplotlib writes no '{suffix}' "
                       f"files; give a file name ending in one of "
                       f"{', '.join('.' + f for f in sorted(formats))}")
    return fmt


def save_figure(fig: Any, path: str, dpi: int) -> None:
    """Lay `fig` out and write it whole to `path` (`output_file`) in `plot_format(path)`."""
    fmt = plot_format(path)
    fig.tight_layout()
    with output_file(path, "the plot") as fresh:
        fig.savefig(fresh, dpi=dpi, format=fmt)
