"""prune_context: a segop's context keeps only the arrays its body reads (codegen.lower.context)."""

import numpy as np

from incflat import pipeline
from incflat.ir.runtime.tuning import NEVER
from incflat.ir import target as T
from incflat.ir.traverse import walk_exps
from test_kernel_shapes import compile_library

# The outer map takes three arrays; distributed over its body, each inner map reads one of them (and the
# scan's rows read the first one's).
SOURCE = """
entry main [n][m] (xss: [n][m]f32) (yss: [n][m]f32) (zs: [n]f32): ([n][m]f32, [n][m]f32, [n][m]f32) =
  unzip3 (map3 (\\xs ys z -> (map (* 2) xs, map (+ z) ys, scan (+) 0 xs)) xss yss zs)
"""


def level1_contexts(prog) -> list:
    """Per level-1 segop: the names of the arrays of its context, level by level."""
    ops = [e for f in prog.funs for e in walk_exps(f.body) if isinstance(e, T.SEGOPS) and e.level == 1]
    return [tuple(tuple(a.name for a in b.arrs) for b in op.ctx) for op in ops]


def test_each_segop_keeps_only_the_context_arrays_it_reads():
    before = level1_contexts(pipeline.compile(SOURCE, "t.fut", until="fuse_scan_postmaps"))
    after = level1_contexts(pipeline.compile(SOURCE, "t.fut", until="prune_context"))
    assert len(before) == len(after) > 3
    assert all(len(ctx[0]) == 3 for ctx in before), "flattening gives the inner segops the whole context"
    scan_rows = [ctx for ctx in after if len(ctx) == 2 and len(ctx[1]) == 1]
    assert scan_rows and all(ctx[0] == (ctx[0][0],) and ctx[0][0].startswith("xss") for ctx in scan_rows)
    assert all(len(ctx) == len(old) for ctx, old in zip(after, before)), "the iteration spaces stay"


def test_the_pruned_versions_agree_with_numpy(tmp_path, device):
    module = compile_library(tmp_path, "pruned", SOURCE)
    rng = np.random.default_rng(1)
    xss, yss = rng.random((2, 5, 7), dtype=np.float32)
    zs = rng.random(5, dtype=np.float32)
    thresholds = [p.name for p in module.PROGRAM.params if p.is_threshold]
    for forced in [{}, {t: NEVER for t in thresholds}, {t: 1 for t in thresholds}]:
        lib = module.load(device=device, overrides=forced)
        doubled, shifted, prefixes = lib.main(xss, yss, zs)
        np.testing.assert_allclose(doubled, xss * 2)
        np.testing.assert_allclose(shifted, yss + zs[:, None])
        np.testing.assert_allclose(prefixes, np.cumsum(xss, axis=1), rtol=1e-5)
