"""Whether the cases of a `match` cover every value of its type, and if not, a value that none matches.

Patterns are taken in a shape of their own (`shape`): WILD, which matches anything (a name, `_`), or (key,
subpatterns) for a value made by one of its type's constructors: a sum type's constructors ("#name", their
payloads), a tuple's or record's one ("()", its fields in the type's order), bool's two (False, True, none), and
the literals of a numeric type (the value, none), which never cover it (an example of a value no case matches is
then a small natural number that no literal is). The search is the classic one for pattern matrices (as in
Maranget, "Warnings for pattern matching", 2007): pure functions on patterns and checker types.
"""

from typing import Optional

from incflat.ir.frontend import syntax as P
from incflat.ir.frontend.check.infer import is_sum, prune, sum_constructors
from incflat.ir.types import BOOL, Tuple

WILD = None
TUPLE = "()"


def shape(pat, t):
    """The shape of a pattern that was checked against type t."""
    t = prune(t)
    if isinstance(pat, P.PTyped):
        return shape(pat.pat, t)
    if isinstance(pat, P.PLit):
        return (pat.lit.value, [])
    if isinstance(pat, P.PTuple):
        return (TUPLE, [shape(p, et) for p, et in zip(pat.elems, t.elems)])
    if isinstance(pat, P.PRecord):
        by_name = {name: p for name, _, p in pat.fields}
        return (TUPLE, [shape(by_name[name], et) for name, et in zip(t.names, t.elems)])
    if isinstance(pat, P.PConstr):
        payload = dict(sum_constructors(t))[pat.name]
        return ("#" + pat.name, [shape(p, pt) for p, pt in zip(pat.args, payload)])
    return WILD


def signature(t) -> Optional[list]:
    """The (key, field types) of every constructor of type t, or None for a type with too many to list."""
    t = prune(t)
    if is_sum(t):
        return [("#" + name, list(payload)) for name, payload in sum_constructors(t)]
    if isinstance(t, Tuple):
        return [(TUPLE, list(t.elems))]
    if t == BOOL:
        return [(False, []), (True, [])]
    return None


def unmatched(rows: list, types: list) -> Optional[list]:
    """Values (one pattern per column, WILD for any) that no row of patterns matches, or None if every value
    has a row."""
    if not types:
        return None if rows else []
    first, rest = types[0], types[1:]
    constructors = signature(first)
    heads = {row[0][0] for row in rows if row[0] is not WILD}
    if constructors is not None and all(key in heads for key, _ in constructors):
        for key, fields in constructors:
            inner = [_specialise(row[0], key, len(fields)) + row[1:] for row in rows
                     if row[0] is WILD or row[0][0] == key]
            found = unmatched(inner, fields + rest)
            if found is not None:
                return [(key, found[:len(fields)])] + found[len(fields):]
        return None
    found = unmatched([row[1:] for row in rows if row[0] is WILD], rest)
    if found is None:
        return None
    if constructors is None:  # a number: one that no literal here is, if there are any
        return [(next(k for k in range(len(heads) + 1) if k not in heads), []) if heads else WILD] + found
    key, fields = next((key, fields) for key, fields in constructors if key not in heads)
    return [(key, [WILD] * len(fields))] + found


def _specialise(p, key, arity) -> list:
    return [WILD] * arity if p is WILD else list(p[1])


def show_value(p, t) -> str:
    """A pattern of type t as Futhark writes it: `#node _ (#leaf, true)`, `{x = 1, y = _}`."""
    t = prune(t)
    if p is WILD:
        return "_"
    key, args = p
    if is_sum(t):
        payload = dict(sum_constructors(t))[key[1:]]
        return " ".join([key] + [_bracketed(show_value(a, pt)) for a, pt in zip(args, payload)])
    if isinstance(t, Tuple) and t.is_record:
        return "{" + ", ".join(f"{name} = {show_value(a, ft)}" for name, a, ft in zip(t.names, args, t.elems)) + "}"
    if isinstance(t, Tuple):
        return "(" + ", ".join(show_value(a, et) for a, et in zip(args, t.elems)) + ")"
    if t == BOOL:
        return "true" if key else "false"
    return str(key)


def _bracketed(text: str) -> str:
    return f"({text})" if " " in text and text[0] not in "({" else text
