"""The tuner's persistence and robustness: the store and resuming, the lock, kills, budgets and early stops,
failures that are reported rather than fatal, the --log file and the progress bar (docs/tuning.md).

They run tests/fake_program.py in place of a compiled program."""

from __future__ import annotations

import collections
import fcntl
import importlib
import io
import json
import os
import pty
import re
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from incflat.ir.runtime.tuning import NEVER, with_defaults
from incflat.tuner.autotune import Measuring, TuneRequest, Writing, autotune
from incflat.tuner.command import main
from incflat.datasets import Dataset, InlineValues, ValuesFile
from incflat.ir.errors import ToolError
from incflat.tuner.lock import lock_path, tuning_lock
from incflat.tuner.measure import Bench, Candidate, Limits, Measurement, compare
from incflat.tuner.children import RunResult
from incflat.tuner.store import (APPLICATION_ID, PAIRS, SCHEMA, SCHEMA_VERSION, ProgramKey, Store, StoredProbe,
                                 dataset_key, default_store_path)
from conftest import earlier_tuning
from tuner_fixtures import FAKE, REPO, T1, T2, T3, T4
# Two tuning datasets (the untuned program takes V1 and V5) and one held out.
FUT = ("-- ==\n-- input { 65536i64 64i64 64i64 }\n-- input { 64i64 256i64 32i64 }\n"
       "-- notune input { 16i64 64i64 64i64 }\n")
OLD_TUNING = earlier_tuning({T1: 5})
RUNS = ("run", "run again", "untimed")  # the sources of --log records that are program invocations


def invoked(record: dict) -> bool:
    """Whether a --log record is a program invocation (a paired one's wall time is on its first record)."""
    return record["source"] in RUNS or (record["source"] == "paired" and record["wall_s"] > 0)


def workspace(folder: Path, fut_text: str = FUT) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    fut, program = folder / "prog.fut", folder / "prog"
    fut.write_text(fut_text)
    shutil.copy(FAKE, program)
    return fut, program


def start_tuner(fut: Path, program: Path, *args: str, env: dict | None = None, **popen) -> subprocess.Popen:
    # (--no-moderate: these tests are about the tuning itself; a moderate-flattening baseline only slows them)
    return subprocess.Popen([sys.executable, "-m", "incflat.tuner", str(fut), str(program), "--runs", "1",
                             "--no-moderate", *args],
                            cwd=REPO, env=os.environ | (env or {}), text=True, **popen)


