"""The target IR: the source IR's statements plus segmented operations at a hardware level, and the
threshold guards that choose between code versions.

A target program is an `ir.source.Program` whose bodies may also hold `SegMap`, `SegRed` and `Guard`
expressions. Level 1 is the grid (one kernel, a thread or a workgroup per point of the map-nest context);
level 0 is the workgroup (inside a level-1 kernel, using local memory and barriers).
"""

from dataclasses import dataclass

from ir.source import Atom, Body, Const, Lambda, Var
from ir.types import I64


@dataclass(frozen=True)
class Binding:
    """One level of a map-nest context Σ: `<params ∈ arrs>` over `width` elements."""
    width: Atom
    params: tuple  # tuple[Var, ...]
    arrs: tuple  # tuple[Var, ...]


@dataclass(frozen=True)
class SegMap:
    """`segmap_level Σ body`: the body runs once per point of the context, results stacked."""
    level: int
    ctx: tuple  # tuple[Binding, ...], outermost first
    body: Body
    types: tuple  # result types: [widths of ctx] ++ type of each body result


@dataclass(frozen=True)
class SegRed:
    """`segred_level Σ ⊕ neutral body`: the innermost binding of ctx is reduced with `red`; the outer
    bindings are the segments. `body` computes, from the params of all bindings, the values to reduce."""
    level: int
    ctx: tuple
    red: Lambda
    neutral: tuple  # tuple[Atom, ...]
    body: Body
    types: tuple  # [widths of the segment bindings] ++ neutral types
    commutative: bool


@dataclass(frozen=True)
class SegScan:
    """`segscan_level Σ ⊕ neutral body`: an inclusive scan along the innermost binding of ctx, one per
    segment (the outer bindings); `body` computes the values to scan."""
    level: int
    ctx: tuple
    scan: Lambda
    neutral: tuple
    body: Body
    types: tuple  # [widths of all bindings] ++ neutral types


@dataclass(frozen=True)
class Guard:
    """`if threshold <= par then then_ else else_`. True takes the less flattened version.

    `kind` is "outer" (t_top: the nest so far, body sequential) or "intra" (t_intra: the body at workgroup
    level); an intra guard is also false when `par` exceeds the device's workgroup limit."""
    threshold: str  # the full tuning-parameter name, e.g. main.suff_outer_par_0
    kind: str
    par: tuple  # tuple[Atom, ...]: the degree of parallelism is their product
    then: Body
    else_: Body
    types: tuple
    local_bytes: int = 0  # intra: local memory per workgroup thread, which must fit the device too


SEGOPS = (SegMap, SegRed, SegScan)


def par_of_ctx(ctx: tuple) -> tuple:
    """Par(Σ): the widths whose product is the parallelism of a context."""
    return tuple(b.width for b in ctx) or (Const(1, I64),)


def segop_bound_vars(op) -> set:
    return {p.name for b in op.ctx for p in b.params}


def walk_exps(body: Body):
    """Every expression in a body, outer ones first, descending into all nested bodies."""
    for stm in body.stms:
        yield stm.exp
        for sub in sub_bodies(stm.exp):
            yield from walk_exps(sub)


def sub_bodies(e) -> tuple:
    """The bodies directly nested in an expression (lambda bodies included)."""
    from ir.source import Filter, If, Loop, Map, Redomap, Reduce, Scan, Scanomap, WhileLoop
    if isinstance(e, (If, Guard)):
        return (e.then, e.else_)
    if isinstance(e, Loop):
        return ((e.form.cond,) if isinstance(e.form, WhileLoop) else ()) + (e.body,)
    if isinstance(e, Filter):
        return (e.lam.body,)
    if isinstance(e, SegMap):
        return (e.body,)
    if isinstance(e, SegRed):
        return (e.body, e.red.body)
    if isinstance(e, SegScan):
        return (e.body, e.scan.body)
    if isinstance(e, (Map, Reduce, Scan)):
        return (e.lam.body,)
    if isinstance(e, Redomap):
        return (e.map_lam.body, e.red.body)
    if isinstance(e, Scanomap):
        return (e.map_lam.body, e.scan.body)
    return ()


def is_var(a) -> bool:
    return isinstance(a, Var)


def segop_counts(prog) -> dict:
    """How many segops of each kind and level a target program holds, e.g. {"SegMap1": 3, "SegRed0": 1},
    for Futhark-style `structure` tests."""
    counts = {}
    for f in prog.funs:
        for e in walk_exps(f.body):
            if isinstance(e, SEGOPS):
                key = f"{type(e).__name__}{e.level}"
                counts[key] = counts.get(key, 0) + 1
    return counts
