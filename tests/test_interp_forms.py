"""ir/interp.py on the newer IR forms: loops, slices, updates, array literals, concat, rotate, reshape,
scatter and filter (built by hand), and the run-time errors of all of them, with their locations."""

import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incflat.ir import source as S
from incflat.ir.interp import InterpError, _Interp, run_entry
from incflat.ir.types import F32, I32, I64
from incflat.pipeline import source_program
from test_interp import FILE, A, B, C, fresh, fun, lam, op_lam, prog, run1

pytestmark = pytest.mark.filterwarnings("error")  # no numpy warnings may leak out

N, M = (S.Var(k, I64) for k in "nm")


# ---- builders for the new forms ----

def for_loop(b, bound, types, init, f, size_params=()):
    """`loop (p1, p2, ...) = init for i < bound do f(i, p1, p2, ...)`; returns the pattern's variables."""
    ps = tuple(S.Var(fresh("lp"), t) for t in types)
    i = S.Var(fresh("i"), bound.type)
    bb = B()
    res = f(bb, i, *ps)
    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    return b.let(S.Loop(tuple(size_params), ps, tuple(init), S.ForLoop(i, bound), bb.body(res)))


def while_loop(b, types, init, cond, f, size_params=()):
    ps = tuple(S.Var(fresh("lp"), t) for t in types)
    cb = B()
    c = cond(cb, *ps)
    bb = B()
    res = f(bb, *ps)
    res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
    return b.let(S.Loop(tuple(size_params), ps, tuple(init), S.WhileLoop(cb.body(c)), bb.body(res)))


def sl(b, start, end, stride=1):
    """A DimSlice of constant bounds, with its size computed as the front end does (by the IR itself)."""
    i, j, s = (C(x, I64) if isinstance(x, int) else x for x in (start, end, stride))
    sgn = b.prim("i64.sgn", s)
    t = b.bin("-", j, i)
    t = b.bin("+", t, s)
    t = b.bin("-", t, sgn)
    n = b.bin("//", t, s)
    return S.DimSlice(i, j, s, n)


def strategy_calls(monkeypatch):
    """Records the lambdas that vapply (the vectorised path) evaluates."""
    calls = []
    orig = _Interp.vapply

    def vapply(self, lam_, *a):
        calls.append(lam_)
        return orig(self, lam_, *a)
    monkeypatch.setattr(_Interp, "vapply", vapply)
    return calls


def unvectorised(monkeypatch):
    """Forces per-element evaluation of every lambda."""
    orig = _Interp.lam_info

    def lam_info(self, lam_):
        info = orig(self, lam_)
        info.vectorisable = False
        return info
    monkeypatch.setattr(_Interp, "lam_info", lam_info)


def error_of(p, *args, entry="main"):
    with pytest.raises(InterpError) as e:
        run_entry(p, entry, list(args))
    return e.value


# ---- loops ----

def test_for_loop_with_tuple_state_and_counter_type():
    # loop (s, f) = (0, 1) for i < n do (s + i, f * (i + 1))   with an i32 counter
    def main(b, n):
        def body(bb, i, s, f):
            assert i.type == I32
            return bb.bin("+", s, i), bb.bin("*", f, bb.bin("+", i, C(1, I32)))
        return for_loop(b, n, [I32, I32], [C(0, I32), C(1, I32)], body)
    p = prog(fun("main", [("n", I32)], main))
    s, f = run1(p, np.int32(6))
    assert (s, f) == (15, 720) and type(s) is np.int32 and type(f) is np.int32
    assert run1(p, np.int32(13))[1] == np.int32(np.int64(6227020800) % 2 ** 32 - 2 ** 32)  # wraps


@pytest.mark.parametrize("bound", [0, -1, -(2 ** 63)])
def test_for_loop_with_no_iterations_gives_the_initial_values(bound):
    def main(b, n, xs):
        return for_loop(b, n, [I64, A(F32, "m")], [C(7, I64), xs],
                        lambda bb, i, a, ys: (bb.bin("+", a, i), ys))
    p = prog(fun("main", [("n", I64), ("xs", A(F32, "m"))], main, ("m",)))
    a, ys = run1(p, np.int64(bound), np.arange(3, dtype=np.float32))
    assert a == 7 and ys.tolist() == [0, 1, 2]


def test_fibonacci_tuple_state():
    def main(b, n):
        return for_loop(b, n, [I64, I64], [C(0, I64), C(1, I64)], lambda bb, i, x, y: (y, bb.bin("+", x, y)))
    p = prog(fun("main", [("n", I64)], main))
    assert run1(p, np.int64(50)) == (12586269025, 20365011074)
    assert run1(p, np.int64(100))[0] == np.int64(3736710778780434371)  # 354224848179261915075 mod 2^64


def collatz_steps(b, x):
    # loop (x, k) = (x, 0) while x != 1 do (if x % 2 == 0 then x / 2 else 3 * x + 1, k + 1)
    def cond(cb, y, k):
        return cb.bin("!=", y, C(1, I64))

    def body(bb, y, k):
        even = bb.bin("==", bb.bin("%", y, C(2, I64)), C(0, I64))
        tb, eb = B(), B()
        h = tb.bin("/", y, C(2, I64))
        t3 = eb.bin("+", eb.bin("*", y, C(3, I64)), C(1, I64))
        y2 = bb.let(S.If(even, tb.body(h), eb.body(t3), (I64,)))
        return y2, bb.bin("+", k, C(1, I64))
    return while_loop(b, [I64, I64], [x, C(0, I64)], cond, body)[1]


def collatz_ref(x):
    k = 0
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        k += 1
    return k


def test_while_loop():
    p = prog(fun("main", [("x", I64)], collatz_steps))
    assert [run1(p, np.int64(x)) for x in (1, 2, 3, 27, 97)] == [collatz_ref(x) for x in (1, 2, 3, 27, 97)]
    assert run1(p, np.int64(1)) == 0  # the condition is false at once: no iteration


