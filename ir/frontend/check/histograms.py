"""`reduce_by_index` and `hist`: lowered to S.Hist, whose bins are one array of 32- or 64-bit numbers (8- and
16-bit integers and bools under a builtin operator are computed on 32 bits and narrowed back).

A mixin of `Checker` (ir.frontend.check.checker). Bins of tuples and bins of rows are histograms of numbers too
where the operator combines each component on its own, as most programs' operators do (accelerate's kmeans adds
points as pairs; rodinia's kmeans adds rows with `map2 (+)`):

- bins of tuples (`[k](f32, f32)`): one S.Hist per component, each with the part of the operator that computes
  that component from that component alone;
- bins of rows (`[k][l]t`) under an operator that is one `map` over the two rows: one S.Hist on the flattened
  bins, value j of row i going to bin `is[i] * l + j`, with the operator on elements; the neutral element is
  then a row of one value, `replicate l x`.

- bins of tuples whose components fit in 64 bits together, under an operator that mixes them (the pair of the
  larger key and its index): one S.Hist of u64 words, each a tuple packed, whose operator unpacks, combines and
  packs (the kernel's compare-and-swap then updates a whole tuple at once).

A wider tuple under an operator that mixes its components is an error naming the operator.
"""

from incflat.ir import source as S
from incflat.ir.analysis import free_in_exp
from incflat.ir.frontend.check.infer import (arr_of, is_scalar, leaves, prune, resolve_scalar, row_type, shape_of,
                                            unify)
from incflat.ir.frontend.check.apply import inline_closure
from incflat.ir.frontend.check.values import Arg, Named, Partial, Section, V, atom_v
from incflat.ir.types import BOOL, I64, Array, Scalar

U64 = Scalar("u64")

# The element types of histograms: the kernel updates a bin with a 32- or 64-bit compare-and-swap.
HIST_TYPES = ("i32", "i64", "u32", "u64", "f32", "f64")


def _hist_number(t) -> bool:
    """Whether t is a number a bin can hold (a literal's type, not fixed yet, defaults to i32 or f64)."""
    return is_scalar(t) and getattr(prune(t), "name", "i32") in HIST_TYPES


def _bits(t) -> int:
    """The bits of a number type (a literal's type not fixed yet: i32's)."""
    t = prune(t)
    return 8 * t.prim.size if isinstance(t, Scalar) else 32


def components(lam: S.Lambda) -> list | None:
    """The operator `lam` ((x1..xk, y1..yk) -> (r1..rk)) split by component: for each i, the S.Lambda of
    (xi, yi) that computes ri; None where some ri needs another component's parameters."""
    k = len(lam.body.result)
    xs, ys = lam.params[:k], lam.params[k:]
    params = {p.name for p in lam.params}
    defined = {v.name: n for n, stm in enumerate(lam.body.stms) for v in stm.pat}
    out = []
    for i, r in enumerate(lam.body.result):
        needed, pending = set(), [r.name] if isinstance(r, S.Var) else []
        while pending:
            name = pending.pop()
            if name in defined and defined[name] not in needed:
                needed.add(defined[name])
                pending.extend(free_in_exp(lam.body.stms[defined[name]].exp))
        used = {name for n in needed for name in free_in_exp(lam.body.stms[n].exp)} | \
            ({r.name} if isinstance(r, S.Var) else set())
        if used & params - {xs[i].name, ys[i].name}:
            return None
        stms = tuple(stm for n, stm in enumerate(lam.body.stms) if n in needed)
        out.append(S.Lambda((xs[i], ys[i]), S.Body(stms, (r,)), (lam.ret[i],)))
    return out


def elementwise(lam: S.Lambda) -> S.Lambda | None:
    """The operator on elements, where the operator on rows `lam` ((x, y) -> r) is one map over x and y."""
    x, y = lam.params
    if len(lam.body.stms) != 1:
        return None
    stm = lam.body.stms[0]
    m = stm.exp
    if not (isinstance(m, S.Map) and stm.pat == lam.body.result and len(m.lam.params) == 2
            and {a.name for a in m.arrs} == {x.name, y.name} and len(m.arrs) == 2):
        return None
    if m.arrs[0].name == x.name:
        return m.lam
    a, b = m.lam.params  # map2 f y x: f's parameters in the other order
    return S.Lambda((b, a), m.lam.body, m.lam.ret)


