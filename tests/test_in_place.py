"""scatter and in-place updates at the top level of an entry point run on the device: into the destination's
own buffer where the host code owns it (made by a statement of the same body, and read by nothing else), else
into a copy, so that no other array sees the write. Out-of-bounds scatter indices are ignored."""

import re

import numpy as np
import pytest

from test_kernel_shapes import compile_library

SOURCE = """
entry fresh [n][k] (dest: [n]i32) (is: [k]i64) (vs: [k]i32): [n]i32 =
  scatter (map (\\x -> x + 1) dest) is vs
entry kept [n][k] (dest: [n]i32) (is: [k]i64) (vs: [k]i32): ([n]i32, [n]i32) =
  let d = map (\\x -> x * 2) dest
  in (scatter (copy d) is vs, map (\\x -> x) d)
entry rows [n][m][k] (dest: [n][m]f32) (is: [k]i64) (vs: [k][m]f32): [n][m]f32 =
  scatter (map (map (\\x -> x)) dest) is vs
entry loop_scatter [n] (xs: [n]i64) (steps: i64): [n]i64 =
  loop acc = map (\\x -> x) xs for t < steps do
    let fresh = map (\\x -> x + 1) acc
    in scatter fresh [t % n] [t]
entry update_fresh [n] (xs: [n]i32) (i: i64): [n]i32 =
  let a = map (\\x -> x * 2) xs in a with [i] = 7
entry update_kept [n] (xs: [n]i32) (i: i64): ([n]i32, [n]i32) =
  let a = map (\\x -> x * 2) xs in (copy a with [i] = 7, map (\\x -> x) a)
entry slice_fresh [n] (xs: [n]i32) (ys: [2]i32): [n]i32 =
  let a = map (\\x -> x + 1) xs in a with [1:3] = ys
entry slice_kept [n][m] (xss: [n][m]i32): ([n][m]i32, [n][m]i32) =
  let a = map (map (\\x -> x + 1)) xss in (copy a with [0, 0:2] = map (\\x -> x * 10) a[1, 1:3], a)
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    directory = tmp_path_factory.mktemp("in_place")
    return compile_library(directory, "in_place", SOURCE), (directory / "in_place.py").read_text()


def in_place_decisions(text: str) -> list:
    """The in_place argument of each scatter and update in the entry points' code (not the runtime's)."""
    entries = text[:text.index("# ---- the runtime of incflat")]
    return [line.split("in_place=")[1][:4] for line in entries.splitlines()
            if "= scatter(ctx" in line or "= update(ctx" in line]


def test_only_owned_arrays_are_written_in_place(library):
    _, text = library
    decisions = in_place_decisions(text)
    # fresh, kept, rows (the result of a guard whose every version makes a buffer of its own),
    # loop_scatter, update_fresh, update_kept, slice_fresh, slice_kept
    assert decisions == ["True", "Fals", "True", "True", "True", "Fals", "True", "Fals"]


def test_scatter_and_updates_agree_with_numpy(library, device):
    module, _ = library
    lib = module.load(device=device)
    dest = np.arange(6, dtype=np.int32)
    is_ = np.array([4, 1, -1, 7, 0, 6], np.int64)
    vs = np.array([10, 20, 30, 40, 50, 60], np.int32)
    want = dest + 1
    want[[4, 1, 0]] = [10, 20, 50]
    np.testing.assert_array_equal(lib.fresh(dest, is_, vs), want)
    scattered, doubled = lib.kept(dest, is_, vs)
    want = dest * 2
    want[[4, 1, 0]] = [10, 20, 50]
    np.testing.assert_array_equal(scattered, want)
    np.testing.assert_array_equal(doubled, dest * 2)
    grid = np.arange(8, dtype=np.float32).reshape(4, 2)
    rows = np.array([[10, 20], [30, 40], [50, 60]], np.float32)
    want = grid.copy()
    want[[2, 0]] = rows[[0, 2]]
    np.testing.assert_array_equal(lib.rows(grid, np.array([2, 9, 0], np.int64), rows), want)
    xs = np.zeros(3, np.int64)
    want = xs.copy()
    for t in range(5):
        want = want + 1
        want[t % 3] = t
    np.testing.assert_array_equal(lib.loop_scatter(xs, np.int64(5)), want)
    np.testing.assert_array_equal(lib.update_fresh(dest, np.int64(2)), [0, 2, 7, 6, 8, 10])
    updated, doubled = lib.update_kept(dest, np.int64(2))
    np.testing.assert_array_equal(updated, [0, 2, 7, 6, 8, 10])
    np.testing.assert_array_equal(doubled, dest * 2)
    want = dest + 1
    want[1:3] = [-1, -2]
    np.testing.assert_array_equal(lib.slice_fresh(dest, np.array([-1, -2], np.int32)), want)
    xss = np.arange(12, dtype=np.int32).reshape(3, 4)
    updated, plus_one = lib.slice_kept(xss)
    want = xss + 1
    want[0, 0:2] = (xss + 1)[1, 1:3] * 10
    np.testing.assert_array_equal(updated, want)
    np.testing.assert_array_equal(plus_one, xss + 1)


# Inside kernels: a loop whose state is updated and then read no more writes into the state (OptionPricing's
# Brownian bridge, LU's diagonal block), at the thread level and at the workgroup level.
KERNEL_LOOPS = """
entry bridge [n][m] (xss: [n][m]f32) (order: [m]i64): [n][m]f32 =
  map (\\xs -> loop acc = copy xs for t < m do
                 let j = order[t]
                 let v = acc[j] + acc[(j + 1) % m]
                 in acc with [j] = v) xss
