"""Type checking and lowering: syntax tree (ir.parse) to the typed source IR in A-normal form.

One pass per function checks types and sizes and emits statements at the same time.

Literals. Unsuffixed literals get a literal type variable (`TV`) that unification resolves against
the context, as Futhark does: an integer literal may become any numeric type, a decimal literal any
float type; what stays unresolved at the end of a function defaults to i32 and f64. A last pass
over the function ("zonking") replaces the variables by the types they stand for.

Tuples are flattened away. The checker works with types that may be tuples (`Tuple`) and arrays
of tuples (`TArr`), and with values (`V`) that are a type plus the flat list of IR atoms holding
its leaves (scalars and arrays of scalars), left to right. An array of tuples is held as one
array per component, so `zip` and `unzip` cost nothing, a lambda taking a tuple takes one
parameter per leaf, and `.0` picks leaves statically.

Functions. Lambdas, operator sections, local functions and partial applications are function
values (`FunV`) that exist only in the checker: applying one inlines its body at the call site,
and passing one to a SOAC makes an `ir.source.Lambda`. Calls of top-level functions become
`Apply`, except when the function's result has a size computed in its body (an existential
size); such calls are inlined too.

Sizes. A dimension is a constant or the name of an i64 variable in scope. Scalar computations
are hash-consed (`n + 1` computed twice is the same variable), which gives Futhark's equality of
size expressions. Sizes Futhark cannot know (filter, slices with variable bounds, `if` branches
or loop iterations that differ in size) get a size variable bound by a statement, and the
interpreter checks them at run time.

Naming: the parameters and size parameters of a top-level function keep their source names
(those of tuple-typed parameters get fresh ones); every other variable gets a fresh name,
unique in the whole program: the user's name (or `tmp`) followed by `_` and a counter.
"""

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import Optional

from ir import parse as P
from ir import source as S
from ir.errors import CompileError
from ir.types import BOOL, I64, PRIM_NAMES, Array, Scalar, Tuple

# ---------------------------------------------------------------- builtins and the prelude

SOAC_MAPS = {"map": 1, "map1": 1, "map2": 2, "map3": 3, "map4": 4, "map5": 5}
ZIPS = {"zip": 2, "zip2": 2, "zip3": 3, "zip4": 4, "zip5": 5}
UNZIPS = {"unzip": 2, "unzip2": 2, "unzip3": 3, "unzip4": 4, "unzip5": 5}
BUILTIN_ARITY = {**{k: n + 1 for k, n in SOAC_MAPS.items()}, **ZIPS, **{k: 1 for k in UNZIPS},
                 "reduce": 3, "reduce_comm": 3, "scan": 3, "filter": 2, "scatter": 3,
                 "transpose": 1, "iota": 1, "replicate": 2, "length": 1, "flatten": 1, "unflatten": 1,
                 "flatten_3d": 1, "unflatten_3d": 1, "concat": 2, "rotate": 2, "reverse": 1,
                 "head": 1, "last": 1, "tail": 1, "init": 1, "take": 2, "drop": 2, "indices": 1,
                 "tabulate": 2, "copy": 1, "all": 2, "any": 2, "and": 1, "or": 1, "sized": 2,
                 "null": 1, "foldl": 3, "id": 1}
# Builtins whose arguments include functions (they are kept as function values, not lowered).

# Futhark prelude names that this subset does not have: a clearer message than "unknown".
NOT_SUPPORTED = frozenset({
    "hist", "reduce_by_index", "partition", "partition2", "split", "scan_comm", "foldr", "const",
    "map_reduce", "stream_map", "stream_red", "tabulate_2d", "tabulate_3d", "opaque", "trace",
    "manifest", "flatten_4d", "unflatten_4d", "scatter_2d", "scatter_3d", "rep", "uncurry", "curry",
    "flip", "reduce_by_index_2d", "spread", "zip_with", "concat_to", "flatten_to", "intrinsics",
})

FLOAT_UNARY = ("sqrt", "exp", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
               "sinh", "cosh", "tanh", "abs", "floor", "ceil", "round", "trunc", "sgn", "neg", "cbrt",
               "log1p", "expm1")
FLOAT_BINARY = ("min", "max", "pow", "atan2", "hypot")
FLOAT_PRED = ("isnan", "isinf", "isfinite")
INT_UNARY = ("abs", "sgn", "neg")
INT_BINARY = ("min", "max")
ARRAY_REDUCTIONS = ("sum", "product", "maximum", "minimum")

INT_RANGE = {
    "i8": (-2 ** 7, 2 ** 7 - 1), "i16": (-2 ** 15, 2 ** 15 - 1),
    "i32": (-2 ** 31, 2 ** 31 - 1), "i64": (-2 ** 63, 2 ** 63 - 1),
    "u8": (0, 2 ** 8 - 1), "u16": (0, 2 ** 16 - 1), "u32": (0, 2 ** 32 - 1), "u64": (0, 2 ** 64 - 1),
}


def prelude_lookup(parts):
    """(param types, result type, constant value or None) for `f32.sqrt`, `i64.max`, `f32.i64`,
    `f32.pi`...; None when there is no such scalar prelude name."""
    if len(parts) != 2 or parts[0] not in PRIM_NAMES:
        return None
    mod, fn = parts
    t = Scalar(mod)
    if fn in PRIM_NAMES:  # conversion T.U : U -> T
        return ((Scalar(fn),), t, None)
    if t.is_float:
        if fn in FLOAT_UNARY:
            return ((t,), t, None)
        if fn in FLOAT_BINARY:
            return ((t, t), t, None)
        if fn in FLOAT_PRED:
            return ((t,), BOOL, None)
        consts = {"inf": math.inf, "nan": math.nan, "pi": math.pi, "e": math.e,
                  "lowest": -math.inf, "highest": math.inf}
        if fn in consts:
            return ((), t, consts[fn])
    elif t.is_int:
        if fn in INT_UNARY:
            return ((t,), t, None)
        if fn in INT_BINARY:
            return ((t, t), t, None)
        lo, hi = INT_RANGE[mod]
        if fn == "lowest":
            return ((), t, lo)
        if fn == "highest":
            return ((), t, hi)
    return None


# Operator classes: which operand types each binary operator accepts, and its result.
ARITH_OPS = {"+", "-", "*", "/", "%", "**"}
INT_OPS = {"//", "%%", "&", "|", "^", "<<", ">>"}
ORD_OPS = {"<", "<=", ">", ">="}
EQ_OPS = {"==", "!="}
# Size expressions that may be recomputed outside the body that computed them (they cannot fail).
SAFE_SIZE_OPS = {"+", "-", "*"}
LOGIC_OPS = {"&&", "||"}


# ---------------------------------------------------------------- literal type variables

class TV:
    """The type of an unsuffixed literal, until the context decides it.

    kind: 'num' (any numeric type), 'int' (any integer type) or 'float' (f32 or f64)."""
    __slots__ = ("kind", "ref")

    def __init__(self, kind):
        self.kind = kind
        self.ref = None

    def __repr__(self):
        return f"TV({self.kind}->{self.ref})"


def prune(t):
    while isinstance(t, TV) and t.ref is not None:
        t = t.ref
    return t


def kind_accepts(kind, s: Scalar) -> bool:
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
    if a == "num":
        return b
    if b == "num":
        return a
    return None


KIND_DEFAULT = {"num": Scalar("i32"), "int": Scalar("i32"), "float": Scalar("f64")}
KIND_TEXT = {"num": "integer literal", "int": "integer literal", "float": "decimal literal"}


# ---------------------------------------------------------------- checker types

@dataclass(frozen=True)
class TArr:
    """An array of tuples, `[n](a, b)`; held as one IR array per leaf of the element type."""
    shape: tuple
    elem: Tuple


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
        return Tuple(tuple(map_dims(e, f) for e in t.elems))
    return t


def _worse(a, b):
    if a == "type" or b == "type":
        return "type"
    return a or b


def unify(a, b) -> Optional[str]:
    """Make a and b equal by resolving literal type variables. None on success, 'type' for
    different types, 'size' for the same type with different sizes. A None dimension (`[]` in an
    annotation) matches any size. Unification goes on after a size mismatch, so that literal types
    are still resolved."""
    a, b = prune(a), prune(b)
    if a is b:
        return None
    if isinstance(a, TV) and isinstance(b, TV):
        k = kind_meet(a.kind, b.kind)
        if k is None:
            return "type"
        b.kind = k
        a.ref = b
        return None
    if isinstance(a, TV) or isinstance(b, TV):
        tv, other = (a, b) if isinstance(a, TV) else (b, a)
        if isinstance(other, Scalar) and kind_accepts(tv.kind, other):
            tv.ref = other
            return None
        return "type"
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        return None if a.name == b.name else "type"
    if isinstance(a, Tuple) and isinstance(b, Tuple):
        if len(a.elems) != len(b.elems):
            return "type"
        r = None
        for x, y in zip(a.elems, b.elems):
            r = _worse(r, unify(x, y))
        return r
    if (isinstance(a, Array) and isinstance(b, Array)) or (isinstance(a, TArr) and isinstance(b, TArr)):
        if len(a.shape) != len(b.shape):
            return "type"
        r = unify(a.elem, b.elem)
        for x, y in zip(a.shape, b.shape):
            if x is not None and y is not None and x != y:
                r = _worse(r, "size")
        return r
    return "type"


def require(t, cls) -> bool:
    """Constrain a scalar type to a class: 'num', 'int', 'float', 'bool' or 'prim'."""
    t = prune(t)
    if isinstance(t, TV):
        if cls == "prim":
            return True
        if cls == "bool":
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


def split_tuple(v: V) -> list:
    """The component values of a tuple value."""
    out, i = [], 0
    for t in prune(v.t).elems:
        k = nleaves(t)
        out.append(V(t, v.atoms[i:i + k]))
        i += k
    return out


def unzip_v(v: V) -> list:
    """The component arrays of an array of tuples."""
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


@dataclass
class Arg:
    val: object  # V or FunV
    loc: S.Loc


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
        return Tuple(zonk(x.elems))
    if isinstance(x, S.Const):
        t = zonk(x.type)
        v = coerce_value(x.value, t)
        if t is x.type and v == x.value and type(v) is type(x.value):
            return x
        return S.Const(v, t)
    if isinstance(x, S.Var):
        t = zonk(x.type)
        return x if t is x.type else S.Var(x.name, t)
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


# ---------------------------------------------------------------- the checker

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


def collect_names(text) -> set:
    """Every identifier the program text mentions, so that fresh names never clash with them."""
    return set(_IDENT.findall(text))


_IDENT = re.compile(r"[A-Za-z_][\w']*")


class Scope:
    """The statements being emitted and the table of hash-consed scalar computations."""
    __slots__ = ("cse", "stms")

    def __init__(self, stms, cse):
        self.stms = stms
        self.cse = cse


