"""A printer for the source and target IR, in the paper's notation (`segmap1 <xs ∈ xss> ...`), and for the
syntax tree."""

import dataclasses

from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir import target as T


def atom(a) -> str:
    return str(a)


def atoms(xs) -> str:
    return " ".join(atom(a) for a in xs)


def pat(vs) -> str:
    inner = ", ".join(f"{v.name}: {v.type}" for v in vs)
    return inner if len(vs) == 1 else f"({inner})"


def checked(e) -> str:
    """An iota's or a replicate's condition of its size check, where it has one (S.Replicate)."""
    return "" if e.checked is None else f" (size checked if {atom(e.checked)})"


def index(i) -> str:
    if isinstance(i, S.DimSlice):
        return f"{atom(i.start)}:{atom(i.end)}:{atom(i.stride)}"
    return atom(i)


def lam(l: S.Lambda, ind: int) -> str:
    params = " ".join(f"({p.name}: {p.type})" for p in l.params)
    return f"(\\{params} ->\n{body(l.body, ind + 1)})"


def ctx(c) -> str:
    return ", ".join(f"{'(' + ', '.join(p.name for p in b.params) + ')' if len(b.params) != 1 else b.params[0].name}"
                     f" ∈ {'(' + ', '.join(a.name for a in b.arrs) + ')' if len(b.arrs) != 1 else b.arrs[0].name}"
                     for b in c)


def _pad(ind: int) -> str:
    """The indentation of the keywords (`then`, `else`, `do`) of an expression printed at level ind."""
    return "  " * (ind + 1)


def _assert(e: S.Assert) -> str:
    values = f" ({atoms(e.values)})" if e.values else ""
    return f"assert {atom(e.cond)} {e.message!r}{values}"


def _loop(e: S.Loop, ind: int) -> str:
    params = ", ".join(f"{p.name}: {p.type} = {atom(a)}" for p, a in zip(e.params, e.init))
    if isinstance(e.form, S.ForLoop):
        form = f"for {e.form.i.name} < {atom(e.form.bound)}"
    else:
        form = f"while\n{body(e.form.cond, ind + 2)}\n{_pad(ind)}"
    sizes = "".join(f"[{n}]" for n in e.size_params)
    return f"loop {sizes}({params}) {form} do\n{body(e.body, ind + 2)}"


def _branches(e, ind: int) -> str:
    """An If's or a Guard's `then` and `else` bodies."""
    return f"{_pad(ind)}then\n{body(e.then, ind + 2)}\n{_pad(ind)}else\n{body(e.else_, ind + 2)}"


def _guard(e: T.Guard, ind: int) -> str:
    par = " * ".join(atom(a) for a in e.par)
    return f"if {e.threshold} <= {par}{' (and fits a workgroup)' if e.kind == 'intra' else ''}\n{_branches(e, ind)}"


