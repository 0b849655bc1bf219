"""The autotune driver: datasets, untuned runs, ePar probes, the search, write-back and the report.

docs/tuning.md describes the whole run: how it measures, stores, resumes, locks, and what an interrupt does.
"""

from __future__ import annotations

import argparse
import math
import re
import signal
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import ExitStack, closing
from dataclasses import replace
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from types import FrameType
from typing import Callable, TextIO

import numpy as np

from incflat.ir.runtime.tuning import (NEVER, SIZE_CLASSES, Forest, Param, all_nodes, option_int, option_seconds,
                                            with_defaults)
from incflat.tuner.progress import progress_bar
from incflat.datasets import Dataset, Selection, read_test_cases, select_datasets
from incflat.ir.errors import ToolError
from incflat.tuner.jsonlog import EvaluationLog, log_path_problem
from incflat.tuner.plot import EXTRA as PLOT_EXTRA
from incflat.tuner.plot import plot_path_problem, write_plots
from incflat.tuner.lock import tuning_lock
from incflat.tuner.measure import (ALPHA, DEFAULT_MAX_TIME, MORE, PAIRED, RUN, UNTIMED, Bench, Candidate, Limits,
                                   Measurement, Record, Stopped, difference_pvalue)
from incflat.tuner.probe import Probe, probe
from incflat.tuner.program import Program, kill_children
from incflat.tuner.result import DatasetReport, Reach, TuneResult, report
from incflat.tuner.search import OBJECTIVES, Objective, Space, experiment_key
from incflat.tuner.sizes import size_dimensions, tune_sizes
from incflat.tuner.stochastic import JOINT_SIZES
from incflat.tuner.strategies import STRATEGIES
from incflat.tuner.store import ProgramKey, Store, default_store_path
from incflat.tuner.tree import Fallbacks, Probed, build_forest, falls_back, path, version
from incflat.files import PlannedFile, file_place_problem, remove_stale_temporaries, written
from incflat.tuner.writeback import (Provenance, commit, plan_writeback, read_program, tuning_file_problem,
                                     tuning_path_of)


PER_DATASET = ("tree", "monotonic")  # strategies that compare per dataset, not an objective


class Interrupted(KeyboardInterrupt):
    """An interrupt; its message says what it left behind."""


