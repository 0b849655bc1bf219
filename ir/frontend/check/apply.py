"""Function values: application, calls, and the lambdas passed to SOACs.

A mixin of `Checker` (ir.frontend.check.checker). Applying a function value inlines it (closures, sections,
partial applications, top-level functions with an existential size) or emits an `Apply` of a
top-level function, matching its sizes against the arguments'; `instantiate` turns a function
value into the `ir.source.Lambda` of a SOAC. Separate from the lowering of expressions because it
is the one part that deals with functions as values.
"""

import dataclasses

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.infer import (UNKNOWN_SIZES_NOTE, TV, Refine, SumTV, TArr, _worse, is_scalar, leaves,
                                            map_dims, prune, refine_as, shape_of, unify, unknown_tv)
from incflat.ir.frontend.check.prelude import (ARRAY_REDUCTIONS, BUILTIN_ARITY, DERIVED_MODULE_FUNCTIONS, SOAC_MAPS, UNZIPS, ZIPS,
                                      prelude_lookup)
from incflat.ir.frontend.check.values import Arg, Ascribed, Closure, FunRecord, FunSig, FunV, Named, Partial, Section, V, atom_v
from incflat.ir.errors import CompileError
from incflat.ir.traverse import unsafe_stm
from incflat.ir.types import I64, Array, Scalar, Tuple


