"""ir/interp/interpreter.py on the newer IR forms: loops, slices, updates, array literals, concat, rotate, reshape,
scatter and filter (built by hand and through the front end); their run-time errors are in test_interp_errors.py."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from incflat.ir import source as S
from incflat.ir.interp.interpreter import InterpError, _Interp, run_entry
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
