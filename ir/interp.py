"""The reference interpreter for the source IR: the semantic oracle of the project.

`run_entry(prog, entry, args)` evaluates one function of a `ir.source.Program` on numpy values and
returns its results as a tuple of numpy scalars and arrays.  Semantics follow Futhark:

- integers wrap around at their width (two's complement); signed `/` and `%` round toward negative
  infinity (Haskell `div`/`mod`), `//` and `%%` toward zero (`quot`/`rem`); unsigned operators are plain;
  integer `**` is wrapping integer power (a negative exponent is an error); division by zero is an error;
- floats follow IEEE arithmetic at their own precision (f32 in float32); `%` on floats is C's fmod;
- out-of-bounds indexing, invalid slices, negative sizes, size mismatches, wrongly typed entry arguments
  and every other run-time failure are `InterpError`s carrying the `loc` of the failing statement (the
  innermost one); a Python exception that escapes an operation (numpy's IndexError, ValueError,
  MemoryError, a RecursionError, ...) is turned into one too;
- float-to-integer conversion truncates toward zero; NaN and infinities give 0 and out-of-range values
  wrap (Futhark leaves both undefined);
- slices `a[i:j:s]` have ceil((j - i) / s) elements (Futhark's rounding), must lie within the array and
  have the length that the IR's `size` atom says; an empty slice is always valid, a zero stride never;
- `scatter` ignores out-of-bounds writes; of several writes to one index the last one wins (Futhark
  leaves it unspecified); `rotate r xs` takes r modulo the length (any r when the array is empty);
- loops bind their size parameters from the parameters' shapes at the start of every iteration, and
  check every parameter's value against its type (rank, element type, fixed and outer sizes); lambda
  parameters are checked likewise against the rows they receive (once per SOAC);
- an `iota` or `replicate` of more than MAX_ARRAY_BYTES is an error, not an attempt.

Evaluation is per element, but a lambda whose body holds only scalar operations, indexing (slices whose
bounds do not depend on the lambda's parameters included), `if` and loops (without size parameters, and
a `for` whose count does not depend on the parameters) is evaluated once over whole arrays (numpy); a
`while` loop then iterates on the elements whose condition still holds.  A reduction or scan whose
operator is a single `+ * & | ^ && || min max` per component uses numpy's reduce/accumulate; other
vectorisable operators are reduced as a balanced tree.  Reductions may therefore associate differently
from a left fold, which Futhark allows (operators must be associative).
"""

import sys

import numpy as np

from ir import source as S
from ir.analysis import exp_atoms, free_in_exp, index_atoms
from ir.errors import CompileError
from ir.types import FLOAT_TYPES, INT_TYPES, NUMPY_DTYPES, PRIM_NAMES, Array, Scalar, unsized_name
from ir.values import type_name


class InterpError(CompileError):
    """A run-time error of the interpreted program (Futhark's run-time errors): `.message`, `.loc`."""


def run_entry(prog: S.Program, entry: str, args: list) -> tuple:
    """Run function `entry` of `prog` on `args` (numpy scalars and arrays; Python bool/int/float are
    accepted for scalar parameters of a matching kind) and return its results, in order."""
    try:
        f = prog.fun(entry)
    except KeyError:
        raise InterpError(f"No entry point named {entry!r}; the program has "
                          f"{', '.join(g.name for g in prog.entries) or 'none'}.") from None
    interp = _Interp(prog)
    # Evaluation recurses on the nesting of bodies (and on calls); allow deep nests, as the front end does.
    old = sys.getrecursionlimit()
    if old < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        with np.errstate(all="ignore"):
            res = interp.call(f, list(args), f.loc, entry=True)
    except RecursionError:  # not even a statement could report it
        raise InterpError("Evaluation nests too deeply (recursion).", f.loc) from None
    except MemoryError:
        raise InterpError("Out of memory.", f.loc) from None
    finally:
        if old < _RECURSION_LIMIT:
            sys.setrecursionlimit(old)
    return tuple(_result_value(v) for v in res)


_RECURSION_LIMIT = 20000

# Arrays that iota and replicate would make beyond this many bytes are an error rather than an attempt
# (which could exhaust the machine's memory before numpy gives up).
MAX_ARRAY_BYTES = 1 << 34


def _result_value(v):
    if isinstance(v, np.ndarray) and v.ndim == 0:
        return v[()]
    return v


# ---------------------------------------------------------------------------------------------
# Scalar operations.  Every function works on numpy scalars and, elementwise, on numpy arrays.
# They are called inside np.errstate(all="ignore"), so integer overflow wraps silently.

def _err(message, loc):
    return InterpError(message, loc)


def _check_nonzero(y, loc):
    if isinstance(y, np.ndarray):
        if not y.all():
            raise _err("Division by zero.", loc)
    elif not y:
        raise _err("Division by zero.", loc)


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


def _float_to_int(x, dt):
    a = np.trunc(np.asarray(x, dtype=np.float64))
    a = np.where(np.isfinite(a), a, 0.0)
    if a.size == 0 or np.all(np.abs(a) < 2.0 ** 63):
        r = a.astype(np.int64).astype(dt)  # int64 -> narrower type wraps
    else:
        r = np.array([_wrap_int(int(v), dt) for v in a.ravel()], dtype=dt).reshape(a.shape)
    return r[()] if r.ndim == 0 else r


def _converter(dst):
    dt = np.dtype(NUMPY_DTYPES[dst])

    def conv(x):
        k = x.dtype.kind
        if dst == "bool":
            return _to_bool(x)
        if k == "f" and dt.kind in "iu":
            return _float_to_int(x, dt)
        return x.astype(dt)
    return conv


_FLOAT_UNARY = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "expm1": np.expm1, "cbrt": np.cbrt,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
    "atanh": np.arctanh, "abs": np.abs, "floor": np.floor, "ceil": np.ceil, "round": np.rint,
    "trunc": np.trunc, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "sgn": np.sign, "signum": np.sign, "neg": np.negative,
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
    if is_float and name in ("fma", "mad"):
        return lambda args, loc: args[0] * args[1] + args[2]
    if is_float and name == "lerp":
        return lambda args, loc: args[0] + (args[1] - args[0]) * args[2]
    bits_t = {"f32": np.uint32, "f64": np.uint64}.get(tname)
    if bits_t is not None and name == "to_bits":
        return lambda args, loc: _view(args[0], bits_t)
    if bits_t is not None and name == "from_bits":
        ft = NUMPY_DTYPES[tname]
        return lambda args, loc: _view(args[0], ft)
    return None


