"""inline_thread_maps: a thread's cheap map results recomputed where their elements are read
(codegen.lower.thread_maps). The corpus program thread_maps.fut checks every version's values."""

import pathlib

from incflat import pipeline
from incflat.codegen.kernel import ScratchParam
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.rename import user_name
from incflat.ir.traverse import walk_exps

PROGRAM = pathlib.Path(__file__).resolve().parent / "programs" / "thread_maps.fut"


def thread_maps(until: str) -> list:
    """The user names of what the maps in the thread-per-row version's body bind, map by map."""
    prog = pipeline.compile(PROGRAM.read_text(), str(PROGRAM), until=until)
    (kernel,) = [e for e in walk_exps(prog.funs[0].body) if isinstance(e, T.SegMap) and T.walks_rows(e)
                 and any(isinstance(s.exp, S.Scanomap) for s in e.body.stms)]
    return [sorted(user_name(p.name) for p in s.pat) for s in kernel.body.stms if isinstance(s.exp, S.Map)]


def test_the_rows_read_element_by_element_are_no_longer_stored():
    before = thread_maps("fuse_scan_postmaps")
    after = thread_maps("inline_thread_maps")
    assert sum(len(names) for names in before) > sum(len(names) for names in after)
    assert sorted(n for names in after for n in names) == ["r", "sq", "t", "tmp", "w"], after


def test_what_must_stay_stays():
    after = {n for names in thread_maps("inline_thread_maps") for n in names}
    assert "sq" in after, "read inside a nested loop: recomputing would repeat it n times"
    assert "r" in after, "returned"
    assert "t" in after, "its input w is updated in place before t is read"


def thread_kernel_scratch(generated) -> int:
    """How many rows of its own in global memory the thread-per-row kernel of the solver takes."""
    (thread,) = [k for k in generated.kernels if k.name.startswith("segmap") and "barrier" not in k.source()
                 and k.source().count("for (long") >= 3 and "ds_" in k.source()]
    return sum(isinstance(p, ScratchParam) for p in thread.params)


def test_the_generated_thread_kernel_writes_fewer_rows():
    text = PROGRAM.read_text()
    before = pipeline.run(pipeline.compile(text, str(PROGRAM), until="fuse_scan_postmaps"), after="inline_thread_maps")
    after = pipeline.compile(text, str(PROGRAM))
    assert thread_kernel_scratch(after) < thread_kernel_scratch(before)


def test_a_result_needing_three_rows_of_the_thread_stays_stored():
    source = ("entry main [m][n] (xs: [m][n]f32) (ys: [m][n]f32) (zs: [m][n]f32) (w: [n]f32): [m]f32 =\n"
              "  map3 (\\x y z -> let s = map4 (\\a b c d -> a + b + c + d) x y z w\n"
              "                  let t = map2 (\\a d -> a * d) x w\n"
              "                  in loop acc = 0 for i < n do acc + s[i] * t[i]) xs ys zs")
    prog = pipeline.compile(source, "t.fut", until="inline_thread_maps")
    (kernel,) = [e for e in walk_exps(prog.funs[0].body) if isinstance(e, T.SegMap) and T.walks_rows(e)
                 and any(isinstance(s.exp, S.Map) for s in e.body.stms)]  # the thread version, not the last step
    stored = [user_name(p.name) for s in kernel.body.stms if isinstance(s.exp, S.Map) for p in s.pat]
    assert stored == ["s"], "s reads x, y and z (w is every thread's); t reads x alone"
