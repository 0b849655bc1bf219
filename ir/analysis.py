"""Variable analyses shared by the passes: free variables, uses, inner parallelism."""

from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.traverse import nested
from incflat.ir.types import I64, Array, Tuple, array_of


def _checked_atoms(e) -> tuple:
    """An iota's or a replicate's condition of its size check (S.Replicate), where it has one."""
    return () if e.checked is None else (e.checked,)


def index_atoms(i) -> tuple:
    if isinstance(i, S.DimSlice):
        return (i.start, i.end, i.stride, i.size)
    return (i,)


def ctx_atoms(ctx) -> tuple:
    """Atoms a context reads: widths, and arrays not bound by an outer binding of the same context."""
    return tuple(a for b in ctx for a in (b.width,) + tuple(b.arrs))


def _indexed_atoms(e) -> tuple:
    """An index's or an update's array and the atoms of its indices."""
    return (e.arr,) + tuple(a for i in e.idxs for a in index_atoms(i))


EXP_ATOMS = nodes.Table(f"{__name__}.EXP_ATOMS", "target", {
    S.AtomExp: lambda e: (e.x,),
    S.BinOp: lambda e: (e.x, e.y),
    S.UnOp: lambda e: (e.x,),
    S.PrimCall: lambda e: tuple(e.args),
    S.Apply: lambda e: tuple(e.args),
    S.If: lambda e: (e.cond,),
    S.Index: _indexed_atoms,
    S.Update: lambda e: _indexed_atoms(e) + (e.value,),
    S.Assert: lambda e: (e.cond,) + tuple(e.values),
    S.TuningParam: lambda e: (e.default,),
    S.ArrayLit: lambda e: tuple(e.elems),
    S.Concat: lambda e: tuple(e.arrs) + (e.size,),
    S.Rotate: lambda e: (e.amount, e.arr),
    S.Reshape: lambda e: tuple(e.shape) + (e.arr,),
    S.Scatter: lambda e: (e.dest, e.idxs, e.vals),
    S.Hist: lambda e: (e.width,) + tuple(e.neutral) + (e.dest, e.idxs, e.vals),
    S.Loop: lambda e: tuple(e.init) + ((e.form.bound,) if isinstance(e.form, S.ForLoop) else ()),
    S.Filter: lambda e: (e.width,) + tuple(e.arrs),
    S.Iota: lambda e: (e.n,) + _checked_atoms(e),
    S.Replicate: lambda e: (e.n, e.x) + _checked_atoms(e),
    S.Rearrange: lambda e: (e.arr,),
    S.Map: lambda e: (e.width,) + tuple(e.arrs),
    **dict.fromkeys((S.Reduce, S.Scan, S.Redomap, S.Scanomap),
                    lambda e: (e.width,) + tuple(e.neutral) + tuple(e.arrs)),
    T.SegMap: lambda e: ctx_atoms(e.ctx),
    **dict.fromkeys((T.SegRed, T.SegScan), lambda e: ctx_atoms(e.ctx) + tuple(e.neutral)),
    T.Guard: lambda e: tuple(e.par),
})


def exp_atoms(e) -> tuple:
    """The atoms an expression reads directly (not those inside nested bodies)."""
    return EXP_ATOMS.rule(e)(e)


def type_size_names(t) -> set:
    if isinstance(t, Array):
        return {d for d in t.shape if isinstance(d, str)}
    if isinstance(t, Tuple):
        return set().union(*(type_size_names(x) for x in t.elems)) if t.elems else set()
    return set()


def free_in_exp(e) -> dict:
    """Free variables of an expression: name -> Var (sizes mentioned by types count as i64 variables)."""
    free = {}

    def use(a):
        if isinstance(a, S.Var):
            free.setdefault(a.name, a)
            for n in sorted(type_size_names(a.type)):
                free.setdefault(n, S.Var(n, I64))

    for a in exp_atoms(e):
        use(a)
    for inner in nested(e):
        bound = {p.name for p in inner.binds}
        for n, v in free_in_body(inner.body).items():
            if n not in bound:
                free.setdefault(n, v)
        # the sizes a lambda's parameter and result types name are read too
        for t in tuple(p.type for p in inner.binds) + tuple(inner.ret):
            for n in sorted(type_size_names(t) - bound):
                free.setdefault(n, S.Var(n, I64))
    if isinstance(e, T.SEGOPS):
        # arrays of an inner binding may be params of an outer binding
        bound = set()
        for b in e.ctx:
            for a in b.arrs:
                if a.name in bound:
                    free.pop(a.name, None)
            bound |= {p.name for p in b.params}
    return free


