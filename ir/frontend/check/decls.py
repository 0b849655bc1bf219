"""Declarations: programs, type abbreviations, top-level functions, patterns and type annotations.

A mixin of `Checker` (ir.frontend.check.checker): checking a whole program, a type abbreviation or a
top-level function (its signature, size parameters and result sizes, then its body through the
lowering), and binding patterns with their annotations, which lets, loops, lambdas and local
functions share.
"""

import dataclasses

import numpy as np

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.analysis import use_counts
from incflat.ir.frontend.check.infer import (TV, Refine, TArr, _worse, arr_of, drop_dims, is_arr, leaves, map_dims,
                                            prune, resolve_scalar, type_param_tv, unify, unknown_tv, zonk)
from incflat.ir.frontend.check.prelude import INT_RANGE
from incflat.ir.frontend.check.values import Ascribed, FunRecord, FunSig, FunV, V, atom_v, split_tuple, tuple_v
from incflat.ir.types import I64, PRIM_NAMES, Array, Scalar, Tuple, record_type


class Declarations:
    """Mixin of Checker: programs, type abbreviations, top-level functions, patterns."""

    # ---- programs and functions

    def check_program(self) -> S.Program:
        for d in self.decls:
            if isinstance(d, P.TypeDecl):
                continue
            if d.name in self.later:
                first = self.later[d.name]
                where = f"line {first.line}" if first.file == d.name_loc.file else f"{first.file}:{first.line}"
                raise self.err(f'Duplicate definition of "{d.name}" (first defined at {where}).', d.name_loc)
            self.later[d.name] = d.name_loc
        funs = []
        for d in self.decls:
            if isinstance(d, P.TypeDecl):
                self.check_type_decl(d)
                continue
            d = self.eta_typed(d)
            if self.is_inlined_only(d):
                self.declare_inlined(d)
            else:
                fd = self.check_fun(d)
                if fd is not None:
                    funs.append(fd)
        return S.Program(tuple(funs), self.filename)

    def eta_typed(self, d: P.Decl) -> P.Decl:
        """A definition whose result type is a function type (written, or a `type^` abbreviation of one) with the
        parameters that type gives: `def bint : bool -> i32 = i32.bool` is `def bint (x: bool): i32 = i32.bool x`
        (the parameters' names are ones no program can write)."""
        t = d.ret
        if isinstance(t, P.TypeExp) and isinstance(t.base, str) and not t.dims and not t.args \
                and not t.type_args and isinstance(getattr(self.types.get(t.base), "type", None), P.FunTypeExp):
            t = self.types[t.base].type
        if not isinstance(t, P.FunTypeExp):
            return d
        params, args = list(d.params), []
        while isinstance(t, P.FunTypeExp):
            name = t.name or f"(x{len(args)})"
            params.append(P.PTyped(P.PName(name, t.loc), t.param, t.loc))
            args.append(P.Ident(d.body.loc, d.body.span, name))
            t = t.result
        body = P.App(d.body.loc, d.body.span, d.body, args)
        return dataclasses.replace(d, params=params, ret=t, body=body)

    @staticmethod
    def is_inlined_only(d: P.Decl) -> bool:
        """Whether a function is checked only where it is applied, with the arguments' types: one with
        parameters whose types are not written (inferred from each use) or are function types, or with a size
        parameter that they do not decide."""
        if d.entry or d.name == "main":
            return False
        if d.type_params:
            return True
        if not all(P.pat_is_typed(p) for p in d.params):
            return True
        # a size parameter that no parameter's type has as a size of its own (`def mat [m][n] (v: t): [m][n]t`,
        # linalg's): its uses must decide it
        return not {n for n, _ in d.size_params} <= Declarations.own_sizes(d.params)

    @staticmethod
    def own_sizes(params) -> set:
        """The names that the types written in these parameter patterns have as sizes of their own (`[n]`)."""
        names = set()
        for p in params:
            for t in P.pat_types(p):
                for part in P.type_parts(t):
                    names.update(v for kind, v in list(part.dims) + list(part.args) if kind == "name")
        return names

    def declare_inlined(self, d: P.Decl):
        """A function inlined at each call, and checked there (a function value: point-free, higher-order, or
        with inferred parameter types)."""
        self.funs[d.name] = FunSig(d.name, tuple(n for n, _ in d.size_params), (), (None,) * len(d.params),
                                   None, d.loc, True, d)

    def check_type_decl(self, d: P.TypeDecl):
        if d.name in PRIM_NAMES:
            raise self.err(f'Cannot redefine the primitive type "{d.name}".', d.name_loc)
        if d.name in self.types:
            raise self.err(f'Duplicate definition of the type "{d.name}".', d.name_loc)
        if d.type_params:  # checked where it is used, with its type arguments
            self.types[d.name] = d
            return
        if isinstance(d.type, P.FunTypeExp) and not d.size_params:  # `type^ f = a -> b`: a definition's type
            self.types[d.name] = d
            return
        params = {n for n, _ in d.size_params}

        def dimfn(kind, v, loc):
            if kind == "name" and v not in params and not self.size_constant(v):
                raise self.err(f'Unknown size "{v}" in the definition of type "{d.name}"; declare it as a '
                               f'size parameter: type {d.name} [{v}] = ...', loc)
            if kind == "exp":  # (computed where the type is used, from the sizes given)
                for n in P.nodes_of(v):
                    if isinstance(n, P.Ident) and n.name not in params and not self.size_constant(n.name):
                        raise self.err(f'Unknown size "{n.name}" in the definition of type "{d.name}"; declare it '
                                       f'as a size parameter: type {d.name} [{n.name}] = ...', n.loc)
                return None
            return v if kind != "any" else None
        self.resolve_type(d.type, dimfn)  # check it
        self.types[d.name] = d

    def pat_type(self, pat, fname, dimfn):
        """The declared type of a top-level function's parameter pattern."""
        if isinstance(pat, P.PTyped):
            return self.resolve_type(pat.type, dimfn)
        if isinstance(pat, P.PTuple):
            return Tuple(tuple(self.pat_type(p, fname, dimfn) for p in pat.elems))
        if isinstance(pat, P.PRecord):
            return record_type([(name, self.pat_type(p, fname, dimfn)) for name, _, p in pat.fields])
        if isinstance(pat, P.PName):
            raise self.err(f'The parameter "{pat.name}" of "{fname}" needs a type annotation, '
                           f'as in ({pat.name}: i32).', pat.loc)
        raise self.err(f'Every parameter of "{fname}" needs a type annotation, as in (x: i32).', pat.loc)

    def param_vars(self, pat, t, keep_names):
        """IR variables for a parameter pattern of type t (source names where possible)."""
        if isinstance(pat, P.PTyped):
            return self.param_vars(pat.pat, t, keep_names)
        t = prune(t)
        if isinstance(pat, P.PName) and not isinstance(t, (Tuple, TArr)):
            name = pat.name if keep_names else self.fresh(pat.name)
            self.dim_text[name] = pat.name
            return V(t, (S.Var(name, t),))
        if isinstance(pat, P.PTuple) and isinstance(t, Tuple) and not t.is_record and len(pat.elems) == len(t.elems):
            return tuple_v([self.param_vars(p, e, keep_names) for p, e in zip(pat.elems, t.elems)])
        if isinstance(pat, P.PRecord) and isinstance(t, Tuple) and \
                sorted(t.names) == sorted(name for name, _, _ in pat.fields):
            by_field = {name: p for name, _, p in pat.fields}
            return V(t, tuple(a for name, e in zip(t.names, t.elems)
                              for a in self.param_vars(by_field[name], e, keep_names).atoms))
        base = pat.name if isinstance(pat, P.PName) else "p"
        return self.fresh_v(t, base)

    def fresh_v(self, t, base):
        ls = leaves(t)
        return V(t, tuple(S.Var(self.fresh(base), lt) for lt in ls))

    def check_fun(self, d: P.Decl) -> S.FunDef:
        """Check a function. An entry point's parameters whose types are not written, and the elements of empty
        array literals `[]`, get types from their uses: each starts as an unknown scalar, refined (and the
        function checked again) when used as an array or a tuple, as Futhark's inference would find."""
        self.unknown_types = {}
        if d.type_params:
            raise self.err(f'The entry point "{d.name}" cannot have type parameters (as in Futhark): its types '
                           f'must be known.', d.type_params[0][1])
        if (d.entry or d.name == "main") and not all(P.pat_is_typed(p) for p in d.params):
            d = dataclasses.replace(d, params=[_with_unknown_types(p) for p in d.params])
        for _ in range(64):
            self.unknown_types = {}
            try:
                return self.check_with_sums(d)
            except Refine as r:
                if id(r.tv) not in self.unknown_types:  # pragma: no cover (only these have unknown types)
                    raise
                te = self.unknown_types[id(r.tv)][1]
                if r.names:  # a record's fields
                    te.base = P.RecordTypeExp([(name, P.TypeExp([], "?", te.loc, te.loc)) for name in r.names])
                elif r.elems:
                    te.base = [P.TypeExp([], "?", te.loc, te.loc) for _ in range(r.elems)]
                else:
                    te.dims = te.dims + [("any", None)] * r.dims
        raise self.err(f'The parameter types of "{d.name}" (or of its empty array literals) cannot be inferred; '
                       f'write them.', d.loc)

    def check_fun_once(self, d: P.Decl) -> S.FunDef:
        if "'" in d.name and (d.entry or d.name == "main"):
            raise self.err(f'The name of an entry point cannot contain an apostrophe: "{d.name}".', d.name_loc)
        self.current = d.name
        self.literals = []
        self.cse = {}
        self.alias, self.consumed, self.nonunique = {}, {}, {}
        self.barrier = (-1, None)
        self.flexible = set()
        self.open_sums = []
        uniques = []
        env = {}
        size_params = []
        bindable = set()  # names a dimension in the signature may use
        for name, loc in d.size_params:
            if name in env:
                raise self.err(f'The size parameter "{name}" is bound twice.', loc)
            env[name] = atom_v(S.Var(name, I64))
            size_params.append(name)
            bindable.add(name)
        used_sizes = set()
        computed = []  # (size parameter, size expression, Loc) for the sizes written as expressions
        params = []
        ptypes = []
        pats = []  # (pattern, value) of each parameter
        seen = set(env)
        for p in d.params:
            def dimfn(kind, v, loc, p=p):
                if kind == "const":
                    return v
                if kind == "any":  # an anonymous size: an implicit size parameter, unified by use
                    n = self.fresh("d")
                    self.flexible.add(n)
                    self.dim_text[n] = ""
                    size_params.append(n)
                    bindable.add(n)
                    used_sizes.add(n)
                    return n
                if kind == "name" and v not in bindable and v not in seen and self.size_constant(v):
                    kind, v = "exp", P.Ident(loc, (0, 0), v)  # a top-level constant: a size expression
                if kind == "name":
                    if v in bindable:
                        used_sizes.add(v)
                        return v
                    pname = P.pat_names(p)[0][0] if P.pat_names(p) else "x"
                    raise self.err(f'Unknown size "{v}" in the type of parameter "{pname}"; declare it '
                                   f'as a size parameter: def {d.name} [{v}] ...', loc)
                known = constant_size(v)
                if known is not None:  # ([2 + 1]: 3)
                    return known
                # a size expression ([n*m]): an implicit size parameter, equal to the expression (checked once
                # every parameter is bound, at run time)
                n = self.fresh("d")
                self.dim_text[n] = ""
                size_params.append(n)
                computed.append((n, v, loc))
                return n
            t = self.pat_type(p, d.name, dimfn)
            self.refuse_entry_sum(d, t, "take", p.loc)
            for name, loc in P.pat_names(p):
                if name in seen:
                    raise self.err(f'The name "{name}" is bound twice in the parameters of "{d.name}".', loc)
                seen.add(name)
            v = self.param_vars(p, t, keep_names=True)
            self.bind_pattern(p, v, env, None, "parameter")
            pats.append((p, v))
            params.extend(v.atoms)
            ptypes.append(t)
            uniques.append(self.pat_unique(p))
            if not uniques[-1]:
                names = P.pat_names(p)
                for a in v.atoms:
                    self.nonunique[a.name] = names[0][0] if len(names) == 1 else a.name
            if isinstance(p, P.PTyped) and isinstance(p.pat, P.PName) and prune(t) == I64:
                bindable.add(p.pat.name)
        for name, loc in d.size_params:
            if name not in used_sizes:
                raise self.err(f'The size parameter "{name}" of "{d.name}" is not used in the type of '
                               f'any parameter (as a size of its own, [{name}]).', loc)

        self.stms = []
        self.stable_sizes = {n for n in size_params + [a.name for a in params] if n not in self.born}
        if computed:
            self.check_computed_sizes(computed, pats, env)
        ret_ann = None
        untyped = {p.name for p in d.params if isinstance(p, P.PName)} | \
            {p.pat.name for p in d.params if isinstance(p, P.PTyped) and isinstance(p.pat, P.PName) and
             p.type.base == "?" and not p.type.dims}  # an entry point's (see _with_unknown_types)
        if d.ret is not None:
            def rdim(kind, v, loc):
                if kind == "const":
                    return v
                if kind == "any":
                    return None
                if kind == "name":
                    if v in bindable:
                        return v
                    if v in untyped and unify(env[v].t, I64) is None:  # `def f n xs : [n]t`: n is an i64
                        bindable.add(v)
                        return v
                    if v not in env and self.size_constant(v):
                        return self.local_type_dim(kind, v, loc, env)
                    raise self.err(f'Unknown size "{v}" in the return type of "{d.name}".', loc)
                known = constant_size(v)
                if known is not None:
                    return known
                x = self.lower_val(v, env)
                if unify(x.t, I64):
                    raise self.err(f"A size must have type i64, but this expression has type "
                                   f"{self.show(x.t)}.", v.loc)
                return S.dim_of(x.atom)
            ret_ann = self.resolve_type(d.ret, rdim)
        res = self.lower(d.body, env)
        if isinstance(res, FunV):  # point-free: `def g = f x`, `entry main = map f32.acos`
            self.stms = None
            if (d.entry or d.name == "main") and isinstance(res, FunRecord):
                raise self.not_a_value(res, d.body.loc, f'the result of the entry point "{d.name}"')
            if d.entry or d.name == "main":
                return self.check_fun(self.eta_expand(d, res))
            if d.ret is not None:
                raise self.not_a_value(res, d.body.loc, f'the body of "{d.name}"')
            self.declare_inlined(d)  # it returns a function: inlined where it is applied
            return None
        if ret_ann is not None:
            res = self.empty_as(res, ret_ann, d.body.loc)
        body_t = res.t
        if ret_ann is not None:
            r = unify(ret_ann, body_t)
            if r:
                where = ""
                a, b = prune(ret_ann), prune(body_t)
                k = next((k for k, (x, y) in enumerate(zip(a.elems, b.elems)) if unify(x, y)), None) \
                    if isinstance(a, Tuple) and isinstance(b, Tuple) and a.names == b.names and len(a.elems) > 2 \
                    else None
                if k is not None:
                    is_record = a.names and list(a.names) != [str(i) for i in range(len(a.elems))]
                    part = f"field {a.names[k]}" if is_record else f"element {k + 1}"
                    where = f" ({part} is {self.show(b.elems[k])}, declared {self.show(a.elems[k])})"
                raise self.err(f'"{d.name}" is declared to return {self.show(ret_ann)}, but its body has '
                               f'{self.what(r)} {self.show(body_t)}{where}.', d.body.loc)
            ret = self.fill_any(ret_ann, body_t)
        else:
            ret = body_t
        self.refuse_entry_sum(d, ret, "return", d.body.loc)
        self.require_known_sums()
        self.check_unique_result(d, ret, res.atoms)
        local = {v.name for s in self.stms for v in s.pat}
        inline = False

        def term(dm):
            nonlocal inline
            if isinstance(dm, int) or dm in bindable:
                return dm
            if dm in self.defs:
                op, x, y = self.defs[dm]
                tx, ty = term(S.dim_of(x)), term(S.dim_of(y))
                if tx is not None and ty is not None:
                    return (op, tx, ty)
            if dm in local or dm not in bindable:
                inline = True
                return None
            return dm
        ret_terms = map_dims(ret, term)
        body_stms = tuple(self.stms)
        fd = S.FunDef(d.name, d.entry or d.name == "main", tuple(size_params), tuple(params),
                      tuple(leaves(ret)), S.Body(body_stms, res.atoms), d.loc)
        self.require_known_parameter_types(d)
        self.require_rep_sizes(fd.body)
        fd = zonk(fd)
        self.check_literals()
        self.funs[d.name] = FunSig(d.name, tuple(size_params), fd.params, tuple(ptypes), ret_terms, d.loc,
                                   inline, d, tuple(uniques))
        self.stms = None
        return fd

    def check_computed_sizes(self, computed, pats, env):
        """Parameters whose types have size expressions (`(xs: [n*m]f32)`): in the body, each such size is
        the expression's value, after a run-time check that the argument has it."""
        value = {}
        for n, exp, loc in computed:
            x = self.lower_val(exp, env)
            if unify(x.t, I64):
                raise self.err(f"A size must have type i64, but this expression has type {self.show(x.t)}.", loc)
            value[n] = S.dim_of(x.atom)
        for p, v in pats:
            t = map_dims(v.t, lambda dm: value.get(dm, dm))
            if t != v.t:
                self.bind_pattern(p, self.coerce(v, t, p.loc), env, None, "parameter")

    def require_rep_sizes(self, body: S.Body):
        """Each `rep x` that is read had its size decided by a use (it is made of size 0 until then)."""
        for name, n in use_counts(body).items():
            if (n and name in self.rep_values) or n > self.rep_sizes.get(name, (n, None))[0]:
                loc = self.rep_values[name][1] if name in self.rep_values else self.rep_sizes[name][1]
                raise self.err('The size of this "rep" is not decided by its use: pass it to map, zip, scatter or '
                               'hist beside another array, or give its type, as in (rep x : [n]t).', loc)

    def require_known_parameter_types(self, d: P.Decl):
        """Each parameter type that was not written must have been decided by its uses."""
        for tv, te in self.unknown_types.values():
            if unknown_tv(tv) and any(x is te for x in self.hole_types.values()):
                raise self.err("The type of this hole cannot be inferred from its uses; write it, as in (??? : i32).",
                               te.loc)
            if unknown_tv(tv) and any(x is te for x in self.empty_literal_types.values()):
                raise self.err("The type of this empty array literal cannot be inferred from its uses; write it, as "
                               "in ([] : []i32).", te.loc)
            if unknown_tv(tv):
                raise self.err(f'The type of this parameter of "{d.name}" cannot be inferred from its uses; write '
                               f'it, as in (x: i32).', te.loc)

    @staticmethod
    def fill_any(ann, actual):
        """ann with its `[]` dimensions taken from actual (same structure)."""
        ann, actual = prune(ann), prune(actual)
        if isinstance(ann, Array):
            return Array(ann.elem, tuple(x if x is not None else y for x, y in zip(ann.shape, actual.shape)))
        if isinstance(ann, TArr):
            return TArr(tuple(x if x is not None else y for x, y in zip(ann.shape, actual.shape)),
                        Declarations.fill_any(ann.elem, actual.elem))
        if isinstance(ann, Tuple):
            return ann.with_elems(Declarations.fill_any(a, b) for a, b in zip(ann.elems, actual.elems))
        return actual if isinstance(ann, TV) else ann

    def check_literals(self):
        for t, value, loc in self.literals:
            t = resolve_scalar(t)
            if t.is_int:
                lo, hi = INT_RANGE[t.name]
                fits = lo <= value <= hi
            else:  # (as Futhark: a literal that the type rounds to an infinity is refused)
                fits = not t.is_float or finite_as(value, t)
            if not fits:
                shown = f"The literal {value}" if not (isinstance(value, float) and np.isinf(value)) else "This literal"
                raise self.err(f"{shown} is out of bounds for type {t.name}.", loc)

    # ---- patterns

    def check_dup_names(self, pats, where):
        seen = set()
        for p in pats:
            for name, loc in P.pat_names(p):
                if name in seen:
                    raise self.err(f'The name "{name}" is bound twice in {where}.', loc)
                seen.add(name)

    def bind_pattern(self, pat, val, env, ann_env, what, sizes=None, tests=None):
        """Bind the names of `pat` to the parts of `val` in env. Type annotations are checked against
        the value (their sizes are looked up in ann_env; None: already checked). `sizes` maps the
        names of size parameters still to be bound (`?n` markers) to their value once bound. `tests` (a
        `match` case's): a list that gets the (value, value) pairs that must be equal for val to match a
        refutable pattern (a constructor or a literal), which only a case may have."""
        if isinstance(pat, P.PName):
            env[pat.name] = val
            return
        if isinstance(pat, P.PWild):
            return
        if isinstance(pat, P.PTyped):
            if ann_env is not None:
                val = self.check_annotation(pat.type, val, ann_env, what, pat.loc, sizes)
            self.bind_pattern(pat.pat, val, env, ann_env, what, sizes, tests)
            return
        if isinstance(pat, (P.PConstr, P.PLit)):
            self.bind_refutable(pat, val, env, ann_env, what, sizes, tests)
            return
        if isinstance(pat, (P.PTuple, P.PRecord)) and isinstance(val, FunRecord):
            self.bind_fun_record(pat, val, env, ann_env, what, sizes, tests)
            return
        if isinstance(pat, P.PTuple):
            t = prune(val.t) if isinstance(val, V) else None
            if unknown_tv(t):
                raise Refine(t, elems=len(pat.elems))
            if not isinstance(t, Tuple) or t.is_record:
                shown = "a function" if isinstance(val, FunV) else f"type {self.show(t)}"
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the {what} has "
                               f"{shown}.", pat.loc)
            if len(t.elems) != len(pat.elems):
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the {what} is a tuple "
                               f"of {len(t.elems)}: {self.show(t)}.", pat.loc)
            for p, v in zip(pat.elems, split_tuple(val)):
                self.bind_pattern(p, v, env, ann_env, what, sizes, tests)
            return
        if isinstance(pat, P.PRecord):
            t = prune(val.t) if isinstance(val, V) else None
            positions = self.record_pattern_fields(pat, t, what)
            fields = split_tuple(val)
            for (_, _, p), k in zip(pat.fields, positions):
                self.bind_pattern(p, fields[k], env, ann_env, what, sizes, tests)
            return
        raise AssertionError(pat)  # pragma: no cover

    def ascribed(self, te: P.FunTypeExp, f: FunV, loc) -> Ascribed:
        """f with the parameter and result types of te, sizes left out (resolved here, where te's type
        parameters are in scope)."""
        def resolved(t):
            return None if isinstance(t, P.FunTypeExp) else self.resolve_type(t, lambda kind, v, dloc: None)
        ptypes = []
        while isinstance(te, P.FunTypeExp):
            ptypes.append(resolved(te.param))
            te = te.result
        return Ascribed(f, tuple(ptypes), resolved(te), loc)

    def bind_fun_record(self, pat, val: FunRecord, env, ann_env, what, sizes, tests):
        """A tuple or record pattern matched against a tuple or record that holds a function: field by field."""
        if isinstance(pat, P.PTuple):
            names = tuple(str(k) for k in range(len(pat.elems)))
            if names != val.names:
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the {what} has the fields "
                               f"{', '.join(val.names)}.", pat.loc)
            pairs = zip(pat.elems, val.parts)
        else:
            by_name = dict(zip(val.names, val.parts))
            if sorted(name for name, _, _ in pat.fields) != sorted(val.names):
                raise self.err(f"This record pattern has the fields {', '.join(n for n, _, _ in pat.fields)}, but "
                               f"the {what} has {', '.join(val.names)}.", pat.loc)
            pairs = [(p, by_name[name]) for name, _, p in pat.fields]
        for p, v in pairs:
            self.bind_pattern(p, v, env, ann_env, what, sizes, tests)

    def check_annotation(self, te, val, env, what, loc, sizes=None):
        """`val` checked against the annotation te, binding size parameters listed in `sizes`; where only
        anonymous parameter sizes of the function being checked differ from the annotation's, val with the
        annotation's sizes, checked at run time (Futhark infers such a size from the annotation)."""
        if isinstance(te, P.FunTypeExp):  # the function is checked where it is applied
            if not isinstance(val, FunV):
                raise self.err(f"The {what} is annotated as a function, but has type {self.show(val.t)}.", loc)
            return self.ascribed(te, val, loc)
        if isinstance(val, FunRecord) and P.has_function_type(te):  # field by field
            fields = [(str(k), x) for k, x in enumerate(te.base)] if isinstance(te.base, list) else \
                [(name, x) for name, x in te.base.fields]
            if sorted(name for name, _ in fields) != sorted(val.names):
                raise self.err(f"The {what} has the fields {', '.join(val.names)}, but is annotated with "
                               f"{', '.join(name for name, _ in fields)}.", loc)
            by_name = dict(fields)
            return FunRecord(val.names, tuple(self.check_annotation(by_name[name], part, env, what, loc, sizes)
                                              for name, part in zip(val.names, val.parts)), val.loc)
        if isinstance(val, FunV):
            raise self.err(f"The {what} is a function, but is annotated with a type.", loc)

        def dimfn(kind, v, dloc):
            if kind == "name" and sizes is not None and v in sizes:
                return sizes[v] if sizes[v] is not None else "?" + v
            if kind == "name" and v not in env and not self.size_constant(v):
                raise self.err(f'Unknown size "{v}" in type annotation.', dloc)
            return self.local_type_dim(kind, v, dloc, env)
        ann = self.resolve_type(te, dimfn)
        val = self.empty_as(val, ann, loc)
        r = self.match_type(ann, val.t, sizes)
        if r == "size":
            unbound = []

            def given(d):
                if isinstance(d, str) and d.startswith("?") and sizes:
                    unbound.extend([d] if sizes.get(d[1:]) is None else [])
                    return sizes.get(d[1:])
                return d
            bound = map_dims(ann, given)
            if not unbound and self.only_flexible_differ(bound, val.t, {}):
                return self.coerce(val, bound, loc)
        if r:
            named = []  # the size parameters the annotation names that earlier arguments gave a size

            def written(kind, v, dloc):
                if kind == "name" and sizes and sizes.get(v) is not None:
                    named.append(v)
                    return v
                return dimfn(kind, v, dloc)
            shown = self.show(map_dims(self.resolve_type(te, written), lambda d: sizes.get(d[1:], d) if
                                       isinstance(d, str) and d.startswith("?") and sizes else d))
            unnamed = "an earlier argument's size, which has no name"
            given = "".join(f"; {v} is {self.show_dim(sizes[v]) or unnamed} here" for v in dict.fromkeys(named))
            raise self.err(f"The {what} is annotated as {shown}, but has {self.what(r)} {self.show(val.t)}"
                           f"{given}.", loc)
        return val

    def local_type_dim(self, kind, v, loc, env):
        if kind == "const":
            return v
        if kind == "any":
            return None
        if kind == "name":
            a = env.get(v)
            if a is None and self.size_constant(v):
                a = self.lower_val(P.Ident(loc, (0, 0), v), env)
            if a is None and v in self.funs:
                raise self.err(f'The size "{v}" names a function, but a size must be a value of type i64.', loc)
            if a is None:
                raise self.err(f'Unknown size "{v}" in type annotation.', loc)
            if not isinstance(a, V) or len(a.atoms) != 1 or unify(a.t, I64):
                shown = "a function" if isinstance(a, FunV) else self.show(a.t)
                raise self.err(f'The size "{v}" must have type i64, but has type {shown}.', loc)
            return S.dim_of(a.atom)
        known = constant_size(v)
        if known is not None:
            return known
        x = self.lower_val(v, env)
        if unify(x.t, I64):
            raise self.err(f"A size must have type i64, but this expression has type {self.show(x.t)}.", v.loc)
        return S.dim_of(x.atom)

    @staticmethod
    def bind_element_params(ann, act):
        """ann, where it is `[n]t` of a type parameter t not bound yet and act an array, with t bound to act's
        elements' type (an array of tuples is another type than an array of scalars: `arr_of`); inside tuples
        too."""
        ann, act = prune(ann), prune(act)
        if isinstance(ann, Array) and type_param_tv(ann.elem) and is_arr(act) and len(act.shape) >= len(ann.shape):
            ann.elem.ref = drop_dims(act, len(ann.shape))
            return arr_of(ann.elem.ref, ann.shape)
        if isinstance(ann, Tuple) and isinstance(act, Tuple) and len(ann.elems) == len(act.elems):
            return ann.with_elems(Declarations.bind_element_params(a, b) for a, b in zip(ann.elems, act.elems))
        return ann

    def match_type(self, ann, act, sizes):
        """Unify an annotation with an actual type; `?n` dims bind sizes[n] on first use."""
        ann, act = self.bind_element_params(ann, act), prune(act)
        if isinstance(ann, (Array, TArr)) and isinstance(act, type(ann)):
            if len(ann.shape) != len(act.shape):
                return "type"
            r = self.match_type(ann.elem, act.elem, sizes) if isinstance(ann, TArr) else unify(ann.elem, act.elem)
            for x, y in zip(ann.shape, act.shape):
                if isinstance(x, str) and x.startswith("?"):
                    name = x[1:]
                    if sizes.get(name) is None:
                        sizes[name] = y
                        x = y
                    else:
                        x = sizes[name]
                if x is not None and x != y:
                    r = _worse(r, "size")
            return r
        if isinstance(ann, Tuple) and isinstance(act, Tuple):
            if ann.names != act.names:
                return "type"
            r = None
            for a, b in zip(ann.elems, act.elems):
                r = _worse(r, self.match_type(a, b, sizes))
            return r
        return unify(ann, act)