entry diagonal [n][b] (blocks: [n][b][b]f32): [n][b][b]f32 =
  map (\\blk -> loop mat = copy blk for i < b - 1 do
                  let col = map (\\j -> if j > i then mat[j, i] / (mat[i, i] + 1) else mat[j, i]) (iota b)
                  let mat[:, i] = col
                  let row = map (\\j -> if j > i then mat[i + 1, j] - mat[i + 1, i] else mat[i + 1, j]) (iota b)
                  let mat[i + 1] = row
                  in mat) blocks
"""


@pytest.fixture(scope="module")
def kernel_loops(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("kernel_loops"), "kernel_loops", KERNEL_LOOPS)


def test_a_loop_whose_state_is_updated_writes_into_it(kernel_loops):
    """No kernel swaps or copies a loop's state at each step: the updates write into it."""
    sources = "".join(k.source for k in kernel_loops.PROGRAM.kernels.values())
    assert "swapped" not in sources


@pytest.mark.parametrize("entry", ["bridge", "diagonal"])
def test_every_version_of_a_loop_updated_in_place_agrees_with_the_interpreter(kernel_loops, device, entry):
    from incflat.compiled import version_assignments
    from incflat.datasets import compare_values
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    rng = np.random.default_rng(5)
    if entry == "bridge":
        args = [rng.random((7, 11), dtype=np.float32), rng.permutation(11).astype(np.int64)]
    else:
        args = [rng.random((3, 6, 6), dtype=np.float32)]
    want = list(run_entry(source_program(KERNEL_LOOPS), entry, args))
    for assignment in version_assignments(kernel_loops):
        lib = kernel_loops.load(device=device, overrides=assignment)
        got = getattr(lib, entry)(*args)
        assert compare_values([got], want) is None, assignment


