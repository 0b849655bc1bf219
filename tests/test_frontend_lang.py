"""The full source language of docs/language.md: what each construct lowers to, and (run by the reference
interpreter) what it computes."""


import numpy as np
import pytest

from incflat.ir import source as S
from incflat.ir.errors import CompileError
from incflat.ir.verify import verify_source
from incflat import pipeline
from incflat.pipeline import source_program
from incflat.ir.interp.interpreter import run_entry
from incflat.ir.types import F32, I32, I64, Array


def prog(src):
    return source_program(src, "t.fut")


def run(src, entry, *args):
    return run_entry(prog(src), entry, list(args))


def stms(body):
    """Every statement of a body, nested bodies included."""
    out = []
    for s in body.stms:
        out.append(s)
        e = s.exp
        for lam in (getattr(e, "lam", None),):
            if lam is not None:
                out += stms(lam.body)
        if isinstance(e, S.If):
            out += stms(e.then) + stms(e.else_)
        if isinstance(e, S.Loop):
            out += stms(e.body)
            if isinstance(e.form, S.WhileLoop):
                out += stms(e.form.cond)
    return out


def of(body, cls):
    return [s for s in stms(body) if isinstance(s.exp, cls)]


def i32s(*xs):
    return np.array(xs, dtype=np.int32)


def f32s(*xs):
    return np.array(xs, dtype=np.float32)


def same(got, want):
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        assert np.asarray(g).dtype == np.asarray(w).dtype, (g, w)


# ---------------------------------------------------------------- tuples

TUPLES = """
type pt = (f32, f32)
def add ((a, b): pt) ((c, d): pt): pt = (a + c, b + d)
entry main [n] (xs: [n]f32) (ys: [n]f32): (f32, f32, [n]f32, []f32) =
  let ps = zip xs ys
  let (sx, sy) = reduce add (0, 0) ps
  let sc = scan add (0, 0) ps
  let (fa, _) = unzip (filter (\\(a, b) -> a < b) ps)
  in (sx, sy, map (.0) sc, fa)
entry swap (p: (i32, (f32, bool))): ((bool, f32), i32) = ((p.1.1, p.1.0), p.0)
"""


def test_tuples_are_flattened():
    p = prog(TUPLES)
    add = p.fun("add")
    assert [v.type for v in add.params] == [F32, F32, F32, F32] and add.ret == (F32, F32)
    main = p.fun("main")
    assert len(main.params) == 2 and len(main.ret) == 4
    red = only(of(main.body, S.Reduce))
    assert len(red.exp.neutral) == 2 and len(red.exp.arrs) == 2 and len(red.pat) == 2
    assert len(red.exp.lam.params) == 4 and red.exp.lam.ret == (F32, F32)
    assert isinstance(only(red.exp.lam.body.stms).exp, S.Apply)  # add, with 4 arguments
    flt = only(of(main.body, S.Filter))
    assert len(flt.exp.arrs) == 2 and len(flt.pat) == 3 and flt.pat[0].name == flt.exp.size
    assert flt.pat[1].type == Array(F32, (flt.exp.size,))
    swap = p.fun("swap")
    assert len(swap.params) == 3 and len(swap.ret) == 3 and swap.body.stms == ()
    assert swap.body.result == (swap.params[2], swap.params[1], swap.params[0])


def test_tuples_compute():
    same(run(TUPLES, "main", f32s(1, 5, 3), f32s(2, 4, 6)),
         [np.float32(9), np.float32(12), f32s(1, 6, 9), f32s(1, 3)])
    same(run(TUPLES, "swap", np.int32(1), np.float32(2), np.True_), [np.True_, np.float32(2), np.int32(1)])


def test_zip_unzip_and_maps_of_tuples():
    src = """
entry main [n] (a: [n]i32) (b: [n]i32) (c: [n]i32): ([n]i32, [n]i32, [n]i32, i32) =
  let (x, y, z) = unzip3 (map (\\(p, q, r) -> (r, p, q)) (zip3 a b c))
  let w = map2 (\\(p, q) r -> p * q + r) (zip x y) z
  let t = (1, 2)
  in (x, y, w, t.0 + t.1 + (if (x[0], 1) == (c[0], 1) then 100 else 0))
"""
    same(run(src, "main", i32s(1, 2), i32s(3, 4), i32s(5, 6)),
         [i32s(5, 6), i32s(1, 2), i32s(8, 16), np.int32(103)])
    m = of(prog(src).fun("main").body, S.Map)[0]
    assert len(m.exp.arrs) == 3 and len(m.pat) == 3  # zip3 costs nothing


