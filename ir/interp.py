"""The reference interpreter for the source IR: the semantic oracle of the project.

`run_entry(prog, entry, args)` evaluates one function of a `ir.source.Program` on numpy values and
returns its results as a tuple of numpy scalars and arrays.  Semantics follow Futhark:

- integers wrap around at their width (two's complement); signed `/` and `%` round toward negative
  infinity (Haskell `div`/`mod`), `//` and `%%` toward zero (`quot`/`rem`); unsigned operators are plain;
  integer `**` is wrapping integer power (a negative exponent is an error); division by zero is an error;
- floats follow IEEE arithmetic at their own precision (f32 in float32); `%` on floats is C's fmod;
- out-of-bounds indexing, negative sizes, size mismatches and wrongly typed entry arguments are
  `InterpError`s carrying the statement's `loc`;
- float-to-integer conversion truncates toward zero; NaN and infinities give 0 and out-of-range values
  wrap (Futhark leaves both undefined).

Evaluation is per element, but a lambda whose body holds only scalar operations, indexing and `if`
is evaluated once over whole arrays (numpy), and a reduction or scan whose operator is a single
`+ * & | ^ && || min max` per component uses numpy's reduce/accumulate; other vectorisable operators
are reduced as a balanced tree.  Reductions may therefore associate differently from a left fold,
which Futhark allows (operators must be associative).
"""

import numpy as np

from ir import source as S
from ir.analysis import exp_atoms
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
    with np.errstate(all="ignore"):
        res = interp.call(f, list(args), f.loc, entry=True)
    return tuple(_result_value(v) for v in res)


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


def _oob_message(idxs, shape):
    return ("Index [" + ", ".join(str(int(i)) for i in idxs) + "] out of bounds for array of shape "
            + "".join(f"[{n}]" for n in shape) + ".")


# Reductions whose operator is one numpy ufunc per component.
_RED_UFUNCS = {
    ("+", "iuf"): np.add, ("*", "iuf"): np.multiply,
    ("&", "iub"): np.bitwise_and, ("|", "iub"): np.bitwise_or, ("^", "iub"): np.bitwise_xor,
    ("&&", "b"): np.logical_and, ("||", "b"): np.logical_or,
    ("min", "f"): np.fmin, ("max", "f"): np.fmax, ("min", "iu"): np.minimum, ("max", "iu"): np.maximum,
}


class _LamInfo:
    __slots__ = ("bound", "vectorisable", "red_ops")


