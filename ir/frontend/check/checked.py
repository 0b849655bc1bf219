"""Expressions checked at run time: `assert cond e` and ranges (`a..<b`, `a..b...c`, ...).

A mixin of `Checker` (ir.frontend.check.checker). Both emit an `S.Assert` statement, which fails the program with a
message at its source position when its condition is false (as out-of-bounds indexing does).
"""

from typing import NamedTuple

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.infer import TV, is_scalar, prune, require, unify
from incflat.ir.frontend.check.values import atom_v
from incflat.ir.types import BOOL, I32, I64, Array


class RangeParts(NamedTuple):
    t: object  # the elements' type
    start: object  # atoms of type t
    second: object  # None without a second element
    kind: str  # "..<", "..>" or "..."
    size: object  # an i64 atom


class CheckedExpressions:
    """Mixin of Checker: assertions, and ranges lowered to iota and map with a validity assertion."""

    def lower_AssertE(self, e, env):
        cond = self.lower_val(e.cond, env, "the condition of an assertion")
        if unify(cond.t, BOOL):
            raise self.err(f"The condition of an assertion must have type bool, but has type "
                           f"{self.show(prune(cond.t))}.", e.cond.loc)
        message = "Assertion is false: " + _literal_braces(self.source_text(e.cond))
        self.stms.append(S.Stm((), S.Assert(cond.atom, message), e.loc))
        return self.lower(e.body, env)

    def lower_RangeE(self, e, env):
        """Futhark's ranges: `a..<b` (up to b, exclusive), `a..>b` (down to b, exclusive), `a...b` (to b,
        inclusive), with a stride of `second - a` when `a..second` starts them (default 1, -1 for `..>`).
        A stride of 0, or one pointing away from the end, or an end on the wrong side of the start, is a
        run-time error; an exclusive range whose end is its start is empty. Bounds are of one integer type,
        the elements too; the count is computed on i64 values (unsigned bounds zero-extended)."""
        r = self.range_parts(e, env)
        idx = self.bind(S.Iota(r.size, r.t), Array(r.t, (S.dim_of(r.size),)), e.loc, "range")
        if _is_int(e.start, 0) and (e.second is None or _is_int(e.second, 1)) and e.end_kind != "..>":
            return atom_v(idx)
        k = S.Var(self.fresh("k"), r.t)
        saved = self.push()
        elem = self.range_element(r, k, e.loc)
        lam = S.Lambda((k,), S.Body(tuple(self.pop(saved)), (elem,)), (r.t,))
        return atom_v(self.bind(S.Map(r.size, lam, (idx,)), idx.type, e.loc, "range"))

    def range_parts(self, e, env) -> "RangeParts":
        """A range's element type, start, second element, kind and size, with its validity assertion."""
        loc, kind = e.loc, e.end_kind
        parts = {"start": e.start, "second": e.second, "end": e.end}
        atoms, t = {}, None
        for what, x in parts.items():
            if x is None:
                continue
            v = self.lower_val(x, env, f"the {what} of a range")
            vt = prune(v.t)
            if not is_scalar(vt) or not require(vt, "int"):
                raise self.err(f"The {what} of a range must be an integer, but has type {self.show(vt)}.", x.loc)
            if t is not None and unify(t, vt):
                raise self.err(f"The bounds of a range must have one type, but the start has type {self.show(t)} "
                               f"and the {what} {self.show(vt)}.", x.loc)
            t = t if t is not None else vt
            atoms[what] = v.atom
        if isinstance(prune(t), TV):
            unify(t, I32)  # integer literals default to i32, as in Futhark
        t = prune(t)
        start, end = atoms["start"], atoms["end"]
        a, b = self.to_i64(start, loc), self.to_i64(end, loc)
        second = atoms.get("second")
        step = self.i64_op("-", self.to_i64(second, loc), a, loc) if second is not None else \
            S.Const(-1 if kind == "..>" else 1, I64)
        count, invalid = self.range_count(kind, a, b, step, loc)
        shown = (a,) + ((self.to_i64(second, loc),) if second is not None else ()) + (b,)
        middle = "..{1}" if second is not None else ""
        last = "{2}" if second is not None else "{1}"
        size = self.range_size(e, t, count, end)  # before the assertion, so that it can be hoisted
        self.stms.append(S.Stm((), S.Assert(self.emit(S.UnOp("!", invalid, BOOL), BOOL, loc),
                                            f"Range {{0}}{middle}{kind}{last} is invalid.", shown), loc))
        return RangeParts(t, start, second, kind, size)

    def range_element(self, r: "RangeParts", k, loc):
        """Element k (an atom of the elements' type) of a range: start + k * stride, wrapping, as Futhark's
        iota does."""
        if r.second is None:
            return self.emit(S.BinOp("-" if r.kind == "..>" else "+", r.start, k, r.t), r.t, loc, cse=False)
        stride = self.emit(S.BinOp("-", r.second, r.start, r.t), r.t, loc)
        return self.emit(S.BinOp("+", r.start, self.emit(S.BinOp("*", k, stride, r.t), r.t, loc), r.t), r.t, loc)

    def i64_op(self, op, x, y, loc, t=I64):
        return self.emit(S.BinOp(op, x, y, t), t, loc)

    def range_count(self, kind, a, b, step, loc):
        """The number of elements of a range (0 when invalid), and whether it is invalid (bool atoms)."""
        def op(o, x, y):
            return self.i64_op(o, x, y, loc, BOOL if o in ("<", "<=", ">", ">=", "==", "||", "&&") else I64)
        zero, one = S.Const(0, I64), S.Const(1, I64)
        if kind == "..<":
            invalid = op("||", op("<=", step, zero), op("<", b, a))
            distance, stride = op("-", b, a), step
        elif kind == "..>":
            invalid = op("||", op(">=", step, zero), op("<", a, b))
            distance, stride = op("-", a, b), op("-", zero, step)
        else:  # inclusive: up or down, as the stride says
            up = op(">", step, zero)
            wrong_side = op("||", op("&&", up, op("<", b, a)), op("&&", op("<", step, zero), op("<", a, b)))
            invalid = op("||", op("==", step, zero), wrong_side)
            distance = op("+", self.emit(S.PrimCall("i64.abs", (op("-", b, a),), I64), I64, loc), one)
            stride = self.emit(S.PrimCall("i64.abs", (step,), I64), I64, loc)
        if isinstance(step, S.Const):  # a stride of 1 or -1: no division (which could not be hoisted)
            count = distance
        else:
            divisor = self.emit(S.PrimCall("i64.max", (stride, one), I64), I64, loc)  # not 0, even when invalid
            count = op("/", op("-", op("+", distance, divisor), one), divisor)
        count = self.emit(S.PrimCall("i64.max", (count, zero), I64), I64, loc)
        return count, invalid

    def range_size(self, e, t, count, end):
        """The range's size: `n` for `0..<n`, `0..1..<n` and `1..2...n` with n an i64 variable or constant, as
        in Futhark; otherwise a size known only at run time."""
        known = isinstance(e.end, (P.Ident, P.Lit)) and t == I64 and (
            (e.end_kind == "..<" and _is_int(e.start, 0) and (e.second is None or _is_int(e.second, 1))) or
            (e.end_kind == "..." and _is_int(e.start, 1) and _is_int(e.second, 2)))
        if known:
            return end
        size = self.bind(S.AtomExp(count), I64, e.loc, "len")
        self.dim_text[size.name] = "?"
        return size


def _is_int(e, value) -> bool:
    """Whether a syntax node is the integer literal `value`."""
    return isinstance(e, P.Lit) and e.kind == "int" and e.value == value


def _literal_braces(text: str) -> str:
    """Text that str.format leaves as it is."""
    return text.replace("{", "{{").replace("}", "}}")
