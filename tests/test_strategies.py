"""The search strategies (tuner.strategies) on cost models: each finds what it promises, within its runs."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from incflat.ir.runtime.tuning import GRID_SIZE, THREAD_BLOCK_SIZE, USER_PARAM, Param, stencil_param_name
from incflat.datasets import Dataset, InlineValues
from incflat.tuner.measure import MIN_INVOCATION_DOF, Measurement, Stopped
from incflat.tuner.children import RunResult
from incflat.ir.errors import ToolError
from incflat.tuner.search import Objective, Space
from incflat.tuner.sizes import tune_sizes
from incflat.tuner.stochastic import JOINT_SIZES
from incflat.tuner.simple import Outcome
from incflat.tuner.strategies import STRATEGIES, _best_round, _candidate, combinations
from incflat.tuner.tree import Probed, build_forest, tuning_order

import fake_program as fake

STOCHASTIC = ("random", "cma", "bandit")
CHAIN = fake.THRESHOLDS  # matmul's: T1 -> (V1 | T2 -> (V2 | T3 -> (V3 | T4 -> (V4 | V5))))


def chain_forest():
    params, ancestors = [], ()
    for name in CHAIN:
        params.append(Param(name, "threshold", None, ancestors))
        ancestors += ((name, False),)
    return build_forest(params)


def leaf(assignment, epars) -> int:
    """The version of the chain a dataset with these ePars runs."""
    for k, name in enumerate(CHAIN):
        if assignment[name] <= epars[name][0]:
            return k + 1
    return 5


class ModelBench:
    """Measures a dataset with cost(dataset, assignment), one run each, cached by key as Bench is; profiled
    runs (`-P --profile-json F`) write records from profile(dataset, assignment)."""

    max_runs = 1
    runs = 1
    kernels: dict = {}  # the kernel times profiled runs report (or a function of the dataset's name)

    def __init__(self, cost, profile=None):
        self.cost, self.profile = cost, profile
        self.invocations, self.seen = 0, {}

    def measure(self, dataset, params, *, key=None, label=""):
        if key is not None and (dataset.name, key) in self.seen:
            return self.seen[dataset.name, key]
        self.invocations += 1
        found = Measurement(times_us=(self.cost(dataset.name, params),))
        self.seen[dataset.name, key] = found
        return found

    def timed_runs(self, name):
        return self.runs

    def cached(self, name, key):
        return self.seen.get((name, key))

    def invocation_noise(self, name):  # a model: no invocation noise, and known to be none
        return 0.0, MIN_INVOCATION_DOF

    def run_once(self, dataset, params, options):
        self.invocations += 1
        out = options[options.index("--profile-json") + 1]
        records = self.profile(dataset.name, params) * int(options[options.index("-r") + 1])
        kernels = self.kernels(dataset.name) if callable(self.kernels) else self.kernels
        with open(out, "w") as file:
            json.dump({"kernels": kernels, "versions": records}, file)
        return RunResult(None, "", 0.0)


def probed(name, epars):
    return Probed(Dataset(name, "main", InlineValues(""), False), epars)


# The fake program's cost model (matmul's five versions) on four shapes (n, m, p) whose best versions are
# 4, 5, 2 and 1, and which one assignment serves (t1 in (2048, 32768], t2 in (64, 2048], t3 > 4096,
# t4 in (64, 1024]).
SHAPES = {"a": (1, 1024, 1), "b": (64, 64, 64), "c": (2048, 16, 2048), "d": (32768, 8, 1)}
DATASETS = [probed(name, {t: (e,) for t, e in zip(CHAIN, fake.epars(*shape))}) for name, shape in SHAPES.items()]
BEST_LEAF = {"a": 4, "b": 5, "c": 2, "d": 1}


def chain_cost(name, assignment):
    epars = next(d.epars for d in DATASETS if d.dataset.name == name)
    return fake.runtime_us(leaf(assignment, epars), *SHAPES[name])


def optimum(space, cost):
    return min(sum(cost(d.dataset.name, a) for d in space.datasets) for a in combinations(space))


def test_combinations_are_the_distinct_experiments():
    space = Space.of(chain_forest(), DATASETS[1:2])
    found = list(combinations(space))
    assert len(found) == 5  # one dataset: one experiment per version
    assert len({space.paths(a) for a in found}) == 5
    space = Space.of(chain_forest(), DATASETS)
    # every assignment of plateaus gives a path tuple among those enumerated
    every = {space.paths(dict(zip(space.names, vs)))
             for vs in itertools.product(*(space.values[n] for n in space.names))}
    assert every == {space.paths(a) for a in combinations(space)}


@pytest.mark.parametrize("name", ["tree", "monotonic", "exhaustive", "binary", "active", "cma", "random", "bandit"])
def test_each_strategy_finds_the_optimum_of_a_consistent_chain(name):
    space = Space.of(chain_forest(), DATASETS)
    bench = ModelBench(chain_cost)
    objective = Objective(space, bench, budget=40 if name in STOCHASTIC else None)
    outcome = STRATEGIES[name](space, objective, np.random.default_rng(1), lambda _: None)
    chosen = space.start() | outcome.assignment
    if name in ("binary",) + STOCHASTIC:  # a local minimum, or a sample: within 2% of the optimum
        assert sum(chain_cost(d.dataset.name, chosen) for d in DATASETS) <= 1.02 * optimum(space, chain_cost)
    else:
        assert {d.dataset.name: leaf(chosen, d.epars) for d in DATASETS} == BEST_LEAF
    if name in ("tree", "monotonic"):
        assert bench.invocations <= 5 * len(DATASETS)  # each dataset once per version at most


def test_tree_starts_from_the_defaults_where_guards_of_two_trees_only_pay_together():
    """Two statements' guards whose true sides are faster only together (a result layout one writes and the
    other reads, say): from never, each compared with the other at never ties and stays never; from the
    program's defaults (both true), each is compared with the other true, and both stay true."""
    forest = build_forest([Param("m.a", "threshold", None, ()), Param("m.b", "threshold", None, ())])
    data = [probed("d", {"m.a": (100,), "m.b": (100,)})]

    def cost(name, assignment):
        return 80.0 if assignment["m.a"] <= 100 and assignment["m.b"] <= 100 else 100.0

    found = {}
    for defaults in ({}, {"m.a": 32, "m.b": 32}):
        space = Space.of(forest, data, defaults=defaults)
        outcome = STRATEGIES["tree"](space, Objective(space, ModelBench(cost)), np.random.default_rng(1),
                                     lambda _: None)
        found[bool(defaults)] = cost("d", space.start() | outcome.assignment)
    assert found == {False: 100.0, True: 80.0}


