"""Operators beyond the builtin scalar ones: user-defined (`def (+^) ...`), qualified (`i32.+`),
backquoted functions (x `f` y) in sections, function composition (`>->`, `<-<`), and `==` / `!=`
on arrays.

A mixin of `Checker` (ir.frontend.check.checker). `binop` (ir.frontend.check.lower) hands every operator that is not a
builtin scalar one here, so that sections, infix uses and tuple equality all go through one place.
"""

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.infer import is_arr, is_scalar, prune, rank_of, shape_of, unify
from incflat.ir.frontend.check.prelude import ARITH_OPS, EQ_OPS, INT_OPS, LOGIC_OPS, ORD_OPS
from incflat.ir.frontend.check.values import Arg, Closure, FunV, Named, Section, V, atom_v
from incflat.ir.types import BOOL, PRIM_NAMES, Scalar

BUILTIN_BINOPS = ARITH_OPS | INT_OPS | ORD_OPS | EQ_OPS | LOGIC_OPS | {"++", "|>", "<|"}
COMPOSITIONS = (">->", "<-<")
# The names a composition's closure binds: not identifiers, so they cannot capture a user's names.
_COMPOSE_X, _COMPOSE_F, _COMPOSE_G = "(x)", "(f)", "(g)"
_SECTION_X, _SECTION_Y = "(x)", "(y)"