def run_tuner(fut: Path, program: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    tuner = start_tuner(fut, program, *args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, stderr = tuner.communicate(timeout=120)
    return subprocess.CompletedProcess(tuner.args, tuner.returncode, stdout, stderr)


def wait_for(tuner: subprocess.Popen, text: str) -> None:
    for line in tuner.stdout:
        if text in line:
            return
    pytest.fail(f"the tuner finished before {text!r}")


def log_records(path: Path) -> list[dict]:
    header, *records = (json.loads(line) for line in path.read_text().splitlines())
    assert header["incflat_autotune_log"] == 1
    return records


def invocations(records: list[dict]) -> collections.Counter:
    return collections.Counter((r["dataset"], json.dumps(r["params"], sort_keys=True), r["label"], r["source"])
                               for r in records if invoked(r))


def running(program: Path) -> list[int]:
    """The live processes (not zombies) whose command line names program."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if str(program).encode() in argv and state != "Z":
            found.append(int(entry.name))
    return found


# --- the store's keys ---


def test_the_program_key_ignores_the_tuned_defaults_but_untuned_runs_do_not():
    text = FAKE.read_text()
    tuned = with_defaults(text, {T1: 5}, {"device": "x"})
    names = [T1, T2, T3, T4, "main.segmap_tblock_size_4"]
    before, after = ProgramKey.of(text, names, ()), ProgramKey.of(tuned, names, ())
    assert before.program == after.program and before.whole != after.whole
    # a run that leaves a parameter to the program (untuned: all of them) runs the baked defaults
    assert before.config(None) == before.config({}) != after.config(None)
    assert before.config({T1: 1}) != after.config({T1: 1})
    everything = dict.fromkeys(names, 7)
    assert before.config(everything) == after.config(everything)
    assert ProgramKey.of(text, names, ["-d", "gpu"]).device != before.device


def test_a_dataset_is_keyed_by_its_entry_point_and_content_not_its_name(tmp_path):
    a = Dataset("a", "main", InlineValues("1i64 2i64 3i64"), False)
    assert dataset_key(a) == dataset_key(Dataset("b", "main", a.input, True))
    assert dataset_key(a) != dataset_key(Dataset("a", "main", InlineValues("1i64 2i64 4i64"), False))
    assert dataset_key(a) != dataset_key(Dataset("a", "other", a.input, False))
    values = tmp_path / "x.in"
    values.write_text("1i64 2i64 3i64")
    in_file = Dataset("a", "main", ValuesFile("x.in", values), False)
    first = dataset_key(in_file)
    values.write_text("1i64 2i64 5i64")
    assert dataset_key(in_file) != first


# --- resuming from the store ---


class _StubProgram:
    """A program whose invocations are scripted; it fails the test if run once more than scripted."""

    def __init__(self, outcomes):
        self.outcomes, self.in_turn = list(outcomes), []

    def run(self, dataset, *, params, timeout, options=(), timing_runs=None, check=None):
        assert self.outcomes, "a measurement was run again"
        return self.outcomes.pop(0)

    def run_in_turn(self, dataset, configurations, *, timeout, timing_runs, options=(), check=None):
        self.in_turn.append(list(configurations))
        return self.run(dataset, params=configurations[0], timeout=timeout, options=options, timing_runs=timing_runs)


def _store_for(tmp_path: Path, text: str = "# BEGIN INCFLAT TUNED DEFAULTS\n# END INCFLAT TUNED DEFAULTS\n"):
    store = Store(tmp_path / "store.db")
    return store, store.for_program(ProgramKey.of(text, [T1], ()), warn=pytest.fail)


def test_a_comparison_resumed_from_the_store_runs_nothing_again(tmp_path):
    """Invocations 30% apart, then runs in turn, in two paired invocations (the first could not settle it; the
    second puts b in the first place): the store keeps the pairs, and a tuner run again decides from them,
    either way round."""
    store, stored = _store_for(tmp_path)
    program = _StubProgram([
        RunResult(None, "", 1.0, (900.0, 100.0, 100.5, 99.5)),  # a, fast
        RunResult(None, "", 1.0, (900.0, 130.0, 130.5, 129.5)),  # b, slow
        RunResult(None, "", 2.0, (900.0, 100.0, 100.0), alternate_times_us=((900.0, 103.0, 101.0),)),  # open
        RunResult(None, "", 2.0, (900.0, 103.0, 103.2, 102.8, 103.1), alternate_times_us=((900.0, *[100.0] * 4),)),
    ])
    dataset = Dataset("d", "main", InlineValues("1"), False)
    a, b = Candidate({T1: 1}, "a"), Candidate({T1: 2}, "b")
    first = Bench(program, runs=2, timeout=60.0, log=lambda _: None, max_runs=12, store=stored)
    assert compare(first, dataset, a, b) == -1 and not program.outcomes
    assert program.in_turn == [[a.params, b.params], [b.params, a.params]]
    again = Bench(_StubProgram([]), runs=2, timeout=60.0, log=lambda _: None, max_runs=12, store=stored)
    assert compare(again, dataset, b, a) == 1 and again.invocations == 0
    assert again.pairs(dataset, a, b) == first.pairs(dataset, a, b) == [
        (100.0, 103.0), (100.0, 101.0), (100.0, 103.0), (100.0, 103.2), (100.0, 102.8), (100.0, 103.1)]
    resumed = again.measure(dataset, {T1: 2}, key="b")
    assert resumed.invocations == ((130.0, 130.5, 129.5), (103.0, 101.0), (103.0, 103.2, 102.8, 103.1))  # rows
    assert (again.invocations, again.stored_count["d"], again.hit_count["d"]) == (0, 2, 1)
    store.close()


def test_a_store_of_schema_1_is_brought_to_schema_3_and_keeps_its_probes(tmp_path):
    path, dataset = tmp_path / "old.db", Dataset("d", "main", InlineValues("1"), False)
    key = ProgramKey.of(FAKE.read_text(), [T1], ())
    old = sqlite3.connect(path)
    for statement in filter(str.strip, SCHEMA.split(";")):  # schema 1: probes without their runs, no pairs
        if statement not in PAIRS:
            old.execute(statement)
    old.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    old.execute("PRAGMA user_version = 1")
    old.execute("INSERT INTO probes (program, device, dataset, config, epars, device_name, dataset_name, recorded)"
                " VALUES (?,?,?,?,?,?,?,?)", (key.program, key.device, dataset_key(dataset), key.whole,
                                              json.dumps({T1: [4]}), "Fake GPU", "d", "then"))
    old.commit()
    old.close()
    store = Store(path)
    view = store.for_program(key, warn=pytest.fail)
    assert view.probe(dataset) == StoredProbe({T1: (4,)}, "Fake GPU", None, (), 0.0)  # no runs to learn from
    view.add_probe(dataset, StoredProbe({T1: (4,)}, "Fake GPU", 32768, (9.0, 3.0, 3.5), 1.5))
    assert view.probe(dataset) == StoredProbe({T1: (4,)}, "Fake GPU", 32768, (9.0, 3.0, 3.5), 1.5)
    assert view.pairs(dataset, {T1: 1}, {T1: 2}) == []
    store.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3


def test_a_timeout_is_reused_only_under_a_time_limit_no_longer(tmp_path):
    store, stored = _store_for(tmp_path)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    slow = Bench(_StubProgram([RunResult("timed out after 5 s", "", 5.0, timed_out=True)]), runs=1, timeout=5.0,
                 log=lambda _: None, store=stored)
    assert not slow.measure(dataset, {T1: 1}, key="k").ok
    same = Bench(_StubProgram([]), runs=1, timeout=5.0, log=lambda _: None, store=stored)
    assert same.measure(dataset, {T1: 1}).failure == "timed out after 5 s" and same.invocations == 0
    longer = Bench(_StubProgram([RunResult(None, "", 6.0, (9.0, 3.0))]), runs=1, timeout=60.0, log=lambda _: None,
                   store=stored)
    assert longer.measure(dataset, {T1: 1}).times_us == (3.0,) and longer.invocations == 1
    store.close()


def test_untuned_runs_are_stored_with_the_baked_defaults(tmp_path):
    text = FAKE.read_text()
    store = Store(tmp_path / "store.db")
    dataset = Dataset("d", "main", InlineValues("1"), False)
    plain = store.for_program(ProgramKey.of(text, [T1], ()), warn=pytest.fail)
    Bench(_StubProgram([RunResult(None, "", 1.0, (9.0, 3.0))]), runs=1, timeout=9.0, log=lambda _: None,
          store=plain).measure(dataset, None)
    tuned = store.for_program(ProgramKey.of(with_defaults(text, {T1: 5}, None), [T1], ()), warn=pytest.fail)
    assert plain.measurement(dataset, None, 9.0) is not None
    assert tuned.measurement(dataset, None, 9.0) is None
    store.close()


def test_a_run_killed_at_any_moment_and_restarted_measures_nothing_twice(tmp_path):
    """SIGKILL in the middle of the search: the measurement child dies with the tuner, nothing is left in the
    temporary folder, both files are as they were, and the restarted run measures only what the killed one had
    not measured: together they make exactly the invocations of an uninterrupted run."""
    reference_fut, reference_program = workspace(tmp_path / "reference")
    done = run_tuner(reference_fut, reference_program, "--log", str(tmp_path / "reference.jsonl"))
    assert done.returncode == 0, done.stderr
    expected = invocations(log_records(tmp_path / "reference.jsonl"))

    fut, program = workspace(tmp_path / "work")
    tuning = fut.with_name("prog.fut.tuning")
    tuning.write_text(OLD_TUNING)
    program_before = program.read_bytes()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    # T4 is tuned; T3's first experiment takes V3, which hangs until the tuner is killed
    tuner = start_tuner(fut, program, "--log", str(tmp_path / "first.jsonl"),
                        env=env | {"FAKE_PROGRAM_LEAF_SLEEP": "3:120"}, stdout=subprocess.PIPE)
    try:  # generous deadlines, left as soon as the condition holds: a loaded machine starts children slowly
        wait_for(tuner, f"tuning {T3}")
        deadline = time.monotonic() + 60
        while not [pid for pid in running(program) if pid != tuner.pid] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in running(program) if pid != tuner.pid], "a measurement is running"
    finally:
        tuner.kill()
        tuner.wait()
    deadline = time.monotonic() + 60
    while running(program) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(program), "the measurement child outlived the tuner"
    assert program.read_bytes() == program_before and tuning.read_text() == OLD_TUNING
    assert lock_path(fut).exists()  # left by the killed tuner; it must not block

    again = run_tuner(fut, program, "--log", str(tmp_path / "second.jsonl"), env=env)
    assert again.returncode == 0, again.stderr
    first, second = log_records(tmp_path / "first.jsonl"), log_records(tmp_path / "second.jsonl")
    assert invocations(first) + invocations(second) == expected
    assert not set(invocations(first)) & set(invocations(second))
    # (by experiment: a measurement's runs may have been added under another label, the untuned run's path, say)
    def experiment(r):
        return r["dataset"], json.dumps(r["key"]) if r["key"] else r["label"]
    assert {experiment(r) for r in second if r["source"] == "stored"} == {
        experiment(r) for r in first if invoked(r)}
    assert list(scratch.iterdir()) == []
    assert sorted(p.name for p in fut.parent.iterdir()) == ["prog", "prog.fut", "prog.fut.tuning",
                                                           "prog.fut.tuning.db"]


def test_no_store_stores_nothing_and_store_file_chooses_the_file(tmp_path):
    fut, program = workspace(tmp_path)
    assert run_tuner(fut, program, "--no-store").returncode == 0
    assert not default_store_path(fut).exists()
    program.write_bytes(FAKE.read_bytes())  # untuned again (its baked defaults are part of the untuned runs' key)
    elsewhere = tmp_path / "elsewhere.db"
    done = run_tuner(fut, program, "--store", str(elsewhere))
    assert done.returncode == 0 and elsewhere.exists() and not default_store_path(fut).exists()
    assert f"0 from the store {elsewhere}" in done.stdout
    program.write_bytes(FAKE.read_bytes())
    resumed = run_tuner(fut, program, "--store", str(elsewhere))
    assert "program runs: 0 " in resumed.stdout, resumed.stdout


@pytest.mark.parametrize("content, why", [
    (b"not a database, but a file of the user's" * 100, "cannot be used (file is not a database)"),
    (None, "is an sqlite database that incflat did not write"),
])
def test_a_store_that_is_not_a_tuning_store_is_a_one_line_error_and_left_alone(tmp_path, capsys, content, why):
    fut, program = workspace(tmp_path)
    store = default_store_path(fut)
    if content is None:
        with sqlite3.connect(store) as connection:
            connection.execute("CREATE TABLE mine (x)")
        content = store.read_bytes()
    else:
        store.write_bytes(content)
    assert main([str(fut), str(program), "--no-moderate"]) == 1
    err = capsys.readouterr().err
    assert err == (f"Error: the tuning store {store} {why}; remove it, or tune with --store FILE or --no-store\n")
    assert store.read_bytes() == content and program.read_bytes() == FAKE.read_bytes()
    assert not fut.with_name("prog.fut.tuning").exists() and not lock_path(fut).exists()


def test_an_empty_file_is_a_store_being_created_and_becomes_one(tmp_path):
    """sqlite makes the file before it takes the lock under which the schema is written: another tuner that
    opens the store meanwhile finds it empty."""
    fut, program = workspace(tmp_path)
    default_store_path(fut).touch()
    done = run_tuner(fut, program)
    assert done.returncode == 0, done.stderr
    assert sqlite3.connect(default_store_path(fut)).execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def _open_store_when_all_are_ready(path: str, ready) -> str | None:
    """(in a process of its own) Opens the store at path at once with the others: why it could not, or None."""
    ready.wait()
    try:
        Store(Path(path)).close()
    except ToolError as e:
        return str(e)
    return None


def test_tuners_opening_one_new_store_at_once_all_open_it(tmp_path):
    """issue 53: "the tuning store r1.db exists and is empty" in 1 of 10 pairs of tuners sharing a new --store,
    25 of 40 direct opens: the file's size was checked before sqlite had written the schema."""
    import multiprocessing
    openers, stores = 4, 25
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(openers) as pool:
        for k in range(stores):
            path, ready = tmp_path / f"r{k}.db", manager.Barrier(openers)
            failures = pool.starmap(_open_store_when_all_are_ready, [(str(path), ready)] * openers, chunksize=1)
            assert failures == [None] * openers
            connection = sqlite3.connect(path)
            assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert connection.execute("SELECT count(*) FROM evaluations").fetchone()[0] == 0
            connection.close()


@pytest.mark.parametrize("table, column, value, what", [
    ("probes", "epars", "{bad", "probes.epars is '{bad', not a JSON object of ePar values"),
    ("probes", "epars", "", "probes.epars is '', not a JSON object of ePar values"),
    ("probes", "epars", '{"t": ["x"]}', 'probes.epars is \'{"t": ["x"]}\', not a JSON object of ePar values'),
    ("probes", "times_us", "[1,", "probes.times_us is '[1,', not a JSON list of run times"),
    ("probes", "default_threshold", "many", "probes.default_threshold is 'many', not an integer or NULL"),
    ("evaluations", "times_us", "{bad", "evaluations.times_us is '{bad', not a JSON list of run times"),
    ("evaluations", "times_us", '{"a": 1}', "evaluations.times_us is '{\"a\": 1}', not a JSON list of run times"),
    ("evaluations", "timed_out_after_s", "soon", "evaluations.timed_out_after_s is 'soon', not a number or NULL"),
    ("evaluations", "wall_s", "long", "evaluations.wall_s is 'long', not a number"),
    ("pairs", "second_times_us", '[1, "a"]', 'pairs.second_times_us is \'[1, "a"]\', not a JSON list of run times'),
])
def test_a_damaged_row_is_a_warning_naming_the_store_and_the_run_goes_on_without_it(tmp_path, table, column,
                                                                                      value, what):
    """issue 53: a JSONDecodeError traceback. One warning names the file, the table and column, and the remedy;
    the store then answers nothing more."""
    warnings = []
    store = Store(tmp_path / "store.db")
    stored = store.for_program(ProgramKey.of(FAKE.read_text(), [T1], ()), warn=warnings.append)
    dataset = Dataset("d", "main", InlineValues("1"), False)
    stored.add_probe(dataset, StoredProbe({T1: (4,)}, "Fake GPU", 32768, (9.0, 3.0), 1.5))
    stored.add(dataset, {T1: 1}, Measurement((3.0, 3.5)), 1.0, None, more=False)
    stored.add_pair(dataset, {T1: 1}, {T1: 2}, (Measurement((3.0,)), Measurement((4.0,))), 2.0)
    store._connection.execute(f"UPDATE {table} SET {column} = ?", (value,))
    read = {"probes": lambda: stored.probe(dataset), "evaluations": lambda: stored.measurement(dataset, {T1: 1}, 9.0),
            "pairs": lambda: stored.pairs(dataset, {T1: 1}, {T1: 2})}
    assert not read[table]()
    assert warnings == [f"the tuning store {tmp_path / 'store.db'} has a damaged row ({what}); going on without it "
                        "(remove it to start a new store)"]
    assert stored.probe(dataset) is None and len(warnings) == 1
    store.close()


def test_a_tuner_on_a_store_with_a_damaged_row_warns_and_tunes(tmp_path):
    fut, program = workspace(tmp_path)
    assert run_tuner(fut, program).returncode == 0
    program.write_bytes(FAKE.read_bytes())  # untuned again
    with sqlite3.connect(default_store_path(fut)) as connection:
        connection.execute("UPDATE probes SET epars = '{bad'")
    again = run_tuner(fut, program)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert (f"warning: the tuning store {default_store_path(fut)} has a damaged row (probes.epars is '{{bad', not a "
            "JSON object of ePar values); going on without it (remove it to start a new store)") in again.stdout


# --- the lock ---


def test_a_second_tuner_of_the_program_refuses_naming_the_first(tmp_path):
    fut, program = workspace(tmp_path)
    first = start_tuner(fut, program, env={"FAKE_PROGRAM_SLEEP": "0.2"}, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
    wait_for(first, "untuned")
    second = run_tuner(fut, program)
    assert second.returncode == 1
    assert second.stderr == (f"Error: another tuner (pid {first.pid}) is tuning {fut}: wait for it to finish or "
                             f"stop it (its lock is {lock_path(fut).absolute()})\n")
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    assert not lock_path(fut).exists()


def test_the_lock_is_held_per_program_reentrant_and_checked(tmp_path):
    fut = tmp_path / "prog.fut"
    with tuning_lock(fut):
        with tuning_lock(fut):  # incflat autotune takes it, then the tuner it runs
            assert lock_path(fut).read_text() == f"{os.getpid()}\n"
        assert lock_path(fut).exists()
        with tuning_lock(tmp_path / "other.fut"):
            pass
    assert not lock_path(fut).exists()
    lock_path(fut).write_text("a note of the user's\n")
    with pytest.raises(ToolError, match="is not a tuner's lock file"):
        with tuning_lock(fut):
            pass
    assert lock_path(fut).read_text() == "a note of the user's\n"


def test_a_stale_lock_and_temporary_files_of_a_killed_tuner_are_cleaned_up(tmp_path):
    fut, program = workspace(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    lock_path(fut).write_text(f"{pid}\n")
    stale = [tmp_path / f".prog.fut.tuning.{pid}-0123456789ab.tmp", tmp_path / f".prog.{pid}-0123456789ab.tmp"]
    for path in stale:
        path.write_text("half")
    alive = tmp_path / f".prog.{os.getpid()}-0123456789ab.tmp"  # a live writer's: kept
    alive.write_text("mine")
    done = run_tuner(fut, program)
    assert done.returncode == 0, done.stderr
    assert not lock_path(fut).exists() and not any(p.exists() for p in stale) and alive.exists()


# --- budgets, early stops and Ctrl-C ---


def test_a_tuning_file_no_tuner_wrote_is_replaced_only_with_force(tmp_path):
    fut, program = workspace(tmp_path)
    tuning = fut.with_name("prog.fut.tuning")
    tuning.write_text(f"-- my own values\n{T1}=5\n")
    with pytest.raises(ToolError, match=f"{re.escape(str(tuning))} exists and was not written by incflat "
                                         r"autotune; refusing to overwrite it \(--force replaces it\)"):
        autotune(TuneRequest(fut, program, Measuring(runs=1), writing=Writing(out=io.StringIO())))
    assert tuning.read_text() == f"-- my own values\n{T1}=5\n" and program.read_bytes() == FAKE.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog", "prog.fut", "prog.fut.tuning"]
    tuning.write_text(f"\n{T1}=5\n")  # a blank first line hides nothing
    with pytest.raises(ToolError, match="not written by incflat autotune"):
        autotune(TuneRequest(fut, program, Measuring(runs=1), writing=Writing(out=io.StringIO())))
    tuning.write_text("\n \n")  # nothing to lose
    autotune(TuneRequest(fut, program, Measuring(runs=1), writing=Writing(out=io.StringIO())))
    assert tuning.read_text().startswith("-- tuned by incflat (tree) on ")
    tuning.write_text(f"{T1}=5\n")
    result = run_tuner(fut, program, "--force")
    assert result.returncode == 0, result.stderr
    assert tuning.read_text().startswith("-- tuned by incflat (tree) on ")


def test_the_budget_stops_the_search_and_writes_the_best_so_far(tmp_path):
    fut, program = workspace(tmp_path)
    # 2 probes, 3 untuned runs, T4 in 3 more (one of its 4 experiments is an untuned run) and 4 that confirm its
    # first significant difference on each dataset in a second invocation of each side (the datasets'
    # invocation noise is not known yet); T3 is not reached
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=2, limits=Limits(budget=12)), writing=Writing(out=out)))
    assert result.runs == 12 and result.stopped == "the budget of 12 program runs is spent"
    assert set(result.assignment) == {T1, T2, T3, T4}
    # not tuned yet: at the program's defaults (the fake device's default threshold), as during the search
    assert result.assignment[T4] != NEVER and result.assignment[T1] == result.assignment[T3] == 32768
    text = out.getvalue()
    assert "not tuned yet" in text and "stopped early: the budget of 12 program runs is spent" in text
    held = next(d for d in result.datasets if d.held_out)
    assert held.after is None and "tuned: not measured (stopped)" in held.problems
    tuning = fut.with_name("prog.fut.tuning").read_text().splitlines()
    assert sorted(tuning[1:]) == sorted(f"{k}={v}" for k, v in result.assignment.items())


def test_a_budget_spent_before_anything_was_tuned_writes_nothing(tmp_path):
    fut, program = workspace(tmp_path)
    fut.with_name("prog.fut.tuning").write_text(OLD_TUNING)
    done = run_tuner(fut, program, "--budget", "6")
    assert done.returncode == 1
    assert done.stderr == ("Error: stopped: the budget of 6 program runs is spent before any threshold was tuned; "
                           "nothing was written\n")
    assert program.read_bytes() == FAKE.read_bytes() and fut.with_name("prog.fut.tuning").read_text() == OLD_TUNING


def test_stop_after_stops_measuring(tmp_path):
    fut, program = workspace(tmp_path)
    done = run_tuner(fut, program, "--stop-after", "0.2", env={"FAKE_PROGRAM_SLEEP": "0.2"})  # one run: 0.4 s
    assert done.returncode == 1 and "the time limit of 0.2 s (--stop-after) is reached" in done.stderr
    assert Limits(seconds=5, started=time.monotonic() - 10).reason(0) == \
        "the time limit of 5 s (--stop-after) is reached"
    assert Limits(seconds=5, budget=3).reason(2) is None


def test_the_search_leaves_a_share_of_stop_after_for_the_check_against_the_defaults():
    """The search stops at its share of --stop-after; the rest is for the check of its values (closing)."""
    now = time.monotonic()
    limits = Limits(seconds=10, reserve=2, started=now - 9)
    assert limits.reason(0).startswith("the search's share of the time limit of 10 s (--stop-after) is spent")
    limits.closing = True
    assert limits.reason(0) is None
    assert Limits(seconds=10, reserve=2, closing=True, started=now - 11).reason(0) == \
        "the time limit of 10 s (--stop-after) is reached"


@pytest.mark.parametrize("slower", [True, False])
def test_a_stopped_search_whose_values_run_slower_than_the_defaults_keeps_the_defaults(tmp_path, monkeypatch,
                                                                                         slower):
    """A search cut off by --stop-after (LUD's profiled pass, under load, sent 64 down its diagonal's host loop:
    38x Futhark) writes its values only where, timed in turn with the program's defaults in the time it left,
    they run no slower on every tuning dataset; both as the program runs (no experiment key: no --no-fallback,
    under which LUD's defaults failed and so lost to values 18x slower)."""
    driver = importlib.import_module("incflat.tuner.autotune")
    from incflat.tuner.simple import Outcome
    fut, program = workspace(tmp_path)
    reason = "the search's share of the time limit of 60 s (--stop-after) is spent"
    monkeypatch.setitem(driver.STRATEGIES, "tree", lambda space, goal, rng, log: Outcome({T1: 5}, (), reason))
    compared = []

    def in_turn(bench, trials, in_turn, until_stopped):
        for _, first, second in trials:
            assert first.key is None and second.key is None and in_turn and until_stopped
            compared.append((first.label, second.label, bench.limits.closing))
        return slower
    monkeypatch.setattr(driver, "dominates", in_turn)
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=2, limits=Limits(seconds=60)), writing=Writing(out=out)))
    assert compared and set(compared) == {("untuned", "found", True)}  # each tuning dataset
    assert result.stopped == reason
    if slower:
        assert result.assignment == {} and "kept the defaults" in out.getvalue()
    else:  # written (moved inside its plateau towards the default: Space.nearest_defaults)
        assert T1 in result.assignment and "kept the defaults" not in out.getvalue()