def test_records_are_flattened_in_field_order():
    """A record is one IR variable per leaf, its fields in Futhark's order (numeric names first, then by name),
    whatever order the program writes them in; an array of records is one array per field."""
    src = """
type pt = {y: f32, x: i32}
entry main [n] (p: pt) (ps: [n]{b: bool, a: i64}): ({z: f32, a: i32}, [n]{b: bool, a: i64}, i64) =
  let {x, y} = p
  let q = {z = y, a = x} with a = x + 1
  in (q, map (\\r -> r with a = r.a * 2) ps, (ps[0]).a)
"""
    main = prog(src).fun("main")
    assert [v.type for v in main.params[:2]] == [I32, F32]  # p.x, p.y
    assert [str(v.type.elem) for v in main.params[2:]] == ["i64", "bool"]  # ps: the field a, then b
    assert [str(t) for t in main.ret[:2]] == ["i32", "f32"]  # q.a, q.z
    m = only(of(main.body, S.Map))
    assert len(m.exp.arrs) == 2 and len(m.pat) == 2
    same(run(src, "main", np.int32(3), np.float32(2), np.array([5, 6], np.int64), np.array([True, False])),
         [np.int32(4), np.float32(2), np.array([10, 12], np.int64), np.array([True, False]), np.int64(5)])


# ---------------------------------------------------------------- loops

LOOPS = """
entry sum [n] (xs: [n]i32): (i32, i32, i32) =
  let s = loop acc = 0 for i < n do acc + xs[i]
  let u = loop acc = 0 for x in xs do acc + x
  let (a, b) = loop (a, b) = (0, 1) while a < 10 do (a + 1, b * 2)
  in (s + u, a, b)
entry grow (n: i64): []i64 = loop xs = [1i64] for i < n do xs ++ xs
entry prefix [n] (xs: [n]i32): [n]i32 =
  loop acc = replicate n 0 for k < n do
    let prev = if k == 0 then 0 else acc[k - 1]
    in acc with [k] = prev + xs[k]
entry same (n: i64): i64 = let x = 3 let y = 4 let (x, y) = loop (x, y) for i < n do (y, x) in x * 10 + y
"""


def test_loop_forms():
    p = prog(LOOPS)
    loops = of(p.fun("sum").body, S.Loop)
    assert [type(s.exp.form) for s in loops] == [S.ForLoop, S.ForLoop, S.WhileLoop]
    for_in = loops[1].exp
    # for x in xs: a loop over the index, with x = xs[i] first in the body
    first = for_in.body.stms[0]
    assert isinstance(first.exp, S.Index) and first.exp.idxs == (for_in.form.i,)
    assert for_in.form.bound == S.Var("n", I64) and for_in.form.i.type == I64
    assert loops[0].exp.form.i.type == I64 and loops[0].exp.size_params == ()
    assert len(loops[2].exp.params) == 2 and len(loops[2].pat) == 2
    grow = only(of(p.fun("grow").body, S.Loop))
    assert len(grow.exp.size_params) == 1  # the size changes from one iteration to the next
    k = grow.exp.size_params[0]
    assert grow.exp.params[0].type == Array(I64, (k,))
    assert grow.pat[0].type == I64 and grow.pat[1].type == Array(I64, (grow.pat[0].name,))
    assert p.fun("grow").ret == (Array(I64, (grow.pat[0].name,)),)
    assert only(of(p.fun("prefix").body, S.Loop)).exp.size_params == ()


def test_loops_compute():
    same(run(LOOPS, "sum", i32s(1, 2, 3)), [np.int32(12), np.int32(10), np.int32(1024)])
    same(run(LOOPS, "grow", np.int64(3)), [np.ones(8, dtype=np.int64)])
    same(run(LOOPS, "prefix", i32s(5, 6, 7)), [i32s(5, 11, 18)])
    same(run(LOOPS, "same", np.int64(3)), [np.int64(43)])


