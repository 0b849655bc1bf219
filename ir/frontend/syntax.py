"""The syntax tree of the front end: the dataclasses that ir/frontend/parse.py builds from source text and
ir/check type-checks and lowers to the source IR.

Every expression node carries `loc` (an `ir.source.Loc`, 1-based line and column of its first
character, or of its operator for binary operators) and `span` (start and end offsets in the
source text).
"""

from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Optional

from incflat.ir.source import Loc


# ---------------------------------------------------------------- what the parse stage takes and gives

@dataclass(frozen=True)
class SourceText:
    """A program as the user wrote it: the compiler's input."""
    text: str
    file: str = "<input>"


@dataclass(frozen=True)
class Syntax:
    """The parsed program: its declarations (`Decl`, `TypeDecl`), with the text that locations point into."""
    decls: tuple
    file: str
    text: str


# ---------------------------------------------------------------- the syntax tree

@dataclass
class Node:
    loc: Loc = field(repr=False)
    span: tuple = field(repr=False)


@dataclass
class TypeExp:
    """A type as written: `dims` (outermost first) around `base`.

    dims: list of ('name', str), ('const', int), ('any', None) (written `[]`) or ('exp', node)
    (a size expression such as `[n*m]`). base: a type name (a primitive type or an abbreviation,
    applied to the size arguments `args`, a list of dims), a list of TypeExp (a tuple type), a
    RecordTypeExp or a SumTypeExp."""
    dims: list
    base: object
    loc: Loc = field(repr=False)
    base_loc: Loc = field(repr=False)
    args: list = field(default_factory=list)
    unique: bool = False
    type_args: list = field(default_factory=list)  # `vector f32`: parsed, refused by the checker

    @property
    def prim(self):  # the base name, for messages
        if isinstance(self.base, str):
            return self.base
        return "tuple" if isinstance(self.base, list) else "sum" if isinstance(self.base, SumTypeExp) else "record"

    @property
    def prim_loc(self):
        return self.base_loc


@dataclass
class FunTypeExp:
    """A function type `a -> b`, allowed as the annotation of a parameter of a function that is inlined."""
    param: object  # TypeExp or FunTypeExp
    result: object
    loc: Loc = field(repr=False)
    unique: bool = False
    name: Optional[str] = None  # the parameter's, in `(n: i64) -> [n]t`


@dataclass
class RecordTypeExp:
    """The fields of a record type `{a: t, b: u}` as written: (name, TypeExp) pairs, names distinct."""
    fields: list


@dataclass
class SumTypeExp:
    """The constructors of a sum type `#a | #b t u` as written: (name without the `#`, Loc, payload TypeExps)
    triples."""
    constructors: list


# ---- patterns

@dataclass
class PName:
    name: str
    loc: Loc = field(repr=False)


@dataclass
class PWild:
    loc: Loc = field(repr=False)


@dataclass
class PTuple:
    elems: list
    loc: Loc = field(repr=False)


@dataclass
class PRecord:
    """`{a, b = p, c: t}`: (field name, Loc, pattern) triples, names distinct; `a` is `a = a`."""
    fields: list
    loc: Loc = field(repr=False)


@dataclass
class PTyped:
    pat: object
    type: TypeExp
    loc: Loc = field(repr=False)


@dataclass
class PConstr:
    """`#name p q`: a constructor pattern (name without the `#`) with its payload patterns."""
    name: str
    args: list
    loc: Loc = field(repr=False)


@dataclass
class PLit:
    """A literal pattern (`0`, `-1`, `1.5f32`, `true`), which only a `match` case can have."""
    lit: object  # a Lit
    loc: Loc = field(repr=False)


def pat_is_typed(p) -> bool:
    """Whether every part of a pattern has its type written, and not a function type: a function with such
    parameters can be checked before it is applied."""
    if isinstance(p, PTyped):
        return not has_function_type(p.type)
    if isinstance(p, PTuple):
        return all(pat_is_typed(x) for x in p.elems)
    if isinstance(p, PRecord):
        return all(pat_is_typed(x) for _, _, x in p.fields)
    return False


def nodes_of(x):
    """Every syntax node in x (a node, or lists and tuples of them), x's own first."""
    pending = [x]
    while pending:
        y = pending.pop()
        if isinstance(y, (list, tuple)):
            pending.extend(y)
        elif is_dataclass(y) and not isinstance(y, type):
            if isinstance(y, Node):
                yield y
            pending.extend(getattr(y, f.name) for f in fields(y))


