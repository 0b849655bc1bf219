"""`incflat test` and `incflat run`: cases, expected outputs and errors, tolerances, random inputs, skipping what
the backend cannot compile yet, error messages, and the compile cache."""

import gzip
import io
import time
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from conftest import needs_device

from incflat.cli import main as incflat
from incflat.ir.errors import Unsupported
from incflat.ir.source import Loc
from incflat import compiled, harness
from incflat.datasets import random_values
from incflat.ir.errors import ToolError
from incflat.datasets import compare_values

SUM = "entry main [n] (xs: [n]i32): i32 = reduce (+) 0 xs\n"
TWO_ENTRIES = ("entry sum [n] (xs: [n]i32): i32 = reduce (+) 0 xs\n"
               "entry double [n] (xs: [n]i32): [n]i32 = map (* 2) xs\n")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def write(tmp_path: pathlib.Path, block: str, source: str = SUM, name: str = "prog.fut") -> pathlib.Path:
    path = tmp_path / name
    path.write_text("".join(f"-- {line}\n" if line else "--\n" for line in block.strip().splitlines()) + source)
    return path


def summary(out: str) -> str:
    lines = [line for line in out.splitlines() if " passed, " in line]
    assert lines, out
    return lines[-1]


MODES = [pytest.param(["--interpreter"], id="interpreter"),
         pytest.param([], id="compiled", marks=needs_device)]


# ---------------------------------------------------------------------------------------------------------
# incflat test


def test_cases_values_are_read_one_case_at_a_time(tmp_path, capsys, monkeypatch):
    """As futhark test does: a program with many large random cases holds one case's values at a time (all of
    micro/transpose.fut's, read first, took 23 GB)."""
    path = write(tmp_path, """
==
random input { [5]i32 }
random input { [6]i32 }
input { [1, 2] } output { 3 }
""")
    events = []
    real_inputs, real_run = harness._inputs, harness.Interpreter.run
    monkeypatch.setattr(harness, "_inputs", lambda case, *rest: events.append("read") or real_inputs(case, *rest))
    monkeypatch.setattr(harness.Interpreter, "run",
                        lambda self, entry, inputs: events.append("run") or real_run(self, entry, inputs))
    assert incflat(["test", "--interpreter", str(path)]) == 0
    assert summary(capsys.readouterr().out) == "3 passed, 0 failed"
    assert events == ["read", "run"] * 3


@pytest.mark.parametrize("mode", MODES)
def test_passing_and_failing_cases_are_counted_and_explained(tmp_path, capsys, mode):
    path = write(tmp_path, """
==
input { [1, 2, 3] } output { 6 }
input { empty([0]i32) } output { 0 }
"wrong" input { [1, 2, 3] } output { 7 }
""")
    assert incflat(["test", *mode, str(path)]) == 1
    out = capsys.readouterr().out
    assert summary(out) == "2 passed, 1 failed"
    assert "entry main, case wrong" in out and "expected 7i32, got 6i32" in out


@pytest.mark.parametrize("mode", MODES)
def test_all_passing_exits_zero(tmp_path, capsys, mode):
    path = write(tmp_path, "==\ninput { [1, 2] } output { 3 }\ninput { [5] }\nrandom input { [100]i32 } auto output")
    assert incflat(["test", *mode, str(path)]) == 0
    assert summary(capsys.readouterr().out) == "3 passed, 0 failed"


@pytest.mark.parametrize("mode", MODES)
def test_expected_errors(tmp_path, capsys, mode):
    path = write(tmp_path, """
==
"ok" input { [1] } error: argument
"matches" input { [1, 2] [3] } error: [Ss]ize
"succeeds" input { [1, 2] [3, 4] } error: .
"other" input { [1, 2] [3] } error: nothing like this
""", "entry main [n] (xs: [n]i32) (ys: [n]i32): [n]i32 = map2 (+) xs ys\n")
    assert incflat(["test", *mode, str(path)]) == 1
    out = capsys.readouterr().out
    assert summary(out) == "2 passed, 2 failed"
    assert "case succeeds" in out and "but the program succeeded" in out
    assert "case other" in out and "expected an error matching /nothing like this/" in out