# ---------------------------------------------------------------- indexing, slices, updates, literals

ARRAYS = """
entry main (m: [][]i64) (i: i32): ([]i64, i64, [][]i64, []i64, [][]i64, []i64) =
  let a = m[:, 1]
  let b = m[1, 0] + m[0][1] + m[i, i]
  let c = copy m with [0, 1] = 42
  let d = flatten m
  let e = [[1, 2], [b, 4]]
  in (a, b, c, d[1:3] ++ d[::-1] ++ d[:1] ++ d[1::2], e, reverse (iota 3))
entry upd (xs: *[]f32) (x: f32): []f32 = let xs[0] = x let xs[1] = x * 2 in xs
"""


def test_arrays_compute():
    m = np.array([[1, 2], [3, 4]])
    same(run(ARRAYS, "main", m, np.int32(1)),
         [np.array([2, 4]), np.int64(9), np.array([[1, 42], [3, 4]]), np.array([2, 3, 4, 3, 2, 1, 1, 2, 4]),
          np.array([[1, 2], [9, 4]]), np.array([2, 1, 0])])
    same(run(ARRAYS, "upd", f32s(1, 2, 3), np.float32(5)), [f32s(5, 10, 3)])


def test_slices_and_indices_lower():
    p = prog(ARRAYS)
    main = p.fun("main")
    idx = [s.exp for s in of(main.body, S.Index)]
    col = idx[0]  # m[:, 1]
    assert isinstance(col.idxs[0], S.DimSlice) and col.idxs[1] == S.Const(1, I64)
    conv = [s for s in main.body.stms if isinstance(s.exp, S.PrimCall)]
    assert conv and conv[0].exp.fn == "i64.i32"  # an i32 index becomes i64
    upd = only(of(main.body, S.Update)).exp
    assert upd.idxs == (S.Const(0, I64), S.Const(1, I64)) and upd.value == S.Const(42, I64)
    lit = [s for s in of(main.body, S.ArrayLit)]
    assert lit[-1].pat[0].type == Array(I64, (2, 2))
    # d[1:3]: an unknown size (as in Futhark), bound before the slice
    sl = [i for i in idx if isinstance(i.idxs[0], S.DimSlice)][1].idxs[0]
    assert (sl.start, sl.end, sl.stride) == (S.Const(1, I64), S.Const(3, I64), S.Const(1, I64))
    assert isinstance(sl.size, S.Var)
    # d[:n] has the size n
    q = prog("def f [n] (xs: [n]i32) (k: i64): [k]i32 = xs[:k]").fun("f")
    s = only(q.body.stms).exp.idxs[0]
    assert s.size == S.Var("k", I64) and q.ret == (Array(I32, ("k",)),)


def test_filter_scatter_concat_rotate_reshape():
    src = """
entry main (n: i64): ([]i64, [][]i64, []i64, i64, []i64) =
  let xs = iota n
  let ys = filter (\\x -> x % 2 == 0) xs
  let zs = unflatten (flatten (replicate 2 xs))
  let w = scatter (replicate n 0) [0, 2, -1, 99] [10, 20, 30, 40]
  let r = rotate 1 xs
  in (ys, zs, w, i64.sum r + i64.maximum xs + i64.product [1, 2] + i64.minimum xs, concat ys [7])
"""
    same(run(src, "main", np.int64(5)),
         [np.array([0, 2, 4]), np.array([[0, 1, 2, 3, 4]] * 2), np.array([10, 0, 20, 0, 0]), np.int64(16),
          np.array([0, 2, 4, 7])])
    main = prog(src).fun("main")
    rs = of(main.body, S.Reshape)
    assert rs[0].pat[0].type.rank == 1 and rs[1].exp.shape == (S.Const(2, I64), S.Var("n", I64))
    cat = only(of(main.body, S.Concat))
    assert cat.exp.size.name in {s.pat[0].name for s in main.body.stms if isinstance(s.exp, S.BinOp)}


# ---------------------------------------------------------------- functions

