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


# ---- types ----

@dataclass(frozen=True)
class ArrayType:
    """An array in device memory (a view: buffer, offset, shape, strides); rank 0 for a scalar a kernel left
    on the device."""
    prim: str
    rank: int


# A variable's type: an ArrayType, a primitive type's name (a host scalar of that type: "i64", "f32", "bool"),
# or INT, a host integer (a size, a count, a grid's width: Python's int, C's int64_t).
INT = "int"


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
    """`target = value`, of type `type` (see ArrayType)."""
    target: str
    value: Exp
    type: object


@dataclass(frozen=True)
class Bind:
    """Several targets (of `types`) bound at once from as many values (a loop's state, a branch's results), or
    from one value holding as many (`values` of one expression and `unpack`)."""
    targets: tuple
    values: tuple
    types: tuple
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
    """An entry point: `entry_<name>(ctx, params...)`, the params of `types`."""
    name: str
    params: tuple
    types: tuple
    body: tuple


Stm = Union[Assign, Bind, Do, If, For, While, Break, Guard, Return]


# ---- the verifier ----

def verify(d: Def) -> None:
    """An entry point's host code is well formed: every variable it reads is bound before (a parameter, or a
    binding on every path to the read), keeps one type, and every Break is inside a While. Raises ValueError
    naming the entry point and what is wrong."""
    def fail(message):
        raise ValueError(f"host code of entry point {d.name}: {message}")

    def bind(scope, name, t):
        if t is None:
            fail(f"{name} is bound without a type")
        if types.setdefault(name, t) != t:
            fail(f"{name} is bound as {types[name]} and as {t}")
        scope.add(name)

    def read(scope, e):
        if isinstance(e, Var):
            if e.name not in scope and e.name != "ctx":
                fail(f"{e.name} is read before it is bound")
            return
        if isinstance(e, (tuple, list)):
            for x in e:
                read(scope, x)
            return
        if hasattr(e, "__dataclass_fields__"):
            for f in e.__dataclass_fields__:
                read(scope, getattr(e, f))

    def block(stms, scope, in_loop) -> set:
        """The names bound after the statements (the scope given, grown)."""
        for s in stms:
            if isinstance(s, Assign):
                read(scope, s.value)
                bind(scope, s.target, s.type)
            elif isinstance(s, Bind):
                read(scope, s.values)
                if len(s.types) != len(s.targets) or (not s.unpack and len(s.values) != len(s.targets)):
                    fail(f"binding of {', '.join(s.targets)} has {len(s.values)} values and {len(s.types)} types")
                for name, t in zip(s.targets, s.types):
                    bind(scope, name, t)
            elif isinstance(s, (Do, Return)):
                read(scope, s.value if isinstance(s, Do) else s.values)
            elif isinstance(s, (If, Guard)):
                read(scope, s.cond if isinstance(s, If) else s.par)
                branches = [block(s.then, set(scope), in_loop)]
                branches.append(block(s.else_ or (), set(scope), in_loop))
                scope |= set.intersection(*branches)  # bound on every path
            elif isinstance(s, For):
                read(scope, s.bound)
                inner = set(scope)
                bind(inner, s.var, s.prim)
                block(s.body, inner, in_loop)
            elif isinstance(s, While):
                block(s.body, set(scope), True)
            elif isinstance(s, Break):
                if not in_loop:
                    fail("break outside a while loop")
            else:
                fail(f"not a host statement: {s!r}")
        return scope

    types = {}
    if len(d.types) != len(d.params):
        fail("parameters and their types differ in number")
    scope = set()
    for name, t in zip(d.params, d.types):
        bind(scope, name, t)
    block(d.body, scope, False)
