"""Fuzzing incflat's commands (issue 53): extreme numbers in every numeric option, odd file types in every path
argument, malformed JSON and store rows in the files incflat reads, and signals at random moments; no input ends
in a traceback, a hang, an orphaned process or an inconsistent file. The same profiles and reporter as
tests/test_fuzz.py (its docstring says how to run the long profile)."""

import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
import traceback
from pathlib import Path

import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st

import known_issues
from strategies import (
    ODD_FILES,
    bench_json_texts,
    extreme_numbers,
    fuzz_settings,
    json_values,
    make_odd_file,
    store_column_values,
)
from test_fuzz import COMPILE_SECONDS, cli_stderr_problem, incflat_command, run_command


COMMAND_SECONDS = 60  # a command on COMMAND_PROGRAM that takes longer is a hang
LONG_WORK_SECONDS = 10  # (how long a command asked for much work, e.g. 10**30 runs, runs before it is stopped)
COMMAND_PROGRAM = """-- ==
-- input { [[1f32, 2f32], [3f32, 4f32]] } output { [3f32, 7f32] }
-- input { [[1f32, 2f32, 3f32]] } output { [6f32] }
entry main [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> reduce (+) 0 xs) xss
"""
COMMAND_INPUT = b"[[1f32, 2f32], [3f32, 4f32]]"
THRESHOLD = "main.suff_outer_par_0"
X = "\0"  # where a template takes the drawn value (argv never holds a NUL)


@pytest.fixture(scope="module")
def command_program(tmp_path_factory):
    """COMMAND_PROGRAM's source and its compiled program, copied into each example's folder (example_folder)."""
    folder = tmp_path_factory.mktemp("command_program")
    fut = folder / "prog.fut"
    fut.write_text(COMMAND_PROGRAM)
    proc = run_command([*incflat_command(), "compile", str(fut)], timeout=COMPILE_SECONDS)
    assert proc is not None and proc.returncode == 0, proc and proc.stderr
    return fut, folder / "prog"


def example_folder(tmp_path_factory, command_program, name: str, folder: Path | None = None) -> Path:
    """A new folder (or folder) holding command_program's prog.fut and prog."""
    folder = folder or tmp_path_factory.mktemp(name)
    for path in command_program:
        shutil.copy(path, folder)
    return folder


MANY = 1000  # a count of runs or elements from which a command may take long
SECONDS = 10  # a number of seconds from which it may (it may then spend that long, as futhark bench would)


def numeric_option_commands(fut: Path) -> dict:
    """incflat's commands with a numeric option or value X: {name: (argv, the least X that asks for long work, or
    None)}."""
    f = str(fut)
    bench = ["bench", f, "--no-convergence-phase", "-r", "1"]
    tune = ["autotune", f, "--no-moderate", "--no-store", "-r", "1", "--stop-after", "5"]
    return {
        "dataset -s": (["dataset", "-g", "i32", "-s", X], None),
        "dataset -g [X]i8": (["dataset", "-g", f"[{X}]i8"], MANY),
        "dataset -g [2][X]f32": (["dataset", "-g", f"[2][{X}]f32"], MANY),
        "dataset --i8-bounds X:5": (["dataset", "-g", "[2]i8", "--i8-bounds", f"{X}:5"], None),
        "dataset --f32-bounds 0:X": (["dataset", "-g", "[2]f32", "--f32-bounds", f"0:{X}"], None),
        "dataset --u64-bounds X:X": (["dataset", "-g", "u64", "--u64-bounds", f"{X}:{X}"], None),
        "dataset --f64-bounds X:1": (["dataset", "-g", "f64", "--f64-bounds", f"{X}:1"], None),
        "test --timeout": (["test", "--timeout", X, f], None),
        "bench -r": ([*bench, "-r", X], MANY),
        "bench --convergence-max-seconds": (["bench", f, "-r", "1", "--convergence-max-seconds", X], SECONDS),
        **{f"autotune {option}": ([*tune, option, X], {"-r": MANY, "--max-runs": MANY, "--max-time": SECONDS,
                                                       "--stop-after": SECONDS}.get(option))
           for option in ("-r", "--max-runs", "--max-time", "--timeout", "--budget", "--stop-after", "--seed")},
        "run -r": (["run", f, "-r", X], MANY),
        "run --interpreter -r": (["run", "--interpreter", f, "-r", X], MANY),
        "run --param": (["run", f, "--param", f"{THRESHOLD}={X}"], None),
        **{f"run {option}": (["run", f, option, X], None)
           for option in ("--default-threshold", "--default-group-size", "--default-tile-size")},
    }


