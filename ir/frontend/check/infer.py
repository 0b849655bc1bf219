"""Type inference: literal type variables, the checker's types, unification and zonking.

`TV` is the type of an unsuffixed literal until unification decides it; `SumTV` that of a constructor
whose sum type is not known yet; `TArr` is an array of tuples or records; a sum type is a record with
fields of its own (`sum_of`). The shape helpers (`arr_of`, `shape_of`, `leaves`, `map_dims`...) work on
any checker type; `unify` and `require` resolve literal type variables; `zonk` replaces those left in an
IR value by the types they stand for. Pure functions on types, with no checker state, so they are separate
from the `Checker` and its mixins.
"""

import dataclasses
from dataclasses import dataclass
from typing import Optional

from incflat.ir import source as S
from incflat.ir.frontend.check.prelude import INT_RANGE
from incflat.ir.types import I64, Array, Scalar, Tuple


# ---------------------------------------------------------------- literal type variables

class TV:
    """The type of an unsuffixed literal, until the context decides it; or of an entry point's parameter whose
    type is not written (kind 'unknown'), until its uses decide it.

    kind: 'num' (any numeric type), 'int' (any integer type), 'float' (f32 or f64), 'unknown' (any type) or
    'param' (a type parameter 't of a function being inlined: any type, arrays and tuples too)."""
    __slots__ = ("kind", "ref")

    def __init__(self, kind):
        self.kind = kind
        self.ref = None

    def __repr__(self):
        return f"TV({self.kind}->{self.ref})"


class SumTV(TV):
    """The type of a constructor applied where its sum type is not known yet (`if c then #ten else #twenty`): the
    constructors seen so far (name -> payload types) and where they were made (`origins`: (key, Loc) pairs,
    ir/frontend/check/sums.py). Its values are placeholders, so unifying it with a sum type does not bind it: it
    raises SumResolved, and the function is checked again with the constructors' type known."""
    __slots__ = ("constructors", "origins")

    def __init__(self, constructors, origins):
        super().__init__("sum")
        self.constructors, self.origins = constructors, origins


class SumResolved(Exception):
    """An open constructor type (SumTV) met the sum type t that it must be."""

    def __init__(self, tv, t):
        super().__init__()
        self.tv, self.t = tv, t


def prune(t):
    while isinstance(t, TV) and t.ref is not None:
        t = t.ref
    return t


class Refine(Exception):
    """A parameter of unknown type is used as an array (`dims` more dimensions) or a tuple (`elems`
    components): its type is refined and the function checked again."""

    def __init__(self, tv, dims=0, elems=0, names=None):
        super().__init__()
        self.tv, self.dims, self.elems, self.names = tv, dims, elems, names  # names: a record's fields


def refine_as(tv, other):
    """Raise Refine for an unknown-typed parameter's type variable that meets a non-scalar type."""
    if isinstance(other, Tuple):
        raise Refine(tv, elems=len(other.elems), names=other.names if other.is_record else None)
    raise Refine(tv, dims=len(other.shape))


def type_param_tv(t):
    """The type variable of a type parameter ('t) not bound yet, or None."""
    t = prune(t)
    return t if isinstance(t, TV) and t.kind == "param" else None


def unknown_tv(t):
    """The type variable of a parameter whose type is still unknown, or None."""
    t = prune(t)
    return t if isinstance(t, TV) and t.kind == "unknown" else None


def kind_accepts(kind, s: Scalar) -> bool:
    if kind == "unknown":
        return True
    if kind == "num":
        return s.is_int or s.is_float
    if kind == "int":
        return s.is_int
    if kind == "float":
        return s.is_float
    return False


def kind_meet(a, b):
    if a == b:
        return a
    if a == "unknown":
        return b
    if b == "unknown":
        return a
    if a == "num":
        return b
    if b == "num":
        return a
    return None


KIND_DEFAULT = {"num": Scalar("i32"), "int": Scalar("i32"), "float": Scalar("f64")}
KIND_TEXT = {"num": "integer literal", "int": "integer literal", "float": "decimal literal", "unknown": "unknown type", "param": "type parameter"}


# ---------------------------------------------------------------- checker types

@dataclass(frozen=True)
class TArr:
    """An array of tuples or records, `[n](a, b)`, `[n]{x: a}`; held as one IR array per leaf of the element
    type."""
    shape: tuple
    elem: Tuple


# A sum type `#a | #b i32 | #c f32 bool` is the record of its tag ("#": the constructor's position among them
# sorted by name, as in Futhark) and each constructor's payload, a tuple ("#a": (), "#b": (i32,), ...): a value
# holds the payloads of the other constructors too, blank (0, false, empty or zero arrays), so that a sum has
# leaves like any record, and arrays of sums are arrays of those leaves.
SUM_TAG = "#"


