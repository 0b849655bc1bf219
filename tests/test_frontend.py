"""Tests of the front end: parsing, type checking, literal typing and lowering to the source IR."""


import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from incflat.ir import source as S
from incflat.ir.errors import CompileError
from incflat.ir.frontend.parse import get_parser
from incflat.pipeline import source_program
from incflat.ir.source import Loc
from incflat.ir.types import BOOL, F32, F64, I32, I64, Array, Scalar

MATMUL = """\
-- Matrix multiplication.
-- ==
-- input { [[1f32,2f32],[3f32,4f32]] [[1f32,0f32],[0f32,1f32]] }
def dotprod [n] (xs: [n]f32) (ys: [n]f32): f32 =
  reduce (+) 0 (map2 (*) xs ys)

entry main [n][m][p] (xss: [n][m]f32) (yss: [m][p]f32): [n][p]f32 =
  map (\\xs -> map (\\ys -> reduce (+) 0f32 (map2 (*) xs ys)) (transpose yss)) xss
"""


def stm_of(body, cls):
    """The statements of `body` (not nested) whose expression is a `cls`."""
    return [s for s in body.stms if isinstance(s.exp, cls)]


def all_stms(body):
    """Every statement, nested bodies included."""
    out = []
    for s in body.stms:
        out.append(s)
        e = s.exp
        for lam in (getattr(e, "lam", None), getattr(e, "red", None), getattr(e, "map_lam", None)):
            if lam is not None:
                out += all_stms(lam.body)
        if isinstance(e, S.If):
            out += all_stms(e.then) + all_stms(e.else_)
    return out


def only(xs):
    assert len(xs) == 1, xs
    return xs[0]


def fun(src, name="main"):
    return source_program(src, "t.fut").fun(name)


def result_type(src, name="main"):
    return fun(src, name).ret[0]


# ---------------------------------------------------------------- matmul and friends

def test_matmul_types_and_structure():
    prog = source_program(MATMUL, "matmul.fut")
    assert prog.file == "matmul.fut"
    assert [f.name for f in prog.funs] == ["dotprod", "main"]
    assert [f.name for f in prog.entries] == ["main"]

    dot = prog.fun("dotprod")
    assert dot.size_params == ("n",)
    assert dot.params == (S.Var("xs", Array(F32, ("n",))), S.Var("ys", Array(F32, ("n",))))
    assert dot.ret == (F32,)
    assert dot.loc == Loc("matmul.fut", 4, 1)
    m = only(stm_of(dot.body, S.Map))
    assert m.exp.width == S.Var("n", I64)
    assert [p.type for p in m.exp.lam.params] == [F32, F32]
    assert m.exp.arrs == dot.params
    r = only(stm_of(dot.body, S.Reduce))
    # The unsuffixed 0 takes the element type f32.
    assert r.exp.neutral == (S.Const(0.0, F32),)
    assert isinstance(r.exp.neutral[0].value, float)
    assert r.exp.arrs == m.pat and r.exp.lam.ret == (F32,)
    assert dot.body.result == r.pat
    assert r.loc == Loc("matmul.fut", 5, 3)

    main = prog.fun("main")
    assert main.entry
    assert main.size_params == ("n", "m", "p")
    assert main.params[0].type == Array(F32, ("n", "m"))
    assert main.ret == (Array(F32, ("n", "p")),)
    outer = only(main.body.stms)
    assert isinstance(outer.exp, S.Map) and outer.exp.width == S.Var("n", I64)
    assert outer.pat[0].type == Array(F32, ("n", "p"))
    lam = outer.exp.lam
    assert lam.params[0].type == Array(F32, ("m",)) and lam.params[0].name.startswith("xs_")
    assert lam.ret == (Array(F32, ("p",)),)
    tr = only(stm_of(lam.body, S.Rearrange))
    assert tr.exp.perm == (1, 0) and tr.pat[0].type == Array(F32, ("p", "m"))
    inner = only(stm_of(lam.body, S.Map))
    assert inner.exp.width == S.Var("p", I64) and inner.exp.arrs == tr.pat
    red = only(stm_of(inner.exp.lam.body, S.Reduce))
    assert red.exp.width == S.Var("m", I64) and red.exp.neutral == (S.Const(0.0, F32),)


