"""ir/interp/interpreter.py, the reference interpreter, on programs built by hand from the ir/source.py dataclasses."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incflat.ir import source as S
from incflat.ir.analysis import exp_types
from incflat.ir.errors import CompileError
from incflat.pipeline import source_program
from incflat.ir.interp.interpreter import InterpError, _Interp, run_entry
from incflat.ir.types import BOOL, F32, F64, I32, I64, INT_TYPES, Array, Scalar
from incflat.ir.runtime.values import type_name

pytestmark = pytest.mark.filterwarnings("error")  # no numpy warnings may leak out

FILE = "test.fut"
_names = itertools.count()
_lines = itertools.count(10)


def fresh(base="v"):
    return f"{base}_{next(_names)}"


def C(x, t):
    return S.Const(x, t if isinstance(t, Scalar) else Scalar(t))


class B:
    """Builds the statements of one body; every statement gets its own line for error locations."""

    def __init__(self):
        self.stms = []
        self.last_loc = None

    def let(self, exp):
        vs = tuple(S.Var(fresh(), t) for t in exp_types(exp))
        self.last_loc = S.Loc(FILE, next(_lines), 5)
        self.stms.append(S.Stm(vs, exp, self.last_loc))
        return vs[0] if len(vs) == 1 else vs

    def bin(self, op, x, y):
        t = BOOL if op in ("==", "!=", "<", "<=", ">", ">=") else x.type
        return self.let(S.BinOp(op, x, y, t))

    def prim(self, fn, *args, t=None):
        return self.let(S.PrimCall(fn, args, t or Scalar(fn.split(".")[0])))

    def body(self, res):
        return S.Body(tuple(self.stms), tuple(res) if isinstance(res, (tuple, list)) else (res,))


def lam(types, f):
    params = tuple(S.Var(fresh("p"), t) for t in types)
    b = B()
    res = f(b, *params)
    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    return S.Lambda(params, b.body(res), tuple(a.type for a in res))


def op_lam(op, t, n=1):
    """`\\a b -> a op b` (or op per component for n-tuples)."""
    def f(b, *ps):
        return tuple(b.bin(op, ps[i], ps[n + i]) if not op.startswith(t.name + ".")
                     else b.prim(op, ps[i], ps[n + i]) for i in range(n))
    return lam([t] * (2 * n), f)


def fun(name, params, f, size_params=(), entry=True):
    ps = tuple(S.Var(n, t) for n, t in params)
    b = B()
    res = f(b, *ps)
    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    return S.FunDef(name, entry, tuple(size_params), ps, tuple(a.type for a in res), b.body(res),
                    S.Loc(FILE, 1, 1))


def prog(*funs):
    return S.Program(tuple(funs), FILE)


def run1(p, *args, entry="main"):
    res = run_entry(p, entry, list(args))
    return res[0] if len(res) == 1 else res


def A(elem, *shape):
    return Array(elem, tuple(shape))


N, M, P = (S.Var(k, I64) for k in "nmp")


# ---- matmul, two ways ----

def matmul_redomap(t):
    def main(b, xss, yss):
        ysst = b.let(S.Rearrange((1, 0), yss))

        def row(b, xs):
            def cell(b, ys):
                mul = lam([t, t], lambda b, x, y: b.bin("*", x, y))
                return b.let(S.Redomap(M, op_lam("+", t), mul, (C(0, t),), (xs, ys)))
            return b.let(S.Map(P, lam([A(t, "m")], cell), (ysst,)))
        return b.let(S.Map(N, lam([A(t, "m")], row), (xss,)))
    return prog(fun("main", [("xss", A(t, "n", "m")), ("yss", A(t, "m", "p"))], main, ("n", "m", "p")))


def matmul_map2_reduce(t):
    def main(b, xss, yss):
        ysst = b.let(S.Rearrange((1, 0), yss))

        def row(b, xs):
            def cell(b, ys):
                prods = b.let(S.Map(M, lam([t, t], lambda b, x, y: b.bin("*", x, y)), (xs, ys)))
                return b.let(S.Reduce(M, op_lam("+", t), (C(0, t),), (prods,), commutative=True))
            return b.let(S.Map(P, lam([A(t, "m")], cell), (ysst,)))
        return b.let(S.Map(N, lam([A(t, "m")], row), (xss,)))
    return prog(fun("main", [("xss", A(t, "n", "m")), ("yss", A(t, "m", "p"))], main, ("n", "m", "p")))


@pytest.mark.parametrize("build", [matmul_redomap, matmul_map2_reduce])
def test_matmul_f32(build):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal((7, 3)).astype(np.float32)
    r = run1(build(F32), a, b)
    assert r.dtype == np.float32 and r.shape == (5, 3)
    np.testing.assert_allclose(r, a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("build", [matmul_redomap, matmul_map2_reduce])
def test_matmul_i32_exact_and_wrapping(build):
    rng = np.random.default_rng(1)
    a = rng.integers(-2 ** 31, 2 ** 31 - 1, (4, 6), dtype=np.int32)
    b = rng.integers(-2 ** 31, 2 ** 31 - 1, (6, 2), dtype=np.int32)
    r = run1(build(I32), a, b)
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)  # mod 2^32 both ways
    assert r.dtype == np.int32 and np.array_equal(r, want)


@pytest.mark.parametrize("build", [matmul_redomap, matmul_map2_reduce])
def test_matmul_64x64(build):
    a = np.random.default_rng(2).random((64, 64), dtype=np.float32)
    r = run1(build(F32), a, a)
    np.testing.assert_allclose(r, a @ a, rtol=1e-4)


def test_matmul_empty():
    r = run1(matmul_redomap(F32), np.zeros((0, 3), np.float32), np.zeros((3, 4), np.float32))
    assert r.shape == (0, 4) and r.dtype == np.float32
    r = run1(matmul_redomap(F32), np.zeros((2, 0), np.float32), np.zeros((0, 4), np.float32))
    assert np.array_equal(r, np.zeros((2, 4), np.float32))


# ---- sum and prefix sum, by every evaluation strategy ----

def add_fun(t):
    return fun("add", [("a", t), ("b", t)], lambda b, x, y: b.bin("+", x, y), entry=False)


def red_op(t, how):
    """`+` as a numpy ufunc, as a vectorisable lambda with an `if`, or as a call (evaluated per element)."""
    if how == "ufunc":
        return op_lam("+", t)
    if how == "tree":
        def f(b, x, y):
            s = b.bin("+", x, y)
            c = b.bin("<", s, s)  # always false; keeps the lambda off the ufunc path
            return b.let(S.If(c, B().body(x), B().body(s), (t,)))
        return lam([t, t], f)
    return lam([t, t], lambda b, x, y: b.let(S.Apply("add", (x, y), (t,))))


@pytest.mark.parametrize("how", ["ufunc", "tree", "sequential"])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 64, 1000])
def test_sum_and_prefix_sum(how, n):
    p = prog(add_fun(I32),
             fun("sum", [("xs", A(I32, "n"))],
                 lambda b, xs: b.let(S.Reduce(N, red_op(I32, how), (C(0, I32),), (xs,))), ("n",)),
             fun("psum", [("xs", A(I32, "n"))],
                 lambda b, xs: b.let(S.Scan(N, red_op(I32, how), (C(0, I32),), (xs,))), ("n",)))
    xs = np.random.default_rng(n).integers(-2 ** 31, 2 ** 31 - 1, n, dtype=np.int32)
    s = run1(p, xs, entry="sum")
    assert isinstance(s, np.int32) and s == np.add.reduce(xs, dtype=np.int32)
    ps = run1(p, xs, entry="psum")
    assert ps.dtype == np.int32 and np.array_equal(ps, np.cumsum(xs, dtype=np.int32))


@pytest.mark.parametrize("how", ["ufunc", "tree", "sequential"])
def test_evaluation_strategy_is_the_intended_one(how, monkeypatch):
    calls = []
    orig_vapply, orig_ufuncs = _Interp.vapply, _Interp.ufuncs

    def vapply(self, *a):
        calls.append("vapply")
        return orig_vapply(self, *a)

    def ufuncs(self, *a):
        r = orig_ufuncs(self, *a)
        if r is not None:
            calls.append("ufunc")
        return r
    monkeypatch.setattr(_Interp, "vapply", vapply)
    monkeypatch.setattr(_Interp, "ufuncs", ufuncs)
    p = prog(add_fun(I32), fun("main", [("xs", A(I32, "n"))],
                               lambda b, xs: b.let(S.Reduce(N, red_op(I32, how), (C(0, I32),), (xs,))), ("n",)))
    assert run1(p, np.arange(10, dtype=np.int32)) == 45
    assert set(calls) == {"ufunc": {"ufunc"}, "tree": {"vapply"}, "sequential": set()}[how]


@pytest.mark.parametrize("how", ["ufunc", "tree", "sequential"])
def test_f32_sum(how):
    p = prog(add_fun(F32), fun("main", [("xs", A(F32, "n"))],
                               lambda b, xs: b.let(S.Reduce(N, red_op(F32, how), (C(0.0, F32),), (xs,))),
                               ("n",)))
    xs = np.random.default_rng(4).random(333, dtype=np.float32)
    s = run1(p, xs)
    assert isinstance(s, np.float32)
    assert abs(s - xs.astype(np.float64).sum()) < 1e-3


def argmax_lam(how):
    """(value, index) pairs: the larger value, the smaller index among equals."""
    def f(b, v1, i1, v2, i2):
        gt = b.bin(">", v1, v2)
        eq = b.bin("==", v1, v2)
        lt = b.bin("<", i1, i2)
        both = b.bin("&&", eq, lt)
        first = b.bin("||", gt, both)
        if how == "sequential":
            _ = b.let(S.Iota(C(1, I64), I64))  # an iota keeps the lambda off the vectorised path
        return b.let(S.If(first, B().body((v1, i1)), B().body((v2, i2)), (F32, I64)))
    return lam([F32, I64, F32, I64], f)


@pytest.mark.parametrize("how", ["tree", "sequential"])
def test_argmax_tuple_reduction(how):
    def main(b, xs):
        idx = b.let(S.Iota(N, I64))
        return b.let(S.Reduce(N, argmax_lam(how), (C(float("-inf"), F32), C(-1, I64)), (xs, idx)))
    p = prog(fun("main", [("xs", A(F32, "n"))], main, ("n",)))
    for n in (1, 2, 5, 100):
        xs = np.random.default_rng(n).integers(0, 10, n).astype(np.float32)
        v, i = run1(p, xs)
        assert v == xs.max() and i == np.argmax(xs) and isinstance(i, np.int64)


@pytest.mark.parametrize("vectorised", [True, False])
def test_scan_with_tuple_operator(vectorised):
    # Composition of affine maps x -> a*x + b, an associative, non-commutative operator.
    def f(b, a1, b1, a2, b2):
        if not vectorised:
            b.let(S.Iota(C(0, I64), I64))
        a = b.bin("*", a1, a2)
        t = b.bin("*", b1, a2)
        return a, b.bin("+", t, b2)
    op = lam([I64] * 4, f)
    p = prog(fun("main", [("as", A(I64, "n")), ("bs", A(I64, "n"))],
                 lambda b, xs, ys: b.let(S.Scan(N, op, (C(1, I64), C(0, I64)), (xs, ys))), ("n",)))
    rng = np.random.default_rng(5)
    xs, ys = rng.integers(-3, 4, 37), rng.integers(-5, 6, 37)
    ra, rb = run1(p, xs, ys)
    wa, wb, acc = [], [], (1, 0)
    for a, b in zip(xs.tolist(), ys.tolist()):
        acc = (acc[0] * a, acc[1] * a + b)
        wa.append(acc[0])
        wb.append(acc[1])
    assert ra.tolist() == wa and rb.tolist() == wb


def test_redomap_and_scanomap_with_min_max():
    def main(b, xs):
        sq = lam([F32], lambda b, x: b.bin("*", x, x))
        lo = b.let(S.Redomap(N, op_lam("f32.min", F32), sq, (C(float("inf"), F32),), (xs,)))
        run = b.let(S.Scanomap(N, op_lam("f32.max", F32), sq, (C(float("-inf"), F32),), (xs,)))
        return lo, run
    p = prog(fun("main", [("xs", A(F32, "n"))], main, ("n",)))
    xs = np.array([3, -1, np.nan, 2, -5], np.float32)
    lo, run = run1(p, xs)
    assert lo == np.float32(1)  # f32.min ignores NaN, as C's fminf
    assert np.array_equal(run, np.array([9, 9, 9, 9, 25], np.float32))


# ---- integer semantics ----

def scalar_op_prog(op, t):
    return prog(fun("main", [("x", t), ("y", t)], lambda b, x, y: b.bin(op, x, y)),
                fun("vec", [("xs", A(t, "n")), ("ys", A(t, "n"))],
                    lambda b, xs, ys: b.let(S.Map(N, lam([t, t], lambda b, x, y: b.bin(op, x, y)), (xs, ys))),
                    ("n",)))


def test_i32_wraps():
    def main(b):
        return (b.bin("+", C(2147483647, I32), C(1, I32)), b.bin("*", C(65536, I32), C(65536, I32)),
                b.let(S.UnOp("neg", C(-2147483648, I32), I32)), b.bin("-", C(0, "u8"), C(1, "u8")),
                b.bin("**", C(3, I32), C(40, I32)), b.bin("<<", C(1, I32), C(31, I32)),
                b.bin("*", C(100, "i8"), C(3, "i8")), b.bin("**", C(7, I64), C(100, I64)),
                b.bin(">>", C(-8, I32), C(1, I32)), b.bin(">>", C(0xF0, "u8"), C(4, "u8")))
    r = run_entry(prog(fun("main", [], main)), "main", [])
    assert r == (-2147483648, 0, -2147483648, 255, reference("**", 3, 40, "i32"), -2147483648,
                 44, reference("**", 7, 100, "i64"), -4, 15)
    assert [type(v) for v in r] == [np.int32] * 3 + [np.uint8] + [np.int32] * 2 + [np.int8, np.int64,
                                                                                   np.int32, np.uint8]


DIV_TABLE = [  # x, y, x/y, x%y, x//y, x%%y  (Futhark: / % are div/mod, // %% are quot/rem)
    (7, 2, 3, 1, 3, 1),
    (7, -2, -4, -1, -3, 1),
    (-7, 2, -4, 1, -3, -1),
    (-7, -2, 3, -1, 3, -1),
    (6, 3, 2, 0, 2, 0),
    (-6, 3, -2, 0, -2, 0),
    (0, -5, 0, 0, 0, 0),
]


@pytest.mark.parametrize("t", ["i8", "i16", "i32", "i64"])
@pytest.mark.parametrize("k, op", [(2, "/"), (3, "%"), (4, "//"), (5, "%%")])
def test_signed_division_table(t, k, op):
    t = Scalar(t)
    p = scalar_op_prog(op, t)
    xs = np.array([r[0] for r in DIV_TABLE], t.dtype)
    ys = np.array([r[1] for r in DIV_TABLE], t.dtype)
    want = [r[k] for r in DIV_TABLE]
    assert [run1(p, x, y) for x, y in zip(xs, ys)] == want
    got = run1(p, xs, ys, entry="vec")
    assert got.dtype == t.dtype and got.tolist() == want


@pytest.mark.parametrize("t", ["i8", "i32", "i64"])
def test_min_int_divided_by_minus_one_wraps(t):
    t = Scalar(t)
    lo = np.iinfo(t.dtype).min
    for op, want in (("/", lo), ("%", 0), ("//", lo), ("%%", 0)):
        assert run1(scalar_op_prog(op, t), t.dtype(lo), t.dtype(-1)) == want


def test_unsigned_division_is_plain():
    for op, want in (("/", 127), ("%", 1), ("//", 127), ("%%", 1)):
        assert run1(scalar_op_prog(op, Scalar("u8")), np.uint8(255), np.uint8(2)) == want


def reference(op, x, y, t):
    """Python's big integers, wrapped to t's width."""
    bits = int(t[1:])
    signed = t.startswith("i")

    def wrap(v):
        v &= (1 << bits) - 1
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v

    def quot(a, b):
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return {"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]
    f = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x // y,
         "%": lambda: x % y, "//": lambda: quot(x, y), "%%": lambda: x - y * quot(x, y),
         "&": lambda: x & y, "|": lambda: x | y, "^": lambda: x ^ y,
         "**": lambda: pow(x, y, 1 << bits), "<<": lambda: x << y, ">>": lambda: x >> y}[op]
    return wrap(f())


OPS = ["+", "-", "*", "/", "%", "//", "%%", "&", "|", "^", "**", "<<", ">>", "==", "<", ">="]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(INT_TYPES), st.sampled_from(OPS), st.data())
def test_integer_ops_match_big_integer_reference(t, op, data):
    info = np.iinfo(Scalar(t).dtype)
    ints = st.integers(int(info.min), int(info.max))
    xs = data.draw(st.lists(ints, min_size=1, max_size=6))
    bits = int(t[1:])
    rhs = {"**": st.integers(0, 70), "<<": st.integers(0, bits - 1), ">>": st.integers(0, bits - 1)}.get(op, ints)
    ys = data.draw(st.lists(rhs, min_size=len(xs), max_size=len(xs)))
    if op in ("/", "%", "//", "%%"):
        ys = [y or 1 for y in ys]
    dt = Scalar(t).dtype
    p = scalar_op_prog(op, Scalar(t))
    want = [reference(op, x, y, t) for x, y in zip(xs, ys)]
    assert [run1(p, dt(x), dt(y)) for x, y in zip(xs, ys)] == want
    got = run1(p, np.array(xs, dt), np.array(ys, dt), entry="vec")
    assert got.tolist() == want


# ---- floats ----

def test_f32_arithmetic_is_single_precision():
    def main(b, x, y):
        s = b.bin("+", x, y)
        d = b.bin("-", s, x)  # (1 + 1e-8) - 1 is 0 in f32 but 1e-8 in f64
        q = b.bin("/", x, C(0.0, F32))
        return d, q, b.prim("f32.sqrt", y), b.prim("f32.exp", y)
    d, q, r, e = run1(prog(fun("main", [("x", F32), ("y", F32)], main)), np.float32(1), np.float32(1e-8))
    assert d == 0 and type(d) is np.float32
    assert q == np.inf and type(q) is np.float32
    assert r == np.sqrt(np.float32(1e-8)) and type(r) is np.float32
    assert type(e) is np.float32


def test_float_ops_vectorised_match_numpy():
    rng = np.random.default_rng(6)
    xs, ys = rng.standard_normal(50).astype(np.float32), rng.standard_normal(50).astype(np.float32)

    def body(b, x, y):
        a = b.bin("*", x, y)
        c = b.bin("+", a, C(1.5, F32))
        d = b.prim("f32.abs", c)
        e = b.prim("f32.sqrt", d)
        f = b.prim("f32.max", e, x)
        g = b.bin("%", f, y)
        return b.bin("**", d, C(0.5, F32)), g
    p = prog(fun("main", [("xs", A(F32, "n")), ("ys", A(F32, "n"))],
                 lambda b, xs, ys: b.let(S.Map(N, lam([F32, F32], body), (xs, ys))), ("n",)))
    r1, r2 = run1(p, xs, ys)
    d = np.abs(xs * ys + np.float32(1.5))
    assert r1.dtype == np.float32 and np.array_equal(r1, d ** np.float32(0.5))
    assert np.array_equal(r2, np.fmod(np.fmax(np.sqrt(d), xs), ys))


@pytest.mark.parametrize("fn, arg, t, want", [
    ("i32.f32", np.float32(-2.7), "i32", -2), ("i32.f32", np.float32(2.7), "i32", 2),
    ("i64.f64", np.float64(1e10), "i64", 10 ** 10), ("i32.f32", np.float32(np.nan), "i32", -2 ** 31),
    ("f32.i64", np.int64(2 ** 40 + 1), "f32", np.float32(2 ** 40)), ("f64.i32", np.int32(-3), "f64", -3.0),
    ("i8.i32", np.int32(300), "i8", 44), ("u8.i32", np.int32(-1), "u8", 255),
    ("i64.u32", np.uint32(4294967295), "i64", 4294967295), ("i32.u64", np.uint64(2 ** 64 - 1), "i32", -1),
    ("i64.bool", np.bool_(True), "i64", 1), ("bool.i32", np.int32(-5), "bool", True),
    ("bool.i32", np.int32(0), "bool", False), ("f32.bool", np.bool_(True), "f32", 1.0),
    ("f32.f64", np.float64(0.1), "f32", np.float32(0.1)), ("f64.f32", np.float32(0.1), "f64", float(np.float32(0.1))),
    ("i64.abs", np.int64(-4), "i64", 4), ("i64.min", None, "i64", -3), ("i64.max", None, "i64", 5),
    ("f32.floor", np.float32(-1.5), "f32", -2.0), ("f32.ceil", np.float32(-1.5), "f32", -1.0),
    ("f32.log", np.float32(1), "f32", 0.0), ("f32.sin", np.float32(0), "f32", 0.0),
    ("f32.cos", np.float32(0), "f32", 1.0), ("f32.tan", np.float32(0), "f32", 0.0),
    ("f32.min", None, "f32", -3.0),
])
def test_prelude_functions(fn, arg, t, want):
    t = Scalar(t)
    if arg is None:  # binary: min/max of 5 and -3
        a, b = t.dtype(5), t.dtype(-3)
        p = prog(fun("main", [("a", t), ("b", t)], lambda bb, x, y: bb.prim(fn, x, y, t=t)))
        args = [a, b]
    else:
        p = prog(fun("main", [("x", Scalar(type_name(arg)))], lambda bb, x: bb.prim(fn, x, t=t)))
        args = [arg]
    r = run1(p, *args)
    assert type(r) is t.dtype and r == want
    # and the same on arrays, through a vectorised map
    q = prog(fun("main", [(f"x{i}", A(p.funs[0].params[i].type, "n")) for i in range(len(args))],
                 lambda bb, *xs: bb.let(S.Map(N, lam([x.type.elem for x in xs],
                                                     lambda b2, *ys: b2.prim(fn, *ys, t=t)), xs)),
                 ("n",)))
    rv = run1(q, *[np.array([a, a]) for a in args])
    assert rv.dtype == t.dtype and rv.tolist() == [want, want]


# ---- arrays: iota, replicate, rearrange, index, if, apply ----

def test_array_constructs():
    def main(b, xss):
        i = b.let(S.Iota(C(4, I64), I32))
        r = b.let(S.Replicate(C(2, I64), i))
        t = b.let(S.Rearrange((1, 0), xss))
        row = b.let(S.Index(xss, (C(1, I64),)))
        e = b.let(S.Index(xss, (C(1, I64), C(2, I64))))
        c = b.bin(">", e, C(3.0, F32))
        f = b.let(S.If(c, B().body(row), B().body(b.let(S.Index(t, (C(0, I64),)))), (A(F32, "m"),)))
        return i, r, t, row, e, f
    xss = np.arange(6, dtype=np.float32).reshape(2, 3)
    i, r, t, row, e, f = run1(prog(fun("main", [("xss", A(F32, "n", "m"))], main, ("n", "m"))), xss)
    assert i.dtype == np.int32 and i.tolist() == [0, 1, 2, 3]
    assert r.tolist() == [[0, 1, 2, 3]] * 2
    assert np.array_equal(t, xss.T) and np.array_equal(row, xss[1])
    assert e == 5 and type(e) is np.float32 and np.array_equal(f, xss[1])


def test_rearrange_rank3():
    p = prog(fun("main", [("x", A(I32, "a", "b", "c"))], lambda b, x: b.let(S.Rearrange((2, 0, 1), x)),
                 ("a", "b", "c")))
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    assert np.array_equal(run1(p, x), np.transpose(x, (2, 0, 1)))


def test_apply_binds_sizes_and_checks_them():
    dot = fun("dot", [("xs", A(F32, "k")), ("ys", A(F32, "k"))],
              lambda b, xs, ys: b.let(S.Redomap(S.Var("k", I64), op_lam("+", F32),
                                                lam([F32, F32], lambda b, x, y: b.bin("*", x, y)),
                                                (C(0.0, F32),), (xs, ys))), ("k",), entry=False)
    p = prog(dot, fun("main", [("xs", A(F32, "n")), ("ys", A(F32, "m"))],
                      lambda b, xs, ys: b.let(S.Apply("dot", (xs, ys), (F32,))), ("n", "m")))
    assert run1(p, np.ones(3, np.float32), np.full(3, 2, np.float32)) == 6
    with pytest.raises(InterpError, match=r"Size mismatch in function dot: size k is 3 \(from parameter xs\), "
                                          r"but parameter ys has k = 4"):
        run1(p, np.ones(3, np.float32), np.ones(4, np.float32))


def test_map_over_rows_with_indexing_and_if():
    # map (\row -> if row[0] > 0 then row[1] / row[0] else -1) xss   (vectorised: gathers and masks)
    def f(b, row):
        a = b.let(S.Index(row, (C(0, I64),)))
        c = b.bin(">", a, C(0, I32))
        tb = B()
        q = tb.bin("/", tb.let(S.Index(row, (C(1, I64),))), a)
        return b.let(S.If(c, tb.body(q), B().body(C(-1, I32)), (I32,)))
    p = prog(fun("main", [("xss", A(I32, "n", "m"))],
                 lambda b, xss: b.let(S.Map(N, lam([A(I32, "m")], f), (xss,))), ("n", "m")))
    xss = np.array([[2, 7], [0, 5], [-1, 3], [3, -7]], np.int32)
    assert run1(p, xss).tolist() == [3, -1, -1, -3]  # no division by zero in the branch not taken


# ---- errors ----

def test_out_of_bounds_1d():
    b = B()
    p = prog(fun("main", [("xs", A(F32, "n")), ("i", I64)], lambda b, xs, i: b.let(S.Index(xs, (i,))), ("n",)))
    with pytest.raises(InterpError) as e:
        run1(p, np.zeros(3, np.float32), np.int64(5))
    assert e.value.message == "Index [5] out of bounds for array of shape [3]."
    assert e.value.loc == p.funs[0].body.stms[0].loc and e.value.loc.file == FILE
    assert isinstance(e.value, CompileError)
    assert str(e.value).startswith(f"{FILE}:{e.value.loc.line}:5: ")
    with pytest.raises(InterpError, match=r"Index \[-1\] out of bounds"):
        run1(p, np.zeros(3, np.float32), np.int64(-1))
    del b


def test_out_of_bounds_2d_and_slice():
    p = prog(fun("main", [("xss", A(I32, "n", "m")), ("i", I64), ("j", I64)],
                 lambda b, xss, i, j: b.let(S.Index(xss, (i, j))), ("n", "m")),
             fun("row", [("xss", A(I32, "n", "m")), ("i", I64)],
                 lambda b, xss, i: b.let(S.Index(xss, (i,))), ("n", "m")))
    x = np.zeros((2, 3), np.int32)
    with pytest.raises(InterpError, match=r"^.*Index \[1, 7\] out of bounds for array of shape \[2\]\[3\]\.$"):
        run1(p, x, np.int64(1), np.int64(7))
    with pytest.raises(InterpError, match=r"Index \[4\] out of bounds for array of shape \[2\]\[3\]\."):
        run1(p, x, np.int64(4), entry="row")


@pytest.mark.parametrize("vectorised", [True, False])
def test_out_of_bounds_inside_map(vectorised):
    def f(b, i):
        if not vectorised:
            b.let(S.Iota(C(0, I64), I64))
        return b.let(S.Index(S.Var("xs", A(F32, "n")), (i,)))
    p = prog(fun("main", [("xs", A(F32, "n")), ("is", A(I64, "m"))],
                 lambda b, xs, is_: b.let(S.Map(M, lam([I64], f), (is_,))), ("n", "m")))
    xs = np.arange(3, dtype=np.float32)
    assert run1(p, xs, np.array([2, 0, 1])).tolist() == [2, 0, 1]
    with pytest.raises(InterpError) as e:
        run1(p, xs, np.array([0, 1, 3, 9]))
    assert e.value.message == "Index [3] out of bounds for array of shape [3]."
    assert e.value.loc is not None


@pytest.mark.parametrize("op", ["/", "%", "//", "%%"])
@pytest.mark.parametrize("entry", ["main", "vec"])
def test_division_by_zero(op, entry):
    p = scalar_op_prog(op, I32)
    args = (np.int32(1), np.int32(0)) if entry == "main" else (np.array([1, 2], np.int32),
                                                               np.array([1, 0], np.int32))
    with pytest.raises(InterpError) as e:
        run1(p, *args, entry=entry)
    assert e.value.message == "division by zero"
    assert e.value.loc is not None and e.value.loc.file == FILE
    assert str(e.value) == f"{e.value.loc}: error: division by zero"


def test_float_division_by_zero_is_ieee():
    assert run1(scalar_op_prog("/", F64), np.float64(-1), np.float64(0)) == -np.inf


def test_negative_exponent():
    with pytest.raises(InterpError, match="Negative exponent"):
        run1(scalar_op_prog("**", I32), np.int32(2), np.int32(-1))


def test_entry_size_mismatch_names_both_sizes():
    p = prog(fun("main", [("xs", A(F32, "n")), ("ys", A(F32, "n"))],
                 lambda b, xs, ys: b.let(S.Map(N, lam([F32, F32], lambda b, x, y: b.bin("+", x, y)), (xs, ys))),
                 ("n",)))
    with pytest.raises(InterpError) as e:
        run1(p, np.zeros(3, np.float32), np.zeros(4, np.float32))
    assert e.value.message == ("Size mismatch in entry point main: size n is 3 (from parameter xs), "
                               "but parameter ys has n = 4.")


def test_entry_argument_types_are_checked():
    p = prog(fun("main", [("xss", A(F32, "n", "m")), ("k", I64)], lambda b, xss, k: k, ("n", "m")))
    with pytest.raises(InterpError, match=r"Expected argument of type \[\]\[\]f32, got \[3\]i32 "
                                          r"\(argument 1, xss, of the entry point main\)"):
        run1(p, np.zeros(3, np.int32), np.int64(1))
    with pytest.raises(InterpError, match=r"Expected argument of type i64, got f32"):
        run1(p, np.zeros((1, 1), np.float32), np.float32(1))
    with pytest.raises(InterpError, match=r"takes 2 arguments, but was given 1"):
        run1(p, np.zeros((1, 1), np.float32))
    assert run1(p, np.zeros((1, 1), np.float32), 7) == 7  # a Python int for an i64 is fine
    with pytest.raises(InterpError, match="No entry point named 'nope'"):
        run_entry(p, "nope", [])


def test_map_width_must_match_array():
    p = prog(fun("main", [("xs", A(I32, "n"))],
                 lambda b, xs: b.let(S.Map(C(2, I64), lam([I32], lambda b, x: x), (xs,))), ("n",)))
    with pytest.raises(InterpError, match=r"Size mismatch in map: its width is 2, but xs has type \[3\]i32"):
        run1(p, np.zeros(3, np.int32))


def test_negative_iota():
    p = prog(fun("main", [("k", I64)], lambda b, k: b.let(S.Iota(k, I64))))
    with pytest.raises(InterpError, match=r"Negative size -2 in iota"):
        run1(p, np.int64(-2))


def test_results_are_fresh_numpy_values():
    p = prog(fun("main", [("xs", A(I32, "n"))],
                 lambda b, xs: (b.let(S.Reduce(N, op_lam("+", I32), (C(0, I32),), (xs,))),
                                b.let(S.Map(N, lam([I32], lambda b, x: b.bin("*", x, C(2, I32))), (xs,)))),
                 ("n",)))
    s, d = run1(p, np.arange(4, dtype=np.int32))
    assert type(s) is np.int32 and s == 6
    assert isinstance(d, np.ndarray) and d.dtype == np.int32 and d.tolist() == [0, 2, 4, 6]


# ---- through the front end ----

def parsed(src):
    """The checked source IR of a program (a front-end error fails the test)."""
    return source_program(src, FILE)


def test_frontend_matmul_example():
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "futhark_examples", "matmul.fut")
    with open(path) as f:
        p = parsed(f.read())
    rng = np.random.default_rng(7)
    a, b = rng.random((9, 16), dtype=np.float32), rng.random((16, 5), dtype=np.float32)
    (r,) = run_entry(p, "main", [a, b])
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, a @ b, rtol=1e-5)


def test_frontend_small_programs():
    p = parsed("entry wrap (x: i32) : i32 = x + 1\n"
               "entry psum [n] (xs: [n]i64) : [n]i64 = scan (+) 0 xs\n"
               "entry div (x: i32) (y: i32) : i32 = x / y\n"
               "entry add2 [n] (xs: [n]f32) (ys: [n]f32) : [n]f32 = map2 (+) xs ys\n")
    assert run_entry(p, "wrap", [np.int32(2147483647)]) == (-2147483648,)
    assert run_entry(p, "psum", [np.arange(5)])[0].tolist() == [0, 1, 3, 6, 10]
    assert run_entry(p, "div", [np.int32(-7), np.int32(2)]) == (-4,)
    with pytest.raises(InterpError) as e:
        run_entry(p, "div", [np.int32(1), np.int32(0)])
    assert e.value.loc.line == 3 and str(e.value).endswith(": error: division by zero")
    with pytest.raises(InterpError, match=r"size n is 3 \(from parameter xs\), but parameter ys has n = 4"):
        run_entry(p, "add2", [np.zeros(3, np.float32), np.zeros(4, np.float32)])
