"""What the flattener emits, counted per segop kind and level (like Futhark's `structure gpu` tests),
and the thresholds with their ancestors."""

import pytest

from conftest import ROOT
from incflat.ir.runtime.tuning import parse_threshold_name
from incflat.ir.thresholds import thresholds
from incflat.pipeline import target_program
from incflat.flatten.versions import segop_counts
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.traverse import walk_exps

CASES = [
    # (program, segop counts, number of thresholds)
    ("entry main [n] (xs: [n]f32): [n]f32 = map (+1) xs", {"SegMap1": 1}, 0),
    ("entry main [n] (xs: [n]f32): f32 = reduce (+) 0 xs", {"SegRed1": 1}, 0),
    ("entry main [n] (xs: [n]f32): f32 = reduce (+) 0 (map (*2) xs)", {"SegRed1": 1}, 0),
    # row sums: a map of reduces gives e_top (a thread per row), e_middle (a workgroup per row), e_flat (segred)
    ("entry main [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> reduce (+) 0 xs) xss",
     {"SegMap1": 2, "SegRed0": 1, "SegRed1": 1}, 2),
    ("entry main [n][m] (xss: [n][m]i32): [n][m]i32 = map (\\xs -> map (*2) xs) xss",
     {"SegMap1": 3, "SegMap0": 1}, 2),
    # G6: e_flat distributes the body into a segred, a segmap for the scalar code, and a segmap, which computes
    # the scalar code itself (inline_cheap_maps: the scalar code's segmap is not launched)
    ("entry main [n][m] (xss: [n][m]f32): [n][m]f32 =\n"
     "  map (\\xs -> let s = reduce (+) 0 xs let t = s * 2 + 1 in map (\\x -> x / t) xs) xss",
     {"SegMap1": 3, "SegRed0": 1, "SegMap0": 1, "SegRed1": 1}, 2),
    # G4: column sums become a map of reductions over the transposed matrix
    ("entry main [n][m] (xss: [n][m]f32): [m]f32 = reduce (map2 (+)) (replicate m 0) xss",
     {"SegMap1": 2, "SegRed0": 1, "SegRed1": 1}, 2),
    # G5: a map of transposes is one rearrange, no kernel at all
    ("entry main [k][n][m] (xsss: [k][n][m]i32): [k][m][n]i32 = map transpose xsss", {}, 0),
    # G6: a transpose of a row of the nest, distributed alone, is a rearrange of the nest's array, not a
    # kernel whose threads copy whole rows (7 segmaps before); here on G7's loop-carried array
    ("entry main [k][n] (xss: [k][n][n]f32): [k][n][n]f32 =\n"
     "  map (\\xs -> loop ys = xs for i < 3 do\n"
     "                let zs = map (map (*2)) ys in transpose zs) xss",
     {"SegMap1": 6, "SegMap0": 2}, 4),
    # G7: e_top runs the loop in a kernel; e_middle runs it in a workgroup, around a level-0 segmap; e_flat
    # runs it on the host around a segmap
    ("entry main [n][m] (xss: [n][m]f32) (k: i64): [n][m]f32 =\n"
     "  map (\\xs -> loop ys = xs for i < k do map (\\y -> y * 0.5 + f32.i64 i) ys) xss",
     {"SegMap1": 4, "SegMap0": 1}, 2),
    # G8: e_flat moves the map into both branches; e_middle reduces in a workgroup in either branch
    ("entry main [n][m] (xss: [n][m]f32) (b: bool): [n]f32 =\n"
     "  map (\\xs -> if b then reduce (+) 0 xs else reduce (*) 1 xs) xss",
     {"SegMap1": 2, "SegRed0": 2, "SegRed1": 2}, 2),
    # G9: one segred with the map function sequential, or the map's versions and then a segred
    ("entry main [n][m] (xss: [n][m]f32): f32 =\n"
     "  reduce (+) 0 (map (\\xs -> reduce f32.max 0 (map (\\x -> x * x) xs)) xss)",
     {"SegRed1": 3, "SegMap1": 2, "SegRed0": 1}, 3),
    ("entry main [n] (xs: [n]i32): [n]i32 = scan (+) 0 xs", {"SegScan1": 1}, 0),
    ("entry main [n][m] (xss: [n][m]i32): [n][m]i32 = map (\\xs -> scan (+) 0 xs) xss",
     {"SegMap1": 2, "SegScan0": 1, "SegScan1": 1}, 2),
    # a host loop launches the segmap in each iteration
    ("entry main [n] (xs: [n]f32): [n]f32 = loop ys = xs for i < 10 do map (\\y -> y * 2) ys", {"SegMap1": 1}, 0),
    # a 3-deep nest: G3 at each of the two outer levels
    ("entry main [a][b][c] (x: [a][b][c]f32): [a][b]f32 = map (\\xss -> map (\\xs -> reduce (+) 0 xs) xss) x",
     {"SegMap1": 4, "SegMap0": 1, "SegRed0": 1, "SegRed1": 1}, 4),
    # LocVolCalib's tridag (three scans in a map): three versions; the maps that make each scan's input are
    # fused into it (scanomap): the flat version is three scans and four maps (a fifth, of a row's first
    # elements, the map after it computes: inline_cheap_maps), the intra-group one its scans and maps at level 0
    # inside a segmap, the outer one a thread per row
    ((ROOT / "tests" / "programs" / "tridag.fut").read_text(),
     {"SegMap1": 6, "SegMap0": 4, "SegScan0": 3, "SegScan1": 3}, 2),
    ((ROOT / "tests" / "programs" / "backprop.fut").read_text(),
     {"SegMap1": 10, "SegMap0": 2, "SegRed0": 2, "SegRed1": 2}, 8),
    ((ROOT / "tests" / "programs" / "option_pricing.fut").read_text(),
     {"SegMap1": 5, "SegRed0": 1, "SegRed1": 1}, 2),
    ((ROOT / "futhark_examples" / "matmul.fut").read_text(),
     {"SegMap1": 4, "SegMap0": 1, "SegRed0": 1, "SegRed1": 1}, 4),
]


