"""Scalar OpenCL C: the helpers every kernel shares (the prelude), constants, operators and the numeric
prelude's functions, with Futhark's semantics."""

import math

from incflat.ir.runtime.prims import PRIMS
from incflat.ir.runtime.scalars import conversion_path
from incflat.ir import source as S
from incflat.ir.errors import Unsupported

CTYPES = {name: p.ctype for name, p in PRIMS.items()}
# The unsigned type an integer's +, -, *, << and ** are computed in, so that they wrap as Futhark's do: signed
# overflow is undefined in OpenCL C (LLVM made i64's ** give other bits), and operands narrower than int are
# promoted to int (ushort * ushort overflows it), so at least 32 bits.
WRAPPING = {name: "ulong" if p.size == 8 else "uint" for name, p in PRIMS.items() if p.is_int}
# The integer operators the prelude defines as functions (division and power need checks and Futhark's rounding).
INT_OP_FUNCTIONS = {"/": "floordiv", "%": "floormod", "//": "quot", "%%": "rem", "**": "pow"}

PRELUDE = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#ifdef INDEX64
typedef long idx_t;
#else
typedef int idx_t;
#endif
// Integer division never traps (a CPU device would raise SIGFPE): by zero it gives 0, and the one
// overflowing case, the lowest signed value divided by -1, wraps (an unsigned divisor of all ones divides). A 64-bit remainder of operands that fit in 31 bits
// is taken in 32 (a GPU divides 64-bit integers in software), and a modulus of a value within one period of
// [0, y) (a rotation's index, (i + k) % n) is an addition: no division at all.
#define DEFINE_INT_OPS(T, W, NAME) \
  static inline T NAME##_quot(T x, T y) { return y == 0 ? 0 : ((T)-1 < 0 && y == (T)-1 ? (T)((W)0 - (W)x) : x / y); } \
  static inline T NAME##_rem(T x, T y) { \
    if (sizeof(T) == 8 && ((ulong)x | (ulong)y) < 0x80000000UL) return y == 0 ? 0 : (T)((uint)x % (uint)y); \
    return (y == 0 || ((T)-1 < 0 && y == (T)-1)) ? 0 : x % y; } \
  static inline T NAME##_floordiv(T x, T y) { T q = NAME##_quot(x, y); return (y != 0 && q * y != x && ((x < 0) != (y < 0))) ? q - 1 : q; } \
  static inline T NAME##_floormod(T x, T y) { \
    if (y > 0) { if (x >= 0 && x < y) return x; if (x < 0 && x >= (T)0 - y) return x + y; \
                 if (x >= y && x - y < y) return x - y; } \
    T r = NAME##_rem(x, y); return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r; } \
  static inline T NAME##_pow(T x, T y) { \
    W r = 1, b = (W)x; while (y > 0) { if (y & 1) r = r * b; b = b * b; y >>= 1; } return (T)r; }
