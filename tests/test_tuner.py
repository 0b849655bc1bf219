"""Tests of the autotuner, run against tests/fake_program.py in place of a compiled program."""

from __future__ import annotations

import gzip
import importlib.util
from importlib.machinery import SourceFileLoader
import io
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from incflat.tuner.autotune import _in_turn, autotune, main
from incflat.tuner.result import DatasetReport
from incflat.datasets import (
    AutoOutput,
    Dataset,
    ExpectedError,
    GeneratedInput,
    InlineValues,
    ValuesFile,
    parse_test_cases,
    read_test_cases,
    select_datasets,
)
from incflat.tuner.stats import welch_pvalue
from incflat.ir.errors import ToolError
from incflat.tuner.measure import (ALPHA, EQUIVALENCE, MIN_INVOCATION_DOF, Bench, Candidate, Limits, Measurement,
                                  compare, decisive_runs, difference_pvalue, paired_verdict, practically_equal)
from incflat.tuner.probe import Probe, probe
from incflat.ir.runtime.tuning import (NEVER, TUNED_BEGIN, TUNED_END, Param, default_threshold_line,
                                            no_fallback_error, parse_comparisons, parse_default_threshold,
                                            parse_device, parse_listing)
from incflat.tuner.program import Program, RunResult
from incflat.tuner.simple import tune_simple
from incflat.tuner.tree import Probed, build_forest, path, pins, tuning_order
from incflat.files import SLEEP_BEFORE_RENAME_ENV
from conftest import earlier_tuning

REPO = Path(__file__).resolve().parent.parent


def threshold(name: str, default, ancestors: tuple) -> Param:
    return Param(name, default=default, ancestors=ancestors)
FIXTURES = REPO / "tests" / "data" / "tuner"
FAKE = REPO / "tests" / "fake_program.py"
T1, T2, T3, T4 = "main.suff_outer_par_0", "main.suff_intra_par_1", "main.suff_outer_par_2", "main.suff_intra_par_3"


