"""The tuner's search structures and the simple-case algorithm: the version tree, probing, the tuned version's
name, and Alg. 2 on a model of runtimes."""

from __future__ import annotations

import pytest

from incflat.datasets import Dataset, InlineValues
from incflat.ir.errors import ToolError
from incflat.tuner.measure import MIN_INVOCATION_DOF, Measurement
from incflat.tuner.probe import Probe, probe
from incflat.ir.runtime.tuning import NEVER, no_fallback_error
from incflat.tuner.children import RunResult
from incflat.tuner.simple import tune_simple
from incflat.tuner.tree import Probed, build_forest, path, pins, tuning_order
from tuner_fixtures import T1, T2, T3, T4, threshold


# --- the version tree ---


def _chain():
    return [threshold(name, None, tuple((a, False) for a in (T1, T2, T3, T4)[:i])) for i, name in
            enumerate((T1, T2, T3, T4))]


def test_forest_of_the_matmul_chain_and_paths():
    (root,) = build_forest(_chain())
    assert root.name == T1 and root.on_true == () and root.on_false[0].name == T2
    assert [n.name for n in tuning_order((root,))] == [T4, T3, T2, T1]
    t4 = root.on_false[0].on_false[0].on_false[0]
    assert pins(t4, NEVER) == {T1: NEVER, T2: NEVER, T3: NEVER}
    epars = dict(zip((T1, T2, T3, T4), ((100,), (64,), (6400,), (32,))))
    everything = dict.fromkeys((T1, T2, T3, T4), NEVER)
    assert path((root,), everything, epars) == ((T1, (False,)), (T2, (False,)), (T3, (False,)), (T4, (False,)))
    assert path((root,), everything | {T2: 64}, epars) == ((T1, (False,)), (T2, (True,)))
    # T3 = 6400 and T3 = 1 take the same path for this dataset: the same experiment.
    assert path((root,), everything | {T3: 6400}, epars) == path((root,), everything | {T3: 1}, epars)


def test_forest_with_splits_true_branches_and_loops():
    a, b, c, d, e = "m.a", "m.b", "m.c", "m.d", "other.e"
    listing = [
        threshold(d, None, ((b, False), (a, True))),  # listed before its parents, ancestors out of order
        threshold(a, None, ()),
        threshold(b, None, ((a, True),)),
        threshold(c, None, ((a, True),)),
        threshold(e, None, ()),
    ]
    forest = build_forest(listing)
    assert [n.name for n in forest] == [a, e]
    assert [n.name for n in forest[0].on_true] == [b, c]  # a horizontal split
    assert forest[0].on_true[0].on_false[0].ancestors == ((a, True), (b, False))
    assert [n.name for n in tuning_order(forest)] == [d, b, c, a, e]
    # In a loop, a sees 3 values; some iterations go each way, so both subtrees are reached.
    epars = {a: (10, 100, 1000), b: (5,), c: (7,), d: (3,)}
    assignment = {a: 100, b: NEVER, c: 1, d: 1, e: 1}
    assert path(forest, assignment, epars) == ((a, (False, True, True)), (b, (False,)), (d, (True,)), (c, (True,)))
    with pytest.raises(ToolError, match="depends on m.x, which is not listed .in the program's --print-params"):
        build_forest([threshold(a, None, (("m.x", True),))])
    with pytest.raises(ToolError, match="do not form a path"):
        build_forest([threshold(a, None, ()), threshold(b, None, ((a, True),)), threshold(c, None, ((b, True),))])


class _LoggingProgram:
    """Answers -L runs for m.a -> (true: m.b -> (true: m.c, never compared), false: m.d)."""

    store = None

    def __init__(self):
        self.calls = []

    def run_once(self, dataset, params, options, label="", learn_noise=False):
        self.calls.append(params)
        log, a = ["Device: Stub"], params["m.a"] <= 50
        log.append(f"Compared m.a <= 50: {str(a).lower()}.")
        log.append("Compared m.b <= 7: false." if a else "Compared m.d <= 9: false.")
        return RunResult(None, "\n".join(log), 0.0)


