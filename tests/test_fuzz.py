"""Fuzzing: no input ends in a Python traceback or a hang.

- the compiler (API and `incflat check`) on mutated corpus programs and on generated programs, plain and mutated:
  a result or a CompileError (API), exit 0 or a short located error and a non-zero exit (CLI);
- a compiled program on generated stdin (valid and invalid text and binary values) and command lines (odd
  `--param`, `-t`, `-r`, `--tuning` files, unknown options): exit 0, or a non-zero exit with a short error;
- tuning files through the contract's parser (a dict of ints or a ContractError) and through the program;
- host code nested deeper than Python takes in one function, compiled and run against the interpreter.
tests/test_fuzz_commands.py fuzzes incflat's own commands the same way.

Every problem goes to tests/known_issues.py's reporter (which excuses none today; its own tests are at the end);
strategies in tests/strategies.py.

The default run is small and derandomized (CI). The long run, random, INCFLAT_FUZZ_FACTOR (default 100) times as
many examples, with every problem logged as a JSON line (reproducer included) instead of stopping at the first:

    INCFLAT_FUZZ=long INCFLAT_FUZZ_FACTOR=20 INCFLAT_FUZZ_LOG=findings.jsonl \
        python -m pytest -q --hypothesis-show-statistics tests/test_fuzz.py tests/test_fuzz_commands.py \
        tests/test_differential.py

(`--hypothesis-profile=long` selects the profile too.)"""

import io
import json
import os
import re
import signal
import subprocess
import sys
import traceback

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import known_issues
from conftest import compile_program
from incflat import pipeline
from incflat.ir.runtime import tuning
from incflat.ir.errors import CompileError
from incflat.ir.runtime.values import read_values
from strategies import (
    deep_host_programs,
    failing_programs,
    fuzz_settings,
    mutated_sources,
    mutation,
    option_lists,
    programs,
    tuning_file_bytes,
    tuning_texts,
    value_bytes,
)

COMPILE_SECONDS = 60  # a compilation (or a run of a compiled program) that takes longer is a hang
RUN_SECONDS = 60
# located errors, and one-line errors of incflat and of compiled programs (`prog: error: ...` for options)
ERROR_HEAD = re.compile(r"^(\S.*:\d+:\d+: error: |error: |incflat: error: |Error: |\S+: error: "
                        r"|incflat run --interpreter \S+: error: )")


class Hang(BaseException):
    """Raised by the alarm in the middle of a compilation that took too long (not an Exception: nothing in the
    compiler catches it)."""


def _alarm(signum, frame):
    raise Hang


def compile_outcome(text: str, until: str) -> str | None:
    """None when the compiler gave a result or a CompileError; otherwise the traceback or 'hang'."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(COMPILE_SECONDS)
    try:
        pipeline.compile(text, "fuzz.fut", until=until)
    except CompileError:
        pass
    except Hang:
        return f"hang: no result after {COMPILE_SECONDS} s"
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - what this suite looks for
        return traceback.format_exc()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return None


def check_compiles(source: bytes, until: str) -> None:
    problem = compile_outcome(source.decode("utf-8", "replace"), until)
    if problem is not None:
        known_issues.report(f"compiler ({until})", problem, source.decode("utf-8", "backslashreplace"))


def cli_stderr_problem(proc: subprocess.CompletedProcess | None) -> str | None:
    """What is wrong with how a command ended: a time-out, a traceback, or a failure without a short error."""
    if proc is None:
        return "hang"
    err = proc.stderr.decode("utf-8", "replace")
    if "Traceback (most recent call last)" in err:
        return err
    if proc.returncode == 0:
        return None
    # -D reports the device chosen and its default threshold on lines of their own before anything else, and -P
    # its profile after the runs (an error writing its JSON comes after it)
    lines = [line for line in err.rstrip("\n").splitlines()
             if not line.startswith(("Device: ", "Default threshold: "))]
    profile_end = next((k for k, line in enumerate(lines) if line.startswith("host-device transfers per run:")), None)
    if profile_end is not None and lines[0].startswith("kernel "):
        lines = lines[profile_end + 1:]
    if proc.returncode < 0:
        return f"killed by signal {-proc.returncode}: {err}"
    if lines and lines[0].startswith("usage: ") and re.match(r"\S+( \S+)?: error: ", lines[-1]):  # argparse's
        return None
    if not lines or not ERROR_HEAD.match(lines[0]) or len(lines) > 3:
        return f"exit {proc.returncode} without a short error:\n{err}"
    return None


def run_command(argv: list, stdin: bytes = b"", timeout: float = RUN_SECONDS, stdout=subprocess.PIPE):
    try:
        return subprocess.run(argv, input=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


# ---------------------------------------------------------------------------------------------------------
# The compiler

@fuzz_settings(4)
@given(source=deep_host_programs(), x=st.integers(-4, 4))
def test_deeply_nested_host_code_runs_as_interpreted(tmp_path_factory, device, source, x):
    """A program that compiles runs, however deep its host code nests, with the interpreter's result."""
    from incflat.ir.interp.interpreter import run_entry
    (expected,) = run_entry(pipeline.source_program(source), "main", [np.int64(x)])
    program = compile_program(source, tmp_path_factory.mktemp("deep"))
    proc = run_command([sys.executable, str(program), "-d", device], f"{x}i64".encode())
    problem = cli_stderr_problem(proc) or (None if proc.stdout.decode().strip() == f"{expected}i64" else
                                            f"gave {proc.stdout.decode().strip()}, the interpreter {expected}i64")
    if problem is not None:
        known_issues.report("deep host code", problem, source)


