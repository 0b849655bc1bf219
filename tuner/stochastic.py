"""The budgeted, randomised strategies: each samples whole assignments (plateau indices per threshold) until
the run's --budget (program runs) or --stop-after stops it, or else DEFAULT_BUDGET experiments (distinct
paths) are measured, and keeps the best. Reproducible with --seed.

- random: uniformly random plateaus, the baseline of the study.
- cma: CMA-ES (the `cma` package) over all thresholds' plateau indices jointly, starting from never
  (the thesis's CMAIndex, §3.3).
- bandit: OpenTuner's AUC bandit over three techniques (uniform random, mutation of the best, Nelder-Mead on
  the plateau indices, which are log-scaled values), each credited with the new bests it found recently.

With --tune-sizes, these strategies search the sizes jointly with the thresholds (JOINT_SIZES): the Space's
size dimensions, whose first value is the program's default. (An ant colony, seed 001's MMAS, was here until
the tuner study found it no better than random at the same budget: docs/tuning.md.)
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from incflat.tuner.measure import Stopped
from incflat.tuner.search import Objective, Space, best_measured, finite
from incflat.tuner.simple import Outcome

Log = Callable[[str], None]
DEFAULT_BUDGET = 60  # experiments when the run has no --budget or --stop-after
JOINT_SIZES = ("random", "cma", "bandit")  # strategies that search --tune-sizes with the thresholds
STALE_DRAWS = 2000  # a sampler stops after this many draws in a row that found no new experiment


def budgeted(sample: Callable[[Space, Objective, np.random.Generator], None]):
    """A strategy that runs `sample` (which calls the objective until it raises a Stopped or returns) from
    every threshold at never, and returns the best assignment measured. Without --budget or --stop-after,
    at most DEFAULT_BUDGET experiments."""
    def strategy(space: Space, objective: Objective, rng: np.random.Generator, log: Log) -> Outcome:
        if objective.budget is None and not objective.bounded:
            objective.budget = DEFAULT_BUDGET
        try:
            objective(space.start(), "never")
            if space.names:  # (no threshold reached and no size: never is all there is)
                sample(space, objective, rng)
        except Stopped as stop:
            return best_measured(space, objective, stop)
        return best_measured(space, objective)
    return strategy


def _draws(objective: Objective) -> Iterator[None]:
    """Draw after draw, until one of them stops the search (the budget), or STALE_DRAWS in a row found
    nothing new (the space is exhausted, or the sampler has converged)."""
    seen, stale = objective.experiments, 0
    while stale < STALE_DRAWS:
        yield
        seen, stale = (objective.experiments, 0) if objective.experiments > seen else (seen, stale + 1)


def _random_point(space: Space, rng: np.random.Generator) -> list[int]:
    return [int(rng.integers(len(space.values[n]))) for n in space.names]


@budgeted
def random_search(space: Space, objective: Objective, rng: np.random.Generator) -> None:
    for _ in _draws(objective):
        objective(space.from_indices(_random_point(space, rng)), "random")


@budgeted
def cma_search(space: Space, objective: Objective, rng: np.random.Generator) -> None:
    import cma
    upper = [len(space.values[n]) - 1 for n in space.names]
    if len(upper) == 1:  # CMA-ES needs two dimensions; one threshold's plateaus are few enough to try
        for i in range(upper[0] + 1):
            objective(space.from_indices([i]), "cma")
        return
    options = {"bounds": [[0] * len(upper), upper], "seed": int(rng.integers(1, 2 ** 31)), "verbose": -9}
    es = cma.CMAEvolutionStrategy([float(i) for i in space.start_indices()], 0.4 * (max(upper) + 1), options)
    for _ in _draws(objective):
        if es.stop():
            break
        xs = es.ask()
        es.tell(xs, [finite(objective(space.from_indices(np.rint(x)), "cma")) for x in xs])


# ---- the AUC bandit ----

BANDIT_WINDOW, BANDIT_EXPLORATION = 50, 0.05  # OpenTuner's AUCBanditMetaTechnique defaults (window, C)


def _mutated(rng: np.random.Generator, point: Sequence[int]) -> list[int]:
    """The point with one threshold moved by one or two plateaus."""
    moved = list(point)
    k = int(rng.integers(len(moved)))
    moved[k] += int(rng.choice([-2, -1, 1, 2]))
    return moved


def _nelder_mead(best: Sequence[int]):
    """Nelder-Mead on the continuous plateau indices, from a simplex around the best point; a generator that
    yields points and is sent their values."""
    n = len(best)
    start = np.array(best, dtype=float)
    simplex = [start] + [start + np.eye(n)[k] * (1 if best[k] == 0 else -1) for k in range(n)]
    values = []
    for x in simplex:
        values.append((yield x))
    while True:
        order = np.argsort(values)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        centroid = np.mean(simplex[:-1], axis=0)
        reflected = centroid + (centroid - simplex[-1])
        r = yield reflected
        if r < values[0]:
            expanded = centroid + 2 * (centroid - simplex[-1])
            e = yield expanded
            simplex[-1], values[-1] = (expanded, e) if e < r else (reflected, r)
        elif r < values[-2]:
            simplex[-1], values[-1] = reflected, r
        else:
            contracted = centroid + 0.5 * (simplex[-1] - centroid)
            c = yield contracted
            if c < values[-1]:
                simplex[-1], values[-1] = contracted, c
            else:  # shrink towards the best
                for k in range(1, len(simplex)):
                    simplex[k] = simplex[0] + 0.5 * (simplex[k] - simplex[0])
                    values[k] = yield simplex[k]


@budgeted
def bandit(space: Space, objective: Objective, rng: np.random.Generator) -> None:
    """Each step, the technique with the highest area-under-the-curve credit (its recent results that were new
    bests, the recent ones weighing most) plus an exploration bonus proposes the next point."""
    best_point = space.start_indices()
    best_value = objective(space.from_indices(best_point), "bandit")
    simplex = _nelder_mead(best_point)
    proposals = {"uniform": lambda: _random_point(space, rng), "mutation": lambda: _mutated(rng, best_point),
                 "nelder-mead": lambda: nelder_mead_point}
    nelder_mead_point = next(simplex)
    history: deque[tuple[str, bool]] = deque(maxlen=BANDIT_WINDOW)
    uses = dict.fromkeys(proposals, 0)

    def score(name: str, step: int) -> float:
        mine = [won for used, won in history if used == name]
        auc = sum((k + 1) * won for k, won in enumerate(mine)) / max(1, len(mine) * (len(mine) + 1) / 2)
        return auc + BANDIT_EXPLORATION * math.sqrt(2 * math.log(step + 2) / (uses[name] + 1))

    for step, _ in enumerate(_draws(objective)):
        name = max(proposals, key=lambda n: score(n, step))
        uses[name] += 1
        point = [int(round(min(max(x, 0), len(space.values[n]) - 1)))  # (from_indices would truncate)
                 for x, n in zip(proposals[name](), space.names)]
        value = finite(objective(space.from_indices(point), name))
        history.append((name, value < best_value))
        if value < best_value:
            best_point, best_value = point, value
        if name == "nelder-mead":
            nelder_mead_point = simplex.send(value)