def test_loop_doubling_an_array_with_concat_changes_its_size():
    # loop (xs: [k]i32) = [1, 2] for i < n do concat xs (map (+ i) xs)    -- k doubles each iteration
    def main(b, n):
        init = b.let(S.ArrayLit((C(1, I32), C(2, I32)), A(I32, 2)))

        def body(bb, i, xs):
            k = S.Var("k", I64)
            ys = bb.let(S.Map(k, lam([I32], lambda b2, x: b2.bin("+", x, i)), (xs,)))
            return bb.let(S.Concat((xs, ys), bb.bin("+", k, k)))
        return for_loop(b, n, [A(I32, "k")], [init], body, ("k",))
    p = prog(fun("main", [("n", I32)], main))
    k, xs = run1(p, np.int32(3))
    want = [1, 2]
    for i in range(3):
        want = want + [x + i for x in want]
    assert k == 16 and type(k) is np.int64 and xs.tolist() == want and xs.dtype == np.int32
    assert run1(p, np.int32(0))[0] == 2


def test_loop_size_parameter_shrinking_with_a_slice_and_a_while():
    # loop (xs: [k]i64) = xs while k > 1 do xs[0:k/2] ... halves the array until one element is left;
    # the size parameter k is bound from xs's shape at the start of every iteration (and in the condition).
    def main(b, xs):
        def cond(cb, ys):
            return cb.bin(">", S.Var("k", I64), C(1, I64))

        def body(bb, ys):
            h = bb.bin("/", S.Var("k", I64), C(2, I64))
            return bb.let(S.Index(ys, (sl(bb, 0, h),)))
        return while_loop(b, [A(I64, "k")], [xs], cond, body, ("k",))
    p = prog(fun("main", [("xs", A(I64, "n"))], main, ("n",)))
    k, ys = run1(p, np.arange(100))
    assert k == 1 and ys.tolist() == [0]
    assert run1(p, np.arange(1))[0] == 1


def test_updates_in_a_loop():
    # loop xs = replicate n 0 for i < n do xs with [i] = i * i
    def main(b, n):
        z = b.let(S.Replicate(n, C(0, I64)))
        return for_loop(b, n, [A(I64, "n")], [z],
                        lambda bb, i, xs: bb.let(S.Update(xs, (i,), bb.bin("*", i, i))))
    p = prog(fun("main", [("n", I64)], main))
    assert run1(p, np.int64(6)).tolist() == [0, 1, 4, 9, 16, 25]


def test_update_in_a_loop_leaves_the_argument_alone():
    def main(b, xs):
        return for_loop(b, C(3, I64), [A(F32, "n")], [xs],
                        lambda bb, i, ys: bb.let(S.Update(ys, (i,), C(9.0, F32))))
    p = prog(fun("main", [("xs", A(F32, "n"))], main, ("n",)))
    xs = np.zeros(4, np.float32)
    assert run1(p, xs).tolist() == [9, 9, 9, 0] and xs.tolist() == [0, 0, 0, 0]


def test_loop_body_bindings_that_shadow_outer_names_are_reset_every_iteration():
    # let t = 10 in loop acc = 0 for i < 3 do (let t = acc + t in t): the t read is always the outer one
    t_outer = S.Var("t", I64)
    acc = S.Var("acc", I64)
    i = S.Var("i", I64)
    body = S.Body((S.Stm((t_outer,), S.BinOp("+", acc, t_outer, I64)),), (t_outer,))
    loop = S.Loop((), (acc,), (C(0, I64),), S.ForLoop(i, C(3, I64)), body)
    r = S.Var("r", I64)
    f = S.FunDef("main", True, (), (), (I64,),
                 S.Body((S.Stm((t_outer,), S.AtomExp(C(10, I64))), S.Stm((r,), loop)), (r,)))
    assert run1(prog(f)) == 30


def test_long_loops():
    def main(b, n):
        return for_loop(b, n, [I64], [C(0, I64)], lambda bb, i, a: bb.bin("+", a, i))
    p = prog(fun("main", [("n", I64)], main))
    assert run1(p, np.int64(100000)) == 4999950000


def test_nested_loops():
    # loop a = 0 for i < n do loop a for j < i do a + j
    def main(b, n):
        def outer(bb, i, a):
            return for_loop(bb, i, [I64], [a], lambda b2, j, x: b2.bin("+", x, j))
        return for_loop(b, n, [I64], [C(0, I64)], outer)
    p = prog(fun("main", [("n", I64)], main))
    assert run1(p, np.int64(10)) == sum(j for i in range(10) for j in range(i))


# ---- loops inside lambdas: vectorised where possible, per element otherwise; the same results ----

def map_prog(elem_t, f, extra=()):
    """main xs = map f xs"""
    def main(b, xs, *rest):
        return b.let(S.Map(N, lam([elem_t], lambda bb, x: f(bb, x, *rest)), (xs,)))
    return prog(fun("main", [("xs", A(elem_t, "n"))] + list(extra), main, ("n",)))


def both_ways(monkeypatch, p, *args, vectorised):
    calls = strategy_calls(monkeypatch)
    r1 = run1(p, *args)
    outer = next(s.exp.lam for s in p.funs[0].body.stms if isinstance(s.exp, S.Map))
    assert any(c is outer for c in calls) == vectorised
    unvectorised(monkeypatch)
    r2 = run1(p, *args)
    monkeypatch.undo()
    for a, b in zip(r1 if isinstance(r1, tuple) else (r1,), r2 if isinstance(r2, tuple) else (r2,)):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    return r1


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
    assert e.message == "Division by zero." and e.loc == locs[0]


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


# ---- slices ----

def slice_prog():
    """main xs i j s k = xs[i:j:s], with k the size the IR claims for it."""
    def main(b, xs, i, j, s, k):
        return b.let(S.Index(xs, (S.DimSlice(i, j, s, k),)))
    return prog(fun("main", [("xs", A(I64, "n")), ("i", I64), ("j", I64), ("s", I64), ("k", I64)], main, ("n",)))


