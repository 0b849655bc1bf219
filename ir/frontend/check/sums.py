"""Sum types: constructors, constructor and literal patterns, `match`, and `==` on sums.

A mixin of `Checker` (ir.frontend.check.checker). Sum types are elaborated away here, so that nothing after the
checker knows of them: a sum type is a record of a tag and every constructor's payload (infer.sum_of), a
constructor `#c x y` is that record with c's tag, x and y as c's payload and blank values as the others', and
`match` is a chain of `if`s on the tags and literals that its cases test, taking the first case that matches.

A constructor's sum type comes from its context (an annotation, the other branch of an `if`, a parameter's
type...), which this one-pass checker may meet only after the constructor. So a constructor whose type is not
known yet gets an open type (infer.SumTV) and a placeholder value; when unification meets the sum type it must
have, the function is checked again with that type known for the constructor (`learned`, by its node and the
calls inlined around it). One that no sum type meets is ambiguous, an error, as in Futhark.
"""

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.exhaustive import show_value, shape, unmatched
from incflat.ir.frontend.check.infer import (KIND_DEFAULT, TV, SumResolved, SumTV, TArr, arr_of, has_sum, is_arr,
                                            is_scalar, is_sum, leaves, map_dims, prune, shape_of, sum_constructors,
                                            type_param_tv, unify)
from incflat.ir.frontend.check.prelude import EQ_OPS
from incflat.ir.frontend.check.values import V, atom_v, split_tuple, tuple_v
from incflat.ir.types import BOOL, Array, Scalar, Tuple


# In a learned sum type: a size that the function's body named, named afresh when the function is checked again
# (so not known where the constructor is made), and a top-level constant (`def N = 8i64`) used as a size, taken
# again where the constructor is made. Neither is the name of a variable.
UNKNOWN_SIZE = "?"
CONSTANT_SIZE = "constant "


