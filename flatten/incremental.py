"""Incremental flattening (Henriksen et al., PPoPP'19, Figures 3-4): source IR -> target IR with guarded
code versions.

Rules implemented: G0 (host code stays as it is), G1 (at level 0, manifest the nest), G2 (a map without
inner parallelism is a segmap), G3 (three versions: e_top, e_middle, e_flat), and G9's base case (a
redomap without inner parallelism is a segred). Where no rule applies yet, the nest is manifested with its
body sequential, which is always correct.

Judgement `Σ ⊢_l e ⇒ e'` is `Flattener.nest(ctx, level, e)`: the result computes the whole nest, arrays of
shape [widths of Σ] ++ (type of e).
"""

import dataclasses

import numpy as np

from incflat.ir.runtime.tuning import threshold_name
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import exp_types, free_in_body, free_in_exp, has_assertions, has_inner_soacs, type_size_names
from incflat.ir.rename import NameSource, all_names
from incflat.ir.types import BOOL, I64, Array, array_of


class Flattener:
    """`moderate=True` gives moderate flattening, the baseline: one version, chosen by a static heuristic
    (a map nest is flattened through maps, distribution and loops; an inner redomap or scanomap is
    sequentialised)."""

    def __init__(self, prog: S.Program, moderate: bool = False):
        self.names = NameSource(all_names(prog))
        self.moderate = moderate
        self.n_thresholds = 0  # thresholds are numbered uniquely in the program, in creation order

    def threshold(self, entry: str, kind: str) -> str:
        name = threshold_name(entry, kind, self.n_thresholds)
        self.n_thresholds += 1
        return name

    # ---- the host level (empty context, level 1) ----

    def host_body(self, entry: str, body: S.Body) -> S.Body:
        stms = []
        for stm in body.stms:
            e = stm.exp
            if isinstance(e, (S.Map, S.Redomap, S.Scanomap)):
                types = nest_types(e) if isinstance(e, S.Map) else exp_types(e)
                stms.extend(bind(stm.pat, self.nest(entry, (), 1, e, types), stm.loc))
                continue
            if isinstance(e, S.If):  # G0: host-level control flow, branches flattened on their own
                e = S.If(e.cond, self.host_body(entry, e.then), self.host_body(entry, e.else_), e.types)
            elif isinstance(e, S.Loop):  # G0: a host-level loop; its body's parallelism is flattened
                form = e.form
                if isinstance(form, S.WhileLoop):
                    form = S.WhileLoop(self.host_body(entry, form.cond))
                on_host = dataclasses.replace(e, form=form, body=self.host_body(entry, e.body))
                in_group = None if self.moderate else self.loop_in_workgroup(entry, stm, on_host)
                if in_group is not None:
                    stms.append(in_group)
                    continue
                e = on_host
            stms.append(S.Stm(stm.pat, e, stm.loc))
        return S.Body(tuple(stms), body.result)

    def loop_in_workgroup(self, entry: str, stm: S.Stm, on_host: S.Loop):
        """A host-level loop whose every SOAC is a nest of constant widths that fits a workgroup (LUD's
        factoring of a 32 x 32 diagonal block: 32 steps of a 32 x 32 map) gets a second version: one
        workgroup runs the whole loop (`map (\\_ -> loop ...) (iota 1)` at workgroup level), one launch
        instead of a launch or more per step. A guard on the loop's parallelism chooses (None where the rule
        does not apply)."""
        e = stm.exp
        if e.size_params or not isinstance(e.form, S.ForLoop) or not has_inner_soacs(e.body):
            return None
        inner = self.intra_body(S.Body((S.Stm(stm.pat, e, stm.loc),), stm.pat))
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
                        S.Body((S.Stm(stm.pat, on_host, stm.loc),), stm.pat), types, _local_bytes(inner))
        return S.Stm(stm.pat, guard, stm.loc)

    # ---- Σ ⊢_l e ⇒ e' ----

    def nest(self, entry: str, ctx: tuple, level: int, e, types: tuple):
        if isinstance(e, S.Map):
            return self.map_rule(entry, ctx, level, e, types)
        if isinstance(e, S.Redomap) and not _uses_any(e.neutral, ctx):
            inner = T.Binding(e.width, e.map_lam.params, e.arrs)
            e_top = T.SegRed(level, ctx + (inner,), e.red, e.neutral, e.map_lam.body, types,
                             e.commutative or is_commutative(e.red))
            if self.moderate or level == 0 or not has_inner_soacs(e.map_lam.body):
                return e_top  # G9 without inner parallelism: the segred directly
            # G9: the segred with the map function sequential, or the map and the reduce flattened apart
            t_top = self.threshold(entry, "outer")
            e_rec = self.split_redomap(entry, ctx, level, e, types)
            return T.Guard(t_top, "outer", T.par_of_ctx(ctx + (inner,)), self.single(e_top, types), e_rec, types)
        if isinstance(e, S.Scanomap) and not _uses_any(e.neutral, ctx):
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
        # G3: e_top, e_middle (the body at workgroup level) and e_flat (keep flattening the body); a
        # version that would equal e_top is left out, and so is its threshold
        intra_body = self.intra_body(body)
        intra_pars = [T.par_of_ctx(op.ctx) for op in T.level0_segops(intra_body)]
        if any(_names(par) & _bound_anywhere(inner_ctx, body) for par in intra_pars):
            intra_pars = []  # the workgroup size must be known before the kernel starts
        flattens = self.nest_rule_applies(inner_ctx, body)
        if not intra_pars and not flattens:
            return e_top
        t_top = self.threshold(entry, "outer")
        t_intra = self.threshold(entry, "intra") if intra_pars else None
        e_flat = self.body_rule(entry, inner_ctx, level, body, types) if flattens else self.single(e_top, types)
        if t_intra is not None:
            par_stms, par = self.max_par(intra_pars)
            e_middle = T.SegMap(level, inner_ctx, intra_body, types)
            e_flat = T.Guard(t_intra, "intra", par, self.single(e_middle, types), e_flat, types,
                             _local_bytes(intra_body))
            rest = self.single(e_flat, types, par_stms)
        else:
            rest = e_flat
        return T.Guard(t_top, "outer", T.par_of_ctx(inner_ctx), self.single(e_top, types), rest, types)

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

    # ---- G6: distribution of a map nest over the statements of its body ----

    def parallel_stm(self, ctx: tuple, stm: S.Stm, body: S.Body) -> bool:
        """A statement that becomes a nest of its own: a map, or a redomap/scanomap whose neutral element
        does not vary inside the nest."""
        e = stm.exp
        if isinstance(e, S.Map):
            return True
        if isinstance(e, (S.Redomap, S.Scanomap)) and self.moderate:
            return False  # the heuristic: inner reductions and scans run sequentially
        if isinstance(e, (S.Redomap, S.Scanomap)):
            return not (_names(e.neutral) & _bound_in(ctx, body))
        bound = _bound_in(ctx, body)
        if isinstance(e, S.Loop):  # G7 needs an invariant count and regular loop-carried values
            return (isinstance(e.form, S.ForLoop) and not e.size_params and has_inner_soacs(e.body)
                    and not (_names((e.form.bound,)) & bound)
                    and not any(type_size_names(p.type) & bound for p in e.params))
        if isinstance(e, S.If):  # G8 needs an invariant condition and regular results
            return (not (_names((e.cond,)) & bound) and (has_inner_soacs(e.then) or has_inner_soacs(e.else_))
                    and not any(type_size_names(p.type) & bound for p in stm.pat))
        return False

    def groups(self, ctx: tuple, body: S.Body) -> list:
        """The body's statements split into nests: each parallel statement alone, the runs between them
        together (let-floating and tupling at their simplest)."""
        groups, run = [], []
        for stm in body.stms:
            if self.parallel_stm(ctx, stm, body):
                if run:
                    groups.append(run)
                    run = []
                groups.append([stm])
            else:
                run.append(stm)
        return groups + ([run] if run else [])

    def distributable(self, ctx: tuple, body: S.Body) -> bool:
        groups = self.groups(ctx, body)
        parallel = [g for g in groups if self.parallel_stm(ctx, g[0], body)]
        if not parallel or (len(groups) < 2 and not isinstance(parallel[0][0].exp, (S.Loop, S.If))):
            return False
        bound = _bound_in(ctx, body)
        crossing = [p for g in groups for s in g for p in s.pat]
        return all(not (type_size_names(p.type) & bound) for p in crossing)  # regular: array expansion works

    def distribute(self, entry: str, ctx: tuple, level: int, body: S.Body, types: tuple) -> S.Body:
        """Each group becomes a nest over the context; a value one group passes to a later one is expanded
        into an array over the context, which the later nest binds again level by level."""
        widths = tuple(S.dim_of(b.width) for b in ctx)
        groups = self.groups(ctx, body)
        expanded = {}  # variable of the body -> its array over the context, at the host level
        stms = []
        variant = {p.name for b in ctx for p in b.params}
        for k, group in enumerate(groups):
            if not self.parallel_stm(ctx, group[0], body):
                # what is the same for every point of the nest is computed once, on the host
                hoisted, group = _hoisted(group, variant)
                stms.extend(hoisted)
                # a row of the nest's array is a view of it, whatever else the run does (pathfinder_batch's
                # `wall[0]` beside its range check): not a kernel whose threads copy whole rows
                if len(group) > 1:
                    inside = variant | {p.name for stm in group for p in stm.pat}
                    for stm in list(group):
                        view = _context_view(ctx, stm, expanded, inside)
                        if view is not None:
                            group.remove(stm)
                            stms.extend(self.context_view(ctx, level, stm, view, expanded, widths))
                if not group:
                    continue
            variant |= {p.name for s in group for p in s.pat}
            rest = S.Body(tuple(s for g in groups[k + 1:] for s in g), body.result)
            later = set(free_in_body(rest))
            ctx_k = self.extend_ctx(ctx, S.Body(tuple(group), ()), expanded)
            if len(group) == 1 and isinstance(group[0].exp, S.Loop) and self.parallel_stm(ctx, group[0], body):
                pat, loop_stms = self.loop_rule(entry, ctx_k, level, group[0], expanded, widths)
                expanded.update((p.name, v) for p, v in zip(group[0].pat, pat))
                stms.extend(loop_stms)
                continue
            if len(group) == 1 and isinstance(group[0].exp, S.If) and self.parallel_stm(ctx, group[0], body):
                pat, if_stm = self.if_rule(entry, ctx, level, group[0], expanded, widths)
                expanded.update((p.name, v) for p, v in zip(group[0].pat, pat))
                stms.append(if_stm)
                continue
            view = _context_view(ctx, group[0], expanded, variant) if len(group) == 1 else None
            if view is not None:
                stms.extend(self.context_view(ctx, level, group[0], view, expanded, widths))
                continue
            if len(group) == 1 and self.parallel_stm(ctx, group[0], body):
                outputs = group[0].pat
                out_types = tuple(array_of(p.type, widths) for p in outputs)
                e = self.nest(entry, ctx_k, level, group[0].exp, out_types)
            else:
                outputs = tuple(p for s in group for p in s.pat if p.name in later)
                out_types = tuple(array_of(p.type, widths) for p in outputs)
                e = T.SegMap(level, ctx_k, S.Body(tuple(group), outputs), out_types)
            pat = tuple(S.Var(self.names.fresh(p.name), t) for p, t in zip(outputs, out_types))
            expanded.update((p.name, v) for p, v in zip(outputs, pat))
            stms.extend(bind(pat, e, group[0].loc))
        if all(isinstance(a, S.Var) and a.name in expanded for a in body.result):
            return S.Body(tuple(stms), tuple(expanded[a.name] for a in body.result))
        # results that no group computes (parameters, free variables, constants): one more nest copies them
        copy_body = S.Body((), body.result)
        copy = T.SegMap(level, self.extend_ctx(ctx, copy_body, expanded), copy_body, types)
        pat = tuple(S.Var(self.names.fresh("res"), t) for t in types)
        return S.Body(tuple(stms) + (S.Stm(pat, copy),), pat)

    def context_view(self, ctx: tuple, level: int, stm: S.Stm, view, expanded: dict, widths: tuple) -> list:
        """A transpose or a slice of each point's part of an array over the nest is a transpose or a slice of
        that array (`view`, from _context_view): a view, with no kernel whose threads copy whole rows."""
        x = stm.pat[0]
        v = S.Var(self.names.fresh(x.name), array_of(x.type, widths))
        expanded[x.name] = v
        if isinstance(view, S.Index):  # its bounds are checked only where the nest has points
            ctx_k = self.extend_ctx(ctx, S.Body((stm,), ()), expanded)
            copy = T.SegMap(level, ctx_k, S.Body((stm,), (x,)), (v.type,))
            return self.unless_empty(ctx, v, view, copy, stm.loc)
        return [S.Stm((v,), view, stm.loc)]

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

    def if_rule(self, entry: str, ctx: tuple, level: int, stm: S.Stm, expanded: dict, widths: tuple):
        """G8: the map nest moves into both branches of an `if` whose condition it does not change."""
        e = stm.exp
        types = tuple(array_of(p.type, widths) for p in stm.pat)
        branches = [self.body_rule(entry, self.extend_ctx(ctx, b, expanded), level, b, types)
                    for b in (e.then, e.else_)]
        pat = tuple(S.Var(self.names.fresh(p.name), t) for p, t in zip(stm.pat, types))
        return pat, S.Stm(pat, S.If(e.cond, branches[0], branches[1], types), stm.loc)

    def extend_ctx(self, ctx: tuple, body: S.Body, expanded: dict) -> tuple:
        """The context, with each expanded variable that body uses bound again, level by level, to its
        original name (unless the context binds it already: a loop's initial values, say, are bound for the
        loop and again for the nest that copies them)."""
        params = [list(b.params) for b in ctx]
        arrs = [list(b.arrs) for b in ctx]
        bound = {p.name for p in params[-1]} if ctx else set()
        for name in free_in_body(body):
            if name not in expanded or name in bound:
                continue
            src = expanded[name]
            for j in range(len(ctx)):
                p = S.Var(name if j == len(ctx) - 1 else self.names.fresh(name), src.type.row())
                params[j].append(p)
                arrs[j].append(src)
                src = p
        return tuple(T.Binding(b.width, tuple(ps), tuple(a)) for b, ps, a in zip(ctx, params, arrs))

    # ---- • ⊢_0 e: the body of an intra-group version ----

    def intra_body(self, body: S.Body) -> S.Body:
        """The body at workgroup level: its SOACs become level-0 segops, also in the loops and branches the
        workgroup runs together (a loop over the rows of a grid holding a map over its columns)."""
        stms = []
        for stm in body.stms:
            e = stm.exp
            if isinstance(e, S.Loop) and has_inner_soacs(e.body):
                e = dataclasses.replace(e, body=self.intra_body(e.body))
            elif isinstance(e, S.If) and (has_inner_soacs(e.then) or has_inner_soacs(e.else_)):
                e = dataclasses.replace(e, then=self.intra_body(e.then), else_=self.intra_body(e.else_))
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

    # ---- helpers ----

    def unless_empty(self, ctx: tuple, v: S.Var, e, otherwise, loc) -> list:
        """Statements binding v to e where every width of the context is positive, and to `otherwise`
        (which computes the same where there are points) where one is zero."""
        acc = ctx[0].width
        stms = []
        for b in ctx[1:]:
            prod = S.Var(self.names.fresh("points"), I64)
            stms.append(S.Stm((prod,), S.BinOp("*", acc, b.width, I64), loc))
            acc = prod
        empty = S.Var(self.names.fresh("empty"), BOOL)
        stms.append(S.Stm((empty,), S.BinOp("==", acc, S.Const(0, I64), BOOL), loc))
        branches = []
        for branch in (otherwise, e):
            r = S.Var(self.names.fresh(v.name), v.type)
            branches.append(S.Body((S.Stm((r,), branch, loc),), (r,)))
        return stms + [S.Stm((v,), S.If(empty, branches[0], branches[1], (v.type,)), loc)]

    def single(self, e, types: tuple, before=()) -> S.Body:
        pat = tuple(S.Var(self.names.fresh("res"), t) for t in types)
        return S.Body(tuple(before) + (S.Stm(pat, e),), pat)

    def max_par(self, pars: list):
        """Statements computing the largest of several products, and the atoms whose product it is."""
        distinct = list(dict.fromkeys(pars))
        if len(distinct) == 1:
            return (), distinct[0]
        stms, atoms = [], []
        for prod in distinct:
            acc = prod[0]
            for a in prod[1:]:
                v = S.Var(self.names.fresh("par"), I64)
                stms.append(S.Stm((v,), S.BinOp("*", acc, a, I64)))
                acc = v
            atoms.append(acc)
        best = atoms[0]
        for a in atoms[1:]:
            v = S.Var(self.names.fresh("intra_par"), I64)
            stms.append(S.Stm((v,), S.PrimCall("i64.max", (best, a), I64)))
            best = v
        return tuple(stms), (best,)


