"""Point-free definitions: a definition whose body is a function value (`entry main = map f32.acos`, `def g = f 2`)
is checked with the parameters that value still takes written out, their types where the value tells them.

A mixin of `Checker` (ir.frontend.check.checker), split from ir.frontend.check.decls.
"""

import dataclasses

from incflat.ir.frontend import syntax as P
from incflat.ir.frontend.check.decls import type_dims
from incflat.ir.frontend.check.infer import TV, TArr, arr_of, has_sum, is_arr, leaves, prune
from incflat.ir.frontend.check.prelude import ARRAY_REDUCTIONS, SOAC_MAPS, prelude_lookup
from incflat.ir.frontend.check.values import Ascribed, Closure, FunV, Named, Partial, Section, V
from incflat.ir.types import Array, Scalar, Tuple


class PointFree:
    """Mixin of Checker: the parameters of point-free definitions."""

    def eta_expand(self, d: P.Decl, f: FunV) -> P.Decl:
        """An entry point defined as a function value, with the parameters that value takes written out:
        `entry main = map f32.acos` is `entry main (x0: []f32) = map f32.acos x0`. A partial application of a
        function whose remaining parameters are written takes them as written, with the size parameters they
        name (`def main = common_main step` is `main [n] [e] (x0: [n]i32) (x1: [n]i32) (x2: [e]i32)`)."""
        loc = d.body.loc
        written = self.written_params(f)
        if written is not None:
            sizes, types = written
        else:
            found = self.param_types(f)
            sizes, types = [], None
            if found and not any(isinstance(prune(leaf if not is_arr(leaf) else leaf.elem), TV)
                                 for t in found for leaf in leaves(t)):
                types = [self.type_exp(t, loc) for t in found]
            elif self.arity(f) > 0:  # the body decides them, as for `entry main xs = ...` (`scan (+) 0 >-> f32.sum`)
                types = [None] * self.arity(f)
            else:
                raise self.err(f'The parameter types of the entry point "{d.name}" cannot be inferred from its '
                               f'definition; write its parameters with their types.', d.body.loc)
        names = [f"x{i}" for i in range(len(types))]
        params = list(d.params) + [P.PName(n, loc) if t is None else P.PTyped(P.PName(n, loc), t, loc)
                                   for n, t in zip(names, types)]
        body = P.mk_app(d.body, [P.Ident(loc, d.body.span, n) for n in names])
        return dataclasses.replace(d, size_params=list(d.size_params) + sizes, params=params, body=body)

    def written_params(self, f: FunV):
        """(size parameters, parameter types as written) that a partially applied user function still takes,
        where each is written and none is a function, and its size parameters appear only among them; None
        otherwise."""
        if not (isinstance(f, Named) and f.kind == "user"):
            return None
        decl = self.funs[f.name].decl
        pre = len(f.pre)
        rest, given = decl.params[pre:], decl.params[:pre]
        if not rest or not all(isinstance(p, P.PTyped) and not isinstance(p.type, P.FunTypeExp) for p in rest):
            return None
        open_types = {name for name, _ in decl.type_params} & {t.base for p in rest for t in P.type_parts(p.type)
                                                               if isinstance(t.base, str)}
        if open_types:  # type parameters that the applied arguments decide (radix_sort_int b i32.get_bit)
            decided = self.decided_type_params(given, f.pre)
            if not open_types <= set(decided):
                return None
            rest = [dataclasses.replace(p, type=P.map_type(p.type, lambda t: dataclasses.replace(
                t, base=decided.get(t.base, t.base)) if isinstance(t.base, str) else t)) for p in rest]
        named = {v for p in rest for k, v in type_dims(p.type) if k == "name"}
        applied = {v for p in given if isinstance(p, P.PTyped) and not isinstance(p.type, P.FunTypeExp)
                   for k, v in type_dims(p.type) if k == "name"}
        if named & applied:  # a size the applied arguments bind
            return None
        return [(n, loc) for n, loc in decl.size_params if n in named], [p.type for p in rest]

    def decided_type_params(self, params, args) -> dict:
        """{type parameter: the primitive type's name} that applied arguments decide: a prelude function given for
        a parameter written as a function type (`get: i32 -> t -> i32` and i32.get_bit: t is i32), or a value of
        a primitive type given for a parameter of type `t`."""
        decided = {}

        def match(te, t):
            if isinstance(te, P.TypeExp) and isinstance(te.base, str) and not te.dims and not te.args \
                    and isinstance(t, Scalar):
                decided.setdefault(te.base, t.name)
        for p, arg in zip(params, args):
            if not isinstance(p, P.PTyped):
                continue
            value = arg.val
            if isinstance(p.type, P.FunTypeExp) and isinstance(value, Named) and value.kind == "prelude" \
                    and not value.pre:
                found = prelude_lookup(tuple(value.name.split(".")))
                parts, te = [], p.type
                while isinstance(te, P.FunTypeExp):
                    parts.append(te.param)
                    te = te.result
                if found is not None and len(parts) == len(found[0]):
                    for part, t in zip(parts + [te], list(found[0]) + [found[1]]):
                        match(part, t)
            elif isinstance(value, V):
                match(p.type, prune(value.t))
        return decided

    def param_types(self, f: FunV):
        """The checker types of the parameters a function value still takes, where they are known without
        applying it (an entry point's signature); None when they are not."""
        if isinstance(f, Named):
            pre = len(f.pre)
            if f.kind == "user":
                sig = self.funs[f.name]
                return None if sig.inline else list(sig.ptypes[pre:])
            if f.kind == "prelude":
                mod, fn = f.name.split(".")
                if fn in ARRAY_REDUCTIONS:
                    return [arr_of(Scalar(mod), (None,))][pre:]
                return list(prelude_lookup((mod, fn))[0][pre:])
            if f.name in SOAC_MAPS and pre == 1 and isinstance(f.pre[0].val, FunV):
                elems = self.param_types(f.pre[0].val)
                return None if elems is None else [arr_of(t, (None,)) for t in elems]
            if f.name in ("reduce", "reduce_comm", "scan") and pre == 2 and isinstance(f.pre[1].val, V):
                return [arr_of(f.pre[1].val.t, (None,))]
            if f.name == "filter" and pre == 1 and isinstance(f.pre[0].val, FunV):
                elems = self.param_types(f.pre[0].val)
                return None if elems is None else [arr_of(elems[0], (None,))]
            return None
        if isinstance(f, Section):
            if f.side == "none" or f.pre:
                return None
            return [f.given.t]
        if isinstance(f, Ascribed):
            types = f.ptypes[len(f.pre):]
            return None if any(t is None for t in types) else list(types)
        first = self.composed_first(f)
        if first is not None:  # `f >-> g` takes what f takes first
            types = self.param_types(first)
            return types[:1] if types else None
        if isinstance(f, (Closure, Partial)):
            c, pre = (f, 0) if isinstance(f, Closure) else (f.fn, len(f.pre))
            types = []
            for p in c.params[pre:]:
                if not isinstance(p, P.PTyped) or isinstance(p.type, P.FunTypeExp):
                    return None
                types.append(self.resolve_type(p.type, lambda kind, v, loc: v if kind == "const" else None))
            return types
        return None

    def type_exp(self, t, loc) -> P.TypeExp:
        """A type as it could be written, every size anonymous (`[]`)."""
        t = prune(t)
        if isinstance(t, TV):
            raise self.err("The type of this value is not known (an unsuffixed literal); give it a type.", loc)
        if has_sum(t):
            raise self.err(f"An entry point cannot take a value of type {self.show(t)}: sum types in the parameters "
                           f"and results of entry points are not supported by incflat.", loc)
        if isinstance(t, Tuple):
            return P.TypeExp([], [self.type_exp(x, loc) for x in t.elems], loc, loc)
        if isinstance(t, (Array, TArr)):
            inner = self.type_exp(t.elem, loc)
            return P.TypeExp([("any", None)] * len(t.shape) + inner.dims, inner.base, loc, loc)
        return P.TypeExp([], t.name, loc, loc)