@pytest.mark.parametrize("name", JOINT_SIZES)
def test_sampling_strategies_search_sizes_jointly_with_the_thresholds(name):
    """--tune-sizes with a sampler: one size dimension (best at 256, its first value the program's default)
    beside the chain's thresholds. Sizes at their default are never passed, and the result names the size."""
    grid = "main.segred_4_num_tblocks"
    space = Space.of(chain_forest(), DATASETS, sizes={grid: (16, 256, 4096)})
    passed = []

    def cost(name, params):
        passed.append(dict(params))
        return chain_cost(name, params) * (1.0 if params.get(grid) == 256 else 1.5)

    outcome = STRATEGIES[name](space, Objective(space, ModelBench(cost), budget=60), np.random.default_rng(1),
                               lambda _: None)
    assert outcome.assignment[grid] == 256
    chosen = space.start() | outcome.assignment
    assert sum(cost(d.dataset.name, chosen) for d in DATASETS) <= 1.02 * optimum(space, chain_cost)
    assert all(p.get(grid, 16) in (16, 256, 4096) for p in passed)  # never 0, the default's stand-in
    assert any(grid not in p for p in passed)  # the default was tried


def test_exhaustive_refuses_a_space_too_large_without_a_budget():
    params = [Param(f"m.t{k}", "threshold", None, ()) for k in range(8)]  # eight independent guards
    data = [probed(f"d{i}", {f"m.t{k}": (10 * i + k + 1,) for k in range(8)}) for i in range(4)]
    space = Space.of(build_forest(params), data)
    objective = Objective(space, ModelBench(lambda name, a: 1.0))
    with pytest.raises(ToolError, match="more than 4096 combinations"):
        STRATEGIES["exhaustive"](space, objective, np.random.default_rng(0), lambda _: None)
    objective = Objective(space, ModelBench(lambda name, a: 1.0), budget=10)
    outcome = STRATEGIES["exhaustive"](space, objective, np.random.default_rng(0), lambda _: None)
    assert objective.experiments == 10 and outcome.notes == ("10 experiments; kept the best measured",)
    assert len(list(itertools.islice(combinations(space), 4097))) == 4097


def test_the_stochastic_strategies_stay_within_their_budget_and_are_reproducible():
    space = Space.of(chain_forest(), DATASETS)
    for name in STOCHASTIC:
        results = []
        for _ in range(2):
            objective = Objective(space, ModelBench(chain_cost), budget=6)
            results.append(STRATEGIES[name](space, objective, np.random.default_rng(5), lambda _: None).assignment)
            assert objective.experiments <= 6
        assert results[0] == results[1]


def test_monotonic_warns_when_a_parent_leaves_a_dataset_slower_than_its_child_did():
    """As futhark autotune: t2 (under t1 false) is tuned first; at t1, dataset a (E=100, fastest true) sets the
    interval to (1, 100], which leaves b (E=200, fastest false) on its slow true version."""
    forest = build_forest([Param("m.t1", "threshold", None, ()),
                           Param("m.t2", "threshold", None, (("m.t1", False),))])
    epars = {"a": 100, "b": 200}
    fast_true = {"a": (5.0, 10.0), "b": (50.0, 20.0)}  # (t1 true, t1 false)
    data = [probed(name, {"m.t1": (e,), "m.t2": (7,)}) for name, e in epars.items()]
    space = Space.of(forest, data)

    def cost(name, a):
        return fast_true[name][0 if a["m.t1"] <= epars[name] else 1]

    outcome = STRATEGIES["monotonic"](space, Objective(space, ModelBench(cost)), np.random.default_rng(0),
                                      lambda _: None)
    assert outcome.assignment["m.t1"] == 100
    assert outcome.notes == ("m.t1: possible non-monotonicity: dataset b took 20.0 us before and 50.0 us after",)


