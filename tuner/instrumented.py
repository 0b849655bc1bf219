"""A loop threshold's best breakpoint computed from profiled runs: Breddam's Eq. 3.1 (thesis Alg. 8).

With a threshold at 1 every comparison takes the true version, at never the false one. One `-P` run of each
dataset each way gives every comparison's ePar and the time of the version it ran (the program's guard
records), so a breakpoint c costs sum(t_true(e) for e >= c) + sum(t_false(e) for e < c), for every candidate c
at once: two runs per dataset, however many values the threshold sees. The `instrumented` strategy does this for
every threshold; `tree` for the thresholds that see several values in one run (a loop). A profiled run records
every guard it passes, so runs that take the same path are made once (Profiles) and serve every threshold on it,
and the `instrumented` strategy sets a threshold of each tree at once, so that two runs serve them all.

The runs of a profiled invocation also give the noise of each cost: a breakpoint moves from the value the
threshold has (the program's default, or one found before) only where the profiles show it significantly
cheaper (a t-test at measure.ALPHA on the runs' costs of the comparisons the two values decide differently);
otherwise the value stays, as a tie does in a timed comparison. Without that, LUD's loop breakpoints moved from
one invocation to the next (three `instrumented` runs on PoCL set 10 of its 28 thresholds differently).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from incflat.codegen.runtime.tuning import Forest
from incflat.tuner.measure import ALPHA, Measurer, profile
from incflat.tuner.tree import Probed, path


def version_cost(record: Mapping) -> float:
    """What one guard decision's version cost the run, µs. The host launches kernels without waiting for
    them, so a version costs its kernels' time or the host's time in it (launches, the host code between
    them), whichever is longer: on a GPU a version of many short kernels is bound by its launches, which the
    kernels' time alone does not show (the thesis's Eq. 3.1 reads the kernels' time only)."""
    return max(record["time_us"], record["host_us"])


# One profiled run's comparisons of a threshold: (ePar, what the version it ran cost, µs), in the run's order.
Run = list[tuple[int, float]]


class Breakpoint(NamedTuple):
    value: int
    # the value the threshold had, kept: the cheapest candidate in the profiles was not significantly cheaper
    kept: bool = False


class Profiles:
    """The profiled runs of one tuner run, made once per dataset and path."""

    def __init__(self, bench: Measurer, forest: Forest):
        self.bench, self.forest = bench, forest
        self._made: dict[tuple, tuple[int, dict | None]] = {}  # (runs after the warm-up, the -P records)

    def runs(self, d: Probed, assignment: Mapping[str, int], name: str) -> list[Run] | None:
        """Each timed run's comparisons of threshold `name` in a profiled invocation of d (its warm-up run
        dropped); None if the invocation failed or its runs did not make the same comparisons. An invocation
        makes as many runs as a timed measurement of d would (Bench.timed_runs: enough to settle a
        comparison, within the limits of --max-runs and --max-time): a breakpoint computed from noisy
        per-decision times moves with the noise, and more runs cost no more start-ups."""
        key = (d.dataset.name, path(self.forest, assignment, d.epars))
        if key not in self._made:
            runs = self.bench.timed_runs(d.dataset.name)
            self._made[key] = runs, profile(self.bench, d.dataset, assignment, runs + 1)
        runs, records = self._made[key]
        if records is None:
            return None
        mine = [(r["epar"], version_cost(r)) for r in records["versions"] if r["threshold"] == name]
        if len(mine) % (runs + 1):
            return None
        per_run = len(mine) // (runs + 1)
        timed = [mine[k * per_run:(k + 1) * per_run] for k in range(1, runs + 1)]
        if any([e for e, _ in run] != [e for e, _ in timed[0]] for run in timed):
            return None
        return timed

    def best_breakpoint(self, datasets: Sequence[Probed], when_true: Mapping[str, int],
                        when_false: Mapping[str, int], name: str, candidates: Sequence[int],
                        keep: int | None = None) -> Breakpoint | None:
        """The candidate value of threshold `name` with the least total time over the datasets' comparisons,
        the larger on a tie, from runs under `when_true` (name at 1) and `when_false` (name at never); `keep`
        (the value it has) instead where that candidate is not significantly cheaper than it. None where a run
        failed or the two runs did not make the same comparisons (the caller then searches)."""
        times = [[self.runs(d, assignment, name) for d in datasets] for assignment in (when_true, when_false)]
        pairs = list(zip(*times))
        if not all(t is not None and f is not None and [e for e, _ in t[0]] == [e for e, _ in f[0]]
                   for t, f in pairs):
            return None
        sides = [(runs, side) for t, f in pairs for runs, side in ((t, True), (f, False))]
        # each comparison's cost both ways, averaged over the runs
        averaged = [(e, statistics.fmean(run[i][1] for run in t), statistics.fmean(run[i][1] for run in f))
                    for t, f in pairs for i, (e, _) in enumerate(t[0])]

        def cost(c: int) -> float:
            return sum(when_true if e >= c else when_false for e, when_true, when_false in averaged)

        best = min(candidates, key=lambda c: (cost(c), -c))
        if keep is None or keep == best or _significantly_cheaper(sides, best, keep):
            return Breakpoint(best)
        return Breakpoint(keep, kept=True)


def _taken(run: Run, c: int, side: bool) -> float:
    """What the comparisons of `run` that take `side` (true: ePar >= c) cost with the threshold at c."""
    return sum(cost for e, cost in run if (e >= c) == side)


def _significantly_cheaper(sides: Sequence[tuple[Sequence[Run], bool]], best: int, keep: int) -> bool:
    """Whether the profiles' total cost with the threshold at `best` is significantly below that at `keep`:
    per run of each side, the cost of the comparisons the two values send to that side differently; Welch's
    sum of the sides' variances of the mean, a t-test at ALPHA (the fewest runs' degrees of freedom). Single
    runs allow no test: the means decide."""
    from scipy import stats

    differences = [[_taken(run, keep, side) - _taken(run, best, side) for run in runs] for runs, side in sides]
    saving = sum(statistics.fmean(each) for each in differences)
    if min(map(len, differences)) < 2:
        return saving > 0
    variance = sum(statistics.variance(each) / len(each) for each in differences)
    if variance == 0:
        return saving > 0
    dof = min(len(each) for each in differences) - 1
    return saving > stats.t.ppf(1 - ALPHA / 2, dof) * math.sqrt(variance)