def asks_for_long_work(value: str, least: float | None) -> bool:
    """Whether value, read as loosely as any parser might, is a number of `least` or more."""
    try:
        return least is not None and float(value.strip()) >= least
    except ValueError:
        return False


@fuzz_settings(10)
@given(data=st.data())
def test_incflat_numeric_options_take_extreme_values(tmp_path_factory, command_program, data):
    """Exit 0 or a short error, never a traceback; nor a hang, unless the value asked for that much work."""
    folder = example_folder(tmp_path_factory, command_program, "numbers")
    commands = numeric_option_commands(folder / "prog.fut")
    name = data.draw(st.sampled_from(sorted(commands)))
    value = data.draw(extreme_numbers())
    template, least = commands[name]
    argv = [word.replace(X, value) for word in template]
    long_work = asks_for_long_work(value, least)
    note(f"incflat {argv}")
    reports = argv[0] in ("test", "bench")  # (their report of a failed case is on stdout; others' may be large)
    proc = run_command([*incflat_command(), *argv], COMMAND_INPUT, LONG_WORK_SECONDS if long_work else COMMAND_SECONDS,
                       stdout=subprocess.PIPE if reports else subprocess.DEVNULL)
    if proc is None and long_work:
        return
    if problem := (report_problem(proc) if reports else cli_stderr_problem(proc)):
        known_issues.report(f"incflat {name}", problem, argv)


def path_commands(fut: Path, odd: Path, data_fut: Path, results: Path) -> dict:
    """incflat's commands with the path argument `odd`: {name: argv}. data_fut's test block reads its input from
    odd; results is a good bench JSON file."""
    f, o = str(fut), str(odd)
    bench = ["bench", "--no-convergence-phase", "-r", "1"]
    tune = ["autotune", f, "--no-moderate", "-r", "1", "--stop-after", "5"]
    return {
        "check": ["check", o], "compile": ["compile", o], "compile -o": ["compile", f, "-o", o],
        "run": ["run", o], "test": ["test", o], "bench": [*bench, o], "autotune": ["autotune", o, "--no-moderate"],
        "bench --json": [*bench, f, "--json", o], "bench --tuning": [*bench, f, "--tuning", o],
        "benchcmp A": ["benchcmp", o, str(results)], "benchcmp B": ["benchcmp", str(results), o],
        "autotune --log": [*tune, "--log", o], "autotune --store": [*tune, "--store", o],
        "autotune --plot": [*tune, "--plot", o],
        "run -t": ["run", f, "-t", o], "run --tuning": ["run", f, "--tuning", o],
        "run --profile-json": ["run", f, "-P", "--profile-json", o], "run --interpreter -t": ["run", "--interpreter", f, "-t", o],
        "test's data file": ["test", str(data_fut)], "bench's data file": [*bench, str(data_fut)],
        "autotune's data file": ["autotune", str(data_fut), "--no-moderate", "-r", "1", "--stop-after", "5"],
    }


def report_problem(proc) -> str | None:
    """`incflat test` and `bench` report a failed file or dataset on stdout, exit 1: a problem only if that holds a
    traceback."""
    if proc is not None and proc.returncode == 1 and not proc.stderr:
        return proc.stdout.decode(errors="replace") if b"Traceback (most recent" in proc.stdout else None
    return cli_stderr_problem(proc)


