"""G6: distribution of a map nest over the statements of its body (Henriksen et al., PPoPP'19, Figure 4).

The body's statements are split into groups: each parallel statement alone (a map, a redomap or scanomap whose
neutral element does not vary in the nest, a loop for G7, an `if` for G8), the runs between them together. Each
group becomes a nest over the context; a value one group passes to a later one is expanded into an array over
the context, which the later nest binds again level by level (extend_ctx). Statements of a run that are the same
at every point are computed once on the host, and a transpose or a slice of a point's part of an array over the
nest is a view of that array, not a kernel copying rows.

`DistributionRule` is a part of `flatten.incremental.Flattener`: it uses the flattener's names and `moderate`,
`nest` (flatten.maps), the loop rule G7 (flatten.loops) and the branch rule G8 (flatten.branches).
"""

import dataclasses

from incflat.flatten.nests import bind, bound_in, names_of
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_body, free_in_exp, has_assertions, has_inner_soacs, type_size_names
from incflat.ir.types import BOOL, I64, Array, array_of


class DistributionRule:
    """G6, and the context a distributed nest binds."""

    def parallel_stm(self, ctx: tuple, stm: S.Stm, body: S.Body) -> bool:
        """A statement that becomes a nest of its own: a map, or a redomap/scanomap whose neutral element
        does not vary inside the nest."""
        e = stm.exp
        if isinstance(e, S.Map):
            return True
        if isinstance(e, (S.Redomap, S.Scanomap)) and self.moderate:
            return False  # the heuristic: inner reductions and scans run sequentially
        if isinstance(e, (S.Redomap, S.Scanomap)):
            return not (names_of(e.neutral) & bound_in(ctx, body))
        bound = bound_in(ctx, body)
        if isinstance(e, S.Loop):  # G7 needs an invariant count and regular loop-carried values
            return (isinstance(e.form, S.ForLoop) and not e.size_params and has_inner_soacs(e.body)
                    and not (names_of((e.form.bound,)) & bound)
                    and not any(type_size_names(p.type) & bound for p in e.params))
        if isinstance(e, S.If):  # G8 needs an invariant condition and regular results
            return (not (names_of((e.cond,)) & bound) and (has_inner_soacs(e.then) or has_inner_soacs(e.else_))
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
        bound = bound_in(ctx, body)
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
                stms.extend(self.hoisted_iotas(ctx, group, variant))
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
        # an array result the same at every point (a free variable, or made once on the host) is replicated
        # over the nest on the host: one copy on the device, not each point copying it alone
        for a in body.result:
            if isinstance(a, S.Var) and isinstance(a.type, Array) and a.name not in expanded and a.name not in variant:
                v = a
                for b in reversed(ctx):
                    wider = S.Var(self.names.fresh(a.name), array_of(v.type, (S.dim_of(b.width),)))
                    stms.append(S.Stm((wider,), S.Replicate(b.width, v), body.stms[-1].loc if body.stms else None))
                    v = wider
                expanded[a.name] = v
        rest = [k for k, a in enumerate(body.result) if not (isinstance(a, S.Var) and a.name in expanded)]
        if not rest:
            return S.Body(tuple(stms), tuple(expanded[a.name] for a in body.result))
        # results that no group computes (parameters, constants): one more nest copies them
        copy_body = S.Body((), tuple(body.result[k] for k in rest))
        copy = T.SegMap(level, self.extend_ctx(ctx, copy_body, expanded), copy_body, tuple(types[k] for k in rest))
        pat = tuple(S.Var(self.names.fresh("res"), types[k]) for k in rest)
        copied = dict(zip(rest, pat))
        results = tuple(copied[k] if k in copied else expanded[a.name] for k, a in enumerate(body.result))
        return S.Body(tuple(stms) + (S.Stm(pat, copy),), results)

    def hoisted_iotas(self, ctx: tuple, group: list, variant: set) -> list:
        """The iotas of a run whose length is the same at every point, taken out of the run (in place) and made
        once on the host, their length checked only where the nest has points (as the run would): the later
        nests read them whole, not an iota per point written into an array over the nest."""
        found, bound = [], set(variant)
        for stm in list(group):
            if isinstance(stm.exp, S.Iota) and not set(free_in_exp(stm.exp)) & bound:
                group.remove(stm)
                found.append(stm)
            else:
                bound |= {p.name for p in stm.pat}
        if not found:
            return []
        stms, count = self.points(ctx, found[0].loc)
        points = S.Var(self.names.fresh("points"), BOOL)
        stms.append(S.Stm((points,), S.BinOp("!=", count, S.Const(0, I64), BOOL), found[0].loc))
        for stm in found:
            checked = points
            if stm.exp.checked is not None:
                checked = S.Var(self.names.fresh("runs"), BOOL)
                stms.append(S.Stm((checked,), S.BinOp("&&", stm.exp.checked, points, BOOL), stm.loc))
            stms.append(S.Stm(stm.pat, dataclasses.replace(stm.exp, checked=checked), stm.loc))
        return stms

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

    def points(self, ctx: tuple, loc) -> tuple:
        """(statements, atom): the number of points of the context, the product of its widths."""
        stms, count = [], ctx[0].width
        for b in ctx[1:]:
            product = S.Var(self.names.fresh("points"), I64)
            stms.append(S.Stm((product,), S.BinOp("*", count, b.width, I64), loc))
            count = product
        return stms, count

    def unless_empty(self, ctx: tuple, v: S.Var, e, otherwise, loc) -> list:
        """Statements binding v to e where every width of the context is positive, and to `otherwise`
        (which computes the same where there are points) where one is zero."""
        stms, count = self.points(ctx, loc)
        empty = S.Var(self.names.fresh("empty"), BOOL)
        stms.append(S.Stm((empty,), S.BinOp("==", count, S.Const(0, I64), BOOL), loc))
        branches = []
        for branch in (otherwise, e):
            r = S.Var(self.names.fresh(v.name), v.type)
            branches.append(S.Body((S.Stm((r,), branch, loc),), (r,)))
        return stms + [S.Stm((v,), S.If(empty, branches[0], branches[1], (v.type,)), loc)]


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
    if not isinstance(stm.pat[0].type, Array) or names_of(atoms) & variant:
        return None
    whole = tuple(S.DimSlice(S.Const(0, I64), b.width, S.Const(1, I64), b.width) for b in ctx)
    return S.Index(source, whole + tuple(e.idxs))