def _with_unknown_types(p):
    """The pattern with each part whose type is not written annotated `?` (an unknown type)."""
    if isinstance(p, P.PTyped):
        return p
    if isinstance(p, P.PTuple):
        return P.PTuple([_with_unknown_types(q) for q in p.elems], p.loc)
    if isinstance(p, P.PRecord):
        return P.PRecord([(name, loc, _with_unknown_types(q)) for name, loc, q in p.fields], p.loc)
    return P.PTyped(p, P.TypeExp([], "?", p.loc, p.loc), p.loc)


def type_dims(te) -> list:
    """Every dimension (kind, value) written in a type: around it, as size arguments, and in its parts."""
    return [d for t in P.type_parts(te) for d in (*t.dims, *t.args)]


def finite_as(value, t: Scalar) -> bool:
    """Whether the number value is finite in the float type t."""
    if abs(value) >= 2 ** 1024:
        return False
    with np.errstate(over="ignore"):
        return bool(np.isfinite(t.dtype(float(value))))


def constant_size(e):
    """The value of a size expression made of integer literals with + and - alone (`[2 + 1]`: 3, so that two such
    sizes are one), or None; a product stays one (`unflatten` takes its factors from `[2 * 2]`)."""
    if isinstance(e, P.Lit) and e.kind == "int" and e.suffix in (None, "i64"):
        return e.value
    if isinstance(e, P.AtomE) and isinstance(e.atom, V) and isinstance(e.atom.atoms[0], S.Const):
        return int(e.atom.atoms[0].value)
    if isinstance(e, P.BinOpE) and e.op in ("+", "-"):
        x, y = constant_size(e.lhs), constant_size(e.rhs)
        if x is not None and y is not None:
            r = x + y if e.op == "+" else x - y
            return r if -2 ** 63 <= r < 2 ** 63 else None
    return None
