"""Type checking and lowering: syntax tree (ir.parse) to the typed source IR in A-normal form.

One pass per function checks types and sizes and emits statements at the same time. Unsuffixed
literals get a literal type variable (`TV`) that unification resolves against the context, as
Futhark does: an integer literal may become any numeric type, a decimal literal any float
type; what stays unresolved at the end of a function defaults to i32 and f64. A last pass over
the function ("zonking") replaces the variables by the types they stand for.

Naming: the parameters and size parameters of a top-level function keep their source names;
every other variable gets a fresh name, unique in the whole program: the user's name (or `tmp`)
followed by `_` and a counter.
"""

import dataclasses
from typing import Optional

from ir import parse as P
from ir import source as S
from ir.errors import CompileError
from ir.types import BOOL, I64, PRIM_NAMES, Array, Scalar, Tuple

# ---------------------------------------------------------------- builtins and the prelude

SOAC_MAPS = {"map": 1, "map2": 2, "map3": 3, "map4": 4, "map5": 5}
BUILTIN_ARITY = {**{k: n + 1 for k, n in SOAC_MAPS.items()},
                 "reduce": 3, "reduce_comm": 3, "scan": 3,
                 "transpose": 1, "iota": 1, "replicate": 2, "length": 1}
FN_ARG_BUILTINS = set(SOAC_MAPS) | {"reduce", "reduce_comm", "scan"}  # argument 0 is a function

# Futhark prelude names that this subset does not have yet: a clearer message than "unknown".
NOT_YET = frozenset({
    "zip", "zip3", "unzip", "unzip3", "flatten", "unflatten", "filter", "scatter", "hist",
    "reduce_by_index", "partition", "rotate", "concat", "split", "reverse", "head", "tail",
    "last", "init", "take", "drop", "scan_comm", "foldl", "foldr", "all", "any", "sum",
    "product", "and", "or", "copy", "id", "const", "map_reduce", "stream_map", "stream_red",
    "tabulate", "tabulate_2d", "indices", "opaque", "trace", "manifest",
})

FLOAT_UNARY = ("sqrt", "exp", "log", "sin", "cos", "tan", "abs", "floor", "ceil")
FLOAT_BINARY = ("min", "max")
INT_UNARY = ("abs",)
INT_BINARY = ("min", "max")

INT_RANGE = {
    "i8": (-2 ** 7, 2 ** 7 - 1), "i16": (-2 ** 15, 2 ** 15 - 1),
    "i32": (-2 ** 31, 2 ** 31 - 1), "i64": (-2 ** 63, 2 ** 63 - 1),
    "u8": (0, 2 ** 8 - 1), "u16": (0, 2 ** 16 - 1), "u32": (0, 2 ** 32 - 1), "u64": (0, 2 ** 64 - 1),
}


def prelude_lookup(parts):
    """(param types, result type, constant value or None) for `f32.sqrt`, `i64.max`, `f32.i64`,
    `f32.pi`...; None when there is no such prelude name."""
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
        import math
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


def is_scalar(t):
    t = prune(t)
    return isinstance(t, (Scalar, TV))


def mk_array(elem, shape):
    """`[shape]elem`, where elem may be a literal type variable or an array."""
    shape = tuple(shape)
    if not shape:
        return elem
    elem = prune(elem)
    if isinstance(elem, Array):
        return Array(elem.elem, shape + elem.shape)
    return Array(elem, shape)


def row_type(t: Array):
    return mk_array(t.elem, t.shape[1:])


def unify(a, b) -> Optional[str]:
    """Make a and b equal by resolving literal type variables. None on success, 'type' for
    different types, 'size' for the same type with different sizes. A None dimension (`[]` in an
    annotation) matches any size."""
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
    if isinstance(a, Array) and isinstance(b, Array):
        if a.rank != b.rank:
            return "type"
        r = unify(a.elem, b.elem)
        if r:
            return r
        for x, y in zip(a.shape, b.shape):
            if x is not None and y is not None and x != y:
                return "size"
        return None
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


