"""The tuner's result (`TuneResult`, a `DatasetReport` per dataset) and the report that `incflat autotune`
prints of it."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from incflat.tuner.measure import ALPHA, Measurement, difference_pvalue, paired_ratio, paired_verdict
from incflat.tuner.search import Evaluation
from incflat.tuner.tree import Version
from incflat.tuner.writeback import Provenance


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
    moderate: Measurement | None = None  # the program compiled with moderate flattening; None: not measured
    wall_s: float = 0.0  # seconds of program runs for this dataset (all phases, MF included)
    version: Version | None = None  # what the tuned values run; None: not known (a held-out dataset, unprobed)
    invocation_noise: float = 0.0  # the dataset's, as the bench learnt it (tuner.measure.invocation_spread)
    measured_again: int = 0  # of `runs`, those that added runs to a configuration measured before
    # (untuned, tuned) runs in turn in one invocation, where apart they differed inside the noise (autotune)
    in_turn: tuple[tuple[float, float], ...] = ()

    @property
    def configurations(self) -> int:
        """The invocations that measured a configuration (an assignment's path, MF, or the probe) for the first
        time: the thesis's count of benchmark runs, each of which may take several invocations here."""
        return self.runs - self.measured_again

    @property
    def speedup(self) -> float:
        """Untuned / tuned: of their runs in turn where there are some (their ratio), else of their means."""
        if self.in_turn:
            return math.exp(-paired_ratio(self.in_turn)[0])  # (the pairs: untuned, tuned)
        ok = self.after is not None and self.before.ok and self.after.ok
        return self.before.runtime_us / self.after.runtime_us if ok else float("nan")

    @property
    def significant(self) -> bool:
        """Whether tuned and untuned differ by more than the noise, the invocations' included (at ALPHA); where
        they were run in turn, by their pairs (measure.paired_verdict)."""
        if self.in_turn:
            return paired_verdict(self.in_turn, len(self.in_turn)) != 0
        return (self.after is not None and self.before.ok and self.after.ok
                and difference_pvalue(self.before, self.after, self.invocation_noise) < ALPHA)

    @property
    def problems(self) -> tuple[str, ...]:
        """What went wrong on this dataset, for the report: failures, and what was not measured."""
        found = [f"failed: MF: {self.moderate.failure}" if self.moderate is not None and not self.moderate.ok else "",
                 f"failed: untuned: {self.before.failure}" if not self.before.ok else "",
                 f"failed: {self.probe_failure}" if self.probe_failure else "",
                 "tuned: not measured (stopped)" if self.after is None else "",
                 f"failed: tuned: {self.after.failure}" if self.after is not None and not self.after.ok else ""]
        return tuple(p for p in found if p)


@dataclass(frozen=True)
class Reach:
    """When the tuned values had first been measured on every tuning dataset (the runs after it compared other
    values, or confirmed these): for a strategy that tunes per dataset, what a sampler's first measurement of
    its best assignment is."""

    runs: int  # program invocations until then, every phase
    seconds: float  # since the tuner started


def configurations_until(timeline: Sequence[Sequence], runs: int, names: Sequence[str]) -> dict[str, int]:
    """Per dataset of `names`, the invocations among the first `runs` of the timeline (dataset, measured again)
    that measured a configuration for the first time."""
    counted = Counter(name for name, again in timeline[:runs] if not again)
    return {name: counted[name] for name in names}


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
    # the whole assignments a strategy measured, and tree's after each round, in order (the study)
    evaluations: tuple[Evaluation, ...] = ()
    elapsed_s: float = 0.0  # the tuner's own wall time, from its start to the report
    plots: tuple[Path, ...] = ()  # the charts --plot wrote
    reached: Reach | None = None  # when the tuned values had first been measured on every tuning dataset
    timeline: tuple[tuple[str, bool], ...] = ()  # every invocation: its dataset, and whether it measured again

    def configurations_until(self, runs: int) -> dict[str, int]:
        """Per tuning dataset, the configurations its share of the first `runs` invocations measured."""
        return configurations_until(self.timeline, runs, [d.name for d in self.datasets if not d.held_out])

    @property
    def runs(self) -> int:
        return sum(d.runs for d in self.datasets)

    @property
    def wall_s(self) -> float:
        """Seconds of program runs, all datasets and phases."""
        return sum(d.wall_s for d in self.datasets)

    @property
    def moderate(self) -> bool:
        """Whether the datasets were measured under moderate flattening (MF) too."""
        return any(d.moderate is not None for d in self.datasets)

    @property
    def cache_hits(self) -> int:
        return sum(d.cache_hits for d in self.datasets)

    @property
    def stored_hits(self) -> int:
        return sum(d.stored_hits for d in self.datasets)


def report(result: TuneResult, log: Callable[[str], None]) -> None:
    log("")
    log("tuned values:" if result.assignment else "tuned values: none")
    for name in sorted(result.assignment):
        log(f"  {name}={result.assignment[name]}")
    for note in result.notes:
        log(f"note: {note}")
    if not result.datasets:
        log(f"wrote {result.tuning_file} and the defaults of {result.program}")
        return
    log("runtimes (µs): the mean of the timed runs (after a warm-up run) ± the half-width of its 95% confidence "
        "interval")
    log(("MF: compiled with moderate flattening; " if result.moderate else "")
        + "IF: this program (incremental flattening), untuned (its defaults) and tuned")
    log("speedup: untuned IF / tuned IF ('same': inside the noise, p >= 0.05 with the invocations'; 'in turn': "
        "where apart it was, from runs of the two in turn in one invocation); runs, wall s: every phase"
        + (", MF too" if result.moderate else "") + "; configs: the runs that measured a configuration for the "
        "first time (the others added runs to one)")
    columns = [("dataset", "<", [d.name for d in result.datasets]),
               ("role", "<", ["held-out" if d.held_out else "tuning" for d in result.datasets])]
    if result.moderate:
        columns.append(("MF", ">", [_us(d.moderate) for d in result.datasets]))
    columns += [
        ("untuned IF", ">", [_us(d.before) for d in result.datasets]),
        ("tuned IF", ">", [_us(d.after) for d in result.datasets]),
        ("speedup", ">", ["-" if math.isnan(d.speedup) else (f"{d.speedup:.2f}x" if d.significant else "same")
                          + (" in turn" if d.in_turn else "") for d in result.datasets]),
        ("runs", ">", [str(d.runs) for d in result.datasets]),
        ("configs", ">", [str(d.configurations) for d in result.datasets]),
        ("cached", ">", [str(d.cache_hits) for d in result.datasets]),
        ("stored", ">", [str(d.stored_hits) for d in result.datasets]),
        ("wall s", ">", [f"{d.wall_s:.1f}" for d in result.datasets]),
    ]
    widths = [max(len(title), *map(len, cells)) for title, _, cells in columns]
    log("  ".join(f"{title:{align}{w}}" for (title, align, _), w in zip(columns, widths)).rstrip())
    for i, d in enumerate(result.datasets):
        row = "  ".join(f"{cells[i]:{align}{w}}" for (_, align, cells), w in zip(columns, widths))
        log(row + ("  " + "; ".join(d.problems) if d.problems else ""))
    stored = f", {result.stored_hits} from the store {result.store}" if result.store else ""
    log(f"program runs: {result.runs} ({result.cache_hits} more answered from the cache{stored}); "
        f"{result.wall_s:.1f} s in program runs, {result.elapsed_s:.1f} s in all")
    if result.reached is not None and result.assignment:
        most = max(result.configurations_until(result.reached.runs).values(), default=0)
        log(f"the tuned values were first measured on every tuning dataset after {result.reached.runs} program runs "
            f"({result.reached.seconds:.1f} s; at most {most} configurations of a dataset); the runs after it "
            "measured other values, confirmed these, or timed the held-out datasets")
    report_versions(result, log)
    if result.stopped:
        log(f"stopped early: {result.stopped}; the values written are the best found so far")
    log(f"wrote {result.tuning_file} and the defaults of {result.program}")


def report_versions(result: TuneResult, log: Callable[[str], None]) -> None:
    """The version each dataset runs under the tuned values, and the guard outcomes that choose it."""
    log("versions chosen (named as `incflat versions` names them) and the guards' outcomes in tree order")
    log("(yes: threshold <= ePar, the less flattened side; mixed: a loop guard goes both ways; ?: a device default):")
    width = max(len(d.name) for d in result.datasets)
    shown = [(d, d.version.name if d.version else "-") for d in result.datasets]
    name_width = max(len(name) for _, name in shown)
    for d, name in shown:
        if d.version is None:
            why = "held out: not probed" if d.held_out else "not probed (its -L run failed)"
            log(f"  {d.name:<{width}}  {name:<{name_width}}  {why}")
        else:
            log(f"  {d.name:<{width}}  {name:<{name_width}}  {d.version.outcomes}".rstrip())


def _us(m: Measurement | None) -> str:
    """A mean and the half-width of its 95% confidence interval, in µs (`1,234 ± 56`, `12.3 ± 0.4`)."""
    if m is None:
        return "not measured"
    if not m.ok:
        return "failed"
    low, high = m.interval_us()
    half = (high - low) / 2
    if m.runtime_us >= 100:
        return f"{m.runtime_us:,.0f} ± {half:,.0f}"
    return f"{m.runtime_us:.1f} ± {half:.1f}"


# ---- the command line (also the options `incflat autotune` passes on) ----
