"""Loops: G7, the interchange of a map nest into a sequential loop, and a host-level loop run by one workgroup.

G7 (Henriksen et al., PPoPP'19, Figure 4): a loop in a map nest whose count does not vary in the nest and whose
loop-carried values are regular becomes a loop around the nest: the loop-carried values are arrays over the
context, and the loop body is flattened in the context each iteration. A host-level loop whose every SOAC is a
nest that fits a workgroup gets a second version, run by one workgroup (its body at workgroup level,
flatten.intra), chosen by a guard on the loop's parallelism.

`LoopRules` is a part of `flatten.incremental.Flattener`: it uses the flattener's names, `body_rule`
(flatten.maps), `extend_ctx` (flatten.distribution), and the thresholds and max_par of flatten.guards.
"""

import numpy as np

from incflat.flatten.intra import NEST_POINTS, intra_body, local_bytes
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import has_inner_soacs
from incflat.ir.types import I64, array_of


class LoopRules:
    """G7, and a loop in a workgroup."""

    def loop_rule(self, entry: str, ctx: tuple, level: int, stm: S.Stm, expanded: dict, widths: tuple):
        """G7: the map nest moves inside a loop whose count it does not change: the loop-carried values
        become arrays over the context, and the loop body is flattened in the context each iteration."""
        loop = stm.exp
        arrays = tuple(S.Var(self.names.fresh(p.name), array_of(p.type, widths)) for p in loop.params)
        inside = dict(expanded, **{p.name: a for p, a in zip(loop.params, arrays)})
        body_ctx = self.extend_ctx(ctx, loop.body, inside)
        body = self.body_rule(entry, body_ctx, level, loop.body, tuple(a.type for a in arrays))
        pat = tuple(S.Var(self.names.fresh(p.name), a.type) for p, a in zip(stm.pat, arrays))
        # initial values that are already arrays over the nest start the loop as they are (arrays are
        # values: the loop makes new ones); others are made by a nest (a thread per point copying its row)
        given = tuple(expanded.get(a.name) if isinstance(a, S.Var) else None for a in loop.init)
        if all(g is not None and g.type == a.type for g, a in zip(given, arrays)):
            new_loop = S.Loop((), arrays, given, S.ForLoop(loop.form.i, loop.form.bound), body)
            return pat, [S.Stm(pat, new_loop, stm.loc)]
        init_body = S.Body((), loop.init)
        init = tuple(S.Var(self.names.fresh(p.name + "_init"), a.type) for p, a in zip(loop.params, arrays))
        init_nest = T.SegMap(level, self.extend_ctx(ctx, init_body, expanded), init_body,
                             tuple(a.type for a in arrays))
        new_loop = S.Loop((), arrays, init, S.ForLoop(loop.form.i, loop.form.bound), body)
        return pat, [S.Stm(init, init_nest, stm.loc), S.Stm(pat, new_loop, stm.loc)]

    def loop_in_workgroup(self, entry: str, stm: S.Stm, on_host: S.Loop):
        """A host-level loop whose every SOAC is a nest of constant widths that fits a workgroup (LUD's
        factoring of a 32 x 32 diagonal block: 32 steps of a 32 x 32 map) gets a second version: one
        workgroup runs the whole loop (`map (\\_ -> loop ...) (iota 1)` at workgroup level), one launch
        instead of a launch or more per step. A guard on the loop's parallelism chooses (None where the rule
        does not apply)."""
        e = stm.exp
        if e.size_params or not isinstance(e.form, S.ForLoop) or not has_inner_soacs(e.body):
            return None
        inner = intra_body(S.Body((S.Stm(stm.pat, e, stm.loc),), stm.pat))
        pars = [T.par_of_ctx(op.ctx) for op in T.level0_segops(inner)]
        if not pars or not all(isinstance(a, S.Const) for par in pars for a in par) \
                or max(int(np.prod([a.value for a in par])) for par in pars) > NEST_POINTS:
            return None
        one = S.Var(self.names.fresh("one"), array_of(I64, (S.dim_of(S.Const(1, I64)),)))
        point = S.Var(self.names.fresh("point"), I64)
        types = tuple(p.type for p in stm.pat)
        wide = tuple(S.Var(self.names.fresh("grouped"), array_of(t, (S.dim_of(S.Const(1, I64)),))) for t in types)
        run = T.SegMap(1, (T.Binding(S.Const(1, I64), (point,), (one,)),), inner, tuple(w.type for w in wide))
        results = tuple(S.Var(self.names.fresh(p.name), p.type) for p in stm.pat)
        grouped = S.Body((S.Stm((one,), S.Iota(S.Const(1, I64), I64), stm.loc), S.Stm(wide, run, stm.loc))
                         + tuple(S.Stm((r,), S.Index(w, (S.Const(0, I64),)), stm.loc) for r, w in zip(results, wide)),
                         results)
        par_stms, par = self.max_par(pars)
        threshold = self.threshold(entry, "intra")
        guard = T.Guard(threshold, "intra", par, S.Body(tuple(par_stms) + grouped.stms, grouped.result),
                        S.Body((S.Stm(stm.pat, on_host, stm.loc),), stm.pat), types, local_bytes(inner))
        return S.Stm(stm.pat, guard, stm.loc)