def zonk(x):
    """Replace every literal type variable in an IR value by the type it stands for."""
    if isinstance(x, TV):
        return resolve_scalar(x)
    if isinstance(x, (Scalar, str, int, float, bool, type(None), S.Loc)):
        return x
    if isinstance(x, tuple):
        return tuple(zonk(y) for y in x)
    if isinstance(x, Array):
        return Array(zonk(x.elem), x.shape)
    if isinstance(x, Tuple):
        return Tuple(zonk(x.elems))
    if isinstance(x, S.Const):
        t = zonk(x.type)
        return S.Const(coerce_value(x.value, t), t)
    if dataclasses.is_dataclass(x):
        return type(x)(**{f.name: zonk(getattr(x, f.name)) for f in dataclasses.fields(x)})
    raise TypeError(x)


# ---------------------------------------------------------------- the checker

@dataclasses.dataclass
class FunSig:
    name: str
    size_params: tuple
    params: tuple  # tuple[Var]
    ret: object  # Type
    loc: S.Loc


def collect_names(decls) -> set:
    """Every identifier the program mentions, so that fresh names never clash with them."""
    names = set()
    stack = []
    for d in decls:
        names.add(d.name)
        names.update(n for n, _ in d.size_params)
        stack.append(d.params)
        stack.append(d.body)
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, (P.Ident, P.Param, P.LetE)):
            names.add(x.name)
        if isinstance(x, P.Node) or isinstance(x, P.Param):
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x)
                         if f.name not in ("loc", "span", "name_loc", "op_loc"))
    return names