def test_local_functions_lambdas_sections_pipes():
    src = """
def twice (x: i32): i32 = x * 2
entry main [n] (xs: [n]i32): ([n]i32, i32, [n]i32, [n]i32) =
  let inc y = y + 1
  let add = \\a b -> a + b
  let k = 3
  let scale (v: i32) : i32 = v * k
  let apply_twice f x = f (f x)
  in (xs |> map inc |> map (twice >-> scale) ,
      add 1 2 + apply_twice inc 0,
      map (2-) xs,
      map (add k) <| map (*2) xs)
"""
    expected = [i32s(12, 18), np.int32(5), i32s(1, 0), i32s(5, 7)]
    same(run(src, "main", i32s(1, 2)), expected)  # >-> is function composition
    same(run(src.replace("(twice >-> scale)", "(scale <-< twice)"), "main", i32s(1, 2)), expected)
    src = src.replace("(twice >-> scale)", "(\\x -> scale (twice x))")
    same(run(src, "main", i32s(1, 2)), expected)
    p = prog(src).fun("main")
    # local functions are inlined; top-level ones are called
    assert [s.exp.fn for s in of(p.body, S.Apply)] == ["twice"]


def test_local_functions_are_polymorphic_and_curried():
    src = """
entry main (x: i32) (y: f64): (i32, f64, i32) =
  let id' z = z
  let pair a b = (a, b)
  let p = pair x
  in (id' x, id' y, (p 5).0 + (\\a -> \\b -> a * b) 2 3)
"""
    same(run(src, "main", np.int32(4), np.float64(1.5)), [np.int32(4), np.float64(1.5), np.int32(10)])


def test_existential_results_are_inlined():
    src = """
def positives (xs: []i32): []i32 = filter (> 0) xs
entry main (xs: []i32): ([]i32, i64) = let ys = positives xs in (ys, length ys)
"""
    p = prog(src)
    assert not of(p.fun("main").body, S.Apply)  # inlined: the size is computed in the body
    assert of(p.fun("main").body, S.Filter)
    same(run(src, "main", i32s(1, -2, 3)), [i32s(1, 3), np.int64(2)])


def test_size_expressions_in_signatures():
    src = """
def g [n][m] (x: [n][m]i32): [n*m]i32 = flatten x
def h [n] (x: [n]i32): [n+1]i32 = x ++ [0]
entry f [k] (xs: [k]i32) (n: i64) (m: i64): ([n][m]i32, [][]i32, [k+1]i32, []i32) =
  let a = unflatten (xs :> [n*m]i32)
  let b = unflatten (g a)
  let c = map2 (+) (h xs) (h xs)
  let d = let [q] (ys: [q]i32) = filter (> 0) xs in map (+ i32.i64 q) ys
  in (a, b, c, d)
"""
    p = prog(src)
    assert [s.exp.fn for s in of(p.fun("f").body, S.Apply)] == ["g", "h", "h"]
    a = np.array([1, 2, 3, 4, 5, -6], dtype=np.int32)
    same(run(src, "f", a, np.int64(2), np.int64(3)),
         [a.reshape(2, 3), a.reshape(2, 3), np.append(a, np.int32(0)) * 2, i32s(6, 7, 8, 9, 10)])


def test_if_with_different_sizes_gets_an_existential_size():
    src = """
entry main (n: i64) (b: bool): []i64 = if b then iota n else iota (n + 1)
"""
    f = prog(src).fun("main")
    s = only(f.body.stms[-1:])
    assert isinstance(s.exp, S.If) and len(s.pat) == 2 and s.pat[0].type == I64
    assert s.pat[1].type == Array(I64, (s.pat[0].name,)) and s.exp.types[0] == I64
    same(run(src, "main", np.int64(2), False), [np.arange(3)])


def test_type_abbreviations_and_attributes():
    src = """
type vec = [3]f32
type mat [n][m] = [n][m]f32
type pair = (i32, vec)
#[inline]
def dot (a: vec) (b: vec): f32 = #[sequential] f32.sum (map2 (*) a b)
entry mv [n] (x: mat [n][3]) (v: vec): [n]f32 = map (\\(r: vec) -> dot r v) x
entry first (p: pair): f32 = #[unsafe] p.1[0] + f32.i32 p.0
"""
    p = prog(src)
    assert p.fun("mv").params[0].type == Array(F32, ("n", 3))
    same(run(src, "mv", np.ones((2, 3), dtype=np.float32), f32s(1, 2, 3)), [f32s(6, 6)])
    same(run(src, "first", np.int32(1), f32s(4, 5, 6)), [np.float32(5)])


