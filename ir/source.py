"""The source IR: a first-order, A-normal-form language of SOACs (Futhark's SOACS representation).

Every intermediate value is bound by a statement to a variable, and operands are atoms (variables or
constants). Sizes are i64 variables; array types mention them symbolically.
"""

from dataclasses import dataclass, field
from typing import Optional, Union

from incflat.ir.types import Array, Scalar, Type


@dataclass(frozen=True)
class Loc:
    """A source position, for error messages; `unsafe`: inside an expression marked `#[unsafe]`, whose checks
    kernels leave out."""
    file: str
    line: int
    col: int
    unsafe: bool = field(default=False, compare=False)

    def __str__(self):
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Var:
    name: str
    type: Type

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Const:
    value: Union[int, float, bool]
    type: Scalar

    def __str__(self):
        if self.type.name == "bool":
            return "true" if self.value else "false"
        return f"{self.value}{self.type.name}"


Atom = Union[Var, Const]


# ---- expressions: the right-hand side of a statement ----

@dataclass(frozen=True)
class AtomExp:
    """A copy of an atom (`let x = y`)."""
    x: Atom


@dataclass(frozen=True)
class BinOp:
    """Arithmetic, comparison, logical or bitwise operator on scalars. `op` is Futhark's spelling:
    + - * / % // %% ** == != < <= > >= && || & | ^ << >>."""
    op: str
    x: Atom
    y: Atom
    type: Scalar  # the result type


@dataclass(frozen=True)
class UnOp:
    """`neg` (unary minus), `!` (logical not) or `~` (bitwise complement)."""
    op: str
    x: Atom
    type: Scalar


@dataclass(frozen=True)
class PrimCall:
    """A numeric-prelude function on scalars, e.g. `f32.sqrt`, `i64.max`, or a conversion `f32.i64`."""
    fn: str
    args: tuple  # tuple[Atom, ...]
    type: Scalar


@dataclass(frozen=True)
class Apply:
    """A call of a user-defined function; removed by inlining."""
    fn: str
    args: tuple  # tuple[Atom, ...]
    types: tuple  # result types


@dataclass(frozen=True)
class If:
    cond: Atom
    then: "Body"
    else_: "Body"
    types: tuple  # result types


@dataclass(frozen=True)
class DimSlice:
    """`start:end:stride` in one dimension of an index; its length is the variable `size` (an i64 bound
    before the Index, so that the result type can name it)."""
    start: Atom
    end: Atom
    stride: Atom
    size: Atom


@dataclass(frozen=True)
class Index:
    """`arr[i, j:k, ...]`: each index is an atom (that dimension disappears) or a DimSlice (it stays, with
    the slice's length); fewer indices than the rank keep the remaining dimensions whole."""
    arr: Var
    idxs: tuple  # tuple[Atom | DimSlice, ...], atoms of type i64


@dataclass(frozen=True)
class Update:
    """`arr with [i, j] = v`, `arr with [i:j] = vs`: a copy of arr (in place when arr is not used afterwards)
    with the element, row or slice that the indices select (as in Index) replaced by value, whose shape
    must be that of the selection (checked at run time)."""
    arr: Var
    idxs: tuple  # tuple[Atom | DimSlice, ...], atoms of type i64
    value: Atom


@dataclass(frozen=True)
class TuningParam:
    """`#[param(NAME)] e`: the i64 `default` (e's value), unless the tuning parameter `name` is set when the
    compiled program runs; the interpreter gives `default`."""
    name: str
    default: Atom


@dataclass(frozen=True)
class Assert:
    """A run-time check that binds nothing (its pattern is empty): when `cond` is false the program fails
    with `message` at the statement's position, `{0}`, `{1}`... in it filled from `values` (integer atoms).
    `assert c e` in the source; also the validity check of a range. Never removed as dead code."""
    cond: Atom
    message: str
    values: tuple = ()  # tuple[Atom, ...], integers


@dataclass(frozen=True)
class ArrayLit:
    """`[a, b, c]`: the elements are atoms of one type (scalars, or arrays of one shape)."""
    elems: tuple
    type: Array


@dataclass(frozen=True)
class Concat:
    """`concat xs ys ...` along the outer dimension; `size` is the (precomputed) total length."""
    arrs: tuple  # tuple[Var, ...]
    size: Atom


@dataclass(frozen=True)
class Rotate:
    """`rotate r xs`: element i of the result is xs[(i + r) mod n]."""
    amount: Atom
    arr: Var


@dataclass(frozen=True)
class Reshape:
    """`flatten` and `unflatten`: the same elements in row-major order, with a new shape."""
    shape: tuple  # tuple[Atom, ...], each i64
    arr: Var


@dataclass(frozen=True)
class Scatter:
    """`scatter dest is vs`: a copy of dest with dest[is[k]] = vs[k] for every in-bounds is[k] (out-of-bounds
    writes are ignored, as in Futhark)."""
    dest: Var
    idxs: Var
    vals: Var


@dataclass(frozen=True)
class ForLoop:
    """`for i < bound`: i runs from 0 to bound - 1 (it has the type of bound)."""
    i: Var
    bound: Atom


@dataclass(frozen=True)
class WhileLoop:
    """`while cond`: `cond` computes a bool from the loop parameters before each iteration."""
    cond: "Body"


