"""Loops: `loop` with its forms (`for i < n`, `for x in xs`, `while`), its parameters' annotations, and the
generalisation of their sizes (a size that changes from one iteration to the next is an existential of the loop).

A mixin of `Checker` (ir.frontend.check.checker), split from ir.frontend.check.lower.
"""

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.infer import TArr, is_arr, is_scalar, leaves, map_dims, prune, rank_of, require, shape_of, unify
from incflat.ir.frontend.check.values import FunV, V, atom_v, record_v, tuple_v
from incflat.ir.types import BOOL, I64, Array, Tuple


class Loops:
    """Mixin of Checker: loops."""

    def loop_init_from_pat(self, pat, env):
        """`loop (x, y) for ...`: the initial values are the variables of the same names."""
        if isinstance(pat, P.PTyped):
            return self.loop_init_from_pat(pat.pat, env)
        if isinstance(pat, P.PName):
            if pat.name not in env or isinstance(env[pat.name], FunV):
                raise self.err(f'The loop parameter "{pat.name}" has no initial value: write '
                               f'"loop {pat.name} = ..." or bind "{pat.name}" before the loop.', pat.loc)
            self.check_use(env[pat.name], pat.loc, pat.name)
            return env[pat.name]
        if isinstance(pat, P.PTuple):
            return tuple_v([self.loop_init_from_pat(p, env) for p in pat.elems])
        if isinstance(pat, P.PRecord):
            return record_v([(name, self.loop_init_from_pat(p, env)) for name, _, p in pat.fields])
        what = "_" if isinstance(pat, P.PWild) else "as a constructor or a literal"
        raise self.err(f"A loop parameter written {what} needs an initial value.", pat.loc)

    def loop_annotation(self, pat, t, env):
        """The loop parameters' declared type: t where annotations give sizes: `[]` sizes are
        None (free to change), named ones ("fix", d) (must not change)."""
        if isinstance(pat, P.PTyped):
            ann = self.resolve_type(pat.type, lambda kind, v, loc: self.local_type_dim(kind, v, loc, env))
            r = unify(ann, t)
            if r:
                raise self.err(f"The loop parameter is annotated as {self.show(ann)}, but its initial value has "
                               f"{self.what(r)} {self.show(t)}.", pat.loc)
            inner = self.loop_annotation(pat.pat, t, env)
            return self.zip_dims(ann, inner, lambda x, y: None if x is None else ("fix", x))
        if isinstance(pat, P.PTuple):
            t = prune(t)
            if not isinstance(t, Tuple) or t.is_record or len(t.elems) != len(pat.elems):
                n = len(t.elems) if isinstance(t, Tuple) and not t.is_record else None
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the loop's initial value "
                               f"has type {self.show(t)}" + (f" ({n} elements)." if n else "."), pat.loc)
            return Tuple(tuple(self.loop_annotation(p, e, env) for p, e in zip(pat.elems, t.elems)))
        if isinstance(pat, P.PRecord):
            elems = list(prune(t).elems) if isinstance(prune(t), Tuple) else []
            for (_, _, p), k in zip(pat.fields, self.record_pattern_fields(pat, t, "loop's initial value")):
                elems[k] = self.loop_annotation(p, elems[k], env)
            return prune(t).with_elems(elems)
        return t

    def lower_LoopE(self, e, env):
        self.check_dup_names([e.pat], "the loop parameters")
        init = self.loop_init_from_pat(e.pat, env) if e.init is None else self.lower(e.init, env)
        if isinstance(init, FunV):
            raise self.err("A loop parameter cannot be a function.", e.loc)
        declared = self.loop_annotation(e.pat, init.t, env)
        dl = leaves(declared)
        init_t = self.fill_any(map_dims(declared, lambda d: d[1] if isinstance(d, tuple) else d), init.t)
        init_leaves = leaves(init_t)
        # Sizes are generalised by group: the dimensions (leaf, dim) that must stay equal (the outer
        # dimensions of an array of tuples) form one group.
        groups = self.dim_groups(init_t)
        fixed = {groups[(k, j)] for k, lt in enumerate(dl) for j, d in enumerate(shape_of(lt))
                 if isinstance(d, tuple)}
        # the groups whose size may change from one iteration to the next
        gen = {groups[(k, j)] for k, lt in enumerate(dl) for j, d in enumerate(shape_of(lt)) if d is None}
        form = e.form
        # the loop form's outer parts are lowered once, outside the loop
        if isinstance(form, P.ForUpto):
            bound = self.lower_atom(form.bound, env, "The bound of a for loop")
            if not require(bound.type, "int"):
                raise self.err(f"The bound of a for loop must be an integer, but has type "
                               f"{self.show(bound.type)}.", form.bound.loc)
        elif isinstance(form, P.ForIn) and isinstance(form.arr, P.RangeE):
            span = self.range_parts(form.arr, env)  # `for x in a..<b`: x computed, the range not built
            bound = span.size
        elif isinstance(form, P.ForIn):
            arr = self.lower_val(form.arr, env)
            if not is_arr(prune(arr.t)):
                raise self.err(f"A for-in loop needs an array, but this has type {self.show(arr.t)}.",
                               form.arr.loc)
            bound = self.dim_atom(shape_of(prune(arr.t))[0])
        c0 = dict(self.consumed)
        outer_barrier = self.barrier
        # groups whose sizes change together: the body returns them with one size (a filter's result, unzipped),
        # and they start with one size or with anonymous ones (coerced to one, checked at run time)
        together, apart = {}, set()
        init_dims = {groups[(k, j)]: d for k, lt in enumerate(init_leaves) for j, d in enumerate(shape_of(lt))}
        for _ in range(64):
            self.consumed = dict(c0)
            self.barrier = (self.counter, "inside a loop body (only the loop's parameters can be updated there)")
            size_names = {}
            for g in sorted(gen, key=repr):
                r = together.get(g, g)
                if r not in size_names:
                    size_names[r] = self.fresh("size")
                    self.dim_text[size_names[r]] = "?"
                size_names[g] = size_names[r]
            ptypes = []
            for k, lt in enumerate(init_leaves):
                if is_arr(lt):
                    lt = Array(lt.elem, tuple(size_names.get(groups[(k, j)], d) for j, d in enumerate(lt.shape)))
                ptypes.append(lt)
            ptree = self.rebuild(init_t, ptypes)
            params = self.param_vars(e.pat, ptree, keep_names=False)
            env2 = dict(env)
            self.bind_pattern(e.pat, params, env2, None, "loop parameter")
            saved = self.push()
            if isinstance(form, P.ForUpto):
                i = S.Var(self.fresh(form.name), bound.type)
                self.dim_text[i.name] = form.name
                env2[form.name] = atom_v(i)
                lform = S.ForLoop(i, bound)
            elif isinstance(form, P.ForIn):
                i = S.Var(self.fresh("i"), I64)
                if isinstance(form.arr, P.RangeE):
                    k = i if span.t == I64 else self.emit(S.PrimCall(f"{span.t.name}.i64", (i,), span.t), span.t,
                                                          form.arr.loc)
                    elem = atom_v(self.range_element(span, k, form.arr.loc))
                else:
                    elem = self.index_value(arr, [i], form.arr.loc)
                self.bind_pattern(form.pat, elem, env2, env2, "loop element")
                lform = S.ForLoop(i, bound)
            else:
                cs = self.push()
                c = self.lower_val(form.cond, env2)
                if not is_scalar(c.t) or unify(c.t, BOOL):
                    raise self.err(f'The condition of "while" must have type bool, but has type '
                                   f'{self.show(c.t)}.', form.cond.loc)
                cond_stms = self.pop(cs)
                lform = S.WhileLoop(S.Body(tuple(cond_stms), (c.atom,)))
            res = self.lower(e.body, env2)
            body_stms = self.pop(saved)
            self.barrier = outer_barrier
            if isinstance(res, FunV):
                raise self.err("The body of a loop cannot be a function.", e.body.loc)
            r = unify(ptree, res.t)
            if r == "type":
                raise self.err(f"The loop body returns {self.show(res.t)}, but the loop parameters have type "
                               f"{self.show(ptree)}.", e.body.loc)
            new_gen, returned = set(), {}
            for k, (pt, rt) in enumerate(zip(ptypes, leaves(res.t))):
                for j, (pd, rd) in enumerate(zip(shape_of(pt), shape_of(prune(rt)))):
                    g = groups[(k, j)]
                    returned.setdefault(g, rd)
                    if g in gen or pd == rd:
                        continue
                    if g in fixed:
                        raise self.err(f"The loop body returns {self.show(res.t)}, but the loop parameter is "
                                       f"declared as {self.show(ptree)} (size mismatch).", e.body.loc)
                    new_gen.add(g)
            # groups taken as changing together that the body returns with different sizes started equal by
            # chance (two `[]`): they are told apart, for good
            split = {g for g, r in together.items() if returned.get(g) != returned.get(r)}
            for g in split:
                apart.add(frozenset((g, together.pop(g))))
            merged = self.sizes_changing_together(gen | new_gen, returned, init_dims, together, apart)
            if not new_gen and not merged and not split:
                break
            gen |= new_gen
        if together:  # their initial values take one size: one that is not anonymous, if any
            one = {}
            for g in sorted(init_dims, key=repr):
                r = together.get(g, g)
                if r not in one or (one[r] in self.flexible and init_dims[g] not in self.flexible):
                    one[r] = init_dims[g]
            init_leaves = [Array(lt.elem, tuple(one[together.get(groups[(k, j)], groups[(k, j)])]
                                                 for j in range(len(lt.shape)))) if is_arr(lt) else lt
                           for k, lt in enumerate(init_leaves)]
            init = self.coerce(init, self.rebuild(init_t, init_leaves), e.loc)
        sizes = tuple(dict.fromkeys(size_names[g] for g in sorted(gen, key=repr)))
        out_names = {n: self.fresh("size") for n in sizes}
        for n in out_names.values():
            self.dim_text[n] = "?"
        out_types = [map_dims(pt, lambda d: out_names.get(d, d)) for pt in ptypes]
        pat = tuple(S.Var(out_names[n], I64) for n in sizes) + \
            tuple(S.Var(self.fresh("loop"), t) for t in out_types)
        loop = S.Loop(sizes, params.atoms, init.atoms, lform, S.Body(tuple(body_stms), res.atoms))
        # a parameter updated in place in the body consumes its initial value
        used_up = [any(r in self.consumed for r in self.roots(p)) for p in params.atoms]
        self.consumed = c0
        for x, u in zip(init.atoms, used_up):
            if u:
                self.consume(V(x.type, (x,)), e.loc, self.show_atom(x), "the loop (it is updated in the loop body)")
        self.stms.append(S.Stm(pat, loop, e.loc))
        for v, x, u in zip(pat[len(sizes):], init.atoms, used_up):
            if not u:
                self.alias_to([v], [x])
        return V(self.rebuild(init_t, out_types), pat[len(sizes):])

    def sizes_changing_together(self, varying, returned, init_dims, together, apart=frozenset()) -> bool:
        """Adds to `together` (group -> its representative) the groups of `varying` that the body returned with one
        size and that start with one size, or with anonymous ones, unless told `apart` (pairs); whether it added
        any."""
        added = False
        first = {}
        for g in sorted(varying, key=repr):
            rd = returned.get(g)
            if not isinstance(rd, str) or g in together:
                continue
            r = first.setdefault(rd, together.get(g, g))
            if r != g and frozenset((g, r)) not in apart and (init_dims[r] == init_dims[g] or init_dims[r] in
                                                               self.flexible or init_dims[g] in self.flexible):
                together[g] = r
                added = True
        return added


    @staticmethod
    def dim_groups(t) -> dict:
        """For each (leaf, dim) position of type t, a key shared by the positions that must have the same
        size: those of the outer dimensions of an array of tuples."""
        groups = {}
        k = 0

        def go(t, prefix):
            nonlocal k
            t = prune(t)
            if isinstance(t, Tuple):
                for x in t.elems:
                    go(x, prefix)
            elif isinstance(t, TArr):
                go(t.elem, prefix + [("tuples", k, len(prefix) + j) for j in range(len(t.shape))])
            else:
                for j in range(len(prefix) + rank_of(t)):
                    groups[(k, j)] = prefix[j] if j < len(prefix) else (k, j)
                k += 1
        go(t, [])
        return groups
