"""`t10 bench` end to end: run a sweep's cases (on Ray, or in this process), then write
bench.json, bench.md and the plots, and return the Markdown the command prints."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from t10.bench.capped import ProcessExecutor
from t10.bench.models import Progress, Sweep, run_sweep
from t10.bench.plots import PLOTS, VARY_PLOT, write_plots, write_vary_plot
from t10.bench.ray import RayExecutor, require
from t10.bench.table import format_markdown, make_rows, to_json
from t10.common.files import write_text
from t10.errors import T10Error

__all__ = ["FILES", "files", "run_and_write"]

FILES = ("bench.json", "bench.md", *PLOTS)
"""What `run_and_write` writes (and `VARY_PLOT` for a sweep over a chip parameter)."""


def files(sweep: Sweep) -> tuple[str, ...]:
    """The files `run_and_write` writes for `sweep`."""
    return FILES if sweep.vary is None else (*FILES, VARY_PLOT)


def run_and_write(
    sweep: Sweep,
    out: Path,
    address: str | None = None,
    serial: bool = False,
    stderr: IO[str] = sys.stderr,
    quiet: bool = False,
    case_memory: int | None = None,
) -> str:
    """Run `sweep` (`serial`: one case after another, each in a process of its own; else as
    Ray tasks on the cluster at `address` or a local Ray), each case's memory capped at
    `case_memory` bytes (`t10.bench.capped`; None: its default), write its files into the
    directory `out` (made if missing) and return the Markdown table. A progress bar goes to
    `stderr` when it is a terminal, unless `quiet`."""
    require(["matplotlib", "tqdm"] + ([] if serial else ["ray"]))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise T10Error(f"cannot make the output directory '{out}': {e.strerror or e}") from None
    with _progress_bar(stderr, quiet) as progress:
        if serial:
            cases = run_sweep(sweep, ProcessExecutor(case_memory), progress)
        else:
            with RayExecutor(address, cap=case_memory) as executor:
                cases = run_sweep(sweep, executor, progress)
    rows = make_rows(cases)
    markdown = format_markdown(rows, sweep.planners, sweep.precision)
    settings = {k: v for k, v in asdict(sweep).items() if k != "configs"}
    write_text(out / "bench.json", to_json(cases, settings), "the table")
    write_text(out / "bench.md", markdown + "\n", "the table")
    write_plots(rows, sweep.planners, out)
    if sweep.vary is not None:
        write_vary_plot(rows, sweep.planners, sweep.vary, out)
    return markdown


@contextmanager
def _progress_bar(stream: IO[str], quiet: bool) -> Iterator[Progress | None]:
    """A tqdm bar on `stream` when it is a terminal (its total grows as batches double)."""
    if quiet or not stream.isatty():
        yield None
        return
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: a thread keeps the plan search from forking
    with tqdm(total=0, file=stream, unit="case", dynamic_ncols=True) as bar:

        def progress(done: int, submitted: int, result: dict[str, Any]) -> None:
            bar.total = submitted
            bar.set_postfix_str(f"{result['model']} b{result['batch']} {result['planner']}: "
                                f"{result['status']}", refresh=False)
            bar.update(done - bar.n)

        yield progress
