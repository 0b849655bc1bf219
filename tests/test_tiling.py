"""Block tiling in local memory (codegen/tiling.py): which segmaps are tiled, and that every version of
programs with tiled segmaps agrees with numpy for any tile size, shape and memory layout (row-major and
transposed rows, batches, statements around the fold, an operator that is not commutative, two folds)."""

import itertools

import numpy as np
import pytest

from incflat import pipeline
from incflat.codegen import tiling
from incflat.ir.runtime.tuning import TILE_SIZE
from incflat.compiled import program_params, version_assignments
from incflat.ir import target as T
from incflat.ir.traverse import walk_exps
from tests.test_kernel_shapes import compile_library

SOURCE = """
def dot [m] (xs: [m]i64) (ys: [m]i64): i64 = reduce (+) 0 (map2 (*) xs ys)

entry matmul [n][m][p] (xss: [n][m]i64) (yss: [m][p]i64): [n][p]i64 =
  map (\\xs -> map (\\ys -> dot xs ys) (transpose yss)) xss

entry matmul_tn [n][m][p] (xss: [m][n]i64) (yss: [p][m]i64): [n][p]i64 =
  map (\\xs -> map (\\ys -> dot xs ys) yss) (transpose xss)

entry batched [b][n][m][p] (xsss: [b][n][m]i64) (ysss: [b][m][p]i64): [b][n][p]i64 =
  map2 (\\xss yss -> map (\\xs -> map (\\ys -> dot xs ys) (transpose yss)) xss) xsss ysss

entry scaled [n][m][p] (xss: [n][m]i64) (cs: [n]i64) (yss: [p][m]i64): [n][p]i64 =
  map2 (\\xs c -> map (\\ys -> let d = c * dot xs ys in d + c) yss) xss cs

entry last_nonzero [n][m][p] (xss: [n][m]i32) (yss: [p][m]i32): [n][p]i32 =
  map (\\xs -> map (\\ys -> reduce (\\a b -> if b == 0 then a else b) 0 (map2 (*) xs ys)) yss) xss

entry two_sums [n][m][p] (xss: [n][m]i64) (yss: [p][m]i64): [n][p](i64, i64) =
  map (\\xs -> map (\\ys -> (dot xs ys, reduce (+) 0 (map2 (+) xs ys))) yss) xss

entry outer_sums [n][m][p] (xss: [n][m]f32) (yss: [p][m]f32): [n][p][m]f32 =
  map (\\xs -> map (\\ys -> map2 (+) xs ys) yss) xss
"""


def plans():
    """(entry, depth of the context, plan) of each level-1 segmap of two or more dimensions."""
    prog = pipeline.target_program(SOURCE, "tiles.fut")
    return [(f.name, len(e.ctx), tiling.tile_plan(e)) for f in prog.funs for e in walk_exps(f.body)
            if isinstance(e, T.SegMap) and e.level == 1 and len(e.ctx) >= 2]


def test_which_segmaps_are_tiled():
    found = plans()
    tiled = {(name, depth): plan.folds for name, depth, plan in found if plan}
    assert tiled == {("matmul", 2): {0: ("y", "x")}, ("matmul_tn", 2): {0: ("y", "x")},
                     ("batched", 3): {0: ("y", "x")}, ("scaled", 2): {0: ("y", "x")},
                     ("last_nonzero", 2): {0: ("y", "x")}, ("two_sums", 2): {0: ("y", "x"), 1: ("y", "x")}}
    # an array result per point (outer_sums), and the intra-group versions, are not tiled
    assert not any(plan for name, depth, plan in found if name == "outer_sums")


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("tiles"), "tiles", SOURCE)


def last_nonzero(xss, yss):
    out = np.zeros((len(xss), len(yss)), np.int32)
    for i, j in itertools.product(range(len(xss)), range(len(yss))):
        nonzero = (xss[i] * yss[j])[xss[i] * yss[j] != 0]
        out[i, j] = nonzero[-1] if len(nonzero) else 0
    return out


def cases(n, m, p):
    """(entry, inputs, numpy's results) for one shape."""
    rng = np.random.default_rng(n * 10000 + m * 100 + p)
    a, b = rng.integers(-9, 9, (n, m)), rng.integers(-9, 9, (p, m))
    cs, batch_a, batch_b = rng.integers(-9, 9, n), rng.integers(-9, 9, (2, n, m)), rng.integers(-9, 9, (2, m, p))
    sparse_a, sparse_b = (a * (a > 2)).astype(np.int32), (b * (b < -2)).astype(np.int32)
    f_a, f_b = a.astype(np.float32), b.astype(np.float32)
    return [
        ("matmul", [a, b.T.copy()], [a @ b.T]),
        ("matmul_tn", [a.T.copy(), b], [a @ b.T]),
        ("batched", [batch_a, batch_b], [np.matmul(batch_a, batch_b)]),
        ("scaled", [a, cs, b], [cs[:, None] * (a @ b.T) + cs[:, None]]),
        ("last_nonzero", [sparse_a, sparse_b], [last_nonzero(sparse_a, sparse_b)]),
        ("two_sums", [a, b], [a @ b.T, a.sum(axis=1)[:, None] + b.sum(axis=1)[None, :]]),
        ("outer_sums", [f_a, f_b], [f_a[:, None, :] + f_b[None, :, :]]),
    ]


@pytest.mark.parametrize("tile", [1, 3, 16])
def test_every_version_agrees_for_any_tile_size(module, device, tile):
    tiles = {p.name: tile for p in program_params(module) if p.cls == TILE_SIZE}
    shapes = [(5, 37, 19), (1, 1, 1), (17, 2, 33), (3, 0, 4), (0, 3, 2)]
    ran = set()
    for values in version_assignments(module):
        lib = module.load(device=device, overrides=dict(values, **tiles))
        lib.ctx.device_state.last_args[False].clear()
        for entry in module.PROGRAM.entry_points:
            for shape in shapes:
                inputs, expected = next((i, e) for name, i, e in cases(*shape) if name == entry)
                got = getattr(lib, entry)(*inputs)
                for g, e in zip(got if isinstance(got, tuple) else (got,), expected):
                    np.testing.assert_array_equal(g, e, err_msg=f"{entry} {values} {shape}")
        ran |= set(lib.ctx.device_state.last_args[False])
    assert {name.split(".")[1][:-len("_tile_size")] for name in tiles} <= ran  # every tiled kernel ran
