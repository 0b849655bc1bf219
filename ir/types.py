"""Types with symbolic sizes: scalars, arrays of scalars (`[n][m]f32`), and tuples and records of these."""

from dataclasses import dataclass
from typing import Optional, Union

from incflat.ir.runtime.prims import FLOAT_NAMES, INT_NAMES, PRIMS, Prim

INT_TYPES = INT_NAMES
FLOAT_TYPES = FLOAT_NAMES
PRIM_NAMES = tuple(PRIMS)
NUMPY_DTYPES = {name: p.dtype.type for name, p in PRIMS.items()}  # name -> numpy scalar type

# A dimension is either a known constant or the name of a size variable (an i64 in scope).
Dim = Union[int, str]


@dataclass(frozen=True)
class Scalar:
    name: str  # one of PRIM_NAMES

    def __post_init__(self):
        assert self.name in PRIM_NAMES, self.name

    def __str__(self):
        return self.name

    @property
    def rank(self) -> int:
        return 0

    @property
    def prim(self) -> Prim:
        return PRIMS[self.name]

    @property
    def dtype(self):
        return NUMPY_DTYPES[self.name]

    @property
    def is_int(self) -> bool:
        return self.prim.is_int

    @property
    def is_float(self) -> bool:
        return self.prim.is_float

    @property
    def is_signed(self) -> bool:
        return self.prim.is_signed


@dataclass(frozen=True)
class Array:
    elem: Scalar
    shape: tuple  # tuple[Dim, ...], outermost first; never empty

    def __post_init__(self):
        assert self.shape, "an array has at least one dimension"

    def __str__(self):
        return "".join(f"[{d}]" for d in self.shape) + str(self.elem)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def outer(self) -> Dim:
        return self.shape[0]

    def row(self) -> "Type":
        """The type of one element along the outermost dimension."""
        return array_of(self.elem, self.shape[1:])


@dataclass(frozen=True)
class Tuple:
    """A tuple or a record. As in Futhark, a tuple is the record whose fields are named 0, 1, ...: `fields` is
    None for it, and the field names of any other record, in Futhark's order (`record_type`), for which `elems`
    holds the field types."""
    elems: tuple  # tuple[Type, ...]
    fields: Optional[tuple] = None  # tuple[str, ...]

    def __str__(self):
        if self.fields is not None:
            return "{" + ", ".join(f"{f}: {t}" for f, t in zip(self.fields, self.elems)) + "}"
        return "(" + ", ".join(map(str, self.elems)) + ")"

    @property
    def is_record(self) -> bool:
        return self.fields is not None

    @property
    def names(self) -> tuple:
        """The field names: those of a record, or 0, 1, ... of a tuple."""
        return self.fields if self.fields is not None else tuple(str(k) for k in range(len(self.elems)))

    def with_elems(self, elems) -> "Tuple":
        """The same tuple or record with other field types."""
        return Tuple(tuple(elems), self.fields)


Type = Union[Scalar, Array, Tuple]

BOOL = Scalar("bool")
I32 = Scalar("i32")
I64 = Scalar("i64")
F32 = Scalar("f32")
F64 = Scalar("f64")


def field_order(name: str):
    """Futhark's order of record fields: numeric names first, by value, then the others alphabetically."""
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


def record_type(fields) -> Tuple:
    """The record type of (name, type) pairs, given in any order (names distinct). As in Futhark, fields
    named 0, 1, ..., n-1 make the tuple type (for n other than 1)."""
    fields = sorted(fields, key=lambda f: field_order(f[0]))
    names = tuple(f for f, _ in fields)
    tuple_like = len(names) != 1 and names == tuple(str(k) for k in range(len(names)))
    return Tuple(tuple(t for _, t in fields), None if tuple_like else names)


def array_of(elem: Type, shape: tuple) -> Type:
    """`[shape]elem`; a scalar when shape is empty."""
    if not shape:
        return elem
    if isinstance(elem, Array):
        return Array(elem.elem, tuple(shape) + elem.shape)
    assert isinstance(elem, Scalar), elem
    return Array(elem, tuple(shape))


def elem_scalar(t: Type) -> Scalar:
    assert not isinstance(t, Tuple), t
    return t.elem if isinstance(t, Array) else t


def shape_of(t: Type) -> tuple:
    return t.shape if isinstance(t, Array) else ()


def unsized_name(t: Type) -> str:
    """Futhark's spelling of a type without its sizes, e.g. `[][]f32`."""
    if isinstance(t, Array):
        return "[]" * t.rank + t.elem.name
    return str(t)
