"""Every code version of every program agrees with the reference interpreter: each threshold is forced
true (1) or false (never) in every combination, on every OpenCL device present."""

import importlib.util

import numpy as np
import pytest

from incflat.cli import main as incflat_main
from incflat.compiled import version_assignments
from incflat.ir.interp.interpreter import run_entry
from incflat.pipeline import source_program
RNG = np.random.default_rng(7)


def f32(*shape):
    return RNG.uniform(-4, 4, shape).astype(np.float32)


def i32(*shape):
    return RNG.integers(-50, 50, shape).astype(np.int32)


PROGRAMS = {
    "row_sums": ("entry main [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> reduce (+) 0 xs) xss",
                 [[f32(5, 7)], [f32(1, 300)], [f32(0, 3)], [f32(3, 0)]]),
    "map_map": ("entry main [n][m] (xss: [n][m]i32): [n][m]i32 = map (\\xs -> map (\\x -> x * 2 + 1) xs) xss",
                [[i32(4, 6)], [i32(1, 1)]]),
    "sum_of_squares": ("entry main [n] (xs: [n]i64): i64 = reduce (+) 0 (map (\\x -> x * x) xs)",
                       [[np.arange(1000, dtype=np.int64) - 500], [np.zeros(0, np.int64)]]),
    "maximum": ("entry main [n] (xs: [n]i32): i32 = reduce i32.max i32.lowest xs",
                [[i32(333)], [np.zeros(0, np.int32)]]),
    # "the last non-zero element": associative, with neutral element 0, and not commutative
    "last_nonzero": ("entry main [n] (xs: [n]i32): i32 = reduce (\\a b -> if b == 0 then a else b) 0 xs",
                     [[i32(1000) * (i32(1000) > 0)], [i32(3)]]),
    "ordered_rows": ("entry main [n][m] (xss: [n][m]i32): [n]i32 =\n"
                     "  map (\\xs -> reduce (\\a b -> if b == 0 then a else b) 0 xs) xss",
                     [[i32(3, 100) * (i32(3, 100) > 0)], [i32(2, 1)]]),
    "two_inner_reductions": (
        "entry main [n][m] (xss: [n][m]f32): [n]f32 =\n"
        "  map (\\xs -> let s = reduce (+) 0 xs let t = reduce f32.max (-f32.inf) xs in s * t) xss",
        [[f32(4, 9)], [f32(2, 1)]]),
    "abs_if": ("entry main [n] (xs: [n]i32): [n]i32 = map (\\x -> if x > 0 then x else -x) xs", [[i32(17)]]),
    "iota_map": ("entry main (n: i64): [n]i64 = map (\\i -> i * 2) (iota n)", [[np.int64(10)], [np.int64(0)]]),
    "replicate_add": ("entry main [n] (xs: [n]f32): [n]f32 = map2 (+) xs (replicate n 1.5f32)", [[f32(6)]]),
    "floor_division": ("entry main [n] (xs: [n]i32): [n]i32 = map (\\x -> x / 3 + x % 3 * 100 + x // 3 * 10000) xs",
                       [[np.arange(-10, 10, dtype=np.int32)]]),
    "comparison_to_bool": ("entry main [n] (xs: [n]f64): [n]bool = map (\\x -> x > 0.5) xs",
                           [[RNG.uniform(0, 1, 9)]]),
    "scalar_entry": ("entry main (x: i32) (y: i32): i32 = x * y - 7", [[np.int32(6), np.int32(7)]]),
    "prefix_sum": ("entry main [n] (xs: [n]i32): [n]i32 = scan (+) 0 xs",
                   [[i32(1000)], [i32(1)], [np.zeros(0, np.int32)]]),
    "row_scans": ("entry main [n][m] (xss: [n][m]f32): [n][m]f32 = map (\\xs -> scan (+) 0 xs) xss",
                  [[f32(3, 70)], [f32(1, 1)], [f32(0, 4)]]),
    "ordered_scan": ("entry main [n][m] (xss: [n][m]i32): [n][m]i32 =\n"
                     "  map (\\xs -> scan (\\a b -> if b == 0 then a else b) 0 xs) xss",
                     [[i32(4, 50) * (i32(4, 50) > 0)]]),
    "scan_of_squares": ("entry main [n] (xs: [n]i64): [n]i64 = scan (+) 0 (map (\\x -> x * x) xs)",
                        [[np.arange(-40, 300, dtype=np.int64)]]),
    "normalise_rows": ("entry main [n][m] (xss: [n][m]f32): [n][m]f32 =\n"
                       "  map (\\xs -> let s = reduce (+) 0 xs let t = s * 2 + 1 in map (\\x -> x / t) xs) xss",
                       [[f32(3, 40)], [f32(1, 1)], [f32(2, 0)]]),
    "distributed_with_copy": ("entry main [n][m] (xss: [n][m]i32) (k: i32): ([n]i32, [n][m]i32) =\n"
                              "  unzip (map (\\xs -> (k + reduce (+) 0 xs, xs)) xss)",
                              [[i32(3, 5), np.int32(4)]]),
    "column_sums": ("entry main [n][m] (xss: [n][m]f32): [m]f32 = reduce (map2 (+)) (replicate m 0) xss",
                    [[f32(6, 5)], [f32(1, 40)], [f32(0, 3)]]),
    "column_maxima_of_squares": (
        "entry main [n][m] (xss: [n][m]i32) (ne: [m]i32): [m]i32 =\n"
        "  reduce (map2 i32.max) ne (map (map (\\x -> x * x)) xss)",
        [[i32(7, 4), np.full(4, -1, np.int32)]]),
    # G8: an if whose condition does not vary inside the map
    "invariant_if": ("entry main [n][m] (xss: [n][m]f32) (b: bool): [n]f32 =\n"
                     "  map (\\xs -> if b then reduce (+) 0 xs else reduce f32.max (-f32.inf) xs) xss",
                     [[f32(5, 9), np.bool_(True)], [f32(5, 9), np.bool_(False)]]),
    # G7: a loop with an invariant count around inner parallelism
    "invariant_loop": ("entry main [n][m] (xss: [n][m]f32) (k: i64): [n][m]f32 =\n"
                       "  map (\\xs -> loop ys = xs for i < k do map (\\y -> y * 0.5 + f32.i64 i) ys) xss",
                       [[f32(4, 6), np.int64(3)], [f32(2, 3), np.int64(0)]]),
    # G6 and G7: transposes of the loop-carried rows become views of the nest's array (the layout changes
    # every iteration), also in a non-square case whose shapes would show a wrong permutation
    "transposing_loop": ("entry main [k][n] (xss: [k][n][n]f32): [k][n][n]f32 =\n"
                         "  map (\\xs -> loop ys = xs for i < 3 do\n"
                         "                let zs = map (map (\\y -> y * 2 + f32.i64 i)) ys in transpose zs) xss",
                         [[f32(3, 4, 4)], [f32(1, 5, 5)], [f32(0, 2, 2)]]),
    "transpose_rows": ("entry main [k][n][m] (xss: [k][n][m]f32): [k][m][n]f32 =\n"
                       "  map (\\xs -> let zs = map (map (+1)) xs let t = transpose zs in map (map (*3)) t) xss",
                       [[f32(3, 4, 5)], [f32(2, 1, 7)]]),
    # G6: a row of each point's array, at an index the same for all points, is a slice of the nest's array;
    # with no points, an index out of bounds is no error (nothing reads it)
    "invariant_row": ("entry main [b][n][m] (x: [b][n][m]i32) (i: i64): [b][m]i32 =\n"
                      "  map (\\xs -> let r = xs[i] in map (*2) r) x",
                      [[i32(3, 4, 5), np.int64(2)], [i32(1, 2, 6), np.int64(1)], [i32(0, 2, 3), np.int64(5)]]),
    "row_per_step": ("entry main [b][n][m] (x: [b][n][m]i32): [b][m]i32 =\n"
                     "  map (\\xs -> loop acc = copy xs[0] for t in 1..<n do map2 (+) acc xs[t]) x",
                     [[i32(3, 4, 5)], [i32(1, 1, 6)], [i32(0, 3, 2)]]),
    # G9: a redomap whose map function holds parallelism: one segred, or the map and the reduce apart
    "sum_of_row_maxima": ("entry main [n][m] (xss: [n][m]f32): f32 =\n"
                          "  reduce (+) 0 (map (\\xs -> reduce f32.max 0 (map (\\x -> x * x) xs)) xss)",
                          [[f32(7, 5)], [f32(1, 30)], [f32(0, 2)]]),
    # in-kernel iotas (codegen.lower.iotas): walked, sliced with a stride, reversed, of a length computed per point
    "iota_views": ("entry main [n][m] (xss: [n][m]i32) (k: i64): [n]i64 =\n"
                   "  map (\\xs -> let is = iota m\n"
                   "              let a = reduce (+) 0 (map (\\j -> i64.i32 xs[j] * j) is)\n"
                   "              let b = reduce (+) 0 is[1:m:2]\n"
                   "              let c = reduce (+) 0 (map2 (*) (reverse is) is)\n"
                   "              let d = reduce (+) 0 (iota (i64.i32 xs[0] % k + k))\n"
                   "              in a + b * 3 + c * 5 + d * 7) xss",
                   [[i32(4, 9), np.int64(3)], [i32(1, 1), np.int64(2)], [i32(0, 3), np.int64(1)]]),
    # a map with several results fused into the scan that takes them in another order; a thread's maps
    # fused side by side; the inner maps of an outer fusion fused in turn
    "fused_forms": ("entry main [n][m] (xss: [n][m]f32) (yss: [n][m]f32): ([n][m]f32, [n][m]f32, [n][m]f32) =\n"
                    "  let (ps, qs) = unzip (map2 (\\xs ys ->\n"
                    "      let (a, b) = unzip (map2 (\\x y -> (x + y, x * y)) xs ys)\n"
                    "      let (s, t) = unzip (scan (\\(a0, a1) (b0, b1) -> (a0 + b0, f32.max a1 b1))\n"
                    "                               (0, -f32.inf) (zip b a))\n"
                    "      let u = map (\\x -> x * 2) s\n"
                    "      let v = map (\\y -> y - 1) ys\n"
                    "      in (map2 (+) u t, v)) xss yss)\n"
                    "  in (ps, qs, map2 (map2 (*)) (map (map (\\x -> x + 1)) xss) yss)",
                    [[f32(3, 6), f32(3, 6)], [f32(1, 1), f32(1, 1)], [f32(0, 2), f32(0, 2)]]),
    # a thread's scans with post-maps: all prefixes (one twice), a subset, and one read elsewhere too (kept)
    "scan_postmaps": ("entry main [n][m] (xss: [n][m]f32): ([n][m]f32, [n][m]f32, [n]f32) =\n"
                      "  unzip3 (map (\\xs ->\n"
                      "      let (s, t) = unzip (scan (\\(a0, a1) (b0, b1) -> (a0 + b0, a1 * b1)) (0, 1)\n"
                      "                               (map (\\x -> (x, x + 1)) xs))\n"
                      "      let u = map3 (\\a b c -> a * b - c) s t s\n"
                      "      let p = scan (+) 0 xs\n"
                      "      let v = map (\\x -> x * 2) (scan f32.max (-f32.inf) xs)\n"
                      "      let w = map (\\x -> x + 1) p\n"
                      "      in (map2 (+) u v, w, if m > 0 then p[m - 1] else 0)) xss)",
                      [[f32(3, 6)], [f32(1, 1)], [f32(2, 0)], [f32(0, 2)]]),
    "u8_wrap": ("entry main [n] (xs: [n]u8): [n]u8 = map (\\x -> x * 3 + 200) xs",
                [[np.arange(0, 256, 17, dtype=np.uint8)]]),
    # a host loop over a constant nest (LUD's diagonal block): its version in one workgroup, the nest a
    # thread per cell with the scalars that depend on the row alone (r > i, blk[r, i]) computed at each cell
    "block_loop": ("entry main (blk: [8][8]f32) (k: i64): [8][8]f32 =\n"
                   "  loop blk for i < k do\n"
                   "    map (\\r -> map (\\c -> if r > i then blk[r, c] - blk[r, i] * blk[i, c] else blk[r, c])\n"
                   "                    (iota 8)) (iota 8)",
                   [[f32(8, 8) / 8, np.int64(5)], [f32(8, 8) / 8, np.int64(0)]]),
    # the same with a reduction and a branch in the loop: a level-0 segred, and a map under an if
    "reduce_loop": ("entry main (xs: [8]f32) (k: i64): f32 =\n"
                    "  loop s = 0f32 for i < k do s + reduce (+) 0 (map (\\x -> x * f32.i64 i) xs)",
                    [[f32(8), np.int64(3)]]),
    "branch_loop": ("entry main (xs: [8]f32) (k: i64) (b: bool): [8]f32 =\n"
                    "  loop xs for i < k do if b then map (\\x -> x * 0.5 + 1) xs else xs",
                    [[f32(8), np.int64(4), np.bool_(True)], [f32(8), np.int64(2), np.bool_(False)]]),
    # LocVolCalib's initOperator in a map: ranges checked in the body, the second after the first's check, and
    # concatenations whose sizes are computed from the ranges' (moved out of the kernel; with no rows the
    # invalid range 1...0 is never checked)
    "ranges_in_a_map": ("entry main (k: i64) (xs: []f32): [][3]f32 =\n"
                        "  map (\\o ->\n"
                        "    let x = tabulate k (\\i -> f32.i64 (i + o) * 0.5)\n"
                        "    let a = map (\\i -> [x[i], x[i - 1], x[i + 1]]) (1...k - 2)\n"
                        "    let b = map (\\i -> [x[i - 1], x[i - 2], 1]) (2...k - 1)\n"
                        "    let d = [[0, 1, x[0]]] ++ a ++ [[x[k - 1], 0, 0]] :> [k][3]f32\n"
                        "    let e = [[1, 1, 1]] ++ b ++ [[2, 2, 2]] :> [k][3]f32\n"
                        "    in reduce (map2 (+)) (replicate 3 0) (map2 (map2 (*)) d e)) (indices xs)",
                        [[np.int64(6), f32(4)], [np.int64(3), f32(2)], [np.int64(2), f32(0)]]),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """Each program compiled once, as a library module."""
    d = tmp_path_factory.mktemp("versions")
    modules = {}
    for name, (source, _) in PROGRAMS.items():
        fut = d / f"{name}.fut"
        fut.write_text(source)
        assert incflat_main(["compile", "--backend=pyopencl", "--library", str(fut)]) == 0
        spec = importlib.util.spec_from_file_location(name, d / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[name] = module
    return modules


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_every_version_agrees_with_the_interpreter(compiled, device, name):
    source, datasets = PROGRAMS[name]
    prog = source_program(source, f"{name}.fut")
    for params in version_assignments(compiled[name]):
        lib = compiled[name].load(device=device, overrides=params)
        for args in datasets:
            expected = run_entry(prog, "main", args)
            got = lib.main(*args)
            got = got if isinstance(got, tuple) else (got,)
            for g, e in zip(got, expected):
                assert np.asarray(g).dtype == np.asarray(e).dtype, (params, args)
                np.testing.assert_allclose(np.asarray(g, dtype=np.float64), np.asarray(e, dtype=np.float64),
                                           rtol=1e-4, atol=1e-5, err_msg=f"{name} {params}")
