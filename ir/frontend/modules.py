"""Modules elaborated away before the checker, as Futhark's defunctorisation does: every declaration inside a
module becomes a top-level one named by its path (`M.f`, `M.N.t`), every application of a parametric module
elaborates its body again with the argument in place of the parameter, and every name is resolved to the
declaration it means, with Futhark's scoping: a module's declarations see the ones before them and the
enclosing scopes, `open M` brings M's names into scope, `M.(e)` does so in e alone, and local variables shadow
them all. What the checker gets is a plain program whose only qualified names are the prelude's (`f32.sqrt`).

A file is a module too, as in Futhark: `import "path"` is `local open` of the module of path.fut (relative to the
importing file; `lib/github.com/...` as `futhark pkg` lays packages out), so a file sees the names of the files it
imports itself and not theirs, and does not pass them on (`open import "path"` does). Each file is read, parsed
and elaborated once, however many files import it, its declarations named by the file (`octree.f`); only the
compiled file's `entry` declarations are entry points; a cycle of imports is an error at the import that closes
it.

Module types are parsed and not checked: an ascription (`module M : S = ...`, a parameter's type) is
transparent, so a program that Futhark accepts means the same here, and one that breaks a signature is not
refused for it. A prelude module (`i32`, `f64`, ...) may be a parametric module's argument or opened; its type
`t` is the primitive type.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import fields, is_dataclass, replace

from incflat.ir.errors import CompileError
from incflat.ir.frontend import syntax as P
from incflat.ir.frontend.imports import imported_path, read_source
from incflat.ir.source import Loc
from incflat.ir.types import PRIM_NAMES


@dataclasses.dataclass
class Struct:
    """An elaborated module: what each of its names means (a declaration's top-level name, or a module)."""
    values: dict
    types: dict
    modules: dict


@dataclasses.dataclass
class Functor:
    """A parametric module: its remaining parameters, body and the scope it was declared in."""
    params: tuple
    body: object
    env: "Env"


@dataclasses.dataclass
class PrimModule:
    """`i32`, `f64`, ...: values are `name.x` of the prelude, the type `t` is the primitive type."""
    name: str


class Env:
    """A scope: its own names (a module's, or those `open` brought in), then the enclosing scope's."""

    def __init__(self, parent: "Env | None" = None):
        self.parent = parent
        self.values, self.types, self.modules = {}, {}, {}
        self.prims = []  # the prelude modules opened here
        self.hidden = set()  # (kind, name) bound by a `local` declaration: not part of the module

    def find(self, kind: str, name: str):
        env = self
        while env is not None:
            found = getattr(env, kind).get(name)
            if found is not None:
                return found
            if kind == "values":
                for mod in env.prims:
                    if prelude_has(mod, name):
                        return (mod, name)
            env = env.parent
        if kind == "modules" and name in PRIM_NAMES:
            return PrimModule(name)
        return None

    def open(self, m: Struct) -> set:
        """Brings m's names into this scope; the (kind, name) pairs it bound."""
        self.values.update(m.values)
        self.types.update(m.types)
        self.modules.update(m.modules)
        return {(kind, n) for kind in ("values", "types", "modules") for n in getattr(m, kind)}

    def struct(self) -> Struct:
        def shown(kind):
            return {n: v for n, v in getattr(self, kind).items() if (kind, n) not in self.hidden}
        return Struct(shown("values"), shown("types"), shown("modules"))



def uses_modules(decls) -> bool:
    """Whether a program imports a file, declares, opens or locally opens a module, or names a module's type
    (`f64.t`); the others are left as they are."""
    def qualified(x) -> bool:
        if isinstance(x, P.LocalOpenE) or (isinstance(x, P.TypeExp) and isinstance(x.base, str) and "." in x.base):
            return True
        if isinstance(x, (list, tuple)):
            return any(qualified(y) for y in x)
        return is_dataclass(x) and not isinstance(x, type) and any(
            qualified(getattr(x, f.name)) for f in fields(x) if f.name not in ("loc", "span"))
    return any(isinstance(d.decl if isinstance(d, P.LocalDecl) else d, (P.ModuleDecl, P.OpenDecl, P.Import))
               for d in decls) or qualified(list(decls))


def elaborate_modules(decls, file: str, parse_syntax) -> tuple:
    """The declarations of the program whose main file (`file`) has these, with every module and imported file
    elaborated away (see the module's docstring); `parse_syntax(text, path)` parses an imported file."""
    if not uses_modules(decls):
        return tuple(d.decl if isinstance(d, P.LocalDecl) else d for d in decls)
    out = []
    _Elaborator(out, parse_syntax, file).decls(decls, Env(), "")
    return tuple(out)


class _Elaborator:
    def __init__(self, out: list, parse_syntax, file: str):
        self.out = out
        self.parse_syntax = parse_syntax
        self.anonymous = 0
        self.paths = set(PRIM_NAMES)  # the modules' paths so far (their declarations' names start with them)
        self.type_params = frozenset()  # the type parameters of the declaration being resolved
        self.files = {}  # an imported file's path: its module
        self.importing = [os.path.normpath(file)]  # the files being elaborated, each importing the next

    # ---- declarations and module expressions

    def decls(self, decls, env: Env, prefix: str):
        for d in decls:
            bound = self.decl(d.decl if isinstance(d, P.LocalDecl) else d, env, prefix)
            if isinstance(d, (P.LocalDecl, P.Import)):  # an import is `local open`
                env.hidden |= bound
            else:
                env.hidden -= bound

    def decl(self, d, env: Env, prefix: str) -> set:
        """Elaborates one declaration into env; the (kind, name) pairs it binds there."""
        if isinstance(d, P.Decl):
            flat = prefix + d.name
            self.out.append(self.fun(d, env, flat, entry=d.entry and not prefix))
            env.values[d.name] = flat
            return {("values", d.name)}
        if isinstance(d, P.TypeDecl):
            flat = prefix + d.name
            locals_ = frozenset(n for n, _ in d.size_params)
            self.type_params = frozenset(n for n, _ in d.type_params)
            self.out.append(replace(d, name=flat, type=self.type(d.type, env, locals_)))
            self.type_params = frozenset()
            env.types[d.name] = flat
            return {("types", d.name)}
        if isinstance(d, P.ModuleDecl):
            if d.params:
                env.modules[d.name] = Functor(tuple(d.params), d.body, env)
            else:
                path = self.unique_path(prefix + d.name)
                env.modules[d.name] = self.module(d.body, env, path + ".")
            return {("modules", d.name)}
        if isinstance(d, P.Import):
            return env.open(self.file_module(d.path, d.loc))
        if isinstance(d, P.OpenDecl):
            m = self.module(d.module, env, self.fresh_prefix(prefix))
            if isinstance(m, PrimModule):
                env.prims.append(m.name)
                return set()
            if not isinstance(m, Struct):
                raise CompileError("Only a module, not a parametric one, can be opened.", d.loc)
            return env.open(m)
        raise TypeError(f"unexpected declaration {d!r}")  # pragma: no cover - the parser makes no other

    def fresh_prefix(self, prefix: str) -> str:
        self.anonymous += 1
        return f"{prefix}_{self.anonymous}."

    def unique_path(self, path: str) -> str:
        """path, or path_N where a module of that path exists (one shadowed, or a file's of the same name)."""
        if path in self.paths:
            path = f"{path}_{len(self.paths)}"
        self.paths.add(path)
        return path

    def file_module(self, path: str, loc) -> Struct:
        """The module of the file an import at loc names: elaborated the first time, its declarations named
        by the file."""
        target = imported_path(loc.file, path, loc)
        if target in self.importing:
            chain = self.importing[self.importing.index(target):] + [target]
            raise CompileError(f"Import cycle: {' -> '.join(chain)}.", loc)
        if target not in self.files:
            decls = self.parse_syntax(read_source(target, loc), target)
            name = re.sub(r"[^\w']", "_", os.path.splitext(os.path.basename(target))[0])
            inner = Env()  # a file sees the prelude and its own imports only
            self.importing.append(target)
            self.decls(decls, inner, self.unique_path(name if name[:1].isalpha() else "_" + name) + ".")
            self.importing.pop()
            self.files[target] = inner.struct()
        return self.files[target]

    def module(self, me, env: Env, prefix: str):
        if isinstance(me, P.ModStruct):
            inner = Env(env)
            self.decls(me.decls, inner, prefix)
            return inner.struct()
        if isinstance(me, P.ModName):
            return self.module_path(me.parts, env, me.loc)
        if isinstance(me, P.ModLambda):
            return Functor(tuple(me.params), me.body, env)
        if isinstance(me, P.ModImport):
            return self.file_module(me.path, me.loc)
        if isinstance(me, P.ModApply):
            f = self.module(me.fn, env, prefix)
            if not isinstance(f, Functor):
                raise CompileError("Only a parametric module can be applied to a module.", me.loc)
            (param, _), rest = f.params[0], f.params[1:]
            arg = self.module(me.arg, env, prefix + param + ".")
            if isinstance(arg, Functor):
                raise CompileError("A parametric module is not an argument incflat can pass (only modules are).",
                                   me.arg.loc)
            body_env = Env(f.env)
            body_env.modules[param] = arg
            if rest:
                return Functor(rest, f.body, body_env)
            return self.module(f.body, body_env, prefix)
        raise TypeError(f"unexpected module expression {me!r}")  # pragma: no cover

    def module_path(self, parts, env: Env, loc):
        m = env.find("modules", parts[0])
        for name in parts[1:]:
            if not isinstance(m, Struct) or name not in m.modules:
                m = None
                break
            m = m.modules[name]
        if m is None:
            raise CompileError(f'Unknown module "{".".join(parts)}".', loc)
        return m

    # ---- names inside declarations

    def fun(self, d: P.Decl, env: Env, flat: str, entry: bool) -> P.Decl:
        locals_ = frozenset([n for n, _ in d.size_params] + [n for n, _ in d.type_params]
                            + [n for p in d.params for n, _ in P.pat_names(p)])
        self.type_params = frozenset(n for n, _ in d.type_params)
        try:
            params = [self.pattern(p, env, locals_) for p in d.params]
            ret = self.type(d.ret, env, locals_) if d.ret is not None else None
            return replace(d, name=flat, entry=entry, params=params, ret=ret, body=self.exp(d.body, env, locals_))
        finally:
            self.type_params = frozenset()

    def value(self, name: str, env: Env, loc, span):
        """The expression a name that no local variable binds means in env; None if none (the prelude's, or
        unknown: the checker says)."""
        found = env.find("values", name)
        if isinstance(found, str):
            return None if found == name else P.Ident(loc, span, found)
        if isinstance(found, tuple):  # a prelude module's, opened
            return P.QualIdent(loc, span, found)
        return None

    def qualified(self, e: P.QualIdent, env: Env, locals_: frozenset):
        parts = e.parts
        if parts[0] in locals_ or env.find("values", parts[0]) is not None:
            head = self.exp(P.Ident(e.loc, e.span, parts[0]), env, locals_)
            # `r.a.b`: fields of a value (the checker takes the path)
            return e if not isinstance(head, P.Ident) else replace(e, parts=(head.name,) + parts[1:])
        m = env.find("modules", parts[0])
        if m is None:
            return e  # the prelude's (`f32.sqrt`) or unknown: the checker says
        k = 1
        while isinstance(m, Struct) and k < len(parts) - 1 and parts[k] in m.modules:
            m, k = m.modules[parts[k]], k + 1
        if isinstance(m, PrimModule):
            return replace(e, parts=(m.name,) + parts[k:])
        if not isinstance(m, Struct):
            raise CompileError(f'"{".".join(parts[:k])}" is a parametric module: apply it to a module first.', e.loc)
        flat = m.values.get(parts[k])
        if flat is None:
            raise CompileError(f'Unknown name "{".".join(parts[:k + 1])}": module {".".join(parts[:k])} does not '
                               f'define "{parts[k]}".', e.loc)
        if isinstance(flat, tuple):
            return replace(e, parts=flat + parts[k + 1:])
        if k + 1 == len(parts):
            return P.Ident(e.loc, e.span, flat)
        return replace(e, parts=(flat,) + parts[k + 1:])

    def operator(self, op: str, env: Env, locals_: frozenset, loc) -> str:
        if op in locals_ or op.startswith("`"):
            return op
        if op[0].isalpha():  # `M.+`, `i32.+`
            path, sym = op.split(".")[:-1], op.rsplit(".", 1)[1]
            if env.find("modules", path[0]) is None:
                return op
            m = self.module_path(tuple(path), env, loc)
            if isinstance(m, PrimModule):
                return f"{m.name}.{sym}"
            found = m.values.get(sym) if isinstance(m, Struct) else None
            if found is None:
                raise CompileError(f'Unknown operator "{op}": module {".".join(path)} does not define "{sym}".', loc)
            return found if isinstance(found, str) else ".".join(found)
        found = env.find("values", op)
        if isinstance(found, tuple):  # an opened prelude module's: `i32.+`
            return ".".join(found)
        return found if isinstance(found, str) else op

    def exp(self, e, env: Env, locals_: frozenset):
        if isinstance(e, P.Ident):
            if e.name in locals_:
                return e
            return self.value(e.name, env, e.loc, e.span) or e
        if isinstance(e, P.QualIdent):
            return self.qualified(e, env, locals_)
        if isinstance(e, P.LocalOpenE):
            m = self.module_path(e.module, env, e.loc)
            inner = Env(env)
            if isinstance(m, Struct):
                inner.open(m)
            elif isinstance(m, PrimModule):
                inner.prims.append(m.name)
            else:
                raise CompileError("Only a module, not a parametric one, can be opened.", e.loc)
            shadowed = {n for n in locals_ if n in inner.values or n in inner.types
                        or any(prelude_has(mod, n) for mod in inner.prims)}
            return self.exp(e.body, inner, locals_ - shadowed)
        if isinstance(e, (P.BinOpE, P.SectionE)):
            e = replace(e, op=self.operator(e.op, env, locals_, e.loc))
        if isinstance(e, P.LetE):
            bound = locals_ | {n for n, _ in e.sizes} | {n for n, _ in P.pat_names(e.pat)}
            return replace(e, pat=self.pattern(e.pat, env, locals_), rhs=self.exp(e.rhs, env, locals_),
                           body=self.exp(e.body, env, bound))
        if isinstance(e, P.LetFunE):
            inside = locals_ | {n for n, _ in e.sizes} | {n for p in e.params for n, _ in P.pat_names(p)}
            outer_types = self.type_params
            self.type_params = outer_types | {n for n, _ in e.types}
            try:
                params = [self.pattern(p, env, inside) for p in e.params]
                ret = self.type(e.ret, env, inside) if e.ret is not None else None
                rhs = self.exp(e.rhs, env, inside)
            finally:
                self.type_params = outer_types
            return replace(e, params=params, ret=ret, rhs=rhs, body=self.exp(e.body, env, locals_ | {e.name}))
        if isinstance(e, P.LambdaE):
            inside = locals_ | {n for p in e.params for n, _ in P.pat_names(p)}
            return replace(e, params=[self.pattern(p, env, inside) for p in e.params],
                           ret=self.type(e.ret, env, inside) if e.ret is not None else None,
                           body=self.exp(e.body, env, inside))
        if isinstance(e, P.LoopE):
            bound = locals_ | {n for n, _ in P.pat_names(e.pat)}
            form = e.form
            if isinstance(form, P.ForUpto):
                form = replace(form, bound=self.exp(form.bound, env, locals_))
                bound = bound | {form.name}
            elif isinstance(form, P.ForIn):
                form = P.ForIn(self.pattern(form.pat, env, locals_), self.exp(form.arr, env, locals_))
                bound = bound | {n for n, _ in P.pat_names(form.pat)}
            else:
                form = P.While(self.exp(form.cond, env, bound))
            init = self.exp(e.init, env, locals_) if e.init is not None else None
            return replace(e, pat=self.pattern(e.pat, env, locals_), init=init, form=form,
                           body=self.exp(e.body, env, bound))
        if isinstance(e, P.MatchE):
            return replace(e, x=self.exp(e.x, env, locals_), cases=[
                replace(c, pat=self.pattern(c.pat, env, locals_),
                        body=self.exp(c.body, env, locals_ | {n for n, _ in P.pat_names(c.pat)})) for c in e.cases])
        if isinstance(e, (P.TypeExp, P.FunTypeExp)):
            return self.type(e, env, locals_)
        return self.children(e, env, locals_)

    def children(self, x, env: Env, locals_: frozenset):
        """x, a node with no binders of its own, with every expression and type inside it resolved."""
        return replace(x, **{f.name: self.inside(getattr(x, f.name), env, locals_)
                             for f in fields(x) if f.name not in ("loc", "span")})

    def inside(self, y, env: Env, locals_: frozenset):
        if isinstance(y, list):
            return [self.inside(z, env, locals_) for z in y]
        if isinstance(y, tuple):
            return tuple(self.inside(z, env, locals_) for z in y)
        if isinstance(y, (P.Node, P.TypeExp, P.FunTypeExp)):
            return self.exp(y, env, locals_)
        if is_dataclass(y) and not isinstance(y, (type, Loc)):
            return self.children(y, env, locals_)
        return y

    def pattern(self, p, env: Env, locals_: frozenset):
        """A pattern with the types written in it resolved (`locals_`: the sizes and type parameters in scope)."""
        if isinstance(p, P.PTyped):
            return replace(p, pat=self.pattern(p.pat, env, locals_), type=self.type(p.type, env, locals_))
        if isinstance(p, P.PTuple):
            return replace(p, elems=[self.pattern(x, env, locals_) for x in p.elems])
        if isinstance(p, P.PRecord):
            return replace(p, fields=[(n, loc, self.pattern(x, env, locals_)) for n, loc, x in p.fields])
        if isinstance(p, P.PConstr):
            return replace(p, args=[self.pattern(x, env, locals_) for x in p.args])
        return p

    def type(self, te, env: Env, locals_: frozenset):
        def one(t):
            if not isinstance(t, P.TypeExp):
                return t
            dims = [self.dim(d, env, locals_) for d in t.dims]
            args = [self.dim(d, env, locals_) for d in t.args]
            base = t.base
            if isinstance(base, str) and base not in self.type_params:  # (values and types: two namespaces)
                base = self.type_name(base, env, t.base_loc)
            return replace(t, dims=dims, args=args, base=base)
        return P.map_type(te, one)

    def dim(self, d, env: Env, locals_: frozenset):
        kind, v = d
        if kind == "name" and v not in locals_:
            found = env.find("values", v)
            return (kind, found) if isinstance(found, str) else d
        if kind == "exp":
            v = self.exp(v, env, locals_)
            return ("name", v.name) if isinstance(v, P.Ident) else (kind, v)
        return d

    def type_name(self, name: str, env: Env, loc) -> str:
        parts = tuple(name.split("."))
        if len(parts) == 1:
            found = env.find("types", name)
            return found if isinstance(found, str) else name
        m = self.module_path(parts[:-1], env, loc)
        if isinstance(m, PrimModule):
            if parts[-1] != "t":
                raise CompileError(f'Unknown type "{name}": module {m.name} defines one type, t.', loc)
            return m.name
        if not isinstance(m, Struct) or parts[-1] not in m.types:
            raise CompileError(f'Unknown type "{name}".', loc)
        return m.types[parts[-1]]


def prelude_has(mod: str, name: str) -> bool:
    """Whether the prelude module `mod` (i32, f64, ...) defines `name`, a value or an operator."""
    from incflat.ir.frontend.check.prelude import (ARITH_OPS, ARRAY_REDUCTIONS, EQ_OPS, INT_OPS, ORD_OPS,
                                                   prelude_lookup)
    if mod == "bool":
        return name in EQ_OPS or prelude_lookup((mod, name)) is not None
    if name in ARITH_OPS | ORD_OPS | EQ_OPS:
        return True
    if name in INT_OPS:
        return not mod.startswith("f")
    return prelude_lookup((mod, name)) is not None or name in ARRAY_REDUCTIONS
