"""The numeric prelude's bit-level and special functions on numpy values, with Futhark's semantics.

Part of the runtime every compiled program carries, and the reference interpreter's implementation too
(ir/interp_ops.py): `prelude_function(type, name)` gives a function of numpy scalars or, elementwise,
numpy arrays for `f32.gamma`, `i32.popc`, `u64.mul_hi`, `f64.to_bits`... (None for other names). Each
agrees with the OpenCL builtins the kernels use (codegen/cscalar.py): popcount, clz, mul_hi, tgamma...
"""

import math
from fractions import Fraction

import numpy as np

from .prims import BY_DTYPE

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_WIDE = {np.dtype(np.int8): np.int64, np.dtype(np.int16): np.int64, np.dtype(np.int32): np.int64,
         np.dtype(np.uint8): np.uint64, np.dtype(np.uint16): np.uint64, np.dtype(np.uint32): np.uint64}


def _result(r):
    r = np.asarray(r)
    return r[()] if r.ndim == 0 else r


def _elementwise(f, dtype):
    """f on Python floats or ints, applied to each element, the results of type dtype."""
    def g(*args):
        arrs = np.broadcast_arrays(*[np.asarray(a) for a in args])
        out = np.empty(arrs[0].shape, dtype=dtype)
        for i in np.ndindex(out.shape):
            out[i] = f(*[a[i].item() for a in arrs])
        return _result(out)
    return g


def _unsigned(x):
    x = np.asarray(x)
    return x.view(_UNSIGNED[x.dtype.itemsize])


# ---- special functions, as C's tgamma, lgamma, erf, erfc (the OpenCL builtins)

def _gamma(x):
    try:
        return math.gamma(x)
    except ValueError:  # a pole or -inf: C gives +-inf at zero, NaN elsewhere
        return math.copysign(math.inf, x) if x == 0 else math.nan
    except OverflowError:
        return math.inf if x > 0 else math.copysign(math.inf, x)


def _lgamma(x):
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # the poles: lgamma is +inf there
        return math.inf


def _fma(dtype):
    """a * b + c rounded once to dtype (Python's math has no fma before 3.13)."""
    def f(a, b, c):
        if not all(math.isfinite(v) for v in (a, b, c)):
            return a * b + c
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        try:
            d = float(exact)  # correctly rounded to f64
        except OverflowError:
            return math.copysign(math.inf, exact)
        if dtype == np.float64 or Fraction(d) == exact:
            return d
        # f64 then f32 rounds twice: where d lies exactly between two f32 values, move it a step toward
        # the exact value so that the second rounding goes the way a single rounding would.
        lo = float(np.float32(d))
        if lo != d:
            other = float(np.nextafter(np.float32(lo), np.float32(math.copysign(math.inf, d - lo))))
            if (lo + other) / 2 == d:
                d = float(np.nextafter(d, math.inf if exact > d else -math.inf))
        return d
    return f


# ---- integers: bit counts and the high half of products

def _bit_length(u, width):
    """The position of the highest set bit plus one (0 for 0), of unsigned u, elementwise."""
    u = np.asarray(u)
    n = np.zeros(u.shape, dtype=np.int32)
    s = width // 2
    while s:
        high = (u >> u.dtype.type(s)) != 0
        n += np.where(high, s, 0).astype(np.int32)
        u = np.where(high, u >> u.dtype.type(s), u)
        s //= 2
    return n + (u != 0).astype(np.int32)


def _popc(x):
    return _result(np.bitwise_count(_unsigned(x)).astype(np.int32))


def _clz(x):
    width = np.asarray(x).dtype.itemsize * 8
    return _result(np.int32(width) - _bit_length(_unsigned(x), width))


def _ctz(x):
    u = _unsigned(x)
    with np.errstate(all="ignore"):
        below = ~u & (u - u.dtype.type(1))  # the zero bits below the lowest set bit (all bits for 0)
    return _result(np.bitwise_count(below).astype(np.int32))


def _mul_hi(a, b):
    a, b = np.asarray(a), np.asarray(b)
    dt = a.dtype
    width = dt.itemsize * 8
    wide = _WIDE.get(dt)
    if wide is not None:
        with np.errstate(all="ignore"):
            return _result((a.astype(wide) * b.astype(wide) >> wide(width)).astype(dt))
    bits = (1 << width) - 1
    signed = dt.kind == "i"

    def hi(x, y):
        h = ((x * y) >> width) & bits  # Python's >> floors: the high word of the two's complement product
        return h - (1 << width) if signed and h >> (width - 1) else h
    return _elementwise(hi, dt)(a, b)


def _mad_hi(a, b, c):
    with np.errstate(all="ignore"):
        return _result(np.asarray(_mul_hi(a, b)) + np.asarray(c))


# ---- single bits: an index outside the type's width reads 0 and sets nothing