def autotune(
    fut_path: Path | str,
    program_path: Path | str,
    *,
    runs: int = 5,
    max_runs: int | None = None,
    max_time: float = DEFAULT_MAX_TIME,
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
    moderate: Path | str | None = None,
    moderate_failure: str | None = None,
    plot_dir: Path | str | None = None,
    force: bool = False,
) -> TuneResult:
    """Tune the thresholds of a compiled program on the datasets of its .fut file and write them back.

    The tuned program is written to `install_as` if given (`incflat autotune` tunes a temporary copy), else
    over `program_path`. `runs`, `max_runs` and `max_time` are --runs, --max-runs and --max-time (tuner.measure's
    Bench). `store` is the tuning store's file (None: no store); `limits` bound the measuring (its `interrupted`
    is set by the first Ctrl-C); `log_file` gets every evaluation as JSON lines. `strategy` (tuner.strategies)
    searches the thresholds, minimising `objective` (tuner.search) where it measures whole assignments, its
    random choices from `seed`; `sizes` tunes the sizes of the kernels that run too (jointly for the sampling
    strategies, else after the thresholds). `moderate` is the program compiled with moderate flattening (MF):
    every dataset is measured once under it too, after the untuned runs and the probes (under its own program
    key in the store; a failure is reported, not fatal), unless `moderate_failure` says why there is none (then
    that is every dataset's MF failure). `plot_dir` gets the charts of tuner.plot once the report is printed.
    An existing tuning file that a tuner did not write is an error unless `force` (--force) allows replacing it.
    Progress and the report go to `out` (default: sys.stdout), a progress bar to stderr when it is a terminal. Raises
    ToolError for problems the user must fix, and Interrupted (a KeyboardInterrupt) on an interrupt.
    """
    fut_path, program_path = Path(fut_path), Path(program_path)
    install = Path(install_as) if install_as is not None else None
    target = install or program_path
    stream = out or sys.stdout
    tuning_path = tuning_path_of(fut_path)
    limits = limits or Limits()
    plan: tuple[PlannedFile, ...] = ()
    progress = _Progress()
    started = time.monotonic()
    plot_problem = plot_path_problem(Path(plot_dir)) if plot_dir is not None else None

    def log(line: str) -> None:
        progress.write(line, stream)

    try:
        if plot_problem:
            raise ToolError(f"--plot {plot_dir}: {plot_problem}")
        selection = select_datasets(read_test_cases(fut_path), entry, tuple(exclude))
        if not (selection.tuning or selection.held_out or selection.skipped):
            # a misspelt entry point, say: an error even where there is nothing to tune
            raise _no_datasets(fut_path, selection, entry)
        with ExitStack() as cleanup:
            cleanup.enter_context(tuning_lock(fut_path))
            problem = None if force else tuning_file_problem(tuning_path)
            if problem:
                raise ToolError(problem)
            for written_by_us in (tuning_path, target):
                remove_stale_temporaries(written_by_us)  # of a tuner that was killed
            program_text = read_program(program_path)  # fail now, not after tuning, if there is nowhere to write
            opened = cleanup.enter_context(closing(Store(Path(store)))) if store is not None else None
            records = cleanup.enter_context(closing(EvaluationLog(Path(log_file), target))) if log_file else None
            cleanup.enter_context(closing(progress.start(limits.budget)))

            walls: Counter[str] = Counter()  # seconds of program runs per dataset, MF included
            evaluations: list[Record] = []  # the tuned program's, in order, for --plot

            def observe(record: Record) -> None:
                progress.add(record)
                walls[record.dataset.name] += record.wall_s
                evaluations.append(record)
                if records:
                    records.add(record)

            def observe_moderate(record: Record) -> None:
                progress.add(record, fastest=False)  # another program: not a candidate
                walls[record.dataset.name] += record.wall_s
                if records:
                    records.add(record)

            bench = Bench(Program(program_path, extra_args), runs=runs, timeout=timeout, log=log, max_runs=max_runs,
                          limits=limits, observe=observe, max_time=max_time)
            params = bench.program.params(timeout)
            forest = build_forest(params)
            # the values the untuned program runs with (the tuned one: these, and the assignment written)
            defaults = listed_defaults(params)
            if opened:
                key = ProgramKey.of(program_text, [p.name for p in params], extra_args)
                bench.store = opened.for_program(key, warn=lambda text: log(f"warning: {text}"))
            mf_bench = _moderate_bench(bench, moderate, extra_args, opened, observe_moderate, log)
            if not forest and not sizes:
                # One version: the tuned program is the program; an empty tuning file says it was tuned.
                log(f"{fut_path} has no thresholds: it has one version and there is nothing to tune")
                provenance = _provenance("unknown", (), "no thresholds")
                plan = plan_writeback(tuning_path, program_path, {}, provenance, install)
                commit(plan, log)
                result = TuneResult({}, (), (), tuning_path, target, provenance)
                report(result, log)
                return result
            if not selection.tuning:
                raise _no_datasets(fut_path, selection, entry)
            for name, reason in selection.skipped:
                log(f"skipping {name}: {reason}")
            every = selection.tuning + selection.held_out
            log(f"{len(selection.tuning)} tuning and {len(selection.held_out)} held-out (notune) datasets")
            log(f"{len(all_nodes(forest))} thresholds in {len(forest)} tree(s)")

            try:
                before, probes, untuned_keys = _untuned_and_probes(bench, forest, selection, defaults, log)
            except Stopped as stop:
                raise _nothing_tuned(str(stop), limits) from None
            probed = [Probed(d, probes[d.name].epars) for d in selection.tuning if not probes[d.name].failure]
            if not probed:
                raise ToolError("the -L run failed on every tuning dataset: "
                                + "; ".join(f"{name}: {p.failure}" for name, p in probes.items()))
            try:
                mf = _moderate_runs(mf_bench, moderate_failure, every, log) if moderate or moderate_failure else {}
            except Stopped as stop:
                raise _nothing_tuned(str(stop), limits) from None
            # a run per version a dataset reaches, twice where one run per side cannot be tested; then the held-out
            per_version = 2 if runs < 2 else 1
            progress.estimate(bench.invocations + sum((len(d.epars) + 1) * per_version for d in probed)
                              + len(selection.held_out))
            joint = sizes and strategy in JOINT_SIZES  # the sizes are dimensions of the search, not a step after it
            size_params = [p for p in params if p.cls in SIZE_CLASSES]
            try:
                dimensions = size_dimensions(Space.of(forest, probed), bench, size_params) if joint else {}
            except Stopped as stop:
                raise _nothing_tuned(str(stop), limits) from None
            device_default = next((p.default_threshold for p in probes.values()
                                   if p.default_threshold is not None), None)  # (one device: one default)
            space = Space.of(forest, probed, dimensions, in_effect(forest, defaults, device_default))
            untuned = {d.dataset.name: before[d.dataset.name].runtime_us for d in probed}
            goal = Objective(space, bench, objective, untuned, count_runs=lambda: bench.invocations, started=started)
            log(f"strategy {strategy}" + (f", objective {objective}" if strategy not in PER_DATASET else ""))
            outcome = STRATEGIES[strategy](space, goal, np.random.default_rng(seed), log)
            if outcome.stopped and not outcome.assignment and space.names:
                raise _nothing_tuned(outcome.stopped, limits)
            assignment, notes, stopped = outcome.assignment, outcome.notes, outcome.stopped
            # with the runs a comparison added since (the untuned run is its path's cached experiment; where it
            # fell back, once the search has learnt which versions cannot run there)
            untuned_keys |= {d.dataset.name: _untuned_key(forest, defaults, probes[d.dataset.name], d.fallbacks)
                             for d in probed if untuned_keys[d.dataset.name] is None}
            before = {d.name: bench.latest(d, untuned_keys[d.name], before[d.name]) for d in every}
            keep = strategy not in PER_DATASET and _worse_than_untuned(goal, assignment, before, stopped)
            if keep:  # a search from never can end worse than where the program started
                notes += (f"the {strategy} strategy's thresholds were significantly slower on the tuning datasets "
                          f"than the program's defaults ({objective}): kept the defaults",)
                assignment = {}
            if sizes and not joint and not stopped:
                log("sizes:")
                sized = tune_sizes(space, bench, space.start() | assignment, size_params, log)
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
            by_name = {p.dataset.name: p for p in probed}
            after: dict[str, Measurement | None] = {}
            for d in every:
                try:
                    after[d.name] = before[d.name] if keep and not assignment else _after(bench, forest, assignment,
                                                                                          d, by_name)
                except Stopped as stop:  # the cache and the store still answer; nothing else is measured
                    after[d.name], stopped = None, stopped or str(stop)
            written = {} if keep and not assignment else assignment
            fresh = with_defaults(program_text, {}, None) == program_text  # untuned: every device default
            in_turn = (_in_turn(bench, every, before, after, written, device_default,
                                {node.name for node in all_nodes(forest)}) if fresh else {})
            reached = _reached(bench, forest, defaults, written, probed, probes, started)
            result = TuneResult(
                assignment,
                tuple(
                    DatasetReport(d.name, d.held_out, before[d.name], after[d.name], bench.run_count[d.name],
                                  bench.hit_count[d.name], bench.stored_count[d.name],
                                  probes[d.name].failure if d.name in probes else None,
                                  moderate=mf.get(d.name), wall_s=walls[d.name],
                                  version=version(
                                      forest, in_effect(forest, defaults, probes[d.name].default_threshold) | written,
                                      probes[d.name].epars, d.entry,
                                      by_name[d.name].fallbacks if d.name in by_name else ())
                                  if d.name in probes and not probes[d.name].failure else None,
                                  invocation_noise=bench.invocation_noise(d.name)[0],
                                  measured_again=bench.again_count[d.name], in_turn=in_turn.get(d.name, ()))
                    for d in every
                ),
                notes,
                tuning_path,
                target,
                provenance,
                stopped,
                store=opened.path if opened else None,
                evaluations=tuple(goal.history),
                elapsed_s=time.monotonic() - started,
                reached=reached,
                timeline=tuple(bench.timeline),
            )
            report(result, log)
            if plot_dir is not None:
                tuned = [n.name for n in all_nodes(forest) if n.name in assignment]
                result = replace(result, plots=_plot(Path(plot_dir), evaluations, tuned,
                                                     {d.dataset.name: d.epars for d in probed}, log))
            return result
    except ToolError:
        if limits.interrupted:  # e.g. --print-params, killed by the interrupt
            raise Interrupted(_interrupt_message(plan)) from None
        raise
    except KeyboardInterrupt:
        raise Interrupted(_interrupt_message(plan)) from None


