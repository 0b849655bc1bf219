"""The tuner study: every strategy of `incflat autotune` on programs of the suite, side by side.

    python futhark_examples/tuner_study.py PROGRAM.fut ... [--strategies tree,monotonic,...] [--runs R]
        [--budget N] [--match-budget] [--seed S] [--exclude-case TAG ...] [-d DEVICE] [--out DIR] [--reuse FILE]

For each program it compiles incremental (IF) and moderate (MF) flattening once, then tunes a fresh copy of
the IF program with each strategy (no shared measurements: each starts cold) and reports, per strategy:

- runs: program invocations the strategy made (probing and the tuned/untuned timings included), and wall time
  (a strategy written NAME+sizes also tunes the sizes, `--tune-sizes`); and the most invocations any one
  tuning dataset took (held-out datasets apart), to set against the program's number of code versions;
- objective: the tuned assignment's summed trimmed mean runtime on the tuning datasets (µs; the runs of a
  dataset pooled, a fifth cut at each end, as the tuner's paired test does) and its ratio to the best
  of all strategies' results and `tree`'s rounds (exhaustive's among them, where it ran), with a 95%
  bootstrap interval over the side-by-side pass's invocations and runs;
- to 2%: the invocations and seconds until the strategy first measured one of the assignments found within 2%
  of that best on every tuning dataset (a whole assignment it measured, or its own result where that is within
  2%: when the tuner first measured it, for the strategies that tune per dataset), and the most configurations
  one tuning dataset had measured by then; `tree`'s values after each of its rounds are judged with the
  results (a line under the table each), and count from the end of the first round that was within 2%;
- held-out: the geometric mean over the held-out (notune) datasets of the untuned IF time over the tuned time,
  and of the MF time over the tuned time.

The objective and held-out figures come from one side-by-side pass after all the tuning: every strategy's
result, untuned IF and MF, measured in interleaved rounds (--rounds of --runs runs), not from the tuners' own
cold runs. Every dataset is probed for its ePars first, and results that run the same code versions on every
dataset (tuning and held-out) are one program, measured once: their figures are equal, not two draws of noise.
`--match-budget` bounds random and bandit by the runs the first strategy took (their quality at its cost).

It writes DIR/study.json (everything: each strategy's log, each side-by-side invocation's runs),
DIR/study.md (the tables), and DIR/PROGRAM.partial.json after each strategy. `--reuse FILE` (a partial file
or a study.json) takes the results of the strategies it holds instead of tuning again (marked reused, with
the device they were tuned on): a study cut off before its side-by-side pass goes on from there. Data files
must exist: `python futhark_examples/gen_data.py PROGRAM` (matmul: gen_matmul_data.py).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import pathlib
import shutil
import sys
import tempfile
import time

from scipy.stats import trim_mean

from incflat import pipeline
from incflat.cli import compile_file
from incflat.tuner.autotune import Measuring, Searching, TuneRequest, Writing, autotune
from incflat.tuner.baseline import in_effect, listed_defaults
from incflat.tuner.result import configurations_until
from incflat.datasets import read_test_cases, select_datasets
from incflat.ir.errors import ToolError
from incflat.tuner.measure import TRIM, Bench, Limits
from incflat.tuner.probe import probe
from incflat.tuner.program import Program
from incflat.tuner.strategies import STRATEGIES
from incflat.tuner.tree import build_forest, version
from incflat.tuner.writeback import tuning_path_of
from incflat.ir.runtime.tuning import NEVER, Param, leaf_names

WITHIN = 1.02
MATCHED = ("random", "bandit")  # the strategies --match-budget bounds


def workspace(fut: pathlib.Path, folder: pathlib.Path) -> pathlib.Path:
    """A copy of the .fut file in folder, its data folder linked: the tuner writes beside the .fut file."""
    local = folder / fut.name
    shutil.copy(fut, local)
    if (fut.parent / "data").is_dir():
        (folder / "data").symlink_to((fut.parent / "data").resolve())
    return local


def tune_with(strategy: str, fut: pathlib.Path, compiled: pathlib.Path, pristine: bytes, args,
              budget: int | None = None) -> dict:
    compiled.write_bytes(pristine)
    tuning_path_of(fut).unlink(missing_ok=True)
    log = io.StringIO()
    start = time.monotonic()
    try:
        name, _, plus = strategy.partition("+")
        result = autotune(TuneRequest(
            fut, compiled,
            Measuring(runs=args.runs, timeout=args.timeout, extra_args=args.pass_option,
                      limits=Limits(budget=budget or None)),
            Searching(strategy=name, seed=args.seed, sizes=plus == "sizes"),
            Writing(store=None, out=log),
            exclude=args.exclude_case))
    except Exception as e:  # a strategy that fails is a result of the study, not the end of it
        return {"strategy": strategy, "error": f"{type(e).__name__}: {e}", "log": log.getvalue()}
    wall = time.monotonic() - start
    return {
        "strategy": strategy,
        "assignment": result.assignment,
        "runs": result.runs,
        "tuning_runs": {d.name: d.runs for d in result.datasets if not d.held_out},
        "tuning_configurations": {d.name: d.configurations for d in result.datasets if not d.held_out},
        "seconds": wall,
        "history": [{"value": e.value, "runs": e.runs, "seconds": e.seconds, "assignment": e.assignment}
                    | ({"checkpoint": e.checkpoint} if e.checkpoint else {}) for e in result.evaluations],
        "reached": {"runs": result.reached.runs, "seconds": result.reached.seconds} if result.reached else None,
        "timeline": [list(entry) for entry in result.timeline],
        "notes": list(result.notes),
        "device": result.provenance.device,
        "log": log.getvalue(),
    }


def side_by_side(fut: pathlib.Path, programs: dict[str, tuple[pathlib.Path, dict | None]], args,
                 incremental: tuple[pathlib.Path, list[Param]] | None = None) -> dict:
    """Every configuration (a program and its --params: untuned IF, MF, each strategy's result) on every
    dataset, measured in interleaved rounds in one pass, so that their ratios are taken side by side: the
    tuners' own figures come from separate, cold runs, whose noise on a busy CPU is larger than the
    differences between strategies. The configurations of one program run in turn in one invocation
    (`--alternate-tuning`), run by run, so that they share the host's state of the moment (which on a GPU's
    shared host moves their invocations' means by a third: `together` names them); a program's invocation
    that fails is measured again a configuration at a time. Each round puts another configuration of a group
    first, so that no place's own effect on its runs (the second's first timed run may run long) falls
    on one configuration alone. Configurations that run the same code versions on every dataset are one
    program, measured once (`incremental`: the IF program whose thresholds the --params set, and its
    parameter listing; its datasets are probed for their ePars first). Returns the trimmed mean µs per
    configuration and dataset (pooled_trimmed_mean), every invocation's runs, and each configuration's code
    versions per dataset where known."""
    selection = select_datasets(read_test_cases(fut), None, tuple(args.exclude_case))
    datasets = selection.tuning + selection.held_out
    benches = {path: Bench(Program(path, args.pass_option), runs=args.runs, timeout=args.timeout, log=lambda _: None)
               for path, _ in programs.values()}
    versions = ({} if incremental is None else
                code_versions(benches[incremental[0]], datasets, programs, *incremental))
    configurations = {name: (path, versions[name] if name in versions else tuple(sorted((params or {}).items())))
                      for name, (path, params) in programs.items()}
    times: dict[tuple, dict[str, list[list[float]]]] = {}  # per configuration and dataset, each invocation's runs
    # results that are the same configuration are measured once: their figures must not differ by noise
    distinct = {config: programs[name] for name, config in reversed(list(configurations.items()))}
    by_program: dict[pathlib.Path, list[tuple]] = {}
    for config, (path, _) in distinct.items():
        by_program.setdefault(path, []).append(config)
    for k in range(args.rounds):
        for path, group in by_program.items():
            placed = group[k % len(group):] + group[:k % len(group)]  # (each round another one first)
            for d in datasets:
                for config, runs in zip(placed, in_turn(benches[path], d, [distinct[c][1] for c in placed], args)):
                    times.setdefault(config, {}).setdefault(d.name, []).append(runs)
    return {"tuning": [d.name for d in selection.tuning], "held_out": [d.name for d in selection.held_out],
            "means": {name: {d: pooled_trimmed_mean(runs) for d, runs in times[config].items()}
                      for name, config in configurations.items()},
            "invocations": {name: times[config] for name, config in configurations.items()},
            "together": [sorted(name for name, config in configurations.items() if config in group)
                         for group in by_program.values()],
            "chosen": {name: {d: v.name for d, v in config[1][0]} for name, config in configurations.items()
                       if name in versions}}


def in_turn(bench: Bench, dataset, configurations: list[dict | None], args) -> list[list[float]]:
    """The timed runs of each configuration in one invocation of `dataset`, taken in turn after two warm-up
    runs of each, one in each order: the first runs in the other order can still run long (docs/tuner-study.md,
    "invocation noise"). Where that invocation fails, one measurement of each apart (a failure: [inf])."""
    if len(configurations) > 1:
        ran = bench.program.run_in_turn(dataset, configurations, timeout=args.timeout, timing_runs=args.runs + 2)
        if ran.ok:
            return [list(runs[2:]) for runs in (ran.times_us, *ran.alternate_times_us)]
    measured = [bench.measure(dataset, params) for params in configurations]
    return [list(found.times_us) if found.ok else [math.inf] for found in measured]


def code_versions(bench: Bench, datasets, programs: dict, incremental: pathlib.Path, params: list[Param]) -> dict:
    """Per configuration of the IF program (whose parameter listing is `params`), ((dataset, code versions) for
    every dataset, the --params that are not thresholds): what it runs, from one probe of each dataset
    (tuner.probe). Empty if a probe fails."""
    forest = build_forest(params)
    thresholds = {p.name for p in params if p.is_threshold}
    defaults = listed_defaults(params)
    probes = {d.name: probe(forest, bench, d, NEVER) for d in datasets}
    if any(p.failure for p in probes.values()):
        return {}
    found = {}
    for name, (path, assignment) in programs.items():
        if path != incremental:
            continue
        assignment = assignment or {}
        runs = tuple((d.name, version(forest, in_effect(forest, defaults, probes[d.name].default_threshold)
                                      | assignment, probes[d.name].epars, d.entry)) for d in datasets)
        found[name] = (runs, tuple(sorted((k, v) for k, v in assignment.items() if k not in thresholds)))
    return found


def pooled_trimmed_mean(invocations: list[list[float]]) -> float:
    """The mean of every invocation's runs together, a fifth cut at each end (measure.TRIM): a run the host
    stalled (on this CPU, 23 ms among runs of 16 ms) moved one of eight equal results of LUD to 1.055 of the
    best, where the tuner's own paired test trims it."""
    return float(trim_mean([t for invocation in invocations for t in invocation], TRIM))


