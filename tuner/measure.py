"""Measurement: program invocations per (dataset, assignment), a discarded warm-up, timeouts, a cache, and
comparisons that measure until they are settled.

A measurement runs the program with `-r R+1 -t FILE` and drops the first time (the warm-up: kernel
compilation, first allocations). Failures and timeouts are recorded as infinitely slow, never raised. After a
dataset's first successful measurement, a candidate may run at most SLOWDOWN_LIMIT times the wall time of the
best invocation so far (scaled to the runs asked for): anything slower cannot win, so it is killed early.

Adaptive run counts (`max_time`, `--max-time`): once a dataset has a successful measurement, the bench knows
its noise (the coefficient of variation of its runs, pooled over its measurements) and the runtime of its
fastest candidate. A later invocation then asks for the timed runs that settle a comparison of two of its
measurements in one invocation each (decisive_runs: the 95% interval of their difference at most
EQUIVALENCE / 2 wide each way, so that a smaller difference is a tie at once and a larger one significant),
within [runs, max_runs], and no more than fit in `max_time` seconds of run time (but never fewer than `runs`):
a fast or noisy kernel gets more runs in the same invocation, at no extra start-up cost, and a slow or quiet
one keeps `runs`. It never adds an invocation. Where the dataset's invocation noise (below) alone keeps the
difference's interval wider than that, it asks for `runs`: only more invocations can narrow it.

Two measurements of one invocation each are compared by a t-test on their means, whose errors count two kinds
of noise: the runs' own spread within an invocation, and the invocation's: on a GPU, all the runs of one
process can sit tens of percent above or below those of the next (a host-bound program's speed moves with its
host's, which changes for periods of seconds, while its outputs and kernel times stay the same), so runs of one
invocation each prove nothing about a difference of that size. The bench learns each dataset's invocation noise from its
measurements of several invocations (invocation_spread, pooled). A difference whose 95% confidence interval
lies within EQUIVALENCE of the faster mean is a tie at once, significant or not (an equivalence stop: no
figure of the tuner resolves less), and one significant at ALPHA once the noise is known (MIN_INVOCATION_DOF
degrees of freedom) is decided. Any other is settled by paired invocations (compare_paired): the program runs
the two configurations in turn, run by run, in one process (`--alternate-tuning`), so that a pair shares the
host's state, and a trimmed t-test on the logarithms of the pairs' ratios decides (paired_verdict); a tie where
its interval lies within EQUIVALENCE, at `max_runs` pairs, or from half of them where the pairs left could not
make it significant. A tie is a tie, which a strategy must not read as a preference. The paired runs are added to
each side's measurement, and the pairs are kept (and stored): a comparison made again decides from them.

With a store (tuner.store), a measurement found there is not run again, and every invocation is added to it.
Limits (`--budget`, `--stop-after`, the first Ctrl-C) are checked before each invocation: when one is reached,
the invocation raises Stopped, and the strategy returns the best assignment it has so far. Answers from the
cache or the store cost nothing and go on after a stop.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import statistics
import time
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Callable, Protocol

from incflat.tuner.stats import CONVERGENCE, mean_ci, mean_difference_test, relative_standard_error
from incflat.datasets import expected_values
from incflat.datasets import Dataset
from incflat.tuner.children import RunResult, output_file
from incflat.tuner.program import Program
from incflat.ir.errors import ToolError

SLOWDOWN_LIMIT = 10.0
TRIM = 0.2  # the share of a paired comparison's pairs cut at each end (paired_verdict)
ALPHA = 0.05  # the significance level of a comparison
Z_95 = 1.96  # the normal approximation's critical value at ALPHA, two-sided
TIMEOUT_SLACK_S = 1.0  # start-up noise that the wall time of a fast run does not show
# Differences known to be smaller than this share of the faster mean are ties: 1%, futhark bench's bound on the
# relative standard error of uncorrelated runs; no figure of the tuner resolves less, and chasing it costs runs.
EQUIVALENCE = CONVERGENCE[-1][1]
# Degrees of freedom (invocations beyond the first, summed over a dataset's measurements) from which a dataset's
# invocation noise counts as known: one is a single pair of invocations, which a two-mode noise puts in the same
# mode half the time.
MIN_INVOCATION_DOF = 2
# The default of --max-time: about what a program invocation costs anyway (process start-up, OpenCL set-up,
# the warm-up run), so an invocation at most about doubles while the runs of a noisy fast dataset grow.
DEFAULT_MAX_TIME = 1.0
# Where a Record comes from: a program invocation, more runs added to a measurement, the cache of this run, the
# store, or an untimed run (the -L probe).
RUN, MORE, CACHED, STORED, UNTIMED = "run", "run again", "cached", "stored", "untimed"
# Runs of a configuration taken in turn with another's in one invocation (Bench.measure_pair): a Record each,
# the invocation's wall time on the first.
PAIRED = "paired"


@dataclass(frozen=True)
class Measurement:
    times_us: tuple[float, ...] = ()  # the timed runs, warm-up excluded
    failure: str | None = None
    invocation_runs: tuple[int, ...] = ()  # the timed runs of each invocation, in order (): all one invocation

    @property
    def invocations(self) -> tuple[tuple[float, ...], ...]:
        """The timed runs, per program invocation."""
        sizes = self.invocation_runs or ((len(self.times_us),) if self.times_us else ())
        return tuple(self.times_us[end - n:end] for n, end in zip(sizes, itertools.accumulate(sizes)))

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def mean_us(self) -> float:
        return sum(self.times_us) / len(self.times_us) if self.ok else math.inf

    @property
    def min_us(self) -> float:
        return min(self.times_us) if self.ok else math.inf

    @property
    def runtime_us(self) -> float:
        """The figure the tuner sums and reports: the mean of the timed runs."""
        return self.mean_us

    def interval_us(self) -> tuple[float, float]:
        """The 95% confidence interval of the mean."""
        _, low, high = mean_ci(self.times_us)
        return low, high

    def merged(self, more: "Measurement") -> "Measurement":
        """These runs and those of `more`, another invocation (or several), or `more`'s failure."""
        if not more.ok:
            return more
        sizes = tuple(len(runs) for runs in self.invocations + more.invocations)
        return Measurement(self.times_us + more.times_us, None, sizes)


