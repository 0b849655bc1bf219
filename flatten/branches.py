"""Branches: G8, the interchange of a map nest into an `if` (Henriksen et al., PPoPP'19, Figure 4).

An `if` in a map nest whose condition does not vary in the nest and whose results are regular becomes an `if`
around the nest: each branch is flattened in the context on its own, computing the results for every point.

`BranchRule` is a part of `flatten.incremental.Flattener`: it uses the flattener's names, `body_rule`
(flatten.maps) and `extend_ctx` (flatten.distribution).
"""

from incflat.ir import source as S
from incflat.ir.types import array_of


class BranchRule:
    """G8."""

    def if_rule(self, entry: str, ctx: tuple, level: int, stm: S.Stm, expanded: dict, widths: tuple):
        """G8: the map nest moves into both branches of an `if` whose condition it does not change."""
        e = stm.exp
        types = tuple(array_of(p.type, widths) for p in stm.pat)
        branches = [self.body_rule(entry, self.extend_ctx(ctx, b, expanded), level, b, types)
                    for b in (e.then, e.else_)]
        pat = tuple(S.Var(self.names.fresh(p.name), t) for p, t in zip(stm.pat, types))
        return pat, S.Stm(pat, S.If(e.cond, branches[0], branches[1], types), stm.loc)

