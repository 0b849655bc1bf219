"""Array layouts on the device (ir/runtime/arrays.py, codegen/coalescing.py): the runtime's copies between
layouts keep every element, and the segmaps whose threads walk rows get and give interleaved arrays."""

import numpy as np
import pytest

from incflat.codegen import coalescing
from incflat.ir.runtime.arrays import (DeviceArray, coalesced, interleaved_strides, manifest, merged_dimensions,
                                       row_major_strides)
from incflat.ir.runtime import tuning
from incflat.compiled import compile_cached, import_module
from incflat.ir import target as T
from incflat import pipeline


@pytest.fixture(scope="module")
def ctx_of(tmp_path_factory):
    """device -> a Context of a trivial compiled program on it (the runtime's functions need one)."""
    folder = tmp_path_factory.mktemp("layouts")
    fut = folder / "trivial.fut"
    fut.write_text("entry main (x: i32): i32 = x + 1\n")
    module = import_module(compile_cached(fut, cache=folder))
    contexts = {}

    def get(device):
        if device not in contexts:
            contexts[device] = module.load(device=device).ctx
        return contexts[device]
    return get


def views(ctx, host: np.ndarray):
    """The same values as device views in several layouts: row-major, reversed, transposed, interleaved."""
    arr = ctx.to_device(host)
    yield "row-major", arr, host
    rank = host.ndim
    strides = tuple(-s for s in arr.strides)
    offset = sum((d - 1) * s for d, s in zip(arr.shape, arr.strides))
    yield "reversed", DeviceArray(arr.buf, arr.shape, arr.dtype, strides, offset), host[(slice(None, None, -1),) * rank]
    perm = tuple(reversed(range(rank)))
    yield "transposed", arr.permute(perm), host.transpose(perm)
    for inner in range(1, rank):
        yield f"interleaved {inner}", coalesced(ctx, arr, inner), host
    if rank >= 2 and min(host.shape[:2]) > 1:  # a block of rows and columns (LUD's trailing blocks)
        block = DeviceArray(arr.buf, (arr.shape[0] - 1, arr.shape[1] - 1) + arr.shape[2:], arr.dtype, arr.strides,
                            arr.strides[0] + arr.strides[1])
        yield "block", block, host[1:, 1:]


@pytest.mark.parametrize("shape", [(7,), (33, 65), (1, 40), (40, 1), (3, 5, 37), (2, 3, 4, 5), (0, 4)])
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.float32, np.float64])
def test_copies_between_layouts_keep_every_element(device, ctx_of, shape, dtype):
    ctx = ctx_of(device)
    host = (np.arange(np.prod(shape)) % 120).astype(dtype).reshape(shape)
    for label, arr, expected in views(ctx, host):
        copy = manifest(ctx, arr)
        assert copy.strides == row_major_strides(expected.shape), label
        np.testing.assert_array_equal(ctx.from_device(copy), expected, err_msg=label)
        np.testing.assert_array_equal(ctx.from_device(arr), expected, err_msg=label)


def test_a_copy_walks_as_few_dimensions_as_both_views_allow():
    """Dimensions of one element go, and adjacent ones that both views walk as one merge (fewer divisions a
    thread); dimensions that one view walks apart stay apart."""
    # a [3][4][5][6] block of a [9][9][5][6] array, into a row-major one: the two inner dimensions merge
    assert merged_dimensions([3, 4, 5, 6], [9 * 30, 30, 6, 1], [120, 30, 6, 1]) == ([3, 120], [270, 1], [120, 1])
    assert merged_dimensions([4, 1, 5], [5, 5, 1], [1, 9, 4]) == ([4, 5], [5, 1], [1, 4])  # a transpose stays 2-D
    assert merged_dimensions([1, 1], [3, 1], [3, 1]) == ([1], [0], [0])


def test_interleaved_strides_put_the_context_innermost():
    assert interleaved_strides((4, 5, 6), 1) == (1, 6 * 4, 4)
    assert interleaved_strides((4, 5, 6), 2) == (5, 1, 20)
    assert interleaved_strides((4, 5), 2) == (5, 1)


def test_coalesced_keeps_the_array_of_one_thread(device, ctx_of):
    """A context of one point (a batch of one grid: pathfinder_batch's D1) has no neighbouring threads to
    interleave with: the array is used where it lies, in any layout, and no copy is made."""
    ctx = ctx_of(device)
    host = np.arange(60, dtype=np.float32).reshape(1, 6, 10)
    for name, arr, _ in views(ctx, host):
        assert coalesced(ctx, arr, 1) is arr, name
    two = ctx.to_device(np.arange(120, dtype=np.float32).reshape(2, 6, 10))
    assert coalesced(ctx, two, 1) is not two  # two threads: interleaved by a copy
    # interleaved but for the stride of a dimension of one element, which no index multiplies by more than 0
    arr = coalesced(ctx, ctx.to_device(np.arange(15, dtype=np.float32).reshape(3, 1, 5)), 2)
    other = DeviceArray(arr.buf, arr.shape, arr.dtype, (arr.strides[0], 7, arr.strides[2]), arr.offset)
    assert coalesced(ctx, other, 2) is other


def test_coalesced_keeps_an_array_already_interleaved(device, ctx_of):
    ctx = ctx_of(device)
    arr = coalesced(ctx, ctx.to_device(np.arange(60, dtype=np.float32).reshape(3, 4, 5)), 2)
    assert arr.strides == interleaved_strides((3, 4, 5), 2)
    assert coalesced(ctx, arr, 2) is arr