@dataclass(frozen=True)
class Candidate:
    """An assignment to measure a dataset under: its --params, the key of the experiment, a label for the log."""
    params: Mapping[str, int] | None
    key: Hashable = None
    label: str = ""


class Stopped(Exception):
    """Measuring stopped before the search ended (its message says why: the budget, the time, an interrupt)."""


@dataclass
class Limits:
    """When to stop measuring: checked before each program invocation."""

    budget: int | None = None  # program invocations at most
    seconds: float | None = None  # from the start
    interrupted: bool = False  # set by the first Ctrl-C
    started: float = field(default_factory=time.monotonic)
    # the seconds of `seconds` the search leaves for the check of its values against the program's defaults,
    # which may spend them once `closing` is set
    reserve: float = 0.0
    closing: bool = False

    def reason(self, invocations: int) -> str | None:
        if self.interrupted:
            return "interrupted"
        if self.budget is not None and invocations >= self.budget:
            return f"the budget of {self.budget} program runs is spent"
        if self.seconds is not None:
            spent = time.monotonic() - self.started
            if spent >= self.seconds:
                return f"the time limit of {self.seconds:g} s (--stop-after) is reached"
            if not self.closing and spent >= self.seconds - self.reserve:
                return (f"the search's share of the time limit of {self.seconds:g} s (--stop-after) is spent (the "
                        f"last {self.reserve:g} s are for the check of its values against the program's defaults)")
        return None


@dataclass(frozen=True)
class Record:
    """One evaluation, for the --log file and the progress bar."""

    dataset: Dataset
    params: Mapping[str, int] | None
    key: Hashable
    label: str
    measurement: Measurement  # MORE: the runs of this invocation only
    wall_s: float  # of the invocation; 0 for an answer from the cache or the store
    source: str  # RUN, MORE, CACHED, STORED or UNTIMED


class StoredMeasurement(Protocol):
    measurement: Measurement
    walls: Sequence[tuple[float, int]]  # (wall time, runs incl. warm-up) of each successful invocation


class MeasurementStore(Protocol):
    """Where the bench keeps every run and finds earlier ones (tuner.store.ProgramStore)."""

    def measurement(self, dataset: Dataset, params: Mapping[str, int] | None,
                    limit_s: float) -> StoredMeasurement | None: ...

    def add(self, dataset: Dataset, params: Mapping[str, int] | None, run: Measurement, wall_s: float,
            timed_out_after_s: float | None, more: bool) -> None: ...

    def pairs(self, dataset: Dataset, first: Mapping[str, int] | None,
              second: Mapping[str, int] | None) -> list[tuple[tuple[float, ...], tuple[float, ...]]]: ...

    def add_pair(self, dataset: Dataset, first: Mapping[str, int] | None, second: Mapping[str, int] | None,
                 runs: tuple[Measurement, Measurement], wall_s: float) -> None: ...


class Measurer(Protocol):
    """What a search strategy needs: measure a dataset under an assignment, reusing equal experiments, and
    measure two in turn (for a comparison that one invocation of each does not settle)."""

    max_runs: int

    def measure(
        self, dataset: Dataset, params: Mapping[str, int] | None, *, key: Hashable = None, label: str = ""
    ) -> Measurement: ...

    def timed_runs(self, name: str) -> int: ...  # the runs (after a warm-up) an invocation of a dataset makes

    def cached(self, name: str, key: Hashable) -> Measurement | None: ...  # an experiment made, not counted

    def invocation_noise(self, name: str) -> tuple[float, int]: ...  # a dataset's (Bench.invocation_noise)

    def pairs(self, dataset: Dataset, first: Candidate, second: Candidate) -> list[tuple[float, float]]: ...

    def measure_pair(self, dataset: Dataset, first: Candidate, second: Candidate,
                     found: Sequence[Measurement], pairs: int) -> list[tuple[float, float]]: ...

    def paired_runs(self, name: str, have: int) -> int: ...  # the runs of each side a paired invocation makes

    def latest(self, dataset: Dataset, key: Hashable, found: Measurement) -> Measurement: ...


