"""`incflat bench` and `incflat benchcmp` (bench.py): futhark bench's methodology, JSON and comparison."""

import json
import signal
import subprocess
import sys

import pytest

from conftest import ROOT, needs_device
from incflat.cli import main
from incflat import bench
from incflat.tuner import stats

PROGRAM = """\
-- ==
-- "named" input { [1i32, 2i32, 3i32] } output { 12i32 }
-- input { [4i32] } output { 8i32 }
-- "wrong" input { [1i32] } output { 5i32 }
-- "skipped" slow input { [1i32] } output { 2i32 }
-- "never" nobench input { [1i32] } output { 2i32 }
-- random input { [1000]i32 }
entry main [n] (xs: [n]i32): i32 = reduce (+) 0 (map (* 2) xs)
"""


def test_convergence_follows_the_relative_standard_error():
    assert stats.converged([100.0] * 5)
    assert not stats.converged([100.0, 200.0, 50.0, 300.0])
    assert not stats.converged([100.0, 100.0])  # too few to know


def test_measure_runs_at_least_the_minimum_runs_and_time():
    ticks = iter(range(0, 10 ** 6, 1))
    clock = lambda: next(ticks) * 0.01  # noqa: E731 - 10 ms between clock reads
    runs = []
    times = bench.measure(lambda: runs.append(1) or 100.0, bench.Options(runs=3, convergence=False), clock)
    assert len(runs) == len(times) + 1, "one warm-up run, not reported"
    assert len(times) >= 3


def test_measure_goes_on_until_convergence_within_its_limit():
    values = iter([500.0] + [100.0, 900.0] * 3 + [500.0] * 400)  # a warm-up, six noisy runs, then steady
    ticks = iter(range(10 ** 6))
    times = bench.measure(lambda: next(values), bench.Options(runs=2, convergence_max_seconds=60),
                          lambda: next(ticks) * 0.1)
    assert len(times) > 100 and stats.converged(times) and not stats.converged(times[:-1])
    limited = iter([500.0] + [100.0, 900.0] * 300)
    ticks = iter(range(10 ** 6))
    times = bench.measure(lambda: next(limited), bench.Options(runs=2, convergence_max_seconds=3),
                          lambda: next(ticks) * 0.1)
    assert len(times) < 40, "the time limit ends a phase that does not converge"


@needs_device
def test_bench_writes_futhark_bench_json(tmp_path, capsys):
    fut = tmp_path / "prog.fut"
    fut.write_text(PROGRAM)
    out = tmp_path / "results.json"
    code = main(["bench", "-r", "2", "--no-convergence-phase", "--exclude-case", "slow", "--json", str(out),
                 str(fut)])
    assert code == 1, "a dataset with a wrong result fails the command"
    results = json.loads(out.read_text())
    datasets = results[str(fut)]["datasets"]
    assert set(datasets) == {"named", '#1 ("[4i32]")', "wrong", "[1000]i32"}
    assert len(datasets["named"]["runtimes"]) >= 2 and all(t > 0 for t in datasets["named"]["runtimes"])
    assert datasets["wrong"].startswith("wrong result")
    printed = capsys.readouterr().out
    assert "named:" in printed and "μs (95% CI: [" in printed