def _untuned_and_probes(bench: Bench, forest: Forest, selection: Selection, defaults: Mapping[str, int],
                        log: Callable[[str], None]) -> tuple[dict[str, Measurement], dict[str, Probe], dict]:
    """The probes of the tuning datasets, then the untuned measurements of every dataset, and the cache key of
    each (None: not probed). A probed dataset's untuned run is the experiment of its path under the program's
    `defaults`, so a strategy that runs that path again is answered from the cache (and the report's untuned
    and tuned figures of one path are one measurement)."""
    log("ePar values (-L):")
    probes = {d.name: probe(forest, bench, d, NEVER) for d in selection.tuning}
    for name, found in probes.items():
        shown = found.failure and f"{found.failure}; not tuned on"
        log(f"  {name}: " + (shown or ", ".join(f"{t} <= {list(vs)}" for t, vs in found.epars.items())))
    log("untuned (the program's current defaults):")
    every = selection.tuning + selection.held_out
    keys = {d.name: _untuned_key(forest, defaults, probes[d.name]) if d.name in probes else None for d in every}
    before = {d.name: bench.measure(d, None, key=keys[d.name], label="untuned") for d in every}
    for d in selection.held_out:  # as many runs as its tuned measurement will ask for, at the noise it showed
        before[d.name] = bench.top_up(d, None, before[d.name], label="untuned")
    for d in selection.tuning:  # (a held-out dataset's failure is only reported)
        if not before[d.name].ok:
            raise ToolError(f"the untuned program fails on dataset {d.name}: {before[d.name].failure}")
    return before, probes, keys