def sum_of(constructors) -> Tuple:
    """The sum type of (name, payload types) pairs, names distinct."""
    constructors = sorted(constructors, key=lambda c: c[0])
    tag = Scalar("i8") if len(constructors) <= 128 else Scalar("i32")
    return Tuple((tag,) + tuple(Tuple(tuple(ts)) for _, ts in constructors),
                 (SUM_TAG,) + tuple(SUM_TAG + name for name, _ in constructors))


def is_sum(t) -> bool:
    t = prune(t)
    return isinstance(t, Tuple) and t.fields is not None and t.fields[0] == SUM_TAG


def sum_constructors(t) -> list:
    """The (name, payload types) pairs of a sum type, in the order of their tags."""
    t = prune(t)
    return [(name[1:], payload.elems) for name, payload in zip(t.fields[1:], t.elems[1:])]


def has_sum(t) -> bool:
    """Whether a sum type, known or not, is part of t."""
    t = prune(t)
    if isinstance(t, SumTV) or is_sum(t):
        return True
    if isinstance(t, Tuple):
        return any(has_sum(e) for e in t.elems)
    return isinstance(t, (Array, TArr)) and has_sum(t.elem)


def is_scalar(t):
    return isinstance(prune(t), (Scalar, TV))


def is_arr(t):
    return isinstance(t, (Array, TArr))


def arr_of(t, shape):
    """`[shape]t` for any checker type t."""
    shape = tuple(shape)
    if not shape:
        return t
    t = prune(t)
    if isinstance(t, Array):
        return Array(t.elem, shape + t.shape)
    if isinstance(t, TArr):
        return TArr(shape + t.shape, t.elem)
    if isinstance(t, Tuple):
        return TArr(shape, t)
    return Array(t, shape)


def shape_of(t):
    return t.shape if is_arr(t) else ()


def rank_of(t):
    return len(shape_of(t))


def drop_dims(t, k):
    """The type of an element k dimensions in."""
    if isinstance(t, Array):
        return arr_of(t.elem, t.shape[k:])
    return arr_of(t.elem, t.shape[k:])


def row_type(t):
    return drop_dims(t, 1)


def leaves(t) -> list:
    """The leaf types of a checker type: scalars and arrays of scalars, left to right."""
    t = prune(t)
    if isinstance(t, Tuple):
        return [x for e in t.elems for x in leaves(e)]
    if isinstance(t, TArr):
        return [arr_of(x, t.shape) for x in leaves(t.elem)]
    return [t]


def nleaves(t) -> int:
    t = prune(t)
    if isinstance(t, Tuple):
        return sum(nleaves(e) for e in t.elems)
    if isinstance(t, TArr):
        return nleaves(t.elem)
    return 1


def map_dims(t, f):
    """t with every dimension d replaced by f(d)."""
    t = prune(t)
    if isinstance(t, Array):
        return Array(t.elem, tuple(f(d) for d in t.shape))
    if isinstance(t, TArr):
        return TArr(tuple(f(d) for d in t.shape), map_dims(t.elem, f))
    if isinstance(t, Tuple):
        return t.with_elems(map_dims(e, f) for e in t.elems)
    return t


def _worse(a, b):
    if a == "type" or b == "type":
        return "type"
    return a or b


# Said where two sizes that differ print alike ([?] and [?]).
UNKNOWN_SIZES_NOTE = (" (The two sizes are not known to be equal: they are unknown sizes, or sizes computed at run "
                      "time. If they are equal, give one the other's size with :>, which checks it at run time.)")


def unify(a, b) -> Optional[str]:
    """Make a and b equal by resolving literal type variables. None on success, 'type' for
    different types, 'size' for the same type with different sizes. A None dimension (`[]` in an
    annotation) matches any size. Unification goes on after a size mismatch, so that literal types
    are still resolved."""
    a, b = prune(a), prune(b)
    if a is b:
        return None
    if isinstance(a, SumTV) or isinstance(b, SumTV):
        open_sum, other = (a, b) if isinstance(a, SumTV) else (b, a)
        if not (isinstance(other, TV) and other.kind == "param"):
            return _unify_open_sum(open_sum, other)
    if isinstance(a, TV) and isinstance(b, TV):
        if a.kind == "param" or b.kind == "param":
            tv, other = (a, b) if a.kind == "param" else (b, a)
            tv.ref = other
            return None
        k = kind_meet(a.kind, b.kind)
        if k is None:
            return "type"
        b.kind = k
        a.ref = b
        return None
    if isinstance(a, TV) or isinstance(b, TV):
        tv, other = (a, b) if isinstance(a, TV) else (b, a)
        if tv.kind == "param":  # a type parameter stands for any type
            tv.ref = other
            return None
        if isinstance(other, Scalar) and kind_accepts(tv.kind, other):
            tv.ref = other
            return None
        if tv.kind == "unknown" and not is_sum(other):
            refine_as(tv, other)
        return "type"
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        return None if a.name == b.name else "type"
    if isinstance(a, Tuple) and isinstance(b, Tuple):
        if a.names != b.names:
            return "type"
        r = None
        for x, y in zip(a.elems, b.elems):
            r = _worse(r, unify(x, y))
        return r
    for x, y in ((a, b), (b, a)):  # an array of a type still unknown (an empty literal's) meets one of more dimensions
        if isinstance(x, (Array, TArr)) and isinstance(y, (Array, TArr)) and unknown_tv(x.elem) \
                and len(x.shape) < len(y.shape):
            r = unify(x.elem, drop_dims(y, len(x.shape)))  # (refines the unknown type as an array: Refine)
            for d, e in zip(x.shape, y.shape):
                if d is not None and e is not None and d != e:
                    r = _worse(r, "size")
            return r
    if isinstance(a, (Array, TArr)) and isinstance(b, (Array, TArr)) and (
            type(a) is type(b) or isinstance(prune(a.elem), SumTV) or isinstance(prune(b.elem), SumTV)):
        if len(a.shape) != len(b.shape):
            return "type"
        r = unify(a.elem, b.elem)
        for x, y in zip(a.shape, b.shape):
            if x is not None and y is not None and x != y:
                r = _worse(r, "size")
        return r
    return "type"