static inline void record_error(__global long *error, long id, long a, long b, long c, long d, long e, long f,
                                long g) {
  if (atomic_cmpxchg((volatile __global int *)error, 0, (int)id) == 0) {
    error[1] = a; error[2] = b; error[3] = c; error[4] = d; error[5] = e; error[6] = f; error[7] = g;
  }
}
DEFINE_INT_OPS(char, uint, i8)
DEFINE_INT_OPS(short, uint, i16)
DEFINE_INT_OPS(int, uint, i32)
DEFINE_INT_OPS(long, ulong, i64)
DEFINE_INT_OPS(uchar, uint, u8)
DEFINE_INT_OPS(ushort, uint, u16)
DEFINE_INT_OPS(uint, uint, u32)
DEFINE_INT_OPS(ulong, ulong, u64)
// The kernels' own index arithmetic (a flat index split over dimensions): never negative, divided in 32 bits
// where both operands fit (a GPU divides 64-bit integers in software, some hundred instructions).
static inline long idx_div(long x, long y) { return ((ulong)x | (ulong)y) < 0x100000000UL ? (long)((uint)x / (uint)y) : x / y; }
static inline long idx_rem(long x, long y) { return ((ulong)x | (ulong)y) < 0x100000000UL ? (long)((uint)x % (uint)y) : x % y; }
// A float converted to an integer as Futhark's C backends convert it on x86 (ir/runtime/scalars.py's
// float_to_int): truncated through 32 bits (cvtt32) or 64 (cvtt64), the width's least value where it does not
// fit or is NaN; u64 from 2^63 on as x - 2^63, plus 2^63.
static inline int cvtt32_f32(float x) { float t = trunc(x); return t >= -0x1p31f && t < 0x1p31f ? (int)t : (int)0x80000000u; }
static inline long cvtt64_f32(float x) { float t = trunc(x); return t >= -0x1p63f && t < 0x1p63f ? (long)t : (long)0x8000000000000000ul; }
static inline ulong cvttu64_f32(float x) { return x >= 0x1p63f ? (ulong)cvtt64_f32(x - 0x1p63f) + 0x8000000000000000ul : (ulong)cvtt64_f32(x); }
static inline int cvtt32_f64(double x) { double t = trunc(x); return t >= -0x1p31 && t < 0x1p31 ? (int)t : (int)0x80000000u; }
static inline long cvtt64_f64(double x) { double t = trunc(x); return t >= -0x1p63 && t < 0x1p63 ? (long)t : (long)0x8000000000000000ul; }
static inline ulong cvttu64_f64(double x) { return x >= 0x1p63 ? (ulong)cvtt64_f64(x - 0x1p63) + 0x8000000000000000ul : (ulong)cvtt64_f64(x); }
// lerp as Futhark writes it, v0 + (v1 - v0) * t, rounded twice: the compiler may not fuse it into an fma.
static inline float lerp_f32(float v0, float v1, float t) {
#pragma OPENCL FP_CONTRACT OFF
  return v0 + (v1 - v0) * t;
}
static inline double lerp_f64(double v0, double v1, double t) {
#pragma OPENCL FP_CONTRACT OFF
  return v0 + (v1 - v0) * t;
}
"""



def c_const(c: S.Const) -> str:
    t = c.type.name
    v = c.value
    if t == "bool":
        return "1" if v else "0"
    if t in ("f32", "f64"):
        suffix = "f" if t == "f32" else ""
        if math.isnan(v):
            return f"(({CTYPES[t]})NAN)"
        if math.isinf(v):
            return f"(({CTYPES[t]})({'-' if v < 0 else ''}INFINITY))"
        return f"(({CTYPES[t]}){float(v)!r}{suffix})"
    if t.startswith("u"):
        return f"(({CTYPES[t]}){int(v)}UL)"
    if int(v) == -2 ** 63:
        return "((long)(-9223372036854775807L - 1))"
    return f"(({CTYPES[t]}){int(v)}L)"


def dim_expr(d) -> str:
    return f"{d}L" if isinstance(d, int) else d


def binop(op: str, x: str, y: str, t: str, loc) -> str:
    ct = CTYPES[t]
    is_float = t in ("f32", "f64")
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return f"((uchar)({x} {op} {y}))"
    if op in ("&&", "||"):
        return f"((uchar)({x} {op} {y}))"
    if is_float:
        if op in "+-*/":
            return f"({x} {op} {y})"
        if op == "**":
            return f"pow({x}, {y})"
        if op == "%":
            return f"fmod({x}, {y})"
        raise Unsupported(f"operator {op} on {t}", loc)
    if op in ("+", "-", "*"):
        w = WRAPPING[t]
        return f"(({ct})(({w}){x} {op} ({w}){y}))"
    if op in ("&", "|", "^", ">>"):
        return f"(({ct})({x} {op} {y}))"
    if op == "<<":
        return f"(({ct})(({WRAPPING[t]}){x} << {y}))"
    if op in INT_OP_FUNCTIONS:
        return f"{t}_{INT_OP_FUNCTIONS[op]}({x}, {y})"
    raise Unsupported(f"operator {op} on {t}", loc)



FLOAT_FNS = {"sqrt": "sqrt", "exp": "exp", "log": "log", "sin": "sin", "cos": "cos", "tan": "tan",
             "abs": "fabs", "floor": "floor", "ceil": "ceil", "min": "fmin", "max": "fmax", "atan2": "atan2",
             "pow": "pow", "log2": "log2", "log10": "log10", "asin": "asin", "acos": "acos", "atan": "atan",
             "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "round": "rint", "trunc": "trunc", "cbrt": "cbrt",
             "log1p": "log1p", "expm1": "expm1", "hypot": "hypot", "acosh": "acosh", "asinh": "asinh",
             "atanh": "atanh", "gamma": "tgamma", "lgamma": "lgamma", "erf": "erf", "erfc": "erfc", "fma": "fma",
             "mad": "mad"}
INT_FNS = {"min": "min", "max": "max", "abs": "abs", "mul_hi": "mul_hi"}
FLOAT_BITS = {"f32": ("uint", "as_uint", "as_float"), "f64": ("ulong", "as_ulong", "as_double")}


def bit_function(module: str, name: str, args: list):
    """C for the prelude's bit functions (popc, clz, ctz, mad_hi, get_bit, set_bit, to_bits, from_bits), or
    None. A bit index outside the type's width reads 0 and sets nothing (as the interpreter does)."""
    p = PRIMS[module]
    if p.is_float:
        u, to_bits, from_bits = FLOAT_BITS[module]
        if name == "to_bits":
            return f"{to_bits}({args[0]})"
        if name == "from_bits":
            return f"{from_bits}({args[0]})"
        bits = lambda x: f"{to_bits}({x})"  # noqa: E731
        back = lambda x: f"{from_bits}(({u})({x}))"  # noqa: E731
    elif p.is_int:
        u = p.unsigned_ctype
        bits = lambda x: f"(({u}){x})"  # noqa: E731
        back = lambda x: f"(({p.ctype})({x}))"  # noqa: E731
    else:
        return None
    width = p.size * 8
    if name == "get_bit":
        bit, x = args
        return f"(({bit}) >= 0 && ({bit}) < {width} ? (int)(({bits(x)} >> ({bit})) & 1) : 0)"
    if name == "set_bit":
        bit, x, b = args
        cleared = f"({bits(x)} & ~(({u})1 << ({bit})))"
        return f"(({bit}) >= 0 && ({bit}) < {width} ? {back(f'{cleared} | (({u})({b}) << ({bit}))')} : {x})"
    if not p.is_int:
        return None
    if name == "popc":
        return f"((int)popcount({bits(args[0])}))"
    if name == "clz":
        return f"((int)clz({bits(args[0])}))"
    if name == "ctz":  # the zero bits below the lowest set bit; all of them for 0
        x = bits(args[0])
        return f"((int)popcount(({u})(~{x} & ({x} - ({u})1))))"
    if name == "mad_hi":  # the addition wraps: done unsigned
        a, b, c = args
        return back(f"({u})mul_hi({a}, {b}) + {bits(c)}")
    return None