@pytest.mark.parametrize("mode", MODES)
def test_entries_and_tags(tmp_path, capsys, mode):
    path = tmp_path / "prog.fut"
    path.write_text("""-- ==
-- entry: sum
-- input { [1, 2] } output { 3 }
-- disable input { [1] } output { 99 }
-- compiled input { [4] } output { 4 }
-- nobench notune input { [5] } output { 5 }
-- notest input { [6] } output { 99 }
-- no_opencl input { [7] } output { 99 }
-- no_python input { [8] } output { 8 }

-- ==
-- entry: double
-- input { [1, 2] } output { [2, 4] }
""" + TWO_ENTRIES)
    assert incflat(["test", *mode, str(path)]) == 0
    interpreted = bool(mode)  # the case tagged compiled is skipped under the interpreter
    # disable, notest and no_opencl (this backend) are left out, as futhark test leaves them out
    assert summary(capsys.readouterr().out) == f"{5 - interpreted} passed, 0 failed, {3 + interpreted} skipped"


def test_values_files(tmp_path, capsys):
    (tmp_path / "in.txt").write_text("[1, 2, 3]")
    with gzip.open(tmp_path / "out.txt.gz", "wt") as f:
        f.write("6")
    path = write(tmp_path, "==\ninput @ in.txt output @ out.txt.gz\ninput @ missing.in output { 1 }")
    assert incflat(["test", "--interpreter", str(path)]) == 1
    out = capsys.readouterr().out
    assert summary(out) == "1 passed, 1 failed"
    assert "cannot read the input" in out and "missing.in" in out


@pytest.mark.parametrize("mode", MODES)
def test_a_random_input_that_cannot_be_made_fails_its_case_located(tmp_path, capsys, mode):
    """issue 53: "internal compiler error: MemoryError", and "takes 1 arguments, but 2 were given": each item
    is located in the block (line and column), its case fails and the others run."""
    path = write(tmp_path, """
==
random input { [100000000000000]i32 }
  random input { [-5]i32 }
random input { [5 i32 }
random input { [10]i32 }
""")
    assert incflat(["test", *mode, str(path)]) == 1
    out = capsys.readouterr().out
    assert summary(out) == "1 passed, 3 failed"
    assert (f"{path}:2:19: random input: '[100000000000000]i32' is too large to make: 400000000000000 bytes, more "
            "than this machine's memory (") in out
    assert f"{path}:3:21: random input: '[-5]i32': '-5' is not a size (a whole number, 0 or more)" in out
    assert f"{path}:4:19: random input: '[5' is not a type such as [10]f32" in out


@pytest.mark.parametrize("mode", MODES)
def test_a_program_without_entry_points_says_so(tmp_path, capsys, mode):
    """issue 53: "unknown entry point 'main'; this program has " and nothing."""
    path = write(tmp_path, "==\ninput { 1 } output { 2 }", "def f (x: i32) = x + 1\n")
    assert incflat(["test", *mode, str(path)]) == 1
    out = capsys.readouterr().out
    assert ("unknown entry point 'main'; this program has no entry points" in out
            or "No entry point named 'main'; the program has none." in out), out