def test_anf_atoms_unique_names_and_locs():
    prog = source_program(MATMUL, "matmul.fut")
    names = []
    for f in prog.funs:
        for s in all_stms(f.body):
            assert s.loc is not None and s.loc.file == "matmul.fut"
            names += [v.name for v in s.pat]
            for lam in (getattr(s.exp, "lam", None),):
                if lam is not None:
                    names += [v.name for v in lam.params]
            for a in (getattr(s.exp, "x", None), getattr(s.exp, "y", None)):
                if a is not None:
                    assert isinstance(a, (S.Var, S.Const))
    assert len(names) == len(set(names)), names
    assert all("_" in n for n in names)


def test_sum_and_prefix_sum():
    src = """
def sum [n] (xs: [n]i32): i32 = reduce (+) 0 xs
entry psum [n] (xs: [n]f64): [n]f64 = scan (+) 0 xs
entry main [n] (xs: [n]i32): i32 = sum xs
"""
    prog = source_program(src, "t.fut")
    r = only(prog.fun("sum").body.stms)
    assert isinstance(r.exp, S.Reduce) and r.exp.neutral == (S.Const(0, I32),) and not r.exp.commutative
    sc = only(prog.fun("psum").body.stms)
    assert isinstance(sc.exp, S.Scan) and sc.exp.neutral == (S.Const(0.0, F64),)
    assert sc.pat[0].type == Array(F64, ("n",)) and prog.fun("psum").ret == (Array(F64, ("n",)),)
    call = only(prog.fun("main").body.stms)
    assert call.exp == S.Apply("sum", (S.Var("xs", Array(I32, ("n",))),), (I32,))
    assert [f.name for f in prog.entries] == ["psum", "main"]  # `def main` is an entry point too


def test_let_if_chains():
    src = """
def main (x: f32) (b: bool): f32 =
  let y = x * 2 in
  let z: f32 = if b && y > 1 then y else 0 in
  let w = if z == 0 then 1 else z in
  w - 0.5
"""
    f = fun(src)
    assert f.ret == (F32,)
    names = [s.pat[0].name for s in f.body.stms]
    assert names[0].startswith("y_")
    ifs = stm_of(f.body, S.If)
    assert len(ifs) == 2 and ifs[0].pat[0].name.startswith("z_") and ifs[0].exp.types == (F32,)
    assert ifs[0].exp.else_.result == (S.Const(0.0, F32),)
    assert ifs[1].exp.then.result == (S.Const(1.0, F32),)
    last = f.body.stms[-1]
    assert last.exp == S.BinOp("-", ifs[1].pat[0], S.Const(0.5, F32), F32)


def test_user_function_sizes_are_instantiated():
    src = """
def twice [k] (v: [k]i64): [k]i64 = map (*2) v
def rows [a][b] (m: [a][b]f32): i64 = length m
entry main [n][m] (xs: [n]i64) (xss: [m][3]f32) : [n]i64 =
  let r = rows xss in
  map (+r) (twice xs)
"""
    f = fun(src)
    apps = stm_of(f.body, S.Apply)
    assert apps[0].exp.types == (I64,)
    assert apps[1].exp.types == (Array(I64, ("n",)),)
    assert f.ret == (Array(I64, ("n",)),)
    rows = source_program(src, "t.fut").fun("rows")
    assert rows.body.result == (S.Var("a", I64),) and rows.body.stms == ()