def test_probing_pins_ancestors_to_reach_thresholds_under_true_outcomes():
    forest = build_forest([
        threshold("m.a", None, ()),
        threshold("m.b", None, (("m.a", True),)),
        threshold("m.c", None, (("m.a", True), ("m.b", True))),
        threshold("m.d", None, (("m.a", False),)),
    ])
    program = _LoggingProgram()
    found = probe(forest, program, Dataset("d", "main", InlineValues(""), False), NEVER)
    assert found == Probe({"m.a": (50,), "m.d": (9,), "m.b": (7,)}, "Stub")
    assert [(call["m.a"], call["m.b"]) for call in program.calls] == [(NEVER, NEVER), (1, NEVER), (1, 1)]


# --- the simple-case algorithm, on a model ---


class _ModelBench:
    """Measures with a cost function of (dataset, path) and caches by key as Bench does; one run each."""

    max_runs = 1

    def __init__(self, forest, cost):
        self.forest, self.cost = forest, cost
        self.runs, self.hits, self.seen = 0, 0, {}

    def timed_runs(self, name):
        return 1

    def cached(self, name, key):
        return self.seen.get((name, key))

    def invocation_noise(self, name):  # a model: no invocation noise, and known to be none
        return 0.0, MIN_INVOCATION_DOF

    def run_once(self, dataset, params, options):  # a profiled run (-P) that fails
        self.runs += 1
        return RunResult("exit status 1: no profile", "", 0.0)

    def measure(self, dataset, params, *, key=None, label=""):
        if (dataset.name, key) in self.seen:
            self.hits += 1
            return self.seen[dataset.name, key]
        self.runs += 1
        found = Measurement(times_us=(self.cost(dataset.name, key),))
        self.seen[dataset.name, key] = found
        return found


def _probed(name, epars):
    return Probed(Dataset(name, "main", InlineValues(""), False), epars)


def test_a_threshold_moves_from_the_programs_default_only_as_far_as_the_datasets_require():
    """Where the results exclude the default, the threshold takes the allowed value nearest it, not Alg. 2's
    upper end: a dataset the tuning did not see keeps the default's outcome beyond what was measured."""
    forest = build_forest([threshold("m.t", None, ())])
    # a (E=100) prefers false: [101, never]; b (E=5000) ties. The default 50 is outside.
    costs = {("a", True): 20.0, ("a", False): 10.0, ("b", True): 10.0, ("b", False): 10.0}
    data = [_probed("a", {"m.t": (100,)}), _probed("b", {"m.t": (5000,)})]
    bench = _ModelBench(forest, lambda name, p: costs[name, p[0][1][0]])
    assert tune_simple(forest, data, bench, lambda _: None, defaults={"m.t": 50}).assignment == {"m.t": 101}
    assert tune_simple(forest, data, bench, lambda _: None).assignment == {"m.t": NEVER}  # no default: Alg. 2's
    # a (E=100) prefers true, b (E=200) false, by more: the faster end is b's side, [201, never], and of the
    # values that send a and b that way, 201 up to never, the one nearest the default 50000 is 50000 itself.
    costs = {("a", True): 10.0, ("a", False): 11.0, ("b", True): 50.0, ("b", False): 20.0}
    data = [_probed("a", {"m.t": (100,)}), _probed("b", {"m.t": (200,)})]
    bench = _ModelBench(forest, lambda name, p: costs[name, p[0][1][0]])
    assert tune_simple(forest, data, bench, lambda _: None, defaults={"m.t": 50000}).assignment == {"m.t": 50000}
    # c (E=5000) ties: the values that send a, b and c alike end at 5000, and c takes the default's side
    costs |= {("c", True): 30.0, ("c", False): 30.0}
    data.append(_probed("c", {"m.t": (5000,)}))
    bench = _ModelBench(forest, lambda name, p: costs[name, p[0][1][0]])
    outcome = tune_simple(forest, data, bench, lambda _: None, defaults={"m.t": 50000})
    assert outcome.assignment == {"m.t": 5000}
    assert "moved from the default, 50000, only as far as the datasets' results require: 5000" in outcome.notes[-1]


