"""`--plot DIR`: charts of a tuner run's evaluations (the measure.Records that the bench reports, the stream
that `--log` writes as JSON), drawn with matplotlib's Agg backend (no display, no pyplot state).

- `threshold-NAME.png`, for each threshold that was tuned: the mean runtime of every successful measurement of
  a tuning dataset against the value the threshold had in it (both axes logarithmic), a series per dataset,
  and the dataset's ePars for that threshold as dashed vertical lines: the plateau boundaries, between which
  every value sends the dataset down the same side of the guard.
- `best-so-far.png`: for each tuning dataset, the fastest mean runtime measured so far against the runs of
  the tuned program made so far (answers from the cache or the store cost no run).

matplotlib is the optional extra `report` (`pip install 'incflat[report]'`); it is imported only here, only
when plots are drawn. The folder is created if missing. A chart replaces only a file that an earlier `--plot`
wrote (marked in the PNG's `Software` text chunk); any other file of that name is left alone: refused when
the options are checked, skipped with a warning if it appears during the run.
"""

from __future__ import annotations

import importlib.util
import io
import re
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path

from incflat.tuner.measure import MORE, RUN, UNTIMED, Record
from incflat.tuner.program import EPars

EXTRA = "report"  # pyproject.toml's optional dependencies that hold matplotlib
MARK = "incflat autotune --plot"  # the PNG `Software` text of the charts written here
BEST_SO_FAR = "best-so-far.png"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def matplotlib_problem() -> str | None:
    """Why charts cannot be drawn (matplotlib is not installed), or None."""
    if importlib.util.find_spec("matplotlib") is None:
        return f"needs matplotlib, which is not installed: pip install 'incflat[{EXTRA}]'"
    return None


def plot_path_problem(directory: Path) -> str | None:
    """Why `--plot directory` must not be used, or None: checked with the options, before anything runs."""
    problem = matplotlib_problem()
    if problem:
        return problem
    if directory.exists() and not directory.is_dir():
        return "exists and is not a directory"
    if directory.is_dir():
        for found in sorted([directory / BEST_SO_FAR, *directory.glob("threshold-*.png")]):
            if found.exists() and not written_here(found):
                return f"{found} exists and was not written by {MARK}; refusing to overwrite it"
    return None


def threshold_file(name: str) -> str:
    return "threshold-" + re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".png"


def written_here(path: Path) -> bool:
    """Whether `path` is a PNG file whose `Software` text chunk is MARK (a chart that --plot wrote)."""
    try:
        with open(path, "rb") as file:
            if file.read(8) != PNG_MAGIC:
                return False
            while True:
                head = file.read(8)
                if len(head) < 8:
                    return False
                length, kind = struct.unpack(">I4s", head)
                if kind == b"tEXt":
                    keyword, _, text = file.read(length).partition(b"\0")
                    if keyword == b"Software":
                        return text == MARK.encode()
                    file.seek(4, io.SEEK_CUR)
                elif kind in (b"IDAT", b"IEND"):  # text chunks that matter come first
                    return False
                else:
                    file.seek(length + 4, io.SEEK_CUR)
    except OSError:
        return False


def write_plots(directory: Path, records: Sequence[Record], thresholds: Sequence[str],
                epars: Mapping[str, EPars], warn) -> list[Path]:
    """Draws the charts of a run's `records` (the tuned program's, in order) into `directory`: one per name in
    `thresholds`, and the best so far, for the datasets of `epars` (the tuning datasets probed, with their
    ePars). Returns the files written; a file that some other tool wrote is skipped (`warn` says so)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from incflat.files import atomic_write

    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save(figure: Figure, name: str) -> None:
        path = directory / name
        if path.exists() and not written_here(path):
            warn(f"--plot: {path} exists and was not written by {MARK}; not overwritten")
            return
        FigureCanvasAgg(figure)
        data = io.BytesIO()
        figure.savefig(data, format="png", dpi=100, metadata={"Software": MARK})
        atomic_write(path, data.getvalue())
        written.append(path)

    datasets = list(epars)
    colours = {name: f"C{i % 10}" for i, name in enumerate(datasets)}
    for threshold in thresholds:
        save(_threshold_figure(Figure(figsize=(8, 5)), threshold, records, datasets, epars, colours),
             threshold_file(threshold))
    save(_best_so_far_figure(Figure(figsize=(8, 5)), records, datasets, colours), BEST_SO_FAR)
    return written


def _mean(record: Record) -> float | None:
    m = record.measurement
    return m.mean_us if m.ok and m.times_us and m.mean_us > 0 else None


def _threshold_figure(figure, threshold: str, records: Sequence[Record], datasets: list[str],
                      epars: Mapping[str, EPars], colours: Mapping[str, str]):
    ax = figure.add_subplot()
    drawn = measured = False
    for name in datasets:
        points = [(record.params[threshold], mean) for record in records
                  if record.dataset.name == name and record.params and threshold in record.params
                  and (mean := _mean(record)) is not None and record.params[threshold] > 0]
        if points:
            xs, ys = zip(*points)
            ax.plot(xs, ys, "o", color=colours[name], alpha=0.7, label=name)
            drawn = measured = True
        for e in epars[name].get(threshold, ()):
            if e > 0:
                ax.axvline(e, color=colours[name], linestyle="--", linewidth=0.8)
                drawn = True
    if drawn:
        ax.set_xscale("log")
        ax.set_yscale("log")
    if not measured:
        ax.text(0.5, 0.5, "no successful measurement", transform=ax.transAxes, ha="center")
    ax.set_title(f"{threshold}: runtime against its value (dashed: each dataset's ePars)", fontsize=10)
    ax.set_xlabel(f"{threshold} (a guard is true, the less flattened side, when value <= ePar)")
    ax.set_ylabel("mean runtime (µs)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    figure.tight_layout()
    return figure


def _best_so_far_figure(figure, records: Sequence[Record], datasets: list[str], colours: Mapping[str, str]):
    ax = figure.add_subplot()
    runs = 0
    series: dict[str, tuple[list[int], list[float]]] = {name: ([], []) for name in datasets}
    for record in records:
        if record.source in (RUN, MORE, UNTIMED):
            runs += 1
        mean = _mean(record)
        if mean is None or record.dataset.name not in series:
            continue
        xs, ys = series[record.dataset.name]
        if not ys or mean < ys[-1]:
            xs.append(runs)
            ys.append(mean)
    drawn = False
    for name, (xs, ys) in series.items():
        if ys:
            ax.step(xs + [runs], ys + [ys[-1]], where="post", color=colours[name], label=name)
            ax.plot(xs, ys, "o", color=colours[name], markersize=3)
            drawn = True
    if drawn:
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no successful measurement", transform=ax.transAxes, ha="center")
    ax.set_title("the fastest mean runtime measured so far, per tuning dataset", fontsize=10)
    ax.set_xlabel("runs of the tuned program (evaluations; answers from the cache or the store cost none)")
    ax.set_ylabel("best mean runtime so far (µs)")
    ax.set_xlim(left=0, right=max(runs, 1))
    figure.tight_layout()
    return figure


__all__ = ["BEST_SO_FAR", "EXTRA", "MARK", "matplotlib_problem", "plot_path_problem", "threshold_file",
           "write_plots", "written_here"]
