"""Analyses of the host-level bodies that codegen.host writes: which arrays are buffers of their own (fresh),
which the host code reads itself (an array only kernels read is never made: computed_array), and which
scatters a segmap's kernel does (scatter_fusions)."""

from incflat.codegen import coalescing
from incflat.codegen.in_place import memories
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import exp_atoms, free_in_exp
from incflat.ir.traverse import nested
from incflat.ir.types import Array, Scalar


# The statements whose array results the host allocates anew (not views of other arrays), in buffers of their
# own that a histogram may update in place. Not an iota: the runtime keeps one per length (arrays.iota).
FRESH_ARRAYS = (S.Replicate, S.ArrayLit, S.Concat, S.Update, S.Scatter, S.Hist, S.Filter, T.SegMap, T.SegRed,
                T.SegScan)


def constant_literal(e) -> bool:
    """An array literal of constants: made once on the device (runtime's constant_array), so not fresh."""
    return isinstance(e, S.ArrayLit) and all(isinstance(a, S.Const) for a in e.elems)


def host_shares(stm: S.Stm) -> list:
    """On the host, the arrays whose buffers a statement's array results may share (codegen.in_place): none for
    a segop or an array constructor (a buffer of its own); for a guard or an if, those its branches' results
    may share; for anything else (a view, a loop), every array it reads."""
    e = stm.exp
    if isinstance(e, FRESH_ARRAYS) and not constant_literal(e):
        return []
    if isinstance(e, (S.If, T.Guard)):
        return sorted(set().union(*(_origins(b, a) for b in (e.then, e.else_) for a in b.result)))
    return [n for n, v in free_in_exp(e).items() if isinstance(v.type, Array)]


def fresh_results(stm: S.Stm, in_place: set) -> set:
    """The names of a statement's results that are buffers of their own: a segop's or an array constructor's;
    the state of a loop whose updates write into it (`in_place`: the loop starts from a state of its own);
    a guard's or an if's where every branch's is."""
    e = stm.exp
    if isinstance(e, FRESH_ARRAYS) and not constant_literal(e):
        return {p.name for p in stm.pat}
    if isinstance(e, S.Loop):
        skip = len(stm.pat) - len(e.params)  # the pattern's size parameters first
        return {p.name for p, r in zip(stm.pat[skip:], e.body.result) if isinstance(r, S.Var) and r.name in in_place}
    if isinstance(e, (S.If, T.Guard)):
        def fresh_in(body, a):
            binder = next((s for s in body.stms if any(p.name == getattr(a, "name", None) for p in s.pat)), None)
            return binder is not None and a.name in fresh_results(binder, in_place)
        return {p.name for p, a, b in zip(stm.pat, e.then.result, e.else_.result)
                if fresh_in(e.then, a) and fresh_in(e.else_, b)}
    return set()


def _origins(body: S.Body, a) -> set:
    """The arrays outside `body` whose buffers its result `a` may share."""
    binder = {p.name: stm for stm in body.stms for p in stm.pat}
    pending, seen, found = [a.name] if isinstance(a, S.Var) else [], set(), set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in binder:
            pending += host_shares(binder[name])
        else:
            found.add(name)
    return found


def computed_array(stm: S.Stm, computed: dict):
    """Where a statement makes an array whose elements a kernel computes where it reads them instead of loading
    them (kernel_base's computed_input), what makes it: `iota n`, or `replicate n x` of a scalar x, or of an
    array that is one (`computed`: those in scope), as `replicate n x` of that scalar, or another name for one;
    else None."""
    e = stm.exp
    if isinstance(e, S.Iota):
        return e
    if isinstance(e, S.AtomExp):  # another name for one (a coercion `x :> [n]t`)
        return computed.get(e.x.name) if isinstance(e.x, S.Var) else None
    if not isinstance(e, S.Replicate):
        return None
    if isinstance(e.x.type, Scalar):
        return e
    inner = computed.get(e.x.name) if isinstance(e.x, S.Var) else None
    return S.Replicate(e.n, inner.x, e.checked) if isinstance(inner, S.Replicate) else None


def scalar_statement(stm: S.Stm) -> bool:
    """Whether a statement computes scalars from scalars alone (no array, no control flow)."""
    return (isinstance(stm.exp, (S.AtomExp, S.BinOp, S.UnOp, S.PrimCall))
            and all(isinstance(p.type, Scalar) for p in stm.pat))