@pytest.mark.parametrize("source, counts, n_thresholds", CASES, ids=range(len(CASES)))
def test_structure(source, counts, n_thresholds):
    target = target_program(source, "t.fut")
    assert segop_counts(target) == counts
    assert len(thresholds(target)) == n_thresholds


def test_thresholds_form_a_chain_for_matmul():
    target = target_program((ROOT / "futhark_examples" / "matmul.fut").read_text(), "matmul.fut")
    ts = thresholds(target)
    assert [t.name for t in ts] == ["main.suff_outer_par_0", "main.suff_intra_par_1",
                                    "main.suff_outer_par_2", "main.suff_intra_par_3"]
    for k, t in enumerate(ts):
        assert t.ancestors == tuple((u.name, False) for u in ts[:k])
    assert [parse_threshold_name(t.name)[1] for t in ts] == ["outer", "intra", "outer", "intra"]


def test_threshold_numbers_are_unique_across_entry_points():
    source = """
entry a [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> reduce (+) 0 xs) xss
entry b [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> reduce (*) 1 xs) xss
"""
    names = [t.name for t in thresholds(target_program(source, "t.fut"))]
    assert names == ["a.suff_outer_par_0", "a.suff_intra_par_1", "b.suff_outer_par_2", "b.suff_intra_par_3"]


def _level0_contexts(source: str) -> list:
    """The widths of each workgroup-level segmap's context, as the flattener emits them."""
    from incflat.ir import target as T
    target = target_program(source, "t.fut")
    return [tuple(str(b.width) for b in e.ctx) for f in target.funs for e in walk_exps(f.body)
            if isinstance(e, T.SegMap) and e.level == 0]


def test_a_constant_nest_of_maps_is_one_workgroup_level_segmap():
    """NW's blocks: a map over 16 rows of a map over 16 columns runs as 256 points in the intra-group
    version (a thread each), not 16 threads each walking a row; so is a nest of run-time widths the same at
    every point (its guard counts r * c and takes it only where they fit a workgroup); one of constant widths
    wider than NEST_POINTS keeps a thread per row."""
    block = ("entry main [n] (xss: [n][16][16]i32): [n][16][16]i32 =\n"
             "  map (\\b -> loop b = b for k < 3 do\n"
             "                map (\\i -> map (\\j -> b[i, j] + b[j, i] + i32.i64 k) (iota 16)) (iota 16)) xss")
    # the block's workgroup (then, in the version with a thread per block row, a workgroup per row)
    assert _level0_contexts(block) == [("16i64", "16i64"), ("16i64",)]
    runtime = ("entry main [n][r][c] (xss: [n][r][c]i32): [n][r][c]i32 =\n"
               "  map (\\b -> loop b = b for k < 3 do map (\\row -> map (\\x -> x + 1) row) b) xss")
    assert [len(widths) for widths in _level0_contexts(runtime)] == [2, 1]
    wide = block.replace("16", "64")
    assert _level0_contexts(wide) == [("64i64",), ("64i64",)]


