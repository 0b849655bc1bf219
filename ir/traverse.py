"""The one traversal of nested bodies, for the source and the target IR alike.

Every expression that holds code holds it as bodies: a lambda's (a SOAC's function or operator, a segop's
operator), a branch's, a loop's, a segop's per-point body. `nested(e)` lists them with the variables each
binds; `map_nested(e, f)` rebuilds `e` with `f` applied to each. Passes and analyses go through these two,
so that a new expression form needs teaching in one place: its entries in `NESTED` and `MAP_NESTED` (or in
`LEAVES`, when it holds no body).
"""

from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple

from incflat.ir import nodes
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


# The expressions that hold no body: both tables give them the same rule.
LEAVES = (S.AtomExp, S.BinOp, S.UnOp, S.PrimCall, S.Apply, S.Index, S.Update, S.Assert, S.TuningParam, S.ArrayLit,
          S.Concat, S.Rotate, S.Reshape, S.Scatter, S.Iota, S.Replicate, S.Rearrange)


def _branches(e) -> tuple:
    return (Nested(e.then, (), False), Nested(e.else_, (), False))


def _loop(e: S.Loop) -> tuple:
    binds = loop_binds(e)
    cond = (Nested(e.form.cond, binds, False),) if isinstance(e.form, S.WhileLoop) else ()
    return cond + (Nested(e.body, binds, False),)


def _point(e) -> Nested:
    """A segop's per-point body, which binds the parameters of every level of its context."""
    return Nested(e.body, tuple(p for b in e.ctx for p in b.params), False)


NESTED = nodes.Table(f"{__name__}.NESTED", "target", {
    **dict.fromkeys(LEAVES, lambda e: ()),
    S.If: _branches,
    T.Guard: _branches,
    S.Loop: _loop,
    **dict.fromkeys((S.Map, S.Reduce, S.Scan, S.Filter, S.Hist), lambda e: (_lam(e.lam),)),
    S.Redomap: lambda e: (_lam(e.map_lam), _lam(e.red)),
    S.Scanomap: lambda e: (_lam(e.map_lam), _lam(e.scan)) + ((_lam(e.post),) if e.post is not None else ()),
    T.SegMap: lambda e: (_point(e),),
    T.SegRed: lambda e: (_point(e), _lam(e.red)),
    T.SegScan: lambda e: (_point(e), _lam(e.scan)),
})


def nested(e) -> tuple:
    """The bodies directly inside an expression, in the order they are written."""
    return NESTED.rule(e)(e)


def _map_lam(l: S.Lambda, f: Callable[[S.Body], S.Body]) -> S.Lambda:
    return dataclasses.replace(l, body=f(l.body))


def _map_loop(e: S.Loop, f):
    form = S.WhileLoop(f(e.form.cond)) if isinstance(e.form, S.WhileLoop) else e.form
    return dataclasses.replace(e, form=form, body=f(e.body))


# Each rule calls f on the bodies in the order `nested` lists them (some callers' f collects as it goes).
MAP_NESTED = nodes.Table(f"{__name__}.MAP_NESTED", "target", {
    **dict.fromkeys(LEAVES, lambda e, f: e),
    **dict.fromkeys((S.If, T.Guard), lambda e, f: dataclasses.replace(e, then=f(e.then), else_=f(e.else_))),
    S.Loop: _map_loop,
    **dict.fromkeys((S.Map, S.Reduce, S.Scan, S.Filter, S.Hist),
                    lambda e, f: dataclasses.replace(e, lam=_map_lam(e.lam, f))),
    S.Redomap: lambda e, f: dataclasses.replace(e, map_lam=_map_lam(e.map_lam, f), red=_map_lam(e.red, f)),
    S.Scanomap: lambda e, f: dataclasses.replace(e, map_lam=_map_lam(e.map_lam, f), scan=_map_lam(e.scan, f),
                                                 post=_map_lam(e.post, f) if e.post is not None else None),
    T.SegMap: lambda e, f: dataclasses.replace(e, body=f(e.body)),
    T.SegRed: lambda e, f: dataclasses.replace(e, body=f(e.body), red=_map_lam(e.red, f)),
    T.SegScan: lambda e, f: dataclasses.replace(e, body=f(e.body), scan=_map_lam(e.scan, f)),
})


def map_nested(e, f: Callable[[S.Body], S.Body]):
    """`e` with every body directly inside it replaced by `f(body)` (lambda bodies included)."""
    return MAP_NESTED.rule(e)(e, f)


def unsafe_stm(stm: S.Stm) -> S.Stm:
    """The statement with its position marked unsafe (S.Loc.unsafe: `#[unsafe]`, whose checks kernels leave
    out), and every position in the bodies inside it."""
    loc = dataclasses.replace(stm.loc, unsafe=True) if isinstance(stm.loc, S.Loc) else stm.loc
    return S.Stm(stm.pat, map_nested(stm.exp, unsafe_body), loc)


def unsafe_body(body: S.Body) -> S.Body:
    return S.Body(tuple(unsafe_stm(s) for s in body.stms), body.result)


def map_bodies(prog, f: Callable[[S.Body], S.Body]):
    """A program (source or target, the type is kept) with each function's body replaced by `f(body)`."""
    return dataclasses.replace(prog, funs=tuple(dataclasses.replace(fn, body=f(fn.body)) for fn in prog.funs))


def walk_exps(body: S.Body):
    """Every expression in a body, outer ones first, descending into all nested bodies."""
    for stm in body.stms:
        yield stm.exp
        for inner in nested(stm.exp):
            yield from walk_exps(inner.body)
