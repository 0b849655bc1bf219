"""The scalar operations and run-time errors of the reference interpreter (ir/interp/interpreter.py).

`InterpError`, which every run-time failure of an interpreted program becomes (`_err` makes one and
`_from_python` turns a Python exception that escapes an operation into one); the operators and prelude
functions on numpy scalars, which work elementwise on numpy arrays too; constants; and the index and
slice arithmetic with its error messages.  ir/interp/interpreter.py (the semantics) and ir/interp/vectorise.py (the
vectorising fast path, a mixin of the interpreter) both import from here; this module imports neither.
"""

import numpy as np

from incflat.ir import source as S
from incflat.ir.errors import CompileError
from incflat.ir.types import FLOAT_TYPES, INT_TYPES, NUMPY_DTYPES, PRIM_NAMES
from incflat.ir.runtime.scalars import float_to_int, prelude_function
from incflat.ir.runtime.values import type_name


class InterpError(CompileError):
    """A run-time error of the interpreted program (Futhark's run-time errors): `.message`, `.loc`."""


# ---------------------------------------------------------------------------------------------
# Scalar operations.  Every function works on numpy scalars and, elementwise, on numpy arrays.
# They are called inside np.errstate(all="ignore"), so integer overflow wraps silently.

def _err(message, loc):
    return InterpError(message, loc)


def _check_nonzero(y, loc):
    if isinstance(y, np.ndarray):
        if not y.all():
            raise _err("division by zero", loc)
    elif not y:
        raise _err("division by zero", loc)


def _sdiv(x, y, loc):
    _check_nonzero(y, loc)
    return x // y  # numpy floors; INT_MIN // -1 wraps to INT_MIN


def _smod(x, y, loc):
    _check_nonzero(y, loc)
    return x % y  # the sign of the divisor


def _squot(x, y, loc):
    _check_nonzero(y, loc)
    return (x - np.fmod(x, y)) // y  # exact: x - rem is a multiple of y


def _srem(x, y, loc):
    _check_nonzero(y, loc)
    return np.fmod(x, y)  # the sign of the dividend


def _udiv(x, y, loc):
    _check_nonzero(y, loc)
    return x // y


def _umod(x, y, loc):
    _check_nonzero(y, loc)
    return x % y


def _wrap_int(v, dtype):
    """A Python int wrapped to `dtype`'s width, as a numpy scalar."""
    bits = dtype.itemsize * 8
    v &= (1 << bits) - 1
    if dtype.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return dtype.type(v)


def _ipow(x, y, loc):
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        if np.any(np.asarray(y) < 0):
            raise _err("Negative exponent in integer power.", loc)
        dt = x.dtype
        return np.power(x, y, dtype=dt)
    if y < 0:
        raise _err("Negative exponent in integer power.", loc)
    dt = x.dtype
    return _wrap_int(pow(int(x), int(y), 1 << (dt.itemsize * 8)), dt)


def _fdiv_trunc(x, y, loc):
    return np.trunc(x / y)


def _mk(f):
    return lambda x, y, loc: f(x, y)


_ADD = _mk(lambda x, y: x + y)
_SUB = _mk(lambda x, y: x - y)
_MUL = _mk(lambda x, y: x * y)
_BINOPS = {
    # (op, dtype kind) -> f(x, y, loc); kind None: any
    ("+", None): _ADD, ("-", None): _SUB, ("*", None): _MUL,
    ("/", "i"): _sdiv, ("/", "u"): _udiv, ("/", "f"): _mk(lambda x, y: x / y),
    ("%", "i"): _smod, ("%", "u"): _umod, ("%", "f"): _mk(np.fmod),
    ("//", "i"): _squot, ("//", "u"): _udiv, ("//", "f"): _fdiv_trunc,
    ("%%", "i"): _srem, ("%%", "u"): _umod, ("%%", "f"): _mk(np.fmod),
    ("**", "i"): _ipow, ("**", "u"): _ipow, ("**", "f"): _mk(lambda x, y: x ** y),
    ("==", None): _mk(lambda x, y: x == y), ("!=", None): _mk(lambda x, y: x != y),
    ("<", None): _mk(lambda x, y: x < y), ("<=", None): _mk(lambda x, y: x <= y),
    (">", None): _mk(lambda x, y: x > y), (">=", None): _mk(lambda x, y: x >= y),
    ("&&", None): _mk(lambda x, y: x & y), ("||", None): _mk(lambda x, y: x | y),
    ("&", None): _mk(lambda x, y: x & y), ("|", None): _mk(lambda x, y: x | y),
    ("^", None): _mk(lambda x, y: x ^ y),
    ("<<", None): _mk(lambda x, y: x << y), (">>", None): _mk(lambda x, y: x >> y),
}


def _binop(op, x, y, loc):
    kind = x.dtype.kind
    f = _BINOPS.get((op, kind)) or _BINOPS.get((op, None))
    if f is None:
        raise _err(f"Operator {op} is not defined on {type_name(x)}.", loc)
    return f(x, y, loc)