def test_sections_and_partial_application():
    src = """
def add (a: i32) (b: i32): i32 = a + b
entry main [n] (xs: [n]i32): [n]i32 =
  map (+1) xs |> map (2-) |> map (i32.max 0) |> map (add 3)
entry nested [n][m] (xss: [n][m]i32): [n][m]i32 = map (map (*2)) xss
"""
    prog = source_program(src, "t.fut")
    maps = stm_of(prog.fun("main").body, S.Map)
    assert len(maps) == 4
    body = [only(m.exp.lam.body.stms).exp for m in maps]
    p = [m.exp.lam.params[0] for m in maps]
    assert body[0] == S.BinOp("+", p[0], S.Const(1, I32), I32)
    assert body[1] == S.BinOp("-", S.Const(2, I32), p[1], I32)
    assert body[2] == S.PrimCall("i32.max", (S.Const(0, I32), p[2]), I32)
    assert body[3] == S.Apply("add", (S.Const(3, I32), p[3]), (I32,))
    outer = only(prog.fun("nested").body.stms)
    inner = only(outer.exp.lam.body.stms)
    assert isinstance(inner.exp, S.Map) and inner.exp.width == S.Var("m", I64)
    assert outer.pat[0].type == Array(I32, ("n", "m"))


def test_prelude_calls():
    src = """
entry main [n] (xs: [n]i32) (x: f64): f32 =
  let a = f32.sqrt 2 in
  let b = f32.f64 (f64.exp x) in
  let c = f32.i64 (i64.i32 (i32.abs (-3))) in
  let m = reduce f32.max f32.lowest (map f32.i32 xs) in
  f32.min (a + b + c) m
"""
    f = fun(src)
    calls = {s.exp.fn: s.exp for s in all_stms(f.body) if isinstance(s.exp, S.PrimCall)}
    assert calls["f32.sqrt"].args == (S.Const(2.0, F32),) and calls["f32.sqrt"].type == F32
    assert calls["f64.exp"].type == F64 and calls["f32.f64"].type == F32
    assert calls["i32.abs"].args == (S.Const(-3, I32),)
    assert calls["i64.i32"].type == I64 and calls["f32.i32"].type == F32
    red = only(stm_of(f.body, S.Reduce))
    assert red.exp.neutral[0].type == F32 and red.exp.neutral[0].value == float("-inf")
    assert f.body.stms[-1].exp.fn == "f32.min"


@pytest.mark.parametrize("src, expected", [
    ("def main: i32 = 1 + 2", I32),                                      # default i32
    ("def main: f64 = 1.5 * 2", F64),                                    # default f64
    ("def main: i64 = 1 + 2", I64),                                      # from the return type
    ("def main (x: u8): u8 = x + 200", Scalar("u8")),                    # from the other operand
    ("def main (x: f32): f32 = 2 * x", F32),
    ("def main: f32 = let y: f32 = 3 in y", F32),                        # from an annotation
    ("def main (b: bool) (x: i16): i16 = if b then 0 else x", Scalar("i16")),  # if branch
    ("def main (x: f32): f32 = f32.max x 0", F32),                       # argument type
    ("def main: i64 = 0xff + 0b11", I64),
    ("def main: u8 = -1u8", Scalar("u8")),
    ("def main (x: i32): bool = x > 0 && !(x == 3)", BOOL),
    ("def main (x: i64): i64 = !x", I64),
])
def test_literal_typing(src, expected):
    assert result_type(src) == expected


def test_literal_values():
    f = fun("def main (x: f32): f32 = x + 1 + 1.5f32 + 2e1")
    consts = [a for s in f.body.stms for a in (s.exp.x, s.exp.y) if isinstance(a, S.Const)]
    assert consts == [S.Const(1.0, F32), S.Const(1.5, F32), S.Const(20.0, F32)]
    assert all(isinstance(c.value, float) for c in consts)
    assert fun("def main: u8 = -1u8").body.result == (S.Const(255, Scalar("u8")),)
    assert fun("def main: i32 = 1_000").body.result == (S.Const(1000, I32),)