class SumTypes:
    """Mixin of Checker: sum types, constructors, `match`."""

    # ---- the types of constructors

    def check_with_sums(self, d: P.Decl):
        """check_fun_once(d), again each time it learns the sum type of a constructor."""
        while True:
            self.unknown_types = {}
            try:
                return self.check_fun_once(d)
            except SumResolved as r:
                t = map_dims(r.t, self.learned_size)
                for key, _ in r.tv.origins:
                    self.learned[key] = t

    def learned_size(self, dim):
        if dim is None or isinstance(dim, int) or dim in self.stable_sizes:
            return dim
        if self.size_constant(self.dim_text.get(dim)):
            return CONSTANT_SIZE + self.dim_text[dim]
        return UNKNOWN_SIZE

    def learned_here(self, learned, loc):
        """A learned sum type where a constructor is made: the type variables it holds (of type parameters that
        were not bound when it was learned) fresh, and its constant sizes taken here."""
        fresh = {}

        def size(dim):
            if isinstance(dim, str) and dim.startswith(CONSTANT_SIZE):
                return S.dim_of(self.lower_Ident(P.Ident(loc, (0, 0), dim[len(CONSTANT_SIZE):]), {}).atom)
            return dim

        def go(t):
            t = prune(t)
            if isinstance(t, TV):
                return fresh.setdefault(id(t), TV(t.kind if t.kind in KIND_DEFAULT else "param"))
            if isinstance(t, Tuple):
                return t.with_elems(go(x) for x in t.elems)
            if isinstance(t, TArr):
                return TArr(t.shape, go(t.elem))
            if isinstance(t, Array):
                return arr_of(go(t.elem), t.shape)
            return t
        return map_dims(go(learned), size)

    def require_known_sums(self):
        """Every constructor of the function being checked has a known sum type."""
        for tv in self.open_sums:
            t = prune(tv)
            if isinstance(t, SumTV):
                loc = min((loc for _, loc in t.origins), key=lambda loc: (loc.line, loc.col))
                raise self.err(f"Type is ambiguous: a sum type with {self.constructors_text(t)} (and perhaps "
                               f"others). Add a type annotation, as in (#{next(iter(t.constructors))} ... : t).",
                               loc)

    def constructors_text(self, t: SumTV) -> str:
        many = len(t.constructors) > 1
        return f"the constructor{'s' if many else ''} {self.show(t)}"

    def refuse_entry_sum(self, d: P.Decl, t, verb, loc):
        if (d.entry or d.name == "main") and has_sum(t):
            raise self.err(f'The entry point "{d.name}" cannot {verb} a value of type {self.show(t)}: sum types '
                           f'in the parameters and results of entry points are not supported by incflat.', loc)

    def show_sum(self, constructors) -> str:
        def payload(t):
            text = self.show(t)
            return f"({text})" if (" " in text or text.startswith("[")) and text[0] not in "({" else text
        return " | ".join(" ".join(["#" + name] + [payload(t) for t in ts]) for name, ts in constructors)

    # ---- constructors

    def lower_ConstrE(self, e: P.ConstrE, env):
        payload = [self.lower_val(a, env, f"the payload of #{e.name}") for a in e.args]
        key = (id(e), self.call_path)
        t = self.learned.get(key)
        if t is None:
            tv = SumTV({e.name: tuple(v.t for v in payload)}, [(key, e.loc)])
            self.open_sums.append(tv)
            return V(tv, (S.Const(0, tv),))
        return self.construct(t, e, payload)

    def construct(self, learned, e: P.ConstrE, payload) -> V:
        """`#c payload` of the learned sum type (which has c, with as many payloads)."""
        t = self.learned_here(learned, e.loc)
        constructors = sum_constructors(t)
        k = [name for name, _ in constructors].index(e.name)
        for v, want, arg in zip(payload, constructors[k][1], e.args):
            if unify(want, v.t) == "type":
                raise self.err(f"The payload of #{e.name} has type {self.show(v.t)}, but its sum type "
                               f"{self.show(t)} has {self.show(want)} there.", arg.loc)
        parts = [atom_v(S.Const(k, t.elems[0]))]
        for j, (name, fields) in enumerate(constructors):
            if j != k and any(UNKNOWN_SIZE in shape_of(lt) or type_param_tv(lt.elem if isinstance(lt, Array) else lt)
                              for lt in map(prune, leaves(Tuple(tuple(fields))))):
                raise self.err(f"#{e.name} is not supported by incflat here: a value of its type {self.show(t)} "
                               f"holds a (blank) payload for #{name} too, of a type or size not known here.", e.loc)
            parts.append(tuple_v(payload) if j == k else self.blank(Tuple(tuple(fields)), e.loc))
        return V(t.with_elems(p.t for p in parts), tuple(a for p in parts for a in p.atoms))

    def blank(self, t, loc) -> V:
        """A value of type t that is never read: the payload of a constructor that a sum value does not have.
        Zeros (of a literal's type where that is not known yet) and false, in arrays of zeros; an anonymous size
        (None, `[]` in the type) is 0."""
        atoms = []
        for lt in leaves(t):
            lt = prune(lt)
            elem = prune(lt.elem) if isinstance(lt, Array) else lt
            a = S.Const(False if elem == BOOL else 0.0 if isinstance(elem, Scalar) and elem.is_float else 0, elem)
            if isinstance(lt, Array):
                shape_ = tuple(0 if dim is None else dim for dim in lt.shape)
                for j in reversed(range(len(shape_))):
                    a = self.bind(S.Replicate(self.dim_atom(shape_[j]), a), Array(elem, shape_[j:]), loc, "blank")
            atoms.append(a)
        return V(self.rebuild(t, [a.type for a in atoms]), tuple(atoms))

    # ---- patterns

    def bind_refutable(self, pat, val, env, ann_env, what, sizes, tests):
        """bind_pattern of a constructor or literal pattern (see there)."""
        t = prune(val.t) if isinstance(val, V) else None
        shown = "is a function" if t is None else f"has type {self.show(t)}"
        if isinstance(pat, P.PLit):
            text = str(pat.lit.value).lower() if pat.lit.kind == "bool" else f"{pat.lit.value}{pat.lit.suffix or ''}"
            lit = self.lower_Lit(pat.lit, env)
            if t is None or not is_scalar(t) or unify(t, lit.t):
                raise self.err(f"This pattern is the literal {text}, but the {what} {shown}.", pat.loc)
            if tests is None:
                raise self.err(f'The pattern {text} is refutable: not every {what} matches it. Only a case of '
                               f'"match" can have such a pattern.', pat.loc)
            tests.append((val, lit))
            return
        if isinstance(t, SumTV):  # this pass is checked again once the type is known, or refused
            fields = t.constructors.get(pat.name)
            if fields is None:
                raise self.err(f"Type is ambiguous: the {what} is a sum type with {self.constructors_text(t)} "
                               f"(and perhaps others). Add a type annotation to it, as in (x : t).", pat.loc)
            payload = [self.fresh_v(f, "payload") for f in fields]
            constructors = None
        elif is_sum(t):
            constructors = sum_constructors(t)
            names = [name for name, _ in constructors]
            if pat.name not in names:
                raise self.err(f"This pattern is the constructor #{pat.name}, but the {what} has type "
                               f"{self.show(t)}, which does not have it.", pat.loc)
            k = names.index(pat.name)
            fields = constructors[k][1]
            parts = split_tuple(val)
            payload = split_tuple(parts[1 + k])
        else:
            raise self.err(f"This pattern is the constructor #{pat.name}, but the {what} {shown}.", pat.loc)
        if len(pat.args) != len(fields):
            raise self.err(f"The constructor #{pat.name} has {len(fields)} payload{'s' if len(fields) != 1 else ''} "
                           f"in type {self.show(t)}, but this pattern gives it {len(pat.args)}.", pat.loc)
        if constructors is not None and len(constructors) > 1:
            if tests is None:
                raise self.err(f'The pattern #{pat.name} is refutable: the {what} has type {self.show(t)}, which '
                               f'has other constructors. Only a case of "match" can have such a pattern.', pat.loc)
            tests.append((parts[0], atom_v(S.Const(k, t.elems[0]))))
        for p, v in zip(pat.args, payload):
            self.bind_pattern(p, v, env, ann_env, what, sizes, tests)

    # ---- match

    def lower_MatchE(self, e: P.MatchE, env):
        """The cases as nested `if`s, each case's test computed where the ones before it failed; the last case
        is taken when they all fail, as the cases must cover every value (checked afterwards)."""
        x = self.lower_val(e.x, env, "the value matched")
        pending = []  # (test, then-branch statements and value, what it consumed, the scope outside), per case
        for k, case in enumerate(e.cases):
            inner, tests = dict(env), []
            self.check_dup_names([case.pat], "this pattern")
            self.bind_pattern(case.pat, x, inner, env, "value matched", tests=tests)
            if k == len(e.cases) - 1:
                result = self.lower(case.body, inner)
                break
            cond = self.all_equal(tests, case.loc)
            consumed = dict(self.consumed)
            saved = self.push()
            value = self.lower(case.body, inner)
            stms = self.pop(saved)
            pending.append((cond, stms, value, self.consumed, self.push()))
            self.consumed = consumed
        for cond, stms, value, consumed, outside in reversed(pending):
            else_stms = self.pop(outside)
            self.consumed.update(consumed)
            result = self.join_branches(cond, stms, value, else_stms, result, 'The cases of "match"', e.loc)
        if not _has_open_sum(x.t):  # (else this pass is checked again, or refused)
            found = unmatched([[shape(c.pat, x.t)] for c in e.cases], [x.t])
            if found is not None:
                raise self.err(f"Unmatched cases in match expression: no case matches {show_value(found[0], x.t)}.",
                               e.loc)
        return result

    def all_equal(self, tests, loc):
        """A bool atom: whether every pair of values in tests is equal."""
        cond = None
        for a, b in tests:
            c = self.binop("==", a, b, loc)
            cond = c if cond is None else self.binop("&&", cond, c, loc)
        return S.Const(True, BOOL) if cond is None else cond.atom

    # ---- equality

    def sum_binop(self, op, x: V, y: V, loc) -> V:
        """A builtin operator with an operand of a sum type: `==` or `!=`."""
        if op not in EQ_OPS:
            bad = x.t if has_sum(x.t) else y.t
            raise self.err(f'The operator "{op}" cannot be applied to sum types (operand of type '
                           f'{self.show(bad)}).', loc)
        if unify(x.t, y.t) == "type":
            raise self.err(f'The operands of "{op}" have different types: {self.show(x.t)} and '
                           f'{self.show(y.t)}.', loc)
        if isinstance(prune(x.t), SumTV):  # a placeholder: this pass is checked again, or refused
            return atom_v(S.Const(op == "==", BOOL))
        same = self.sum_eq(x, y, loc)
        if op == "!=":
            same = atom_v(self.emit(S.UnOp("!", same.atom, BOOL), BOOL, loc))
        return same

    def sum_eq(self, x: V, y: V, loc) -> V:
        """Whether two values of one sum type are equal: the same constructor, with equal payloads (only that
        constructor's: the others' are blank, with sizes that may differ)."""
        xs, ys = split_tuple(x), split_tuple(y)
        tag_t = prune(x.t).elems[0]
        same = self.binop("==", xs[0], ys[0], loc)
        for k, (a, b) in enumerate(zip(xs[1:], ys[1:])):
            if a.atoms:
                other = self.binop("!=", xs[0], atom_v(S.Const(k, tag_t)), loc)
                same = self.binop("&&", same, self.binop("||", other, self.payload_eq(a, b, loc), loc), loc)
        return same

    def payload_eq(self, a: V, b: V, loc) -> V:
        t = prune(a.t)
        if is_sum(t):
            return self.sum_eq(a, b, loc)
        if isinstance(t, Tuple):
            same = None
            for p, q in zip(split_tuple(a), split_tuple(b)):
                if p.atoms:
                    c = self.payload_eq(p, q, loc)
                    same = c if same is None else self.binop("&&", same, c, loc)
            return atom_v(S.Const(True, BOOL)) if same is None else same
        if is_arr(t):
            return self.array_eq("==", a, b, loc)
        return self.binop("==", a, b, loc)


def _has_open_sum(t) -> bool:
    t = prune(t)
    if isinstance(t, SumTV):
        return True
    if isinstance(t, Tuple):
        return any(_has_open_sum(e) for e in t.elems)
    return isinstance(t, (Array, TArr)) and _has_open_sum(t.elem)