def test_objectives_weigh_datasets_as_named():
    space = Space.of(chain_forest(), DATASETS[:2])
    found = [Measurement((100.0,)), Measurement((10.0,))]
    baselines = {"a": 50.0, "b": 20.0}
    assert Objective(space, None).combine(found) == 110.0
    assert Objective(space, None, "weighted", baselines).combine(found) == 2.5
    assert Objective(space, None, "geomean", baselines).combine(found) == pytest.approx(1.0)
    assert Objective(space, None).combine([Measurement(failure="crash"), found[1]]) == float("inf")


def test_instrumented_computes_a_loop_thresholds_breakpoint_from_two_profiled_runs():
    """A threshold compared in every iteration of a loop against 10, 100 and 1000: the true version is
    faster from 100 on. Two profiled runs give each comparison's time both ways; no run tries 100."""
    forest = build_forest([Param("m.t", "threshold", None, ())])
    epars = (10, 100, 1000)
    space = Space.of(forest, [probed("d", {"m.t": epars})])

    def profile(name, assignment):
        return [{"threshold": "m.t", "outcome": assignment["m.t"] <= e, "epar": e,
                 "span_us": (5.0 if e >= 100 else 50.0) if assignment["m.t"] <= e else 20.0} for e in epars]

    bench = ModelBench(lambda name, a: 0.0, profile)
    outcome = STRATEGIES["instrumented"](space, Objective(space, bench), np.random.default_rng(0), lambda _: None)
    assert outcome.assignment == {"m.t": 100}
    assert bench.invocations == 2


@pytest.mark.parametrize("strategy", ["tree", "instrumented"])
def test_a_loop_threshold_gets_its_breakpoint_from_two_profiled_runs_per_dataset(strategy):
    """A loop guard that sees 20 values in a run of each of two datasets: the true version wins from 3000
    on. tree picks its loop strategy by itself: two profiled runs per dataset, not one run per value; then,
    since 3000 splits b's comparisons, it times it against never, the end that changes the fewest of the
    datasets' comparisons (two runs: on a the two are one path), and keeps it where that is not faster."""
    forest = build_forest([Param("m.t", "threshold", None, ())])
    epars = {"a": tuple(range(100, 2100, 100)), "b": tuple(range(1000, 21000, 1000))}
    space = Space.of(forest, [probed(name, {"m.t": e}) for name, e in epars.items()])

    def profile(name, assignment):
        return [{"threshold": "m.t", "outcome": assignment["m.t"] <= e, "epar": e,
                 "span_us": (e / 100 if e >= 3000 else 5 * e) if assignment["m.t"] <= e else 1000.0}
                for e in epars[name]]

    bench = ModelBench(lambda name, a: 0.0, profile)
    outcome = STRATEGIES[strategy](space, Objective(space, bench), np.random.default_rng(0), lambda _: None)
    assert outcome.assignment == {"m.t": 3000}
    assert bench.invocations == {"tree": 6, "instrumented": 4}[strategy]


@pytest.mark.parametrize("trees", [1, 2])
def test_tree_times_a_computed_breakpoint_against_the_ends_of_its_range(trees):
    """The profiles cost a loop guard's comparisons by their own commands: here the true version's own are
    cheaper from 1000 on, but it leaves work to the commands after it (40 µs a comparison), which whole runs
    see. The computed breakpoint splits the loop's comparisons, so tree times it against never, the end most
    of them take, and keeps never, the faster in turn, with a note; instrumented, which reads the profiles
    only, keeps 1000. (On an H200, nw's profiles put its loop guard at 60, which ran the paper's D1 8-10x
    slower than never.) With a second tree (m.s, compared once a run), tree starts from the side-by-side pass.
    (The program's defaults, m.t true at every comparison, are slower.)"""
    names = ("m.t", "m.s")[:trees]
    forest = build_forest([Param(name, "threshold", None, ()) for name in names])
    loop = (10, 100, 1000)
    space = Space.of(forest, [probed("d", {"m.t": loop, "m.s": (100,)})], defaults=dict.fromkeys(names, 1))

    def profile(name, assignment):
        return [{"threshold": "m.t", "outcome": assignment["m.t"] <= e, "epar": e,
                 "span_us": (5.0 if e >= 1000 else 50.0) if assignment["m.t"] <= e else 20.0} for e in loop] + [
            {"threshold": "m.s", "outcome": assignment["m.s"] <= 100, "epar": 100, "span_us": 10.0}
            for _ in names[1:]]

    def cost(name, assignment):
        return 100.0 + sum(p["span_us"] + 40.0 * p["outcome"] for p in profile(name, assignment)
                           if p["threshold"] == "m.t")

    found = {}
    for strategy in ("tree", "instrumented"):
        outcome = STRATEGIES[strategy](space, Objective(space, ModelBench(cost, profile)),
                                       np.random.default_rng(0), lambda _: None)
        found[strategy] = outcome.assignment["m.t"], outcome.notes
    assert found["tree"][0] == space.never and found["instrumented"][0] == 1000
    assert any(n.startswith("m.t=1000, computed from the profiled runs, ran significantly slower than m.t=never")
               for n in found["tree"][1])


