"""`incflat test` and `incflat run`: the cases of `-- ==` blocks run through a compiled program (or the reference
interpreter) and checked as `futhark test` checks them (`datasets.compare_values`).

The parts, usable one by one (tests/test_corpus.py does):

- `load_program(path)`: the source text, the checked source IR and the test cases of a .fut file;
- `prepare(program)`: each case of each entry point with its input values and what is expected of it
  (`plan` and `with_values`: the same, one case's values at a time);
- `check(case, outcome)`: the failure message of one run, or None;
- `Interpreter(program)` and `Compiled(compiled file, device, overrides)`: run an entry point, giving an `Outcome`
  (compiled programs run in a worker process, so that one that crashes or hangs only fails its case);
- `run_tests(paths, ...)`: the whole `incflat test` command.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TextIO

from incflat import pipeline
from incflat.compiled import compile_cached, import_module
from incflat.datasets import (
    BACKEND_EXCLUDED_TAGS,
    AutoOutput,
    CompileErrorBlock,
    ExpectedError,
    GeneratedInput,
    InlineValues,
    TestCase,
    ValuesFile,
    compare_values,
    expand_paths,
    expected_compile_error,
    parse_test_cases,
    random_values,
    read_values_of,
)
from incflat.ir.errors import (CompileError, ToolError, Unsupported, format_error, format_run_error, not_a_file,
                               read_source, source_of)
from incflat.ir.runtime.errors import unknown_entry_point
from incflat.ir.types import NUMPY_DTYPES

DEFAULT_TIMEOUT = 300.0  # seconds for one run of a compiled program


# ---------------------------------------------------------------------------------------------------------
# The compile cache


# ---------------------------------------------------------------------------------------------------------
# Programs, cases and what is expected of them


@dataclass
class Program:
    path: pathlib.Path
    text: str
    cases: list[TestCase]
    source: object = None  # the checked source IR (ir.source.Program); None when the front end rejected it
    error: CompileError | None = None  # the front end's error
    compile_error: CompileErrorBlock | None = None  # a test block's expectation that the compiler rejects it


def load_program(path: pathlib.Path) -> Program:
    """Reads a .fut file and its test cases (ToolError for a bad test block); the front end's CompileError is
    kept in `.error` rather than raised, so that callers can report it with the cases it fails."""
    try:
        text = read_source(path)
    except OSError as e:
        raise ToolError(f"cannot read {path}: {e.strerror}") from None
    except CompileError as e:  # not UTF-8: no test cases can be read either
        return Program(path, path.read_bytes().decode("utf-8", errors="replace"), [], error=e)
    cases = parse_test_cases(text, path)
    program = Program(path, text, cases, compile_error=expected_compile_error(text, path))
    try:
        program.source = pipeline.source_program(text, str(path))
    except CompileError as e:
        program.error = e
    return program


@dataclass
class Prepared:
    """One case for one entry point, with its input values and what is expected."""

    case: TestCase
    entry: str
    inputs: list | None  # None when the input could not be read (see `problem`)
    kind: str  # "values", "error", "success"
    expected: list | None = None  # for "values"
    regex: str | None = None  # for "error"
    problem: str | None = None  # a reason the case fails before it runs (unreadable input, failed reference)
    skip: str | None = None  # a reason the case is not run (disable, compiled-only under the interpreter)

    @property
    def title(self) -> str:
        where = f"{self.case.fut_path}:{self.case.line}"
        return f"{where}: entry {self.entry}, case {self.case.name}"


def prepare(program: Program, interpreted: bool = False, exclude: Sequence[str] = ()) -> list[Prepared]:
    """Every (case, entry) of the program with inputs read or generated and expected values read or, for
    `auto output`, computed by the reference interpreter; cases with a tag in `exclude` are left out."""
    return [with_values(p, program) for p in plan(program, interpreted, exclude)]


def plan(program: Program, interpreted: bool = False, exclude: Sequence[str] = ()) -> list[Prepared]:
    """Every (case, entry) of the program, what kind of result it expects and whether it is skipped, no values
    read yet: `with_values` reads them one case at a time, as futhark test does, so that a program with many
    large cases holds one case's values at once."""
    out = []
    for case in program.cases:
        tags = case.run_tags | case.block_tags
        if tags & set(exclude):
            continue
        for entry in case.entries:
            p = Prepared(case, entry, None, "success")
            left_out = tags & ({"notest"} | BACKEND_EXCLUDED_TAGS)  # as futhark test leaves them out
            if "disable" in tags:
                p.skip = "disabled"
            elif left_out:
                p.skip = f"tagged {min(left_out)}"
            elif interpreted and "compiled" in case.run_tags:
                p.skip = "tagged compiled"
            if isinstance(case.expected, ExpectedError):
                p.kind, p.regex = "error", case.expected.regex
            elif isinstance(case.expected, (InlineValues, ValuesFile, AutoOutput)):
                p.kind = "values"
            out.append(p)
    return out


