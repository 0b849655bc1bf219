"""Which updates inside a kernel's sequential loop may write into the loop's array state in place.

A loop whose body returns `state with [i] = v` (or a chain of such updates) would otherwise copy the whole
array at every iteration (O(n) per step: the Brownian bridge of OptionPricing, LU's diagonal block). An update
writes into the array it updates when nothing reads that array, or a view of it, after the update: then no
one can tell the old array from the new. The analysis is syntactic, on the loop's body alone.
"""

from incflat.ir import source as S
from incflat.ir.analysis import free_in_exp

# Expressions whose result is a view of their array argument (it shares the array's memory in a kernel).
VIEWS = (S.Index, S.Rearrange, S.Reshape, S.AtomExp)


def in_place_updates(loop: S.Loop) -> set:
    """The names bound by the updates of `loop`'s body that may write into the loop's array state: the chains
    `p1 = p with ..., p2 = p1 with ..., ..., result` from an array parameter p to its result."""
    body = loop.body
    binder = {v.name: (t, stm) for t, stm in enumerate(body.stms) for v in stm.pat}
    chosen = set()
    for param, result in zip(loop.params, body.result):
        if not isinstance(result, S.Var) or sum(isinstance(r, S.Var) and r.name == result.name
                                                for r in body.result) != 1:
            continue
        chain, current = [], result.name
        while current in binder and isinstance(binder[current][1].exp, S.Update):
            chain.append(binder[current])
            current = binder[current][1].exp.arr.name
        if chain and current == param.name and all(_unread_after(body, t, stm) for t, stm in chain):
            chosen |= {stm.pat[0].name for _, stm in chain}
    return chosen


def _unread_after(body: S.Body, t: int, update: S.Stm) -> bool:
    """Whether no statement after the update at position t, nor the body's results, nor the update's own
    value reads the array it updates or a view of it."""
    aliases = {update.exp.arr.name}
    for stm in body.stms[:t]:
        e = stm.exp
        if isinstance(e, VIEWS) and any(name in aliases for name in _array_args(e)):
            aliases |= {v.name for v in stm.pat}
    if isinstance(update.exp.value, S.Var) and update.exp.value.name in aliases:
        return False
    later = set()
    for stm in body.stms[t + 1:]:
        later |= set(free_in_exp(stm.exp))
    later |= {a.name for a in body.result if isinstance(a, S.Var)} - {update.pat[0].name}
    return not (later & aliases)


def _array_args(e) -> list:
    if isinstance(e, S.AtomExp):
        return [e.x.name] if isinstance(e.x, S.Var) else []
    return [e.arr.name]