def _body_vectorisable(body):
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, (S.AtomExp, S.BinOp, S.UnOp, S.PrimCall, S.Index)):
            continue
        if isinstance(e, S.If) and _body_vectorisable(e.then) and _body_vectorisable(e.else_):
            continue
        return False
    return True


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
            S.Scanomap: self.e_scanomap,
        }

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
        vals = f(stm.exp, env, stm.loc)
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
        idxs = [self.atom(i, env, loc) for i in e.idxs]
        shape = np.shape(arr)
        if len(idxs) > len(shape):
            raise _err(f"Too many indices ({len(idxs)}) for array of shape "
                       f"{''.join(f'[{n}]' for n in shape)}.", loc)
        for i, n in zip(idxs, shape):
            if not 0 <= i < n:
                raise _err(_oob_message(idxs, shape), loc)
        if len(idxs) == 1:
            return (arr[idxs[0]],)
        return (arr[tuple(idxs)],)

    def size(self, a, env, loc, what):
        n = self.atom(a, env, loc)
        if n < 0:
            raise _err(f"Negative size {int(n)} in {what}.", loc)
        return int(n)

    def e_iota(self, e, env, loc):
        return (np.arange(self.size(e.n, env, loc, "iota"), dtype=e.elem.dtype),)

    def e_replicate(self, e, env, loc):
        n = self.size(e.n, env, loc, "replicate")
        x = self.atom(e.x, env, loc)
        if isinstance(x, np.ndarray):
            return (np.repeat(x[np.newaxis], n, axis=0),)
        return (np.full(n, x, dtype=x.dtype),)

    def e_rearrange(self, e, env, loc):
        arr = self.atom(e.arr, env, loc)
        perm = tuple(e.perm)
        if sorted(perm) != list(range(len(perm))) or len(perm) > np.ndim(arr):
            raise _err(f"Invalid permutation {perm} for an array of rank {np.ndim(arr)}.", loc)
        return (np.transpose(arr, perm + tuple(range(len(perm), arr.ndim))),)

    # ---- lambdas ----

    def lam_info(self, lam):
        hit = self.lams.get(id(lam))
        if hit is None:
            info = _LamInfo()
            info.bound = {v.name for s in lam.body.stms for v in s.pat}
            info.vectorisable = _body_vectorisable(lam.body)
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

    def map_values(self, lam, arrs, n, env, loc):
        """The arrays `map lam arrs`, one per lambda result."""
        self.check_lam_arity(lam, len(arrs), "map", loc)
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

    def reduce_values(self, lam, ne, arrs, n, env, loc):
        k = len(ne)
        self.check_lam_arity(lam, 2 * k, "reduce", loc)
        if len(arrs) != k:
            raise _err(f"A reduction with {k} neutral elements is applied to {len(arrs)} arrays.", loc)
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
        k = len(ne)
        self.check_lam_arity(lam, 2 * k, "scan", loc)
        if len(arrs) != k:
            raise _err(f"A scan with {k} neutral elements is applied to {len(arrs)} arrays.", loc)
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
        e = stm.exp
        loc = stm.loc
        tp = type(e)
        if tp is S.If:
            cb = isinstance(e.cond, S.Var) and e.cond.name in bset
            if not cb:
                c = self.atom(e.cond, lenv, loc)
                res = self.vbody(e.then if c else e.else_, dict(lenv), set(bset), n)
                vals = [v for v, _ in res]
                flags = [b for _, b in res]
            else:
                c = lenv[e.cond.name]
                vals, flags = self.vif(e, c, lenv, bset, n, loc)
        elif isinstance(e, S.Index):
            b = [isinstance(a, S.Var) and a.name in bset for a in (e.arr,) + tuple(e.idxs)]
            if any(b):
                vals, flags = [self.vindex(e, b, lenv, n, loc)], [True]
            else:
                vals, flags = list(self.e_index(e, lenv, loc)), [False]
        else:
            # Scalar operations work elementwise on arrays as they are.
            vals = self.exps[tp](e, lenv, loc)
            flag = any(isinstance(a, S.Var) and a.name in bset for a in exp_atoms(e))
            flags = [flag] * len(vals)
        if len(vals) != len(stm.pat):
            raise _err(f"A pattern of {len(stm.pat)} names is bound to {len(vals)} values.", loc)
        for p, v, b in zip(stm.pat, vals, flags):
            lenv[p.name] = v
            if b:
                bset.add(p.name)
            else:
                bset.discard(p.name)

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

    def vindex(self, e, b, lenv, n, loc):
        arr = self.atom(e.arr, lenv, loc)
        idxs = [self.atom(i, lenv, loc) for i in e.idxs]
        arr_b, idx_b = b[0], b[1:]
        shape = arr.shape[1:] if arr_b else arr.shape
        if len(idxs) > len(shape):
            raise _err(f"Too many indices ({len(idxs)}) for array of shape "
                       f"{''.join(f'[{m}]' for m in shape)}.", loc)
        bad = np.zeros(n, dtype=bool)
        for i, m in zip(idxs, shape):
            bad |= (np.asarray(i) < 0) | (np.asarray(i) >= m)
        if bad.any():
            j = int(np.argmax(bad))
            raise _err(_oob_message([i[j] if ib else i for i, ib in zip(idxs, idx_b)], shape), loc)
        key = tuple(idxs)
        if arr_b:
            key = (np.arange(n),) + key
        elif not any(idx_b):
            return arr[key]
        r = arr[key]
        if r.shape[0] != n:  # only a shared array indexed by shared indices: not reached
            r = np.broadcast_to(r, (n,) + r.shape).copy()
        return r