def _reached(bench: Bench, forest: Forest, defaults: Mapping[str, int], written: Mapping[str, int],
             probed: Sequence[Probed], probes: Mapping[str, Probe], started: float) -> Reach | None:
    """When the experiment that the tuned program runs had been measured on every tuning dataset (None: on
    some dataset it never was, or its path is not known)."""
    nodes = {n.name for n in all_nodes(forest)}
    sizes = {name: v for name, v in written.items() if name not in nodes}
    firsts = []
    for d in probed:
        values = in_effect(forest, defaults, probes[d.dataset.name].default_threshold) | dict(written)
        if not values.keys() >= d.epars.keys():
            return None
        first = bench.first_measured(d.dataset.name, experiment_key(path(forest, values, d.epars, d.fallbacks),
                                                                    sizes))
        if first is None:
            return None
        firsts.append(first)
    if not firsts:
        return None
    runs, clock = max(firsts)
    return Reach(runs, clock - started)


def _untuned_key(forest: Forest, defaults: Mapping[str, int], found: Probe, fallbacks: Fallbacks = ()):
    """The experiment of a probed dataset under the program's defaults (None: the probe failed, a threshold it
    compares has no value the tuner knows, or a workgroup-level version runs there: the untuned run falls back
    where it cannot run, which only an experiment, under --no-fallback, tells; `fallbacks`: what experiments
    told, the guards whose versions cannot run there)."""
    if found.failure:
        return None
    values = in_effect(forest, defaults, found.default_threshold)
    if not values.keys() >= found.epars.keys():
        return None
    taken = path(forest, values, found.epars, fallbacks)
    return None if any(falls_back(name) and any(outcomes) for name, outcomes in taken) else experiment_key(taken, {})


def listed_defaults(params: Sequence[Param]) -> dict[str, int]:
    """The thresholds' defaults that the program's --print-params lists (its tuned values, if any)."""
    return {p.name: p.default for p in params if p.is_threshold and p.default is not None}


def in_effect(forest: Forest, defaults: Mapping[str, int], default_threshold: int | None) -> dict[str, int]:
    """The threshold values a run with no --param takes: the program's listed defaults, and the device's
    default threshold (a probe's -D) for the others, where it is known."""
    device = {} if default_threshold is None else dict.fromkeys((n.name for n in all_nodes(forest)), default_threshold)
    return device | dict(defaults)


