"""The one traversal of nested bodies, for the source and the target IR alike.

Every expression that holds code holds it as bodies: a lambda's (a SOAC's function or operator, a segop's
operator), a branch's, a loop's, a segop's per-point body. `nested(e)` lists them with the variables each
binds; `map_nested(e, f)` rebuilds `e` with `f` applied to each. Passes and analyses go through these two,
so that a new expression form needs teaching in one place.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple

from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.types import I64


class Nested(NamedTuple):
    body: S.Body
    binds: tuple  # tuple[Var, ...]: lambda parameters, loop parameters and counter, segop context parameters
    is_lambda: bool  # a function or operator (as opposed to a branch, a loop body or a segop's body)
    ret: tuple = ()  # a lambda's result types


def _lam(lam: S.Lambda) -> Nested:
    return Nested(lam.body, tuple(lam.params), True, tuple(lam.ret))


def loop_binds(e: S.Loop) -> tuple:
    """The variables a loop binds for its body: parameters, size parameters and the counter."""
    sizes = tuple(S.Var(n, I64) for n in e.size_params)
    counter = (e.form.i,) if isinstance(e.form, S.ForLoop) else ()
    return tuple(e.params) + sizes + counter


def nested(e) -> tuple:
    """The bodies directly inside an expression, in the order they are written."""
    if isinstance(e, (S.If, T.Guard)):
        return (Nested(e.then, (), False), Nested(e.else_, (), False))
    if isinstance(e, S.Loop):
        binds = loop_binds(e)
        cond = (Nested(e.form.cond, binds, False),) if isinstance(e.form, S.WhileLoop) else ()
        return cond + (Nested(e.body, binds, False),)
    if isinstance(e, (S.Map, S.Reduce, S.Scan, S.Filter, S.Hist)):
        return (_lam(e.lam),)
    if isinstance(e, S.Redomap):
        return (_lam(e.map_lam), _lam(e.red))
    if isinstance(e, S.Scanomap):
        return (_lam(e.map_lam), _lam(e.scan)) + ((_lam(e.post),) if e.post is not None else ())
    if isinstance(e, T.SEGOPS):
        point = Nested(e.body, tuple(p for b in e.ctx for p in b.params), False)
        if isinstance(e, T.SegRed):
            return (point, _lam(e.red))
        if isinstance(e, T.SegScan):
            return (point, _lam(e.scan))
        return (point,)
    return ()


def map_nested(e, f: Callable[[S.Body], S.Body]):
    """`e` with every body directly inside it replaced by `f(body)` (lambda bodies included)."""
    def lam(l: S.Lambda) -> S.Lambda:
        return dataclasses.replace(l, body=f(l.body))
    if isinstance(e, (S.If, T.Guard)):
        return dataclasses.replace(e, then=f(e.then), else_=f(e.else_))
    if isinstance(e, S.Loop):
        form = S.WhileLoop(f(e.form.cond)) if isinstance(e.form, S.WhileLoop) else e.form
        return dataclasses.replace(e, form=form, body=f(e.body))
    if isinstance(e, (S.Map, S.Reduce, S.Scan, S.Filter, S.Hist)):
        return dataclasses.replace(e, lam=lam(e.lam))
    if isinstance(e, S.Redomap):
        return dataclasses.replace(e, map_lam=lam(e.map_lam), red=lam(e.red))
    if isinstance(e, S.Scanomap):
        return dataclasses.replace(e, map_lam=lam(e.map_lam), scan=lam(e.scan),
                                   post=lam(e.post) if e.post is not None else None)
    if isinstance(e, T.SegRed):
        return dataclasses.replace(e, body=f(e.body), red=lam(e.red))
    if isinstance(e, T.SegScan):
        return dataclasses.replace(e, body=f(e.body), scan=lam(e.scan))
    if isinstance(e, T.SegMap):
        return dataclasses.replace(e, body=f(e.body))
    return e


def map_bodies(prog, f: Callable[[S.Body], S.Body]):
    """A program (source or target, the type is kept) with each function's body replaced by `f(body)`."""
    return dataclasses.replace(prog, funs=tuple(dataclasses.replace(fn, body=f(fn.body)) for fn in prog.funs))


def walk_exps(body: S.Body):
    """Every expression in a body, outer ones first, descending into all nested bodies."""
    for stm in body.stms:
        yield stm.exp
        for inner in nested(stm.exp):
            yield from walk_exps(inner.body)
