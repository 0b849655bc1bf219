"""ir/runtime/values.py: Futhark's text and binary value formats, checked against the futhark-data package."""

import io

import futhark_data
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from incflat.ir.runtime.values import read_values, type_name, write_binary, write_text

pytestmark = pytest.mark.filterwarnings("error")

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float32, np.float64, np.bool_]


@pytest.fixture(autouse=True)
def _futhark_data_numpy2(monkeypatch):
    # futhark-data 1.0.3 calls np.product (gone in NumPy 2) when it reads or writes `empty(...)`
    # and when it writes text arrays.  Lend it np.prod for these tests only.
    monkeypatch.setattr(np, "product", np.prod, raising=False)


def text_of(v):
    s = io.StringIO()
    write_text(v, s)
    return s.getvalue()


def binary_of(v):
    b = io.BytesIO()
    write_binary(v, b)
    return b.getvalue()


def read(data):
    return read_values(io.BytesIO(data if isinstance(data, bytes) else data.encode()))


def assert_same(got, want):
    """Same kind (numpy scalar or array), dtype, shape and values (NaN equal to NaN)."""
    want_arr = np.asarray(want)
    if want_arr.ndim == 0:
        assert isinstance(got, np.generic), (got, want)
    else:
        assert isinstance(got, np.ndarray), (got, want)
    got_arr = np.asarray(got)
    assert got_arr.dtype == want_arr.dtype, (got_arr.dtype, want_arr.dtype)
    assert got_arr.shape == want_arr.shape
    if want_arr.dtype.kind == "f":
        assert np.array_equal(got_arr, want_arr, equal_nan=True), (got, want)
        # the sign of zero survives too
        assert np.array_equal(np.signbit(got_arr), np.signbit(want_arr) & ~np.isnan(want_arr)
                              | np.signbit(got_arr) & np.isnan(got_arr))
    else:
        assert np.array_equal(got_arr, want_arr), (got, want)


def sample_values(finite_only=False):
    rng = np.random.default_rng(1)
    out = []
    for dt in DTYPES:
        if dt is np.bool_:
            arr = rng.integers(0, 2, size=(2, 3, 4)).astype(np.bool_)
        elif np.dtype(dt).kind in "iu":
            info = np.iinfo(dt)
            arr = rng.integers(info.min, info.max, size=(2, 3, 4), dtype=dt, endpoint=True)
            arr.flat[0], arr.flat[1] = info.min, info.max
        else:
            arr = (rng.standard_normal((2, 3, 4)) * 10.0 ** rng.integers(-30, 30, (2, 3, 4))).astype(dt)
            arr.flat[0] = np.finfo(dt).max
            arr.flat[1] = np.finfo(dt).smallest_subnormal
            arr.flat[2] = -0.0
            if not finite_only:
                arr.flat[3], arr.flat[4], arr.flat[5] = np.nan, np.inf, -np.inf
        out += [arr.flat[0], arr.flat[5], arr[0, 0], arr[0], arr]
        out += [np.zeros((0,), dt), np.zeros((0, 3), dt), np.zeros((2, 0, 3), dt)]
    return out


# ---- exact spelling of the text format ----

@pytest.mark.parametrize("value, text", [
    (np.int32(1), "1i32"), (np.int8(-128), "-128i8"), (np.uint64(2 ** 64 - 1), "18446744073709551615u64"),
    (np.float32(2.5), "2.5f32"), (np.float64(3.0), "3.0f64"), (np.float32(0.1), "0.1f32"),
    (np.float32(1e-7), "1e-07f32"), (np.float32(-0.0), "-0.0f32"), (np.float64(0.1), "0.1f64"),
    (np.float32(3.4028235e38), "3.4028235e+38f32"), (np.float32(16777216.0), "16777216.0f32"),
    (np.bool_(True), "true"), (np.bool_(False), "false"),
    (np.float32(np.nan), "f32.nan"), (np.float32(np.inf), "f32.inf"), (np.float32(-np.inf), "-f32.inf"),
    (np.float64(np.nan), "f64.nan"), (np.float64(-np.inf), "-f64.inf"),
    (np.array([1, 2], np.int32), "[1i32, 2i32]"),
    (np.array([[1, 2], [3, 4]], np.uint8), "[[1u8, 2u8], [3u8, 4u8]]"),
    (np.array([True, False]), "[true, false]"),
    (np.array([1.5, np.nan], np.float32), "[1.5f32, f32.nan]"),
    (np.zeros((0,), np.int32), "empty([0]i32)"), (np.zeros((0, 3), np.float32), "empty([0][3]f32)"),
    (np.zeros((2, 0), np.bool_), "empty([2][0]bool)"),
])
def test_text_spelling(value, text):
    assert text_of(value) == text
    assert_same(read(text)[0], value)


