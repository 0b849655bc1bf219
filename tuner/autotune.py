"""The autotune driver: `autotune(request)` tunes the thresholds of a compiled program (a TuneRequest) in named
phases, in order, which share a run state (_Run):

- compile: the program compiled with moderate flattening (MF), where the request asks for it;
- probe: the datasets (_select); the lock, the store, the log and the program's parameters (_open); then the
  ePar probes (-L), the untuned runs and MF's (_probe);
- search: the strategy, its thresholds checked against the untuned program, then the sizes where asked;
- write back: the tuning file and the tuned program, both or neither;
- judge: the tuned values measured against the untuned program (in turn where apart they tie), and the report.

docs/tuning.md describes the whole run: how it measures, stores, resumes, locks, and what an interrupt does.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, TextIO

import numpy as np

from incflat.datasets import Dataset, Selection, read_test_cases, select_datasets
from incflat.files import PlannedFile, remove_stale_temporaries, written
from incflat.ir.errors import ToolError
from incflat.ir.runtime.tuning import Forest, Param, all_nodes
from incflat.tuner.baseline import (compile_moderate, in_effect, listed_defaults, moderate_bench, moderate_runs,
                                    untuned_and_probes, untuned_key)
from incflat.tuner.jsonlog import EvaluationLog
from incflat.tuner.judge import in_turn_pairs, measure_tuned, reached, worse_than_untuned
from incflat.tuner.lock import tuning_lock
from incflat.tuner.measure import (DEFAULT_MAX_TIME, MORE, PAIRED, RUN, UNTIMED, Bench, Candidate, Limits,
                                   Measurement, Record, Stopped, dominates)
from incflat.tuner.plot import plot_path_problem, write_plots
from incflat.tuner.probe import Probe
from incflat.tuner.program import Program
from incflat.tuner.progress import progress_bar
from incflat.tuner.result import DatasetReport, TuneResult, report
from incflat.tuner.search import Objective, Space
from incflat.tuner.sizes import candidates, size_dimensions, tune_sizes
from incflat.tuner.stochastic import JOINT_SIZES
from incflat.tuner.store import ProgramKey, Store
from incflat.tuner.strategies import STRATEGIES
from incflat.tuner.tree import Probed, build_forest, version
from incflat.tuner.writeback import (Provenance, commit, plan_writeback, read_program, tuning_file_problem,
                                     tuning_path_of, with_tuned_defaults)


PER_DATASET = ("tree", "monotonic")  # strategies that compare per dataset, not an objective
# The share of --stop-after that the search leaves for checking the values it found against the defaults.
CLOSING_SHARE = 0.2


@dataclass(frozen=True)
class Measuring:
    """How to measure (tuner.measure's Bench): `runs`, `max_runs` and `max_time` are --runs, --max-runs and
    --max-time, `timeout` the seconds allowed per program invocation, `extra_args` the program's own options
    (--pass-option); `limits` bound the measuring (--budget, --stop-after; the first Ctrl-C sets `interrupted`)."""

    runs: int = 5
    max_runs: int | None = None
    max_time: float = DEFAULT_MAX_TIME
    timeout: float = 60.0
    extra_args: Sequence[str] = ()
    limits: Limits = field(default_factory=Limits)


@dataclass(frozen=True)
class Searching:
    """How to search: `strategy` (tuner.strategies) searches the thresholds, minimising `objective`
    (tuner.search) where it measures whole assignments, its random choices from `seed`; `sizes` tunes the sizes
    of the kernels that run too (jointly for the sampling strategies, else after the thresholds)."""

    strategy: str = "tree"
    objective: str = "sum"
    seed: int | None = None
    sizes: bool = False


@dataclass(frozen=True)
class Writing:
    """Where the run writes. The tuned program goes to `install_as` if given (`incflat autotune` tunes a
    temporary copy), else over the program tuned. `store` is the tuning store's file (None: no store), `log_file`
    gets every evaluation as JSON lines, `plot_dir` the charts of tuner.plot once the report is printed. An
    existing tuning file that a tuner did not write is an error unless `force` (--force) allows replacing it.
    Progress and the report go to `out` (default: sys.stdout), a progress bar to stderr when it is a terminal."""

    install_as: Path | str | None = None
    store: Path | str | None = None
    log_file: Path | str | None = None
    plot_dir: Path | str | None = None
    force: bool = False
    out: TextIO | None = None


@dataclass(frozen=True)
class CompileModerate:
    """The compile phase compiles the .fut file with moderate flattening, through the compile cache (`verify`:
    incflat's --verify); a program that does not compile is every dataset's MF failure, not an error."""

    verify: bool | None = None


@dataclass(frozen=True)
class TuneRequest:
    """What to tune: the compiled program `program_path` on the datasets of the test blocks of `fut_path` (those
    of entry point `entry`, if given, less the cases tagged with a tag in `exclude`). `moderate` is the baseline
    the report compares with, the program compiled with moderate flattening (MF): None (no MF column), such a
    program, or CompileModerate. MF measures every dataset once, after the untuned runs and the probes (under
    its own program key in the store; a failure is reported, not fatal). Then how to measure, search and write."""

    fut_path: Path | str
    program_path: Path | str
    measuring: Measuring = field(default_factory=Measuring)
    searching: Searching = field(default_factory=Searching)
    writing: Writing = field(default_factory=Writing)
    entry: str | None = None
    exclude: Sequence[str] = ()
    moderate: Path | str | CompileModerate | None = None


class Interrupted(KeyboardInterrupt):
    """An interrupt; its message says what it left behind."""


def autotune(request: TuneRequest) -> TuneResult:
    """Tune the thresholds of a compiled program on the datasets of its .fut file and write them back: the
    phases in order. Raises ToolError for problems the user must fix, and Interrupted (a KeyboardInterrupt) on
    an interrupt, its message saying which files are complete."""
    run = _Run.of(request)
    try:
        _compile(run)
        selection = _select(run)
        with ExitStack() as cleanup:
            _open(run, cleanup)
            if not run.forest and not request.searching.sizes:
                return _one_version(run)
            untuned = _probe(run, selection)
            tuned = _search(run, untuned)
            provenance = _write_back(run, untuned, tuned)
            return _judge(run, untuned, tuned, provenance)
    except ToolError:
        if run.limits.interrupted:  # e.g. --print-params, killed by the interrupt
            raise Interrupted(_interrupt_message(run.plan)) from None
        raise
    except KeyboardInterrupt:
        raise Interrupted(_interrupt_message(run.plan)) from None


@dataclass(eq=False)
class _Run:
    """The state the phases share: the request, the files it writes, and what the phases set up (the fields
    that are not arguments: _compile sets `started`, _open the others)."""

    request: TuneRequest
    fut_path: Path
    program_path: Path
    tuning_path: Path
    target: Path  # where the tuned program goes
    install: Path | None
    limits: Limits
    progress: _Progress
    plan: tuple[PlannedFile, ...] = ()  # the files written back: an interrupt says which are complete
    moderate: Path | None = None  # the MF program, or why there is none
    moderate_failure: str | None = None
    started: float = field(init=False)
    program_text: str | bytes = field(init=False)  # (writeback.read_program)
    store: Store | None = field(init=False)
    records: EvaluationLog | None = field(init=False)
    bench: Bench = field(init=False)
    mf_bench: Bench | None = field(init=False)
    params: Sequence[Param] = field(init=False)
    forest: Forest = field(init=False)
    defaults: dict[str, int] = field(init=False)  # the values the untuned program runs with
    walls: Counter[str] = field(default_factory=Counter)  # seconds of program runs per dataset, MF included
    evaluations: list[Record] = field(default_factory=list)  # the tuned program's, in order, for --plot

    @classmethod
    def of(cls, request: TuneRequest) -> _Run:
        fut_path, program_path = Path(request.fut_path), Path(request.program_path)
        install = Path(request.writing.install_as) if request.writing.install_as is not None else None
        return cls(request, fut_path, program_path, tuning_path_of(fut_path), install or program_path, install,
                   request.measuring.limits, _Progress())

    def log(self, line: str) -> None:
        self.progress.write(line, self.request.writing.out or sys.stdout)

    def observe(self, record: Record) -> None:
        """A run of the tuned program."""
        self.progress.add(record)
        self.walls[record.dataset.name] += record.wall_s
        self.evaluations.append(record)
        if self.records:
            self.records.add(record)

    def observe_moderate(self, record: Record) -> None:
        """A run of the MF program."""
        self.progress.add(record, fastest=False)  # another program: not a candidate
        self.walls[record.dataset.name] += record.wall_s
        if self.records:
            self.records.add(record)


@dataclass(eq=False)
class _Untuned:
    """What the probe phase measured: the probes of the tuning datasets, those probed (`probed`), the untuned
    measurements of every dataset (`before`; the search phase adds the runs its comparisons added) and their
    experiments, MF's, and the device's default threshold."""

    every: tuple[Dataset, ...]  # tuning then held-out
    probes: dict[str, Probe]
    probed: list[Probed]
    before: dict[str, Measurement]
    keys: dict
    moderate: dict[str, Measurement]
    device_default: int | None


@dataclass(eq=False)
class _Tuned:
    """What the search phase found: the values to write, and the notes and the reason it stopped (if it did)
    that the report gives; `kept_defaults`: the strategy's values ran slower than the untuned program's."""

    goal: Objective
    assignment: dict[str, int]
    notes: tuple[str, ...]
    stopped: str | None
    kept_defaults: bool


def _compile(run: _Run) -> None:
    """compile: the program compiled with moderate flattening, where the request asks for it. The clocks start
    after it: --stop-after counts from here."""
    moderate = run.request.moderate
    if isinstance(moderate, CompileModerate):
        run.moderate, run.moderate_failure = compile_moderate(run.fut_path, moderate.verify)
    elif moderate is not None:
        run.moderate = Path(moderate)
    run.limits.started = time.monotonic()
    run.started = time.monotonic()


def _select(run: _Run) -> Selection:
    """The datasets of the test blocks (and --plot's folder checked): an error, before anything is locked or
    run, where there are none."""
    plot_dir, entry = run.request.writing.plot_dir, run.request.entry
    plot_problem = plot_path_problem(Path(plot_dir)) if plot_dir is not None else None
    if plot_problem:
        raise ToolError(f"--plot {plot_dir}: {plot_problem}")
    selection = select_datasets(read_test_cases(run.fut_path), entry, tuple(run.request.exclude))
    if not (selection.tuning or selection.held_out or selection.skipped):
        # a misspelt entry point, say: an error even where there is nothing to tune
        raise _no_datasets(run.fut_path, selection, entry)
    return selection


def _open(run: _Run, cleanup: ExitStack) -> None:
    """The lock, the checks of the files to write, the store and the log; the bench, and the program's
    parameters (its --print-params)."""
    writing, measuring = run.request.writing, run.request.measuring
    cleanup.enter_context(tuning_lock(run.fut_path))
    problem = None if writing.force else tuning_file_problem(run.tuning_path)
    if problem:
        raise ToolError(problem)
    for written_by_us in (run.tuning_path, run.target):
        remove_stale_temporaries(written_by_us)  # of a tuner that was killed
    run.program_text = read_program(run.program_path)  # fail now, not after tuning, if there is nowhere to write
    run.store = cleanup.enter_context(closing(Store(Path(writing.store)))) if writing.store is not None else None
    run.records = (cleanup.enter_context(closing(EvaluationLog(Path(writing.log_file), run.target)))
                   if writing.log_file else None)
    cleanup.enter_context(closing(run.progress.start(run.limits.budget)))
    program = Program(run.program_path, measuring.extra_args, shown=run.target)
    cleanup.callback(program.close)  # (a native program's servers: tuner/server.py)
    run.bench = Bench(program, runs=measuring.runs,
                      timeout=measuring.timeout, log=run.log, max_runs=measuring.max_runs, limits=run.limits,
                      observe=run.observe, max_time=measuring.max_time)
    run.params = run.bench.program.params(measuring.timeout)
    run.forest = build_forest(run.params)
    run.defaults = listed_defaults(run.params)
    if run.store:
        key = ProgramKey.of(run.program_text, [p.name for p in run.params], measuring.extra_args)
        run.bench.store = run.store.for_program(key, warn=lambda text: run.log(f"warning: {text}"))
    run.mf_bench = moderate_bench(run.bench, run.moderate, measuring.extra_args, run.store, run.observe_moderate,
                                  run.log)
    if run.mf_bench is not None:
        cleanup.callback(run.mf_bench.program.close)


def _one_version(run: _Run) -> TuneResult:
    """A program without thresholds has one version: the tuned program is the program; an empty tuning file
    says it was tuned."""
    run.log(f"{run.fut_path} has no thresholds: it has one version and there is nothing to tune")
    provenance = _provenance("unknown", (), "no thresholds")
    run.plan = plan_writeback(run.tuning_path, run.program_path, {}, provenance, run.install)
    commit(run.plan, run.log)
    result = TuneResult({}, (), (), run.tuning_path, run.target, provenance)
    report(result, run.log)
    return result


def _probe(run: _Run, selection: Selection) -> _Untuned:
    """probe: the ePar probes (-L) of the tuning datasets, the untuned runs of every dataset, and MF's."""
    if not selection.tuning:
        raise _no_datasets(run.fut_path, selection, run.request.entry)
    for name, reason in selection.skipped:
        run.log(f"skipping {name}: {reason}")
    every = selection.tuning + selection.held_out
    run.log(f"{len(selection.tuning)} tuning and {len(selection.held_out)} held-out (notune) datasets")
    run.log(f"{len(all_nodes(run.forest))} thresholds in {len(run.forest)} tree(s)")
    try:
        before, probes, keys = untuned_and_probes(run.bench, run.forest, selection, run.defaults, run.log)
    except Stopped as stop:
        raise _nothing_tuned(str(stop), run.limits) from None
    probed = [Probed(d, probes[d.name].epars) for d in selection.tuning if not probes[d.name].failure]
    if not probed:
        raise ToolError("the -L run failed on every tuning dataset: "
                        + "; ".join(f"{name}: {p.failure}" for name, p in probes.items()))
    try:
        mf = (moderate_runs(run.mf_bench, run.moderate_failure, every, run.log)
              if run.moderate or run.moderate_failure else {})
    except Stopped as stop:
        raise _nothing_tuned(str(stop), run.limits) from None
    # a run per version a dataset reaches, twice where one run per side cannot be tested; then the held-out
    per_version = 2 if run.request.measuring.runs < 2 else 1
    run.progress.estimate(run.bench.invocations + sum((len(d.epars) + 1) * per_version for d in probed)
                          + len(selection.held_out))
    device_default = next((p.default_threshold for p in probes.values()
                           if p.default_threshold is not None), None)  # (one device: one default)
    return _Untuned(tuple(every), probes, probed, before, keys, mf, device_default)


def _search(run: _Run, untuned: _Untuned) -> _Tuned:
    """search: the strategy; its thresholds checked against the untuned program; then the sizes, where asked
    (as dimensions of a sampling strategy's search, else a step after it)."""
    searching, bench = run.request.searching, run.bench
    joint = searching.sizes and searching.strategy in JOINT_SIZES
    size_params = [p for p in run.params if candidates(p)]
    try:
        dimensions = size_dimensions(Space.of(run.forest, untuned.probed), bench, size_params) if joint else {}
    except Stopped as stop:
        raise _nothing_tuned(str(stop), run.limits) from None
    space = Space.of(run.forest, untuned.probed, dimensions,
                     in_effect(run.forest, run.defaults, untuned.device_default))
    baseline = {d.dataset.name: untuned.before[d.dataset.name].runtime_us for d in untuned.probed}
    goal = Objective(space, bench, searching.objective, baseline, count_runs=lambda: bench.invocations,
                     started=run.started)
    run.log(f"strategy {searching.strategy}"
            + (f", objective {searching.objective}" if searching.strategy not in PER_DATASET else ""))
    if run.limits.seconds is not None:
        run.limits.reserve = CLOSING_SHARE * run.limits.seconds
    outcome = STRATEGIES[searching.strategy](space, goal, np.random.default_rng(searching.seed), run.log)
    run.limits.closing = True
    if outcome.stopped and not outcome.assignment and space.names:
        raise _nothing_tuned(outcome.stopped, run.limits)
    tuned = _Tuned(goal, outcome.assignment, outcome.notes, outcome.stopped, False)
    _check_against_untuned(run, untuned, tuned)
    if tuned.assignment:  # the same paths on the tuning datasets: no run measures anything new
        tuned.assignment = space.nearest_defaults(tuned.assignment)
    if searching.sizes and not joint and not tuned.stopped:
        run.log("sizes:")
        sized = tune_sizes(space, bench, space.start() | tuned.assignment, size_params, run.log)
        tuned.assignment, tuned.notes = tuned.assignment | sized.sizes, tuned.notes + sized.notes
        tuned.stopped = sized.stopped
    return tuned


def _check_against_untuned(run: _Run, untuned: _Untuned, tuned: _Tuned) -> None:
    """The untuned measurements with the runs a comparison added since (the untuned run is its path's cached
    experiment; where it fell back, once the search has learnt which versions cannot run there). A search from
    never can end worse than where the program started: then the program's defaults are kept."""
    forest, defaults, strategy = run.forest, run.defaults, run.request.searching.strategy
    untuned.keys |= {d.dataset.name: untuned_key(forest, defaults, untuned.probes[d.dataset.name], d.fallbacks)
                     for d in untuned.probed if untuned.keys[d.dataset.name] is None}
    untuned.before = {d.name: run.bench.latest(d, untuned.keys[d.name], untuned.before[d.name])
                      for d in untuned.every}
    tuned.kept_defaults = strategy not in PER_DATASET and worse_than_untuned(tuned.goal, tuned.assignment,
                                                                             untuned.before, tuned.stopped)
    if tuned.kept_defaults:
        tuned.notes += (f"the {strategy} strategy's thresholds were significantly slower on the tuning datasets "
                        f"than the program's defaults ({run.request.searching.objective}): kept the defaults",)
        tuned.assignment = {}
    elif tuned.stopped and tuned.assignment and _slower_than_defaults(tuned.goal, tuned.assignment):
        tuned.kept_defaults = True
        tuned.notes += ("the values found before the search stopped ran significantly slower than the program's "
                        "defaults on some tuning dataset, and faster on none (timed in turn): kept the defaults",)
        tuned.assignment = {}


def _slower_than_defaults(goal: Objective, assignment: dict[str, int]) -> bool:
    """Whether the values a stopped search found run significantly slower than the program's defaults on some
    tuning dataset and faster on none, timed in turn, in the time the search left for it (CLOSING_SHARE): a
    search cut off mid-way (LUD's profiled pass, under load) can end far from where it would have. Both run as
    the program does, falling back where a version cannot run: as an experiment (--no-fallback) the defaults
    failed wherever they take such a version (LUD 64's first intra-group version, 2,048 threads), and failing
    lost to the found values, 18x slower, which were written. Where the time runs out part-way, the datasets
    compared decide (LUD tuned on 256, 1,024 and 2,048: its values 13x slower on the first two, the third not
    reached, were written, and ran 64 at 19x Futhark's time)."""
    space = goal.space
    untuned = Candidate(space.params(space.start() | dict(space.defaults)), None, "untuned")
    found = Candidate(space.params(space.start() | assignment), None, "found")
    return dominates(goal.bench, [(d.dataset, untuned, found) for d in space.datasets], in_turn=True,
                     until_stopped=True)


def _write_back(run: _Run, untuned: _Untuned, tuned: _Tuned) -> Provenance:
    """write back: the tuning file and the tuned program, both or neither; but a program tuned before, whose
    tuning the search could not better, is left as it was (unless the tuned program goes elsewhere)."""
    devices = [p.device for p in untuned.probes.values() if p.device]
    searching = run.request.searching
    provenance = _provenance(devices[0] if devices else "unknown", tuple(d.dataset.name for d in untuned.probed),
                             searching.strategy + (" + sizes" if searching.sizes else ""))
    if (tuned.kept_defaults and not tuned.assignment and run.install is None
            and with_tuned_defaults(run.program_text, {}, None) != run.program_text):
        tuned.notes += (f"{run.program_path} was tuned before: it and {run.tuning_path} were left as they were",)
    else:
        run.plan = plan_writeback(run.tuning_path, run.program_path, tuned.assignment, provenance, run.install)
        commit(run.plan, run.log)
    return provenance


def _judge(run: _Run, untuned: _Untuned, tuned: _Tuned, provenance: Provenance) -> TuneResult:
    """judge: the values written measured on every dataset against the untuned program, in turn where apart
    they differ inside the noise (only a program that had no tuned defaults: the untuned run is the device's
    defaults); the report, and the charts of --plot."""
    run.log("tuned:")
    unchanged = tuned.kept_defaults and not tuned.assignment
    by_name = {p.dataset.name: p for p in untuned.probed}
    after: dict[str, Measurement | None] = {}
    for d in untuned.every:
        try:
            after[d.name] = (untuned.before[d.name] if unchanged
                             else measure_tuned(run.bench, run.forest, tuned.assignment, d, by_name))
        except Stopped as stop:  # the cache and the store still answer; nothing else is measured
            after[d.name], tuned.stopped = None, tuned.stopped or str(stop)
    written = {} if unchanged else tuned.assignment
    fresh = with_tuned_defaults(run.program_text, {}, None) == run.program_text  # untuned: every device default
    in_turn = (in_turn_pairs(run.bench, untuned.every, untuned.before, after, written, untuned.device_default,
                             {node.name for node in all_nodes(run.forest)}) if fresh else {})
    reach = reached(run.bench, run.forest, run.defaults, written, untuned.probed, untuned.probes, run.started)
    result = TuneResult(
        tuned.assignment,
        tuple(_dataset_report(run, untuned, written, d, after[d.name], in_turn.get(d.name, ()))
              for d in untuned.every),
        tuned.notes,
        run.tuning_path,
        run.target,
        provenance,
        tuned.stopped,
        store=run.store.path if run.store else None,
        evaluations=tuple(tuned.goal.history),
        elapsed_s=time.monotonic() - run.started,
        reached=reach,
        timeline=tuple(run.bench.timeline),
    )
    report(result, run.log)
    if run.request.writing.plot_dir is not None:
        thresholds = [n.name for n in all_nodes(run.forest) if n.name in tuned.assignment]
        result = replace(result, plots=_plot(Path(run.request.writing.plot_dir), run.evaluations, thresholds,
                                             {d.dataset.name: d.epars for d in untuned.probed}, run.log))
    return result


def _dataset_report(run: _Run, untuned: _Untuned, written: dict[str, int], d: Dataset,
                    after: Measurement | None, in_turn: tuple[tuple[float, float], ...]) -> DatasetReport:
    """The report's row of a dataset: its measurements, its runs, and the version the written values run."""
    bench, found = run.bench, untuned.probes.get(d.name)
    probed = next((p for p in untuned.probed if p.dataset.name == d.name), None)
    chosen = (version(run.forest, in_effect(run.forest, run.defaults, found.default_threshold) | written,
                      found.epars, d.entry, probed.fallbacks if probed is not None else ())
              if found is not None and not found.failure else None)
    return DatasetReport(d.name, d.held_out, untuned.before[d.name], after, bench.run_count[d.name],
                         bench.hit_count[d.name], bench.stored_count[d.name],
                         found.failure if found is not None else None,
                         moderate=untuned.moderate.get(d.name), wall_s=run.walls[d.name], version=chosen,
                         invocation_noise=bench.invocation_noise(d.name)[0],
                         measured_again=bench.again_count[d.name], in_turn=in_turn)


def _provenance(device: str, datasets: tuple[str, ...], strategy: str) -> Provenance:
    return Provenance(device=device, date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      datasets=datasets, strategy=strategy)


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


def _no_datasets(fut_path: Path, selection: Selection, entry: str | None) -> ToolError:
    why = "; ".join(f"{name}: {reason}" for name, reason in selection.skipped)
    held = f"{len(selection.held_out)} held out (notune)" if selection.held_out else ""
    detail = "; ".join(x for x in (held, why) if x) or (f"no case for entry point {entry!r}" if entry
                                                      else "it has no test cases")
    return ToolError(f"{fut_path} has no datasets to tune on ({detail})")


def _interrupt_message(plan: Sequence[PlannedFile]) -> str:
    done = written(plan)
    if not done:
        return "interrupted; nothing was written"
    untouched = [p.path for p in plan if p.path not in done]
    message = f"interrupted; {' and '.join(map(str, done))} {'is' if len(done) == 1 else 'are'} complete"
    return message + (f", {' and '.join(map(str, untouched))} unchanged" if untouched else "")


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