class Checker:
    def __init__(self, decls, filename, text):
        self.decls = decls
        self.filename = filename
        self.text = text
        self.reserved = collect_names(decls)
        self.counter = 0
        self.funs = {}  # name -> FunSig, for functions already checked
        self.later = {}  # name -> Loc of every declared function
        self.current = None
        self.stms = None
        self.literals = []  # (TV or Scalar, value, Loc): range-checked once types are known
        self.dim_text = {}  # internal size name -> how to show it to the user

    # ---- helpers

    def err(self, msg, loc):
        return CompileError(msg, loc)

    def fresh(self, base):
        base = base or "tmp"
        while True:
            self.counter += 1
            name = f"{base}_{self.counter}"
            if name not in self.reserved:
                self.reserved.add(name)
                return name

    def bind(self, exp, t, loc, hint=None) -> S.Var:
        v = S.Var(self.fresh(hint), t)
        if hint:
            self.dim_text[v.name] = hint
        self.stms.append(S.Stm((v,), exp, loc))
        return v

    def show_dim(self, d):
        if d is None:
            return ""
        if isinstance(d, int):
            return str(d)
        return self.dim_text.get(d, d)

    def show(self, t):
        t = prune(t)
        if isinstance(t, TV):
            return KIND_TEXT[t.kind]
        if isinstance(t, Scalar):
            return t.name
        if isinstance(t, Array):
            return "".join(f"[{self.show_dim(d)}]" for d in t.shape) + self.show(t.elem)
        return str(t)

    def source_text(self, e):
        a, b = e.span
        return " ".join(self.text[a:b].split())

    @staticmethod
    def dim_atom(d):
        return S.Const(d, I64) if isinstance(d, int) else S.Var(d, I64)

    def push(self):
        saved = self.stms
        self.stms = []
        return saved

    # ---- types written by the user

    def prim_type(self, te: P.TypeExp):
        if te.prim == "f16":
            raise self.err("The type f16 is not supported by incflat.", te.prim_loc)
        if te.prim not in PRIM_NAMES:
            raise self.err(f'Unknown type "{te.prim}".', te.prim_loc)
        return Scalar(te.prim)

    def local_type(self, te: P.TypeExp, env):
        """A type in a let or lambda annotation: sizes name i64 variables in scope."""
        dims = []
        for kind, v in te.dims:
            if kind == "const":
                dims.append(v)
            elif kind == "any":
                dims.append(None)
            else:
                a = env.get(v)
                if a is None:
                    raise self.err(f'Unknown size "{v}" in type annotation.', te.loc)
                if unify(a.type, I64):
                    raise self.err(f'The size "{v}" must have type i64, but has type {self.show(a.type)}.',
                                   te.loc)
                dims.append(S.dim_of(a))
        return mk_array(self.prim_type(te), dims)

    # ---- programs and functions

    def check_program(self) -> S.Program:
        for d in self.decls:
            if d.name in self.later:
                raise self.err(f'Duplicate definition of "{d.name}" (first defined at line '
                               f'{self.later[d.name].line}).', d.name_loc)
            self.later[d.name] = d.name_loc
        funs = []
        for d in self.decls:
            funs.append(self.check_fun(d))
        return S.Program(tuple(funs), self.filename)

    def check_fun(self, d: P.Decl) -> S.FunDef:
        self.current = d.name
        self.literals = []
        env = {}
        size_params = []
        bindable = set()  # names a dimension in the signature may use
        for name, loc in d.size_params:
            if name in env:
                raise self.err(f'The size parameter "{name}" is bound twice.', loc)
            env[name] = S.Var(name, I64)
            size_params.append(name)
            bindable.add(name)
        used_sizes = set()
        params = []
        for p in d.params:
            if p.type is None:
                raise self.err(f'The parameter "{p.name}" of "{d.name}" needs a type annotation, '
                               f'as in ({p.name}: i32).', p.loc)
            if p.name in env:
                raise self.err(f'The name "{p.name}" is bound twice in the parameters of "{d.name}".',
                               p.loc)
            dims = []
            for kind, v in p.type.dims:
                if kind == "const":
                    dims.append(v)
                elif kind == "any":
                    # An anonymous size: an implicit size parameter.
                    n = self.fresh("d")
                    self.dim_text[n] = "?"
                    size_params.append(n)
                    env_n = S.Var(n, I64)
                    bindable.add(n)
                    used_sizes.add(n)
                    dims.append(env_n.name)
                elif v in bindable:
                    used_sizes.add(v)
                    dims.append(v)
                else:
                    raise self.err(f'Unknown size "{v}" in the type of parameter "{p.name}"; declare it '
                                   f'as a size parameter: def {d.name} [{v}] ...', p.type.loc)
            t = mk_array(self.prim_type(p.type), dims)
            v = S.Var(p.name, t)
            env[p.name] = v
            params.append(v)
            if t == I64:
                bindable.add(p.name)
        for name, loc in d.size_params:
            if name not in used_sizes:
                raise self.err(f'The size parameter "{name}" of "{d.name}" is not used in the type of '
                               f'any parameter.', loc)
        ret_ann = None
        if d.ret is not None:
            dims = []
            for kind, v in d.ret.dims:
                if kind == "const":
                    dims.append(v)
                elif kind == "any":
                    dims.append(None)
                elif v in bindable:
                    dims.append(v)
                else:
                    raise self.err(f'Unknown size "{v}" in the return type of "{d.name}".', d.ret.loc)
            ret_ann = mk_array(self.prim_type(d.ret), dims)

        self.stms = []
        res = self.lower(d.body, env)
        body_t = res.type
        if ret_ann is not None:
            r = unify(ret_ann, body_t)
            if r:
                what = "size" if r == "size" else "type"
                raise self.err(f'"{d.name}" is declared to return {self.show(ret_ann)}, but its body has '
                               f'{what} {self.show(body_t)}.', d.body.loc)
            ret = ret_ann
            if isinstance(ret, Array) and None in ret.shape:
                ret = Array(ret.elem, tuple(x if x is not None else y
                                            for x, y in zip(ret.shape, prune(body_t).shape)))
        else:
            ret = body_t
        ret_p = prune(ret)
        if isinstance(ret_p, Array):
            for dim in ret_p.shape:
                if isinstance(dim, str) and dim not in bindable:
                    raise self.err(f'The size "{self.show_dim(dim)}" of the result of "{d.name}" is '
                                   f'computed in its body; incflat needs the result sizes to be size '
                                   f'parameters, i64 parameters or constants. Add a return type '
                                   f'annotation that names them.', d.body.loc)
        fd = S.FunDef(d.name, d.entry or d.name == "main", tuple(size_params), tuple(params),
                      (ret,), S.Body(tuple(self.stms), (res,)), d.loc)
        fd = zonk(fd)
        self.check_literals()
        self.funs[d.name] = FunSig(d.name, fd.size_params, fd.params, fd.ret[0], d.loc)
        self.stms = None
        return fd

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

    # ---- expressions

    def lower(self, e, env, hint=None) -> S.Atom:
        m = getattr(self, "lower_" + type(e).__name__, None)
        if m is None:  # pragma: no cover
            raise self.err("This expression is not supported by incflat.", e.loc)
        return m(e, env, hint)

    def lower_AtomE(self, e, env, hint):
        return e.atom

    def literal(self, kind, value, suffix, loc):
        if kind == "bool":
            return S.Const(bool(value), BOOL)
        if suffix is not None:
            t = Scalar(suffix)
            if t.is_int and isinstance(value, float):  # pragma: no cover - the lexer prevents this
                raise self.err("A decimal literal cannot have an integer type.", loc)
        else:
            t = TV("float" if kind == "float" else "num")
        self.literals.append((t, value, loc))
        return S.Const(value, t)

    def lower_Lit(self, e, env, hint):
        return self.literal(e.kind, e.value, e.suffix, e.loc)

    def lower_Ident(self, e, env, hint):
        return self.lower_app(e, [], e.loc, env, hint)

    def lower_QualIdent(self, e, env, hint):
        return self.lower_app(e, [], e.loc, env, hint)

    def lower_App(self, e, env, hint):
        return self.lower_app(e.fn, e.args, e.loc, env, hint)

    def lower_NegE(self, e, env, hint):
        if isinstance(e.x, P.Lit) and e.x.kind != "bool":
            return self.literal(e.x.kind, -e.x.value, e.x.suffix, e.loc)
        x = self.lower(e.x, env)
        if not require(x.type, "num"):
            raise self.err(f'Unary "-" needs a numeric operand, but got {self.show(x.type)}.', e.loc)
        return self.bind(S.UnOp("neg", x, x.type), x.type, e.loc, hint)

    def lower_NotE(self, e, env, hint):
        x = self.lower(e.x, env)
        t = prune(x.type)
        if isinstance(t, Scalar) and t.name == "bool":
            op = "!"
        elif require(t, "int"):
            op = "~"  # Futhark's `!` on an integer is its bitwise complement
        else:
            raise self.err(f'"!" needs an operand of type bool or an integer type, but got '
                           f'{self.show(x.type)}.', e.loc)
        return self.bind(S.UnOp(op, x, x.type), x.type, e.loc, hint)

    def lower_BinOpE(self, e, env, hint):
        x = self.lower(e.lhs, env)
        y = self.lower(e.rhs, env)
        return self.binop(e.op, x, y, e.loc, hint)

    def binop(self, op, x, y, loc, hint=None):
        if op in ("|>", "<|"):  # only reachable through a section
            raise self.err(f'The operator "{op}" cannot be used in a section.', loc)
        tx, ty = prune(x.type), prune(y.type)
        if not is_scalar(tx) or not is_scalar(ty):
            bad = tx if not is_scalar(tx) else ty
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
        rt = BOOL if (op in ORD_OPS or op in EQ_OPS or op in LOGIC_OPS) else tx
        return self.bind(S.BinOp(op, x, y, rt), rt, loc, hint)

    def lower_LetE(self, e, env, hint):
        env = dict(env)
        while isinstance(e, P.LetE):  # a loop rather than recursion: let chains can be long
            a = self.lower(e.rhs, env, hint=e.name)
            if e.ann is not None:
                ann = self.local_type(e.ann, env)
                r = unify(ann, a.type)
                if r:
                    raise self.err(f'The type annotation of "{e.name}" is {self.show(ann)}, but the '
                                   f'expression has {"size" if r == "size" else "type"} {self.show(a.type)}.',
                                   e.ann.loc)
            # `let x = y` (no statement made) just names the atom y: no copy, so that sizes such as
            # `let k = length xs` stay the known size of xs.
            env[e.name] = a
            e = e.body
        return self.lower(e, env, hint)

    def lower_IfE(self, e, env, hint):
        c = self.lower(e.cond, env)
        if unify(c.type, BOOL):
            raise self.err(f'The condition of "if" must have type bool, but has type {self.show(c.type)}.',
                           e.cond.loc)
        saved = self.push()
        a = self.lower(e.then, env)
        then_stms = self.stms
        self.stms = []
        b = self.lower(e.else_, env)
        else_stms = self.stms
        self.stms = saved
        r = unify(a.type, b.type)
        if r:
            raise self.err(f'The branches of "if" have different {"sizes" if r == "size" else "types"}: '
                           f'{self.show(a.type)} and {self.show(b.type)}.', e.loc)
        local = {v.name for s in then_stms + else_stms for v in s.pat}
        self.check_escape(a.type, local, e.loc, 'the result of "if"')
        t = a.type
        return self.bind(S.If(c, S.Body(tuple(then_stms), (a,)), S.Body(tuple(else_stms), (b,)), (t,)),
                         t, e.loc, hint)

    def check_escape(self, t, local, loc, what):
        t = prune(t)
        if isinstance(t, Array):
            for d in t.shape:
                if isinstance(d, str) and d in local:
                    raise self.err(f'The size "{self.show_dim(d)}" of {what} is computed inside it, so it '
                                   f'is not known outside; incflat needs sizes known outside.', loc)

    def lower_LambdaE(self, e, env, hint):
        raise self.err("A lambda can only be passed to map, reduce or scan, or applied directly.", e.loc)

    def lower_SectionE(self, e, env, hint):
        raise self.err("An operator section can only be passed to map, reduce or scan, or applied "
                       "directly.", e.loc)

    # ---- application

    def fun_arity(self, head, env):
        """The number of arguments a function-valued expression takes."""
        if isinstance(head, P.Ident):
            name = head.name
            if name in env:
                raise self.err(f'"{name}" is a value, not a function.', head.loc)
            if name in self.funs:
                return len(self.funs[name].params)
            if name in BUILTIN_ARITY:
                return BUILTIN_ARITY[name]
            self.check_not_later(name, head.loc)
            raise self.unknown(name, head.loc)
        if isinstance(head, P.QualIdent):
            sig = prelude_lookup(head.parts)
            if sig is None:
                raise self.unknown(head.name, head.loc)
            return len(sig[0])
        if isinstance(head, P.LambdaE):
            return len(head.params)
        if isinstance(head, P.SectionE):
            return 2 if head.left is None and head.right is None else 1
        raise self.err("This expression is not a function; it cannot be applied.", head.loc)

    def unknown(self, name, loc):
        if name in NOT_YET:
            return self.err(f'"{name}" is not supported by incflat yet.', loc)
        return self.err(f'Unknown name "{name}".', loc)

    def check_not_later(self, name, loc):
        if name == self.current:
            raise self.err(f'"{name}" calls itself; recursion is not allowed in Futhark.', loc)
        if name in self.later and name not in self.funs:
            raise self.err(f'Unknown name "{name}": it is defined later (line {self.later[name].line}); '
                           f'a function must be defined before it is used.', loc)

    def lower_app(self, head, args, loc, env, hint):
        if isinstance(head, P.Ident):
            name = head.name
            if name in env:
                if args:
                    raise self.err(f'"{name}" is a value of type {self.show(env[name].type)}, not a '
                                   f'function; it cannot be applied to arguments.', head.loc)
                return env[name]
            if name in self.funs:
                return self.call_user(self.funs[name], args, head.loc, env, hint)
            if name in BUILTIN_ARITY:
                n = BUILTIN_ARITY[name]
                if len(args) != n:
                    self.arity_error(name, n, len(args), head.loc)
                return getattr(self, "builtin_" + ("map" if name in SOAC_MAPS else name))(
                    name, args, head.loc, env, hint)
            self.check_not_later(name, head.loc)
            raise self.unknown(name, head.loc)
        if isinstance(head, P.QualIdent):
            return self.call_prelude(head, args, env, hint)
        if isinstance(head, P.LambdaE):
            return self.apply_lambda(head, args, env, hint)
        if isinstance(head, P.SectionE):
            n = self.fun_arity(head, env)
            if len(args) != n:
                raise self.err(f"This operator section takes {n} argument{'s' if n != 1 else ''}, but is "
                               f"applied to {len(args)}.", head.loc)
            given = self.section_given(head, env)
            x, y = self.section_operands(head, given, [self.lower(a, env) for a in args])
            return self.binop(head.op, x, y, head.op_loc, hint)
        if isinstance(head, P.Lit):
            raise self.err("A literal is not a function; it cannot be applied to arguments.", head.loc)
        raise self.err("This expression is not a function; it cannot be applied to arguments.", head.loc)

    def arity_error(self, name, n, got, loc):
        if got < n:
            raise self.err(f'"{name}" expects {n} argument{"s" if n != 1 else ""}, but is applied to {got}. '
                           f'(Partial application is only supported for the function argument of map, '
                           f'reduce and scan.)', loc)
        raise self.err(f'"{name}" expects {n} argument{"s" if n != 1 else ""}, but is applied to {got}.', loc)

    def call_user(self, sig: FunSig, args, loc, env, hint):
        n = len(sig.params)
        if len(args) != n:
            self.arity_error(sig.name, n, len(args), loc)
        atoms = [self.lower(a, env) for a in args]
        subst = {}
        for i, (p, a, ae) in enumerate(zip(sig.params, atoms, args)):
            pt, at = p.type, prune(a.type)
            expected = self.subst_type(pt, subst)
            ok = True
            if isinstance(pt, Array):
                if not isinstance(at, Array) or at.rank != pt.rank or unify(pt.elem, at.elem):
                    ok = False
                else:
                    for pd, ad in zip(pt.shape, at.shape):
                        if isinstance(pd, str) and (pd in sig.size_params or pd in subst):
                            if pd in subst and subst[pd] != ad:
                                raise self.err(f'Argument {i + 1} of "{sig.name}" has type {self.show(at)}, '
                                               f'but {self.show(self.subst_type(pt, subst))} is expected '
                                               f'(size mismatch).', ae.loc)
                            subst[pd] = ad
                        elif pd != ad:
                            raise self.err(f'Argument {i + 1} of "{sig.name}" has type {self.show(at)}, '
                                           f'but {self.show(expected)} is expected (size mismatch).', ae.loc)
            else:
                ok = unify(pt, at) is None
            if not ok:
                raise self.err(f'Argument {i + 1} of "{sig.name}" has type {self.show(at)}, but '
                               f'{self.show(expected)} is expected.', ae.loc)
            if pt == I64:
                subst[p.name] = S.dim_of(a)
        rt = self.subst_type(sig.ret, subst)
        return self.bind(S.Apply(sig.name, tuple(atoms), (rt,)), rt, loc, hint)

    @staticmethod
    def subst_type(t, subst):
        if isinstance(t, Array):
            return Array(t.elem, tuple(subst.get(d, d) if isinstance(d, str) else d for d in t.shape))
        return t

    def call_prelude(self, head: P.QualIdent, args, env, hint):
        sig = prelude_lookup(head.parts)
        if sig is None:
            raise self.unknown(head.name, head.loc)
        ptypes, rt, const = sig
        if not ptypes:
            if args:
                raise self.err(f'"{head.name}" is a constant, not a function.', head.loc)
            return S.Const(const, rt)
        if len(args) != len(ptypes):
            self.arity_error(head.name, len(ptypes), len(args), head.loc)
        atoms = []
        for i, (a, pt) in enumerate(zip(args, ptypes)):
            x = self.lower(a, env)
            if unify(x.type, pt):
                which = "an argument" if len(ptypes) == 1 else f"argument {i + 1}"
                raise self.err(f'"{head.name}" expects {which} of type {pt}, but got {self.show(x.type)}.',
                               a.loc)
            atoms.append(x)
        return self.bind(S.PrimCall(head.name, tuple(atoms), rt), rt, head.loc, hint)

    def apply_lambda(self, lam: P.LambdaE, args, env, hint):
        if len(args) != len(lam.params):
            raise self.err(f"This lambda takes {len(lam.params)} argument{'s' if len(lam.params) != 1 else ''}, "
                           f"but is applied to {len(args)}.", lam.loc)
        env2 = dict(env)
        seen = set()
        for p, a in zip(lam.params, args):
            x = self.lower(a, env)
            if p.name in seen:
                raise self.err(f'The name "{p.name}" is bound twice in this lambda.', p.loc)
            seen.add(p.name)
            if p.type is not None:
                ann = self.local_type(p.type, env)
                if unify(ann, x.type):
                    raise self.err(f'The parameter "{p.name}" is annotated as {self.show(ann)}, but the '
                                   f'argument has type {self.show(x.type)}.', p.loc)
            env2[p.name] = x
        r = self.lower(lam.body, env2, hint)
        if lam.ret is not None:
            ann = self.local_type(lam.ret, env)
            if unify(ann, r.type):
                raise self.err(f"The lambda's return type is annotated as {self.show(ann)}, but its body "
                               f"has type {self.show(r.type)}.", lam.body.loc)
        return r

    # ---- function arguments of SOACs

    def section_given(self, sec: P.SectionE, env):
        """The atom of the operand a section gives, if any (evaluated once, outside any lambda)."""
        if sec.left is not None:
            return self.lower(sec.left, env)
        if sec.right is not None:
            return self.lower(sec.right, env)
        return None

    @staticmethod
    def section_operands(sec: P.SectionE, given, params):
        """The two operands of a section's operator, given the atoms for its parameters."""
        if sec.left is not None:
            return given, params[0]
        if sec.right is not None:
            return params[0], given
        return params[0], params[1]

    def lower_fn(self, f, ptypes, soac, env):
        """Lower the function argument of a SOAC to a Lambda whose parameters have `ptypes`.
        Returns the Lambda and its result type."""
        n = len(ptypes)
        plural = "s" if n != 1 else ""
        if isinstance(f, P.LambdaE):
            if len(f.params) != n:
                raise self.err(f'The function passed to "{soac}" must take {n} argument{plural}, but this '
                               f'lambda takes {len(f.params)}.', f.loc)
            env2 = dict(env)
            params = []
            seen = set()
            for p, t in zip(f.params, ptypes):
                if p.name in seen:
                    raise self.err(f'The name "{p.name}" is bound twice in this lambda.', p.loc)
                if p.type is not None:
                    ann = self.local_type(p.type, env)
                    r = unify(ann, t)
                    if r:
                        raise self.err(f'The parameter "{p.name}" is annotated as {self.show(ann)}, but '
                                       f'"{soac}" passes it values of type {self.show(t)}.', p.loc)
                seen.add(p.name)
                v = S.Var(self.fresh(p.name), t)
                self.dim_text[v.name] = p.name
                env2[p.name] = v
                params.append(v)
            saved = self.push()
            res = self.lower(f.body, env2)
            body_stms = self.stms
            self.stms = saved
            if f.ret is not None:
                ann = self.local_type(f.ret, env)
                if unify(ann, res.type):
                    raise self.err(f"The lambda's return type is annotated as {self.show(ann)}, but its "
                                   f"body has type {self.show(res.type)}.", f.body.loc)
            local = {v.name for s in body_stms for v in s.pat} | {v.name for v in params}
            self.check_escape(res.type, local, f.body.loc, f'the result of the function passed to "{soac}"')
            return S.Lambda(tuple(params), S.Body(tuple(body_stms), (res,)), (res.type,)), res.type

        if isinstance(f, P.SectionE):
            arity = self.fun_arity(f, env)
            if arity != n:
                raise self.err(f'The function passed to "{soac}" must take {n} argument{plural}, but this '
                               f'operator section takes {arity}.', f.loc)
            given = self.section_given(f, env)
            params = [S.Var(self.fresh(nm), t) for nm, t in zip(("x", "y"), ptypes)]
            saved = self.push()
            x, y = self.section_operands(f, given, params)
            res = self.binop(f.op, x, y, f.op_loc)
            body_stms = self.stms
            self.stms = saved
            return S.Lambda(tuple(params), S.Body(tuple(body_stms), (res,)), (res.type,)), res.type

        if isinstance(f, (P.Ident, P.QualIdent, P.App)):
            head, pre = (f.fn, f.args) if isinstance(f, P.App) else (f, [])
            if isinstance(head, P.Ident) and head.name in env:
                raise self.err(f'The first argument of "{soac}" must be a function, but "{head.name}" is a '
                               f'value of type {self.show(env[head.name].type)}.', head.loc)
            arity = self.fun_arity(head, env)
            if arity - len(pre) != n:
                what = f'"{head.name}"' if isinstance(head, (P.Ident, P.QualIdent)) else "this function"
                given = f" applied to {len(pre)} argument{'s' if len(pre) != 1 else ''}" if pre else ""
                raise self.err(f'The function passed to "{soac}" must take {n} argument{plural}, but '
                               f'{what}{given} takes {arity - len(pre)}.', f.loc)
            # Arguments given in the partial application are evaluated once, outside the lambda
            # (except a function argument of a SOAC, which stays syntax).
            fn_arg0 = isinstance(head, P.Ident) and head.name in FN_ARG_BUILTINS and head.name not in self.funs
            pre_l = []
            for i, a in enumerate(pre):
                if i == 0 and fn_arg0:
                    pre_l.append(a)
                else:
                    pre_l.append(P.AtomE(a.loc, a.span, self.lower(a, env)))
            params = [S.Var(self.fresh("x"), t) for t in ptypes]
            saved = self.push()
            res = self.lower_app(head, pre_l + [P.AtomE(f.loc, f.span, p) for p in params], f.loc, env, None)
            body_stms = self.stms
            self.stms = saved
            local = {v.name for s in body_stms for v in s.pat} | {v.name for v in params}
            self.check_escape(res.type, local, f.loc, f'the result of the function passed to "{soac}"')
            return S.Lambda(tuple(params), S.Body(tuple(body_stms), (res,)), (res.type,)), res.type

        raise self.err(f'The first argument of "{soac}" must be a function (a lambda, an operator section '
                       f'or a function name).', f.loc)

    # ---- builtins

    def lower_array(self, e, soac, argno, env):
        a = self.lower(e, env)
        if not isinstance(prune(a.type), Array):
            raise self.err(f'Argument {argno} of "{soac}" must be an array, but has type {self.show(a.type)}.',
                           e.loc)
        return a

    def builtin_map(self, name, args, loc, env, hint):
        f, arr_es = args[0], args[1:]
        arrs = [self.lower_array(e, name, i + 2, env) for i, e in enumerate(arr_es)]
        d0 = arrs[0].type.shape[0]
        for a in arrs[1:]:
            d = a.type.shape[0]
            if d != d0:
                raise self.err(f'Cannot apply "{name}" to arrays of sizes [{self.show_dim(d0)}] and '
                               f'[{self.show_dim(d)}].', loc)
        lam, rt = self.lower_fn(f, [row_type(a.type) for a in arrs], name, env)
        t = mk_array(rt, (d0,))
        return self.bind(S.Map(self.dim_atom(d0), lam, tuple(arrs)), t, loc, hint)

    def reduce_like(self, name, args, loc, env):
        f, ne_e, arr_e = args
        ne = self.lower(ne_e, env)
        arr = self.lower_array(arr_e, name, 3, env)
        t = row_type(arr.type)
        r = unify(ne.type, t)
        if r:
            raise self.err(f'The neutral element of "{name}" has {"size" if r == "size" else "type"} '
                           f'{self.show(ne.type)}, but the array elements have {"size" if r == "size" else "type"} '
                           f'{self.show(t)}.', ne_e.loc)
        lam, rt = self.lower_fn(f, [t, t], name, env)
        if unify(rt, t):
            raise self.err(f'The operator of "{name}" must have type t -> t -> t, where t = {self.show(t)} is '
                           f'the element type, but it returns {self.show(rt)}.', f.loc)
        return lam, ne, arr, t

    def builtin_reduce(self, name, args, loc, env, hint):
        lam, ne, arr, t = self.reduce_like(name, args, loc, env)
        w = self.dim_atom(arr.type.shape[0])
        return self.bind(S.Reduce(w, lam, (ne,), (arr,), commutative=(name == "reduce_comm")), t, loc, hint)

    builtin_reduce_comm = builtin_reduce

    def builtin_scan(self, name, args, loc, env, hint):
        lam, ne, arr, t = self.reduce_like(name, args, loc, env)
        d = arr.type.shape[0]
        return self.bind(S.Scan(self.dim_atom(d), lam, (ne,), (arr,)), mk_array(t, (d,)), loc, hint)

    def builtin_transpose(self, name, args, loc, env, hint):
        a = self.lower(args[0], env)
        t = prune(a.type)
        if not isinstance(t, Array) or t.rank < 2:
            raise self.err(f'"transpose" needs an array of at least two dimensions, but got {self.show(t)}.',
                           args[0].loc)
        rt = Array(t.elem, (t.shape[1], t.shape[0]) + t.shape[2:])
        return self.bind(S.Rearrange((1, 0), a), rt, loc, hint)

    def size_arg(self, name, e, env):
        n = self.lower(e, env)
        if unify(n.type, I64):
            raise self.err(f'The size argument of "{name}" must have type i64, but has type {self.show(n.type)}.',
                           e.loc)
        if isinstance(n, S.Var) and not isinstance(e, (P.Ident, P.Lit)) and n.name not in self.dim_text:
            self.dim_text[n.name] = self.source_text(e)
        return n

    def builtin_iota(self, name, args, loc, env, hint):
        n = self.size_arg(name, args[0], env)
        return self.bind(S.Iota(n, I64), Array(I64, (S.dim_of(n),)), loc, hint)

    def builtin_replicate(self, name, args, loc, env, hint):
        n = self.size_arg(name, args[0], env)
        x = self.lower(args[1], env)
        return self.bind(S.Replicate(n, x), mk_array(x.type, (S.dim_of(n),)), loc, hint)

    def builtin_length(self, name, args, loc, env, hint):
        a = self.lower_array(args[0], name, 1, env)
        return self.dim_atom(a.type.shape[0])


def check_program(decls, filename: str, text: str) -> S.Program:
    return Checker(decls, filename, text).check_program()