@contextlib.contextmanager
def fifo_writer(fifo: Path | None):
    """A process that writes junk into the FIFO whenever a command opens it to read it (reading a FIFO that
    nothing writes waits, as `cat` does: not a hang of incflat's)."""
    done = threading.Event()

    def write():
        while not done.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # (ENXIO while nothing reads it)
            except OSError:
                time.sleep(0.02)
                continue
            try:
                os.write(fd, b"{junk")
            except OSError:
                pass
            os.close(fd)
    writer = threading.Thread(target=write, daemon=True) if fifo is not None else None
    if writer:
        writer.start()
    try:
        yield
    finally:
        done.set()
        if writer:
            writer.join(5)


def listing(folder: Path) -> dict:
    """Each path below folder and the type of file it is (its lstat's S_IFMT)."""
    return {p: os.lstat(p).st_mode >> 12 for p in folder.rglob("*")}


@fuzz_settings(12)
@given(kind=st.sampled_from(ODD_FILES), data=st.data())
def test_incflat_path_arguments_take_odd_files(tmp_path_factory, command_program, kind, data):
    """A short error or success, never a traceback or a hang (a FIFO is never waited on); after an error nothing
    is left in the folder that was not there, and the odd file is what it was."""
    if kind == "unreadable" and os.geteuid() == 0:
        kind = "directory"  # (root reads any file)
    folder = example_folder(tmp_path_factory, command_program, "paths")
    odd = make_odd_file(kind, folder)
    data_fut = folder / "data.fut"
    data_fut.write_text(f"-- ==\n-- input @ {odd}\n" + COMMAND_PROGRAM.split("\n", 3)[3])
    results = folder / "results.json"
    results.write_text('{"p.fut": {"datasets": {"d": {"runtimes": [1, 2]}}}}\n')
    commands = path_commands(folder / "prog.fut", odd, data_fut, results)
    name = data.draw(st.sampled_from(sorted(commands)))
    argv = commands[name]
    note(f"{kind}: incflat {argv}")
    before = listing(folder)
    with fifo_writer(odd if kind == "fifo" else None):
        proc = run_command([*incflat_command(), *argv], COMMAND_INPUT, COMMAND_SECONDS)
    problem = report_problem(proc) if argv[0] in ("test", "bench") else cli_stderr_problem(proc)
    if problem is None and proc.returncode != 0:
        after = listing(folder)
        # the tuner's store keeps what it measured, also for a run that stops early (the next one resumes)
        store = os.path.realpath(argv[argv.index("--store") + 1]) if "--store" in argv else None
        changed = {str(p): after.get(p) for p in set(before) | set(after)
                   if after.get(p) != before.get(p) and p.parent != odd
                   and not (argv[0] == "autotune" and (str(p).endswith(".tuning.db") or str(p) == store))}
        if changed:
            problem = f"exit {proc.returncode}, and the folder changed: {changed}\n{proc.stderr.decode(errors='replace')}"
    if problem is None and os.path.lexists(odd) and kind in ("fifo", "null device") and \
            listing(folder).get(odd) != before.get(odd):
        problem = f"replaced the {kind} {odd} with another file type (exit {proc.returncode})"
    if problem:
        known_issues.report(f"incflat {name} on a {kind}", problem, argv)


@fuzz_settings(40)
@given(a=bench_json_texts(), b=bench_json_texts())
def test_benchcmp_of_generated_json_compares_or_names_the_problem(tmp_path_factory, a, b):
    folder = tmp_path_factory.mktemp("benchcmp")
    paths = [folder / "a.json", folder / "b.json"]
    for path, text in zip(paths, (a, b)):
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    problem = in_process_problem(["benchcmp", *map(str, paths)])
    if problem:
        known_issues.report("incflat benchcmp", problem, {"a": a, "b": b})