# The most points a perfect nest of maps may have to run as one workgroup-level segmap (the least workgroup
# limit of the devices in use: NVIDIA's 1024 threads).
NEST_POINTS = 1024


def map_nest(e: S.Map) -> tuple:
    """A perfect nest of maps as one context and the innermost body: `map (\\i -> map (\\j -> f i j) ys) xs`
    gives (i in xs, j in ys) and f, so that a workgroup runs every point of the nest (NW's and LUD's blocks),
    not a thread per row. Only where every width is a constant and the points fit a workgroup: a nest of
    run-time widths may not fit, and its version with a thread per row is the one that runs then
    (LocVolCalib's explicit steps). Scalar statements of an outer body (what normalisation hoisted out of
    the inner map: `r > i`, `blk[r, i]`) move into the inner body, computed at each point."""
    ctx, body = (T.Binding(e.width, e.lam.params, e.arrs),), e.lam.body
    points = e.width.value if isinstance(e.width, S.Const) else None
    while points is not None and body.stms and body.stms[-1].pat == body.result \
            and isinstance(body.stms[-1].exp, S.Map):
        lead, inner = body.stms[:-1], body.stms[-1].exp
        # (a width of at least 1: a statement moved in still runs, and fails, wherever it did)
        if not isinstance(inner.width, S.Const) or not 0 < points * inner.width.value <= NEST_POINTS \
                or not all(_per_point(stm) for stm in lead) \
                or _names(inner.arrs) & {p.name for stm in lead for p in stm.pat}:
            break
        points *= inner.width.value
        ctx = ctx + (T.Binding(inner.width, inner.lam.params, inner.arrs),)
        body = S.Body(lead + inner.lam.body.stms, inner.lam.body.result)
    return ctx, body