def _get_bit(bit, x):
    u = _unsigned(x)
    width = u.dtype.itemsize * 8
    bit = np.asarray(bit)
    inside = (bit >= 0) & (bit < width)
    shift = np.where(inside, bit, 0).astype(u.dtype)
    return _result(np.where(inside, (u >> shift) & u.dtype.type(1), 0).astype(np.int32))


def _set_bit(bit, x, b):
    x = np.asarray(x)
    u = _unsigned(x)
    ut = u.dtype.type
    width = u.dtype.itemsize * 8
    bit, b = np.asarray(bit), np.asarray(b)
    inside = (bit >= 0) & (bit < width)
    shift = np.where(inside, bit, 0).astype(u.dtype)
    with np.errstate(all="ignore"):
        value = b.astype(np.int64).astype(u.dtype)  # b's low bits, as C's conversion to the type takes them
        r = (u & ~(ut(1) << shift)) | (value << shift)
    return _result(np.where(inside, r, u).astype(u.dtype).view(x.dtype))


def conversion_path(type_name: str) -> str:
    """How a float converts to the integer type `type_name` (float_to_int): through "32" or "64" bits, or "u64"
    (the kernels' cvtt32/cvtt64/cvttu64 and the native host's incflat_cvtt*, named by it)."""
    return "u64" if type_name == "u64" else "64" if type_name in ("i64", "u32") else "32"


def float_to_int(x, dtype):
    """A float converted to the integer type `dtype` as Futhark's C backends convert it on x86 (cvttss2si and
    cvttsd2si): truncated through 32 bits for i8, i16, i32, u8 and u16 and through 64 bits for i64 and u32, then
    wrapped to the type's width, where a value outside those 32 or 64 bits, or NaN, gives the least value of
    that width (-2^31, -2^63); for u64, a value from 2^63 on converts as x - 2^63, plus 2^63."""
    dt = np.dtype(dtype)
    f = np.asarray(x).astype(np.float64)  # (exact for f32 and f64)

    def truncated(v, bits):
        with np.errstate(invalid="ignore"):
            t = np.trunc(v)
            inside = (t >= -2.0 ** (bits - 1)) & (t < 2.0 ** (bits - 1))
        return np.where(inside, np.where(inside, t, 0).astype(np.int64), np.int64(-2 ** (bits - 1)))
    with np.errstate(over="ignore", invalid="ignore"):
        if dt == np.uint64:
            with np.errstate(invalid="ignore"):
                high = f >= 2.0 ** 63
            low_part = truncated(f, 64).astype(np.uint64)
            high_part = truncated(f - 2.0 ** 63, 64).astype(np.uint64) + np.uint64(2 ** 63)
            return _result(np.where(high, high_part, low_part))
        return _result(truncated(f, int(conversion_path(BY_DTYPE[dt].name))).astype(dt))


def _float_sgn(x):
    """Futhark's fsignum: NaN stays NaN, either zero gives +0, else 1 or -1."""
    x = np.asarray(x)
    with np.errstate(invalid="ignore"):
        return _result(np.where(np.isnan(x), x, (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)))


_FLOAT_FUNCTIONS = {
    "sgn": lambda dt: _float_sgn,
    "acosh": lambda dt: np.arccosh, "asinh": lambda dt: np.arcsinh, "atanh": lambda dt: np.arctanh,
    "gamma": lambda dt: _elementwise(_gamma, dt), "lgamma": lambda dt: _elementwise(_lgamma, dt),
    "erf": lambda dt: _elementwise(math.erf, dt), "erfc": lambda dt: _elementwise(math.erfc, dt),
    "fma": lambda dt: _elementwise(_fma(dt), dt),
    "mad": lambda dt: lambda a, b, c: a * b + c,
    "lerp": lambda dt: lambda v0, v1, t: v0 + (v1 - v0) * t,
    "to_bits": lambda dt: lambda x: _result(np.asarray(x).view(_UNSIGNED[dt.itemsize])),
    "from_bits": lambda dt: lambda x: _result(np.asarray(x).view(dt)),
    "get_bit": lambda dt: _get_bit,
    "set_bit": lambda dt: _set_bit,
}
_INT_FUNCTIONS = {"popc": _popc, "clz": _clz, "ctz": _ctz, "mul_hi": _mul_hi, "mad_hi": _mad_hi,
                  "get_bit": _get_bit, "set_bit": _set_bit}


def prelude_function(type_name, name):
    """The function of numpy values for the prelude's `type_name.name`, or None."""
    dt = {"f32": np.float32, "f64": np.float64}.get(type_name)
    if dt is not None:
        make = _FLOAT_FUNCTIONS.get(name)
        return make(np.dtype(dt)) if make else None
    if type_name[:1] in ("i", "u"):
        return _INT_FUNCTIONS.get(name)
    return None
