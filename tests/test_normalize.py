"""Normalisation keeps the meaning: after every pass, the program is valid source IR and the reference
interpreter gives the same results as on the program the front end produced."""

import pathlib

import numpy as np
import pytest

from incflat import pipeline
from incflat.ir import source as S
from incflat.ir.errors import CompileError
from incflat.pipeline import source_program
from incflat.ir.interp import run_entry
from test_target_interp import PROGRAMS, inputs, same
from incflat.tuner.datasets import read_test_cases


def first_cases(path: pathlib.Path) -> list:
    """(entry, arguments) of the first runnable case of each entry point."""
    seen, found = set(), []
    for case in read_test_cases(path):
        args = inputs(case)
        for entry in case.entries:
            if args is not None and entry not in seen:
                seen.add(entry)
                found.append((entry, args))
    return found


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_every_pass_keeps_the_results(path):
    prog = source_program(path.read_text(), str(path))
    cases = []
    for entry, args in first_cases(path):
        try:
            cases.append((entry, args, run_entry(prog, entry, args)))
        except CompileError:
            pass  # a run-time error case
    passes = [stage for stage in pipeline.STAGES if stage.takes is S.Program and stage.gives is S.Program]
    assert len(passes) >= 8
    for stage in passes:
        prog = stage(prog, pipeline.Options())
        for entry, args, expected in cases:
            got = run_entry(prog, entry, args)
            assert all(same(g, e) for g, e in zip(got, expected)), (stage.name, entry)


def test_a_chain_of_a_thousand_calls_is_inlined_into_the_entry_point():
    n = 1000
    src = "\n".join(["def f0 (x: i32) = x + 1"] + [f"def f{i} (x: i32) = f{i - 1} x + 1" for i in range(1, n)]
                    + [f"entry main (x: i32) = f{n - 1} x"])
    inlined = pipeline.compile(src, "chain.fut", until="inline_calls")
    assert [f.name for f in inlined.funs] == ["main"]  # the other functions are called no more
    assert not any(isinstance(s.exp, S.Apply) for s in inlined.fun("main").body.stms)
    assert tuple(run_entry(inlined, "main", [np.int32(5)])) == (5 + n,)
    target = pipeline.compile(src, "chain.fut", until="prune_unsupported")
    assert [f.name for f in target.funs] == ["main"]


def loop_and_before(source: str):
    """The statements of main's body before its first loop, and the loop, after hoist_invariants."""
    prog = pipeline.compile(source, "t.fut", until="hoist_invariants")
    stms = prog.funs[0].body.stms
    k = next(i for i, s in enumerate(stms) if isinstance(s.exp, S.Loop))
    return stms[:k], stms[k].exp


def test_invariant_statements_leave_a_loop():
    before, loop = loop_and_before(
        "entry main [n] (xs: [n]i32) (k: i64) (d: i64): [n]i32 =\n"
        "  loop acc = xs for t < k do\n"
        "    let is = iota n\n"
        "    let q = n / d\n"
        "    in map2 (\\a i -> a + i32.i64 (i + t + q)) acc is\n")
    assert any(isinstance(s.exp, S.Iota) for s in before), "the iota is made once, before the loop"
    inside = [s.exp for s in loop.body.stms]
    assert not any(isinstance(e, S.Iota) for e in inside)
    assert any(isinstance(e, S.BinOp) and e.op == "/" for e in inside), "a division that may fail stays"
