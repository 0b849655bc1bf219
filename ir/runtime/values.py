"""Futhark's value formats: reading text and binary values, writing text and binary values.

Part of the runtime every compiled program carries: it imports only the standard library, numpy and the
runtime's own modules. The public API is `read_values`, `write_text`, `write_binary` and `type_name`.

Values are numpy scalars (`np.int32(3)`, `np.float32(1.5)`, `np.bool_(True)`) and numpy arrays.
f16 is not supported.
"""

import fractions
import re
import struct

import numpy as np

from .prims import BY_DTYPE, INT_NAMES, PRIMS

_FV_BY_BINNAME = {p.binary: n for n, p in PRIMS.items()}
_FV_INT_RANGE = {n: PRIMS[n].range for n in INT_NAMES}

_FV_SKIP = re.compile(rb"(?:[ \t\r\n\f\v]+|--[^\n]*)*")
_FV_TOKEN = re.compile(rb"-?[A-Za-z0-9_.]+(?:[+-][A-Za-z0-9_.]+)?")
_FV_INT = re.compile(rb"(-?)(0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9][0-9_]*)(i8|i16|i32|i64|u8|u16|u32|u64)?")
_FV_FLOAT = re.compile(rb"(-?[0-9][0-9_]*(?:\.[0-9][0-9_]*)?(?:[eE][+-]?[0-9][0-9_]*)?)(f16|f32|f64)?")
_FV_HEXFLOAT = re.compile(rb"(-?0[xX][0-9a-fA-F_]+\.[0-9a-fA-F_]+[pP][+-]?[0-9]+)(f16|f32|f64)?")
_FV_SPECIAL = re.compile(rb"(-?)(f16|f32|f64)\.(nan|inf)")
_FV_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_FV_DIM = re.compile(rb"\[[ \t\r\n]*([0-9]+)[ \t\r\n]*\]")

# Fast path for a row of plain literals of one type: the whole row up to `]`, checked by one regex.
_FV_WS = rb"[ \t\r\n]*"
_FV_DEC = rb"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_FV_ROW_CACHE = {}


def _fv_row_regex(tname, suffixed):
    key = (tname, suffixed)
    rx = _FV_ROW_CACHE.get(key)
    if rx is None:
        if tname == "bool":
            elem = rb"(?:true|false)"
        elif tname in INT_NAMES:
            elem = rb"-?[0-9]+" + (tname.encode() if suffixed else b"")
        elif suffixed:
            elem = _FV_DEC + tname.encode()
        else:  # f64 without suffix: needs a dot or an exponent
            elem = rb"-?[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)"
        rx = re.compile(_FV_WS + elem + rb"(?:" + _FV_WS + rb"," + _FV_WS + elem + rb")*" + _FV_WS)
        _FV_ROW_CACHE[key] = rx
    return rx


def _fv_f32(x, text):
    """The float32 nearest to the decimal `text`, given x = float(text): exact even where rounding
    first to f64 lands exactly halfway between two float32s."""
    f = np.float32(x)
    b = float(f)
    if b != x and np.isfinite(f):
        other = np.nextafter(f, np.float32(np.inf if x > b else -np.inf))
        mid = (b + float(other)) / 2
        if x == mid:
            d = fractions.Fraction(text)
            m = fractions.Fraction(mid)
            if d != m:
                hi, lo = (f, other) if b > float(other) else (other, f)
                f = hi if d > m else lo
    return f


