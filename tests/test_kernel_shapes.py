"""Reductions and scans split over several workgroups or threads per segment (as on a GPU with many
compute units), with small workgroups, agree with numpy: the parts are combined in order. Scans of one
narrow value take the single pass with look-back; of 64-bit values or tuples, three passes; segmented or
not. Column reductions read a transposed view with a thread (or several) per column."""

import dataclasses
import importlib.util

import numpy as np
import pytest

from incflat.cli import main as incflat_main
from incflat.ir.runtime.tuning import NEVER

SOURCE = """
entry sum [n] (xs: [n]i64): i64 = reduce (+) 0 xs
entry prefix [n] (xs: [n]i64): [n]i64 = scan (+) 0 xs
entry sum_odd [n] (xs: [n]i32): i32 = reduce (+) 0 xs[1::2]
entry prefix_odd [n] (xs: [n]i32): []i32 = scan (+) 0 xs[1::2]
entry last_nonzero [n] (xs: [n]i32): [n]i32 = scan (\\a b -> if b == 0 then a else b) 0 xs
entry row_prefix [n][m] (xss: [n][m]i64): [n][m]i64 = map (\\xs -> scan (+) 0 xs) xss
entry row_prefix32 [n][m] (xss: [n][m]i32): [n][m]i32 = map (\\xs -> scan (+) 0 xs) xss
entry col_prefix [n][m] (xss: [n][m]i32): [m][n]i32 = map (\\xs -> scan (+) 0 xs) (transpose xss)
entry pair_prefix [n] (xs: [n]i32): ([n]i32, [n]i32) =
  unzip (scan (\\(a, b) (c, d) -> (a + c, if d == 0 then b else d)) (0, 0) (zip xs xs))
entry last_of [n] (xs: [n]i32): i32 = reduce (\\a b -> if b == 0 then a else b) 0 xs
entry row_last [n][m] (xss: [n][m]i32): [n]i32 = map (\\xs -> reduce (\\a b -> if b == 0 then a else b) 0 xs) xss
entry col_sums [n][m] (xss: [n][m]i64): [m]i64 = map (\\col -> reduce (+) 0 col) (transpose xss)
entry col_last [n][m] (xss: [n][m]i32): [m]i32 =
  map (\\col -> reduce (\\a b -> if b == 0 then a else b) 0 col) (transpose xss)
"""


def compile_library(directory, name: str, source: str):
    """The program compiled with --library and imported."""
    (directory / f"{name}.fut").write_text(source)
    assert incflat_main(["compile", "--backend=pyopencl", "--library", str(directory / f"{name}.fut")]) == 0
    spec = importlib.util.spec_from_file_location(name, directory / f"{name}.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("shapes"), "shapes", SOURCE)


def last_nonzero(xs):
    out, acc = [], 0
    for x in xs:
        acc = acc if x == 0 else x
        out.append(acc)
    return np.array(out, np.int32)


@pytest.mark.parametrize("groups, group_size", [(1, 1), (3, 4), (16, 8), (64, 32)])
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 4099])
def test_parts_combine_in_order(module, device, groups, group_size, n):
    lib = flattened(module, device, groups, group_size)
    check_every_entry(lib, n)
    assert lib.ctx.device_state.last_args[False] or n == 0  # the 32-bit build ran


@pytest.mark.parametrize("n", [7, 4099])
def test_the_64_bit_build_agrees(module, device, monkeypatch, n):
    """Kernels index in 32 bits unless a launch's buffers or iteration space reach INDEX32_LIMIT: then
    the build with 64-bit indices runs (made on first need). Here every launch reaches it."""
    lib = flattened(module, device, 16, 8)
    narrow, wide = (lib.ctx.device_state.last_args[w] for w in (False, True))
    narrow.clear()
    wide.clear()
    monkeypatch.setattr(module.RUNTIME.device, "INDEX32_LIMIT", 0)
    check_every_entry(lib, n)
    assert wide and not narrow


def flattened(module, device, groups, group_size):
    """The program with its most flattened versions, on `groups` workgroups of `group_size` threads."""
    lib = module.load(device=device, overrides={p.name: NEVER for p in module.PROGRAM.params if p.is_threshold})
    lib.ctx.num_groups, lib.ctx.group_size = groups, group_size
    return lib


