"""The host IR (ir/host.py) and its Python printer (codegen/pyhost.py): every construct prints, as valid Python
that means what the IR says; code generation's host code is the printing of the IR it builds."""

import ast
import dataclasses
import typing

import pytest

from incflat import pipeline
from incflat.codegen import pyhost
from incflat.codegen.host import HostWriter
from incflat.ir import host as H

X, N = H.Var("x"), H.Var("n")

EXPRESSIONS = {
    H.Var("x"): "x",
    H.Scalar(5, "i64"): "np.int64(5)",
    H.Scalar(1.5, "f32"): "np.float32(float('1.5'))",
    H.Scalar(float("inf"), "f64"): "np.float64(float('inf'))",
    H.Scalar(True, "bool"): "np.bool_(True)",
    H.Lit("a.fut:1:2"): "'a.fut:1:2'",
    H.Dtype("u8"): "np.uint8",
    H.Tuple((X,)): "(x, )",
    H.List((X, N)): "[x, n]",
    H.Call("index", (H.Var("ctx"), X), (("in_place", H.Lit(True)),)): "index(ctx, x, in_place=True)",
    H.Field("max_group_size"): "ctx.max_group_size",
    H.Param("main.segred_0_tblock_size"): "ctx.values['main.segred_0_tblock_size']",
    H.Cast("i32", X): "np.int32(x)",
    H.Op("*", H.Op("+", X, N), H.Lit(2)): "((x + n) * 2)",
    H.Unary("not ", X): "(not x)",
    H.Cond(X, N, H.Lit(0)): "(n if x else 0)",
    H.Shape(X, 1): "x.shape[1]",
    H.Shape(X): "x.shape",
    H.Method(X, "permute", (H.Lit((1, 0)),)): "x.permute((1, 0))",
    H.Stride(X, 0): "x.strides[0]",
    H.Offset(X): "x.offset",
    H.Buffer(X): "x.buf",
    H.IndexArgs(X, flat=True): "*x.flat_index_args()",
    H.Spread(H.Call("ctx.lookback", (N,))): "*ctx.lookback(n)",
}


@pytest.mark.parametrize("e", EXPRESSIONS, ids=lambda e: type(e).__name__)
def test_each_expression_prints(e):
    assert pyhost.expression(e) == EXPRESSIONS[e]


def test_every_class_of_the_ir_prints():
    """A class added to the IR without a printing fails here (and would fail any program that used it)."""
    printed = {type(e) for e in EXPRESSIONS}
    assert set(typing.get_args(H.Exp)) == printed
    def kinds(stms):
        for stm in stms:
            yield type(stm)
            for f in dataclasses.fields(stm):
                if f.name in ("then", "else_", "body"):
                    yield from kinds(getattr(stm, f.name) or ())
    assert set(typing.get_args(H.Stm)) <= set(kinds(STATEMENTS.body))


I64, F32 = "i64", "f32"
STATEMENTS = H.Def("main", ("xs", "n"), (H.ArrayType(F32, 1), I64), (
    H.Assign("x", H.Cast("i64", H.Shape(H.Var("xs"), 0)), I64),
    H.Bind(("a", "b"), (X, N), (I64, I64)),
    H.Do(H.Call("check_sizes", (H.Tuple((N,)), H.Lit("iota"), H.Lit("")))),
    H.If(H.Op(">", X, H.Lit(0)), (H.Assign("y", X, I64),), (H.Assign("y", N, I64),)),
    H.For("i", "i32", N, (H.Assign("z", H.Var("i"), "i32"),)),
    H.While((H.If(H.Unary("not ", X), (H.Break(),)),)),
    H.Guard("main.suff_outer_par_0", "outer", (N,), 0, (H.Assign("r", X, I64),), (H.Assign("r", N, I64),)),
    H.Guard("main.suff_intra_par_1", "intra", (N, H.Lit(32)), 8, (H.Assign("r", X, I64),), (H.Assign("r", N, I64),)),
    H.Return((X, N, H.Var("y"), H.Var("r"))),
))


def test_an_entry_prints_as_valid_python_with_its_guards_records_and_fallback():
    text = pyhost.entry(STATEMENTS)
    ast.parse(text)
    assert text.startswith("def entry_main(ctx, xs, n):\n")
    assert "for i in range(int(n)):\n        i = np.int32(i)" in text
    assert "if ctx.cmp('main.suff_outer_par_0', int(n)):" in text
    assert "ctx.enter('main.suff_outer_par_0', True, int(n))" in text
    # a workgroup-level version that cannot launch falls back to the next one
    assert "if ctx.cmp('main.suff_intra_par_1', int(n) * int(32)) and ctx.fits_group(" in text
    assert "except (cl.Error, KernelUnavailable) as failure:" in text
    assert "if not done_main_suff_intra_par_1:" in text


def test_the_verifier_finds_what_is_wrong():
    H.verify(STATEMENTS)
    body = STATEMENTS.body
    cases = {
        "z is read before it is bound": body + (H.Do(H.Var("z")),),  # bound only inside the loop
        "y is bound as i64 and as f32": body + (H.Assign("y", X, F32),),
        "break outside a while loop": (H.Break(),),
        "q is read before it is bound": body[:1] + (H.If(X, (H.Assign("q", X, I64),)), H.Return((H.Var("q"),))),
        "w is bound without a type": body[:1] + (H.Assign("w", X, None),),
    }
    for message, stms in cases.items():
        with pytest.raises(ValueError, match=message):
            H.verify(dataclasses.replace(STATEMENTS, body=stms))


def test_code_generation_prints_the_host_ir_it_builds():
    """The generated program's host code is the printing of HostWriter's entries, nothing added as text."""
    source = """
entry main [n] (xs: [n]f32) (k: i64): [n]f32 =
  let ys = loop ys = copy xs for i < k do map (+ 1) ys
  in if k > 2 then map (* 2) ys else ys
"""
    target = pipeline.compile(source, "t.fut", until="sink_scalars")
    w = HostWriter()
    for f in target.funs:
        w.entry(f)
    generated = pipeline.compile(source, "t.fut", until="generate")
    assert generated.host_code == "\n".join(pyhost.entry(d) for d in w.entries)
    assert any(isinstance(s, H.For) for s in w.entries[0].body)