def _unop(op, x, loc):
    kind = x.dtype.kind
    if op == "neg" and kind != "b":
        return -x
    if op in ("!", "~"):
        return ~x  # logical not on bool, bitwise complement on integers
    if op == "abs" and kind != "b":
        return np.abs(x)
    raise _err(f"Unary operator {op} is not defined on {type_name(x)}.", loc)


def _to_bool(x):
    return x != 0 if x.dtype.kind != "b" else x


def _converter(dst):
    dt = np.dtype(NUMPY_DTYPES[dst])

    def conv(x):
        k = x.dtype.kind
        if dst == "bool":
            return _to_bool(x)
        if k == "f" and dt.kind in "iu":
            return float_to_int(x, dt)
        return x.astype(dt)
    return conv


_FLOAT_UNARY = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "expm1": np.expm1, "cbrt": np.cbrt,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "abs": np.abs, "floor": np.floor, "ceil": np.ceil, "round": np.rint,
    "trunc": np.trunc, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "neg": np.negative,  # (sgn: scalars.prelude_function)
}
_FLOAT_BINARY = {
    "min": np.fmin, "max": np.fmax, "pow": np.power, "atan2": np.arctan2, "hypot": np.hypot,
    "copysign": np.copysign,
}
_INT_UNARY = {"abs": np.abs, "sgn": np.sign, "signum": np.sign, "neg": np.negative}
_INT_BINARY = {"min": np.minimum, "max": np.maximum}


def _make_prim(fn):
    """A function (args, loc) -> value for the prelude function `fn`, or None if unknown."""
    tname, _, name = fn.partition(".")
    if tname not in PRIM_NAMES:
        return None
    if name in PRIM_NAMES:
        conv = _converter(tname)
        return lambda args, loc: conv(args[0])
    is_float = tname in FLOAT_TYPES
    un = (_FLOAT_UNARY if is_float else _INT_UNARY if tname in INT_TYPES else {}).get(name)
    if un is not None:
        return lambda args, loc: un(args[0])
    bi = (_FLOAT_BINARY if is_float else _INT_BINARY if tname in INT_TYPES else {}).get(name)
    if bi is not None:
        return lambda args, loc: bi(args[0], args[1])
    extra = prelude_function(tname, name)
    if extra is not None:
        return lambda args, loc: extra(*args)
    return None


def _const_value(c):
    t = c.type.name
    dt = np.dtype(NUMPY_DTYPES[t])
    if t == "bool":
        return np.bool_(bool(c.value))
    if t in INT_TYPES:
        return _wrap_int(int(c.value), dt)
    return dt.type(c.value)


def _shape_str(shape):
    return "".join(f"[{n}]" for n in shape)


def _oob_message(parts, shape):
    """Futhark's message; `parts` are the indices (integers) or slices (`i:j`, `i:j:s` strings)."""
    return ("Index [" + ", ".join(p if isinstance(p, str) else str(int(p)) for p in parts)
            + "] out of bounds for array of shape " + _shape_str(shape) + ".")


def _quot(x, y):
    """Division rounding toward zero, on Python integers."""
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def _slice_length(i, j, s, w):
    """The length of `a[i:j:s]` on a dimension of length w, or None when the slice is invalid.

    Futhark's rule: the length is (j - i + s - sgn s) quot s; an empty slice is valid; otherwise the
    stride is not zero, 0 <= i <= j (forwards) or -1 <= j <= i (backwards), and every element
    i + k*s (0 <= k < length) lies in [0, w).  (Futhark itself checks the last element against
    `<= w` and not the first one when going backwards; we check both ends strictly.)"""
    if s == 0:
        return None
    n = _quot(j - i + s - (1 if s > 0 else -1), s)
    if n == 0:
        return 0
    if n < 0:
        return None
    last = i + (n - 1) * s
    if s > 0:
        ok = 0 <= i <= j and last < w
    else:
        ok = -1 <= j <= i < w and last >= 0
    return n if ok else None


def _py_slice(i, n, s):
    """The Python slice for n elements from i by s (n > 0 and in bounds, or n == 0)."""
    if n == 0:
        return slice(0, 0, 1)
    stop = i + n * s
    return slice(i, stop if stop >= 0 else None, s)


def _slice_text(d, i, j, s):
    """How a slice shows in an error message: `i:j`, or `i:j:s` unless the stride is the constant 1."""
    if isinstance(d.stride, S.Const) and d.stride.value == 1:
        return f"{i}:{j}"
    return f"{i}:{j}:{s}"


# Python exceptions that a wrong program or input can provoke inside an operation; the statement turns
# them into InterpErrors (explicit checks give better messages wherever they are cheap).
# (TypeError too: numpy raises it on operands of unexpected types, which only ill-typed IR can give.)
# The original exception stays attached as the cause, for debugging the interpreter itself.
_PYTHON_ERRORS = (IndexError, ValueError, TypeError, ZeroDivisionError, OverflowError, MemoryError,
                  RecursionError)


def _from_python(err, loc):
    if isinstance(err, RecursionError):
        msg = "Evaluation nests too deeply (recursion)."
    elif isinstance(err, MemoryError) or "array is too big" in str(err):
        msg = "Out of memory."
    else:
        msg = f"Invalid operation ({type(err).__name__}: {err})."
    return InterpError(msg, loc)