def test_an_update_read_afterwards_is_not_in_place():
    """The analysis: a later read of the updated array (or of a view of it) keeps the copy."""
    import dataclasses
    from incflat import pipeline
    from incflat.codegen.in_place import in_place_updates
    from incflat.ir import source as S
    from incflat.ir.traverse import walk_exps
    from incflat.ir.types import I64
    prog = pipeline.compile(KERNEL_LOOPS, "t.fut", until="remove_dead_code")
    bridge = next(f for f in prog.funs if f.name == "bridge")
    (loop,) = [e for e in walk_exps(bridge.body) if isinstance(e, S.Loop)]
    assert in_place_updates(loop)
    state = loop.params[0]
    reread = S.Stm((S.Var("late", state.type.elem),), S.Index(state, (S.Const(0, I64),)))
    body = dataclasses.replace(loop.body, stms=loop.body.stms + (reread,))
    assert not in_place_updates(dataclasses.replace(loop, body=body))


@pytest.mark.parametrize("entry", ["bridge", "diagonal"])
def test_a_workgroup_version_runs_with_fewer_threads_than_its_width(kernel_loops, device, entry, monkeypatch, capsys):
    """A kernel whose registers allow fewer threads than the level-0 width (LU's 32 x 32 block on an H200)
    runs with what it allows, each thread taking several elements, instead of failing to launch. Here the
    driver is made to allow 3 threads and to refuse more, as NVIDIA's does (OUT_OF_RESOURCES)."""
    import pyopencl as cl
    from incflat.compiled import version_assignments
    from incflat.datasets import compare_values
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    rng = np.random.default_rng(6)
    args = ([rng.random((5, 9), dtype=np.float32), rng.permutation(9).astype(np.int64)] if entry == "bridge"
            else [rng.random((2, 7, 7), dtype=np.float32)])
    want = list(run_entry(source_program(KERNEL_LOOPS), entry, args))
    for assignment in version_assignments(kernel_loops):
        lib = kernel_loops.load(device=device, overrides=assignment)
        launch = lib.ctx.launch

        def limited(name, global_size, local_size, *rest):
            if local_size > 3:
                raise cl.RuntimeError("clEnqueueNDRangeKernel failed: OUT_OF_RESOURCES")
            return launch(name, global_size, local_size, *rest)
        monkeypatch.setattr(lib.ctx, "kernel_group_size", lambda names, size: min(size, 3))
        monkeypatch.setattr(lib.ctx, "launch", limited)
        got = getattr(lib, entry)(*args)
        assert compare_values([got], want) is None, assignment
    assert "could not be run" not in capsys.readouterr().err


PRIVATE = """
entry main [n] (xs: [n]f32): [n][8]f32 =
  map (\\x -> loop acc = replicate 8 x for i < 8 do acc with [i] = acc[(i + 1) % 8] * 2 + f32.i64 i) xs
entry wide [n] (xs: [n]f32): [n][100]f32 =
  map (\\x -> loop acc = replicate 100 x for i < 100 do acc with [i] = acc[(i + 1) % 100] * 2) xs
"""


def test_a_threads_small_array_of_constant_size_is_private(tmp_path, device):
    """A thread's array of at most PRIVATE_ELEMENTS elements of constant size lives in its private memory (no
    global scratch buffer); a larger one keeps its global scratch; both agree with the interpreter."""
    from incflat.codegen.kernel_base import PRIVATE_ELEMENTS
    from incflat.datasets import compare_values
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    module = compile_library(tmp_path, "private", PRIVATE)
    assert 8 <= PRIVATE_ELEMENTS < 100
    sources = {k.name: k.source for k in module.PROGRAM.kernels.values()}
    assert any("float private_" in s for s in sources.values())
    assert any("scratch" in s and "private" not in s for s in sources.values())
    xs = np.linspace(-1, 1, 13, dtype=np.float32)
    lib = module.load(device=device)
    for entry in ("main", "wide"):
        want = list(run_entry(source_program(PRIVATE), entry, [xs]))
        assert compare_values([getattr(lib, entry)(xs)], want) is None, entry


