"""The `Checker` class: its state, and the primitives every part of the checker uses.

Fresh names, binding and emitting statements (with hash-consing of scalar computations), scopes,
showing types and sizes to the user, and resolving the types the user writes. The rest of the
checker are mixins, each for one concern, assembled here into `Checker`: uniqueness (in-place
updates), decls (programs, functions, patterns), lower (expressions), records (record expressions and
patterns), sums (sum types, constructors and `match`), arrays (array expressions), apply (function
values), operators (user-defined, qualified, composition, array equality), checked (assert, ranges),
prelude_arrays and builtins. One object holds all the state; the mixins reach each other through `self`.
"""

import re

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.apply import Application
from incflat.ir.frontend.check.arrays import ArrayExpressions
from incflat.ir.frontend.check.builtins import Builtins
from incflat.ir.frontend.check.histograms import Histograms
from incflat.ir.frontend.check.prelude_arrays import PreludeArrays
from incflat.ir.frontend.check.checked import CheckedExpressions
from incflat.ir.frontend.check.decls import Declarations
from incflat.ir.frontend.check.infer import (DEFERRED_TO_I64, KIND_TEXT, TV, SumTV, TArr, arr_of, coerce_value,
                                            is_sum, prune, sum_constructors, sum_of, unify)
from incflat.ir.frontend.check.lower import Lowering
from incflat.ir.frontend.check.loops import Loops
from incflat.ir.frontend.check.pointfree import PointFree
from incflat.ir.frontend.check.operators import Operators
from incflat.ir.frontend.check.records import Records
from incflat.ir.frontend.check.sums import SumTypes
from incflat.ir.frontend.check.uniqueness import Uniqueness
from incflat.ir.frontend.check.values import atom_v
from incflat.ir.errors import CompileError
from incflat.ir.types import I64, PRIM_NAMES, Array, Scalar, Tuple, record_type


# ---------------------------------------------------------------- the checker

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


