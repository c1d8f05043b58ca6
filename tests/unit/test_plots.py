"""The plots of `t10 bench`, `t10 run --plot` and `t10 explain --plot`, as saved: an image
bounded in size whatever the rows, text readable at the resolution it is saved at, every mark
inside its axes, a planner's colour its own whatever the order of `--planners`, and a plot
path that cannot be written a one-line error.

Each figure is caught as it is saved (`Figure.savefig` wrapped), then inspected."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

import t10.outputs.figures
from t10.bench.models import DEFAULT_CONFIGS
from t10.bench.plots import PLOTS, planner_colour, write_plots
from t10.bench.table import make_rows
from t10.common.chip_spec import load_chip
from t10.driver import CompileOptions, run_model
from t10.examples.models import mlp
from t10.outputs.plots import plot_link_map, plot_run
from t10.sim.interpreter_chip import OpStats, SimReport, Superstep
from t10.tools.cli import main
from t10.tools.explain import explain, plot_explanation

MAX_PIXELS = (1600, 3600)
"""No saved plot is wider or taller than this, however many rows it shows."""
MIN_POINTS, MIN_PIXELS = 9, 16
"""Every text is at least 9 pt, and at least 16 pixels high at the resolution it is saved at."""

Saved = list[tuple[Any, Path, int]]


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> Iterator[Saved]:
    """Every figure saved while the test runs, with its path and resolution (the path it is
    renamed to once written whole: `t10.outputs.figures.output_file`)."""
    from matplotlib.figure import Figure

    figures: Saved = []
    savefig = Figure.savefig
    written = t10.outputs.figures.output_file
    final: dict[str, Path] = {}

    @contextmanager
    def recording(path: Any, what: str) -> Iterator[str]:
        with written(path, what) as fresh:
            final[fresh] = Path(path)
            yield fresh

    def catch(self: Any, fname: Any, **kwargs: Any) -> None:
        savefig(self, fname, **kwargs)
        figures.append((self, final.get(str(fname), Path(fname)), kwargs.get("dpi") or self.dpi))

    monkeypatch.setattr(t10.outputs.figures, "output_file", recording)
    monkeypatch.setattr(Figure, "savefig", catch)
    yield figures


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def small_text(fig: Any, dpi: float) -> list[str]:
    """The visible texts of `fig` smaller than `MIN_POINTS`, or than `MIN_PIXELS` at `dpi`."""
    from matplotlib.text import Text

    return [
        f"{t.get_text()!r} at {t.get_fontsize()} pt"
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip()
        and (t.get_fontsize() < MIN_POINTS or t.get_fontsize() * dpi / 72 < MIN_PIXELS)
    ]


def marks_outside(fig: Any) -> list[str]:
    """What is drawn in an axes but lies outside it: its bars, lines and texts on the canvas
    (a pixel of slack for line widths), and the data against the axes' limits."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    outside = []
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        for mark in [*ax.patches, *ax.lines, *ax.collections, *ax.texts]:
            if not mark.get_visible():
                continue
            extent = mark.get_window_extent(renderer)
            if (extent.x0 < box.x0 - 1.5 or extent.x1 > box.x1 + 1.5
                    or extent.y0 < box.y0 - 1.5 or extent.y1 > box.y1 + 1.5):
                outside.append(f"{type(mark).__name__} {mark.get_label()!r} at {extent} "
                               f"outside the axes at {box}")
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        data = ax.dataLim
        if data.width >= 0 and not (x0 <= data.x0 and data.x1 <= x1):
            outside.append(f"data x {data.x0}..{data.x1} beyond the limits {x0}..{x1}")
        if data.height >= 0 and not (y0 <= data.y0 and data.y1 <= y1):
            outside.append(f"data y {data.y0}..{data.y1} beyond the limits {y0}..{y1}")
    return outside


def legend_colours(fig: Any) -> dict[str, tuple[float, ...]]:
    """Each legend entry's label and colour (a patch's fill, or its edge when unfilled; a
    line's colour), over every legend of `fig`."""
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Patch

    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    colours = {}
    for legend in legends:
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            if isinstance(handle, Patch):
                colour = handle.get_facecolor() if handle.get_fill() else handle.get_edgecolor()
            else:
                colour = handle.get_color()
            colours[text.get_text()] = to_rgba(colour)
    return colours


# --------------------------------------------------------------------------------------------
# t10 bench
# --------------------------------------------------------------------------------------------

PLANNERS = list(DEFAULT_CONFIGS)


