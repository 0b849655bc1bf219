"""Normalisation keeps the meaning: after every pass, the program is valid source IR and the reference
interpreter gives the same results as on the program the front end produced."""

import pathlib

import numpy as np
import pytest

from incflat import pipeline
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.traverse import walk_exps
from incflat.ir.analysis import has_assertions
from incflat.ir.errors import CompileError
from incflat.ir.types import F32
from incflat.pipeline import source_program
from incflat.ir.interp.interpreter import run_entry
from test_target_interp import PROGRAMS, inputs, same
from incflat.datasets import read_test_cases


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


def test_index_arithmetic_moves_into_the_inner_map():
    """NW's rebuilt matrix: the row's index arithmetic (`r - 1`, `(r - 1) / 16`, `r > 0`) moves into the map
    over the columns, so the nest is perfect (one kernel over both levels when flattened); float arithmetic
    and a division that may fail stay where they are; the results do not change."""
    source = ("entry main [n] (xss: [n][n]i32) (d: i64) (s: f32): [n][n]i32 =\n"
              "  map (\\r -> let up = r - 1 let bi = up / 16 let top = r > 0 let q = r / d let f = s * 2\n"
              "             in map (\\c -> if top && c > 0 then xss[up, c] + i32.i64 (bi + q) + i32.f32 f\n"
              "                           else xss[r, c]) (iota n)) (iota n)\n")
    prog = pipeline.compile(source, "t.fut", until="sink_index_arithmetic")
    (outer,) = [s.exp for s in prog.funs[0].body.stms if isinstance(s.exp, S.Map)]
    kept = [s.exp for s in outer.lam.body.stms[:-1]]
    assert [e.op for e in kept if isinstance(e, S.BinOp)] == ["/"], "r / d stays (s * 2 leaves the map: invariant)"
    (inner,) = [s.exp for s in outer.lam.body.stms if isinstance(s.exp, S.Map)]
    moved = [s.exp.op for s in inner.lam.body.stms if isinstance(s.exp, S.BinOp)]
    assert moved[:3] == ["-", "/", ">"]
    xss = np.arange(36, dtype=np.int32).reshape(6, 6)
    args = [xss, np.int64(3), np.float32(1.5)]
    (want,) = run_entry(source_program(source, "t.fut"), "main", args)
    (got,) = run_entry(prog, "main", args)
    assert np.array_equal(got, want)


def test_after_an_assertion_only_what_cannot_fail_leaves_a_map():
    """A range's check guards what follows it: an iota of the range's length stays in the map (where the map
    has no points it must not run), an iota of an array's dimension leaves it (pathfinder_batch's `iota c`
    after its `1..<r` check: otherwise each thread of the flattened loop wrote a whole row of indices)."""
    source = ("entry main [b][r][c] (xs: [b][r][c]i32): [b][c]i32 =\n"
              "  map (\\x -> loop acc = x[0] for t in 1..<r do map2 (\\a i -> a + i32.i64 i) acc (iota c)) xs\n")
    prog = pipeline.compile(source, "t.fut", until="hoist_invariants")
    outside = [s.exp for s in prog.funs[0].body.stms]
    assert any(isinstance(e, S.Iota) and e.n.name.startswith("c") for e in outside)
    (inner,) = [e for e in outside if isinstance(e, S.Map)]
    assert any(has_assertions(s.exp) for s in inner.lam.body.stms), "the check stays with the map"
    ranged = ("entry main [b][r] (xs: [b][r]i64): [b]i64 =\n"
              "  map (\\x -> loop acc = x[0] for t in 1..<r do acc + reduce (+) 0 (iota (r - 1))) xs\n")
    prog = pipeline.compile(ranged, "t.fut", until="hoist_invariants")
    assert not any(isinstance(s.exp, S.Iota) for s in prog.funs[0].body.stms), "r - 1 may be negative"
    xs = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    (want,) = run_entry(source_program(source, "t.fut"), "main", [xs])
    (got,) = run_entry(pipeline.compile(source, "t.fut", until="hoist_invariants"), "main", [xs])
    assert np.array_equal(got, want)


