"""The prune_unsupported stage: the code versions that code generation cannot handle yet are dropped.

Which versions those are is code generation's to say: the stage list gives this pass code generation's
`supports`, so that lowering needs nothing from the layer above it."""

from __future__ import annotations

import dataclasses
from typing import Callable

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.traverse import map_nested


def prune_unsupported(target: T.Program, supports: Callable[[S.Body], Exception | None]) -> T.Program:
    """Drops the code versions that the backend cannot generate yet (`supports(version)` is the `Unsupported`
    error generating it raises, or None), keeping the guards' other branch; a program none of whose versions can be
    generated raises the error of its last version."""
    return dataclasses.replace(target, funs=tuple(dataclasses.replace(f, body=_prune_body(f.body, supports))
                                                   for f in target.funs))


def _prune_body(body: S.Body, supports) -> S.Body:
    stms = []
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, T.Guard):
            then, else_ = _prune_body(e.then, supports), _prune_body(e.else_, supports)
            then_error, else_error = supports(then), supports(else_)
            if then_error is None and else_error is None:
                stms.append(S.Stm(stm.pat, dataclasses.replace(e, then=then, else_=else_), stm.loc))
                continue
            if then_error is not None and else_error is not None:
                raise else_error
            kept = else_ if then_error is not None else then
            stms.extend(kept.stms)
            stms.extend(S.Stm((p,), S.AtomExp(r), stm.loc) for p, r in zip(stm.pat, kept.result))
        elif isinstance(e, (S.If, S.Loop)):
            stms.append(S.Stm(stm.pat, map_nested(e, lambda b: _prune_body(b, supports)), stm.loc))
        else:
            stms.append(stm)
    return S.Body(tuple(stms), body.result)