class Operators:
    """Mixin of Checker: user-defined, qualified and backquoted operators, composition, array equality."""

    def user_operator(self, op):
        """The user-defined operator `op` as a function value, or None (user definitions shadow builtins)."""
        if op in self.funs and op not in LOGIC_OPS:
            return op
        return None

    def other_binop(self, op, x: V, y: V, loc) -> V:
        """`binop` for an operator that is not a builtin scalar operator on these operands."""
        if self.user_operator(op):
            return self.apply(Named(op, "user", loc), [Arg(x, loc), Arg(y, loc)], loc)
        if op[0].isalpha():
            return self.qualified_binop(op, x, y, loc)
        if op in EQ_OPS:
            return self.array_eq(op, x, y, loc)
        if op in COMPOSITIONS:
            raise self.err(f'The operands of "{op}" must be functions.', loc)
        hint = ""
        if len(op) > 1 and op[-1] in "-!" and op[:-1] in BUILTIN_BINOPS:
            hint = (f' (As in Futhark, operator characters written together form one operator: write '
                    f'"{op[:-1]} {op[-1]}".)')
        raise self.err(f'Unknown operator "{op}".{hint}', loc)

    def qualified_binop(self, op, x, y, loc):
        """`i32.+`: the builtin operator at one type."""
        mod, sym = op.split(".", 1)
        if (mod not in PRIM_NAMES and mod != "f16") or sym not in BUILTIN_BINOPS - {"++", "|>", "<|"}:
            raise self.err(f'Unknown operator "{op}".', loc)
        t = self.prim_type(mod, loc)  # (f16 is named as not supported)
        for v in (x, y):
            if not is_scalar(v.t) or unify(v.t, t):
                raise self.err(f'The operator "{op}" needs operands of type {mod}, but got {self.show(v.t)}.',
                               loc)
        if (sym in INT_OPS and not t.is_int) or (sym in LOGIC_OPS and mod != "bool") or \
                (sym in ARITH_OPS | ORD_OPS and mod == "bool"):
            raise self.err(f'The module {mod} has no operator "{sym}".', loc)
        return self.binop(sym, x, y, loc)

    # ---- function composition

    @staticmethod
    def composed_first(f):
        """The function a composition (`f >-> g`, `g <-< f`) applies first, or None for another function."""
        if isinstance(f, Closure) and _COMPOSE_G in f.env and [p.name for p in f.params] == [_COMPOSE_X]:
            return f.env[_COMPOSE_F]
        return None

    @staticmethod
    def composed_second(f):
        """The function a composition applies second, or None for another function."""
        return f.env[_COMPOSE_G] if Operators.composed_first(f) is not None else None

    def lower_composition(self, e, env):
        """`f >-> g` is `\\x -> g (f x)`; `g <-< f` the same."""
        lhs, rhs = self.lower(e.lhs, env), self.lower(e.rhs, env)
        for v, side in ((lhs, e.lhs), (rhs, e.rhs)):
            if not isinstance(v, FunV):
                raise self.err(f'The operands of "{e.op}" must be functions, but this has type '
                               f'{self.show(v.t)}.', side.loc)
        f, g = (lhs, rhs) if e.op == ">->" else (rhs, lhs)
        x = P.Ident(e.loc, e.span, _COMPOSE_X)
        body = P.App(e.loc, e.span, P.Ident(e.loc, e.span, _COMPOSE_G),
                     [P.App(e.loc, e.span, P.Ident(e.loc, e.span, _COMPOSE_F), [x])])
        return Closure([P.PName(_COMPOSE_X, e.loc)], None, body, {_COMPOSE_F: f, _COMPOSE_G: g}, e.loc, "lambda")

    # ---- backquoted sections

    def backquote_section(self, e, env):
        """(`f`) is f, (x `f`) is f x and (`f` y) is \\x -> f x y."""
        f = self.lower(e.fn, env)
        if not isinstance(f, FunV):
            raise self.err(f'"{e.fn.name}" is a value of type {self.show(f.t)}, not a function; it cannot be '
                           f'used as an operator.', e.fn.loc)
        if e.left is not None:
            return self.apply(f, [Arg(self.lower_val(e.left, env), e.left.loc)], e.loc)
        if e.right is None:
            return f
        y = self.lower_val(e.right, env)
        body = P.App(e.loc, e.span, P.Ident(e.fn.loc, e.span, "(f)"),
                     [P.Ident(e.loc, e.span, _SECTION_X), P.Ident(e.right.loc, e.span, _SECTION_Y)])
        return Closure([P.PName(_SECTION_X, e.loc)], None, body, {"(f)": f, _SECTION_Y: y}, e.loc, "lambda")

    # ---- == and != on arrays

    def array_eq(self, op, x, y, loc):
        """Arrays are equal when their shapes are and all their elements are: a size comparison, then
        (only when the shapes agree) a map2 (==) over the flattened arrays and a reduction."""
        tx, ty = prune(x.t), prune(y.t)
        if not (is_arr(tx) and is_arr(ty)) or unify(tx, ty) == "type":
            raise self.err(f'The operands of "{op}" have different types: {self.show(tx)} and '
                           f'{self.show(ty)}.', loc)
        same_shape = None
        for dx, dy in zip(shape_of(tx), shape_of(ty)):
            if dx == dy:
                continue
            c = self.binop("==", atom_v(self.dim_atom(dx)), atom_v(self.dim_atom(dy)), loc)
            same_shape = c if same_shape is None else self.binop("&&", same_shape, c, loc)
        saved = self.push()
        fx, fy = self.flatten_all(x, loc), self.flatten_all(y, loc)
        fy = self.coerce(fy, fx.t, loc)
        eqs = self.apply(Named("map2", "builtin", loc), [Arg(Section("==", loc, None, "none", loc), loc),
                                                         Arg(fx, loc), Arg(fy, loc)], loc)
        res = self.apply(Named("and", "builtin", loc), [Arg(eqs, loc)], loc)
        stms = self.pop(saved)
        if same_shape is None:
            self.stms.extend(stms)
        else:
            res = self.make_if(same_shape.atom, stms, res, [], atom_v(S.Const(False, BOOL)), set(), set(), loc)
        if op == "!=":
            res = atom_v(self.emit(S.UnOp("!", res.atom, BOOL), BOOL, loc))
        return res

    def flatten_all(self, v, loc):
        while rank_of(prune(v.t)) > 1:
            v = self.apply(Named("flatten", "builtin", loc), [Arg(v, loc)], loc)
        return v

