"""The compiled program as the tuner runs it (its listing, -L comparisons and runs), and measurement: the
bench, comparisons apart and in turn, invocation noise and adaptive run counts. Most run tests/fake_program.py
in place of a compiled program, or scripted programs."""

from __future__ import annotations

import gzip
import math
import statistics
from pathlib import Path

import pytest

from incflat.tuner.judge import in_turn_pairs
from incflat.tuner.result import DatasetReport
from incflat.datasets import Dataset, InlineValues, ValuesFile
from incflat.tuner.stats import welch_pvalue
from incflat.tuner.measure import (ALPHA, EQUIVALENCE, MIN_INVOCATION_DOF, Bench, Candidate, Measurement, compare,
                                   decisive_runs, difference_pvalue, paired_verdict, practically_equal)
from incflat.ir.runtime.tuning import (NEVER, Param, default_threshold_line, parse_comparisons, parse_default_threshold,
                                       parse_device, parse_listing)
from incflat.tuner.children import RunResult
from incflat.tuner.program import Program
from tuner_fixtures import FAKE, T1, T2, T3, T4, fake, threshold


# --- the program's command line ---


def test_parse_params_comparisons_and_device():
    listing = (
        "main.suff_outer_par_0 (threshold(def, ))\n"
        "main.suff_intra_par_1 (threshold(32, !main.suff_outer_par_0))\n"
        "main.segmap_tblock_size_4 (thread_block_size)\n"
        "main.suff_outer_par_2 (threshold(def, main.suff_outer_par_0 !main.suff_intra_par_1))\n"
        "main.tile_size_7 (tile_size)\n"
    )
    assert parse_listing(listing) == [
        threshold(T1, None, ()),
        threshold(T2, 32, ((T1, False),)),
        Param("main.segmap_tblock_size_4", "thread_block_size"),
        threshold(T3, None, ((T1, True), (T2, False))),
        Param("main.tile_size_7", "tile_size"),
    ]
    stderr = (
        "Device: NVIDIA H100 80GB HBM3\n"
        f"Compared {T1} <= 16384: false.\nCompared {T2} <= 64: true.\nCompared {T1} <= 8: false.\n"
        f"Compared {T1} <= 16384: false.\nnoise\n"
    )
    assert parse_comparisons(stderr) == {T1: (8, 16384), T2: (64,)}
    assert parse_device(stderr) == "NVIDIA H100 80GB HBM3"
    assert parse_device("Using device X\n") is None
    assert parse_default_threshold(stderr) is None
    assert parse_default_threshold(f"{stderr}{default_threshold_line(32768)}\n") == 32768


def test_program_runs_report_failures_instead_of_raising(monkeypatch, tmp_path):
    program = Program(FAKE)
    assert [t.name for t in program.params(timeout=10) if t.is_threshold] == [T1, T2, T3, T4]
    dataset = Dataset("d", "main", InlineValues("16i64 64i64 64i64"), False)
    ok = program.run(dataset, params={}, timeout=10, timing_runs=3)
    assert ok.ok and ok.times_us == (64.0, 32.0, 32.0)
    (tmp_path / "d.in.gz").write_bytes(gzip.compress(b"16i64 64i64 64i64"))
    packed = Dataset("d", "main", ValuesFile("d.in.gz", tmp_path / "d.in.gz"), False)
    assert program.run(packed, params={}, timeout=10, timing_runs=1).times_us == (64.0,)
    missing = program.run(Dataset("d", "nope", dataset.input, False), params=None, timeout=10, timing_runs=1)
    assert missing.failure == "exit status 1: Error: no entry point 'nope'"
    monkeypatch.setenv("FAKE_PROGRAM_SLEEP", "5")
    slow = program.run(dataset, params=None, timeout=0.5, timing_runs=1)
    assert slow.failure == "timed out after 0.5 s"
    gone = program.run(Dataset("d", "main", ValuesFile("x.in", Path("/nonexistent/x.in")), False), params=None,
                       timeout=1)
    assert not gone.ok and "No such file" in gone.failure


