"""The two runs side by side, as docs/benchmarks.md shows them (AIF, AIF ÷ Futhark, MF ÷ AIF, IF ÷ AIF and
JAX ÷ AIF, run 1 / run 2), and each run's geometric mean of AIF ÷ Futhark over the datasets.

    python docs/benchmark-results/report-h200-2026-11-27/side_by_side.py [FOLDER]
"""

import math
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "futhark_examples"))

import report  # noqa: E402


def main(folder: pathlib.Path = HERE) -> None:
    runs = [report.load_results(folder / "run1"), report.load_results(folder / "run2")]
    print("| program | dataset | AIF µs | AIF ÷ Futhark | MF ÷ AIF | IF ÷ AIF | JAX ÷ AIF |")
    print("|---|---|---|---|---|---|---|")
    against_futhark = [[] for _ in runs]
    for program in report.reference.PROGRAMS:
        for d in report.paper_datasets(program):
            futhark = (report.FUTHARK[program, d.name][0], math.nan)
            cells = []
            for top, bottom in (("aif", None), ("aif", "futhark"), ("mf", "aif"), ("if", "aif"), ("jax", "aif")):
                both = []
                for got in runs:
                    a = got.get((program, d.name, top))
                    b = futhark if bottom == "futhark" else got.get((program, d.name, bottom)) if bottom else None
                    both.append(f"{a[0]:,.0f}" if bottom is None else report.ratio(a, b))
                cells.append("–" if set(both) == {"–"} else " / ".join(both))
            for found, got in zip(against_futhark, runs):
                found.append(got[program, d.name, "aif"][0] / futhark[0])
            print(f"| {program} | {d.name} | " + " | ".join(cells) + " |")
    for i, ratios in enumerate(against_futhark, 1):
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"run {i}: AIF ÷ Futhark geometric mean {mean:.2f} over {len(ratios)} datasets, "
              f"{min(ratios):.2f} to {max(ratios):.2f}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
