"""A printer for the source and target IR, in the paper's notation (`segmap1 <xs ∈ xss> ...`)."""

from ir import source as S
from ir import target as T


def atom(a) -> str:
    return str(a)


def atoms(xs) -> str:
    return " ".join(atom(a) for a in xs)


def pat(vs) -> str:
    inner = ", ".join(f"{v.name}: {v.type}" for v in vs)
    return inner if len(vs) == 1 else f"({inner})"


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
        return f"{e.arr.name}[{', '.join(atom(i) for i in e.idxs)}]"
    if isinstance(e, S.Iota):
        return f"iota {atom(e.n)}"
    if isinstance(e, S.Replicate):
        return f"replicate {atom(e.n)} {atom(e.x)}"
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
        return (f"scanomap {atom(e.width)} {lam(e.scan, ind)} {lam(e.map_lam, ind)} ({atoms(e.neutral)}) "
                f"{atoms(e.arrs)}")
    if isinstance(e, T.SegMap):
        return f"segmap{e.level} <{ctx(e.ctx)}>\n{body(e.body, ind + 1)}"
    if isinstance(e, T.SegRed):
        return f"segred{e.level} <{ctx(e.ctx)}> {lam(e.red, ind)} ({atoms(e.neutral)})\n{body(e.body, ind + 1)}"
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