@pytest.mark.parametrize("value, default, moved", [
    (101, 50, 101), (101, 3000, 3000), (101, 10 ** 6, 5000),  # between the two ePars: (100, 5000]
    (NEVER, 50, 5001), (NEVER, 10 ** 6, 10 ** 6),  # false for both: (5000, never]
    (1, 50, 50), (1, 3000, 100),  # true for both: up to 100
])
def test_every_strategys_values_move_to_the_point_of_their_plateau_nearest_the_default(value, default, moved):
    """Whatever the strategy found is moved, inside the values that send every tuning dataset the same way (so
    nothing measured changes), to the one nearest the program's default: a shape not tuned on goes the
    untuned program's way where nothing measured says otherwise (Space.nearest_defaults)."""
    from incflat.tuner.search import Space
    forest = build_forest([threshold("m.t", None, ()), threshold("m.u", None, ())])
    data = [_probed("a", {"m.t": (100,), "m.u": (7,)}), _probed("b", {"m.t": (5000,), "m.u": (7,)})]
    space = Space.of(forest, data, defaults={"m.t": default})
    assert space.nearest_defaults({"m.t": value, "m.u": 3}) == {"m.t": moved, "m.u": 3}  # m.u: no default known
    assert space.paths({"m.t": value, "m.u": 3}) == space.paths({"m.t": moved, "m.u": 3})


def test_conflicting_ranges_keep_the_faster_end_without_new_runs():
    forest = build_forest([threshold("m.t", None, ())])
    # a (E=100) prefers true by a little, b (E=200) prefers false by a lot: [1, 100] and [201, never] conflict.
    costs = {("a", True): 10.0, ("a", False): 11.0, ("b", True): 50.0, ("b", False): 20.0}
    bench = _ModelBench(forest, lambda name, p: costs[name, p[0][1][0]])
    data = [_probed("a", {"m.t": (100,)}), _probed("b", {"m.t": (200,)})]
    outcome = tune_simple(forest, data, bench, lambda _: None)
    assert outcome.assignment == {"m.t": 201}  # a: 11 + b: 20 beats a: 10 + b: 50
    assert "ranges do not intersect (201 > 100)" in outcome.notes[0]
    assert (bench.runs, bench.hits) == (4, 4)  # both ends were runs already made


def test_sibling_thresholds_are_tuned_again_with_the_others_at_their_tuned_values():
    """Two independent guards whose versions interact: tuned once each in order, a sees b at never and takes
    true, then b takes true (cost 5); the second round gives a false with b true, the optimum (cost 3)."""
    forest = build_forest([threshold("m.a", None, ()), threshold("m.b", None, ())])
    costs = {(False, False): 10.0, (True, False): 9.0, (True, True): 5.0, (False, True): 3.0}
    bench = _ModelBench(forest, lambda name, p: costs[dict(p)["m.a"][0], dict(p)["m.b"][0]])
    outcome = tune_simple(forest, [_probed("d", {"m.a": (10,), "m.b": (10,)})], bench, lambda _: None)
    assert outcome.assignment["m.a"] > 10 and outcome.assignment["m.b"] <= 10
    assert bench.runs == 4  # every path once


def test_loop_thresholds_whose_profiled_runs_fail_fall_back_to_trying_each_observed_value():
    forest = build_forest([threshold("m.t", None, ())])
    # The cost depends on how many iterations take the true branch; best with two of three.
    bench = _ModelBench(forest, lambda name, p: {0: 40.0, 1: 30.0, 2: 10.0, 3: 20.0}[sum(p[0][1])])
    outcome = tune_simple(forest, [_probed("a", {"m.t": (10, 100, 1000)})], bench, lambda _: None)
    assert outcome.assignment == {"m.t": 100}
    assert "a loop" in outcome.notes[0] and "each observed value" in outcome.notes[0]
    assert bench.runs == 2 + 4  # the two failed profiled runs, then every value