def test_prelude_and_operators():
    src = """
entry main (x: i32) (y: f32): (i32, i32, bool, f32, i64, u8, bool, f32, f32, i8) =
  (x & 3 | 4 ^ 1, x << 2 >> 1, !(x > 3), f32.i32 x + f32.pi, i64.f32 3.7, u8.bool true,
   bool.i32 x && !(f32.isnan y) && f32.isinf f32.inf, f32.atan2 1 1 * 4, f32.max (f32.pow y 2) f32.lowest,
   i8.highest)
"""
    r = run(src, "main", np.int32(7), np.float32(3))
    assert r[:3] == (6, 14, False) and r[4:7] == (3, 1, True) and r[9] == 127
    assert abs(r[3] - 10.1415926) < 1e-5 and abs(r[7] - np.pi) < 1e-6 and r[8] == 9


def test_all_any_foldl_tabulate_take_drop():
    src = """
entry main [n] (xs: [n]i32): (bool, bool, i32, []i64, []i32, []i32, i32, i32, []i32) =
  (all (> 0) xs, any (> 2) xs, foldl (\\acc x -> acc * 10 + x) 0 xs, tabulate 3 (* 2), take 2 xs, drop 1 xs,
   head xs, last xs, tail xs)
"""
    same(run(src, "main", i32s(1, 2, 3)),
         [np.True_, np.True_, np.int32(123), np.array([0, 2, 4]), i32s(1, 2), i32s(2, 3), np.int32(1),
          np.int32(3), i32s(2, 3)])


def test_sizes_of_the_same_expression_are_equal():
    # iota (n+1) twice has one size, as in Futhark (size expressions are compared)
    f = prog("def f (n: i64): [n+1]i64 = map2 (+) (iota (n+1)) (iota (n+1))").fun("f")
    assert len([s for s in f.body.stms if isinstance(s.exp, S.BinOp)]) == 1


def test_uniqueness():
    ok = """
def set (xs: *[]i32) (i: i64): *[]i32 = xs with [i] = 0
entry main (xs: []i32): []i32 = let ys = copy xs let zs = set ys 0 in map (+1) zs
"""
    same(run(ok, "main", i32s(5, 6)), [i32s(1, 7)])
    with pytest.raises(CompileError, match="consumed"):
        prog(ok.replace("in map (+1) zs", "in map (+1) ys"))


def test_long_program_checks():
    # its time is in futhark_examples/bench_frontend.py
    src = "\n".join([f"""
def f{i} [n] (xs: [n]i32) (ys: [n]i32): (i32, []i32) =
  let (a, b) = unzip (map2 (\\x y -> (x + y, x * y)) xs ys)
  let s = loop acc = 0 for i < n do acc + a[i] * b[n - 1 - i]
  let t = xs[1:] ++ filter (> s) ys
  in (s + i32.sum (map2 (+) a b), t with [0] = 1)""" for i in range(20)])
    assert src.count("\n") >= 100
    assert len(pipeline.compile(src, "x.fut", until="check").funs) == 20


def only(xs):
    assert len(xs) == 1, xs
    return xs[0]


def test_grammar_has_no_conflicts():
    import io
    import logging

    from lark import Lark, logger

    from incflat.ir.frontend.parse import grammar_text
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    logger.addHandler(handler)
    old = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        Lark(grammar_text(), parser="lalr", lexer="contextual", maybe_placeholders=True, debug=True)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)
    assert "conflict" not in buf.getvalue().lower(), buf.getvalue()