SLICES = [  # on [0, 10, 20, 30, 40]: (i, j, s) -> elements (by index), or None for an error
    ((1, 3, 1), [1, 2]), ((0, 5, 1), [0, 1, 2, 3, 4]), ((0, 5, 2), [0, 2, 4]), ((1, 5, 3), [1, 4]),
    ((0, 7, 10), [0]),  # j beyond the end, but every element is in bounds
    ((4, -1, -1), [4, 3, 2, 1, 0]), ((4, 0, -2), [4, 2]), ((3, 0, -1), [3, 2, 1]), ((4, -1, -3), [4, 1]),
    ((2, 2, 1), []), ((5, 5, 1), []), ((7, 7, 1), []), ((2, 2, -1), []), ((-3, -3, 1), []),
    ((3, 2, 2), []),  # (2 - 3 + 2 - 1) quot 2 == 0: empty, as in Futhark
    ((0, 6, 1), None), ((-1, 2, 1), None), ((3, 1, 1), None), ((1, 3, -1), None),
    ((5, 2, -1), None),  # starts at index 5 (Futhark's own check lets this one through)
    ((4, -2, -1), None), ((4, -2, -10), None),  # j below -1
    ((0, 1, 0), None), ((2, 2, 0), None),  # a zero stride is never valid
    ((0, 10, 2), None), ((4, -3, -2), None),
]


@pytest.mark.parametrize("ijs, want", SLICES, ids=[str(c[0]) for c in SLICES])
def test_slice_table(ijs, want):
    i, j, s = ijs
    xs = np.arange(5) * 10
    k = len(range(i, j, s)) if s else 0
    p = slice_prog()
    if want is not None:
        r = run1(p, xs, *map(np.int64, (i, j, s, k)))
        assert r.tolist() == [10 * x for x in want] and r.dtype == np.int64
    else:
        e = error_of(p, xs, *map(np.int64, (i, j, s, k)))
        # the stride is a variable here, so the message always shows it
        assert e.message == f"Index [{i}:{j}:{s}] out of bounds for array of shape [5]."
        assert e.loc == p.funs[0].body.stms[0].loc


def test_slice_length_must_match_the_size_atom():
    e = error_of(slice_prog(), np.arange(5), *map(np.int64, (1, 3, 1, 3)))
    assert e.message == "Index [1:3:1] out of bounds for array of shape [5]."


def test_slice_message_leaves_out_a_constant_unit_stride():
    def main(b, xs, i, j):
        return b.let(S.Index(xs, (sl(b, i, j),)))
    p = prog(fun("main", [("xs", A(I64, "n")), ("i", I64), ("j", I64)], main, ("n",)))
    assert run1(p, np.arange(5), np.int64(1), np.int64(4)).tolist() == [1, 2, 3]
    e = error_of(p, np.arange(3), np.int64(1), np.int64(5))
    assert e.message == "Index [1:5] out of bounds for array of shape [3]."
    assert e.loc == p.funs[0].body.stms[-1].loc


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 6), st.integers(-8, 8), st.integers(-8, 8), st.integers(-4, 4))
def test_slices_agree_with_python_ranges(w, i, j, s):
    """Every accepted slice holds exactly the elements xs[k] for k in range(i, j, s), all in bounds, and
    every nonempty range of in-bounds indices that goes the right way is accepted."""
    xs = np.arange(w) + 100
    ks = list(range(i, j, s)) if s else []
    p = slice_prog()
    try:
        r = run1(p, xs, *map(np.int64, (i, j, s, len(ks))))
    except InterpError as e:
        assert e.message.startswith(f"Index [{i}:{j}:{s}] out of bounds")
        assert s == 0 or any(not 0 <= k < w for k in ks) or not ks or (s > 0 and i < 0) or (s < 0 and j < -1)
        return
    assert s != 0 and all(0 <= k < w for k in ks)
    assert r.tolist() == [100 + k for k in ks]


def test_slices_of_2d_and_3d_arrays_with_fixed_indices():
    def main(b, x3, i):
        a = b.let(S.Index(x3, (sl(b, 1, 3), i)))  # x3[1:3, i]
        c = b.let(S.Index(x3, (i, sl(b, 3, -1, -2))))  # x3[i, 3:-1:-2]
        d = b.let(S.Index(x3, (sl(b, 2, -1, -1), sl(b, 0, 4, 3), C(1, I64))))  # x3[2:-1:-1, 0:4:3, 1]
        e = b.let(S.Index(x3, (C(0, I64), C(1, I64), sl(b, 1, 2))))
        return a, c, d, e
    p = prog(fun("main", [("x3", A(I32, "a", "b", "c")), ("i", I64)], main, ("a", "b", "c")))
    x3 = np.arange(3 * 4 * 2, dtype=np.int32).reshape(3, 4, 2)
    a, c, d, e = run1(p, x3, np.int64(2))
    assert np.array_equal(a, x3[1:3, 2]) and np.array_equal(c, x3[2, 3::-2])
    assert np.array_equal(d, x3[::-1, 0:4:3, 1]) and np.array_equal(e, x3[0, 1, 1:2])


def test_slices_in_a_map_are_vectorised(monkeypatch):
    # map (\i -> x3[1:3, i, ::-1]) is    and    map (\row -> row[3:0:-2]) xss
    def f(b, i, x3):
        return b.let(S.Index(x3, (sl(b, 1, 3), i, sl(b, 1, -1, -1))))
    p = map_prog(I64, f, [("x3", A(I32, "a", "b", 2))])
    x3 = np.arange(3 * 4 * 2, dtype=np.int32).reshape(3, 4, 2)
    idx = np.array([3, 0, 2, 2])
    r = both_ways(monkeypatch, p, idx, x3, vectorised=True)
    assert np.array_equal(r, np.stack([x3[1:3, i, ::-1] for i in idx]))

    def g(b, row):
        return b.let(S.Index(row, (sl(b, 3, 0, -2),)))
    p = prog(fun("main", [("xss", A(I32, "n", "m"))],
                 lambda b, xss: b.let(S.Map(N, lam([A(I32, "m")], g), (xss,))), ("n", "m")))
    xss = np.arange(15, dtype=np.int32).reshape(3, 5)
    assert np.array_equal(both_ways(monkeypatch, p, xss, vectorised=True), xss[:, 3:0:-2])
    e = error_of(p, np.zeros((2, 3), np.int32))
    assert e.message == "Index [3:0:-2] out of bounds for array of shape [3]."


