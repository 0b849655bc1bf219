"""The simple-case tuner (Alg. 2 of Breddam's thesis, digest §3.1), with a fallback for loop thresholds.

Thresholds are tuned children first. For threshold T, each dataset D that reaches it runs with T=1 (true) and
T=never (false), ancestors pinned so that T is reached, descendants at their tuned values. With D's ePar E,
"true was significantly faster" means any T in [1, E] suits D, and "false was" any T in [E+1, never]; a
dataset on which the two differ by less than the noise (measure.compare: one invocation of each where that
settles it, else runs of the two in turn until significant, known to be small, or `max_runs`) sets no range,
but within the intersection of the others the values that send such tied datasets the ways of their faster
means (summed) are preferred: no evidence either way, but the better bet. If the value T has lies among the
preferred (in the first pass the program's default, where the tuner knows it, else never; in a later one, or after
strategies.tree's side-by-side pass, the value found before), it stays. Otherwise Alg. 2 takes their upper
end; where the program's default is known, the tuner takes the preferred value nearest it instead, so that the
threshold moves only as far as the results require and a dataset they did not measure keeps the default's
outcome beyond them. If the intersection is empty, the faster of its two ends (mean runtime summed over the
datasets), or with a known default the value nearest it that sends every dataset the way that end does.
Starting from the defaults matters where guards interact: two guards of different trees may run faster both
true (their defaults) than either alone, and from never each, compared with the other at never, ties, so both
would stay never. Experiments are cached by each dataset's path,
so a subtree already measured is never run again: with a consistent set of datasets, each dataset runs once
per code version.

Alg. 2 tunes each threshold once. Guards in sequence are not independent, though (a version's result layout
changes the speed of the kernels after it), and a threshold tuned early saw the later ones at their defaults;
so the pass repeats, every other threshold at its tuned value, until a round changes nothing that the
significant results decide (at most MAX_ROUNDS; a move on tied means alone calls for no other round), and
strategies.tree keeps an earlier round's values where they ran faster than the last round's. From the
second round on, a threshold is compared only on the datasets that the values so far send through it: one that
an ancestor now sends elsewhere would only run paths it no longer takes. But an intra-group version falls back
to its false side at run time where its workgroup does not fit, which the training datasets may not show: after
the rounds, the guards that only such fallbacks reach are tuned once more, as if the versions had fallen back,
the others at their final values (no tuning dataset runs them, so no round follows).

A threshold compared against several values in one run (inside a loop) has no single range: its breakpoint is
computed from one profiled run of each version per dataset (tuner.instrumented, the thesis's Eq. 3.1), two runs
however many values it sees; where those runs do not line up, each observed value and never are tried.

Stopped early (measure.Stopped: the budget, the time limit, Ctrl-C), the search keeps what it has: see
stopped_outcome.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Callable

from incflat.tuner.instrumented import Profiles
from incflat.tuner.measure import Candidate, Measurement, Measurer, Stopped, compare
from incflat.ir.runtime.tuning import Forest, Node, all_nodes
from incflat.tuner.tree import Probed, never_value, path, pins, reaches, shown, tuning_order

# Thresholds of sibling subtrees interact (one version's result layout speeds or slows the next kernel), and a
# threshold tuned first saw the later ones at their defaults: the pass repeats, with every other threshold at its
# tuned value, until a round changes nothing (the cache answers every run already made).
MAX_ROUNDS = 3


@dataclass(frozen=True)
class Outcome:
    assignment: dict[str, int]  # the thresholds some tuning dataset reaches; the others keep the program default
    notes: tuple[str, ...]
    stopped: str | None = None  # why the search stopped early, if it did


def stopped_outcome(current: Mapping[str, int], tuned: Collection[str], reached: Collection[str],
                    notes: Sequence[str], reason: str, never: int) -> Outcome:
    """The best assignment so far when a search stops early: the thresholds tuned so far at their values, and
    those some dataset reaches but not tuned yet at their value in `current` (the one the tuned ones were tuned
    with); nothing at all if none was tuned."""
    if not tuned:
        return Outcome({}, (*notes, f"stopped ({reason}) before any threshold was tuned"), reason)
    untuned = sorted(set(reached) - set(tuned))
    note = f"stopped ({reason}); kept the best assignment so far"
    if untuned:
        values = ", ".join(f"{name}={shown(current[name], never)}" for name in untuned)
        note += f": not tuned yet, as during the search: {values}"
    return Outcome({name: current[name] for name in reached}, (*notes, note), reason)


def tune_simple(
    forest: Forest, datasets: Sequence[Probed], bench: Measurer, log: Callable[[str], None],
    start: Mapping[str, int] | None = None, settled: Collection[str] = (), notes: Sequence[str] = (),
    defaults: Mapping[str, int] | None = None,
    checkpoint: Callable[[Mapping[str, int], int], None] = lambda *_: None,
) -> Outcome:
    """Alg. 2 from the `defaults` (the values the untuned program runs with; never where none is known); or,
    given `start` (values found before, say by the side-by-side pass of strategies.tree), the rounds that tune
    each threshold again with the others at those values, the `settled` ones kept as they are. `checkpoint`
    gets the values after each round and its number (search.Objective.checkpoint)."""
    never = never_value(d.epars for d in datasets)
    current = {node.name: never for node in all_nodes(forest)} | dict(defaults or {}) | dict(start or {})
    tuned: dict[str, int] = dict(start or {})
    notes = list(notes)

    def note(text: str) -> None:
        if text not in notes:
            notes.append(text)
            log(f"note: {text}")

    reached = [node.name for node in all_nodes(forest) if any(node.name in d.epars for d in datasets)]
    try:
        _rounds(forest, datasets, bench, log, never, current, tuned, note, dict(defaults or {}),
                seeded=start is not None, settled=settled, checkpoint=checkpoint)
    except Stopped as stop:
        log(f"stopped: {stop}")
        return stopped_outcome(current, tuned, reached, notes, str(stop), never)
    return Outcome(tuned, tuple(notes))


def _rounds(forest: Forest, datasets: Sequence[Probed], bench: Measurer, log: Callable[[str], None], never: int,
            current: dict[str, int], tuned: dict[str, int], note: Callable[[str], None], defaults: dict[str, int],
            seeded: bool, settled: Collection[str],
            checkpoint: Callable[[Mapping[str, int], int], None]) -> None:
    """Tunes each threshold in turn, round after round, into `current` and `tuned` (`seeded`: the values in
    `current` were found before, and count as the first round); then the guards behind the intra-group versions
    that every tuning dataset takes."""
    first = 2 if seeded else 1
    profiles = Profiles(bench, forest)

    def tune(node: Node, reaching: Sequence[Probed]) -> bool:
        """Tunes one threshold on these datasets; whether the significant results moved it."""
        log(f"tuning {node.name}")
        experiment = _Experiment(forest, bench, node, current | pins(node, never), never, profiles,
                                 defaults.get(node.name, never))
        value, firm = _tune_node(experiment, reaching, note)
        log(f"  {node.name} = {experiment.show(value)}")
        moved = firm != current[node.name]
        current[node.name] = tuned[node.name] = value
        return moved

    for round_number in range(first, (MAX_ROUNDS if len(current) > 1 else 1) + 1):
        again = round_number > 1
        if again:
            log(f"round {round_number}: each threshold again, the others at their tuned values")
        changed = False
        for node in tuning_order(forest):
            if node.name in settled:
                continue
            reaching = [d for d in datasets if node.name in d.epars]
            if not reaching:
                note(f"{node.name}: no tuning dataset reaches it; it keeps the program's default")
                continue
            if again:
                # A dataset that the values so far send past the guard (an ancestor decides it) says nothing
                # about it.
                reaching = [d for d in reaching if node.name in dict(path(forest, current, d.epars, d.fallbacks))]
                if not reaching:
                    log(f"{node.name}: the tuned values send every tuning dataset past it; it stays "
                        f"{shown(current[node.name], never)}")
                    continue
            # Another round re-checks what the results found, not the bets on ties: a round whose moves all
            # follow faster means inside the noise would only chase that noise, at a run per guard and dataset.
            changed |= tune(node, reaching)
        checkpoint(dict(current), round_number)
        if not changed:
            break
    # An intra-group version falls back to its false side at run time where its workgroup does not fit, which
    # the tuning datasets may not show (they measure it with --no-fallback, so where it does not fit them they
    # take its false side and the rounds tune what is behind it; a wider dataset may not fit where they do):
    # the guards that only such a fallback reaches are tuned once more, the others at their final values. No
    # tuning dataset runs them, so what they become changes no other comparison, and no round follows.
    announced = False
    for node in tuning_order(forest):
        if node.name in settled or not any(node.name in d.epars for d in datasets):
            continue
        if any(node.name in dict(path(forest, current, d.epars, d.fallbacks)) for d in datasets):
            continue
        fallen = [d for d in datasets
                  if node.name in d.epars and reaches(forest, node, current, d.epars, never, d.fallbacks)]
        if fallen:
            if not announced:
                log("behind the intra-group versions every tuning dataset takes: each guard again, as if they "
                    "fell back, the others at their tuned values")
                announced = True
            tune(node, fallen)


def _tune_node(experiment: _Experiment, reaching: Sequence[Probed],
               note: Callable[[str], None]) -> tuple[int, int]:
    """The threshold's value, and the value the significant results alone give it (see _from_ranges)."""
    name = experiment.node.name
    looped = [d.dataset.name for d in reaching if len(d.epars[name]) > 1]
    if not looped:
        return _from_ranges(experiment, reaching, note)
    where = f"{name}: compared against several values in one run of {', '.join(looped)} (a loop)"
    candidates = sorted({v for d in reaching for v in d.epars[name] if 0 < v < experiment.never} | {experiment.never})
    value = experiment.profiles.best_breakpoint(reaching, experiment.base | {name: 1},
                                                experiment.base | {name: experiment.never}, name, candidates)
    if value is not None:
        note(f"{where}; its breakpoint was computed from a profiled run of each version (Eq. 3.1)")
        return value, value
    note(f"{where}; the profiled runs did not make the same comparisons both ways, so each observed value "
         "and never were tried")
    value = _best_of_values(experiment, reaching, candidates)
    return value, value