KERNEL_SCATTERS = """
entry rows [n][m] (xss: [n][m]i32) (is: [m]i64): [n][m]i32 =
  map (\\xs -> loop acc = copy xs for t < 3 do scatter acc is (map (\\x -> x * 2 + i32.i64 t) acc)) xss
entry blocks [n] (bs: [n][4][4]i32): [n][4][4]i32 =
  map (\\b -> scatter_2d (copy b) [(0, 3), (3, 0), (5, 1), (-1, 0)] [b[1, 1], b[2, 2], 7, 8]) bs
entry whole_rows [n] (bs: [n][4][3]f32) (is: [2]i64): [n][4][3]f32 =
  map (\\b -> scatter (copy b) is [b[3], map (+ 1) b[0]]) bs
entry diagonals [n] (bs: [n][5][5]i32): [n][5][5]i32 =
  map (\\b -> loop b = copy b for m < 4 do
                let inds = tabulate 4 (\\t -> if t > m then (-1, -1) else (m - t + 1, t + 1))
                let vals = tabulate 4 (\\t -> if t > m then 0 else b[m - t, t] + b[m - t + 1, t])
                in scatter_2d b inds vals) bs
"""


@pytest.fixture(scope="module")
def kernel_scatters(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("kernel_scatters"), "kernel_scatters", KERNEL_SCATTERS)


@pytest.mark.parametrize("entry", ["rows", "blocks", "whole_rows", "diagonals"])
def test_every_version_of_a_scatter_inside_a_kernel_agrees_with_the_interpreter(kernel_scatters, device, entry):
    """NW's blocks: scatter (and scatter_2d, a scatter of the flattened array) inside a kernel, at the thread
    level and by a workgroup, into a copy of its destination; out-of-bounds indices are ignored; rows of a
    multi-dimensional destination too."""
    from incflat.compiled import version_assignments
    from incflat.datasets import compare_values
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    rng = np.random.default_rng(7)
    if entry == "rows":
        args = [rng.integers(-9, 9, (5, 6), dtype=np.int32), np.array([5, -1, 0, 6, 2, 3], dtype=np.int64)]
    elif entry in ("blocks", "diagonals"):
        args = [rng.integers(-9, 9, (3, 4, 4) if entry == "blocks" else (3, 5, 5), dtype=np.int32)]
    else:
        args = [rng.random((3, 4, 3), dtype=np.float32), np.array([1, 9], dtype=np.int64)]
    want = list(run_entry(source_program(KERNEL_SCATTERS), entry, args))
    assignments = version_assignments(kernel_scatters)
    assert len(assignments) > 1
    for assignment in assignments:
        lib = kernel_scatters.load(device=device, overrides=assignment)
        assert compare_values([getattr(lib, entry)(*args)], want) is None, assignment


def test_a_loop_that_scatters_into_its_state_writes_into_it(kernel_scatters):
    """NW's anti-diagonals: `scatter_2d b inds vals` is a scatter of the flattened block; the reshapes around
    it are views of the loop's state and the scatter writes into it: no kernel copies the block at each step."""
    assert not any("swapped" in k.source for k in kernel_scatters.PROGRAM.kernels.values())


# NW's blocks: an array the body made, updated twice, then the state of two loops in turn.
BLOCKS = """
def block [n] (b: i64) (xss: [n][n]i32) (bx: i64): [b][b]i32 =
  let inp = replicate ((b + 1) * (b + 1)) 0i32 |> unflatten
  let inp[0:b + 1, 0] = xss[0:b + 1, bx]
  let inp[0, 1:b + 1] = xss[0, bx + 1:bx + b + 1]
  let inp = loop inp for m < b do
              let inds = tabulate b (\\t -> if t > m then (-1, -1) else (m - t + 1, t + 1))
              let vals = tabulate b (\\t -> if t > m then 0 else inp[m - t, t] + inp[m - t + 1, t] - 1)
              in scatter_2d inp inds vals
  let inp = loop inp for m < b - 1 do
              let inds = tabulate b (\\t -> if t > m then (-1, -1) else (b - t, t + b - m))
              let vals = tabulate b (\\t -> if t > m then 0 else inp[b - t - 1, t + b - m - 1] * 2 + 1)
              in scatter_2d inp inds vals
  in inp[1:b + 1, 1:b + 1] :> [b][b]i32
entry main [n] (b: i64) (xss: [n][n]i32) (k: i64): [k][b][b]i32 =
  tabulate k (\\bx -> block b xss bx)
"""