def test_sigint_then_sigterm_aborts_without_writing(tmp_path):
    """The first Ctrl-C would write the best so far; a second signal before that aborts."""
    fut, program = workspace(tmp_path)
    fut.with_name("prog.fut.tuning").write_text(OLD_TUNING)
    tuner = start_tuner(fut, program, env={"FAKE_PROGRAM_SLEEP": "0.2"}, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE)
    wait_for(tuner, f"tuning {T3}")
    os.kill(tuner.pid, signal.SIGINT)
    os.kill(tuner.pid, signal.SIGTERM)
    _, stderr = tuner.communicate(timeout=60)
    assert tuner.returncode == 128 + signal.SIGTERM and stderr == "interrupted; nothing was written\n", stderr
    assert program.read_bytes() == FAKE.read_bytes() and fut.with_name("prog.fut.tuning").read_text() == OLD_TUNING


# --- failures that are reported, not fatal ---


def test_a_probe_that_times_out_is_reported_and_the_run_goes_on(tmp_path):
    fut, program = workspace(tmp_path)
    done = run_tuner(fut, program, "--timeout", "2", env={"FAKE_PROGRAM_LOG_SLEEP": "64:5"})
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith('#1 ("64i64'))
    assert row.endswith("failed: the -L run failed: timed out after 2 s"), row
    baked = fut.with_name("prog.fut.tuning").read_text().splitlines()[0]
    assert "datasets: #0" in baked and "#1" not in baked  # tuned on the other dataset only