@dataclass(frozen=True)
class _Experiment:
    """Runs of datasets with one threshold set to a value and the rest fixed."""

    forest: Forest
    bench: Measurer
    node: Node
    base: dict[str, int]
    never: int
    profiles: Profiles  # the run's profiled runs, for loop thresholds
    default: int  # the value the untuned program runs with (never where it is not known)

    def candidate(self, d: Probed, value: int) -> Candidate:
        assignment = self.base | {self.node.name: value}
        return Candidate(d.runnable(assignment), path(self.forest, assignment, d.epars, d.fallbacks),
                         f"{self.node.name}={self.show(value)}")

    def measurement(self, d: Probed, value: int) -> Measurement:
        """The value's experiment on d, or where a version it chooses cannot run there, the one that runs."""
        def attempt() -> Measurement:
            c = self.candidate(d, value)
            return self.bench.measure(d.dataset, c.params, key=c.key, label=c.label)
        return d.settled(attempt)

    def runtime(self, d: Probed, value: int) -> float:
        return self.measurement(d, value).runtime_us

    def compare(self, d: Probed, first: int, second: int) -> int | None:
        """-1 if `first` is significantly faster on d, 1 if `second` is, 0 for a tie; None where the two run the
        same versions on d: a workgroup-level version one chooses cannot run there (its experiment's failure
        says so, and the dataset's paths then take the guard's false side)."""
        while True:
            a, b = self.candidate(d, first), self.candidate(d, second)
            if a.key == b.key:
                return None
            verdict = compare(self.bench, d.dataset, a, b)
            failures = [found.failure for found in (self.bench.cached(d.dataset.name, c.key) for c in (a, b)) if found]
            if not any([d.learn(failure) for failure in failures]):
                return verdict

    def total(self, datasets: Sequence[Probed], value: int) -> float:
        return sum(self.runtime(d, value) for d in datasets)

    def show(self, value: int) -> str:
        return shown(value, self.never)


