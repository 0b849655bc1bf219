"""What every search strategy works on: the thresholds' plateaus and an objective over assignments.

A threshold T compared against the sorted distinct values e_1 < ... < e_k (over the tuning datasets, every
iteration of a loop) behaves alike for every T in (e_(i-1), e_i]: the runtime is a step function with k + 1
plateaus (digest of Breddam's thesis, §1.5). A strategy therefore chooses, per threshold, one of the values
e_1, ..., e_k, never: a plateau's upper end, as the simple-case algorithm does.

The objective of an assignment combines the tuning datasets' mean runtimes (`--objective`): `sum` (the
thesis's and futhark autotune's: long datasets weigh most), `weighted` (the sum of each dataset's runtime
over its untuned runtime: every dataset weighs alike) or `geomean` (the geometric mean of those ratios). A
failure makes it infinite. Assignments that send every dataset down the same paths are one experiment: the
objective remembers each by its paths and the bench's cache answers its runs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Callable

from incflat.ir.runtime.tuning import Forest, Node, all_nodes
from incflat.tuner.measure import Z_95, Measurement, Measurer, Stopped, mean_variance
from incflat.tuner.simple import Outcome
from incflat.tuner.tree import Probed, never_value, path, pins, shown, takes_true, tuning_order

OBJECTIVES = ("sum", "weighted", "geomean")


class SearchStopped(Stopped):
    """The strategy's own budget of experiments is spent: unlike the run's limits (measure.Stopped), an end of
    the search, not a stop; the best assignment so far stands either way."""


def finite(value: float) -> float:
    """A failure's infinite objective as a number that numeric optimisers (a quadratic fit, CMA-ES) can use:
    worse than anything that ran."""
    return value if math.isfinite(value) else 1e30


DEFAULT_SIZE = 0  # a size dimension's value for "the program's default" (no --param)


def experiment_key(path, sizes: Mapping[str, int]):
    """The cache key of a dataset's run: its path through the version tree, and the sizes set, if any."""
    return (path, tuple(sorted(sizes.items()))) if sizes else path