def test_an_iota_hoisted_out_of_a_map_over_nothing_does_not_fail():
    source = "entry main (n: i64) (m: i64): [][]i64 = map (\\i -> map (\\j -> i + j) (iota m)) (iota n)\n"
    args = [np.int64(0), np.int64(-1)]
    (expected,) = run_entry(source_program(source, "t.fut"), "main", args)
    assert expected.shape[0] == 0
    hoisted = pipeline.compile(source, "t.fut", until="hoist_invariants")
    (result,) = run_entry(hoisted, "main", args)
    assert result.shape[0] == 0


def fused_main(source: str) -> list:
    """The expressions of main's body after fuse_into_reductions."""
    return [s.exp for s in pipeline.compile(source, "t.fut", until="fuse_into_reductions").funs[0].body.stms]


def test_a_map_with_several_results_fuses_into_the_scan_that_takes_them_in_another_order():
    source = ("entry main [n] (xs: [n]f32): ([n]f32, [n]f32) =\n"
              "  let (a, b) = unzip (map (\\x -> (x + 1, x * 2)) xs)\n"
              "  in unzip (scan (\\(p0, p1) (q0, q1) -> (p0 + q0, f32.max p1 q1)) (0, -f32.inf) (zip b a))")
    exps = fused_main(source)
    assert not any(isinstance(e, S.Map) for e in exps)
    (scan,) = [e for e in exps if isinstance(e, S.Scanomap)]
    assert len(scan.map_lam.body.result) == 2 and scan.arrs[0].name.startswith("xs")
    xs = np.array([1, -2, 5], np.float32)
    got = run_entry(pipeline.compile(source, "t.fut", until="fuse_into_reductions"), "main", [xs])
    assert np.allclose(got[0], np.cumsum(xs * 2)) and np.allclose(got[1], np.maximum.accumulate(xs + 1))


def test_maps_that_an_outer_fusion_brings_together_are_fused_in_turn():
    exps = fused_main("entry main [n][m] (xss: [n][m]f32) (yss: [n][m]f32): [n][m]f32 =\n"
                      "  map2 (map2 (*)) (map (map (\\x -> x + 1)) xss) yss")
    (outer,) = exps
    assert isinstance(outer, S.Map)
    assert [type(s.exp) for s in outer.lam.body.stms] == [S.Map]


def test_adjacent_maps_without_inner_parallelism_are_fused_side_by_side():
    (both,) = fused_main("entry main [n] (xs: [n]f32) (ys: [n]f32): ([n]f32, [n]f32) =\n"
                         "  (map (\\x -> x + 1) xs, map (\\y -> y * 2) ys)")
    assert isinstance(both, S.Map) and len(both.lam.body.result) == 2
    apart = fused_main("entry main [n] (xs: [n]f32): ([n]f32, [n]f32) =\n"
                       "  let a = map (\\x -> x + 1) xs in (a, map (\\y -> y * a[0]) xs)")
    assert sum(isinstance(e, S.Map) for e in apart) == 2, "the second reads the first's result"
    nested = fused_main("entry main [n][m] (xss: [n][m]f32): ([n]f32, [n][m]f32) =\n"
                        "  (map (\\xs -> f32.sum xs) xss, map (\\xs -> map (\\x -> x * 2) xs) xss)")
    assert sum(isinstance(e, S.Map) for e in nested) == 2, "maps holding parallelism keep their own nests"


def test_a_map_over_rotations_reads_them_through_their_index_function():
    """Pathfinder's step: the map reads its neighbours from rotations of the row. After index_rotations no
    rotation is left (each is read as `a[(i + k) % n]`, as Futhark's index functions do) and the results do
    not change, for any amount (negative, beyond the length) and for an empty row; a rotation used otherwise
    stays."""
    source = ("entry main [n] (xs: [n]i32) (k: i64): ([n]i32, [n]i32) =\n"
              "  let r = rotate k xs\n"
              "  let ys = map3 (\\l c x -> l + 10 * c + 100 * x) (rotate (-1) xs) xs r\n"
              "  let rows = map (\\row -> row[0]) (rotate k (unflatten (xs :> [n * 1]i32) :> [n][1]i32))\n"
              "  in (map2 (+) ys rows, r)\n")
    prog = pipeline.compile(source, "t.fut", until="remove_dead_code")
    rotations = [s for s in prog.funs[0].body.stms if isinstance(s.exp, S.Rotate)]
    assert [s.pat[0].name for s in rotations] == [s.pat[0].name for s in rotations if s.exp.arr.name.startswith("xs")]
    assert len(rotations) == 1, "the rotation that is also a result stays"
    reference = source_program(source, "t.fut")
    for n, k in [(0, 3), (1, -1), (5, 0), (5, 2), (5, -7), (6, 13)]:
        args = [np.arange(n, dtype=np.int32) * 3 - 4, np.int64(k)]
        want, got = run_entry(reference, "main", args), run_entry(prog, "main", args)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), (n, k)