def _from_ranges(experiment: _Experiment, reaching: Sequence[Probed],
                 note: Callable[[str], None]) -> tuple[int, int]:
    """The value, and the one that the significant results alone give (ties left out): where the two differ,
    the threshold moved on a bet."""
    name, never = experiment.node.name, experiment.never
    ranges: list[tuple[int, int]] = []
    tied: list[Probed] = []
    for d in reaching:
        (e,) = d.epars[name]
        faster = experiment.compare(d, 1, never)
        if faster is None:  # its version cannot run on d: any value runs d the same way
            note(f"{name}: its version cannot run on {d.dataset.name} (the device's limits), which takes the "
                 "false side whatever its value")
            continue
        if faster == 0:  # (true and false are different paths: the guard's outcome is on each)
            if math.isinf(experiment.runtime(d, 1)):
                note(f"{name}: {d.dataset.name} failed both ways, so it gives no range")
            else:
                tied.append(d)
            continue
        ranges.append((1, e) if faster < 0 else (e + 1, never))
    lo, hi = max((r[0] for r in ranges), default=1), min((r[1] for r in ranges), default=never)
    if lo <= hi:
        # Every value in [lo, hi] agrees with every significant result; of them, those that send the tied
        # datasets the way their faster means went. The value it has stays if it is one, or else the default's
        # nearest.
        kept = experiment.base[name]
        firm = kept if lo <= kept <= hi else _nearest_default(experiment, hi, lo, hi)
        low, high = _by_tied_means(experiment, tied, lo, hi, note)
        if low <= kept <= high:
            if kept != high:
                note(f"{name}: {experiment.show(kept)}, found before, agrees with every dataset's result, so it "
                     "stays")
            return kept, firm
        return _near_default(experiment, high, low, high, note), firm
    if tied:
        _note_ties(experiment, tied, note)
    note(
        f"{name}: the datasets' ranges do not intersect ({experiment.show(lo)} > {experiment.show(hi)}); "
        "kept the faster end"
    )
    end = hi if experiment.total(reaching, hi) <= experiment.total(reaching, lo) else lo
    epars = [e for d in reaching for e in d.epars[name]]
    below = max((e for e in epars if e < end), default=0)
    above = min((e for e in epars if e >= end), default=never)
    # every value in (below, above] sends each dataset the way `end` does
    value = _near_default(experiment, end, below + 1, above, note)
    return value, value