def compare(bench: Measurer, dataset: Dataset, first: Candidate, second: Candidate, *,
            in_turn: bool = False) -> int:
    """-1 if `first` is significantly faster on `dataset`, 1 if `second` is, 0 for a tie: the same experiment,
    both failed, or a difference inside the noise. A failure loses to a run. One invocation of each decides
    where it can: a difference known to be under EQUIVALENCE is a tie, and one significant once the dataset's
    invocation noise is known (and counted in its error) is the faster's. Any other is settled by runs of the
    two taken in turn (compare_paired), as is one that was before (a resumed run decides as its first did).
    `in_turn`: only runs in turn decide, for measurements made far apart in the run (an earlier round's
    values against the last's): the invocation noise, learnt from invocations close in time, misses a host
    whose speed drifts between them, which can make the slower of two configurations look the faster when
    each was measured at another time; in one invocation, the two share the host's state."""
    if first.key is not None and first.key == second.key:
        return 0
    found = [bench.measure(dataset, c.params, key=c.key, label=c.label) for c in (first, second)]
    a, b = found
    if not (a.ok and b.ok):
        return 0 if not (a.ok or b.ok) else (-1 if a.ok else 1)
    if bench.max_runs < 2:  # single runs (--runs 1 --max-runs 1) allow no test: the means decide
        return (a.mean_us > b.mean_us) - (a.mean_us < b.mean_us)
    if in_turn or bench.pairs(dataset, first, second):
        return compare_paired(bench, dataset, first, second, found)
    noise, known = bench.invocation_noise(dataset.name)
    if practically_equal(a, b, noise):
        return 0
    if known >= MIN_INVOCATION_DOF and difference_pvalue(a, b, noise) < ALPHA:
        return (a.mean_us > b.mean_us) - (a.mean_us < b.mean_us)
    return compare_paired(bench, dataset, first, second, found)


def dominates(bench: Measurer, trials: Iterable[tuple[Dataset, Candidate, Candidate]], *,
              in_turn: bool = False, until_stopped: bool = False) -> bool:
    """Whether the first candidate of each (dataset, first, second) is significantly faster than the second on
    some dataset and slower on none (compare on every one): how a whole change is taken where datasets may
    disagree (a size's value, an earlier round's thresholds). until_stopped: where measuring stops (Stopped)
    part-way, the datasets compared so far decide (none: False) rather than the stop propagating."""
    verdicts = set()
    for dataset, first, second in trials:
        try:
            verdicts.add(compare(bench, dataset, first, second, in_turn=in_turn))
        except Stopped:
            if not until_stopped:
                raise
            break
    return -1 in verdicts and 1 not in verdicts


def compare_paired(bench: Measurer, dataset: Dataset, first: Candidate, second: Candidate,
                   found: Sequence[Measurement]) -> int:
    """compare's verdict from runs of the two taken in turn in one invocation, and more such invocations until
    paired_verdict settles it: a host whose speed moves by a third between invocations moves both runs of a
    pair alike. The pairs measured before (this run's, or the store's) count; `found`: the two's measurements."""
    pairs = bench.pairs(dataset, first, second)
    while (verdict := paired_verdict(pairs, bench.max_runs)) is None:
        pairs = bench.measure_pair(dataset, first, second, found, bench.paired_runs(dataset.name, len(pairs)))
        if not pairs:  # the paired invocation failed (its time limit): no evidence either way
            return 0
        found = [bench.latest(dataset, c.key, m) for c, m in zip((first, second), found)]
    return verdict


def paired_verdict(pairs: Sequence[tuple[float, float]], max_pairs: int) -> int | None:
    """-1 if the first of each pair (its runtimes in µs) is significantly faster, 1 if the second is, 0 for a
    tie, None while more pairs could settle it (paired_ratio's test). A tie where the 95% interval of their
    ratio lies within EQUIVALENCE, at `max_pairs` pairs, or, from half of them on, where the pairs left could not
    make it significant at the ratio and spread seen (a futility stop)."""
    if len(pairs) < 2:
        if max_pairs >= 2 or not pairs:
            return None
        (first, second), = pairs  # one run each (--max-runs 1): the faster decides
        return (first > second) - (first < second)
    mean, error, half = paired_ratio(pairs)
    margin = math.log1p(EQUIVALENCE)
    if -margin < mean - half and mean + half < margin:
        return 0
    if abs(mean) > half:
        return -1 if mean > 0 else 1
    n = len(pairs)
    if n >= max_pairs or (n >= max_pairs / 2 and abs(mean) < Z_95 * error * math.sqrt(n / max_pairs)):
        return 0
    return None