def substitute(x, names: dict):
    """x (a node, or lists of them) with each Ident whose name `names` maps replaced by the node it maps to."""
    if isinstance(x, Ident) and x.name in names:
        return names[x.name]
    if isinstance(x, list):
        return [substitute(y, names) for y in x]
    if isinstance(x, tuple):
        return tuple(substitute(y, names) for y in x)
    if isinstance(x, Node):
        return replace(x, **{f.name: substitute(getattr(x, f.name), names) for f in fields(x)
                             if f.name not in ("loc", "span")})
    return x


def has_function_type(t) -> bool:
    """Whether a type as written is a function type or holds one (in a tuple or record)."""
    if isinstance(t, FunTypeExp):
        return True
    if isinstance(t, TypeExp) and isinstance(t.base, list):
        return any(has_function_type(x) for x in t.base)
    if isinstance(t, TypeExp) and isinstance(t.base, RecordTypeExp):
        return any(has_function_type(x) for _, x in t.base.fields)
    return False


def pat_types(p) -> list:
    """The types written in a pattern (`(x: t, y: u)`: t and u), outermost first."""
    if isinstance(p, PTyped):
        return [p.type] + pat_types(p.pat)
    if isinstance(p, PTuple):
        return [t for x in p.elems for t in pat_types(x)]
    if isinstance(p, PRecord):
        return [t for _, _, x in p.fields for t in pat_types(x)]
    return []


def pat_names(p) -> list:
    """The (name, loc) pairs a pattern binds, left to right."""
    if isinstance(p, PName):
        return [(p.name, p.loc)]
    if isinstance(p, PTuple):
        return [x for e in p.elems for x in pat_names(e)]
    if isinstance(p, PRecord):
        return [x for _, _, e in p.fields for x in pat_names(e)]
    if isinstance(p, PTyped):
        return pat_names(p.pat)
    if isinstance(p, PConstr):
        return [x for e in p.args for x in pat_names(e)]
    return []


# ---- expressions

@dataclass
class Lit(Node):
    kind: str = "int"  # 'int', 'float' or 'bool'
    value: object = 0
    suffix: Optional[str] = None  # the type suffix, if any (i32, f32, ...)


@dataclass
class Ident(Node):
    name: str = ""


@dataclass
class QualIdent(Node):
    """`f32.sqrt`: a name in a prelude module."""
    parts: tuple = ()

    @property
    def name(self):
        return ".".join(self.parts)


@dataclass
class App(Node):
    """Application by juxtaposition; `loc` is that of the function."""
    fn: object = None
    args: list = field(default_factory=list)


@dataclass
class BinOpE(Node):
    """`lhs op rhs`; `loc` is the operator's position."""
    op: str = ""
    lhs: object = None
    rhs: object = None


@dataclass
class NegE(Node):
    x: object = None


@dataclass
class NotE(Node):
    x: object = None


@dataclass
class LetE(Node):
    """`let [sizes] pat = rhs in body`."""
    pat: object = None
    sizes: list = field(default_factory=list)  # list[(name, Loc)]
    rhs: object = None
    body: object = None


@dataclass
class LetFunE(Node):
    """`let f params: ret = rhs in body` (a local function)."""
    name: str = ""
    name_loc: Loc = None
    params: list = field(default_factory=list)  # list of patterns
    ret: Optional[TypeExp] = None
    rhs: object = None
    body: object = None
    sizes: list = field(default_factory=list)  # size parameters: list[(name, Loc)]
    types: list = field(default_factory=list)  # type parameters ('t): list[(name, Loc)]


@dataclass
class IfE(Node):
    cond: object = None
    then: object = None
    else_: object = None


@dataclass
class LambdaE(Node):
    params: list = field(default_factory=list)  # list of patterns
    ret: Optional[TypeExp] = None
    body: object = None


@dataclass
class SectionE(Node):
    """`(op)`, `(x op)` (left given) or `(op y)` (right given)."""
    op: str = ""  # a symbol (`+`, a user's `+^`), qualified (`i32.+`) or backquoted (`f`)
    op_loc: Loc = None
    left: object = None
    right: object = None
    fn: object = None  # the function of a backquoted operator (Ident or QualIdent)


