"""The prelude's derived array and function builtins: partition, partition2, split, foldr, tabulate_2d/3d,
scatter_2d/3d, flatten_4d, unflatten_4d, and flip, curry, uncurry, const, opaque.

A mixin of `Checker` (ir.frontend.check.checker), beside `Builtins`. Each is lowered to constructs the IR already has,
as Futhark's prelude defines it: partition to filters (kernels), tabulate_2d to nested maps, scatter_2d to a
scatter on the flattened destination, foldr to foldl over the reversed array.
"""

from incflat.ir import source as S
from incflat.ir.frontend.check.infer import arr_of, is_scalar, leaves, prune, row_type, shape_of, unify
from incflat.ir.frontend.check.values import Arg, FunV, Named, V, atom_v, split_tuple, tuple_v
from incflat.ir.types import BOOL, I32, I64, Array, Scalar, Tuple



class PreludeArrays:
    """Mixin of Checker: the derived prelude functions, one builtin_<name> method each."""

    def lambda_from(self, ptypes, hints, make_result, soac, loc):
        """An S.Lambda whose body is what `make_result(params)` emits (params: V values of the given types),
        and its result's checker type; as `instantiate`, for a function the checker builds itself."""
        outer_barrier, c0 = self.barrier, dict(self.consumed)
        self.barrier = (self.counter, f'inside the function passed to "{soac}"')
        params = [self.fresh_v(t, h) for t, h in zip(ptypes, hints)]
        saved = self.push()
        res = make_result(params)
        self.barrier, self.consumed = outer_barrier, c0
        body_stms = self.pop(saved)
        local = {v.name for s in body_stms for v in s.pat} | {a.name for p in params for a in p.atoms}
        rt = self.export_type(res.t, local, loc, f'the result of the function passed to "{soac}"')
        return S.Lambda(tuple(a for p in params for a in p.atoms), S.Body(tuple(body_stms), res.atoms),
                        tuple(leaves(rt))), rt

    def apply_value(self, name, f: Arg, args, loc):
        """f applied to args, which must give a value (not a function)."""
        if not isinstance(f.val, FunV):
            raise self.err(f'The first argument of "{name}" must be a function, but this is a value of type '
                           f'{self.show(f.val.t)}.', f.loc)
        return self.apply(f.val, args, loc)

    # ---- functions on functions (functional.fut)

    def builtin_flip(self, name, args, loc):
        f, b, a = args
        return self.apply_value(name, f, [a, b], loc)

    def builtin_curry(self, name, args, loc):
        f, a, b = args
        pair = tuple_v([self.arg_value(name, a, 2), self.arg_value(name, b, 3)])
        return self.apply_value(name, f, [Arg(pair, a.loc)], loc)

    def builtin_uncurry(self, name, args, loc):
        f, p = args
        v = self.arg_value(name, p, 2)
        t = prune(v.t)
        if not isinstance(t, Tuple) or len(t.elems) != 2:
            raise self.err(f'Argument 2 of "uncurry" must be a pair, but has type {self.show(t)}.', p.loc)
        x, y = split_tuple(V(t, v.atoms))
        return self.apply_value(name, f, [Arg(x, p.loc), Arg(y, p.loc)], loc)

    def builtin_const(self, name, args, loc):
        return args[0].val

    def builtin_opaque(self, name, args, loc):
        return self.arg_value(name, args[0], 1)

    def builtin_iterate(self, name, args, loc):
        """`iterate n f x`: f applied n times, a loop (functional.fut, where n is an i32)."""
        n, f, x = args
        v = self.arg_value(name, n, 1)
        if not is_scalar(v.t) or unify(v.t, I32):
            raise self.err(f'The count of "{name}" must have type i32 (as in Futhark), but has type '
                           f'{self.show(v.t)}.', n.loc)
        return self.iterate_loop(name, f, x, loc, count=self.to_i64(v.atom, n.loc))

    def builtin_iterate_while(self, name, args, loc):
        p, f, x = args
        return self.iterate_loop(name, f, x, loc, cond=p)

    def builtin_iterate_until(self, name, args, loc):
        p, f, x = args
        return self.iterate_loop(name, f, x, loc, cond=p, negate=True)

    def iterate_loop(self, name, f: Arg, x: Arg, loc, count=None, cond=None, negate=False):
        init = self.arg_value(name, x, 3)
        params = self.fresh_v(init.t, "x")
        outer_barrier, c0 = self.barrier, dict(self.consumed)
        self.barrier = (self.counter, f'inside the function passed to "{name}"')
        form = None
        if cond is not None:
            saved = self.push()
            c = self.apply_value(name, cond, [Arg(params, cond.loc)], loc)
            if isinstance(c, FunV) or not is_scalar(c.t) or unify(c.t, BOOL):
                shown = "a function" if isinstance(c, FunV) else self.show(c.t)
                raise self.err(f'The predicate of "{name}" must return bool, but returns {shown}.', cond.loc)
            c = atom_v(self.not_(c.atom, loc)) if negate else c
            form = S.WhileLoop(S.Body(tuple(self.pop(saved)), c.atoms))
        else:
            form = S.ForLoop(S.Var(self.fresh("i"), I64), count)
        saved = self.push()
        res = self.apply_value(name, f, [Arg(params, f.loc)], loc)
        body = self.pop(saved)
        self.barrier, self.consumed = outer_barrier, c0
        if isinstance(res, FunV) or unify(res.t, init.t) or \
                any(shape_of(prune(a)) != shape_of(prune(b)) for a, b in zip(leaves(init.t), leaves(res.t))):
            shown = "a function" if isinstance(res, FunV) else self.show(res.t)
            raise self.err(f'The function passed to "{name}" must return its argument\'s type '
                           f'{self.show(init.t)}, but returns {shown}.', f.loc)
        pat = tuple(S.Var(self.fresh("x"), lt) for lt in leaves(init.t))
        self.stms.append(S.Stm(pat, S.Loop((), params.atoms, init.atoms, form, S.Body(tuple(body), res.atoms)), loc))
        return V(init.t, pat)

    def builtin_trace(self, name, args, loc):
        return self.arg_value(name, args[0], 1)  # Futhark's compiled code ignores trace and break too

    builtin_break = builtin_trace

    def builtin_not(self, name, args, loc):
        x = self.arg_value(name, args[0], 1)
        if not is_scalar(x.t) or unify(x.t, BOOL):
            raise self.err(f'"not" expects a bool, but got {self.show(x.t)}.', args[0].loc)
        return atom_v(self.not_(x.atom, loc))

    def convert(self, name, args, to: str, frm: str, loc):
        """r32, t32, r64, t64 (prelude.fut): conversions between i32/i64 and f32/f64."""
        x = self.arg_value(name, args[0], 1)
        if not is_scalar(x.t) or unify(x.t, Scalar(frm)):
            raise self.err(f'"{name}" expects a {frm}, but got {self.show(x.t)}.', args[0].loc)
        t = Scalar(to)
        return atom_v(self.emit(S.PrimCall(f"{to}.{frm}", (x.atom,), t), t, loc))

    def builtin_r32(self, name, args, loc):
        return self.convert(name, args, "f32", "i32", loc)

    def builtin_t32(self, name, args, loc):
        return self.convert(name, args, "i32", "f32", loc)

    def builtin_r64(self, name, args, loc):
        return self.convert(name, args, "f64", "i64", loc)

    def builtin_t64(self, name, args, loc):
        return self.convert(name, args, "i64", "f64", loc)

    # ---- arrays (array.fut, soacs.fut)

    def builtin_manifest(self, name, args, loc):
        return self.builtin_copy(name, args, loc)  # a layout hint in Futhark; a copy has the same meaning

    def builtin_spread(self, name, args, loc):
        """`spread k x is vs` is `scatter (replicate k x) is vs`."""
        k, x, idxs, vals = args
        dest = self.builtin_replicate(name, [k, x], loc)
        return self.builtin_scatter(name, [Arg(dest, loc), idxs, vals], loc)

    def builtin_exscan(self, name, args, loc):
        """`exscan op ne xs`: the exclusive scan, the inclusive one shifted right by one with ne first."""
        f, ne_a, arr_a = args
        inclusive = self.builtin_scan(name, args, loc)
        ne = self.arg_value(name, ne_a, 2)
        t = prune(inclusive.t)
        d = shape_of(t)[0]

        def element(params):
            (i,) = params
            first = self.binop("==", i, atom_v(S.Const(0, I64)), loc)
            prev = self.binop("-", i, atom_v(S.Const(1, I64)), loc)
            safe = atom_v(self.select(first.atom, S.Const(0, I64), prev.atom, loc))
            shifted = self.index_value(inclusive, [safe.atom], loc)
            return V(row_type(t), tuple(self.select(first.atom, a, b, loc) for a, b in zip(ne.atoms, shifted.atoms)))
        iota = self.builtin_iota(name, [Arg(atom_v(self.dim_atom(d)), loc)], loc)
        lam, rt = self.lambda_from([I64], ["i"], element, name, loc)
        ls = leaves(arr_of(rt, (d,)))
        vs = self.bind_many(S.Map(self.dim_atom(d), lam, iota.atoms), ls, loc, [None] * len(ls))
        return V(arr_of(rt, (d,)), vs)


    def builtin_foldr(self, name, args, loc):
        f, acc, arr = args
        rev = self.builtin_reverse(name, [arr], loc)
        flipped = Named("flip", "builtin", f.loc, (f,))
        return self.builtin_foldl(name, [Arg(flipped, f.loc), acc, Arg(rev, arr.loc)], loc)

    def builtin_flatten_4d(self, name, args, loc):
        return self.builtin_flatten(name, args, loc, 4)

    def builtin_unflatten_4d(self, name, args, loc):
        return self.builtin_unflatten(name, args, loc, 4)

    def builtin_split(self, name, args, loc):
        a = self.arg_array(name, args[0], 1)
        t = prune(a.t)
        d = shape_of(t)[0]
        parts = self.defs.get(d) if isinstance(d, str) else None
        if parts is None or parts[0] != "+":
            raise self.err(f'"split" needs an array whose size is a sum n+m in its type (it returns ([n]t, [m]t)), '
                           f'but got {self.show(t)}; coerce it first, e.g. "split (xs :> [n+m]t)".', args[0].loc)
        _, n, m = parts
        first = self.sub_slice(a, S.Const(0, I64), n, n, loc)
        second = self.sub_slice(a, n, self.dim_atom(d), m, loc)
        return tuple_v([first, second])

    def builtin_tabulate_2d(self, name, args, loc):
        n = self.arg_i64(name, args[0])
        rest = args[1:]
        inner = self.builtin_tabulate if len(rest) == 2 else self.builtin_tabulate_2d

        def row(params):
            fi = self.apply_value(name, rest[-1], [Arg(params[0], loc)], loc)
            return inner(name, list(rest[:-1]) + [Arg(fi, rest[-1].loc)], loc)
        lam, rt = self.lambda_from([I64], ["i"], row, name, loc)
        io = self.bind(S.Iota(n, I64), Array(I64, (S.dim_of(n),)), loc)
        t = arr_of(rt, (S.dim_of(n),))
        ls = leaves(t)
        return V(t, self.bind_many(S.Map(n, lam, (io,)), ls, loc, [None] * len(ls)))

    builtin_tabulate_3d = builtin_tabulate_2d

    def builtin_scatter_2d(self, name, args, loc, rank=2):
        dest = self.arg_array(name, args[0], 1)
        idx = self.arg_array(name, args[1], 2)
        td = prune(dest.t)
        it = prune(idx.t)
        want = Tuple((I64,) * rank)
        if len(shape_of(it)) != 1 or not isinstance(prune(row_type(it)), Tuple) or unify(row_type(it), want):
            raise self.err(f'The indices passed to "{name}" must have type []{self.show(want)}, but have type '
                           f'{self.show(it)}.', args[1].loc)
        if len(shape_of(td)) < rank:
            raise self.err(f'The destination of "{name}" must have at least {rank} dimensions, but has type '
                           f'{self.show(td)}.', args[0].loc)
        dims = [self.dim_atom(d) for d in shape_of(td)[:rank]]

        def flat_index(params):
            # the row-major position, or -1 (ignored by scatter) where an index is out of bounds
            ok, pos = None, S.Const(0, I64)
            for p, d in zip(params, dims):
                i = p.atom
                inside = self.emit(S.BinOp("&&", self.emit(S.BinOp("<=", S.Const(0, I64), i, BOOL), BOOL, loc),
                                           self.emit(S.BinOp("<", i, d, BOOL), BOOL, loc), BOOL), BOOL, loc)
                ok = inside if ok is None else self.emit(S.BinOp("&&", ok, inside, BOOL), BOOL, loc)
                pos = self.emit(S.BinOp("+", self.emit(S.BinOp("*", pos, d, I64), I64, loc), i, I64), I64, loc)
            keep = self.emit(S.PrimCall("i64.bool", (ok,), I64), I64, loc)
            shifted = self.emit(S.BinOp("+", pos, S.Const(1, I64), I64), I64, loc)
            return atom_v(self.emit(S.BinOp("-", self.emit(S.BinOp("*", keep, shifted, I64), I64, loc),
                                            S.Const(1, I64), I64), I64, loc))
        lam, _ = self.lambda_from([I64] * rank, ["i", "j", "k"], flat_index, name, loc)
        n = self.dim_atom(shape_of(it)[0])
        flat_idx = self.bind(S.Map(n, lam, idx.atoms), Array(I64, (S.dim_of(n),)), loc)
        flat_dest = self.builtin_flatten(name, [args[0]], loc, rank)
        scattered = self.builtin_scatter(name, [Arg(flat_dest, args[0].loc), Arg(atom_v(flat_idx), args[1].loc),
                                                args[2]], loc)
        atoms = [self.bind(S.Reshape(tuple(self.dim_atom(d) for d in shape_of(lt)), x), lt, loc)
                 for x, lt in zip(scattered.atoms, leaves(td))]
        return V(td, tuple(atoms))

    def builtin_scatter_3d(self, name, args, loc):
        return self.builtin_scatter_2d(name, args, loc, 3)

    # ---- partition: filters, so that it runs in kernels

    def predicate(self, name, p: Arg, row, loc, combine):
        """The lambda row -> bool of `combine(values of the predicates at x)`."""
        def body(params):
            flags = []
            for f in p:
                r = self.apply_value(name, f, [Arg(params[0], loc)], loc)
                if isinstance(r, FunV) or not is_scalar(r.t) or unify(r.t, BOOL):
                    shown = "a function" if isinstance(r, FunV) else self.show(r.t)
                    raise self.err(f'The predicate of "{name}" must return bool, but returns {shown}.', f.loc)
                flags.append(r.atom)
            return atom_v(combine(flags))
        return self.lambda_from([row], ["x"], body, name, loc)[0]

    def not_(self, x, loc):
        return self.emit(S.UnOp("!", x, BOOL), BOOL, loc)

    def filtered(self, name, lam, arr, loc):
        """The elements of arr that the predicate lam keeps: a Filter, its count a fresh (unknown) size."""
        t = prune(arr.t)
        size = self.fresh("size")
        self.dim_text[size] = "?"
        res_t = arr_of(row_type(t), (size,))
        pat = (S.Var(size, I64),) + tuple(S.Var(self.fresh("filtered"), lt) for lt in leaves(res_t))
        self.stms.append(S.Stm(pat, S.Filter(self.dim_atom(shape_of(t)[0]), lam, arr.atoms, size), loc))
        return V(res_t, pat[1:])

    def sized_to(self, v, size, loc):
        """v (an array) with its outer size named `size` (equal at run time)."""
        rt = arr_of(row_type(prune(v.t)), (S.dim_of(size),))
        atoms = [self.bind(S.AtomExp(x), lt, loc, "part") for x, lt in zip(v.atoms, leaves(rt))]
        return V(rt, tuple(atoms))

    def builtin_partition(self, name, args, loc):
        p, arr_a = args
        arr = self.arg_array(name, arr_a, 2)
        row = row_type(prune(arr.t))
        n = self.dim_atom(shape_of(prune(arr.t))[0])
        yes = self.filtered(name, self.predicate(name, [p], row, loc, lambda fs: fs[0]), arr, loc)
        no = self.filtered(name, self.predicate(name, [p], row, loc, lambda fs: self.not_(fs[0], loc)), arr, loc)
        k = self.dim_atom(shape_of(yes.t)[0])
        return tuple_v([yes, self.sized_to(no, self.size_op("-", n, k, loc), loc)])

    def builtin_partition2(self, name, args, loc):
        p1, p2, arr_a = args
        arr = self.arg_array(name, arr_a, 3)
        row = row_type(prune(arr.t))
        n = self.dim_atom(shape_of(prune(arr.t))[0])

        def second(fs):
            return self.emit(S.BinOp("&&", self.not_(fs[0], loc), fs[1], BOOL), BOOL, loc)

        def neither(fs):
            return self.not_(self.emit(S.BinOp("||", fs[0], fs[1], BOOL), BOOL, loc), loc)
        first = self.filtered(name, self.predicate(name, [p1], row, loc, lambda fs: fs[0]), arr, loc)
        mid = self.filtered(name, self.predicate(name, [p1, p2], row, loc, second), arr, loc)
        rest = self.filtered(name, self.predicate(name, [p1, p2], row, loc, neither), arr, loc)
        k = self.dim_atom(shape_of(first.t)[0])
        m = self.dim_atom(shape_of(mid.t)[0])
        size = self.size_op("-", self.size_op("-", n, k, loc), m, loc)
        return tuple_v([first, mid, self.sized_to(rest, size, loc)])
