"""codegen/native/values.c: Futhark's value formats in C, checked byte for byte against ir/runtime/values.py.

tests/native/values_driver.c reads every value on stdin and writes it back (text, or binary with -b); the
tests compare its output with what the Python runtime writes for the same values, and its errors with the
Python runtime's. The driver is built three ways: as is, reading stdin through a 16-byte first buffer (so
that tokens, headers and arrays cross the buffer's edges), and reading all of stdin into memory first (-m).
"""

import io
import os
import pathlib
import re
import shlex
import shutil
import struct
import subprocess

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incflat.codegen.native import SOURCES
from incflat.ir.runtime.values import read_values, write_binary, write_text
from strategies import numpy_values, value_bytes

DRIVER = pathlib.Path(__file__).resolve().parent / "native" / "values_driver.c"
DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float32,
          np.float64, np.bool_)
FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


def c_compiler():
    cc = os.environ.get("CC")
    if cc:
        return shlex.split(cc)
    found = next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
    return [found] if found else None


@pytest.fixture(scope="session")
def drivers(tmp_path_factory):
    """The driver's command lines: [file reader, file reader with a 16-byte first buffer, memory reader]."""
    cc = c_compiler()
    if cc is None:
        pytest.skip("no C compiler: none of cc, gcc or clang is on PATH and $CC is not set")
    out = tmp_path_factory.mktemp("values_driver")
    built = []
    for name, defines in (("values", []), ("values_tiny", ["-DINCFLAT_READ_CHUNK=16"])):
        exe = out / name
        cmd = [*cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", *defines, f"-I{SOURCES}", str(DRIVER),
               str(SOURCES / "values.c"), "-lm", "-o", str(exe)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        assert result.returncode == 0, f"{shlex.join(cmd)}\n{result.stderr}"
        built.append([str(exe)])
    return built + [built[0] + ["-m"]]


def run(driver, data: bytes, binary=False):
    return subprocess.run(driver + (["-b"] if binary else []), input=data, capture_output=True, timeout=120)


def ok(driver, data: bytes, binary=False) -> bytes:
    result = run(driver, data, binary)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return result.stdout


def py_text(values) -> bytes:
    out = io.StringIO()
    for v in values:
        write_text(v, out)
        out.write("\n")
    return out.getvalue().encode()


def py_binary(values) -> bytes:
    out = io.BytesIO()
    for v in values:
        write_binary(v, out)
    return out.getvalue()


def python_error(data: bytes):
    """values.py's message for malformed data, or None if it reads it."""
    try:
        read_values(io.BytesIO(data))
    except ValueError as e:
        return str(e)
    return None


# ---------------------------------------------------------------------------------------------------------
# Values of every type, generated, written by values.py and read back by C


@st.composite
def values(draw):
    """A numpy scalar or an array of rank 1-3 (possibly empty) of any type, with extreme integers, NaN,
    infinities, -0.0 and subnormals among the floats."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=3)))
    count = int(np.prod(shape)) if shape else 1
    if dtype is np.bool_:
        elements = st.booleans()
    elif np.issubdtype(dtype, np.floating):
        width = 32 if dtype is np.float32 else 64
        elements = st.one_of(st.floats(width=width), st.sampled_from([0.0, -0.0, float("nan"), float("inf"),
                                                                      -float("inf"), 1e-4, 1e16, 1e-45]))
    else:
        info = np.iinfo(dtype)
        elements = st.one_of(st.integers(int(info.min), int(info.max)),
                             st.sampled_from([int(info.min), int(info.max), 0, -1 if info.min else 1]))
    flat = draw(st.lists(elements, min_size=count, max_size=count))
    with np.errstate(over="ignore"):
        array = np.array(flat, dtype).reshape(shape)
    return array if shape else array[()]


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@FAST
@given(vals=st.lists(values(), min_size=1, max_size=4), which=st.integers(0, 2))
def test_values_round_trip(drivers, vals, which):
    driver = drivers[which]
    text, binary = py_text(vals), py_binary(vals)
    assert ok(driver, text) == text  # text in, text out
    assert ok(driver, binary, binary=True) == binary  # binary in, binary out
    assert ok(driver, binary) == text  # binary in, text out
    from_text = ok(driver, text, binary=True)  # text in, binary out: values.py reads the same values
    assert from_text == py_binary(read_values(io.BytesIO(text)))
    back = read_values(io.BytesIO(from_text))
    assert len(back) == len(vals)
    for a, b in zip(back, read_values(io.BytesIO(text))):
        assert same(np.asarray(a), np.asarray(b))


def tricky_floats(dtype, random_count):
    """Powers of two and their neighbours (where the rounding interval is lopsided), the edges of the
    scientific notation, subnormals, the largest values, and random bit patterns."""
    finfo = np.finfo(dtype)
    ints = np.uint32 if dtype is np.float32 else np.uint64
    powers = [dtype(2.0) ** e for e in range(finfo.minexp - finfo.nmant, finfo.maxexp)]
    edges = [dtype(x) for x in (1e-4, 1e16, 1e-5, 1e15, 1e17, 0.1, 0.3, 1 / 3, 123456789, 9007199254740993)]
    around = []
    for x in powers + edges + [finfo.max, finfo.smallest_subnormal, finfo.smallest_normal]:
        with np.errstate(over="ignore"):
            around += [np.nextafter(x, dtype(-np.inf)), x, np.nextafter(x, dtype(np.inf))]
    rng = np.random.default_rng(51)
    bits = rng.integers(0, np.iinfo(ints).max, size=random_count, dtype=ints, endpoint=True)
    rand = bits.view(dtype)
    short = rng.integers(-10 ** 6, 10 ** 6, size=random_count) / dtype(1000)  # few digits
    return np.concatenate([np.array(around, dtype), -np.array(around, dtype), rand, short.astype(dtype)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_spelling(drivers, dtype):
    """The shortest digits that round-trip, the closest to the value of them, spelt as values.py spells them."""
    floats = tricky_floats(dtype, 20000)
    text = py_text([floats] + list(floats[:3000]))
    assert ok(drivers[0], text) == text


LITERALS = [
    b"0x10i32 0X1fi64 0b1010u8 0B_1_0i16 1_000i64 0xFFi8 0x80000000 -0x80i8 0xFFFFFFFFFFFFFFFFi64 -0i32 -0u8",
    b"18446744073709551615u64 -9223372036854775808i64 0000 0_0i8 1f32 1_f64 1.5e3f32 1E+2 2.5e-3_0f32",
    b"0x1.8p3 -0x1.8p-3f32 0x_.8p1 0x1.fffffffffffff8p1022 0x0.0p99999999999999999999 0x1.0p-99999999999999",
    b"1e39f32 1e-50f32 -1e-50f32 1e999 -1e999 3.4028235677973366e38f32 3.4028235677973362e38f32",
    b"1.0000000596046447753906250001f32 1.000000059604644775390625f32 1.0000000596046447753906249999f32",
    b"f32.nan -f32.nan f64.inf -f64.inf true false",
    b"[1, 007, 00] [1i64, 0000000000000000000000000000001i64] [[1,2],[3,4]] [ 1 , 2 ]",
    b"[\t1,\r\n2\x0c, 3] [1, -- a comment ]\n 2] [0x1, 2] [1.5, 2.5] [1.5f32, 2f32] [true,false]",
    b"empty([0]i32) empty ( [ 2 ] [0] -- c\n bool ) empty([0][99999999]f64) empty([00][1]u8)",
    b"-- a comment\n1i32--another\n[[[1u16]]]\n",
]


@pytest.mark.parametrize("text", LITERALS, ids=range(len(LITERALS)))
def test_literal_spellings(drivers, text):
    """Hex, binary and underscored integers, hex floats, exact f32 rounding, comments, odd white space: C reads
    what values.py reads."""
    want = py_binary(read_values(io.BytesIO(text)))
    for driver in drivers:
        assert ok(driver, text, binary=True) == want


def test_mixed_and_large(drivers):
    """Text and binary values mixed in one stream, and a binary array of millions of elements."""
    big = np.arange(3_000_000, dtype=np.int32) * 7919
    data = b"1i32 " + py_binary([big, np.float64(2.5)]) + b"\n-- x\n[true] " + py_binary([np.uint8(10)])
    want = py_binary(read_values(io.BytesIO(data)))
    for driver in drivers:
        assert ok(driver, data, binary=True) == want
    text = py_text([big[:200_000]])
    assert ok(drivers[1], text) == text
    many = py_text([np.float32(i / 7) if i % 3 else np.array([i, -i], np.int64) for i in range(5000)])
    for driver in drivers:
        assert ok(driver, many) == many


# ---------------------------------------------------------------------------------------------------------
# Malformed input: exit status 1 and values.py's message, with the byte offset


def header(rank, binname, shape=()):
    return b"b\x02" + bytes([rank]) + binname + struct.pack(f"<{len(shape)}Q", *shape)


MALFORMED = [
    (b"b\x02\x01", 0),  # truncated binary header
    (b"1i32 b\x01\x00 i32\x00\x00\x00\x00", 6),  # version 1
    (header(0, b" i33") + b"\x00" * 4, 3),  # no such type
    (header(0, b" f16") + b"\x00" * 2, 3),
    (b"b\x02\x02 i32" + b"\x01" * 12, 7),  # truncated dimensions
    (header(1, b" f64", (3,)) + b"\x00" * 23, 15),  # truncated data
    (header(1, b" i32", (1 << 61,)), 15),
    (b"[1, 2", 5),  # unterminated array
    (b"[[1, 2], [3", 11),
    (b"[1, 2,]", 6),
    (b"1x2", 0),  # bad literals
    (b"1i33", 0),
    (b"007", 0),
    (b"1.", 0),
    (b"0x1.p3", 0),
    (b"1e5i32", 0),
    (b"0x1.8p99999f32", 0),
    (b"1.5f16", 0),
    (b"f16.nan", 0),
    (b"truee", 0),
    (b"'a'", 0),
    (b"1" * 5000, 0),
    (b"[1, 2]\n[[1], [2, 3]]", 13),  # ragged arrays
    (b"[[1], 2]", 6),
    (b"[1, [2]]", 4),
    (b"[[[1, 2]], [[3], [4]]]", 11),
    (b"[1i32, 2i64]", 7),  # mixed types
    (b"[[1], [2i64]]", 6),
    (b"[]", 0),  # empty arrays
    (b"[[]]", 1),
    (b"empty([2]i32)", 0),
    (b"empty([0]f16)", 9),
    (b"empty([0]i32", 12),
    (b"empty[0]i32)", 5),
    (b"empty()", 6),
    (b"-- only a comment\n)", 18),
    (b"\x00", 0),
    (b"[1, 07, 99999999999]", 4),  # leading zeros are refused once the row is not plain numbers
    (b"[1, 07, 2 -- c\n]", 4),
    (b"[1, 07", 4),
    (b"[1, 07, 2i64]", 4),
    (header(1, b"  u8", (2,)) + b"\n\n" + b"\n[1,", 21),  # lines are counted through binary data too
    (b"[" + b"1, " * 10000 + b"2i64]", 30001),  # far into a value, past the buffer's first size
    (b"[[1], [" + b"2,\n" * 5000 + b"3]]", 6),
]


@pytest.mark.parametrize("data,offset", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed(drivers, data, offset):
    message = python_error(data)
    assert message is not None and f"byte offset {offset}" in message
    for driver in drivers:
        result = run(driver, data)
        assert result.returncode == 1, result  # an error, not a signal
        assert result.stderr.decode().strip() == message


@pytest.mark.parametrize("data", [b"[" * 100_000, b"[" * 64 + b"1" + b"]" * 64, b"[" * 65 + b"1" + b"]" * 65,
                                  header(65, b"bool", (1,) * 65) + b"\x01", header(2, b" i32", (1 << 63, 0)),
                                  header(3, b" u8", (1 << 40, 1 << 40, 1 << 40)), b"empty([0][99999999999999999999]i8)"])
def test_beyond_numpy(drivers, data):
    """Ranks and sizes numpy cannot hold: values.py fails (or, nested deep enough, recurses too far); C says
    where, and never crashes."""
    try:
        read_values(io.BytesIO(data))
        python_reads = True
    except Exception:  # ValueError, or numpy's IndexError or Python's RecursionError for deep nesting
        python_reads = False
    for driver in drivers:
        result = run(driver, data)
        assert result.returncode == (0 if python_reads else 1), result
        assert python_reads or b"byte offset" in result.stderr


@FAST
@given(data=st.data())
def test_fuzzed_input(drivers, data):
    """Generated stdin (values, odd literals, cut or corrupted binary data, junk): C reads what values.py reads,
    and fails where it fails, with its message where that message is plain ASCII."""
    stdin = data.draw(value_bytes(data.draw(st.lists(numpy_values(), max_size=3))))
    driver = drivers[data.draw(st.integers(0, 2))]
    message = python_error(stdin)
    result = run(driver, stdin, binary=True)
    if message is None:
        assert result.returncode == 0, result.stderr
        assert result.stdout == py_binary(read_values(io.BytesIO(stdin)))
        return
    assert result.returncode == 1, result
    error = result.stderr.decode(errors="replace").strip()
    assert "byte offset" in error
    huge = re.search(r"expected (\d+) bytes", message)
    if message.isascii() and message.startswith("Invalid") and not (huge and int(huge[1]) >= 2 ** 64):
        assert error == message


FRAGMENTS = [b"0", b"1", b"7", b"00", b"_", b"x", b"b", b"B", b"e", b"E", b"p", b".", b"-", b"+", b"f", b"a", b"i8",
             b"i32", b"i64", b"u8", b"u64", b"f16", b"f32", b"f64", b"true", b"nan", b"inf", b"[", b"]", b",", b" ",
             b"\n", b"\x0c", b"-- c\n", b"empty", b"(", b")", b"[0]", b"[2]", b"0x", b"0b", b"1.5", b"1e5", b"255",
             b"128", b"2147483648", b"9223372036854775808", b"18446744073709551616", b"0xFF", b"0x80", b"0x1.8p3",
             b"f32.nan", b"f64.inf", header(1, b" i32", (2,)), b"\x01\x00\x00\x00"]


@FAST
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=12), which=st.integers(0, 2))
def test_literal_soup(drivers, parts, which):
    """Pieces of literals glued at random: C reads what values.py reads, and fails with its message where it
    fails."""
    stdin = b"".join(parts)
    message = python_error(stdin)
    result = run(drivers[which], stdin, binary=True)
    if message is None:
        assert result.returncode == 0, result.stderr
        assert result.stdout == py_binary(read_values(io.BytesIO(stdin)))
    else:
        assert result.returncode == 1, result
        assert result.stderr.decode(errors="replace").strip() == message