@dataclass
class RangeE(Node):
    """`start..<end`, `start..second...end`, ...: `end_kind` is "..<", "..>" or "..."; `loc` is that
    of the range's last operator."""
    start: object = None
    second: object = None  # None: stride 1 (-1 for ..>)
    end_kind: str = "..<"
    end: object = None


@dataclass
class ParamE(Node):
    """`#[param(NAME)] body`: a tuning parameter that overrides body (an i64) when set; `loc` is that of the
    attribute."""
    name: str = ""
    body: object = None


@dataclass
class AssertE(Node):
    """`assert cond body`: body's value, if cond holds at run time; `loc` is that of the keyword."""
    cond: object = None
    body: object = None


@dataclass
class TupleE(Node):
    elems: list = field(default_factory=list)


@dataclass
class RecordE(Node):
    """`{a = e, b}`: (field name, Loc, expression) triples, names distinct; `b` is `b = b`."""
    fields: list = field(default_factory=list)


@dataclass
class HoleE(Node):
    """`???`: a value of any type, decided by its uses, that fails at run time."""


@dataclass
class ArrayE(Node):
    elems: list = field(default_factory=list)


@dataclass
class SliceI:
    """`start:end:stride` in an index; absent parts are None."""
    start: object
    end: object
    stride: object
    loc: Loc = field(repr=False)


@dataclass
class IndexE(Node):
    """`arr[i, j:k, ...]`: each index is an expression or a SliceI."""
    arr: object = None
    idxs: list = field(default_factory=list)
    idx_loc: Loc = None


@dataclass
class ProjE(Node):
    """`x.0`, `x.name`: a field of a tuple or record."""
    x: object = None
    field_: str = "0"
    field_loc: Loc = None


@dataclass
class RecordUpdateE(Node):
    """`r with a.b = value`: `path` is the fields' (name, Loc) pairs; `loc` is that of `with`."""
    rec: object = None
    path: list = field(default_factory=list)
    value: object = None


@dataclass
class WithE(Node):
    """`arr with [i, j] = value`; `loc` is that of `with`."""
    arr: object = None
    idxs: list = field(default_factory=list)
    value: object = None


@dataclass
class ConstrE(Node):
    """`#name a b`: a constructor (name without the `#`) applied to its payload."""
    name: str = ""
    args: list = field(default_factory=list)


@dataclass
class Case:
    """`case pat -> body` of a `match`; `loc` is that of `case`."""
    pat: object
    body: object
    loc: Loc = field(repr=False)


@dataclass
class MatchE(Node):
    """`match x case p -> e ...`: the body of the first case whose pattern x matches."""
    x: object = None
    cases: list = field(default_factory=list)


@dataclass
class AscribeE(Node):
    """`x : t` (coerce False) or `x :> t` (coerce True); `loc` is that of the colon."""
    x: object = None
    type: TypeExp = None
    coerce: bool = False


@dataclass
class ForUpto:
    name: str
    name_loc: Loc
    bound: object


@dataclass
class ForIn:
    pat: object
    arr: object


@dataclass
class While:
    cond: object


@dataclass
class LoopE(Node):
    """`loop pat = init form do body`; init is None when left out (`loop acc for ...`)."""
    pat: object = None
    init: object = None
    form: object = None
    body: object = None


@dataclass
class AtomE(Node):
    """An already-lowered value (made by the checker, never by the parser)."""
    atom: object = None


@dataclass
class Decl:
    entry: bool
    name: str
    name_loc: Loc
    size_params: list  # list[(name, Loc)]
    params: list  # list of patterns
    ret: Optional[TypeExp]
    body: object
    loc: Loc
    type_params: list = field(default_factory=list)  # list[(name, Loc)]: 't


@dataclass
class TypeDecl:
    name: str
    name_loc: Loc
    size_params: list  # list[(name, Loc)]
    type: TypeExp
    loc: Loc
    lifted: bool = False  # `type^`: may name a function type (ir/frontend/lifted.py expands it where used)
    type_params: list = field(default_factory=list)  # `type vector 'a`: refused where it is used


@dataclass
class ModuleDecl:
    """`module name (P: S) ... = body`: `params` are (name, Loc) pairs; a module type written is not kept
    (ir/frontend/modules.py elaborates modules away)."""
    name: str
    name_loc: Loc
    params: list
    body: object  # a module expression: ModStruct, ModName or ModApply
    loc: Loc