def test_slice_whose_bounds_depend_on_the_element_runs_per_element(monkeypatch):
    # map (\i -> xs[i:i+2]) is
    def f(b, i, xs):
        j = b.bin("+", i, C(2, I64))
        return b.let(S.Index(xs, (S.DimSlice(i, j, C(1, I64), C(2, I64)),)))
    p = map_prog(I64, f, [("ys", A(F32, "m"))])
    xs = np.arange(6, dtype=np.float32)
    r = both_ways(monkeypatch, p, np.array([4, 0, 2]), xs, vectorised=False)
    assert r.tolist() == [[4, 5], [0, 1], [2, 3]]
    e = error_of(p, np.array([0, 5]), xs)
    assert e.message == "Index [5:7] out of bounds for array of shape [6]."


def test_index_of_a_scalar_and_too_many_indices():
    p = prog(fun("main", [("xs", A(I64, "n"))],
                 lambda b, xs: b.let(S.Index(xs, (C(0, I64), sl(b, 0, 1)))), ("n",)))
    assert error_of(p, np.arange(3)).message == "Too many indices (2) for array of shape [3]."


# ---- updates ----

def test_updates():
    def main(b, xss, i, j):
        a = b.let(S.Update(xss, (i, j), C(-1.0, F32)))
        row = b.let(S.Replicate(M, C(7.0, F32)))
        c = b.let(S.Update(xss, (j,), row))
        return a, c
    p = prog(fun("main", [("xss", A(F32, "n", "m")), ("i", I64), ("j", I64)], main, ("n", "m")))
    xss = np.arange(6, dtype=np.float32).reshape(2, 3)
    a, c = run1(p, xss, np.int64(1), np.int64(0))
    assert a.tolist() == [[0, 1, 2], [-1, 4, 5]] and c.tolist() == [[7, 7, 7], [3, 4, 5]]
    assert xss.tolist() == [[0, 1, 2], [3, 4, 5]]  # copies
    e = error_of(p, xss, np.int64(1), np.int64(3))
    assert e.message == "Index [1, 3] out of bounds for array of shape [2][3]."
    assert e.loc == p.funs[0].body.stms[0].loc
    e = error_of(p, xss, np.int64(0), np.int64(-1))
    assert e.message == "Index [0, -1] out of bounds for array of shape [2][3]."


def test_update_value_must_have_the_row_shape():
    def main(b, xss, ys):
        return b.let(S.Update(xss, (C(0, I64),), ys))
    p = prog(fun("main", [("xss", A(I32, "n", "m")), ("ys", A(I32, "k"))], main, ("n", "m", "k")))
    assert run1(p, np.zeros((2, 3), np.int32), np.ones(3, np.int32)).tolist() == [[1, 1, 1], [0, 0, 0]]
    e = error_of(p, np.zeros((2, 3), np.int32), np.ones(4, np.int32))
    assert e.message == "Size mismatch in update: the new value has shape [4], but xss has rows of shape [3] " \
                        "(shape [2][3])."
    p1 = prog(fun("main", [("xs", A(I32, "n")), ("i", I64)],
                  lambda b, xs, i: b.let(S.Update(xs, (i,), C(1, I32))), ("n",)))
    assert error_of(p1, np.zeros(3, np.int32), np.int64(3)).message == \
        "Index [3] out of bounds for array of shape [3]."


# ---- array literals, concat, rotate, reshape ----

def test_array_literals():
    def main(b, x, ys):
        a = b.let(S.ArrayLit((x, C(2, I32), x), A(I32, 3)))
        c = b.let(S.ArrayLit((ys, ys), A(I32, 2, "n")))
        e = b.let(S.ArrayLit((), A(I32, 0, "n")))
        return a, c, e
    p = prog(fun("main", [("x", I32), ("ys", A(I32, "n"))], main, ("n",)))
    a, c, e = run1(p, np.int32(5), np.arange(2, dtype=np.int32))
    assert a.tolist() == [5, 2, 5] and a.dtype == np.int32
    assert c.tolist() == [[0, 1], [0, 1]] and e.shape == (0, 2) and e.dtype == np.int32


def test_array_literal_of_rows_of_different_shapes():
    def main(b, xs, ys):
        return b.let(S.ArrayLit((xs, ys), A(F32, 2, "n")))
    p = prog(fun("main", [("xs", A(F32, "n")), ("ys", A(F32, "m"))], main, ("n", "m")))
    e = error_of(p, np.zeros(2, np.float32), np.zeros(3, np.float32))
    assert e.message == "The elements of an array literal have different types: [2]f32 and [3]f32."
    assert e.loc == p.funs[0].body.stms[0].loc


def test_concat():
    def main(b, xs, ys):
        s = b.bin("+", N, M)
        a = b.let(S.Concat((xs, ys), s))
        s3 = b.bin("+", s, N)
        c = b.let(S.Concat((xs, ys, xs), s3))
        return a, c
    p = prog(fun("main", [("xs", A(I32, "n", 2)), ("ys", A(I32, "m", 2))], main, ("n", "m")))
    xs, ys = np.arange(4, dtype=np.int32).reshape(2, 2), np.zeros((0, 2), np.int32)
    a, c = run1(p, xs, ys)
    assert np.array_equal(a, xs) and np.array_equal(c, np.concatenate([xs, xs]))
    p2 = prog(fun("main", [("xs", A(I32, "n")), ("ys", A(I32, "m"))],
                  lambda b, xs, ys: b.let(S.Concat((xs, ys), C(4, I64))), ("n", "m")))
    assert run1(p2, np.arange(1, dtype=np.int32), np.arange(3, dtype=np.int32)).tolist() == [0, 0, 1, 2]
    e = error_of(p2, np.arange(2, dtype=np.int32), np.arange(3, dtype=np.int32))
    assert e.message == "Size mismatch in concat: arrays of lengths 2 and 3 give 5 elements, but the result's " \
                        "size is 4."


