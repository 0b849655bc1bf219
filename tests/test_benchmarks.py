"""The benchmark suite (futhark_examples/benchmarks): every program agrees with its independent numpy reference
on its `ci` datasets, under the reference interpreter and compiled with every code version forced, and its
`-- ==` block names exactly the datasets its reference module generates."""

import functools
import pathlib
import sys

import pytest

from incflat.compiled import compile_cached, version_assignments
from incflat.harness import Compiled, Interpreter, check, load_program, prepare
from incflat.ir.errors import CompileError, format_error
from incflat.datasets import ValuesFile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "futhark_examples"))
import reference  # noqa: E402

SHOWN_FAILURES = 5


@functools.cache
def ci_cases(program: str):
    """The program and its `ci` cases, prepared with their data files generated (once per process)."""
    for d in reference.datasets(program):
        if "ci" in d.tags:
            reference.ensure(program, d.name)
    loaded = load_program(reference.source(program))
    if loaded.error is not None:
        pytest.fail("the front end rejects the program:\n" + format_error(loaded.error, loaded.text))
    cases = [p for p in prepare(loaded) if "ci" in p.case.run_tags]
    assert cases, f"{program} has no ci dataset"
    return loaded, cases


def failures_of(program: str, cases, runner, label: str) -> list[str]:
    out = []
    for p in cases:
        outcome = runner.run(p.entry, p.inputs)
        reason = p.problem or check(p, outcome) or reference.closeness_problem(program, outcome.values, p.expected)
        if reason is not None:
            out.append(f"[{label}] {p.title}:\n{reason}")
    return out


@pytest.mark.parametrize("program", reference.PROGRAMS)
def test_block_names_the_generated_datasets(program):
    """Each dataset of the reference module is one case of the block, reading and checking its own files."""
    cases = load_program(reference.source(program)).cases
    by_name = {c.name: c for c in cases}
    assert sorted(by_name) == sorted(d.name for d in reference.datasets(program))
    for d in reference.datasets(program):
        case = by_name[d.name]
        in_path, out_path = reference.files(program, d.name)
        assert isinstance(case.input, ValuesFile) and case.input.path.resolve() == in_path, d.name
        if d.checked:
            assert isinstance(case.expected, ValuesFile) and case.expected.path.resolve() == out_path, d.name
        else:
            assert case.expected is None, d.name
        assert set(d.tags) <= case.run_tags, (d.name, d.tags, case.run_tags)
    assert all(d.checked for d in reference.datasets(program) if "ci" in d.tags)
    assert any("ci" in d.tags for d in reference.datasets(program))
    assert any("paper" in d.tags for d in reference.datasets(program))


@pytest.mark.parametrize("program", reference.PROGRAMS)
def test_interpreter_agrees_with_numpy(program):
    loaded, cases = ci_cases(program)
    failures = failures_of(program, cases, Interpreter(loaded), "interpreter")
    assert not failures, "\n".join(failures[:SHOWN_FAILURES])


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    cache = tmp_path_factory.mktemp("benchmarks-cache")
    return functools.cache(lambda program: compile_cached(reference.source(program), cache=cache))


@pytest.mark.parametrize("program", reference.PROGRAMS)
def test_every_version_agrees_with_numpy(program, device, compiled):
    _, cases = ci_cases(program)
    try:
        module = compiled(program)
    except CompileError as e:
        pytest.fail(format_error(e, reference.source(program).read_text()))
    assignments = [{}] + version_assignments(module)  # the defaults, then each version forced
    assert len(assignments) >= 2
    failures = []
    for params in assignments:
        label = " ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
        runner = Compiled(module, device, params)
        problem = runner.load()
        assert problem is None, f"[{label}] {problem}"
        failures += failures_of(program, cases, runner, label)
    assert not failures, f"{len(failures)} runs fail:\n" + "\n".join(failures[:SHOWN_FAILURES])
