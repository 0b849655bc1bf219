"""The target IR: the source IR's statements plus segmented operations at a hardware level, and the
threshold guards that choose between code versions.

A target program (`Program` below, a type of its own) holds entry points whose bodies may also hold
`SegMap`, `SegRed`, `SegScan` and `Guard` expressions. Level 1 is the grid (one kernel, a thread or a workgroup per point of the map-nest context);
level 0 is the workgroup (inside a level-1 kernel, using local memory and barriers).
"""

from dataclasses import dataclass

from incflat.ir import source as S
from incflat.ir.source import Atom, Body, Const, Functions, Lambda
from incflat.ir.types import I64


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
EXPS = SEGOPS + (Guard,)  # the expressions of the target IR besides the source IR's (source.Exp)


def level0_segops(body: Body) -> list:
    """The workgroup-level segops of a level-1 segmap's body (an intra-group version): its statements', and
    those of the loops and branches it runs as a workgroup."""
    found = []
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, SEGOPS) and e.level == 0:
            found.append(e)
        elif isinstance(e, S.Loop):
            found += level0_segops(e.body)
        elif isinstance(e, S.If):
            found += level0_segops(e.then) + level0_segops(e.else_)
    return found


def walks_rows(op: SegMap) -> bool:
    """A segmap whose threads run the body alone (not a workgroup a point: the intra-group version)."""
    return op.level == 1 and not level0_segops(op.body)


@dataclass(frozen=True)
class Program(Functions):
    """A target program: entry points only (every call is inlined), holding segops and guards."""
    funs: tuple  # tuple[FunDef, ...]
    file: str = "<input>"


def par_of_ctx(ctx: tuple) -> tuple:
    """Par(Σ): the widths whose product is the parallelism of a context."""
    return tuple(b.width for b in ctx) or (Const(1, I64),)


def whole_rows(ctx: tuple) -> dict:
    """The innermost context parameters that are, at each point, that point's part of one host array over the
    whole context (bound level by level, each level's parameter a row of the previous level's): name -> that
    host array."""
    origin = {}  # a context parameter -> (the host array it is a part of, how many levels index it)
    for level, binding in enumerate(ctx):
        for p, a in zip(binding.params, binding.arrs):
            if level == 0:
                origin[p.name] = (a, 1)
            elif isinstance(a, S.Var) and origin.get(a.name, (None, 0))[1] == level:
                origin[p.name] = (origin[a.name][0], level + 1)
    return {name: a for name, (a, depth) in origin.items() if depth == len(ctx) and isinstance(a, S.Var)}