class Application:
    """Mixin of Checker: applying function values, and the lambdas of SOACs."""

    # ---- application

    def arity(self, f) -> int:
        if isinstance(f, Named):
            if f.kind == "user":
                n = len(self.funs[f.name].ptypes)
            elif f.kind == "builtin":
                n = BUILTIN_ARITY[f.name]
            elif f.name.split(".")[1] in ARRAY_REDUCTIONS:
                n = 1
            else:
                n = len(prelude_lookup(f.name.split("."))[0])
            return n - len(f.pre)
        if isinstance(f, Closure):
            return len(f.params)
        if isinstance(f, Partial):
            return len(f.fn.params) - len(f.pre)
        if isinstance(f, Section):
            return (2 if f.side == "none" else 1) - len(f.pre)
        if isinstance(f, Ascribed):
            return len(f.ptypes) - len(f.pre)
        if isinstance(f, FunRecord):
            return 0
        raise TypeError(f)

    def curried_arity(self, f) -> int:
        """How many arguments f can take in a row (a lambda returning a lambda takes more)."""
        n = self.arity(f)
        if self.composed_second(f) is not None:  # `f >-> g` takes one argument, then what g still takes
            return 1 + max(0, self.curried_arity(self.composed_second(f)) - 1)
        closure = f if isinstance(f, Closure) else f.fn if isinstance(f, Partial) else None
        if closure is None:
            return n
        body = closure.body
        while isinstance(body, P.LambdaE):
            n += len(body.params)
            body = body.body
        if isinstance(body, P.App) and isinstance(body.fn, P.Ident):  # `\x -> map2 g xs`: takes one more
            name = body.fn.name
            bound = {x for p in closure.params for x, _ in P.pat_names(p)} | set(closure.env)
            if name not in bound and name in BUILTIN_ARITY:
                n += max(0, BUILTIN_ARITY[name] - len(body.args))
        return n

    def apply(self, f, args, loc):
        """Apply a function value to arguments (Arg), inlining or emitting an Apply."""
        if isinstance(f, FunRecord):
            raise self.err("This is a tuple (or record) that holds a function, not a function; it cannot be applied "
                           "to arguments.", loc)
        n = self.arity(f)
        if isinstance(f, Named) and f.name in ("unflatten", "unflatten_3d") and len(args) + len(f.pre) > 1:
            raise self.err(f'"{f.name}" takes only the array: since Futhark 0.25 its sizes come from the array\'s '
                           f'type, [n*m]t. Write "{f.name} xs" where xs has such a type, or coerce it: '
                           f'"{f.name} (xs :> [n*m]t)".', f.loc)
        if len(args) < n:
            if isinstance(f, Closure):
                return Partial(f, tuple(args), loc)
            if isinstance(f, Partial):
                return Partial(f.fn, f.pre + tuple(args), f.loc)
            return dataclasses.replace(f, pre=f.pre + tuple(args))
        now, rest = args[:n], args[n:]
        r = self.call(f, now, loc)
        if rest:
            if not isinstance(r, FunV):
                if isinstance(f, Named):
                    m = n + len(f.pre)
                    raise self.err(f'"{f.name}" expects {m} argument{"s" if m != 1 else ""}, but is applied to '
                                   f'{len(args) + len(f.pre)}.', f.loc or loc)
                raise self.err(f"{self.fun_desc(f)} takes {n} argument{'s' if n != 1 else ''}, but is applied "
                               f"to {len(args)}.", f.loc or loc)
            return self.apply(r, rest, loc)
        return r

    def call(self, f, args, loc):
        """f applied to args (Arg); inside `#[unsafe]` (the call's position), what it inlines is unsafe too, as
        Futhark inlines a call made there."""
        if not (getattr(loc, "unsafe", False) or getattr(getattr(f, "loc", None), "unsafe", False)):
            return self.call_here(f, args, loc)
        stms, before = self.stms, len(self.stms)
        result = self.call_here(f, args, loc)
        if self.stms is stms:
            stms[before:] = [unsafe_stm(s) for s in stms[before:]]
        return result

    def call_here(self, f, args, loc):
        if isinstance(f, Named):
            args = list(f.pre) + list(args)
            if f.kind == "user":
                sig = self.funs[f.name]
                if sig.inline:
                    return self.call_closure(inline_closure(sig.decl), args, f.loc)
                return self.call_user(sig, args, f.loc)
            if f.kind == "builtin":
                name = f.name
                key = "map" if name in SOAC_MAPS else "zip" if name in ZIPS else "unzip" if name in UNZIPS \
                    else name
                return getattr(self, "builtin_" + key)(name, args, f.loc)
            return self.call_prelude(f.name, args, f.loc)
        if isinstance(f, Closure):
            return self.call_closure(f, list(args), loc)
        if isinstance(f, Ascribed):
            return self.call_ascribed(f, list(f.pre) + list(args), loc)
        if isinstance(f, Partial):
            return self.call_closure(f.fn, list(f.pre) + list(args), loc)
        if isinstance(f, Section):
            args = list(f.pre) + list(args)
            vals = []
            for a in args:
                if isinstance(a.val, FunV):
                    raise self.not_a_value(a.val, a.loc, f'an operand of "{f.op}"')
                vals.append(a.val)
            if f.side == "left":
                x, y = f.given, vals[0]
            elif f.side == "right":
                x, y = vals[0], f.given
            else:
                x, y = vals
            return self.binop(f.op, x, y, f.op_loc)
        raise TypeError(f)

    def call_ascribed(self, f: Ascribed, args, loc):
        for i, (a, t) in enumerate(zip(args, f.ptypes)):
            if t is None:
                continue
            if isinstance(a.val, FunV):
                raise self.not_a_value(a.val, a.loc, f"argument {i + 1} of {self.fn_what(f)}")
            if unify(t, a.val.t) == "type":
                raise self.err(f"Argument {i + 1} of {self.fn_what(f)} has type {self.show(a.val.t)}, but its type "
                               f"is written as {self.show(t)}.", a.loc or loc)
        r = self.apply(f.fn, args, loc)
        if f.ret is not None:
            if isinstance(r, FunV):
                raise self.err(f"{self.fun_desc(f.fn)} returns a function, but its type is written as returning "
                               f"{self.show(f.ret)}.", loc)
            if unify(f.ret, r.t) == "type":
                raise self.err(f"{self.fun_desc(f.fn)} returns {self.show(r.t)}, but its type is written as "
                               f"returning {self.show(f.ret)}.", loc)
        return r

    def call_closure(self, c: Closure, args, loc):
        if c.kind == "inline" and self.inlining.count(c.name) >= MAX_NESTED_INLINING:
            # (a function inlined into itself again and again: recursion through a function value, or mutual)
            between = self.inlining[len(self.inlining) - self.inlining[::-1].index(c.name):]
            raise self.recursion_error(c.name, loc, tuple(dict.fromkeys(n for n in between if n != c.name)))
        outer_types, outer_path, outer_inlining = self.type_params, self.call_path, self.inlining
        if c.kind == "inline":
            self.inlining = outer_inlining + (c.name,)
        if c.types:
            self.type_params = {**outer_types, **{n: TV("param") for n in c.types}}
        self.call_path = outer_path + (loc,)  # a constructor inlined at each call has a sum type for each
        try:
            return self.call_closure_typed(c, args, loc)
        finally:
            self.type_params, self.call_path, self.inlining = outer_types, outer_path, outer_inlining

    def sizes_from_arguments(self, params, args, sizes):
        """Binds the size parameters (`sizes`, name -> None) that the outer dimensions of the parameters' types
        name, before any of those types is checked, so that a size expression may use one that a later parameter
        decides (adbench's lstm: `(a: [s*2][4*d]f64) (b: [3][d]f64)`); and binds one that a type has only inside
        a size expression (`(ps: [2*k]t)`) where the argument's size was computed by the same expression
        (`take (2*(n/3)) p`: k is n/3; Futhark unifies size expressions so). The types are then checked as
        written."""
        def match(node, d):
            if isinstance(node, P.Ident) and sizes.get(node.name, 0) is None:
                sizes[node.name] = d
            elif isinstance(node, P.BinOpE) and isinstance(d, str) and self.defs.get(d, (None,))[0] == node.op:
                _, x, y = self.defs[d]
                match(node.lhs, S.dim_of(x))
                match(node.rhs, S.dim_of(y))
        for anonymous in (False, True):  # a size of the caller's own first, over an anonymous one (`[]`)
            for p, a in zip(params, args):
                if isinstance(p, P.PTyped) and isinstance(p.type, P.TypeExp) and isinstance(a.val, V):
                    for (kind, node), d in zip(p.type.dims, shape_of(prune(a.val.t))):
                        if (d in self.flexible) != anonymous:
                            continue
                        if kind == "name" and sizes.get(node, 0) is None:
                            sizes[node] = d
                        elif kind == "exp":
                            match(node, d)

    def call_closure_typed(self, c: Closure, args, loc):
        env = dict(c.env)
        sizes = {n: None for n in c.sizes} if c.sizes else None
        if sizes:
            self.sizes_from_arguments(c.params, args, sizes)
        undecided = sorted(n for n in set(c.sizes) - self.own_sizes(c.params) if sizes[n] is None)
        if undecided:  # (Futhark may take it from the context)
            n = undecided[0]
            raise self.err(f'The size parameter "{n}" of "{c.name}" is not determined by the arguments: incflat '
                           f'takes a size parameter from an argument whose parameter type has it as a size of its '
                           f'own ([{n}]), or whose size was computed by the expression the type writes.', loc)
        seen = set()
        for p, a in zip(c.params, args):
            for name, nloc in P.pat_names(p):
                if name in seen:
                    raise self.err(f'The name "{name}" is bound twice in the parameters of '
                                   f'{"this lambda" if c.kind == "lambda" else repr(c.name)}.', nloc)
                seen.add(name)
            q = p.pat if isinstance(p, P.PTyped) else p
            what = f'parameter "{q.name}"' if isinstance(q, P.PName) else "parameter"
            if c.kind != "lambda":
                what += f' of "{c.name}"'
            ann_env = dict(env)
            if sizes:
                for n, dm in sizes.items():
                    if dm is not None:
                        ann_env[n] = atom_v(self.dim_atom(dm))
            try:
                self.bind_pattern(p, a.val, env, ann_env, what, sizes)
            except CompileError as err:
                # a wrong argument of a named function: point at the argument
                if c.kind == "lambda" or a.loc is None or "annotated" not in err.message:
                    raise
                raise self.err(err.message, a.loc) from None
        if sizes:
            for n, dm in sizes.items():
                if dm is None:
                    raise self.err(f'The size parameter "{n}" of "{c.name}" is not determined by the '
                                   f'arguments.', c.loc)
                env[n] = atom_v(self.dim_atom(dm))
        r = self.lower(c.body, env)
        if c.ret is not None:
            if isinstance(r, FunV):
                raise self.err("The body is a function, but a return type is given.", c.body.loc)
            ann = self.resolve_type(c.ret, lambda kind, v, dloc: self.local_type_dim(kind, v, dloc, env))
            ann = self.bind_element_params(ann, r.t)
            r = self.empty_as(r, ann, c.body.loc)
            rr = unify(ann, r.t)
            if rr:
                who = "The lambda's" if c.kind == "lambda" else f'"{c.name}"\'s'
                raise self.err(f"{who} return type is annotated as {self.show(ann)}, but its body has "
                               f"{self.what(rr)} {self.show(r.t)}.", c.body.loc)
            r = V(self.fill_any(ann, r.t), r.atoms) if rr is None else r
        return r

    def call_user(self, sig: FunSig, args, loc):
        atoms = []
        subst = {}
        bindable = set(sig.size_params) | {p.name for p in sig.params}
        for i, a in enumerate(args):
            if isinstance(a.val, FunV):
                raise self.not_a_value(a.val, a.loc, f'argument {i + 1} of "{sig.name}"')
        # i64 parameters may be used as sizes in the types of other parameters and the result
        flat = [x for a in args for x in a.val.atoms]
        for p, x in zip(sig.params, flat):
            if prune(p.type) == I64 and is_scalar(x.type) and unify(x.type, I64) is None:
                subst[p.name] = S.dim_of(x)
        # a size parameter takes a size of the caller's own over an anonymous one (`[]`), which is then coerced
        for pt, a in zip(sig.ptypes, args):
            for pd, ad in zip(shape_of(prune(pt)), shape_of(prune(a.val.t))):
                if isinstance(pd, str) and pd in sig.size_params and pd not in subst and ad not in self.flexible:
                    subst[pd] = ad
        for i, (pt, a) in enumerate(zip(sig.ptypes, args)):
            at = a.val.t
            r = self.inst_match(pt, at, subst, bindable)
            if r == "size" and self.only_flexible_differ(pt, at, subst):
                # an anonymous parameter size of the caller takes the size expected: checked at run time
                a = Arg(self.coerce(a.val, map_dims(pt, lambda d: self.inst_term(d, subst, loc)
                                                    if d is not None else d), a.loc), a.loc)
                at, r = a.val.t, None
            if r:
                expected = map_dims(pt, lambda d: subst.get(d, d) if isinstance(d, str) else d)
                extra = " (size mismatch)" if r == "size" else ""
                note = UNKNOWN_SIZES_NOTE if r == "size" and self.show(at) == self.show(expected) else ""
                if "[]" in self.show(expected) and r == "size":  # a size an earlier argument gave, without a name
                    extra = (f" (size mismatch: {self.show(pt)} with the size of an earlier argument, which has no "
                             "name)")
                raise self.err(f'Argument {i + 1} of "{sig.name}" has type {self.show(at)}, but '
                               f'{self.show(expected)} is expected{extra}.{note}', a.loc)
            atoms.extend(a.val.atoms)
        rt = map_dims(sig.ret, lambda d: self.inst_term(d, subst, loc))
        ls = leaves(rt)
        vs = self.bind_many(S.Apply(sig.name, tuple(atoms), tuple(ls)), ls, loc, [None] * len(ls))
        for u, a in zip(sig.uniques, args):
            if u:
                self.consume(a.val, a.loc, self.arg_name(a), f'"{sig.name}" (its parameter is unique)')
        return V(rt, vs)

    def only_flexible_differ(self, pt, at, subst) -> bool:
        """Whether the sizes of an argument's type that differ from the parameter's are all anonymous
        parameter sizes of the function being checked."""
        pt, at = prune(pt), prune(at)
        if isinstance(pt, (Array, TArr)) and isinstance(at, type(pt)) and len(pt.shape) == len(at.shape):
            inner = self.only_flexible_differ(pt.elem, at.elem, subst) if isinstance(pt, TArr) else True
            return inner and all(subst.get(pd, pd) == ad or ad in self.flexible
                                 for pd, ad in zip(pt.shape, at.shape) if not isinstance(pd, tuple))
        if isinstance(pt, Tuple) and isinstance(at, Tuple) and len(pt.elems) == len(at.elems):
            return all(self.only_flexible_differ(x, y, subst) for x, y in zip(pt.elems, at.elems))
        return unify(pt, at) is None

    def inst_term(self, d, subst, loc):
        if isinstance(d, int):
            return d
        if isinstance(d, tuple):
            op, x, y = d
            xa = self.dim_atom(self.inst_term(x, subst, loc))
            ya = self.dim_atom(self.inst_term(y, subst, loc))
            return S.dim_of(self.size_op(op, xa, ya, loc))
        return subst.get(d, d)

    def inst_match(self, pt, at, subst, bindable):
        """Match a parameter type against an argument type, binding the callee's sizes."""
        pt, at = prune(pt), prune(at)
        if unknown_tv(at) and not is_scalar(pt):  # an entry parameter's type, not known yet: refined as pt
            refine_as(at, pt)
        if isinstance(at, (Array, TArr)) and isinstance(pt, (Array, TArr)) and unknown_tv(at.elem) \
                and len(at.shape) < len(pt.shape):
            raise Refine(unknown_tv(at.elem), dims=len(pt.shape) - len(at.shape))
        if isinstance(at, SumTV) or isinstance(at, Array) and isinstance(prune(at.elem), SumTV):
            # constructors of a type not known yet: they have the parameter's, in the caller's sizes
            return unify(map_dims(pt, lambda d: d if isinstance(d, int) else subst.get(d) if isinstance(d, str)
                                  else None), at)
        if isinstance(pt, (Array, TArr)):
            if not isinstance(at, type(pt)) or len(pt.shape) != len(at.shape):
                return "type"
            r = self.inst_match(pt.elem, at.elem, subst, bindable) if isinstance(pt, TArr) else \
                unify(pt.elem, at.elem)
            if r == "type":
                return r
            for pd, ad in zip(pt.shape, at.shape):
                if isinstance(pd, str) and pd in bindable:
                    if pd in subst and subst[pd] != ad:
                        r = _worse(r, "size")
                    subst.setdefault(pd, ad)
                elif pd != ad:
                    r = _worse(r, "size")
            return r
        if isinstance(pt, Tuple):
            if not isinstance(at, Tuple) or at.names != pt.names:
                return "type"
            r = None
            for x, y in zip(pt.elems, at.elems):
                r = _worse(r, self.inst_match(x, y, subst, bindable))
            return r
        return unify(pt, at)

    def call_prelude(self, name, args, loc):
        mod, fn = name.split(".")
        if fn in ARRAY_REDUCTIONS:
            return self.prelude_reduction(mod, fn, args[0], loc)
        ptypes, rt, _ = prelude_lookup((mod, fn))
        if fn in DERIVED_MODULE_FUNCTIONS:
            return self.derived_module_function(mod, fn, args, ptypes, rt, loc)
        atoms = []
        for i, (a, pt) in enumerate(zip(args, ptypes)):
            if isinstance(a.val, FunV):
                raise self.not_a_value(a.val, a.loc, f'an argument of "{name}"')
            x = a.val
            if not is_scalar(x.t) or unify(x.t, pt):
                which = "an argument" if len(ptypes) == 1 else f"argument {i + 1}"
                raise self.err(f'"{name}" expects {which} of type {pt}, but got {self.show(x.t)}.', a.loc)
            atoms.append(x.atom)
        if widens_signed_to_unsigned(mod, fn):
            # Futhark zero-extends here (math.fut: u32.i16 is zext_i16_i32); numpy and C would sign-extend,
            # so the bits go first to the unsigned type of the source's width, which every backend widens with zeros
            same_width = Scalar("u" + fn[1:])
            atoms = [self.emit(S.PrimCall(f"{same_width.name}.{fn}", tuple(atoms), same_width), same_width, loc)]
            name = f"{mod}.{same_width.name}"
        return atom_v(self.emit(S.PrimCall(name, tuple(atoms), rt), rt, loc))

    def derived_module_function(self, mod, fn, args, ptypes, rt, loc):
        """`T.to_i64`, `T.to_f64`, `T.recip`, `T.not`, `T.from_fraction`: as the conversions and operators
        that define them (math.fut)."""
        vals = []
        for i, (a, pt) in enumerate(zip(args, ptypes)):
            if isinstance(a.val, FunV) or not is_scalar(a.val.t) or unify(a.val.t, pt):
                shown = "a function" if isinstance(a.val, FunV) else self.show(a.val.t)
                raise self.err(f'"{mod}.{fn}" expects argument {i + 1} of type {pt}, but got {shown}.', a.loc)
            vals.append(a.val.atom)
        t = Scalar(mod)
        if fn in ("to_i64", "to_f64"):
            return atom_v(self.emit(S.PrimCall(f"{rt.name}.{mod}", (vals[0],), rt), rt, loc))
        if fn == "recip":
            return atom_v(self.emit(S.BinOp("/", S.Const(1.0, t), vals[0], t), t, loc))
        if fn == "not":
            return atom_v(self.emit(S.UnOp("~", vals[0], t), t, loc))
        x, y = (self.emit(S.PrimCall(f"{mod}.i64", (v,), t), t, loc) for v in vals)
        return atom_v(self.emit(S.BinOp("/", x, y, t), t, loc))

    # ---- function arguments of SOACs

    def instantiate(self, f, ptypes, soac, loc, hints=None):
        """The S.Lambda for function value f applied to parameters of the given checker types, and
        its result's checker type (sizes known outside the lambda)."""
        n = len(ptypes)
        plural = "s" if n != 1 else ""
        if not isinstance(f, FunV):
            raise self.err(f'The first argument of "{soac}" must be a function, but this is a value of type '
                           f'{self.show(f.t)}.', loc)
        if self.arity(f) > n or self.curried_arity(f) < n:
            raise self.err(f'The function passed to "{soac}" must take {n} argument{plural}, but '
                           f'{self.fn_what(f)} takes {self.arity(f)}.', loc)
        names = self.param_hints(f, n) if hints is None else hints
        outer_barrier, c0 = self.barrier, dict(self.consumed)
        self.barrier = (self.counter, f'inside the function passed to "{soac}"')
        params = [self.fresh_v(t, nm) for t, nm in zip(ptypes, names)]
        for p, nm in zip(params, names):
            for a in p.atoms:
                self.dim_text[a.name] = nm
        saved = self.push()
        res = self.apply(f, [Arg(p, loc) for p in params], loc)
        self.barrier, self.consumed = outer_barrier, c0
        if isinstance(res, FunV):
            self.pop(saved)
            raise self.err(f'The function passed to "{soac}" must take {n} argument{plural}, but '
                           f'{self.fn_what(f)} takes more.', loc)
        body_stms = self.pop(saved)
        local = {v.name for s in body_stms for v in s.pat} | {a.name for p in params for a in p.atoms}
        bloc = f.body.loc if isinstance(f, Closure) else f.fn.body.loc if isinstance(f, Partial) else loc
        rt = self.export_type(res.t, local, bloc, f'the result of the function passed to "{soac}"')
        lam = S.Lambda(tuple(a for p in params for a in p.atoms), S.Body(tuple(body_stms), res.atoms),
                       tuple(leaves(rt)))
        return lam, rt

    def export_type(self, t, local, loc, what):
        def f(d):
            x = self.export_dim(d, local, loc)
            if x is None:
                raise self.err(f'The size "{self.show_dim(d)}" of {what} is computed inside it, so it '
                               f'is not known outside; incflat (like Futhark) needs sizes known outside.', loc)
            return x
        return map_dims(t, f)

    def param_hints(self, f, n):
        params = f.params if isinstance(f, Closure) else f.fn.params[len(f.pre):] if isinstance(f, Partial) else []
        out = []
        for k in range(n):
            p = params[k] if k < len(params) else None
            while isinstance(p, P.PTyped):
                p = p.pat
            out.append(p.name if isinstance(p, P.PName) else ("x", "y", "z", "w", "v")[k % 5])
        return out

    def lower_LambdaE(self, e, env):
        return Closure(e.params, e.ret, e.body, env, e.loc, "lambda")

    def lower_SectionE(self, e, env):
        if e.fn is not None:
            return self.backquote_section(e, env)
        if e.op in env:  # an operator a parameter binds: the section is a lambda over the operator's use
            x, y = (P.Ident(e.loc, e.span, name) for name in ("(.x)", "(.y)"))
            params = [P.PName(v.name, e.loc) for v, given in ((x, e.left), (y, e.right)) if given is None]
            body = P.BinOpE(e.op_loc, e.span, e.op, e.left or x, e.right or y)
            return self.lower_LambdaE(P.LambdaE(e.loc, e.span, params, None, body), env)
        if e.left is not None:
            return Section(e.op, e.op_loc, self.lower_val(e.left, env), "left", e.loc)
        if e.right is not None:
            return Section(e.op, e.op_loc, self.lower_val(e.right, env), "right", e.loc)
        return Section(e.op, e.op_loc, None, "none", e.loc)


MAX_NESTED_INLINING = 16  # times a function may be inlined inside itself (`tabmap (f >-> tabmap)`: 2) before
# incflat takes it for recursion


def widens_signed_to_unsigned(to: str, frm: str) -> bool:
    """Whether the conversion `to.frm` takes a signed integer to a wider unsigned one."""
    return (to[:1] == "u" and frm[:1] == "i" and to[1:].isdigit() and frm[1:].isdigit()
            and int(to[1:]) > int(frm[1:]))


def inline_closure(d: P.Decl) -> Closure:
    """The top-level function d as a closure that a call inlines, checked there with the arguments' types."""
    return Closure(d.params, d.ret, d.body, {}, d.loc, "inline", d.name, tuple(n for n, _ in d.size_params),
                   tuple(n for n, _ in d.type_params))
