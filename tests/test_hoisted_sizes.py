"""An iota or a replicate moved out of a map or a loop that may run no iteration (hoist_invariants) fails on a
negative size exactly where the program as written does: only when that map or loop runs. The reference
interpreter on the source program is the oracle; the hoisted program under the interpreter and the compiled
program with every code version forced must fail or succeed with it, with equal values."""

import numpy as np
import pytest

from conftest import load_and_compile
from incflat import pipeline
from incflat.datasets import compare_values
from incflat.compiled import version_assignments
from incflat.harness import Compiled, Interpreter
from incflat.ir import source as S
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.interp.ops import InterpError
from incflat.ir.traverse import walk_exps
from incflat.pipeline import source_program

I = np.int64
# name: (source, argument lists, whether the size's iota or replicate leaves the map or loop)
PROGRAMS = {
    "iota_in_map": ("entry main (n: i64) (m: i64): [][]i64 = map (\\i -> map (\\j -> i + j) (iota m)) (iota n)",
                    [(0, -1), (2, -1), (0, 3), (2, 3)], True),
    "replicate_in_map": ("entry main (n: i64) (m: i64): [][]i64 =\n"
                         "  map (\\i -> map (\\x -> x + i) (replicate m 7)) (iota n)",
                         [(0, -2), (3, -2), (3, 2)], True),
    "iota_in_nested_maps": ("entry main (a: i64) (b: i64) (m: i64): [][]i64 =\n"
                            "  map (\\i -> map (\\j -> i + j + reduce (+) 0 (iota m)) (iota b)) (iota a)",
                            [(2, 0, -1), (0, 2, -1), (2, 1, -1), (2, 2, 4)], True),
    "iota_in_for_loop": ("entry main (k: i64) (m: i64): i64 =\n"
                         "  loop acc = 1 for t < k do acc + t + reduce (+) 0 (iota m)",
                         [(0, -1), (-3, -1), (2, -1), (3, 5)], True),
    "iota_in_while_loop": ("entry main (k: i64) (m: i64): i64 =\n"
                           "  let (acc, _) = loop (acc, t) = (1, 0) while t < k do\n"
                           "    (acc + reduce (+) 0 (iota m), t + 1)\n"
                           "  in acc",
                           [(0, -1), (2, -1), (3, 5)], True),
    "iota_in_while_loop_reading_an_array": ("entry main [n] (xs: [n]i64) (m: i64): i64 =\n"
                                            "  let (acc, _) = loop (acc, t) = (1, 0) while t < n && xs[t] > 0 do\n"
                                            "    (acc + reduce (+) 0 (iota m), t + 1)\n"
                                            "  in acc",
                                            [([0, 1], -1), ([2, 1], -1), ([3, 0], 5), ([], -1)], False),
}


def arguments(values) -> list:
    return [np.array(v, np.int64) if isinstance(v, list) else I(v) for v in values]


def outcome(run):
    """(error, values): the program's own error or its values."""
    try:
        return None, run()
    except InterpError as e:
        return str(e), None


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_hoisted_size_fails_only_where_the_program_as_written_does(name):
    source, argument_lists, leaves = PROGRAMS[name]
    hoisted = pipeline.compile(source + "\n", "t.fut", until="hoist_invariants")
    top = [s.exp for s in hoisted.funs[0].body.stms]
    sized = [e for e in top if isinstance(e, (S.Iota, S.Replicate)) and e.checked is not None]
    assert bool(sized) == leaves, "the iota or replicate of the possibly negative size leaves its map or loop"
    for values in argument_lists:
        args = arguments(values)
        want_error, want = outcome(lambda: run_entry(source_program(source + "\n", "t.fut"), "main", args))
        got_error, got = outcome(lambda: run_entry(hoisted, "main", args))
        assert (want_error is None) == (got_error is None), (values, want_error, got_error)
        if want_error is None:
            assert compare_values(list(got), list(want)) is None, values
        else:
            assert "Negative size" in want_error and "Negative size" in got_error


def test_every_statement_keeps_its_check_where_the_size_is_known():
    """An iota of a parameter array's dimension needs no condition; a constant one neither."""
    source = ("entry main [n][m] (xss: [n][m]i64): [n]i64 =\n"
              "  map (\\xs -> reduce (+) 0 (map2 (+) xs (iota m)) + reduce (+) 0 (iota 4)) xss\n")
    prog = pipeline.compile(source, "t.fut", until="hoist_invariants")
    iotas = [e for e in walk_exps(prog.funs[0].body) if isinstance(e, S.Iota)]
    assert iotas and all(e.checked is None for e in iotas)


@pytest.mark.parametrize("name", PROGRAMS)
def test_every_compiled_version_fails_only_where_the_program_as_written_does(device, tmp_path_factory, name):
    source, argument_lists, _ = PROGRAMS[name]
    loaded, compiled = load_and_compile(source + "\n", tmp_path_factory.mktemp("hoisted-sizes"))
    for values in argument_lists:
        args = arguments(values)
        want = Interpreter(loaded).run("main", args)
        for params in [{}] + version_assignments(compiled):
            got = Compiled(compiled, device, params, timeout=60).run("main", args)
            where = f"{values}, parameters {params}"
            assert (got.error is None) == (want.error is None), (where, want.error, got.error)
            if want.error is None:
                assert compare_values(list(got.values), list(want.values)) is None, where
            else:
                assert "Negative size" in got.error, (where, got.error)


@pytest.mark.parametrize("name", PROGRAMS)
def test_no_kernel_reads_a_size_check_condition(name):
    """A kernel's copy of a host iota (sink_iotas) runs only where the iota's size check holds, so it needs
    no condition: one would be an argument of every launch."""
    from incflat.ir import target as T
    prog = pipeline.compile(PROGRAMS[name][0] + "\n", "t.fut", until="sink_scalars")
    segops = [e for e in walk_exps(prog.funs[0].body) if isinstance(e, T.SEGOPS)]
    inside = [e for op in segops for e in walk_exps(op.body) if isinstance(e, (S.Iota, S.Replicate))]
    assert all(e.checked is None for e in inside)