def test_a_difference_that_the_hosts_drift_hides_is_found_with_runs_in_turn(tmp_path, monkeypatch):
    """V5 is 11.5% faster than V1 here, but the host's speed moves 30% between invocations: a fast V1 and a
    slow V5 (V1 looks faster); the pairs of one invocation share its speed."""
    monkeypatch.setenv("FAKE_PROGRAM_DRIFT", f"{tmp_path / 'count'}:0.7,1.3,1.3")
    monkeypatch.setenv("FAKE_PROGRAM_NOISE", "0.002")
    bench = Bench(Program(FAKE), runs=3, timeout=60.0, log=lambda _: None, max_runs=12)
    dataset = Dataset("d", "main", InlineValues("1i64 16i64 1i64"), False)
    v1, v5 = Candidate({T1: 1}, "V1"), Candidate({T1: NEVER, T2: NEVER, T3: NEVER, T4: NEVER}, "V5")
    assert compare(bench, dataset, v1, v5) == 1
    assert bench.run_count["d"] == 3 and (tmp_path / "count").read_text() == "3"  # the last one in turn
    (first, second), *_ = bench.pairs(dataset, v1, v5)
    assert second / first == pytest.approx(fake.runtime_us(5, 1, 16, 1) / fake.runtime_us(1, 1, 16, 1), rel=0.01)
    monkeypatch.delenv("FAKE_PROGRAM_DRIFT")
    monkeypatch.delenv("FAKE_PROGRAM_NOISE")
    ran = Program(FAKE).run_in_turn(dataset, [{T1: 1}, {}, {T1: NEVER, T2: 1}], timeout=60.0, timing_runs=2)
    # a warm-up each; the second: the defaults, every threshold at 32768 (V5); the third: V2
    assert ran.times_us == (52.0, 26.0) and ran.alternate_times_us == ((46.0, 23.0), (58.4, 29.2))


def test_program_runs_write_their_discarded_results_in_binary(tmp_path):
    echo = tmp_path / "echo.py"
    echo.write_text("import sys\nprint(' '.join(sys.argv[1:]), file=sys.stderr)\n")
    dataset = Dataset("d", "main", InlineValues("1i64"), False)
    assert "-b" in Program(echo).run(dataset, params={}, timeout=10).stderr.split()


# --- measurement: the bench, comparisons, invocation noise, run counts ---


class _StubProgram:
    """A program whose invocations are scripted: each takes `wall` seconds and reports `times`."""

    def __init__(self, outcomes):
        self.outcomes = list(outcomes)
        self.timeouts, self.timing_runs = [], []

    def run(self, dataset, *, params, timeout, options=(), timing_runs=None, check=None):
        self.timeouts.append(timeout)
        self.timing_runs.append(timing_runs)
        return self.outcomes.pop(0)

    def run_in_turn(self, dataset, configurations, *, timeout, timing_runs, options=(), check=None):
        self.timeouts.append(timeout)
        self.timing_runs.append(timing_runs)
        return self.outcomes.pop(0)


def _pair(first, second, warm=900.0):
    """A paired invocation's outcome: the two configurations' runs (warm-ups first)."""
    return RunResult(None, "", 2.0, (warm, *first), alternate_times_us=((warm, *second),))


def test_bench_drops_the_warm_up_caches_by_key_and_kills_slow_candidates():
    program = _StubProgram([
        RunResult(None, "", 2.0, (500.0, 100.0, 120.0)),
        RunResult("timed out after 21 s", "", 21.0, timed_out=True),
        RunResult(None, "", 1.0, (90.0, 80.0, 80.0)),
    ])
    bench = Bench(program, runs=2, timeout=60.0, log=lambda _: None)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    first = bench.measure(dataset, None, label="untuned")
    assert first.times_us == (100.0, 120.0) and first.mean_us == 110.0 and first.min_us == 100.0
    slow = bench.measure(dataset, {T1: 1}, key="slow")
    assert math.isinf(slow.mean_us) and "over 10x the best so far" in slow.failure
    assert bench.measure(dataset, {T1: 1}, key="slow") is slow  # cached, not re-run
    bench.measure(dataset, {T1: 2}, key="fast")
    assert program.timeouts == [60.0, 21.0, 21.0]  # 10x the best wall time (2 s), plus slack
    assert (bench.run_count["d"], bench.hit_count["d"]) == (3, 1)


