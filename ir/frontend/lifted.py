"""Lifted type abbreviations (`type^ step_fn [n] = [n]i32 -> [n]i32`): a name for a type that may be a function
type, which incflat allows only as a parameter's annotation. Each use of the name is replaced by the abbreviation's
type, its size and type parameters by the use's size and type arguments, before checking; the abbreviations
themselves go. A use under array dimensions is refused (an array of functions), as is one with other than as many
size or type arguments."""

from __future__ import annotations

import dataclasses

from incflat.ir.errors import CompileError
from incflat.ir.frontend.syntax import TypeDecl, TypeExp, map_type


def expand_lifted_types(decls) -> tuple:
    lifted: dict[str, TypeDecl] = {}
    out = []
    for d in decls:
        d = _expand(d, lifted)
        if isinstance(d, TypeDecl) and d.lifted:
            lifted[d.name] = d
        else:
            out.append(d)
    return tuple(out)


def _expand(node, lifted: dict):
    if not lifted:
        return node
    if isinstance(node, TypeExp) and isinstance(node.base, str) and node.base in lifted:
        return _instantiate(node, lifted[node.base])
    if isinstance(node, list):
        return [_expand(x, lifted) for x in node]
    if isinstance(node, tuple):
        return tuple(_expand(x, lifted) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            new = _expand(value, lifted)
            if new is not value:
                changes[f.name] = new
        return dataclasses.replace(node, **changes) if changes else node
    return node


def _instantiate(use: TypeExp, decl: TypeDecl):
    if use.dims:
        raise CompileError(f'An array of "{decl.name}", a lifted type (type^), is not supported by incflat.', use.loc)
    if len(use.args) != len(decl.size_params):
        raise CompileError(f'"{decl.name}" takes {len(decl.size_params)} size arguments, but is given '
                           f"{len(use.args)}.", use.loc)
    if len(use.type_args) != len(decl.type_params):
        raise CompileError(f'"{decl.name}" takes {len(decl.type_params)} type arguments, but is given '
                           f"{len(use.type_args)}.", use.loc)
    sizes = {name: arg for (name, _), arg in zip(decl.size_params, use.args)}
    types = {name: arg for (name, _), arg in zip(decl.type_params, use.type_args)}

    def given(dims: list) -> list:
        return [sizes.get(v, (k, v)) if k == "name" else (k, v) for k, v in dims]

    def one(t: TypeExp):
        t = dataclasses.replace(t, dims=given(t.dims), args=given(t.args))
        if not (isinstance(t.base, str) and t.base in types):
            return t
        arg = types[t.base]
        if not isinstance(arg, TypeExp):  # a function type
            if t.dims:
                raise CompileError(f'An array of functions (of type parameter "{t.base}" of "{decl.name}") is not '
                                   f'supported by incflat.', use.loc)
            return arg
        return dataclasses.replace(arg, dims=t.dims + arg.dims, unique=t.unique or arg.unique)
    expanded = map_type(decl.type, one)
    # errors point at the use, which may mark the type unique (`*`)
    return dataclasses.replace(expanded, loc=use.loc, unique=expanded.unique or use.unique)
