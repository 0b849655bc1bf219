"""`incflat bench` and `incflat benchcmp`: futhark bench's methodology, output and JSON.

Each program is compiled (through the compile cache, with the flattening asked for) and loaded once, as a
library in this process; each dataset's input is copied to the device once, then the entry point runs: one
warm-up run, at least `runs` runs and at least MIN_SECONDS, then, unless turned off, more runs until the
relative standard error of the mean is small enough for the runs' autocorrelation (futhark bench's criteria),
for at most `convergence_max_seconds`. A run is timed from the call to the device's finishing its work, as
futhark bench times a server's call. The first run's results are checked against the expected output; a
dataset with wrong results is reported as failed, not timed.
"""

from __future__ import annotations

import gc
import json
import math
import pathlib
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from incflat.tuner.datasets import (BACKEND_EXCLUDED_TAGS, Expected, ExpectedError, GeneratedInput, InlineValues,
                                    TestCase, ValuesFile, read_test_cases)
from incflat.tuner.errors import TunerError
from incflat.tuner.writeback import file_place_problem, tuning_path_of

MIN_SECONDS = 0.5
# futhark bench's convergence criteria: (lag-1 autocorrelation at least, relative standard error at most)
CONVERGENCE = ((0.95, 0.0010), (0.75, 0.0015), (0.65, 0.0025), (0.45, 0.0050), (0.00, 0.0100))
ALWAYS_EXCLUDED = ("nobench", "disable", *sorted(BACKEND_EXCLUDED_TAGS))


@dataclass
class Options:
    runs: int = 10
    flattening: str = "incremental"
    tuning: pathlib.Path | None = None  # None: PROGRAM.fut.tuning when it exists
    use_tuning: bool = True
    device: str | None = None
    platform: str | None = None
    entry: str | None = None
    exclude: tuple = ()
    convergence: bool = True
    convergence_max_seconds: float = 300.0
    json: pathlib.Path | None = None


@dataclass
class DatasetResult:
    name: str
    runtimes: list = field(default_factory=list)  # µs
    error: str | None = None

    def as_json(self):
        return self.error if self.error is not None else {"runtimes": [round(t) for t in self.runtimes],
                                                           "bytes": {}, "stderr": ""}


def relative_standard_error(runtimes: Sequence[float]) -> float:
    """The standard error of the runs' mean over the mean (at least two runs; 0 for a mean of 0)."""
    mean = statistics.fmean(runtimes)
    return statistics.stdev(runtimes) / math.sqrt(len(runtimes)) / mean if mean > 0 else 0.0


def converged(runtimes: Sequence[float]) -> bool:
    """Whether the mean of the runs is known well enough: the relative standard error against the bound that
    the runs' lag-1 autocorrelation asks for (correlated runs need a smaller error)."""
    n = len(runtimes)
    if n < 3:
        return False
    mean = statistics.fmean(runtimes)
    rse = relative_standard_error(runtimes)
    centred = np.asarray(runtimes) - mean
    denominator = float(np.dot(centred, centred))
    autocorrelation = float(np.dot(centred[:-1], centred[1:])) / denominator if denominator > 0 else 0.0
    for least, bound in CONVERGENCE:
        if autocorrelation >= least:
            return rse <= bound
    return rse <= CONVERGENCE[-1][1]


def measure(run: Callable[[], float], options: Options, clock=time.perf_counter) -> list[float]:
    """The runtimes (µs) of repeated runs, after one warm-up run, by futhark bench's rule."""
    run()
    runtimes, start = [], clock()
    while len(runtimes) < options.runs or clock() - start < MIN_SECONDS:
        runtimes.append(run())
    while options.convergence and not converged(runtimes) and clock() - start < options.convergence_max_seconds:
        runtimes.append(run())
    return runtimes


def mean_ci(runtimes: Sequence[float]) -> tuple[float, float, float]:
    """The mean and its 95% confidence interval (Student's t)."""
    from scipy import stats
    mean = statistics.fmean(runtimes)
    if len(runtimes) < 2:
        return mean, mean, mean
    half = stats.t.ppf(0.975, len(runtimes) - 1) * statistics.stdev(runtimes) / math.sqrt(len(runtimes))
    return mean, mean - half, mean + half