def test_a_comparison_that_one_invocation_each_leaves_open_is_settled_in_turn():
    warm = 900.0
    program = _StubProgram([
        RunResult(None, "", 1.0, (warm, 100.0, 106.0)),  # a
        RunResult(None, "", 1.0, (warm, 104.0, 108.0)),  # b: not significant
        _pair((101.0, 103.0), (105.0, 107.0)),  # in turn: b 4% slower in both pairs
    ])
    bench = Bench(program, runs=2, timeout=60.0, log=lambda _: None, max_runs=8)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    a, b = Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b")
    assert compare(bench, dataset, a, b) == -1 and compare(bench, dataset, b, a) == 1  # (the pairs are kept)
    assert bench.run_count["d"] == 3 and not program.outcomes
    assert bench.again_count["d"] == 1  # two configurations, then one invocation of both
    assert bench.measure(dataset, {T1: 1}, key="a").times_us == (100.0, 106.0, 101.0, 103.0)  # its runs join
    assert compare(bench, dataset, a, Candidate({T1: 3}, "a")) == 0  # one experiment


def _invocation(*times: float) -> RunResult:
    return RunResult(None, "", 1.0, (900.0, *times))  # the warm-up first


def test_a_difference_that_the_invocations_hide_is_settled_by_runs_taken_in_turn():
    """heston32 and srad on the H100: every run of an invocation sat at 24 ms or at 36-40 ms, the program and
    its outputs the same. One invocation each makes a 30% difference look certain, but how far invocations
    differ is not known yet; runs of the two taken in turn in one invocation share its speed, and their ratios
    show b 5% slower."""
    program = _StubProgram([
        _invocation(100.0, 100.5, 99.5),  # a, in a fast invocation
        _invocation(130.0, 130.5, 129.5),  # b, in a slow one: significant by the runs
        _pair((120.0, 121.0, 119.0), (126.0, 127.0, 125.2)),  # in turn: b 5% slower in every pair
    ])
    bench = Bench(program, runs=3, timeout=60.0, log=lambda _: None, max_runs=9)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    a, b = Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b")
    assert compare(bench, dataset, a, b) == -1 and not program.outcomes
    noise, known = bench.invocation_noise("d")
    assert known == 2 and 0.005 < noise < 0.05  # the paired runs are another invocation of each side
    assert bench.measure(dataset, {T1: 1}, key="a").invocation_runs == (3, 3)


def test_a_tie_in_turn_is_a_tie_and_a_failed_paired_invocation_decides_nothing():
    program = _StubProgram([
        _invocation(100.0, 100.5, 99.5), _invocation(130.0, 130.5, 129.5),
        _pair((120.0, 121.0, 119.0), (120.2, 120.8, 119.1)),  # within 1% in every pair
        _invocation(100.0, 100.5, 99.5),  # c against b's 125: not significant under the noise known, so
        RunResult("timed out after 3 s", "", 3.0, timed_out=True),  # in turn, which fails
    ])
    bench = Bench(program, runs=3, timeout=60.0, log=lambda _: None, max_runs=9)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    a, b, c = Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b"), Candidate({T1: 3}, "c")
    assert compare(bench, dataset, a, b) == 0
    assert compare(bench, dataset, c, b) == 0 and not program.outcomes


def test_comparisons_of_configurations_without_keys_keep_their_pairs_apart():
    """Candidates that are not experiments (no key) are told apart by their --params: one comparison's pairs
    are not another's."""
    program = _StubProgram([
        _invocation(100.0, 100.5, 99.5), _invocation(100.0, 130.5, 69.5),  # a, b: not significant
        _pair((100.0, 100.5, 99.5), (110.0, 110.5, 109.5)),  # b 10% slower
        _invocation(100.0, 100.5, 99.5), _invocation(100.0, 130.5, 69.5),  # a again (no key: no cache), c
        _pair((100.0, 100.5, 99.5), (90.0, 90.5, 89.5)),  # c 10% faster
    ])
    bench = Bench(program, runs=3, timeout=60.0, log=lambda _: None, max_runs=9)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    a, b, c = Candidate({T1: 1}), Candidate({T1: 2}), Candidate({T1: 3})
    assert compare(bench, dataset, a, b) == -1
    assert compare(bench, dataset, a, c) == 1 and not program.outcomes