def in_process_problem(argv: list) -> str | None:
    """cli_stderr_problem of incflat's main run in this process (fast, for commands that start nothing)."""
    from incflat import cli
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = cli.main(argv)
        except SystemExit as e:  # argparse's
            status = e.code
        except Exception:  # noqa: BLE001 - what this suite looks for
            return traceback.format_exc()
    return cli_stderr_problem(subprocess.CompletedProcess(argv, status, b"", err.getvalue().encode()))


STORE_COLUMNS = {
    "probes": ("epars", "times_us", "wall_s", "default_threshold", "device_name"),
    "evaluations": ("times_us", "failure", "timed_out_after_s", "wall_s", "more"),
    "pairs": ("first_times_us", "second_times_us", "wall_s"),
}


@fuzz_settings(40)
@given(table=st.sampled_from(sorted(STORE_COLUMNS)), data=st.data())
def test_a_store_row_with_generated_values_is_read_or_warned_about(tmp_path_factory, table, data):
    """A tuning store's row, one of its columns (or two) replaced by any value: read as a measurement, or skipped
    with a warning naming the store; never an exception."""
    from incflat.datasets import Dataset, InlineValues
    from incflat.tuner.measure import Measurement
    from incflat.tuner.store import ProgramKey, Store, StoredProbe
    from tuner_fixtures import FAKE, T1
    columns = data.draw(st.lists(st.sampled_from(STORE_COLUMNS[table]), min_size=1, max_size=2, unique=True))
    values = [data.draw(store_column_values()) for _ in columns]
    note(f"{table}: {dict(zip(columns, values))}")
    path = tmp_path_factory.mktemp("store") / "store.db"
    store = Store(path)
    warnings = []
    try:
        stored = store.for_program(ProgramKey.of(FAKE.read_text(), [T1], ()), warn=warnings.append)
        dataset = Dataset("d", "main", InlineValues("1"), False)
        stored.add_probe(dataset, StoredProbe({T1: (4,)}, "Fake GPU", 32768, (9.0, 3.0), 1.5))
        stored.add(dataset, {T1: 1}, Measurement((3.0, 3.5)), 1.0, None, more=False)
        stored.add_pair(dataset, {T1: 1}, {T1: 2}, (Measurement((3.0,)), Measurement((4.0,))), 2.0)
        try:
            store._connection.execute(f"UPDATE {table} SET {', '.join(c + ' = ?' for c in columns)}", values)
        except sqlite3.IntegrityError:  # (a NOT NULL column)
            assume(False)
        read = {"probes": lambda: stored.probe(dataset),
                "evaluations": lambda: stored.measurement(dataset, {T1: 1}, 9.0),
                "pairs": lambda: stored.pairs(dataset, {T1: 1}, {T1: 2})}
        try:
            read[table]()
        except Exception:  # noqa: BLE001 - what this suite looks for
            known_issues.report(f"store: {table}", traceback.format_exc(), dict(zip(columns, map(repr, values))))
            return
        if warnings and not all(str(path) in w and "damaged row" in w for w in warnings):
            known_issues.report(f"store: {table}", f"unclear warnings {warnings}", dict(zip(columns, map(repr, values))))
    finally:
        store.close()


def log_first_lines():
    """A --log file's first line: JSON, the tuner's mark in it or not."""
    return st.one_of(json_values(), st.dictionaries(st.sampled_from(["incflat_autotune_log", "x"]), json_values(),
                                                    max_size=2)).map(lambda v: json.dumps(v).encode())


