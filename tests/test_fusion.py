"""Fewer launches for the same work: a map that takes some of a multi-result map's results fuses with it
(normalize.fuse_into_reductions), a scatter whose indices and values one segmap makes is done by that segmap's
kernel (codegen.host.scatter_fusions), an iota or a replicate that only kernels read is never made (host_reads),
a chain of updates is one write (update_many), and a cheap map its readers recompute is not launched
(codegen.lower.cheap_maps). Every version agrees with the reference interpreter,
aliasing included."""

import re

import numpy as np
import pytest

from incflat import pipeline
from incflat.compiled import version_assignments
from incflat.datasets import compare_values
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.traverse import nested
from test_kernel_shapes import compile_library

SOURCE = """
entry pairs [n] (xs: [n]i32): ([n]i32, [n]i32) =
  let (a, b) = unzip (map (\\x -> (x + 1, x * 3)) xs)
  let c = map (\\y -> y * 2) a
  in (c, b)
entry between [n] (xs: [n]i32): ([n]i32, i32) =
  let (a, b) = unzip (map (\\x -> (x + 1, x * 3)) xs)
  let s = reduce (+) 0 b
  let c = map (\\y -> y * 2) a
  in (c, s)
entry scattered [n][k] (dest: [n]i32) (xs: [k]i32): [n]i32 =
  let (is, vs) = unzip (map (\\x -> (i64.i32 x - 2, x * 10)) xs)
  in scatter (map (+ 1) dest) is vs
entry rotated [n] (xs: [n]i32): [n]i32 =
  let d = map (+ 1) xs
  let (is, vs) = unzip (map (\\i -> ((i + 1) % n, d[i])) (iota n))
  in scatter d is vs
entry kept [n][k] (dest: [n]i32) (xs: [k]i32): ([n]i32, [n]i32) =
  let (is, vs) = unzip (map (\\x -> (i64.i32 x, x)) xs)
  in (scatter (copy dest) is vs, dest)
entry diagonals [n] (grid: [n][n]i32) (steps: i64): [n][n]i32 =
  loop g = copy grid for s < steps do
    let (is, vs) = unzip (tabulate n (\\t -> let i = (s + t) % n in (i * n + t, g[i, t] + g[t, i] + 1)))
    in unflatten (scatter (flatten g) is vs)
entry iotas (n: i64) (k: i64): ([n]i64, [k]i64) =
  let is = iota n
  in (is, map (\\i -> i * 2) (iota k))
entry ones [n][m] (xss: [n][m]f32) (x: f32): [n][m]f32 =
  let z = replicate n (replicate m x)
  in map2 (map2 (+)) xss z
entry coerced [n][m] (xss: [n][m]f32) (k: i64): [n][m]f32 =
  let z = replicate k (replicate m 1f32) :> [n][m]f32
  in map2 (map2 (+)) xss z
entry scans (n: i64) (m: i64): [n][m]i32 =
  map (scan (+) 0) (replicate n (replicate m 1i32))
entry blocks [m] (mat: [m][m][2][2]f32) (steps: i64): [m][m][2][2]f32 =
  loop mat = copy mat for s < i64.min steps (m - 1) do
    let diag = map (map (+ 1)) mat[s, s]
    let top = map (map (map (* 2))) mat[s, s + 1:]
    let left = map (map (map (* 3))) mat[s + 1:, s]
    let inner = map (map (map (map (+ 1)))) mat[s + 1:, s + 1:]
    let mat[s, s] = diag
    let mat[s, s + 1:] = top
    let mat[s + 1:, s] = left
    let mat[s + 1:, s + 1:] = inner
    in mat
entry overlapping [n] (xs: [n]f32) (ys: [3]f32): [n]f32 =
  let a = map (+ 1) xs
  let zs = map (* 2) ys
  let a[0:3] = ys
  let a[2:5] = zs
  in a
entry shifted [n] (xs: [n]f32): [n]f32 =
  let a = map (+ 1) xs
  let v = a[0:2]
  let w = map (* 2) a[1:3]
  let a[2:4] = v
  let a[4:6] = w
  in a
entry caller_s [n] (xs: [n]f32) (ys: [2]f32): ([n]f32, [n]f32) =
  let zs = map (* 2) ys
  let b = copy xs
  let b[0:2] = ys
  let b[3:5] = zs
  in (b, xs)
entry steps [k][n] (times: [k][4]f32) (xss: [k][n]f32): [k][n]f32 =
  loop xss = copy xss for i < 3 do
    let dts = map (\\ts -> 1 / (ts[i + 1] - ts[i])) times
    in map2 (\\dt xs -> map (\\x -> x * dt + 1) xs) dts xss
entry returned [k][n] (times: [k][4]f32) (xss: [k][n]f32): ([k]f32, [k][n]f32) =
  let dts = map (\\ts -> 1 / (ts[1] - ts[0])) times
  in (dts, map2 (\\dt xs -> map (\\x -> x * dt) xs) dts xss)
entry negative (n: i64): [n]i64 =
  let z = replicate (n - 3) 2i64
  in map (\\i -> i + z[0]) (iota n)
"""