def test_a_difference_that_the_invocations_hid_apart_is_reported_from_runs_in_turn():
    """The report's speedup: untuned and tuned inside the noise apart are run in turn, the program as it was
    (every written value at the device's default) against the values written; significant apart, they are not."""
    before, after = Measurement((100.0, 130.0, 70.0)), Measurement((95.0, 125.0, 65.0))  # apart: inside the noise

    class Bench:
        asked = []

        def invocation_noise(self, name):
            return 0.0, MIN_INVOCATION_DOF

        def pairs(self, dataset, first, second):
            return []

        def paired_runs(self, name, have):
            return 3

        def measure_pair(self, dataset, first, second, found, pairs):
            self.asked.append((first.params, second.params))
            return [(100.0, 90.0), (101.0, 91.0), (99.0, 89.5)]

    bench, size = Bench(), "main.segmap_tblock_size_4"
    d, far = Dataset("d", "main", InlineValues("1"), False), Dataset("far", "main", InlineValues("2"), True)
    steady = Measurement((100.0, 100.5, 99.5))
    found = in_turn_pairs(bench, [d, far], {"d": before, "far": steady},
                          {"d": after, "far": Measurement((50.0, 50.5))}, {T1: 5, size: 128}, 32768, {T1})
    assert list(found) == ["d"] and bench.asked == [({T1: 32768, size: 0}, {T1: 5, size: 128})]
    report = DatasetReport("d", False, before, after, runs=3, cache_hits=0, in_turn=found["d"])
    assert report.significant and report.speedup == pytest.approx(1.108, rel=0.01)
    assert not DatasetReport("d", False, before, after, runs=2, cache_hits=0).significant  # apart


def test_paired_verdicts():
    assert paired_verdict([(100.0, 105.0), (101.0, 106.0), (99.0, 104.5)], 12) == -1
    assert paired_verdict([(105.0, 100.0), (106.0, 101.0), (104.5, 99.0)], 12) == 1
    assert paired_verdict([(100.0, 100.2), (100.0, 99.9), (100.0, 100.1)], 12) == 0  # within 1%
    assert paired_verdict([(100.0, 110.0), (100.0, 92.0)], 12) is None  # could go either way: more pairs
    assert paired_verdict([(100.0, 110.0), (100.0, 92.0)] * 3, 12) == 0  # at half, hopeless
    assert paired_verdict([(100.0, 103.0), (100.0, 97.5)] * 6, 12) == 0  # at max_pairs
    assert paired_verdict([(100.0, 90.0)], 1) == 1 and paired_verdict([], 12) is None
    # a run the host stalled (on a busy CPU: 3x its neighbours) does not hide a steady 5%
    steady = [(100.0, 105.0)] * 5 + [(100.0, 105.5), (100.0, 104.5)] * 2
    assert paired_verdict(steady + [(300.0, 105.0)], 12) == -1


def test_once_a_datasets_invocations_are_known_to_agree_one_invocation_each_decides():
    program = _StubProgram([
        _invocation(100.0, 100.5, 99.5),  # a
        _invocation(130.0, 130.5, 129.5),  # b: significant by the runs, the invocations' noise not known
        _pair((100.5, 99.5, 100.0), (129.5, 130.0, 130.5)),  # in turn: the invocations agree
        _invocation(150.0, 150.5, 149.5),  # c: one invocation is enough now
    ])
    bench = Bench(program, runs=3, timeout=60.0, log=lambda _: None, max_runs=9)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    a, b, c = Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b"), Candidate({T1: 3}, "c")
    assert compare(bench, dataset, a, b) == -1 and bench.invocation_noise("d") == (0.0, MIN_INVOCATION_DOF)
    assert compare(bench, dataset, c, b) == 1 and not program.outcomes
    assert bench.measure(dataset, {T1: 1}, key="a").invocation_runs == (3, 3)