def test_a_replicate_inside_a_map_becomes_a_map_that_distribution_parallelises():
    """LocVolCalib's per-strike grids: `replicate m x` inside a map is `map (\\_ -> x) (iota m)`, a nest of its
    own after distribution (one thread an element), not a loop each point of the outer nest runs alone. A
    replicate at the host level stays a fill; a negative size is still an error only where it is checked."""
    source = ("entry main [n] (xs: [n]f32) (m: i64): ([n][m]f32, [m]f32) =\n"
              "  (map (\\x -> let r = replicate m (x * 2) in map (+ 1) r) xs, replicate m 0)\n")
    prog = pipeline.compile(source, "t.fut", until="replicates_as_maps")
    body = prog.funs[0].body
    assert [type(s.exp).__name__ for s in body.stms if isinstance(s.exp, (S.Replicate, S.Map))] == ["Map", "Replicate"]
    outer = next(s.exp for s in body.stms if isinstance(s.exp, S.Map))
    assert not any(isinstance(s.exp, S.Replicate) for s in outer.lam.body.stms)
    reference = source_program(source, "t.fut")
    for n, m in [(0, 3), (3, 0), (4, 5)]:
        args = [np.arange(n, dtype=np.float32), np.int64(m)]
        want, got = run_entry(reference, "main", args), run_entry(prog, "main", args)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), (n, m)
    versions = pipeline.compile(source, "t.fut", until="flatten")
    kernels = [e for f in versions.funs for e in walk_exps(f.body) if isinstance(e, T.SegMap) and e.level == 1]
    assert any(len(k.ctx) == 2 for k in kernels), "some version runs a thread per element of the replicate"


def test_a_map_over_a_replicate_binds_the_replicated_value():
    """LocVolCalib's coefficient grids: a map over `replicate n (replicate m c)` (also through a copy) binds its
    parameters to the replicated values, so that nothing writes or reads the grids; a map left without arrays
    maps over an iota of its width. Every result agrees with the interpreter's of the program as written."""
    source = ("entry main [n] (xs: [n]f32) (m: i64) (c: f32): ([n][m]f32, [m]f32, [n]f32) =\n"
              "  let grid = replicate n (replicate m c)\n"
              "  let copy = grid\n"
              "  let ys = map2 (\\x row -> map (\\g -> g * x + 1) row) xs copy\n"
              "  let zs = map (\\row -> f32.sum row) grid\n"
              "  in (ys, map (* 2) (replicate m c), map2 (+) zs xs)\n")
    prog = pipeline.compile(source, "t.fut", until="remove_dead_code")
    replicates = [e for f in prog.funs for e in walk_exps(f.body) if isinstance(e, S.Replicate)]
    assert [e.x.type for e in replicates] == [F32], "only the row that the reduction reads is left to write"
    reference = source_program(source, "t.fut")
    for n, m in [(0, 3), (3, 0), (4, 5)]:
        args = [np.arange(n, dtype=np.float32) - 1, np.int64(m), np.float32(1.5)]
        want, got = run_entry(reference, "main", args), run_entry(prog, "main", args)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), (n, m)


def test_a_coerced_replicate_keeps_its_size_check():
    """`replicate k x :> [n]t` is not read as x: the coercion would go with the dead code, and k != n must fail."""
    source = "entry main [n] (xs: [n]f32) (k: i64): [n]f32 = map2 (+) xs (replicate k 1f32 :> [n]f32)\n"
    prog = pipeline.compile(source, "t.fut", until="remove_dead_code")
    args = [np.arange(3, dtype=np.float32), np.int64(3)]
    np.testing.assert_array_equal(run_entry(prog, "main", args)[0], [1, 2, 3])
    with pytest.raises(Exception, match=r"Cannot coerce an array of shape \[2\] to shape \[3\]"):
        run_entry(prog, "main", [np.arange(3, dtype=np.float32), np.int64(2)])
