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


# Python refuses code indented more than 100 levels or nested in more than 20 blocks of one function (an `if ...
# else if` chain of 99 branches, 21 nested loops). A compound statement that would start at a multiple of this
# depth is printed as a function of the entry point's body, defined (with what it binds, as None) before the
# entry point's statement that holds it, and called in its place; its variables are the entry point's
# (`nonlocal`), so it runs as the statement would.
OUTLINE_DEPTH = 12


def _compound(s) -> bool:
    return isinstance(s, (H.If, H.For, H.While, H.Guard))


def _inner(s) -> tuple:
    """The statement lists directly inside a compound statement."""
    if isinstance(s, (H.If, H.Guard)):
        return (s.then,) + ((s.else_,) if s.else_ is not None else ())
    if isinstance(s, (H.For, H.While)):
        return (s.body,)
    return ()


def _assigned(stms) -> list:
    """The variables the statements bind, in order (a guard's own flag among them)."""
    names = []
    for s in stms:
        if isinstance(s, H.Assign):
            names.append(s.target)
        elif isinstance(s, H.Bind):
            names.extend(s.targets)
        elif isinstance(s, H.For):
            names.append(s.var)
        elif isinstance(s, H.Guard) and s.kind != "outer":
            names.append(_done_flag(s))
        for inner in _inner(s):
            names.extend(_assigned(inner))
    return names


def _leaves_function(stms, in_loop: bool = False) -> bool:
    """Whether the statements return, or break out of a loop they are not inside of."""
    for s in stms:
        if isinstance(s, H.Return) or (isinstance(s, H.Break) and not in_loop):
            return True
        loop = in_loop or isinstance(s, H.While)
        if any(_leaves_function(inner, loop) for inner in _inner(s)):
            return True
    return False


def _done_flag(g: H.Guard) -> str:
    return f"done_{g.threshold.replace('.', '_')}"


class _Printer:
    """Prints an entry point's statements; `bound`: the variables bound so far in the entry point; `hoisted`:
    the lines of outlined statements' functions, to print before the entry point's current statement."""

    def __init__(self, out: PyEmitter, params):
        self.out, self.bound, self.parts, self.hoisted = out, set(params), 0, []

    def body(self, stms) -> None:
        """The entry point's body: each statement after the functions outlined from it."""
        out = self.out
        for s in stms:
            lines, out.lines = out.lines, []
            self.statement(s)
            statement, out.lines = out.lines, lines
            out.lines.extend(self.hoisted)
            out.lines.extend(statement)
            self.hoisted = []

    def statements(self, stms) -> None:
        for s in stms:
            self.statement(s)

    def statement(self, s) -> None:
        out = self.out
        if _compound(s) and out.depth > 1 and out.depth % OUTLINE_DEPTH == 0 and not _leaves_function((s,)):
            self.outlined(s)
        elif isinstance(s, H.Assign):
            out.line(f"{s.target} = {expression(s.value)}")
        elif isinstance(s, H.Bind):
            values = expression(s.values[0]) if s.unpack else "".join(expression(v) + ", " for v in s.values)
            out.line(f"{', '.join(s.targets)}, = {values}")
        elif isinstance(s, H.Do):
            out.line(expression(s.value))
        elif isinstance(s, H.If):
            with out.block(f"if {expression(s.cond)}"):
                self.statements(s.then)
            if s.else_ is not None:
                with out.block("else"):
                    self.statements(s.else_)
        elif isinstance(s, H.For):
            with out.block(f"for {s.var} in range(int({expression(s.bound)}))"):
                out.line(f"{s.var} = {PRIMS[s.prim].numpy_spelling}({s.var})")
                self.statements(s.body)
        elif isinstance(s, H.While):
            with out.block("while True"):
                self.statements(s.body)
        elif isinstance(s, H.Break):
            out.line("break")
        elif isinstance(s, H.Guard):
            self.guard(s)
        elif isinstance(s, H.Return):
            out.line(f"return ({''.join(expression(v) + ', ' for v in s.values)})")
        else:
            raise TypeError(f"not a host statement: {s!r}")
        self.bound.update(_assigned((s,)))

    def outlined(self, s) -> None:
        out = self.out
        names = list(dict.fromkeys(_assigned((s,))))
        self.parts += 1
        part = f"part_{self.parts}"
        depth, lines = out.depth, out.lines
        out.depth, out.lines = 1, []  # (the entry point's body: the function's own lines start here)
        new = [n for n in names if n not in self.bound]
        if new:
            out.line(" = ".join(new) + " = None")
        with out.block(f"def {part}()"):
            if names:
                out.line(f"nonlocal {', '.join(names)}")
            self.bound.update(names)
            self.statement(s)
        self.hoisted.extend(out.lines)  # (after the functions outlined from inside it, which it calls)
        out.depth, out.lines = depth, lines
        out.line(f"{part}()")

    def guard(self, g: H.Guard) -> None:
        """`ctx.cmp` chooses a version; ctx.enter and ctx.leave record it for -P. A workgroup-level version the
        device cannot launch falls back to the next version."""
        out = self.out
        par = " * ".join(f"int({expression(a)})" for a in g.par)
        cond = f"ctx.cmp({g.threshold!r}, {par})"

        def version(body, outcome: bool):
            out.line(f"ctx.enter({g.threshold!r}, {outcome}, {par})")
            self.statements(body)
            out.line("ctx.leave()")
        if g.kind == "outer":
            with out.block(f"if {cond}"):
                version(g.then, True)
            with out.block("else"):
                version(g.else_, False)
            return
        done = _done_flag(g)
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
        _Printer(out, d.params).body(d.body)
    out.line()
    return out.text()
