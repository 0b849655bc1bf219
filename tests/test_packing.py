"""Packed intra-group kernels (codegen.packing): several points of an intra-group version share a workgroup
where every barrier is reached alike by all of them; each forced version agrees with numpy whether the
points pack, pack partly or not at all."""

import types

import numpy as np
import pytest

from incflat import pipeline
from incflat.codegen.packing import packable
from incflat.codegen.runtime.device import PACKED_GROUP_THREADS, Context
from incflat.codegen.runtime.tuning import NEVER
from incflat.harness import version_assignments
from incflat.ir import target as T
from incflat.ir.traverse import walk_exps
from test_kernel_shapes import compile_library

# The row's scan and the loop around it run the same for every row: packable.
UNIFORM = """
entry main [n][m] (xss: [n][m]f32) (k: i64): [n][m]f32 =
  map (\\xs -> let s = f32.sum xs
              let ys = loop ys = xs for _i < k do scan (+) 0f32 (map (* 0.5f32) ys)
              in map (/ (s + 1f32)) ys) xss
"""
# The loop's trip count is the row's own: the rows' workgroup barriers would differ.
ROW_LOOP = """
entry main [n][m] (xss: [n][m]f32) (ks: [n]i64): [n][m]f32 =
  map2 (\\xs k -> loop ys = xs for _i < k do scan (+) 0f32 (map (* 0.5f32) ys)) xss ks
"""
ROW_BRANCH = """
entry main [n][m] (xss: [n][m]f32): [n][m]f32 =
  map (\\xs -> if xs[0] > 0f32 then scan (+) 0f32 xs else map (* 2f32) (scan f32.max (-f32.inf) xs)) xss
"""
ROW_WHILE = """
entry main [n][m] (xss: [n][m]f32): [n][m]f32 =
  map (\\xs -> let (ys, _) = loop (ys, i) = (xs, 0i64) while i < 3 do (scan (+) 0f32 ys, i + 1) in ys) xss
"""


def intra_segmaps(source: str) -> list:
    prog = pipeline.compile(source, "t.fut", until="prune_context")
    return [e for f in prog.funs for e in walk_exps(f.body)
            if isinstance(e, T.SegMap) and e.level == 1 and T.level0_segops(e.body)]


@pytest.mark.parametrize("source, expected", [(UNIFORM, True), (ROW_LOOP, False), (ROW_BRANCH, False),
                                              (ROW_WHILE, False)], ids=["uniform", "row_loop", "row_branch",
                                                                        "while"])
def test_points_pack_only_where_their_barriers_agree(source, expected):
    found = intra_segmaps(source)
    assert found, "the program has an intra-group version"
    assert {packable(op) for op in found} == {expected}
    kernels = pipeline.compile(source, "t.fut").kernels
    assert any(k.packed for k in kernels) == expected


def group_rows(points, width, local_bytes=0, local_mem=65536, kernel_limit=1024):
    """Context.group_rows on a stand-in context of a device with these limits."""
    ctx = types.SimpleNamespace(max_group_size=1024, local_mem_size=local_mem,
                                kernel_group_size=lambda names, most: min(most, kernel_limit))
    return Context.group_rows(ctx, "k", points, width, local_bytes)


def test_the_rows_fill_a_workgroup_and_divide_the_points():
    assert group_rows(32768, 32) == PACKED_GROUP_THREADS // 32
    assert group_rows(12, 32) == 4  # a power of two that divides the points
    assert group_rows(7, 32) == 1
    assert group_rows(1024, 256) == 1  # a point that fills a workgroup alone
    assert group_rows(1024, 300) == 1
    assert group_rows(1024, 1) == PACKED_GROUP_THREADS
    assert group_rows(1024, 32, local_bytes=20000) == 2  # three points' local memory would not fit
    assert group_rows(1024, 32, kernel_limit=64) == 2


def halved_scans(xss, k):
    ys = xss.astype(np.float64)
    for _ in range(k):
        ys = np.cumsum(ys * 0.5, axis=-1)
    return ys


@pytest.fixture(scope="module")
def uniform_module(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("packed"), "uniform", UNIFORM)


# rows packed 8 to a workgroup, 64 (width 3), partly (12: 4 each) and not at all (7 rows; one row of 300)
@pytest.mark.parametrize("shape", [(8, 5), (64, 3), (12, 32), (7, 5), (1, 300)])
def test_every_version_of_a_packable_program_agrees_with_numpy(uniform_module, device, shape):
    rng = np.random.default_rng(sum(shape))
    xss = rng.uniform(0, 1, shape).astype(np.float32)
    expected = halved_scans(xss, 3) / (xss.sum(axis=1, dtype=np.float64)[:, None] + 1)
    for forced in version_assignments(uniform_module):
        lib = uniform_module.load(device=device, overrides=forced)
        np.testing.assert_allclose(lib.main(xss, np.int64(3)), expected, rtol=2e-4, err_msg=str(forced))


def test_rows_with_their_own_trip_counts_agree_with_numpy(tmp_path, device):
    module = compile_library(tmp_path, "row_loop", ROW_LOOP)
    rng = np.random.default_rng(3)
    xss = rng.uniform(0, 1, (16, 6)).astype(np.float32)
    ks = rng.integers(0, 4, 16).astype(np.int64)
    expected = np.stack([halved_scans(xs, int(k)) for xs, k in zip(xss, ks)])
    thresholds = [p.name for p in module.PROGRAM.params if p.is_threshold]
    for forced in version_assignments(module) + [{t: NEVER for t in thresholds}]:
        lib = module.load(device=device, overrides=forced)
        np.testing.assert_allclose(lib.main(xss, ks), expected, rtol=2e-4, err_msg=str(forced))