def _per_point(stm: S.Stm) -> bool:
    """A statement that may as well run at each point of an inner map: scalar arithmetic or a load."""
    return isinstance(stm.exp, (S.BinOp, S.UnOp, S.PrimCall, S.AtomExp, S.Index)) \
        and not any(isinstance(p.type, Array) for p in stm.pat)


def nest_types(e: S.Map) -> tuple:
    return tuple(array_of(t, (S.dim_of(e.width),)) for t in e.lam.ret)


def _local_bytes(intra_body: S.Body) -> int:
    """Local memory per thread of an intra-group version: one element per thread for each value that a
    workgroup-level reduction or scan combines."""
    return sum(np.dtype(a.type.dtype).itemsize for op in T.level0_segops(intra_body)
               if isinstance(op, (T.SegRed, T.SegScan)) for a in op.neutral)


def _hoisted(run: list, variant: set) -> tuple[list, list]:
    """A run split into the statements that are the same for every point of the nest, wherever they are in
    it (scalars that use no variable bound inside the nest, and check nothing: an assertion inside a nest of
    no points must not run), and the rest."""
    hoisted, rest, bound = [], [], set(variant)
    for stm in run:
        if any(isinstance(p.type, Array) for p in stm.pat) or set(free_in_exp(stm.exp)) & bound \
                or has_assertions(stm.exp):
            rest.append(stm)
            bound |= {p.name for p in stm.pat}
        else:
            hoisted.append(stm)
    return hoisted, rest