def _by_tied_means(experiment: _Experiment, tied: Sequence[Probed], lo: int, hi: int,
                   note: Callable[[str], None]) -> tuple[int, int]:
    """Of the values in [lo, hi], the span that sends the datasets whose two outcomes tied the ways with the
    least summed mean runtime (the value the threshold has breaking a tie of sums). A tie is no evidence that
    the two outcomes differ, but the faster mean is the better bet: keeping the value on every tie gives up
    each gain the noise hides (under a large invocation noise every comparison can tie, and the search would
    keep the untuned program). The runs are those of the comparisons."""
    name = experiment.node.name
    if not tied:
        return lo, hi
    cuts = sorted({e + 1 for d in tied for e in d.epars[name] if lo < e + 1 <= hi})
    spans = list(zip([lo, *cuts], [c - 1 for c in cuts] + [hi]))
    # every value of a span sends each tied dataset one way: its first value runs the paths already measured
    costs = {span: experiment.total(tied, span[0]) for span in spans}
    if len(set(costs.values())) == 1:  # the same means both ways (the same runs, say): nothing to prefer
        _note_ties(experiment, tied, note)
        return lo, hi
    kept = experiment.base[name]  # on equal sums, the span nearest the value the threshold has
    best = min(spans, key=lambda s: (costs[s], max(s[0] - kept, kept - s[1], 0)))
    _note_ties(experiment, tied, note, "so the faster means decide among the values the other results allow: "
               f"{experiment.show(best[0])} to {experiment.show(best[1])}")
    return best


def _note_ties(experiment: _Experiment, tied: Sequence[Probed], note: Callable[[str], None],
               then: str | None = None) -> None:
    names = ", ".join(d.dataset.name for d in tied)
    then = then or ("so they give no range" if len(tied) > 1 else "so it gives no range")
    note(f"{experiment.node.name}: on {names} the two outcomes' difference was not significant (inside the noise "
         f"of their runs, apart or in turn), {then}")


def _near_default(experiment: _Experiment, end: int, low: int, high: int, note: Callable[[str], None]) -> int:
    """Of the values in [low, high], which the datasets' results allow alike, the one nearest the program's
    default; `end`, the one Alg. 2 takes, where the default is not known. A threshold moves from the default
    only as far as the results require, so that a dataset they did not measure (a held-out one, a user's)
    keeps the default's outcome wherever it lies beyond what was measured: Alg. 2's upper end, where a training
    dataset's tie allows any value above its ePar, puts the threshold at never, and can so send a held-out
    dataset down a path no tuning dataset measured."""
    value = _nearest_default(experiment, end, low, high)
    if value != end:
        note(f"{experiment.node.name}: moved from the default, {experiment.show(experiment.default)}, only as far "
             f"as the datasets' results require: {experiment.show(value)}")
    return value


def _nearest_default(experiment: _Experiment, end: int, low: int, high: int) -> int:
    return end if experiment.default == experiment.never else min(max(experiment.default, low), high)


def _best_of_values(experiment: _Experiment, reaching: Sequence[Probed], candidates: Sequence[int]) -> int:
    # On a tie (same paths, hence the same cached runs), prefer the larger value, as Alg. 2 does.
    return min(candidates, key=lambda v: (experiment.total(reaching, v), -v))
