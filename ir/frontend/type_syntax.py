"""The parse tree's types as syntax (a mixin of ir/frontend/parse.py's ToSyntax): type names and applications,
arrays, tuples, records, sum types, function types and existential sizes (`?[n].t`)."""

import re
from dataclasses import fields, is_dataclass, replace

from incflat.ir.errors import CompileError
from incflat.ir.frontend.operators import fin
from incflat.ir.frontend.syntax import FunTypeExp, Ident, Lit, RecordTypeExp, SumTypeExp, TypeExp, map_type
from incflat.ir.source import Loc


def _idents(node) -> set:
    """The names an expression mentions."""
    if isinstance(node, Ident):
        return {node.name}
    if isinstance(node, (list, tuple)):
        return set().union(*(_idents(x) for x in node)) if node else set()
    if is_dataclass(node) and not isinstance(node, (type, Loc)):
        return set().union(*(_idents(getattr(node, f.name)) for f in fields(node) if f.name not in ("loc", "span")))
    return set()



class TypeSyntax:
    """Mixin of ToSyntax: what the grammar's type rules give."""

    def unique_type(self, c):
        t = c[1]
        t.unique = True
        return t

    def existential_type(self, c):
        """`?[n][m].t`: t with the sizes n and m unknown, as `[]` (each its own: where two of t's arrays share
        one, incflat checks that they agree where they are used together, at run time)."""
        names = set(re.findall(r"\[([^\]]+)\]", str(c[0])))

        def unknown(d):
            kind, v = d
            if (kind == "name" and v in names) or (kind == "exp" and names & _idents(v)):
                return ("any", None)
            return d
        return map_type(c[1], lambda t: replace(t, dims=[unknown(d) for d in t.dims],
                                                args=[unknown(d) for d in t.args]))

    def fun_type(self, c):
        return FunTypeExp(c[0], c[2], c[0].loc)

    def named_fun_type(self, c):
        """`(x: t) -> u`: the parameter's name may be a size of u (in a definition's type, `def f : (n: i64) ->
        [n]i32 = ...`)."""
        return FunTypeExp(c[3], c[6], self.loc(c[0]), name=str(c[1]))

    def tbase(self, c):
        *dims, t = c
        if not dims:
            return t
        if isinstance(t, FunTypeExp):
            raise CompileError("An array cannot hold functions (Futhark does not allow it either).", dims[0][2])
        return TypeExp([(k, v) for k, v, _ in dims] + t.dims, t.base, dims[0][2], t.base_loc, t.args,
                       t.unique, t.type_args)

    def type(self, c):
        return c[0]

    def type_name(self, c):
        name, *args = c  # (a module's type, `M.t`, is resolved by ir/frontend/modules.py)
        return TypeExp([], str(name), self.loc(name), self.loc(name), [(k, v) for k, v, _ in args])

    def type_app(self, c):
        """`vector f32`: a parametric type applied (the checker refuses it where it is used; a parametric
        module's body is only checked where the module is applied)."""
        name, *rest = c
        args = [x for x in rest if isinstance(x, tuple)]
        te = TypeExp([], str(name), self.loc(name), self.loc(name), [(k, v) for k, v, _ in args])
        te.type_args = [x for x in rest if not isinstance(x, tuple)]
        return te

    def type_arg(self, c):
        tok = c[0]
        if tok.type in ("NAME", "QUALNAME"):
            return TypeExp([], str(tok), self.loc(tok), self.loc(tok))
        if tok.type == "LBRACE":
            return self.record_type(c)
        types = [x for x in c if isinstance(x, TypeExp)]
        return types[0] if len(types) == 1 else TypeExp([], types, self.loc(tok), self.loc(tok))

    def tuple_type(self, c):
        elems = [x for x in c[1:] if isinstance(x, (TypeExp, FunTypeExp))]
        return TypeExp([], elems, self.loc(c[0]), self.loc(c[0]))

    def paren_type(self, c):
        return c[1]

    def unit_type(self, c):
        return TypeExp([], [], self.loc(c[0]), self.loc(c[0]))

    def record_type(self, c):
        fields = self.distinct_fields([x for x in c[1:] if isinstance(x, tuple)], "record type")
        return TypeExp([], RecordTypeExp([(name, t) for name, _, t in fields]), self.loc(c[0]), self.loc(c[0]))

    def sum_type(self, c):
        """`#a | #b t`, and `[n]#a | #b` (an array of it): the constructors, each named once (as in Futhark)."""
        first = next(i for i, x in enumerate(c) if isinstance(x[2], list))  # dimensions end in a Loc, clauses a list
        dims, rest = c[:first], c[first:]
        for bar in rest[1::2]:
            if str(bar) != "|":
                self.err(f'Syntax error: unexpected "{bar}" in a sum type; its constructors are separated by "|".',
                         bar)
        clauses = rest[0::2]
        seen = {}
        for name, loc, _ in clauses:
            if name in seen:
                raise CompileError(f"The constructor #{name} appears twice in this sum type (first at line "
                                   f"{seen[name].line}, column {seen[name].col}).", loc)
            seen[name] = loc
        sum_type = TypeExp([], SumTypeExp(clauses), clauses[0][1], clauses[0][1])
        return self.tbase(dims + [sum_type])

    def sum_clause(self, c):
        tok, *payload = c
        return (str(tok)[1:], self.loc(tok), payload)

    def empty_record_type(self, c):
        self.err("The empty record type {} is not supported by incflat.", c[0])

    def field_type(self, c):
        tok, _colon, t = c
        return (str(tok), self.loc(tok), t)

    def dim_any(self, c):
        return ("any", None, self.loc(c[0]))

    def dim_exp(self, c):
        e = fin(c[1])
        if isinstance(e, Ident):
            return ("name", e.name, self.loc(c[0]))
        if isinstance(e, Lit) and e.kind == "int":
            if e.suffix is not None and e.suffix != "i64":
                raise CompileError(f'A size must have type i64, but this literal has type {e.suffix}.', e.loc)
            return ("const", e.value, self.loc(c[0]))
        return ("exp", e, self.loc(c[0]))