def test_benchcmp_tells_a_speedup_from_noise(tmp_path, capsys):
    a = {"p.fut": {"datasets": {"fast": {"runtimes": [100, 101, 99, 100, 102]},
                                "same": {"runtimes": [50, 52, 48, 51, 49]},
                                "gone": {"runtimes": [1, 2]}}}}
    b = {"p.fut": {"datasets": {"fast": {"runtimes": [50, 51, 49, 50, 50]},
                                "same": {"runtimes": [51, 49, 52, 48, 50]}}}}
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert main(["benchcmp", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("p.fut fast:   2.01x (significant") for line in lines)
    assert any(line.startswith("p.fut same:") and "within the noise" in line for line in lines)
    assert any("gone: not compared (only in one file)" in line for line in lines)


@pytest.mark.parametrize("text", ["not json", '{"p.fut": 3}'])
def test_benchcmp_refuses_what_is_not_bench_json(tmp_path, capsys, text):
    (tmp_path / "a.json").write_text(text)
    assert main(["benchcmp", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 1
    assert "futhark bench JSON" in capsys.readouterr().err


GOOD_RESULTS = {"p.fut": {"datasets": {"d": {"runtimes": [100, 101, 99]}}}}


@pytest.mark.parametrize("datasets, wrong", [
    ({"d": {"runtimes": []}}, "dataset 'd': \"runtimes\" is [], not a list of one runtime or more"),
    ({"d": {"runtimes": "fast"}}, "dataset 'd': \"runtimes\" is \"fast\", not a list"),
    ({"d": {"runtimes": [None, 2]}}, "dataset 'd': \"runtimes\"[0] is null, not a runtime (a number of microseconds"),
    ({"d": {"runtimes": [5, "a"]}}, "dataset 'd': \"runtimes\"[1] is \"a\", not a runtime"),
    ({"d": {"runtimes": [True, 2]}}, "dataset 'd': \"runtimes\"[0] is true, not a runtime"),
    ({"d": {"runtimes": [5, -2]}}, "dataset 'd': \"runtimes\"[1] is -2, not a runtime (a number of microseconds "
                                   "from 0 to 1e+15)"),
    ({"d": {"runtimes": [1e400, 2]}}, "dataset 'd': \"runtimes\"[0] is Infinity, not a runtime"),
    ({"d": {"runtimes": [1e308, 1e308]}}, "dataset 'd': \"runtimes\"[0] is 1e+308, not a runtime"),
    ({"d": {"runtimes": [float("nan"), 2]}}, "dataset 'd': \"runtimes\"[0] is NaN, not a runtime"),
    ({"d": {"bytes": {}}}, "dataset 'd': no \"runtimes\""),
    ({"d": None}, "dataset 'd': the result is null, not an object with \"runtimes\" or a failure's message"),
    (7, "program 'p.fut': \"datasets\" is 7, not an object of datasets"),
])
def test_benchcmp_names_the_file_and_entry_of_a_malformed_result(tmp_path, capsys, datasets, wrong):
    """Every malformed result is one line naming the file and the program, dataset and key: never a traceback,
    never a `nan` speedup (issue 53)."""
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(GOOD_RESULTS))
    bad.write_text(json.dumps({"p.fut": {"datasets": datasets}}))
    for a, b in ((good, bad), (bad, good)):
        assert main(["benchcmp", str(a), str(b)]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"incflat: error: {bad}: program 'p.fut'") and wrong in captured.err
        assert len(captured.err.splitlines()) == 1


def test_benchcmp_of_a_single_run_or_of_no_time_compares_what_it_can(tmp_path, capsys):
    """A run faster than a µs is 0 in the JSON (futhark bench writes whole µs): zeros are runtimes, but a mean of
    0 µs gives no ratio (it was a ZeroDivisionError), and one run no p-value (it printed `p = nan`)."""
    (tmp_path / "a.json").write_text(json.dumps(GOOD_RESULTS | {"q.fut": {"datasets": {"e": {"runtimes": [0, 1]}}},
                                                                "z.fut": {"datasets": {"f": {"runtimes": [3]}}}}))
    (tmp_path / "b.json").write_text(json.dumps({"p.fut": {"datasets": {"d": {"runtimes": [50]}}},
                                                 "q.fut": {"datasets": {"e": {"runtimes": [1, 0]}}},
                                                 "z.fut": {"datasets": {"f": {"runtimes": [0, 0]}}}}))
    assert main(["benchcmp", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "p.fut d:   2.00x (not tested: one run in a file)",
        "q.fut e:   1.00x (within the noise, p = 1)",
        "z.fut f: not compared (a mean runtime of 0 µs in one file)",
        "geometric mean speedup: 1.41x over 2 datasets"]


def test_bench_json_never_overwrites_what_is_not_bench_results(tmp_path, capsys):
    fut = tmp_path / "prog.fut"
    fut.write_text(PROGRAM)
    notes = tmp_path / "notes.json"
    notes.write_text("my notes\n")
    for target, why in ((notes, "the file exists and is not futhark bench JSON; refusing to overwrite it"),
                        (tmp_path, "is a directory"),
                        (tmp_path / "missing" / "r.json", f"no such directory: {tmp_path / 'missing'}")):
        assert main(["bench", "--json", str(target), str(fut)]) == 2
        assert capsys.readouterr().err == f"incflat: error: --json {target}: {why}\n"
    assert notes.read_text() == "my notes\n"


def test_bench_refuses_no_runs_and_an_entry_point_no_case_is_for(tmp_path, capsys):
    fut = tmp_path / "prog.fut"
    fut.write_text(PROGRAM)
    assert main(["bench", "-r", "0", str(fut)]) == 2
    assert capsys.readouterr().err == "incflat: error: --runs 0: must be at least 1\n"
    assert main(["bench", "-e", "nosuch", str(fut)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        "incflat: error: -e nosuch: no case for entry point 'nosuch' (the cases are for main)\n")


RANDOM_ONLY = """\
-- ==
-- random input { [30][10]f32 }
-- "tiny" notune input { [[1f32, 2f32]] } output { [6f32] }
entry main [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> reduce (+) 0 (map (* 2) xs)) xss
"""


@needs_device
def test_autotune_tunes_on_random_input_and_says_why_when_nothing_is_left(tmp_path, capsys):
    fut = tmp_path / "rand.fut"
    fut.write_text(RANDOM_ONLY)
    assert main(["autotune", "-r", "1", "--no-moderate", str(fut)]) == 0
    assert "[30][10]f32" in capsys.readouterr().out
    assert main(["autotune", "-r", "1", "--force", "--no-moderate", "-e", "nosuch", str(fut)]) == 1
    assert "no case for entry point 'nosuch'" in capsys.readouterr().err
    assert main(["autotune", "-r", "1", "--force", "--no-moderate", "--exclude-case", "random", str(fut)]) == 1
    err = capsys.readouterr().err
    assert "1 held out (notune)" in err and "tagged random (excluded)" in err


@needs_device
def test_incflat_test_excludes_tagged_cases(tmp_path, capsys):
    fut = tmp_path / "t.fut"
    fut.write_text(PROGRAM)
    assert main(["test", "--exclude-case", "slow", "--exclude-case", "nobench", str(fut)]) == 1  # "wrong" fails
    assert capsys.readouterr().out.splitlines()[-1] == "3 passed, 1 failed"
    assert main(["test", str(fut)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "5 passed, 1 failed"


def test_dataset_writes_seeded_values_within_bounds(capsys):
    import io

    import futhark_data
    import numpy as np
    assert main(["dataset", "-g", "[3][4]f32", "-g", "[50]i32", "-g", "bool", "--f32-bounds=-2:-1",
                 "--i32-bounds=5:9", "-s", "3"]) == 0
    first = capsys.readouterr().out
    values = list(futhark_data.load(io.BytesIO(first.encode())))
    assert values[0].shape == (3, 4) and values[0].dtype == np.float32 and (-2 <= values[0]).all()
    assert (values[0] <= -1).all() and set(values[1].tolist()) <= set(range(5, 10)) and values[2] in (True, False)
    assert main(["dataset", "-g", "[3][4]f32", "-g", "[50]i32", "-g", "bool", "--f32-bounds=-2:-1",
                 "--i32-bounds=5:9", "-s", "3"]) == 0
    assert capsys.readouterr().out == first, "the same seed gives the same values"


def test_dataset_ends_quietly_when_its_reader_stops():
    """`incflat dataset ... | head`: no error message, and the status of a process that SIGPIPE ended."""
    proc = subprocess.Popen([sys.executable, "-m", "incflat", "dataset", "-g", "[3000000]i32"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    assert proc.wait(timeout=120) == 128 + signal.SIGPIPE
    assert proc.stderr.read() == b""


@pytest.mark.parametrize("argv, message", [
    (["-g", "[5]q32"], "-g: '[5]q32' is not a type"),
    (["-g", "i32", "--i32-bounds=9:0"], "--i32-bounds=9:0: expected LOW:HIGH"),
    (["-g", "f32", "--f32-bounds=a:b"], "--f32-bounds=a:b"),
    ([], "nothing to generate"),
    (["-g", "[1000000000000000]f64"], "-g: '[1000000000000000]f64' is too large to make: 8000000000000000 bytes, "
                                      "more than this machine's memory ("),
    # issue 53: each was a ValueError traceback
    (["-g", "[100000000000000000000000]i32"], "-g: '[100000000000000000000000]i32' is too large to make: "
                                              "400000000000000000000000 bytes"),
    (["-g", "[3000000000][3000000000]f32"], "-g: '[3000000000][3000000000]f32' is too large to make: "
                                            "36000000000000000000 bytes"),
    (["-g", "[0][100000000000000000000000]i32"], "-g: '[0][100000000000000000000000]i32' cannot be made: "),
    (["-g", "[-5]i32"], "-g: '[-5]i32': '-5' is not a size (a whole number, 0 or more)"),
    (["-g", "i8", "--i8-bounds", "0:1000"], "--i8-bounds=0:1000: 1000 is outside the range of i8, -128 to 127"),
    (["-g", "u8", "--u8-bounds=-1:3"], "--u8-bounds=-1:3: -1 is outside the range of u8, 0 to 255"),
    (["-g", "f32", "--f32-bounds=0:1e39"], "--f32-bounds=0:1e39: 1e39 is outside the range of f32, -3.4028235e+38 "
                                           "to 3.4028235e+38"),
    (["-g", "f64", "--f64-bounds=-1e308:1e308"], "--f64-bounds=-1e308:1e308: HIGH - LOW is larger than the "
                                                 "greatest f64"),
    (["-g", "f32", "--f32-bounds=nan:1"], "--f32-bounds=nan:1: expected LOW:HIGH with LOW <= HIGH (f32 numbers)"),
    (["-g", "i32", "--i32-bounds=1_0:20"], "--i32-bounds=1_0:20: expected LOW:HIGH"),  # (int() takes it)
    (["-g", "i32", "--i32-bounds=1:2:3"], "--i32-bounds=1:2:3: expected LOW:HIGH"),
])
def test_dataset_refuses_bad_options_in_one_line(capsys, argv, message):
    assert main(["dataset", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and len(captured.err.splitlines()) == 1 and captured.out == ""


def test_a_negative_seed_is_refused_as_a_bad_integer_is(capsys):
    """`dataset -s` and `autotune --seed` take an integer 0 or more (numpy's generators take no other): argparse's
    error, as for `-s x` (a traceback from numpy before, for autotune)."""
    from incflat.tuner.command import main as tuner_main
    for run, argv in ((main, ["dataset", "-g", "i32", "-s", "-1"]),
                      (tuner_main, ["prog.fut", "--seed", "-88852369679"])):
        with pytest.raises(SystemExit) as exit_:
            run(argv)
        assert exit_.value.code == 2 and "invalid seed: '-" in capsys.readouterr().err


def test_dataset_bounds_reach_the_ends_of_their_type(capsys):
    assert main(["dataset", "-g", "[100]f32", "--f32-bounds=-3.4028235e+38:3.4028235e+38", "-g", "[100]i8",
                 "--i8-bounds=-128:127"]) == 0
    assert "inf" not in capsys.readouterr().out


RANDOM_THAT_CANNOT_BE_MADE = """\
-- ==
-- random input { [100000000000000]i32 }
--   random input { 1i32 [-5]i32 }
-- random input { [10]i32 }
entry main [n] (xs: [n]i32): i32 = reduce (+) 0 xs
"""


@needs_device
def test_bench_fails_a_random_input_that_cannot_be_made_located(tmp_path, capsys):
    """issue 53: "internal compiler error: MemoryError" and "takes 1 arguments, but 2 were given"."""
    fut = tmp_path / "prog.fut"
    fut.write_text(RANDOM_THAT_CANNOT_BE_MADE)
    assert main(["bench", "-r", "1", "--no-convergence-phase", str(fut)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{fut} [100000000000000]i32: failed: {fut}:2:19: random input: "
                               "'[100000000000000]i32' is too large to make: 400000000000000 bytes")
    assert lines[1] == (f"{fut} 1i32 [-5]i32: failed: {fut}:3:26: random input: '[-5]i32': '-5' is not a size "
                        "(a whole number, 0 or more)")
    assert lines[2].startswith(f"{fut} [10]i32: ") and "μs" in lines[2]


def test_an_input_file_that_is_a_directory_is_said_so(tmp_path, capsys):
    """`input @ data` naming a folder: the message says so, without Python's `[Errno 21]`."""
    (tmp_path / "data").mkdir()
    fut = tmp_path / "p.fut"
    fut.write_text("-- ==\n-- input @ data\nentry main (x: i32) = x\n")
    assert main(["test", "--interpreter", str(fut)]) == 1
    out = capsys.readouterr().out
    assert f"cannot read the input: {tmp_path / 'data'}: is a directory" in out and "Errno" not in out