def with_values(p: Prepared, program: Program, timeout: float | None = None, runner=None) -> Prepared:
    """`p` with its inputs and expected values (read, or computed by the reference interpreter, in `timeout`
    seconds at most); a `script input` is computed by `runner` (an Interpreter or a Compiled program)."""
    inputs, problem = _inputs(p.case, program, runner)
    p = replace(p, inputs=inputs, problem=problem)
    expected = p.case.expected
    if isinstance(expected, (InlineValues, ValuesFile)):
        try:
            p.expected = read_values_of(expected)
        except (OSError, ValueError) as e:
            p.problem = p.problem or f"cannot read the expected output: {e}"
    elif isinstance(expected, AutoOutput) and p.problem is None and p.skip is None:
        p.expected, p.problem = _reference(program, p.entry, inputs, timeout)
    return p


def _inputs(case: TestCase, program: Program | None = None, runner=None) -> tuple[list | None, str | None]:
    if isinstance(case.input, GeneratedInput):
        if case.input.kind == "script":
            return _script_inputs(case, program, runner)
        if case.input.kind != "random":
            return None, f"{case.input.kind} input is not supported"
        try:
            return random_values(case.input.text, case.input.start), None
        except ToolError as e:  # an item that is no type or too large to make, located in the block
            return None, str(e)
    try:
        return read_values_of(case.input), None
    except (OSError, ValueError) as e:
        return None, f"cannot read the input: {e}"


def _script_inputs(case: TestCase, program: Program | None, runner) -> tuple[list | None, str | None]:
    """The values of a `script input` (script.py), its entry points run by `runner`."""
    from incflat import script

    if runner is None or program is None or program.source is None:
        return None, "script input needs the program to run"
    source = case.input
    try:
        text = source.file.read_text() if source.file is not None else source.text
    except OSError as e:
        return None, f"cannot read the script {source.file}: {e.strerror}"

    entries = [f.name for f in program.source.entries]

    def call(entry: str, args: list) -> list:
        if entry not in entries:
            raise ToolError(f"script input: {unknown_entry_point(entry, entries)}")
        outcome = runner.run(entry, args)
        if outcome.error is not None:
            raise ToolError(f"script input: {entry}: {outcome.error}")
        return list(outcome.values)

    def param_types(entry: str) -> list | None:
        try:
            fun = program.source.fun(entry)
        except KeyError:
            return None
        return [NUMPY_DTYPES[getattr(p.type, "elem", p.type).name] for p in fun.params]
    try:
        return script.evaluate(text, call, param_types, case.fut_path.parent), None
    except ToolError as e:
        return None, str(e)


def _reference(program: Program, entry: str, inputs: list, timeout: float | None) -> tuple[list | None, str | None]:
    if program.source is None:
        return None, "auto output needs the reference interpreter, but the program does not compile"
    outcome = Interpreter(program, timeout).run(entry, inputs)
    if outcome.error is not None:
        return None, f"the reference interpreter failed (auto output): {outcome.error}"
    return list(outcome.values), None


# ---------------------------------------------------------------------------------------------------------
# Running and checking