def test_a_crash_on_a_held_out_dataset_is_reported_and_the_run_goes_on(tmp_path):
    # The untuned program takes V1 on the held-out dataset only (n >= 32768, the device's default threshold).
    fut, program = workspace(tmp_path, "-- ==\n-- input { 64i64 256i64 32i64 }\n-- input { 4096i64 1024i64 16i64 }\n"
                                       "-- notune input { 65536i64 64i64 64i64 }\n")
    done = run_tuner(fut, program, env={"FAKE_PROGRAM_FAIL_LEAF": "1"})
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith('#2 ("65536i64'))
    assert "failed: untuned: exit status 1: Error: version V1 ran out of memory" in row, row


# --- the --log file and the progress bar ---


def test_the_log_has_every_evaluation_and_overwrites_only_its_own_file(tmp_path, capsys):
    fut, program = workspace(tmp_path)
    log = tmp_path / "evaluations.jsonl"
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=1), writing=Writing(log_file=log, out=out)))
    records = log_records(log)
    assert sum(invocations(records).values()) == result.runs
    assert sum(r["source"] == "cached" for r in records) == result.cache_hits
    first = records[0]
    assert set(first) == {"dataset", "params", "key", "label", "times_us", "failure", "wall_s", "source", "seconds"}
    assert first["label"] == "probe" and first["source"] == "untimed"  # the probes come first
    untuned = next(r for r in records if r["label"] == "untuned")
    assert untuned["params"] is None and untuned["source"] == "run"
    assert any(r["key"] and r["params"] and r["times_us"] for r in records)
    assert main([str(fut), str(program), "--no-store", "--no-moderate", "--log", str(log)]) == 0  # its own log
    assert len(log_records(log)) > 0
    notes = tmp_path / "notes.txt"
    notes.write_text("precious\n")
    with pytest.raises(SystemExit) as exit:
        main([str(fut), str(program), "--log", str(notes)])
    assert exit.value.code == 2 and notes.read_text() == "precious\n"
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"incflat autotune: error: --log {notes}: the file exists and is not a log that incflat autotune wrote; "
        "refusing to overwrite it")