def free_in_body(body: S.Body) -> dict:
    free = {}
    bound = set()
    for stm in body.stms:
        for n, v in free_in_exp(stm.exp).items():
            if n not in bound:
                free.setdefault(n, v)
        binds = {p.name for p in stm.pat}
        for p in stm.pat:  # the sizes its pattern's types name, unless the pattern binds them itself
            for n in sorted(type_size_names(p.type) - bound - binds):
                free.setdefault(n, S.Var(n, I64))
        bound |= binds
    for a in body.result:
        if isinstance(a, S.Var) and a.name not in bound:
            free.setdefault(a.name, a)
    return free


def has_assertions(e) -> bool:
    """Whether an expression is, or holds in a nested body, an Assert: it must run even if unused."""
    return isinstance(e, S.Assert) or any(has_assertions(s.exp) for inner in nested(e) for s in inner.body.stms)


def has_inner_soacs(body: S.Body) -> bool:
    """Whether a body contains exploitable parallelism (a SOAC anywhere inside it)."""
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.SOACS):
            return True
        if any(has_inner_soacs(inner.body) for inner in nested(e) if not inner.is_lambda):
            return True
    return False


def use_counts(body: S.Body) -> dict:
    """How many times each variable name is read in a body (nested bodies included)."""
    counts = {}

    def count_exp(e):
        for a in exp_atoms(e):
            if isinstance(a, S.Var):
                counts[a.name] = counts.get(a.name, 0) + 1
        for inner in nested(e):
            count_body(inner.body)

    def count_body(b):
        for stm in b.stms:
            count_exp(stm.exp)
        for a in b.result:
            if isinstance(a, S.Var):
                counts[a.name] = counts.get(a.name, 0) + 1

    count_body(body)
    return counts


def _index_type(e: S.Index):
    t = e.arr.type
    kept = tuple(S.dim_of(i.size) for i in e.idxs if isinstance(i, S.DimSlice))
    return array_of(t.elem, kept + t.shape[len(e.idxs):])


def _rearrange_type(e: S.Rearrange):
    t = e.arr.type
    return Array(t.elem, tuple(t.shape[p] for p in e.perm) + t.shape[len(e.perm):])


def _concat_type(e: S.Concat):
    t = e.arrs[0].type
    return Array(t.elem, (S.dim_of(e.size),) + t.shape[1:])


def _scanomap_types(e: S.Scanomap) -> tuple:
    elems = e.post.ret if e.post is not None else tuple(a.type for a in e.neutral)
    return tuple(array_of(t, (S.dim_of(e.width),)) for t in elems)


EXP_TYPES = nodes.Table(f"{__name__}.EXP_TYPES", "target", {
    S.AtomExp: lambda e: (e.x.type,),
    **dict.fromkeys((S.BinOp, S.UnOp, S.PrimCall, S.ArrayLit), lambda e: (e.type,)),
    **dict.fromkeys((S.Apply, S.If, S.Hist, *T.EXPS), lambda e: e.types),  # they record their result types
    S.Index: lambda e: (_index_type(e),),
    **dict.fromkeys((S.Update, S.Rotate), lambda e: (e.arr.type,)),
    S.Scatter: lambda e: (e.dest.type,),
    S.Assert: lambda e: (),
    S.TuningParam: lambda e: (e.default.type,),
    S.Concat: lambda e: (_concat_type(e),),
    S.Reshape: lambda e: (Array(e.arr.type.elem, tuple(S.dim_of(a) for a in e.shape)),),
    S.Filter: lambda e: (I64,) + tuple(array_of(a.type.row(), (e.size,)) for a in e.arrs),
    S.Loop: lambda e: (I64,) * len(e.size_params) + tuple(p.type for p in e.params),
    S.Iota: lambda e: (Array(e.elem, (S.dim_of(e.n),)),),
    S.Replicate: lambda e: (array_of(e.x.type, (S.dim_of(e.n),)),),
    S.Rearrange: lambda e: (_rearrange_type(e),),
    S.Map: lambda e: tuple(array_of(t, (S.dim_of(e.width),)) for t in e.lam.ret),
    **dict.fromkeys((S.Reduce, S.Redomap), lambda e: tuple(a.type for a in e.neutral)),
    S.Scan: lambda e: tuple(array_of(a.type, (S.dim_of(e.width),)) for a in e.neutral),
    S.Scanomap: _scanomap_types,
})


def exp_types(e: S.Exp) -> tuple:
    """The result types of an expression, one per pattern element."""
    return EXP_TYPES.rule(e)(e)
