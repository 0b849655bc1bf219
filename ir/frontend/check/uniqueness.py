"""In-place updates: aliasing and consumption (Futhark's uniqueness rules, simplified).

A mixin of `Checker` (ir.frontend.check.checker). It tracks which roots (array variables) each array
variable may alias and which are consumed, and rejects a use of a consumed array, or an update of
one that aliases a non-unique parameter or is bound outside the innermost lambda or loop. Its
state (`alias`, `consumed`, `nonunique`, `born`, `barrier`) lives on the one `Checker` object;
the parts of the checker that bind, branch or loop save and restore it.
"""

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.infer import TArr, is_arr, nleaves, prune
from incflat.ir.frontend.check.values import V
from incflat.ir.types import Tuple, field_order


class Uniqueness:
    """Mixin of Checker: aliasing and consumption of arrays updated in place."""

    # ---- in-place updates: aliasing and consumption

    def roots(self, a):
        if isinstance(a, S.Var) and is_arr(prune(a.type)):
            return self.alias.get(a.name, frozenset((a.name,)))
        return frozenset()

    def alias_pairs(self, new_atoms, src_atoms):
        for n, a in zip(new_atoms, src_atoms):
            self.alias_to([n], [a])

    def alias_to(self, new_atoms, src_atoms):
        """The arrays new_atoms alias those of src_atoms (slices, transposes, reshapes, copies of names)."""
        rs = frozenset().union(*(self.roots(a) for a in src_atoms))
        for v in new_atoms:
            if isinstance(v, S.Var) and is_arr(prune(v.type)):
                self.alias[v.name] = rs | {v.name}

    def check_use(self, v, loc, name):
        if not isinstance(v, V):
            return
        for a in v.atoms:
            for r in self.roots(a):
                if r in self.consumed:
                    cl = self.consumed[r]
                    raise self.err(f'"{name}" cannot be used here: it (or an array it aliases) was consumed by '
                                   f'the in-place update at line {cl.line}, column {cl.col}. Use a copy (copy '
                                   f'{name}) before updating if the old value is still needed.', loc)

    def consume(self, v, loc, name, how="update"):
        """v is consumed (updated in place) at loc."""
        what = "be updated in place" if how == "update" else f"be consumed by {how}"
        for a in v.atoms:
            for r in self.roots(a):
                if r in self.consumed:
                    cl = self.consumed[r]
                    raise self.err(f'"{name}" cannot {what}: it (or an array it aliases) was already consumed '
                                   f'at line {cl.line}, column {cl.col}.', loc)
                if r in self.nonunique:
                    p = self.nonunique[r]
                    raise self.err(f'"{name}" cannot {what}: it aliases the parameter "{p}", whose type is '
                                   f'not declared unique. Declare it as (p: *[]t), or update a copy '
                                   f'(copy {p}).', loc)
                if self.born.get(r, 0) <= self.barrier[0]:
                    raise self.err(f'"{name}" cannot {what} {self.barrier[1]}: it is bound outside. Update a '
                                   f'copy instead.', loc)
        for a in v.atoms:
            for r in self.roots(a):
                self.consumed[r] = loc

    def unique_leaves(self, te, t) -> list:
        """For each leaf of the type t, which the type expression te denotes: the location of the `*` type that
        declares it unique, or None."""
        t = prune(t)
        n = nleaves(t)
        if te.unique:
            return [te.loc] * n
        if te.dims or isinstance(t, TArr):
            return [None] * n
        if isinstance(te.base, str) and te.base in self.types:  # an abbreviation
            return self.unique_leaves(self.types[te.base].type, t)
        if isinstance(te.base, P.RecordTypeExp):
            parts = [x for _, x in sorted(te.base.fields, key=lambda f: field_order(f[0]))]
        elif isinstance(te.base, list):
            parts = te.base
        else:
            return [None] * n
        if not isinstance(t, Tuple) or len(parts) != len(t.elems):
            return [None] * n
        return [u for x, e in zip(parts, t.elems) for u in self.unique_leaves(x, e)]

    def check_unique_result(self, d: P.Decl, ret_t, atoms):
        """A unique result (`*[]t` in the return type) may not alias a parameter that is not unique."""
        if d.ret is None:
            return
        for unique, a in zip(self.unique_leaves(d.ret, ret_t), atoms):
            for r in self.roots(a) if unique is not None else ():
                if r in self.nonunique:
                    p = self.nonunique[r]
                    raise self.err(f'The result of "{d.name}" is declared unique, but it aliases the parameter '
                                   f'"{p}", which is not unique: a unique return value may not alias a non-unique '
                                   f'parameter. Return a copy (copy {p}), or declare the parameter unique '
                                   f'(*).', unique)

    @staticmethod
    def pat_unique(p):
        def te_unique(te):
            if isinstance(te.base, P.RecordTypeExp):
                return te.unique or any(te_unique(x) for _, x in te.base.fields)
            return te.unique or (isinstance(te.base, list) and any(te_unique(x) for x in te.base))
        if isinstance(p, P.PTyped):
            return te_unique(p.type) or Uniqueness.pat_unique(p.pat)
        if isinstance(p, P.PTuple):
            return any(Uniqueness.pat_unique(x) for x in p.elems)
        if isinstance(p, P.PRecord):
            return any(Uniqueness.pat_unique(x) for _, _, x in p.fields)
        return False