@dataclass(frozen=True)
class Loop:
    """`loop params = init for/while ... do body`: body's results are the parameters' next values.

    `size_params` are size names that the parameters' types mention and that may change from one
    iteration to the next; they are bound from the parameters' shapes at the start of each iteration.
    The loop's pattern binds first the final value of each size parameter (i64), then the parameters'
    final values, whose types name those pattern variables."""
    size_params: tuple  # tuple[str, ...]
    params: tuple  # tuple[Var, ...]
    init: tuple  # tuple[Atom, ...]
    form: Union[ForLoop, WhileLoop]
    body: "Body"


@dataclass(frozen=True)
class Iota:
    n: Atom  # i64
    elem: Scalar
    checked: "Atom | None" = None  # see Replicate


@dataclass(frozen=True)
class Replicate:
    """`checked`, for Iota too: None, or a bool atom: a negative `n` is an error only where it is true, and
    makes an empty array where it is false. hoist_invariants moves these statements out of maps and loops that
    may run no iteration, where their sizes were never checked; it sets `checked` to whether they run."""
    n: Atom  # i64
    x: Atom
    checked: "Atom | None" = None


@dataclass(frozen=True)
class Rearrange:
    """A permutation of dimensions; `transpose` is (1, 0) on the two outermost dimensions."""
    perm: tuple  # tuple[int, ...]
    arr: Var


@dataclass(frozen=True)
class Lambda:
    params: tuple  # tuple[Var, ...]
    body: "Body"
    ret: tuple  # tuple[Type, ...]


@dataclass(frozen=True)
class Map:
    width: Atom
    lam: Lambda
    arrs: tuple  # tuple[Var, ...]


@dataclass(frozen=True)
class Reduce:
    width: Atom
    lam: Lambda  # associative operator on tuples of len(neutral)
    neutral: tuple  # tuple[Atom, ...]
    arrs: tuple
    commutative: bool = False


@dataclass(frozen=True)
class Hist:
    """`reduce_by_index dest op ne is vs` (and `hist`): a copy of dest (one array of scalars) where
    dest[is[k]] = dest[is[k]] `op` vs[k] for every in-bounds is[k]; out-of-bounds indices are ignored. The
    operator is associative and commutative, so the updates may happen in any order (atomically)."""
    width: Atom  # of is and vs
    lam: Lambda  # the operator: (t, t) -> t
    neutral: tuple  # (Atom,)
    dest: Var
    idxs: Var
    vals: Var
    types: tuple  # (dest's type,)


@dataclass(frozen=True)
class Filter:
    """`filter p xs` (on one or several arrays): the elements for which the predicate holds. The first
    pattern element binds the count (an i64 named `size`), which the result arrays' types mention."""
    width: Atom
    lam: Lambda  # the predicate: params -> bool
    arrs: tuple
    size: str


@dataclass(frozen=True)
class Scan:
    width: Atom
    lam: Lambda
    neutral: tuple
    arrs: tuple


@dataclass(frozen=True)
class Redomap:
    """`reduce red neutral (map map_lam arrs)` fused: made by normalisation, never by the front end."""
    width: Atom
    red: Lambda
    map_lam: Lambda
    neutral: tuple
    arrs: tuple
    commutative: bool = False


@dataclass(frozen=True)
class Scanomap:
    width: Atom
    scan: Lambda
    map_lam: Lambda
    neutral: tuple
    arrs: tuple
    # A map applied to each prefix as it is computed, whose results replace the scan's (formed only for
    # sequential scans inside kernels, by codegen.lower.postmaps: the prefixes are never stored).
    post: Optional[Lambda] = None


Exp = Union[AtomExp, BinOp, UnOp, PrimCall, Apply, If, Index, Update, Assert, TuningParam, ArrayLit, Concat, Rotate,
            Reshape, Scatter, Loop, Iota, Replicate, Rearrange, Map, Reduce, Scan, Redomap, Scanomap, Filter, Hist]

SOACS = (Map, Reduce, Scan, Redomap, Scanomap, Filter)


@dataclass(frozen=True)
class Stm:
    pat: tuple  # tuple[Var, ...]: one per result of exp
    exp: Exp
    loc: Optional[Loc] = field(default=None, compare=False)


@dataclass(frozen=True)
class Body:
    stms: tuple  # tuple[Stm, ...]
    result: tuple  # tuple[Atom, ...]


@dataclass(frozen=True)
class FunDef:
    name: str
    entry: bool
    size_params: tuple  # tuple[str, ...]: the names bound from the shapes of params
    params: tuple  # tuple[Var, ...]
    ret: tuple  # tuple[Type, ...]
    body: Body
    loc: Optional[Loc] = field(default=None, compare=False)


class Functions:
    """What the source and target programs share: their functions, looked up by name."""
    funs: tuple
    file: str

    def fun(self, name: str) -> FunDef:
        for f in self.funs:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def entries(self) -> tuple:
        return tuple(f for f in self.funs if f.entry)


@dataclass(frozen=True)
class Program(Functions):
    """A source program: functions over SOACs (no segops, no guards)."""
    funs: tuple  # tuple[FunDef, ...]
    file: str = "<input>"


def dim_of(a: Atom):
    """The dimension that an i64 atom denotes in a type: a constant or a size-variable name."""
    return int(a.value) if isinstance(a, Const) else a.name