class _FvReader:
    def __init__(self, data):
        self.data = data

    # ---- errors ----

    def _where(self, pos):
        d = self.data
        line = d.count(b"\n", 0, pos) + 1
        col = pos - (d.rfind(b"\n", 0, pos) + 1) + 1
        return "line %d, column %d (byte offset %d)" % (line, col, pos)

    def _fail(self, what, pos):
        raise ValueError("Invalid value: expected %s at %s%s" % (what, self._where(pos), self._found(pos)))

    def _found(self, pos):
        if pos >= len(self.data):
            return ", found end of input"
        m = _FV_TOKEN.match(self.data, pos)
        tok = m.group(0) if m else self.data[pos:pos + 1]
        return ", found %r" % tok.decode("latin-1")

    # ---- top level ----

    def read_all(self):
        out = []
        d = self.data
        n = len(d)
        pos = _FV_SKIP.match(d, 0).end()
        while pos < n:
            if d[pos:pos + 1] == b"b":
                v, pos = self._binary(pos)
            else:
                v, pos = self._text(pos)
            out.append(v)
            pos = _FV_SKIP.match(d, pos).end()
        return out

    # ---- binary ----

    def _binary(self, pos):
        d = self.data
        start = pos
        if pos + 7 > len(d):
            raise ValueError("Invalid binary value at byte offset %d: expected a 7-byte header "
                             "(b, version, rank, type), found end of input after %d bytes"
                             % (start, len(d) - start))
        version = d[pos + 1]
        if version != 2:
            raise ValueError("Invalid binary value at byte offset %d: expected format version 2, got %d"
                             % (pos + 1, version))
        rank = d[pos + 2]
        binname = bytes(d[pos + 3:pos + 7])
        tname = _FV_BY_BINNAME.get(binname)
        if tname is None:
            what = "f16 is not supported" if binname == b" f16" else "unknown type %r" % binname.decode("latin-1")
            raise ValueError("Invalid binary value at byte offset %d: expected one of the types %s; %s"
                             % (pos + 3, ", ".join(PRIMS), what))
        pos += 7
        if pos + 8 * rank > len(d):
            raise ValueError("Invalid binary value at byte offset %d: expected %d dimensions (%d bytes), "
                             "found end of input" % (pos, rank, 8 * rank))
        shape = struct.unpack_from("<%dQ" % rank, d, pos)
        pos += 8 * rank
        count = 1
        for s in shape:
            count *= s
        dtype = PRIMS[tname].dtype
        nbytes = count * dtype.itemsize
        if pos + nbytes > len(d):
            raise ValueError("Invalid binary value at byte offset %d: expected %d bytes of %s data for shape %s, "
                             "found %d" % (pos, nbytes, tname, "".join("[%d]" % s for s in shape),
                                           len(d) - pos))
        if tname == "bool":
            arr = np.frombuffer(d, dtype=np.uint8, count=count, offset=pos) != 0
        else:
            arr = np.frombuffer(d, dtype=dtype.newbyteorder("<"), count=count, offset=pos).astype(dtype)
        pos += nbytes
        if rank == 0:
            return arr[0], pos
        return arr.reshape(shape), pos

    # ---- text ----

    def _text(self, pos):
        d = self.data
        c = d[pos:pos + 1]
        if c == b"[":
            return self._array(pos)
        m = _FV_WORD.match(d, pos)
        if m and m.group(0) == b"empty":
            return self._empty(m.end(), pos)
        v, _, pos = self._scalar(pos)
        return v, pos

    def _scalar(self, pos):
        """Returns (numpy scalar, type name, new position)."""
        d = self.data
        m = _FV_TOKEN.match(d, pos)
        if not m:
            self._fail("a value", pos)
        tok = m.group(0)
        end = m.end()
        if tok == b"true":
            return np.bool_(True), "bool", end
        if tok == b"false":
            return np.bool_(False), "bool", end
        mi = _FV_INT.fullmatch(tok)
        if mi:
            sign, digits, suffix = mi.groups()
            tname = suffix.decode() if suffix else "i32"
            try:
                x = int(digits.replace(b"_", b""), 0)
            except ValueError:
                self._fail("a value", pos)
            if sign:
                x = -x
            # wrapped to the type's width, as Futhark reads it (tests/primitive/ctz.fut: 4294967295i32 is -1,
            # u16_convop.fut: 32767i8 is -1, bitwise.fut: -271733879u32 is 4023233417)
            lo, hi = _FV_INT_RANGE[tname]
            x &= hi - lo  # (2^bits - 1)
            if x > hi:
                x -= hi - lo + 1
            return PRIMS[tname].dtype.type(x), tname, end
        for rx, conv in ((_FV_FLOAT, float), (_FV_HEXFLOAT, float.fromhex)):
            mf = rx.fullmatch(tok)
            if mf:
                num, suffix = mf.groups()
                tname = suffix.decode() if suffix else "f64"
                if tname == "f16":
                    raise ValueError("Invalid value at %s: f16 is not supported" % self._where(pos))
                text = num.replace(b"_", b"").decode()
                try:
                    x = conv(text)
                except (ValueError, OverflowError):
                    self._fail("a value", pos)
                if tname == "f32" and conv is float:
                    return _fv_f32(x, text), tname, end
                return PRIMS[tname].dtype.type(x), tname, end
        ms = _FV_SPECIAL.fullmatch(tok)
        if ms:
            sign, tname, what = ms.groups()
            tname = tname.decode()
            if tname == "f16":
                raise ValueError("Invalid value at %s: f16 is not supported" % self._where(pos))
            x = float("nan") if what == b"nan" else float("inf")
            if sign:
                x = -x
            return PRIMS[tname].dtype.type(x), tname, end
        self._fail("a value", pos)

    def _skip(self, pos):
        return _FV_SKIP.match(self.data, pos).end()

    def _array(self, pos):
        """At `[`: returns (numpy array, new position)."""
        d = self.data
        start = pos
        pos = self._skip(pos + 1)
        c = d[pos:pos + 1]
        if c == b"]":
            raise ValueError("Invalid value at %s: an empty array must be written as empty([0]t), not []"
                             % self._where(start))
        if c == b"[":
            rows = []
            while True:
                rstart = pos
                if d[pos:pos + 1] != b"[":
                    self._fail("'[' (arrays must be regular)", pos)
                row, pos = self._array(pos)
                if rows and (row.shape != rows[0].shape or row.dtype != rows[0].dtype):
                    raise ValueError("Invalid value at %s: irregular array: an element of type %s follows "
                                     "elements of type %s" % (self._where(rstart), type_name(row, True),
                                                              type_name(rows[0], True)))
                rows.append(row)
                pos = self._skip(pos)
                c = d[pos:pos + 1]
                if c == b"]":
                    return np.stack(rows), pos + 1
                if c != b",":
                    self._fail("',' or ']'", pos)
                pos = self._skip(pos + 1)
        # A row of scalars.  Try the fast path first: the first element decides the type.
        first, tname, fend = self._scalar(pos)
        close = d.find(b"]", pos)
        if close >= 0:
            suffixed = d[pos:fend].endswith(tname.encode()) and tname != "bool"
            seg = d[pos:close]
            if _fv_row_regex(tname, suffixed).fullmatch(seg):
                arr = self._fast_row(seg, tname, suffixed)
                if arr is not None:
                    return arr, close + 1
        vals = [first]
        pos = fend
        while True:
            pos = self._skip(pos)
            c = d[pos:pos + 1]
            if c == b"]":
                return np.array(vals, dtype=PRIMS[tname].dtype), pos + 1
            if c != b",":
                self._fail("',' or ']'", pos)
            pos = self._skip(pos + 1)
            if d[pos:pos + 1] == b"[":
                raise ValueError("Invalid value at %s: irregular array: an array follows scalars"
                                 % self._where(pos))
            v, t, end = self._scalar(pos)
            if t != tname:
                raise ValueError("Invalid value at %s: array element of type %s follows elements of type %s"
                                 % (self._where(pos), t, tname))
            vals.append(v)
            pos = end

    def _fast_row(self, seg, tname, suffixed):
        dtype = PRIMS[tname].dtype
        if tname == "bool":
            return np.array([t.strip() == b"true" for t in seg.split(b",")], dtype=np.bool_)
        if suffixed:
            seg = seg.replace(tname.encode(), b"")
        parts = np.array(seg.split(b","))
        if tname in INT_NAMES:
            wide = np.uint64 if tname == "u64" else np.int64
            try:
                xs = parts.astype(wide)
            except (ValueError, OverflowError):
                return None  # e.g. out of range: the slow path says why
            lo, hi = _FV_INT_RANGE[tname]
            if tname != "u64" and xs.size and (xs.min() < lo or xs.max() > hi):
                return None
            return xs.astype(dtype)
        try:
            xs = parts.astype(np.float64)
        except (ValueError, OverflowError):
            return None
        if tname == "f32":
            f = xs.astype(np.float32)
            back = f.astype(np.float64)
            off = back != xs
            if off.any():
                # A value that is exactly halfway between two f32s after rounding to f64 may have been
                # rounded the wrong way (double rounding): the slow path decides those exactly.
                up = np.where(xs > back, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32)
                mid = (back + np.nextafter(f, up).astype(np.float64)) / 2
                if np.any(off & (xs == mid)):
                    return None
            return f
        return xs.astype(dtype)

    def _empty(self, pos, start):
        d = self.data
        pos = self._skip(pos)
        if d[pos:pos + 1] != b"(":
            self._fail("'(' after empty", pos)
        pos = self._skip(pos + 1)
        shape = []
        while True:
            m = _FV_DIM.match(d, pos)
            if not m:
                break
            shape.append(int(m.group(1)))
            pos = self._skip(m.end())
        if not shape:
            self._fail("a dimension such as [0]", pos)
        m = _FV_WORD.match(d, pos)
        tname = m.group(0).decode() if m else None
        if tname not in PRIMS:
            self._fail("a primitive type (%s)" % ", ".join(PRIMS), pos)
        pos = self._skip(m.end())
        if d[pos:pos + 1] != b")":
            self._fail("')'", pos)
        if 0 not in shape:
            raise ValueError("Invalid value at %s: empty array with non-empty shape %s"
                             % (self._where(start), "".join("[%d]" % s for s in shape)))
        return np.zeros(shape, dtype=PRIMS[tname].dtype), pos + 1