@pytest.fixture(scope="module")
def blocks(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("blocks"), "blocks", BLOCKS)


def test_a_workgroup_keeps_one_copy_of_a_block_that_it_updates_and_loops_over():
    """The updates write into the block the body made, and each loop takes it over as its state: the
    workgroup's local memory holds one (b+1) x (b+1) block, not one per update and two per loop (seven
    blocks, 118 KB at NW's b = 64, past the 48 KB an H200 gives a workgroup)."""
    from incflat import pipeline
    from incflat.codegen.kernel import ScratchParam
    kernels = pipeline.compile(BLOCKS, "blocks.fut").kernels
    intra = [k for k in kernels if any(isinstance(p, ScratchParam) and p.shared for p in k.params)]
    assert intra
    for k in intra:
        matrices = [p for p in k.params if isinstance(p, ScratchParam) and p.shared and len(p.shape) == 2]
        assert len(matrices) == 1, (k.name, matrices)
        lines = [line.strip() for line in k.source().splitlines()]
        assert "swapped" not in k.source()
        assert not any(a.startswith("barrier(") and a == b for a, b in zip(lines, lines[1:])), k.name


def test_every_version_of_a_block_updated_in_place_agrees_with_the_interpreter(blocks, device):
    from incflat.compiled import version_assignments
    from incflat.datasets import compare_values
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    rng = np.random.default_rng(8)
    args = [np.int64(5), rng.integers(-9, 9, (14, 14), dtype=np.int32), np.int64(3)]
    want = list(run_entry(source_program(BLOCKS), "main", args))
    assignments = version_assignments(blocks)
    assert len(assignments) > 1
    for assignment in assignments:
        lib = blocks.load(device=device, overrides=assignment)
        assert compare_values([lib.main(*args)], want) is None, assignment


# The host's loops: LUD's blocks updated at every step, NW's flattened matrix scattered into, and a loop that
# reads its old state after updating a copy.
HOST_LOOPS = """
entry steps [n] (xs: *[n]f32) (k: i64): [n]f32 =
  loop acc = xs for i < k do
    let doubled = map (\\x -> x * 2) acc
    let acc[i % n] = doubled[(i + 1) % n] + 1
    in acc
entry flat [n] (xss: *[n][n]i32) (k: i64): [n][n]i32 =
  loop a = xss for i < k do
    let vals = map (\\x -> x + i32.i64 i) a[i % n]
    let is = map (\\j -> j * n + (i + j) % n) (iota n)
    in unflatten (scatter (flatten a) is vals)
entry reread [n] (xs: *[n]f32) (k: i64): ([n]f32, f32) =
  loop (acc, last) = (xs, 0) for i < k do
    let acc2 = copy acc with [i % n] = 7
    in (acc2, acc[i % n] + last)
entry after [n] (xs: *[n]f32) (k: i64): [n]f32 =
  let a = loop acc = xs for i < k do acc with [i % n] = f32.i64 i
  let head = map (\\x -> x * 2) a[0:2]
  in a with [0:2] = head
"""


@pytest.fixture(scope="module")
def host_loops(tmp_path_factory):
    directory = tmp_path_factory.mktemp("host_loops")
    return compile_library(directory, "host_loops", HOST_LOOPS), (directory / "host_loops.py").read_text()


