"""Σ ⊢_l e ⇒ e': a SOAC in the context Σ of the maps around it, at level l (1: the grid, 0: a workgroup).

`nest` is the judgement: its result computes the whole nest, arrays of shape [widths of Σ] ++ (type of e).
A map adds its binding to the context: at level 0, or without inner parallelism, it is a segmap (G1, G2);
else its versions are chosen by guards (G3, flatten.guards), the flattened one from `body_rule`: a perfect nest
flattens further by `nest`, another body by distribution (G6, flatten.distribution), the rest is a segmap with
the body sequential, which is always correct. A redomap whose neutral element does not vary in the nest is a
segred (G9's base case), or, with inner parallelism, has G9's versions; a scanomap is a segscan. Moderate
flattening keeps one version: the flattened one where a rule applies, inner reductions and scans sequential.

`MapRules` is a part of `flatten.incremental.Flattener`: it uses the flattener's names and `moderate`, the
guards of flatten.guards, distribution (flatten.distribution) and the host level (`host_body`).
"""

from incflat.flatten.nests import is_commutative, uses_any
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import has_inner_soacs
from incflat.ir.types import array_of


class MapRules:
    """The rules of a SOAC in a map nest, and of a map's body."""

    def nest(self, entry: str, ctx: tuple, level: int, e, types: tuple):
        """Σ ⊢_l e ⇒ e': a target expression or body computing the whole nest; None for a redomap or a scanomap
        whose neutral element varies in the nest."""
        if isinstance(e, S.Map):
            return self.map_rule(entry, ctx, level, e, types)
        if isinstance(e, S.Redomap) and not uses_any(e.neutral, ctx):
            inner = T.Binding(e.width, e.map_lam.params, e.arrs)
            e_top = T.SegRed(level, ctx + (inner,), e.red, e.neutral, e.map_lam.body, types,
                             e.commutative or is_commutative(e.red))
            if self.moderate or level == 0 or not has_inner_soacs(e.map_lam.body):
                return e_top  # G9 without inner parallelism: the segred directly
            return self.redomap_versions(entry, ctx, level, e, e_top, types)
        if isinstance(e, S.Scanomap) and not uses_any(e.neutral, ctx):
            inner = T.Binding(e.width, e.map_lam.params, e.arrs)
            return T.SegScan(level, ctx + (inner,), e.scan, e.neutral, e.map_lam.body, types)
        return None

    def split_redomap(self, entry: str, ctx: tuple, level: int, e: S.Redomap, types: tuple) -> S.Body:
        """`redomap ⊕ f ne xs` as `let ys = map f xs in reduce ⊕ ne ys`, each flattened in the context."""
        ys = tuple(S.Var(self.names.fresh("mapped"), array_of(t, (S.dim_of(e.width),))) for t in e.map_lam.ret)
        elems = tuple(S.Var(self.names.fresh("elem"), t) for t in e.map_lam.ret)
        identity = S.Lambda(elems, S.Body((), elems), e.map_lam.ret)
        pat = tuple(S.Var(self.names.fresh("reduced"), a.type) for a in e.neutral)
        body = S.Body((S.Stm(ys, S.Map(e.width, e.map_lam, e.arrs)),
                       S.Stm(pat, S.Redomap(e.width, e.red, identity, e.neutral, ys, e.commutative))), pat)
        if not ctx:
            return self.host_body(entry, body)
        return self.distribute(entry, ctx, level, body, types)

    def map_rule(self, entry: str, ctx: tuple, level: int, e: S.Map, types: tuple):
        inner_ctx = ctx + (T.Binding(e.width, e.lam.params, e.arrs),)
        body = e.lam.body
        e_top = T.SegMap(level, inner_ctx, body, types)
        if level == 0 or not has_inner_soacs(body):  # G1, G2
            return e_top
        if self.moderate:  # one version: flatten further wherever a rule applies
            if self.nest_rule_applies(inner_ctx, body):
                return self.body_rule(entry, inner_ctx, level, body, types)
            return e_top
        return self.map_versions(entry, inner_ctx, level, body, e_top, types)  # G3

    def nest_rule_applies(self, ctx: tuple, body: S.Body) -> bool:
        """Whether a rule flattens this map body further: a perfect nest of a map or of a flat redomap or
        scanomap, or a body that G6 can distribute."""
        if len(body.stms) == 1 and body.stms[0].pat == body.result \
                and isinstance(body.stms[0].exp, (S.Map, S.Redomap, S.Scanomap)):
            return self.parallel_stm(ctx, body.stms[0], body)
        return self.distributable(ctx, body)

    def body_rule(self, entry: str, ctx: tuple, level: int, body: S.Body, types: tuple) -> S.Body:
        """Σ ⊢ body at level: a target body computing the whole nest's results."""
        if len(body.stms) == 1 and body.stms[0].pat == body.result and self.parallel_stm(ctx, body.stms[0], body) \
                and isinstance(body.stms[0].exp, (S.Map, S.Redomap, S.Scanomap)):
            found = self.nest(entry, ctx, level, body.stms[0].exp, types)
            return found if isinstance(found, S.Body) else self.single(found, types)
        if self.distributable(ctx, body):
            return self.distribute(entry, ctx, level, body, types)
        return self.single(T.SegMap(level, ctx, body, types), types)