def generated_sources():
    """Generated programs, safe or failing, as bytes, with 0..2 mutations."""
    plain = st.one_of(programs(), failing_programs().map(lambda p: p[0])).map(str.encode)

    @st.composite
    def edited(draw):
        text = draw(plain)
        for _ in range(draw(st.integers(0, 2))):
            text = draw(mutation(text))
        return text

    return edited()


@fuzz_settings(60)
@given(mutated=mutated_sources())
def test_mutated_corpus_programs_check_or_fail_with_a_compile_error(mutated):
    name, source = mutated
    note(f"{name}:\n{source!r}")
    check_compiles(source, "check")


@fuzz_settings(25)
@given(mutated=mutated_sources(max_mutations=2))
def test_mutated_corpus_programs_compile_or_fail_with_a_compile_error(mutated):
    name, source = mutated
    note(f"{name}:\n{source!r}")
    check_compiles(source, "generate")


@fuzz_settings(15)
@given(source=generated_sources())
def test_generated_programs_compile_or_fail_with_a_compile_error(source):
    note(source.decode("utf-8", "backslashreplace"))
    check_compiles(source, "generate")


def incflat_command() -> list:
    return [sys.executable, "-m", "incflat"]


@fuzz_settings(10)
@given(source=st.one_of(mutated_sources().map(lambda m: m[1]), generated_sources()))
def test_incflat_check_ends_with_a_short_error_or_success(tmp_path_factory, source):
    path = tmp_path_factory.mktemp("check") / "fuzz.fut"
    path.write_bytes(source)
    note(source.decode("utf-8", "backslashreplace"))
    problem = cli_stderr_problem(run_command([*incflat_command(), "check", str(path)], timeout=COMPILE_SECONDS))
    if problem is not None:
        known_issues.report("incflat check", problem, source.decode("utf-8", "backslashreplace"))


# ---------------------------------------------------------------------------------------------------------
# A compiled program's stdin and command line

PROGRAM = """
entry main [n][m] (xss: [n][m]f32) (i: i64): ([n]f32, f32) =
  let sums = map (\\xs -> reduce (+) 0 xs) xss
  in (sums, if n == 0 then 0 else sums[i])

entry evens (x: i32) (all: bool): []i64 = filter (\\j -> all || j % 2 == 0) (iota (i64.i32 (i32.min x 100000)))
"""
# (evens's size is capped: a corrupted byte can ask for 167 million elements, whose text takes longer than a
# hang's limit to print on a loaded machine; negative sizes still reach iota's error)
ENTRIES = ("main", "evens")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """The compiled PROGRAM and the names of its tuning parameters."""
    path = compile_program(PROGRAM, tmp_path_factory.mktemp("fuzzed_program"), "fuzzed")
    listing = subprocess.run([sys.executable, str(path), "--print-params"], capture_output=True, check=True)
    return path, [p.name for p in tuning.parse_listing(listing.stdout.decode())]