def welch_pvalue(a: Sequence[float], b: Sequence[float]) -> float:
    """The two-sided p-value of Welch's t-test that two samples have the same mean (nan with fewer than two
    values in either). Runs with no spread at all (a deterministic program) differ exactly when their means do."""
    if len(a) < 2 or len(b) < 2:
        return math.nan
    return mean_difference_test(statistics.fmean(a) - statistics.fmean(b), statistics.variance(a) / len(a), len(a),
                                statistics.variance(b) / len(b), len(b))[0]


def mean_difference_test(diff: float, va: float, na: int, vb: float, nb: int) -> tuple[float, float]:
    """For two means `diff` apart, with variances `va` and `vb` from `na` and `nb` values (two each at least): the
    two-sided p-value that they are equal and the half width of the difference's 95% interval (Student's t at
    the Welch-Satterthwaite degrees of freedom; computed here, not by scipy's ttest_ind, which warns of
    precision loss where one side has no spread). With no spread at all, they differ exactly when they do."""
    from scipy import stats
    if va + vb == 0:
        return (0.0 if diff != 0 else 1.0), 0.0
    dof = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    error = math.sqrt(va + vb)
    return float(2 * stats.t.sf(abs(diff / error), dof)), float(stats.t.ppf(0.975, dof)) * error


def selected(case: TestCase, entry: str | None, exclude: Sequence[str]) -> list[str]:
    """The entry points a case is benchmarked for ([] when a tag excludes it or it expects an error)."""
    tags = case.run_tags | case.block_tags
    if tags & (set(ALWAYS_EXCLUDED) | set(exclude)) or isinstance(case.expected, ExpectedError):
        return []
    if isinstance(case.input, GeneratedInput) and case.input.kind != "random":
        return []
    return [e for e in case.entries if entry is None or e == entry]


def case_inputs(case: TestCase) -> list:
    from incflat.harness import read_values_of
    from incflat.tuner.datasets import random_values
    if isinstance(case.input, GeneratedInput):
        return random_values(case.input.text)
    return read_values_of(case.input)


def expected_values(expected: Expected) -> list | None:
    """The values a case's results must be (its `output`), or None: `auto output` or none is not checked."""
    from incflat.harness import read_values_of
    if isinstance(expected, (InlineValues, ValuesFile)):
        return read_values_of(expected)
    return None


def program_key(path: pathlib.Path, entry: str) -> str:
    return str(path) if entry == "main" else f"{path}:{entry}"


def bench_program(path: pathlib.Path, options: Options, out, progress) -> dict:
    """{program key: {"datasets": {name: result}}} of one .fut file."""
    from incflat import pipeline
    from incflat.harness import compare_values, compile_cached, import_module
    from incflat.codegen.runtime.program import collector_paused, read_tuning_file

    cases = [(c, e) for c in read_test_cases(path) for e in selected(c, options.entry, options.exclude)]
    if not cases:
        return {}
    module = import_module(compile_cached(path, options=pipeline.Options(flattening=options.flattening)))
    tuning = options.tuning or tuning_path_of(path)
    overrides = {}
    if options.use_tuning and (options.tuning is not None or tuning.exists()):
        try:
            overrides = read_tuning_file(tuning, module.PROGRAM.params)
        except Exception as e:
            raise TunerError(str(e)) from None
    try:
        ctx = module.load(device=options.device, platform=options.platform, overrides=overrides).ctx
    except Exception as e:  # the runtime's own errors (no such device, a bad tuning file): one line
        raise TunerError(f"{path}: {e}") from None
    results: dict = {}
    for case, entry_name in cases:
        entry = module.PROGRAM.entry_points.get(entry_name)
        key = program_key(path, entry_name)
        result = DatasetResult(case.name)
        try:
            if entry is None:
                raise TunerError(f"no entry point {entry_name!r}")
            args = entry.upload(ctx, case_inputs(case))

            def run() -> float:
                gc.collect()  # (between runs, off while one is timed: collector_paused)
                ctx.queue.finish()
                start = time.perf_counter()
                values = ctx.call(entry.fn, args)
                ctx.queue.finish()
                took = (time.perf_counter() - start) * 1e6
                run.values = values
                return took
            run()
            ctx.check_errors()
            expected = expected_values(case.expected)
            got = [ctx.from_device(v) if hasattr(v, "buf") else v for v in run.values]
            problem = compare_values(got, expected) if expected is not None else None
            if problem is not None:
                raise TunerError(f"wrong result: {problem}")
            with collector_paused():
                result.runtimes = measure(run, options)
        except Exception as e:  # a failed dataset is reported and the others go on
            result.error = str(e).splitlines()[0] if str(e) else type(e).__name__
        results.setdefault(key, {"datasets": {}})["datasets"][case.name] = result.as_json()
        out.write(report_line(key, result) + "\n")
        out.flush()
        progress()
    return results


