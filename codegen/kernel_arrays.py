"""The rules for arrays inside kernels that codegen.opencl's KernelWriter takes on: the array constructors
(iota, replicate, rotate, reshape, literals, concat), updates and scatters, into a copy or in place
(codegen.in_place), and the selections of slices. They stand on KernelWriter's copies and loops (copy, put,
row_loop, consumable)."""

from dataclasses import replace

from incflat.codegen.kernel import CExpr, View
from incflat.codegen.kernel_base import KernelBase
from incflat.ir import host as H
from incflat.ir import source as S


def unravel(flat: str, dims: tuple) -> list:
    """The indices of the element at a row-major flat index in an array of these dimensions: the outermost is the
    quotient alone (no remainder: a flat index is below the product of the dimensions)."""
    idxs = []
    for k in range(len(dims)):
        inner = " * ".join(f"({d})" for d in dims[k + 1:])
        quotient = f"idx_div({flat}, {inner})" if inner else f"({flat})"
        idxs.append(quotient if k == 0 else f"idx_rem({quotient}, {dims[k]})")
    return idxs


def into_dests(write):
    """The rule of a statement whose array results are written into destinations: those given, and scratch
    memory for intermediate arrays."""
    def rule(w, e, pat, dests, group, loc) -> bool:
        dests = w.fill_dests(pat, dests, loc)
        write(w, e, pat, dests, group, loc)
        w.bind(pat, dests)
        return True
    return rule


def filling(fill):
    """The rule of an array constructor (see ArrayRules.fill_iota). Each takes a fresh name for the loop
    over its elements, used or not, so that the fresh names after it are numbered alike for every one."""
    return into_dests(lambda w, e, pat, dests, group, loc: fill(w, e, dests[0], w.fresh("i"), group, loc))


