"""Fresh names and capture-avoiding renaming of source and target IR."""

import dataclasses
import itertools
import re

from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.types import I64, Array, Tuple


class NameSource:
    """Hands out names that clash with no name in the program it was made for."""

    def __init__(self, used=()):
        top = 0
        for n in used:
            m = re.search(r"_(\d+)$", n)
            if m:
                top = max(top, int(m.group(1)))
        self._counter = itertools.count(top + 1)

    def fresh(self, base: str) -> str:
        """`base_N`: a valid identifier in Python and C, never a keyword of either."""
        base = re.sub(r"_\d+$", "", base.replace("'", "_q")) or "v"
        return f"{base}_{next(self._counter)}"


def user_name(name: str) -> str:
    """The name the user wrote, for messages and listings: `NameSource.fresh` undone."""
    return re.sub(r"_\d+$", "", name).replace("_q", "'")


def all_names(prog: S.Program) -> set:
    names = set()

    def visit(x):
        if isinstance(x, S.Var):
            names.add(x.name)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                visit(getattr(x, f.name))
        elif isinstance(x, tuple):
            for y in x:
                visit(y)
    visit(prog)
    for f in prog.funs:
        names |= set(f.size_params)
    return names


class Renamer:
    """Substitutes atoms for free variables and gives every bound variable a fresh name."""

    def __init__(self, names: NameSource, subst: dict):
        self.names = names
        self.subst = dict(subst)  # name -> Atom

    def dim(self, d):
        if isinstance(d, str) and d in self.subst:
            return S.dim_of(self.subst[d])
        return d

    def type(self, t):
        if isinstance(t, Array):
            return Array(t.elem, tuple(self.dim(d) for d in t.shape))
        if isinstance(t, Tuple):
            return Tuple(tuple(self.type(x) for x in t.elems))
        return t

    def atom(self, a):
        if isinstance(a, S.Var):
            if a.name in self.subst:
                return self.subst[a.name]
            return S.Var(a.name, self.type(a.type))
        return a

    def bind(self, v: S.Var) -> S.Var:
        new = S.Var(self.names.fresh(v.name), self.type(v.type))
        self.subst[v.name] = new
        return new

    def lam(self, lam: S.Lambda) -> S.Lambda:
        params = tuple(self.bind(p) for p in lam.params)
        return S.Lambda(params, self.body(lam.body), tuple(self.type(t) for t in lam.ret))

    def body(self, body: S.Body) -> S.Body:
        stms = [new for new in map(self.stm, body.stms) if new is not None]
        return S.Body(tuple(stms), tuple(self.atom(a) for a in body.result))

    def stm(self, stm: S.Stm):
        """The renamed statement (None drops it)."""
        e = self.exp(stm.exp)
        pat = tuple(self.bind(p) for p in stm.pat)
        if isinstance(e, S.Filter):
            e = dataclasses.replace(e, size=pat[0].name)
        return S.Stm(pat, e, stm.loc)

    def ctx(self, ctx):
        out = []
        for b in ctx:
            arrs = tuple(self.atom(a) for a in b.arrs)
            out.append(T.Binding(self.atom(b.width), tuple(self.bind(p) for p in b.params), arrs))
        return tuple(out)

    def idxs(self, idxs) -> tuple:
        a = self.atom
        return tuple(S.DimSlice(a(i.start), a(i.end), a(i.stride), a(i.size)) if isinstance(i, S.DimSlice) else a(i)
                     for i in idxs)

    def atoms(self, xs) -> tuple:
        """Each atom of xs, renamed."""
        return tuple(map(self.atom, xs))

    def types(self, ts) -> tuple:
        """Each type of ts, its sizes renamed."""
        return tuple(self.type(t) for t in ts)

    def exp(self, e):
        """The renamed expression, by its class's rule in EXP."""
        return EXP.rule(e)(self, e)


# Each rule renames its parts in the order they are written: binders take fresh names as they are met.

def _loop(r: Renamer, e: S.Loop) -> S.Loop:
    init = r.atoms(e.init)
    sizes = tuple(r.bind(S.Var(n, I64)).name for n in e.size_params)
    params = tuple(r.bind(p) for p in e.params)
    if isinstance(e.form, S.ForLoop):
        form = S.ForLoop(r.bind(e.form.i), r.atom(e.form.bound))
    else:
        form = S.WhileLoop(r.body(e.form.cond))
    return S.Loop(sizes, params, init, form, r.body(e.body))