def _moderate_bench(bench: Bench, moderate: Path | str | None, extra_args: Sequence[str], opened: Store | None,
                    observe: Callable[[Record], None], log: Callable[[str], None]) -> Bench | None:
    """A bench of the program compiled with moderate flattening (None: none given). Its runs count with the
    tuned program's (the same counters: the report's runs, --budget), and it has its own key in the store."""
    if moderate is None:
        return None
    mf = Bench(Program(Path(moderate), extra_args), runs=bench.runs, timeout=bench.timeout, log=log,
               max_runs=bench.max_runs, limits=bench.limits, observe=observe, max_time=bench.max_time)
    mf.stored_count, mf.timeline = bench.stored_count, bench.timeline
    if opened:
        try:
            text = read_program(Path(moderate))
        except ToolError:  # not a program incflat wrote: measured, never stored
            return mf
        mf.store = opened.for_program(ProgramKey.of(text, [], extra_args),
                                      warn=lambda message: log(f"warning: {message}"))
    return mf


def _moderate_runs(mf_bench: Bench | None, failure: str | None, every: Sequence[Dataset],
                   log: Callable[[str], None]) -> dict[str, Measurement]:
    """Every dataset measured once under moderate flattening, or `failure` for each where there is no program."""
    log("moderate flattening (MF):")
    if mf_bench is None:
        log(f"  failed: {failure}")
        return {d.name: Measurement(failure=failure) for d in every}
    # (a bench of its own, which learns its noise from these: topped up as a held-out dataset's untuned run is)
    return {d.name: mf_bench.top_up(d, None, mf_bench.measure(d, None, label="MF"), label="MF") for d in every}


def _plot(directory: Path, records: Sequence[Record], thresholds: Sequence[str], epars: dict,
          log: Callable[[str], None]) -> tuple[Path, ...]:
    """--plot: the charts written (an error drawing them is a warning: the tuning is done and written)."""
    try:
        files = write_plots(directory, records, thresholds, epars, lambda text: log(f"warning: {text}"))
    except (OSError, ValueError, RuntimeError) as e:
        log(f"warning: --plot {directory}: the charts could not be written: {e}")
        return ()
    log(f"plots: {len(files)} chart(s) in {directory}" + (f": {', '.join(f.name for f in files)}" if files else ""))
    return tuple(files)


def _nothing_tuned(reason: str, limits: Limits) -> BaseException:
    if limits.interrupted:
        return Interrupted("interrupted; nothing was written")
    return ToolError(f"stopped: {reason} before any threshold was tuned; nothing was written")


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

    def add(self, record: Record, fastest: bool = True) -> None:
        if self.bar is None:
            return
        if record.source in (RUN, MORE, UNTIMED) or (record.source == PAIRED and record.wall_s):  # invocations
            self.bar.update(1)
        if fastest and record.measurement.ok and record.measurement.times_us:
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


def _no_datasets(fut_path: Path, selection, entry: str | None) -> ToolError:
    why = "; ".join(f"{name}: {reason}" for name, reason in selection.skipped)
    held = f"{len(selection.held_out)} held out (notune)" if selection.held_out else ""
    detail = "; ".join(x for x in (held, why) if x) or (f"no case for entry point {entry!r}" if entry
                                                      else "it has no test cases")
    return ToolError(f"{fut_path} has no datasets to tune on ({detail})")


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


def _in_turn(bench: Bench, datasets: Sequence[Dataset], before: Mapping[str, Measurement],
             after: Mapping[str, Measurement | None], written: Mapping[str, int], device_default: int | None,
             thresholds: set[str]) -> dict[str, tuple[tuple[float, float], ...]]:
    """Per dataset whose untuned and tuned measurements (apart) differ inside the noise of their invocations:
    the pairs of runs of the two in turn in one invocation (untuned, tuned), the program as it was (every
    parameter the written values set at the device's default: it had no tuned defaults) against the values
    written, as the program runs (falling back where a version cannot run). A host whose speed moves between
    invocations (a GPU's shared host) hides a difference apart that the pairs show; stored, and answered from
    the store when resumed."""
    if not written or device_default is None:
        return {}
    untuned = Candidate({name: device_default if name in thresholds else 0 for name in written}, None, "untuned")
    tuned = Candidate(dict(written), None, "tuned")
    found = {}
    for d in datasets:
        b, a = before[d.name], after[d.name]
        if a is None or a is b or not (a.ok and b.ok):
            continue
        if difference_pvalue(b, a, bench.invocation_noise(d.name)[0]) < ALPHA:
            continue
        try:
            pairs = bench.pairs(d, untuned, tuned) or bench.measure_pair(d, untuned, tuned, [b, a],
                                                                          bench.paired_runs(d.name, 0))
        except Stopped:  # (the cache and the store answered the rest; nothing else is measured)
            break
        if len(pairs) >= 2:
            found[d.name] = tuple(pairs)
    return found