def ratio_interval(invocations: dict, tuning: list[str], config: str, best: str, seed: int,
                   replicates: int = 2000, together: bool = False) -> tuple[float, float] | None:
    """A 95% interval of objective(config) / objective(best) (summed pooled trimmed means over the tuning
    datasets), by a two-level bootstrap: each replicate draws every configuration's invocations of each dataset
    with replacement, then the runs of each drawn invocation. Drawing whole invocations first keeps their noise (on a
    GPU one invocation's runs can all sit 20% above another's): runs drawn alone would give too narrow an
    interval. Two configurations measured `together` (in turn, in the same invocations) draw the same
    invocations and runs, so that the host's state, shared by a run and its counterpart, cancels in their
    ratio. None for the best and a result of the same configuration, without the invocations (a study made
    before they were kept) or with a failed run."""
    import numpy as np

    if config not in invocations or best not in invocations or invocations[config] == invocations[best]:
        return None  # (a result that is the best's configuration was measured with it: the same runs)
    groups = {name: {d: [np.asarray(runs, dtype=float) for runs in invocations[name][d]] for d in tuning}
              for name in (config, best)}
    if not all(np.isfinite(g).all() for name in groups for d in tuning for g in groups[name][d]):
        return None
    rng = np.random.default_rng(seed)
    ratios = np.empty(replicates)
    for b in range(replicates):
        totals = []
        draws = {}
        for name in (config, best):
            total = 0.0
            for d in tuning:
                gs = groups[name][d]
                shape = [len(g) for g in gs]
                if not (together and draws.get(d, (None,))[0] == shape):
                    picked = rng.integers(len(gs), size=len(gs))
                    draws[d] = (shape, picked, [rng.integers(shape[k], size=shape[k]) for k in picked])
                _, picked, runs = draws[d]
                total += trim_mean(np.concatenate([gs[k][r] for k, r in zip(picked, runs)]), TRIM)
            totals.append(total)
        ratios[b] = totals[0] / totals[1]
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def study_program(fut: pathlib.Path, args) -> dict:
    with tempfile.TemporaryDirectory(prefix="incflat-study-") as folder:
        work = pathlib.Path(folder)
        local = workspace(fut, work)
        compiled = compile_file(local, work / fut.stem)
        moderate = compile_file(local, work / f"{fut.stem}-mf", pipeline.Options(flattening="moderate"))
        pristine = compiled.read_bytes()
        listing = Program(compiled, args.pass_option).params(args.timeout)
        versions = len(leaf_names(build_forest(listing)))
        results = []
        earlier = reused(args.reuse, fut.stem)
        for strategy in args.strategies:  # each result kept as it comes, for a study that is cut off
            taken = earlier.get(strategy)
            budget = budget_of(strategy, results, args)
            results.append(dict(taken, reused=str(args.reuse)) if taken
                           else tune_with(strategy, local, compiled, pristine, args, budget))
            (args.out / f"{fut.stem}.partial.json").write_text(json.dumps(results, indent=1) + "\n")
        compiled.write_bytes(pristine)  # (each strategy baked its values in)
        programs = {"untuned": (compiled, None), "MF": (moderate, None)}
        programs |= {r["strategy"]: (compiled, r["assignment"]) for r in results if "error" not in r}
        programs |= {name: (compiled, h["assignment"]) for r in results for name, h in checkpoints(r)}
        measured = side_by_side(local, programs, args, incremental=(compiled, listing))
    return summarise(fut.stem, results, measured, args.seed) | {"versions": versions}