def test_thresholds_that_no_dataset_reaches_keep_the_default():
    forest = build_forest([threshold("m.t", None, ()), threshold("other.u", None, ())])
    bench = _ModelBench(forest, lambda name, p: 1.0 if p[0][1][0] else 2.0)
    outcome = tune_simple(forest, [_probed("a", {"m.t": (5,)})], bench, lambda _: None)
    assert outcome.assignment == {"m.t": 5}
    assert "other.u: no tuning dataset reaches it" in outcome.notes[0]


class _NoisyBench(_ModelBench):
    """True and false alike in the noise on dataset `a`; on `b`, true is clearly faster."""

    max_runs = 6

    def measure(self, dataset, params, *, key=None, label=""):
        found = self.seen.get((dataset.name, key))
        if found is None:
            self.runs += 1
            found = self.seen[dataset.name, key] = Measurement(self._times(dataset.name, key, 0))
        return found

    def pairs(self, dataset, first, second):
        return [pair for runs in self.__dict__.get("paired", {}).get((dataset.name, first.key, second.key), [])
                for pair in runs]

    def measure_pair(self, dataset, first, second, found, pairs):
        self.runs += 1
        paired = self.__dict__.setdefault("paired", {}).setdefault((dataset.name, first.key, second.key), [])
        start = 2 * len(paired)
        paired.append(list(zip(*(self._times(dataset.name, c.key, start) for c in (first, second)))))
        return self.pairs(dataset, first, second)

    def paired_runs(self, name, have):
        return 2

    def latest(self, dataset, key, found):
        return found

    def _times(self, name, key, start):
        true = key[0][1][0]
        base = 10.0 if name == "b" and true else 20.0
        return tuple(base + (0.5 if (start + i + true) % 2 else -0.5) for i in range(2))


def test_a_dataset_whose_outcomes_tie_constrains_nothing():
    forest = build_forest([threshold("m.t", None, ())])
    bench = _NoisyBench(forest, None)
    outcome = tune_simple(forest, [_probed("a", {"m.t": (100,)}), _probed("b", {"m.t": (50,)})], bench,
                          lambda _: None)
    # Without a, b's range [1, 50] decides; a (E = 100, true and false equally fast) does not move it.
    assert outcome.assignment == {"m.t": 50}
    assert any("on a the two outcomes' difference was not significant" in n for n in outcome.notes)


class _CloseBench(_NoisyBench):
    """On dataset `a` true runs 1% faster than false on average, inside the runs' noise (a tie)."""

    def _times(self, name, key, start):
        true = key[0][1][0]
        if name != "a":
            return super()._times(name, key, start)
        return tuple((19.9 if true else 20.1) + (1.0 if (start + i + true) % 2 else -1.0) for i in range(2))


def test_a_tie_sends_its_dataset_the_way_of_the_faster_mean_within_what_the_other_datasets_allow():
    forest = build_forest([threshold("m.t", None, ())])
    data = [_probed("a", {"m.t": (100,)}), _probed("b", {"m.t": (500,)})]
    # b: true significantly faster, any value in [1, 500]; a (E = 100) ties, true the faster mean: [1, 100]
    outcome = tune_simple(forest, data, _CloseBench(forest, None), lambda _: None, defaults={"m.t": 300})
    assert outcome.assignment == {"m.t": 100}
    assert any("on a the two outcomes' difference was not significant" in n and "the faster means decide" in n
               and "1 to 100" in n for n in outcome.notes)
    # the default already sends a the faster way: it stays
    outcome = tune_simple(forest, data, _CloseBench(forest, None), lambda _: None, defaults={"m.t": 40})
    assert outcome.assignment == {"m.t": 40}
    # alone, a's tie moves never (no default known) to Alg. 2's upper end of its faster side
    outcome = tune_simple(forest, data[:1], _CloseBench(forest, None), lambda _: None)
    assert outcome.assignment == {"m.t": 100}


