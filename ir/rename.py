"""Fresh names and capture-avoiding renaming of source and target IR."""

import dataclasses
import itertools
import re

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

    def exp(self, e):
        a, ts = self.atom, (lambda xs: tuple(self.type(t) for t in xs))
        if isinstance(e, S.AtomExp):
            return S.AtomExp(a(e.x))
        if isinstance(e, S.BinOp):
            return S.BinOp(e.op, a(e.x), a(e.y), e.type)
        if isinstance(e, S.UnOp):
            return S.UnOp(e.op, a(e.x), e.type)
        if isinstance(e, S.PrimCall):
            return S.PrimCall(e.fn, tuple(map(a, e.args)), e.type)
        if isinstance(e, S.Apply):
            return S.Apply(e.fn, tuple(map(a, e.args)), ts(e.types))
        if isinstance(e, S.If):
            return S.If(a(e.cond), self.body(e.then), self.body(e.else_), ts(e.types))
        if isinstance(e, S.Index):
            return S.Index(a(e.arr), self.idxs(e.idxs))
        if isinstance(e, S.Update):
            return S.Update(a(e.arr), self.idxs(e.idxs), a(e.value))
        if isinstance(e, S.TuningParam):
            return S.TuningParam(e.name, a(e.default))
        if isinstance(e, S.Assert):
            return S.Assert(a(e.cond), e.message, tuple(map(a, e.values)))
        if isinstance(e, S.ArrayLit):
            return S.ArrayLit(tuple(map(a, e.elems)), self.type(e.type))
        if isinstance(e, S.Concat):
            return S.Concat(tuple(map(a, e.arrs)), a(e.size))
        if isinstance(e, S.Rotate):
            return S.Rotate(a(e.amount), a(e.arr))
        if isinstance(e, S.Reshape):
            return S.Reshape(tuple(map(a, e.shape)), a(e.arr))
        if isinstance(e, S.Scatter):
            return S.Scatter(a(e.dest), a(e.idxs), a(e.vals))
        if isinstance(e, S.Hist):
            return S.Hist(a(e.width), self.lam(e.lam), tuple(map(a, e.neutral)), a(e.dest), a(e.idxs), a(e.vals),
                          tuple(self.type(t) for t in e.types))
        if isinstance(e, S.Filter):  # `size` is renamed with the pattern (see body)
            return S.Filter(a(e.width), self.lam(e.lam), tuple(map(a, e.arrs)), e.size)
        if isinstance(e, S.Loop):
            init = tuple(map(a, e.init))
            sizes = tuple(self.bind(S.Var(n, I64)).name for n in e.size_params)
            params = tuple(self.bind(p) for p in e.params)
            if isinstance(e.form, S.ForLoop):
                form = S.ForLoop(self.bind(e.form.i), a(e.form.bound))
            else:
                form = S.WhileLoop(self.body(e.form.cond))
            return S.Loop(sizes, params, init, form, self.body(e.body))
        if isinstance(e, S.Iota):
            return S.Iota(a(e.n), e.elem, None if e.checked is None else a(e.checked))
        if isinstance(e, S.Replicate):
            return S.Replicate(a(e.n), a(e.x), None if e.checked is None else a(e.checked))
        if isinstance(e, S.Rearrange):
            return S.Rearrange(e.perm, a(e.arr))
        if isinstance(e, S.Map):
            return S.Map(a(e.width), self.lam(e.lam), tuple(map(a, e.arrs)))
        if isinstance(e, S.Reduce):
            return S.Reduce(a(e.width), self.lam(e.lam), tuple(map(a, e.neutral)), tuple(map(a, e.arrs)),
                            e.commutative)
        if isinstance(e, S.Scan):
            return S.Scan(a(e.width), self.lam(e.lam), tuple(map(a, e.neutral)), tuple(map(a, e.arrs)))
        if isinstance(e, S.Redomap):
            return S.Redomap(a(e.width), self.lam(e.red), self.lam(e.map_lam), tuple(map(a, e.neutral)),
                             tuple(map(a, e.arrs)), e.commutative)
        if isinstance(e, S.Scanomap):
            return S.Scanomap(a(e.width), self.lam(e.scan), self.lam(e.map_lam), tuple(map(a, e.neutral)),
                              tuple(map(a, e.arrs)), self.lam(e.post) if e.post is not None else None)
        if isinstance(e, T.SegMap):
            ctx = self.ctx(e.ctx)
            return T.SegMap(e.level, ctx, self.body(e.body), ts(e.types))
        if isinstance(e, T.SegRed):
            ctx = self.ctx(e.ctx)
            return T.SegRed(e.level, ctx, self.lam(e.red), tuple(map(a, e.neutral)), self.body(e.body),
                            ts(e.types), e.commutative)
        if isinstance(e, T.SegScan):
            ctx = self.ctx(e.ctx)
            return T.SegScan(e.level, ctx, self.lam(e.scan), tuple(map(a, e.neutral)), self.body(e.body),
                             ts(e.types))
        if isinstance(e, T.Guard):
            return T.Guard(e.threshold, e.kind, tuple(map(a, e.par)), self.body(e.then), self.body(e.else_),
                           ts(e.types), e.local_bytes)
        raise TypeError(f"unknown expression {type(e).__name__}")