def test_tree_from_the_side_by_side_pass_keeps_the_programs_defaults_where_they_run_faster():
    """With several trees and a loop guard, tree starts from instrumented's pass, from never, where Alg. 2's
    rounds start from the defaults: the defaults are one more earlier point, kept where they run significantly
    faster on some dataset and slower on none (on this machine's CPU, NW's tuning had ended 0.94x of its
    untuned program on its training dataset). Here the whole program is fastest as its defaults have it (m.a
    true, m.b true from 100), which neither the profiles nor the timed rounds find."""
    forest = build_forest([Param(name, "threshold", None, ()) for name in ("m.a", "m.b")])
    loop = (10, 100, 1000)
    defaults = {"m.a": 50, "m.b": 50}
    space = Space.of(forest, [probed("d", {"m.a": (100,), "m.b": loop})], defaults=defaults)

    def profile(name, assignment):
        a_true = assignment["m.a"] <= 100
        return [{"threshold": "m.a", "outcome": a_true, "epar": 100, "span_us": 5.0 if a_true else 20.0}] + [
            {"threshold": "m.b", "outcome": assignment["m.b"] <= e, "epar": e,
             "span_us": (5.0 if e >= 1000 else 50.0) if assignment["m.b"] <= e else 20.0} for e in loop]

    def cost(name, assignment):
        as_defaults = assignment["m.a"] <= 100 and [assignment["m.b"] <= e for e in loop] == [False, True, True]
        return 10.0 if as_defaults else 30.0

    outcome = STRATEGIES["tree"](space, Objective(space, ModelBench(cost, profile)), np.random.default_rng(0),
                                 lambda _: None)
    assert [outcome.assignment[name] <= 100 for name in ("m.a", "m.b")] == [True, True]
    assert outcome.assignment["m.b"] > 10
    assert any(n.startswith("the program's defaults ran significantly faster") for n in outcome.notes)


def test_a_profiled_run_makes_the_runs_a_timed_measurement_of_its_dataset_would():
    """The bench would time d with 4 runs after the warm-up: each profiled invocation asks for 5 (-r 5), not
    the bench's `runs` + 1, and the breakpoint comes from their comparisons."""
    forest = build_forest([Param("m.t", "threshold", None, ())])
    epars = (100, 1000, 10000)
    space = Space.of(forest, [probed("d", {"m.t": epars})])
    asked = []

    class FourRuns(ModelBench):
        def timed_runs(self, name):
            return 4

        def run_once(self, dataset, params, options):
            asked.append(options[options.index("-r") + 1])
            return super().run_once(dataset, params, options)

    def profile(name, assignment):  # the true version wins from 1000 on
        return [{"threshold": "m.t", "outcome": assignment["m.t"] <= e, "epar": e,
                 "span_us": (e / 100 if e >= 1000 else 5 * e) if assignment["m.t"] <= e else 100.0}
                for e in epars]

    bench = FourRuns(lambda name, a: 0.0, profile)
    outcome = STRATEGIES["instrumented"](space, Objective(space, bench), np.random.default_rng(0), lambda _: None)
    assert asked == ["5", "5"]
    assert outcome.assignment == {"m.t": 1000}


def test_instrumented_sets_a_threshold_of_each_tree_at_once():
    """Two independent loop guards (two trees): both breakpoints come from the same two profiled runs."""
    forest = build_forest([Param("m.a", "threshold", None, ()), Param("m.b", "threshold", None, ())])
    epars = (10, 100, 1000)
    space = Space.of(forest, [probed("d", {"m.a": epars, "m.b": epars})])
    wins_from = {"m.a": 100, "m.b": 1000}

    def profile(name, assignment):
        return [{"threshold": t, "outcome": assignment[t] <= e, "epar": e,
                 "span_us": (5.0 if e >= wins_from[t] else 50.0) if assignment[t] <= e else 20.0}
                for t in ("m.a", "m.b") for e in epars]

    bench = ModelBench(lambda name, a: 0.0, profile)
    outcome = STRATEGIES["instrumented"](space, Objective(space, bench), np.random.default_rng(0), lambda _: None)
    assert outcome.assignment == {"m.a": 100, "m.b": 1000}
    assert bench.invocations == 2


def test_tree_on_several_trees_starts_side_by_side_then_times_each_single_comparison():
    """Three trees: m.a compared once a run, m.b and m.c in a loop. The profiled runs make m.a's true version
    faster (its kernels take 5 against 20 µs), but timed whole runs, which see what the kernels' times do not
    (launches, the host's work), make it slower. tree takes both loop breakpoints from the same two profiled
    runs (the trees side by side) and corrects m.a by two timed runs (then times the program's defaults, one
    run, and each breakpoint against the end of its range that most of its comparisons take, two runs, and
    keeps both); instrumented, which reads the profiles only, keeps m.a true."""
    forest = build_forest([Param(name, "threshold", None, ()) for name in ("m.a", "m.b", "m.c")])
    loop = (10, 100, 1000)
    wins_from = {"m.b": 100, "m.c": 1000}
    space = Space.of(forest, [probed("d", {"m.a": (100,), "m.b": loop, "m.c": loop})])

    def profile(name, assignment):
        a_true = assignment["m.a"] <= 100
        return [{"threshold": "m.a", "outcome": a_true, "epar": 100, "span_us": 5.0 if a_true else 20.0}] + [
            {"threshold": t, "outcome": assignment[t] <= e, "epar": e,
             "span_us": (5.0 if e >= wins_from[t] else 50.0) if assignment[t] <= e else 20.0}
            for t in wins_from for e in loop]

    def cost(name, assignment):
        return (30.0 if assignment["m.a"] <= 100 else 20.0) + sum(p["span_us"] for p in profile(name, assignment)[1:])

    found = {}
    for strategy in ("tree", "instrumented"):
        bench = ModelBench(cost, profile)
        found[strategy] = STRATEGIES[strategy](space, Objective(space, bench), np.random.default_rng(0),
                                               lambda _: None).assignment, bench.invocations
    assert found["tree"] == ({"m.a": space.never, "m.b": 100, "m.c": 1000}, 7)
    assert found["instrumented"] == ({"m.a": 100, "m.b": 100, "m.c": 1000}, 2)


