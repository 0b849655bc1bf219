"""The corpus of small programs in tests/programs: each passes its `-- ==` cases under the reference interpreter,
and compiled on every OpenCL device present with every code version forced (the tuning contract's version
enumeration). The programs the backend cannot compile yet are listed in UNSUPPORTED with the construct it
names: each must fail with exactly that `Unsupported` error, and every other program must compile, so that a
feature that regresses fails here rather than turning into a skip."""

import functools
import pathlib

import pytest

from conftest import UNSUPPORTED
from incflat.compiled import compile_cached, version_assignments
from incflat.harness import Compiled, Interpreter, check, load_program, prepare
from incflat.ir.errors import CompileError, Unsupported, format_error
from incflat import pipeline
from incflat.datasets import ExpectedError, InlineValues, ValuesFile

PROGRAMS_DIR = pathlib.Path(__file__).resolve().parent / "programs"
PROGRAMS = sorted(PROGRAMS_DIR.glob("*.fut"))
SHOWN_FAILURES = 5


def ids(path: pathlib.Path) -> str:
    return path.stem


@functools.cache
def prepared(path: pathlib.Path):
    """The program and its cases with inputs and expected values (auto output from the interpreter), once."""
    program = load_program(path)
    if program.error is not None:
        return program, None
    return program, prepare(program)


def front_end_ok(path: pathlib.Path):
    program, cases = prepared(path)
    if program.error is not None:
        pytest.fail("the front end rejects the program:\n" + format_error(program.error, program.text))
    return program, cases


def run_cases(cases, runner, interpreted: bool) -> list:
    failures = []
    for p in cases:
        # the corpus runs every case: one disabled or tagged out (notest, no_opencl) is not left out silently
        assert p.skip is None, f"{p.title}: {p.skip}: run it, or take it out of the corpus"
        if interpreted and "compiled" in p.case.run_tags:
            continue  # only compiled: test_compiled_every_version runs it
        reason = p.problem or check(p, runner.run(p.entry, p.inputs))
        if reason is not None:
            failures.append(f"{p.title}:\n{reason}")
    return failures


# ---------------------------------------------------------------------------------------------------------
# The corpus itself


def test_the_corpus_is_large_and_checks_real_outputs():
    assert len(PROGRAMS) >= 60
    explicit = errors = 0
    for path in PROGRAMS:
        program = load_program(path)
        assert program.cases, f"{path.name} has no test cases"
        kinds = [type(c.expected) for c in program.cases]
        assert any(k in (InlineValues, ValuesFile) for k in kinds), f"{path.name}: only auto outputs"
        explicit += sum(k in (InlineValues, ValuesFile) for k in kinds)
        errors += sum(k is ExpectedError for k in kinds)
    assert explicit >= 150 and errors >= 10


def test_the_whole_corpus_checks():
    texts = [(path.read_text(), str(path)) for path in PROGRAMS]
    rejected = []
    for text, name in texts:
        try:
            pipeline.compile(text, name, until="check", verify_stages=False)
        except CompileError as e:
            rejected.append(f"{name}: {e}")
    assert not rejected, "\n".join(rejected)


# ---------------------------------------------------------------------------------------------------------
# Under the interpreter


@pytest.mark.parametrize("path", PROGRAMS, ids=ids)
def test_interpreter(path):
    program, cases = front_end_ok(path)
    failures = run_cases(cases, Interpreter(program), interpreted=True)
    assert not failures, f"{len(failures)} cases fail:\n" + "\n".join(failures[:SHOWN_FAILURES])


# ---------------------------------------------------------------------------------------------------------
# Compiled, every version


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """path -> the compiled module, or the CompileError of compiling it (each program compiled once)."""
    cache = tmp_path_factory.mktemp("corpus-cache")
    results = {}

    def get(path: pathlib.Path):
        if path not in results:
            try:
                results[path] = compile_cached(path, cache=cache)
            except CompileError as e:
                results[path] = e
        return results[path]
    return get


EXAMPLES = [PROGRAMS_DIR.parent.parent / "futhark_examples" / "locvolcalib.fut"]


@pytest.mark.parametrize("path", PROGRAMS + EXAMPLES, ids=ids)
def test_compiled_every_version(path, device, compiled):
    program, cases = front_end_ok(path)
    result = compiled(path)
    if path.stem in UNSUPPORTED:
        assert isinstance(result, Unsupported), f"{path.name} compiles now: take it out of UNSUPPORTED"
        assert result.what == UNSUPPORTED[path.stem] and result.loc is not None, format_error(result, program.text)
        return
    if isinstance(result, CompileError):
        pytest.fail(format_error(result, program.text))
    failures = []
    for params in version_assignments(result):
        shown = " ".join(f"{k}={v}" for k, v in params.items()) or "(no thresholds)"
        runner = Compiled(result, device, params)
        problem = runner.load()
        assert problem is None, f"[{shown}] {problem}"
        failures += [f"[{shown}] {f}" for f in run_cases(cases, runner, interpreted=False)]
    assert not failures, f"{len(failures)} runs fail:\n" + "\n".join(failures[:SHOWN_FAILURES])