def test_operator_precedence_and_associativity():
    def shape(e, stms):
        if isinstance(e, S.Const):
            return e.value
        if isinstance(e, S.Var) and e.name in stms:
            x = stms[e.name]
            if isinstance(x, S.BinOp):
                return (shape(x.x, stms), x.op, shape(x.y, stms))
            if isinstance(x, S.UnOp):
                return (x.op, shape(x.x, stms))
        return e.name

    def parsed(expr):
        f = fun(f"def main (x: i32) (y: i32): i32 = {expr}")
        stms = {s.pat[0].name: s.exp for s in f.body.stms}
        return shape(f.body.result[0], stms)

    assert parsed("1 + 2 * 3") == (1, "+", (2, "*", 3))
    assert parsed("1 - 2 - 3") == ((1, "-", 2), "-", 3)
    assert parsed("2 ** 3 ** 2") == ((2, "**", 3), "**", 2)  # Futhark: ** is left-associative
    assert parsed("x * y ** 2") == ("x", "*", ("y", "**", 2))
    assert parsed("-x ** 2") == (("neg", "x"), "**", 2)
    assert parsed("x << 1 + 2") == ("x", "<<", (1, "+", 2))
    assert parsed("x & 1 << 2") == ("x", "&", (1, "<<", 2))
    assert parsed("x % 3 // 2 %% 5") == ((("x", "%", 3), "//", 2), "%%", 5)
    f = fun("def main (x: i32) (y: i32): bool = x < y || x == 1 && y != 2")
    top = f.body.stms[-1].exp
    assert top.op == "||"
    assert only([s for s in f.body.stms if s.pat[0] == top.y]).exp.op == "&&"


def test_pipes():
    f = fun("def main [n] (xs: [n]f32): f32 = xs |> map (*2) |> reduce (+) 0")
    assert [type(s.exp) for s in f.body.stms] == [S.Map, S.Reduce]
    g = fun("def main (x: f32): f32 = f32.sqrt <| f32.abs <| x")
    assert [s.exp.fn for s in g.body.stms] == ["f32.abs", "f32.sqrt"]


def test_iota_replicate_length_sizes():
    src = """
entry main [n] (xs: [n]f32) (k: i64): [k]f32 =
  let ys = iota (length xs + 1) in
  let zs = map (\\(i: i64) -> f32.i64 i) ys in
  let c = replicate 3 1.5f32 in
  let s = reduce (+) 0 zs + reduce (+) 0 c in
  replicate k s
"""
    f = fun(src)
    plus = f.body.stms[0]
    assert plus.exp == S.BinOp("+", S.Var("n", I64), S.Const(1, I64), I64)  # length xs is n
    io = only(stm_of(f.body, S.Iota))
    assert io.exp == S.Iota(plus.pat[0], I64)
    assert io.pat[0].type == Array(I64, (plus.pat[0].name,))
    m = only(stm_of(f.body, S.Map))
    assert m.exp.width == plus.pat[0]
    reps = stm_of(f.body, S.Replicate)
    assert reps[0].pat[0].type == Array(F32, (3,)) and reps[0].exp.n == S.Const(3, I64)
    assert f.ret == (Array(F32, ("k",)),) and reps[1].pat[0].type == Array(F32, ("k",))


def test_lambdas_closures_and_annotations():
    src = """
entry main [n][m] (xss: [n][m]f32) (c: f32): [n]f32 =
  map (\\(row: [m]f32) : f32 -> reduce (+) c (map (\\x -> x * c) row)) xss
entry three [n] (a: [n]i32) (b: [n]i32) (c: [n]i32): [n]i32 =
  map3 (\\x y (z: i32) -> x + y * z) a b c
entry beta (x: i32): i32 = (\\y -> y + 1) x + (+) 1 2
entry anon [n] (xs: [n]f32): [n]f32 = map (\\(x: f32) -> x) xs
"""
    prog = source_program(src, "t.fut")
    outer = only(prog.fun("main").body.stms)
    inner = only(stm_of(outer.exp.lam.body, S.Map))
    mul = only(inner.exp.lam.body.stms)
    assert mul.exp.y == S.Var("c", F32)  # a free variable of the enclosing scope
    m3 = only(prog.fun("three").body.stms)
    assert len(m3.exp.arrs) == 3 and len(m3.exp.lam.params) == 3
    assert prog.fun("beta").ret == (I32,)


