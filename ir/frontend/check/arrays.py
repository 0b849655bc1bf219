"""Array expressions: literals, indexing, slices and in-place updates (`with`).

A mixin of `Checker` (ir.frontend.check.checker), split from the lowering of the other expressions
(ir.frontend.check.lower), whose helpers it uses through `self`.
"""

from dataclasses import fields, is_dataclass

from incflat.ir.frontend import syntax as P
from incflat.ir import source as S
from incflat.ir.frontend.check.infer import (Refine, arr_of, drop_dims, is_arr, is_scalar, leaves, map_dims, prune, rank_of,
                                    require, row_type, shape_of, type_param_tv, unify, unknown_tv)
from incflat.ir.frontend.check.values import V, split_tuple
from incflat.ir.types import BOOL, I64, Array, Scalar, Tuple


class ArrayExpressions:
    """Mixin of Checker: array literals, indexing, slicing and updates."""

    def lower_ArrayE(self, e, env):
        if not e.elems:  # `[]`: its element type is decided by its uses, as an entry parameter's
            te = self.empty_literal_types.setdefault(
                (id(e), self.call_path), P.TypeExp([("const", 0)], "?", e.loc, e.loc))  # (each call its own)
            v = self.empty_array(P.AscribeE(e.loc, e.span, e, te), env)
            self.empty_literal_atoms.update(a.name for a in v.atoms)
            return v
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

    def empty_array(self, e, env):
        """`[] : [0][3]t`: arrays of no elements (inner sizes left as [] are 0)."""
        t = prune(self.resolve_type(e.type, lambda kind, v, loc: self.local_type_dim(kind, v, loc, env)))
        if not is_arr(t):
            raise self.err(f"An empty array literal cannot have the type {self.show(t)}.", e.loc)
        outer = shape_of(t)[0]
        if outer not in (None, 0):
            raise self.err(f"An empty array literal has size 0, but is annotated as {self.show(t)}.", e.loc)
        return self.empty_of(t, e.loc)

    def empty_of(self, t, loc):
        """An array of type t with no elements (its outer size 0; inner sizes not known are 0)."""
        t = map_dims(t, lambda d: 0 if d is None else d)
        atoms = []
        for lt in leaves(t):
            if type_param_tv(lt.elem):  # (a literal's or an unknown type is decided later, at zonk)
                raise self.err("The element type of this empty array is a type parameter that nothing has decided "
                               "yet: incflat needs it where the array is made (pass a value of that type to the "
                               "function, or write the type).", loc)
            zero = False if lt.elem == BOOL else 0.0 if isinstance(lt.elem, Scalar) and lt.elem.is_float else 0
            x = S.Const(zero, lt.elem)
            for k in range(lt.rank - 1, -1, -1):
                x = self.bind(S.Replicate(self.dim_atom(lt.shape[k]), x), Array(lt.elem, lt.shape[k:]), loc,
                              "empty")
            atoms.append(x)
        return V(t, tuple(atoms))

    def lower_HoleE(self, e, env):
        """`???`: a run-time error where it is evaluated, standing for a value of the type its uses decide (refined
        as an empty literal's element type is); the blank value it gives is never read."""
        self.stms.append(S.Stm((), S.Assert(S.Const(False, BOOL), f"hole at {e.loc}"), e.loc))
        te = self.hole_types.setdefault((id(e), self.call_path), P.TypeExp([], "?", e.loc, e.loc))
        t = prune(self.resolve_type(te, lambda kind, v, loc: None))
        v = self.blank_of(t, e.loc)
        self.hole_atoms.update(a.name for a in v.atoms if isinstance(a, S.Var))
        return v

    def blank_of(self, t, loc) -> V:
        """A value of type t that no one reads (zeros; arrays of sizes not known are empty)."""
        t = prune(t)
        if is_arr(t) or isinstance(t, Tuple):
            return self.empty_of(t, loc) if is_arr(t) else \
                V(t, tuple(a for x in t.elems for a in self.blank_of(x, loc).atoms))
        return V(t, (S.Const(False if t == BOOL else 0, t),))

    def empty_as(self, v, t, loc, local=frozenset()):
        """v with each empty array literal, hole or `rep` in it (v itself, or a component of a tuple) made one of
        the type t's rows (empty_like), t's sizes in `local` aside."""
        t = prune(t)
        if isinstance(v, V) and isinstance(t, Tuple) and isinstance(prune(v.t), Tuple) \
                and prune(v.t).names == t.names:
            parts = [self.empty_as(p, et, loc, local) for p, et in zip(split_tuple(v), t.elems)]
            return V(prune(v.t).with_elems(p.t for p in parts), tuple(a for p in parts for a in p.atoms))
        return self.empty_like(v, t, loc, local)

    def is_hole(self, v) -> bool:
        """Whether v is the blank value of a hole (`???`) that holds an array."""
        return isinstance(v, V) and any(isinstance(a, S.Var) for a in v.atoms) and all(
            a.name in self.hole_atoms for a in v.atoms if isinstance(a, S.Var))

    def empty_like(self, v, t, loc, local=frozenset()):
        """v, where it is an empty array literal `[]` (whose inner sizes its uses could not tell), as an empty
        array of rows of t's type: what `xs ++ []` and `if c then xs else []` mean. v itself otherwise, or where
        t's rows have sizes in `local` (names bound where v cannot see them)."""
        if self.is_rep(v):  # `rep x` takes the outer size
            t = prune(t)
            d = shape_of(t)[0] if is_arr(t) else None
            if d is None or (isinstance(d, str) and (d in local or d.startswith("?"))):
                return v
            return self.rep_sized(v, d, loc)
        if self.is_hole(v):  # a hole takes the whole type, its sizes too
            t = prune(t)
            if unify(prune(v.t), t) == "type" or any(isinstance(d, str) and (d in local or d.startswith("?"))
                                                     for d in _dims_of(t)):
                return v
            new = self.blank_of(t, loc)
            self.hole_atoms.update(a.name for a in new.atoms if isinstance(a, S.Var))
            return new
        if not (isinstance(v, V) and v.atoms and all(isinstance(a, S.Var) and a.name in self.empty_literal_atoms
                                                    for a in v.atoms)):
            return v
        t = prune(t)
        if not is_arr(t) or rank_of(prune(v.t)) > rank_of(t):
            return v
        row = row_type(t)
        if any(isinstance(d, str) and (d in local or d.startswith("?")) for d in _dims_of(row)):
            return v  # (`?n`: a size an annotation binds, not known yet)
        if unify(row_type(prune(v.t)), row) == "type":
            return v
        new = self.empty_of(arr_of(row, (0,)), loc)
        self.empty_literal_atoms.update(a.name for a in new.atoms)
        return new

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
        if unknown_tv(t):
            raise Refine(t, dims=len(e.idxs))
        if not is_arr(t):
            raise self.err(f"Only arrays can be indexed, but this has type {self.show(t)}.", e.arr.loc)
        if len(e.idxs) > rank_of(t) and isinstance(t, Array) and unknown_tv(t.elem):
            raise Refine(t.elem, dims=len(e.idxs) - rank_of(t))
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
        known = self.known_slice_size(ix, start, end, stride, na, loc)
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
            if known is not None:
                return S.DimSlice(start, end, stride, known)
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

    def known_slice_size(self, ix: P.SliceI, start, end, stride, na, loc):
        """The size Futhark gives a slice, or None where it is unknown: `a[:j]` and `a[0:j]` have size j,
        `a[i:j]` size j-i (j defaults to a's size), `a[::-1]` a's size and `a[i:j:-1]` size i-j, each with
        stride 1 (or -1) written or left out, and only where j and i bind no names (no `let`, lambda or loop).
        Two slices by the same expressions then have the same size."""
        def const(x, v):
            return isinstance(x, S.Const) and int(x.value) == v
        if not all(_binds_nothing(x) for x in (ix.start, ix.end)):
            return None
        if stride is None or const(stride, 1):
            if start is None or const(start, 0):
                return na if end is None else end
            return self.size_op("-", na if end is None else end, start, loc)
        if const(stride, -1):
            if start is None and end is None:
                return na
            if start is not None and end is not None:
                return self.size_op("-", start, end, loc)
        return None

    def select(self, c, a, b, loc):
        """`if c then a else b` for two atoms of one type."""
        v = S.Var(self.fresh("sel"), a.type)
        self.stms.append(S.Stm((v,), S.If(c, S.Body((), (a,)), S.Body((), (b,)), (a.type,)), loc))
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
        for k, ix in enumerate(e.idxs):
            if isinstance(ix, P.SliceI):
                idxs.append(self.make_slice(ix, shape_of(t)[k], env))
            else:
                idxs.append(self.index_atom(self.lower_val(ix, env), ix.loc))
        val = self.lower_val(e.value, env)
        kept = tuple(S.dim_of(i.size) for i in idxs if isinstance(i, S.DimSlice))
        et = arr_of(drop_dims(t, len(idxs)), kept) if kept else drop_dims(t, len(idxs))
        r = unify(et, val.t)
        if r == "size" and kept:
            pass  # the value's shape is checked against the slice's at run time, as in Futhark
        elif r:
            raise self.err(f"The new value has {self.what(r)} {self.show(val.t)}, but the updated element has "
                           f"{self.what(r)} {self.show(et)}.", e.value.loc)
        atoms = []
        for a, x in zip(arr.atoms, val.atoms):
            atoms.append(self.bind(S.Update(a, tuple(idxs), x), a.type, e.loc, "upd"))
        self.consume(arr, e.loc, self.source_text(e.arr))
        return V(t, tuple(atoms))


_BINDERS = (P.LetE, P.LetFunE, P.LambdaE, P.LoopE, P.SectionE)


def _binds_nothing(e) -> bool:
    """Whether a slice bound binds no name, so that Futhark takes it as a size expression."""
    if e is None:
        return True
    if isinstance(e, _BINDERS):
        return False
    if is_dataclass(e):
        return all(_binds_nothing(getattr(e, f.name)) for f in fields(e) if f.name not in ("loc", "span"))
    if isinstance(e, (list, tuple)):
        return all(_binds_nothing(x) for x in e)
    return True


def _dims_of(t) -> list:
    """Every dimension of a checker type."""
    out = []
    map_dims(t, lambda d: out.append(d) or d)
    return out
