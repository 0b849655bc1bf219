"""A thread's cheap map results recomputed where their elements are read, instead of stored.

In a segmap whose threads walk whole rows, a map in the body is a loop that writes each result to memory of
the thread's own (a row per thread in global memory), read back later element by element. LocVolCalib's
tridiagonal solver is the case: `map4` computes the rows a, b, c and y of the system from the thread's
inputs in a handful of operations an element, and the three sequential scans that follow read `a[i]`,
`b[i]`, `c[i-1]`. Writing those rows and reading them back is most of the kernel's memory traffic. Where
every read of a map's result is a single element `xs[i]`, the `inline_thread_maps` stage replaces each read
by the statements that compute that element (the map's inputs read at `i`); the map keeps the other results,
or goes.

A result qualifies when it needs at most CHEAP_STATEMENTS scalar statements reading at most MOST_INPUTS
arrays of the thread's own (rows its neighbours do not share), is read at most one loop deeper than the map
(a read inside a nested loop would recompute the element at every iteration), and the inputs it needs are
not updated in place afterwards."""

import dataclasses

from incflat.codegen.lower.cheap_maps import CHEAP, CHEAP_STATEMENTS
from incflat.flatten.nests import names_of
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import exp_atoms, use_counts
from incflat.ir.rename import NameSource, Renamer, all_names
from incflat.ir.traverse import map_bodies, map_nested, nested
from incflat.ir.types import Scalar

MOST_INPUTS = 2  # of a thread's own: an element read k times costs k reads of each instead of 1 + k reads


def inline_thread_maps(prog: T.Program) -> T.Program:
    """The inline_thread_maps stage (target IR to target IR)."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _host_body(body, names))


def _host_body(body: S.Body, names: NameSource) -> S.Body:
    def stm(s: S.Stm) -> S.Stm:
        if isinstance(s.exp, T.SegMap) and T.walks_rows(s.exp):
            own = {p.name for p in s.exp.ctx[-1].params} | _bound(s.exp.body)
            return S.Stm(s.pat, dataclasses.replace(s.exp, body=_thread_body(s.exp.body, own, names)), s.loc)
        if isinstance(s.exp, T.SEGOPS):
            return s
        return S.Stm(s.pat, map_nested(s.exp, lambda b: _host_body(b, names)), s.loc)
    return S.Body(tuple(stm(s) for s in body.stms), body.result)


def _bound(body: S.Body) -> set:
    """The names a body binds, nested bodies included."""
    out = set()
    for s in body.stms:
        out |= {p.name for p in s.pat}
        for inner in nested(s.exp):
            out |= {v.name for v in inner.binds} | _bound(inner.body)
    return out


def _thread_body(body: S.Body, own: set, names: NameSource) -> S.Body:
    """A body a thread runs alone: its maps' qualifying results inlined into their readers, inner bodies first."""
    stms = [S.Stm(s.pat, map_nested(s.exp, lambda b: _thread_body(b, own, names)), s.loc) for s in body.stms]
    i = 0
    while i < len(stms):  # the list grows as reads are replaced
        slices = _recomputable(stms[i], stms[i + 1:], body.result, own)
        if slices:
            stms[i + 1:] = _reads_replaced(stms[i + 1:], stms[i].exp, slices, names)
            stms[i] = _without(stms[i], slices)
        i += 1
    return S.Body(tuple(s for s in stms if s is not None), body.result)


def _recomputable(stm, after: list, result: tuple, own: set) -> dict:
    """For a map, each result that qualifies: its name -> (the lambda statements it needs, the result atom).
    `own`: the names of the thread's own arrays (its innermost context rows and what its body binds), as
    opposed to arrays its neighbours read too, whose reads the cache serves."""
    if stm is None or not isinstance(stm.exp, S.Map):
        return {}
    lam = stm.exp.lam
    if not all(isinstance(s.exp, CHEAP) and all(isinstance(p.type, Scalar) for p in s.pat) for s in lam.body.stms):
        return {}
    rest = S.Body(tuple(s for s in after if s is not None), result)
    counts = use_counts(rest)
    reads = {}
    deep = _count_reads(rest.stms, {p.name for p in stm.pat}, reads, depth=0)
    consumed = _consumed(rest.stms)
    input_of = {p.name: a.name for p, a in zip(lam.params, stm.exp.arrs)}
    slices = {}
    for p, r, t in zip(stm.pat, lam.body.result, lam.ret):
        needed = _slice(lam.body.stms, r)
        inputs = {input_of[n] for n in _reads_of(needed, r) if n in input_of}
        if (isinstance(t, Scalar) and p.name not in deep and counts.get(p.name, 0) == reads.get(p.name, 0) > 0
                and len(needed) <= CHEAP_STATEMENTS and len(inputs & own) <= MOST_INPUTS and not inputs & consumed):
            slices[p.name] = (needed, r)
    return slices


