"""Context parameters that a segop's body never reads, dropped.

Flattening distributes an outer map over the statements of its body, and every segop it makes inherits the
map's whole context: all the arrays the outer lambda takes, though each statement reads a few of them. A
kernel takes each context array as a buffer, an offset and a stride per dimension, and a launch on NVIDIA
costs about 0.25 us per argument, so LocVolCalib's tridag kernels passed a dozen arrays they never read. The
`prune_context` stage drops a binding's (parameter, array) pairs whose parameter neither the body nor an
inner binding reads; the binding's width stays, so the iteration space is the same.
"""

import dataclasses

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_body, type_size_names
from incflat.ir.traverse import map_bodies, map_nested, nested


def prune_context(prog: T.Program) -> T.Program:
    """The prune_context stage (target IR to target IR)."""
    return map_bodies(prog, _body)


def _body(body: S.Body) -> S.Body:
    return S.Body(tuple(S.Stm(stm.pat, _exp(stm.exp), stm.loc) for stm in body.stms), body.result)


def _exp(e):
    e = map_nested(e, _body)  # inner segops first: their pruned contexts read fewer outer parameters
    return _pruned(e) if isinstance(e, T.SEGOPS) else e


def _pruned(op):
    # what the body, the operator, the neutral elements and the widths read
    used = set(free_in_body(op.body)) | {n for inner in nested(op)[1:] for n in free_in_body(inner.body)}
    used |= {a.name for a in getattr(op, "neutral", ()) + tuple(b.width for b in op.ctx) if isinstance(a, S.Var)}
    ctx = []
    for b in reversed(op.ctx):  # an inner binding's arrays may be an outer binding's parameters
        keep = [(p, a) for p, a in zip(b.params, b.arrs) if p.name in used]
        used |= {a.name for _, a in keep} | {n for p, _ in keep for n in type_size_names(p.type)}
        ctx.append(dataclasses.replace(b, params=tuple(p for p, _ in keep), arrs=tuple(a for _, a in keep)))
    ctx.reverse()
    return op if ctx == list(op.ctx) else dataclasses.replace(op, ctx=tuple(ctx))
