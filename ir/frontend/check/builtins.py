"""The builtin functions: map, reduce, scan, filter, zip, transpose, iota, ..., foldl, prelude reductions.

A mixin of `Checker` (ir.frontend.check.checker). `call` dispatches a builtin `name` to `builtin_<name>`,
which checks the arguments and emits the IR (a SOAC, a reshape, a slice...). Their arities are in
ir.frontend.check.prelude.
"""

from incflat.ir import source as S
from incflat.ir.frontend.check.infer import (UNKNOWN_SIZES_NOTE, Refine, TArr, unknown_tv, arr_of, coerce_value, drop_dims,
                                    is_arr, is_scalar, leaves, prune, rank_of, row_type, shape_of, unify)
from incflat.ir.frontend.check.prelude import LOGIC_OPS, UNZIPS, prelude_lookup
from incflat.ir.frontend.check.values import Arg, FunV, V, atom_v, tuple_v, unzip_v
from incflat.ir.types import BOOL, I64, Array, Scalar, Tuple


class Builtins:
    """Mixin of Checker: the builtin functions, one builtin_<name> method each."""

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
        if isinstance(a.val, V) and unknown_tv(a.val.t):
            raise Refine(unknown_tv(a.val.t), dims=1)
        if isinstance(a.val, FunV) or not is_arr(prune(a.val.t)):
            shown = "a function" if isinstance(a.val, FunV) else f"has type {self.show(a.val.t)}"
            raise self.err(f'Argument {argno} of "{name}" must be an array, but {shown}.', a.loc)
        return a.val

    def arg_array_of_rank(self, name, a: Arg, argno, rank):
        """arg_array, where an entry parameter's type not known yet is refined to `rank` dimensions at least."""
        v = self.arg_array(name, a, argno)
        t = prune(v.t)
        if rank_of(t) < rank and unknown_tv(getattr(t, "elem", None)):
            raise Refine(unknown_tv(t.elem), dims=rank - rank_of(t))
        return v

    def arg_value(self, name, a: Arg, argno):
        if isinstance(a.val, FunV):
            raise self.not_a_value(a.val, a.loc, f'argument {argno} of "{name}"')
        return a.val

    def arg_i64(self, name, a: Arg, what="size argument"):
        v = self.arg_value(name, a, 1)
        if not is_scalar(v.t) or unify(v.t, I64):
            raise self.err(f'The {what} of "{name}" must have type i64, but has type {self.show(v.t)}.', a.loc)
        return v.atom

    def flexible_outer(self, arrs, loc):
        """The outer size arrays (a list, updated in place) should share: one whose size is an anonymous parameter
        size (`[]`) takes the others', checked at run time, as Futhark unifies such sizes; a `rep x` takes the first
        other's size."""
        sized = next((a for a in arrs if not self.is_rep(a)), None)
        if sized is not None:
            arrs[:] = [self.rep_sized(a, shape_of(prune(sized.t))[0], loc) if self.is_rep(a) else a for a in arrs]
        dims = [shape_of(prune(a.t))[0] for a in arrs]
        d0 = next((d for d in dims if d not in self.flexible), dims[0])
        for i, (a, d) in enumerate(zip(arrs, dims)):
            if d != d0 and d in self.flexible:
                arrs[i] = self.coerce(a, with_outer_size(prune(a.t), d0), loc)
        return d0

    def same_outer(self, name, arrs, loc):
        """The common outer size of arrays (a list, updated in place), as flexible_outer makes it."""
        d0 = self.flexible_outer(arrs, loc)
        for a in arrs:
            d = shape_of(prune(a.t))[0]
            if d != d0:
                note = UNKNOWN_SIZES_NOTE if self.show_dim(d) == self.show_dim(d0) else ""
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
        return self.filtered(name, lam, arr, loc)

    def builtin_zip(self, name, args, loc):
        arrs = [self.arg_array(name, a, i + 1) for i, a in enumerate(args)]
        d0 = self.same_outer(name, arrs, loc)
        return V(TArr((d0,), Tuple(tuple(row_type(prune(a.t)) for a in arrs))), tuple(x for a in arrs for x in a.atoms))

    def builtin_unzip(self, name, args, loc):
        k = UNZIPS[name]
        a = self.arg_array(name, args[0], 1)
        t = prune(a.t)
        if not isinstance(t, TArr) or len(t.shape) != 1 or t.elem.is_record or len(t.elem.elems) != k:
            raise self.err(f'"{name}" needs a one-dimensional array of {k}-tuples, but got {self.show(t)}.',
                           args[0].loc)
        return tuple_v(unzip_v(a))

    def builtin_transpose(self, name, args, loc):
        a = self.arg_array_of_rank(name, args[0], 1, 2)
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

    def builtin_rep(self, name, args, loc):
        """`rep x`: `replicate n x` of the size n its use decides (the other arrays of a map, zip, scatter or
        hist, the type annotated or returned, the other branch of `if`); made of size 0 until then, and an error
        where nothing decides it (check_rep_sizes)."""
        x = self.arg_value(name, args[0], 1)
        size = self.bind(S.AtomExp(S.Const(0, I64)), I64, loc, "rep_size")  # (a variable: its uses are seen)
        v = self.builtin_replicate(name, [Arg(atom_v(size), loc), Arg(x, loc)], loc)
        for a in v.atoms:
            self.rep_values[a.name] = (x, loc)
        self.rep_sizes[size.name] = (len(v.atoms), loc)
        return v

    def is_rep(self, v) -> bool:
        return isinstance(v, V) and bool(v.atoms) and all(isinstance(a, S.Var) and a.name in self.rep_values
                                                          for a in v.atoms)

    def rep_sized(self, v, d, loc):
        """The `rep x` v made of size d."""
        x, rloc = self.rep_values[v.atoms[0].name]
        return self.builtin_replicate("rep", [Arg(atom_v(self.dim_atom(d)), loc), Arg(x, rloc)], rloc)

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
        if isinstance(args[0].val, FunV):  # (a function, or a tuple that holds one, passes through)
            return args[0].val
        return self.arg_value(name, args[0], 1)

    def concat(self, args, loc, name="++"):
        xs = self.arg_array(name, args[0], 1)
        ys = self.arg_array(name, args[1], 2)
        ys = self.empty_like(ys, xs.t, loc)
        xs = self.empty_like(xs, ys.t, loc)
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
        a = self.arg_array_of_rank(name, args[0], 1, k)
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
        pair = [idx, vals]
        self.flexible_outer(pair, loc)
        idx, vals = pair
        it, tv = prune(idx.t), prune(vals.t)
        if shape_of(it)[0] != shape_of(tv)[0]:
            raise self.err(f'The indices and values passed to "scatter" must have the same size, but have sizes '
                           f'[{self.show_dim(shape_of(it)[0])}] and [{self.show_dim(shape_of(tv)[0])}].', loc)
        atoms = [self.bind(S.Scatter(d, idx.atom, v), d.type, loc) for d, v in zip(dest.atoms, vals.atoms)]
        self.consume(dest, args[0].loc, self.arg_name(args[0]), f'"{name}"')
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
        self.barrier = (self.counter, f'inside the function passed to "{name}"')
        params = self.fresh_v(acc.t, "acc")
        saved = self.push()
        i = S.Var(self.fresh("i"), I64)
        x = self.index_value(arr, [i], loc)
        res = self.apply(f.val, [Arg(params, loc), Arg(x, loc)], loc)
        body = self.pop(saved)
        self.barrier, self.consumed = outer_barrier, c0
        if isinstance(res, FunV) or unify(res.t, acc.t):
            shown = "a function" if isinstance(res, FunV) else self.show(res.t)
            raise self.err(f'The function passed to "{name}" must return the accumulator\'s type '
                           f'{self.show(acc.t)}, but returns {shown}.', f.loc)
        for pt, rt in zip(leaves(acc.t), leaves(res.t)):
            if shape_of(prune(pt)) != shape_of(prune(rt)):
                raise self.err(f'The function passed to "{name}" changes the size of the accumulator: '
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


def with_outer_size(t, d):
    """t with its outermost size replaced by d."""
    return arr_of(row_type(t), (d,))