def test_a_small_difference_under_a_known_large_invocation_noise_goes_to_pairs_at_once():
    """heston32 and srad on the H100: invocations of one program 30% apart. A difference of 10% in one
    invocation each is then no evidence; runs in turn settle it."""
    program = _StubProgram([
        _invocation(100.0, 100.5, 99.5),  # a
        _invocation(130.0, 130.5, 129.5),  # b: significant by the runs
        _pair((125.0, 126.0, 124.0), (125.2, 126.1, 124.3)),  # a and b in turn: within 1%, a tie; and a's two
        _invocation(103.0, 103.5, 102.5),  # invocations 25% apart. c: 8% from a's mean (112.5), not significant
        _pair((101.0, 102.0, 100.5), (112.0, 113.0, 111.0)),  # c 10% faster than a in every pair
    ])
    bench = Bench(program, runs=3, timeout=60.0, log=lambda _: None, max_runs=12)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    a, b, c = Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b"), Candidate({T1: 3}, "c")
    assert compare(bench, dataset, a, b) == 0 and bench.invocation_noise("d")[1] >= MIN_INVOCATION_DOF
    assert compare(bench, dataset, c, a) == -1 and not program.outcomes
    assert bench.run_count["d"] == 5


def test_invocation_noise_widens_a_comparison_and_asks_for_no_more_runs_per_invocation():
    a = Measurement((100.0, 100.5, 99.5, 100.0))
    b = Measurement((104.0, 104.5, 103.5, 104.0))
    assert difference_pvalue(a, b) < ALPHA  # 4% apart, the runs barely vary
    assert difference_pvalue(a, b, invocation_noise=0.1 ** 2) > ALPHA  # but invocations stray 10%
    assert not practically_equal(a, b, invocation_noise=0.1 ** 2)  # a tie only once measured enough
    # runs of one invocation cannot settle what invocations 10% apart leave open
    assert decisive_runs(0.05, 3, 12) > 3 and decisive_runs(0.05, 3, 12, invocation_noise=0.1 ** 2) == 3