def report_line(key: str, result: DatasetResult) -> str:
    if result.error is not None:
        return f"{key} {result.name}: failed: {result.error}"
    mean, low, high = mean_ci(result.runtimes)
    return f"{key} {result.name}: {mean:10.0f}μs (95% CI: [{low:10.1f}, {high:10.1f}])"


def bench(paths: Sequence[pathlib.Path], options: Options, out=None) -> dict:
    from incflat.harness import expand_paths
    out = out or sys.stdout
    files = expand_paths(paths)
    cases = [c for f in files for c in read_test_cases(f)]
    total = sum(len(selected(c, options.entry, options.exclude)) for c in cases)
    entries = sorted({e for c in cases for e in selected(c, None, options.exclude)})
    if total == 0 and options.entry is not None and entries:
        raise TunerError(f"-e {options.entry}: no case for entry point {options.entry!r} (the cases are for "
                         f"{', '.join(entries)})")
    bar = progress_bar(total)
    results = {}
    try:
        for path in files:
            results.update(bench_program(path, options, out, lambda: bar.update(1) if bar else None))
    finally:
        if bar is not None:
            bar.close()
    if options.json is not None:
        from incflat.tuner.writeback import atomic_write
        atomic_write(options.json, (json.dumps(results, indent=2) + "\n").encode())
    return results


def progress_bar(total: int | None, unit: str = "dataset"):
    """A tqdm bar on stderr when stderr is a terminal (logs stay clean), else None; a total of None is not
    known yet (the bar counts, and shows an estimate once its total is set)."""
    if not sys.stderr.isatty() or total == 0:
        return None
    from tqdm import tqdm
    # No monitor thread: the tuner starts its measurement children with a preexec_fn, which threads make unsafe.
    tqdm.monitor_interval = 0
    return tqdm(total=total, unit=unit, file=sys.stderr, leave=False)


def json_path_problem(path: pathlib.Path) -> str | None:
    """Why `--json` must not write the results to path, else None: a folder, a folder that is not there, or a file
    that holds something other than bench results (which writing would lose)."""
    if problem := file_place_problem(path):
        return problem
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        load_results(path)
    except TunerError:
        return "the file exists and is not futhark bench JSON; refusing to overwrite it"
    return None


# ---- benchcmp ----

def load_results(path: pathlib.Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TunerError(f"cannot read {path} as futhark bench JSON: {e}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) and "datasets" in v for v in data.values()):
        raise TunerError(f"{path} is not futhark bench JSON (a program -> datasets object)")
    return data


def compare(a: dict, b: dict) -> tuple[list, list]:
    """Rows (program, dataset, speedup of b over a, p-value of Welch's t-test) for the datasets timed in both,
    and the (program, dataset, why) of those that are not."""
    rows, missing = [], []
    for program in sorted(set(a) | set(b)):
        da, db = a.get(program, {}).get("datasets", {}), b.get(program, {}).get("datasets", {})
        for name in sorted(set(da) | set(db)):
            ra, rb = da.get(name), db.get(name)
            if not (isinstance(ra, dict) and isinstance(rb, dict)):
                why = "only in one file" if ra is None or rb is None else "failed in one file"
                missing.append((program, name, why))
                continue
            ta, tb = ra["runtimes"], rb["runtimes"]
            p = welch_pvalue(ta, tb)
            rows.append((program, name, statistics.fmean(ta) / statistics.fmean(tb), p))
    return rows, missing


def benchcmp_text(rows: list, missing: list, alpha: float = 0.05) -> str:
    lines = []
    for program, name, speedup, p in rows:
        verdict = "significant" if p < alpha else "within the noise"
        lines.append(f"{program} {name}: {speedup:6.2f}x ({verdict}, p = {p:.3g})")
    for program, name, why in missing:
        lines.append(f"{program} {name}: not compared ({why})")
    if rows:
        geomean = math.exp(statistics.fmean(math.log(s) for _, _, s, _ in rows))
        lines.append(f"geometric mean speedup: {geomean:.2f}x over {len(rows)} datasets")
    return "\n".join(lines) + "\n"