class Checker:
    def __init__(self, decls, filename, text):
        self.decls = decls
        self.filename = filename
        self.text = text
        self.reserved = collect_names(text)
        self.counter = 0
        self.funs = {}  # name -> FunSig, for functions already checked
        self.types = {}  # type abbreviations: name -> TypeDecl
        self.later = {}  # name -> Loc of every declared function
        self.current = None
        self.stms = None
        self.cse = {}
        self.defs = {}  # var name -> (op, x, y) for hash-consed binary operations
        self.literals = []  # (TV or Scalar, value, Loc): range-checked once types are known
        self.dim_text = {}  # internal size name -> how to show it to the user
        # In-place updates (Futhark's uniqueness rules, simplified): which roots (array variables)
        # each array variable may alias, which roots are consumed (root -> Loc of the update),
        # which cannot be (parameters not declared unique: root -> source name), and when each
        # variable was made (roots made before the innermost lambda or loop cannot be consumed in it).
        self.alias = {}
        self.consumed = {}
        self.nonunique = {}
        self.born = {}
        self.barrier = (-1, None)

    # ---- helpers

    def err(self, msg, loc):
        return CompileError(msg, loc)

    def fresh(self, base):
        base = (base or "tmp").replace("'", "_")  # IR names are identifiers in generated code
        while True:
            self.counter += 1
            name = f"{base}_{self.counter}"
            if name not in self.reserved:
                self.reserved.add(name)
                self.born[name] = self.counter
                return name

    # ---- in-place updates: aliasing and consumption

    def roots(self, a):
        if isinstance(a, S.Var) and is_arr(prune(a.type)):
            return self.alias.get(a.name, frozenset((a.name,)))
        return frozenset()

    def alias_pairs(self, new_atoms, src_atoms):
        for n, a in zip(new_atoms, src_atoms):
            self.alias_to([n], [a])

    def alias_to(self, new_atoms, src_atoms):
        """The arrays new_atoms alias those of src_atoms (slices, transposes, reshapes, copies of names)."""
        rs = frozenset().union(*(self.roots(a) for a in src_atoms))
        for v in new_atoms:
            if isinstance(v, S.Var) and is_arr(prune(v.type)):
                self.alias[v.name] = rs | {v.name}

    def check_use(self, v, loc, name):
        if not isinstance(v, V):
            return
        for a in v.atoms:
            for r in self.roots(a):
                if r in self.consumed:
                    cl = self.consumed[r]
                    raise self.err(f'"{name}" cannot be used here: it (or an array it aliases) was consumed by '
                                   f'the in-place update at line {cl.line}, column {cl.col}. Use a copy (copy '
                                   f'{name}) before updating if the old value is still needed.', loc)

    def consume(self, v, loc, name, how="update"):
        """v is consumed (updated in place) at loc."""
        what = "be updated in place" if how == "update" else f"be consumed by {how}"
        for a in v.atoms:
            for r in self.roots(a):
                if r in self.consumed:
                    cl = self.consumed[r]
                    raise self.err(f'"{name}" cannot {what}: it (or an array it aliases) was already consumed '
                                   f'at line {cl.line}, column {cl.col}.', loc)
                if r in self.nonunique:
                    p = self.nonunique[r]
                    raise self.err(f'"{name}" cannot {what}: it aliases the parameter "{p}", whose type is '
                                   f'not declared unique. Declare it as (p: *[]t), or update a copy '
                                   f'(copy {p}).', loc)
                if self.born.get(r, 0) <= self.barrier[0]:
                    raise self.err(f'"{name}" cannot {what} {self.barrier[1]}: it is bound outside. Update a '
                                   f'copy instead.', loc)
        for a in v.atoms:
            for r in self.roots(a):
                self.consumed[r] = loc

    def bind(self, exp, t, loc, hint=None) -> S.Var:
        v = S.Var(self.fresh(hint), t)
        if hint:
            self.dim_text[v.name] = hint
        self.stms.append(S.Stm((v,), exp, loc))
        return v

    def bind_many(self, exp, types, loc, hints) -> tuple:
        vs = []
        for t, h in zip(types, hints):
            v = S.Var(self.fresh(h), t)
            if h:
                self.dim_text[v.name] = h
            vs.append(v)
        self.stms.append(S.Stm(tuple(vs), exp, loc))
        return tuple(vs)

    def push(self) -> Scope:
        saved = Scope(self.stms, self.cse)
        self.stms = []
        self.cse = dict(self.cse)
        return saved

    def pop(self, saved: Scope) -> list:
        stms = self.stms
        self.stms, self.cse = saved.stms, saved.cse
        return stms

    def show_dim(self, d):
        if d is None:
            return ""
        if isinstance(d, int):
            return str(d)
        if isinstance(d, tuple):  # a size term of a signature
            op, x, y = d
            return f"{self.show_dim_p(x)}{op}{self.show_dim_p(y)}"
        if d in self.dim_text:
            return self.dim_text[d]
        if d in self.defs:
            op, x, y = self.defs[d]
            return f"{self.show_dim_p(S.dim_of(x))}{op}{self.show_dim_p(S.dim_of(y))}"
        return d

    def show_dim_p(self, d):
        s = self.show_dim(d)
        return f"({s})" if (isinstance(d, tuple) or (isinstance(d, str) and d in self.defs
                                                      and d not in self.dim_text)) else s

    def show(self, t):
        t = prune(t)
        if isinstance(t, TV):
            return KIND_TEXT[t.kind]
        if isinstance(t, Scalar):
            return t.name
        if isinstance(t, Array):
            return "".join(f"[{self.show_dim(d)}]" for d in t.shape) + self.show(t.elem)
        if isinstance(t, TArr):
            return "".join(f"[{self.show_dim(d)}]" for d in t.shape) + self.show(t.elem)
        if isinstance(t, Tuple):
            return "(" + ", ".join(self.show(e) for e in t.elems) + ")"
        return str(t)

    def source_text(self, e):
        a, b = e.span
        return " ".join(self.text[a:b].split())

    @staticmethod
    def dim_atom(d):
        return S.Const(d, I64) if isinstance(d, int) else S.Var(d, I64)

    def what(self, r):
        return "size" if r == "size" else "type"

    # ---- scalar operations, hash-consed

    @staticmethod
    def atom_key(a):
        if isinstance(a, S.Var):
            return ("v", a.name)
        t = prune(a.type)
        if isinstance(t, TV):
            return None
        v = coerce_value(a.value, t)
        return ("c", t.name, repr(v) if isinstance(v, float) else v)

    def emit(self, exp, t, loc, hint=None, cse=True) -> S.Var:
        """Bind a scalar operation, reusing an earlier identical one in scope."""
        key = None
        if cse and not isinstance(prune(t), TV):
            args = (exp.x, exp.y) if isinstance(exp, S.BinOp) else \
                (exp.x,) if isinstance(exp, S.UnOp) else tuple(exp.args)
            ks = tuple(self.atom_key(a) for a in args)
            if None not in ks:
                key = (type(exp).__name__, getattr(exp, "op", None) or getattr(exp, "fn", None), ks,
                       prune(t).name)
                hit = self.cse.get(key)
                if hit is not None:
                    return hit
        v = self.bind(exp, t, loc, hint)
        if key is not None:
            self.cse[key] = v
        if isinstance(exp, S.BinOp) and (prune(t) == I64 or isinstance(prune(t), TV)):
            self.defs[v.name] = (exp.op, exp.x, exp.y)  # (a literal's type may become i64 later)
        return v

    def size_op(self, op, x, y, loc, cse=True, fold=False):
        """An i64 operation on sizes. As in Futhark, a size expression is not simplified (`2*3` is not the
        size `6`); index arithmetic that makes no size (fold=True) is folded."""
        if fold and isinstance(x, S.Const) and isinstance(y, S.Const):
            a, b = int(x.value), int(y.value)
            return S.Const({"+": a + b, "-": a - b, "*": a * b}[op], I64)
        return self.emit(S.BinOp(op, x, y, I64), I64, loc, cse=cse)

    def to_i64(self, a, loc):
        t = prune(a.type)
        if isinstance(t, TV):
            unify(t, I64)
            return a
        if t == I64:
            return a
        return self.emit(S.PrimCall(f"i64.{t.name}", (a,), I64), I64, loc)

    # ---- types written by the user

    def prim_type(self, name, loc):
        if name == "f16":
            raise self.err("The type f16 is not supported by incflat.", loc)
        if name not in PRIM_NAMES:
            raise self.err(f'Unknown type "{name}".', loc)
        return Scalar(name)

    def resolve_type(self, te: P.TypeExp, dimfn, where="type"):
        """The checker type a TypeExp denotes; dimfn(kind, value, loc) gives each dimension."""
        dims = [dimfn(k, v, te.loc) for k, v in te.dims]
        if isinstance(te.base, list):
            base = Tuple(tuple(self.resolve_type(x, dimfn, where) for x in te.base))
        elif te.base in self.types:
            td = self.types[te.base]
            if len(te.args) != len(td.size_params):
                raise self.err(f'The type "{te.base}" takes {len(td.size_params)} size argument'
                               f'{"s" if len(td.size_params) != 1 else ""}, but is given {len(te.args)}.',
                               te.base_loc)
            sub = {}
            for (name, _), (k, v) in zip(td.size_params, te.args):
                sub[name] = dimfn(k, v, te.base_loc)

            def inner(k, v, loc):
                if k == "name" and v in sub:
                    return sub[v]
                return dimfn(k, v, loc)
            base = self.resolve_type(td.type, inner, where)
        else:
            if te.args:
                raise self.err(f'The type "{te.base}" takes no size arguments.', te.base_loc)
            if te.base in self.later or te.base in self.funs:
                raise self.err(f'"{te.base}" is a function, not a type.', te.base_loc)
            base = self.prim_type(te.base, te.base_loc)
        return arr_of(base, dims)

    # ---- programs and functions

    def check_program(self) -> S.Program:
        for d in self.decls:
            if isinstance(d, P.TypeDecl):
                continue
            if d.name in self.later:
                raise self.err(f'Duplicate definition of "{d.name}" (first defined at line '
                               f'{self.later[d.name].line}).', d.name_loc)
            self.later[d.name] = d.name_loc
        funs = []
        for d in self.decls:
            if isinstance(d, P.TypeDecl):
                self.check_type_decl(d)
            else:
                funs.append(self.check_fun(d))
        return S.Program(tuple(funs), self.filename)

    def check_type_decl(self, d: P.TypeDecl):
        if d.name in PRIM_NAMES:
            raise self.err(f'Cannot redefine the primitive type "{d.name}".', d.name_loc)
        if d.name in self.types:
            raise self.err(f'Duplicate definition of the type "{d.name}".', d.name_loc)
        params = {n for n, _ in d.size_params}

        def dimfn(kind, v, loc):
            if kind == "name" and v not in params:
                raise self.err(f'Unknown size "{v}" in the definition of type "{d.name}"; declare it as a '
                               f'size parameter: type {d.name} [{v}] = ...', loc)
            if kind == "exp":
                raise self.err("Size expressions are not supported in type abbreviations.", loc)
            return v if kind != "any" else None
        self.resolve_type(d.type, dimfn)  # check it
        self.types[d.name] = d

    def pat_type(self, pat, fname, dimfn):
        """The declared type of a top-level function's parameter pattern."""
        if isinstance(pat, P.PTyped):
            return self.resolve_type(pat.type, dimfn)
        if isinstance(pat, P.PTuple):
            return Tuple(tuple(self.pat_type(p, fname, dimfn) for p in pat.elems))
        if isinstance(pat, P.PName):
            raise self.err(f'The parameter "{pat.name}" of "{fname}" needs a type annotation, '
                           f'as in ({pat.name}: i32).', pat.loc)
        raise self.err(f'Every parameter of "{fname}" needs a type annotation, as in (x: i32).', pat.loc)

    def param_vars(self, pat, t, keep_names):
        """IR variables for a parameter pattern of type t (source names where possible)."""
        if isinstance(pat, P.PTyped):
            return self.param_vars(pat.pat, t, keep_names)
        t = prune(t)
        if isinstance(pat, P.PName) and not isinstance(t, (Tuple, TArr)):
            name = pat.name if keep_names and "'" not in pat.name else self.fresh(pat.name)
            self.dim_text[name] = pat.name
            return V(t, (S.Var(name, t),))
        if isinstance(pat, P.PTuple) and isinstance(t, Tuple) and len(pat.elems) == len(t.elems):
            return tuple_v([self.param_vars(p, e, keep_names) for p, e in zip(pat.elems, t.elems)])
        base = pat.name if isinstance(pat, P.PName) else "p"
        return self.fresh_v(t, base)

    def fresh_v(self, t, base):
        ls = leaves(t)
        return V(t, tuple(S.Var(self.fresh(base), lt) for lt in ls))

    def check_fun(self, d: P.Decl) -> S.FunDef:
        if "'" in d.name and (d.entry or d.name == "main"):
            raise self.err(f'The name of an entry point cannot contain an apostrophe: "{d.name}".', d.name_loc)
        self.current = d.name
        self.literals = []
        self.cse = {}
        self.alias, self.consumed, self.nonunique = {}, {}, {}
        self.barrier = (-1, None)
        uniques = []
        env = {}
        size_params = []
        bindable = set()  # names a dimension in the signature may use
        for name, loc in d.size_params:
            if name in env:
                raise self.err(f'The size parameter "{name}" is bound twice.', loc)
            env[name] = atom_v(S.Var(name, I64))
            size_params.append(name)
            bindable.add(name)
        used_sizes = set()
        params = []
        ptypes = []
        seen = set(env)
        for p in d.params:
            def dimfn(kind, v, loc, p=p):
                if kind == "const":
                    return v
                if kind == "any":  # an anonymous size: an implicit size parameter
                    n = self.fresh("d")
                    self.dim_text[n] = ""
                    size_params.append(n)
                    bindable.add(n)
                    used_sizes.add(n)
                    return n
                if kind == "name":
                    if v in bindable:
                        used_sizes.add(v)
                        return v
                    pname = P.pat_names(p)[0][0] if P.pat_names(p) else "x"
                    raise self.err(f'Unknown size "{v}" in the type of parameter "{pname}"; declare it '
                                   f'as a size parameter: def {d.name} [{v}] ...', loc)
                raise self.err("Size expressions such as [n*m] are not supported in parameter types; use "
                               "a size parameter and a coercion (:>) in the body.", loc)
            t = self.pat_type(p, d.name, dimfn)
            for name, loc in P.pat_names(p):
                if name in seen:
                    raise self.err(f'The name "{name}" is bound twice in the parameters of "{d.name}".', loc)
                seen.add(name)
            v = self.param_vars(p, t, keep_names=True)
            self.bind_pattern(p, v, env, None, "parameter")
            params.extend(v.atoms)
            ptypes.append(t)
            uniques.append(self.pat_unique(p))
            if not uniques[-1]:
                names = P.pat_names(p)
                for a in v.atoms:
                    self.nonunique[a.name] = names[0][0] if len(names) == 1 else a.name
            if isinstance(p, P.PTyped) and isinstance(p.pat, P.PName) and prune(t) == I64:
                bindable.add(p.pat.name)
        for name, loc in d.size_params:
            if name not in used_sizes:
                raise self.err(f'The size parameter "{name}" of "{d.name}" is not used in the type of '
                               f'any parameter.', loc)

        self.stms = []
        ret_ann = None
        if d.ret is not None:
            def rdim(kind, v, loc):
                if kind == "const":
                    return v
                if kind == "any":
                    return None
                if kind == "name":
                    if v in bindable:
                        return v
                    raise self.err(f'Unknown size "{v}" in the return type of "{d.name}".', loc)
                x = self.lower_val(v, env)
                if unify(x.t, I64):
                    raise self.err(f"A size must have type i64, but this expression has type "
                                   f"{self.show(x.t)}.", v.loc)
                return S.dim_of(x.atom)
            ret_ann = self.resolve_type(d.ret, rdim)
        res = self.lower_val(d.body, env)
        body_t = res.t
        if ret_ann is not None:
            r = unify(ret_ann, body_t)
            if r:
                raise self.err(f'"{d.name}" is declared to return {self.show(ret_ann)}, but its body has '
                               f'{self.what(r)} {self.show(body_t)}.', d.body.loc)
            ret = self.fill_any(ret_ann, body_t)
        else:
            ret = body_t
        local = {v.name for s in self.stms for v in s.pat}
        inline = False

        def term(dm):
            nonlocal inline
            if isinstance(dm, int) or dm in bindable:
                return dm
            if dm in self.defs:
                op, x, y = self.defs[dm]
                tx, ty = term(S.dim_of(x)), term(S.dim_of(y))
                if tx is not None and ty is not None:
                    return (op, tx, ty)
            if dm in local or dm not in bindable:
                inline = True
                return None
            return dm
        ret_terms = map_dims(ret, term)
        body_stms = tuple(self.stms)
        fd = S.FunDef(d.name, d.entry or d.name == "main", tuple(size_params), tuple(params),
                      tuple(leaves(ret)), S.Body(body_stms, res.atoms), d.loc)
        fd = zonk(fd)
        self.check_literals()
        self.funs[d.name] = FunSig(d.name, tuple(size_params), fd.params, tuple(ptypes), ret_terms, d.loc,
                                   inline, d, tuple(uniques))
        self.stms = None
        return fd

    @staticmethod
    def pat_unique(p):
        def te_unique(te):
            return te.unique or (isinstance(te.base, list) and any(te_unique(x) for x in te.base))
        if isinstance(p, P.PTyped):
            return te_unique(p.type) or Checker.pat_unique(p.pat)
        if isinstance(p, P.PTuple):
            return any(Checker.pat_unique(x) for x in p.elems)
        return False

    @staticmethod
    def fill_any(ann, actual):
        """ann with its `[]` dimensions taken from actual (same structure)."""
        ann, actual = prune(ann), prune(actual)
        if isinstance(ann, Array):
            return Array(ann.elem, tuple(x if x is not None else y for x, y in zip(ann.shape, actual.shape)))
        if isinstance(ann, TArr):
            return TArr(tuple(x if x is not None else y for x, y in zip(ann.shape, actual.shape)),
                        Checker.fill_any(ann.elem, actual.elem))
        if isinstance(ann, Tuple):
            return Tuple(tuple(Checker.fill_any(a, b) for a, b in zip(ann.elems, actual.elems)))
        return actual if isinstance(ann, TV) else ann

    def check_literals(self):
        for t, value, loc in self.literals:
            t = resolve_scalar(t)
            if t.is_int:
                lo, hi = INT_RANGE[t.name]
                if not t.is_signed:
                    lo = -hi  # `-1u8` is the negation of 1u8, which wraps
                if not (lo <= value <= hi):
                    raise self.err(f"The literal {value} does not fit in type {t.name}.", loc)
            elif t.is_float and isinstance(value, int) and abs(value) > 2 ** 1023:
                raise self.err(f"The literal {value} does not fit in type {t.name}.", loc)

    # ---- patterns

    def check_dup_names(self, pats, where):
        seen = set()
        for p in pats:
            for name, loc in P.pat_names(p):
                if name in seen:
                    raise self.err(f'The name "{name}" is bound twice in {where}.', loc)
                seen.add(name)

    def bind_pattern(self, pat, val, env, ann_env, what, sizes=None):
        """Bind the names of `pat` to the parts of `val` in env. Type annotations are checked against
        the value (their sizes are looked up in ann_env; None: already checked). `sizes` maps the
        names of size parameters still to be bound (`?n` markers) to their value once bound."""
        if isinstance(pat, P.PName):
            env[pat.name] = val
            return
        if isinstance(pat, P.PWild):
            return
        if isinstance(pat, P.PTyped):
            if ann_env is not None:
                self.check_annotation(pat.type, val, ann_env, what, pat.loc, sizes)
            self.bind_pattern(pat.pat, val, env, ann_env, what, sizes)
            return
        if isinstance(pat, P.PTuple):
            t = prune(val.t) if isinstance(val, V) else None
            if not isinstance(t, Tuple):
                shown = "a function" if isinstance(val, FunV) else f"type {self.show(t)}"
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the {what} has "
                               f"{shown}.", pat.loc)
            if len(t.elems) != len(pat.elems):
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the {what} is a tuple "
                               f"of {len(t.elems)}: {self.show(t)}.", pat.loc)
            for p, v in zip(pat.elems, split_tuple(val)):
                self.bind_pattern(p, v, env, ann_env, what, sizes)
            return
        raise AssertionError(pat)  # pragma: no cover

    def check_annotation(self, te, val, env, what, loc, sizes=None):
        """Check `val` against the annotation te, binding size parameters listed in `sizes`."""
        if isinstance(val, FunV):
            raise self.err(f"The {what} is a function, but is annotated with a type.", loc)

        def dimfn(kind, v, dloc):
            if kind == "name" and sizes is not None and v in sizes:
                return sizes[v] if sizes[v] is not None else "?" + v
            if kind == "name" and v not in env:
                raise self.err(f'Unknown size "{v}" in type annotation.', dloc)
            return self.local_type_dim(kind, v, dloc, env)
        ann = self.resolve_type(te, dimfn)
        r = self.match_type(ann, val.t, sizes)
        if r:
            shown = self.show(map_dims(ann, lambda d: sizes.get(d[1:], d) if isinstance(d, str) and
                                       d.startswith("?") and sizes else d))
            raise self.err(f"The {what} is annotated as {shown}, but has {self.what(r)} {self.show(val.t)}.",
                           loc)

    def local_type_dim(self, kind, v, loc, env):
        if kind == "const":
            return v
        if kind == "any":
            return None
        if kind == "name":
            a = env.get(v)
            if not isinstance(a, V) or len(a.atoms) != 1 or unify(a.t, I64):
                shown = "a function" if isinstance(a, FunV) else self.show(a.t)
                raise self.err(f'The size "{v}" must have type i64, but has type {shown}.', loc)
            return S.dim_of(a.atom)
        x = self.lower_val(v, env)
        if unify(x.t, I64):
            raise self.err(f"A size must have type i64, but this expression has type {self.show(x.t)}.", v.loc)
        return S.dim_of(x.atom)

    def match_type(self, ann, act, sizes):
        """Unify an annotation with an actual type; `?n` dims bind sizes[n] on first use."""
        ann, act = prune(ann), prune(act)
        if isinstance(ann, (Array, TArr)) and isinstance(act, type(ann)):
            if len(ann.shape) != len(act.shape):
                return "type"
            r = self.match_type(ann.elem, act.elem, sizes) if isinstance(ann, TArr) else unify(ann.elem, act.elem)
            for x, y in zip(ann.shape, act.shape):
                if isinstance(x, str) and x.startswith("?"):
                    name = x[1:]
                    if sizes.get(name) is None:
                        sizes[name] = y
                        x = y
                    else:
                        x = sizes[name]
                if x is not None and x != y:
                    r = _worse(r, "size")
            return r
        if isinstance(ann, Tuple) and isinstance(act, Tuple):
            if len(ann.elems) != len(act.elems):
                return "type"
            r = None
            for a, b in zip(ann.elems, act.elems):
                r = _worse(r, self.match_type(a, b, sizes))
            return r
        return unify(ann, act)

    # ---- expressions

    def lower(self, e, env):
        """Lower an expression to a value (V) or a function value (FunV)."""
        m = getattr(self, "lower_" + type(e).__name__, None)
        if m is None:  # pragma: no cover
            raise self.err("This expression is not supported by incflat.", e.loc)
        return m(e, env)

    def lower_val(self, e, env, what=None) -> V:
        x = self.lower(e, env)
        if isinstance(x, FunV):
            raise self.not_a_value(x, e.loc, what)
        return x

    def lower_atom(self, e, env, what=None) -> S.Atom:
        """Lower an expression that must be a scalar or an array (not a tuple)."""
        v = self.lower_val(e, env, what)
        t = prune(v.t)
        if isinstance(t, (Tuple, TArr)):
            raise self.err(f"{what or 'This expression'} cannot be a tuple, but has type {self.show(t)}.", e.loc)
        return v.atom

    def not_a_value(self, f, loc, what=None):
        desc = self.fun_desc(f)
        n = self.arity(f)
        tail = f"; it expects {n} more argument{'s' if n != 1 else ''}" if n else ""
        return self.err(f"{desc} is a function{tail}, but {what or 'a value'} is expected here. (A function "
                        f"can only be applied, or passed to map, reduce, scan, filter and the like.)",
                        loc)

    def fn_what(self, f):
        d = self.fun_desc(f)
        return d[0].lower() + d[1:] if d.startswith("This") else d

    def fun_desc(self, f):
        if isinstance(f, Named):
            if f.pre:
                return f'"{f.name}" applied to {len(f.pre)} argument{"s" if len(f.pre) != 1 else ""}'
            return f'"{f.name}"'
        if isinstance(f, Partial):
            return f"{self.fun_desc(f.fn)} applied to {len(f.pre)} argument{'s' if len(f.pre) != 1 else ''}"
        if isinstance(f, Closure):
            return {"lambda": "This lambda", "local": f'"{f.name}"', "inline": f'"{f.name}"'}[f.kind]
        return "This operator section"

    def lower_AtomE(self, e, env):
        return e.atom

    def literal(self, kind, value, suffix, loc):
        if kind == "bool":
            return S.Const(bool(value), BOOL)
        if suffix is not None:
            t = Scalar(suffix)
        else:
            t = TV("float" if kind == "float" else "num")
        self.literals.append((t, value, loc))
        return S.Const(value, t)

    def lower_Lit(self, e, env):
        return atom_v(self.literal(e.kind, e.value, e.suffix, e.loc))

    def lower_Ident(self, e, env):
        name = e.name
        if name in env:
            v = env[name]
            self.check_use(v, e.loc, name)
            return v
        f = self.global_fun(name, e.loc)
        if isinstance(f, Named) and self.arity(f) == 0:
            return self.apply(f, [], e.loc)
        return f

    def global_fun(self, name, loc):
        if name in self.funs:
            return Named(name, "user", loc)
        if name in BUILTIN_ARITY:
            return Named(name, "builtin", loc)
        if name == self.current:
            raise self.err(f'"{name}" calls itself; recursion is not allowed in Futhark.', loc)
        if name in self.later:
            raise self.err(f'Unknown name "{name}": it is defined later (line {self.later[name].line}); '
                           f'a function must be defined before it is used.', loc)
        raise self.unknown(name, loc)

    def unknown(self, name, loc):
        if name == "unsafe":
            return self.err('"unsafe" is not supported by incflat; use the attribute #[unsafe] instead.', loc)
        if name in NOT_SUPPORTED:
            return self.err(f'"{name}" is not supported by incflat.', loc)
        if name in PRIM_NAMES:
            return self.err(f'"{name}" is a type, not a value; its functions are written {name}.f, as in '
                            f'{name}.max.', loc)
        return self.err(f'Unknown name "{name}".', loc)

    def lower_QualIdent(self, e, env):
        parts = e.parts
        if len(parts) == 2 and parts[0] in PRIM_NAMES and parts[1] in ARRAY_REDUCTIONS:
            return Named(e.name, "prelude", e.loc)
        sig = prelude_lookup(parts)
        if sig is None:
            if parts[0] in env:
                raise self.err(f'"{parts[0]}" is a value, not a module; records are not supported by '
                               f'incflat, and tuple fields are written {parts[0]}.0.', e.loc)
            raise self.unknown(e.name, e.loc)
        ptypes, rt, const = sig
        if not ptypes:
            return atom_v(S.Const(const, rt))
        return Named(e.name, "prelude", e.loc)

    def lower_App(self, e, env):
        f = self.lower(e.fn, env)
        args = [Arg(self.lower(a, env), a.loc) for a in e.args]
        if isinstance(f, V):
            if isinstance(e.fn, P.Ident):
                hint = ""
                if is_arr(prune(f.t)) and isinstance(e.args[0], P.ArrayE):
                    hint = f" (To index it, write {e.fn.name}[...] with no space before the bracket.)"
                raise self.err(f'"{e.fn.name}" is a value of type {self.show(f.t)}, not a function; it cannot '
                               f'be applied to arguments.{hint}', e.fn.loc)
            if isinstance(e.fn, P.Lit):
                raise self.err("A literal is not a function; it cannot be applied to arguments.", e.fn.loc)
            raise self.err(f"This expression has type {self.show(f.t)}, not a function; it cannot be applied "
                           f"to arguments.", e.fn.loc)
        return self.apply(f, args, e.loc)

    def lower_NegE(self, e, env):
        if isinstance(e.x, P.Lit) and e.x.kind != "bool":
            return atom_v(self.literal(e.x.kind, -e.x.value, e.x.suffix, e.loc))
        x = self.lower_val(e.x, env)
        if not is_scalar(x.t) or not require(x.t, "num"):
            raise self.err(f'Unary "-" needs a numeric operand, but got {self.show(x.t)}.', e.loc)
        return atom_v(self.emit(S.UnOp("neg", x.atom, prune(x.t)), prune(x.t), e.loc))

    def lower_NotE(self, e, env):
        x = self.lower_val(e.x, env)
        t = prune(x.t)
        if isinstance(t, Scalar) and t.name == "bool":
            op = "!"
        elif is_scalar(t) and require(t, "int"):
            op = "~"  # Futhark's `!` on an integer is its bitwise complement
        else:
            raise self.err(f'"!" needs an operand of type bool or an integer type, but got '
                           f'{self.show(x.t)}.', e.loc)
        return atom_v(self.emit(S.UnOp(op, x.atom, t), t, e.loc))

    def lower_BinOpE(self, e, env):
        x = self.lower_val(e.lhs, env)
        y = self.lower_val(e.rhs, env)
        return self.binop(e.op, x, y, e.loc)

    def binop(self, op, x: V, y: V, loc, hint=None) -> V:
        if op in ("|>", "<|"):  # only reachable through a section
            raise self.err(f'The operator "{op}" cannot be used in a section.', loc)
        if op == "++":
            return self.concat([Arg(x, loc), Arg(y, loc)], loc)
        tx, ty = prune(x.t), prune(y.t)
        if op in EQ_OPS and isinstance(tx, Tuple) and isinstance(ty, Tuple):
            return self.tuple_eq(op, x, y, loc)
        if not is_scalar(tx) or not is_scalar(ty):
            bad = tx if not is_scalar(tx) else ty
            if isinstance(bad, Tuple):
                raise self.err(f'The operator "{op}" cannot be applied to tuples (operand of type '
                               f'{self.show(bad)}).', loc)
            raise self.err(f'The operator "{op}" cannot be applied to arrays (operand of type '
                           f'{self.show(bad)}); use map.', loc)
        if unify(tx, ty):
            raise self.err(f'The operands of "{op}" have different types: {self.show(tx)} and '
                           f'{self.show(ty)}.', loc)
        if op in ARITH_OPS or op in ORD_OPS:
            cls, need = "num", "a numeric type"
        elif op in INT_OPS:
            cls, need = "int", "an integer type"
        elif op in LOGIC_OPS:
            cls, need = "bool", "bool"
        else:
            cls, need = "prim", "a primitive type"
        if not require(tx, cls):
            raise self.err(f'The operator "{op}" needs operands of {need}, but got {self.show(tx)}.', loc)
        rt = BOOL if (op in ORD_OPS or op in EQ_OPS or op in LOGIC_OPS) else prune(tx)
        return atom_v(self.emit(S.BinOp(op, x.atom, y.atom, rt), rt, loc, hint))

    def tuple_eq(self, op, x, y, loc):
        if unify(x.t, y.t):
            raise self.err(f'The operands of "{op}" have different types: {self.show(x.t)} and '
                           f'{self.show(y.t)}.', loc)
        res = None
        for a, b in zip(split_tuple(x), split_tuple(y)):
            r = self.binop("==", a, b, loc)
            res = r if res is None else self.binop("&&", res, r, loc)
        if op == "!=":
            res = atom_v(self.emit(S.UnOp("!", res.atom, BOOL), BOOL, loc))
        return res

    def lower_TupleE(self, e, env):
        return tuple_v([self.lower_val(x, env, "a tuple element") for x in e.elems])

    def lower_ProjE(self, e, env):
        x = self.lower_val(e.x, env)
        t = prune(x.t)
        if not isinstance(t, Tuple):
            raise self.err(f"Cannot take field {e.field_} of a value of type {self.show(t)}: only tuples have "
                           f"fields.", e.field_loc)
        if e.field_ >= len(t.elems):
            raise self.err(f"Tuple of type {self.show(t)} has no field {e.field_} (fields are numbered from 0 "
                           f"to {len(t.elems) - 1}).", e.field_loc)
        return split_tuple(x)[e.field_]

    def lower_AscribeE(self, e, env):
        x = self.lower_val(e.x, env)
        if not e.coerce:
            def dimfn(kind, v, loc):
                return self.local_type_dim(kind, v, loc, env)
            ann = self.resolve_type(e.type, dimfn)
            r = unify(ann, x.t)
            if r:
                raise self.err(f"The expression has {self.what(r)} {self.show(x.t)}, but is annotated as "
                               f"{self.show(ann)}.", e.loc)
            return x
        # x :> t : the same type with (perhaps) other sizes, checked at run time
        ann = self.resolve_type(e.type, lambda kind, v, loc: self.local_type_dim(kind, v, loc, env))
        r = unify(ann, x.t)
        if r == "type":
            raise self.err(f"Cannot coerce a value of type {self.show(x.t)} to {self.show(ann)}: a size coercion "
                           f"can only change sizes.", e.loc)
        if r is None:
            return x
        t = self.fill_any(ann, x.t)
        atoms = []
        for a, lt in zip(x.atoms, leaves(t)):
            if prune(a.type) == prune(lt) or not isinstance(a, S.Var):
                atoms.append(a)
            else:
                atoms.append(self.bind(S.AtomExp(a), lt, e.loc, "coerced"))
                self.alias_to(atoms[-1:], [a])
        return V(t, tuple(atoms))

    # ---- let, if

    def lower_LetE(self, e, env):
        env = dict(env)
        while True:  # a loop rather than recursion: let chains can be long
            if isinstance(e, P.LetE):
                n0 = len(self.stms)
                val = self.lower(e.rhs, env)
                q = e.pat.pat if isinstance(e.pat, P.PTyped) else e.pat
                self.check_dup_names([e.pat], "this pattern")
                if isinstance(q, P.PName):
                    val = self.rename_result(val, q.name, n0)
                sizes = {n: None for n, _ in e.sizes} if e.sizes else None
                if sizes is not None and not isinstance(e.pat, P.PTyped) and not self.pat_has_ann(e.pat):
                    raise self.err("The sizes bound by let [n] must be used in a type annotation of the "
                                   "pattern.", e.loc)
                self.bind_pattern(e.pat, val, env, env, f'value of "{q.name}"' if isinstance(q, P.PName)
                                  else "value bound here", sizes)
                if sizes:
                    for n, loc in e.sizes:
                        if sizes[n] is None:
                            raise self.err(f'The size "{n}" is not used in the pattern.', loc)
                        env[n] = atom_v(self.dim_atom(sizes[n]))
                e = e.body
            elif isinstance(e, P.LetFunE):
                env[e.name] = Closure(e.params, e.ret, e.rhs, dict(env), e.loc, "local", e.name,
                                      tuple(n for n, _ in e.sizes))
                self.check_local_fun(env[e.name])
                e = e.body
            else:
                return self.lower(e, env)

    lower_LetFunE = lower_LetE

    @staticmethod
    def pat_has_ann(p):
        if isinstance(p, P.PTyped):
            return True
        if isinstance(p, P.PTuple):
            return any(Checker.pat_has_ann(x) for x in p.elems)
        return False

    def rename_result(self, val, name, n0):
        """`let y = e`: name the variable holding e's value after y (e.g. y_3), when e made it."""
        if not isinstance(val, V) or len(val.atoms) != 1 or len(self.stms) <= n0:
            return val
        a = val.atoms[0]
        last = self.stms[-1]
        if not isinstance(a, S.Var) or len(last.pat) != 1 or last.pat[0] != a:
            return val
        new = S.Var(self.fresh(name), a.type)
        self.dim_text[new.name] = name
        self.stms[-1] = S.Stm((new,), last.exp, last.loc)
        for k, v in list(self.cse.items()):
            if v == a:
                self.cse[k] = new
        if a.name in self.defs:
            self.defs[new.name] = self.defs.pop(a.name)
        if a.name in self.alias:
            self.alias[new.name] = (self.alias.pop(a.name) - {a.name}) | {new.name}
        return V(val.t, (new,))

    def check_local_fun(self, c: Closure):
        """A local function whose parameters are all annotated is checked where it is defined (its
        uses inline it again), so that an unused ill-typed one is still rejected."""
        def typed(p):
            if isinstance(p, P.PTyped):
                return True
            if isinstance(p, P.PTuple):
                return all(typed(x) for x in p.elems)
            return False
        if not all(typed(p) for p in c.params):
            return
        saved = self.push()
        saved_lits = len(self.literals)
        c0 = dict(self.consumed)
        own = {n: self.fresh(n) for n in c.sizes}  # the function's size parameters, for the check

        def dimfn(kind, v, loc):
            if kind == "any":
                return self.fresh("d")
            if kind == "name" and v in own:
                return own[v]
            return self.local_type_dim(kind, v, loc, c.env)
        try:
            args = []
            for p in c.params:
                t = self.pat_type(p, c.name, dimfn)
                args.append(Arg(self.param_vars(p, t, keep_names=False), p.loc))
            self.apply(c, args, c.loc)
        finally:
            self.pop(saved)
            del self.literals[saved_lits:]
            self.consumed = c0

    def lower_IfE(self, e, env):
        c = self.lower_val(e.cond, env)
        if not is_scalar(c.t) or unify(c.t, BOOL):
            raise self.err(f'The condition of "if" must have type bool, but has type {self.show(c.t)}.',
                           e.cond.loc)
        c0 = dict(self.consumed)
        saved = self.push()
        a = self.lower(e.then, env)
        then_stms = self.pop(saved)
        c1, self.consumed = self.consumed, dict(c0)
        saved = self.push()
        b = self.lower(e.else_, env)
        else_stms = self.pop(saved)
        self.consumed.update(c1)
        if isinstance(a, FunV) or isinstance(b, FunV):
            raise self.err('The branches of "if" cannot be functions.', e.loc)
        r = unify(a.t, b.t)
        if r == "type":
            raise self.err(f'The branches of "if" have different types: {self.show(a.t)} and '
                           f'{self.show(b.t)}.', e.loc)
        lt = {v.name for s in then_stms for v in s.pat}
        le = {v.name for s in else_stms for v in s.pat}
        return self.make_if(c.atom, then_stms, a, else_stms, b, lt, le, e.loc)

    def export_dim(self, d, local, loc=None):
        """A dimension d named inside a nested body, as a dimension outside it (recomputed from
        outer variables when d was computed from them), or None when that is impossible."""
        if d is None or isinstance(d, int) or d not in local:
            return d
        if d in self.defs and self.defs[d][0] in SAFE_SIZE_OPS:
            op, x, y = self.defs[d]
            xs = self.export_atom(x, local, loc)
            ys = self.export_atom(y, local, loc)
            if xs is not None and ys is not None:
                return S.dim_of(self.size_op(op, xs, ys, loc))
        return None

    def dim_key(self, d, local):
        """What export_dim(d, local) would compute, without computing it (None: impossible)."""
        if d is None or isinstance(d, int) or d not in local:
            return d
        if d in self.defs and self.defs[d][0] in SAFE_SIZE_OPS:
            op, x, y = self.defs[d]
            kx = x.value if isinstance(x, S.Const) else self.dim_key(x.name, local)
            ky = y.value if isinstance(y, S.Const) else self.dim_key(y.name, local)
            if kx is not None and ky is not None:
                return (op, kx, ky)
        return None

    def export_atom(self, a, local, loc=None):
        if isinstance(a, S.Const):
            return a
        d = self.export_dim(a.name, local, loc)
        return None if d is None else self.dim_atom(d)

    def make_if(self, cond, then_stms, a, else_stms, b, lt, le, loc):
        """An If whose result sizes are those of both branches where they agree and are known
        outside, and existential sizes (extra i64 results bound first) elsewhere."""
        ext = {}  # (then dim, else dim) -> size name
        ext_order = []

        def dim(dt, de):
            if dt == de and dt not in lt and dt not in le:
                return dt
            kt = self.dim_key(dt, lt)
            if kt is not None and kt == self.dim_key(de, le):
                return self.export_dim(dt, lt, loc)
            key = (dt, de)
            if key not in ext:
                ext[key] = self.fresh("size")
                self.dim_text[ext[key]] = "?"
                ext_order.append(key)
            return ext[key]

        ta, tb = prune(a.t), prune(b.t)
        t = self.zip_dims(ta, tb, dim)
        then_res = tuple(self.dim_atom(k[0]) for k in ext_order) + a.atoms
        else_res = tuple(self.dim_atom(k[1]) for k in ext_order) + b.atoms
        types = (I64,) * len(ext_order) + tuple(leaves(t))
        names = [ext[k] for k in ext_order]
        pat = tuple(S.Var(n, I64) for n in names) + tuple(S.Var(self.fresh(None), lt_) for lt_ in leaves(t))
        self.stms.append(S.Stm(pat, S.If(cond, S.Body(tuple(then_stms), then_res),
                                         S.Body(tuple(else_stms), else_res), types), loc))
        for v, x, y in zip(pat[len(names):], a.atoms, b.atoms):
            self.alias_to([v], [x, y])
        return V(t, pat[len(names):])

    def zip_dims(self, ta, tb, f):
        """ta with each dimension replaced by f(dim of ta, dim of tb) (same structure)."""
        ta, tb = prune(ta), prune(tb)
        if isinstance(ta, Array):
            return Array(ta.elem, tuple(f(x, y) for x, y in zip(ta.shape, tb.shape)))
        if isinstance(ta, TArr):
            return TArr(tuple(f(x, y) for x, y in zip(ta.shape, tb.shape)), self.zip_dims(ta.elem, tb.elem, f))
        if isinstance(ta, Tuple):
            return Tuple(tuple(self.zip_dims(x, y, f) for x, y in zip(ta.elems, tb.elems)))
        return ta

    # ---- loops

    def loop_init_from_pat(self, pat, env):
        """`loop (x, y) for ...`: the initial values are the variables of the same names."""
        if isinstance(pat, P.PTyped):
            return self.loop_init_from_pat(pat.pat, env)
        if isinstance(pat, P.PName):
            if pat.name not in env or isinstance(env[pat.name], FunV):
                raise self.err(f'The loop parameter "{pat.name}" has no initial value: write '
                               f'"loop {pat.name} = ..." or bind "{pat.name}" before the loop.', pat.loc)
            self.check_use(env[pat.name], pat.loc, pat.name)
            return env[pat.name]
        if isinstance(pat, P.PTuple):
            return tuple_v([self.loop_init_from_pat(p, env) for p in pat.elems])
        raise self.err("A loop parameter written _ needs an initial value.", pat.loc)

    def loop_annotation(self, pat, t, env):
        """The loop parameters' declared type: t where annotations give sizes: `[]` sizes are
        None (free to change), named ones ("fix", d) (must not change)."""
        if isinstance(pat, P.PTyped):
            ann = self.resolve_type(pat.type, lambda kind, v, loc: self.local_type_dim(kind, v, loc, env))
            r = unify(ann, t)
            if r:
                raise self.err(f"The loop parameter is annotated as {self.show(ann)}, but its initial value has "
                               f"{self.what(r)} {self.show(t)}.", pat.loc)
            inner = self.loop_annotation(pat.pat, t, env)
            return self.zip_dims(ann, inner, lambda x, y: None if x is None else ("fix", x))
        if isinstance(pat, P.PTuple):
            t = prune(t)
            if not isinstance(t, Tuple) or len(t.elems) != len(pat.elems):
                n = len(t.elems) if isinstance(t, Tuple) else None
                raise self.err(f"This tuple pattern has {len(pat.elems)} elements, but the loop's initial value "
                               f"has type {self.show(t)}" + (f" ({n} elements)." if n else "."), pat.loc)
            return Tuple(tuple(self.loop_annotation(p, e, env) for p, e in zip(pat.elems, t.elems)))
        return t

    def lower_LoopE(self, e, env):
        self.check_dup_names([e.pat], "the loop parameters")
        init = self.loop_init_from_pat(e.pat, env) if e.init is None else self.lower(e.init, env)
        if isinstance(init, FunV):
            raise self.err("A loop parameter cannot be a function.", e.loc)
        declared = self.loop_annotation(e.pat, init.t, env)
        dl = leaves(declared)
        init_t = self.fill_any(map_dims(declared, lambda d: d[1] if isinstance(d, tuple) else d), init.t)
        init_leaves = leaves(init_t)
        # Sizes are generalised by group: the dimensions (leaf, dim) that must stay equal (the outer
        # dimensions of an array of tuples) form one group.
        groups = self.dim_groups(init_t)
        fixed = {groups[(k, j)] for k, lt in enumerate(dl) for j, d in enumerate(shape_of(lt))
                 if isinstance(d, tuple)}
        # the groups whose size may change from one iteration to the next
        gen = {groups[(k, j)] for k, lt in enumerate(dl) for j, d in enumerate(shape_of(lt)) if d is None}
        form = e.form
        # the loop form's outer parts are lowered once, outside the loop
        if isinstance(form, P.ForUpto):
            bound = self.lower_atom(form.bound, env, "The bound of a for loop")
            if not require(bound.type, "int"):
                raise self.err(f"The bound of a for loop must be an integer, but has type "
                               f"{self.show(bound.type)}.", form.bound.loc)
        elif isinstance(form, P.ForIn):
            arr = self.lower_val(form.arr, env)
            if not is_arr(prune(arr.t)):
                raise self.err(f"A for-in loop needs an array, but this has type {self.show(arr.t)}.",
                               form.arr.loc)
            bound = self.dim_atom(shape_of(prune(arr.t))[0])
        c0 = dict(self.consumed)
        outer_barrier = self.barrier
        for _ in range(64):
            self.consumed = dict(c0)
            self.barrier = (self.counter, "inside a loop body (only the loop's parameters can be updated there)")
            size_names = {}
            for g in sorted(gen, key=repr):
                size_names[g] = self.fresh("size")
                self.dim_text[size_names[g]] = "?"
            ptypes = []
            for k, lt in enumerate(init_leaves):
                if is_arr(lt):
                    lt = Array(lt.elem, tuple(size_names.get(groups[(k, j)], d) for j, d in enumerate(lt.shape)))
                ptypes.append(lt)
            ptree = self.rebuild(init_t, ptypes)
            params = self.param_vars(e.pat, ptree, keep_names=False)
            env2 = dict(env)
            self.bind_pattern(e.pat, params, env2, None, "loop parameter")
            saved = self.push()
            if isinstance(form, P.ForUpto):
                i = S.Var(self.fresh(form.name), bound.type)
                self.dim_text[i.name] = form.name
                env2[form.name] = atom_v(i)
                lform = S.ForLoop(i, bound)
            elif isinstance(form, P.ForIn):
                i = S.Var(self.fresh("i"), I64)
                elem = self.index_value(arr, [i], form.arr.loc)
                self.bind_pattern(form.pat, elem, env2, env2, "loop element")
                lform = S.ForLoop(i, bound)
            else:
                cs = self.push()
                c = self.lower_val(form.cond, env2)
                if not is_scalar(c.t) or unify(c.t, BOOL):
                    raise self.err(f'The condition of "while" must have type bool, but has type '
                                   f'{self.show(c.t)}.', form.cond.loc)
                cond_stms = self.pop(cs)
                lform = S.WhileLoop(S.Body(tuple(cond_stms), (c.atom,)))
            res = self.lower(e.body, env2)
            body_stms = self.pop(saved)
            self.barrier = outer_barrier
            if isinstance(res, FunV):
                raise self.err("The body of a loop cannot be a function.", e.body.loc)
            r = unify(ptree, res.t)
            if r == "type":
                raise self.err(f"The loop body returns {self.show(res.t)}, but the loop parameters have type "
                               f"{self.show(ptree)}.", e.body.loc)
            new_gen = set()
            for k, (pt, rt) in enumerate(zip(ptypes, leaves(res.t))):
                for j, (pd, rd) in enumerate(zip(shape_of(pt), shape_of(prune(rt)))):
                    g = groups[(k, j)]
                    if g in gen or pd == rd:
                        continue
                    if g in fixed:
                        raise self.err(f"The loop body returns {self.show(res.t)}, but the loop parameter is "
                                       f"declared as {self.show(ptree)} (size mismatch).", e.body.loc)
                    new_gen.add(g)
            if not new_gen:
                break
            gen |= new_gen
        sizes = tuple(size_names[g] for g in sorted(gen, key=repr))
        out_names = {n: self.fresh("size") for n in sizes}
        for n in out_names.values():
            self.dim_text[n] = "?"
        out_types = [map_dims(pt, lambda d: out_names.get(d, d)) for pt in ptypes]
        pat = tuple(S.Var(out_names[n], I64) for n in sizes) + \
            tuple(S.Var(self.fresh("loop"), t) for t in out_types)
        loop = S.Loop(sizes, params.atoms, init.atoms, lform, S.Body(tuple(body_stms), res.atoms))
        # a parameter updated in place in the body consumes its initial value
        used_up = [any(r in self.consumed for r in self.roots(p)) for p in params.atoms]
        self.consumed = c0
        for x, u in zip(init.atoms, used_up):
            if u:
                self.consume(V(x.type, (x,)), e.loc, self.show_atom(x), "the loop (it is updated in the loop body)")
        self.stms.append(S.Stm(pat, loop, e.loc))
        for v, x, u in zip(pat[len(sizes):], init.atoms, used_up):
            if not u:
                self.alias_to([v], [x])
        return V(self.rebuild(init_t, out_types), pat[len(sizes):])

    def show_atom(self, a):
        if isinstance(a, S.Var):
            return self.dim_text.get(a.name, a.name)
        return str(a.value)

    @staticmethod
    def dim_groups(t) -> dict:
        """For each (leaf, dim) position of type t, a key shared by the positions that must have the same
        size: those of the outer dimensions of an array of tuples."""
        groups = {}
        k = 0

        def go(t, prefix):
            nonlocal k
            t = prune(t)
            if isinstance(t, Tuple):
                for x in t.elems:
                    go(x, prefix)
            elif isinstance(t, TArr):
                go(t.elem, prefix + [("tuples", k, len(prefix) + j) for j in range(len(t.shape))])
            else:
                for j in range(len(prefix) + rank_of(t)):
                    groups[(k, j)] = prefix[j] if j < len(prefix) else (k, j)
                k += 1
        go(t, [])
        return groups

    def rebuild(self, t, leaf_types):
        """The checker type of structure t whose leaves are leaf_types."""
        it = iter(leaf_types)

        def go(t):
            t = prune(t)
            if isinstance(t, Tuple):
                return Tuple(tuple(go(x) for x in t.elems))
            if isinstance(t, TArr):
                ls = [next(it) for _ in range(nleaves(t.elem))]
                shape = ls[0].shape[:len(t.shape)]
                return TArr(shape, self.rebuild(t.elem, [drop_dims(x, len(t.shape)) for x in ls]))
            return next(it)
        return go(t)

    # ---- arrays: literals, indexing, updates

    def lower_ArrayE(self, e, env):
        vals = [self.lower_val(x, env, "an array element") for x in e.elems]
        t0 = vals[0].t
        for v, x in zip(vals[1:], e.elems[1:]):
            r = unify(t0, v.t)
            if r:
                raise self.err(f"All elements of an array literal must have the same {self.what(r)}, but the "
                               f"first has {self.what(r)} {self.show(t0)} and this one {self.show(v.t)}.", x.loc)
        t = arr_of(prune(t0), (len(vals),))
        atoms = []
        for k, lt in enumerate(leaves(t)):
            atoms.append(self.bind(S.ArrayLit(tuple(v.atoms[k] for v in vals), lt), lt, e.loc, "arr"))
        return V(t, tuple(atoms))

    def index_atom(self, x, loc):
        """A point index: any integer type, converted to i64."""
        t = prune(x.t)
        if not is_scalar(t) or not require(t, "int"):
            raise self.err(f"An array index must be an integer, but this has type {self.show(t)}.", loc)
        return self.to_i64(x.atom, loc)

    def slice_part(self, e, env, what):
        if e is None:
            return None
        x = self.lower_val(e, env)
        if not is_scalar(x.t) or unify(x.t, I64):
            raise self.err(f"The {what} of a slice must have type i64, but has type {self.show(x.t)}.", e.loc)
        return x.atom

    def lower_IndexE(self, e, env):
        arr = self.lower_val(e.arr, env)
        t = prune(arr.t)
        if not is_arr(t):
            raise self.err(f"Only arrays can be indexed, but this has type {self.show(t)}.", e.arr.loc)
        if len(e.idxs) > rank_of(t):
            raise self.err(f"Too many indices: {len(e.idxs)} for an array of type {self.show(t)} (rank "
                           f"{rank_of(t)}).", e.idx_loc)
        idxs = []
        for k, ix in enumerate(e.idxs):
            n = shape_of(t)[k]
            if isinstance(ix, P.SliceI):
                idxs.append(self.make_slice(ix, n, env))
            else:
                idxs.append(self.index_atom(self.lower_val(ix, env), ix.loc))
        return self.index_value(arr, idxs, e.loc)

    def make_slice(self, ix: P.SliceI, n, env) -> S.DimSlice:
        start = self.slice_part(ix.start, env, "start")
        end = self.slice_part(ix.end, env, "end")
        stride = self.slice_part(ix.stride, env, "stride")
        loc = ix.loc
        na = self.dim_atom(n)
        # Futhark knows the size of a[:k], a[0:k], a[:k:1] and a[0:k:1] for a variable or constant k.
        if (start is None or (isinstance(start, S.Const) and start.value == 0)) and end is not None and \
                (stride is None or (isinstance(stride, S.Const) and stride.value == 1)) and \
                isinstance(ix.end, (P.Ident, P.Lit)):
            return S.DimSlice(S.Const(0, I64), end, S.Const(1, I64), end)
        if stride is None:
            stride = S.Const(1, I64)
        if isinstance(stride, S.Const):
            s = int(stride.value)
            if s == 0:
                raise self.err("The stride of a slice cannot be zero.", ix.stride.loc)
            if start is None:
                start = S.Const(0, I64) if s > 0 else self.size_op("-", na, S.Const(1, I64), loc, fold=True)
            if end is None:
                end = na if s > 0 else S.Const(-1, I64)
            if s == 1:
                size = self.size_op("-", end, start, loc, cse=False, fold=True)
            elif s == -1:
                size = self.size_op("-", start, end, loc, cse=False, fold=True)
            else:
                diff = self.size_op("-", end, start, loc, fold=True)
                adj = self.size_op("+", diff, S.Const(s - (1 if s > 0 else -1), I64), loc, fold=True)
                size = self.emit(S.BinOp("//", adj, stride, I64), I64, loc, cse=False)
        else:
            pos = self.emit(S.BinOp(">", stride, S.Const(0, I64), BOOL), BOOL, loc)
            if start is None:
                start = self.select(pos, S.Const(0, I64), self.size_op("-", na, S.Const(1, I64), loc, fold=True), loc)
            if end is None:
                end = self.select(pos, na, S.Const(-1, I64), loc)
            sgn = self.emit(S.PrimCall("i64.sgn", (stride,), I64), I64, loc)
            diff = self.size_op("-", end, start, loc, fold=True)
            adj = self.size_op("+", diff, self.size_op("-", stride, sgn, loc, fold=True), loc)
            size = self.emit(S.BinOp("//", adj, stride, I64), I64, loc, cse=False)
        if isinstance(size, S.Var):
            self.dim_text[size.name] = "?"
        elif not isinstance(size, S.Var):  # a constant: still an unknown size for Futhark
            size = self.bind(S.AtomExp(size), I64, loc, "len")
            self.dim_text[size.name] = "?"
        return S.DimSlice(start, end, stride, size)

    def select(self, c, a, b, loc):
        v = S.Var(self.fresh("sel"), I64)
        self.stms.append(S.Stm((v,), S.If(c, S.Body((), (a,)), S.Body((), (b,)), (I64,)), loc))
        return v

    def index_value(self, arr: V, idxs, loc) -> V:
        """arr[idxs] for an array or array of tuples; idxs are i64 atoms or DimSlices."""
        t = prune(arr.t)
        kept = tuple(S.dim_of(i.size) for i in idxs if isinstance(i, S.DimSlice))
        if isinstance(t, Array):
            rt = arr_of(t.elem, kept + t.shape[len(idxs):])
        else:
            rt = arr_of(t.elem, kept + t.shape[len(idxs):])
        atoms = []
        for a, lt in zip(arr.atoms, leaves(rt)):
            atoms.append(self.bind(S.Index(a, tuple(idxs)), lt, loc, "elem" if not kept else "slice"))
            self.alias_to(atoms[-1:], [a])
        return V(rt, tuple(atoms))

    def lower_WithE(self, e, env):
        arr = self.lower_val(e.arr, env)
        t = prune(arr.t)
        if not is_arr(t):
            raise self.err(f'Only arrays can be updated with "with", but this has type {self.show(t)}.',
                           e.arr.loc)
        if len(e.idxs) > rank_of(t):
            raise self.err(f"Too many indices: {len(e.idxs)} for an array of type {self.show(t)} (rank "
                           f"{rank_of(t)}).", e.loc)
        idxs = []
        for ix in e.idxs:
            if isinstance(ix, P.SliceI):
                raise self.err('Slices in "with" updates are not supported by incflat; update one element '
                               '(or row) at a time, or use scatter.', ix.loc)
            idxs.append(self.index_atom(self.lower_val(ix, env), ix.loc))
        val = self.lower_val(e.value, env)
        et = drop_dims(t, len(idxs))
        r = unify(et, val.t)
        if r:
            raise self.err(f"The new value has {self.what(r)} {self.show(val.t)}, but the updated element has "
                           f"{self.what(r)} {self.show(et)}.", e.value.loc)
        atoms = []
        for a, x in zip(arr.atoms, val.atoms):
            atoms.append(self.bind(S.Update(a, tuple(idxs), x), a.type, e.loc, "upd"))
        self.consume(arr, e.loc, self.source_text(e.arr))
        return V(t, tuple(atoms))

    # ---- application

    def arity(self, f) -> int:
        if isinstance(f, Named):
            if f.kind == "user":
                n = len(self.funs[f.name].ptypes)
            elif f.kind == "builtin":
                n = BUILTIN_ARITY[f.name]
            elif f.name.split(".")[1] in ARRAY_REDUCTIONS:
                n = 1
            else:
                n = len(prelude_lookup(f.name.split("."))[0])
            return n - len(f.pre)
        if isinstance(f, Closure):
            return len(f.params)
        if isinstance(f, Partial):
            return len(f.fn.params) - len(f.pre)
        if isinstance(f, Section):
            return (2 if f.side == "none" else 1) - len(f.pre)
        raise TypeError(f)

    def curried_arity(self, f) -> int:
        """How many arguments f can take in a row (a lambda returning a lambda takes more)."""
        n = self.arity(f)
        body = f.body if isinstance(f, Closure) else f.fn.body if isinstance(f, Partial) else None
        while isinstance(body, P.LambdaE):
            n += len(body.params)
            body = body.body
        return n

    def apply(self, f, args, loc):
        """Apply a function value to arguments (Arg), inlining or emitting an Apply."""
        n = self.arity(f)
        if isinstance(f, Named) and f.name in ("unflatten", "unflatten_3d") and len(args) + len(f.pre) > 1:
            raise self.err(f'"{f.name}" takes only the array: since Futhark 0.25 its sizes come from the array\'s '
                           f'type, [n*m]t. Write "{f.name} xs" where xs has such a type, or coerce it: '
                           f'"{f.name} (xs :> [n*m]t)".', f.loc)
        if len(args) < n:
            if isinstance(f, Closure):
                return Partial(f, tuple(args), loc)
            if isinstance(f, Partial):
                return Partial(f.fn, f.pre + tuple(args), f.loc)
            return dataclasses.replace(f, pre=f.pre + tuple(args))
        now, rest = args[:n], args[n:]
        r = self.call(f, now, loc)
        if rest:
            if not isinstance(r, FunV):
                if isinstance(f, Named):
                    m = n + len(f.pre)
                    raise self.err(f'"{f.name}" expects {m} argument{"s" if m != 1 else ""}, but is applied to '
                                   f'{len(args) + len(f.pre)}.', f.loc or loc)
                raise self.err(f"{self.fun_desc(f)} takes {n} argument{'s' if n != 1 else ''}, but is applied "
                               f"to {len(args)}.", f.loc or loc)
            return self.apply(r, rest, loc)
        return r

    def call(self, f, args, loc):
        if isinstance(f, Named):
            args = list(f.pre) + list(args)
            if f.kind == "user":
                sig = self.funs[f.name]
                if sig.inline:
                    d = sig.decl
                    c = Closure(d.params, d.ret, d.body, {}, d.loc, "inline", d.name,
                                tuple(n for n, _ in d.size_params))
                    return self.call_closure(c, args, f.loc)
                return self.call_user(sig, args, f.loc)
            if f.kind == "builtin":
                name = f.name
                key = "map" if name in SOAC_MAPS else "zip" if name in ZIPS else "unzip" if name in UNZIPS \
                    else name
                return getattr(self, "builtin_" + key)(name, args, f.loc)
            return self.call_prelude(f.name, args, f.loc)
        if isinstance(f, Closure):
            return self.call_closure(f, list(args), loc)
        if isinstance(f, Partial):
            return self.call_closure(f.fn, list(f.pre) + list(args), loc)
        if isinstance(f, Section):
            args = list(f.pre) + list(args)
            vals = []
            for a in args:
                if isinstance(a.val, FunV):
                    raise self.not_a_value(a.val, a.loc, f'an operand of "{f.op}"')
                vals.append(a.val)
            if f.side == "left":
                x, y = f.given, vals[0]
            elif f.side == "right":
                x, y = vals[0], f.given
            else:
                x, y = vals
            return self.binop(f.op, x, y, f.op_loc)
        raise TypeError(f)

    def call_closure(self, c: Closure, args, loc):
        env = dict(c.env)
        sizes = {n: None for n in c.sizes} if c.sizes else None
        seen = set()
        for p, a in zip(c.params, args):
            for name, nloc in P.pat_names(p):
                if name in seen:
                    raise self.err(f'The name "{name}" is bound twice in the parameters of '
                                   f'{"this lambda" if c.kind == "lambda" else repr(c.name)}.', nloc)
                seen.add(name)
            q = p.pat if isinstance(p, P.PTyped) else p
            what = f'parameter "{q.name}"' if isinstance(q, P.PName) else "parameter"
            if c.kind != "lambda":
                what += f' of "{c.name}"'
            ann_env = dict(env)
            if sizes:
                for n, dm in sizes.items():
                    if dm is not None:
                        ann_env[n] = atom_v(self.dim_atom(dm))
            try:
                self.bind_pattern(p, a.val, env, ann_env, what, sizes)
            except CompileError as err:
                # a wrong argument of a named function: point at the argument
                if c.kind == "lambda" or a.loc is None or "annotated" not in err.message:
                    raise
                raise self.err(err.message, a.loc) from None
        if sizes:
            for n, dm in sizes.items():
                if dm is None:
                    raise self.err(f'The size parameter "{n}" of "{c.name}" is not determined by the '
                                   f'arguments.', c.loc)
                env[n] = atom_v(self.dim_atom(dm))
        r = self.lower(c.body, env)
        if c.ret is not None:
            if isinstance(r, FunV):
                raise self.err("The body is a function, but a return type is given.", c.body.loc)
            ann = self.resolve_type(c.ret, lambda kind, v, dloc: self.local_type_dim(kind, v, dloc, env))
            rr = unify(ann, r.t)
            if rr:
                who = "The lambda's" if c.kind == "lambda" else f'"{c.name}"\'s'
                raise self.err(f"{who} return type is annotated as {self.show(ann)}, but its body has "
                               f"{self.what(rr)} {self.show(r.t)}.", c.body.loc)
            r = V(self.fill_any(ann, r.t), r.atoms) if rr is None else r
        return r

    def call_user(self, sig: FunSig, args, loc):
        atoms = []
        subst = {}
        bindable = set(sig.size_params) | {p.name for p in sig.params}
        for i, a in enumerate(args):
            if isinstance(a.val, FunV):
                raise self.not_a_value(a.val, a.loc, f'argument {i + 1} of "{sig.name}"')
        # i64 parameters may be used as sizes in the types of other parameters and the result
        flat = [x for a in args for x in a.val.atoms]
        for p, x in zip(sig.params, flat):
            if prune(p.type) == I64 and is_scalar(x.type) and unify(x.type, I64) is None:
                subst[p.name] = S.dim_of(x)
        for i, (pt, a) in enumerate(zip(sig.ptypes, args)):
            at = a.val.t
            r = self.inst_match(pt, at, subst, bindable)
            if r:
                expected = map_dims(pt, lambda d: subst.get(d, d) if isinstance(d, str) else d)
                extra = " (size mismatch)" if r == "size" else ""
                raise self.err(f'Argument {i + 1} of "{sig.name}" has type {self.show(at)}, but '
                               f'{self.show(expected)} is expected{extra}.', a.loc)
            atoms.extend(a.val.atoms)
        rt = map_dims(sig.ret, lambda d: self.inst_term(d, subst, loc))
        ls = leaves(rt)
        vs = self.bind_many(S.Apply(sig.name, tuple(atoms), tuple(ls)), ls, loc, [None] * len(ls))
        for u, a in zip(sig.uniques, args):
            if u:
                self.consume(a.val, a.loc, self.arg_name(a), f'"{sig.name}" (its parameter is unique)')
        return V(rt, vs)

    def inst_term(self, d, subst, loc):
        if isinstance(d, int):
            return d
        if isinstance(d, tuple):
            op, x, y = d
            xa = self.dim_atom(self.inst_term(x, subst, loc))
            ya = self.dim_atom(self.inst_term(y, subst, loc))
            return S.dim_of(self.size_op(op, xa, ya, loc))
        return subst.get(d, d)

    def inst_match(self, pt, at, subst, bindable):
        """Match a parameter type against an argument type, binding the callee's sizes."""
        pt, at = prune(pt), prune(at)
        if isinstance(pt, (Array, TArr)):
            if not isinstance(at, type(pt)) or len(pt.shape) != len(at.shape):
                return "type"
            r = self.inst_match(pt.elem, at.elem, subst, bindable) if isinstance(pt, TArr) else \
                unify(pt.elem, at.elem)
            if r == "type":
                return r
            for pd, ad in zip(pt.shape, at.shape):
                if isinstance(pd, str) and pd in bindable:
                    if pd in subst and subst[pd] != ad:
                        r = _worse(r, "size")
                    subst.setdefault(pd, ad)
                elif pd != ad:
                    r = _worse(r, "size")
            return r
        if isinstance(pt, Tuple):
            if not isinstance(at, Tuple) or len(at.elems) != len(pt.elems):
                return "type"
            r = None
            for x, y in zip(pt.elems, at.elems):
                r = _worse(r, self.inst_match(x, y, subst, bindable))
            return r
        return unify(pt, at)

    def call_prelude(self, name, args, loc):
        mod, fn = name.split(".")
        if fn in ARRAY_REDUCTIONS:
            return self.prelude_reduction(mod, fn, args[0], loc)
        ptypes, rt, _ = prelude_lookup((mod, fn))
        atoms = []
        for i, (a, pt) in enumerate(zip(args, ptypes)):
            if isinstance(a.val, FunV):
                raise self.not_a_value(a.val, a.loc, f'an argument of "{name}"')
            x = a.val
            if not is_scalar(x.t) or unify(x.t, pt):
                which = "an argument" if len(ptypes) == 1 else f"argument {i + 1}"
                raise self.err(f'"{name}" expects {which} of type {pt}, but got {self.show(x.t)}.', a.loc)
            atoms.append(x.atom)
        return atom_v(self.emit(S.PrimCall(name, tuple(atoms), rt), rt, loc))

    # ---- function arguments of SOACs

    def instantiate(self, f, ptypes, soac, loc, hints=None):
        """The S.Lambda for function value f applied to parameters of the given checker types, and
        its result's checker type (sizes known outside the lambda)."""
        n = len(ptypes)
        plural = "s" if n != 1 else ""
        if not isinstance(f, FunV):
            raise self.err(f'The first argument of "{soac}" must be a function, but this is a value of type '
                           f'{self.show(f.t)}.', loc)
        if self.arity(f) > n or self.curried_arity(f) < n:
            raise self.err(f'The function passed to "{soac}" must take {n} argument{plural}, but '
                           f'{self.fn_what(f)} takes {self.arity(f)}.', loc)
        names = self.param_hints(f, n) if hints is None else hints
        outer_barrier, c0 = self.barrier, dict(self.consumed)
        self.barrier = (self.counter, f'inside the function passed to "{soac}"')
        params = [self.fresh_v(t, nm) for t, nm in zip(ptypes, names)]
        for p, nm in zip(params, names):
            for a in p.atoms:
                self.dim_text[a.name] = nm
        saved = self.push()
        res = self.apply(f, [Arg(p, loc) for p in params], loc)
        self.barrier, self.consumed = outer_barrier, c0
        if isinstance(res, FunV):
            self.pop(saved)
            raise self.err(f'The function passed to "{soac}" must take {n} argument{plural}, but '
                           f'{self.fn_what(f)} takes more.', loc)
        body_stms = self.pop(saved)
        local = {v.name for s in body_stms for v in s.pat} | {a.name for p in params for a in p.atoms}
        bloc = f.body.loc if isinstance(f, Closure) else f.fn.body.loc if isinstance(f, Partial) else loc
        rt = self.export_type(res.t, local, bloc, f'the result of the function passed to "{soac}"')
        lam = S.Lambda(tuple(a for p in params for a in p.atoms), S.Body(tuple(body_stms), res.atoms),
                       tuple(leaves(rt)))
        return lam, rt

    def export_type(self, t, local, loc, what):
        def f(d):
            x = self.export_dim(d, local, loc)
            if x is None:
                raise self.err(f'The size "{self.show_dim(d)}" of {what} is computed inside it, so it '
                               f'is not known outside; incflat (like Futhark) needs sizes known outside.', loc)
            return x
        return map_dims(t, f)

    def param_hints(self, f, n):
        params = f.params if isinstance(f, Closure) else f.fn.params[len(f.pre):] if isinstance(f, Partial) else []
        out = []
        for k in range(n):
            p = params[k] if k < len(params) else None
            while isinstance(p, P.PTyped):
                p = p.pat
            out.append(p.name if isinstance(p, P.PName) else ("x", "y", "z", "w", "v")[k % 5])
        return out

    def lower_LambdaE(self, e, env):
        return Closure(e.params, e.ret, e.body, env, e.loc, "lambda")

    def lower_SectionE(self, e, env):
        if e.left is not None:
            return Section(e.op, e.op_loc, self.lower_val(e.left, env), "left", e.loc)
        if e.right is not None:
            return Section(e.op, e.op_loc, self.lower_val(e.right, env), "right", e.loc)
        return Section(e.op, e.op_loc, None, "none", e.loc)

    # ---- builtins

    def arg_name(self, a: Arg):
        """A name for an argument in messages: the source text at its location (one line)."""
        lines = self.text.splitlines()
        if a.loc and 1 <= a.loc.line <= len(lines):
            import re
            m = re.match(r"[\w'.]+|\([^()]*\)", lines[a.loc.line - 1][a.loc.col - 1:])
            if m:
                return m.group(0)
        return "the argument"

    def arg_array(self, name, a: Arg, argno):
        if isinstance(a.val, FunV) or not is_arr(prune(a.val.t)):
            shown = "a function" if isinstance(a.val, FunV) else f"has type {self.show(a.val.t)}"
            raise self.err(f'Argument {argno} of "{name}" must be an array, but {shown}.', a.loc)
        return a.val

    def arg_value(self, name, a: Arg, argno):
        if isinstance(a.val, FunV):
            raise self.not_a_value(a.val, a.loc, f'argument {argno} of "{name}"')
        return a.val

    def arg_i64(self, name, a: Arg, what="size argument"):
        v = self.arg_value(name, a, 1)
        if not is_scalar(v.t) or unify(v.t, I64):
            raise self.err(f'The {what} of "{name}" must have type i64, but has type {self.show(v.t)}.', a.loc)
        return v.atom

    def same_outer(self, name, arrs, loc):
        d0 = shape_of(prune(arrs[0].t))[0]
        for a in arrs[1:]:
            d = shape_of(prune(a.t))[0]
            if d != d0:
                note = ""
                if self.show_dim(d) == self.show_dim(d0):
                    note = (" (The two sizes are not known to be equal: they are unknown sizes, or sizes "
                            "computed at run time. If they are equal, coerce one array to the other's size "
                            "with :>.)")
                raise self.err(f'Cannot apply "{name}" to arrays of sizes [{self.show_dim(d0)}] and '
                               f'[{self.show_dim(d)}].{note}', loc)
        return d0

    def builtin_map(self, name, args, loc):
        f, arr_args = args[0], args[1:]
        arrs = [self.arg_array(name, a, i + 2) for i, a in enumerate(arr_args)]
        d0 = self.same_outer(name, arrs, loc)
        lam, rt = self.instantiate(f.val, [row_type(prune(a.t)) for a in arrs], name, f.loc)
        t = arr_of(rt, (d0,))
        ls = leaves(t)
        vs = self.bind_many(S.Map(self.dim_atom(d0), lam, tuple(x for a in arrs for x in a.atoms)), ls, loc,
                            [None] * len(ls))
        return V(t, vs)

    def reduce_like(self, name, args, loc):
        f, ne_a, arr_a = args
        ne = self.arg_value(name, ne_a, 2)
        arr = self.arg_array(name, arr_a, 3)
        t = row_type(prune(arr.t))
        r = unify(ne.t, t)
        if r:
            w = self.what(r)
            raise self.err(f'The neutral element of "{name}" has {w} {self.show(ne.t)}, but the array elements '
                           f'have {w} {self.show(t)}.', ne_a.loc)
        lam, rt = self.instantiate(f.val, [t, t], name, f.loc)
        if unify(rt, t):
            raise self.err(f'The operator of "{name}" must have type t -> t -> t, where t = {self.show(t)} is '
                           f'the element type, but it returns {self.show(rt)}.', f.loc)
        return lam, ne, arr, t

    def builtin_reduce(self, name, args, loc):
        lam, ne, arr, t = self.reduce_like(name, args, loc)
        w = self.dim_atom(shape_of(prune(arr.t))[0])
        ls = leaves(t)
        vs = self.bind_many(S.Reduce(w, lam, ne.atoms, arr.atoms, commutative=(name == "reduce_comm")), ls, loc,
                            [None] * len(ls))
        return V(t, vs)

    builtin_reduce_comm = builtin_reduce

    def builtin_scan(self, name, args, loc):
        lam, ne, arr, t = self.reduce_like(name, args, loc)
        d = shape_of(prune(arr.t))[0]
        rt = arr_of(t, (d,))
        ls = leaves(rt)
        vs = self.bind_many(S.Scan(self.dim_atom(d), lam, ne.atoms, arr.atoms), ls, loc, [None] * len(ls))
        return V(rt, vs)

    def builtin_filter(self, name, args, loc):
        f, arr_a = args
        arr = self.arg_array(name, arr_a, 2)
        t = prune(arr.t)
        lam, rt = self.instantiate(f.val, [row_type(t)], name, f.loc)
        if not is_scalar(rt) or unify(rt, BOOL):
            raise self.err(f'The predicate of "filter" must return bool, but returns {self.show(rt)}.', f.loc)
        size = self.fresh("size")
        self.dim_text[size] = "?"
        res_t = arr_of(row_type(t), (size,))
        pat = (S.Var(size, I64),) + tuple(S.Var(self.fresh("filtered"), lt) for lt in leaves(res_t))
        self.stms.append(S.Stm(pat, S.Filter(self.dim_atom(shape_of(t)[0]), lam, arr.atoms, size), loc))
        return V(res_t, pat[1:])

    def builtin_zip(self, name, args, loc):
        arrs = [self.arg_array(name, a, i + 1) for i, a in enumerate(args)]
        d0 = self.same_outer(name, arrs, loc)
        return V(TArr((d0,), Tuple(tuple(row_type(prune(a.t)) for a in arrs))), tuple(x for a in arrs for x in a.atoms))

    def builtin_unzip(self, name, args, loc):
        k = UNZIPS[name]
        a = self.arg_array(name, args[0], 1)
        t = prune(a.t)
        if not isinstance(t, TArr) or len(t.shape) != 1 or len(t.elem.elems) != k:
            raise self.err(f'"{name}" needs a one-dimensional array of {k}-tuples, but got {self.show(t)}.',
                           args[0].loc)
        return tuple_v(unzip_v(a))

    def builtin_transpose(self, name, args, loc):
        a = self.arg_array(name, args[0], 1)
        t = prune(a.t)
        if rank_of(t) < 2:
            raise self.err(f'"transpose" needs an array of at least two dimensions, but got {self.show(t)}.',
                           args[0].loc)
        sh = shape_of(t)
        rt = arr_of(drop_dims(t, 2), (sh[1], sh[0]))
        atoms = [self.bind(S.Rearrange((1, 0), x), lt, loc) for x, lt in zip(a.atoms, leaves(rt))]
        self.alias_pairs(atoms, a.atoms)
        return V(rt, tuple(atoms))

    def builtin_iota(self, name, args, loc):
        n = self.arg_i64(name, args[0])
        return atom_v(self.bind(S.Iota(n, I64), Array(I64, (S.dim_of(n),)), loc))

    def builtin_replicate(self, name, args, loc):
        n = self.arg_i64(name, args[0])
        x = self.arg_value(name, args[1], 2)
        rt = arr_of(prune(x.t), (S.dim_of(n),))
        atoms = [self.bind(S.Replicate(n, a), lt, loc) for a, lt in zip(x.atoms, leaves(rt))]
        return V(rt, tuple(atoms))

    def builtin_length(self, name, args, loc):
        a = self.arg_array(name, args[0], 1)
        return atom_v(self.dim_atom(shape_of(prune(a.t))[0]))

    def builtin_null(self, name, args, loc):
        n = self.builtin_length(name, args, loc)
        return atom_v(self.emit(S.BinOp("==", n.atom, S.Const(0, I64), BOOL), BOOL, loc))

    def builtin_indices(self, name, args, loc):
        n = self.builtin_length(name, args, loc)
        return atom_v(self.bind(S.Iota(n.atom, I64), Array(I64, (S.dim_of(n.atom),)), loc))

    def builtin_copy(self, name, args, loc):
        v = self.arg_value(name, args[0], 1)
        return V(v.t, tuple(self.bind(S.AtomExp(a), a.type, loc, "copy") if isinstance(a, S.Var) and
                            is_arr(prune(a.type)) else a for a in v.atoms))

    def builtin_id(self, name, args, loc):
        return self.arg_value(name, args[0], 1)

    def concat(self, args, loc, name="++"):
        xs = self.arg_array(name, args[0], 1)
        ys = self.arg_array(name, args[1], 2)
        tx, ty = prune(xs.t), prune(ys.t)
        r = unify(row_type(tx), row_type(ty))
        if r:
            raise self.err(f'Cannot concatenate arrays of types {self.show(tx)} and {self.show(ty)}: their '
                           f'elements have different {self.what(r)}s.', loc)
        n, m = shape_of(tx)[0], shape_of(ty)[0]
        size = self.size_op("+", self.dim_atom(n), self.dim_atom(m), loc)
        rt = arr_of(row_type(tx), (S.dim_of(size),))
        atoms = [self.bind(S.Concat((a, b), size), lt, loc) for a, b, lt in zip(xs.atoms, ys.atoms, leaves(rt))]
        return V(rt, tuple(atoms))

    def builtin_concat(self, name, args, loc):
        return self.concat(args, loc, name)

    def builtin_rotate(self, name, args, loc):
        r = self.arg_i64(name, args[0], "rotation amount")
        a = self.arg_array(name, args[1], 2)
        atoms = [self.bind(S.Rotate(r, x), x.type, loc) for x in a.atoms]
        return V(a.t, tuple(atoms))

    def builtin_flatten(self, name, args, loc, k=2):
        a = self.arg_array(name, args[0], 1)
        t = prune(a.t)
        if rank_of(t) < k:
            raise self.err(f'"{name}" needs an array of at least {k} dimensions, but got {self.show(t)}.',
                           args[0].loc)
        sh = shape_of(t)
        size = self.dim_atom(sh[0])
        for d in sh[1:k]:
            size = self.size_op("*", size, self.dim_atom(d), loc)
        rt = arr_of(drop_dims(t, k), (S.dim_of(size),))
        atoms = [self.bind(S.Reshape((size,) + tuple(self.dim_atom(d) for d in shape_of(lt)[1:]), x), lt, loc)
                 for x, lt in zip(a.atoms, leaves(rt))]
        self.alias_pairs(atoms, a.atoms)
        return V(rt, tuple(atoms))

    def builtin_flatten_3d(self, name, args, loc):
        return self.builtin_flatten(name, args, loc, 3)

    def factors(self, d, k):
        """The factors d = f1 * ... * fk of a size computed as a product, or None."""
        if k == 1:
            return [d]
        if isinstance(d, str) and d in self.defs and self.defs[d][0] == "*":
            _, x, y = self.defs[d]
            left = self.factors(S.dim_of(x), k - 1)
            if left is not None:
                return left + [S.dim_of(y)]
        return None

    def builtin_unflatten(self, name, args, loc, k=2):
        a = self.arg_array(name, args[0], 1)
        t = prune(a.t)
        d = shape_of(t)[0]
        fs = self.factors(d, k)
        if fs is None:
            stars = "*".join("nmlk"[:k])
            dims = "".join(f"[{c}]" for c in "nmlk"[:k])
            raise self.err(f'"{name}" needs an array whose size is a product {stars} in its type (it returns '
                           f'{dims}t), but got {self.show(t)}; coerce it first, e.g. '
                           f'"{name} (xs :> [{stars}]t)".', args[0].loc)
        rt = arr_of(row_type(t), tuple(fs))
        atoms = [self.bind(S.Reshape(tuple(self.dim_atom(x) for x in shape_of(lt)), x), lt, loc)
                 for x, lt in zip(a.atoms, leaves(rt))]
        self.alias_pairs(atoms, a.atoms)
        return V(rt, tuple(atoms))

    def builtin_unflatten_3d(self, name, args, loc):
        return self.builtin_unflatten(name, args, loc, 3)

    def builtin_scatter(self, name, args, loc):
        dest = self.arg_array(name, args[0], 1)
        idx = self.arg_array(name, args[1], 2)
        vals = self.arg_array(name, args[2], 3)
        it = prune(idx.t)
        if not isinstance(it, Array) or it.rank != 1 or unify(it.elem, I64):
            raise self.err(f'The indices passed to "scatter" must have type []i64, but have type {self.show(it)}.',
                           args[1].loc)
        td, tv = prune(dest.t), prune(vals.t)
        r = unify(row_type(td), row_type(tv))
        if r:
            raise self.err(f'The values passed to "scatter" have type {self.show(tv)}, but the destination has '
                           f'type {self.show(td)}: the elements have different {self.what(r)}s.', args[2].loc)
        if shape_of(it)[0] != shape_of(tv)[0]:
            raise self.err(f'The indices and values passed to "scatter" must have the same size, but have sizes '
                           f'[{self.show_dim(shape_of(it)[0])}] and [{self.show_dim(shape_of(tv)[0])}].', loc)
        atoms = [self.bind(S.Scatter(d, idx.atom, v), d.type, loc) for d, v in zip(dest.atoms, vals.atoms)]
        self.consume(dest, args[0].loc, self.arg_name(args[0]), '"scatter"')
        return V(td, tuple(atoms))

    def builtin_reverse(self, name, args, loc):
        a = self.arg_array(name, args[0], 1)
        n = shape_of(prune(a.t))[0]
        na = self.dim_atom(n)
        start = self.size_op("-", na, S.Const(1, I64), loc, fold=True)
        return self.index_value(a, [S.DimSlice(start, S.Const(-1, I64), S.Const(-1, I64), na)], loc)

    def builtin_head(self, name, args, loc):
        a = self.arg_array(name, args[0], 1)
        return self.index_value(a, [S.Const(0, I64)], loc)

    def builtin_last(self, name, args, loc):
        a = self.arg_array(name, args[0], 1)
        n = self.dim_atom(shape_of(prune(a.t))[0])
        return self.index_value(a, [self.size_op("-", n, S.Const(1, I64), loc, fold=True)], loc)

    def sub_slice(self, a, start, end, size, loc):
        return self.index_value(a, [S.DimSlice(start, end, S.Const(1, I64), size)], loc)

    def builtin_tail(self, name, args, loc):
        a = self.arg_array(name, args[0], 1)
        n = self.dim_atom(shape_of(prune(a.t))[0])
        return self.sub_slice(a, S.Const(1, I64), n, self.size_op("-", n, S.Const(1, I64), loc), loc)

    def builtin_init(self, name, args, loc):
        a = self.arg_array(name, args[0], 1)
        n = self.dim_atom(shape_of(prune(a.t))[0])
        m = self.size_op("-", n, S.Const(1, I64), loc)
        return self.sub_slice(a, S.Const(0, I64), m, m, loc)

    def builtin_take(self, name, args, loc):
        i = self.arg_i64(name, args[0], "count")
        a = self.arg_array(name, args[1], 2)
        return self.sub_slice(a, S.Const(0, I64), i, i, loc)

    def builtin_drop(self, name, args, loc):
        i = self.arg_i64(name, args[0], "count")
        a = self.arg_array(name, args[1], 2)
        n = self.dim_atom(shape_of(prune(a.t))[0])
        return self.sub_slice(a, i, n, self.size_op("-", n, i, loc), loc)

    def builtin_sized(self, name, args, loc):
        n = self.arg_i64(name, args[0])
        a = self.arg_array(name, args[1], 2)
        t = prune(a.t)
        if shape_of(t)[0] == S.dim_of(n):
            return a
        rt = arr_of(row_type(t), (S.dim_of(n),))
        atoms = [self.bind(S.AtomExp(x), lt, loc, "sized") for x, lt in zip(a.atoms, leaves(rt))]
        self.alias_pairs(atoms, a.atoms)
        return V(rt, tuple(atoms))

    def builtin_tabulate(self, name, args, loc):
        n = self.arg_i64(name, args[0])
        f = args[1]
        io = atom_v(self.bind(S.Iota(n, I64), Array(I64, (S.dim_of(n),)), loc))
        return self.builtin_map("tabulate", [f, Arg(io, loc)], loc)

    def bool_reduce(self, name, op, ne, arr, loc):
        t = prune(arr.t)
        if not isinstance(t, Array) or t.rank != 1 or unify(t.elem, BOOL):
            raise self.err(f'"{name}" needs an array of type []bool, but got {self.show(t)}.', loc)
        lam = self.op_lambda(op, BOOL, loc)
        return atom_v(self.bind(S.Reduce(self.dim_atom(t.shape[0]), lam, (S.Const(ne, BOOL),), arr.atoms), BOOL,
                                loc))

    def builtin_and(self, name, args, loc):
        return self.bool_reduce(name, "&&", True, self.arg_array(name, args[0], 1), args[0].loc)

    def builtin_or(self, name, args, loc):
        return self.bool_reduce(name, "||", False, self.arg_array(name, args[0], 1), args[0].loc)

    def builtin_all(self, name, args, loc):
        m = self.builtin_map(name, args, loc)
        return self.bool_reduce(name, "&&", True, m, loc)

    def builtin_any(self, name, args, loc):
        m = self.builtin_map(name, args, loc)
        return self.bool_reduce(name, "||", False, m, loc)

    def builtin_foldl(self, name, args, loc):
        f, acc_a, arr_a = args
        acc = self.arg_value(name, acc_a, 2)
        arr = self.arg_array(name, arr_a, 3)
        t = prune(arr.t)
        n = self.dim_atom(shape_of(t)[0])
        outer_barrier, c0 = self.barrier, dict(self.consumed)
        self.barrier = (self.counter, 'inside the function passed to "foldl"')
        params = self.fresh_v(acc.t, "acc")
        saved = self.push()
        i = S.Var(self.fresh("i"), I64)
        x = self.index_value(arr, [i], loc)
        res = self.apply(f.val, [Arg(params, loc), Arg(x, loc)], loc)
        body = self.pop(saved)
        self.barrier, self.consumed = outer_barrier, c0
        if isinstance(res, FunV) or unify(res.t, acc.t):
            shown = "a function" if isinstance(res, FunV) else self.show(res.t)
            raise self.err(f'The function passed to "foldl" must return the accumulator\'s type '
                           f'{self.show(acc.t)}, but returns {shown}.', f.loc)
        for pt, rt in zip(leaves(acc.t), leaves(res.t)):
            if shape_of(prune(pt)) != shape_of(prune(rt)):
                raise self.err(f'The function passed to "foldl" changes the size of the accumulator: '
                               f'{self.show(acc.t)} becomes {self.show(res.t)}.', f.loc)
        ls = leaves(acc.t)
        pat = tuple(S.Var(self.fresh("acc"), lt) for lt in ls)
        self.stms.append(S.Stm(pat, S.Loop((), params.atoms, acc.atoms, S.ForLoop(i, n),
                                           S.Body(tuple(body), res.atoms)), loc))
        return V(acc.t, pat)

    def op_lambda(self, op, t, loc):
        x, y = S.Var(self.fresh("x"), t), S.Var(self.fresh("y"), t)
        saved = self.push()
        if "." in op:
            r = self.emit(S.PrimCall(op, (x, y), t), t, loc, cse=False)
        else:
            rt = BOOL if op in LOGIC_OPS else t
            r = self.emit(S.BinOp(op, x, y, rt), rt, loc, cse=False)
        stms = self.pop(saved)
        return S.Lambda((x, y), S.Body(tuple(stms), (r,)), (t,))

    def prelude_reduction(self, mod, fn, a: Arg, loc):
        name = f"{mod}.{fn}"
        t = Scalar(mod)
        arr = self.arg_array(name, a, 1)
        at = prune(arr.t)
        if not isinstance(at, Array) or at.rank != 1 or unify(at.elem, t):
            raise self.err(f'"{name}" needs an array of type []{mod}, but got {self.show(at)}.', a.loc)
        if mod == "bool":
            raise self.err(f'"{name}" is not defined.', loc)
        if fn == "sum":
            op, ne = "+", 0
        elif fn == "product":
            op, ne = "*", 1
        elif fn == "maximum":
            op, ne = f"{mod}.max", prelude_lookup((mod, "lowest"))[2]
        else:
            op, ne = f"{mod}.min", prelude_lookup((mod, "highest"))[2]
        lam = self.op_lambda(op, t, loc)
        return atom_v(self.bind(S.Reduce(self.dim_atom(at.shape[0]), lam, (S.Const(coerce_value(ne, t), t),),
                                         arr.atoms, commutative=True), t, loc))


def check_program(decls, filename: str, text: str) -> S.Program:
    return Checker(decls, filename, text).check_program()