@pytest.mark.parametrize("r", [-11, -5, -1, 0, 1, 3, 5, 12, 10 ** 15 + 2, -(2 ** 63)])
def test_rotate(r):
    def main(b, k, xs, xss):
        return b.let(S.Rotate(k, xs)), b.let(S.Rotate(k, xss))
    p = prog(fun("main", [("k", I64), ("xs", A(I32, "n")), ("xss", A(I32, "m", 2))], main, ("n", "m")))
    xs = np.arange(5, dtype=np.int32)
    xss = np.arange(6, dtype=np.int32).reshape(3, 2)
    a, c = run1(p, np.int64(r), xs, xss)
    assert a.tolist() == [int(xs[(i + r) % 5]) for i in range(5)]
    assert np.array_equal(c, np.roll(xss, -(r % 3), axis=0))
    a, c = run1(p, np.int64(r), np.zeros(0, np.int32), np.zeros((0, 2), np.int32))
    assert a.shape == (0,) and c.shape == (0, 2)


def test_reshape():
    def main(b, xss, k):
        flat = b.let(S.Reshape((b.bin("*", N, M),), xss))
        back = b.let(S.Reshape((k, b.bin("/", b.bin("*", N, M), k)), flat))
        return flat, back
    p = prog(fun("main", [("xss", A(F32, "n", "m")), ("k", I64)], main, ("n", "m")))
    xss = np.arange(6, dtype=np.float32).reshape(2, 3)
    flat, back = run1(p, xss, np.int64(3))
    assert flat.tolist() == [0, 1, 2, 3, 4, 5] and back.shape == (3, 2) and np.array_equal(back.ravel(), flat)
    e = error_of(p, xss, np.int64(4))
    assert e.message == "Cannot reshape array of shape [6] to array of shape [4][1]."
    assert e.loc == p.funs[0].body.stms[-1].loc


def test_reshape_to_negative_sizes():
    p = prog(fun("main", [("xs", A(I32, "n"))],
                 lambda b, xs: b.let(S.Reshape((C(-2, I64), C(-3, I64)), xs)), ("n",)))
    assert error_of(p, np.zeros(6, np.int32)).message == \
        "Cannot reshape array of shape [6] to array of shape [-2][-3]."


# ---- scatter ----

def scatter_prog(t, row=()):
    return prog(fun("main", [("dest", A(t, "n", *row)), ("is", A(I64, "k")), ("vs", A(t, "m", *row))],
                    lambda b, d, i, v: b.let(S.Scatter(d, i, v)), ("n", "k", "m")))


def test_scatter_ignores_out_of_bounds_writes_and_the_last_duplicate_wins():
    dest = np.zeros(5, np.int32)
    r = run1(scatter_prog(I32), dest, np.array([-1, 4, 5, 1, 4, 2 ** 62, 1]),
             np.array([10, 20, 30, 40, 50, 60, 70], np.int32))
    assert r.tolist() == [0, 70, 0, 0, 50] and dest.tolist() == [0] * 5
    assert run1(scatter_prog(I32), dest, np.zeros(0, np.int64), np.zeros(0, np.int32)).tolist() == [0] * 5


def test_scatter_rows():
    dest = np.zeros((3, 2), np.float32)
    r = run1(scatter_prog(F32, (2,)), dest, np.array([2, 0, 2]), np.arange(6, dtype=np.float32).reshape(3, 2))
    assert r.tolist() == [[2, 3], [0, 0], [4, 5]]


def test_scatter_lengths_must_agree():
    e = error_of(scatter_prog(I32), np.zeros(5, np.int32), np.arange(3), np.zeros(2, np.int32))
    assert e.message == "Size mismatch in scatter: 3 indices (is) but 2 values (vs)."


# ---- filter ----

def filter_prog(vectorised=True):
    # filter (\(x, y) -> x % 3 == 0 && y > 0) (zip xs yss)    (yss's rows: their first element)
    def pred(b, x, ys):
        if not vectorised:
            b.let(S.Iota(C(0, I64), I64))
        y = b.let(S.Index(ys, (C(0, I64),)))
        return b.bin("&&", b.bin("==", b.bin("%", x, C(3, I64)), C(0, I64)), b.bin(">", y, C(0.0, F32)))

    def main(b, xs, yss):
        return b.let(S.Filter(N, lam([I64, A(F32, "m")], pred), (xs, yss), "k"))
    return prog(fun("main", [("xs", A(I64, "n")), ("yss", A(F32, "n", "m"))], main, ("n", "m")))


@pytest.mark.parametrize("vectorised", [True, False])
def test_filter(vectorised):
    xs = np.arange(7)
    yss = np.stack([np.array([1, -1, 1, 1, 1, 1, 1], np.float32), np.zeros(7, np.float32)], axis=1)
    k, a, c = run1(filter_prog(vectorised), xs, yss)
    assert k == 3 and type(k) is np.int64 and a.tolist() == [0, 3, 6] and c.tolist() == [[1, 0]] * 3
    k, a, c = run1(filter_prog(vectorised), xs, -yss)  # nothing passes
    assert k == 0 and a.shape == (0,) and a.dtype == np.int64 and c.shape == (0, 2) and c.dtype == np.float32
    k, a, c = run1(filter_prog(vectorised), np.zeros(0, np.int64), np.zeros((0, 4), np.float32))  # empty
    assert k == 0 and a.shape == (0,) and c.shape == (0, 4)


def test_filter_then_use_its_count():
    # let (k, ys) = filter (> 2) xs in reduce (+) 0 ys + k
    def main(b, xs):
        k, ys = b.let(S.Filter(N, lam([I32], lambda bb, x: bb.bin(">", x, C(2, I32))), (xs,), "k"))
        s = b.let(S.Reduce(S.Var(k.name, I64), op_lam("+", I32), (C(0, I32),), (ys,)))
        return k, s
    k, s = run1(prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), np.arange(6, dtype=np.int32))
    assert (k, s) == (3, 12)


# ---- run-time errors: messages and locations ----

class Where:
    """Remembers the location of the statement that is meant to fail."""

    def __init__(self):
        self.loc = None

    def __call__(self, b, value):
        self.loc = b.last_loc
        return value