def test_a_host_loop_writes_into_its_state_from_one_copy(host_loops):
    """The updates and scatters of a loop's state that nothing reads afterwards write into it; the loop starts
    from a copy of an initial array it does not own (the caller's), made once, not one a step."""
    _, text = host_loops
    decisions = in_place_decisions(text)
    # steps, flat, reread (its old state is read after), after: the loop's and the update of its result, whose
    # view the update's value was computed from before
    assert decisions == ["True", "True", "Fals", "True", "True"]
    copies = re.findall(r"manifest\(ctx, (xss?)_\d+\)", text)
    assert copies == ["xs", "xss", "xs"]  # once each, before the loop


def test_a_host_loop_updated_in_place_agrees_with_the_interpreter(host_loops, device):
    """Every version; the caller's arrays are left as they were (passed again, they give the same result)."""
    from incflat.compiled import version_assignments
    from incflat.datasets import compare_values
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    module, _ = host_loops
    rng = np.random.default_rng(9)
    cases = {"steps": [rng.random(6, dtype=np.float32), np.int64(9)],
             "flat": [rng.integers(-9, 9, (5, 5), dtype=np.int32), np.int64(7)],
             "reread": [rng.random(4, dtype=np.float32), np.int64(6)],
             "after": [rng.random(5, dtype=np.float32), np.int64(3)]}
    for assignment in version_assignments(module):
        lib = module.load(device=device, overrides=assignment)
        for entry, args in cases.items():
            want = list(run_entry(source_program(HOST_LOOPS), entry, args))
            kept = [np.copy(a) for a in args]
            for _ in range(2):
                got = getattr(lib, entry)(*args)
                assert compare_values(list(got) if isinstance(got, tuple) else [got], want) is None, (entry, assignment)
            for a, b in zip(args, kept):
                np.testing.assert_array_equal(a, b)


PADDED = """
entry diagonal [n] (blocks: [n][32][32]f32): [n][32][32]f32 =
  map (\\blk -> loop mat = copy blk for i < 31 do
                  let col = map (\\j -> if j > i then mat[j, i] / (mat[i, i] + 1) else mat[j, i]) (iota 32)
                  let mat[:, i] = col
                  let row = map (\\j -> if j > i then mat[i + 1, j] - mat[i + 1, i] else mat[i + 1, j]) (iota 32)
                  let mat[i + 1] = row
                  in mat) blocks
entry scaled [n] (blocks: [n][32][32]f32): [n][32][32]f32 =
  map (\\blk -> loop mat = copy blk for i < 3 do map (\\r -> map (\\x -> x * 0.5 + r[i]) r) mat) blocks
"""


def test_a_workgroups_rows_of_32_elements_are_padded_and_agree_with_the_interpreter(tmp_path, device):
    """LU's diagonal block: thread j reading row j of a 32 x 32 block in local memory hits one bank for all 32
    threads; laid out 33 elements a row, each a bank of its own. Every version agrees with the interpreter."""
    from incflat import pipeline
    from incflat.codegen.kernel import ScratchParam
    from incflat.compiled import version_assignments
    from incflat.datasets import compare_values
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    kernels = pipeline.compile(PADDED, "padded.fut").kernels
    blocks = [p.shape for k in kernels for p in k.params if isinstance(p, ScratchParam) and p.shared and len(p.shape) == 2]
    assert blocks and all(shape == (32, 33) for shape in blocks)
    module = compile_library(tmp_path, "padded", PADDED)
    args = [np.random.default_rng(10).random((2, 32, 32), dtype=np.float32)]
    # (scaled: a workgroup's map over a block's rows and columns writes a padded array, a row per thread)
    for entry in ("diagonal", "scaled"):
        want = list(run_entry(source_program(PADDED), entry, args))
        for assignment in version_assignments(module):
            lib = module.load(device=device, overrides=assignment)
            assert compare_values([getattr(lib, entry)(*args)], want) is None, (entry, assignment)
