"""The figures of `t10 run --plot`, `t10 explain --plot` and `t10 bench`, in one style
(matplotlib's object API: no pyplot; matplotlib's settings changed only while a figure is
drawn).

Every figure is drawn with text of at least `TEXT_PT` points, saved at `DPI` (so a point is
about two pixels), sized by what it shows up to `MAX_WIDTH` × `MAX_HEIGHT` inches and laid out
(constrained layout) so that its labels fit inside it: the image is exactly its size."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from t10.common.files import output_file
from t10.errors import T10Error

DPI = 150
TEXT_PT = 9
"""The smallest text (tick labels, legends); titles and axis labels are larger."""
MAX_WIDTH, MAX_HEIGHT = 10.0, 24.0
"""The largest figure, in inches (1500 × 3600 pixels)."""
STYLE = {
    "font.size": TEXT_PT + 1,
    "axes.titlesize": TEXT_PT + 2,
    "axes.labelsize": TEXT_PT + 1,
    "figure.titlesize": TEXT_PT + 2,
    "xtick.labelsize": TEXT_PT,
    "ytick.labelsize": TEXT_PT,
    "legend.fontsize": TEXT_PT,
    "legend.title_fontsize": TEXT_PT,
}
PHASE_COLOURS = {"compute": "tab:blue", "exchange": "tab:orange", "sync": "tab:gray",
                 "relayout": "tab:purple", "wait": "tab:red"}
"""The colour of each part of a run's cycles, in every figure."""


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise T10Error("plots need matplotlib, not installed: pip install "
                       "'t10-xdsl[bench]'") from None
    return matplotlib


def plot(path: str | Path, width: float, height: float, paint: Callable[[Any], None]) -> None:
    """A figure of `width` × `height` inches (at most the maximum) painted by `paint` in the
    style, written to `path` at `DPI` (an unwritable path is a T10Error)."""
    matplotlib = _matplotlib()
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(min(width, MAX_WIDTH), min(height, MAX_HEIGHT)),
                     layout="constrained")
        paint(fig)
        with output_file(path, "the plot") as fresh:
            fig.savefig(fresh, dpi=DPI)


def check_plot_path(path: str, option: str) -> None:
    """A plot is written in the format its suffix names (PNG without one): a T10Error naming
    `option` unless matplotlib writes it."""
    _matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(path).suffix.lower().removeprefix(".")
    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix and suffix not in formats:
        others = ", ".join(f".{f}" for f in sorted(formats) if f != "png")
        raise T10Error(f"{option} '{path}': matplotlib cannot write .{suffix} files: give a "
                       f"name ending in .png (or {others})")


def shorten(text: str, width: int) -> str:
    """`text`, or its start and its longer end around '…', `width` characters in all (a fused
    operator's name differs from another's mostly at its end: '/relayout', ':1')."""
    if len(text) <= width:
        return text
    head = (width - 1) // 3
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def message(fig: Any, text: str) -> None:
    """`fig` says `text` instead of plotting (there is nothing to plot)."""
    fig.text(0.5, 0.5, text, ha="center", va="center", wrap=True)


def log_ticks(axis: Any, fmt: str) -> None:
    """Ticks of a log-scaled `axis` at 1, 2 and 5 times the powers of ten, labelled `fmt`
    (a str.format pattern of `x`)."""
    from matplotlib.ticker import LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    axis.set_major_formatter(fmt)
    axis.set_minor_formatter(NullFormatter())
