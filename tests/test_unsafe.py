"""`#[unsafe] e`: kernels leave out the checks of what e computes (bounds, division, sizes), the functions it
calls included, as Futhark does; the rest of the program and the interpreter keep theirs."""

import numpy as np
import pytest

from test_kernel_shapes import compile_library

SOURCE = """
def get [n] (xs: [n]i32) (i: i64) : i32 = xs[i]
entry safe [n][m] (xs: [n]i32) (is: [m]i64) : [m]i32 = map (\\i -> xs[i] + 1) is
entry unsafe [n][m] (xs: [n]i32) (is: [m]i64) : [m]i32 = map (\\i -> #[unsafe] xs[i] + 1) is
entry called [n][m] (xs: [n]i32) (is: [m]i64) : [m]i32 = map (\\i -> #[unsafe] get xs i + 1) is
entry division [m] (xs: [m]i32) (ds: [m]i32) : [m]i32 = map2 (\\x d -> #[unsafe] (x / d)) xs ds
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("unsafe"), "unsafe", SOURCE)


def test_unsafe_expressions_in_kernels_are_not_checked(module, device):
    lib = module.load(device=device)
    xs, is_ = np.array([10, 20, 30], np.int32), np.array([2, 7, 0], np.int64)
    with pytest.raises(Exception, match=r"Index \[7\] out of bounds for array of shape \[3\]"):
        lib.safe(xs, is_)
    inside = np.array([2, 1, 0], np.int64)  # out of bounds, an unchecked index reads outside xs: not run here
    np.testing.assert_array_equal(lib.unsafe(xs, inside), [31, 21, 11])
    np.testing.assert_array_equal(lib.called(xs, inside), [31, 21, 11])
    np.testing.assert_array_equal(lib.division(np.array([7, 8], np.int32), np.array([2, 0], np.int32)), [3, 0])


def test_only_the_unsafe_expressions_lose_their_checks():
    from incflat import pipeline
    kernels = {k.name: k.source() for k in pipeline.compile(SOURCE, "unsafe.fut").kernels}
    checked = sorted(name for name, source in kernels.items() if "record_error(error" in source)
    assert len(checked) == 1 and len(kernels) >= 4  # only safe's kernel keeps its check
    clamped = sorted(name for name, source in kernels.items() if ") ? 0 : (" in source)
    assert clamped == checked, "an unchecked index is not clamped into the array either, as in Futhark"


def test_the_interpreter_still_checks():
    from incflat.ir.interp.interpreter import run_entry
    from incflat.ir.interp.ops import InterpError
    from incflat.pipeline import source_program
    with pytest.raises(InterpError, match="out of bounds"):
        run_entry(source_program(SOURCE), "unsafe", [np.array([1, 2], np.int32), np.array([5], np.int64)])