@fuzz_settings(30)
@given(first_line=st.one_of(st.binary(max_size=30), log_first_lines()), rest=st.binary(max_size=20))
def test_an_existing_log_file_is_appended_to_or_refused(tmp_path_factory, first_line, rest):
    """The tuner reads an existing --log file's first line (it overwrites only its own log): whatever the file
    holds, a refusal or None, never an exception."""
    from incflat.tuner.jsonlog import log_path_problem
    path = tmp_path_factory.mktemp("log") / "log.jsonl"
    path.write_bytes(first_line + b"\n" + rest)
    try:
        problem = log_path_problem(path)
    except Exception:  # noqa: BLE001 - what this suite looks for
        known_issues.report("--log's first line", traceback.format_exc(), (first_line + b"\n" + rest).hex())
        return
    assert problem is None or "refusing" in problem, problem


SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)
PYTHON_START_SECONDS = 0.3


def signalled_commands(folder: Path) -> dict:
    f = str(folder / "prog.fut")
    return {
        "compile": ["compile", f, "-o", str(folder / "out")],
        "test": ["test", f],
        "run": ["run", f],
        "autotune": ["autotune", f, "-r", "2", "--no-moderate"],
    }


def complete_program(path: Path) -> bool:
    from incflat.codegen.cprogram import is_native_program
    return is_native_program(path) or path.read_text(errors="replace").rstrip().endswith("sys.exit(run())")


@fuzz_settings(3)
@given(name=st.sampled_from(["compile", "test", "run", "autotune"]), sig=st.sampled_from(SIGNALS),
       delay=st.floats(0, 3))
