"""A kernel's result made in the region an in-place update writes it into (codegen.placement; Futhark's memory
short-circuiting): where each thread reads the updated array only at the point it writes, the update copies
nothing. Every version agrees with the reference interpreter, also where the reads or the region's layout
forbid it (the runtime's empty_in_region then allocates anew): `blocks` is LUD's step, whose inner blocks are
a corner of the matrix."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incflat import pipeline
from incflat.compiled import version_assignments
from incflat.datasets import compare_values
from incflat.ir.interp.interpreter import run_entry
from test_fusion import entry_text
from test_kernel_shapes import compile_library

SOURCE = """
entry blocks [m] (mat: [m][m][2][2]f32) (steps: i64): [m][m][2][2]f32 =
  loop mat = copy mat for s < i64.min steps (m - 1) do
    let diag = map (map (+ 1)) mat[s, s]
    let top = map (map (map (* 2))) mat[s, s + 1:]
    let left = map (map (map (* 3))) mat[s + 1:, s]
    let inner = map2 (map2 (map2 (map2 (\\x t -> x - t)))) mat[s + 1:, s + 1:] (replicate (m - (s + 1)) top)
    let mat[s, s] = diag
    let mat[s, s + 1:] = top
    let mat[s + 1:, s] = left
    let mat[s + 1:, s + 1:] = inner
    in mat
entry corner [m] (mat: [m][m][2][2]f32) (steps: i64): [m][m][2][2]f32 =
  loop mat = copy mat for s < i64.min steps (m - 1) do
    let inner = map (map (map (map (* 2)))) mat[s + 1:, s + 1:]
    in mat with [s + 1:, s + 1:] = inner
entry prefix [n] (xs: [n]f32) (k: i64) (steps: i64): [n]f32 =
  loop a = copy xs for _s < steps do
    let v = map (\\x -> x * 2 + 1) a[0:k]
    in a with [0:k] = v
entry beside [n] (xs: [n]f32) (k: i64) (steps: i64): [n]f32 =
  loop a = copy xs for _s < steps do
    let v = map (+ 1) a[0:k]
    in a with [k:2 * k] = v
entry shifted [n] (xs: [n]f32) (steps: i64): [n]f32 =
  loop a = copy xs for _s < steps do
    let v = map (+ 1) a[1:n]
    in a with [0:n - 1] = v
entry transposed [n] (m: [n][n]f32) (steps: i64): [n][n]f32 =
  loop m = copy m for _s < steps do
    let v = tabulate_2d n n (\\i j -> m[j, i] + 1)
    in m with [0:n, 0:n] = v
entry moved [n] (xs: [n]f32) (k: i64) (src: i64) (dst: i64) (stride: i64) (steps: i64): [n]f32 =
  loop a = copy xs for _s < steps do
    let v = map (\\x -> x * 3 - 1) a[src:src + k * stride:stride]
    in a with [dst:dst + k] = v
entry rows [n][m] (xss: [n][m]f32) (r: i64) (src: i64) (dst: i64) (steps: i64): [n][m]f32 =
  loop a = copy xss for _s < steps do
    let v = map (map (+ 1)) a[src:src + r]
    let w = map (map (* 2)) a[dst:dst + r]
    let a[dst:dst + r] = v
    let a[src:src + r] = w
    in a
entry overlapping [n] (xs: [n]f32) (steps: i64): [n]f32 =
  loop a = copy xs for _s < steps do
    let w = map (* 3) a[0:4]
    let v = map (+ 1) a[2:6]
    let a[2:6] = v
    let a[0:4] = w
    in a