@dataclass(frozen=True)
class Space:
    """The thresholds some tuning dataset reaches, children before parents, and each one's plateau values; with
    `sizes` (--tune-sizes searched jointly), also size parameters, each with its candidate values after
    DEFAULT_SIZE."""

    forest: Forest
    datasets: tuple[Probed, ...]
    never: int
    order: tuple[Node, ...]  # tuning order (tree.tuning_order), reached thresholds only
    values: Mapping[str, tuple[int, ...]]  # per threshold: its plateaus' upper ends, ascending, never last
    sizes: tuple[str, ...] = ()  # size parameters, after the thresholds in `names` and `values`
    # the threshold values the untuned program runs with, where known (its listed defaults, the device's)
    defaults: Mapping[str, int] = field(default_factory=dict)

    @staticmethod
    def of(forest: Forest, datasets: Sequence[Probed], sizes: Mapping[str, Sequence[int]] | None = None,
           defaults: Mapping[str, int] | None = None) -> "Space":
        never = never_value(d.epars for d in datasets)
        order = tuple(n for n in tuning_order(forest) if any(n.name in d.epars for d in datasets))
        values = {n.name: tuple(sorted({e for d in datasets for e in d.epars.get(n.name, ()) if 0 < e < never}))
                  + (never,) for n in order}
        values |= {name: (DEFAULT_SIZE, *candidates) for name, candidates in (sizes or {}).items()}
        known = {n.name: defaults[n.name] for n in all_nodes(forest) if n.name in (defaults or {})}
        return Space(forest, tuple(datasets), never, order, values, tuple(sizes or ()), known)

    @property
    def names(self) -> tuple[str, ...]:
        """The dimensions: the thresholds in tuning order, then the sizes."""
        return tuple(n.name for n in self.order) + self.sizes

    @property
    def parents_first(self) -> list[Node]:
        """The reached thresholds with each one's ancestors before it (the order a walk of the tree takes)."""
        return [n for n in all_nodes(self.forest) if n.name in self.values]

    def start(self) -> dict[str, int]:
        """Every threshold at never (the fully flattened program), as the thesis starts, and the default sizes."""
        return {n.name: self.never for n in all_nodes(self.forest)} | dict.fromkeys(self.sizes, DEFAULT_SIZE)

    def start_indices(self) -> list[int]:
        """start() as indices into `values`, in `names` order."""
        return [len(self.values[n.name]) - 1 for n in self.order] + [0] * len(self.sizes)

    def chosen_sizes(self, assignment: Mapping[str, int]) -> dict[str, int]:
        return {name: assignment[name] for name in self.sizes if assignment.get(name, DEFAULT_SIZE) != DEFAULT_SIZE}

    def params(self, assignment: Mapping[str, int]) -> dict[str, int]:
        """The --params of an assignment: sizes at their default are not passed."""
        return {name: v for name, v in assignment.items() if not (name in self.sizes and v == DEFAULT_SIZE)}

    def key(self, d: Probed, assignment: Mapping[str, int]):
        """The experiment a dataset runs under an assignment: its path and the sizes set."""
        return experiment_key(path(self.forest, assignment, d.epars, d.fallbacks), self.chosen_sizes(assignment))

    def pinned(self, node: Node, assignment: Mapping[str, int]) -> dict[str, int]:
        """The assignment with node's ancestors set so that every dataset that can reach node does."""
        return dict(assignment) | pins(node, self.never)

    def reaching(self, node: Node) -> list[Probed]:
        return [d for d in self.datasets if node.name in d.epars]

    def reached(self, node: Node, assignment: Mapping[str, int]) -> bool:
        """Whether some dataset reaches node under the assignment of its ancestors (a guard whose version
        cannot run on a dataset takes its false side there)."""
        return any(all(any(takes_true(a, assignment[a], e, d.fallbacks) == outcome for e in d.epars.get(a, ()))
                           for a, outcome in node.ancestors)
                   for d in self.reaching(node))

    def from_indices(self, indices: Sequence[int]) -> dict[str, int]:
        """The assignment of each dimension (in `names` order) to its value at the index (clamped)."""
        chosen = self.start()
        for name, i in zip(self.names, indices):
            values = self.values[name]
            chosen[name] = values[min(max(int(i), 0), len(values) - 1)]
        return chosen

    def paths(self, assignment: Mapping[str, int]) -> tuple:
        return tuple(self.key(d, assignment) for d in self.datasets)

    def outcome(self, assignment: Mapping[str, int]) -> dict[str, int]:
        """What a strategy returns of an assignment: the reached thresholds, and the sizes not at their default."""
        return {n.name: assignment[n.name] for n in self.order} | self.chosen_sizes(assignment)

    def show(self, value: int) -> str:
        return shown(value, self.never)

    def nearest_defaults(self, assignment: Mapping[str, int]) -> dict[str, int]:
        """The assignment with each reached threshold moved, inside its plateau (the values that compare alike
        with every ePar the tuning datasets showed it, so that they all take the same paths), to the value
        nearest the program's default for it, where that is known. A shape not tuned on, whose ePars lie
        outside the plateau's ends, then goes the way the untuned program goes, where nothing measured says
        otherwise, instead of the way the plateau's upper end would send it."""
        moved = dict(assignment)
        for node in self.order:
            value, default = assignment.get(node.name), self.defaults.get(node.name)
            if value is None or default is None:
                continue
            seen = {e for d in self.datasets for e in d.epars.get(node.name, ())}
            below = max((e for e in seen if e < value), default=None)  # the largest ePar it sends false
            above = min((e for e in seen if e >= value), default=None)  # the smallest it sends true
            if below is not None:
                default = max(default, below + 1)
            if above is not None:
                default = min(default, above)
            moved[node.name] = default
        return moved


@dataclass
class Evaluation:
    value: float
    assignment: dict[str, int]
    runs: int  # program invocations made until it was known
    seconds: float  # since `started`
    # where a per-dataset strategy stood: tree's values after this round (its datasets' experiments, each
    # measured for a comparison, not the whole assignment measured for itself); 0: an assignment measured
    checkpoint: int = 0


