"""Matrix multiplication: the five versions of thesis Fig. 1.6, each forced through the thresholds, agree
with the reference interpreter on the available OpenCL devices."""

import io

import numpy as np
import pytest

from conftest import ROOT, compile_program, run_program
from incflat.ir.runtime import tuning
from incflat.pipeline import source_program
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.runtime.values import read_values, write_binary

SOURCE = (ROOT / "futhark_examples" / "matmul.fut").read_text()
NEVER = tuning.NEVER
T1, T2, T3, T4 = ("main.suff_outer_par_0", "main.suff_intra_par_1", "main.suff_outer_par_2",
                  "main.suff_intra_par_3")

# For each leaf: the thresholds that force it, and the comparisons that -L must show on the way there.
VERSIONS = {
    "V1 rows in parallel": ({T1: 1}, [(T1, True)]),
    "V2 a workgroup per row": ({T1: NEVER, T2: 1}, [(T1, False), (T2, True)]),
    "V3 a thread per output": ({T1: NEVER, T2: NEVER, T3: 1}, [(T1, False), (T2, False), (T3, True)]),
    "V4 a workgroup per dot product": ({T1: NEVER, T2: NEVER, T3: NEVER, T4: 1},
                                       [(T1, False), (T2, False), (T3, False), (T4, True)]),
    "V5 segmented reduction": ({T1: NEVER, T2: NEVER, T3: NEVER, T4: NEVER},
                               [(T1, False), (T2, False), (T3, False), (T4, False)]),
}
# (n, m, p): odd sizes, a long single dot product (several workgroups per segment), empty arrays.
SHAPES = [(3, 5, 7), (1, 3000, 1), (4, 300, 2), (2, 0, 3), (0, 4, 2)]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return compile_program(SOURCE, tmp_path_factory.mktemp("matmul"), "matmul")


def encode(*values) -> bytes:
    buf = io.BytesIO()
    for v in values:
        write_binary(v, buf)
    return buf.getvalue()


def comparisons(stderr: str) -> list:
    """(threshold, outcome) of each comparison a -L run logged, through the contract's parser."""
    return [(name, outcome) for name, _, outcome in tuning.comparisons(stderr)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("version", list(VERSIONS))
def test_version_agrees_with_interpreter(program, device, version, shape):
    n, m, p = shape
    rng = np.random.default_rng(n * 100 + m * 10 + p)
    xss = rng.uniform(-1, 1, (n, m)).astype(np.float32)
    yss = rng.uniform(-1, 1, (m, p)).astype(np.float32)
    (expected,) = run_entry(source_program(SOURCE, "matmul.fut"), "main", [xss, yss])
    params, path = VERSIONS[version]
    args = ["-d", device, "-L"] + [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
    proc = run_program(program, encode(xss, yss), *args)
    (got,) = read_values(io.BytesIO(proc.stdout))
    assert got.dtype == np.float32 and got.shape == (n, p)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    taken = comparisons(proc.stderr.decode())
    if 0 not in shape:  # with a zero size, `threshold <= 0` is false whatever is forced
        assert taken == path


def test_print_params_lists_the_chain(program):
    out = run_program(program, b"", "--print-params").stdout.decode().splitlines()
    sizes = out[4:]  # then the workgroup, grid and tile sizes of the kernels, tuning parameters too
    assert sizes and all(line.endswith(("(thread_block_size)", "(grid_size)", "(tile_size)")) for line in sizes)
    assert "main.segmap_2_tile_size (tile_size)" in sizes  # V3 is tiled
    assert out[:4] == [
        f"{T1} (threshold(def, ))",
        f"{T2} (threshold(32, !{T1}))",  # an intra guard lists Futhark's default
        f"{T3} (threshold(def, !{T1} !{T2}))",
        f"{T4} (threshold(32, !{T1} !{T2} !{T3}))",
    ]


def test_intra_group_version_needs_a_fitting_workgroup(program, device):
    """Forcing V2 with more columns than a workgroup can hold falls through to the next guard."""
    import pyopencl as cl
    limit = next(d.max_work_group_size for p in cl.get_platforms() for d in p.get_devices() if d.name == device)
    n, m, p = 2, 3, limit + 1
    xss = np.ones((n, m), np.float32)
    yss = np.ones((m, p), np.float32)
    proc = run_program(program, encode(xss, yss), "-d", device, "-L", "--param", f"{T1}={NEVER}",
                       "--param", f"{T2}=1", "--param", f"{T3}=1")
    assert comparisons(proc.stderr.decode()) == [(T1, False), (T2, True), (T3, True)]
    (got,) = read_values(io.BytesIO(proc.stdout))
    np.testing.assert_array_equal(got, np.full((n, p), 3, np.float32))
