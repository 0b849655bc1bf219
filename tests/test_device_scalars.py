"""sink_scalars (codegen.lower.device_scalars): host scalars computed from kernels' scalar results, which only kernels
read, are computed by those kernels, which read the results in device memory; the host reads back only what
host code uses."""

import numpy as np
import pytest

from incflat import pipeline
from incflat.codegen.lower.device_scalars import host_statements
from incflat.codegen.kernel import DeviceScalarParam
from incflat.compiled import version_assignments
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.traverse import walk_exps
from incflat.pipeline import source_program
from test_kernel_shapes import compile_library

# SRAD's pattern: each step's statistics (reductions) give a scalar that the step's map reads.
STEPS = """
entry main [n] (steps: i64) (xs: [n]f32): [n]f32 =
  loop xs for _i < steps do
    let total = f32.sum xs
    let total2 = f32.sum (map (\\x -> x * x) xs)
    let mean = total / f32.i64 n
    let spread = f32.sqrt (total2 / f32.i64 n - mean * mean)
    in map (\\x -> (x - mean) / (spread + 1)) xs
"""

# The mean is read by the kernel and by the host (a result): it stays on the host, read back once.
BOTH = """
entry main [n] (xs: [n]f32): ([n]f32, f32) =
  let mean = f32.sum xs / f32.i64 n
  in (map (\\x -> x - mean) xs, mean)
"""

# A count used as a size and as a loop bound: the host needs it.
SIZE = """
entry main [n] (xs: [n]i64): ([]i64, i64) =
  let k = reduce (+) 0 xs
  let m = k % 7
  let ys = map (\\i -> i * m) (iota m)
  let s = loop s = 0 for i < m do s + i
  in (ys, s)
"""

# The nearest element's index, which the host uses twice (an update's index, a conversion): read back once;
# its distance and a kernel's row, written into arrays by updates: copied on the device.
NEAREST = """
entry main [n] (xs: [n]f32): ([n]f32, i32, [3]f32, [2][n]f32) =
  let (d, i) = reduce_comm (\\(a, i) (b, j) -> if a < b || (a == b && i < j) then (a, i) else (b, j))
                           (f32.inf, 0) (zip xs (iota n))
  let found = replicate 3 0f32
  let rows = replicate 2 (replicate n 0f32)
  in (copy xs with [i] = 0, i32.i64 i, found with [1] = d, rows with [1] = map (\\x -> x * 2) xs)
"""


def test_the_step_scalars_move_into_the_kernels_that_read_them():
    before = pipeline.compile(STEPS, "t.fut", until="prune_unsupported").funs[0].body
    after = pipeline.compile(STEPS, "t.fut", until="sink_scalars").funs[0].body
    arithmetic = (S.BinOp, S.PrimCall)
    host_before = [s for s in host_statements(before) if isinstance(s.exp, arithmetic)]
    assert any(s.pat[0].name.startswith("spread") for s in host_before)
    moved = {s.pat[0].name for s in host_before} - {s.pat[0].name for s in host_statements(after)}
    assert {n.split("_")[0] for n in moved} >= {"mean", "spread"}
    maps = [e for e in walk_exps(after) if isinstance(e, T.SegMap) and e.level == 1]
    assert maps and all(any(isinstance(s.exp, S.BinOp) and s.pat[0].name.startswith("mean") for s in m.body.stms)
                        for m in maps), "every version of the step's map computes the mean itself"


def test_a_kernel_takes_a_scalar_left_on_the_device_as_a_buffer():
    generated = pipeline.compile(STEPS, "t.fut")
    taking = [k for k in generated.kernels if any(isinstance(p, DeviceScalarParam) for p in k.params)]
    assert taking and all(k.name.startswith("segmap") for k in taking)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    d = tmp_path_factory.mktemp("device_scalars")
    return {name: compile_library(d, name, source) for name, source in
            (("steps", STEPS), ("both", BOTH), ("size", SIZE), ("nearest", NEAREST))}


def counting_reads(lib) -> list:
    """The library's reads of device memory (a list that grows by one a read)."""
    reads, read = [], lib.ctx.from_device

    def counted(arr):
        reads.append(arr.shape)
        return read(arr)
    lib.ctx.from_device = counted
    return reads


@pytest.mark.parametrize("name, source, args, most_reads", [
    ("steps", STEPS, [np.int64(5), np.linspace(-3, 4, 300).astype(np.float32)], 1),
    ("both", BOTH, [np.linspace(-3, 4, 1000).astype(np.float32)], 2),
    ("size", SIZE, [np.arange(40, dtype=np.int64)], 2),
    ("nearest", NEAREST, [np.cos(np.arange(500)).astype(np.float32)], 4),
])
def test_every_version_agrees_and_reads_back_only_what_the_host_uses(libraries, device, name, source, args,
                                                                     most_reads):
    expected = run_entry(source_program(source, f"{name}.fut"), "main", args)
    for params in version_assignments(libraries[name]):
        lib = libraries[name].load(device=device, overrides=params)
        reads = counting_reads(lib)
        got = lib.main(*args)
        got = got if isinstance(got, tuple) else (got,)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64), rtol=1e-4, atol=1e-5,
                                       err_msg=f"{name} {params}")
        assert len(reads) <= most_reads, (params, reads)
