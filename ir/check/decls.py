"""Declarations: programs, type abbreviations, top-level functions, patterns and type annotations.

A mixin of `Checker` (ir.check.checker): checking a whole program, a type abbreviation or a
top-level function (its signature, size parameters and result sizes, then its body through the
lowering), and binding patterns with their annotations, which lets, loops, lambdas and local
functions share.
"""

from incflat.ir import syntax as P
from incflat.ir import source as S
from incflat.ir.check.infer import TV, TArr, _worse, leaves, map_dims, prune, resolve_scalar, unify, zonk
from incflat.ir.check.prelude import INT_RANGE
from incflat.ir.check.values import FunSig, FunV, V, atom_v, split_tuple, tuple_v
from incflat.ir.types import I64, PRIM_NAMES, Array, Tuple, record_type


class Declarations:
    """Mixin of Checker: programs, type abbreviations, top-level functions, patterns."""

    # ---- programs and functions

    def check_program(self) -> S.Program:
        for d in self.decls:
            if isinstance(d, P.TypeDecl):
                continue
            if d.name in self.later:
                raise self.err(f'Duplicate definition of "{d.name}" (first defined at line '
                               f'{self.later[d.name].line}).', d.name_loc)
            self.later[d.name] = d.name_loc
        funs = []
        for d in self.decls:
            if isinstance(d, P.TypeDecl):
                self.check_type_decl(d)
            else:
                funs.append(self.check_fun(d))
        return S.Program(tuple(funs), self.filename)

    def check_type_decl(self, d: P.TypeDecl):
        if d.name in PRIM_NAMES:
            raise self.err(f'Cannot redefine the primitive type "{d.name}".', d.name_loc)
        if d.name in self.types:
            raise self.err(f'Duplicate definition of the type "{d.name}".', d.name_loc)
        params = {n for n, _ in d.size_params}

        def dimfn(kind, v, loc):
            if kind == "name" and v not in params:
                raise self.err(f'Unknown size "{v}" in the definition of type "{d.name}"; declare it as a '
                               f'size parameter: type {d.name} [{v}] = ...', loc)
            if kind == "exp":
                raise self.err("Size expressions are not supported in type abbreviations.", loc)
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
            name = pat.name if keep_names and "'" not in pat.name else self.fresh(pat.name)
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
        if "'" in d.name and (d.entry or d.name == "main"):
            raise self.err(f'The name of an entry point cannot contain an apostrophe: "{d.name}".', d.name_loc)
        self.current = d.name
        self.literals = []
        self.cse = {}
        self.alias, self.consumed, self.nonunique = {}, {}, {}
        self.barrier = (-1, None)
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
        params = []
        ptypes = []
        seen = set(env)
        for p in d.params:
            def dimfn(kind, v, loc, p=p):
                if kind == "const":
                    return v
                if kind == "any":  # an anonymous size: an implicit size parameter
                    n = self.fresh("d")
                    self.dim_text[n] = ""
                    size_params.append(n)
                    bindable.add(n)
                    used_sizes.add(n)
                    return n
                if kind == "name":
                    if v in bindable:
                        used_sizes.add(v)
                        return v
                    pname = P.pat_names(p)[0][0] if P.pat_names(p) else "x"
                    raise self.err(f'Unknown size "{v}" in the type of parameter "{pname}"; declare it '
                                   f'as a size parameter: def {d.name} [{v}] ...', loc)
                raise self.err("Size expressions such as [n*m] are not supported in parameter types; use "
                               "a size parameter and a coercion (:>) in the body.", loc)
            t = self.pat_type(p, d.name, dimfn)
            for name, loc in P.pat_names(p):
                if name in seen:
                    raise self.err(f'The name "{name}" is bound twice in the parameters of "{d.name}".', loc)
                seen.add(name)
            v = self.param_vars(p, t, keep_names=True)
            self.bind_pattern(p, v, env, None, "parameter")
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
                               f'any parameter.', loc)

        self.stms = []
        ret_ann = None
        if d.ret is not None:
            def rdim(kind, v, loc):
                if kind == "const":
                    return v
                if kind == "any":
                    return None
                if kind == "name":
                    if v in bindable:
                        return v
                    raise self.err(f'Unknown size "{v}" in the return type of "{d.name}".', loc)
                x = self.lower_val(v, env)
                if unify(x.t, I64):
                    raise self.err(f"A size must have type i64, but this expression has type "
                                   f"{self.show(x.t)}.", v.loc)
                return S.dim_of(x.atom)
            ret_ann = self.resolve_type(d.ret, rdim)
        res = self.lower_val(d.body, env)
        body_t = res.t
        if ret_ann is not None:
            r = unify(ret_ann, body_t)
            if r:
                raise self.err(f'"{d.name}" is declared to return {self.show(ret_ann)}, but its body has '
                               f'{self.what(r)} {self.show(body_t)}.', d.body.loc)
            ret = self.fill_any(ret_ann, body_t)
        else:
            ret = body_t
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
        fd = zonk(fd)
        self.check_literals()
        self.funs[d.name] = FunSig(d.name, tuple(size_params), fd.params, tuple(ptypes), ret_terms, d.loc,
                                   inline, d, tuple(uniques))
        self.stms = None
        return fd

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
                if not t.is_signed:
                    lo = -hi  # `-1u8` is the negation of 1u8, which wraps
                if not (lo <= value <= hi):
                    raise self.err(f"The literal {value} does not fit in type {t.name}.", loc)
            elif t.is_float and isinstance(value, int) and abs(value) > 2 ** 1023:
                raise self.err(f"The literal {value} does not fit in type {t.name}.", loc)

    # ---- patterns

    def check_dup_names(self, pats, where):
        seen = set()
        for p in pats:
            for name, loc in P.pat_names(p):
                if name in seen:
                    raise self.err(f'The name "{name}" is bound twice in {where}.', loc)
                seen.add(name)

    def bind_pattern(self, pat, val, env, ann_env, what, sizes=None):
        """Bind the names of `pat` to the parts of `val` in env. Type annotations are checked against
        the value (their sizes are looked up in ann_env; None: already checked). `sizes` maps the
        names of size parameters still to be bound (`?n` markers) to their value once bound."""
        if isinstance(pat, P.PName):
            env[pat.name] = val
            return
        if isinstance(pat, P.PWild):
            return
        if isinstance(pat, P.PTyped):
            if ann_env is not None:
                self.check_annotation(pat.type, val, ann_env, what, pat.loc, sizes)
            self.bind_pattern(pat.pat, val, env, ann_env, what, sizes)
            return
        if isinstance(pat, P.PTuple):
            t = prune(val.t) if isinstance(val, V) else None
            if not isinstance(t, Tuple) or t.is_record:
                shown = "a function" if isinstance(val, FunV) else f"type {self.show(t)}"
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the {what} has "
                               f"{shown}.", pat.loc)
            if len(t.elems) != len(pat.elems):
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the {what} is a tuple "
                               f"of {len(t.elems)}: {self.show(t)}.", pat.loc)
            for p, v in zip(pat.elems, split_tuple(val)):
                self.bind_pattern(p, v, env, ann_env, what, sizes)
            return
        if isinstance(pat, P.PRecord):
            t = prune(val.t) if isinstance(val, V) else None
            positions = self.record_pattern_fields(pat, t, what)
            fields = split_tuple(val)
            for (_, _, p), k in zip(pat.fields, positions):
                self.bind_pattern(p, fields[k], env, ann_env, what, sizes)
            return
        raise AssertionError(pat)  # pragma: no cover

    def check_annotation(self, te, val, env, what, loc, sizes=None):
        """Check `val` against the annotation te, binding size parameters listed in `sizes`."""
        if isinstance(val, FunV):
            raise self.err(f"The {what} is a function, but is annotated with a type.", loc)

        def dimfn(kind, v, dloc):
            if kind == "name" and sizes is not None and v in sizes:
                return sizes[v] if sizes[v] is not None else "?" + v
            if kind == "name" and v not in env:
                raise self.err(f'Unknown size "{v}" in type annotation.', dloc)
            return self.local_type_dim(kind, v, dloc, env)
        ann = self.resolve_type(te, dimfn)
        r = self.match_type(ann, val.t, sizes)
        if r:
            shown = self.show(map_dims(ann, lambda d: sizes.get(d[1:], d) if isinstance(d, str) and
                                       d.startswith("?") and sizes else d))
            raise self.err(f"The {what} is annotated as {shown}, but has {self.what(r)} {self.show(val.t)}.",
                           loc)

    def local_type_dim(self, kind, v, loc, env):
        if kind == "const":
            return v
        if kind == "any":
            return None
        if kind == "name":
            a = env.get(v)
            if not isinstance(a, V) or len(a.atoms) != 1 or unify(a.t, I64):
                shown = "a function" if isinstance(a, FunV) else self.show(a.t)
                raise self.err(f'The size "{v}" must have type i64, but has type {shown}.', loc)
            return S.dim_of(a.atom)
        x = self.lower_val(v, env)
        if unify(x.t, I64):
            raise self.err(f"A size must have type i64, but this expression has type {self.show(x.t)}.", v.loc)
        return S.dim_of(x.atom)

    def match_type(self, ann, act, sizes):
        """Unify an annotation with an actual type; `?n` dims bind sizes[n] on first use."""
        ann, act = prune(ann), prune(act)
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