def test_a_host_loop_over_a_constant_nest_gets_a_version_in_one_workgroup():
    """LUD's diagonal block: a host loop whose SOACs are nests of constant widths that fit a workgroup runs
    either on the host (a launch a step, the nest's own versions) or in one workgroup (one launch), chosen by
    an intra guard on the nest's points; a loop over a nest of run-time widths gets no such version."""
    source = ("entry main (blk: [8][8]f32) (k: i64): [8][8]f32 =\n"
              "  loop blk for i < k do\n"
              "    map (\\r -> map (\\c -> if r > i then blk[r, c] - blk[r, i] * blk[i, c] else blk[r, c])\n"
              "                    (iota 8)) (iota 8)")
    target = target_program(source, "t.fut")
    guards = {t.name: t for t in thresholds(target)}
    assert sorted(guards) == ["main.suff_intra_par_1", "main.suff_intra_par_2", "main.suff_outer_par_0"]
    assert guards["main.suff_intra_par_2"].ancestors == ()  # the loop's guard is the root
    assert ("8i64", "8i64") in _level0_contexts(source)  # the workgroup runs every cell of the nest
    runtime = source.replace("(blk: [8][8]f32)", "[n] (blk: [n][n]f32)").replace("8", "n")
    assert [parse_threshold_name(t.name)[1] for t in thresholds(target_program(runtime, "t.fut"))] == \
        ["outer", "intra"]


def test_a_batch_of_grids_reads_its_rows_where_they_lie():
    """pathfinder_batch: in the flattened version, the first row of each grid (`copy x[0]`, beside the range
    check of `1..<r`) is a view of the batch's array and starts the loop as it is, and the row of indices
    the step maps over is one `iota c` on the host: no kernel whose threads copy whole rows (one thread
    wrote 2 x 100,096 elements on a batch of one grid). What is left of the run is the check, a kernel of no
    results."""
    source = ("entry main [b][r][c] (xs: [b][r][c]i32): [b][c]i32 =\n"
              "  map (\\x -> loop acc = copy x[0] for t in 1..<r do\n"
              "                map (\\i -> acc[i] + x[t, i] + i32.i64 i) (iota c)) xs")
    body = target_program(source, "t.fut").funs[0].body
    flat = body
    while any(isinstance(s.exp, T.Guard) for s in flat.stms):
        flat = next(s.exp for s in flat.stms if isinstance(s.exp, T.Guard)).else_
    kinds = [type(s.exp).__name__ for s in flat.stms]
    assert kinds.count("SegMap") == 1 and "Loop" in kinds and "If" in kinds, kinds
    check = next(s for s in flat.stms if isinstance(s.exp, T.SegMap))
    assert check.pat == () and all(isinstance(s.exp, S.Assert) for s in check.exp.body.stms)
    loop = next(s.exp for s in flat.stms if isinstance(s.exp, S.Loop))
    assert loop.init[0].name == next(s for s in flat.stms if isinstance(s.exp, S.If)).pat[0].name


def test_an_intra_group_guard_counts_the_maps_each_thread_would_run():
    """LUD's internal blocks: a workgroup per row of blocks, a thread per block, would leave each thread a
    32 x 32 nest of maps. Its guard's parallelism counts them (m * 32 * 32: it does not fit a workgroup, and
    the version with a workgroup per block runs), as Futhark's does; a thread's own reduction is not counted
    (the workgroup per block: 32 * 32, each thread a sum of 32)."""
    source = ("entry main [m] (a: [m][m][32][32]f32) (b: [32][32]f32): [m][m][32][32]f32 =\n"
              "  map (\\row -> map (\\blk -> map (\\r -> map (\\c -> f32.sum (map2 (*) r c)) b) blk) row) a\n")
    guards = [e for f in target_program(source).funs for e in walk_exps(f.body)
              if isinstance(e, T.Guard) and e.kind == "intra"]
    pars = [tuple(a.value if isinstance(a, S.Const) else a.name.split("_")[0] for a in g.par) for g in guards]
    assert ("m", 32, 32) in pars and (32, 32) in pars, pars
