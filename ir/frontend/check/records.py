"""Records: record expressions, field access, `with` updates of fields, and record patterns.

A mixin of `Checker` (ir.frontend.check.checker). A record is a `Tuple` with field names (ir.types), so it is held
like a tuple: one IR atom per leaf, its fields in Futhark's order (numeric names first, then alphabetical),
and a field is picked statically. Tuples are the records whose fields are 0, 1, ...: `t.0`, `{0 = a, 1 = b}`
and `{0 = x, 1 = y}` as a pattern work on them too.
"""

from incflat.ir.frontend import syntax as P
from incflat.ir.source import Loc
from incflat.ir.frontend.check.infer import is_sum, prune, unify
from incflat.ir.frontend.check.values import FunRecord, FunV, V, record_v, split_tuple
from incflat.ir.types import Tuple, field_order


class Records:
    """Mixin of Checker: record literals, field access and update, record patterns."""

    def field_index(self, t, name, loc, purpose=""):
        """The position of field `name` in the tuple or record type t."""
        if name in t.names:
            return t.names.index(name)
        if t.is_record:
            raise self.err(f'The record of type {self.show(t)} has no field "{name}"{purpose}.', loc)
        raise self.err(f"The tuple of type {self.show(t)} has no field {name}{purpose} (its fields are 0 to "
                       f"{len(t.elems) - 1}).", loc)

    # ---- expressions

    def lower_RecordE(self, e, env):
        fields = [(name, self.lower(x, env)) for name, _, x in e.fields]
        if any(isinstance(v, FunV) for _, v in fields):  # (a record that holds a function)
            fields = sorted(fields, key=lambda f: field_order(f[0]))
            return FunRecord(tuple(n for n, _ in fields), tuple(v for _, v in fields), e.loc)
        return record_v(fields)

    def project(self, x: V, name, loc) -> V:
        """Field `name` of the value x."""
        if isinstance(x, FunRecord):
            if name not in x.names:
                raise self.err(f'This tuple (or record) has no field {name} (its fields are '
                               f'{", ".join(x.names)}).', loc)
            return x.parts[x.names.index(name)]
        t = prune(x.t)
        if not isinstance(t, Tuple) or is_sum(t):
            raise self.err(f'Cannot take the field {name} of a value of type {self.show(t)}: only records and '
                           f'tuples have fields.', loc)
        return split_tuple(x)[self.field_index(t, name, loc)]

    def lower_ProjE(self, e, env):
        return self.fields_of(e.x, [(e.field_, e.field_loc)], env)

    def lower_field_path(self, e: P.QualIdent, env):
        """`r.a.b` (lexed as one qualified name): fields of the value r."""
        col = e.loc.col + len(e.parts[0]) + 1
        head = P.Ident(e.loc, (e.span[0], e.span[0] + len(e.parts[0])), e.parts[0])
        path = []
        for name in e.parts[1:]:
            path.append((name, Loc(e.loc.file, e.loc.line, col)))
            col += len(name) + 1
        return self.fields_of(head, path, env)

    def fields_of(self, base, path, env) -> V:
        """The field `path` (names with their Locs) of the value of base. A variable's field is checked alone for
        a use after consumption, as Futhark tracks a record's fields apart (`(x with 0 = ...) with 1 = (x.1 ...)`
        after x.0 was updated in place)."""
        whole = isinstance(base, P.Ident) and isinstance(env.get(base.name), V)
        x = env[base.name] if whole else self.lower(base, env)
        for name, loc in path:
            if isinstance(x, FunV) and not isinstance(x, FunRecord):
                raise self.not_a_value(x, base.loc, "a tuple or record")
            x = self.project(x, name, loc)
        if whole:
            self.check_use(x, base.loc, base.name)
        return x

    def lower_RecordUpdateE(self, e, env):
        rec = self.lower_val(e.rec, env)
        new = self.lower_val(e.value, env, "the new value of a field")
        return self.update_field(rec, e.path, new, e.value.loc)

    def update_field(self, rec: V, path, new: V, value_loc) -> V:
        """rec with the field at path (a list of (name, Loc)) replaced by new, which must have its type (its
        sizes may differ). A functional update: nothing is consumed."""
        (name, loc), rest = path[0], path[1:]
        t = prune(rec.t)
        if not isinstance(t, Tuple) or is_sum(t):
            raise self.err(f'Cannot update the field {name} of a value of type {self.show(t)} with "with": only '
                           f'records and tuples have fields.', loc)
        k = self.field_index(t, name, loc, " to update")
        fields = split_tuple(rec)
        if rest:
            fields[k] = self.update_field(fields[k], rest, new, value_loc)
        else:
            if unify(fields[k].t, new.t) == "type":  # as in Futhark, the sizes may change
                raise self.err(f'The new value of the field {name} has type {self.show(new.t)}, but the field has '
                               f"type {self.show(fields[k].t)} (an update cannot change a field's type).", value_loc)
            fields[k] = new
        return V(t.with_elems(f.t for f in fields), tuple(a for f in fields for a in f.atoms))

    # ---- patterns

    def record_pattern_fields(self, pat: P.PRecord, t, what) -> list:
        """The position in type t of each field of the record pattern pat (in the pattern's order); an error
        unless t (None: a function) is a record or tuple with exactly those fields."""
        written = "{" + ", ".join(sorted((name for name, _, _ in pat.fields), key=field_order)) + "}"
        if not isinstance(t, Tuple) or is_sum(t):
            shown = "is a function" if t is None else f"has type {self.show(t)}"
            raise self.err(f"This record pattern has the fields {written}, but the {what} {shown}.", pat.loc)
        for name, loc, _ in pat.fields:
            if name not in t.names:
                raise self.err(f'This record pattern has the field "{name}", but the {what} has type '
                               f'{self.show(t)}, which has no such field.', loc)
        missing = [name for name in t.names if name not in {n for n, _, _ in pat.fields}]
        if missing:
            raise self.err(f"This record pattern has the fields {written}, but the {what} has type {self.show(t)}; "
                           f'a record pattern names every field (missing: {", ".join(missing)}).', pat.loc)
        return [t.names.index(name) for name, _, _ in pat.fields]
