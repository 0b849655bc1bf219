"""The property that matters (without a device): for every corpus program and every dataset, every path
through the version tree (each leaf version, forced by threshold assignments) gives the reference
interpreter's result."""

import io
import pathlib

import numpy as np
import pytest

from incflat.ir.runtime.tuning import build_forest, version_assignments
from incflat.ir.runtime.values import read_values
from incflat.ir.thresholds import thresholds
from incflat.ir.errors import CompileError
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.interp.target import run_target
from incflat.pipeline import source_program, target_program
from incflat.datasets import GeneratedInput, InlineValues, ValuesFile, random_values, read_test_cases

ROOT = pathlib.Path(__file__).parent.parent
PROGRAMS = sorted((ROOT / "tests" / "programs").glob("*.fut")) + [ROOT / "futhark_examples" / "locvolcalib.fut"]


def inputs(case) -> list:
    if isinstance(case.input, InlineValues):
        return read_values(io.BytesIO(case.input.text.encode()))
    if isinstance(case.input, ValuesFile):
        return read_values(open(case.input.path, "rb"))
    if isinstance(case.input, GeneratedInput) and case.input.kind == "random":
        return random_values(case.input.text)
    return None


def same(got, expected) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if got.dtype.kind == "f":
        return np.allclose(got, expected, rtol=1e-4, atol=1e-5, equal_nan=True)
    return np.array_equal(got, expected)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_every_path_agrees_with_the_reference(path):
    text = path.read_text()
    source = source_program(text, str(path))
    target = target_program(text, str(path))
    assignments = version_assignments(build_forest(thresholds(target)))
    checked = 0
    for case in read_test_cases(path):
        args = inputs(case)
        if args is None:
            continue
        for entry in case.entries:
            try:
                expected = run_entry(source, entry, args)
            except CompileError:
                continue  # a run-time error case: the reference fails, so there is nothing to agree with
            for assignment in assignments:
                got = run_target(target, entry, args, assignment)
                assert len(got) == len(expected)
                for g, e in zip(got, expected):
                    assert same(g, e), (case.name, entry, assignment)
                checked += 1
    assert checked > 0, "no case was checked"