def test_a_round_whose_moves_all_follow_tied_means_is_not_followed_by_another():
    """Another round re-checks what the significant results found; moves on faster means inside the noise
    would only chase it (on the H100, backprop's tree then made 45 runs of a dataset, against 17 versions + 2)."""
    forest = build_forest([threshold("m.t", None, ()), threshold("m.u", None, ())])
    logged = []
    outcome = tune_simple(forest, [_probed("a", {"m.t": (100,), "m.u": (100,)})], _CloseBench(forest, None),
                          logged.append, defaults={"m.t": 300, "m.u": 300})
    assert outcome.assignment["m.t"] == 100  # true, the faster mean of a's tie
    assert not any(line.startswith("round 2") for line in logged)


# --- the version the tuned values run, and the fallbacks a dataset learns ---


def test_versions_are_named_as_incflat_versions_names_them():
    """Leaves numbered per entry point, depth first, true first; a horizontal split runs several; a loop guard
    that goes both ways is mixed; a threshold whose value is not known stops the walk."""
    forest = build_forest([threshold("main.suff_outer_par_0", None, ()),
                           threshold("main.suff_intra_par_1", None, (("main.suff_outer_par_0", False),)),
                           threshold("main.suff_outer_par_2", None, ()),
                           threshold("other.suff_outer_par_3", None, ())])
    from incflat.tuner.tree import version
    epars = {"main.suff_outer_par_0": (10,), "main.suff_intra_par_1": (5,), "main.suff_outer_par_2": (10,)}
    chosen = version(forest, {"main.suff_outer_par_0": 100, "main.suff_intra_par_1": 1, "main.suff_outer_par_2": 1},
                     epars, "main")
    assert chosen.name == "V2+V4"  # V1 | (V2 | V3) under the first root, V4 | V5 under the second
    assert chosen.outcomes == "main.suff_outer_par_0:no main.suff_intra_par_1:yes main.suff_outer_par_2:yes"
    looped = version(forest, {"main.suff_outer_par_0": 7, "main.suff_intra_par_1": 1, "main.suff_outer_par_2": 100},
                     epars | {"main.suff_outer_par_0": (5, 10)}, "main")
    assert looped.name == "V1+V2+V5 (mixed)" and "main.suff_outer_par_0:mixed(1 of 2 yes)" in looped.outcomes
    assert version(forest, {}, epars, "main").name == "?"
    assert version(forest, {"other.suff_outer_par_3": 1}, {"other.suff_outer_par_3": (4,)}, "other").name == "V1"
    assert version(forest, {}, {}, "third").name == "one version"


def test_a_dataset_learns_its_fallbacks_from_the_no_fallback_error_and_runs_their_false_sides_without_them():
    d = _probed("d", {"m.suff_intra_par_1": (100,), "m.suff_intra_par_3": (5, 50)})
    error = "exit status 1: Error: " + no_fallback_error("m.suff_intra_par_1", 100, "GPU", "a workgroup (too big)")
    assert d.learn(error) and not d.learn(error)  # known once
    assert not d.learn("exit status 1: Error: out of memory") and not d.learn(None)
    assert d.learn(no_fallback_error("m.suff_intra_par_3", 50, "GPU", "local memory"))
    assert d.learn(no_fallback_error("m.suff_intra_par_9", 7, "GPU", "local memory"))  # a guard the probe missed
    assignment = {"m.suff_intra_par_1": 1, "m.suff_intra_par_3": 1, "m.suff_intra_par_9": 1}
    # the guard that cannot run at its only ePar is set past it (the same path, no fallback); the loop guard
    # that runs at 5 and not at 50 keeps its value, as does the one the probe did not see
    assert d.runnable(assignment) == {"m.suff_intra_par_1": 101, "m.suff_intra_par_3": 1, "m.suff_intra_par_9": 1}
    assert d.runnable({**assignment, "m.suff_intra_par_1": 500})["m.suff_intra_par_1"] == 500  # already false
