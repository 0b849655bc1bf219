"""The Python printer of the host IR (ir/host.py): the host code of a `--backend=pyopencl` program, which
calls the runtime's functions (ir/runtime) by the names the IR gives them."""

from incflat.codegen.emit import PyEmitter
from incflat.ir import host as H
from incflat.ir.runtime.prims import PRIMS


def expression(e) -> str:
    """An expression's Python text."""
    spell = EXPRESSIONS.get(type(e))
    if spell is None:
        raise TypeError(f"not a host expression: {e!r}")
    return spell(e)


def _scalar(e: H.Scalar) -> str:
    prim = PRIMS[e.prim]
    if e.prim == "bool":
        return f"np.bool_({bool(e.value)})"
    value = f"float({str(e.value)!r})" if prim.is_float else repr(e.value)  # inf and nan too
    return f"{prim.numpy_spelling}({value})"


def _call(e: H.Call) -> str:
    args = [expression(a) for a in e.args] + [f"{k}={expression(v)}" for k, v in e.kwargs]
    return f"{e.fn}({', '.join(args)})"


def _of(array, suffix: str) -> str:
    return expression(array) + suffix


# Each class of expression's printing: the runtime's arrays are DeviceArrays (buf, offset, strides), the run's
# context is `ctx`.
EXPRESSIONS = {
    H.Var: lambda e: e.name,
    H.Scalar: _scalar,
    H.Lit: lambda e: repr(e.value),
    H.Dtype: lambda e: PRIMS[e.prim].numpy_spelling,
    H.Tuple: lambda e: "(" + "".join(expression(a) + ", " for a in e.items) + ")",
    H.List: lambda e: "[" + ", ".join(expression(a) for a in e.items) + "]",
    H.Call: _call,
    H.Field: lambda e: f"ctx.{e.name}",
    H.Param: lambda e: f"ctx.values[{e.name!r}]",
    H.Cast: lambda e: f"{PRIMS[e.prim].numpy_spelling}({expression(e.value)})",
    H.Op: lambda e: f"({expression(e.x)} {e.op} {expression(e.y)})",
    H.Unary: lambda e: f"({e.op}{expression(e.x)})",
    H.Cond: lambda e: f"({expression(e.then)} if {expression(e.cond)} else {expression(e.otherwise)})",
    H.Shape: lambda e: _of(e.array, ".shape" + ("" if e.dim is None else f"[{e.dim}]")),
    H.Method: lambda e: _of(e.obj, f".{e.name}({', '.join(expression(a) for a in e.args)})"),
    H.Stride: lambda e: _of(e.array, f".strides[{e.dim}]"),
    H.Offset: lambda e: _of(e.array, ".offset"),
    H.Buffer: lambda e: _of(e.array, ".buf"),
    H.IndexArgs: lambda e: "*" + _of(e.array, ".flat_index_args()" if e.flat else ".index_args()"),
    H.Spread: lambda e: "*" + expression(e.value),
}


def statements(out: PyEmitter, stms) -> None:
    for s in stms:
        statement(out, s)


def statement(out: PyEmitter, s) -> None:
    if isinstance(s, H.Assign):
        out.line(f"{s.target} = {expression(s.value)}")
    elif isinstance(s, H.Bind):
        values = expression(s.values[0]) if s.unpack else "".join(expression(v) + ", " for v in s.values)
        out.line(f"{', '.join(s.targets)}, = {values}")
    elif isinstance(s, H.Do):
        out.line(expression(s.value))
    elif isinstance(s, H.If):
        with out.block(f"if {expression(s.cond)}"):
            statements(out, s.then)
        if s.else_ is not None:
            with out.block("else"):
                statements(out, s.else_)
    elif isinstance(s, H.For):
        with out.block(f"for {s.var} in range(int({expression(s.bound)}))"):
            out.line(f"{s.var} = {PRIMS[s.prim].numpy_spelling}({s.var})")
            statements(out, s.body)
    elif isinstance(s, H.While):
        with out.block("while True"):
            statements(out, s.body)
    elif isinstance(s, H.Break):
        out.line("break")
    elif isinstance(s, H.Guard):
        guard(out, s)
    elif isinstance(s, H.Return):
        out.line(f"return ({''.join(expression(v) + ', ' for v in s.values)})")
    else:
        raise TypeError(f"not a host statement: {s!r}")


def guard(out: PyEmitter, g: H.Guard) -> None:
    """`ctx.cmp` chooses a version; ctx.enter and ctx.leave record it for -P. A workgroup-level version the
    device cannot launch falls back to the next version."""
    par = " * ".join(f"int({expression(a)})" for a in g.par)
    cond = f"ctx.cmp({g.threshold!r}, {par})"

    def version(body, outcome: bool):
        out.line(f"ctx.enter({g.threshold!r}, {outcome}, {par})")
        statements(out, body)
        out.line("ctx.leave()")
    if g.kind == "outer":
        with out.block(f"if {cond}"):
            version(g.then, True)
        with out.block("else"):
            version(g.else_, False)
        return
    done = f"done_{g.threshold.replace('.', '_')}"
    out.line(f"{done} = False")
    with out.block(f"if {cond} and ctx.fits_group({g.threshold!r}, {par}, {g.local_bytes})"):
        with out.block("try"):
            version(g.then, True)
            out.line(f"{done} = True")
        with out.block("except (cl.Error, KernelUnavailable) as failure"):
            out.line("ctx.leave()")
            out.line(f"ctx.warn_once({g.threshold!r}, {par}, failure)")
    with out.block(f"if not {done}"):
        version(g.else_, False)


def entry(d: H.Def) -> str:
    """An entry point's function."""
    out = PyEmitter()
    with out.block(f"def entry_{d.name}(ctx, {', '.join(d.params)})"):
        statements(out, d.body)
    out.line()
    return out.text()
