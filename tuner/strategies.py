"""The search strategies of `incflat autotune --strategy NAME` (docs/tuning.md compares them).

Each works on a search.Space (per threshold, the upper ends of its plateaus) through a search.Objective, and
returns an Outcome: the assignment of the thresholds some tuning dataset reaches, and notes. Stopped by the
budget or the time limit, or interrupted (measure.Stopped), a strategy returns the best assignment so far: the
best one measured, or the thresholds tuned so far (simple.stopped_outcome).

- tree: the simple-case algorithm (tuner.simple; Breddam's Alg. 2), per-dataset ranges, children first;
  where several trees are reached, from the values of instrumented's side-by-side pass.
- monotonic: futhark autotune's (TFP'21): children first; per threshold, the datasets in turn, each
  binary-searching the ePars left between the bounds the datasets before it set.
- exhaustive: every combination of plateaus that some dataset can tell apart (the oracle for small trees).
- binary: the thesis's Alg. 5, per threshold a binary search over its plateaus on the objective.
- active: the thesis's Alg. 6-7, per threshold a quadratic model over the plateau index, with endpoint sampling.
- instrumented: the thesis's Alg. 8: per threshold two profiled runs per dataset (true and false at every
  comparison), each comparison's own time read from the program's `-P` records, and the best breakpoint
  computed (Eq. 3.1), not searched.
- random, cma, bandit: budgeted samplers of whole assignments (tuner.stochastic).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

from incflat.ir.runtime.tuning import Node
from incflat.ir.errors import ToolError
from incflat.tuner.measure import Candidate, Stopped, dominates
from incflat.tuner.instrumented import Profiles
from incflat.tuner.search import Objective, Space, best_measured, finite
from incflat.tuner.simple import Outcome, stopped_outcome, tune_simple
from incflat.tuner.stochastic import bandit, cma_search, random_search
from incflat.tuner.tree import Probed, path, shown

Log = Callable[[str], None]
EXHAUSTIVE_LIMIT = 4096  # combinations exhaustive will enumerate without a --budget
NON_MONOTONIC = 1.02  # futhark autotune's epsilon


def tree(space: Space, objective: Objective, rng: np.random.Generator, log: Log) -> Outcome:
    """Alg. 2 (tuner.simple). Where the datasets reach several trees (versions of different statements) and
    one of them holds a loop guard (several values in one run), it starts from the side-by-side pass of
    `instrumented` instead of from never: two profiled runs per dataset and step serve a threshold of every
    tree, where Alg. 2's rounds would tune the trees one after another, each against the others at never, and
    then again. That pass is the first round; the next ones tune each threshold compared once per run again,
    by timed runs, the others at their values, until one changes nothing. Without a loop guard, Alg. 2's own
    rounds are the cheaper (a run per path, where the pass costs two profiled runs per step before the rounds
    start). The thresholds of a tree that holds a loop guard keep what the profiled runs gave: the loop guard's
    breakpoint is computed from them as Alg. 2's loop-node strategy would, and the tree's other guards are
    decided inside the same loop, where the profiles cost each decision of each version while a whole run's time
    mixes them all with the loop's noise (timed rounds can move such guards on differences inside it). Where
    the values after an earlier round, or the pass, run faster than the last round's, they
    are kept (_best_round); and a loop guard's computed breakpoint that splits a dataset's comparisons gives
    way to the end of its range most of them take where that runs faster, timed in turn (_ends_checked)."""
    trees = _trees(space)
    loops = {n.name for n in space.order if any(len(d.epars.get(n.name, ())) > 1 for d in space.datasets)}
    if len(trees) < 2 or not loops:
        tuned = tune_simple(space.forest, space.datasets, objective.bench, log, defaults=space.defaults,
                            checkpoint=objective.checkpoint)
        if tuned.stopped:
            return tuned
        return _ends_checked(_best_round(tuned, _round_ends(objective), space, objective, log), loops, space,
                             objective, log)
    log(f"{len(trees)} trees: their thresholds first side by side from profiled runs (as instrumented)")
    seeded = instrumented(space, objective, rng, log)
    if seeded.stopped:
        return seeded
    looped = {n.name for nodes in trees.values() if any(n.name in loops for n in nodes) for n in nodes}
    tuned = tune_simple(space.forest, space.datasets, objective.bench, log, start=seeded.assignment,
                        settled=looped, notes=seeded.notes, checkpoint=objective.checkpoint)
    # (the pass starts from never: the program's defaults are one more point to keep if faster)
    earlier = [("untuned", space.defaults), ("after the side-by-side pass", seeded.assignment),
               *_round_ends(objective)]
    if tuned.stopped:
        return tuned
    return _ends_checked(_best_round(tuned, earlier, space, objective, log), loops, space, objective, log)


def _round_ends(objective: Objective) -> list[tuple[str, dict[str, int]]]:
    """The values after each round of tune_simple, as its checkpoints recorded them."""
    return [(f"after round {e.checkpoint}", e.assignment) for e in objective.history if e.checkpoint]


def _described(label: str) -> str:
    return "the program's defaults" if label == "untuned" else f"the values {label}"


def _best_round(tuned: Outcome, earlier: Sequence[tuple[str, Mapping[str, int]]], space: Space,
                objective: Objective, log: Log) -> Outcome:
    """`tuned`, unless the values at an earlier point (`earlier`, labelled: the program's defaults where the
    search did not start from them, the pass it started from, the rounds' ends) run significantly faster on
    some tuning dataset and slower on none. Each of the rounds' comparisons is a test at 5%, and a few dozen of
    them (one per guard, dataset and round) can move guards on noise alone, or back and forth where guards
    interact, so that a later round can end slower than an earlier one. Each dataset compares the two in turn
    (measure.dominates, in_turn: the points were measured far apart in the run, where a host's drift can pass
    for a difference), the latest point first; the faster goes on to the next."""
    kept, kept_label = space.start() | tuned.assignment, "after the last round"
    compared = {space.paths(kept)}
    for label, values in reversed(earlier):
        other = space.start() | dict(values)
        if space.paths(other) in compared:
            continue
        compared.add(space.paths(other))
        try:
            faster = faster_in_turn(space, objective, (other, label), (kept, kept_label))
        except Stopped:
            break
        if faster:
            log(f"{_described(label)} ran significantly faster than {_described(kept_label)}: kept them")
            kept, kept_label = other, label
    if kept_label == "after the last round":
        return tuned
    return Outcome(space.outcome(kept), (*tuned.notes, f"{_described(kept_label)} ran significantly faster on "
                                         "some tuning dataset than the last round's, and slower on none: kept "
                                         "them"))


def _ends_checked(tuned: Outcome, loops: Collection[str], space: Space, objective: Objective,
                  log: Log) -> Outcome:
    """`tuned`, but for a loop guard (several values in a run) whose value, a breakpoint computed from profiled
    runs, splits a dataset's comparisons between its versions and runs significantly slower on some tuning
    dataset, and faster on none, than the end of its range that the most comparisons take (1: the true version
    at every comparison; never: the false one), timed in turn with the other thresholds as tuned. The profiles
    cost a comparison by its own commands only (what a version leaves to the commands after it, its result's
    layout say, falls to theirs), from runs of their own; a split puts the few comparisons at one end of a
    dataset's range the other way, a difference their sum may not hold, and the program the split makes can
    run much slower than the one whose guard sends every comparison one way. A guard the profiles send one way
    on every comparison is their comparison of two whole versions, and stands."""
    start = space.start() | tuned.assignment
    kept, notes, announced = dict(start), list(tuned.notes), False
    try:
        for node in space.order:
            if node.name not in loops:
                continue
            taken = [found for d in space.datasets
                     for name, found in path(space.forest, kept, d.epars, d.fallbacks) if name == node.name]
            if not any(True in found and False in found for found in taken):
                continue
            ayes = sum(sum(found) for found in taken)
            end = 1 if 2 * ayes > sum(map(len, taken)) else space.never
            other = kept | {node.name: end}
            if space.paths(other) == space.paths(kept):  # (an ePar of 0 is below every value)
                continue
            if not announced:
                log("the loop guards' computed breakpoints against the ends of their ranges, timed in turn")
                announced = True
            computed, ended = (f"{node.name}={shown(a[node.name], space.never)}" for a in (kept, other))
            if faster_in_turn(space, objective, (other, ended), (kept, computed)):
                note = (f"{computed}, computed from the profiled runs, ran significantly slower than {ended} on "
                        f"some tuning dataset, and faster on none (timed in turn): kept {ended}")
                log(f"note: {note}")
                notes.append(note)
                kept = other
    except Stopped:
        pass  # (the ends checked so far stand)
    return tuned if kept == start else Outcome(space.outcome(kept), tuple(notes))


def faster_in_turn(space: Space, objective: Objective, first: tuple[Mapping[str, int], str],
                    second: tuple[Mapping[str, int], str]) -> bool:
    """Whether the first (assignment, label) runs significantly faster than the second on some tuning dataset
    and slower on none, each dataset comparing the two in turn (measure.dominates)."""
    return dominates(objective.bench, [(d.dataset, _candidate(space, d, *first), _candidate(space, d, *second))
                                       for d in space.datasets], in_turn=True)


def _candidate(space: Space, d: Probed, assignment: Mapping[str, int], label: str) -> Candidate:
    return Candidate(space.params(d.runnable(assignment)), space.key(d, assignment), label)


def _trees(space: Space) -> dict[str, list[Node]]:
    """The reached thresholds of each tree (by its root's name), children first."""
    per_tree: dict[str, list[Node]] = {}
    for node in space.order:
        per_tree.setdefault(node.ancestors[0][0] if node.ancestors else node.name, []).append(node)
    return per_tree


def _result(space: Space, assignment: Mapping[str, int], notes: Sequence[str] = ()) -> Outcome:
    return Outcome(space.outcome(assignment), tuple(notes))


def tuned_so_far(space: Space, current: Mapping[str, int], tuned: Sequence[str], notes: Sequence[str],
                 stop: Stopped) -> Outcome:
    """A strategy that tunes one threshold at a time, stopped: simple.stopped_outcome."""
    return stopped_outcome(current, tuned, space.names, notes, str(stop), space.never)


# ---- whole assignments: exhaustive, random, cma ----

def combinations(space: Space):
    """Every assignment that some dataset can tell apart: a threshold that no dataset reaches under its
    ancestors' values stays at never instead of taking each of its values."""
    nodes = space.parents_first

    def extend(k: int, assignment: dict):
        if k == len(nodes):
            yield dict(assignment)
            return
        node = nodes[k]
        for value in space.values[node.name] if space.reached(node, assignment) else (space.never,):
            assignment[node.name] = value
            yield from extend(k + 1, assignment)
        assignment[node.name] = space.never

    yield from extend(0, space.start())


def exhaustive(space: Space, objective: Objective, rng: np.random.Generator, log: Log) -> Outcome:
    """Every combination; above EXHAUSTIVE_LIMIT only when the run is bounded (--budget, --stop-after)."""
    count = sum(1 for _ in itertools.islice(combinations(space), EXHAUSTIVE_LIMIT + 1))
    if count > EXHAUSTIVE_LIMIT and not (objective.bounded or objective.budget):
        raise ToolError(f"--strategy exhaustive: more than {EXHAUSTIVE_LIMIT} combinations of plateaus; "
                        "bound the run with --budget or --stop-after, or choose another strategy")
    log(f"exhaustive: {count if count <= EXHAUSTIVE_LIMIT else 'over ' + str(EXHAUSTIVE_LIMIT)} combinations")
    try:
        while True:  # again where a version turned out unable to run: the paths it hid are reached (the known cached)
            known = sum(len(d.fallbacks) for d in space.datasets)
            for assignment in combinations(space):
                objective(assignment, "exhaustive")
            if sum(len(d.fallbacks) for d in space.datasets) == known:
                break
    except Stopped as stop:
        return best_measured(space, objective, stop)
    return best_measured(space, objective)


# ---- one threshold at a time: binary, active ----

Choose = Callable[[Space, Objective, Node, dict, np.random.Generator, list], int]


def per_threshold(choose: Choose):
    """A strategy that tunes each threshold in turn, children first, the others at their values so far:
    choose(space, objective, node, base, rng, notes) gives the node's value with the others at `base`."""
    def strategy(space: Space, objective: Objective, rng: np.random.Generator, log: Log) -> Outcome:
        current, tuned, notes = space.start(), [], []
        try:
            for node in space.order:
                current[node.name] = choose(space, objective, node, space.pinned(node, current), rng, notes)
                tuned.append(node.name)
                log(f"  {node.name} = {space.show(current[node.name])}")
        except Stopped as stop:
            return tuned_so_far(space, current, tuned, notes, stop)
        return _result(space, current, notes)
    return strategy


def _total(space: Space, objective: Objective, node: Node, base: dict, value: int) -> float:
    return objective(base | {node.name: value}, f"{node.name}={space.show(value)}")


def _binary(space: Space, objective: Objective, node: Node, base: dict, rng, notes: list) -> int:
    values = space.values[node.name]
    lo, hi = 0, len(values) - 1
    best_i = hi
    best_t = _total(space, objective, node, base, values[hi])  # from the all-false plateau
    while hi - lo > 0:
        mid = (hi + lo + 1) // 2
        if mid == best_i:
            mid -= 1
        t = _total(space, objective, node, base, values[mid])
        if t < best_t:
            best_t, best_i, lo = t, mid, mid + 1
        else:
            hi = mid - 1
    return values[best_i]


ACTIVE_EXHAUSTIVE = 5  # plateaus up to which active learning tries them all (as the thesis's tuner does)


def _active(space: Space, objective: Objective, node: Node, base: dict, rng: np.random.Generator,
            notes: list) -> int:
    values = space.values[node.name]
    known: dict[int, float] = {}

    def label(i: int) -> float:
        if i not in known:
            known[i] = _total(space, objective, node, base, values[i])
        return known[i]

    if len(values) <= ACTIVE_EXHAUSTIVE:
        return values[min(range(len(values)), key=lambda i: (label(i), -i))]
    for i in rng.choice(len(values), 3, replace=False):
        label(int(i))
    while True:
        best = min(known, key=lambda i: (known[i], -i))
        xs = np.array(sorted(known), dtype=float)
        model = np.polyfit(xs, [finite(known[int(i)]) for i in xs], 2)
        unlabeled = [i for i in range(len(values)) if i not in known]
        if not unlabeled:
            break
        guess = min(unlabeled, key=lambda i: np.polyval(model, i))
        if label(guess) < known[best]:
            continue
        # endpoint sampling (Alg. 7): the model's guess did not help; try the best one's neighbours
        neighbours = [i for i in (best - 1, best + 1) if 0 <= i < len(values) and i not in known]
        if not any(label(i) < known[best] for i in neighbours):
            break
    return values[min(known, key=lambda i: (known[i], -i))]


binary = per_threshold(_binary)
active = per_threshold(_active)


# ---- futhark autotune's monotonic tuner ----

def monotonic(space: Space, objective: Objective, rng: np.random.Generator, log: Log) -> Outcome:
    """futhark autotune's algorithm (TFP'21; src/Futhark/CLI/Autotune.hs): for each threshold, children
    first, the datasets in turn narrow an interval (t_min, t_max), starting at (1, never). A dataset runs at
    t_max, then binary-searches its ePars inside the interval, two middle candidates a step, into the half of
    the faster one; its best value becomes t_max and the ePar below it t_min. The threshold takes the final
    t_max. A dataset whose best time after a threshold is more than 2% above its best after an earlier one
    shows the assumption of monotonicity broken: a note says so."""
    best_times: dict[str, float] = {}  # per dataset, across thresholds

    def choose(space: Space, objective: Objective, node: Node, base: dict, rng, notes: list) -> int:
        return _monotonic_value(space, objective, node, base, best_times, notes)
    return per_threshold(choose)(space, objective, rng, log)


def _monotonic_value(space: Space, objective: Objective, node: Node, base: dict, best_times: dict[str, float],
                     notes: list[str]) -> int:
    def runtime(d, value: int) -> float:
        return objective.runtime(d, base | {node.name: value}, f"{node.name}={space.show(value)}").runtime_us

    t_min, t_max = 1, space.never
    for d in space.reaching(node):
        sample = runtime(d, t_max)
        if math.isinf(sample):
            continue  # no information: an ancestor's value keeps the dataset off this path
        epars = sorted(e for e in set(d.epars[node.name]) if t_min < e < t_max)
        best_time, new_max = _halving_search(lambda v: runtime(d, v), (sample, t_max), epars)
        below = epars.index(new_max) - 1 if new_max in epars else -1
        t_min, t_max = max(t_min, epars[below]) if below >= 0 else t_min, new_max
        before = best_times.get(d.dataset.name)
        if before is not None and before * NON_MONOTONIC < best_time:
            notes.append(f"{node.name}: possible non-monotonicity: dataset {d.dataset.name} took "
                         f"{before:.1f} us before and {best_time:.1f} us after")
        else:
            best_times[d.dataset.name] = min(best_time, before if before is not None else math.inf)
    return t_max


def _halving_search(runtime: Callable[[int], float], best: tuple[float, int], epars: list[int]) -> tuple[float, int]:
    """futhark autotune's binarySearch: the two middle ePars are run, and the half of the faster one searched
    next; two or fewer are all run. Returns the best (time, ePar) seen, `best` included."""
    while len(epars) > 2:
        half = len(epars) // 2
        lower, middle, upper = epars[:half], epars[half:half + 2], epars[half + 2:]
        times = [runtime(v) for v in middle]
        k = 0 if times[0] < times[1] else 1
        best = min(best, (times[k], middle[k]), key=lambda pair: pair[0])
        epars = lower if k == 0 else upper
    for v in epars:
        best = min(best, (runtime(v), v), key=lambda pair: pair[0])
    return best


# ---- the instrumentation tuner ----

def instrumented(space: Space, objective: Objective, rng: np.random.Generator, log: Log) -> Outcome:
    """Alg. 8 / Eq. 3.1 (tuner.instrumented): per threshold, a profiled run of each dataset with it true at
    every comparison and one with it false give the best breakpoint; where those runs do not line up, a binary
    search over its plateaus. The trees of the forest are independent versions of different statements, so one
    threshold of each, children first, is set at once: two runs per dataset serve them all."""
    profiles = Profiles(objective.bench, space.forest)
    per_tree = _trees(space)
    current, tuned, notes = space.start(), [], []
    try:
        for step in range(max(map(len, per_tree.values()), default=0)):
            group = [nodes[step] for nodes in per_tree.values() if step < len(nodes)]
            base = dict(current)
            for node in group:
                base = space.pinned(node, base)
            when_true = base | {node.name: 1 for node in group}
            when_false = base | {node.name: space.never for node in group}
            for node in group:
                value = profiles.best_breakpoint(space.reaching(node), when_true, when_false, node.name,
                                                 space.values[node.name])
                if value is None:
                    notes.append(f"{node.name}: the true and false runs did not make the same comparisons; "
                                 "searched its plateaus instead")
                    value = _binary(space, objective, node, space.pinned(node, current), rng, notes)
                current[node.name] = value
                tuned.append(node.name)
                log(f"  {node.name} = {space.show(value)}")
    except Stopped as stop:
        return tuned_so_far(space, current, tuned, notes, stop)
    return _result(space, current, notes)


STRATEGIES: dict[str, Callable[[Space, Objective, np.random.Generator, Log], Outcome]] = {
    "tree": tree,
    "monotonic": monotonic,
    "exhaustive": exhaustive,
    "binary": binary,
    "active": active,
    "cma": cma_search,
    "instrumented": instrumented,
    "random": random_search,
    "bandit": bandit,
}