@pytest.mark.parametrize("option", ["--log", "--store"])
@pytest.mark.parametrize("where, why", [("missing/file", "no such directory: {tmp}/missing"), (".", "is a directory")])
def test_a_log_or_store_that_cannot_be_written_is_refused_with_the_options(tmp_path, capsys, option, where, why):
    fut, program = workspace(tmp_path)
    path = tmp_path / where
    with pytest.raises(SystemExit) as exit:
        main([str(fut), str(program), option, str(path)])
    assert exit.value.code == 2 and program.read_bytes() == FAKE.read_bytes()
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"incflat autotune: error: {option} {path}: {why.format(tmp=tmp_path)}")
    assert not default_store_path(fut).exists() and not lock_path(fut).exists()


def test_the_result_says_when_the_tuned_values_were_first_measured_on_every_tuning_dataset(tmp_path):
    """Read back from the --log file: per tuning dataset, the invocations up to the first measurement of the
    experiment its tuned run was (the `tuned` record's key); the latest of them is the result's `reached`."""
    fut, program = workspace(tmp_path)
    log = tmp_path / "evaluations.jsonl"
    out = io.StringIO()
    result = autotune(TuneRequest(fut, program, Measuring(runs=2), writing=Writing(log_file=log, out=out)))
    records = log_records(log)
    tuning = [d.name for d in result.datasets if not d.held_out]
    firsts = {}
    for name in tuning:
        tuned_key = next(r["key"] for r in records if r["dataset"] == name and r["label"] == "tuned")
        first = next(i for i, r in enumerate(records) if r["dataset"] == name and r["key"] == tuned_key
                     and r["source"] in ("run", "stored"))
        firsts[name] = sum(map(invoked, records[:first + 1]))
    assert result.reached is not None and result.reached.runs == max(firsts.values())
    assert result.reached.runs < result.runs  # the held-out datasets' tuned runs came after, at least
    at_reach = result.configurations_until(result.reached.runs)
    invocations_so_far = 0
    for end, record in enumerate(records):
        invocations_so_far += invoked(record)
        if invocations_so_far == result.reached.runs:
            break
    assert at_reach == {name: sum(r["dataset"] == name and r["source"] in ("run", "untimed")
                                  for r in records[:end + 1]) for name in tuning}
    assert all(at_reach[d.name] <= d.configurations for d in result.datasets if not d.held_out)
    assert (f"the tuned values were first measured on every tuning dataset after {result.reached.runs} program runs"
            in out.getvalue())


