"""The choice between versions: the guards of G3 and G9, their thresholds, and the parallelism they compare.

G3 (Henriksen et al., PPoPP'19, Figure 4): a map with inner parallelism has three versions, chosen at run time
by guards on the degree of parallelism: e_top (the outer map is a segmap, its body sequential), e_middle (the
body at workgroup level: flatten.intra) and e_flat (the body flattened further: flatten.maps). G9: a redomap with
inner parallelism is a segred with its map function sequential, or the map and the reduction flattened apart.
A version that would equal e_top is left out, and so is its threshold. Thresholds are numbered in the program in
the order they are made; an intra-group guard compares the largest parallelism of the workgroup's segops
(max_par).

`GuardRules` is a part of `flatten.incremental.Flattener`: it uses the flattener's names, its threshold count,
and the rules of flatten.maps (nest_rule_applies, body_rule, split_redomap).
"""

from incflat.flatten.intra import intra_body, local_bytes
from incflat.flatten.nests import bound_anywhere, names_of
from incflat.ir.runtime.tuning import threshold_name
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.types import I64


def nested_widths(body: S.Body, bound: set) -> tuple:
    """The widths of the first nest of maps in a body (a map, the first map in its lambda, ...) that are the
    same at every point (not bound in the body); () where it has none. (A thread's reduction or scan is its
    own sequential work, as a thread-level version's is.)"""
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, S.Map):
            own = (e.width,) if not names_of((e.width,)) & bound else ()
            return own + nested_widths(e.lam.body, bound | {p.name for s in e.lam.body.stms for p in s.pat})
    return ()


class GuardRules:
    """Thresholds, guards and the bodies of versions."""

    def threshold(self, entry: str, kind: str) -> str:
        name = threshold_name(entry, kind, self.n_thresholds)
        self.n_thresholds += 1
        return name

    def map_versions(self, entry: str, ctx: tuple, level: int, body: S.Body, e_top, types: tuple):
        """G3: e_top (a segmap over ctx, the map's context, of the sequential body), e_middle and e_flat under
        guards; e_top alone where the other versions would equal it."""
        e_middle_body = intra_body(body)
        bound = bound_anywhere(ctx, body)
        intra_pars = [T.par_of_ctx(op.ctx) for op in T.level0_segops(e_middle_body)]
        if any(names_of(par) & bound for par in intra_pars):
            intra_pars = []  # the workgroup size must be known before the kernel starts
        # as Futhark's, the parallelism an intra-group version has is all of its body's: a workgroup segop
        # whose threads each run a nest of maps (LUD's map over blocks, each a 32 x 32 product) is one that
        # needs more threads than it has (the guard's `fits` then goes on to a version that gives them)
        intra_pars = [par + nested_widths(op.body, bound) for op, par in zip(T.level0_segops(e_middle_body),
                                                                            intra_pars)]
        flattens = self.nest_rule_applies(ctx, body)
        if not intra_pars and not flattens:
            return e_top
        t_top = self.threshold(entry, "outer")
        t_intra = self.threshold(entry, "intra") if intra_pars else None
        e_flat = self.body_rule(entry, ctx, level, body, types) if flattens else self.single(e_top, types)
        if t_intra is not None:
            par_stms, par = self.max_par(intra_pars)
            e_middle = T.SegMap(level, ctx, e_middle_body, types)
            e_flat = T.Guard(t_intra, "intra", par, self.single(e_middle, types), e_flat, types,
                             local_bytes(e_middle_body))
            rest = self.single(e_flat, types, par_stms)
        else:
            rest = e_flat
        return T.Guard(t_top, "outer", T.par_of_ctx(ctx), self.single(e_top, types), rest, types)

    def redomap_versions(self, entry: str, ctx: tuple, level: int, e: S.Redomap, e_top: T.SegRed, types: tuple):
        """G9: the segred e_top (over ctx and the redomap's width) with the map function sequential, or the
        map and the reduce flattened apart."""
        t_top = self.threshold(entry, "outer")
        e_rec = self.split_redomap(entry, ctx, level, e, types)
        return T.Guard(t_top, "outer", T.par_of_ctx(e_top.ctx), self.single(e_top, types), e_rec, types)

    def single(self, e, types: tuple, before=()) -> S.Body:
        """A version's body: the statements `before`, then e bound to fresh names."""
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