@dataclass
class Outcome:
    values: tuple | None = None
    error: str | None = None  # the message of a failed run (what stderr would say)


class Interpreter:
    """The reference interpreter as a runner; a run longer than `timeout` seconds is stopped (in the main
    thread, where a timer's signal can interrupt it; elsewhere it runs to its end)."""

    def __init__(self, program: Program, timeout: float | None = None):
        self.program = program
        self.timeout = timeout

    def run(self, entry: str, inputs: list) -> Outcome:
        from incflat.ir.interp.interpreter import run_entry

        try:
            with _deadline(self.timeout):
                return Outcome(values=tuple(run_entry(self.program.source, entry, list(inputs))))
        except _TimedOut:
            return Outcome(error=f"Error: no result after {self.timeout:g} s (the interpreter was stopped)")
        except CompileError as e:  # InterpError: a run-time error of the program, with its location
            return Outcome(error=format_run_error(e, source_of(e, self.program.path, self.program.text)))
        except RecursionError:
            return Outcome(error="Error: the interpreter ran out of stack")
        except Exception as e:  # noqa: BLE001 - a bug in the interpreter: a failed case, not a crashed test run
            return Outcome(error=f"internal interpreter error: {type(e).__name__}: {e}")


class _TimedOut(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: float | None):
    """_TimedOut raised in the block after `seconds` (SIGALRM; only in the main thread, and only with a limit)."""
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise _TimedOut()
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Compiled:
    """A compiled program (the file `compile_cached` wrote) run as a library on one device with some tuning
    parameters set, in a worker process: a program that crashes (an integer division by zero in a kernel raises
    SIGFPE on a CPU device) or hangs fails its case instead of taking the test run down with it."""

    def __init__(self, compiled: pathlib.Path, device: str | None = None, overrides: dict | None = None,
                 timeout: float = DEFAULT_TIMEOUT):
        self.request = (str(compiled), device, tuple(sorted((overrides or {}).items())))
        self.timeout = timeout

    def load(self) -> str | None:
        """Loads the program (builds its kernels) ahead of the first run: the error message if that fails."""
        return _worker().call(("load", *self.request), self.timeout).error

    def run(self, entry: str, inputs: list) -> Outcome:
        return _worker().call(("run", *self.request, entry, list(inputs)), self.timeout)


class _Worker:
    """One long-lived process that runs compiled programs, restarted after a crash or a time-out, and after every
    LOADS_PER_WORKER programs loaded (an OpenCL driver may not give back all it took for a context: NVIDIA's ran
    out of host memory after a few hundred contexts in one process)."""

    LOADS_PER_WORKER = 32

    def __init__(self):
        self.process = self.conn = None
        self.loaded = None  # (compiled file, device, overrides) of the program the worker holds
        self.loads = 0

    def call(self, request: tuple, timeout: float) -> Outcome:
        import multiprocessing

        if request[1:4] != self.loaded:
            self.loaded = request[1:4]
            self.loads += 1
            if self.loads > self.LOADS_PER_WORKER:
                self.stop()
        if self.process is None or not self.process.is_alive():
            self.loads = 1
            context = multiprocessing.get_context("spawn")  # no fork of a process that may hold OpenCL state
            self.conn, child = context.Pipe()
            self.process = context.Process(target=_serve, args=(child, os.getpid()), daemon=True)
            self.process.start()
            child.close()
        self.conn.send(request)
        if not self.conn.poll(timeout):
            self.stop()
            self.loaded = None
            return Outcome(error=f"Error: no result after {timeout:g} s (the program was stopped)")
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.process.join(10)
            code = self.process.exitcode
            self.process = self.loaded = None
            return Outcome(error=f"Error: the compiled program crashed ({_describe_exit(code)})")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join(10)
            self.process = None


def _describe_exit(code) -> str:
    import signal

    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


_WORKER = None


def _worker() -> _Worker:
    global _WORKER
    if _WORKER is None:
        import atexit

        _WORKER = _Worker()
        atexit.register(_stop_at_exit, _WORKER)
    return _WORKER


