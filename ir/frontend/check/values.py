"""The values the checker works with, which exist only while checking.

`V` is a value: its checker type and the flat list of IR atoms holding its leaves. Function values
(`FunV`: `Closure`, `Named`, `Section`, `Partial`) are inlined when applied; `Arg` is an argument
with its location; `FunSig` is the signature of a checked top-level function. Plain data, shared by
every part of the checker.
"""

from dataclasses import dataclass

from incflat.ir import source as S
from incflat.ir.frontend.check.infer import arr_of, nleaves, prune
from incflat.ir.types import Tuple, record_type


# ---------------------------------------------------------------- values

@dataclass
class V:
    """A value: its checker type and the IR atoms of its leaves."""
    t: object
    atoms: tuple

    @property
    def atom(self):
        assert len(self.atoms) == 1, self
        return self.atoms[0]


def atom_v(a) -> V:
    return V(a.type, (a,))


def tuple_v(vs) -> V:
    return V(Tuple(tuple(v.t for v in vs)), tuple(a for v in vs for a in v.atoms))


def record_v(fields) -> V:
    """The record of (name, V) pairs given in any order (a tuple when the names are 0, 1, ...)."""
    t = record_type([(name, v.t) for name, v in fields])
    by_name = dict(fields)
    return V(t, tuple(a for name in t.names for a in by_name[name].atoms))


def split_tuple(v: V) -> list:
    """The component values of a tuple or record value (the fields in their order)."""
    out, i = [], 0
    for t in prune(v.t).elems:
        k = nleaves(t)
        out.append(V(t, v.atoms[i:i + k]))
        i += k
    return out


def unzip_v(v: V) -> list:
    """The component arrays of an array of tuples or records."""
    t = v.t
    out, i = [], 0
    for c in t.elem.elems:
        k = nleaves(c)
        out.append(V(arr_of(c, t.shape), v.atoms[i:i + k]))
        i += k
    return out


class FunV:
    """A function value (checker only): applying it inlines it."""
    loc = None


@dataclass(eq=False)
class Closure(FunV):
    """A lambda or local function: syntax plus the environment it was defined in."""
    params: list  # patterns
    ret: object  # TypeExp or None
    body: object
    env: dict
    loc: S.Loc
    kind: str = "lambda"  # 'lambda', 'local' (let f x = ...) or 'inline' (a top-level def)
    name: str = ""
    sizes: tuple = ()  # size parameters, bound from the arguments' shapes
    types: tuple = ()  # type parameters ('t), bound from the arguments' types


@dataclass(eq=False)
class Named(FunV):
    """A top-level function, a builtin or a prelude function, applied to `pre` so far."""
    name: str
    kind: str  # 'user', 'builtin' or 'prelude'
    loc: S.Loc
    pre: tuple = ()


@dataclass(eq=False)
class Section(FunV):
    op: str
    op_loc: S.Loc
    given: object  # V or None
    side: str  # 'left' (x op), 'right' (op y) or 'none' (op)
    loc: S.Loc
    pre: tuple = ()


@dataclass(eq=False)
class Partial(FunV):
    """A closure applied to fewer arguments than it takes."""
    fn: Closure
    pre: tuple
    loc: S.Loc


@dataclass(eq=False)
class FunRecord(FunV):
    """A tuple or record that holds a function (`(\\x -> x + 1, 10)`, `{f = add, a = 42}`), as Futhark's
    defunctionalisation allows: its fields are picked, matched by patterns and passed to functions that are
    inlined, but it is no value of the IR (no array, loop parameter or branch of `if` holds one)."""
    names: tuple  # the field names, in the order of a record type's fields (0, 1, ... for a tuple)
    parts: tuple  # V or FunV per field
    loc: S.Loc = None


@dataclass(eq=False)
class Ascribed(FunV):
    """A function value bound to a parameter whose function type is written (`g: f64 -> [n]f64`): applying it
    first unifies each argument with the type written for it, so that `g 0` passes an f64, and the result with
    the result's. The types are the element types only (every size `[]`): sizes are not checked here."""
    fn: FunV
    ptypes: tuple  # a checker type per parameter, or None for a parameter that is itself a function
    ret: object  # the result's checker type, or None where it is a function
    loc: S.Loc
    pre: tuple = ()


@dataclass
class Arg:
    val: object  # V or FunV
    loc: S.Loc


@dataclass
class FunSig:
    name: str
    size_params: tuple
    params: tuple  # tuple[Var]: the IR parameters
    ptypes: tuple  # the checker type of each source parameter
    ret: object  # checker type; dims are ints, parameter names or size terms (op, x, y)
    loc: S.Loc
    inline: bool  # the result has an existential size: calls are inlined
    decl: object
    uniques: tuple = ()  # for each source parameter: declared unique (*), so consumed by a call