def checkpoints(result: dict) -> list[tuple[str, dict]]:
    """Where a strategy that compares per dataset stood after each of its rounds (tree: what it would have
    returned if stopped there), each named for the side-by-side pass, which judges them as it judges results:
    so that its runs to 2% count from the first round whose values were good enough, not from when its final
    values were first measured (a last round that moves guards inside the noise changes the answer, not its
    quality)."""
    if "error" in result:
        return []
    marked = [h for h in result["history"] if h.get("checkpoint")]
    # (c315f8c's records mark them `true`, in order from the first round)
    return [(f"{result['strategy']} after round {k if h['checkpoint'] is True else h['checkpoint']}", h)
            for k, h in enumerate(marked, 1)]


def budget_of(strategy: str, results: list[dict], args) -> int | None:
    """The program runs a strategy may make: --budget; with --match-budget, a stochastic baseline (random,
    bandit) gets the runs the first strategy took instead (their quality at the same cost)."""
    first = results[0] if results else None
    if args.match_budget and strategy.partition("+")[0] in MATCHED and first and "error" not in first:
        return min(first["runs"], args.budget or first["runs"])
    return args.budget


def reused(path: pathlib.Path | None, program: str) -> dict[str, dict]:
    """The strategies' results in a partial file (a list of results) or a study.json (a list of programs),
    by strategy; failed ones are tuned again."""
    if path is None:
        return {}
    found = json.loads(path.read_text())
    if found and "program" in found[0]:
        found = next((p["strategies"] for p in found if p["program"] == program), [])
    return {r["strategy"]: r for r in found if "error" not in r}  # (summarise recomputes its own fields)