def test_a_difference_inside_the_noise_of_its_pairs_is_a_tie():
    warm = 500.0
    program = _StubProgram([
        RunResult(None, "", 1.0, (warm, 100.0, 104.0)),  # a
        RunResult(None, "", 1.0, (warm, 105.0, 109.0)),  # b: not significant
        _pair((106.0, 102.0), (101.0, 105.0), warm),  # in turn: one pair each way; at half of max_runs (4),
    ])  # two more pairs could not make it significant
    bench = Bench(program, runs=2, timeout=60.0, log=lambda _: None, max_runs=4)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    assert compare(bench, dataset, Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b")) == 0
    assert bench.run_count["d"] == 3 and not program.outcomes


def test_a_difference_known_to_be_under_one_percent_is_a_tie_at_once():
    """Means 1000 and 1003 with little spread: significant, but its confidence interval lies within 1% of the
    faster mean, so the comparison is a tie after one invocation each (an equivalence stop)."""
    program = _StubProgram([RunResult(None, "", 1.0, (900.0, 1000.0, 1000.5, 999.5)),
                            RunResult(None, "", 1.0, (900.0, 1003.0, 1003.5, 1002.5))])
    bench = Bench(program, runs=3, timeout=60.0, log=lambda _: None, max_runs=12)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    assert compare(bench, dataset, Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b")) == 0
    assert bench.run_count["d"] == 2 and not program.outcomes


def test_a_small_difference_not_yet_known_to_be_small_is_measured_in_turn():
    """Means 1000 and 1015 from first runs too noisy to tell: the two in turn show b 1.5% slower (and a
    difference under 1% in turn would have been a tie: test_paired_verdicts)."""
    program = _StubProgram([RunResult(None, "", 1.0, (900.0, 990.0, 1010.0, 1000.0)),
                            RunResult(None, "", 1.0, (900.0, 1005.0, 1025.0, 1015.0)),
                            _pair([1000.0] * 6, [1015.0, 1015.5, 1014.5] * 2)])
    bench = Bench(program, runs=3, timeout=60.0, log=lambda _: None, max_runs=12)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    assert compare(bench, dataset, Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b")) == -1
    assert bench.run_count["d"] == 3 and not program.outcomes


class _NoisyProgram:
    """Each invocation runs what it is asked for: runs of `mean_us` times 1 -+ `noise` in turn, taking
    `start_s` plus `run_s` a run of wall time. It records the runs and the time limit of each invocation."""

    def __init__(self, mean_us, noise, start_s=1.0, run_s=0.01):
        self.mean_us, self.noise, self.start_s, self.run_s = mean_us, noise, start_s, run_s
        self.asked = []

    def run(self, dataset, *, params, timeout, options=(), timing_runs=None, check=None):
        self.asked.append((timing_runs, timeout))
        times = tuple(self.mean_us * (1 + self.noise * (-1) ** k) for k in range(timing_runs))
        return RunResult(None, "", self.start_s + self.run_s * timing_runs, times)

    def run_in_turn(self, dataset, configurations, *, timeout, timing_runs, options=(), check=None):
        ran = self.run(dataset, params=configurations[0], timeout=timeout, timing_runs=timing_runs)
        return RunResult(None, "", ran.wall_s + self.run_s * timing_runs, ran.times_us,
                         alternate_times_us=(ran.times_us,))


def _measure_three(program, **options):
    bench = Bench(program, runs=5, timeout=600.0, log=lambda _: None, **options)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    found = [bench.measure(dataset, {T1: k}, key=k) for k in range(3)]
    return bench, [len(m.times_us) for m in found]


def test_a_noisy_dataset_gets_more_runs_per_invocation_and_a_quiet_one_keeps_runs():
    # 0.5% noise: two means settle a comparison (their difference known to 0.5%) from 9 runs each
    noisy = _NoisyProgram(50.0, 0.005)
    bench, runs = _measure_three(noisy, max_runs=40, max_time=1.0)
    assert runs[0] == 5 and all(9 <= n <= 12 for n in runs[1:]), runs
    assert bench.invocations == 3  # more runs in each invocation, never more invocations
    assert [n for n, _ in noisy.asked] == [n + 1 for n in runs]  # and a warm-up each
    quiet = _NoisyProgram(50.0, 0.001)
    assert _measure_three(quiet, max_runs=40, max_time=1.0)[1] == [5, 5, 5]
    # 5% noise would need hundreds: --max-runs caps the runs, and so does --max-time at the fastest runtime
    # (10 ms: 0.1 s holds 10 runs)
    assert _measure_three(_NoisyProgram(50.0, 0.05), max_runs=40, max_time=1.0)[1] == [5, 40, 40]
    assert _measure_three(_NoisyProgram(50.0, 0.05), max_runs=8, max_time=1.0)[1] == [5, 8, 8]
    assert _measure_three(_NoisyProgram(10_000.0, 0.05), max_runs=40, max_time=0.1)[1] == [5, 10, 10]
    assert _measure_three(_NoisyProgram(1e6, 0.05), max_runs=40, max_time=1.0)[1] == [5, 5, 5]  # a 1 s run


@pytest.mark.parametrize("cv", [0.001, 0.003, 0.005, 0.01])
def test_at_the_decisive_run_count_equal_means_are_a_tie_and_a_difference_of_half_the_margin_is_significant(cv):
    n = decisive_runs(cv, 2, 1000)
    assert _settles(cv, n) and (n == 2 or not _settles(cv, n - 1))  # and no fewer would


def _settles(cv, n):
    """Whether two measurements of n runs at noise cv (runs -+cv about their mean) are practically equal at equal
    means and significantly different at means EQUIVALENCE / 2 apart, and more."""
    def runs(mean):  # a standard deviation of cv of 1000 whatever the mean
        spread = [(-1) ** k for k in range(n)]
        centred = [x - sum(spread) / n for x in spread]
        scale = 1000.0 * cv / statistics.stdev(centred)
        return Measurement(tuple(mean + scale * x for x in centred))
    base = runs(1000.0)
    apart = [runs(1000.0 * (1 + EQUIVALENCE * f)) for f in (0.5 + 1e-6, 0.8, 2.0)]
    return practically_equal(base, runs(1000.0)) and all(
        welch_pvalue(base.times_us, other.times_us) < ALPHA for other in apart)


def test_max_time_0_keeps_runs():
    noisy = _NoisyProgram(50.0, 0.05)
    bench, runs = _measure_three(noisy, max_runs=40, max_time=0.0)
    assert runs == [5, 5, 5] and bench.invocations == 3
    assert _measure_three(_NoisyProgram(50.0, 0.05), max_runs=40)[1] == [5, 5, 5]  # Bench's default: off


def test_a_comparison_in_turn_asks_for_the_adaptive_run_count():
    dataset = Dataset("d", "main", InlineValues("1"), False)
    asked = {}
    for max_time in (1.0, 0.0):
        program = _NoisyProgram(50.0, 0.05)
        bench = Bench(program, runs=5, timeout=600.0, log=lambda _: None, max_runs=40, max_time=max_time)
        assert compare(bench, dataset, Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b")) == 0  # the same runs
        asked[max_time] = [n - 1 for n, _ in program.asked]
    # a 5, b 40, then 40 pairs in turn, whose ratios are all 1: a tie
    assert asked[1.0] == [5, 40, 40]
    assert asked[0.0] == [5, 5, 5]


def test_the_timeout_scales_with_the_runs_asked_for():
    noisy = _NoisyProgram(50.0, 0.05, start_s=1.0, run_s=0.01)
    _measure_three(noisy, max_runs=40, max_time=1.0)
    (first, unknown), (second, longer), (third, shorter) = noisy.asked
    assert (first, second, third) == (6, 41, 41) and unknown == 600.0  # nothing measured yet: --timeout
    # 10x what the fastest invocation would take for as many runs: the first (1.06 s for 6) scaled to 41 runs,
    # then the second (1.41 s for 41)
    assert longer == pytest.approx(10 * 1.06 * 41 / 6 + 1.0) and shorter == pytest.approx(10 * 1.41 + 1.0)
    # the timeout never shrinks below 10x a measured invocation for fewer runs than it had (start-up dominates)
    bench = Bench(_NoisyProgram(50.0, 0.0), runs=5, timeout=600.0, log=lambda _: None, max_runs=40, max_time=1.0)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    bench._learn_wall("d", 2.0, 30)
    assert bench._timeout("d", 6) == pytest.approx(10 * 2.0 + 1.0)
    assert bench._timeout("d", 60) == pytest.approx(10 * 2.0 * 2 + 1.0)
    assert bench._timeout("d", 6000) == 600.0  # --timeout bounds it
    bench.measure(dataset, None)
    assert bench.program.asked[0][1] == pytest.approx(10 * 2.0 + 1.0)


def test_a_comparison_stopped_part_way_is_decided_by_the_datasets_compared(monkeypatch):
    """LUD tuned on 256, 1,024 and 2,048 under --stop-after: its values ran 13x slower than the defaults on the
    first two, the time ran out before the third, and they were written (64 then ran at 19x Futhark's time)."""
    from incflat.tuner import measure

    def run(verdicts, **kw):
        answers = iter(verdicts)

        def fake(bench, dataset, first, second, in_turn):
            v = next(answers)
            if v is None:
                raise measure.Stopped("the time limit of 25 s (--stop-after) is reached")
            return v
        monkeypatch.setattr(measure, "compare", fake)
        return measure.dominates(None, [(k, None, None) for k in range(3)], in_turn=True, **kw)

    assert run([-1, -1, None], until_stopped=True)
    assert not run([-1, 1, None], until_stopped=True)
    assert not run([None], until_stopped=True)
    with pytest.raises(measure.Stopped):
        run([-1, None])