def _context_view(ctx: tuple, stm: S.Stm, expanded: dict, variant: set):
    """For `x = rearrange perm v` or an array `x = v[i, ...]` with indices the same at every point, where v
    is at each point of the nest that point's part of an array over the whole context (expanded, or bound
    by the context from a host array): the same permutation, or index, of that array, past the context's
    dimensions. Else None."""
    e = stm.exp
    if not isinstance(e, (S.Rearrange, S.Index)):
        return None
    source = expanded.get(e.arr.name) or T.whole_rows(ctx).get(e.arr.name)
    if source is None:
        return None
    n = len(ctx)
    if isinstance(e, S.Rearrange):
        return S.Rearrange(tuple(range(n)) + tuple(n + k for k in e.perm), source)
    atoms = [a for i in e.idxs for a in ((i.start, i.end, i.stride, i.size) if isinstance(i, S.DimSlice) else (i,))]
    if not isinstance(stm.pat[0].type, Array) or _names(atoms) & variant:
        return None
    whole = tuple(S.DimSlice(S.Const(0, I64), b.width, S.Const(1, I64), b.width) for b in ctx)
    return S.Index(source, whole + tuple(e.idxs))


def _names(atoms) -> set:
    return {a.name for a in atoms if isinstance(a, S.Var)}


