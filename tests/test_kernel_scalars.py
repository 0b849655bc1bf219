"""A kernel takes its scalars in one struct argument: the fields of every width arrive intact on the device,
whatever padding the struct's tail needs, and an unchanged struct is not set again."""

import struct

import numpy as np
import pytest

from incflat.ir.runtime.device import ScalarStruct
from test_kernel_shapes import compile_library

SOURCE = """
entry mixed [n] (xs: [n]f32) (a: f32) (b: i8) (c: bool) (d: f64) (e: i64) (u: u16) : [n]f32 =
  map (\\x -> if c then x * a + f32.i8 b else f32.f64 d + f32.i64 e + f32.u16 u) xs
entry padded [n] (xs: [n]i64) (a: f32) (b: i8) : [n]f32 =
  map (\\x -> f32.i64 x * a + f32.i8 b) xs
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("scalars"), "scalars", SOURCE)


@pytest.mark.parametrize("c", [True, False])
def test_scalars_of_every_width_reach_the_kernel(module, device, c):
    lib = module.load(device=device)
    xs = np.arange(5, dtype=np.float32)
    got = lib.mixed(xs, np.float32(2.5), np.int8(-3), np.bool_(c), np.float64(0.25), np.int64(-(2 ** 40)),
                    np.uint16(65535))
    want = xs * np.float32(2.5) - 3 if c else np.full(5, np.float32(0.25 - 2 ** 40 + 65535), np.float32)
    np.testing.assert_array_equal(got, want)


def test_a_struct_whose_tail_needs_padding(module, device):
    lib = module.load(device=device)
    for a, b in [(0.5, 7), (-1.0, -128), (3.0, 127)]:  # changed scalars are set anew at each launch
        got = lib.padded(np.arange(4, dtype=np.int64), np.float32(a), np.int8(b))
        np.testing.assert_array_equal(got, np.arange(4, dtype=np.float32) * np.float32(a) + np.float32(b))


def test_the_packed_struct_has_the_c_layout():
    packer = ScalarStruct(("i64", "f32", "u8"))
    packed = packer.pack((-2, 1.5, 1))
    assert len(packed) == 16  # 13 bytes of fields, padded to the long's alignment
    assert struct.unpack("=qfB", packed[:13]) == (-2, 1.5, 1) and packed[13:] == bytes(3)
    # numpy's aligned structs follow C's layout rules: read back through one, the fields are where C puts them
    c_layout = np.dtype([("a", np.int64), ("b", np.float32), ("c", np.uint8)], align=True)
    assert c_layout.itemsize == len(packed)
    assert np.frombuffer(packed, c_layout)[0].tolist() == (-2, 1.5, 1)
    assert ScalarStruct(()).pack(()) == b""


def test_an_f32_beyond_its_range_packs_as_infinity():
    packed = ScalarStruct(("f64", "f32")).pack((1.0, 1e39))
    assert struct.unpack("=df", packed[:12]) == (1.0, float("inf")) and len(packed) == 16


# Integer arithmetic in kernels wraps as Futhark's does: signed overflow is undefined in OpenCL C, and the
# compiler used that (Intel's CPU runtime gave i64 ** other bits, so an index computed from it read another
# element: a wrong result the fuzzer found); ushort operands are promoted to int, whose overflow is undefined too.
WRAPPING = """
entry ix [n] (xs: [n]i32) (ys: [n]i64) : [n]i32 =
  map2 (\\x y -> xs[(((-y) ** (y & 3)) ** ((-(y * 2)) & 3)) % n] + x) xs ys
entry narrow (a: []i16) (b: []u16) (c: []i8) (e: []u16) : ([]i16, []u16, []i8, []u16, []i16, []u16) =
  (map2 (*) a a, map2 (*) b b, map2 (**) c (map (\\x -> x & 7) c), map (\\x -> x << 15) e,
   map (\\x -> x ** 3) a, map (\\x -> x ** 5) b)
entry wide (d: []i64) (m: []i64) : ([]i64, []i64, []i64) =
  (map2 (**) d (map (\\x -> x & 63) d), map2 (//) d m, map2 (*) d d)
"""


@pytest.fixture(scope="module")
def wrapping(tmp_path_factory):
    return compile_library(tmp_path_factory.mktemp("wrapping"), "wrapping", WRAPPING)


@pytest.mark.parametrize("entry, args", [
    ("ix", [np.array([79, 9, -85, 78, 3], np.int32), np.array([4059, 3003, 17491, 123923, 272], np.int64)]),
    ("narrow", [np.array([-1, 32767, -32768, 300], np.int16), np.array([65535, 65000, 2, 40000], np.uint16),
                np.array([-128, 127, 3, -7], np.int8), np.array([65535, 1, 3, 2], np.uint16)]),
    ("wide", [np.array([-3, 12345678901, 7, -2 ** 63 + 1, -2 ** 63], np.int64),
              np.array([2, -1, 3, -1, -1], np.int64)]),
])
def test_integer_arithmetic_in_kernels_wraps_as_the_interpreters(wrapping, device, entry, args):
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    want = run_entry(source_program(WRAPPING, "wrapping.fut"), entry, args)
    got = getattr(wrapping.load(device=device), entry)(*args)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


DIVISIONS = """
entry i64s [n] (xs: [n]i64) (ys: [n]i64) : ([n]i64, [n]i64, [n]i64, [n]i64) =
  unzip4 (map2 (\\x y -> (x % y, x %% y, x / y, x // y)) xs ys)
entry i32s [n] (xs: [n]i32) (ys: [n]i32) : ([n]i32, [n]i32) =
  unzip (map2 (\\x y -> (x % y, x %% y)) xs ys)
entry u64s [n] (xs: [n]u64) (ys: [n]u64) : ([n]u64, [n]u64) =
  unzip (map2 (\\x y -> (x % y, x %% y)) xs ys)
"""


def test_division_and_modulus_in_kernels_agree_with_the_interpreter(tmp_path, device):
    """Around their fast paths (a 64-bit remainder of operands within 31 bits taken in 32; a modulus of a value
    within a period of [0, y) by an addition): every sign, the edges of each path, the widths' extremes."""
    from incflat.datasets import compare_values
    from incflat.ir.interp.interpreter import run_entry
    from incflat.pipeline import source_program
    lib = compile_library(tmp_path, "divisions", DIVISIONS).load(device=device)
    lo, hi = -2 ** 63, 2 ** 63 - 1
    divisors = [1, -1, 2, -2, 7, -7, 100, 2 ** 31 - 1, 2 ** 31, -2 ** 31, 2 ** 40, hi, lo]
    pairs = [(x, y) for y in divisors
             for x in {0, 1, -1, y - 1, y, y + 1, 2 * y - 1, 2 * y, -y, -y - 1, -y + 1, 2 ** 31 - 1, 2 ** 31, -2 ** 31,
                       hi, lo, 12345, -12345} if lo <= x <= hi and lo <= 2 * y <= hi or y in (hi, lo) and lo <= x <= hi]
    xs = np.array([x for x, _ in pairs], np.int64)
    ys = np.array([y for _, y in pairs], np.int64)
    program = source_program(DIVISIONS)
    cases = [("i64s", [xs, ys]), ("i32s", [xs.astype(np.int32), np.where(ys.astype(np.int32) == 0, 3, ys.astype(np.int32))]),
             ("u64s", [xs.astype(np.uint64), np.where(ys == 0, 5, ys).astype(np.uint64)])]
    for entry, args in cases:
        want = list(run_entry(program, entry, args))
        assert compare_values(list(getattr(lib, entry)(*args)), want) is None, entry