def _after(bench: Bench, forest: Forest, assignment: dict[str, int], d: Dataset, probed: Mapping[str, Probed]
           ) -> Measurement:
    """Measure the tuned values: for a tuning dataset, their experiment (usually one already run); a held-out
    one, or one whose probe failed, as the program runs."""
    found = probed.get(d.name)
    if found is None:
        return bench.measure(d, assignment, key=None, label="tuned")
    sizes = {name: v for name, v in assignment.items() if name not in {n.name for n in all_nodes(forest)}}
    return found.settled(lambda: bench.measure(
        d, found.runnable(assignment), key=experiment_key(path(forest, assignment, found.epars, found.fallbacks),
                                                          sizes), label="tuned"))


def _interrupt_message(plan: Sequence[PlannedFile]) -> str:
    done = written(plan)
    if not done:
        return "interrupted; nothing was written"
    untouched = [p.path for p in plan if p.path not in done]
    message = f"interrupted; {' and '.join(map(str, done))} {'is' if len(done) == 1 else 'are'} complete"
    return message + (f", {' and '.join(map(str, untouched))} unchanged" if untouched else "")


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of a tuner run (how it measures, what bounds, stores and logs it, how it searches):
    `incflat autotune` has them too, and passes them on (run_options_argv)."""
    parser.add_argument("-r", "--runs", type=option_int, default=5,
                        help="timed runs per measurement, after one warm-up (default 5)")
    parser.add_argument("--max-runs", type=option_int, default=None,
                        help="runs per measurement at most, and pairs of runs in turn per comparison that one "
                        "invocation of each does not settle (default 4x --runs)")
    parser.add_argument("--max-time", type=option_max_time, default=DEFAULT_MAX_TIME, metavar="SECONDS",
                        help=MAX_TIME_HELP)
    parser.add_argument("--timeout", type=option_seconds, default=60.0,
                        help="seconds allowed per program invocation (default 60)")
    parser.add_argument("-e", "--entry", help="tune only the datasets of this entry point")
    parser.add_argument("--pass-option", action="append", default=[], metavar="OPT",
                        help="pass OPT to the program (repeatable; write --pass-option=-d for options that start "
                        "with -)")
    parser.add_argument("--exclude-case", action="append", default=[], metavar="TAG",
                        help="neither tune on nor report the cases with this tag (repeatable)")
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
    parser.add_argument("--no-moderate", action="store_true",
                        help="do not compile the program with moderate flattening (MF) and measure each dataset "
                        "under it for the report")
    parser.add_argument("--force", action="store_true",
                        help="replace PROGRAM.fut.tuning (and incflat autotune's compiled program) though incflat "
                        "did not write it")
    parser.add_argument("--plot", type=Path, metavar="DIR",
                        help="draw runtime against each tuned threshold's value, and the best runtime so far against "
                        f"program runs, into DIR (PNG; needs matplotlib: pip install 'incflat[{PLOT_EXTRA}]')")


def run_options_argv(args: argparse.Namespace) -> list[str]:
    """The options of add_run_options in `args`, as arguments again."""
    argv = ["--runs", str(args.runs), "--timeout", str(args.timeout)]
    argv += ["--max-runs", str(args.max_runs)] if args.max_runs is not None else []
    argv += ["--max-time", f"{Decimal(repr(args.max_time)):f}"]  # positional: 1e-05 is 0.00001
    argv += ["--entry", args.entry] if args.entry else []
    argv += [f"--pass-option={o}" for o in args.pass_option]
    argv += [f"--exclude-case={t}" for t in args.exclude_case]
    argv += ["--budget", str(args.budget)] if args.budget is not None else []
    argv += ["--stop-after", str(args.stop_after)] if args.stop_after is not None else []
    argv += ["--store", str(args.store)] if args.store is not None else []
    argv += ["--no-store"] if args.no_store else []
    argv += ["--log", str(args.log)] if args.log is not None else []
    argv += ["--strategy", args.strategy, "--objective", args.objective]
    argv += ["--seed", str(args.seed)] if args.seed is not None else []
    argv += ["--no-moderate"] if args.no_moderate else []
    argv += ["--plot", str(args.plot)] if args.plot is not None else []
    argv += ["--force"] if args.force else []
    return argv + (["--tune-sizes"] if args.tune_sizes else [])


MAX_TIME_HELP = (  # (argparse formats help: %% is a %)
    "seconds of run time a measurement of a noisy dataset may spend on timed runs, so that two measurements can "
    "settle a 1%% difference: more runs in the same invocation, never more invocations, at most "
    f"--max-runs (default {DEFAULT_MAX_TIME:g}, about what an invocation's start-up costs anyway; 0: always --runs)"
)


def option_max_time(text: str) -> float:
    """--max-time's value (an argparse type): a decimal number of seconds; option_problem refuses one below 0."""
    if not re.fullmatch(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)", text.strip()):
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {text!r} (a decimal number, 0 or more)")
    return float(text)


