"""Generated programs agree between the reference interpreter and the compiled program (hypothesis).

Each example is one program with several entry points (one compilation, as PoCL builds kernels slowly): random
scalar expressions over i32, i64, f32 and bool, with the operators and prelude functions of the language, used
as the body of a map over input arrays, as the map before a reduction with an associative operator (scalar and
tuple operators), inside a reduction per row of a matrix, under a reduction and a scan whose operator works on
rows (`map2 op`), and in a count that sizes arrays on the host (a size computed on the device). Every entry runs
with the default thresholds and with each code version forced (the tuning contract's version enumeration).

The expressions stay clear of what Futhark leaves undefined or what floating point does not reproduce across
devices: divisors are made non-zero and positive, shift amounts small, float-to-integer conversions and float
equality on computed values are not generated, and floats are reduced only with min and max.
"""

from hypothesis import HealthCheck, given, note, settings

from conftest import load_and_compile
from incflat.datasets import compare_values
from incflat.compiled import version_assignments
from incflat.harness import Compiled, Interpreter
from strategies import inputs, programs


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=programs(), args=inputs())
def test_generated_programs_agree_with_the_interpreter(device, tmp_path_factory, source, args):
    note(source)
    program, compiled = load_and_compile(source, tmp_path_factory.mktemp("generated"))
    vectors, matrix = args
    runs = [(e.name, matrix if e.name in ("s", "c") else vectors) for e in program.source.entries]
    expected = {}
    for entry, entry_args in runs:
        outcome = Interpreter(program).run(entry, entry_args)
        assert outcome.error is None, outcome.error
        expected[entry] = list(outcome.values)
    for params in [{}] + version_assignments(compiled):
        runner = Compiled(compiled, device, params)
        for entry, entry_args in runs:
            got = runner.run(entry, entry_args)
            assert got.error is None, f"{entry} {params}: {got.error}"
            mismatch = compare_values(list(got.values), expected[entry])
            assert mismatch is None, f"{entry} {params}: {mismatch}"