def test_tree_on_several_trees_without_a_loop_guard_runs_alg_2_without_profiles():
    """Two chains of two thresholds (six versions), no loop: Alg. 2's rounds, a timed run per path and no
    profiled run, within the issue's bound of versions + 2 runs per dataset."""
    params = []
    for tree in ("x", "y"):
        params += [Param(f"m.{tree}1", "threshold", None, ()),
                   Param(f"m.{tree}2", "threshold", None, ((f"m.{tree}1", False),))]
    space = Space.of(build_forest(params), [probed("d", {name.name: (100,) for name in params})])
    def cost(name, assignment):
        x1, x2, y1, y2 = (assignment[f"m.{t}"] <= 100 for t in ("x1", "x2", "y1", "y2"))
        return (20.0 if x1 else 10.0 if x2 else 15.0) + (10.0 if y1 else 20.0 if y2 else 15.0)

    bench = ModelBench(cost)  # no profile: a profiled run would fail
    outcome = STRATEGIES["tree"](space, Objective(space, bench), np.random.default_rng(0), lambda _: None)
    assert outcome.assignment["m.x1"] == space.never and outcome.assignment["m.x2"] <= 100
    assert outcome.assignment["m.y1"] <= 100
    assert bench.invocations <= 6 + 2


def test_a_later_round_compares_a_guard_only_on_the_datasets_the_tuned_values_send_through_it():
    """m.p's false side holds two guards, m.a and m.b, on which d1 and d2 disagree. d1 takes m.p's true side
    once tuned, so the second round compares m.a and m.b on d2 alone: 9 runs, where comparing them on d1 too
    (its m.p pinned false) would run one more path that d1 no longer takes."""
    params = [Param("m.p", "threshold", None, ()), Param("m.a", "threshold", None, (("m.p", False),)),
              Param("m.b", "threshold", None, (("m.p", False),))]
    epar = {"d1": 1000, "d2": 10}
    data = [probed(n, {"m.p": (e,), "m.a": (e,), "m.b": (e,)}) for n, e in epar.items()]
    space = Space.of(build_forest(params), data)

    def cost(name, a):
        e = epar[name]
        if a["m.p"] <= e:
            return 10.0 if name == "d1" else 100.0
        a_true, b_true = a["m.a"] <= e, a["m.b"] <= e
        wants = (True, False) if name == "d1" else (False, True)
        return 50.0 + 5 * (a_true != wants[0]) + 5 * (b_true != wants[1])

    bench = ModelBench(cost)
    objective = Objective(space, bench, count_runs=lambda: bench.invocations)
    outcome = STRATEGIES["tree"](space, objective, np.random.default_rng(0), lambda _: None)
    assert outcome.assignment == {"m.p": 1000, "m.a": 1000, "m.b": 10}
    assert bench.invocations == 9
    # after each round, where it stood (for the study), from runs already made: d1 10 + d2 50 after the first,
    # which the second (its 9th run, d2 under m.a's other side) only confirmed
    assert [(e.value, e.assignment, e.runs, e.checkpoint) for e in objective.history] == [
        (60.0, outcome.assignment, 8, 1), (60.0, outcome.assignment, 9, 2)]


def test_tree_keeps_the_profiled_values_of_a_tree_that_holds_a_loop_guard():
    """Two trees. In the first, m.p (one value a run) guards the loop guard m.c: the profiles make m.p's true
    version the cheaper one (5 against 20 µs), and timed whole runs say the opposite (noise, say). tree keeps
    m.p as the profiles set it, as it keeps m.c; m.s, alone in the second tree and compared once a run, is
    still corrected by timed runs. (The program's defaults, every guard true, are no faster.)"""
    forest = build_forest([Param("m.p", "threshold", None, ()), Param("m.c", "threshold", None, (("m.p", False),)),
                           Param("m.s", "threshold", None, ())])
    loop = (10, 100, 1000)
    space = Space.of(forest, [probed("d", {"m.p": (100,), "m.c": loop, "m.s": (100,)})],
                     defaults=dict.fromkeys(("m.p", "m.c", "m.s"), 1))

    def profile(name, assignment):
        p_true, s_true = assignment["m.p"] <= 100, assignment["m.s"] <= 100
        records = [{"threshold": "m.p", "outcome": p_true, "epar": 100, "span_us": 5.0 if p_true else 20.0},
                   {"threshold": "m.s", "outcome": s_true, "epar": 100, "span_us": 5.0 if s_true else 20.0}]
        if not p_true:
            records += [{"threshold": "m.c", "outcome": assignment["m.c"] <= e, "epar": e,
                         "span_us": (5.0 if e >= 100 else 50.0) if assignment["m.c"] <= e else 20.0}
                        for e in loop]
        return records

    def cost(name, assignment):
        return (30.0 if assignment["m.p"] <= 100 else 20.0) + (30.0 if assignment["m.s"] <= 100 else 20.0)

    bench = ModelBench(cost, profile)
    outcome = STRATEGIES["tree"](space, Objective(space, bench), np.random.default_rng(0), lambda _: None)
    assert outcome.assignment["m.p"] == 100 and outcome.assignment["m.s"] == space.never


