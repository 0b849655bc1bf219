"""ir/interp/interpreter.py's run-time errors on the newer IR forms (loops, slices, updates, literals, concat, reshape,
scatter, filter): their messages and the locations of the statements that fail; Python exceptions and
exhausted memory or recursion become located interpreter errors."""

import re
import sys

import numpy as np
import pytest

from incflat.ir import source as S
from incflat.ir.interp.interpreter import InterpError, _Interp, run_entry
from incflat.ir.types import F32, I32, I64
from test_interp import FILE, A, B, C, fun, lam, prog, run1
from test_interp_forms import N, error_of, for_loop, map_prog, sl, while_loop

pytestmark = pytest.mark.filterwarnings("error")  # no numpy warnings may leak out

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
    (err_division_in_loop_in_map, "division by zero"),
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
