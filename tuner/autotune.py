"""The autotune driver: datasets, untuned runs, ePar probes, the search, write-back and the report.

docs/tuning.md describes the whole run: how it measures, stores, resumes, locks, and what an interrupt does.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
from collections.abc import Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType
from typing import Callable, TextIO

import numpy as np

from incflat.codegen.runtime.tuning import (NEVER, SIZE_CLASSES, Forest, all_nodes, option_int, option_seconds,
                                            with_defaults)
from incflat.tuner.bench import progress_bar, welch_pvalue
from incflat.tuner.datasets import Dataset, Selection, read_test_cases, select_datasets
from incflat.tuner.errors import TunerError
from incflat.tuner.jsonlog import EvaluationLog, log_path_problem
from incflat.tuner.lock import tuning_lock
from incflat.tuner.measure import ALPHA, MORE, RUN, UNTIMED, Bench, Limits, Measurement, Record, Stopped
from incflat.tuner.probe import Probe, probe
from incflat.tuner.program import Program, kill_children
from incflat.tuner.search import OBJECTIVES, Evaluation, Objective, Space
from incflat.tuner.simple import Probed
from incflat.tuner.sizes import experiment_key, tune_sizes
from incflat.tuner.strategies import STRATEGIES
from incflat.tuner.store import ProgramKey, Store, default_store_path
from incflat.tuner.tree import build_forest, path
from incflat.tuner.writeback import (PlannedFile, Provenance, commit, plan_writeback, read_program,
                                     remove_stale_temporaries, written)


@dataclass(frozen=True)
class DatasetReport:
    name: str
    held_out: bool
    before: Measurement  # the program's current defaults, no --param
    after: Measurement | None  # the tuned values; None: not measured (stopped)
    runs: int  # program invocations for this dataset, all phases
    cache_hits: int
    stored_hits: int = 0  # measurements and probes answered from the tuning store
    probe_failure: str | None = None  # the -L run failed: the dataset was not tuned on

    @property
    def speedup(self) -> float:
        ok = self.after is not None and self.before.ok and self.after.ok
        return self.before.runtime_us / self.after.runtime_us if ok else float("nan")

    @property
    def significant(self) -> bool:
        """Whether tuned and untuned differ by more than the noise (Welch's test at ALPHA)."""
        return (self.after is not None and self.before.ok and self.after.ok
                and welch_pvalue(self.before.times_us, self.after.times_us) < ALPHA)

    @property
    def problems(self) -> tuple[str, ...]:
        """What went wrong on this dataset, for the report: failures, and what was not measured."""
        found = [f"failed: untuned: {self.before.failure}" if not self.before.ok else "",
                 f"failed: {self.probe_failure}" if self.probe_failure else "",
                 "tuned: not measured (stopped)" if self.after is None else "",
                 f"failed: tuned: {self.after.failure}" if self.after is not None and not self.after.ok else ""]
        return tuple(p for p in found if p)


@dataclass(frozen=True)
class TuneResult:
    assignment: dict[str, int]  # what was written
    datasets: tuple[DatasetReport, ...]
    notes: tuple[str, ...]
    tuning_file: Path
    program: Path
    provenance: Provenance
    stopped: str | None = None  # why measuring stopped early (the budget, the time, an interrupt), if it did
    store: Path | None = None
    evaluations: tuple[Evaluation, ...] = ()  # the whole assignments a strategy measured, in order (the study)

    @property
    def runs(self) -> int:
        return sum(d.runs for d in self.datasets)

    @property
    def cache_hits(self) -> int:
        return sum(d.cache_hits for d in self.datasets)

    @property
    def stored_hits(self) -> int:
        return sum(d.stored_hits for d in self.datasets)


PER_DATASET = ("tree", "monotonic")  # strategies that compare per dataset, not an objective


class Interrupted(KeyboardInterrupt):
    """An interrupt; its message says what it left behind."""


def autotune(
    fut_path: Path | str,
    program_path: Path | str,
    *,
    runs: int = 5,
    max_runs: int | None = None,
    timeout: float = 60.0,
    entry: str | None = None,
    extra_args: Sequence[str] = (),
    exclude: Sequence[str] = (),
    out: TextIO | None = None,
    install_as: Path | str | None = None,
    store: Path | str | None = None,
    limits: Limits | None = None,
    log_file: Path | str | None = None,
    strategy: str = "tree",
    objective: str = "sum",
    seed: int | None = None,
    sizes: bool = False,
) -> TuneResult:
    """Tune the thresholds of a compiled program on the datasets of its .fut file and write them back.

    The tuned program is written to `install_as` if given (`incflat autotune` tunes a temporary copy), else
    over `program_path`. `store` is the tuning store's file (None: no store); `limits` bound the measuring
    (its `interrupted` is set by the first Ctrl-C); `log_file` gets every evaluation as JSON lines. `strategy`
    (tuner.strategies) searches the thresholds, minimising `objective` (tuner.search) where it measures whole
    assignments, its random choices from `seed`; `sizes` then tunes the sizes of the kernels that run. Progress
    and the report go to `out` (default: sys.stdout), a progress bar to stderr when it is a terminal. Raises
    TunerError for problems the user must fix, and Interrupted (a KeyboardInterrupt) on an interrupt.
    """
    fut_path, program_path = Path(fut_path), Path(program_path)
    install = Path(install_as) if install_as is not None else None
    target = install or program_path
    stream = out or sys.stdout
    tuning_path = fut_path.with_name(fut_path.name + ".tuning")
    limits = limits or Limits()
    plan: tuple[PlannedFile, ...] = ()
    progress = _Progress()

    def log(line: str) -> None:
        progress.write(line, stream)

    try:
        selection = select_datasets(read_test_cases(fut_path), entry, tuple(exclude))
        if not (selection.tuning or selection.held_out or selection.skipped):
            raise _no_datasets(fut_path, selection, entry)  # a misspelt entry point, say: an error even where there is nothing to tune
        with ExitStack() as cleanup:
            cleanup.enter_context(tuning_lock(fut_path))
            for written_by_us in (tuning_path, target):
                remove_stale_temporaries(written_by_us)  # of a tuner that was killed
            program_text = read_program(program_path)  # fail now, not after tuning, if there is nowhere to write
            opened = cleanup.enter_context(closing(Store(Path(store)))) if store is not None else None
            records = cleanup.enter_context(closing(EvaluationLog(Path(log_file), target))) if log_file else None
            cleanup.enter_context(closing(progress.start(limits.budget)))

            def observe(record: Record) -> None:
                progress.add(record)
                if records:
                    records.add(record)

            bench = Bench(Program(program_path, extra_args), runs=runs, timeout=timeout, log=log, max_runs=max_runs,
                          limits=limits, observe=observe)
            params = bench.program.params(timeout)
            forest = build_forest(params)
            if opened:
                key = ProgramKey.of(program_text, [p.name for p in params], extra_args)
                bench.store = opened.for_program(key, warn=lambda text: log(f"warning: {text}"))
            if not forest and not sizes:
                # One version: the tuned program is the program; an empty tuning file says it was tuned.
                log(f"{program_path} has no thresholds: it has one version and there is nothing to tune")
                provenance = _provenance("unknown", (), "no thresholds")
                plan = plan_writeback(tuning_path, program_path, {}, provenance, install)
                commit(plan, log)
                result = TuneResult({}, (), (), tuning_path, target, provenance)
                _report(result, log)
                return result
            if not selection.tuning:
                raise _no_datasets(fut_path, selection, entry)
            for name, reason in selection.skipped:
                log(f"skipping {name}: {reason}")
            every = selection.tuning + selection.held_out
            log(f"{len(selection.tuning)} tuning and {len(selection.held_out)} held-out (notune) datasets")
            log(f"{len(all_nodes(forest))} thresholds in {len(forest)} tree(s)")

            try:
                before, probes = _untuned_and_probes(bench, forest, selection, log)
            except Stopped as stop:
                raise _nothing_tuned(str(stop), limits) from None
            probed = [Probed(d, probes[d.name].epars) for d in selection.tuning if not probes[d.name].failure]
            if not probed:
                raise TunerError("the -L run failed on every tuning dataset: "
                                 + "; ".join(f"{name}: {p.failure}" for name, p in probes.items()))
            # a run per version a dataset reaches, twice where one run per side cannot be tested; then the held-out
            per_version = 2 if runs < 2 else 1
            progress.estimate(bench.invocations + sum((len(d.epars) + 1) * per_version for d in probed)
                              + len(selection.held_out))
            space = Space.of(forest, probed)
            untuned = {d.dataset.name: before[d.dataset.name].runtime_us for d in probed}
            goal = Objective(space, bench, objective, untuned, count_runs=lambda: bench.invocations)
            log(f"strategy {strategy}" + (f", objective {objective}" if strategy not in PER_DATASET else ""))
            outcome = STRATEGIES[strategy](space, goal, np.random.default_rng(seed), log)
            if outcome.stopped and not outcome.assignment and space.order:
                raise _nothing_tuned(outcome.stopped, limits)
            assignment, notes, stopped = outcome.assignment, outcome.notes, outcome.stopped
            keep = strategy not in PER_DATASET and _worse_than_untuned(goal, assignment, before, stopped)
            if keep:  # a search from never can end worse than where the program started
                notes += (f"the {strategy} strategy's thresholds were significantly slower on the tuning datasets "
                          f"than the program's defaults ({objective}): kept the defaults",)
                assignment = {}
            if sizes and not stopped:
                log("sizes:")
                sized = tune_sizes(space, bench, space.start() | assignment,
                                   [p for p in params if p.cls in SIZE_CLASSES], log)
                assignment, notes, stopped = assignment | sized.sizes, notes + sized.notes, sized.stopped

            devices = [p.device for p in probes.values() if p.device]
            provenance = _provenance(devices[0] if devices else "unknown", tuple(d.dataset.name for d in probed),
                                     strategy + (" + sizes" if sizes else ""))
            if keep and not assignment and install is None and with_defaults(program_text, {}, None) != program_text:
                notes += (f"{program_path} was tuned before: it and {tuning_path} were left as they were",)
            else:
                plan = plan_writeback(tuning_path, program_path, assignment, provenance, install)
                commit(plan, log)

            log("tuned:")
            after: dict[str, Measurement | None] = {}
            for d in every:
                try:
                    after[d.name] = before[d.name] if keep and not assignment else _after(bench, forest, assignment,
                                                                                          d, probes)
                except Stopped as stop:  # the cache and the store still answer; nothing else is measured
                    after[d.name], stopped = None, stopped or str(stop)
            result = TuneResult(
                assignment,
                tuple(
                    DatasetReport(d.name, d.held_out, before[d.name], after[d.name], bench.run_count[d.name],
                                  bench.hit_count[d.name], bench.stored_count[d.name],
                                  probes[d.name].failure if d.name in probes else None)
                    for d in every
                ),
                notes,
                tuning_path,
                target,
                provenance,
                stopped,
                store=opened.path if opened else None,
                evaluations=tuple(goal.history),
            )
            _report(result, log)
            return result
    except TunerError:
        if limits.interrupted:  # e.g. --print-params, killed by the interrupt
            raise Interrupted(_interrupt_message(plan)) from None
        raise
    except KeyboardInterrupt:
        raise Interrupted(_interrupt_message(plan)) from None


def _untuned_and_probes(bench: Bench, forest: Forest, selection: Selection, log: Callable[[str], None]
                        ) -> tuple[dict[str, Measurement], dict[str, Probe]]:
    """The untuned measurements of every dataset, and the probes of the tuning datasets."""
    log("untuned (the program's current defaults):")
    before = {d.name: bench.measure(d, None, label="untuned") for d in selection.tuning + selection.held_out}
    for d in selection.tuning:  # (a held-out dataset's failure is only reported)
        if not before[d.name].ok:
            raise TunerError(f"the untuned program fails on dataset {d.name}: {before[d.name].failure}")
    log("ePar values (-L):")
    probes = {d.name: probe(forest, bench, d, NEVER) for d in selection.tuning}
    for name, found in probes.items():
        shown = found.failure and f"{found.failure}; not tuned on"
        log(f"  {name}: " + (shown or ", ".join(f"{t} <= {list(vs)}" for t, vs in found.epars.items())))
    return before, probes


def _nothing_tuned(reason: str, limits: Limits) -> BaseException:
    if limits.interrupted:
        return Interrupted("interrupted; nothing was written")
    return TunerError(f"stopped: {reason} before any threshold was tuned; nothing was written")


class _Progress:
    """The progress bar (tqdm on stderr, when it is a terminal): program runs, an estimate of their number,
    and the sum over the datasets of the fastest mean measured on each so far."""

    def __init__(self) -> None:
        self.bar = None
        self.budget: int | None = None
        self.fastest: dict[str, float] = {}

    def start(self, budget: int | None) -> "_Progress":
        self.bar, self.budget = progress_bar(budget, unit="run"), budget
        return self

    def add(self, record: Record) -> None:
        if self.bar is None:
            return
        if record.source in (RUN, MORE, UNTIMED):
            self.bar.update(1)
        if record.measurement.ok and record.measurement.times_us:
            name = record.dataset.name
            self.fastest[name] = min(record.measurement.mean_us, self.fastest.get(name, math.inf))
            self.bar.set_postfix_str(f"fastest sum {sum(self.fastest.values()):.1f}us", refresh=False)

    def estimate(self, total: int) -> None:
        if self.bar is not None and self.budget is None:
            self.bar.total = total
            self.bar.refresh()

    def write(self, line: str, stream: TextIO) -> None:
        if self.bar is not None:
            self.bar.clear()
        print(line, file=stream, flush=True)
        if self.bar is not None:
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _no_datasets(fut_path: Path, selection, entry: str | None) -> TunerError:
    why = "; ".join(f"{name}: {reason}" for name, reason in selection.skipped)
    held = f"{len(selection.held_out)} held out (notune)" if selection.held_out else ""
    detail = "; ".join(x for x in (held, why) if x) or (f"no case for entry point {entry!r}" if entry
                                                      else "it has no test cases")
    return TunerError(f"{fut_path} has no datasets to tune on ({detail})")


def _worse_than_untuned(goal: Objective, assignment: dict[str, int], before: dict[str, Measurement],
                        stopped: str | None) -> bool:
    """Whether the tuned thresholds make a significantly worse objective than the untuned program (measured
    already, for a strategy that searched whole assignments; not checked once measuring has stopped)."""
    if not assignment or not goal.space.order or stopped:
        return False
    try:
        tuned = goal.measurements(goal.space.start() | assignment, "tuned")
    except Stopped:
        return False
    return goal.significantly_worse(tuned, [before[d.dataset.name] for d in goal.space.datasets])


def _provenance(device: str, datasets: tuple[str, ...], strategy: str) -> Provenance:
    return Provenance(device=device, date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      datasets=datasets, strategy=strategy)


def _after(
    bench: Bench, forest: Forest, assignment: dict[str, int], d: Dataset, probes: dict[str, Probe]
) -> Measurement:
    """Measure the tuned values; for a tuning dataset this is usually an experiment already run."""
    sizes = {name: v for name, v in assignment.items() if name not in {n.name for n in all_nodes(forest)}}
    key = experiment_key(path(forest, assignment, probes[d.name].epars), sizes) if d.name in probes else None
    return bench.measure(d, assignment, key=key, label="tuned")


def _interrupt_message(plan: Sequence[PlannedFile]) -> str:
    done = written(plan)
    if not done:
        return "interrupted; nothing was written"
    untouched = [p.path for p in plan if p.path not in done]
    message = f"interrupted; {' and '.join(map(str, done))} {'is' if len(done) == 1 else 'are'} complete"
    return message + (f", {' and '.join(map(str, untouched))} unchanged" if untouched else "")


def _report(result: TuneResult, log: Callable[[str], None]) -> None:
    log("")
    log("tuned values:" if result.assignment else "tuned values: none")
    for name in sorted(result.assignment):
        log(f"  {name}={result.assignment[name]}")
    for note in result.notes:
        log(f"note: {note}")
    if not result.datasets:
        log(f"wrote {result.tuning_file} and the defaults of {result.program}")
        return
    width = max([len("dataset")] + [len(d.name) for d in result.datasets])
    log("runtimes: the mean of the timed runs (after a warm-up run) and its 95% confidence interval; a speedup")
    log("inside the noise (Welch's t-test, p >= 0.05) is shown as 'same'")
    log(f"{'dataset':<{width}}  role      {'untuned':>24}  {'tuned':>24}  speedup   runs  cached  stored")
    for d in result.datasets:
        role = "held-out" if d.held_out else "tuning"
        speedup = "-" if math.isnan(d.speedup) else f"{d.speedup:.2f}x" if d.significant else "same"
        problems = "  " + "; ".join(d.problems) if d.problems else ""
        log(
            f"{d.name:<{width}}  {role:<8}  {_us(d.before):>24}  {_us(d.after):>24}  {speedup:>7}  "
            f"{d.runs:>5}  {d.cache_hits:>6}  {d.stored_hits:>6}{problems}"
        )
    stored = f", {result.stored_hits} from the store {result.store}" if result.store else ""
    log(f"program runs: {result.runs} ({result.cache_hits} more answered from the cache{stored})")
    if result.stopped:
        log(f"stopped early: {result.stopped}; the values written are the best found so far")
    log(f"wrote {result.tuning_file} and the defaults of {result.program}")


def _us(m: Measurement | None) -> str:
    if m is None:
        return "not measured"
    if not m.ok:
        return "failed"
    low, high = m.interval_us()
    return f"{m.runtime_us:.1f}us ±{(high - low) / 2:.1f}"


# ---- the command line (also the options `incflat autotune` passes on) ----


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options that bound, store and log a tuner run: `incflat autotune` has them too, and passes them on
    (run_options_argv)."""
    parser.add_argument("--budget", type=option_int, metavar="N",
                        help="program runs at most; then the best values found so far are written")
    parser.add_argument("--stop-after", type=option_seconds, metavar="SECONDS",
                        help="measure no more after this many seconds; the best values so far are written")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--store", type=Path, metavar="FILE",
                       help="the tuning store, where every measurement is kept so that a tuner run again resumes "
                       "(default: PROGRAM.fut.tuning.db)")
    where.add_argument("--no-store", action="store_true", help="measure everything again, and keep nothing")
    parser.add_argument("--log", type=Path, metavar="FILE", help="write every evaluation to FILE, a JSON object a line")
    parser.add_argument("--strategy", choices=tuple(STRATEGIES), default="tree",
                        help="how to search the thresholds (default tree; docs/tuning.md compares them)")
    parser.add_argument("--objective", choices=OBJECTIVES, default="sum",
                        help="what strategies that measure whole assignments minimise over the tuning datasets: "
                        "their summed runtime (default), the sum or the geometric mean of each one's "
                        "untuned/tuned ratio")
    parser.add_argument("--seed", type=option_int, default=None, help="the random strategies' seed (reproducible runs)")
    parser.add_argument("--tune-sizes", action="store_true",
                        help="then tune the workgroup sizes, workgroup counts and tile sizes of the kernels that run")


def run_options_argv(args: argparse.Namespace) -> list[str]:
    """The options of add_run_options in `args`, as arguments again."""
    argv = ["--budget", str(args.budget)] if args.budget is not None else []
    argv += ["--stop-after", str(args.stop_after)] if args.stop_after is not None else []
    argv += ["--store", str(args.store)] if args.store is not None else []
    argv += ["--no-store"] if args.no_store else []
    argv += ["--log", str(args.log)] if args.log is not None else []
    argv += ["--strategy", args.strategy, "--objective", args.objective]
    argv += ["--seed", str(args.seed)] if args.seed is not None else []
    return argv + (["--tune-sizes"] if args.tune_sizes else [])


def option_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the values of the options both commands have, naming the option; None if nothing."""
    if args.runs < 1:  # (option_seconds refuses seconds that are not positive)
        return f"--runs {args.runs}: must be at least 1"
    if args.max_runs is not None and args.max_runs < args.runs:
        return f"--max-runs {args.max_runs}: must be at least --runs ({args.runs})"
    if args.budget is not None and args.budget < 1:
        return f"--budget {args.budget}: must be at least 1"
    problem = log_path_problem(args.log) if args.log is not None else None
    return f"--log {args.log}: {problem}" if problem else None


def main(argv: Sequence[str] | None = None, *, install_as: Path | None = None) -> int:
    """The tuner's command line; `install_as` is for `incflat autotune`, which tunes a temporary copy of the
    program it compiled and installs it there (see autotune)."""
    parser = argparse.ArgumentParser(
        prog="incflat autotune",
        description="Tune the thresholds of a compiled program on the datasets in its .fut file's test blocks.",
    )
    parser.add_argument("program_fut", type=Path, help="the .fut file with the -- == test blocks")
    parser.add_argument("compiled", type=Path, help="the compiled program (incflat compile)")
    parser.add_argument("--runs", type=option_int, default=5, help="timed runs per measurement, after one warm-up (5)")
    parser.add_argument("--max-runs", type=option_int, default=None,
                        help="runs per measurement at most, while a comparison is not significant (4x --runs)")
    parser.add_argument("--timeout", type=option_seconds, default=60.0, help="seconds allowed per program invocation (60)")
    parser.add_argument("--entry", help="tune only the datasets of this entry point")
    parser.add_argument(
        "--pass-option", action="append", default=[], metavar="OPT",
        help="pass OPT to the program (repeatable; write --pass-option=-d for options that start with -)",
    )
    parser.add_argument("--exclude-case", action="append", default=[], metavar="TAG",
                        help="neither tune on nor report the cases with this tag (repeatable)")
    add_run_options(parser)
    args = parser.parse_args(argv)
    problem = option_problem(args)
    if problem:
        parser.error(problem)

    limits = Limits(budget=args.budget, seconds=args.stop_after)
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGINT and not limits.interrupted:
            # The first Ctrl-C stops the measuring: the search ends with the best values so far, which are written.
            limits.interrupted = True
            kill_children()
            return
        # A second Ctrl-C, or SIGTERM: abort, writing nothing more. Later signals would interrupt the clean-up.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        received.append(signum)
        limits.interrupted = True  # should the exception be swallowed, measuring still stops at once
        kill_children()
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        result = autotune(
            args.program_fut, args.compiled,
            runs=args.runs, max_runs=args.max_runs, timeout=args.timeout, entry=args.entry,
            extra_args=args.pass_option, exclude=args.exclude_case, install_as=install_as,
            store=None if args.no_store else args.store or default_store_path(args.program_fut),
            limits=limits, log_file=args.log, strategy=args.strategy, objective=args.objective, seed=args.seed,
            sizes=args.tune_sizes,
        )
        if received:  # its KeyboardInterrupt was swallowed (raised inside an at-fork handler of a child's start)
            print(f"interrupted; {result.tuning_file} and {result.program} are complete", file=sys.stderr)
            return 128 + received[0]
        if limits.interrupted:
            print(f"interrupted; stopped measuring, and {result.tuning_file} and {result.program} are complete",
                  file=sys.stderr)
            return 128 + signal.SIGINT
        return 0
    except TunerError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(str(e) if isinstance(e, Interrupted) else "interrupted; nothing was written", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