def summarise(name: str, results: list[dict], measured: dict, seed: int = 1) -> dict:
    means, tuning, held = measured["means"], measured["tuning"], measured["held_out"]

    def objective(config: str) -> float:
        return sum(means[config][d] for d in tuning)

    ran = [r for r in results if "error" not in r]
    # the best of every result and every round's values judged (checkpoints): each is an answer a strategy found
    judged = {r["strategy"]: r["assignment"] for r in ran} | {name: h["assignment"] for r in ran
                                                             for name, h in checkpoints(r) if name in means}
    optimum = min((objective(name) for name in judged), default=math.nan)
    best = min(judged, key=objective) if judged else None
    within = [assignment for name, assignment in judged.items() if objective(name) <= WITHIN * optimum]
    for r in ran:
        r["rounds"] = [{"name": name, "runs": h["runs"], "seconds": h["seconds"], "objective_us": objective(name),
                        "ratio_to_optimum": objective(name) / optimum}
                       | ({"configurations": max(configurations_until(r["timeline"], h["runs"],
                                                                      list(r["tuning_runs"])).values(), default=0)}
                          if r.get("timeline") else {})
                       for name, h in checkpoints(r) if name in means]
        r["objective_us"] = objective(r["strategy"])
        r["ratio_to_optimum"] = r["objective_us"] / optimum
        together = any({r["strategy"], best} <= set(group) for group in measured.get("together") or [])
        r["ratio_interval"] = ratio_interval(measured.get("invocations", {}), tuning, r["strategy"], best, seed,
                                             together=together)
        # the first assignment it measured that is one of those found within 2% (the same values)
        r["to_2pc"] = first_within(r, within)
        r["held_out_vs_if"] = geomean([means["untuned"][d] / means[r["strategy"]][d] for d in held])
        r["held_out_vs_mf"] = geomean([means["MF"][d] / means[r["strategy"]][d] for d in held])
    return {"program": name, "optimum_us": optimum, "untuned_us": objective("untuned"), "mf_us": objective("MF"),
            "means": means, "invocations": measured.get("invocations"), "together": measured.get("together"),
            "chosen": measured.get("chosen"),
            "strategies": results}