def test_local_functions_with_size_parameters():
    src = """
entry main [n] (xs: [n]i32) (ys: []i32): ([n]i32, i32) =
  let f [m] (a: [m]i32) (b: [m]i32): [m]i32 = map2 (+) a b
  let g [k] (a: [k]i32): i32 = i32.i64 k
  in (f xs xs, g ys + g (filter (> 1) ys))
"""
    same(run(src, "main", i32s(1, 2, 3), i32s(1, 2, 3, 4)), [i32s(2, 4, 6), np.int32(7)])
    # ys's anonymous size takes the size f's annotation gives it there (xs's), checked at run time
    mixed = src.replace("f xs xs", "f xs ys")
    same(run(mixed, "main", i32s(1, 2, 3), i32s(1, 1, 1)), [i32s(2, 3, 4), np.int32(3)])
    with pytest.raises(CompileError, match=r"Cannot coerce an array of shape \[4\] to shape \[3\]") as info:
        run(mixed, "main", i32s(1, 2, 3), i32s(1, 2, 3, 4))
    assert info.value.loc.line == 3  # the annotation of b
    with pytest.raises(CompileError, match='parameter "b" of "f"'):  # a size both sides name is no anonymous one
        prog(src.replace("f xs xs", "f xs (xs ++ xs)"))


def test_anonymous_sizes_of_local_functions_are_inferred_from_uses():
    """As in Futhark, `[]` in the parameter type of a local function or lambda is a size its uses decide, not one
    the function must accept whatever it is: `objective`'s body makes it [3] (heston's `objective (x: []real)`);
    `sum_any` leaves it open, so each use has its own."""
    src = """
def sum3 (x: [3]f32): f32 = x[0] + x[1] + x[2]
def minimise [k] (start: [k]f32) (objective: [k]f32 -> f32): f32 = objective (map (* 2) start)
entry main (xs: [3]f32) (rows: [][3]f32): (f32, f32, []f32, f32) =
  let objective (x: []f32): f32 = sum3 x
  let sum_any (x: []f32) (y: []f32): f32 = f32.sum (map2 (+) x y)
  in (minimise xs objective, objective xs, map (\\(r: []f32) -> sum3 r) rows, sum_any [1, 2] [3, 4] + sum_any xs xs)
"""
    same(run(src, "main", f32s(1, 2, 3), np.array([[1, 0, 0], [0, 2, 0]], dtype=np.float32)),
         [np.float32(12), np.float32(6), f32s(1, 2), np.float32(22)])
    assert not of(prog(src).fun("main").body, S.AtomExp)  # every size is known: no coercion checked at run time


@pytest.mark.parametrize("body, ok", [
    ("let ys = copy xs let ys[0] = 1 in ys", True),
    ("let ys = copy xs let zs = ys with [0] = 1 in ys", False),     # ys used after the update
    ("let ys = copy xs let r = ys[0:2] let zs = ys with [0] = 1 in r", False),  # r aliases ys
    ("let ys = copy xs let r = map (+1) ys let zs = ys with [0] = 1 in r", True),  # map makes a fresh array
    ("let ys = copy xs in if true then ys with [0] = 1 else ys", True),  # one branch each
    ("let ys = copy xs let zs = if true then ys with [0] = 1 else ys in ys", False),
    # (as Futhark: an if's result aliases nothing a branch consumed; accelerate's nbody-bh octree.fut)
    ("let ys = copy xs let zs = if xs[0] > 0 then ys else (loop a = ys for i < 2 do a with [i] = 0) in zs", True),
    ("let ys = copy xs let zs = if xs[0] > 0 then ys else ys with [0] = 1 in zs with [1] = 2", True),
    ("let ys = copy xs let zs = if xs[0] > 0 then ys else ys with [0] = 1 in ys", False),
    ("loop acc = copy xs for i < 2 do acc with [i] = 0", True),
    ("let ys = copy xs in loop acc = ys for i < 2 do acc with [i] = 0", True),
    ("let ys = copy xs let zs = loop acc = ys for i < 2 do acc with [i] = 0 in ys", False),  # consumed by loop
    ("loop acc = xs for i < 2 do acc with [i] = 0", False),  # xs is not unique
    ("let ys = transpose (unflatten (copy xs :> [2*2]i32)) let ys[0, 0] = 1 in flatten ys :> [4]i32", True),
])
def test_consumption(body, ok):
    src = f"def f (xs: [4]i32): [4]i32 = {body}"
    if ok:
        prog(src)
    else:
        with pytest.raises(CompileError, match="consumed|not declared unique"):
            prog(src)