"""

ENTRIES = ["blocks", "corner", "prefix", "beside", "shifted", "transposed", "overlapping"]


@pytest.fixture(scope="module")
def placed(tmp_path_factory):
    directory = tmp_path_factory.mktemp("placement")
    return compile_library(directory, "placement", SOURCE), (directory / "placement.py").read_text()


def test_the_kernels_reading_only_their_own_points_make_their_results_in_place(placed):
    _, text = placed
    for entry in ("blocks", "corner", "prefix", "beside", "shifted", "overlapping"):
        assert "empty_in_region(ctx" in entry_text(text, entry), entry
    # a thread reading the array at another point (a transpose): the array is among those to keep apart from
    # the region, not among those read pointwise, so the run never gives the region (it is all of the array)
    assert re.search(r"empty_in_region\(ctx, (m_\d+), .*, \(\), \(\1, \)", entry_text(text, "transposed"))


def arguments(entry: str, rng) -> list:
    if entry in ("blocks", "corner"):
        return [rng.random((4, 4, 2, 2), dtype=np.float32), np.int64(5)]
    if entry == "transposed":
        return [rng.random((5, 5), dtype=np.float32), np.int64(3)]
    if entry in ("prefix", "beside"):
        return [rng.random(9, dtype=np.float32), np.int64(4), np.int64(3)]
    return [rng.random(9, dtype=np.float32), np.int64(3)]


@pytest.mark.parametrize("entry", ENTRIES)
def test_every_version_agrees_with_the_interpreter(placed, device, entry):
    module, _ = placed
    args = arguments(entry, np.random.default_rng(5))
    want = list(run_entry(pipeline.source_program(SOURCE), entry, args))
    for assignment in version_assignments(module) or [{}]:
        got = getattr(module.load(device=device, overrides=assignment), entry)(*args)
        assert compare_values([got], want) is None, (entry, assignment)


def copies(module, device, entry, args) -> int:
    """The copy kernels and commands one call of the most flattened versions launches."""
    flattest = {name: 2 ** 31 - 1 for name in version_assignments(module)[0]}
    lib = module.load(device=device, profile=True, overrides=flattest)
    getattr(lib, entry)(*args)
    lib.ctx.settle()
    return sum(count for name, (_, count) in lib.ctx.kernel_times.items() if name.startswith("incflat_copy"))


def test_an_update_of_a_result_made_in_place_copies_nothing(placed, device):
    """prefix's steps write their map into the array's own first k elements: no copy at all; shifted's map
    reads a[1:] and writes a[0:], where a thread's write would land on another's read: a copy a step."""
    module, _ = placed
    rng = np.random.default_rng(3)
    assert copies(module, device, "prefix", arguments("prefix", rng)) == 1  # the loop's own copy of xs
    assert copies(module, device, "corner", arguments("corner", rng)) == 1  # LUD's inner blocks
    assert copies(module, device, "beside", arguments("beside", rng)) == 1
    assert copies(module, device, "shifted", arguments("shifted", rng)) == 1 + 3
    assert copies(module, device, "transposed", arguments("transposed", rng)) == 1 + 3


def test_the_region_is_given_only_where_the_views_allow(placed, device):
    module, _ = placed  # (the program's own copy of the runtime, whose arrays its functions know)
    ctx, empty_in_region, index = module.load(device=device).ctx, module.empty_in_region, module.index
    root = ctx.to_device(np.arange(24, dtype=np.float32).reshape(4, 6))
    idxs = ((1, 3, 1, 2),)  # rows 1 and 2: row-major, as kernels write their results
    region = index(ctx, root, idxs)

    def given(others=(), same=(), apart=(), shape=(2, 6), dtype=np.float32):
        made = empty_in_region(ctx, root, idxs, others, same, apart, 1, shape, dtype)
        return made.buf is root.buf and made.offset == region.offset and made.strides == region.strides

    elsewhere = ctx.to_device(np.zeros((2, 6), np.float32))
    assert given() and given(same=(region, elsewhere)) and given(apart=(elsewhere, index(ctx, root, (0,))))
    assert given(same=(index(ctx, root, ((3, 4, 1, 1),)),))  # a row of the array apart from the region
    assert not given(shape=(2, 5)) and not given(dtype=np.int32)
    assert not given(others=(((0, 2, 1, 2),),))  # another update of the chain writes rows 0-1: it meets row 1
    assert given(others=((0,), (3,)))
    assert not given(same=(index(ctx, root, ((0, 2, 1, 2),)),))  # shifted a row: overlaps
    assert not given(apart=(region,)) and not given(apart=(root,))
    # a corner: a kernel with a point per element writes it (through each point's indices); one with a point per
    # row writes each row as a row-major array, which the corner's rows, a part of the root's, are not
    corner = ((1, 3, 1, 2), (2, 6, 1, 4))
    assert empty_in_region(ctx, root, corner, (), (), (), 2, (2, 4), np.float32).buf is root.buf
    assert empty_in_region(ctx, root, corner, (), (), (), 1, (2, 4), np.float32).buf is root.buf
    assert empty_in_region(ctx, root, ((0, 4, 1, 4), (0, 6, 2, 3)), (), (), (), 1, (4, 3), np.float32).buf \
        is not root.buf  # every other column: the rows are not row-major
    outside = empty_in_region(ctx, root, ((3, 6, 1, 3),), (), (), (), 1, (3, 6), np.float32)
    assert isinstance(outside, module.DeviceArray) and outside.buf is not root.buf  # out of bounds: the update says so


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_overlap_of_what_is_read_and_written_agrees_with_numpy(placed, device, data):
    """A map of a strided slice written into another slice of the same array, and two row blocks swapped
    through maps, at every offset (the same region, overlapping either way, apart): the run gives the region
    only where its checks allow, and every version computes what numpy does."""
    module, _ = placed
    n = data.draw(st.integers(1, 12))
    k = data.draw(st.integers(0, n))
    stride = data.draw(st.integers(1, 3))
    src = data.draw(st.integers(0, n - 1 - (k - 1) * stride if k else n - 1)) if (k - 1) * stride < n else None
    if src is None:
        return
    dst = data.draw(st.integers(0, n - k))
    steps = data.draw(st.integers(0, 3))
    xs = np.arange(n, dtype=np.float32)
    want = xs.copy()
    for _ in range(steps):
        want[dst:dst + k] = want[src:src + k * stride:stride] * 3 - 1
    rows = data.draw(st.integers(2, 6))
    r = data.draw(st.integers(0, rows))
    a, b = data.draw(st.integers(0, rows - r)), data.draw(st.integers(0, rows - r))
    xss = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
    want_rows = xss.copy()
    for _ in range(steps):
        v, w = want_rows[a:a + r] + 1, want_rows[b:b + r] * 2
        want_rows[b:b + r] = v
        want_rows[a:a + r] = w
    for assignment in version_assignments(module) or [{}]:
        lib = module.load(device=device, overrides=assignment)
        got = lib.moved(xs, np.int64(k), np.int64(src), np.int64(dst), np.int64(stride), np.int64(steps))
        assert compare_values([got], [want]) is None, (n, k, src, dst, stride, steps, assignment)
        got = lib.rows(xss, np.int64(r), np.int64(a), np.int64(b), np.int64(steps))
        assert compare_values([got], [want_rows]) is None, (r, a, b, steps, assignment)