def _optional(r: Renamer, a):
    """An iota's or a replicate's `checked`."""
    return None if a is None else r.atom(a)


EXP = nodes.Table(f"{__name__}.EXP", "target", {
    S.AtomExp: lambda r, e: S.AtomExp(r.atom(e.x)),
    S.BinOp: lambda r, e: S.BinOp(e.op, r.atom(e.x), r.atom(e.y), e.type),
    S.UnOp: lambda r, e: S.UnOp(e.op, r.atom(e.x), e.type),
    S.PrimCall: lambda r, e: S.PrimCall(e.fn, r.atoms(e.args), e.type),
    S.Apply: lambda r, e: S.Apply(e.fn, r.atoms(e.args), r.types(e.types)),
    S.If: lambda r, e: S.If(r.atom(e.cond), r.body(e.then), r.body(e.else_), r.types(e.types)),
    S.Index: lambda r, e: S.Index(r.atom(e.arr), r.idxs(e.idxs)),
    S.Update: lambda r, e: S.Update(r.atom(e.arr), r.idxs(e.idxs), r.atom(e.value)),
    S.TuningParam: lambda r, e: S.TuningParam(e.name, r.atom(e.default)),
    S.Assert: lambda r, e: S.Assert(r.atom(e.cond), e.message, r.atoms(e.values)),
    S.ArrayLit: lambda r, e: S.ArrayLit(r.atoms(e.elems), r.type(e.type)),
    S.Concat: lambda r, e: S.Concat(r.atoms(e.arrs), r.atom(e.size)),
    S.Rotate: lambda r, e: S.Rotate(r.atom(e.amount), r.atom(e.arr)),
    S.Reshape: lambda r, e: S.Reshape(r.atoms(e.shape), r.atom(e.arr)),
    S.Scatter: lambda r, e: S.Scatter(r.atom(e.dest), r.atom(e.idxs), r.atom(e.vals)),
    S.Hist: lambda r, e: S.Hist(r.atom(e.width), r.lam(e.lam), r.atoms(e.neutral), r.atom(e.dest), r.atom(e.idxs),
                                r.atom(e.vals), r.types(e.types)),
    # `size` is renamed with the pattern (see stm)
    S.Filter: lambda r, e: S.Filter(r.atom(e.width), r.lam(e.lam), r.atoms(e.arrs), e.size),
    S.Loop: _loop,
    S.Iota: lambda r, e: S.Iota(r.atom(e.n), e.elem, _optional(r, e.checked)),
    S.Replicate: lambda r, e: S.Replicate(r.atom(e.n), r.atom(e.x), _optional(r, e.checked)),
    S.Rearrange: lambda r, e: S.Rearrange(e.perm, r.atom(e.arr)),
    S.Map: lambda r, e: S.Map(r.atom(e.width), r.lam(e.lam), r.atoms(e.arrs)),
    S.Reduce: lambda r, e: S.Reduce(r.atom(e.width), r.lam(e.lam), r.atoms(e.neutral), r.atoms(e.arrs),
                                    e.commutative),
    S.Scan: lambda r, e: S.Scan(r.atom(e.width), r.lam(e.lam), r.atoms(e.neutral), r.atoms(e.arrs)),
    S.Redomap: lambda r, e: S.Redomap(r.atom(e.width), r.lam(e.red), r.lam(e.map_lam), r.atoms(e.neutral),
                                      r.atoms(e.arrs), e.commutative),
    S.Scanomap: lambda r, e: S.Scanomap(r.atom(e.width), r.lam(e.scan), r.lam(e.map_lam), r.atoms(e.neutral),
                                        r.atoms(e.arrs), r.lam(e.post) if e.post is not None else None),
    T.SegMap: lambda r, e: T.SegMap(e.level, r.ctx(e.ctx), r.body(e.body), r.types(e.types)),
    T.SegRed: lambda r, e: T.SegRed(e.level, r.ctx(e.ctx), r.lam(e.red), r.atoms(e.neutral), r.body(e.body),
                                    r.types(e.types), e.commutative),
    T.SegScan: lambda r, e: T.SegScan(e.level, r.ctx(e.ctx), r.lam(e.scan), r.atoms(e.neutral), r.body(e.body),
                                      r.types(e.types)),
    T.Guard: lambda r, e: T.Guard(e.threshold, e.kind, r.atoms(e.par), r.body(e.then), r.body(e.else_),
                                  r.types(e.types), e.local_bytes),
})