def _stop_at_exit(worker: _Worker) -> None:
    """The worker stopped as the process exits, a Ctrl-C meanwhile ignored (it would only interrupt the stop,
    with a traceback: the process is ending anyway)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker.stop()


def _serve(conn, parent: int) -> None:
    """The worker's loop: ("load" | "run", compiled file, device, overrides[, entry, inputs]) -> Outcome. The
    latest loaded program is kept, so that the runs of one program with one set of parameters share it. The
    worker dies with its parent, whatever kills the parent."""
    import warnings

    from incflat.tuner.children import die_with

    die_with(parent)

    warnings.filterwarnings("ignore", message="Non-empty compiler output")  # pyopencl's, for kernel warnings
    loaded_key, loaded = None, None
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        kind, path, device, overrides = request[:4]
        if (path, device, overrides) != loaded_key:
            loaded_key, loaded = (path, device, overrides), None
            module = None
            try:
                module = import_module(pathlib.Path(path))
                loaded = (module, module.load(device=device, overrides=dict(overrides)))
            except Exception as e:  # noqa: BLE001 - a generated program that does not import, kernels that do not build
                # (the program's own errors say what is wrong; anything else is named by its type)
                own = module is not None and isinstance(e, module.ProgramError)
                why = str(e) if own else f"{type(e).__name__}: {e}"
                loaded = f"Error: loading the compiled program failed: {why}"
        if isinstance(loaded, str):
            conn.send(Outcome(error=loaded))
        elif kind == "load":
            conn.send(Outcome(values=()))
        else:
            conn.send(_call(*loaded, *request[4:]))


def _call(module, library, entry: str, inputs: list) -> Outcome:
    if entry not in module.PROGRAM.entry_points:
        return Outcome(error=f"Error: {unknown_entry_point(entry, module.PROGRAM.entry_points)}")
    try:
        result = getattr(library, entry)(*inputs)
    except module.ProgramError as e:
        return Outcome(error=f"Error: {e}")
    except Exception as e:  # noqa: BLE001 - OpenCL errors and bugs in the generated code
        return Outcome(error=f"Error: {type(e).__name__}: {e}")
    return Outcome(values=result if isinstance(result, tuple) else (result,))


def check(p: Prepared, outcome: Outcome) -> str | None:
    """Why the run of a prepared case failed, or None if it passed."""
    if p.kind == "error":
        if outcome.error is None:
            return f"expected an error matching /{p.regex}/, but the program succeeded"
        try:
            if re.search(p.regex, outcome.error):
                return None
        except re.error as e:
            return f"bad error regex /{p.regex}/: {e}"
        return f"expected an error matching /{p.regex}/, got:\n{_indent(outcome.error)}"
    if outcome.error is not None:
        return f"the run failed:\n{_indent(outcome.error)}"
    if p.kind == "values":
        return compare_values(list(outcome.values), p.expected)
    return None


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


# ---------------------------------------------------------------------------------------------------------
# The `incflat test` command


# What became of a file under `incflat test`: it passed, was skipped, or the kind of its first failure.
PASSED, SKIPPED = "passed", "skipped"
REJECTED = "rejected"  # the compiler refused a program whose cases expect it to run
ACCEPTED = "accepted"  # a program expected to be refused at compile time compiled
OTHER_MESSAGE = "other message"  # refused at compile time as expected, with a message the regex does not match
WRONG = "wrong"  # a run gave other values than expected, or succeeded where an error was expected
FAILED = "failed"  # a run failed, or failed with another error than expected; the test could not run


@dataclass
class Summary:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    files: dict = field(default_factory=dict)  # path -> (PASSED, SKIPPED or a kind of failure, its first message)

    def line(self) -> str:
        text = f"{self.passed} passed, {self.failed} failed"
        return text + (f", {self.skipped} skipped" if self.skipped else "")


def run_tests(paths: Sequence[pathlib.Path], device: str | None = None, interpreted: bool = False,
              out: TextIO | None = None, verbose: bool = False, timeout: float = DEFAULT_TIMEOUT,
              verify: bool | None = None, exclude: Sequence[str] = ()) -> Summary:
    """Runs every case of every file (folders are searched for .fut files), prints what failed or was skipped
    and the summary line `N passed, M failed[, K skipped]`, and returns the counts."""
    out = out or sys.stdout
    summary = Summary()
    for path in expand_paths(paths):
        run_test_file(path, summary, device, interpreted, out, verbose, timeout, verify, exclude)
    print(summary.line(), file=out)
    return summary


def run_test_file(path: pathlib.Path, summary: Summary, device: str | None, interpreted: bool, out: TextIO,
                  verbose: bool, timeout: float = DEFAULT_TIMEOUT, verify: bool | None = None,
                  exclude: Sequence[str] = ()) -> None:
    def fail_file(message: str, count: int, kind: str = FAILED) -> None:
        print(f"{path}:\n{_indent(message)}", file=out)
        summary.failed += max(count, 1)
        summary.files[path] = (kind, message)

    if not path.is_file():
        return fail_file(f"error: {path}: {not_a_file(path)}", 1)
    try:
        program = load_program(path)
        if program.compile_error is not None:
            failure = expected_rejection(program, interpreted, verify)
            if failure is not None:
                return fail_file(failure[1], 1, failure[0])
            summary.passed += 1
            summary.files[path] = (PASSED, "")
            if verbose:
                print(f"{path}: 1 passed (rejected at compile time as expected)", file=out)
            return None
        if program.error is not None:  # the front end rejects the program: every case fails
            message = format_error(program.error, source_of(program.error, path, program.text))
            return fail_file(message, len(program.cases), REJECTED)
        planned = plan(program, interpreted, exclude)
    except ToolError as e:
        return fail_file(f"error: {e}", 1)
    except Exception as e:  # noqa: BLE001 - a crash of the front end or of the interpreter (auto output)
        return fail_file(f"internal compiler error: {type(e).__name__}: {e}", 1)
    runnable = [p for p in planned if p.skip is None]
    summary.skipped += len(planned) - len(runnable)
    if interpreted:
        runner: Interpreter | Compiled = Interpreter(program, timeout)
    else:
        try:
            runner = Compiled(compile_cached(path, program.text, verify=verify), device, timeout=timeout)
        except CompileError as e:
            message = format_error(e, source_of(e, path, program.text))
            if isinstance(e, Unsupported):
                print(f"{path}: skipped: {message.splitlines()[0]}", file=out)
                summary.skipped += len(runnable)
                summary.files[path] = (SKIPPED, message)
                return None
            return fail_file(message, len(runnable), REJECTED)
        except Exception as e:  # noqa: BLE001 - a crash of the compiler
            return fail_file(f"error: the compiler crashed: {type(e).__name__}: {e}", len(runnable))
        problem = runner.load() if runnable else None
        if problem is not None:
            return fail_file(problem, len(runnable))
    failures = []
    kind = None
    for p in runnable:
        reason, wrong = None, False
        try:
            p = with_values(p, program, timeout, runner)
        except ToolError as e:
            reason = f"error: {e}"
        except Exception as e:  # noqa: BLE001 - a crash of the interpreter (auto output)
            reason = f"internal compiler error: {type(e).__name__}: {e}"
        else:
            reason = p.problem
            if reason is None:
                outcome = runner.run(p.entry, p.inputs)
                reason = check(p, outcome)
                wrong = outcome.error is None
        if reason is None:
            summary.passed += 1
        else:
            summary.failed += 1
            failures.append(f"{p.title}:\n{_indent(reason)}")
            kind = WRONG if wrong or kind == WRONG else FAILED
    if failures:
        summary.files[path] = (kind, failures[0])
        print(f"{path}:", file=out)
        for failure in failures:
            print(_indent(failure), file=out)
    else:
        summary.files[path] = (PASSED if runnable or not planned else SKIPPED, "")
        if verbose:
            print(f"{path}: {len(runnable)} passed", file=out)
    return None


def expected_rejection(program: Program, interpreted: bool, verify: bool | None) -> tuple[str, str] | None:
    """Why a program whose test block expects a compile-time error fails that test, as (kind, message), or None
    if it passes: it must be rejected (by the front end alone under the interpreter) with a message the block's
    regex matches."""
    expected = program.compile_error
    error = program.error
    if error is None and not interpreted:
        try:
            compile_cached(program.path, program.text, verify=verify)
        except CompileError as e:
            error = e
    where = f"{program.path}:{expected.line}"
    if error is None:
        return ACCEPTED, f"{where}: expected an error matching /{expected.regex}/ at compile time, but the program " \
                         f"compiled"
    message = format_error(error, source_of(error, program.path, program.text))
    try:
        if re.search(expected.regex, message):
            return None
    except re.error as e:
        return FAILED, f"{where}: bad error regex /{expected.regex}/: {e}"
    return OTHER_MESSAGE, f"{where}: expected an error matching /{expected.regex}/ at compile time, got:\n" \
                          f"{_indent(message)}"


# ---------------------------------------------------------------------------------------------------------
# The `incflat run --interpreter` command


def run_interpreted(path: pathlib.Path, argv: Sequence[str], stdin=None, stdout=None) -> int:
    """Runs an entry point under the reference interpreter as a compiled program would run: values on stdin,
    results on stdout. Understands `-e ENTRY`, `-b`, `-r RUNS`, `-t FILE`; errors as file:line:col."""
    import time

    from incflat.ir.runtime import tuning
    from incflat.ir.runtime.program import OptionParser

    from incflat.ir.runtime.values import read_values, write_values

    ap = OptionParser(prog=f"incflat run --interpreter {path}")  # (an error in one line, as a compiled program's)
    ap.add_argument("-e", "--entry-point", default="main")
    ap.add_argument("-b", "--binary-output", action="store_true")
    ap.add_argument("-r", "--runs", type=tuning.option_int, default=1)
    ap.add_argument("-t", "--write-runtime-to")
    args = ap.parse_args(list(argv))
    from incflat.ir.runtime.errors import ProgramError, ReaderGone
    from incflat.ir.runtime.program import check_output_file, write_output_file, write_stdout
    try:
        if (stdin is None and sys.stdin is None) or (stdout is None and sys.stdout is None):
            raise ProgramError(f"{'stdin' if stdin is None and sys.stdin is None else 'stdout'} is closed")
        if args.write_runtime_to:
            check_output_file("-t", args.write_runtime_to)
        if args.runs < 1:  # (as a compiled program says it)
            raise ProgramError(f"-r {args.runs}: the number of runs must be at least 1")
    except ProgramError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    stdin = stdin or sys.stdin.buffer
    program = load_program(path)
    if program.error is not None:
        raise program.error
    try:
        inputs = read_values(stdin)
    except ValueError as e:
        print(f"Error: reading input: {e}", file=sys.stderr)
        return 1
    times, outcome = [], None
    for _ in range(args.runs):
        start = time.perf_counter()
        outcome = Interpreter(program).run(args.entry_point, inputs)
        times.append(round((time.perf_counter() - start) * 1e6))
        if outcome.error is not None:
            print(outcome.error, file=sys.stderr)
            return 1
    try:
        if args.write_runtime_to:
            write_output_file("-t", args.write_runtime_to, lambda f: f.writelines(f"{t}\n" for t in times))
        if stdout is not None:
            write_values(outcome.values, stdout, args.binary_output)
        else:
            write_stdout(lambda out: write_values(outcome.values, out, args.binary_output))
    except ReaderGone:
        return 128 + signal.SIGPIPE
    except ProgramError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    return 0


def run_compiled(path: pathlib.Path, argv: Sequence[str], verify: bool | None = None) -> int:
    """Compiles (through the cache) and runs the program with the given options, stdin and stdout passed on."""
    import subprocess

    from incflat.tuner.children import die_with

    compiled = compile_cached(path, verify=verify)
    parent = os.getpid()  # (the program dies with incflat, whatever kills it)
    return subprocess.run([sys.executable, str(compiled), *argv], check=False,
                          preexec_fn=lambda: die_with(parent)).returncode