class Histograms:
    """Mixin of Checker: reduce_by_index and hist."""

    def builtin_reduce_by_index(self, name, args, loc):
        dest_a, f, ne_a, is_a, vs_a = args
        dest = self.arg_array(name, dest_a, 1)
        ne = self.arg_value(name, ne_a, 3)
        idx = self.arg_array(name, is_a, 4)
        vals = self.arg_array(name, vs_a, 5)
        td, it, tv = prune(dest.t), prune(idx.t), prune(vals.t)
        t = row_type(td)
        wide = self.widened_operator(f.val, t)
        if wide is not None:
            return self.narrow_histogram(name, args, t, wide, loc)
        rows = isinstance(prune(t), Array) and len(shape_of(t)) == 1 and _hist_number(row_type(t))
        tuples = not is_scalar(t) and not isinstance(prune(t), Array) and all(_hist_number(x) for x in leaves(t))
        if not (_hist_number(t) or rows or tuples):
            raise self.err(f'incflat supports "{name}" on bins of 32- or 64-bit numbers ([]i32, []i64, []u32, '
                           f'[]u64, []f32, []f64), of tuples of them, or of rows of them ([][l]f32), and on bins of '
                           f'8- or 16-bit integers or bools under a builtin +, *, &, |, ^, min, max, || or &&, but '
                           f'these bins have type {self.show(td)}.', dest_a.loc)
        if len(shape_of(it)) != 1 or unify(row_type(it), I64):
            raise self.err(f'The indices passed to "{name}" must have type []i64, but have type {self.show(it)}.',
                           is_a.loc)
        if len(shape_of(tv)) != len(shape_of(td)) or unify(row_type(tv), t):
            raise self.err(f'The values passed to "{name}" have type {self.show(tv)}, but the histogram has type '
                           f'{self.show(td)}.', vs_a.loc)
        if unify(ne.t, t):
            raise self.err(f'The neutral element of "{name}" has type {self.show(ne.t)}, but the histogram\'s '
                           f'elements have type {self.show(t)}.', ne_a.loc)
        pair = [idx, vals]
        n = self.same_outer(name, pair, loc)
        idx, vals = pair
        op = f.val if _hist_number(t) else self.expanded(f.val)  # (its components are split: see its body)
        lam, rt = self.instantiate(op, [t, t], name, f.loc)
        if unify(rt, t):
            raise self.err(f'The operator of "{name}" must have type t -> t -> t, where t = {self.show(t)}, but it '
                           f'returns {self.show(rt)}.', f.loc)
        self.consume(dest, dest_a.loc, self.arg_name(dest_a), f'"{name}"')
        if rows:
            return self.histogram_of_rows(name, dest, ne, idx, vals, n, lam, f.loc, ne_a.loc, loc)
        parts = [lam] if _hist_number(t) else components(lam)
        bits = sum(_bits(x) for x in leaves(t))
        if parts is None and bits <= 64:
            return self.packed_histogram(name, dest, ne, idx, vals, n, op, t, f.loc, loc)
        if parts is None:
            raise self.err(f'The operator of "{name}" combines the components of its tuples together; incflat '
                           f'supports histograms of tuples whose operator combines each component on its own '
                           f'(one of numbers, one of its results from that component alone), or whose components '
                           f'fit in 64 bits together (this tuple takes {bits}).', f.loc)
        out = tuple(self.bind(S.Hist(self.dim_atom(n), part, (z,), d, idx.atom, v, (d.type,)), d.type, loc)
                    for part, z, d, v in zip(parts, ne.atoms, dest.atoms, vals.atoms))
        return V(td, out)

    def histogram_of_rows(self, name, dest: V, ne: V, idx: V, vals: V, n, lam, f_loc, ne_loc, loc) -> V:
        """Bins of rows ([k][l]t) under an elementwise operator: one histogram on the flattened bins."""
        inner = elementwise(lam)
        if inner is None:
            raise self.err(f'The operator of "{name}" on rows must be one map over the two rows (map2 (+)), to '
                           f'combine their elements one by one: incflat supports histograms of rows so.', f_loc)
        zero = self.replicated(ne.atom)
        if zero is None:
            raise self.err(f'The neutral element of "{name}", a row, must be written `replicate l x` (where the '
                           f'histogram is of rows, incflat needs the one value x).', ne_loc)
        d, k, l = dest.atom, *(self.dim_atom(x) for x in dest.atom.type.shape)
        elem = d.type.elem
        kl = self.size_op("*", k, l, loc)
        nl = self.size_op("*", self.dim_atom(n), l, loc)
        flat_bins = self.bind(S.Reshape((kl,), d), Array(elem, (kl.name,)), loc)
        flat_vals = self.bind(S.Reshape((nl,), vals.atom), Array(elem, (nl.name,)), loc)
        positions = self.bind(S.Iota(nl, I64), Array(I64, (nl.name,)), loc)

        def bin_of(params):  # position p: value p % l of row p / l, to bin is[p / l] * l + p % l, or -1
            p = params[0].atom
            i, j = self.size_op("/", p, l, loc, cse=False), self.size_op("%", p, l, loc, cse=False)
            b = self.bind(S.Index(idx.atom, (i,)), I64, loc)
            inside = self.emit(S.BinOp("&&", self.emit(S.BinOp("<=", S.Const(0, I64), b, BOOL), BOOL, loc),
                                       self.emit(S.BinOp("<", b, k, BOOL), BOOL, loc), BOOL), BOOL, loc)
            on = self.emit(S.PrimCall("i64.bool", (inside,), I64), I64, loc)
            target = self.size_op("+", self.size_op("*", b, l, loc, cse=False), j, loc, cse=False)
            shifted = self.size_op("+", target, S.Const(1, I64), loc, cse=False)
            return atom_v(self.size_op("-", self.size_op("*", on, shifted, loc, cse=False), S.Const(1, I64), loc,
                                       cse=False))
        bin_lam, _ = self.lambda_from([I64], ["p"], bin_of, name, loc)
        bins_of = self.bind(S.Map(nl, bin_lam, (positions,)), Array(I64, (nl.name,)), loc)
        flat = self.bind(S.Hist(nl, inner, (zero,), flat_bins, bins_of, flat_vals, (flat_bins.type,)),
                         flat_bins.type, loc)
        out = self.bind(S.Reshape((k, l), flat), d.type, loc)
        return V(prune(dest.t), (out,))

    def expanded(self, f):
        """The function value f, a top-level function's body in place of a call to it (as for a function
        inlined where applied)."""
        if not (isinstance(f, Named) and f.kind == "user") or self.funs[f.name].inline:
            return f
        body = inline_closure(self.funs[f.name].decl)
        return Partial(body, tuple(f.pre), f.loc) if f.pre else body

    def packed_histogram(self, name, dest: V, ne: V, idx: V, vals: V, n, op, t, f_loc, loc) -> V:
        """Bins of a tuple whose components fit in 64 bits together, under an operator that mixes them (the pair
        of the larger value and its index): one histogram of the tuples packed into u64 words, whose operator
        unpacks its two words, applies the tuple's and packs the result (the kernel's compare-and-swap loop then
        updates the whole tuple at once)."""
        kinds = [resolve_scalar(x) for x in leaves(t)]  # (a literal's type not fixed yet: the default)

        def packed_map(arrays: V, width):
            lam, _ = self.lambda_from([t], ["x"], lambda ps: atom_v(self.pack(ps[0].atoms, kinds, loc)), name, loc)
            return self.bind(S.Map(width, lam, arrays.atoms), Array(U64, (S.dim_of(width),)), loc)
        k_atom = self.dim_atom(dest.atoms[0].type.shape[0])
        bins = packed_map(dest, k_atom)
        word = bins.type
        words = packed_map(vals, self.dim_atom(n))
        zero = self.pack(ne.atoms, kinds, loc)

        def combine(ps):
            x, y = (V(t, self.unpack(p.atom, kinds, loc)) for p in ps)
            return atom_v(self.pack(self.apply_value(name, Arg(op, f_loc), [Arg(x, f_loc), Arg(y, f_loc)],
                                                     loc).atoms, kinds, loc))
        lam, _ = self.lambda_from([U64, U64], ["x", "y"], combine, name, f_loc)
        hist = self.bind(S.Hist(self.dim_atom(n), lam, (zero,), bins, idx.atom, words, (word,)), word, loc)
        unpack, _ = self.lambda_from([U64], ["w"], lambda ps: V(t, self.unpack(ps[0].atom, kinds, loc)), name, loc)
        out = self.bind_many(S.Map(k_atom, unpack, (hist,)), tuple(leaves(prune(dest.t))), loc, [None] * len(kinds))
        return V(prune(dest.t), out)

    def pack(self, atoms, kinds, loc):
        """The u64 word of scalars of the given types, the first in the lowest bits."""
        word, offset = S.Const(0, U64), 0
        for a, kind in zip(atoms, kinds):
            bits = _bits(kind)
            unsigned = Scalar(f"u{bits}")
            if kind.name.startswith("f"):
                u = self.emit(S.PrimCall(f"{kind.name}.to_bits", (a,), unsigned), unsigned, loc)
            elif kind.name.startswith("i"):
                u = self.emit(S.PrimCall(f"{unsigned.name}.{kind.name}", (a,), unsigned), unsigned, loc)
            else:
                u = a
            wide = u if bits == 64 else self.emit(S.PrimCall(f"u64.{unsigned.name}", (u,), U64), U64, loc)
            shifted = self.emit(S.BinOp("<<", wide, S.Const(offset, U64), U64), U64, loc)
            word = self.emit(S.BinOp("|", word, shifted, U64), U64, loc)
            offset += bits
        return word

    def unpack(self, word, kinds, loc) -> tuple:
        """The scalars `pack` packed into word."""
        out, offset = [], 0
        for kind in kinds:
            bits = _bits(kind)
            unsigned = Scalar(f"u{bits}")
            shifted = self.emit(S.BinOp(">>", word, S.Const(offset, U64), U64), U64, loc)
            u = shifted if bits == 64 else self.emit(S.PrimCall(f"{unsigned.name}.u64", (shifted,), unsigned),
                                                     unsigned, loc)
            if kind.name.startswith("f"):
                u = self.emit(S.PrimCall(f"{kind.name}.from_bits", (u,), kind), kind, loc)
            elif kind.name.startswith("i"):
                u = self.emit(S.PrimCall(f"{kind.name}.{unsigned.name}", (u,), kind), kind, loc)
            out.append(u)
            offset += bits
        return tuple(out)

    def replicated(self, a):
        """x, where the array atom a is `replicate n x` in the statements so far; else None."""
        for stm in reversed(self.stms):
            if any(v == a for v in stm.pat):
                return stm.exp.x if isinstance(stm.exp, S.Replicate) and is_scalar(stm.exp.x.type) else None
        return None

    @staticmethod
    def widened_operator(f, t) -> str | None:
        """For bins of 8- or 16-bit integers or of bools under a builtin operator that 32 bits compute as
        exactly (wrapping +, *, the bitwise ones, min and max: each kept by truncation), that operator on the
        32-bit type (`i32.&`); None otherwise."""
        t = prune(t)
        if not (isinstance(t, Scalar) and (t.name == "bool" or (t.is_int and t.prim.size < 4))):
            return None
        if isinstance(f, Section) and f.side == "none" and not f.pre:
            module, _, op = f.op.rpartition(".")
        elif isinstance(f, Named) and f.kind == "prelude" and not f.pre:
            module, _, op = f.name.rpartition(".")
        else:
            return None
        if module not in ("", t.name):
            return None
        wide = "i32" if t.name == "bool" or t.is_signed else "u32"
        ops = {"||": "|", "&&": "&", "max": "max", "min": "min"} if t.name == "bool" else \
            {o: o for o in ("+", "*", "&", "|", "^", "max", "min")}
        return f"{wide}.{ops[op]}" if op in ops else None

    def narrow_histogram(self, name, args, t, wide_op, loc):
        """reduce_by_index on 8- or 16-bit (or bool) bins: computed on 32-bit bins (values widened with their
        sign, or zeros), then narrowed back; the kernel's compare-and-swap works on 32 or 64 bits."""
        dest_a, f, ne_a, is_a, vs_a = args
        t = prune(t)
        wide, op = wide_op.split(".")
        conv = Named(f"{wide}.{t.name}", "prelude", loc)
        back = Named(f"{t.name}.{wide}", "prelude", loc)
        mapped = Named("map", "builtin", loc)

        def widen_array(a):
            return Arg(self.apply(mapped, [Arg(conv, a.loc), a], a.loc), a.loc)
        ne = self.arg_value(name, ne_a, 3)
        wide_ne = Arg(self.apply(conv, [Arg(ne, ne_a.loc)], ne_a.loc), ne_a.loc)
        op_f = Named(wide_op, "prelude", f.loc) if op in ("max", "min") else Section(wide_op, f.loc, None, "none",
                                                                                   f.loc)
        r = self.builtin_reduce_by_index(name, [widen_array(dest_a), Arg(op_f, f.loc), wide_ne, is_a,
                                                widen_array(vs_a)], loc)
        return self.apply(mapped, [Arg(back, loc), Arg(r, loc)], loc)

    def builtin_hist(self, name, args, loc):
        f, ne_a, k_a, is_a, vs_a = args
        k = self.arg_i64(name, k_a, "number of bins")
        ne = self.arg_value(name, ne_a, 2)
        vals = self.arg_array(name, vs_a, 5)
        if unify(ne.t, row_type(prune(vals.t))):
            raise self.err(f'The neutral element of "{name}" has type {self.show(ne.t)}, but the values have type '
                           f'{self.show(vals.t)}.', ne_a.loc)
        bins_t = arr_of(prune(ne.t), (S.dim_of(k),))
        bins = V(bins_t, tuple(self.bind(S.Replicate(k, x), t, loc) for x, t in zip(ne.atoms, leaves(bins_t))))
        return self.builtin_reduce_by_index(name, [Arg(bins, ne_a.loc), f, ne_a, is_a, vs_a], loc)