def first_within(result: dict, within: list[dict]) -> dict | None:
    """When the strategy first measured, on every tuning dataset, an assignment found within 2% of the best:
    the first one of them among the whole assignments it measured, or its own result where that is within 2%
    (`reached`: when the tuner had first measured it, for the strategies that tune per dataset). Its runs and
    seconds, and the most configurations a tuning dataset had measured by then (where the timeline is
    recorded); None if it never did. Results recorded before `reached` count their own result at their end."""
    candidates = [h for h in result["history"]
                  if any(all(h["assignment"].get(k) == v for k, v in good.items()) for good in within)][:1]
    if result["ratio_to_optimum"] <= WITHIN:
        candidates.append(result.get("reached") or {"runs": result["runs"], "seconds": result["seconds"]})
    if not candidates:
        return None
    first = min(candidates, key=lambda c: c["runs"])
    found = {"runs": first["runs"], "seconds": first["seconds"]}
    if result.get("timeline"):
        counts = configurations_until(result["timeline"], first["runs"], list(result["tuning_runs"]))
        found["configurations"] = max(counts.values(), default=0)
    return found


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def study_device(study: list[dict]) -> str:
    """The device of the strategies tuned in this study, which its side-by-side pass ran on (a strategy that ran
    nothing, as on a program without thresholds, names none; a reused one names the device it was tuned on)."""
    known = [r for p in study for r in p["strategies"] if r.get("device", "unknown") != "unknown"]
    return next((r["device"] for r in known if "reused" not in r), "unknown (every result was reused)")