# ---------------------------------------------------------------- the IR is well scoped

def test_ir_is_well_scoped():
    import pathlib
    srcs = [v for k, v in globals().items() if k.isupper() and isinstance(v, str)]
    srcs += [p.read_text() for p in sorted((pathlib.Path(__file__).parent / "programs").glob("*.fut"))]
    for src in srcs:
        verify_source(prog(src))


def test_an_ascription_belongs_to_the_body_of_a_lambda_let_if_and_loop():
    # As in Futhark, a lambda, let, if or loop extends as far right as possible: `:` and `:>` included.
    src = """
entry main [n] (k: i64) (xss: [n][]i32) (x: i32) =
  let a = map (\\xs -> xs :> [k]i32) xss
  let b = map (\\y -> y + 1 : i32) (a[0])
  let c = let m = k in a[0] :> [m]i32
  let d = if x > 0 then b else a[0] :> [k]i32
  let e = loop s = 0 for i < k do s + a[0][i] : i32
  let f = \\y -> y : i32
  in (a, b, c, d, f e)
"""
    xss = np.array([[1, 2], [3, 4]], dtype=np.int32)
    same(run(src, "main", np.int64(2), xss, np.int32(1)),
         [xss, i32s(2, 3), i32s(1, 2), i32s(2, 3), np.int32(3)])
    with pytest.raises(CompileError, match=r"Cannot coerce an array of shape \[2\] to shape \[3\]"):
        run(src, "main", np.int64(3), xss, np.int32(1))


def test_an_update_takes_an_open_expression_as_its_value():
    src = ("entry main (xs: *[]i32) (c: bool) =\n"
           "  let n = length xs in xs with [n - 1] = if c then 1 else let k = 2 in k * 4\n")
    assert run(src, "main", np.array([5, 6], np.int32), True)[0].tolist() == [5, 1]
    assert run(src, "main", np.array([5, 6], np.int32), False)[0].tolist() == [5, 8]


def test_a_type_abbreviation_may_name_a_constant_size_and_type_tilde_is_an_abbreviation():
    src = ("def N = 3i64\ntype vec = [N]f32\ntype~ row = []i32\n"
           "def mk (x: f32) : vec = replicate N x\n"
           "entry main (x: f32) (xs: []i32) : (f32, i32) = let v: vec = mk x let r: row = filter (> 0) xs\n"
           "  in (f32.sum v, i32.sum r)\n")
    assert [float(v) for v in run(src, "main", np.float32(2), np.array([1, -2, 3], np.int32))] == [6.0, 4.0]


def test_a_suffixed_literal_wraps_an_unsuffixed_one_must_fit():
    """As Futhark (accelerate's fluid.fut: `255i8`): a literal with a type suffix is its bit pattern in that type;
    one whose type is inferred must fit it."""
    src = "entry main (x: i8) : (i8, u8, i8, i32, i16) = (255i8 + x, 256u8 + 3u8, -128i8, 4294967295i32, 0x18407i16)"
    assert [int(v) for v in run(src, "main", np.int8(1))] == [0, 3, -128, -1, 0x8407 - 0x10000]
    with pytest.raises(CompileError, match="The literal 255 is out of bounds for type i8"):
        prog("entry main (x: i8) : i8 = x + 255")


@pytest.mark.parametrize("f", ["def f [k] (a: [k]i32) (b: [k]i32): i32 = 0",
                               "def f 't [k] (a: [k]t) (b: [k]i32): i32 = 0"])
def test_an_anonymous_size_takes_a_later_arguments_size_checked_at_run_time(f):
    """A size parameter that an anonymous size (`[]`) and a later argument's own size both give takes the latter,
    and the former is checked at run time (as where the anonymous size comes later; pbbs' maximalMatching)."""
    src = f + "\nentry main [n] (xs: []i32) (ys: [n]i32): i32 = f xs ys"
    assert run(src, "main", np.array([1, 2], np.int32), np.array([3, 4], np.int32))[0] == 0
    with pytest.raises(Exception, match="coerce"):
        run(src, "main", np.array([1], np.int32), np.array([3, 4], np.int32))