@pytest.fixture(scope="module")
def fused(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fusion")
    return compile_library(directory, "fusion", SOURCE), (directory / "fusion.py").read_text()


def entry_text(text: str, entry: str) -> str:
    start = text.index(f"def entry_{entry}(")
    return text[start:text.index("\ndef ", start + 1)]


def maps(entry: str) -> list:
    prog = pipeline.compile(SOURCE, "t.fut", until="remove_dead_code")
    body = next(f for f in prog.funs if f.name == entry).body
    return [s for s in body.stms if isinstance(s.exp, S.Map)]


def test_a_map_taking_some_results_of_another_fuses_with_it():
    (fused_map,) = maps("pairs")
    assert len(fused_map.pat) == 2  # c, and b that the consumer does not take


def test_a_result_read_between_the_two_maps_keeps_them_apart():
    assert len(maps("between")) == 2


def test_a_scatter_of_a_segmaps_results_is_the_segmaps_kernel(fused):
    _, text = fused
    for entry in ("scattered", "kept"):
        code = entry_text(text, entry)
        assert "scatter(ctx" not in code and "destination(ctx" in code, entry
    # into its own array, in place; into a copy of the caller's; the kernel's arrays are given to
    # destination(), which copies where one of them is the destination's buffer
    assert re.search(r"destination\(ctx, \w+, True, xs_\d+\)", entry_text(text, "scattered"))
    assert re.search(r"destination\(ctx, dest_\d+, False, xs_\d+\)", entry_text(text, "kept"))


def test_a_segmap_reading_its_scatters_destination_is_not_fused(fused):
    """The fused kernel would write into a copy (it reads what it writes); the scatter alone writes in place."""
    _, text = fused
    for entry in ("rotated", "diagonals"):
        code = entry_text(text, entry)
        assert "destination(ctx" not in code and "in_place=True" in code, entry


def test_an_iota_or_a_replicate_only_kernels_read_is_not_made(fused):
    _, text = fused
    assert "iota(ctx" not in entry_text(text, "rotated")
    assert entry_text(text, "iotas").count("iota(ctx") == 1  # the one returned; not the one a kernel reads
    for entry in ("ones", "scans", "coerced"):  # a replicate of a replicate of a scalar too, renamed or not
        assert "replicate(ctx" not in entry_text(text, entry), entry
    # sizes that may be negative are still checked (a coercion's too); ones' replicate, of xss's own sizes, is
    # read as its value (read_replicates) and needs no check
    assert all("check_sizes" in entry_text(text, entry) for entry in ("scans", "coerced"))
    assert "check_sizes" not in entry_text(text, "ones")


def test_a_chain_of_updates_is_one_write(fused):
    """LUD's four blocks a step: one update_many, whose copies run in one launch where their targets are
    disjoint (checked at run time: `overlapping` copies one after another, in order)."""
    _, text = fused
    for entry in ("blocks", "overlapping", "caller_s", "shifted"):
        code = entry_text(text, entry)
        assert code.count("update_many(ctx") == 1 and "= update(ctx" not in code, entry


def cheap_maps(entry: str, stage: str) -> int:
    """The cheap one-level segmaps (codegen.lower.cheap_maps) at the host level of an entry after a stage."""
    from incflat.codegen.lower.cheap_maps import cheap
    from incflat.ir.traverse import walk_exps
    body = next(f for f in pipeline.compile(SOURCE, "t.fut", until=stage).funs if f.name == entry).body

    def host(b):
        for stm in b.stms:
            yield stm
            if not isinstance(stm.exp, T.SEGOPS):
                for inner in nested(stm.exp):
                    yield from host(inner.body)
    return sum(1 for stm in host(body) if cheap(stm))


def test_a_cheap_map_that_kernels_read_is_recomputed_by_them():
    """LocVolCalib's 1 / (t' - t) a step: the kernels that bind it in their outermost level compute it; a map
    the host also reads (a result) stays."""
    assert cheap_maps("steps", "sink_iotas") == 1 and cheap_maps("steps", "inline_cheap_maps") == 0
    assert cheap_maps("returned", "inline_cheap_maps") == 1


def test_an_array_not_made_still_has_its_size_checked(fused, device):
    module, _ = fused
    lib = module.load(device=device)
    with pytest.raises(Exception, match="Negative size -1 in replicate"):
        lib.negative(np.int64(2))
    with pytest.raises(Exception, match=re.escape("Cannot coerce an array of shape [3][5] to shape [4][5].")):
        lib.coerced(np.zeros((4, 5), np.float32), np.int64(3))


def arguments(entry: str, rng) -> list:
    if entry in ("pairs", "between", "rotated"):
        return [rng.integers(-50, 50, 13, dtype=np.int32)]
    if entry in ("scattered", "kept"):  # distinct indices (which of two writes to one wins is unspecified)
        return [rng.integers(-50, 50, 7, dtype=np.int32), rng.permutation(np.arange(-3, 17, dtype=np.int32))]
    if entry == "diagonals":
        return [rng.integers(-9, 9, (6, 6), dtype=np.int32), np.int64(8)]
    if entry == "coerced":
        return [rng.random((4, 5), dtype=np.float32), np.int64(4)]
    if entry == "ones":
        return [rng.random((4, 5), dtype=np.float32), np.float32(1.5)]
    if entry == "negative":
        return [np.int64(6)]
    if entry == "blocks":
        return [rng.random((4, 4, 2, 2), dtype=np.float32), np.int64(5)]
    if entry == "shifted":  # a value in the updated array's buffer: its elements from before the updates
        return [rng.random(7, dtype=np.float32)]
    if entry in ("steps", "returned"):
        return [np.cumsum(rng.random((3, 4), dtype=np.float32) + 0.5, axis=1).astype(np.float32),
                rng.random((3, 5), dtype=np.float32)]
    if entry in ("overlapping", "caller_s"):
        return [rng.random(6, dtype=np.float32), rng.random(3 if entry == "overlapping" else 2, dtype=np.float32)]
    return [np.int64(5), np.int64(3)]


@pytest.mark.parametrize("entry", ["pairs", "between", "scattered", "rotated", "kept", "diagonals", "iotas", "ones",
                                   "scans", "negative", "blocks", "overlapping", "caller_s", "steps", "returned",
                                   "coerced", "shifted"])
def test_every_version_agrees_with_the_interpreter(fused, device, entry):
    module, _ = fused
    args = arguments(entry, np.random.default_rng(11))
    want = list(run_entry(pipeline.source_program(SOURCE), entry, args))
    for assignment in version_assignments(module) or [{}]:
        lib = module.load(device=device, overrides=assignment)
        got = getattr(lib, entry)(*args)
        got = list(got) if isinstance(got, tuple) else [got]
        assert compare_values(got, want) is None, (entry, assignment)