class Checker(Uniqueness, Declarations, PointFree, Lowering, Loops, Records, SumTypes, Operators, ArrayExpressions,
              CheckedExpressions, Application, Builtins, PreludeArrays, Histograms):
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
        self.inlining = ()  # the functions being inlined at this point, outermost first (to refuse recursion)
        # (id of an empty array literal `[]`, the calls being inlined) -> the TypeExp its uses refine
        self.empty_literal_types = {}
        self.empty_literal_atoms = set()  # the variables such literals made (empty_like gives them their rows)
        self.body_nodes = {}  # id of a declaration -> (it, the ids of its body's nodes): inside_own_body
        self.rep_values = {}  # an array `rep x` made, of size 0 until its use decides -> (x, Loc of rep)
        self.rep_sizes = {}  # the size variable of such an array -> (how many replicates read it, Loc of rep)
        self.hole_types = {}  # the same for holes `???`
        self.hole_atoms = set()  # the arrays such holes made (empty_like gives them their whole type)
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
        self.flexible = set()  # the anonymous parameter sizes of the function being checked
        # name -> TV('param'): the type parameters of the functions being inlined (name -> its type, those of the
        # type abbreviation being resolved)
        self.type_params = {}
        self.unknown_types = {}  # id(TV) -> (TV, TypeExp `?`): entry point parameters whose types are not written
        # Sum types (sums.py): the sum type learned for each constructor, by (id of its node, call_path); the
        # Locs of the calls being inlined; the open constructor types (SumTV) made in the function being checked;
        # the sizes that stay the same when it is checked again (its own parameters).
        self.learned = {}
        self.call_path = ()
        self.open_sums = []
        self.stable_sizes = set()

    # ---- helpers

    def err(self, msg, loc):
        return CompileError(msg, loc)

    def fresh(self, base):
        # IR names are identifiers in generated code (operators and internal names have symbols)
        base = re.sub(r"\W", "_", base or "tmp")
        while True:
            self.counter += 1
            name = f"{base}_{self.counter}"
            if name not in self.reserved:
                self.reserved.add(name)
                self.born[name] = self.counter
                return name

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
        if isinstance(t, SumTV):
            return self.show_sum(list(t.constructors.items()))
        if isinstance(t, TV):
            return KIND_TEXT[t.kind]
        if isinstance(t, Scalar):
            return t.name
        if isinstance(t, (Array, TArr)):
            elem = self.show(t.elem)
            return "".join(f"[{self.show_dim(d)}]" for d in t.shape) + (f"({elem})" if " | " in elem else elem)
        if is_sum(t):
            return self.show_sum(sum_constructors(t))
        if isinstance(t, Tuple) and t.is_record:
            return "{" + ", ".join(f"{f}: {self.show(e)}" for f, e in zip(t.fields, t.elems)) + "}"
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
        if isinstance(t, TV) and isinstance(a, S.Const):  # a literal index is an i64 literal
            unify(t, I64)
            return a
        if isinstance(t, TV):  # an integer type not known yet (it may default to i32): zonk names the conversion
            return self.emit(S.PrimCall(DEFERRED_TO_I64, (a,), I64), I64, loc)
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
        if isinstance(te, P.FunTypeExp):
            raise self.err("A function type can only be the type of a parameter of a function (incflat then "
                           "inlines the function at each call).", te.loc)
        if te.type_args and not (isinstance(te.base, str) and te.base in self.types):
            raise self.err(f'"{te.base}" is applied to a type, but it takes no type arguments.', te.base_loc)
        dims = [dimfn(k, v, te.loc) for k, v in te.dims]
        if isinstance(te.base, list):
            base = Tuple(tuple(self.resolve_type(x, dimfn, where) for x in te.base))
        elif isinstance(te.base, str) and te.base in self.type_params:  # 't of a function being inlined
            base = prune(self.type_params[te.base])
        elif te.base == "?":  # an entry point parameter's type, not written: decided by its uses
            base = TV("unknown")
            self.unknown_types[id(base)] = (base, te)
        elif isinstance(te.base, P.RecordTypeExp):
            base = record_type([(name, self.resolve_type(x, dimfn, where)) for name, x in te.base.fields])
        elif isinstance(te.base, P.SumTypeExp):
            base = sum_of([(name, [self.resolve_type(x, dimfn, where) for x in ts])
                           for name, _, ts in te.base.constructors])
        elif te.base in self.types:
            td = self.types[te.base]
            if len(te.type_args) != len(td.type_params):
                wanted = " ".join("'" + name for name, _ in td.type_params)
                raise self.err(f'The type "{te.base}" takes {len(td.type_params)} type argument'
                               f'{"s" if len(td.type_params) != 1 else ""} ({wanted}), but is given '
                               f'{len(te.type_args)}.', te.base_loc)
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
                if k == "exp":  # `type t [n] = [2 * n]i8`: the expression of the sizes given
                    used = {n.name for n in P.nodes_of(v) if isinstance(n, P.Ident)} & set(sub)
                    if any(sub[n] is None for n in used):
                        return None
                    v = P.substitute(v, {n: P.AtomE(loc, (0, 0), atom_v(self.dim_atom(sub[n]))) for n in used})
                return dimfn(k, v, loc)
            # the abbreviation's type parameters, in the types given for them (and no other type parameters)
            given = {name: self.resolve_type(x, dimfn, where) for (name, _), x in zip(td.type_params, te.type_args)}
            outer, self.type_params = self.type_params, given
            try:
                base = self.resolve_type(td.type, inner, where)
            finally:
                self.type_params = outer
        else:
            if te.args:
                raise self.err(f'The type "{te.base}" takes no size arguments.', te.base_loc)
            if te.base in self.later or te.base in self.funs:
                raise self.err(f'"{te.base}" is a function, not a type.', te.base_loc)
            base = self.prim_type(te.base, te.base_loc)
        return arr_of(base, dims)