def test_anonymous_sizes_in_params_and_value_params_as_sizes():
    src = """
def sum (xs: []f32): f32 = reduce (+) 0 xs
def mk (n: i64): [n]i64 = iota n
entry main (k: i64): f32 = sum (map f32.i64 (mk k))
"""
    prog = source_program(src, "t.fut")
    s = prog.fun("sum")
    assert len(s.size_params) == 1 and s.params[0].type == Array(F32, s.size_params)
    assert prog.fun("mk").ret == (Array(I64, ("n",)),)
    app = stm_of(prog.fun("main").body, S.Apply)[0]
    assert app.exp.types == (Array(I64, ("k",)),)


def test_a_parameter_without_a_type_may_be_a_size_of_the_result():
    """`def main m xs : [m]i32` (pbbs's histogram): m is then an i64, in an entry point and elsewhere."""
    from incflat.ir.interp.interpreter import run_entry
    src = """
def count m (xs: []i32) : [m]i32 = hist (+) 0 m (map i64.i32 xs) (map (const 1) xs)
def main m xs : [m]i32 = count m xs
"""
    prog = source_program(src, "t.fut")
    assert prog.fun("main").params[0].type == I64 and prog.fun("main").ret == (Array(I32, ("m",)),)
    xs = np.array([0, 1, 1, 2, 2, 2], dtype=np.int32)
    assert list(run_entry(prog, "main", [np.int64(3), xs])[0]) == [1, 2, 3]


def test_operators_bound_by_parameters():
    """`def mat4_mul (+) (*) ...` (futhark-benchmarks' micro/reduce.fut): the parameters are the operators in
    the body, in infix use and in sections, shadowing the builtins."""
    from incflat.ir.interp.interpreter import run_entry
    src = """
def mat2_mul (+) (*) (a0, a1, a2, a3) (b0, b1, b2, b3) =
  (b0 * a0 + b1 * a2, b0 * a1 + b1 * a3, b2 * a0 + b3 * a2, b2 * a1 + b3 * a3)
def sections (<>) (x: i32) (y: i32) = ((x <>) y, (<> y) x, (<>) x y, x <> y)
entry main (n: i64) =
  (reduce (mat2_mul (i32.+) (i32.*)) (1, 0, 0, 1) (replicate n (1, 1, 1, 0)), sections (i32.-) 7 2,
   mat2_mul (-) (+) (1f32, 2, 3, 4) (5, 6, 7, 8))
"""
    got = run_entry(source_program(src, "t.fut"), "main", [np.int64(10)])
    assert [int(x) for x in got[:4]] == [89, 55, 55, 34]  # Fibonacci: [[1,1],[1,0]] to the 10th power
    assert [int(x) for x in got[4:8]] == [5, 5, 5, 5]
    assert [float(x) for x in got[8:]] == [(5 + 1) - (6 + 3), (5 + 2) - (6 + 4), (7 + 1) - (8 + 3), (7 + 2) - (8 + 4)]


def test_entry_points_defined_as_functions():
    """Point-free entry points take the parameters their function takes (futhark-benchmarks' micro/scan.fut:
    `entry sum_i8 = map i8.i32 >-> scan (+) 0`)."""
    from incflat.ir.interp.interpreter import run_entry
    src = """
entry acos = map f32.acos
entry sum_i8 = map i8.i32 >-> i8.sum
entry scan_i8 = scan (+) 0 <-< map i8.i32
entry twice = map i32.i8 >-> map (* 2) >-> i32.sum
"""
    prog = source_program(src, "t.fut")
    xs = np.array([1, 2, 3, 100], dtype=np.int32)
    assert run_entry(prog, "sum_i8", [xs])[0] == np.int8(106)
    assert list(run_entry(prog, "scan_i8", [xs])[0]) == [1, 3, 6, 106]
    assert run_entry(prog, "twice", [xs.astype(np.int8)])[0] == 212
    assert prog.fun("acos").params[0].type.elem == F32


