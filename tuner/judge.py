"""The tuned values against the untuned program: whether a search ended worse than where the program started,
the tuned measurements, the runs of the two in turn where apart they differ inside the noise, and when the
tuned values had first been measured."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from incflat.datasets import Dataset
from incflat.ir.runtime.tuning import Forest, all_nodes
from incflat.tuner.baseline import in_effect
from incflat.tuner.measure import ALPHA, Bench, Candidate, Measurement, Stopped, difference_pvalue
from incflat.tuner.probe import Probe
from incflat.tuner.result import Reach
from incflat.tuner.search import Objective, experiment_key
from incflat.tuner.tree import Probed, path


def worse_than_untuned(goal: Objective, assignment: dict[str, int], before: dict[str, Measurement],
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


def measure_tuned(bench: Bench, forest: Forest, assignment: dict[str, int], d: Dataset,
                  probed: Mapping[str, Probed]) -> Measurement:
    """Measure the tuned values: for a tuning dataset, their experiment (usually one already run); a held-out
    one, or one whose probe failed, as the program runs."""
    found = probed.get(d.name)
    if found is None:
        return bench.measure(d, assignment, key=None, label="tuned")
    sizes = {name: v for name, v in assignment.items() if name not in {n.name for n in all_nodes(forest)}}
    return found.settled(lambda: bench.measure(
        d, found.runnable(assignment), key=experiment_key(path(forest, assignment, found.epars, found.fallbacks),
                                                          sizes), label="tuned"))


def in_turn_pairs(bench: Bench, datasets: Sequence[Dataset], before: Mapping[str, Measurement],
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


def reached(bench: Bench, forest: Forest, defaults: Mapping[str, int], written: Mapping[str, int],
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