def host_reads(body: S.Body) -> set:
    """The variables the host code of a body reads itself (_host_reads), and the arrays replicated into those
    or renamed as those (a replicate or a coercion of an array that only kernels read, which they compute,
    reads nothing: backprop's zeroed weights)."""
    rows = {}  # `replicate n x` of an array x that kernels compute: its result -> x
    reads = _host_reads(body, rows, {})
    pending = list(reads)
    while pending:
        row = rows.get(pending.pop())
        if row is not None and row not in reads:
            reads.add(row)
            pending.append(row)
    return reads


def _host_reads(body: S.Body, rows: dict, computed: dict) -> set:
    """The variables the host code of a body reads itself, as opposed to those only its kernels read. A
    level-1 segop's kernels compute the elements of a host iota or replicate where they read them
    (computed_array, `computed`: those in scope, as the host code's writer keeps them), so one that only kernels
    read is never made (nw's `tabulate (blk * B * B)` and the replicate its blocks start from, at every step).
    A replicate that kernels cannot compute (of an iota's row) is made, and reads its row."""
    reads = {a.name for a in body.result if isinstance(a, S.Var)}
    computed = dict(computed)
    for stm in body.stms:
        e = stm.exp
        made = computed_array(stm, computed)
        if made is not None:
            computed[stm.pat[0].name] = made
        if isinstance(e, T.SEGOPS):
            reads |= set(coalescing.coalesced_inputs(e)) if isinstance(e, T.SegMap) else set()
            continue
        if isinstance(e, S.Hist):  # its kernels take every array they read as memory
            reads |= set(free_in_exp(e))
            continue
        if isinstance(e, S.Replicate) and isinstance(e.x.type, Array) and made is not None:
            rows[stm.pat[0].name] = e.x.name
            reads |= {a.name for a in (e.n, e.checked) if isinstance(a, S.Var)}
            continue
        if isinstance(e, S.AtomExp) and isinstance(e.x, S.Var) and isinstance(e.x.type, Array):
            rows[stm.pat[0].name] = e.x.name  # another name (a coercion): read where that one is
            continue
        reads |= {a.name for a in exp_atoms(e) if isinstance(a, S.Var)}
        for inner in nested(e):  # the bodies of branches, loops and guards: host code
            reads |= _host_reads(inner.body, rows, computed)
    return reads


# What may stand between a segmap and the scatter it is fused into: statements that write into no array there
# is (a segop writes only its own new arrays)
WRITE_NOTHING = (S.AtomExp, S.BinOp, S.UnOp, S.PrimCall, S.Reshape, S.Rearrange, S.Index, S.TuningParam, S.Assert,
                 *T.SEGOPS)


def scatter_fusions(body: S.Body, uses: dict) -> dict:
    """The scatters of a body that a segmap's kernel does itself, and the segmaps: scatter's index -> the
    segmap's. The segmap is one-dimensional, a thread per point, and makes two arrays, which only the
    scatter reads, as its indices and its values; the scatter writes into a one-dimensional array; between
    the two, no statement writes into an array (the segmap's kernel runs in the scatter's place). Futhark
    fuses `scatter dest is (map f xs)` likewise; nw's diagonals pass through a launch and two arrays less.
    Not where the segmap reads the destination's memory (a view of it, as its rows): the kernel would then
    write into a copy of it (runtime's destination), where the scatter alone writes into it in place."""
    made, found, memory = {}, {}, None
    for t, stm in enumerate(body.stms):
        e = stm.exp
        if (isinstance(e, T.SegMap) and e.level == 1 and len(e.ctx) == 1 and len(stm.pat) == 2
                and not T.level0_segops(e.body) and not coalescing.coalesced_inputs(e)
                and all(isinstance(p.type, Array) and p.type.rank == 1 for p in stm.pat)):
            made.update(dict.fromkeys((p.name for p in stm.pat), t))
        elif isinstance(e, S.Scatter) and e.dest.type.rank == 1 and e.idxs.name != e.vals.name:
            source = made.get(e.idxs.name)
            if (source is not None and made.get(e.vals.name) == source
                    and uses.get(e.idxs.name) == 1 and uses.get(e.vals.name) == 1
                    and all(isinstance(s.exp, WRITE_NOTHING) for s in body.stms[source + 1:t])):
                memory = memories(body, host_shares) if memory is None else memory
                if not memory.get(e.dest.name, {e.dest.name}) & set(free_in_exp(body.stms[source].exp)):
                    found[t] = source
    return found