@st.composite
def intended_arguments(draw):
    entry = draw(st.sampled_from(sorted(ENTRIES)))
    if entry == "evens":
        return entry, [np.int32(draw(st.integers(-3, 20))), np.bool_(draw(st.booleans()))]
    rows, cols = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    xss = np.array(draw(st.lists(st.floats(-100, 100, width=32), min_size=rows * cols, max_size=rows * cols)),
                   np.float32).reshape(rows, cols)
    return entry, [xss, np.int64(draw(st.integers(-1, rows)))]


def run_compiled(path, stdin: bytes, options: list, device: str, stdout=subprocess.PIPE):
    return run_command([sys.executable, str(path), "-d", device, *options], stdin, stdout=stdout)


LONG_ROWS = 10 ** 6  # an input array of this many rows or more (of no elements: a corrupted header) asks for long work


def asks_for_long_work(stdin: bytes) -> bool:
    """Whether the values on stdin hold an array of LONG_ROWS rows or more: main then makes that many sums and
    prints them (a [2080374786][0]f32 ran out of the machine's memory, as it would under Futhark)."""
    try:
        values = read_values(io.BytesIO(stdin))
    except (ValueError, OverflowError, MemoryError):
        return False
    return any(np.ndim(v) and np.shape(v)[0] >= LONG_ROWS for v in values)


def check_run(proc, options: list, tuning_bytes: bytes, stdin: bytes) -> None:
    problem = cli_stderr_problem(proc)
    if problem is not None and (problem == "hang" or problem.startswith("killed by signal")) \
            and asks_for_long_work(stdin):
        return
    if problem is not None:
        known_issues.report("compiled program", problem, {"options": options, "stdin": stdin.hex(),
                                                          "tuning": tuning_bytes.hex()})


@fuzz_settings(20)
@given(data=st.data())
def test_compiled_program_on_generated_stdin(program, device, data):
    path, _ = program
    entry, intended = data.draw(intended_arguments())
    stdin = data.draw(value_bytes(intended))
    note(f"-e {entry}, stdin {stdin!r}")
    check_run(run_compiled(path, stdin, ["-e", entry], device), ["-e", entry], b"", stdin)


@fuzz_settings(20)
@given(data=st.data())
def test_compiled_program_on_generated_command_lines(program, device, tmp_path_factory, data):
    path, params = program
    folder = tmp_path_factory.mktemp("options")
    paths = {"times": folder / "times", "tuning": folder / "t.tuning", "dir": folder, "missing": folder / "no" / "f"}
    tuning_bytes = data.draw(tuning_file_bytes(params))
    paths["tuning"].write_bytes(tuning_bytes)
    options = data.draw(option_lists(sorted(ENTRIES), params, paths))
    entry, intended = data.draw(intended_arguments())
    stdin = data.draw(st.one_of(st.just(b""), value_bytes(intended)))
    note(f"options {options}, tuning file {tuning_bytes!r}, stdin {stdin!r}")
    check_run(run_compiled(path, stdin, ["-e", entry, *options], device), options, tuning_bytes, stdin)


def test_compiled_program_writing_to_a_full_device(program, device):
    path, _ = program
    with open(os.devnull if not os.path.exists("/dev/full") else "/dev/full", "wb") as full:
        proc = run_compiled(path, b"[[1f32]] 0i64", [], device, stdout=full)
    problem = cli_stderr_problem(proc)
    assert proc.returncode != 0
    if problem is not None:
        known_issues.report("compiled program", problem, "prog < '[[1f32]] 0i64' > /dev/full")


# ---------------------------------------------------------------------------------------------------------
# Tuning files

NAMES = ["main.suff_outer_par_0", "main.suff_intra_par_1", "main.segmap_0_tblock_size", "user"]


@fuzz_settings(300)
@given(text=st.one_of(tuning_texts(NAMES), st.text(max_size=40)))
def test_tuning_file_parser_gives_known_integers_or_a_contract_error(text):
    try:
        values = tuning.parse_tuning_file(text, set(NAMES), "fuzz.tuning")
    except tuning.ContractError as e:
        assert str(e).startswith("fuzz.tuning:"), e
        return
    assert set(values) <= set(NAMES) and all(type(v) is int for v in values.values()), values


@fuzz_settings(100)
@given(values=st.dictionaries(st.sampled_from(NAMES), st.integers(-2 ** 63, 2 ** 63)),
       header=st.text(st.characters(blacklist_categories=["Cs", "Zl", "Zp", "Cc"]), max_size=20))