def _unify_open_sum(s: SumTV, other) -> Optional[str]:
    """Unify an open constructor type with another type: merge it with another open one; raise SumResolved for a
    sum type that has its constructors (with as many payloads, of types that unify)."""
    if isinstance(other, SumTV):
        known = other.constructors
    elif is_sum(other):
        known = dict(sum_constructors(other))
    else:
        return "type"
    r = None
    for name, payload in s.constructors.items():
        theirs = known.get(name)
        if theirs is None and isinstance(other, SumTV):
            continue
        if theirs is None or len(theirs) != len(payload):
            return "type"
        for x, y in zip(payload, theirs):
            r = _worse(r, unify(x, y))
    if r == "type":
        return r
    if not isinstance(other, SumTV):
        raise SumResolved(s, other)  # a size that differs is found when the constructor is checked again
    other.constructors = {**s.constructors, **other.constructors}
    other.origins = s.origins + other.origins
    s.ref = other
    return r


def require(t, cls) -> bool:
    """Constrain a scalar type to a class: 'num', 'int', 'float', 'bool' or 'prim'."""
    t = prune(t)
    if isinstance(t, SumTV):
        return False
    if isinstance(t, TV):
        if cls == "prim":
            return True
        if cls == "bool":
            if t.kind == "unknown":
                t.ref = Scalar("bool")
                return True
            return False
        k = kind_meet(t.kind, cls)
        if k is None:
            return False
        t.kind = k
        return True
    if not isinstance(t, Scalar):
        return False
    return {"num": t.is_int or t.is_float, "int": t.is_int, "float": t.is_float,
            "bool": t.name == "bool", "prim": True}[cls]


# ---------------------------------------------------------------- zonking

def resolve_scalar(t):
    t = prune(t)
    if isinstance(t, TV):
        t.ref = KIND_DEFAULT[t.kind]
        return t.ref
    return t


def coerce_value(v, t: Scalar):
    if t.name == "bool":
        return bool(v)
    if t.is_float:
        return float(v)
    v = int(v)
    if not t.is_signed and v < 0:
        v %= 2 ** INT_RANGE[t.name][1].bit_length()
    return v


_FIELDS = {}
DEFERRED_TO_I64 = "i64.(integer type to be known)"  # an index of a literal type's conversion (Checker.to_i64)


def zonk(x):
    """Replace every literal type variable in an IR value by the type it stands for (objects without
    any are returned as they are)."""
    if isinstance(x, TV):
        return resolve_scalar(x)
    if isinstance(x, (Scalar, str, int, float, bool, type(None), S.Loc)):
        return x
    if isinstance(x, tuple):
        ys = tuple(zonk(y) for y in x)
        return x if all(a is b for a, b in zip(ys, x)) else ys
    if isinstance(x, Array):
        e = zonk(x.elem)
        return x if e is x.elem else Array(e, x.shape)
    if isinstance(x, Tuple):
        return x.with_elems(zonk(x.elems))
    if isinstance(x, S.Const):
        t = zonk(x.type)
        v = coerce_value(x.value, t)
        if t is x.type and v == x.value and type(v) is type(x.value):
            return x
        return S.Const(v, t)
    if isinstance(x, S.Var):
        t = zonk(x.type)
        return x if t is x.type else S.Var(x.name, t)
    if isinstance(x, S.PrimCall) and x.fn == DEFERRED_TO_I64:
        arg = zonk(x.args[0])
        return S.PrimCall(f"i64.{arg.type.name}", (arg,), I64)
    cls = type(x)
    names = _FIELDS.get(cls)
    if names is None:
        if not dataclasses.is_dataclass(x):
            raise TypeError(x)
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    old = [getattr(x, n) for n in names]
    new = [zonk(v) for v in old]
    if all(a is b for a, b in zip(new, old)):
        return x
    return cls(**dict(zip(names, new)))