def paired_ratio(pairs: Sequence[tuple[float, float]]) -> tuple[float, float, float]:
    """The logarithm of how much longer the second of each pair (runtimes in µs) takes than the first, its
    standard error and the half-width of its 95% interval (at least two pairs): a trimmed t-test (Tukey and
    McLaughlin's, TRIM of the pairs cut at each end, the rest winsorized) on the logarithms of the pairs'
    ratios, so that a run the host stalled (on a busy CPU, 3x its neighbours) does not decide."""
    from scipy import stats

    # (a runtime file's resolution is 1 µs: a run that took less counts as half of one)
    logs = sorted(math.log(max(second, 0.5) / max(first, 0.5)) for first, second in pairs)
    n = len(logs)
    cut = int(TRIM * n)
    kept = logs[cut:n - cut]
    winsorized = [kept[0]] * cut + kept + [kept[-1]] * cut
    error = statistics.stdev(winsorized) * math.sqrt(n) / len(kept)
    half = stats.t.ppf(1 - ALPHA / 2, len(kept) - 1) * error if len(kept) > 1 else math.inf
    return statistics.fmean(kept), error, half


def invocation_spread(found: Measurement) -> tuple[float, int] | None:
    """The variance of a measurement's invocation means beyond what the spread of their runs explains, relative
    to the squared mean (at least 0), and its degrees of freedom (the invocations less one); None for a failure
    or a single invocation."""
    groups = [runs for runs in found.invocations if runs]
    if not found.ok or len(groups) < 2:
        return None
    means = [statistics.fmean(runs) for runs in groups]
    grand = statistics.fmean(means)
    if grand <= 0:
        return None
    explained = [statistics.variance(runs) / len(runs) for runs in groups if len(runs) >= 2]
    excess = statistics.variance(means) - (statistics.fmean(explained) if explained else 0.0)
    return max(0.0, excess) / grand ** 2, len(groups) - 1


def mean_variance(found: Measurement, invocation_noise: float = 0.0) -> float:
    """The variance of a measurement's mean: its runs' variance over the runs, and the invocation noise (a
    relative variance) times the squared mean over the invocations. (The runs' variance holds what this
    measurement's own invocations show of the invocation noise too: counting it twice errs on the side of a
    tie.)"""
    runs = found.times_us
    within = statistics.variance(runs) / len(runs) if len(runs) >= 2 else 0.0
    return within + invocation_noise * found.mean_us ** 2 / max(1, len(found.invocations))


def difference_test(a: Measurement, b: Measurement, invocation_noise: float = 0.0) -> tuple[float, float]:
    """The two-sided p-value that two measurements (two runs each at least) have the same mean, and the half
    width of the 95% interval of mean(a) - mean(b): a t-test on mean_variance at Welch-Satterthwaite's degrees
    of freedom over the runs (with no invocation noise and one invocation each, Welch's test exactly)."""
    return mean_difference_test(a.mean_us - b.mean_us, mean_variance(a, invocation_noise), len(a.times_us),
                                mean_variance(b, invocation_noise), len(b.times_us))


def difference_pvalue(a: Measurement, b: Measurement, invocation_noise: float = 0.0) -> float:
    """difference_test's p-value; nan with fewer than two runs in either."""
    if min(len(a.times_us), len(b.times_us)) < 2:
        return math.nan
    return difference_test(a, b, invocation_noise)[0]


def decisive_runs(cv: float, least: int, most: int, invocation_noise: float = 0.0) -> int:
    """The fewest runs n in [least, most] (`most` if none) at which two means of n runs each, at a coefficient of
    variation `cv`, settle their comparison: the 95% interval of their difference reaches at most
    EQUIVALENCE / 2 of a mean either side of it, so that a difference under EQUIVALENCE / 2 is practically
    equal and one over it significant. (Targeting a mean's own error instead, 1% at 1% noise, left the
    difference of two such means known to about +-2.8%: every close comparison needed another invocation.)
    With an `invocation_noise` (a relative variance) that alone keeps the interval wider, `least`: runs of one
    invocation cannot settle what only more invocations can."""
    from scipy import stats

    if Z_95 * math.sqrt(2 * invocation_noise) > EQUIVALENCE / 2:
        return least
    if cv == 0:  # runs that do not vary settle anything
        return least
    for n in range(max(least, 2), most + 1):
        if stats.t.ppf(0.975, 2 * n - 2) * math.sqrt(2 * (cv * cv / n + invocation_noise)) <= EQUIVALENCE / 2:
            return n
    return max(least, most)


def practically_equal(a: Measurement, b: Measurement, invocation_noise: float = 0.0) -> bool:
    """Whether the 95% confidence interval of the difference of the means lies within EQUIVALENCE of the
    faster mean (two runs each at least)."""
    if min(len(a.times_us), len(b.times_us)) < 2:
        return False
    diff, half = a.mean_us - b.mean_us, difference_test(a, b, invocation_noise)[1]
    margin = EQUIVALENCE * min(a.mean_us, b.mean_us)
    return -margin < diff - half and diff + half < margin


def experiment_options(params: Mapping[str, int] | None, key: Hashable) -> tuple[str, ...]:
    """The program options of a measurement: an experiment (a key: the versions its path names) runs those
    versions, or stops naming a workgroup-level version that cannot run (which the dataset then learns:
    tree.Probed.learn), since a fallback at run time would measure another path under its key (a version whose
    workgroup does not fit the device's local memory would be credited with its fallback's times); the untuned
    and held-out measurements run as the program does."""
    return ("--no-fallback",) if params is not None and key is not None else ()