def test_tuning_file_text_reads_back(values, header):
    assert tuning.parse_tuning_file(tuning.tuning_file_text(values, header), set(NAMES), "t") == values


@fuzz_settings(10)
@given(data=st.data())
def test_compiled_program_accepts_exactly_the_tuning_files_the_contract_accepts(program, device, tmp_path_factory,
                                                                                data):
    path, params = program
    tuning_bytes = data.draw(tuning_file_bytes(params))
    file = tmp_path_factory.mktemp("tuning") / "t.tuning"
    file.write_bytes(tuning_bytes)
    note(repr(tuning_bytes))
    proc = run_compiled(path, b"[[1f32, 2f32]] 0i64", ["--tuning", str(file)], device)
    check_tuning_run(proc, tuning_bytes, params, file)


def check_tuning_run(proc, tuning_bytes: bytes, params: list, file) -> None:
    """A run with the tuning file `file`: a short error or success, and success exactly when the contract
    accepts the file."""
    problem = cli_stderr_problem(proc)
    if problem is not None:
        known_issues.report("compiled program --tuning", problem, tuning_bytes.hex())
        return
    try:
        tuning.parse_tuning_file(tuning_bytes.decode("utf-8"), set(params), str(file))
        accepted = True
    except (UnicodeDecodeError, tuning.ContractError):
        accepted = False
    if accepted != (proc.returncode == 0):
        known_issues.report("tuning file: program and contract disagree",
                            f"exit {proc.returncode}, contract {'accepts' if accepted else 'rejects'}: "
                            f"{proc.stderr.decode(errors='replace')}", tuning_bytes.hex())


# ---------------------------------------------------------------------------------------------------------
# The reporter itself: a planted problem on each path fails the test, or under INCFLAT_FUZZ_LOG is logged

PLANTED = "Traceback (most recent call last):\n  File \"prog\", line 1\nValueError: planted\n"


def planted_run(returncode: int, stderr: str = PLANTED) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(["prog"], returncode, b"", stderr.encode())


def planted_problems(monkeypatch) -> list:
    """Each reporting path given a problem: (what it reports: kind, part of the problem, reproducer; the call)."""
    def crash(*args, **kwargs):
        raise ValueError("planted")
    monkeypatch.setattr(pipeline, "compile", crash)
    return [
        (("compiler (check)", "ValueError: planted", "entry main = 1"),
         lambda: check_compiles(b"entry main = 1", "check")),
        (("compiled program", PLANTED, {"options": ["-r", "2"], "stdin": "31", "tuning": ""}),
         lambda: check_run(planted_run(1), ["-r", "2"], b"", b"1")),
        (("compiled program", "hang", {"options": [], "stdin": "", "tuning": ""}),
         lambda: check_run(None, [], b"", b"")),
        (("compiled program --tuning", PLANTED, b"x=1".hex()),
         lambda: check_tuning_run(planted_run(1), b"x=1", ["x"], "t.tuning")),
        # a program that accepts a tuning file the contract rejects (it names an unknown parameter)
        (("tuning file: program and contract disagree", "exit 0, contract rejects: ", b"y=1".hex()),
         lambda: check_tuning_run(planted_run(0, ""), b"y=1", ["x"], "t.tuning")),
    ]


def test_a_planted_problem_fails_the_test_naming_it(monkeypatch):
    monkeypatch.delenv("INCFLAT_FUZZ_LOG", raising=False)
    for (kind, problem, reproducer), report in planted_problems(monkeypatch):
        with pytest.raises(AssertionError) as failure:
            report()
        message = str(failure.value)
        assert message.startswith(f"{kind}: ") and problem in message, message
        assert message.endswith(f"\nreproducer: {reproducer!r}"), message


def test_under_incflat_fuzz_log_a_planted_problem_is_logged_and_the_example_passes(monkeypatch, tmp_path):
    log = tmp_path / "findings.jsonl"
    monkeypatch.setenv("INCFLAT_FUZZ_LOG", str(log))
    planted = planted_problems(monkeypatch)
    for _, report in planted:
        report()
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(entry["kind"], entry["reproducer"]) for entry in logged] == [(k, r) for (k, _, r), _ in planted]
    assert all(problem in entry["problem"] for entry, ((_, problem, _), _) in zip(logged, planted)), logged