def test_sizes_of_the_kernels_that_ran_are_tuned_one_after_another():
    """Only segred_4's kernels run: its workgroup count is tuned (best at 256), its workgroup size left at the
    default (every candidate is as fast), and segmap_0's size, whose kernel never ran, is left alone."""
    space = Space.of(chain_forest(), DATASETS[:2])
    grid, block, idle = "main.segred_4_num_tblocks", "main.segred_4_tblock_size", "main.segmap_0_tblock_size"
    params = [Param(grid, GRID_SIZE), Param(block, THREAD_BLOCK_SIZE), Param(idle, THREAD_BLOCK_SIZE)]

    def cost(name, a):
        return 100.0 + abs(math.log2(a.get(grid, 1024)) - 8) * 10

    bench = ModelBench(cost, lambda name, a: [])
    bench.kernels = {"segred_4": {"runs": 1, "total_us": 80.0}, "segred_4_threads": {"runs": 1, "total_us": 5.0}}
    outcome = tune_sizes(space, bench, space.start(), params, lambda _: None)
    assert outcome.sizes == {grid: 256}
    assert outcome.notes == (f"sizes of kernels the tuned program does not run on the tuning datasets were left "
                             f"alone: {idle}",)


def test_sizes_of_kernels_under_one_percent_of_every_datasets_time_are_left_alone():
    """segmap_1 took 0.5% of each dataset's profiled time: its workgroup size is not tried, though 32 would be
    faster. segmap_2 took 0.1% of the first dataset's time, but half of the second's (a short dataset, whose
    time a geometric-mean objective weighs as much as the first's): it is tuned."""
    space = Space.of(chain_forest(), DATASETS[:2])
    big, small, short = "main.segred_4_tblock_size", "main.segmap_1_tblock_size", "main.segmap_2_tblock_size"
    params = [Param(big, THREAD_BLOCK_SIZE), Param(small, THREAD_BLOCK_SIZE), Param(short, THREAD_BLOCK_SIZE)]

    def cost(name, a):
        return 100.0 + sum((a.get(p, 256) != 32) * 50 for p in (big, small, short))

    def kernels(name):
        found = {"segred_4": {"runs": 1, "total_us": 995.0 if name == "a" else 5.0},
                 "segmap_1": {"runs": 1, "total_us": 5.0 if name == "a" else 0.05}}
        return found | {"segmap_2": {"runs": 1, "total_us": 1.0 if name == "a" else 5.0}}

    bench = ModelBench(cost, lambda name, a: [])
    bench.kernels = kernels
    outcome = tune_sizes(space, bench, space.start(), params, lambda _: None)
    assert outcome.sizes == {big: 32, short: 32}
    assert outcome.notes == (f"sizes of kernels under 1% of every tuning dataset's profiled time were left alone: "
                             f"{small}",)


class LimitedBench(ModelBench):
    """Stops measuring after `limit` program runs, as measure.Bench does at its --budget."""

    def __init__(self, cost, limit):
        super().__init__(cost)
        self.limit = limit

    def measure(self, dataset, params, *, key=None, label=""):
        if (dataset.name, key) not in self.seen and self.invocations >= self.limit:
            raise Stopped(f"the budget of {self.limit} program runs is spent")
        return super().measure(dataset, params, key=key, label=label)


@pytest.mark.parametrize("name", ["exhaustive", "binary", "monotonic", "random"])
def test_a_strategy_stopped_by_the_runs_budget_keeps_its_best_so_far(name):
    space = Space.of(chain_forest(), DATASETS)
    objective = Objective(space, LimitedBench(chain_cost, 10))
    outcome = STRATEGIES[name](space, objective, np.random.default_rng(2), lambda _: None)
    assert outcome.stopped == "the budget of 10 program runs is spent"
    assert outcome.assignment and set(outcome.assignment) <= set(space.names)
    assert f"stopped ({outcome.stopped})" in outcome.notes[-1]


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_a_space_with_no_threshold_reached_tunes_nothing(name):
    """The datasets reach no threshold (another entry point's, say): never is the only assignment."""
    space = Space.of(chain_forest(), [probed("z", {})])
    outcome = STRATEGIES[name](space, Objective(space, ModelBench(lambda n, a: 1.0)), np.random.default_rng(0),
                               lambda _: None)
    assert outcome.assignment == {} and outcome.stopped is None