def segmaps(source: str):
    prog = pipeline.compile(source, "t.fut", until="prune_unsupported")
    found = []

    def walk(body):
        for stm in body.stms:
            if isinstance(stm.exp, T.SegMap):
                found.append(stm.exp)
            from incflat.ir.traverse import nested
            for inner in nested(stm.exp):
                walk(inner.body)
    for fn in prog.funs:
        walk(fn.body)
    return found


def thread_per_row(source: str) -> T.SegMap:
    per_row = [op for op in segmaps(source) if T.walks_rows(op) and len(op.ctx) == 1]
    assert per_row, "no thread-per-row version"
    return per_row[0]


def test_a_thread_per_row_segmap_writes_its_rows_interleaved():
    op = thread_per_row("entry main [n][m] (xss: [n][m]f32): [n][m]f32 = map (\\xs -> scan (+) 0 xs) xss\n")
    assert coalescing.interleaved_results(op) == (True,)
    assert coalescing.coalesced_inputs(op) == {}, "a row walked once is read where it lies"


def test_a_row_walked_twice_is_read_interleaved():
    op = thread_per_row("entry main [n][m] (xss: [n][m]f32): [n][m]f32 =\n"
                        "  map (\\xs -> let s = f32.sum xs in map (/ s) xs) xss\n")
    assert list(coalescing.coalesced_inputs(op).values()) == [1]
    op = thread_per_row("entry main [n][m] (xss: [n][m]f32) (k: i64): [n]f32 =\n"
                        "  map (\\xs -> loop acc = 0 for i < k do acc + xs[i % m]) xss\n")
    assert list(coalescing.coalesced_inputs(op).values()) == [1], "a loop walks it many times"


def test_reading_single_elements_of_a_row_does_not_transpose_it():
    ops = segmaps("entry main [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> xs[0] + xs[m-1]) xss\n")
    assert ops and all(coalescing.coalesced_inputs(op) == {} for op in ops)
    assert all(coalescing.interleaved_results(op) == (False,) for op in ops)


def many_rows_program(rows: int) -> str:
    """rows rows of f64 per workgroup in the intra-group version (each a rotation of the one before, so that no
    two maps fuse): rows x 8 x m bytes of local memory."""
    return "entry main [n][m] (xss: [n][m]f64): [n]f64 =\n  map (\\r0 ->\n" + "".join(
        f"    let r{k} = map (\\i -> r{k - 1}[(i + 1) % m] * 0.5 + 1) (iota m)\n" for k in range(1, rows + 1)) + \
        f"    in f64.sum r{rows}) xss\n"


def many_rows(xss, rows: int):
    row = xss
    for _ in range(rows):
        row = np.roll(row, -1, axis=1) * 0.5 + 1
    return row.sum(axis=1)


def test_a_workgroup_whose_arrays_do_not_fit_local_memory_falls_back(tmp_path, device, ctx_of):
    """The intra-group version keeps its intermediate rows in local memory; where they do not fit, the guard
    in front of it falls back to the next version (-L says so; no warning: it is a limit of the device), and
    the result is still right."""
    from conftest import compile_program, run_program
    import futhark_data
    import io
    ctx = ctx_of(device)
    m = min(ctx.max_group_size, 4096)
    rows = ctx.local_mem_size // (8 * m) + 1  # one row more than the device's local memory holds
    program = compile_program(many_rows_program(rows), tmp_path)
    xss = np.random.default_rng(0).uniform(0, 1e-3, (3, m))
    expected = many_rows(xss, rows)
    stdin = futhark_data.dumpb(xss)
    warned = 0
    listing = run_program(program, b"", "--print-params").stdout.decode()
    for params in tuning.version_assignments(tuning.build_forest(tuning.parse_listing(listing))):
        options = [f"--param={k}={v}" for k, v in params.items()] + ["-b", "-d", device, "-L"]
        proc = run_program(program, stdin, *options)
        got = next(futhark_data.load(io.BytesIO(proc.stdout)))
        np.testing.assert_allclose(got, expected, rtol=1e-6, err_msg=str(params))
        assert "Warning" not in proc.stderr.decode(), "a limit of the device is not a warning"
        fell_back = "does not fit" in proc.stderr.decode()
        warned += fell_back
        # the tuner's experiments: the version the thresholds chose, or an error naming the guard and its ePar
        strict = run_program(program, stdin, *options, "--no-fallback", check=False)
        assert (strict.returncode == 1) == fell_back, strict.stderr
        if fell_back:
            error = strict.stderr.decode().splitlines()[-1]
            assert tuning.parse_no_fallback(error) == ("main.suff_intra_par_1", m), error
            assert error.startswith("Error: the version guarded by main.suff_intra_par_1 cannot run at "), error
            assert "bytes of local memory" in error, error
    assert warned == 1, "exactly the intra-group version falls back (and -L says so)"


def test_profiling_counts_the_runtimes_copies(device, tmp_path):
    """`-P`'s kernel totals include the transposes and strided copies the runtime launches."""
    fut = tmp_path / "trivial.fut"
    fut.write_text("entry main (x: i32): i32 = x + 1\n")
    ctx = import_module(compile_cached(fut, cache=tmp_path)).load(device=device, profile=True).ctx
    arr = ctx.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    coalesced(ctx, arr, 1)
    manifest(ctx, arr.permute((1, 0)))
    ctx.settle()
    assert {name: count for name, (_, count) in ctx.kernel_times.items()} == \
        {"incflat_transpose_4": 1, "incflat_copy_4": 1}