def err_loop_outer_size(w):
    # loop (xs: [n]i32) = xs for i < 2 do concat xs xs      -- n is the entry's size: it may not change
    def main(b, xs):
        def body(bb, i, ys):
            return bb.let(S.Concat((ys, ys), bb.bin("+", N, N)))
        return w(b, for_loop(b, C(2, I64), [A(I32, "n")], [xs], body))
    return prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), [np.zeros(3, np.int32)]


def err_loop_size_param_conflict(w):
    # loop (xs: [k]i32, ys: [k]i32) = (xs, ys) for i < 1 do (xs, ys)   with xs, ys of lengths 2 and 3
    def main(b, xs, ys):
        return w(b, for_loop(b, C(1, I64), [A(I32, "k"), A(I32, "k")], [xs, ys],
                             lambda bb, i, a, c: (a, c), ("k",)))
    return (prog(fun("main", [("xs", A(I32, "n")), ("ys", A(I32, "m"))], main, ("n", "m"))),
            [np.zeros(2, np.int32), np.zeros(3, np.int32)])


def err_loop_body_type(w):
    def main(b):
        return w(b, for_loop(b, C(3, I64), [I32], [C(0, I32)], lambda bb, i, a: bb.prim("f32.i32", a)))
    return prog(fun("main", [], main)), []


def err_index_in_loop(w):
    # loop s = 0 for i < 4 do s + xs[i]    on 3 elements
    def main(b, xs):
        def body(bb, i, s):
            x = w(bb, bb.let(S.Index(xs, (i,))))
            return bb.bin("+", s, x)
        return for_loop(b, C(4, I64), [I32], [C(0, I32)], body)
    return prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), [np.arange(3, dtype=np.int32)]


def err_update_in_while(w):
    # loop (xs, i) = (xs, 0) while i < 5 do (xs with [i] = 1, i + 1)   on 3 elements
    def main(b, xs):
        def body(bb, ys, i):
            return w(bb, bb.let(S.Update(ys, (i,), C(1, I32)))), bb.bin("+", i, C(1, I64))
        return while_loop(b, [A(I32, "n"), I64], [xs, C(0, I64)],
                          lambda cb, ys, i: cb.bin("<", i, C(5, I64)), body)[0]
    return prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), [np.zeros(3, np.int32)]


def err_slice(w):
    def main(b, xs):
        return w(b, b.let(S.Index(xs, (sl(b, 1, 5),))))
    return prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), [np.zeros(3, np.int32)]


def err_zero_stride(w):
    def main(b, xs):
        return w(b, b.let(S.Index(xs, (S.DimSlice(C(0, I64), C(1, I64), C(0, I64), C(1, I64)),))))
    return prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), [np.zeros(3, np.int32)]


def err_map2(w):
    def main(b, xs, ys):
        return w(b, b.let(S.Map(N, lam([F32, F32], lambda bb, x, y: bb.bin("+", x, y)), (xs, ys))))
    return (prog(fun("main", [("xs", A(F32, "n")), ("ys", A(F32, "m"))], main, ("n", "m"))),
            [np.zeros(3, np.float32), np.zeros(4, np.float32)])


def err_replicate_huge(w):
    def main(b, k):
        return w(b, b.let(S.Replicate(k, C(0.0, F32))))
    return prog(fun("main", [("k", I64)], main)), [np.int64(2 ** 62)]


def err_iota_huge(w):
    def main(b, k):
        return w(b, b.let(S.Iota(k, I64)))
    return prog(fun("main", [("k", I64)], main)), [np.int64(10 ** 12)]


def err_division_in_loop_in_map(w):
    def f(b, x):
        return for_loop(b, C(2, I32), [I32], [x], lambda bb, i, a: w(bb, bb.bin("%", a, i)))
    return map_prog(I32, f), [np.arange(3, dtype=np.int32)]


def err_filter_in_map(w):
    # map (\x -> filter (< x) xs) xs: rows of different lengths
    def f(b, x, ys):
        return b.let(S.Filter(N, lam([I32], lambda bb, y: bb.bin("<", y, x)), (ys,), "k"))[1]

    def main(b, xs):
        return w(b, b.let(S.Map(N, lam([I32], lambda bb, x: f(bb, x, xs)), (xs,))))
    return prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), [np.arange(3, dtype=np.int32)]



def err_reshape(w):
    def main(b, xs):
        return w(b, b.let(S.Reshape((C(4, I64), C(2, I64)), xs)))
    return prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), [np.zeros(6, np.int32)]


def err_array_literal(w):
    def main(b, xs, ys):
        return w(b, b.let(S.ArrayLit((xs, ys, xs), A(I32, 3, "n"))))
    return (prog(fun("main", [("xs", A(I32, "n")), ("ys", A(I32, "m"))], main, ("n", "m"))),
            [np.zeros(2, np.int32), np.zeros(1, np.int32)])


def err_concat_in_loop(w):
    # loop (xs: [k]i32) = xs for i < 2 do concat@(k + 1) xs xs     -- the size the IR claims is wrong
    def main(b, xs):
        def body(bb, i, ys):
            return w(bb, bb.let(S.Concat((ys, ys), bb.bin("+", S.Var("k", I64), C(1, I64)))))
        return for_loop(b, C(2, I64), [A(I32, "k")], [xs], body, ("k",))
    return prog(fun("main", [("xs", A(I32, "n"))], main, ("n",))), [np.zeros(3, np.int32)]


def err_scatter(w):
    def main(b, d, i, v):
        return w(b, b.let(S.Scatter(d, i, v)))
    return (prog(fun("main", [("d", A(F32, "n", 2)), ("i", A(I64, "k")), ("v", A(F32, "k", 3))], main,
                     ("n", "k"))), [np.zeros((4, 2), np.float32), np.arange(2), np.zeros((2, 3), np.float32)])

