"""Cheap maps recomputed where they are read, instead of launched.

A host-level segmap whose body computes a few scalars costs a launch, and the host's time for it, for a few
instructions a point: LocVolCalib's time loop reads each option's two times and computes 1 / (t' - t) in two
such kernels at every step, two of its seven. Where every reader of such a map's results is a level-1 segop
that binds them in its outermost context level, of the same width, the `inline_cheap_maps` stage makes each
reader bind the map's inputs there instead and start its body with the map's statements (renamed), and the
map goes. Futhark inlines cheap maps into their consumers likewise.
"""

import dataclasses

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import use_counts
from incflat.ir.rename import NameSource, Renamer, all_names
from incflat.ir.traverse import map_bodies, map_nested, nested
from incflat.ir.types import Scalar

CHEAP_STATEMENTS = 8  # a cheap map's body: at most this many scalar statements
CHEAP = (S.AtomExp, S.BinOp, S.UnOp, S.PrimCall, S.Index)


def inline_cheap_maps(prog: T.Program) -> T.Program:
    """The inline_cheap_maps stage (target IR to target IR)."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _host_body(body, use_counts(body), names))


def cheap(stm: S.Stm) -> bool:
    """A one-level segmap of a few scalar statements, each result a scalar a point."""
    e = stm.exp
    return (isinstance(e, T.SegMap) and e.level == 1 and len(e.ctx) == 1
            and len(e.body.stms) <= CHEAP_STATEMENTS
            and all(isinstance(s.exp, CHEAP) and all(isinstance(p.type, Scalar) for p in s.pat)
                    for s in e.body.stms))


def _host_body(body: S.Body, counts: dict, names: NameSource) -> S.Body:
    stms = list(body.stms)
    for t in range(len(stms)):
        stm = stms[t]
        if stm is None or not cheap(stm):
            continue
        made = {p.name for p in stm.pat}
        readers = _readers(stms[t + 1:], made, stm.exp.ctx[0].width)
        if (readers is None or any(readers.get(n, 0) != counts.get(n, 0) for n in made)
                or not any(counts.get(n) for n in made)):
            continue
        stms[t] = None
        stms[t + 1:] = [None if s is None else _inlined(s, stm, names) for s in stms[t + 1:]]
    kept = [s for s in stms if s is not None]
    return S.Body(tuple(S.Stm(s.pat, _nested_host(s.exp, counts, names), s.loc) for s in kept), body.result)


def _nested_host(e, counts: dict, names: NameSource):
    """The bodies that run on the host inside a statement (a loop's, a branch's, a guard's versions')."""
    if isinstance(e, (S.Loop, S.If, T.Guard)):
        return map_nested(e, lambda b: _host_body(b, counts, names))
    return e


def _readers(stms: list, made: set, width) -> "dict | None":
    """How many times the statements read each of `made` in the outermost context of a level-1 segop of
    `width`; None if one reads it otherwise (the host, an inner level, a kernel's body)."""
    found = {}
    for stm in stms:
        if stm is None:
            continue
        e = stm.exp
        if isinstance(e, T.SEGOPS) and e.level == 1:
            outer = e.ctx[0]
            if any(a.name in made for b in e.ctx[1:] for a in b.arrs):
                return None
            for a in outer.arrs:
                if a.name in made:
                    if outer.width != width:
                        return None
                    found[a.name] = found.get(a.name, 0) + 1
            continue  # (a read inside its body leaves the counts short of the uses: not inlined)
        if isinstance(e, (S.Loop, S.If, T.Guard)):
            for inner in nested(e):
                more = _readers(list(inner.body.stms), made, width)
                if more is None:
                    return None
                for n, c in more.items():
                    found[n] = found.get(n, 0) + c
    return found


def _inlined(stm: S.Stm, producer: S.Stm, names: NameSource) -> S.Stm:
    """stm with every level-1 segop in it that binds the producer's results computing them itself."""
    e = stm.exp
    if isinstance(e, T.SEGOPS) and e.level == 1:
        return S.Stm(stm.pat, _recomputing(e, producer, names), stm.loc)
    if isinstance(e, (S.Loop, S.If, T.Guard)):
        return S.Stm(stm.pat, map_nested(e, lambda b: S.Body(tuple(_inlined(s, producer, names)
                                                                   for s in b.stms), b.result)), stm.loc)
    return stm


def _recomputing(op, producer: S.Stm, names: NameSource):
    """The segop binding the producer's inputs in its outermost level, its body starting with the producer's
    statements (fresh names) and binding the parameters that took the producer's results to them."""
    made = {p.name: k for k, p in enumerate(producer.pat)}
    outer = op.ctx[0]
    taken = [(p, a) for p, a in zip(outer.params, outer.arrs) if a.name in made]
    if not taken:
        return op
    source = producer.exp
    renamer = Renamer(names, {})
    params = tuple(renamer.bind(p) for p in source.ctx[0].params)
    body = renamer.body(source.body)
    bound = tuple(S.Stm((p,), S.AtomExp(body.result[made[a.name]]), None) for p, a in taken)
    kept = [(p, a) for p, a in zip(outer.params, outer.arrs) if a.name not in made]
    ctx = (dataclasses.replace(outer, params=tuple(p for p, _ in kept) + params,
                               arrs=tuple(a for _, a in kept) + tuple(source.ctx[0].arrs)),) + tuple(op.ctx[1:])
    return dataclasses.replace(op, ctx=ctx, body=S.Body(body.stms + bound + op.body.stms, op.body.result))
