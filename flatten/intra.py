"""• ⊢_0 e: the body of an intra-group version (G3's e_middle, and a loop run by one workgroup), where a
workgroup computes what a thread of the outer map would: every SOAC of the body becomes a level-0 segop, also
in the loops and branches the workgroup runs together. A perfect nest of maps of constant widths that fits a
workgroup (NEST_POINTS) is one level-0 segmap over all its levels (map_nest). An intra-group version needs
local memory for what its reductions and scans combine (local_bytes)."""

import dataclasses

import numpy as np

from incflat.flatten.nests import is_commutative, names_of
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import exp_types, has_inner_soacs
from incflat.ir.types import Array

# The most points a perfect nest of maps may have to run as one workgroup-level segmap (the least workgroup
# limit of the devices in use: NVIDIA's 1024 threads).
NEST_POINTS = 1024


def intra_body(body: S.Body) -> S.Body:
    """The body at workgroup level: its SOACs become level-0 segops, also in the loops and branches the
    workgroup runs together (a loop over the rows of a grid holding a map over its columns)."""
    stms = []
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.Loop) and has_inner_soacs(e.body):
            e = dataclasses.replace(e, body=intra_body(e.body))
        elif isinstance(e, S.If) and (has_inner_soacs(e.then) or has_inner_soacs(e.else_)):
            e = dataclasses.replace(e, then=intra_body(e.then), else_=intra_body(e.else_))
        elif isinstance(e, S.Map):
            ctx, inner = map_nest(e)
            e = T.SegMap(0, ctx, inner, exp_types(e))
        elif isinstance(e, S.Redomap):
            e = T.SegRed(0, (T.Binding(e.width, e.map_lam.params, e.arrs),), e.red, e.neutral,
                         e.map_lam.body, exp_types(e), e.commutative or is_commutative(e.red))
        elif isinstance(e, S.Scanomap):
            e = T.SegScan(0, (T.Binding(e.width, e.map_lam.params, e.arrs),), e.scan, e.neutral,
                          e.map_lam.body, exp_types(e))
        stms.append(S.Stm(stm.pat, e, stm.loc))
    return S.Body(tuple(stms), body.result)


def map_nest(e: S.Map) -> tuple:
    """A perfect nest of maps as one context and the innermost body: `map (\\i -> map (\\j -> f i j) ys) xs`
    gives (i in xs, j in ys) and f, so that a workgroup runs every point of the nest (NW's and LUD's blocks),
    not a thread per row. Where the widths are constants, only while the points fit a workgroup (NEST_POINTS);
    a run-time width joins when it is the same at every point of the nest (the intra-group guard counts it,
    flatten.guards.nested_widths, and takes the version only where the points fit). Scalar statements of an
    outer body (what normalisation hoisted out of the inner map: `r > i`, `blk[r, i]`) move into the inner
    body, computed at each point; with a run-time width (which may be 0) only those that cannot fail."""
    ctx, body = (T.Binding(e.width, e.lam.params, e.arrs),), e.lam.body
    points = e.width.value if isinstance(e.width, S.Const) else None
    bound = {p.name for p in e.lam.params}
    while body.stms and body.stms[-1].pat == body.result and isinstance(body.stms[-1].exp, S.Map):
        lead, inner = body.stms[:-1], body.stms[-1].exp
        bound |= {p.name for stm in lead for p in stm.pat}
        if isinstance(inner.width, S.Const) and points is not None:
            # (a width of at least 1: a statement moved in still runs, and fails, wherever it did)
            fits = 0 < points * inner.width.value <= NEST_POINTS and all(_per_point(stm) for stm in lead)
        else:
            fits = not names_of((inner.width,)) & bound and all(_cannot_fail(stm) for stm in lead)
        if not fits or names_of(inner.arrs) & {p.name for stm in lead for p in stm.pat}:
            break
        points = points * inner.width.value if points is not None and isinstance(inner.width, S.Const) else None
        ctx = ctx + (T.Binding(inner.width, inner.lam.params, inner.arrs),)
        bound |= {p.name for p in inner.lam.params}
        body = S.Body(lead + inner.lam.body.stms, inner.lam.body.result)
    return ctx, body


def _per_point(stm: S.Stm) -> bool:
    """A statement that may as well run at each point of an inner map: scalar arithmetic or a load."""
    return isinstance(stm.exp, (S.BinOp, S.UnOp, S.PrimCall, S.AtomExp, S.Index)) \
        and not any(isinstance(p.type, Array) for p in stm.pat)


def _cannot_fail(stm: S.Stm) -> bool:
    """A per-point statement that cannot fail (no load, no division): it may run at no point at all."""
    return _per_point(stm) and not isinstance(stm.exp, S.Index) \
        and not (isinstance(stm.exp, S.BinOp) and stm.exp.op in ("/", "%", "//", "%%", "**"))


def local_bytes(intra: S.Body) -> int:
    """Local memory per thread of an intra-group version (`intra`, its body): one element per thread for each
    value that a workgroup-level reduction or scan combines."""
    return sum(np.dtype(a.type.dtype).itemsize for op in T.level0_segops(intra)
               if isinstance(op, (T.SegRed, T.SegScan)) for a in op.neutral)