@pytest.mark.parametrize("mode", [pytest.param(["--interpreter"], id="interpreter"), pytest.param([], id="compiled")])
def test_a_block_that_expects_a_compile_time_error(tmp_path, capsys, mode):
    """As futhark test: a block whose `error:` follows `==` passes when the compiler refuses the program with a
    message the regex matches, and fails when the message is another or the program compiles."""
    refused = write(tmp_path, "==\nerror: Unknown name", "entry main (x: i32): i32 = x + y\n", "refused.fut")
    other = write(tmp_path, "==\nerror: type.*mismatch", "entry main (x: i32): i32 = x + y\n", "other.fut")
    compiles = write(tmp_path, "==\nerror: consumed", SUM, "compiles.fut")
    assert incflat(["test", "-v", *mode, str(refused)]) == 0
    out = capsys.readouterr().out
    assert summary(out) == "1 passed, 0 failed" and "rejected at compile time as expected" in out
    assert incflat(["test", *mode, str(other), str(compiles)]) == 1
    out = capsys.readouterr().out
    assert summary(out) == "0 passed, 2 failed"
    assert "other.fut:2: expected an error matching /type.*mismatch/ at compile time, got:" in out
    assert 'Unknown name "y"' in out
    assert "compiles.fut:2: expected an error matching /consumed/ at compile time, but the program compiled" in out
    summary_ = harness.run_tests([refused, other, compiles], interpreted=bool(mode), out=io.StringIO())
    assert {p.name: kind for p, (kind, _) in summary_.files.items()} == {
        "refused.fut": harness.PASSED, "other.fut": harness.OTHER_MESSAGE, "compiles.fut": harness.ACCEPTED}


def test_an_error_in_an_imported_file_shows_that_files_line(tmp_path, capsys):
    (tmp_path / "lib.fut").write_text("def helper (x: i32): i32 =\n  x + nothing\n")
    path = write(tmp_path, "==\ninput { 1 } output { 1 }", 'import "lib"\nentry main (x: i32): i32 = helper x\n')
    assert incflat(["test", "--interpreter", str(path)]) == 1
    out = capsys.readouterr().out
    assert "lib.fut:2:7: error:" in out and "  x + nothing" in out, out