def test_top_level_constants_are_sizes():
    """`def ds : [FLAG][3]i64 = ... :> [FLAG][3]i64` (parboil's lbm): an i64 constant names one size wherever
    it is written, in signatures, coercions and annotations."""
    from incflat.ir.interp.interpreter import run_entry
    src = """
def N = 3i64
def ds : [N][2]i64 = [[0, 1], [2, 3], [4, 5]] :> [N][2]i64
def rows (xs: [N]i64) : [N]i64 = map2 (+) xs (map (.[0]) ds)
entry main (xs: [N]i64) : [N]i64 = let ys: [N]i64 = rows xs in ys
"""
    prog = source_program(src, "t.fut")
    assert list(run_entry(prog, "main", [np.array([10, 20, 30], dtype=np.int64)])[0]) == [10, 22, 34]
    with pytest.raises(Exception, match="shape"):
        run_entry(prog, "main", [np.array([1, 2], dtype=np.int64)])


def test_comments_and_empty_program():
    assert source_program("-- nothing here\n", "e.fut").funs == ()
    f = fun("def main (x: i32): i32 = -- the identity\n  x -- done")
    assert f.body.result == (S.Var("x", I32),)


def test_locations_name_the_file(tmp_path):
    p = tmp_path / "mm.fut"
    prog = source_program(MATMUL, str(p))
    assert prog.file == str(p) and prog.fun("main").loc.file == str(p)


def test_the_parser_is_lalr():
    assert get_parser().options.parser == "lalr"  # free of conflicts: test_frontend_lang.py


def test_long_programs_do_not_overflow_the_stack():
    n = 1500
    src = "def main (x: i32): i32 =\n" + "".join(f"  let x{i} = x + {i} in\n" for i in range(n)) + "  x0\n"
    assert len(fun(src).body.stms) == n
    src = "def main (x: i32): i32 = " + " + ".join(["x"] * 2000)
    assert len(fun(src).body.stms) == 1999


# (error messages: tests/test_frontend_errors.py)


# ---------------------------------------------------------------- generated operator expressions

INT_OPS = ["+", "-", "*", "/", "%", "//", "%%", "**", "&", "|", "^", "<<", ">>"]
PREC = {"|": 5, "&": 5, "^": 5, "<<": 6, ">>": 6, "+": 7, "-": 7, "*": 8, "/": 8, "%": 8, "//": 8,
        "%%": 8, "**": 9}

exprs = st.recursive(
    st.sampled_from(["a", "b", "c", "1", "2"]),
    lambda sub: st.tuples(sub, st.sampled_from(INT_OPS), sub),
    max_leaves=8,
)


def full(e):
    return e if isinstance(e, str) else f"({full(e[0])} {e[1]} {full(e[2])})"


def minimal(e):
    """Print with only the parentheses Futhark's precedence needs (all these are left-associative)."""
    if isinstance(e, str):
        return e
    lhs, op, rhs = e
    ls, rs = minimal(lhs), minimal(rhs)
    if not isinstance(lhs, str) and PREC[lhs[1]] < PREC[op]:
        ls = f"({ls})"
    if not isinstance(rhs, str) and PREC[rhs[1]] <= PREC[op]:
        rs = f"({rs})"
    return f"{ls} {op} {rs}"


@settings(max_examples=60, deadline=None)
@given(exprs)
def test_precedence_matches_full_parenthesisation(e):
    head = "def main (a: i32) (b: i32) (c: i32): i32 = "
    assert source_program(head + minimal(e), "p.fut") == source_program(head + full(e), "p.fut")