@dataclass
class LocalDecl:
    """`local d`: d, visible to the declarations after it in its file or module but not outside them."""
    decl: object


@dataclass
class OpenDecl:
    """`open M`: the names of module M, unqualified, in the declarations after it."""
    module: object  # a module expression
    loc: Loc


@dataclass
class ModStruct:
    decls: list
    loc: Loc


@dataclass
class ModName:
    parts: tuple  # `M`, `M.N`
    loc: Loc


@dataclass
class ModImport:
    """`import "path"` as a module expression: the file's declarations as a module."""
    path: str
    loc: Loc


@dataclass
class ModLambda:
    """`\\(P: S) -> body`: a parametric module as an expression."""
    params: list  # (name, Loc) pairs
    body: object
    loc: Loc


@dataclass
class ModApply:
    fn: object
    arg: object
    loc: Loc


@dataclass
class LocalOpenE(Node):
    """`M.(e)`: e with the names of module M in scope (elaborated away before the checker)."""
    module: tuple = ()
    body: object = None


@dataclass
class Import:
    """`import "path"`: `local open` of the module of path.fut, relative to the importing file
    (ir/frontend/modules.py)."""
    path: str
    loc: Loc


# ---------------------------------------------------------------- building the tree

def mk_app(fn, args):
    """Apply `fn` to `args`, merging nested applications: `(f x) y` is `f x y`; a constructor not yet applied
    takes them as its payload."""
    if isinstance(fn, ConstrE) and not fn.args:
        return ConstrE(fn.loc, (fn.span[0], max(a.span[1] for a in args)), fn.name, list(args))
    if isinstance(fn, App):
        return App(fn.loc, (fn.span[0], max(fn.span[1], args[-1].span[1])), fn.fn, fn.args + list(args))
    end = max([fn.span[1]] + [a.span[1] for a in args])
    return App(fn.loc, (min(fn.span[0], args[0].span[0]), end), fn, list(args))


def mark_unsafe(node) -> None:
    """`#[unsafe] e`: every position inside e is marked, so that kernels leave out the checks of what e
    computes (bounds, division, sizes), as Futhark does; the checker and inline_calls mark what e calls."""
    pending = [node]
    while pending:
        x = pending.pop()
        if isinstance(x, (list, tuple)):
            pending.extend(x)
        elif is_dataclass(x) and not isinstance(x, type):
            if isinstance(x, Node) and isinstance(x.loc, Loc):
                x.loc = replace(x.loc, unsafe=True)
            pending.extend(getattr(x, f.name) for f in fields(x) if f.name not in ("loc", "span"))


# ---------------------------------------------------------------- types as written

def type_parts(te) -> list:
    """A type as written and every type written inside it (a function type's sides, a tuple's elements, a
    record's fields, a sum type's payloads): its TypeExp nodes, outermost first."""
    if isinstance(te, FunTypeExp):
        return type_parts(te.param) + type_parts(te.result)
    if not isinstance(te, TypeExp):
        return []
    return [te] + [part for t in _inner_types(te) for part in type_parts(t)]


def _inner_types(te: TypeExp) -> list:
    """The types written directly inside te: a tuple's elements, a record's fields, a sum type's payloads."""
    if isinstance(te.base, list):
        return te.base
    if isinstance(te.base, RecordTypeExp):
        return [t for _, t in te.base.fields]
    if isinstance(te.base, SumTypeExp):
        return [t for _, _, ts in te.base.constructors for t in ts]
    return []


def map_type(te, f):
    """The type with `f` applied to each of its TypeExp nodes (the inner ones first); function types stay."""
    if isinstance(te, FunTypeExp):
        return replace(te, param=map_type(te.param, f), result=map_type(te.result, f))
    if not isinstance(te, TypeExp):
        return te
    if te.type_args:
        te = replace(te, type_args=[map_type(t, f) for t in te.type_args])
    if isinstance(te.base, list):
        te = replace(te, base=[map_type(t, f) for t in te.base])
    elif isinstance(te.base, RecordTypeExp):
        te = replace(te, base=RecordTypeExp([(name, map_type(t, f)) for name, t in te.base.fields]))
    elif isinstance(te.base, SumTypeExp):
        te = replace(te, base=SumTypeExp([(name, loc, [map_type(t, f) for t in ts])
                                          for name, loc, ts in te.base.constructors]))
    return f(te)