class ArrayRules(KernelBase):
    """The array rules of a kernel's writer (see the module's docstring)."""

    def selection(self, arr: View, idxs) -> View:
        """The view of the part of arr that indices (atoms and DimSlices) select."""
        offset, dims, strides = arr.offset, [], []
        for i, d, s in zip(idxs, arr.dims, arr.strides):
            if isinstance(i, S.DimSlice):
                offset = f"({offset} + ({self.atom(i.start)}) * ({s}))"
                dims.append(self.atom(i.size))
                # a constant slice stride keeps the stride known on the host
                host = H.Lit(int(i.stride.value)) if isinstance(i.stride, S.Const) else None
                strides.append(CExpr(s, getattr(s, "host", None)).times(self.atom(i.stride), host))
            else:
                offset = f"({offset} + ({self.atom(i)}) * ({s}))"
        k = len(idxs)
        return replace(arr, offset=offset, dims=tuple(dims) + arr.dims[k:], strides=tuple(strides) + arr.strides[k:])

    def check_update(self, e: S.Update, arr: View, target: View, loc):
        """An update's indices must lie in the array, and its value must have the shape it replaces."""
        if not self.checks or len(arr.dims) > 7:
            return
        bad = []
        for i, d in zip(e.idxs, arr.dims):
            if isinstance(i, S.DimSlice):
                first, n, s = self.atom(i.start), self.atom(i.size), self.atom(i.stride)
                last = f"(({first}) + (({n}) - 1) * ({s}))"
                bad.append(f"(({n}) != 0 && (({first}) < 0 || ({first}) >= ({d}) || {last} < 0 || {last} >= ({d})))")
            else:
                bad.append(f"({self.atom(i)}) < 0 || ({self.atom(i)}) >= ({d})")
        shape = "".join("[{%d}]" % k for k in range(len(arr.dims)))
        self.check(" || ".join(bad), loc, f"Index out of bounds in an update of an array of shape {shape}.",
                   list(arr.dims))
        value = self.atom(e.value)
        if isinstance(value, View) and len(value.dims) <= 3:
            mismatch = " || ".join(f"({a}) != ({b})" for a, b in zip(value.dims, target.dims))
            shown = "".join("[{%d}]" % k for k in range(len(value.dims)))
            wanted = "".join("[{%d}]" % (len(value.dims) + k) for k in range(len(value.dims)))
            self.check(mismatch, loc, f"cannot write a value of shape {shown} into a slice of shape {wanted}.",
                       list(value.dims) + list(target.dims))

    # The array constructors: filling(fill) makes them rules, fill(writer, e, dst, i, group, loc) writing the
    # array into dst, element by element (by the workgroup's threads together at the intra-group level); i is
    # a fresh name for the index of a loop over the elements.

    def fill_iota(self, e: S.Iota, dst: View, i: str, group: bool, loc):
        with self.row_loop(i, dst.dims[0], group):
            self.emit(f"{dst.elem([i])} = ({dst.ctype}){i};")

    def fill_replicate(self, e: S.Replicate, dst: View, i: str, group: bool, loc):
        with self.row_loop(i, dst.dims[0], group):
            self.put(self.atom(e.x), dst.slice([i]), False)

    def fill_rotate(self, e: S.Rotate, dst: View, i: str, group: bool, loc):
        n = dst.dims[0]
        with self.row_loop(i, n, group):
            src = self.env[e.arr.name]
            j = self.declare("long", f"(({i}) + (long)({self.atom(e.amount)}) % {n} + {n}) % {n}", "j")
            self.put(src.slice([j]) if len(src.dims) > 1 else src.elem([j]), dst.slice([i]), False)

    def fill_reshape(self, e: S.Reshape, dst: View, i: str, group: bool, loc):
        """The same elements in row-major order: a copy by flat index."""
        src = self.env[e.arr.name]
        with self.flat_loop(dst.dims, group) as (f, idxs):
            self.emit(f"{dst.elem(idxs)} = {src.elem(unravel(f, src.dims))};")

    def fill_array_lit(self, e: S.ArrayLit, dst: View, i: str, group: bool, loc):
        for k, a in enumerate(e.elems):
            self.put(self.atom(a), dst.slice([str(k)]), group)

    def fill_concat(self, e: S.Concat, dst: View, i: str, group: bool, loc):
        offset = "0"
        for a in e.arrs:
            src = self.env[a.name]
            part = View(dst.mem, dst.ctype, f"({dst.offset} + ({offset}) * ({dst.strides[0]}))",
                        (src.dims[0],) + dst.dims[1:], dst.strides)
            self.copy(src, part, group)
            offset = f"({offset} + {src.dims[0]})"

    def update(self, e: S.Update, pat, dests, group, loc) -> bool:
        """An update writes into a copy of its array, or into the array itself where nothing reads it any more:
        a loop's state (in_place_updates), or an array the body made that the update alone reads."""
        if pat[0].name not in self.in_place and not self.consumable(e.arr):
            return filling(ArrayRules.fill_update)(self, e, pat, dests, group, loc)
        self.in_place_write(pat, e.arr, group, lambda dst: self.write_update(e, dst, group, loc))
        return False

    def in_place_write(self, pat, arr: S.Var, group: bool, write):
        """An update's or a scatter's writes into its array itself, which pat then names."""
        if group:  # every thread has read what it reads of the array before one writes into it
            self.barrier()
        write(self.env[arr.name])
        if group:
            self.barrier()
        self.env[pat[0].name] = self.env[arr.name]

    def scatter(self, e: S.Scatter, pat, dests, group, loc) -> bool:
        """A scatter writes into a copy of its destination, or into the destination itself where nothing reads
        it any more (as an update does)."""
        if pat[0].name not in self.in_place and not self.consumable(e.dest):
            return filling(ArrayRules.fill_scatter)(self, e, pat, dests, group, loc)
        self.in_place_write(pat, e.dest, group, lambda dst: self.write_scatter(e, dst, self.fresh("i"), group))
        return False

    def fill_scatter(self, e: S.Scatter, dst: View, i: str, group: bool, loc):
        self.copy(self.env[e.dest.name], dst, group)
        self.write_scatter(e, dst, i, group)

    def write_scatter(self, e: S.Scatter, dst: View, i: str, group: bool):
        """dst[is[k]] = vs[k] for every in-bounds is[k] (out-of-bounds writes are ignored; of several writes
        to one row, one wins, as in Futhark)."""
        idxs, vals = self.env[e.idxs.name], self.env[e.vals.name]
        with self.row_loop(i, idxs.dims[0], group):
            k = self.declare("long", idxs.elem([i]), "k")
            with self.block(f"if ({k} >= 0 && {k} < {dst.dims[0]})"):
                if len(dst.dims) > 1:
                    self.copy(vals.slice([i]), dst.slice([k]), False)
                else:
                    self.emit(f"{dst.elem([k])} = {vals.elem([i])};")

    def fill_update(self, e: S.Update, dst: View, i: str, group: bool, loc):
        self.copy(self.env[e.arr.name], dst, group)
        self.write_update(e, dst, group, loc)

    def write_update(self, e: S.Update, dst: View, group: bool, loc):
        """Writes an update's value into dst, which holds the array's elements."""
        if any(isinstance(x, S.DimSlice) for x in e.idxs):
            target = self.selection(dst, e.idxs)
            self.check_update(e, self.env[e.arr.name], target, loc)
            self.copy(self.atom(e.value), target, group)
            return
        idxs = [self.atom(x) for x in e.idxs]
        target = dst.slice(idxs) if len(idxs) < len(dst.dims) else dst
        if len(idxs) == len(dst.dims):
            self.emit(f"{'if (get_local_id(0) == 0) ' if group else ''}{dst.elem(idxs)} = {self.atom(e.value)};")
        else:
            self.copy(self.atom(e.value), target, group)