def test_the_progress_bar_shows_on_a_terminal_only(tmp_path):
    fut, program = workspace(tmp_path)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))  # rows, columns (tqdm's width)
    tuner = start_tuner(fut, program, "--no-store", env={"FAKE_PROGRAM_SLEEP": "0.1"}, stdout=subprocess.PIPE,
                        stderr=slave)
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the terminal is closed
            break
        if not chunk:
            break
        shown += chunk
    stdout, _ = tuner.communicate(timeout=60)
    os.close(master)
    assert tuner.returncode == 0
    text = shown.decode(errors="replace")
    assert re.search(r"\| \d+/\d+ \[", text) and "fastest sum" in text, text  # runs of an estimate; best so far
    assert "program runs:" in stdout and "fastest sum" not in stdout
    assert run_tuner(fut, program, "--no-store").stderr == ""  # not a terminal: no bar


@pytest.mark.parametrize("args, words", [
    (["--budget", "0"], "--budget 0: must be at least 1"),
    (["--budget", "x"], "argument --budget: invalid integer"),
    (["--stop-after", "0"], "argument --stop-after: invalid number of seconds: '0' (a positive decimal number, at most 1000000)"),
    (["--max-time", "-1"], "--max-time -1: must be 0 (always --runs runs) or more seconds"),
    (["--max-time", "1e3"], "argument --max-time: invalid number of seconds: '1e3' (a decimal number, 0 or more)"),
    (["--store", "a.db", "--no-store"], "argument --no-store: not allowed with argument --store"),
])
def test_bad_option_values_are_usage_errors_naming_the_option(tmp_path, capsys, args, words):
    with pytest.raises(SystemExit) as exit:
        main([str(tmp_path / "prog.fut"), str(tmp_path / "prog"), *args])
    err = capsys.readouterr().err
    assert exit.value.code == 2 and words in err.strip().splitlines()[-1] and "Traceback" not in err, err



