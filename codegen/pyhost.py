"""The Python printer of the host IR (ir/host.py): the host code of a `--backend=pyopencl` program, which
calls the runtime's functions (ir/runtime) by the names the IR gives them."""

from incflat.codegen.emit import PyEmitter
from incflat.ir import host as H
from incflat.ir.runtime.prims import PRIMS


def expression(e) -> str:
    """An expression's Python text."""
    if isinstance(e, H.Var):
        return e.name
    if isinstance(e, H.Scalar):
        spelling = PRIMS[e.prim].numpy_spelling
        if e.prim == "bool":
            return f"np.bool_({bool(e.value)})"
        if PRIMS[e.prim].is_float:
            return f"{spelling}(float({str(e.value)!r}))"  # inf and nan too
        return f"{spelling}({e.value!r})"
    if isinstance(e, H.Lit):
        return repr(e.value)
    if isinstance(e, H.Dtype):
        return PRIMS[e.prim].numpy_spelling
    if isinstance(e, H.Tuple):
        return "(" + "".join(expression(a) + ", " for a in e.items) + ")"
    if isinstance(e, H.List):
        return "[" + ", ".join(expression(a) for a in e.items) + "]"
    if isinstance(e, H.Call):
        args = [expression(a) for a in e.args] + [f"{k}={expression(v)}" for k, v in e.kwargs]
        return f"{e.fn}({', '.join(args)})"
    if isinstance(e, H.Field):
        return f"ctx.{e.name}"
    if isinstance(e, H.Param):
        return f"ctx.values[{e.name!r}]"
    if isinstance(e, H.Cast):
        return f"{PRIMS[e.prim].numpy_spelling}({expression(e.value)})"
    if isinstance(e, H.Op):
        return f"({expression(e.x)} {e.op} {expression(e.y)})"
    if isinstance(e, H.Unary):
        return f"({e.op}{expression(e.x)})"
    if isinstance(e, H.Cond):
        return f"({expression(e.then)} if {expression(e.cond)} else {expression(e.otherwise)})"
    if isinstance(e, H.Shape):
        return f"{expression(e.array)}.shape" + ("" if e.dim is None else f"[{e.dim}]")
    if isinstance(e, H.Method):
        return f"{expression(e.obj)}.{e.name}({', '.join(expression(a) for a in e.args)})"
    if isinstance(e, H.Buffer):
        return f"{expression(e.array)}.buf"
    if isinstance(e, H.IndexArgs):
        return f"*{expression(e.array)}.{'flat_index_args' if e.flat else 'index_args'}()"
    if isinstance(e, H.Spread):
        return f"*{expression(e.value)}"
    if isinstance(e, H.Stride):
        return f"{expression(e.array)}.strides[{e.dim}]"
    if isinstance(e, H.Offset):
        return f"{expression(e.array)}.offset"
    raise TypeError(f"not a host expression: {e!r}")


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
