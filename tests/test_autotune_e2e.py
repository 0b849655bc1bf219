"""`incflat autotune` on a real compiled program: tuned values become the defaults, options still
override them, and an interrupt never leaves a half-written program or tuning file."""

import re
import signal
import subprocess
import sys
import time

import pytest

from incflat.codegen.cprogram import is_native_program

from conftest import ROOT, earlier_tuning, run_program
from incflat.ir.runtime.tuning import parse_listing

SOURCE = """-- A small matmul family for the tuner tests.
-- ==
-- "a" input { [[1f32, 2f32], [3f32, 4f32]] [[1f32, 0f32], [0f32, 1f32]] }
-- "b" input { [[1f32, 2f32, 3f32, 4f32]] [[1f32], [2f32], [3f32], [4f32]] } output { [[30f32]] }
-- "c" notune input { [[1f32], [2f32], [3f32]] [[1f32, 2f32, 3f32]] }

entry main [n][m][p] (xss: [n][m]f32) (yss: [m][p]f32): [n][p]f32 =
  map (\\xs -> map (\\ys -> reduce (+) 0 (map2 (*) xs ys)) (transpose yss)) xss
"""
INPUT = b"[[1f32, 2f32], [3f32, 4f32]] [[1f32, 0f32], [0f32, 1f32]]"


def tuned_defaults(program) -> dict:
    """The thresholds' defaults that the program's --print-params lists (the tuned values baked in)."""
    listing = run_program(program, b"", "--print-params").stdout.decode()
    return {p.name: p.default for p in parse_listing(listing) if p.is_threshold and p.default is not None}


def autotune(fut, *extra):
    return subprocess.run([sys.executable, "-m", "incflat", "autotune", str(fut), "-r", "2", *extra],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    d = tmp_path_factory.mktemp("tune")
    fut = d / "mm.fut"
    fut.write_text(SOURCE)
    proc = autotune(fut)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return fut, d / "mm", proc.stdout


def test_tuning_file_and_defaults_agree(tuned):
    fut, program, out = tuned
    lines = [l for l in (fut.parent / "mm.fut.tuning").read_text().splitlines() if not l.startswith("--")]
    from_file = {k: int(v) for k, v in (l.split("=") for l in lines)}
    assert from_file == tuned_defaults(program) and len(from_file) == 4
    assert "Tuned defaults: {" in run_program(program, INPUT, "-D").stderr.decode()  # (their provenance)
    for name in ("a", "b", "c"):  # MF (compiled by the tuner), untuned and tuned, each with its interval
        assert re.search(rf"^{name} +(tuning|held-out) +([\d,.]+ ± [\d,.]+ +){{3}}", out, re.M), out
    assert re.search(r"^dataset +role +MF +untuned IF +tuned IF +speedup +runs +configs +cached +stored +wall s$", out, re.M)
    assert re.search(r"program runs: \d+ .*; [\d.]+ s in program runs", out)
    for name in ("a", "b"):  # the version each tuning dataset runs
        assert re.search(rf"^  {name} +V\d +main\.suff_outer_par_0:(yes|no)", out, re.M), out


def test_no_options_use_the_tuned_values_and_options_override_them(tuned, tmp_path):
    fut, program, _ = tuned
    values = tuned_defaults(program)
    first = "main.suff_outer_par_0"
    err = run_program(program, INPUT, "-L").stderr.decode()
    expected = "true" if values[first] <= 2 else "false"
    assert err.splitlines()[0] == f"Compared {first} <= 2: {expected}."
    flipped = 1 if expected == "false" else 1000
    err = run_program(program, INPUT, "-L", "--param", f"{first}={flipped}").stderr.decode()
    assert err.splitlines()[0] == f"Compared {first} <= 2: {'true' if flipped == 1 else 'false'}."
    tuning = tmp_path / "override.tuning"
    tuning.write_text(f"{first}={flipped}\n")
    err = run_program(program, INPUT, "-L", "--tuning", str(tuning)).stderr.decode()
    assert err.splitlines()[0] == f"Compared {first} <= 2: {'true' if flipped == 1 else 'false'}."


def tuning_values(tuning) -> dict:
    lines = [l for l in tuning.read_text().splitlines() if not l.startswith("--")]
    return {k: int(v) for k, v in (l.split("=") for l in lines)}


@pytest.mark.parametrize("sig, delay", [
    # 0.1: while modules load; 1.5: while compiling; 3.0, 5.0: untuned runs and probes; 8.0: the search
    *((sig, delay) for sig in (signal.SIGINT, signal.SIGTERM) for delay in (0.1, 0.5, 1.5, 3.0, 5.0)),
    (signal.SIGINT, 8.0), (signal.SIGKILL, 3.0),
], ids=lambda v: signal.Signals(v).name if isinstance(v, signal.Signals) else str(v))
def test_a_signal_at_any_moment_leaves_both_files_as_they_were_or_both_tuned(tmp_path, delay, sig):
    """The program is compiled into a temporary file, tuned, and installed with the tuning file at the end (a
    first Ctrl-C ends the tuning early, with the best values so far): whatever the moment, and even after
    SIGKILL, the program and its tuning file are both as they were or both new, and agree. A run after a kill
    finds nothing in its way and leaves nothing behind."""
    fut = tmp_path / "mm.fut"
    fut.write_text(SOURCE)
    tuning = tmp_path / "mm.fut.tuning"
    tuning.write_text(earlier_tuning({"main.suff_outer_par_0": 7}))
    old_tuning = tuning.read_bytes()
    proc = subprocess.Popen([sys.executable, "-m", "incflat", "autotune", str(fut), "-r", "2", "--no-moderate"],
                            cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(delay)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=300)
    assert b"Traceback" not in err, err.decode()
    program = tmp_path / "mm"
    if program.exists():
        assert is_native_program(program) or program.read_text().rstrip().endswith("sys.exit(run())")
        assert tuning.read_bytes() != old_tuning and tuning_values(tuning) == tuned_defaults(program)
    else:
        assert tuning.read_bytes() == old_tuning
    expected = {"mm", "mm.fut", "mm.fut.tuning", "mm.fut.tuning.db"}
    if sig != signal.SIGKILL:
        assert {p.name for p in tmp_path.iterdir()} <= expected
        return
    again = autotune(fut, "--no-moderate")
    assert again.returncode == 0, again.stdout + again.stderr
    assert {p.name for p in tmp_path.iterdir()} == expected
    assert tuning_values(tuning) == tuned_defaults(program) and len(tuning_values(tuning)) == 4


def test_a_program_without_thresholds_is_tuned_to_itself(tmp_path):
    """One version: nothing to tune, whatever its datasets; an empty tuning file records that."""
    fut = tmp_path / "inc.fut"
    fut.write_text("-- ==\n-- notune input { [1i32, 2i32] }\n\nentry main (xs: []i32) = map (+1) xs\n")
    proc = autotune(fut, "--no-moderate")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{fut} has no thresholds" in proc.stdout  # the source, not the temporary program it compiled
    assert [line for line in (tmp_path / "inc.fut.tuning").read_text().splitlines()
            if not line.startswith("--")] == []
    assert run_program(tmp_path / "inc", b"[1i32, 2i32]").stdout.split() == [b"[2i32,", b"3i32]"]
    # still an error, though there is nothing to tune
    misspelt = autotune(fut, "--force", "--no-moderate", "-e", "nosuch")
    assert misspelt.returncode == 1 and "no case for entry point 'nosuch'" in misspelt.stderr, misspelt.stderr