def _without(stm: S.Stm, slices: dict) -> "S.Stm | None":
    """The map without the results in `slices` (None when none is left), its lambda cut to what the rest need."""
    kept = [k for k, p in enumerate(stm.pat) if p.name not in slices]
    if not kept:
        return None
    e = stm.exp
    results = tuple(e.lam.body.result[k] for k in kept)
    needed = {id(s) for r in results for s in _slice(e.lam.body.stms, r)}
    body = S.Body(tuple(s for s in e.lam.body.stms if id(s) in needed), results)
    lam = S.Lambda(e.lam.params, body, tuple(e.lam.ret[k] for k in kept))
    return S.Stm(tuple(stm.pat[k] for k in kept), dataclasses.replace(e, lam=lam), stm.loc)


def _reads_of(needed: tuple, result) -> set:
    """The names a result's slice reads (the lambda's parameters among them)."""
    return {n for s in needed for n in names_of(exp_atoms(s.exp))} | names_of((result,))


def _count_reads(stms, made: set, reads: dict, depth: int) -> set:
    """Counts the single-element reads `xs[i]` of each of `made` into `reads`; returns those of `made` read
    otherwise or more than one loop deeper than the statements given (depth: the loops and lambdas entered)."""
    deep = set()
    for s in stms:
        e = s.exp
        if isinstance(e, S.Index) and e.arr.name in made:
            if depth > 1 or len(e.idxs) != 1 or isinstance(e.idxs[0], S.DimSlice):
                deep.add(e.arr.name)
            else:
                reads[e.arr.name] = reads.get(e.arr.name, 0) + 1
        for inner in nested(e):
            deep |= _count_reads(inner.body.stms, made, reads, depth if isinstance(e, S.If) else depth + 1)
    return deep


def _consumed(stms) -> set:
    """The arrays that statements (nested ones included) update in place or hand to a loop to update."""
    out = set()
    for s in stms:
        e = s.exp
        if isinstance(e, S.Update):
            out.add(e.arr.name)
        elif isinstance(e, (S.Scatter, S.Hist)):
            out.add(e.dest.name)
        elif isinstance(e, S.Loop):
            out |= names_of(e.init)
        for inner in nested(e):
            out |= _consumed(inner.body.stms)
    return out


def _slice(stms: tuple, result) -> tuple:
    """The statements of `stms` that `result` depends on, in order."""
    needed = names_of((result,))
    kept = []
    for s in reversed(stms):
        if any(p.name in needed for p in s.pat):
            kept.append(s)
            needed |= names_of(exp_atoms(s.exp))
    return tuple(reversed(kept))


def _reads_replaced(stms: list, m: S.Map, slices: dict, names: NameSource) -> list:
    """The statements with each read `xs[i]` of the map's results replaced by the element's computation."""
    out = []
    for s in stms:
        if s is None:
            out.append(None)
            continue
        e = s.exp
        if isinstance(e, S.Index) and e.arr.name in slices:
            out.extend(_element(s, m, slices[e.arr.name], names))
            continue
        out.append(S.Stm(s.pat, map_nested(e, lambda b: S.Body(tuple(
            _reads_replaced(list(b.stms), m, slices, names)), b.result)), s.loc))
    return out


def _element(read: S.Stm, m: S.Map, piece: tuple, names: NameSource) -> list:
    """The statements computing `read`'s element: the inputs the slice uses read at the index (with the read's
    position, for its bounds check), the slice renamed, the result bound to the read's variable."""
    needed, result = piece
    used = _reads_of(needed, result)
    renamer = Renamer(names, {})
    out = []
    for p, a in zip(m.lam.params, m.arrs):
        if p.name in used:
            out.append(S.Stm((renamer.bind(p),), S.Index(a, read.exp.idxs), read.loc))
    out.extend(renamer.stm(s) for s in needed)
    out.append(S.Stm(read.pat, S.AtomExp(renamer.atom(result)), read.loc))
    return out