def test_tree_keeps_the_side_by_side_value_of_a_guard_whose_timed_runs_tie():
    """Two trees, m.a compared once a run and m.b in a loop. The profiles make m.a's true version faster, but
    whole timed runs cannot tell its outcomes apart: a tie is no evidence against the value the side-by-side
    pass gave, so tree keeps it instead of setting never."""
    forest = build_forest([Param(name, "threshold", None, ()) for name in ("m.a", "m.b")])
    loop = (10, 100, 1000)
    space = Space.of(forest, [probed("d", {"m.a": (100,), "m.b": loop})])

    def profile(name, assignment):
        a_true = assignment["m.a"] <= 100
        return [{"threshold": "m.a", "outcome": a_true, "epar": 100, "span_us": 5.0 if a_true else 20.0}] + [
            {"threshold": "m.b", "outcome": assignment["m.b"] <= e, "epar": e,
             "span_us": (5.0 if e >= 100 else 50.0) if assignment["m.b"] <= e else 20.0} for e in loop]

    def cost(name, assignment):
        return 20.0 + sum(p["span_us"] for p in profile(name, assignment)[1:])

    bench = ModelBench(cost, profile)
    outcome = STRATEGIES["tree"](space, Objective(space, bench), np.random.default_rng(0), lambda _: None)
    assert outcome.assignment == {"m.a": 100, "m.b": 100}
    assert any("m.a: 100, found before, agrees with every dataset's result, so it stays" in n for n in outcome.notes)


@pytest.mark.parametrize("rounds_cost, kept", [(30.0, "side by side"), (10.0, "rounds")])
def test_tree_keeps_the_side_by_side_pass_where_its_rounds_end_significantly_slower(rounds_cost, kept):
    """Each comparison of the timed rounds is a test at 5%: over a few dozen, some guards move on noise. Where
    the rounds' values are significantly slower than the side-by-side pass's, that pass's stay."""
    forest = build_forest([Param(name, "threshold", None, ()) for name in ("m.a", "m.b")])
    space = Space.of(forest, [probed("d", {"m.a": (100,), "m.b": (100,)})])
    side_by_side, rounds = {"m.a": 100, "m.b": 100}, {"m.a": space.never, "m.b": 100}
    bench = ModelBench(lambda name, a: 20.0 if a["m.a"] <= 100 else rounds_cost)
    outcome = _best_round(Outcome(rounds, ("a note",)), [("after the side-by-side pass", side_by_side)], space,
                          Objective(space, bench), lambda _: None)
    assert outcome.assignment == (side_by_side if kept == "side by side" else rounds)
    assert ("the values after the side-by-side pass ran significantly faster" in " ".join(outcome.notes)) == (
        kept == "side by side")


def test_tree_keeps_an_earlier_rounds_values_that_run_faster_on_some_dataset_and_slower_on_none():
    """Rounds that move guards back and forth can end slower than an earlier round: on an H100 backprop's third
    ended 1.08 of its second's values. The latest round first, the faster going on: round 1's values beat
    round 2's, which beat the last's; values faster on one dataset and slower on another do not count."""
    names = ("m.a", "m.b")
    forest = build_forest([Param(name, "threshold", None, ()) for name in names])
    space = Space.of(forest, [probed(d, {"m.a": (100,), "m.b": (100,)}) for d in ("d1", "d2")])
    true, false = 100, space.never
    last, second, first = {"m.a": false, "m.b": false}, {"m.a": true, "m.b": false}, {"m.a": true, "m.b": true}
    costs = {(False, False): (30.0, 30.0), (True, False): (20.0, 30.0), (True, True): (10.0, 20.0),
             (False, True): (10.0, 40.0)}

    def cost(name, a):
        return costs[a["m.a"] <= 100, a["m.b"] <= 100][name == "d2"]

    rounds = [("after round 1", first), ("after round 2", second)]
    bench = ModelBench(cost)
    outcome = _best_round(Outcome(last, ()), rounds, space, Objective(space, bench), lambda _: None)
    assert outcome.assignment == first
    assert "the values after round 1 ran significantly faster" in outcome.notes[-1]
    mixed = {"m.a": false, "m.b": true}  # faster on d1, slower on d2 than the last round's
    outcome = _best_round(Outcome(last, ()), [("after round 1", mixed)], space, Objective(space, ModelBench(cost)),
                          lambda _: None)
    assert outcome.assignment == last and outcome.notes == ()


class DriftingBench(ModelBench):
    """A host that speeds up as the run goes on: each invocation apart runs `drift` faster than the one before,
    which the runs of one invocation (all at one speed, so the invocation noise is known to be none) cannot
    tell; runs in turn run both sides at one speed."""

    max_runs = 6

    def __init__(self, cost, drift):
        super().__init__(cost)
        self.drift, self.paired = drift, {}

    def measure(self, dataset, params, *, key=None, label=""):
        if key is not None and (dataset.name, key) in self.seen:
            return self.seen[dataset.name, key]
        self.invocations += 1
        speed = 1.0 - self.drift * self.invocations
        found = Measurement(tuple(self.cost(dataset.name, params) * speed * (1 + e) for e in (-0.001, 0.0, 0.001)))
        self.seen[dataset.name, key] = found
        return found

    def pairs(self, dataset, first, second):
        return self.paired.get((dataset.name, first.key, second.key), [])

    def measure_pair(self, dataset, first, second, found, pairs):
        self.invocations += 1
        made = self.paired.setdefault((dataset.name, first.key, second.key), [])
        made += [(self.cost(dataset.name, first.params) * (1 + e), self.cost(dataset.name, second.params) * (1 + e))
                 for e in (-0.001, 0.0, 0.001)]
        return made

    def paired_runs(self, name, have):
        return 3

    def latest(self, dataset, key, found):
        return found


