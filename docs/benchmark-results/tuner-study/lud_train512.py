"""What the LUD train-512 experiment scripts in the folders beside this file share (run them from the repository
root): the compiled program and the dataset, timed runs of an assignment through the tuner's own Program.run,
and a tuner run on a fresh copy of the program (tuner_study's workspace). QUICK=1 in the environment makes
every script's runs few, to check it on PoCL."""
import collections
import gzip
import io
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

from incflat.harness import compile_cached
from incflat.tuner.autotune import autotune
from incflat.tuner.datasets import read_test_cases, select_datasets
from incflat.tuner.program import Program

sys.path.insert(0, "futhark_examples")
import tuner_study  # noqa: E402

QUICK = bool(os.environ.get("QUICK"))
LUD = pathlib.Path("futhark_examples/benchmarks/lud.fut")
EXCLUDE = ["ci", "paper"]
COMPILED = compile_cached(LUD)
PROGRAM = Program(COMPILED)
(DATASET,) = select_datasets(read_test_cases(LUD), None, tuple(EXCLUDE)).tuning


def rounds(full: int) -> int:
    return 1 if QUICK else full


def timed(params, runs: int, options=()) -> list[float]:
    """The times (µs) of `runs` runs of an assignment after a warm-up run, in one invocation (2 with QUICK)."""
    runs = 2 if QUICK else runs
    result = PROGRAM.run(DATASET, params=params, timeout=600, options=options, timing_runs=runs + 1)
    if not result.ok:
        raise SystemExit(f"{params}: {result.failure}")
    return list(result.times_us[1:])


def profiled(params, runs: int) -> tuple[list[float], dict]:
    """`timed` with a profile: the runs' times and the --profile-json record of the invocation."""
    with tempfile.TemporaryDirectory() as folder:
        path = pathlib.Path(folder) / "profile.json"
        times = timed(params, runs, ("--profile-json", str(path)))
        return times, json.loads(path.read_text())


def per_guard(profile: dict) -> dict[tuple[str, bool], list]:
    """Per guard outcome of a profile: its decisions' count, kernels' time, host's time and span (µs)."""
    summed = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for r in profile["versions"]:
        s = summed[r["threshold"], r["outcome"]]
        s[0] += 1
        s[1] += r["time_us"]
        s[2] += r["host_us"]
        s[3] += r["span_us"]
    return dict(summed)


def side_by_side(results: dict, reference: str, rounds_: int, runs: int, out: pathlib.Path) -> None:
    """The results (name -> assignment) measured in interleaved rounds of `runs` runs (one invocation each),
    into out/side.json (each round's times) and out/side.txt: per result the median of all its runs and its
    ratio to the fastest, the median of each round's runs, and where it differs from `reference`."""
    times = {name: [] for name in results}
    for _ in range(rounds(rounds_)):
        for name, params in results.items():
            times[name].append(timed(params, runs))
    (out / "side.json").write_text(json.dumps(times))
    medians = {name: statistics.median([t for r in rs for t in r]) for name, rs in times.items()}
    with open(out / "side.txt", "w") as f:
        for name, rs in times.items():
            print(f"{name:<14} median {medians[name]:8.0f} ({medians[name] / min(medians.values()):.3f}) "
                  f"median of the rounds' {statistics.median(statistics.median(r) for r in rs):8.0f} per round",
                  " ".join(f"{statistics.median(r):6.0f}" for r in rs), file=f)
            print("   differs from", reference + ":",
                  {k: v for k, v in results[name].items() if results[reference].get(k) != v}, file=f)


def study_results(path: pathlib.Path) -> dict:
    """The assignments of a tuner_study.py study of lud.fut (study.json, or .json.gz), by strategy."""
    opened = gzip.open(path, "rt") if path.suffix == ".gz" else open(path)
    with opened as f:
        return {r["strategy"]: r["assignment"] for r in json.load(f)[0]["strategies"] if "error" not in r}


def tuned_results(path: pathlib.Path) -> dict:
    """The assignments of a file of tuner runs, a line each: LABEL ... {assignment as JSON}."""
    return {line.split()[0]: json.loads(line[line.index("{"):]) for line in path.read_text().splitlines()}


def tune(strategy: str, **options):
    """One tuner run from a fresh copy of the untuned program: its result, its log, and seconds."""
    work = pathlib.Path(tempfile.mkdtemp())
    fut = tuner_study.workspace(LUD, work)
    compiled = work / "lud"
    compiled.write_bytes(COMPILED.read_bytes())
    compiled.chmod(0o755)
    log, start = io.StringIO(), time.monotonic()
    result = autotune(fut, compiled, runs=3, timeout=120, exclude=EXCLUDE, out=log, strategy=strategy, seed=1,
                      store=None, **options)
    return result, log.getvalue(), time.monotonic() - start