def markdown(study: list[dict], device: str) -> str:
    lines = [f"Device: {device}", ""]
    for p in study:
        lines += [f"### {p['program']} ({p['versions']} code versions): tuning datasets' summed trimmed mean "
                  f"{p['optimum_us']:.0f} us at best, untuned {p['untuned_us']:.0f}, MF {p['mf_us']:.0f}", "",
                  "| strategy | runs | most runs of a tuning dataset (configurations) | seconds | objective (us) | "
                  "/ optimum (95% interval) | runs to 2% (most configurations of a dataset) | s to 2% | "
                  "held-out vs IF | held-out vs MF |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in p["strategies"]:
            if "error" in r:
                lines.append(f"| {r['strategy']} | failed: {r['error']} ||||||||| ")
                continue
            reach = r["to_2pc"]
            runs_to, seconds_to = (_runs_to(reach), f"{reach['seconds']:.0f}") if reach else ("not reached", "-")
            name = r["strategy"] + (f" (reused, tuned on {r.get('device', 'unknown')})" if "reused" in r else "")
            cells = [name, str(r["runs"]), most_runs(r), f"{r['seconds']:.0f}",
                     f"{r['objective_us']:.0f}", _with_interval(r["ratio_to_optimum"], r.get("ratio_interval")),
                     runs_to, seconds_to, _ratio(r["held_out_vs_if"]), _ratio(r["held_out_vs_mf"])]
            lines.append("| " + " | ".join(cells) + " |")
        rounds = [(r["strategy"], k) for r in p["strategies"] for k in r.get("rounds", ())]
        if rounds:
            lines.append("")
        for strategy, k in rounds:
            configurations = (f", at most {k['configurations']} configurations of a dataset"
                              if "configurations" in k else "")
            lines.append(f"- {k['name']}: {k['runs']} runs{configurations}, {k['seconds']:.0f} s; "
                         f"{k['ratio_to_optimum']:.3f} of the optimum")
        lines.append("")
    return "\n".join(lines)


def most_runs(result: dict) -> str:
    """The most invocations of one tuning dataset, and the most configurations measured on one (the thesis's
    benchmark runs: a comparison inside the noise measures a configuration again, in more invocations); results
    recorded before configurations were counted have the invocations only."""
    runs = str(max(result["tuning_runs"].values(), default=0))
    configurations = result.get("tuning_configurations")
    return f"{runs} ({max(configurations.values(), default=0)})" if configurations is not None else runs


def _runs_to(reach: dict) -> str:
    configurations = reach.get("configurations")
    return str(reach["runs"]) + (f" ({configurations})" if configurations is not None else "")


def _with_interval(ratio: float, interval: list[float] | None) -> str:
    return f"{ratio:.3f}" if interval is None else f"{ratio:.3f} ({interval[0]:.3f}-{interval[1]:.3f})"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="+", type=pathlib.Path)
    parser.add_argument("--strategies", default=",".join(STRATEGIES),
                        help=f"comma-separated, of {', '.join(STRATEGIES)}, each optionally with +sizes "
                        "(--tune-sizes after it; default: every strategy)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per measurement (3)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per program invocation (120)")
    parser.add_argument("--budget", type=int, default=None,
                        help="program runs at most per strategy (autotune's --budget)")
    parser.add_argument("--match-budget", action="store_true",
                        help="bound random and bandit by the runs the first strategy took (with --budget, "
                        "the smaller of the two)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds of the side-by-side measurement of every result (default 2, of --runs each)")
    parser.add_argument("--exclude-case", action="append", default=[], metavar="TAG")
    parser.add_argument("-d", "--device", default=None, help="OpenCL device name substring")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("tuner-study"))
    parser.add_argument("--reuse", type=pathlib.Path, metavar="FILE",
                        help="take the results of the strategies in FILE (a partial file or a study.json)")
    args = parser.parse_args(argv)
    args.strategies = [s for s in args.strategies.split(",") if s]
    unknown = [s for s in args.strategies
               if s.partition("+")[0] not in STRATEGIES or s.partition("+")[2] not in ("", "sizes")]
    if unknown:
        parser.error(f"--strategies: no strategy {', '.join(unknown)}; the strategies are {', '.join(STRATEGIES)}")
    if args.reuse:
        try:
            reused(args.reuse, "")
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
            parser.error(f"--reuse {args.reuse}: not a study's partial file or study.json ({e})")
    args.pass_option = ["-d", args.device] if args.device else []
    args.out.mkdir(parents=True, exist_ok=True)
    study = []
    for fut in args.programs:
        print(f"{fut}: {', '.join(args.strategies)}", flush=True)
        try:
            study.append(study_program(fut, args))
        except ToolError as e:  # a dataset's file missing, say: the programs studied so far are kept
            parser.exit(1, f"{parser.prog}: {fut}: {e}\n")
        (args.out / "study.json").write_text(json.dumps(study, indent=1) + "\n")
    device = study_device(study)
    (args.out / "study.md").write_text(markdown(study, device) + "\n")
    print(markdown(study, device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