ERRORS = [
    (err_loop_outer_size, "Size mismatch in loop: parameter lp_* has type [n]i32, with n = 3, but iteration 0 "
                          "gives it a value with n = 6 (shape [6])."),
    (err_loop_size_param_conflict, "Size mismatch in loop: size k is 2 (from parameter lp_*), but parameter "
                                   "lp_* has k = 3 (the initial value)."),
    (err_loop_body_type, "Loop parameter lp_* has type i32, but iteration 0 gives it a value of type f32."),
    (err_index_in_loop, "Index [3] out of bounds for array of shape [3]."),
    (err_update_in_while, "Index [3] out of bounds for array of shape [3]."),
    (err_slice, "Index [1:5] out of bounds for array of shape [3]."),
    (err_zero_stride, "Index [0:1:0] out of bounds for array of shape [3]."),
    (err_map2, "Size mismatch in map: its width is 3, but ys has type [4]f32."),
    (err_replicate_huge, "Out of memory: replicate would make an array of shape [4611686018427387904] "
                         "(18446744073709551616 bytes; the interpreter's limit is 17179869184)."),
    (err_iota_huge, "Out of memory: iota would make an array of shape [1000000000000] (8000000000000 bytes; "
                    "the interpreter's limit is 17179869184)."),
    (err_division_in_loop_in_map, "Division by zero."),
    (err_filter_in_map, "The lambda of a map returned arrays of different shapes: [0]i32, [1]i32, [2]i32."),
    (err_reshape, "Cannot reshape array of shape [6] to array of shape [4][2]."),
    (err_array_literal, "The elements of an array literal have different types: [1]i32 and [2]i32."),
    (err_concat_in_loop, "Size mismatch in concat: arrays of lengths 3 and 3 give 6 elements, but the result's "
                         "size is 4."),
    (err_scatter, "Size mismatch in scatter: the values v, of type [2][3]f32, do not fit the rows of d, of type "
                  "[4][2]f32."),
]


@pytest.mark.parametrize("build, message", ERRORS, ids=[f.__name__[4:] for f, _ in ERRORS])
def test_runtime_errors(build, message):
    w = Where()
    p, args = build(w)
    e = error_of(p, *args)
    assert re.fullmatch(re.escape(message).replace(re.escape("lp_*"), r"lp_\d+"), e.message), e.message
    assert e.loc is not None and e.loc == w.loc
    assert str(e) == f"{FILE}:{w.loc.line}:{w.loc.col}: error: {e.message}"


def test_python_exceptions_become_interp_errors(monkeypatch):
    def boom(self, e, env, loc):
        raise IndexError("index 7 is out of bounds for axis 0 with size 3")
    monkeypatch.setattr(_Interp, "e_rotate", boom)
    w = Where()
    p = prog(fun("main", [("xs", A(I32, "n"))], lambda b, xs: w(b, b.let(S.Rotate(C(1, I64), xs))), ("n",)))
    p = S.Program(p.funs, FILE)
    e = error_of(p, np.zeros(3, np.int32))
    assert e.message == "Invalid operation (IndexError: index 7 is out of bounds for axis 0 with size 3)."
    assert e.loc == w.loc


def test_memory_error_becomes_an_interp_error(monkeypatch):
    def boom(self, e, env, loc):
        raise MemoryError()
    monkeypatch.setattr(_Interp, "e_concat", boom)
    w = Where()
    p = prog(fun("main", [("xs", A(I32, "n"))],
                 lambda b, xs: w(b, b.let(S.Concat((xs, xs), b.bin("+", N, N)))), ("n",)))
    e = error_of(p, np.zeros(3, np.int32))
    assert e.message == "Out of memory." and e.loc == w.loc


def test_unbounded_recursion_is_an_error_not_a_crash():
    # f x = if x == 0 then 0 else f (x - 1) + 1
    w = Where()

    def body(b, x):
        c = b.bin("==", x, C(0, I64))
        eb = B()
        r = w(eb, eb.let(S.Apply("f", (eb.bin("-", x, C(1, I64)),), (I64,))))
        return b.let(S.If(c, B().body(C(0, I64)), eb.body(eb.bin("+", r, C(1, I64))), (I64,)))
    p = prog(fun("f", [("x", I64)], body))
    assert run_entry(p, "f", [np.int64(500)]) == (500,)
    e = error_of(p, np.int64(10 ** 6), entry="f")
    # reported by one of f's statements (the innermost one that still had room to report it)
    assert e.message == "Evaluation nests too deeply (recursion)."
    assert e.loc in {s.loc for s in p.funs[0].body.stms} | {s.loc for s in p.funs[0].body.stms[-1].exp.else_.stms}
    assert sys.getrecursionlimit() < 20000  # restored


def test_entry_arguments_are_still_checked():
    def main(b, xs):
        return for_loop(b, C(1, I64), [A(I32, "n")], [xs], lambda bb, i, ys: ys)
    p = prog(fun("main", [("xs", A(I32, "n"))], main, ("n",)))
    with pytest.raises(InterpError, match=r"Expected argument of type \[\]i32, got \[2\]\[2\]i32"):
        run1(p, np.zeros((2, 2), np.int32))
    with pytest.raises(InterpError, match=r"Expected argument of type \[\]i32, got \[3\]i64"):
        run1(p, np.zeros(3, np.int64))
    with pytest.raises(InterpError, match=r"takes 1 arguments, but was given 2"):
        run1(p, np.zeros(3, np.int32), np.zeros(3, np.int32))


def test_lambda_parameters_are_checked_against_the_rows():
    # map (\(r: [3]i32) -> r[0]) xss    and    map (\(r: [m]i32) -> r[0]) xss with m = 2    on [n][4]i32
    def prog_for(row_t, extra=()):
        def main(b, xss, *rest):
            return b.let(S.Map(N, lam([row_t], lambda bb, r: bb.let(S.Index(r, (C(0, I64),)))), (xss,)))
        return prog(fun("main", [("xss", A(I32, "n", "k"))] + list(extra), main, ("n", "k")))
    xss = np.zeros((2, 4), np.int32)
    assert run1(prog_for(A(I32, 4)), xss).tolist() == [0, 0]
    e = error_of(prog_for(A(I32, 3)), xss)
    assert e.message.startswith("Size mismatch in map: the lambda's parameter p_") and \
        e.message.endswith(" has type [3]i32, but gets values of shape [4].")
    e = error_of(prog_for(A(I32, "m"), [("ys", A(I32, "m"))]), xss, np.zeros(2, np.int32))
    assert e.message.endswith(" has type [m]i32, with m = 2, but gets values of shape [4].")
    e = error_of(prog_for(A(F32, "k")), xss)
    assert e.message.endswith(" of type [k]f32, but gets values of type [4]i32.")


