"""Differential testing: programs that may fail at run time (an out-of-bounds index, a division by zero, a `:>`
coercion to a wrong size, a false assertion, a negative size), generated with arguments near the edges, give the
same outcome under the reference interpreter and compiled with every code version forced: both fail, or both
succeed with equal values. An internal error on either side (an exception other than the program's own error)
is a failure too. Generators: strategies.failing_programs and failing_inputs."""

import re

from hypothesis import given, note

import known_issues
from conftest import load_and_compile
from incflat.datasets import compare_values
from incflat.compiled import version_assignments
from incflat.harness import Compiled, Interpreter
from strategies import failing_inputs, failing_programs, fuzz_settings

INTERNAL = re.compile(r"^(internal interpreter error|Error: (?!OpenCL)[A-Z]\w*(Error|Exception)\b|Error: the compiled "
                      r"program crashed|Error: no result after)")


def internal(error: str | None) -> bool:
    return error is not None and INTERNAL.search(error) is not None


@fuzz_settings(12)
@given(program=failing_programs(), args=failing_inputs())
def test_interpreter_and_every_compiled_version_agree_on_failures(device, tmp_path_factory, program, args):
    source, entries = program
    note(source)
    note(f"n = {len(args[0])}, i, d, k = {args[4:]}")
    loaded, compiled = load_and_compile(source, tmp_path_factory.mktemp("differential"))
    reproducer = {"source": source, "args": [a.tolist() for a in args]}
    expected = {}
    for entry in entries:
        outcome = Interpreter(loaded).run(entry, args)
        if internal(outcome.error):
            known_issues.report("interpreter crash", f"{entry}: {outcome.error}", reproducer)
        expected[entry] = outcome
    for params in [{}] + version_assignments(compiled):
        runner = Compiled(compiled, device, params, timeout=60)
        for entry in entries:
            got, want = runner.run(entry, args), expected[entry]
            where = f"entry {entry}, parameters {params}"
            if internal(got.error):
                known_issues.report("compiled crash", f"{where}: {got.error}", reproducer)
            elif (got.error is None) != (want.error is None):
                known_issues.report("disagreement", f"{where}: interpreter {want.error or want.values}, "
                                                    f"compiled {got.error or got.values}", reproducer)
            elif got.error is None:
                mismatch = compare_values(list(got.values), list(want.values))
                if mismatch is not None:
                    known_issues.report("different values", f"{where}: {mismatch}", reproducer)
