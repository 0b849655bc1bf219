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

from incflat import pipeline
from incflat.compiled import compile_cached, import_module
from incflat.datasets import (BACKEND_EXCLUDED_TAGS, ExpectedError, GeneratedInput, TestCase, case_inputs,
                              compare_values, expand_paths, expected_values, read_test_cases)
from incflat.files import atomic_write, file_place_problem
from incflat.ir.runtime.program import collector_paused, read_tuning_file
from incflat.ir.errors import ToolError
from incflat.tuner.progress import progress_bar
from incflat.tuner.stats import converged, mean_ci, welch_pvalue
from incflat.tuner.writeback import tuning_path_of

MIN_SECONDS = 0.5
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


def measure(run: Callable[[], float], options: Options, clock=time.perf_counter) -> list[float]:
    """The runtimes (µs) of repeated runs, after one warm-up run, by futhark bench's rule."""
    run()
    runtimes, start = [], clock()
    while len(runtimes) < options.runs or clock() - start < MIN_SECONDS:
        runtimes.append(run())
    while options.convergence and not converged(runtimes) and clock() - start < options.convergence_max_seconds:
        runtimes.append(run())
    return runtimes


def selected(case: TestCase, entry: str | None, exclude: Sequence[str]) -> list[str]:
    """The entry points a case is benchmarked for ([] when a tag excludes it or it expects an error)."""
    tags = case.run_tags | case.block_tags
    if tags & (set(ALWAYS_EXCLUDED) | set(exclude)) or isinstance(case.expected, ExpectedError):
        return []
    if isinstance(case.input, GeneratedInput) and case.input.kind != "random":
        return []
    return [e for e in case.entries if entry is None or e == entry]


def program_key(path: pathlib.Path, entry: str) -> str:
    return str(path) if entry == "main" else f"{path}:{entry}"


def bench_program(path: pathlib.Path, options: Options, out, progress) -> dict:
    """{program key: {"datasets": {name: result}}} of one .fut file."""

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
            raise ToolError(str(e)) from None
    try:
        ctx = module.load(device=options.device, platform=options.platform, overrides=overrides).ctx
    except Exception as e:  # the runtime's own errors (no such device, a bad tuning file): one line
        raise ToolError(f"{path}: {e}") from None
    results: dict = {}
    for case, entry_name in cases:
        entry = module.PROGRAM.entry_points.get(entry_name)
        key = program_key(path, entry_name)
        result = DatasetResult(case.name)
        try:
            if entry is None:
                raise ToolError(f"no entry point {entry_name!r}")
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
                raise ToolError(f"wrong result: {problem}")
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
    out = out or sys.stdout
    files = expand_paths(paths)
    cases = [c for f in files for c in read_test_cases(f)]
    total = sum(len(selected(c, options.entry, options.exclude)) for c in cases)
    entries = sorted({e for c in cases for e in selected(c, None, options.exclude)})
    if total == 0 and options.entry is not None and entries:
        raise ToolError(f"-e {options.entry}: no case for entry point {options.entry!r} (the cases are for "
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
        atomic_write(options.json, (json.dumps(results, indent=2) + "\n").encode())
    return results


def json_path_problem(path: pathlib.Path) -> str | None:
    """Why `--json` must not write the results to path, else None: a folder, a folder that is not there, or a file
    that holds something other than bench results (which writing would lose)."""
    if problem := file_place_problem(path):
        return problem
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        load_results(path)
    except ToolError:
        return "the file exists and is not futhark bench JSON; refusing to overwrite it"
    return None


# ---- benchcmp ----

def load_results(path: pathlib.Path) -> dict:
    """A results file of futhark bench or incflat bench; a malformed one is a ToolError naming the file and the
    entry that is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ToolError(f"cannot read {path} as futhark bench JSON: {e}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) and "datasets" in v for v in data.values()):
        raise ToolError(f"{path} is not futhark bench JSON (a program -> datasets object)")
    for program, results in data.items():
        if not isinstance(results["datasets"], dict):
            raise ToolError(f"{path}: program {program!r}: \"datasets\" is {_shown(results['datasets'])}, "
                            "not an object of datasets")
        for name, result in results["datasets"].items():
            if problem := _result_problem(result):
                raise ToolError(f"{path}: program {program!r}, dataset {name!r}: {problem}")
    return data


# The runtimes benchcmp accepts, in µs, at most about 30 years, and the least mean it compares (a whole µs
# rounds a faster run to 0): so that means, variances and their ratios are finite.
MAX_RUNTIME, MIN_MEAN = 1e15, 1e-3


def _result_problem(result) -> str | None:
    """What is wrong with a dataset's result (an object with its "runtimes", or a failed run's message), or None."""
    if isinstance(result, str):
        return None
    if not isinstance(result, dict):
        return f"the result is {_shown(result)}, not an object with \"runtimes\" or a failure's message"
    if "runtimes" not in result:
        return 'no "runtimes"'
    runtimes = result["runtimes"]
    if not isinstance(runtimes, list) or not runtimes:
        return f'"runtimes" is {_shown(runtimes)}, not a list of one runtime or more'
    for i, t in enumerate(runtimes):
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= MAX_RUNTIME:
            return f'"runtimes"[{i}] is {_shown(t)}, not a runtime (a number of microseconds from 0 to {MAX_RUNTIME:g})'
    return None


def _shown(value, limit: int = 40) -> str:
    """A JSON value as the file has it, cut short for a one-line message."""
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."


def compare(a: dict, b: dict) -> tuple[list, list]:
    """Rows (program, dataset, speedup of b over a, p-value of Welch's t-test) for the datasets timed in both,
    and the (program, dataset, why) of those that are not (load_results has checked the runtimes)."""
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
            if min(statistics.fmean(ta), statistics.fmean(tb)) < MIN_MEAN:
                missing.append((program, name, "a mean runtime of 0 µs in one file"))
                continue
            rows.append((program, name, statistics.fmean(ta) / statistics.fmean(tb), welch_pvalue(ta, tb)))
    return rows, missing


def benchcmp_text(rows: list, missing: list, alpha: float = 0.05) -> str:
    lines = []
    for program, name, speedup, p in rows:
        if math.isnan(p):  # (welch_pvalue: a single run in either file)
            verdict = "not tested: one run in a file"
        else:
            verdict = f"{'significant' if p < alpha else 'within the noise'}, p = {p:.3g}"
        lines.append(f"{program} {name}: {speedup:6.2f}x ({verdict})")
    for program, name, why in missing:
        lines.append(f"{program} {name}: not compared ({why})")
    if rows:
        geomean = math.exp(statistics.fmean(math.log(s) for _, _, s, _ in rows))
        lines.append(f"geometric mean speedup: {geomean:.2f}x over {len(rows)} datasets")
    return "\n".join(lines) + "\n"