@dataclass
class Objective:
    """Measures assignments on the tuning datasets; remembers every experiment and the best one."""

    space: Space
    bench: Measurer
    kind: str = "sum"
    baselines: Mapping[str, float] = field(default_factory=dict)  # untuned mean runtimes, for weighted/geomean
    budget: int | None = None  # experiments (distinct paths) at most
    count_runs: Callable[[], int] = lambda: 0  # program invocations so far (for the history)
    history: list[Evaluation] = field(default_factory=list)
    best: Evaluation | None = None
    _known: dict = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)  # the clock the history's seconds count from

    def __post_init__(self):
        if self.kind not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.kind!r}")

    def runtime(self, d: Probed, assignment: Mapping[str, int], label: str = "") -> Measurement:
        """One dataset's measurement under an assignment (cached by its path and sizes; where a version it
        chooses cannot run, the path that runs instead)."""
        return d.settled(lambda: self.bench.measure(d.dataset, self.space.params(d.runnable(assignment)),
                                                    key=self.space.key(d, assignment), label=label))

    def __call__(self, assignment: Mapping[str, int], label: str = "") -> float:
        key = self.space.paths(assignment)
        if key in self._known:
            return self._known[key]
        if self.budget is not None and len(self._known) >= self.budget:
            raise SearchStopped(f"the budget of {self.budget} experiments is spent")
        value = self.combine(self.measurements(assignment, label))
        self._known[key] = value
        evaluation = Evaluation(value, dict(assignment), self.count_runs(), time.monotonic() - self.started)
        self.history.append(evaluation)
        if self.best is None or value < self.best.value:
            self.best = evaluation
        return value

    def checkpoint(self, assignment: Mapping[str, int], round_number: int) -> None:
        """Records in the history where a strategy that compares per dataset stands (tree's values after a
        round: what it would return if stopped there), so that a study can tell when its answer was first good
        enough; without a run, and only where every dataset's experiment under it was measured already."""
        full = self.space.start() | dict(assignment)
        found = [self.bench.cached(d.dataset.name, self.space.key(d, full)) for d in self.space.datasets]
        if any(m is None for m in found):
            return
        self.history.append(Evaluation(self.combine(found), self.space.outcome(full), self.count_runs(),
                                       time.monotonic() - self.started, checkpoint=round_number))

    def measurements(self, assignment: Mapping[str, int], label: str = "") -> list[Measurement]:
        """Each tuning dataset's measurement under the assignment (cached by path)."""
        return [self.runtime(d, assignment, label) for d in self.space.datasets]

    def significantly_worse(self, first: Sequence[Measurement], second: Sequence[Measurement]) -> bool:
        """Whether the datasets' measurements `first` make a significantly worse objective than `second` (at
        5%, by a normal approximation to the weighted sum of their means, each with its dataset's invocation
        noise; the geometric mean is tested as the weighted sum)."""
        if not all(m.ok for m in first):
            return all(m.ok for m in second)
        if not all(m.ok for m in second) or any(len(m.times_us) < 2 for m in (*first, *second)):
            return False
        weights = [1.0 if self.kind == "sum" else 1.0 / self.baselines.get(d.dataset.name, 1.0)
                   for d in self.space.datasets]

        noise = [self.bench.invocation_noise(d.dataset.name)[0] for d in self.space.datasets]

        def mean_and_variance(found):
            return (sum(w * m.mean_us for w, m in zip(weights, found)),
                    sum(w * w * mean_variance(m, v) for w, m, v in zip(weights, found, noise)))
        (a, va), (b, vb) = mean_and_variance(first), mean_and_variance(second)
        return a > b and (va + vb == 0 or (a - b) / math.sqrt(va + vb) > Z_95)

    @property
    def experiments(self) -> int:
        return len(self._known)

    @property
    def bounded(self) -> bool:
        """Whether the run has a budget of program runs or a time limit (measure.Limits) that will stop it."""
        limits = getattr(self.bench, "limits", None)
        return limits is not None and (limits.budget is not None or limits.seconds is not None)

    def combine(self, found: Sequence[Measurement]) -> float:
        if not all(m.ok for m in found):
            return math.inf
        means = [m.runtime_us for m in found]
        if self.kind == "sum":
            return sum(means)
        ratios = [m / self.baselines.get(d.dataset.name, 1.0) for m, d in zip(means, self.space.datasets)]
        if self.kind == "weighted":
            return sum(ratios)
        return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def best_measured(space: Space, objective: Objective, stop: Stopped | None = None) -> Outcome:
    """The best assignment measured, when the search ends or stops (stop: why, if it is the run's limits that
    stopped it, not the strategy's own end)."""
    ended = stop is None or isinstance(stop, SearchStopped)
    if objective.best is None:
        return Outcome({}, (f"stopped ({stop}) before any assignment was measured",), str(stop))
    note = (f"{objective.experiments} experiments; kept the best measured" if ended
            else f"stopped ({stop}) after {objective.experiments} experiments; kept the best measured")
    return Outcome(space.outcome(objective.best.assignment), (note,), None if ended else str(stop))