def option_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the values of the options both commands have, naming the option; None if nothing."""
    if args.runs < 1:  # (option_seconds refuses seconds that are not positive)
        return f"--runs {args.runs}: must be at least 1"
    if args.max_runs is not None and args.max_runs < args.runs:
        return f"--max-runs {args.max_runs}: must be at least --runs ({args.runs})"
    if args.max_time < 0:
        return f"--max-time {args.max_time:g}: must be 0 (always --runs runs) or more seconds"
    if args.budget is not None and args.budget < 1:
        return f"--budget {args.budget}: must be at least 1"
    problem = log_path_problem(args.log) if args.log is not None else None
    if problem:
        return f"--log {args.log}: {problem}"
    problem = file_place_problem(args.store) if args.store is not None else None
    if problem:
        return f"--store {args.store}: {problem}"
    problem = plot_path_problem(args.plot) if args.plot is not None else None
    return f"--plot {args.plot}: {problem}" if problem else None


def compile_moderate(fut_path: Path, verify: bool | None = None) -> tuple[Path | None, str | None]:
    """The program compiled with moderate flattening (MF), for the report: through the compile cache that
    `incflat bench` and `incflat test` use (nothing is written beside the program), else why it cannot be."""
    from incflat import pipeline
    from incflat.compiled import compile_cached
    try:
        return compile_cached(fut_path, verify=verify, options=pipeline.Options(flattening="moderate")), None
    except Exception as e:  # a compile error (or an unwritable cache) fails the MF column, not the tuning
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return None, f"cannot compile {fut_path} with --flattening=moderate: {detail}"


def main(argv: Sequence[str] | None = None, *, install_as: Path | None = None, verify: bool | None = None) -> int:
    """The tuner's command line; `install_as` is for `incflat autotune`, which tunes a temporary copy of the
    program it compiled and installs it there (see autotune), and `verify` its --verify (for compiling the
    program with moderate flattening, unless --no-moderate)."""
    parser = argparse.ArgumentParser(
        prog="incflat autotune",
        description="Tune the thresholds of a compiled program on the datasets in its .fut file's test blocks.",
    )
    parser.add_argument("program_fut", type=Path, help="the .fut file with the -- == test blocks")
    parser.add_argument("compiled", type=Path, help="the compiled program (incflat compile)")
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
        moderate, moderate_failure = (None, None) if args.no_moderate else compile_moderate(args.program_fut, verify)
        limits.started = time.monotonic()  # --stop-after counts from here, after compiling
        result = autotune(
            args.program_fut, args.compiled,
            runs=args.runs, max_runs=args.max_runs, max_time=args.max_time, timeout=args.timeout, entry=args.entry,
            extra_args=args.pass_option, exclude=args.exclude_case, install_as=install_as,
            store=None if args.no_store else args.store or default_store_path(args.program_fut),
            limits=limits, log_file=args.log, strategy=args.strategy, objective=args.objective, seed=args.seed,
            sizes=args.tune_sizes, moderate=moderate, moderate_failure=moderate_failure, plot_dir=args.plot,
            force=args.force,
        )
        if received:  # its KeyboardInterrupt was swallowed (raised inside an at-fork handler of a child's start)
            print(f"interrupted; {result.tuning_file} and {result.program} are complete", file=sys.stderr)
            return 128 + received[0]
        if limits.interrupted:
            print(f"interrupted; stopped measuring, and {result.tuning_file} and {result.program} are complete",
                  file=sys.stderr)
            return 128 + signal.SIGINT
        return 0
    except ToolError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(str(e) if isinstance(e, Interrupted) else "interrupted; nothing was written", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
