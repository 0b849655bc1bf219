"""A loop threshold's best breakpoint computed from profiled runs: Breddam's Eq. 3.1 (thesis Alg. 8).

With a threshold at 1 every comparison takes the true version, at never the false one. One `-P` run of each
dataset each way gives every comparison's ePar and the time of the version it ran (the program's guard
records), so a breakpoint c costs sum(t_true(e) for e >= c) + sum(t_false(e) for e < c), for every candidate c
at once: two runs per dataset, however many values the threshold sees. The `instrumented` strategy does this for
every threshold; `tree` for the thresholds that see several values in one run (a loop). A profiled run records
every guard it passes, so runs that take the same path are made once (Profiles) and serve every threshold on it,
and the `instrumented` strategy sets a threshold of each tree at once, so that two runs serve them all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from incflat.ir.runtime.tuning import Forest
from incflat.tuner.measure import Measurer, profile
from incflat.tuner.tree import Probed, path


def version_cost(record: Mapping) -> float:
    """What one guard decision's version cost the run, µs: its span, the time it added to the run's timeline
    (ir.runtime.device.Context.enter). The host launches kernels without waiting for them, so a
    version of many short kernels costs its launches and one of long kernels its kernels; the span is
    whichever the run made it (the thesis's Eq. 3.1 reads the kernels' time only, and on a GPU that ranks
    launch-bound versions wrongly)."""
    return record["span_us"]


class Profiles:
    """The profiled runs of one tuner run, made once per dataset and path."""

    def __init__(self, bench: Measurer, forest: Forest):
        self.bench, self.forest = bench, forest
        self._made: dict[tuple, tuple[int, dict | None]] = {}  # (runs after the warm-up, the -P records)

    def comparisons(self, d: Probed, assignment: Mapping[str, int], name: str) -> list[tuple[int, float]] | None:
        """(ePar, µs) of each comparison of threshold `name` in one run of d, averaged over the runs of a
        profiled invocation after its warm-up run; None if the run failed or its runs did not make the same
        comparisons. An invocation makes as many runs as a timed measurement of d would (Bench.timed_runs:
        enough to settle a comparison, within the limits of --max-runs and --max-time): a breakpoint computed
        from noisy per-decision times moves with the noise, and more runs cost no more start-ups."""
        key = (d.dataset.name, path(self.forest, assignment, d.epars, d.fallbacks))
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
        return [(timed[0][i][0], sum(run[i][1] for run in timed) / runs) for i in range(per_run)]

    def best_breakpoint(self, datasets: Sequence[Probed], when_true: Mapping[str, int],
                        when_false: Mapping[str, int], name: str, candidates: Sequence[int]) -> int | None:
        """The candidate value of threshold `name` with the least total time over the datasets' comparisons,
        the larger on a tie, from runs under `when_true` (name at 1) and `when_false` (name at never); None
        where a run failed or the two runs did not make the same comparisons (the caller then searches)."""
        times = [[self.comparisons(d, assignment, name) for d in datasets] for assignment in (when_true, when_false)]
        pairs = list(zip(*times))
        if not all(t is not None and f is not None and [e for e, _ in t] == [e for e, _ in f] for t, f in pairs):
            return None

        def cost(c: int) -> float:
            return sum(tt if e >= c else tf for t, f in pairs for (e, tt), (_, tf) in zip(t, f))
        return min(candidates, key=lambda c: (cost(c), -c))