def primcall(fn: str, args: list, arg_types: list, ret: str, loc) -> str:
    module, name = fn.split(".", 1)
    if name in CTYPES:  # a conversion `T.U`: from U to T
        if module == "bool":
            return f"((uchar)({args[0]} != 0))"
        if PRIMS[module].is_int and PRIMS[arg_types[0]].is_float:
            return f"(({CTYPES[module]})cvtt{conversion_path(module)}_{arg_types[0]}({args[0]}))"
        return f"(({CTYPES[module]})({args[0]}))"
    if name == "sgn":  # (a float's NaN stays NaN, as Futhark's fsignum)
        sign = f"(({CTYPES[ret]})(({args[0]} > 0) - ({args[0]} < 0)))"
        return f"(isnan({args[0]}) ? ({args[0]}) : {sign})" if PRIMS[ret].is_float else sign
    if name in ("isnan", "isinf", "isfinite"):
        return f"((uchar){name}({args[0]}))"
    if name == "neg":
        return f"(({CTYPES[ret]})(-{args[0]}))"
    if name == "lerp":
        return f"lerp_{module}({', '.join(args)})"
    bit_c = bit_function(module, name, args)
    if bit_c is not None:
        return bit_c
    table = FLOAT_FNS if module in ("f32", "f64") else INT_FNS
    if name not in table:
        raise Unsupported(f"function {fn} in a kernel", loc)
    if name == "abs" and module.startswith("u"):
        return args[0]
    return f"(({CTYPES[ret]}){table[name]}({', '.join(args)}))"


def neutral_ctypes(op) -> list:
    """The C types of a reduction's or scan's values."""
    return [CTYPES[a.type.name] for a in op.neutral]