def _load_fake():
    spec = importlib.util.spec_from_file_location("fake_program", FAKE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fake = _load_fake()


def parse(text: str, name: str = "prog.fut") -> list:
    return parse_test_cases(text, Path(name))


# --- test blocks ---


def test_fixture_block_names_inputs_and_tags():
    cases = read_test_cases(FIXTURES / "matmul.fut")
    by_name = {c.name: c for c in cases}
    assert list(by_name) == [
        "rows", '#1 ("1024i64 64i64 1024i64")', "data/dots.in", "small-dots", '#4 ("16i64 64i64 64i64")',
        "data/wide.in", '#6 ("256i64 16i64 256i64")', "held-rows", "held-dots",
    ]
    assert by_name["rows"].input == InlineValues(" 65536i64 64i64 64i64 ")
    assert " ".join(by_name['#1 ("1024i64 64i64 1024i64")'].input.text.split()) == "1024i64 64i64 1024i64"
    assert by_name["data/dots.in"].input == ValuesFile("data/dots.in", FIXTURES / "data" / "dots.in")
    assert by_name["small-dots"].expected == InlineValues(" 352i64 ")
    assert by_name["data/wide.in"].run_tags == {"compiled"}
    assert [c.name for c in cases if c.held_out] == ["held-rows", "held-dots"]
    assert all(c.entries == ("main",) for c in cases)
    assert by_name["rows"].line == 5 and by_name["data/dots.in"].line == 8


def test_several_blocks_entries_tags_and_expectations():
    cases = parse(
        "-- first block\n"
        "-- ==\n"
        "-- tags { slow gpu-only }\n"
        "-- entry: sum prod\n"
        '-- "train-1" compiled notune input @ data/x.in.gz\n'
        "-- output @ data/x.out\n"
        "-- input { [1, 2, 3] } auto output\n"
        "-- input { [0] } error: division by\n"
        "-- nobench input {\n"
        "--   [1,2]\n"
        "--   [3,4] }\n"
        "-- output { 10 }\n"
        "-- structure gpu { SegMap 1 SegRed 2 }\n"
        "def sum (xs: []i32) = i32.sum xs\n"
        "\n"
        "-- Another block, with its own numbering.\n"
        "-- ==\n"
        "-- input { 5 }\n"
        "-- random input { [10][20]f32 }\n"
        "-- disable input { 6 }\n"
        "-- script input { mk 10i64 }\n"
        "def main (x: i32) = x\n"
    )
    assert [(c.name, c.entries) for c in cases] == [
        ("train-1", ("sum", "prod")),
        ('#1 ("[1, 2, 3]")', ("sum", "prod")),
        ('#2 ("[0]")', ("sum", "prod")),
        ('#3 ("[1,2] [3,4]")', ("sum", "prod")),
        ('#0 ("5")', ("main",)),
        ("[10][20]f32", ("main",)),
        ('#2 ("6")', ("main",)),
        ("mk 10i64", ("main",)),
    ]
    first, auto, error, multi, plain, random, disabled, script = cases
    assert first.run_tags == {"compiled", "notune"} and first.held_out
    assert first.block_tags == {"slow", "gpu-only"} and plain.block_tags == frozenset()
    assert first.input.written == "data/x.in.gz" and first.expected.written == "data/x.out"
    assert isinstance(auto.expected, AutoOutput)
    assert error.expected == ExpectedError("division by")
    assert multi.run_tags == {"nobench"} and multi.expected == InlineValues(" 10 ")
    assert random.input == GeneratedInput("random", " [10][20]f32 ")
    assert disabled.run_tags == {"disable"} and script.input.kind == "script"


def test_long_inline_values_are_truncated_in_the_name():
    (case,) = parse("-- ==\n-- input { " + " ".join(f"{i}i64" for i in range(40)) + " }\n")
    assert case.name.startswith('#0 ("0i64 1i64') and case.name.endswith('...")')
    assert len(case.name) == len('#0 ("') + 50 + len('...")')


def test_blocks_without_cases_and_ordinary_comments_are_ignored():
    assert parse("-- just a comment\n-- with == inside\ndef main = 1\n") == []
    assert parse("-- ==\n-- error: type error\n") == []  # a compile-time failure test
    assert parse("-- ==\n-- property: prop_a\n") == []


@pytest.mark.parametrize(
    "block, line, message",
    [
        ("-- ==\n-- input { 1 2\n-- output { 3 }\n", 2, "'{' after 'input' is never closed"),
        ("-- ==\n-- input { 1 }\n-- notune { 2 }\n", 3, "expected 'input' after 'notune'"),
        ("-- ==\n-- input { 1 }\n--\n-- input 2\n", 4, "expected '{' or '@' after 'input'"),
        ("-- ==\n-- input @\n", 2, "expected a file name after 'input @'"),
        ("-- ==\n-- input { 1 } auto { 2 }\n", 2, "expected 'output' after 'auto'"),
        ('-- ==\n-- "unterminated input { 1 }\n', 2, "unterminated case name"),
        ("-- ==\n-- entry:\n-- input { 1 }\n", 2, "'entry:' needs at least one entry point name"),
        ("-- ==\n-- input { 1 }\n-- structure { A 1 }\n-- input { 2 }\n", 4, "unexpected 'input'"),
        ('-- ==\n-- "a" input { 1 }\n-- "a" input { 2 }\n', 3, "multiple datasets with name 'a'"),
    ],
)
def test_bad_blocks_name_the_file_and_line(block, line, message):
    with pytest.raises(ToolError) as error:
        parse("def f = 1\n" + block, "dir/prog.fut")
    assert str(error.value).startswith(f"dir/prog.fut:{line + 1}: ")
    assert message in str(error.value)


def test_missing_input_file(tmp_path):
    for folder, hint in ((tmp_path / "mine", False), (tmp_path / "futhark_examples", True)):
        folder.mkdir()
        (folder / "prog.fut").write_text("-- ==\n-- input { 1 }\n-- input @ data/big.in\n")
        with pytest.raises(ToolError) as error:
            select_datasets(read_test_cases(folder / "prog.fut"))
        assert f"prog.fut:3: input file {folder / 'data' / 'big.in'} does not exist" in str(error.value)
        assert ("generate it first (see the comment at the top of the .fut file)" in str(error.value)) == hint


def test_selection_of_tuning_and_held_out_datasets():
    cases = parse(
        "-- ==\n-- entry: a b\n-- input { 1 }\n-- notune input { 2 }\n-- input { 3 } error: x\n"
        "-- disable input { 4 }\n-- random input { i32 }\n-- script input { f 1 }\n-- no_opencl input { 5 }\n"
    )
    selection = select_datasets(cases)
    assert [d.name for d in selection.tuning] == ["a:#0 (\"1\")", "b:#0 (\"1\")", "a:i32", "b:i32"]
    assert [(d.name, d.entry) for d in selection.held_out] == [("a:#1 (\"2\")", "a"), ("b:#1 (\"2\")", "b")]
    assert [reason for _, reason in selection.skipped] == [
        "expects an error", "disabled", "script input is not supported by the tuner", "tagged no_opencl"
    ]
    assert [d.entry for d in select_datasets(cases, entry="b").tuning] == ["b", "b"]
    random_file = selection.tuning[2].input.path
    assert random_file.is_file() and selection.tuning[3].input.path == random_file, "made once, the same values"


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
    found = _in_turn(bench, [d, far], {"d": before, "far": steady}, {"d": after, "far": Measurement((50.0, 50.5))},
                     {T1: 5, size: 128}, 32768, {T1})
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


def test_incflat_autotune_passes_max_time_on(tmp_path, monkeypatch):
    from incflat import cli, tuner
    seen = []
    monkeypatch.setattr(tuner, "main", lambda argv, **keywords: seen.append(argv) or 0)
    monkeypatch.setattr(cli, "compiled_text", lambda fut, verify=None: b"# compiled\n")  # nothing to compile
    fut = tmp_path / "m.fut"
    fut.write_text("def main (x: i32) = x\n")
    for given, passed in (([], "1.0"), (["--max-time", "0"], "0.0"), (["--max-time", ".00001"], "0.00001")):
        assert cli.main(["autotune", str(fut), *given]) == 0
        argv = seen.pop()
        assert argv[argv.index("--max-time") + 1] == passed


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


# --- end to end, on the fake program ---


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(FIXTURES, tmp_path / "w")
    program = tmp_path / "w" / "matmul"
    shutil.copy(FAKE, program)
    os.chmod(program, 0o754)
    return tmp_path / "w" / "matmul.fut", program


def _sizes(dataset: Dataset) -> tuple[int, ...]:
    text = dataset.input.text if isinstance(dataset.input, InlineValues) else dataset.input.path.read_text()
    return tuple(int(t.removesuffix("i64")) for t in text.split())


def _leaf_run(program: Path, stdin: str, *args: str) -> int:
    """The version the fake program ran (it says so on stderr)."""
    done = subprocess.run([sys.executable, str(program), *args], input=stdin, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return int(re.search(r"^fake: ran V([0-9]+)$", done.stderr, re.MULTILINE).group(1))


def test_held_out_and_mf_measurements_get_the_runs_their_noise_asks_for_like_the_tuned_ones(tmp_path, monkeypatch):
    """No probe learns a held-out dataset's noise, and MF has a bench of its own: their first measurements
    make --runs runs, then one more invocation brings them to the count the tuned measurements ask for."""
    fut, program = _workspace(tmp_path)
    monkeypatch.setenv("FAKE_PROGRAM_NOISE", "0.05")  # 5%: more runs than --max-runs 8 would bring the RSE to 1%
    result = autotune(fut, program, runs=2, max_runs=8, max_time=1.0, moderate=program, out=io.StringIO())
    held = [d for d in result.datasets if d.held_out]
    assert held
    for report in result.datasets:
        assert len(report.moderate.times_us) == 8, report.name
        if report.held_out:
            assert len(report.before.times_us) == len(report.after.times_us) == 8, report.name
        else:  # (and those compared while the invocation noise was unknown, another invocation's runs)
            assert len(report.before.invocations[0]) == len(report.after.invocations[0]) == 8, report.name


def test_tuning_sends_each_dataset_to_its_cheapest_version_and_writes_back(tmp_path):
    fut, program = _workspace(tmp_path)
    out = io.StringIO()
    result = autotune(fut, program, runs=2, out=out)  # two runs, no spread: every difference is significant
    selection = select_datasets(read_test_cases(fut))

    def cheapest(d):
        return min(range(1, 6), key=lambda leaf: fake.runtime_us(leaf, *_sizes(d)))

    leaves = {d.name: cheapest(d) for d in selection.tuning}
    assert sorted(set(leaves.values())) == [1, 2, 3, 4, 5]  # every version is best for some dataset
    for d in selection.tuning:
        assert fake.choose_leaf(result.assignment, _sizes(d), log=False) == leaves[d.name], d.name
    # Each value is the upper end of its range (the smallest ePar among the datasets that preferred true),
    # unless the program's default (the device's 32768) lies in it: every dataset's result agrees with it.
    assert result.assignment == {T1: 16384, T2: 256, T3: fake.DEVICE_DEFAULT_THRESHOLD, T4: 256}
    # Runs per tuning dataset: the -L probe, then one per code version, the untuned run being one of them (its
    # path's experiment), and one paired invocation that settles the first significant difference while the
    # dataset's invocation noise is not known (and teaches it: another invocation of each side); the rest came
    # from the cache. A held-out dataset: untuned and tuned, and where the two did not differ apart (the same
    # version, and no noise here), the two in turn in one invocation (the report's figure then).
    for report in result.datasets:
        same = report.held_out and report.before.mean_us == report.after.mean_us
        assert bool(report.in_turn) == same, report.name
        assert report.runs == (2 + same if report.held_out else 1 + 5 + 1), report.name
        # the pairs measured configurations again: the probe and a configuration per code version
        assert report.configurations == (2 if report.held_out else 1 + 5), report.name
        # (a second round, which changes nothing, is answered from the cache: 2 ends of each threshold that the
        # tuned values send the dataset through, one for V1 up to all four for V4 and V5; and the version the
        # untuned run took once)
        guards = min(leaves.get(report.name, 0), 4)
        assert report.cache_hits == (0 if report.held_out else 3 + 1 + 2 * guards + 1), report.name
        assert report.after.runtime_us <= report.before.runtime_us
    text = out.getvalue()
    assert "held-dots" in text and "speedup" in text and f"program runs: {result.runs}" in text

    lines = (fut.parent / "matmul.fut.tuning").read_text().splitlines()
    assert lines[0].startswith("-- tuned by incflat (tree) on Fake GPU (Fake OpenCL), ")
    assert lines[1:] == [f"{name}={result.assignment[name]}" for name in sorted(result.assignment)]
    assert os.stat(program).st_mode & 0o777 == 0o754
    baked = _baked(program)
    assert baked["TUNED_DEFAULTS"] == result.assignment
    assert baked["TUNING_PROVENANCE"]["device"] == "Fake GPU (Fake OpenCL)"
    assert baked["TUNING_PROVENANCE"]["datasets"] == [d.name for d in selection.tuning]
    assert baked["TUNING_PROVENANCE"]["strategy"] == "tree" and baked["TUNING_PROVENANCE"]["tool"] == "incflat"

    # The rewritten program uses the tuned values with no options; --tuning and --param still override them.
    for d in selection.tuning + selection.held_out:
        stdin = " ".join(map(str, _sizes(d)))
        assert _leaf_run(program, stdin) == fake.choose_leaf(result.assignment, _sizes(d), False)
        assert _leaf_run(program, stdin, "--param", f"{T1}=1") == 1
    override = tmp_path / "override.tuning"
    override.write_text(f"-- all false\n{T1}={NEVER}\n{T2}={NEVER}\n{T3}={NEVER}\n{T4}={NEVER}\n")
    assert _leaf_run(program, "65536 64 64", "--tuning", str(override)) == 5


def test_a_version_with_a_wrong_result_fails_its_experiment_and_is_never_chosen(tmp_path, monkeypatch, capsys):
    """Results are checked against a dataset's `output` (futhark test's comparison) at each configuration's
    first measurement: a difference fails the experiment, so the tuner takes a version whose results are right;
    the untuned program's wrong result on a tuning dataset is an error, as its crash is."""
    fut, program = _workspace(tmp_path)
    small = next(d for d in select_datasets(read_test_cases(fut)).tuning if d.name == "small-dots")
    best = min(range(1, 6), key=lambda leaf: fake.runtime_us(leaf, *_sizes(small)))
    assert best != 5  # (the untuned program runs V5 on small-dots)
    monkeypatch.setenv("FAKE_PROGRAM_WRONG_LEAF", str(best))
    out = io.StringIO()
    result = autotune(fut, program, runs=2, out=out)
    assert fake.choose_leaf(result.assignment, _sizes(small), log=False) != best
    assert "small-dots [" in out.getvalue()
    assert "failed: wrong result: value #0: expected 352i64, got 353i64" in out.getvalue()
    report = next(r for r in result.datasets if r.name == "small-dots")
    assert report.after.ok and report.after.runtime_us <= report.before.runtime_us
    monkeypatch.setenv("FAKE_PROGRAM_WRONG_LEAF", "5")
    fut, program = _workspace(tmp_path / "again")
    assert main([str(fut), str(program), "--runs", "1", "--no-moderate"]) == 1
    assert capsys.readouterr().err == ("Error: the untuned program fails on dataset small-dots: wrong result: "
                                       "value #0: expected 352i64, got 353i64\n")


def test_an_expected_output_that_cannot_be_read_is_an_error_naming_it(tmp_path):
    fut, program = _workspace(tmp_path)
    fut.write_text("-- ==\n-- \"one\" input { 64i64 256i64 32i64 } output @ nosuch.out\n")
    with pytest.raises(ToolError, match="^one: cannot read its expected output nosuch.out: No such file"):
        autotune(fut, program, runs=1, out=io.StringIO())
    (fut.parent / "nosuch.out").write_text("352i64 ]")
    with pytest.raises(ToolError, match="^one: its expected output is not Futhark values: "):
        autotune(fut, program, runs=1, out=io.StringIO())


@pytest.mark.parametrize("strategy", ["monotonic", "exhaustive", "active", "binary", "instrumented", "random", "cma",
                                      "bandit"])
def test_every_strategy_tunes_and_writes_back(tmp_path, strategy):
    """The exact strategies send every tuning dataset to its cheapest version, as the tree does; the others
    (a local search, the fake program's missing -P records, samplers within a budget of 60 program runs)
    write a tuning whose summed runtime on the tuning datasets (their objective) is no more than untuned."""
    fut, program = _workspace(tmp_path)
    limits = Limits(budget=60) if strategy in ("random", "cma", "bandit") else None
    result = autotune(fut, program, runs=2, out=io.StringIO(), strategy=strategy, seed=3, limits=limits)
    selection = select_datasets(read_test_cases(fut))
    for d in selection.tuning if strategy in ("monotonic", "exhaustive", "active") else ():
        leaves = {leaf: fake.runtime_us(leaf, *_sizes(d)) for leaf in range(1, 6)}
        assert fake.choose_leaf(result.assignment, _sizes(d), log=False) == min(leaves, key=leaves.get), d.name
    tuning = [report for report in result.datasets if not report.held_out]
    assert sum(r.after.runtime_us for r in tuning) <= sum(r.before.runtime_us for r in tuning)
    assert (fut.parent / "matmul.fut.tuning").read_text().startswith(f"-- tuned by incflat ({strategy}) on ")
    assert _baked(program)["TUNED_DEFAULTS"] == result.assignment


def _baked(program: Path) -> dict:
    """The tuned-defaults block of the (fake) compiled program, from the program loaded as a module."""
    spec = importlib.util.spec_from_loader("baked_program", SourceFileLoader("baked_program", str(program)))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"TUNED_DEFAULTS": module.TUNED_DEFAULTS, "TUNING_PROVENANCE": module.TUNING_PROVENANCE}


def test_failing_versions_are_recorded_not_fatal(tmp_path, monkeypatch):
    fut, program = _workspace(tmp_path)
    fut.write_text("-- ==\n-- input { 64i64 256i64 32i64 }\n-- input { 4096i64 1024i64 16i64 }\n")
    monkeypatch.setenv("FAKE_PROGRAM_FAIL_LEAF", "4")  # the untuned runs take V3 and V5
    out = io.StringIO()
    result = autotune(fut, program, runs=1, out=out)
    assert "failed: exit status 1: Error: version V4 ran out of memory" in out.getvalue()
    for sizes in ((64, 256, 32), (4096, 1024, 16)):  # V4 "fails": neither takes it
        assert fake.choose_leaf(result.assignment, sizes, log=False) != 4


def test_a_workgroup_version_that_cannot_run_is_a_failed_experiment_not_its_fallbacks_time(tmp_path, monkeypatch):
    """V2's workgroup never fits the device: where the thresholds choose it, the program falls back to the next
    version. The tuner's experiments run with --no-fallback, so V2's is recorded as failed (not as the
    fallback's time under V2's name), and each dataset goes to its cheapest version that can run; the untuned
    and held-out runs fall back as the program does."""
    fut, program = _workspace(tmp_path)
    monkeypatch.setenv("FAKE_PROGRAM_NO_FIT", "2")
    out = io.StringIO()
    result = autotune(fut, program, runs=2, out=out)
    assert "[main.suff_intra_par_1=1]: failed: exit status 1: Error: the version guarded by main.suff_intra_par_1 " \
        "cannot run at 32 on Fake GPU (V2's workgroup does not fit the fake device), and --no-fallback was given" in (
            out.getvalue())
    assert "main.suff_intra_par_1: its version cannot run on" in out.getvalue()
    selection = select_datasets(read_test_cases(fut))
    runnable = (1, 3, 4, 5)
    favoured = [d for d in selection.tuning if min(range(1, 6), key=lambda leaf: fake.runtime_us(leaf, *_sizes(d))) == 2]
    assert favoured, "some dataset would take V2 if it could run"
    for d in selection.tuning:
        cheapest = min(runnable, key=lambda leaf: fake.runtime_us(leaf, *_sizes(d)))
        assert fake.choose_leaf(result.assignment, _sizes(d), log=False, no_fit={2: -1}) == cheapest, d.name
    assert all(report.after is not None and report.after.ok and report.before.ok for report in result.datasets)


@pytest.mark.parametrize("strategy", ["tree", "exhaustive"])
def test_where_a_workgroup_version_cannot_run_its_guard_is_free_and_the_fallback_serves(tmp_path, monkeypatch,
                                                                                      strategy):
    """V2 is the fastest version on both datasets, but its workgroup fits only up to 256 threads: "wide" (p =
    1024) cannot run it, and there the program falls back to the next version. So wide says nothing about
    V2's threshold: a value that sends "narrow" (p = 256) to V2 serves both, wide falling back to V3, its best
    version that runs. (Had V2's failed experiment been a preference, wide's [1025, never] and narrow's
    [1, 256] would conflict, and one of them would lose its best version.)"""
    fut, program = _workspace(tmp_path)
    fut.write_text('-- ==\n-- "wide" input { 1024i64 64i64 1024i64 }\n-- "narrow" input { 256i64 16i64 256i64 }\n')
    monkeypatch.setenv("FAKE_PROGRAM_NO_FIT", "2<=256")
    out = io.StringIO()
    result = autotune(fut, program, runs=1, out=out, strategy=strategy)
    no_fit = {2: 256}
    assert fake.choose_leaf(result.assignment, (1024, 64, 1024), log=False, no_fit=no_fit) == 3
    assert fake.choose_leaf(result.assignment, (256, 16, 256), log=False, no_fit=no_fit) == 2
    wide = next(d for d in result.datasets if d.name == "wide")
    assert wide.version.names == ("V3",)  # the report names the version that runs, not the one that cannot


def test_an_untuned_run_that_fell_back_is_the_experiment_of_the_path_it_took(tmp_path, monkeypatch):
    """The untuned program takes V2 on "fell" (p = 32768 reaches the default 32768), whose workgroup never fits,
    and falls back to V3, the version the tuned values choose there. Which versions cannot run is learnt by the
    search, after the untuned run: once it is known, that run is the experiment of V3's path, one measurement
    with the tuned program's, not a figure of its own set against it (on an H200, where three tuners shared the
    host, nn_batch's untuned and tuned runs of one version measured 1.84 and 3.77 s: a "0.49x")."""
    fut, program = _workspace(tmp_path)
    fut.write_text('-- ==\n-- "fell" input { 1i64 64i64 32768i64 }\n')
    monkeypatch.setenv("FAKE_PROGRAM_NO_FIT", "2")
    result = autotune(fut, program, runs=2, out=io.StringIO())
    (fell,) = result.datasets
    assert fake.choose_leaf(result.assignment, (1, 64, 32768), log=False, no_fit={2: -1}) == 3
    untuned = dict.fromkeys(fake.THRESHOLDS, fake.DEVICE_DEFAULT_THRESHOLD)
    assert fake.choose_leaf(untuned, (1, 64, 32768), log=False, no_fit={2: -1}) == 3
    assert fell.before is fell.after and fell.speedup == 1.0 and not fell.significant


def test_command_line_errors_are_one_line(tmp_path, monkeypatch, capsys):
    fut, program = _workspace(tmp_path)
    monkeypatch.setenv("FAKE_PROGRAM_FAIL_LEAF", "5")  # the untuned program takes V5 for small-dots
    assert main([str(fut), str(program), "--runs", "1", "--no-moderate"]) == 1
    assert capsys.readouterr().err == (
        "Error: the untuned program fails on dataset small-dots: exit status 1: Error: version V5 ran out of memory\n"
    )
    monkeypatch.delenv("FAKE_PROGRAM_FAIL_LEAF")
    fut.write_text("-- ==\n-- input { 1 \n")
    assert main([str(fut), str(program), "--no-moderate"]) == 1
    assert capsys.readouterr().err == f"Error: {fut}:2: bad test block: '{{' after 'input' is never closed\n"
    shutil.copy(FIXTURES / "matmul.fut", fut)
    program_text = program.read_text()
    program.write_text(program_text.replace(TUNED_BEGIN, "# no block"))
    assert main([str(fut), str(program), "--no-moderate"]) == 1  # found before any run
    assert capsys.readouterr().err == (f"Error: {program}: the program has 0 '{TUNED_BEGIN}' and 1 '{TUNED_END}' "
                                       "lines, not one block\n")
    program.write_text(program_text)
    (tmp_path / "w" / "data" / "dots.in").unlink()
    assert main([str(fut), str(program), "--no-moderate"]) == 1
    assert "input file" in capsys.readouterr().err
    assert not (fut.parent / "matmul.fut.tuning").exists()


# --- interrupts ---

# Several held-out datasets, so that the measurements after write-back take a while.
INTERRUPT_FUT = "-- ==\n-- input { 65536i64 64i64 64i64 }\n-- input { 64i64 256i64 32i64 }\n" + "".join(
    f"-- notune input {{ {n}i64 64i64 64i64 }}\n" for n in (16, 32, 64, 128)
)
OLD_TUNING = earlier_tuning({T1: 5})


# SIGTERM (and a second Ctrl-C) aborts, writing nothing more; the first Ctrl-C stops the measuring, and the best
# values found so far are written. Either way both files are as they were, or both complete.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize(
    "moment, trigger, program_sleep, rename_sleep, after_sigterm",
    [
        ("at start-up", None, "0.05", "0", None),
        ("while measuring", f"[{T3}=1]", "0.05", "0", "interrupted; nothing was written"),
        ("during write-back", "writing ", "0", "1", "are complete"),  # signals wait until both are in place
        ("after write-back", "tuned:", "0.05", "0", "are complete"),
    ],
)
def test_interrupts_leave_both_files_untouched_or_both_complete(
    tmp_path, sig, moment, trigger, program_sleep, rename_sleep, after_sigterm
):
    fut = tmp_path / "prog.fut"
    fut.write_text(INTERRUPT_FUT)
    program = tmp_path / "prog"
    shutil.copy(FAKE, program)
    tuning = tmp_path / "prog.fut.tuning"
    tuning.write_text(OLD_TUNING)
    program_before = program.read_bytes()
    env = os.environ | {"FAKE_PROGRAM_SLEEP": program_sleep, SLEEP_BEFORE_RENAME_ENV: rename_sleep}
    tuner = subprocess.Popen(
        [sys.executable, "-m", "tuner", str(fut), str(program), "--runs", "1", "--no-moderate"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    if trigger is None:
        time.sleep(0.1)
    else:
        for line in tuner.stdout:
            if trigger in line:
                break
        else:
            pytest.fail(f"the tuner finished before {trigger!r}")
    tuner.send_signal(sig)
    stdout, stderr = tuner.communicate(timeout=30)

    program_now = program.read_bytes()
    untouched = program_now == program_before and tuning.read_text() == OLD_TUNING
    complete = _complete_program(program) and _complete_tuning(tuning.read_text())
    assert untouched or complete
    if trigger is not None:
        assert tuner.returncode == 128 + sig, stderr
    if sig == signal.SIGTERM and after_sigterm is not None:
        assert stderr.startswith("interrupted; ") and after_sigterm in stderr, stderr
        assert untouched == (after_sigterm == "interrupted; nothing was written")
    if sig == signal.SIGINT and trigger is not None:
        assert stderr == f"interrupted; stopped measuring, and {tuning} and {program} are complete\n", stderr
        assert complete and "stopped early: interrupted" in stdout
    if sig == signal.SIGINT and moment == "while measuring":  # T4 was tuned; the others not yet: their defaults
        default = fake.DEVICE_DEFAULT_THRESHOLD
        assert f"{T1}={default}" in tuning.read_text() and f"{T3}={default}" in tuning.read_text()
        assert "not tuned yet" in stdout
    assert {p.name for p in tmp_path.iterdir()} - {"prog.fut.tuning.db"} == {"prog", "prog.fut", "prog.fut.tuning"}


def _complete_program(program: Path) -> bool:
    text = program.read_text()
    return set(_baked(program)["TUNED_DEFAULTS"]) == {T1, T2, T3, T4} and text.endswith("    main()\n")


def _complete_tuning(text: str) -> bool:
    lines = text.splitlines()
    return lines[0].startswith("-- tuned by incflat") and [line.split("=")[0] for line in lines[1:]] == [
        T2, T4, T1, T3
    ]


def test_tune_sizes_leaves_alone_the_sizes_of_kernels_it_cannot_see_run(tmp_path):
    """The fake program writes no -P records: no kernel is seen to run, so its size parameter is left at the
    default (and said so), and the thresholds are tuned as without --tune-sizes."""
    fut, program = _workspace(tmp_path)
    result = autotune(fut, program, runs=2, out=io.StringIO(), sizes=True)
    assert result.assignment == {T1: 16384, T2: 256, T3: fake.DEVICE_DEFAULT_THRESHOLD, T4: 256}
    assert any(n.endswith("left alone: main.segmap_tblock_size_4") for n in result.notes)
    assert "(tree + sizes)" in (fut.parent / "matmul.fut.tuning").read_text().splitlines()[0]


def test_a_sampling_strategy_with_tune_sizes_searches_them_jointly(tmp_path):
    """random + --tune-sizes: the sizes of kernels seen to run become dimensions of the search (two profiled
    runs per tuning dataset find them; the fake program reports none), and no tune_sizes step follows."""
    fut, program = _workspace(tmp_path)
    out = io.StringIO()
    result = autotune(fut, program, runs=2, out=out, sizes=True, strategy="random", seed=3)
    assert set(result.assignment) <= {T1, T2, T3, T4}
    assert "\nsizes:" not in out.getvalue()
    assert "(random + sizes)" in (fut.parent / "matmul.fut.tuning").read_text().splitlines()[0]


def test_a_worse_search_leaves_a_program_tuned_before_as_it_was(tmp_path):
    """The tree tunes the fake program in place; binary search from never then ends slower than those baked
    values (the fake's runs have no spread, so the difference is significant): both files stay as they were."""
    fut, program = _workspace(tmp_path)
    autotune(fut, program, runs=2, out=io.StringIO())
    tuned_program, tuned_file = program.read_bytes(), (fut.parent / "matmul.fut.tuning").read_bytes()
    result = autotune(fut, program, runs=2, out=io.StringIO(), strategy="binary")
    assert result.assignment == {}
    assert any("significantly slower" in n and "kept the defaults" in n for n in result.notes)
    assert any(n.endswith("were left as they were") for n in result.notes)
    assert program.read_bytes() == tuned_program and (fut.parent / "matmul.fut.tuning").read_bytes() == tuned_file


# --- the report: MF, intervals, versions, wall time; --plot ---

REPORT_FUT = ('-- ==\n-- "rows" input { 65536i64 64i64 64i64 }\n-- "dots" input { 64i64 256i64 32i64 }\n'
              '-- "held" notune input { 16i64 64i64 64i64 }\n')


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


def test_the_report_shows_mf_untuned_and_tuned_with_intervals_the_version_and_wall_time_and_plots(tmp_path):
    fut, program = _workspace(tmp_path)
    fut.write_text(REPORT_FUT)
    moderate = tmp_path / "prog-mf"  # a stand-in for the program compiled with moderate flattening
    shutil.copy(FAKE, moderate)
    out, plots = io.StringIO(), tmp_path / "plots"
    result = autotune(fut, program, runs=2, out=out, moderate=moderate, plot_dir=plots)
    text = out.getvalue()
    header = next(line for line in text.splitlines() if line.startswith("dataset "))
    assert header.split() == ["dataset", "role", "MF", "untuned", "IF", "tuned", "IF", "speedup", "runs", "configs",
                              "cached", "stored", "wall", "s"]
    interval = r"[\d,.]+ ± [\d,.]+"
    for report in result.datasets:
        row = next(line for line in text.splitlines() if line.startswith(report.name + " "))
        assert re.match(rf"{report.name} +(tuning|held-out) +{interval} +{interval} +{interval} +", row), row
        assert len(row) <= 120, row
        assert report.moderate is not None and report.moderate.ok  # the same program here: the untuned times
        assert report.moderate.times_us == report.before.invocations[0]
        assert report.wall_s > 0 and row.endswith(f"{report.wall_s:.1f}")
    assert f"{result.wall_s:.1f} s in program runs" in text
    versions = text.split("versions chosen")[1].splitlines()
    for report in result.datasets:
        line = next(line for line in versions if line.strip().startswith(report.name + " "))
        if report.held_out:
            assert report.version is None and "held out: not probed" in line
        else:
            sizes = {"rows": (65536, 64, 64), "dots": (64, 256, 32)}[report.name]
            leaf = fake.choose_leaf(result.assignment, sizes, log=False)
            # the chain: the guards before the leaf's are false, its own is true (V5: all four are false)
            outcomes = [f"{t}:no" for t in (T1, T2, T3, T4)[:leaf - 1]] + ([f"{(T1, T2, T3, T4)[leaf - 1]}:yes"]
                                                                          if leaf < 5 else [])
            assert report.version.name == f"V{leaf}" and report.version.outcomes == " ".join(outcomes)
            assert line.split() == [report.name, f"V{leaf}", *outcomes], line
    # the charts: one per tuned threshold and the best so far, PNG files
    tuned = [t for t in (T1, T2, T3, T4) if t in result.assignment]
    expected = [f"threshold-{t}.png" for t in tuned] + ["best-so-far.png"]
    assert sorted(p.name for p in plots.iterdir()) == sorted(expected)
    assert sorted(result.plots) == sorted(plots.iterdir())
    assert all(p.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") for p in plots.iterdir())
    from incflat.tuner.plot import plot_path_problem
    assert plot_path_problem(plots) is None  # its own charts: replaced by the next run
    (plots / "threshold-mine.png").write_bytes(b"\x89PNG\r\n\x1a\nsomeone else's")
    assert "refusing to overwrite it" in plot_path_problem(plots)


def test_a_failing_moderate_program_is_reported_not_fatal(tmp_path, capsys):
    fut, program = _workspace(tmp_path)
    fut.write_text(REPORT_FUT)
    broken = tmp_path / "broken-mf"
    broken.write_text("import sys\nprint('Error: no such entry point', file=sys.stderr)\nsys.exit(1)\n")
    out = io.StringIO()
    result = autotune(fut, program, runs=1, out=out, moderate=broken, store=None)
    assert result.assignment and all(not r.moderate.ok for r in result.datasets)
    assert "failed: MF: exit status 1: Error: no such entry point" in out.getvalue()
    # through the command line: a .fut that does not compile fails the MF column (the fake is the IF program)
    fut.write_text(REPORT_FUT + "\nentry main (x: i64) = x +\n")
    assert main([str(fut), str(program), "--runs", "1", "--no-store"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert f"failed: MF: cannot compile {fut} with --flattening=moderate: " in captured.out


def test_plot_options_are_checked_before_anything_runs(tmp_path, capsys, monkeypatch):
    fut, program = _workspace(tmp_path)
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("precious\n")
    with pytest.raises(SystemExit) as exit:
        main([str(fut), str(program), "--plot", str(not_a_folder)])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == (f"incflat autotune: error: --plot {not_a_folder}: exists and is not a "
                                            "directory")
    from incflat.cli import main as incflat_main
    assert incflat_main(["autotune", str(fut), "--plot", str(not_a_folder)]) == 2
    assert capsys.readouterr().err == f"incflat: error: --plot {not_a_folder}: exists and is not a directory\n"
    assert not_a_folder.read_text() == "precious\n"
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(SystemExit):
        main([str(fut), str(program), "--plot", str(tmp_path / "plots")])
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"incflat autotune: error: --plot {tmp_path / 'plots'}: needs matplotlib, which is not installed: "
        "pip install 'incflat[report]'")
    assert not (tmp_path / "plots").exists()


def test_the_reports_speedup_is_same_inside_the_datasets_invocation_noise():
    before, after = Measurement((104.0, 104.5, 103.5, 104.0)), Measurement((100.0, 100.5, 99.5, 100.0))
    assert DatasetReport("d", False, before, after, runs=2, cache_hits=0).significant
    assert not DatasetReport("d", False, before, after, runs=2, cache_hits=0, invocation_noise=0.1 ** 2).significant


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