def test_a_measurement_from_the_store_is_the_runs_own(tmp_path):
    """issue 53: a rerun served from the store reported a held-out dataset as `195 ± 205` µs where the run said
    `39.8 ± 25.2`: the runs taken in turn with the untuned program went into the stored measurement of the tuned
    values, but not into the run's own (a candidate without a key keeps its measurement)."""
    store, stored = _store_for(tmp_path)
    program = _StubProgram([
        RunResult(None, "", 1.0, (900.0, 40.0, 39.0, 41.0)),  # the tuned values, as the run measures them
        RunResult(None, "", 2.0, (900.0, 400.0, 20.0), alternate_times_us=((900.0, 401.0, 21.0),)),  # in turn
    ])
    dataset = Dataset("d", "main", InlineValues("1"), True)
    untuned, tuned = Candidate({T1: 32768}, None, "untuned"), Candidate({T1: 2}, None, "tuned")
    first = Bench(program, runs=3, timeout=60.0, log=lambda _: None, max_runs=12, store=stored)
    measured = first.measure(dataset, tuned.params, key=None)
    assert len(first.measure_pair(dataset, untuned, tuned, [measured, measured], 2)) == 2
    again = Bench(_StubProgram([]), runs=3, timeout=60.0, log=lambda _: None, max_runs=12, store=stored)
    assert again.measure(dataset, tuned.params, key=None).times_us == measured.times_us == (40.0, 39.0, 41.0)
    assert again.pairs(dataset, untuned, tuned) == first.pairs(dataset, untuned, tuned)
    store.close()
