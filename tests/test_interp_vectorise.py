"""ir/interp/interpreter.py's vectorised fast path against per-element evaluation: loops, ifs and indexing inside
lambdas are vectorised where they can be and give the same results as evaluating each element alone (hand-built
cases and random lambdas)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incflat.ir import source as S
from incflat.ir.types import I32, I64
from test_interp import A, B, C, fun, lam, prog, run1
from test_interp_forms import (M, N, both_ways, collatz_ref, collatz_steps, error_of, for_loop, map_prog, parsed, sl,
                               unvectorised, while_loop)

pytestmark = pytest.mark.filterwarnings("error")  # no numpy warnings may leak out

def test_for_loop_in_a_map_is_vectorised(monkeypatch):
    # map (\x -> loop (a, b) = (x, 0) for i < 5 do (a * 2 + i, if a > 10 then b + 1 else b)) xs
    def f(b, x):
        def body(bb, i, a, c):
            gt = bb.bin(">", a, C(10, I64))
            tb = B()
            c1 = tb.bin("+", c, C(1, I64))
            return (bb.bin("+", bb.bin("*", a, C(2, I64)), i),
                    bb.let(S.If(gt, tb.body(c1), B().body(c), (I64,))))
        return for_loop(b, C(5, I64), [I64, I64], [x, C(0, I64)], body)
    p = map_prog(I64, f)
    xs = np.array([-3, 0, 1, 2, 5])
    a, c = both_ways(monkeypatch, p, xs, vectorised=True)
    want = []
    for x in xs.tolist():
        a_, c_ = x, 0
        for i in range(5):
            a_, c_ = a_ * 2 + i, c_ + (a_ > 10)
        want.append((a_, c_))
    assert list(zip(a.tolist(), c.tolist())) == want


def test_while_loop_in_a_map_is_vectorised(monkeypatch):
    p = map_prog(I64, collatz_steps)
    xs = np.array([1, 7, 27, 2, 97, 1, 6])
    r = both_ways(monkeypatch, p, xs, vectorised=True)
    assert r.tolist() == [collatz_ref(x) for x in xs.tolist()]


def test_loop_with_an_array_parameter_in_a_map(monkeypatch):
    # map (\row -> loop r = row for i < 3 do map (\x -> x + r[0]) r) xss: inner map: per element
    def f(b, row):
        def body(bb, i, r):
            r0 = bb.let(S.Index(r, (C(0, I64),)))
            return bb.let(S.Map(M, lam([I32], lambda b2, x: b2.bin("+", x, r0)), (r,)))
        return for_loop(b, C(3, I64), [A(I32, "m")], [row], body)
    p = prog(fun("main", [("xss", A(I32, "n", "m"))],
                 lambda b, xss: b.let(S.Map(N, lam([A(I32, "m")], f), (xss,))), ("n", "m")))
    xss = np.arange(6, dtype=np.int32).reshape(3, 2)
    r = both_ways(monkeypatch, p, xss, vectorised=False)
    want = xss.copy()
    for _ in range(3):
        want = want + want[:, :1]
    assert np.array_equal(r, want)


def test_loop_over_an_array_state_in_a_map_is_vectorised(monkeypatch):
    # map (\row -> loop v = row for i < 3 do v[1:-1:-1] with [0] = ...) xss, without the update (not
    # vectorised): v' = (v reversed)[0:2] + i, a slice of a batched array with shared bounds
    def f(b, row):
        def body(bb, i, v):
            r = bb.let(S.Index(v, (sl(bb, 1, -1, -1),)))  # v[1:-1:-1], the reversed row
            h = bb.let(S.Index(r, (sl(bb, 0, 2),)))  # r[0:2]
            return h
        return for_loop(b, C(3, I64), [A(I64, 2)], [row], body)
    p = prog(fun("main", [("xss", A(I64, "n", 2))],
                 lambda b, xss: b.let(S.Map(N, lam([A(I64, 2)], f), (xss,))), ("n",)))
    xss = np.arange(8).reshape(4, 2)
    r = both_ways(monkeypatch, p, xss, vectorised=True)
    assert np.array_equal(r, xss[:, ::-1])  # reversed three times


def test_nested_loops_and_ifs_in_a_map_are_vectorised(monkeypatch):
    # map (\x -> if x > 2 then (loop a = x for i < 4 do loop b = a while b % 5 != 0 do b + i + 1)
    #             else (loop c = x for i < 3 do c * 3 + xs[i])) xs
    def f(b, x, ys):
        def outer(bb, i, a):
            def cond(cb, c):
                return cb.bin("!=", cb.bin("%", c, C(5, I64)), C(0, I64))
            return while_loop(bb, [I64], [a], cond,
                              lambda b2, c: b2.bin("+", b2.bin("+", c, i), C(1, I64)))
        tb = B()
        t = for_loop(tb, C(4, I64), [I64], [x], outer)
        eb = B()
        e = for_loop(eb, C(3, I64), [I64], [x],
                     lambda b2, i, c: b2.bin("+", b2.bin("*", c, C(3, I64)), b2.let(S.Index(ys, (i,)))))
        return b.let(S.If(b.bin(">", x, C(2, I64)), tb.body(t), eb.body(e), (I64,)))
    p = map_prog(I64, f, [("ys", A(I64, "m"))])
    xs = np.array([0, 3, 7, 1, 12, -4, 5])
    ys = np.array([1, 2, 3])
    r = both_ways(monkeypatch, p, xs, ys, vectorised=True)
    want = []
    for x in xs.tolist():
        if x > 2:
            a = x
            for i in range(4):
                while a % 5 != 0:
                    a = a + i + 1
        else:
            a = x
            for i in range(3):
                a = a * 3 + int(ys[i])
        want.append(a)
    assert r.tolist() == want


def test_loop_whose_count_depends_on_the_element_runs_per_element(monkeypatch):
    # map (\x -> loop a = 0 for i < x do a + i) xs
    def f(b, x):
        return for_loop(b, x, [I64], [C(0, I64)], lambda bb, i, a: bb.bin("+", a, i))
    p = map_prog(I64, f)
    xs = np.array([0, 3, -2, 10])
    r = both_ways(monkeypatch, p, xs, vectorised=False)
    assert r.tolist() == [sum(range(max(x, 0))) for x in xs.tolist()]


def test_loop_that_does_not_depend_on_the_element_is_evaluated_once(monkeypatch):
    # map (\x -> x + (loop a = 0 for i < 100 do a + i)) xs: vectorised; the loop runs once, unbatched
    def f(b, x):
        s = for_loop(b, C(100, I64), [I64], [C(0, I64)], lambda bb, i, a: bb.bin("+", a, i))
        return b.bin("+", x, s)
    r = both_ways(monkeypatch, map_prog(I64, f), np.arange(4), vectorised=True)
    assert r.tolist() == [4950, 4951, 4952, 4953]


def test_loop_in_a_reduction_operator():
    # reduce (\a b -> loop s = a for i < 2 do s + b) 0 xs == 2 * sum xs (+ is associative: so is this)
    def op(b, x, y):
        return for_loop(b, C(1, I64), [I64], [x], lambda bb, i, s: bb.bin("+", s, y))
    p = prog(fun("main", [("xs", A(I64, "n"))],
                 lambda b, xs: b.let(S.Reduce(N, lam([I64, I64], op), (C(0, I64),), (xs,))), ("n",)))
    assert run1(p, np.arange(37)) == sum(range(37))


def test_division_by_zero_in_a_vectorised_loop_names_the_inner_statement():
    locs = []

    def f(b, x):
        def body(bb, i, a):
            q = bb.bin("/", C(100, I64), bb.bin("-", x, i))
            locs.append(bb.last_loc)
            return bb.bin("+", a, q)
        return for_loop(b, C(3, I64), [I64], [C(0, I64)], body)
    p = map_prog(I64, f)
    assert run1(p, np.array([5, 10])).tolist() == [20 + 25 + 33, 10 + 11 + 12]
    e = error_of(p, np.array([5, 2, 10]))
    assert e.message == "division by zero" and e.loc == locs[0]


def test_while_loop_condition_errors_inside_a_map():
    # map (\x -> loop y = x while xs[y] > 0 do y + 1) is: runs off the end for one element
    def f(b, x, ys):
        def cond(cb, y):
            return cb.bin(">", cb.let(S.Index(ys, (y,))), C(0, I32))
        return while_loop(b, [I64], [x], cond, lambda bb, y: bb.bin("+", y, C(1, I64)))
    p = map_prog(I64, f, [("ys", A(I32, "m"))])
    assert run1(p, np.array([0, 1, 2, 3, 4]), np.array([1, 1, 0, 1, 0], np.int32)).tolist() == [2, 2, 2, 4, 4]
    e = error_of(p, np.array([0, 3]), np.array([1, 1, 0, 1, 1], np.int32))
    assert e.message == "Index [5] out of bounds for array of shape [5]."


# ---- random lambdas with loops, ifs and indexing: vectorised and per-element evaluation agree ----

def random_body(rng, b, avail, ys, depth):
    """Statements into b computing one i64 from the i64 atoms `avail` (and the shared array ys)."""
    def atom():
        return rng.choice(avail) if rng.random() < 0.8 else C(rng.randint(-3, 5), I64)

    for _ in range(rng.randint(1, 3)):
        k = rng.random()
        if k < 0.4 or depth == 0:
            v = b.bin(rng.choice(["+", "-", "*", "^"]), atom(), atom())
        elif k < 0.55:
            c = b.bin(rng.choice(["<", "==", ">="]), atom(), atom())
            tb, eb = B(), B()
            t = random_body(rng, tb, avail, ys, depth - 1)
            e = random_body(rng, eb, avail, ys, depth - 1)
            v = b.let(S.If(c, tb.body(t), eb.body(e), (I64,)))
        elif k < 0.7:
            def body(bb, i, a, c2):
                inner = avail + [i, a, c2]
                return random_body(rng, bb, inner, ys, depth - 1), bb.bin("+", c2, a)
            v = for_loop(b, C(rng.randint(0, 3), I64), [I64, I64], [atom(), atom()], body)[rng.randint(0, 1)]
        elif k < 0.85:
            start = b.bin("&", atom(), C(3, I64))  # 0..3 iterations, counting down

            def cond(cb, c2, a):
                return cb.bin(">", c2, C(0, I64))

            def wbody(bb, c2, a):
                return bb.bin("-", c2, C(1, I64)), random_body(rng, bb, avail + [a, c2], ys, depth - 1)
            v = while_loop(b, [I64, I64], [start, atom()], cond, wbody)[1]
        else:
            lo = rng.randint(0, 4)
            part = b.let(S.Index(ys, (sl(b, lo, lo + 4),)))  # 4 elements
            v = b.let(S.Index(part, (b.bin("&", atom(), C(3, I64)),)))
        avail = avail + [v]
    return avail[-1]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 9))
def test_random_lambdas_agree_vectorised_and_per_element(seed):
    import random
    rng = random.Random(seed)
    ys_t = A(I64, "m")

    def f(b, x, ys):
        return random_body(rng, b, [x], ys, 2)
    p = map_prog(I64, f, [("ys", ys_t)])
    xs = np.array([rng.randint(-20, 20) for _ in range(9)], np.int64)
    ys = np.array([rng.randint(-9, 9) for _ in range(8)], np.int64)
    with pytest.MonkeyPatch.context() as mp:
        r1 = run1(p, xs, ys)
        unvectorised(mp)
        r2 = run1(p, xs, ys)
    assert r1.dtype == r2.dtype and r1.tolist() == r2.tolist()


def test_source_while_loop_in_a_map_is_vectorised(monkeypatch):
    src = ("entry main [n] (cs: [n]f32) : [n]i32 =\n"
           "  map (\\c -> let (_, k) = loop (z, k) = (0f32, 0i32) while k < 50 && z * z < 4f32 do\n"
           "                           (z * z + c, k + 1)\n"
           "              in k) cs\n")
    p = parsed(src)
    cs = np.linspace(-2.5, 0.5, 31).astype(np.float32)
    r = both_ways(monkeypatch, p, cs, vectorised=True)
    want = []
    for c in cs:
        z, k = np.float32(0), 0
        while k < 50 and z * z < 4:
            z, k = z * z + c, k + 1
        want.append(k)
    assert r.tolist() == want