def test_tree_compares_an_earlier_rounds_values_with_the_last_rounds_in_turn():
    """An earlier round's values were measured long before the last round's: on a host that sped up in between,
    apart they look slower though they are 10% faster (backprop on an H100: its last round's values measured 282
    µs against its second round's 350 µs, and judged in turn were the slower). Runs in turn decide."""
    forest = build_forest([Param(name, "threshold", None, ()) for name in ("m.a", "m.b")])
    space = Space.of(forest, [probed("d", {"m.a": (100,), "m.b": (100,)})])
    earlier, last = {"m.a": 100, "m.b": space.never}, {"m.a": space.never, "m.b": space.never}
    bench = DriftingBench(lambda name, a: 20.0 if a["m.a"] <= 100 else 22.0, drift=0.02)
    d = space.datasets[0]
    first, second = (_candidate(space, d, values, "") for values in (earlier, last))
    before = bench.measure(d.dataset, first.params, key=first.key)
    bench.invocations += 10  # the rounds in between
    after = bench.measure(d.dataset, second.params, key=second.key)
    assert after.mean_us < before.mean_us  # apart, the last round's values look 10% faster
    outcome = _best_round(Outcome(last, ()), [("after round 1", earlier)], space, Objective(space, bench), lambda _: None)
    assert outcome.assignment == space.start() | earlier
    assert "the values after round 1 ran significantly faster" in outcome.notes[-1]


def test_a_whole_assignments_comparison_counts_the_invocation_noise():
    """Whole assignments (the stochastic strategies, the check against the untuned program) are compared as
    single comparisons are: a 4% difference in one invocation each is significant where invocations agree,
    and not where they stray 10%."""
    params = [Param("m.t", "threshold", None, ())]
    space = Space.of(build_forest(params), [probed("d", {"m.t": (10,)})])
    faster, slower = [Measurement((100.0, 100.5, 99.5, 100.0))], [Measurement((104.0, 104.5, 103.5, 104.0))]

    class Noisy(ModelBench):
        def invocation_noise(self, name):
            return 0.1 ** 2, MIN_INVOCATION_DOF

    quiet = Objective(space, ModelBench(lambda name, a: 1.0))
    assert quiet.significantly_worse(slower, faster) and not quiet.significantly_worse(faster, slower)
    assert not Objective(space, Noisy(lambda name, a: 1.0)).significantly_worse(slower, faster)


def test_later_rounds_tune_the_guards_an_intra_group_version_falls_back_to():
    """Every tuning dataset takes the intra-group version (main.suff_intra_par_0 true), which at run time falls
    back to its false side where its workgroup does not fit (a dataset the tuning did not see). Behind it, a's
    best outcome follows b's; a is tuned first, with b at never, and b moves after it. The rounds skip a and b
    (no dataset runs them); after them, a is tuned again with b at its tuned value, and finds its true side."""
    intra, a, b = "main.suff_intra_par_0", "main.suff_outer_par_1", "main.suff_outer_par_2"
    params = [Param(intra, "threshold", None, ()), Param(a, "threshold", None, ((intra, False),)),
              Param(b, "threshold", None, ((intra, False),))]
    space = Space.of(build_forest(params), [probed("d", {intra: (100,), a: (100,), b: (100,)})])
    assert [n.name for n in tuning_order(space.forest)][:2] == [a, b]

    def cost(name, assignment):
        if assignment[intra] <= 100:
            return 10.0
        a_true, b_true = assignment[a] <= 100, assignment[b] <= 100
        return 50.0 + 20 * (a_true != b_true) + 30 * (not b_true)

    outcome = STRATEGIES["tree"](space, Objective(space, ModelBench(cost)), np.random.default_rng(0), lambda _: None)
    assert outcome.assignment[intra] <= 100
    assert outcome.assignment[a] <= 100 and outcome.assignment[b] <= 100  # the fallback's best: 50, not 70


def test_a_tiled_stencil_loops_steps_and_width_are_tuned_as_sizes():
    """Its parameters (USER_PARAM, named by the contract's stencil_param_name) move every kernel's time: tried
    whatever kernels ran; other `#[param]`s are the user's, never tried."""
    space = Space.of(chain_forest(), DATASETS[:2])
    steps, width = stencil_param_name("main", "steps", 0), stencil_param_name("main", "width", 0)
    params = [Param(steps, USER_PARAM), Param(width, USER_PARAM), Param("main.chunk", USER_PARAM)]

    def cost(name, a):
        return 100.0 + abs(a.get(steps, 16) - 4) * 3 + (a.get(width, 256) != 512) * 20 + (a.get("main.chunk", 1) != 7)

    bench = ModelBench(cost, lambda name, a: [])
    bench.kernels = {"segmap_3": {"runs": 1, "total_us": 80.0}}
    outcome = tune_sizes(space, bench, space.start(), params, lambda _: None)
    assert outcome.sizes == {steps: 4, width: 512}