def check_every_entry(lib, n):
    xs = (np.arange(n, dtype=np.int64) * 7919) % 13 - 6
    assert lib.sum(xs) == xs.sum()
    np.testing.assert_array_equal(lib.prefix(xs), np.cumsum(xs))
    # strided inputs take the loops written for any stride (adjacent elements take their own)
    assert lib.sum_odd(xs.astype(np.int32)) == xs[1::2].sum()
    np.testing.assert_array_equal(lib.prefix_odd(xs.astype(np.int32)), np.cumsum(xs[1::2]))
    ys = (xs * (np.arange(n) % 3 == 0)).astype(np.int32)
    np.testing.assert_array_equal(lib.last_nonzero(ys), last_nonzero(ys))
    assert lib.last_of(ys) == (last_nonzero(ys)[-1] if n else 0)
    few = ys[: (n // 3) * 3].reshape(3, -1)  # few wide rows: several workgroups a row, the last folding them
    np.testing.assert_array_equal(lib.row_last(few), [last_nonzero(r)[-1] if len(r) else 0 for r in few])
    xss = xs[: (n // 7) * 7].reshape(-1, 7) if n >= 7 else np.zeros((0, 7), np.int64)
    np.testing.assert_array_equal(lib.row_prefix(xss), np.cumsum(xss, axis=1))
    np.testing.assert_array_equal(lib.row_prefix32(xss.astype(np.int32)), np.cumsum(xss, axis=1))
    # rows not laid out one after another take the segmented loads written for any strides
    np.testing.assert_array_equal(lib.col_prefix(xss.astype(np.int32)), np.cumsum(xss.T, axis=1))
    sums, lasts = lib.pair_prefix(ys)
    np.testing.assert_array_equal(sums, np.cumsum(ys))
    np.testing.assert_array_equal(lasts, last_nonzero(ys))
    wide = xs[: (n // 41) * 41].reshape(-1, 41) if n >= 41 else np.zeros((0, 41), np.int64)
    np.testing.assert_array_equal(lib.col_sums(wide), wide.sum(axis=0))
    wide32 = (wide * (np.arange(wide.size).reshape(wide.shape) % 3 == 0)).astype(np.int32)
    np.testing.assert_array_equal(lib.col_last(wide32), [last_nonzero(c)[-1] if len(c) else 0 for c in wide32.T])


ROW_SUMS_INTRA = {"main.suff_outer_par_0": NEVER, "main.suff_intra_par_1": 1}  # a workgroup per row


def row_sums_module(tmp_path):
    """Row sums compiled as a library: a thread per row, a workgroup per row, or a segmented reduction."""
    source = "entry main [n][m] (xss: [n][m]f32): [n]f32 = map (\\xs -> reduce (+) 0 xs) xss"
    return compile_library(tmp_path, "rows", source)


def test_a_version_that_cannot_launch_falls_back_with_one_warning(tmp_path, device, capsys):
    import pyopencl as cl
    lib = row_sums_module(tmp_path).load(device=device, overrides=ROW_SUMS_INTRA)
    launch, intra = lib.ctx.launch, []

    def failing_launch(name, global_size, local_size, memory, scalars, reach):
        if not intra or intra[0] == name:  # the first kernel is the workgroup-level version
            intra[:1] = [name]
            raise cl.Error("simulated: out of resources")
        return launch(name, global_size, local_size, memory, scalars, reach)

    lib.ctx.launch = failing_launch
    xss = np.arange(12, dtype=np.float32).reshape(3, 4)
    for _ in range(2):
        np.testing.assert_array_equal(lib.main(xss), xss.sum(axis=1))
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and "main.suff_intra_par_1" in warnings[0]


def with_broken_kernel(module, name: str):
    """The module's program with a compile error in kernel `name`."""
    program = module.PROGRAM
    kernels = []
    for k in program.kernels.values():
        body = k.source.index("{") + 1
        broken = k.source[:body] + "\n#error simulated: too much local memory\n" + k.source[body:]
        kernels.append(dataclasses.replace(k, source=broken) if k.name == name else k)
    return type(program)(program.name, program.opencl_prelude, kernels, program.params, program.errors,
                         program.entry_points.values())


def test_a_kernel_that_does_not_build_takes_only_its_version_out(tmp_path, device, capsys, monkeypatch):
    m = row_sums_module(tmp_path)
    lib = m.load(device=device, overrides=ROW_SUMS_INTRA)
    launched = []
    launch = lib.ctx.launch
    lib.ctx.launch = lambda name, *rest: (launched.append(name), launch(name, *rest))
    xss = np.arange(12, dtype=np.float32).reshape(3, 4)
    lib.main(xss)
    broken = launched[0]  # the workgroup-level version's kernel
    monkeypatch.setattr(m, "PROGRAM", with_broken_kernel(m, broken))
    capsys.readouterr()
    lib = m.load(device=device, overrides=ROW_SUMS_INTRA)
    for _ in range(2):
        np.testing.assert_array_equal(lib.main(xss), xss.sum(axis=1))
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and "main.suff_intra_par_1" in warnings[0] and broken in warnings[0]
    # a version with nothing to fall back to reports the kernel and the compiler's complaint
    name = next(iter(m.PROGRAM.kernels))
    monkeypatch.setattr(m, "PROGRAM", with_broken_kernel(m, name))
    lib = m.load(device=device, overrides={"main.suff_outer_par_0": 1})
    with pytest.raises(m.ProgramError, match=f"kernel {name} could not be built"):
        lib.main(xss)


def test_unsafe_programs_check_nothing_in_kernels(tmp_path, device):
    from conftest import run_program
    (tmp_path / "div.fut").write_text("entry main [n] (xs: [n]i32) (d: i32): [n]i32 = map (\\x -> x / d) xs")
    safe = tmp_path / "safe"
    unsafe = tmp_path / "unsafe"
    assert incflat_main(["compile", str(tmp_path / "div.fut"), "-o", str(safe)]) == 0
    assert incflat_main(["compile", "--unsafe", str(tmp_path / "div.fut"), "-o", str(unsafe)]) == 0
    assert "division by zero" in run_program(safe, b"[1, 2] 0", "-d", device, check=False).stderr.decode()
    assert run_program(unsafe, b"[1, 2] 0", "-d", device).returncode == 0
