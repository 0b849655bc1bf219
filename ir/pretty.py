"""A printer for the source and target IR, in the paper's notation (`segmap1 <xs ∈ xss> ...`), and for the
syntax tree."""

import dataclasses

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


def exp(e, ind: int) -> str:
    pad = "  " * (ind + 1)
    if isinstance(e, S.AtomExp):
        return atom(e.x)
    if isinstance(e, S.BinOp):
        return f"{atom(e.x)} {e.op} {atom(e.y)}"
    if isinstance(e, S.UnOp):
        return f"{'-' if e.op == 'neg' else e.op}{atom(e.x)}"
    if isinstance(e, (S.PrimCall, S.Apply)):
        return f"{e.fn} {atoms(e.args)}"
    if isinstance(e, S.Index):
        return f"{e.arr.name}[{', '.join(index(i) for i in e.idxs)}]"
    if isinstance(e, S.Update):
        return f"{e.arr.name} with [{', '.join(index(i) for i in e.idxs)}] = {atom(e.value)}"
    if isinstance(e, S.TuningParam):
        return f"#[param({e.name})] {atom(e.default)}"
    if isinstance(e, S.Assert):
        values = f" ({atoms(e.values)})" if e.values else ""
        return f"assert {atom(e.cond)} {e.message!r}{values}"
    if isinstance(e, S.ArrayLit):
        return f"[{', '.join(atom(a) for a in e.elems)}]"
    if isinstance(e, S.Concat):
        return f"concat@{atom(e.size)} {atoms(e.arrs)}"
    if isinstance(e, S.Rotate):
        return f"rotate {atom(e.amount)} {e.arr.name}"
    if isinstance(e, S.Reshape):
        return f"reshape ({', '.join(atom(a) for a in e.shape)}) {e.arr.name}"
    if isinstance(e, S.Scatter):
        return f"scatter {e.dest.name} {e.idxs.name} {e.vals.name}"
    if isinstance(e, S.Hist):
        return (f"hist {atom(e.width)} {lam(e.lam, ind)} {atoms(e.neutral)} {e.dest.name} {e.idxs.name} "
                f"{e.vals.name}")
    if isinstance(e, S.Filter):
        return f"filter {atom(e.width)} {lam(e.lam, ind)} {atoms(e.arrs)}"
    if isinstance(e, S.Loop):
        params = ", ".join(f"{p.name}: {p.type} = {atom(a)}" for p, a in zip(e.params, e.init))
        if isinstance(e.form, S.ForLoop):
            form = f"for {e.form.i.name} < {atom(e.form.bound)}"
        else:
            form = f"while\n{body(e.form.cond, ind + 2)}\n{pad}"
        sizes = "".join(f"[{n}]" for n in e.size_params)
        return f"loop {sizes}({params}) {form} do\n{body(e.body, ind + 2)}"
    if isinstance(e, S.Iota):
        return f"iota {atom(e.n)}" + checked(e)
    if isinstance(e, S.Replicate):
        return f"replicate {atom(e.n)} {atom(e.x)}" + checked(e)
    if isinstance(e, S.Rearrange):
        return f"rearrange ({', '.join(map(str, e.perm))}) {e.arr.name}"
    if isinstance(e, S.If):
        return f"if {atom(e.cond)}\n{pad}then\n{body(e.then, ind + 2)}\n{pad}else\n{body(e.else_, ind + 2)}"
    if isinstance(e, S.Map):
        return f"map {atom(e.width)} {lam(e.lam, ind)} {atoms(e.arrs)}"
    if isinstance(e, S.Reduce):
        return f"reduce {atom(e.width)} {lam(e.lam, ind)} ({atoms(e.neutral)}) {atoms(e.arrs)}"
    if isinstance(e, S.Scan):
        return f"scan {atom(e.width)} {lam(e.lam, ind)} ({atoms(e.neutral)}) {atoms(e.arrs)}"
    if isinstance(e, S.Redomap):
        return (f"redomap {atom(e.width)} {lam(e.red, ind)} {lam(e.map_lam, ind)} ({atoms(e.neutral)}) "
                f"{atoms(e.arrs)}")
    if isinstance(e, S.Scanomap):
        post = f" then {lam(e.post, ind)}" if e.post is not None else ""
        return (f"scanomap {atom(e.width)} {lam(e.scan, ind)} {lam(e.map_lam, ind)} ({atoms(e.neutral)}) "
                f"{atoms(e.arrs)}{post}")
    if isinstance(e, T.SegMap):
        return f"segmap{e.level} <{ctx(e.ctx)}>\n{body(e.body, ind + 1)}"
    if isinstance(e, T.SegRed):
        return f"segred{e.level} <{ctx(e.ctx)}> {lam(e.red, ind)} ({atoms(e.neutral)})\n{body(e.body, ind + 1)}"
    if isinstance(e, T.SegScan):
        return f"segscan{e.level} <{ctx(e.ctx)}> {lam(e.scan, ind)} ({atoms(e.neutral)})\n{body(e.body, ind + 1)}"
    if isinstance(e, T.Guard):
        par = " * ".join(atom(a) for a in e.par)
        return (f"if {e.threshold} <= {par}{' (and fits a workgroup)' if e.kind == 'intra' else ''}\n"
                f"{pad}then\n{body(e.then, ind + 2)}\n{pad}else\n{body(e.else_, ind + 2)}")
    raise TypeError(e)


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