def _view(x, t):
    r = np.asarray(x).view(t)
    return r[()] if r.ndim == 0 else r


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


# Reductions whose operator is one numpy ufunc per component.
_RED_UFUNCS = {
    ("+", "iuf"): np.add, ("*", "iuf"): np.multiply,
    ("&", "iub"): np.bitwise_and, ("|", "iub"): np.bitwise_or, ("^", "iub"): np.bitwise_xor,
    ("&&", "b"): np.logical_and, ("||", "b"): np.logical_or,
    ("min", "f"): np.fmin, ("max", "f"): np.fmax, ("min", "iu"): np.minimum, ("max", "iu"): np.maximum,
}


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


def _batch(v, n):
    """n copies of a shared value, as a batched one."""
    v = np.asarray(v)
    return np.broadcast_to(v, (n,) + v.shape).copy()


class _LoopInfo:
    __slots__ = ("bound", "size_params", "specs")


class _LamInfo:
    __slots__ = ("bound", "vectorisable", "red_ops")


_SCALAR_EXPS = (S.AtomExp, S.BinOp, S.UnOp, S.PrimCall)


def _body_vectorisable(body, tainted):
    """Whether `vapply` can evaluate `body` over whole arrays.  `tainted` holds the names whose values
    may be batched (one value per element: the lambda's parameters and what depends on them); it is
    extended with the names that the body binds from them."""
    for stm in body.stms:
        e = stm.exp
        dep = not tainted.isdisjoint(free_in_exp(e))
        if isinstance(e, _SCALAR_EXPS):
            pass
        elif isinstance(e, S.Index):
            # Slices are vectorised only with bounds shared by all elements (the same slice of each).
            for i in e.idxs:
                if isinstance(i, S.DimSlice) and any(isinstance(a, S.Var) and a.name in tainted
                                                     for a in index_atoms(i)):
                    return False
        elif isinstance(e, S.If):
            if not (_body_vectorisable(e.then, set(tainted)) and _body_vectorisable(e.else_, set(tainted))):
                return False
        elif isinstance(e, S.Loop):
            if dep and not _loop_vectorisable(e, tainted):
                return False
            # (a loop that depends on no batched value is evaluated once, as it is)
        else:
            return False
        if dep:
            tainted.update(v.name for v in stm.pat)
        else:
            tainted.difference_update(v.name for v in stm.pat)
    return True


def _loop_vectorisable(e, tainted):
    """A loop that depends on batched values: all its parameters are batched, and the body (and the
    condition) must be vectorisable; sizes may not change, and a `for` count must be shared."""
    if e.size_params:
        return False
    inner = set(tainted) | {p.name for p in e.params}
    if isinstance(e.form, S.ForLoop):
        b = e.form.bound
        if isinstance(b, S.Var) and b.name in tainted:
            return False
        inner.discard(e.form.i.name)
    else:
        if not _body_vectorisable(e.form.cond, set(inner)):
            return False
    return _body_vectorisable(e.body, inner)


def _red_ops(lam):
    """For `\\a1..ak b1..bk -> (a1 op1 b1, ..., ak opk bk)`: the k ops (`+`, `min`, ...); else None."""
    ps = lam.params
    k = len(lam.body.result)
    if len(ps) != 2 * k or len(lam.body.stms) != k:
        return None
    defs = {}
    for stm in lam.body.stms:
        e = stm.exp
        if len(stm.pat) != 1:
            return None
        if isinstance(e, S.BinOp):
            op, args = e.op, (e.x, e.y)
        elif isinstance(e, S.PrimCall) and len(e.args) == 2 and e.fn.partition(".")[2] in ("min", "max"):
            op, args = e.fn.partition(".")[2], e.args
        else:
            return None
        defs[stm.pat[0].name] = (op, args)
    ops = []
    for j, r in enumerate(lam.body.result):
        if not isinstance(r, S.Var) or r.name not in defs:
            return None
        op, (x, y) = defs[r.name]
        names = {getattr(x, "name", None), getattr(y, "name", None)}
        if names != {ps[j].name, ps[k + j].name} or not all(isinstance(a, S.Var) for a in (x, y)):
            return None
        ops.append(op)
    return ops