def test_f32_text_round_trips_with_shortest_digits():
    xs = np.random.default_rng(0).standard_normal(2000).astype(np.float32) * np.float32(1e3)
    for x in xs:
        s = text_of(x)
        assert np.float32(float(s[:-3])) == x
        assert len(s[:-3].replace("-", "").replace(".", "").lstrip("0")) <= 10


# ---- against futhark-data ----

def test_read_binary_written_by_futhark_data():
    values = sample_values()
    data = b"".join(bytes(futhark_data.dumpb(np.asarray(v))) for v in values)
    got = read(data)
    assert len(got) == len(values)
    for g, v in zip(got, values):
        assert_same(g, v)


def test_futhark_data_reads_our_binary():
    values = sample_values()
    got = list(futhark_data.load(io.BytesIO(b"".join(binary_of(v) for v in values))))
    assert len(got) == len(values)
    for g, v in zip(got, values):
        # futhark-data gives 0-d arrays for binary scalars
        assert np.asarray(g).dtype == np.asarray(v).dtype and np.asarray(g).shape == np.asarray(v).shape
        assert np.array_equal(np.asarray(g), np.asarray(v), equal_nan=v.dtype.kind == "f")


def test_futhark_data_reads_our_text():
    # futhark-data's text reader knows no f32.nan/f32.inf, so only finite floats here.
    values = sample_values(finite_only=True)
    text = "\n".join(text_of(v) for v in values) + "\n"
    got = list(futhark_data.loads(text))
    assert len(got) == len(values)
    for g, v in zip(got, values):
        g = np.asarray(g)  # futhark-data gives a Python bool for `true`
        assert g.dtype == v.dtype and g.shape == np.shape(v)
        assert np.array_equal(g, np.asarray(v))
    # and we read it back the same
    for g, v in zip(read(text), values):
        assert_same(g, v)


def test_we_read_futhark_data_text():
    values = sample_values(finite_only=True)
    text = "\n".join(futhark_data.dumps(v) for v in values)
    ours, theirs = read(text), list(futhark_data.loads(text))
    assert len(ours) == len(theirs) == len(values)
    for o, t in zip(ours, theirs):
        assert_same(o, np.asarray(t) if isinstance(t, (bool, np.ndarray)) else t)


def test_mixed_text_and_binary_with_comments():
    data = (b"-- a comment\n1i64 " + binary_of(np.arange(6, dtype=np.float32).reshape(2, 3))
            + b"[true,false] -- another\n" + binary_of(np.uint16(7)) + binary_of(np.float64(-2.0))
            + b"\n  empty([0]u8)\n\t0x10u8 1_000 -7i8 1e3f32 1f64 0x1.8p1f64 -0.5\n")
    got = read(data)
    want = [np.int64(1), np.arange(6, dtype=np.float32).reshape(2, 3), np.array([True, False]),
            np.uint16(7), np.float64(-2.0), np.zeros(0, np.uint8), np.uint8(16), np.int32(1000),
            np.int8(-7), np.float32(1000), np.float64(1), np.float64(3.0), np.float64(-0.5)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w)


def test_read_from_text_stream_and_empty_input():
    assert read_values(io.StringIO("1 2")) == [1, 2]
    assert read(b"") == []
    assert read(b"  -- nothing but a comment\n") == []


def test_out_of_range_f32_literal_is_infinite():
    assert read("1e39f32 -1e39f32") == [np.float32(np.inf), np.float32(-np.inf)]
    assert_same(read("[1e39f32, 1f32]")[0], np.array([np.inf, 1], np.float32))


def test_f32_literal_rounds_correctly_at_double_rounding_ties():
    # 1 + 2^-24 + 10^-30 is just above the midpoint of 1 and the next float32, but rounds to that
    # midpoint as an f64; the correct float32 is the upper neighbour.
    text = "1.000000059604644775390625000001"
    want = np.nextafter(np.float32(1), np.float32(2))
    assert read(text + "f32")[0] == want
    assert read("[" + text + "f32, 2f32]")[0][0] == want


def test_large_array_fast_paths():
    rng = np.random.default_rng(3)
    for v in [rng.standard_normal((50, 40)).astype(np.float32), rng.standard_normal(3000),
              rng.integers(-2 ** 63, 2 ** 63 - 1, 3000, dtype=np.int64, endpoint=True),
              rng.integers(0, 2 ** 64 - 1, 3000, dtype=np.uint64, endpoint=True),
              rng.integers(-128, 127, (30, 30), dtype=np.int8, endpoint=True), rng.random(500) < 0.5]:
        assert_same(read(text_of(v))[0], v)
        assert_same(read(text_of(v).replace(", ", ",\n  "))[0], v)


# ---- hypothesis round trips ----

values_strategy = st.sampled_from(DTYPES).flatmap(
    lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))