EXP = nodes.Table(f"{__name__}.EXP", "target", {
    S.AtomExp: lambda e, ind: atom(e.x),
    S.BinOp: lambda e, ind: f"{atom(e.x)} {e.op} {atom(e.y)}",
    S.UnOp: lambda e, ind: f"{'-' if e.op == 'neg' else e.op}{atom(e.x)}",
    **dict.fromkeys((S.PrimCall, S.Apply), lambda e, ind: f"{e.fn} {atoms(e.args)}"),
    S.Index: lambda e, ind: f"{e.arr.name}[{', '.join(index(i) for i in e.idxs)}]",
    S.Update: lambda e, ind: f"{e.arr.name} with [{', '.join(index(i) for i in e.idxs)}] = {atom(e.value)}",
    S.TuningParam: lambda e, ind: f"#[param({e.name})] {atom(e.default)}",
    S.Assert: lambda e, ind: _assert(e),
    S.ArrayLit: lambda e, ind: f"[{', '.join(atom(a) for a in e.elems)}]",
    S.Concat: lambda e, ind: f"concat@{atom(e.size)} {atoms(e.arrs)}",
    S.Rotate: lambda e, ind: f"rotate {atom(e.amount)} {e.arr.name}",
    S.Reshape: lambda e, ind: f"reshape ({', '.join(atom(a) for a in e.shape)}) {e.arr.name}",
    S.Scatter: lambda e, ind: f"scatter {e.dest.name} {e.idxs.name} {e.vals.name}",
    S.Hist: lambda e, ind: (f"hist {atom(e.width)} {lam(e.lam, ind)} {atoms(e.neutral)} {e.dest.name} "
                            f"{e.idxs.name} {e.vals.name}"),
    S.Filter: lambda e, ind: f"filter {atom(e.width)} {lam(e.lam, ind)} {atoms(e.arrs)}",
    S.Loop: _loop,
    S.Iota: lambda e, ind: f"iota {atom(e.n)}" + checked(e),
    S.Replicate: lambda e, ind: f"replicate {atom(e.n)} {atom(e.x)}" + checked(e),
    S.Rearrange: lambda e, ind: f"rearrange ({', '.join(map(str, e.perm))}) {e.arr.name}",
    S.If: lambda e, ind: f"if {atom(e.cond)}\n{_branches(e, ind)}",
    S.Map: lambda e, ind: f"map {atom(e.width)} {lam(e.lam, ind)} {atoms(e.arrs)}",
    S.Reduce: lambda e, ind: f"reduce {atom(e.width)} {lam(e.lam, ind)} ({atoms(e.neutral)}) {atoms(e.arrs)}",
    S.Scan: lambda e, ind: f"scan {atom(e.width)} {lam(e.lam, ind)} ({atoms(e.neutral)}) {atoms(e.arrs)}",
    S.Redomap: lambda e, ind: (f"redomap {atom(e.width)} {lam(e.red, ind)} {lam(e.map_lam, ind)} "
                               f"({atoms(e.neutral)}) {atoms(e.arrs)}"),
    S.Scanomap: lambda e, ind: (f"scanomap {atom(e.width)} {lam(e.scan, ind)} {lam(e.map_lam, ind)} "
                                f"({atoms(e.neutral)}) {atoms(e.arrs)}"
                                + (f" then {lam(e.post, ind)}" if e.post is not None else "")),
    T.SegMap: lambda e, ind: f"segmap{e.level} <{ctx(e.ctx)}>\n{body(e.body, ind + 1)}",
    T.SegRed: lambda e, ind: (f"segred{e.level} <{ctx(e.ctx)}> {lam(e.red, ind)} ({atoms(e.neutral)})\n"
                              f"{body(e.body, ind + 1)}"),
    T.SegScan: lambda e, ind: (f"segscan{e.level} <{ctx(e.ctx)}> {lam(e.scan, ind)} ({atoms(e.neutral)})\n"
                               f"{body(e.body, ind + 1)}"),
    T.Guard: _guard,
})


def exp(e, ind: int) -> str:
    """An expression, as the right-hand side of a statement printed at indentation level ind."""
    return EXP.rule(e)(e, ind)


def body(b: S.Body, ind: int = 1) -> str:
    pad = "  " * ind
    lines = [f"{pad}let {pat(s.pat)} = {exp(s.exp, ind)}" for s in b.stms]
    lines.append(f"{pad}in {', '.join(atom(a) for a in b.result)}")
    return "\n".join(lines)


def program(p: S.Program) -> str:
    out = []
    for f in p.funs:
        sizes = "".join(f"[{n}]" for n in f.size_params)
        params = " ".join(f"({v.name}: {v.type})" for v in f.params)
        ret = ", ".join(map(str, f.ret))
        out.append(f"{'entry' if f.entry else 'def'} {f.name} {sizes} {params}: {ret} =\n{body(f.body)}")
    return "\n\n".join(out) + "\n"


def syntax(decls) -> str:
    """The syntax tree, one node a line, indented by depth (locations and spans left out)."""
    lines = []

    def node(value, depth: int, label: str = ""):
        pad = "  " * depth + (f"{label}: " if label else "")
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = [f for f in dataclasses.fields(value) if f.name not in ("loc", "span") and f.repr]
            simple = {f.name: getattr(value, f.name) for f in fields if not _compound(getattr(value, f.name))}
            shown = ", ".join(f"{k}={v!r}" for k, v in simple.items())
            lines.append(f"{pad}{type(value).__name__}({shown})")
            for f in fields:
                if _compound(getattr(value, f.name)):
                    node(getattr(value, f.name), depth + 1, f.name)
        elif isinstance(value, (list, tuple)):
            lines.append(f"{pad}[{len(value)}]")
            for item in value:
                node(item, depth + 1)
        else:
            lines.append(f"{pad}{value!r}")

    for d in decls:
        node(d, 0)
    return "\n".join(lines) + "\n"


def _compound(value) -> bool:
    return (dataclasses.is_dataclass(value) and not isinstance(value, type)) or \
        (isinstance(value, (list, tuple)) and any(_compound(v) for v in value))