class _Interp:
    def __init__(self, prog):
        self.funs = {f.name: f for f in prog.funs}
        self.consts = {}  # id(Const) -> (Const, value)
        self.prims = {}  # fn name -> f(args, loc)
        self.lams = {}  # id(Lambda) -> (Lambda, _LamInfo)
        self.exps = {
            S.AtomExp: self.e_atom, S.BinOp: self.e_binop, S.UnOp: self.e_unop, S.PrimCall: self.e_prim,
            S.Apply: self.e_apply, S.If: self.e_if, S.Index: self.e_index, S.Iota: self.e_iota,
            S.Replicate: self.e_replicate, S.Rearrange: self.e_rearrange, S.Map: self.e_map,
            S.Reduce: self.e_reduce, S.Scan: self.e_scan, S.Redomap: self.e_redomap,
            S.Scanomap: self.e_scanomap, S.Update: self.e_update, S.ArrayLit: self.e_arraylit,
            S.Concat: self.e_concat, S.Rotate: self.e_rotate, S.Reshape: self.e_reshape,
            S.Scatter: self.e_scatter, S.Filter: self.e_filter, S.Loop: self.e_loop,
        }
        self.loops = {}  # id(Loop) -> (Loop, _LoopInfo)
        self.frees = {}  # id(Exp) -> (Exp, set of free names)

    # ---- atoms, statements, bodies ----

    def atom(self, a, env, loc=None):
        if type(a) is S.Var:
            try:
                return env[a.name]
            except KeyError:
                raise _err(f"Unknown variable {a.name}.", loc) from None
        hit = self.consts.get(id(a))
        if hit is None:
            hit = self.consts[id(a)] = (a, _const_value(a))
        return hit[1]

    def stm(self, stm, env):
        f = self.exps.get(type(stm.exp))
        if f is None:
            raise _err(f"The interpreter does not support {type(stm.exp).__name__}.", stm.loc)
        try:
            vals = f(stm.exp, env, stm.loc)
        except InterpError as err:
            if err.loc is None:
                err.loc = stm.loc
            raise
        except _PYTHON_ERRORS as err:
            raise _from_python(err, stm.loc) from err
        pat = stm.pat
        if len(vals) != len(pat):
            raise _err(f"A pattern of {len(pat)} names is bound to {len(vals)} values.", stm.loc)
        for v, x in zip(pat, vals):
            env[v.name] = x

    def body(self, body, env):
        for s in body.stms:
            self.stm(s, env)
        return tuple(self.atom(a, env) for a in body.result)

    # ---- functions ----

    def call(self, f, args, loc, entry=False):
        where = f"entry point {f.name}" if entry else f"function {f.name}"
        if len(args) != len(f.params):
            raise _err(f"The {where} takes {len(f.params)} arguments, but was given {len(args)}.", loc)
        env = {}
        sizes = {}  # size name -> (value, parameter that fixed it)
        for i, (p, v) in enumerate(zip(f.params, args)):
            v = self.check_arg(p, v, i, where, entry, loc)
            if isinstance(p.type, Array):
                for k, (d, s) in enumerate(zip(p.type.shape, v.shape)):
                    if isinstance(d, int):
                        if d != s:
                            raise _err(f"Size mismatch in {where}: dimension {k + 1} of parameter {p.name} "
                                       f"must be {d}, but the argument has shape "
                                       f"{''.join(f'[{n}]' for n in v.shape)}.", loc)
                    elif d in sizes:
                        if sizes[d][0] != s:
                            raise _err(f"Size mismatch in {where}: size {d} is {sizes[d][0]} "
                                       f"(from parameter {sizes[d][1]}), but parameter {p.name} has {d} = {s}.",
                                       loc)
                    elif d in env and not isinstance(env[d], np.ndarray):
                        if int(env[d]) != s:
                            raise _err(f"Size mismatch in {where}: parameter {d} is {int(env[d])}, but "
                                       f"parameter {p.name} has {d} = {s}.", loc)
                    else:
                        sizes[d] = (s, p.name)
            env[p.name] = v
        for name in f.size_params:
            if name not in sizes:
                raise _err(f"Size parameter {name} of {where} is not determined by the arguments.", loc)
        for name, (s, _) in sizes.items():
            env[name] = np.int64(s)
        fixed = {name: s for name, (s, _) in sizes.items()}
        res = self.body(f.body, dict(env))
        if len(res) != len(f.ret):
            raise _err(f"The {where} returned {len(res)} values, but declares {len(f.ret)}.", f.loc or loc)
        for t, v in zip(f.ret, res):
            self.check_result(t, v, fixed, where, f.loc or loc)
        return res

    def check_arg(self, p, v, i, where, entry, loc):
        t = p.type

        def bad():
            exp = unsized_name(t)
            return _err(f"Expected argument of type {exp}, got {type_name(v, sizes=True)} "
                        f"(argument {i + 1}, {p.name}, of the {where}).", loc)
        if isinstance(t, Scalar):
            if isinstance(v, np.ndarray) and v.ndim == 0:
                v = v[()]
            if isinstance(v, np.generic):
                if v.dtype != t.dtype:
                    raise bad()
                return v
            if entry and isinstance(v, (bool, int, float)):
                if isinstance(v, bool) != (t.name == "bool") or (isinstance(v, float) and not t.is_float):
                    raise bad()
                if t.is_int:
                    w = _wrap_int(v, np.dtype(t.dtype))
                    if int(w) != v:
                        raise bad()
                    return w
                return t.dtype(v)
            raise bad()
        if isinstance(t, Array):
            if not isinstance(v, np.ndarray) or v.ndim != t.rank or v.dtype != t.elem.dtype:
                raise bad()
            return v
        return v  # tuples: not checked

    def check_result(self, t, v, fixed, where, loc):
        if isinstance(t, Scalar):
            ok = isinstance(v, np.generic) and v.dtype == t.dtype
        elif isinstance(t, Array):
            ok = isinstance(v, np.ndarray) and v.ndim == t.rank and v.dtype == t.elem.dtype
            if ok:
                for d, s in zip(t.shape, v.shape):
                    want = d if isinstance(d, int) else fixed.get(d)
                    if want is not None and want != s:
                        raise _err(f"The {where} returned a value of shape {type_name(v, sizes=True)}, but its "
                                   f"declared return type is {t}, with {d} = {want}.", loc)
        else:
            return
        if not ok:
            raise _err(f"The {where} returned a value of type {type_name(v, sizes=True)}, but its "
                       f"declared return type is {t}.", loc)

    # ---- simple expressions ----

    def e_atom(self, e, env, loc):
        return (self.atom(e.x, env, loc),)

    def e_binop(self, e, env, loc):
        return (_binop(e.op, self.atom(e.x, env, loc), self.atom(e.y, env, loc), loc),)

    def e_unop(self, e, env, loc):
        return (_unop(e.op, self.atom(e.x, env, loc), loc),)

    def prim(self, fn, loc):
        f = self.prims.get(fn)
        if f is None:
            f = _make_prim(fn)
            if f is None:
                raise _err(f"Unknown prelude function {fn}.", loc)
            self.prims[fn] = f
        return f

    def e_prim(self, e, env, loc):
        return (self.prim(e.fn, loc)([self.atom(a, env, loc) for a in e.args], loc),)

    def e_apply(self, e, env, loc):
        f = self.funs.get(e.fn)
        if f is None:
            raise _err(f"Unknown function {e.fn}.", loc)
        return self.call(f, [self.atom(a, env, loc) for a in e.args], loc)

    def e_if(self, e, env, loc):
        c = self.atom(e.cond, env, loc)
        return self.body(e.then if c else e.else_, dict(env))

    def e_index(self, e, env, loc):
        arr = self.atom(e.arr, env, loc)
        shape = np.shape(arr)
        idxs = e.idxs
        if len(idxs) > len(shape):
            raise _err(f"Too many indices ({len(idxs)}) for array of shape {_shape_str(shape)}.", loc)
        key = []
        ok = True
        for i, w in zip(idxs, shape):
            if type(i) is S.DimSlice:
                sl = self.dim_slice(i, w, env, loc)
                if sl is None:
                    ok = False
                key.append(sl)
            else:
                v = self.atom(i, env, loc)
                if not 0 <= v < w:
                    ok = False
                key.append(v)
        if not ok:
            raise _err(_oob_message(self.index_parts(idxs, env, loc), shape), loc)
        if len(key) == 1:
            return (arr[key[0]],)
        return (arr[tuple(key)],)

    def dim_slice(self, d, w, env, loc):
        """The Python slice for DimSlice d on a dimension of length w, or None if invalid."""
        i, j, s = (int(self.atom(a, env, loc)) for a in (d.start, d.end, d.stride))
        n = _slice_length(i, j, s, w)
        if n is None or n != self.atom(d.size, env, loc):
            return None
        return _py_slice(i, n, s)

    def index_parts(self, idxs, env, loc, pick=None):
        """The indices and slices of an Index as its error message shows them (`pick` selects one
        element of batched indices)."""
        parts = []
        for i in idxs:
            if type(i) is S.DimSlice:
                parts.append(_slice_text(i, *(int(self.atom(a, env, loc)) for a in (i.start, i.end, i.stride))))
            else:
                v = self.atom(i, env, loc)
                parts.append(v if pick is None or np.ndim(v) == 0 else v[pick])
        return parts

    def size(self, a, env, loc, what):
        n = self.atom(a, env, loc)
        if n < 0:
            raise _err(f"Negative size {int(n)} in {what}.", loc)
        return int(n)

    def check_alloc(self, shape, dtype, loc, what):
        nbytes = np.dtype(dtype).itemsize
        for d in shape:
            nbytes *= int(d)
        if nbytes > MAX_ARRAY_BYTES:
            raise _err(f"Out of memory: {what} would make an array of shape {_shape_str(shape)} "
                       f"({nbytes} bytes; the interpreter's limit is {MAX_ARRAY_BYTES}).", loc)

    def e_iota(self, e, env, loc):
        n = self.size(e.n, env, loc, "iota")
        self.check_alloc((n,), e.elem.dtype, loc, "iota")
        return (np.arange(n, dtype=e.elem.dtype),)

    def e_replicate(self, e, env, loc):
        n = self.size(e.n, env, loc, "replicate")
        x = self.atom(e.x, env, loc)
        self.check_alloc((n,) + np.shape(x), x.dtype, loc, "replicate")
        if isinstance(x, np.ndarray):
            return (np.repeat(x[np.newaxis], n, axis=0),)
        return (np.full(n, x, dtype=x.dtype),)

    # ---- arrays: update, literals, concat, rotate, reshape, scatter ----

    def array(self, a, env, loc, what):
        v = self.atom(a, env, loc)
        if not isinstance(v, np.ndarray) or v.ndim == 0:
            raise _err(f"The operand {a} of {what} is not an array: it has type {type_name(v)}.", loc)
        return v

    def e_update(self, e, env, loc):
        arr = self.array(e.arr, env, loc, "an update")
        idxs = [self.atom(i, env, loc) for i in e.idxs]
        v = self.atom(e.value, env, loc)
        shape = arr.shape
        if len(idxs) > len(shape):
            raise _err(f"Too many indices ({len(idxs)}) for array of shape {_shape_str(shape)}.", loc)
        for i, w in zip(idxs, shape):
            if not 0 <= i < w:
                raise _err(_oob_message(idxs, shape), loc)
        row = shape[len(idxs):]
        if np.shape(v) != row:
            raise _err(f"Size mismatch in update: the new value has shape {_shape_str(np.shape(v))}, but "
                       f"{e.arr} has rows of shape {_shape_str(row)} (shape {_shape_str(shape)}).", loc)
        if v.dtype != arr.dtype:
            raise _err(f"An update writes a value of type {type_name(v)} into {e.arr}, of type "
                       f"{type_name(arr)}.", loc)
        out = arr.copy()
        out[tuple(idxs)] = v
        return (out,)

    def e_arraylit(self, e, env, loc):
        vals = [self.atom(a, env, loc) for a in e.elems]
        t = e.type
        dt = np.dtype(t.elem.dtype)
        if not vals:
            return (self.empty_result(t.row(), env),)
        first = vals[0]
        for v in vals:
            if np.shape(v) != np.shape(first) or v.dtype != dt:
                raise _err("The elements of an array literal have different types: "
                           + " and ".join(sorted({type_name(x, sizes=True) for x in vals})) + ".", loc)
        if np.ndim(first) + 1 != t.rank:
            raise _err(f"An array literal of type {t} has elements of type {type_name(first, sizes=True)}.", loc)
        if isinstance(first, np.ndarray):
            return (np.stack(vals),)
        return (np.array(vals, dtype=dt),)

    def e_concat(self, e, env, loc):
        vals = [self.array(a, env, loc, "concat") for a in e.arrs]
        size = int(self.atom(e.size, env, loc))
        rows = {v.shape[1:] for v in vals}
        types = {v.dtype for v in vals}
        if len(rows) > 1 or len(types) > 1:
            raise _err("Size mismatch in concat: the arrays have types "
                       + ", ".join(type_name(v, sizes=True) for v in vals) + ".", loc)
        total = sum(v.shape[0] for v in vals)
        if total != size:
            raise _err("Size mismatch in concat: arrays of lengths "
                       + " and ".join(str(v.shape[0]) for v in vals)
                       + f" give {total} elements, but the result's size is {size}.", loc)
        return (np.concatenate(vals, axis=0),)

    def e_rotate(self, e, env, loc):
        arr = self.array(e.arr, env, loc, "rotate")
        n = arr.shape[0]
        if n == 0:
            return (arr,)
        k = int(self.atom(e.amount, env, loc)) % n
        if k == 0:
            return (arr,)
        return (np.concatenate((arr[k:], arr[:k]), axis=0),)

    def e_reshape(self, e, env, loc):
        arr = self.array(e.arr, env, loc, "a reshape")
        shape = tuple(int(self.atom(a, env, loc)) for a in e.shape)
        count = 1
        for d in shape:
            count *= d
        if any(d < 0 for d in shape) or count != arr.size:
            raise _err(f"Cannot reshape array of shape {_shape_str(arr.shape)} to array of shape "
                       f"{_shape_str(shape)}.", loc)
        return (arr.reshape(shape),)

    def e_scatter(self, e, env, loc):
        dest = self.array(e.dest, env, loc, "scatter")
        idxs = self.array(e.idxs, env, loc, "scatter")
        vals = self.array(e.vals, env, loc, "scatter")
        if idxs.ndim != 1 or idxs.dtype.kind not in "iu":
            raise _err(f"The indices of a scatter must be a one-dimensional integer array, but {e.idxs} has "
                       f"type {type_name(idxs, sizes=True)}.", loc)
        if vals.shape[0] != idxs.shape[0]:
            raise _err(f"Size mismatch in scatter: {idxs.shape[0]} indices ({e.idxs}) but {vals.shape[0]} "
                       f"values ({e.vals}).", loc)
        if vals.shape[1:] != dest.shape[1:] or vals.dtype != dest.dtype:
            raise _err(f"Size mismatch in scatter: the values {e.vals}, of type {type_name(vals, sizes=True)}, "
                       f"do not fit the rows of {e.dest}, of type {type_name(dest, sizes=True)}.", loc)
        out = dest.copy()
        n = dest.shape[0]
        ok = (idxs >= 0) & (idxs < n)
        where, what = idxs[ok], vals[ok]
        if len(where):
            # The last write to an index wins: keep each index's last occurrence.
            _, first_rev = np.unique(where[::-1], return_index=True)
            keep = len(where) - 1 - first_rev
            out[where[keep]] = what[keep]
        return (out,)

    def e_rearrange(self, e, env, loc):
        arr = self.atom(e.arr, env, loc)
        perm = tuple(e.perm)
        if sorted(perm) != list(range(len(perm))) or len(perm) > np.ndim(arr):
            raise _err(f"Invalid permutation {perm} for an array of rank {np.ndim(arr)}.", loc)
        return (np.transpose(arr, perm + tuple(range(len(perm), arr.ndim))),)

    # ---- loops ----

    def loop_info(self, e):
        hit = self.loops.get(id(e))
        if hit is None:
            info = _LoopInfo()
            bodies = (e.body,) + ((e.form.cond,) if isinstance(e.form, S.WhileLoop) else ())
            info.bound = {v.name for b in bodies for s in b.stms for v in s.pat}
            info.specs = []
            for p in e.params:
                t = p.type
                if isinstance(t, Array):
                    info.specs.append((p, t.rank, np.dtype(t.elem.dtype), t.shape))
                else:
                    info.specs.append((p, 0, np.dtype(t.dtype), ()))
            info.size_params = frozenset(e.size_params)
            hit = self.loops[id(e)] = (e, info)
        return hit[1]

    def bind_loop(self, e, info, vals, lenv, env, loc, when):
        """Bind the loop parameters to `vals` in lenv, checking them against their types, and the size
        parameters to the sizes they have; return the sizes (name -> int)."""
        if len(vals) != len(info.specs):
            raise _err(f"The loop has {len(info.specs)} parameters, but {when} gives {len(vals)} values.", loc)
        sizes = {}
        for (p, rank, dt, dims), v in zip(info.specs, vals):
            if rank == 0:
                if np.ndim(v) != 0 or v.dtype != dt:
                    raise _err(f"Loop parameter {p.name} has type {p.type}, but {when} gives it a value of "
                               f"type {type_name(v, sizes=True)}.", loc)
            else:
                if not isinstance(v, np.ndarray) or v.ndim != rank or v.dtype != dt:
                    raise _err(f"Loop parameter {p.name} has type {p.type}, but {when} gives it a value of "
                               f"type {type_name(v, sizes=True)}.", loc)
                for d, n in zip(dims, v.shape):
                    if type(d) is int:
                        if d != n:
                            raise _err(f"Size mismatch in loop: parameter {p.name} has type {p.type}, but "
                                       f"{when} gives it a value of shape {_shape_str(v.shape)}.", loc)
                    elif d in info.size_params:
                        had = sizes.get(d)
                        if had is None:
                            sizes[d] = (n, p.name)
                        elif had[0] != n:
                            raise _err(f"Size mismatch in loop: size {d} is {had[0]} (from parameter {had[1]}), "
                                       f"but parameter {p.name} has {d} = {n} ({when}).", loc)
                    else:
                        outer = env.get(d)
                        if outer is not None and np.ndim(outer) == 0 and int(outer) != n:
                            raise _err(f"Size mismatch in loop: parameter {p.name} has type {p.type}, with "
                                       f"{d} = {int(outer)}, but {when} gives it a value with {d} = {n} "
                                       f"(shape {_shape_str(v.shape)}).", loc)
            lenv[p.name] = v
        for d in e.size_params:
            if d not in sizes:
                raise _err(f"Size parameter {d} of the loop is not the size of any loop parameter.", loc)
            lenv[d] = np.int64(sizes[d][0])
        return sizes

    def e_loop(self, e, env, loc):
        info = self.loop_info(e)
        vals = tuple(self.atom(a, env, loc) for a in e.init)
        lenv = dict(env)
        shadow = [(n, env[n]) for n in info.bound if n in env]
        body = self.body
        if isinstance(e.form, S.ForLoop):
            count = int(self.atom(e.form.bound, env, loc))
            ctype = e.form.i.type.dtype
            iname = e.form.i.name
            when = "the initial value"
            for k in range(count):
                for n, v in shadow:
                    lenv[n] = v
                self.bind_loop(e, info, vals, lenv, env, loc, when)
                lenv[iname] = ctype(k)
                vals = body(e.body, lenv)
                when = f"iteration {k}"
        else:
            cond = e.form.cond
            when = "the initial value"
            k = 0
            while True:
                for n, v in shadow:
                    lenv[n] = v
                self.bind_loop(e, info, vals, lenv, env, loc, when)
                c = body(cond, lenv)
                if len(c) != 1 or np.ndim(c[0]) != 0 or c[0].dtype != np.bool_:
                    raise _err("The condition of a while loop must give one bool, but gives "
                               + ", ".join(type_name(x, sizes=True) for x in c) + ".", loc)
                if not c[0]:
                    break
                vals = body(e.body, lenv)
                when = f"iteration {k}"
                k += 1
        sizes = self.bind_loop(e, info, vals, lenv, env, loc, when)
        return tuple(np.int64(sizes[d][0]) for d in e.size_params) + tuple(vals)

    def e_filter(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "filter")
        if len(e.lam.ret) != 1:
            raise _err(f"The predicate of a filter returns {len(e.lam.ret)} values.", loc)
        (keep,) = self.map_values(e.lam, arrs, n, env, loc)
        if keep.dtype != np.bool_:
            raise _err(f"The predicate of a filter returns {type_name(keep[0]) if n else keep.dtype}, not bool.",
                       loc)
        return (np.int64(np.count_nonzero(keep)),) + tuple(a[keep] for a in arrs)

    # ---- lambdas ----

    def lam_info(self, lam):
        hit = self.lams.get(id(lam))
        if hit is None:
            info = _LamInfo()
            info.bound = {v.name for s in lam.body.stms for v in s.pat}
            info.vectorisable = _body_vectorisable(lam.body, {p.name for p in lam.params})
            info.red_ops = _red_ops(lam)
            hit = self.lams[id(lam)] = (lam, info)
        return hit[1]

    def runner(self, lam, env):
        """A function from the lambda's arguments to its results, per element (in a private env)."""
        info = self.lam_info(lam)
        lenv = dict(env)
        names = [p.name for p in lam.params]
        shadow = [(n, env[n]) for n in info.bound if n in env]
        stms = lam.body.stms
        res = lam.body.result
        stm = self.stm
        atom = self.atom

        def run(args):
            for n, v in zip(names, args):
                lenv[n] = v
            for n, v in shadow:
                lenv[n] = v
            for s in stms:
                stm(s, lenv)
            return [atom(r, lenv) for r in res]
        return run

    def soac_arrays(self, e, env, loc, what):
        n = self.size(e.width, env, loc, what)
        arrs = []
        for a in e.arrs:
            v = self.atom(a, env, loc)
            if not isinstance(v, np.ndarray) or v.ndim == 0 or v.shape[0] != n:
                raise _err(f"Size mismatch in {what}: its width is {n}, but {a.name} has type "
                           f"{type_name(v, sizes=True)}.", loc)
            arrs.append(v)
        return n, arrs

    def check_lam_arity(self, lam, nargs, what, loc):
        if len(lam.params) != nargs:
            raise _err(f"The lambda of {what} takes {len(lam.params)} parameters, but gets {nargs}.", loc)

    def empty_result(self, t, env):
        shape = []
        for d in (t.shape if isinstance(t, Array) else ()):
            v = d if isinstance(d, int) else env.get(d, 0)
            shape.append(int(v) if not isinstance(v, np.ndarray) else 0)
        dt = t.elem.dtype if isinstance(t, Array) else t.dtype
        return np.zeros([0] + shape, dtype=dt)

    def check_lam_params(self, params, vals, rows, env, loc, what):
        """Check the values that lambda parameters receive (the rows of arrays when `rows`, else the
        values themselves) against the parameters' types: element type, rank, and the sizes that are
        constants or bound outside (once per SOAC, as all rows have one shape)."""
        for p, v in zip(params, vals):
            t = p.type
            shape = np.shape(v)[1:] if rows else np.shape(v)
            if isinstance(t, Array):
                ok = len(shape) == t.rank and v.dtype == t.elem.dtype
            elif isinstance(t, Scalar):
                ok = len(shape) == 0 and v.dtype == t.dtype
            else:
                continue
            if not ok:
                got = _shape_str(shape) + type_name(v.dtype.type(0))
                raise _err(f"The lambda of {what} takes a parameter {p.name} of type {t}, but gets values "
                           f"of type {got}.", loc)
            for d, m in zip(t.shape if isinstance(t, Array) else (), shape):
                want = d if type(d) is int else env.get(d)
                if want is not None and np.ndim(want) == 0 and int(want) != m:
                    raise _err(f"Size mismatch in {what}: the lambda's parameter {p.name} has type {t}"
                               + (f", with {d} = {int(want)}" if type(d) is not int else "")
                               + f", but gets values of shape {_shape_str(shape)}.", loc)

    def map_values(self, lam, arrs, n, env, loc):
        """The arrays `map lam arrs`, one per lambda result."""
        self.check_lam_arity(lam, len(arrs), "map", loc)
        self.check_lam_params(lam.params, arrs, True, env, loc, "map")
        if n == 0:
            return [self.empty_result(t, env) for t in lam.ret]
        if self.lam_info(lam).vectorisable:
            return self.vapply(lam, arrs, [True] * len(arrs), n, env, loc)
        run = self.runner(lam, env)
        outs = [[] for _ in lam.body.result]
        for i in range(n):
            for o, r in zip(outs, run([a[i] for a in arrs])):
                o.append(r)
        return [self.stack(o, loc) for o in outs]

    def stack(self, vals, loc):
        first = vals[0]
        if isinstance(first, np.ndarray):
            if any(v.shape != first.shape for v in vals):
                raise _err("The lambda of a map returned arrays of different shapes: "
                           + ", ".join(sorted({type_name(v, sizes=True) for v in vals})) + ".", loc)
            return np.stack(vals)
        return np.array(vals, dtype=first.dtype)

    def e_map(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "map")
        return tuple(self.map_values(e.lam, arrs, n, env, loc))

    def e_redomap(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "redomap")
        k = len(e.neutral)
        mapped = self.map_values(e.map_lam, arrs, n, env, loc)
        ne = [self.atom(a, env, loc) for a in e.neutral]
        return tuple(self.reduce_values(e.red, ne, mapped[:k], n, env, loc)) + tuple(mapped[k:])

    def e_scanomap(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "scanomap")
        k = len(e.neutral)
        mapped = self.map_values(e.map_lam, arrs, n, env, loc)
        ne = [self.atom(a, env, loc) for a in e.neutral]
        return tuple(self.scan_values(e.scan, ne, mapped[:k], n, env, loc)) + tuple(mapped[k:])

    def e_reduce(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "reduce")
        ne = [self.atom(a, env, loc) for a in e.neutral]
        return tuple(self.reduce_values(e.lam, ne, arrs, n, env, loc))

    def e_scan(self, e, env, loc):
        n, arrs = self.soac_arrays(e, env, loc, "scan")
        ne = [self.atom(a, env, loc) for a in e.neutral]
        return tuple(self.scan_values(e.lam, ne, arrs, n, env, loc))

    def ufuncs(self, ops, arrs):
        if ops is None or any(a.ndim != 1 for a in arrs):
            return None
        ufs = []
        for op, a in zip(ops, arrs):
            kind = a.dtype.kind
            uf = next((u for (o, kinds), u in _RED_UFUNCS.items() if o == op and kind in kinds), None)
            if uf is None:
                return None
            ufs.append(uf)
        return ufs

    def check_operator(self, lam, ne, arrs, env, loc, what: str, article: str) -> int:
        """Checks a reduce's or scan's operator against its neutral elements and arrays; returns their count."""
        k = len(ne)
        self.check_lam_arity(lam, 2 * k, what, loc)
        if len(arrs) != k:
            raise _err(f"{article} with {k} neutral elements is applied to {len(arrs)} arrays.", loc)
        self.check_lam_params(lam.params[:k], ne, False, env, loc, what)
        self.check_lam_params(lam.params[k:], arrs, True, env, loc, what)
        return k

    def reduce_values(self, lam, ne, arrs, n, env, loc):
        k = self.check_operator(lam, ne, arrs, env, loc, "reduce", "A reduction")
        if n == 0:
            return list(ne)
        info = self.lam_info(lam)
        ufs = self.ufuncs(info.red_ops, arrs)
        if ufs is not None:
            return [uf(x, uf.reduce(a, dtype=a.dtype)) for uf, x, a in zip(ufs, ne, arrs)]
        if info.vectorisable:
            vals = list(arrs)
            m = n
            while m > 1:
                h = m // 2
                res = self.vapply(lam, [v[0:2 * h:2] for v in vals] + [v[1:2 * h:2] for v in vals],
                                  [True] * (2 * k), h, env, loc)
                if m % 2:
                    res = [np.concatenate([r, v[m - 1:]]) for r, v in zip(res, vals)]
                vals = res
                m = h + m % 2
            return self.runner(lam, env)(list(ne) + [v[0] for v in vals])
        run = self.runner(lam, env)
        acc = list(ne)
        for i in range(n):
            acc = run(acc + [a[i] for a in arrs])
        return acc

    def scan_values(self, lam, ne, arrs, n, env, loc):
        k = self.check_operator(lam, ne, arrs, env, loc, "scan", "A scan")
        if n == 0:
            return [np.zeros((0,) + np.shape(x), dtype=x.dtype) for x in ne]
        info = self.lam_info(lam)
        ufs = self.ufuncs(info.red_ops, arrs)
        if ufs is not None:
            return [uf(x, uf.accumulate(a, dtype=a.dtype)) for uf, x, a in zip(ufs, ne, arrs)]
        if info.vectorisable:
            vals = list(arrs)
            d = 1
            while d < n:
                res = self.vapply(lam, [v[:n - d] for v in vals] + [v[d:] for v in vals],
                                  [True] * (2 * k), n - d, env, loc)
                vals = [np.concatenate([v[:d], r]) for v, r in zip(vals, res)]
                d *= 2
            return self.vapply(lam, list(ne) + vals, [False] * k + [True] * k, n, env, loc)
        run = self.runner(lam, env)
        acc = list(ne)
        outs = [[] for _ in range(k)]
        for i in range(n):
            acc = run(acc + [a[i] for a in arrs])
            for o, v in zip(outs, acc):
                o.append(v)
        return [self.stack(o, loc) for o in outs]

    # ---- vectorised evaluation of a lambda over n elements at once ----

    def vapply(self, lam, args, batched, n, env, loc):
        """Apply `lam` to n elements at once.  `args[i]` holds all n elements (outermost dimension) when
        `batched[i]`, else one value shared by all.  Returns one array of n elements per result."""
        lenv = dict(env)
        bset = set()
        for p, a, b in zip(lam.params, args, batched):
            lenv[p.name] = a
            if b:
                bset.add(p.name)
            else:
                bset.discard(p.name)
        out = []
        for (v, b) in self.vbody(lam.body, lenv, bset, n):
            if not b:
                v = np.asarray(v)
                v = np.broadcast_to(v, (n,) + v.shape).copy()
            out.append(v)
        return out

    def vbody(self, body, lenv, bset, n):
        for stm in body.stms:
            self.vstm(stm, lenv, bset, n)
        return [(self.atom(r, lenv), isinstance(r, S.Var) and r.name in bset) for r in body.result]

    def vstm(self, stm, lenv, bset, n):
        loc = stm.loc
        try:
            vals, flags = self.vexp(stm.exp, lenv, bset, n, loc)
        except InterpError as err:
            if err.loc is None:
                err.loc = loc
            raise
        except _PYTHON_ERRORS as err:
            raise _from_python(err, loc) from err
        if len(vals) != len(stm.pat):
            raise _err(f"A pattern of {len(stm.pat)} names is bound to {len(vals)} values.", loc)
        for p, v, b in zip(stm.pat, vals, flags):
            lenv[p.name] = v
            if b:
                bset.add(p.name)
            else:
                bset.discard(p.name)

    def free_names(self, e):
        hit = self.frees.get(id(e))
        if hit is None:
            hit = self.frees[id(e)] = (e, frozenset(free_in_exp(e)))
        return hit[1]

    def vexp(self, e, lenv, bset, n, loc):
        """Values and batched flags of one expression over n elements."""
        tp = type(e)
        if tp is S.If:
            cb = isinstance(e.cond, S.Var) and e.cond.name in bset
            if not cb:
                c = self.atom(e.cond, lenv, loc)
                res = self.vbody(e.then if c else e.else_, dict(lenv), set(bset), n)
                return [v for v, _ in res], [b for _, b in res]
            return self.vif(e, lenv[e.cond.name], lenv, bset, n, loc)
        if tp is S.Index:
            b = [isinstance(a, S.Var) and a.name in bset for a in (e.arr,) + tuple(e.idxs)]
            if any(b):
                return [self.vindex(e, b[0], lenv, n, loc)], [True]
            return list(self.e_index(e, lenv, loc)), [False]
        if tp is S.Loop:
            if self.free_names(e) & bset:
                vals = self.vloop(e, lenv, bset, n, loc)
                return vals, [True] * len(vals)
            vals = self.e_loop(e, lenv, loc)
            return list(vals), [False] * len(vals)
        # Scalar operations work elementwise on arrays as they are.
        vals = self.exps[tp](e, lenv, loc)
        flag = any(isinstance(a, S.Var) and a.name in bset for a in exp_atoms(e))
        return vals, [flag] * len(vals)

    def vloop(self, e, lenv, bset, n, loc):
        """A loop run for n elements at once: every parameter holds n values.  A while loop iterates
        on the elements whose condition holds, until none is left."""
        info = self.loop_info(e)
        state = []
        for a in e.init:
            v = self.atom(a, lenv, loc)
            state.append(v if isinstance(a, S.Var) and a.name in bset else _batch(v, n))
        self.check_vloop(e, info, state, lenv, loc, "the initial value")
        names = [p.name for p, *_ in info.specs]
        outer = [name for name in self.free_names(e) if name in bset]  # batched values the loop reads

        def env_for(vals, active=None):
            benv = dict(lenv)
            bb = set(bset)
            if active is not None:  # the elements still iterating, of the outer batched values too
                for name in outer:
                    benv[name] = lenv[name][active]
            for name, v in zip(names, vals):
                benv[name] = v
                bb.add(name)
            return benv, bb

        if isinstance(e.form, S.ForLoop):
            count = int(self.atom(e.form.bound, lenv, loc))
            ctype = e.form.i.type.dtype
            iname = e.form.i.name
            for k in range(count):
                benv, bb = env_for(state)
                benv[iname] = ctype(k)
                bb.discard(iname)
                state = [v if b else _batch(v, n) for v, b in self.vbody(e.body, benv, bb, n)]
                self.check_vloop(e, info, state, lenv, loc, f"iteration {k}")
            return state
        state = [np.array(v) for v in state]  # private and writable
        active = None  # the indices of the elements still iterating (None: all)
        k = 0
        while True:
            sub = state if active is None else [v[active] for v in state]
            m = n if active is None else len(active)
            benv, bb = env_for(sub, active)
            res = self.vbody(e.form.cond, benv, bb, m)
            if len(res) != 1:
                raise _err(f"The condition of a while loop must give one bool, but gives {len(res)} values.", loc)
            c, cb = res[0]
            c = np.asarray(c) if cb else np.broadcast_to(np.asarray(c), (m,))
            if c.dtype != np.bool_:
                raise _err(f"The condition of a while loop must give one bool, but gives {c.dtype}.", loc)
            if not c.any():
                return state
            if not c.all():
                sub = [v[c] for v in sub]
                active = np.nonzero(c)[0] if active is None else active[c]
                m = len(active)
            benv, bb = env_for(sub, active)
            new = [v if b else _batch(v, m) for v, b in self.vbody(e.body, benv, bb, m)]
            self.check_vloop(e, info, new, lenv, loc, f"iteration {k}")
            if active is None:
                state = [np.array(v) for v in new]
            else:
                for v, r in zip(state, new):
                    v[active] = r
            k += 1

    def check_vloop(self, e, info, state, lenv, loc, when):
        """Check batched loop values against the parameters' types (all elements have one shape)."""
        if len(state) != len(info.specs):
            raise _err(f"The loop has {len(info.specs)} parameters, but {when} gives {len(state)} values.", loc)
        self.bind_loop(e, info, [v[0] for v in state], {}, lenv, loc, when)

    def vif(self, e, c, lenv, bset, n, e_loc=None):
        taken = np.nonzero(c)[0]
        other = np.nonzero(~c)[0]
        parts = []
        for sel, body in ((taken, e.then), (other, e.else_)):
            if len(sel) == 0:
                parts.append(None)
                continue
            benv = dict(lenv)
            for name in bset:
                benv[name] = lenv[name][sel]
            res = self.vbody(body, benv, set(bset), len(sel))
            parts.append((sel, res))
        vals, flags = [], []
        for j in range(len(e.types)):
            out = None
            for part in parts:
                if part is None:
                    continue
                sel, res = part
                v, b = res[j]
                v = np.asarray(v)
                if out is None:
                    shape = v.shape[1:] if b else v.shape
                    out = np.empty((n,) + shape, dtype=v.dtype)
                try:
                    out[sel] = v
                except ValueError:
                    raise _err(f"The branches of an if give results of different shapes inside a map: "
                               f"{type_name(out[0], sizes=True)} and {type_name(v[0] if b else v, sizes=True)}.",
                               e_loc) from None
            vals.append(out)
            flags.append(True)
        return vals, flags

    def vindex(self, e, arr_b, lenv, n, loc):
        """An Index over n elements: the array and the fixed indices may be batched, the slices not (the
        same slice of each element)."""
        arr = self.atom(e.arr, lenv, loc)
        shape = arr.shape[1:] if arr_b else arr.shape
        idxs = e.idxs
        if len(idxs) > len(shape):
            raise _err(f"Too many indices ({len(idxs)}) for array of shape {_shape_str(shape)}.", loc)
        off = 1 if arr_b else 0
        bad = np.zeros(n, dtype=bool)
        slices_ok = True
        key1 = [slice(None)] * off
        fixed_axes, fixed = [], []
        for k, (i, w) in enumerate(zip(idxs, shape)):
            if type(i) is S.DimSlice:
                sl = self.dim_slice(i, w, lenv, loc)
                if sl is None:
                    slices_ok = False
                key1.append(sl)
            else:
                v = np.asarray(self.atom(i, lenv, loc))
                bad |= (v < 0) | (v >= w)
                key1.append(slice(None))
                fixed_axes.append(off + k)
                fixed.append(v)
        if not slices_ok or bad.any():
            j = int(np.argmax(bad))
            raise _err(_oob_message(self.index_parts(idxs, lenv, loc, pick=j), shape), loc)
        a = arr[tuple(key1)] if len(fixed) < len(idxs) else arr
        if arr_b and not fixed:
            return a
        # Advanced indexing on the leading axes only: the batch axis and the fixed indices come first.
        front = ([0] if arr_b else []) + fixed_axes
        if front != list(range(len(front))):
            a = a.transpose(front + [ax for ax in range(a.ndim) if ax not in front])
        key = ((np.arange(n),) if arr_b else ()) + tuple(fixed)
        r = a[key]
        if r.shape[:1] != (n,):  # only a shared array indexed by shared indices: not reached
            r = np.broadcast_to(r, (n,) + r.shape).copy()
        return r