def case(model: str, batch: int, chip: str, planner: str, status: str,
         cycles: int | None = None, needed: int | None = None) -> dict[str, Any]:
    """A case of `t10 bench` as `bench_models.run_case` returns it."""
    ok = status == "ok"
    parts = {"compute_cycles": 0, "exchange_cycles": 0, "sync_cycles": 0,
             "relayout_cycles": 0}
    if ok and cycles is not None:
        parts = {"compute_cycles": cycles // 2, "exchange_cycles": cycles // 4,
                 "sync_cycles": cycles // 8,
                 "relayout_cycles": cycles - cycles // 2 - cycles // 4 - cycles // 8}
    sram = 638_976 if chip == "ipu-mk2" else 262_144
    return {
        "model": model, "layers": 1, "batch": batch, "seq": 128, "chip": chip,
        "planner": planner, "precision": "fp16", "config": None, "status": status,
        "error": None if ok else f"the model {status}", "needed_sram_bytes_per_core": needed,
        "sram_bytes_per_core": sram, "cycles": cycles if ok else None,
        "seconds": None, "peak_sram_bytes_per_core": sram // 3 + batch * 1000 if ok else None,
        "bound_cycles": None, **(parts if ok else {}),
        "compile_seconds": 1.0, "simulate_seconds": 0.5,
    }


def mixed_rows() -> list[dict[str, Any]]:
    """Every kind of row, on two chips: all fit (speedups below 1, near 1 and far above),
    a baseline does not fit (with and without what it would need) or fails, t10 does not fit,
    nothing fits."""
    cases = []
    for chip in ("ipu-mk2", "test-16"):
        cycles = {"t10": 100_000, "replicate": 130_000, "t10-fastest": 80_000,
                  "vgm": 4_000_000}
        cases += [case("bert-base", 1, chip, p, "ok", c) for p, c in cycles.items()]
        cases += [case("bert-base", 2, chip, "t10", "ok", 190_000),
                  case("bert-base", 2, chip, "replicate", "does not fit", needed=900_000),
                  case("bert-base", 2, chip, "t10-fastest", "does not fit"),
                  case("bert-base", 2, chip, "vgm", "error")]
        cases += [case("vit-base", 64, chip, "t10", "does not fit", needed=700_000),
                  case("vit-base", 64, chip, "replicate", "ok", 2_000_000),
                  case("vit-base", 64, chip, "t10-fastest", "does not fit", needed=720_000),
                  case("vit-base", 64, chip, "vgm", "ok", 9_000_000)]
        cases += [case("llama2-7b", 128, chip, p, "does not fit", needed=2_000_000)
                  for p in PLANNERS]
    return make_rows(cases)


def no_row_both_fit() -> list[dict[str, Any]]:
    """t10 fits where the baseline does not, then neither fits: no speedup anywhere."""
    return make_rows([
        case("bert-base", 2, "test-16", "t10", "ok", 318_760),
        case("bert-base", 2, "test-16", "replicate", "does not fit", needed=337_800),
        case("bert-base", 4, "test-16", "t10", "ok", 545_310),
        case("bert-base", 4, "test-16", "replicate", "does not fit", needed=505_800),
        case("bert-base", 16, "test-16", "t10", "does not fit", needed=309_500),
        case("bert-base", 16, "test-16", "replicate", "does not fit"),
    ])


def many_rows(batches: int, chips: int) -> Callable[[], list[dict[str, Any]]]:
    """Every zoo model at `batches` batches on `chips` chips, all four planners fitting."""
    return lambda: make_rows([
        case(m, 2**b, chip, p, "ok", 1000 * (i + 1) * (b + 1))
        for m in ("bert-base", "bert-large", "vit-base", "vit-large", "llama2-7b",
                  "opt-1.3b", "resnet50", "nerf")
        for b in range(batches) for chip in ("ipu-mk2", "test-16")[:chips]
        for i, p in enumerate(PLANNERS)
    ])


ROWS = {"mixed": (mixed_rows, PLANNERS), "no row both fit": (no_row_both_fit, PLANNERS[:2]),
        "one planner": (no_row_both_fit, PLANNERS[:1]), "many": (many_rows(8, 1), PLANNERS),
        "too many": (many_rows(10, 2), PLANNERS)}
"""The sweeps drawn: the default one (every model at batches 1 to 128, 64 rows) is readable;
more rows than the tallest figure holds (160) have smaller labels, still inside it."""


@pytest.mark.parametrize("kind", ROWS)
def test_bench_plots_are_bounded_readable_and_inside_their_axes(
    kind: str, saved: Saved, tmp_path: Path
) -> None:
    rows, planners = ROWS[kind]
    write_plots(rows(), planners, tmp_path)
    assert sorted(p.name for _, p, _ in saved) == sorted(PLOTS)
    for fig, path, dpi in saved:
        width, height = png_size(path)
        assert width <= MAX_PIXELS[0] and height <= MAX_PIXELS[1], (path.name, width, height)
        assert kind == "too many" or small_text(fig, dpi) == [], path.name
        assert marks_outside(fig) == [], path.name


def test_bench_plots_are_sized_to_their_rows(saved: Saved, tmp_path: Path) -> None:
    """A sweep of one row makes small images; more rows make them taller, not wider."""
    for name, rows in (("one", no_row_both_fit()[:1]), ("eight", mixed_rows())):
        (tmp_path / name).mkdir()
        write_plots(rows, PLANNERS[:2], tmp_path / name)
    sizes = {(p.parent.name, p.name): png_size(p) for _, p, _ in saved}
    for name in PLOTS:
        one, eight = sizes["one", name], sizes["eight", name]
        assert one[1] <= 900, (name, one)
        assert one[0] == eight[0] and one[1] < eight[1], (name, one, eight)


def test_a_speedup_plot_without_speedups_says_so(saved: Saved, tmp_path: Path) -> None:
    """No row where t10 and a baseline both fit: the image says so, in a small figure (it
    once was 581×2993 pixels, the red marks far below an empty axes)."""
    from matplotlib.text import Text

    write_plots(no_row_both_fit(), PLANNERS[:2], tmp_path)
    [(fig, path, _)] = [s for s in saved if s[1].name == "speedup.png"]
    assert png_size(path)[1] <= 400
    texts = " ".join(t.get_text() for t in fig.findobj(Text))
    assert "no speedup to show" in texts and "t10 and replicate never both fit" in texts


def test_a_planners_colour_is_its_own() -> None:
    """The colour of a planner depends on its name alone, and differs between planners."""
    names = [*PLANNERS, "another-planner"]
    colours = {p: planner_colour(p) for p in names}
    assert len(set(colours.values())) == len(names)
    for order in itertools.permutations(PLANNERS):
        assert {p: planner_colour(p) for p in order} == {p: colours[p] for p in order}


def test_the_plots_colours_do_not_depend_on_the_planners_order(
    saved: Saved, tmp_path: Path
) -> None:
    for name, planners in (("a", PLANNERS), ("b", PLANNERS[::-1])):
        (tmp_path / name).mkdir()
        write_plots(mixed_rows(), planners, tmp_path / name)
    by = {(p.parent.name, p.name): legend_colours(fig) for fig, p, _ in saved}
    for name in PLOTS:
        assert by["a", name] == by["b", name], name
    assert by["a", "memory.png"]["replicate"] == by["a", "speedup.png"]["over replicate"]


# --------------------------------------------------------------------------------------------
# t10 run --plot
# --------------------------------------------------------------------------------------------


def sim_report(n_ops: int) -> SimReport:
    """`n_ops` operators of long fused names, each one superstep and its relayout, the last
    superstep the longest."""
    ops, steps = [], []
    for i in range(n_ops):
        name = f"layer{i}/mlp/fc1/MatMul+layer{i}/mlp/fc1/Add+layer{i}/mlp/fc1/Relu"
        for label, cycles in ((name, 1000 * (i + 1)), (f"{name}/relayout", 300)):
            ops.append(OpStats(label, cycles // 2, cycles // 4, cycles - cycles // 2 - cycles // 4,
                               1, 0, 16, 0))
            steps.append(Superstep(label, cycles // 2, cycles // 4,
                                   cycles - cycles // 2 - cycles // 4, 16, 50_000 + 100 * i,
                                   40_000 + 100 * i))
    steps.append(Superstep("last", 50_000, 0, 0, 16, 250_000, 200_000))
    ops.append(OpStats("last", 50_000, 0, 0, 1, 0, 16, 0))
    total = sum(s.cycles for s in steps)
    return SimReport(total, total / 1e9, 250_000, ops, steps=steps)


@pytest.mark.parametrize("n_ops", [1, 4, 40])
def test_the_run_plot(n_ops: int, saved: Saved, tmp_path: Path) -> None:
    """Bounded, readable, inside its axes; the SRAM over the run drawn to its last cycle (it
    once stopped where the last superstep began); every operator shown under its own label
    (long names once cut to the same 48 characters)."""
    sim = sim_report(n_ops)
    plot_run(sim, load_chip("test-16"), str(tmp_path / "run.png"), "model.onnx")
    [(fig, path, dpi)] = saved
    width, height = png_size(path)
    assert width <= MAX_PIXELS[0] and height <= MAX_PIXELS[1]
    assert small_text(fig, dpi) == []
    assert marks_outside(fig) == []
    times, memory = fig.axes
    labels = [t.get_text() for t in times.get_yticklabels()]
    assert len(set(labels)) == len(labels) == min(len(sim.ops), 21)
    for line in memory.lines[:2]:
        assert max(line.get_xdata()) == sim.total_cycles
        assert line.get_ydata()[-1] == sim.steps[-1].sram_peak_bytes or line.get_ydata()[
            -1] == sim.steps[-1].sram_mean_bytes


# --------------------------------------------------------------------------------------------
# t10 run --link-map
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chip", ["mesh-64", "wafer-48x48"])
def test_the_link_map(chip: str, saved: Saved, tmp_path: Path) -> None:
    """One panel per direction, each the run's bytes per link leaving each core that way
    (links off the mesh's edge blank), on one scale; bounded, readable, inside its axes."""
    sim = run_model(mlp(), CompileOptions(chip=chip), timing_only=True).sim
    assert sim.link_bytes is not None
    plot_link_map(sim, load_chip(chip), str(tmp_path / "links.png"), "mlp.onnx")
    [(fig, path, dpi)] = saved
    width, height = png_size(path)
    assert width <= MAX_PIXELS[0] and height <= MAX_PIXELS[1]
    assert small_text(fig, dpi) == []
    assert marks_outside(fig) == []
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == [
        f"links going {d}" for d in ("east", "west", "south", "north")]
    loads = sim.link_bytes["mesh"]
    for k, ax in enumerate(panels):
        [image] = ax.images
        shown = np.ma.filled(image.get_array(), np.nan)
        edge = np.isnan(shown)
        assert np.array_equal(shown[~edge], loads[:, :, k][~edge])
        # a link that does not exist carries nothing (but the rounding of fractional shares)
        assert np.allclose(loads[:, :, k][edge], 0.0, rtol=0.0, atol=1e-6)
        assert edge.sum() == loads.shape[1 - k // 2]
        assert image.get_clim() == (0.0, loads.max())


def test_the_link_map_from_the_command_line(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Written as a PNG on a mesh chip; refused with one line, before compiling, on a chip
    without a mesh."""
    model, png = tmp_path / "mlp.onnx", tmp_path / "links.png"
    onnx.save_model(mlp(), model)
    run = ["run", str(model), "--timing-only", "--link-map", str(png)]
    assert main([*run, "--chip", "mesh-64"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    png.unlink()
    capsys.readouterr()
    for chip, kind in (("test-16", "all-to-all"), ("ipu-pod4", "multi-chip")):
        assert main([*run, "--chip", chip]) != 0
        err = capsys.readouterr().err
        assert err == (f"t10: error: --link-map draws the links of a mesh, but chip '{chip}' "
                       f"has the {kind} topology: give a mesh chip (e.g. --chip mesh-64)\n")
        assert not png.exists()


# --------------------------------------------------------------------------------------------
# t10 explain --plot
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["fc1/MatMul", "fc3/Add"])
def test_the_frontier_plot(op: str, saved: Saved, tmp_path: Path) -> None:
    """Log axes, so plans of a few KB stay apart beside an SRAM of hundreds (a linear axis up
    to the SRAM crushed them against its left edge); bounded, readable, inside its axes."""
    e = explain(mlp(), op, CompileOptions(chip="ipu-mk2"))
    plot_explanation(e, str(tmp_path / "frontier.png"))
    [(fig, path, dpi)] = saved
    [ax] = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    xs = sorted({a.point.estimate.sram_bytes for a in e.alternatives} | {e.sram_bytes})
    lo, hi = ax.get_xlim()
    assert lo <= xs[0] and xs[-1] <= hi and hi / lo < 100 * xs[-1] / xs[0]
    width, height = png_size(path)
    assert width <= MAX_PIXELS[0] and height <= MAX_PIXELS[1]
    assert small_text(fig, dpi) == []
    assert marks_outside(fig) == []


# --------------------------------------------------------------------------------------------
# Plot paths
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mlp_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("models") / "mlp.onnx"
    onnx.save(mlp(), path)
    return path


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("p" * 300 + ".png", "File name too long"),
        ("plot.xyz", "cannot write .xyz files: give a name ending in .png"),
    ],
)
@pytest.mark.parametrize("command", ["run", "explain"])
def test_a_plot_path_that_cannot_be_written_is_one_error(
    command: str, name: str, words: str, mlp_file: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    option = {"run": ["--timing-only", "--plot"], "explain": ["--op", "fc1/MatMul", "-o"]}
    argv = [command, str(mlp_file), "--chip", "test-16", *option[command], str(tmp_path / name)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"t10: error: {option[command][-1]} '") and words in err, err
    assert err.count("\n") == 1 and "internal error" not in err
    assert list(tmp_path.iterdir()) == []