def test_a_signal_at_a_random_moment(tmp_path_factory, command_program, name, sig, delay):
    """No traceback; the signal's exit status (128 + it), 0 if the command had finished, or killed by SIGKILL; no
    process left behind; files complete or as they were (an autotune's program and tuning file both old or both
    new), and no temporary file left except after SIGKILL."""
    from test_orphans import alive, descendants
    folder = example_folder(tmp_path_factory, command_program, "signals")
    tuning = folder / "prog.fut.tuning"
    tuning.write_text(f"{THRESHOLD}=7\n")  # (a file incflat did not write: --force)
    program = folder / "prog"
    old_program = program.read_bytes()
    argv = signalled_commands(folder)[name] + (["--force"] if name == "autotune" else [])
    process = subprocess.Popen([*incflat_command(), *argv], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    process.stdin.write(COMMAND_INPUT)
    process.stdin.close()
    below, deadline = set(), time.monotonic() + delay
    while time.monotonic() < deadline and process.poll() is None:
        below |= descendants(process.pid)
        time.sleep(0.05)
    below |= descendants(process.pid)
    process.send_signal(sig)
    try:
        err = process.stderr.read().decode(errors="replace")
        process.wait(COMMAND_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        known_issues.report(f"incflat {name} after {sig.name}", "hang", {"argv": argv, "delay": delay})
        return
    left, deadline = alive(below), time.monotonic() + 10
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = alive(left)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    problems = []
    # (a signal while the interpreter itself starts, before any line of incflat runs: Python's, on a loaded host)
    python_starting = err.startswith("Fatal Python error: init")
    if "Traceback (most recent call last)" in err and not python_starting:
        problems.append(err)
    expected = {0, -signal.SIGKILL} if sig == signal.SIGKILL else {0, 128 + sig}
    if delay < PYTHON_START_SECONDS or python_starting:  # (before incflat's handlers: the default action)
        expected |= {-sig, process.returncode} if python_starting else {-sig}
    if process.returncode not in expected:
        problems.append(f"exit {process.returncode}, not one of {sorted(expected)}: {err}")
    if left:
        problems.append(f"processes left: {left}")
    temporaries = [p.name for p in folder.iterdir() if p.name.endswith(".tmp") or p.name.endswith(".lock")]
    if temporaries and sig != signal.SIGKILL:
        problems.append(f"temporary files left: {temporaries}")
    out = folder / "out"
    if name == "compile" and out.exists() and not complete_program(out):
        problems.append("an incomplete compiled program")
    if name == "autotune" and (program.read_bytes() == old_program) != (tuning.read_text() == f"{THRESHOLD}=7\n"):
        problems.append("the program and its tuning file are not both old or both new")
    if problems:
        known_issues.report(f"incflat {name} after {sig.name}", "\n".join(problems),
                            {"argv": argv, "delay": delay, "signal": sig.name})


# Regressions of what the generators above found

def test_compile_refuses_to_write_over_a_fifo(tmp_path):
    """It used to read the FIFO to see whether incflat wrote it, and wait for a writer forever."""
    fut, fifo = tmp_path / "prog.fut", tmp_path / "fifo"
    fut.write_text(COMMAND_PROGRAM)
    os.mkfifo(fifo)
    proc = run_command([*incflat_command(), "compile", str(fut), "-o", str(fifo)], timeout=COMMAND_SECONDS)
    assert proc is not None and proc.returncode == 2, proc and proc.stderr
    assert proc.stderr.decode() == f"incflat: error: refusing to write the compiled program to {fifo}: it is not a " \
                                   "regular file\n"
    assert fifo.is_fifo()


@pytest.mark.parametrize("option", ["--log", "--store"])
def test_a_tuner_output_that_is_a_fifo_is_refused_without_waiting_on_it(tmp_path, command_program, option):
    """--log used to wait forever on a FIFO for its first line (and bench --json, --store could replace a FIFO or
    a device, /dev/null under root, with a regular file)."""
    fut = example_folder(None, command_program, "", folder=tmp_path) / "prog.fut"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = run_command([*incflat_command(), "autotune", str(fut), "--no-moderate", option, str(fifo)],
                       timeout=COMMAND_SECONDS)
    assert proc is not None and proc.returncode == 2 and "Traceback" not in proc.stderr.decode(), proc and proc.stderr
    assert proc.stderr.decode().splitlines()[-1].endswith(f"{option} {fifo}: not a regular file")
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "prog", "prog.fut"]


def test_a_store_that_is_a_symlink_loop_is_a_short_error(tmp_path, command_program):
    """The check that the tuner's files are distinct used to raise RuntimeError (Path.resolve) on a loop."""
    fut = example_folder(None, command_program, "", folder=tmp_path) / "prog.fut"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    proc = run_command([*incflat_command(), "autotune", str(fut), "--no-moderate", "--store", str(loop)],
                       timeout=COMMAND_SECONDS)
    assert cli_stderr_problem(proc) is None and proc.returncode != 0, proc.stderr


def test_sighup_ends_an_autotune_as_sigterm_does(tmp_path, command_program):
    """SIGHUP (a closed terminal) used to kill it at once, leaving its temporary program and lock behind."""
    fut = example_folder(None, command_program, "", folder=tmp_path) / "prog.fut"
    process = subprocess.Popen([*incflat_command(), "autotune", str(fut), "--no-moderate", "-r", "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert b"is replaced when tuning ends" in process.stdout.readline()
    process.send_signal(signal.SIGHUP)
    _, err = process.communicate(timeout=COMMAND_SECONDS)
    assert process.returncode == 128 + signal.SIGHUP and b"Traceback" not in err, err
    left = {p.name for p in tmp_path.iterdir()}  # (the tuning file exists or not, as the signal came before it or after)
    assert left <= {"prog", "prog.fut", "prog.fut.tuning", "prog.fut.tuning.db"}, left




def test_a_log_that_is_a_symlink_loop_is_refused_before_anything_is_written(tmp_path):
    """Found by the odd-files generator: the store was made before the log failed to open."""
    fut = tmp_path / "prog.fut"
    fut.write_text(COMMAND_PROGRAM)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    proc = run_command([*incflat_command(), "autotune", str(fut), "--no-moderate", "--log", str(loop)],
                       timeout=COMMAND_SECONDS)
    assert proc.returncode == 2 and proc.stderr.decode().strip().endswith(f"--log {loop}: a loop of symbolic links")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop", "prog.fut"]