@settings(max_examples=300, deadline=None)
@given(values_strategy)
def test_round_trips(arr):
    value = arr[()] if arr.ndim == 0 else arr
    # ours -> ours, text and binary
    assert_same(read(text_of(value))[0], value)
    assert_same(read(binary_of(value))[0], value)
    # futhark-data's binary -> ours
    assert_same(read(bytes(futhark_data.dumpb(arr)))[0], value)
    # ours -> futhark-data, binary
    (g,) = futhark_data.loadb(binary_of(value))
    assert np.array_equal(np.asarray(g), arr, equal_nan=arr.dtype.kind == "f") and g.dtype == arr.dtype
    # ours -> futhark-data, text (it cannot read nan or inf)
    if arr.dtype.kind != "f" or np.isfinite(arr).all():
        (g,) = futhark_data.loads(text_of(value))
        g = np.asarray(g)
        assert g.dtype == arr.dtype and g.shape == arr.shape and np.array_equal(g, arr)


@settings(max_examples=300, deadline=None)
@given(st.lists(values_strategy, min_size=0, max_size=5), st.lists(st.booleans(), min_size=5, max_size=5))
def test_sequences_of_mixed_values(arrs, binary):
    out = io.BytesIO()
    for a, b in zip(arrs, binary):
        v = a[()] if a.ndim == 0 else a
        if b:
            write_binary(v, out)
        else:
            out.write(text_of(v).encode())
            out.write(b"\n")
    got = read(out.getvalue())
    assert len(got) == len(arrs)
    for g, a in zip(got, arrs):
        assert_same(g, a[()] if a.ndim == 0 else a)


@settings(max_examples=300, deadline=None)
@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_f32_scalar_text_round_trip(x):
    assert read(text_of(np.float32(x)))[0] == np.float32(x)


def test_integer_literals_wrap_to_their_types_width():
    """As Futhark reads them: modulo 2^bits, in two's complement (futhark-benchmarks' crypt keys: `0x8407i16`;
    Futhark's tests/primitive/ctz.fut: `4294967295i32`, u16_convop.fut: `32767i8` is -1, bitwise.fut:
    `-271733879u32`)."""
    got = read(b"[0x8407i16, 0x7fffi16] 0xffi8 0b10000000i8 0xffffffffffffffffi64 -0x80i8 255i8 128i8 "
               b"4294967295i32 18446744073709551615i64 256u8 256i8 -129i8 0x100i8 -0x81i8 32767i8 -271733879u32 "
               b"-1u64 18446744073709551617u64 -18446744073709551617i64")
    assert [int(x) for x in got[0]] == [0x8407 - 0x10000, 0x7fff]
    assert [int(x) for x in got[1:]] == [-1, -128, -1, -128, -1, -128, -1, -1, 0, 0, 127, 0, 127, -1,
                                         2 ** 32 - 271733879, 2 ** 64 - 1, 1, -1]


# ---- malformed input ----

@pytest.mark.parametrize("data, message", [
    (b"[1, 2", r"expected ',' or ']' at line 1, column 6 \(byte offset 5\), found end of input"),
    (b"1\n [1 2]", r"expected ',' or ']' at line 2, column 5"),
    (b"[1, 2i64]", r"array element of type i64 follows elements of type i32"),
    (b"[[1, 2], [3]]", r"irregular array"),
    (b"[[1], 2]", r"expected '\[' \(arrays must be regular\)"),
    (b"[]", r"empty array must be written as empty"),
    (b"empty([2]i32)", r"empty array with non-empty shape \[2\]"),
    (b"empty([0]x32)", r"expected a primitive type"),
    (b"hello", r"expected a value at line 1, column 1 \(byte offset 0\), found 'hello'"),
    (b"1.5f16", r"f16 is not supported"),
    (b"b\x01\x00 i32\x00\x00\x00\x00", r"byte offset 1: expected format version 2, got 1"),
    (b"b\x02\x00 q32\x00\x00\x00\x00", r"byte offset 3: expected one of the types .*unknown type ' q32'"),
    (b"b\x02\x01 i32\x03\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00",
     r"byte offset 15: expected 12 bytes of i32 data for shape \[3\], found 4"),
    (b"b\x02\x02 f64\x03\x00", r"byte offset 7: expected 2 dimensions \(16 bytes\), found end of input"),
    (b"1 b\x02", r"byte offset 2: expected a 7-byte header"),
])
def test_malformed_input(data, message):
    with pytest.raises(ValueError, match=message):
        read(data)


# ---- type names ----

def test_type_name():
    assert type_name(np.int64(1)) == "i64"
    assert type_name(np.bool_(True)) == "bool"
    assert type_name(np.zeros((3, 4), np.float32)) == "[][]f32"
    assert type_name(np.zeros(3, np.int32), sizes=True) == "[3]i32"
    assert type_name(np.zeros((0, 2), np.uint8), sizes=True) == "[0][2]u8"
    assert type_name(np.asarray(2.0)) == "f64"
    assert type_name("x") == "str"  # never raises
