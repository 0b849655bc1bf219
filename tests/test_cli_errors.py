"""Errors of the `incflat` command itself (docs/errors.md): output paths it refuses, write failures named by
the user's path, and option values; each a one-line error with its exit status, never a traceback."""

import argparse
import os
import subprocess
import sys

import pytest

from incflat.codegen.cprogram import is_native_program
from incflat.codegen.program import is_compiled_program

from conftest import ROOT

SOURCE = "entry main (x: i32): i32 = x + 1\n"


def incflat(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "incflat", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def one_line_error(proc, status, *words):
    assert proc.returncode == status, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert all(w in lines[0] for w in words), lines[0]


def test_a_program_that_is_not_a_file_is_named_with_why(tmp_path):
    folder = tmp_path / "d.fut"
    folder.mkdir()
    one_line_error(incflat("check", folder), 1, f"{folder}: is a directory")
    one_line_error(incflat("check", tmp_path / "none.fut"), 1, f"{tmp_path / 'none.fut'}: no such file")
    one_line_error(incflat("check", "/dev/null"), 1, "/dev/null: not a regular file")


def test_compile_never_overwrites_its_source(tmp_path):
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    one_line_error(incflat("compile", fut, "-o", fut), 2, str(fut), "source")
    assert fut.read_text() == SOURCE
    # nor with --force, nor another .fut file
    one_line_error(incflat("compile", fut, "-o", fut, "--force"), 2, str(fut))
    other = tmp_path / "other.fut"
    one_line_error(incflat("compile", fut, "-o", other, "--force"), 2, str(other))
    assert fut.read_text() == SOURCE and not other.exists()


def test_compile_overwrites_only_files_incflat_wrote(tmp_path):
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    notes = tmp_path / "notes.txt"
    notes.write_text("precious\n")
    one_line_error(incflat("compile", fut, "-o", notes), 2, str(notes), "--force")
    assert notes.read_text() == "precious\n"
    folder = tmp_path / "folder"
    folder.mkdir()
    one_line_error(incflat("compile", fut, "-o", folder), 2, str(folder), "directory")
    # a compiled program is replaced; with --force, any other file
    program = tmp_path / "m2"
    assert incflat("compile", fut).returncode == 0 and program.exists()
    assert incflat("compile", fut, "-o", program).returncode == 0
    assert incflat("compile", fut, "-o", notes, "--force").returncode == 0
    assert is_compiled_program(notes) or is_native_program(notes)


def test_autotune_does_not_overwrite_a_file_it_did_not_write(tmp_path):
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    (tmp_path / "m2").write_text("a script of the user's\n")
    one_line_error(incflat("autotune", fut), 2, str(tmp_path / "m2"))
    assert (tmp_path / "m2").read_text() == "a script of the user's\n"


def test_autotune_refuses_while_another_tuner_runs_before_compiling(tmp_path):
    from incflat.tuner.lock import lock_path, tuning_lock
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    with tuning_lock(fut):
        proc = incflat("autotune", fut)
    one_line_error(proc, 1, f"another tuner (pid {os.getpid()}) is tuning {fut}", str(lock_path(fut).absolute()))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m2.fut"]


def test_autotune_refuses_a_tuning_file_it_did_not_write_before_compiling(tmp_path):
    """A hand-written (or another tool's) prog.fut.tuning would be lost: refused, unless --force."""
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    tuning = tmp_path / "m2.fut.tuning"
    tuning.write_text("main.suff_outer_par_0=7\n")
    one_line_error(incflat("autotune", fut), 2, str(tuning), "not written by incflat autotune", "--force")
    assert tuning.read_text() == "main.suff_outer_par_0=7\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m2.fut", "m2.fut.tuning"]