def test_front_end_errors_are_located(tmp_path, capsys):
    path = write(tmp_path, "==\ninput { 1 } output { 2 }", "entry main (x: i32): i32 = x + y\n")
    assert incflat(["test", "--interpreter", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:3:32: error:" in out and "x + y" in out and "^" in out
    assert summary(out) == "0 passed, 1 failed"


def test_bad_test_block_and_missing_file(tmp_path, capsys):
    path = write(tmp_path, "==\ninput { 1 } outptu { 2 }", "entry main (x: i32): i32 = x\n")
    assert incflat(["test", "--interpreter", str(path), str(tmp_path / "nope.fut"), "/dev/null"]) == 1
    out = capsys.readouterr().out
    assert "bad test block" in out and "nope.fut: no such file" in out and "/dev/null: not a regular file" in out
    assert summary(out) == "0 passed, 3 failed"


def test_not_supported_yet_is_skipped_with_its_message(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, "==\ninput { [1] } output { 1 }\ninput { [2] } output { 2 }")

    def refuse(p, text=None, cache=None, verify=None):
        raise Unsupported("a reduce on a Tuesday", Loc(str(p), 5, 36))
    monkeypatch.setattr(harness, "compile_cached", refuse)
    assert incflat(["test", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: skipped: {path}:5:36: error: not supported yet: a reduce on a Tuesday" in out
    assert summary(out) == "0 passed, 0 failed, 2 skipped"


def test_a_crashing_compiler_is_a_failure_not_a_crash(tmp_path, capsys, monkeypatch):
    path = write(tmp_path, "==\ninput { [1] } output { 1 }")

    def crash(p, text=None, cache=None, verify=None):
        raise KeyError("oops")
    monkeypatch.setattr(harness, "compile_cached", crash)
    assert incflat(["test", str(path)]) == 1
    out = capsys.readouterr().out
    assert "KeyError" in out and summary(out) == "0 passed, 1 failed"


def test_a_folder_is_searched_for_programs(tmp_path, capsys):
    write(tmp_path, "==\ninput { [1] } output { 1 }", name="a.fut")
    write(tmp_path, "==\ninput { [2] } output { 2 }", name="b.fut")
    assert incflat(["test", "--interpreter", str(tmp_path)]) == 0
    assert summary(capsys.readouterr().out) == "2 passed, 0 failed"


# ---------------------------------------------------------------------------------------------------------
# Comparison and random inputs


def test_float_tolerance_is_futharks():
    f32 = np.float32
    assert compare_values([f32(1000.5)], [f32(1000)]) is None  # 0.05% of the magnitude
    assert compare_values([f32(1003)], [f32(1000)]) is not None  # 0.3%
    assert compare_values([f32(0.0015)], [f32(0)]) is None  # absolute 0.002 near zero
    assert compare_values([f32(0.003)], [f32(0)]) is not None
    # the tolerance is per value: small elements of an array of large ones are compared as leniently
    assert compare_values([np.array([1000, 1.5], f32)], [np.array([1000, 1], f32)]) is None
    assert compare_values([np.array([np.nan, np.inf], f32)], [np.array([np.nan, np.inf], f32)]) is None
    assert compare_values([np.array([-np.inf], f32)], [np.array([np.inf], f32)]) is not None
    assert compare_values([np.array([np.nan], f32)], [np.array([1], f32)]) is not None


def test_comparison_of_types_shapes_and_counts():
    assert "expected 2 values, got 1" in compare_values([np.int32(1)], [np.int32(1), np.int32(2)])
    assert "type i64" in compare_values([np.int32(1)], [np.int64(1)])
    assert "shape [3]" in compare_values([np.zeros(2, np.int32)], [np.zeros(3, np.int32)])
    expected = np.arange(100, dtype=np.int32) * (np.arange(100) != 42)
    message = compare_values([np.arange(100, dtype=np.int32)], [expected])
    assert "at [42]: expected 0i32, got 42i32" in message and "1 of 100 elements differ" in message
    assert len(message) < 1000  # long values are truncated


def test_random_inputs_follow_futhark_dataset():
    a, b, c, d, e = random_values("[10][20]f32 i64 [1000]u8 [7]bool 42i32")
    assert a.shape == (10, 20) and a.dtype == np.float32 and 0 <= a.min() and a.max() <= 1
    assert isinstance(b, np.int64)
    assert c.dtype == np.uint8 and c.min() < 20 and c.max() > 235  # the whole range of the type
    assert d.dtype == np.bool_ and d.shape == (7,)
    assert e == np.int32(42) and e.dtype == np.int32
    again = random_values("[10][20]f32 i64 [1000]u8 [7]bool 42i32")
    assert all(np.array_equal(x, y) for x, y in zip((a, b, c, d, e), again))  # deterministic
    assert random_values("[0][3]f64")[0].shape == (0, 3)
    with pytest.raises(ToolError):
        random_values("[3]f17")
    with pytest.raises(ToolError, match=r"^prog.fut:7:6: random input: '\[-1\]i32': '-1' is not a size"):
        random_values("[1]i32\n   [-1]i32", Loc("prog.fut", 6, 20))  # (the next line's text starts after its --)


# ---------------------------------------------------------------------------------------------------------
# incflat run and the cache


def run_cli(args, stdin: bytes = b""):
    return subprocess.run([sys.executable, "-m", "incflat", *args], input=stdin, capture_output=True,
                          timeout=300, check=False)


@needs_device
def test_run_compiles_once_and_forwards_options(tmp_path):
    path = write(tmp_path, "", TWO_ENTRIES)
    done = run_cli(["run", str(path), "-e", "double"], b"[1, 2, 3]")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == ["[2i32,", "4i32,", "6i32]"]
    cached = list((tmp_path / "cache" / "incflat").rglob("*.py"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    done = run_cli(["run", str(path), "-e", "sum", "-t", str(tmp_path / "times"), "-r", "3"], b"[1, 2, 3]")
    assert done.returncode == 0 and done.stdout.decode().strip() == "6i32"
    assert len((tmp_path / "times").read_text().split()) == 3
    assert cached[0].stat().st_mtime_ns == stamp  # from the cache
    done = run_cli(["run", str(path), "-e", "nope"], b"")
    assert done.returncode != 0 and "Error:" in done.stderr.decode()


def test_the_cache_key_follows_the_source_and_the_compiler(tmp_path, monkeypatch):
    path = tmp_path / "p.fut"
    key = compiled.cache_key(path, SUM)
    assert compiled.cache_key(path, SUM + "\n") != key
    monkeypatch.setattr(compiled, "compiler_hash", lambda: "a different compiler")
    assert compiled.cache_key(path, SUM) != key
    assert compiled.cache_dir() == tmp_path / "cache" / "incflat"


def test_compile_errors_are_located_without_a_traceback(tmp_path):
    path = write(tmp_path, "", "entry main (x: i32): i32 =\n  x + y\n")
    done = run_cli(["run", str(path)])
    err = done.stderr.decode()
    assert done.returncode != 0 and "Traceback" not in err
    lines = err.splitlines()
    assert lines[0].startswith(f"{path}:2:7: error: ") and lines[1:] == ["  x + y", "      ^"]


def test_run_with_the_interpreter_locates_run_time_errors(tmp_path):
    path = write(tmp_path, "", "entry main [n] (xs: [n]i32) (i: i64): i32 =\n  xs[i]\n")
    done = run_cli(["run", "--interpreter", str(path)], b"[1, 2, 3] 1i64")
    assert done.returncode == 0 and done.stdout.decode().strip() == "2i32"
    done = run_cli(["run", "--interpreter", str(path)], b"[1, 2, 3] 3i64")
    err = done.stderr.decode()
    assert done.returncode == 1 and "Traceback" not in err
    assert err.startswith(f"Error: {path}:2:") and "out of bounds" in err and "^" in err


FAKE_PROGRAM = '''
import os, signal, time
from types import SimpleNamespace


class Param(SimpleNamespace):
    @property
    def line(self):
        return f"{self.name} ({self.cls})"


PROGRAM = SimpleNamespace(params=[Param(name="main.suff_outer_par_0", cls="threshold(def, )"),
                                  Param(name="main.group", cls="thread_block_size")],
                          entry_points={"crash": None, "hang": None, "ok": None, "bad": None})


class ProgramError(Exception):
    pass


class _Library:
    def crash(self):
        os.kill(os.getpid(), signal.SIGKILL)

    def hang(self):
        time.sleep(60)

    def ok(self, x):
        return x + 1, x

    def bad(self):
        raise ProgramError("bad input")


def load(**options):
    return _Library()
'''


def test_a_compiled_program_that_crashes_or_hangs_fails_its_case(tmp_path):
    path = tmp_path / "fake.py"
    path.write_text(FAKE_PROGRAM)
    assert [p.name for p in compiled.program_params(path) if p.is_threshold] == ["main.suff_outer_par_0"]
    runner = harness.Compiled(path, timeout=20)
    assert runner.load() is None
    assert "crashed (killed by SIGKILL)" in runner.run("crash", []).error
    assert runner.run("ok", [np.int32(1)]).values == (np.int32(2), np.int32(1))  # a new worker
    assert runner.run("bad", []).error == "Error: bad input"
    assert "unknown entry point 'nope'" in runner.run("nope", []).error
    assert "no result after 1 s" in harness.Compiled(path, timeout=1).run("hang", []).error
    assert runner.run("ok", [np.int32(5)]).values[0] == 6


@pytest.mark.parametrize("expected", ["output { 0i64 }", "auto output"])
def test_the_interpreter_obeys_the_timeout(tmp_path, capsys, expected):
    """issue 53: `incflat test --interpreter --timeout 3` on a slow program was still running after 150 s."""
    path = write(tmp_path, f"==\ninput {{ 1000000000i64 }} {expected}",
                 "entry main (n: i64): i64 = loop acc = 0 for i < n do acc + i\n")
    started = time.monotonic()
    assert incflat(["test", "--interpreter", "--timeout", "1", str(path)]) == 1
    assert time.monotonic() - started < 30
    assert "no result after 1 s (the interpreter was stopped)" in capsys.readouterr().out


def test_an_interrupt_while_the_worker_stops_at_exit_is_quiet(tmp_path):
    """issue 53: SIGINT to `incflat test` as it exits: "Exception ignored in atexit callback ... KeyboardInterrupt"."""
    script = ("import os, signal, time\n"
              "from incflat import harness\n"
              "def stop(self):\n"
              "    os.kill(os.getpid(), signal.SIGINT)  # (Ctrl-C while the worker is being stopped)\n"
              "    time.sleep(0.2)\n"
              "harness._Worker.stop = stop\n"
              "harness._worker()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert (done.returncode, done.stderr.decode()) == (0, "")


@pytest.mark.parametrize("mode", MODES)
def test_division_by_zero_reads_the_same_interpreted_and_compiled(tmp_path, capsys, mode):
    """issue 53: `division by zero` compiled and `Division by zero.` interpreted: an error case passed one way."""
    path = write(tmp_path, "==\ninput { 0 }\nerror: division by zero",
                 "entry main (x: i32): i32 = 10 / x\n")
    assert incflat(["test", *mode, str(path)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("mode", [["--interpreter"], pytest.param([], marks=needs_device)], ids=["interpreter", "compiled"])
def test_run_refuses_zero_runs_either_way(tmp_path, mode):
    """issue 53: `incflat run --interpreter -r 0` printed a result where compiled programs refuse -r 0."""
    path = write(tmp_path, "", SUM)
    done = run_cli(["run", *mode, str(path), "-r", "0"], b"[1, 2, 3]")
    assert (done.returncode, done.stdout, done.stderr.decode()) == (
        1, b"", "Error: -r 0: the number of runs must be at least 1\n")


@pytest.mark.parametrize("mode", [pytest.param(["--interpreter"], id="interpreter"),
                                  pytest.param([], id="compiled", marks=needs_device)])
def test_script_inputs_call_the_programs_entry_points(tmp_path, capsys, mode):
    """`script input` (FutharkScript, Futhark's tests/script): entry point calls, let, tuples, $loaddata and
    $loadbytes give the input; an unsuffixed literal takes the parameter's type; a failing call or a malformed
    expression fails its case with the reason."""
    (tmp_path / "in.in").write_text("[1f32, 2f32]")
    source = ("entry mkdata (n: i64) : []i64 = iota n\n"
              "entry total (xs: []i64) : i64 = i64.sum xs\n"
              "entry sum2 (xs: []i64) (ys: []i64) : []i64 = map2 (+) xs ys\n"
              "entry scaled (k: f32) (xs: []f32) : []f32 = map (* k) xs\n"
              "entry count (bs: []u8) : []f32 = [f32.i64 (length bs)]\n")
    totals = write(tmp_path, """
==
entry: total
script input { mkdata 4i64 } output { 6i64 }
script input { let n = 3 in mkdata n } output { 3i64 }
script input { (sum2 (mkdata 2) (mkdata 2)) } output { 2i64 }
script input { nothere 1 }
script input { mkdata 3 + }
""", source, "totals.fut")
    scaled = write(tmp_path, """
==
entry: scaled
script input { (2f32, $loaddata "in.in") } output { [2f32, 4f32] }
script input { (1f32, count ($loadbytes "in.in")) } output { [12f32] }
""", source, "scaled.fut")
    assert incflat(["test", *mode, str(totals), str(scaled)]) == 1
    out = capsys.readouterr().out
    assert summary(out) == "5 passed, 2 failed", out
    assert "script input: unknown entry point 'nothere'; this program has " in out
    assert "script input: expected the end of the expression at column 11 of the expression, found '+" in out