def _bound_in(ctx: tuple, body: S.Body) -> set:
    """The variables bound inside a nest: the context's parameters and the body's statements' patterns."""
    return {p.name for b in ctx for p in b.params} | {p.name for s in body.stms for p in s.pat}


def _bound_anywhere(ctx: tuple, body: S.Body) -> set:
    """_bound_in, with what the loops and branches of the body bind (a loop's parameters, its statements)."""
    bound = _bound_in(ctx, body)
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.Loop):
            bound |= {p.name for p in e.params} | _bound_anywhere((), e.body)
            if isinstance(e.form, S.ForLoop):
                bound.add(e.form.i.name)
        elif isinstance(e, S.If):
            bound |= _bound_anywhere((), e.then) | _bound_anywhere((), e.else_)
    return bound


def _uses_any(atoms, ctx) -> bool:
    bound = {p.name for b in ctx for p in b.params}
    return any(isinstance(a, S.Var) and a.name in bound for a in atoms)


COMMUTATIVE_OPS = {"+", "*", "&&", "||", "&", "|", "^", "==", "!="}
COMMUTATIVE_FNS = {"min", "max"}


def is_commutative(lam: S.Lambda) -> bool:
    """Recognises operators known to be commutative: one binary operator (or min/max) on the two params."""
    if len(lam.params) != 2 or len(lam.body.stms) != 1 or len(lam.body.result) != 1:
        return False
    stm = lam.body.stms[0]
    e = stm.exp
    if stm.pat != lam.body.result:
        return False
    if isinstance(e, S.BinOp) and e.op in COMMUTATIVE_OPS:
        operands = (e.x, e.y)
    elif isinstance(e, S.PrimCall) and e.fn.split(".")[-1] in COMMUTATIVE_FNS:
        operands = e.args
    else:
        return False
    return {getattr(a, "name", None) for a in operands} == {p.name for p in lam.params}


def bind(pat: tuple, result, loc) -> list:
    """Statements binding pat to a flattening result: an expression, or a body (spliced in)."""
    if isinstance(result, S.Body):
        return list(result.stms) + [S.Stm((p,), S.AtomExp(r), loc) for p, r in zip(pat, result.result)]
    return [S.Stm(pat, result, loc)]


def flatten(prog: S.Program, flattening: str = "incremental") -> T.Program:
    """The flatten stage: incremental flattening (guarded versions), or moderate flattening (one version,
    the baseline) when `flattening` is "moderate"."""
    if flattening not in ("incremental", "moderate"):
        raise ValueError(f"unknown flattening {flattening!r}")
    f = Flattener(prog, moderate=flattening == "moderate")
    funs = tuple(
        S.FunDef(fn.name, True, fn.size_params, fn.params, fn.ret, f.host_body(fn.name, fn.body), fn.loc)
        for fn in prog.entries)
    return T.Program(funs, prog.file)
