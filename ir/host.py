"""The host IR: what a compiled program's host code does, decided once by `codegen.host` and printed by each
backend (`codegen/pyhost.py` prints the Python program). Futhark's ImpCode plays this part for its C and
Python backends.

An entry point is a `Def` whose body is a tuple of statements: bindings of host values, calls made for their
effect (launches, checks), branches, loops, guards (a threshold's comparison choosing a code version, with the
`-L`/`-P` records and, for a workgroup-level version, the fallback to the next one) and its return. Values are
expressions over variables, typed scalar constants, arrays' layouts, the run's context (`Field`, `Param`) and
calls of the runtime's functions, which each backend provides by the same names.
"""

from dataclasses import dataclass
from typing import Optional, Union


# ---- expressions ----

@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Scalar:
    """A constant of a primitive type (`prim`: i64, f32, bool...); `value` a Python number or bool."""
    value: object
    prim: str


@dataclass(frozen=True)
class Lit:
    """A host literal as it is: a Python int (a size, a count), a str (a name, a source position), a bool."""
    value: object


@dataclass(frozen=True)
class Dtype:
    """An element type, as an argument (the runtime allocates and converts by it)."""
    prim: str


@dataclass(frozen=True)
class Tuple:
    items: tuple


@dataclass(frozen=True)
class List:
    items: tuple


@dataclass(frozen=True)
class Call:
    """A function of the runtime, by its name (`RUNTIME` of a printer says how the backend spells it);
    `kwargs`: (name, value) pairs."""
    fn: str
    args: tuple = ()
    kwargs: tuple = ()


@dataclass(frozen=True)
class Field:
    """A fact of the run's context (the device's limits and defaults: group_size, max_group_size,
    num_groups, local_mem_size)."""
    name: str


@dataclass(frozen=True)
class Param:
    """A tuning parameter's value in this run (0 where a size is not set)."""
    name: str


@dataclass(frozen=True)
class Cast:
    """A value as a primitive type: a host scalar of that type."""
    prim: str
    value: object  # Exp


@dataclass(frozen=True)
class Op:
    """A binary operation on host values: arithmetic on Python ints (sizes, counts), comparisons, and, or;
    on scalars of a primitive type under a Cast."""
    op: str
    x: object  # Exp
    y: object  # Exp


@dataclass(frozen=True)
class Unary:
    op: str  # "-", "not ", "~"
    x: object  # Exp


@dataclass(frozen=True)
class Cond:
    """`then if cond else otherwise`."""
    cond: object
    then: object
    otherwise: object


@dataclass(frozen=True)
class Shape:
    """An array's shape, or one of its dimensions (`dim`)."""
    array: object  # Exp
    dim: Optional[int] = None


@dataclass(frozen=True)
class Method:
    """An array's operation that makes a view of it (`permute`)."""
    obj: object
    name: str
    args: tuple = ()


@dataclass(frozen=True)
class Stride:
    """An array's stride in one dimension, in elements."""
    array: object  # Exp
    dim: int


@dataclass(frozen=True)
class Offset:
    """An array's offset in its buffer, in elements."""
    array: object  # Exp


@dataclass(frozen=True)
class Buffer:
    """An array's memory, as a kernel's argument."""
    array: object  # Exp


@dataclass(frozen=True)
class IndexArgs:
    """An array's offset and strides as a kernel takes them (`flat`: a contiguous array as one dimension),
    several of a kernel's scalars."""
    array: object  # Exp
    flat: bool = False


@dataclass(frozen=True)
class Spread:
    """The values of a call that gives several, in place of as many arguments (a single-pass scan's
    buffers)."""
    value: object  # Exp


Exp = Union[Var, Scalar, Lit, Dtype, Tuple, List, Call, Field, Param, Cast, Op, Unary, Cond, Shape, Method,
            Stride, Offset, Buffer, IndexArgs, Spread]


def product(factors) -> Exp:
    """factors[0] * factors[1] * ..., left to right."""
    out = factors[0]
    for f in factors[1:]:
        out = Op("*", out, f)
    return out


# ---- statements ----

@dataclass(frozen=True)
class Assign:
    """`target = value`."""
    target: str
    value: Exp


@dataclass(frozen=True)
class Bind:
    """Several targets bound at once from as many values (a loop's state, a branch's results), or from one
    value holding as many (`values` of one expression and `unpack`)."""
    targets: tuple
    values: tuple
    unpack: bool = False


@dataclass(frozen=True)
class Do:
    """A call made for its effect: a check, a launch."""
    value: Exp


@dataclass(frozen=True)
class If:
    cond: Exp
    then: tuple
    else_: Optional[tuple] = None


@dataclass(frozen=True)
class For:
    """`for var < bound`, var of the primitive type `prim` inside the body."""
    var: str
    prim: str
    bound: Exp
    body: tuple


@dataclass(frozen=True)
class While:
    """A loop until a Break."""
    body: tuple


@dataclass(frozen=True)
class Break:
    pass


@dataclass(frozen=True)
class Guard:
    """`threshold <= par` chooses `then` (the less flattened version) or `else_`; each version's commands are
    recorded under the decision for -P. kind "intra": `then` runs a workgroup-level version, which also needs
    the workgroup (par threads, local_bytes each) to fit the device, and falls back to `else_` where it cannot
    launch."""
    threshold: str
    kind: str
    par: tuple  # Exp: the degree of parallelism is their product
    local_bytes: int
    then: tuple
    else_: tuple


@dataclass(frozen=True)
class Return:
    values: tuple


@dataclass(frozen=True)
class Def:
    """An entry point: `entry_<name>(ctx, params...)`."""
    name: str
    params: tuple
    body: tuple


Stm = Union[Assign, Bind, Do, If, For, While, Break, Guard, Return]
