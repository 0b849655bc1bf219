"""No array passes through the host inside an entry point: the runtime's array operations (rotate, concat,
array literals, replicate, iota) work on the device, and Context.upload/download count what crosses (-P
prints it). Each result is checked against the reference interpreter."""

import json

import numpy as np
import pytest

from conftest import compile_program, run_program
from incflat.datasets import compare_values
from incflat.ir.interp.interpreter import run_entry
from incflat.pipeline import source_program
from test_kernel_shapes import compile_library

# Every host-level array operation of the runtime, on arrays that kernels made (so on the device).
ARRAY_OPS = """
entry main [n] (xs: [n]i32) (k: i64) : ([n]i32, []i32, [2][n]i32, [3]i32, [5]i32, [n]i64, [4]f32, [2][n]i32) =
  let ys = map (\\x -> x * 2) xs
  let r = rotate k ys
  let c = concat ys r
  let m = [ys, r]
  let a = reduce (+) 0 ys
  let lit = [a, a + 1, 3]
  let rep = replicate 5 7i32
  let is = map (+ 1) (iota n)
  let consts = [1.5f32, 2, 3, 4]
  let rows = replicate 2 ys
  in (r, c, m, lit, rep, is, consts, rows)
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("transfers"), "array_ops", ARRAY_OPS)


@pytest.mark.parametrize("n, k", [(1, 0), (7, 3), (7, -2), (7, 16), (1000, 999)])
def test_array_operations_stay_on_the_device(module, device, n, k):
    lib = module.load(device=device)
    xs = (np.arange(n, dtype=np.int32) * 7919) % 13 - 6
    ctx = lib.ctx
    inputs = lib._program.entry_points["main"].upload(ctx, [xs, np.int64(k)])
    ctx.count_transfers()
    results = ctx.call(lib._program.entry_points["main"].fn, inputs)
    ctx.queue.finish()
    moved, _ = ctx.count_transfers()
    assert (moved.arrays_up, moved.arrays_down) == (0, 0), moved.as_json()
    got = [ctx.from_device(r) for r in results]
    expected = list(run_entry(source_program(ARRAY_OPS), "main", [xs, np.int64(k)]))
    assert compare_values(got, expected) is None


def test_a_literal_of_constants_is_uploaded_once(module, device):
    lib = module.load(device=device)
    xs = np.arange(5, dtype=np.int32)
    lib.ctx.device_state.constants.clear()  # (the device state is the process's: other tests ran the program)
    lib.ctx.count_transfers()
    uploads = []
    for _ in range(3):
        lib.main(xs, np.int64(1))
        moved, _ = lib.ctx.count_transfers()
        uploads.append(moved.constants)
        # the call's argument (one array up) and its eight results (down), nothing else
        assert (moved.arrays_up, moved.arrays_down) == (1, 8), moved.as_json()
    assert uploads == [1, 0, 0]


def test_profile_reports_the_transfers_of_the_timed_runs(tmp_path, device):
    source = "entry main (xs: []i32) : []i32 = let ys = map (+1) xs in concat ys (rotate 1 ys)"
    program = compile_program(source, tmp_path)
    proc = run_program(program, b"[1, 2, 3]", "-d", device, "-r", "3", "-P", "--profile-json",
                       str(tmp_path / "profile.json"))
    assert "host-device transfers per run: 0 arrays to the device (0 bytes), 0 from it (0 bytes)" in \
        proc.stderr.decode()
    profile = json.loads((tmp_path / "profile.json").read_text())
    assert profile["runs"] == 3
    assert profile["transfers"]["to_device"] == {"arrays": 0, "bytes": 0}
    assert profile["transfers"]["from_device"] == {"arrays": 0, "bytes": 0}


def test_a_rotation_by_a_multiple_of_the_length_is_the_array(module, device):
    """rotate by a multiple of the length: the same elements (the runtime returns the array itself)."""
    lib = module.load(device=device)
    xs = np.arange(6, dtype=np.int32)
    out = lib.main(xs, np.int64(12))
    assert (out[0] == xs * 2).all()


def test_a_workgroup_version_that_failed_to_launch_is_not_tried_again(module, device, capsys):
    """A version whose kernel the driver refused (OUT_OF_RESOURCES: too many registers for so many threads)
    falls back at once in later runs, for as many threads or more, instead of failing again at each run."""
    import pyopencl as cl
    ctx = module.load(device=device).ctx
    assert ctx.fits_group("main.suff_intra_par_9", 64)
    ctx.warn_once("main.suff_intra_par_9", 64, cl.RuntimeError("clEnqueueNDRangeKernel failed: OUT_OF_RESOURCES"))
    assert "could not be run" in capsys.readouterr().err
    assert not ctx.fits_group("main.suff_intra_par_9", 64) and not ctx.fits_group("main.suff_intra_par_9", 128)
    assert ctx.fits_group("main.suff_intra_par_9", 32)


FILTERS = """
entry main [n] (xs: [n]i32) (k: i32): ([]i32, []bool, [][2]f32) =
  let kept = filter (\\x -> x % k == 0) (map (+ 1) xs)
  let flags = filter (\\b -> b) (map (\\x -> x > 0) xs)
  let rows = filter (\\r -> r[0] > 0) (map (\\x -> [f32.i32 x, f32.i32 (x * 2)]) xs)
  in (kept, flags, rows)
"""


@pytest.fixture(scope="module")
def filters(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("filters"), "filters", FILTERS)


@pytest.mark.parametrize("n, k", [(0, 2), (1, 1), (7, 3), (300, 1), (3000, 5), (70000, 7), (5000, 100000)])
def test_filter_compacts_on_the_device(filters, device, n, k):
    """filter's compaction runs on the device (counts per workgroup, their offsets, the positions in order,
    then a scatter), whatever the sizes: nothing but the kept count is read back, and the results are the
    interpreter's (in order: a filter keeps its elements' order)."""
    lib = filters.load(device=device)
    xs = ((np.arange(n, dtype=np.int64) * 7919) % 201 - 100).astype(np.int32)
    entry = lib._program.entry_points["main"]
    inputs = entry.upload(lib.ctx, [xs, np.int32(k)])
    lib.ctx.count_transfers()
    results = lib.ctx.call(entry.fn, inputs)
    lib.ctx.queue.finish()
    moved, _ = lib.ctx.count_transfers()
    assert (moved.arrays_up, moved.arrays_down) == (0, 0), moved.as_json()
    got = [lib.ctx.from_device(r) for r in results]
    assert compare_values(got, list(run_entry(source_program(FILTERS), "main", [xs, np.int32(k)]))) is None
