"""Iotas recomputed inside kernels instead of read from memory.

Normalisation hoists `iota n` out of maps (it is invariant), so a kernel whose threads walk `map (\\j -> ...)
(iota n)` gets the iota as an input array: each step loads j from global memory before it can load what j
indexes, two dependent round trips where one would do. Like Futhark, which treats iota as free to
recompute, the `sink_iotas` stage gives every level-1 segop that reads a host-level iota its own `let x =
iota n`; inside a kernel an iota is a view of no memory (`codegen.kernel.IotaView`: element i is i).
"""

import dataclasses

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_body
from incflat.ir.rename import NameSource, Renamer, all_names
from incflat.ir.traverse import map_bodies, map_nested


def sink_iotas(prog: T.Program) -> T.Program:
    """The sink_iotas stage (target IR to target IR)."""
    names = NameSource(all_names(prog))
    return map_bodies(prog, lambda body: _host_body(body, {}, names))


def _host_body(body: S.Body, iotas: dict, names: NameSource) -> S.Body:
    """iotas: the host-level `let x = iota n` in scope, name -> the statement."""
    iotas = dict(iotas)
    stms = []
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, T.SEGOPS) and e.level == 1:
            e = _with_own_iotas(e, iotas, names)
        elif isinstance(e, (S.If, S.Loop, T.Guard)):
            e = map_nested(e, lambda b: _host_body(b, iotas, names))
        elif isinstance(e, S.Iota):
            iotas[stm.pat[0].name] = stm
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


def _with_own_iotas(op, iotas: dict, names: NameSource):
    """The segop with a fresh `let x' = iota n` at the start of its per-point body for each host iota x
    that the body reads (its context arrays stay as they are: the launch binds them by index)."""
    used = [iotas[n] for n in free_in_body(op.body) if n in iotas]
    if not used:
        return op
    subst, own = {}, []
    for stm in used:
        (x,) = stm.pat
        fresh = S.Var(names.fresh(x.name), x.type)
        subst[x.name] = fresh
        # the copy runs only where its points do, inside what the host's iota was moved out of: where that
        # runs, so the size check that the host's iota may skip (S.Replicate's `checked`) always holds here
        own.append(S.Stm((fresh,), dataclasses.replace(stm.exp, checked=None), stm.loc))
    body = Renamer(names, subst).body(op.body)
    return dataclasses.replace(op, body=S.Body(tuple(own) + body.stms, body.result))