def _read_expected(dataset: Dataset) -> list | None:
    try:
        return expected_values(dataset.expected)
    except OSError as e:
        raise ToolError(f"{dataset.name}: cannot read its expected output {dataset.expected.written}: "
                        f"{e.strerror}") from None
    except ValueError as e:
        raise ToolError(f"{dataset.name}: its expected output is not Futhark values: {e}") from None


class Bench:
    """Runs a program on datasets, counting runs, cache hits and store hits per dataset, and logging each
    measurement."""

    def __init__(self, program: Program, *, runs: int, timeout: float, log: Callable[[str], None],
                 max_runs: int | None = None, limits: Limits | None = None, store: MeasurementStore | None = None,
                 observe: Callable[[Record], None] | None = None, max_time: float = 0.0):
        self.program = program
        self.runs = runs
        self.max_runs = max(runs, max_runs if max_runs is not None else 4 * runs)
        self.max_time = max_time  # seconds of runs a noisy dataset's measurement may take (0: always `runs`)
        self.timeout = timeout
        self.log = log
        self.limits = limits or Limits()
        self.store = store
        self.observe = observe or (lambda record: None)
        self.hit_count: Counter[str] = Counter()
        self.stored_count: Counter[str] = Counter()
        # Every invocation in order: its dataset, and whether it added runs to a configuration measured before
        # (measure_more); the others measured a configuration for the first time (or probed), the thesis's
        # "benchmark runs".
        self.timeline: list[tuple[str, bool]] = []
        # When each configuration was first measured (or found in the store): the invocations made until then,
        # its own included, and the monotonic clock.
        self._first_measured: dict[tuple[str, Hashable], tuple[int, float]] = {}
        self._cache: dict[tuple[str, Hashable], Measurement] = {}
        # The --params under which a cached measurement is stored (runs added to it are stored with them).
        self._stored_as: dict[tuple[str, Hashable], Mapping[str, int] | None] = {}
        # Per dataset: the shortest successful wall time per number of runs (warm-up included) of an invocation;
        # the pooled noise of its measurements, (sum of (n-1) cv^2, sum of n-1); its fastest mean runtime.
        self._best_wall: dict[str, dict[int, float]] = {}
        self._noise: dict[str, tuple[float, int]] = {}
        self._fastest_us: dict[str, float] = {}
        # Per dataset and configuration measured in several invocations: its invocation_spread.
        self._spread: dict[str, dict[Hashable, tuple[float, int]]] = {}
        # Per (dataset, configuration, configuration): the runs of each paired invocation of the two
        # (measure_pair), in that order.
        self._pairs: dict[tuple[str, Hashable, Hashable], list[tuple[tuple[float, ...], tuple[float, ...]]]] = {}
        self._expected: dict[str, list | None] = {}  # per dataset: the values its results must be (None: any)

    @property
    def invocations(self) -> int:
        return len(self.timeline)

    @property
    def run_count(self) -> Counter[str]:
        """Per dataset, the program invocations."""
        return Counter(name for name, _ in self.timeline)

    @property
    def again_count(self) -> Counter[str]:
        """Per dataset, the invocations that added runs to a configuration measured before."""
        return Counter(name for name, again in self.timeline if again)

    def cached(self, name: str, key: Hashable) -> Measurement | None:
        """The experiment `key` of dataset `name` if it was made (not counted as a cache hit: a look, not a use)."""
        return self._cache.get((name, key))

    def first_measured(self, name: str, key: Hashable) -> tuple[int, float] | None:
        """The invocations made until dataset `name`'s configuration `key` was first measured (its own included),
        and the monotonic clock then; None if it never was."""
        return self._first_measured.get((name, key))

    def measure(
        self, dataset: Dataset, params: Mapping[str, int] | None, *, key: Hashable = None, label: str = ""
    ) -> Measurement:
        """Measure `dataset` with these `--param`s (None: none at all). Equal non-None keys share one run."""
        if key is not None and (dataset.name, key) in self._cache:
            self.hit_count[dataset.name] += 1
            found = self._cache[dataset.name, key]
            self.log(f"  {dataset.name} [{label}]: {describe(found)} (cached)")
            self.observe(Record(dataset, params, key, label, found, 0.0, CACHED))
            return found
        runs = self.timed_runs(dataset.name)
        timeout = self._timeout(dataset.name, runs + 1)
        stored = self.store.measurement(dataset, params, timeout) if self.store else None
        if stored and (not stored.measurement.ok or len(stored.measurement.times_us) >= self.runs):
            self.stored_count[dataset.name] += 1
            found = stored.measurement
            for wall_s, invocation_runs in stored.walls:
                self._learn_wall(dataset.name, wall_s, invocation_runs)
            self._learn_noise(dataset.name, found)
            self._learn_spread(dataset.name, key, params, found)
            self._remember(dataset, key, params, found)
            self.log(f"  {dataset.name} [{label}]: {describe(found)} (stored)")
            self.observe(Record(dataset, params, key, label, found, 0.0, STORED))
            return found
        # (a configuration's first measurement checks its results; the runs added to it later run the same code)
        result = self._invoke(dataset, params, timeout, timing_runs=runs + 1, options=experiment_options(params, key),
                              check=self.result_check(dataset))
        found = self._record(dataset.name, result, timeout)
        self._store(dataset, params, found, result, timeout, more=False)
        self._remember(dataset, key, params, found)
        self.log(f"  {dataset.name} [{label}]: {describe(found)}")
        self.observe(Record(dataset, params, key, label, found, result.wall_s, RUN))
        return found

    def measure_more(self, dataset: Dataset, candidate: Candidate, found: Measurement, runs: int) -> Measurement:
        """`found` with `runs` timed runs of another invocation added (and cached under the candidate's key)."""
        timeout = self._timeout(dataset.name, runs + 1)
        result = self._invoke(dataset, candidate.params, timeout, timing_runs=runs + 1, again=True,
                              options=experiment_options(candidate.params, candidate.key))
        added = self._record(dataset.name, result, timeout)
        stored_as = self._stored_params(dataset.name, candidate)
        self._store(dataset, stored_as, added, result, timeout, more=True)
        return self._extend(dataset, candidate, found, added, Record(dataset, candidate.params, candidate.key,
                                                                     candidate.label, added, result.wall_s, MORE),
                            "measured again")

    def _extend(self, dataset: Dataset, candidate: Candidate, found: Measurement, added: Measurement,
                record: Record, how: str) -> Measurement:
        """`found` with the runs of another invocation, `added`, merged: cached under the candidate's key (if
        any), its invocation spread learnt, logged (`how` it was measured) and observed as `record`."""
        more = found.merged(added)
        if candidate.key is not None:
            self._cache[dataset.name, candidate.key] = more
        self._learn_spread(dataset.name, candidate.key, self._stored_params(dataset.name, candidate), more)
        self.log(f"  {dataset.name} [{candidate.label}]: {describe(more)} ({how})")
        self.observe(record)
        return more

    def pairs(self, dataset: Dataset, first: Candidate, second: Candidate) -> list[tuple[float, float]]:
        """The runs of `first` and `second` taken in turn (measure_pair), as (first's, second's) pairs: this
        run's, or else the store's."""
        runs, swapped = self._paired(dataset, first, second)
        pairs = [pair for a, b in runs for pair in zip(a, b)]
        return [(b, a) for a, b in pairs] if swapped else pairs

    def measure_pair(self, dataset: Dataset, first: Candidate, second: Candidate,
                     found: Sequence[Measurement], pairs: int) -> list[tuple[float, float]]:
        """One invocation of `pairs` runs of each of two configurations, taken in turn after a warm-up of
        each, added to their measurements `found` (and their cached ones, as measure_more adds runs); all
        their pairs so far (pairs()), or [] if the invocation failed. Every other invocation of the two puts
        the second in the first place: a place can have an effect of its own on its runs (the first timed run
        of the configuration in the second place can run slower than its later ones), so that no side always
        takes that place."""
        options = experiment_options(first.params, first.key)
        assert options == experiment_options(second.params, second.key), "pairs are of experiments alike"
        timeout = self._timeout(dataset.name, 2 * (pairs + 1))
        runs, swapped = self._paired(dataset, first, second)
        order = (second, first) if len(runs) % 2 else (first, second)

        def invoke() -> RunResult:
            return self.program.run_in_turn(dataset, [c.params for c in order], timeout=timeout,
                                            timing_runs=pairs + 1, options=options)
        result = self._invoke(dataset, None, timeout, again=True, run=invoke)
        if not result.ok:
            self.log(f"  {dataset.name} [{first.label} | {second.label}] in turn: failed: {result.failure}")
            return []
        self._learn_wall(dataset.name, result.wall_s, 2 * (pairs + 1))
        placed = (Measurement(result.times_us[1:]), Measurement(result.alternate_times_us[0][1:]))
        added = placed if order[0] is first else placed[::-1]
        runs.append((added[1].times_us, added[0].times_us) if swapped else (added[0].times_us, added[1].times_us))
        if self.store:  # (a candidate without a key keeps its measurement as it was: the store too)
            self.store.add_pair(dataset, *(self._stored_params(dataset.name, c) for c in (first, second)), added,
                                result.wall_s, merged=(first.key is not None, second.key is not None))
        for candidate, other, before, more, wall_s in ((first, second, found[0], added[0], result.wall_s),
                                                       (second, first, found[1], added[1], 0.0)):
            self._learn_noise(dataset.name, more)
            self._extend(dataset, candidate, before, more, Record(dataset, candidate.params, candidate.key,
                                                                  candidate.label, more, wall_s, PAIRED),
                         f"in turn with {other.label}")
        return self.pairs(dataset, first, second)

    def _paired(self, dataset: Dataset, first: Candidate,
                second: Candidate) -> tuple[list[tuple[tuple[float, ...], tuple[float, ...]]], bool]:
        """The paired invocations of two experiments (from the store, the first time), and whether they are
        kept in the other order."""
        a, b = (configuration(c.key, self._stored_params(dataset.name, c)) for c in (first, second))
        forward, backward = (dataset.name, a, b), (dataset.name, b, a)
        if forward not in self._pairs and backward in self._pairs:
            return self._pairs[backward], True
        if forward not in self._pairs:
            stored = (self.store.pairs(dataset, *(self._stored_params(dataset.name, c) for c in (first, second)))
                      if self.store else [])
            self._pairs[forward] = list(stored)
        return self._pairs[forward], False

    def _stored_params(self, name: str, candidate: Candidate) -> Mapping[str, int] | None:
        """The --params under which an experiment's measurement is stored (it may have been measured under
        other values that make the same experiment)."""
        return self._stored_as.get((name, candidate.key), candidate.params)

    def paired_runs(self, name: str, have: int) -> int:
        """The runs of each side a paired invocation of dataset `name` asks for, `have` pairs measured: the
        count that settles a comparison at the runs' noise (the invocations' noise left out: a pair shares
        it), within what fits `max_time` for both and what `max_runs` leaves."""
        return max(1, min(self._decisive_runs(name, sides=2, invocations=False), self.max_runs - have))

    def top_up(self, dataset: Dataset, params: Mapping[str, int] | None, found: Measurement,
               label: str = "") -> Measurement:
        """`found`, made before the dataset's noise was known (a held-out dataset has no probe to learn it
        from), with another invocation's runs added where the noise it showed asks for more runs than it has:
        so that it is measured as closely as the measurements it will be compared with."""
        wanted = self.timed_runs(dataset.name)
        if not found.ok or len(found.times_us) >= wanted:
            return found
        return self.measure_more(dataset, Candidate(params, None, label), found, runs=wanted - len(found.times_us))

    def learn(self, name: str, result: RunResult) -> None:
        """Learns dataset `name`'s noise and wall time from timed runs (the warm-up first) that measure nothing
        (a probe's, live or stored)."""
        if result.ok and result.times_us:
            self._record(name, result, self.timeout)

    def latest(self, dataset: Dataset, key: Hashable, found: Measurement) -> Measurement:
        """The cached measurement under `key` as it is now (runs may have been added to `found` since)."""
        return self._cache.get((dataset.name, key), found) if key is not None else found

    def invocation_noise(self, name: str) -> tuple[float, int]:
        """How far the mean of one invocation of dataset `name` strays from its configuration's mean beyond its
        runs' own spread (a relative variance, pooled over the configurations measured in several
        invocations), and its degrees of freedom: (0, 0) before any such configuration."""
        spreads = self._spread.get(name, {}).values()
        dof = sum(d for _, d in spreads)
        return (sum(v * d for v, d in spreads) / dof if dof else 0.0), dof

    def timed_runs(self, name: str) -> int:
        """The timed runs (after the warm-up) that an invocation of dataset `name` asks for."""
        return self._decisive_runs(name, sides=1, invocations=True)

    def _decisive_runs(self, name: str, sides: int, invocations: bool) -> int:
        """`runs`, or, with a `max_time`, decisive_runs at the noise of dataset `name`'s measurements so far (and
        its known invocation noise, with `invocations`), at most `max_runs` and at most what fits in `max_time`
        for `sides` configurations at the runtime of its fastest measurement (never fewer than `runs`)."""
        summed, dof = self._noise.get(name, (0.0, 0))
        if self.max_time <= 0 or dof == 0:
            return self.runs
        fastest_us = self._fastest_us[name]
        affordable = math.floor(self.max_time * 1e6 / (sides * fastest_us)) if fastest_us > 0 else self.max_runs
        most = max(self.runs, min(affordable, self.max_runs))
        noise, known = self.invocation_noise(name) if invocations else (0.0, 0)
        return decisive_runs(math.sqrt(summed / dof), self.runs, most, noise if known >= MIN_INVOCATION_DOF else 0.0)

    def result_check(self, dataset: Dataset) -> Callable[[bytes], str | None] | None:
        """What is wrong with a run's results (the program's binary output) against the dataset's `output`, read
        once (futhark test's comparison, as `incflat test` makes it), or None if nothing; no check (None) where
        the block gives no output (`auto output` and a block without one are not checked)."""
        if dataset.name not in self._expected:
            self._expected[dataset.name] = _read_expected(dataset)
        expected = self._expected[dataset.name]
        if expected is None:
            return None

        def check(out: bytes) -> str | None:
            from incflat.ir.runtime.values import read_values
            from incflat.datasets import compare_values
            try:
                problem = compare_values(read_values(io.BytesIO(out)), expected)
            except ValueError as e:
                problem = f"unreadable results ({e})"
            return problem.splitlines()[0] if problem else None

        return check

    def run_once(self, dataset: Dataset, params: Mapping[str, int], options: Sequence[str],
                 label: str = "", learn_noise: bool = False) -> RunResult:
        """One run that is not a measurement (for `-L`), counted like one. With `learn_noise` (and a
        `max_time`), it makes `runs` timed runs after a warm-up, from which the bench learns the dataset's
        noise and wall time before its first measurement, so that measurement already asks for the runs the
        noise needs (no invocation of too few runs that a comparison must measure again). Those times are
        never a measurement of anything: the options (a log, a profile) slow them."""
        timing_runs = self.runs + 1 if learn_noise and self.max_time > 0 else None
        result = self._invoke(dataset, params, self.timeout, options=options, timing_runs=timing_runs)
        self.learn(dataset.name, result)
        found = Measurement(failure=result.failure)
        self.observe(Record(dataset, params, None, label or " ".join(options), found, result.wall_s, UNTIMED))
        return result

    def _invoke(self, dataset: Dataset, params: Mapping[str, int] | None, timeout: float, *,
                timing_runs: int | None = None, options: Sequence[str] = (), again: bool = False,
                run: Callable[[], RunResult] | None = None,
                check: Callable[[bytes], str | None] | None = None) -> RunResult:
        """One program invocation (`run`, or else a run of `params`, its results given to `check` if any), once
        the limits allow it, counted."""
        reason = self.limits.reason(self.invocations)
        if reason:
            raise Stopped(reason)
        if run is None:
            result = self.program.run(dataset, params=params, timeout=timeout, options=options,
                                      timing_runs=timing_runs, check=check)
        else:
            result = run()
        if self.limits.interrupted:  # the interrupt may have killed this run: it is no result
            raise Stopped("interrupted")
        self.timeline.append((dataset.name, again))
        return result

    def _remember(self, dataset: Dataset, key: Hashable, params: Mapping[str, int] | None,
                  found: Measurement) -> None:
        if key is not None:
            self._cache[dataset.name, key] = found
            self._stored_as[dataset.name, key] = params
            self._first_measured.setdefault((dataset.name, key), (self.invocations, time.monotonic()))

    def _store(self, dataset: Dataset, params: Mapping[str, int] | None, found: Measurement, result: RunResult,
               timeout: float, more: bool) -> None:
        if self.store:
            self.store.add(dataset, params, found, result.wall_s, timeout if result.timed_out else None, more)

    def _timeout(self, name: str, runs: int) -> float:
        """The time limit of an invocation of `runs` runs (warm-up included): SLOWDOWN_LIMIT times what the
        best invocation so far would take for as many runs. An invocation of k runs in w seconds takes at most
        w * runs / k for more runs (its start-up does not grow), and at most w for fewer."""
        walls = self._best_wall.get(name)
        if not walls:
            return self.timeout
        best = min(wall_s * max(1.0, runs / k) for k, wall_s in walls.items())
        return min(self.timeout, SLOWDOWN_LIMIT * best + TIMEOUT_SLACK_S)

    def _learn_wall(self, name: str, wall_s: float, runs: int) -> None:
        walls = self._best_wall.setdefault(name, {})
        walls[runs] = min(wall_s, walls.get(runs, math.inf))

    def _learn_spread(self, name: str, key: Hashable, params: Mapping[str, int] | None, found: Measurement) -> None:
        """Keeps a measurement's invocation_spread under its configuration: its cache key, or its --params."""
        spread = invocation_spread(found)
        if spread is not None:
            self._spread.setdefault(name, {})[configuration(key, params)] = spread

    def _learn_noise(self, name: str, found: Measurement) -> None:
        """Pools the relative variance of a successful measurement's runs into its dataset's noise."""
        times = found.times_us
        if not found.ok or not times:
            return
        self._fastest_us[name] = min(found.mean_us, self._fastest_us.get(name, math.inf))
        if len(times) >= 2:
            cv_squared = relative_standard_error(times) ** 2 * len(times)
            summed, dof = self._noise.get(name, (0.0, 0))
            self._noise[name] = (summed + (len(times) - 1) * cv_squared, dof + len(times) - 1)

    def _record(self, name: str, result: RunResult, timeout: float) -> Measurement:
        if not result.ok:
            assert result.failure is not None
            early = timeout < self.timeout and result.timed_out
            reason = f"{result.failure} (over {SLOWDOWN_LIMIT:g}x the best so far)" if early else result.failure
            return Measurement(failure=reason)
        self._learn_wall(name, result.wall_s, len(result.times_us))
        found = Measurement(times_us=result.times_us[1:])
        self._learn_noise(name, found)
        return found


def configuration(key: Hashable, params: Mapping[str, int] | None) -> Hashable:
    """What tells a measured configuration apart: its experiment's key, or without one its --params."""
    return key if key is not None else None if params is None else tuple(sorted(params.items()))


def profile(bench: Measurer, dataset, params: Mapping[str, int], runs: int = 1) -> dict | None:
    """The `-P` records (kernels' times; each guard decision's ePar, outcome and time) of one invocation of
    `runs` runs, as the program writes them with --profile-json; None if it failed."""
    with output_file() as (where, read):
        result = bench.run_once(dataset, dict(params), ["-r", str(runs), "-P", "--profile-json", where])
        return json.loads(read()) if result.ok else None


def describe(m: Measurement) -> str:
    if not m.ok:
        return f"failed: {m.failure}"
    low, high = m.interval_us()
    return f"mean {m.mean_us:.1f} us (95% CI {low:.1f}-{high:.1f}, {len(m.times_us)} runs)"