@pytest.mark.parametrize("options, words", [
    (["--store", "x.db", "--log", "x.db"], "--log and --store are one file"),
    (["--log", "m2.fut.tuning.lock"], "--log and the tuning lock are one file"),
    (["--log", "m2.fut.tuning.db"], "--log and the tuning store are one file"),
    (["--store", "m2"], "--store and the program are one file"),
    (["--store", "out", "--plot", "out"], "--store and --plot are one file"),
])
def test_autotune_refuses_two_of_its_files_in_one_place_before_writing(tmp_path, options, words):
    """issue 53: `--store x.db --log x.db` created x.db, then refused it and left it; `--log prog.fut.tuning.lock`
    printed the tuner's internal usage text."""
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    one_line_error(incflat("autotune", fut, *options, cwd=tmp_path), 2, words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m2.fut"]


def test_autotune_checks_its_new_options_before_compiling(tmp_path):
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    notes = tmp_path / "notes.txt"
    notes.write_text("precious\n")
    for args, words in ((["--budget", "0"], ["--budget 0: must be at least 1"]),
                        (["--stop-after", "soon"], ["--stop-after", "invalid number of seconds"]),
                        (["--store", "s.db", "--no-store"], ["--no-store: not allowed with argument --store"]),
                        (["--log", notes], [f"--log {notes}", "refusing to overwrite it"])):
        proc = incflat("autotune", fut, *args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert all(w in proc.stderr.strip().splitlines()[-1] for w in words), proc.stderr
    assert notes.read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m2.fut", "notes.txt"]


def test_write_errors_name_the_users_path_not_a_temporary_file(tmp_path):
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    out = tmp_path / "missing" / "prog"
    proc = incflat("compile", fut, "-o", out)
    one_line_error(proc, 1, str(out), "No such file or directory")
    assert ".tmp" not in proc.stderr


def test_number_options_take_ascii_digits_only(tmp_path):
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    for args, words in ((["autotune", fut, "-r", "\u0663"], ["-r/--runs", "invalid integer"]),
                        (["autotune", fut, "--timeout", "nan"], ["--timeout", "invalid number of seconds"]),
                        (["autotune", fut, "-r", "5", "--max-runs", "2"], ["--max-runs 2", "at least --runs (5)"]),
                        (["autotune", fut, "--max-time", "-1"], ["--max-time -1", "must be 0", "or more seconds"]),
                        (["test", fut, "--timeout", "\u0663"], ["--timeout", "invalid number of seconds"])):
        proc = incflat(*args)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert all(w in proc.stderr.strip().splitlines()[-1] for w in words), proc.stderr
    proc = subprocess.run([sys.executable, "-m", "incflat", "run", "--interpreter", str(fut), "-r", "\u0663"],
                          input="1i32", capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2 and "invalid integer" in proc.stderr and not proc.stdout, proc.stderr


def test_interpreter_run_checks_its_runtimes_file_first(tmp_path):
    fut = tmp_path / "m2.fut"
    fut.write_text(SOURCE)
    proc = subprocess.run([sys.executable, "-m", "incflat", "run", "--interpreter", str(fut), "-t",
                           str(tmp_path / "missing" / "t")], input="1i32", capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    one_line_error(proc, 1, "-t", "No such file or directory")
    assert not proc.stdout


def test_every_help_text_renders():
    """argparse formats help lazily: a stray % in one subcommand's help breaks `incflat --help`."""
    from incflat.cli import build_parser

    parser = build_parser()
    parser.format_help()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        assert sub.format_help(), name


def test_autotune_names_a_strategy_it_does_not_have(tmp_path, capsys):
    from incflat.cli import main as incflat_main
    (tmp_path / "p.fut").write_text("entry main (x: i32) = x\n")
    with pytest.raises(SystemExit) as stop:
        incflat_main(["autotune", "--strategy", "nosuch", str(tmp_path / "p.fut")])
    assert stop.value.code == 2
    assert "argument --strategy: invalid choice: 'nosuch'" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["dataset", "-g", "[10]i32"], ["versions", "PROG"]])
def test_a_full_disk_under_the_output_is_one_line(command, tmp_path):
    """issue 53: `> /dev/full` printed the raw errno text."""
    fut = tmp_path / "p.fut"
    fut.write_text(SOURCE)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "incflat", *[str(fut) if a == "PROG" else a for a in command]],
                              stdout=full, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=300)
    one_line_error(proc, 1, "incflat: error: cannot write the output: No space left on device")


def test_autotune_names_the_program_not_its_temporary_copy(tmp_path):
    """issue 53: `--pass-option=--nosuch` named the temporary file the tuner tunes."""
    fut = tmp_path / "m2.fut"
    fut.write_text("-- ==\n-- input { 1 }\n" + SOURCE)
    proc = incflat("autotune", fut, "--pass-option=--nosuch")
    assert proc.returncode == 1 and ".tmp" not in proc.stdout + proc.stderr, proc.stderr
    assert f"{tmp_path / 'm2'} --print-params failed" in proc.stderr and "--nosuch" in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", [["test", "--timeout", "20271919193"],
                                     ["autotune", "--no-moderate", "--timeout", "3991195"]])
def test_a_time_limit_beyond_the_systems_timers_is_refused(command, tmp_path):
    """issue 53 (the long fuzz run): OverflowError tracebacks from select and poll."""
    fut = tmp_path / "p.fut"
    fut.write_text("-- ==\n-- input { 1 }\n" + SOURCE)
    proc = incflat(command[0], fut, *command[1:])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith("(a positive decimal number, at most 1000000)")