@pytest.mark.parametrize("open_form, parenthesised", [
    ("x * 2 + if x > 3 then 1 else 2 * 10", "x * 2 + (if x > 3 then 1 else (2 * 10))"),
    ("1 + loop acc = x for i < 3 do acc + i32.i64 i", "1 + (loop acc = x for i < 3 do (acc + i32.i64 i))"),
    ("x - let y = 2 in y * x", "x - (let y = 2 in y * x)"),
    ("x |> \\y -> y + 1", "(\\y -> y + 1) x"),
    ("x * #[unsafe] xs[0] + 1", "x * (xs[0] + 1)"),
    ("x + if x > 0 then 1 else 2 : i32", "x + (if x > 0 then 1 else (2 : i32))"),
    ("xs[x64 + if x > 0 then 0 else 1] * 2", "xs[x64 + (if x > 0 then 0 else 1)] * 2"),
    ("x + assert (x > 0) x * 2", "x + (assert (x > 0) (x * 2))"),
])
def test_an_open_expression_may_be_an_operators_last_operand(open_form, parenthesised):
    """As in Futhark, `if`, `let`, `loop`, a lambda, an attribute or `assert` may be the last operand of an
    operator, and reaches as far to the right as it would alone."""
    head = "def main (x: i32) (xs: []i32): i32 = let x64 = i64.i32 x in "
    assert source_program(head + open_form, "p.fut") == source_program(head + parenthesised, "p.fut")


SLICES = """
def dotprod [n] (a: [n]f32) (b: [n]f32) : f32 = reduce (+) 0 (map2 (*) a b)
entry main [n] (xs: [n]f32) (i: i64) : (f32, [n]f32, []f32, f32) =
  (dotprod xs[:i + 1] (reverse xs)[:i + 1],
   map2 (+) xs[::-1] xs,
   map2 (*) xs[1:] xs[:n - 1],
   dotprod xs[2:n] xs[2:])
"""


def test_slices_have_futharks_size_expressions():
    """As in Futhark, a[:j] has size j, a[i:j] size j-i and a[::-1] a's size, for any j and i that bind no
    names: two slices by the same expressions have one size."""
    from incflat.ir.interp.interpreter import run_entry
    xs = np.arange(1, 5, dtype=np.float32)
    got = run_entry(source_program(SLICES, "s.fut"), "main", [xs, np.int64(1)])
    assert got[0] == 1 * 4 + 2 * 3 and got[3] == 3 * 3 + 4 * 4
    assert list(got[1]) == [5] * 4 and list(got[2]) == [2, 6, 12]


def test_in_may_be_left_out_before_another_let():
    chained = source_program("def f (x: i32): i32 =\n  let a = x + 1\n  let b = a * 2\n  in a + b", "t.fut")
    explicit = source_program("def f (x: i32): i32 =\n  let a = x + 1 in\n  let b = a * 2\n  in a + b", "t.fut")
    assert chained == explicit


def test_deep_but_valid_nesting_checks_and_runs():
    from incflat import pipeline
    from incflat.ir.interp.interpreter import run_entry
    chain = "def main (x: i32): i32 =\n  " + "".join(f"if x == {i} then {i} else " for i in range(200)) + "-1\n"
    assert tuple(run_entry(source_program(chain, "ifs.fut"), "main", [np.int32(150)])) == (150,)
    assert [f.name for f in pipeline.target_program(chain, "ifs.fut").funs] == ["main"]
    total = "def main (x: i32): i32 =\n  " + " + ".join(["x"] * 50_000) + "\n"
    assert tuple(run_entry(source_program(total, "sum.fut"), "main", [np.int32(3)])) == (150_000,)


def test_nesting_too_deep_for_the_compiler_is_a_located_error(monkeypatch):
    from incflat import pipeline
    monkeypatch.setattr(pipeline, "RECURSION_LIMIT", 3000)  # 100,000 nested parentheses without it: slow
    n = 3000
    src = "def main (x: i32): i32 =\n  " + "(1 - " * n + "x" + ")" * n + "\n"
    with pytest.raises(CompileError, match="nests too deeply") as info:
        source_program(src, "deep.fut")
    assert info.value.loc.file == "deep.fut" and info.value.loc.line == 2