# ---- through the front end ----

def parsed(src):
    """The checked source IR of a program (a front-end error fails the test)."""
    return source_program(src, FILE)


def run_src(src, entry, *args):
    res = run_entry(parsed(src), entry, list(args))
    return res[0] if len(res) == 1 else res


def src_error(src, entry, *args):
    p = parsed(src)
    with pytest.raises(InterpError) as e:
        run_entry(p, entry, list(args))
    return e.value


def test_source_loops():
    src = ("entry fib (n: i32) : i64 =\n"
           "  let (a, _) = loop (a, b) = (0i64, 1i64) for i < n do (b, a + b) in a\n"
           "entry collatz (x: i64) : i32 =\n"
           "  let (_, k) = loop (y, k) = (x, 0i32) while y != 1 do\n"
           "                (if y % 2 == 0 then y / 2 else 3 * y + 1, k + 1)\n"
           "  in k\n"
           "entry double (n: i32) : []i32 = loop xs = [1i32, 2i32] for i < n do concat xs xs\n"
           "entry squares (n: i64) : []i64 = loop xs = replicate n 0 for i < n do xs with [i] = i * i\n"
           "entry none (n: i64) : i64 = loop a = 5 for i < n do a * 2\n")
    assert run_src(src, "fib", np.int32(50)) == 12586269025
    assert run_src(src, "collatz", np.int64(27)) == collatz_ref(27)
    assert run_src(src, "collatz", np.int64(1)) == 0
    assert run_src(src, "double", np.int32(3)).tolist() == [1, 2] * 8
    assert run_src(src, "squares", np.int64(5)).tolist() == [0, 1, 4, 9, 16]
    assert run_src(src, "none", np.int64(-3)) == 5 and run_src(src, "none", np.int64(3)) == 40


def test_source_slices():
    src = ("entry sl [n] (xs: [n]i32) (i: i64) (j: i64) (s: i64) : []i32 = xs[i:j:s]\n"
           "entry parts [n] (xs: [n]i32) : ([]i32, []i32, []i32, []i32) = (xs[1:], xs[:2], xs[::-1], xs[::2])\n"
           "entry rows [n][m] (xss: [n][m]i32) : ([][]i32, []i32) = (xss[1:, ::-1], xss[:, 0])\n")
    xs = np.arange(6, dtype=np.int32)
    for i, j, s in ((1, 5, 2), (5, -1, -2), (4, 1, -1), (2, 2, 1), (0, 6, 1)):
        assert run_src(src, "sl", xs, *map(np.int64, (i, j, s))).tolist() == [int(xs[k]) for k in range(i, j, s)]
    a, b, c, d = run_src(src, "parts", xs)
    assert a.tolist() == [1, 2, 3, 4, 5] and b.tolist() == [0, 1] and c.tolist() == xs[::-1].tolist() \
        and d.tolist() == [0, 2, 4]
    xss = np.arange(6, dtype=np.int32).reshape(2, 3)
    r, c = run_src(src, "rows", xss)
    assert np.array_equal(r, xss[1:, ::-1]) and c.tolist() == [0, 3]
    e = src_error(src, "sl", np.arange(3, dtype=np.int32), *map(np.int64, (1, 5, 1)))
    assert e.message.startswith("Index [1:5") and e.message.endswith("] out of bounds for array of shape [3].")
    assert e.loc.line == 1


def test_source_arrays():
    src = ("entry lit (x: i32) : [3]i32 = [x, x + 1, 7]\n"
           "entry rows (x: i32) : [2][2]i32 = [[x, 1], [2, x]]\n"
           "entry cat [n][m] (xs: [n]f32) (ys: [m]f32) : []f32 = concat xs ys\n"
           "entry rot [n] (r: i64) (xs: [n]i32) : [n]i32 = rotate r xs\n"
           "entry flat [n][m] (xss: [n][m]i32) : []i32 = flatten xss\n"
           "entry sc [n][k] (dest: *[n]i32) (is: [k]i64) (vs: [k]i32) : [n]i32 = scatter dest is vs\n"
           "entry evens [n] (xs: [n]i32) : []i32 = filter (\\x -> x % 2 == 0) xs\n")
    assert run_src(src, "lit", np.int32(3)).tolist() == [3, 4, 7]
    assert run_src(src, "rows", np.int32(5)).tolist() == [[5, 1], [2, 5]]
    assert run_src(src, "cat", np.ones(2, np.float32), np.zeros(1, np.float32)).tolist() == [1, 1, 0]
    assert run_src(src, "rot", np.int64(-1), np.arange(4, dtype=np.int32)).tolist() == [3, 0, 1, 2]
    assert run_src(src, "flat", np.arange(6, dtype=np.int32).reshape(2, 3)).tolist() == list(range(6))
    assert run_src(src, "sc", np.zeros(3, np.int32), np.array([2, 9, -1, 2]), np.array([1, 2, 3, 4], np.int32)
                   ).tolist() == [0, 0, 4]
    assert run_src(src, "evens", np.arange(7, dtype=np.int32)).tolist() == [0, 2, 4, 6]
    assert run_src(src, "evens", np.array([1, 3], np.int32)).shape == (0,)


def test_source_errors_have_locations():
    src = ("entry walk [n] (xs: [n]i32) (steps: i64) : i32 =\n"
           "  loop acc = 0 for i < steps do\n"
           "    acc + xs[i]\n"
           "entry upd [n] (xs: *[n]i32) (i: i64) : [n]i32 =\n"
           "  xs with [i] = 0\n")
    assert run_src(src, "walk", np.arange(3, dtype=np.int32), np.int64(3)) == 3
    e = src_error(src, "walk", np.arange(3, dtype=np.int32), np.int64(4))
    assert e.message == "Index [3] out of bounds for array of shape [3]." and e.loc.line == 3
    e = src_error(src, "upd", np.arange(3, dtype=np.int32), np.int64(-1))
    assert e.message == "Index [-1] out of bounds for array of shape [3]." and e.loc.line == 5


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