def read_value_at(data: bytes, pos: int):
    """One value in text form at `pos` of `data`: (the value, the position after it); ValueError where there is
    none."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _FvReader(data)._text(pos)


def read_values(stream):
    """Read all values from a binary file-like `stream` (or one whose read() gives str) until EOF.

    Text and binary values may be mixed.  Scalars come back as numpy scalars, arrays as numpy arrays.
    Malformed input raises ValueError saying what was expected where (line and column for text,
    byte offset for binary).  Decimal f32 literals are parsed as f64 and then rounded to f32.
    """
    data = stream.read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    with np.errstate(over="ignore", invalid="ignore"):  # 1e39f32 is f32.inf, as strtof gives
        return _FvReader(bytes(data)).read_all()


# ---- writing ----

def _fv_as_numpy(value):
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, np.generic):
        arr = np.asarray(value)
    elif isinstance(value, (bool, int, float)):
        # Python scalars: bool, i64 or f64.
        arr = np.asarray(value)
    else:
        raise TypeError("cannot write a value of Python type %s" % type(value).__name__)
    dt = arr.dtype if arr.dtype.isnative else arr.dtype.newbyteorder("=")
    tname = BY_DTYPE[dt].name if dt in BY_DTYPE else None
    if tname is None:
        raise TypeError("cannot write a value of numpy dtype %s" % arr.dtype)
    return arr, tname


def _fv_float_str(x, tname):
    """Shortest round-tripping spelling of a float32/float64, with its suffix."""
    if x != x:
        return tname + ".nan"
    if x in (float("inf"), float("-inf")):
        return ("-" if x < 0 else "") + tname + ".inf"
    if tname == "f64":
        return repr(float(x)) + "f64"
    ax = abs(x)
    if ax != 0 and (ax < 1e-4 or ax >= 1e16):
        return np.format_float_scientific(x, unique=True, trim="-") + "f32"
    return np.format_float_positional(x, unique=True, trim="0") + "f32"


def _fv_elem_strs(flat, tname):
    if tname == "bool":
        return ["true" if b else "false" for b in flat.tolist()]
    if tname in INT_NAMES:
        return [str(i) + tname for i in flat.tolist()]
    if not np.isfinite(flat).all():
        return [_fv_float_str(f, tname) for f in flat]
    if tname == "f64":
        return [repr(f) + "f64" for f in flat.tolist()]
    mag = np.abs(flat)
    sci = ((mag < 1e-4) & (mag != 0)) | (mag >= 1e16)
    ffp = np.format_float_positional
    if not sci.any():
        return [ffp(f, unique=True, trim="0") + "f32" for f in flat]
    return [_fv_float_str(f, "f32") for f in flat]


def write_text(value, stream):
    """Write one value to the text stream in Futhark's text format, e.g. `1i32`, `2.5f32`, `true`,
    `f32.nan`, `-f64.inf`, `[[1i32, 2i32], [3i32, 4i32]]`, `empty([0][3]f32)`.

    No newline is written: the caller writes one after each value (Futhark executables print one
    value per line).  Floats are printed with the shortest digits that round-trip at their precision.
    """
    arr, tname = _fv_as_numpy(value)
    if arr.ndim == 0:
        stream.write(_fv_elem_strs(arr.reshape(1), tname)[0])
        return
    if arr.size == 0:
        stream.write("empty(" + "".join("[%d]" % s for s in arr.shape) + tname + ")")
        return
    strs = _fv_elem_strs(arr.ravel(), tname)
    for dim in reversed(arr.shape):
        strs = ["[" + ", ".join(strs[i:i + dim]) + "]" for i in range(0, len(strs), dim)]
    stream.write(strs[0])


def write_binary(value, stream):
    """Write one value to the binary stream in Futhark's binary format (version 2, little-endian)."""
    arr, tname = _fv_as_numpy(value)
    header = b"b\x02" + bytes([arr.ndim]) + PRIMS[tname].binary + struct.pack("<%dQ" % arr.ndim, *arr.shape)
    if tname == "bool":
        body = np.ascontiguousarray(arr, dtype=np.uint8).tobytes()
    else:
        body = np.ascontiguousarray(arr, dtype=PRIMS[tname].dtype.newbyteorder("<")).tobytes()
    rest = memoryview(header + body)
    while rest:  # a buffered pipe whose reader left takes part of a large write and says so, without an error
        written = stream.write(rest)
        rest = rest[len(rest) if written is None else written:]


def write_values(values, stream, binary=False):
    """A program's results on a text stream as Futhark's executables print them: one value a line in the text
    format, or (binary) one after another in the binary format on the stream's byte buffer."""
    for value in values:
        if binary:
            stream.flush()
            write_binary(value, stream.buffer)
        else:
            write_text(value, stream)
            stream.write("\n")


def type_name(value, sizes=False):
    """Futhark's spelling of a value's type: `i64`, `[][]f32`; with sizes=True, `[3][4]f32`.

    Never raises: values that are not Futhark values are named by their Python type.
    """
    try:
        arr, tname = _fv_as_numpy(value)
    except TypeError:
        if isinstance(value, np.ndarray):
            return "".join("[%d]" % s if sizes else "[]" for s in value.shape) + str(value.dtype)
        return type(value).__name__
    return "".join(("[%d]" % s) if sizes else "[]" for s in arr.shape) + tname
