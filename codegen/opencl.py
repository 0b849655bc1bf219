"""OpenCL C for the statements inside kernels: `KernelWriter` writes one kernel's body, on codegen.kernel_base's
`KernelBase` (the kernel's parameters and lines).

Level-1 segops become whole kernels (codegen.segops, codegen.tiling); the statements of their bodies, and the
level-0 segops inside an intra-group version (with local memory and barriers), are written here, each by the
rule of its expression's class (`TABLE`). Arrays inside kernels are views (codegen.kernel.View), so
rearranges and row slices cost nothing.
"""

import contextlib
from contextlib import ExitStack
from dataclasses import replace

from incflat.codegen.in_place import Owner, in_place_updates
from incflat.codegen.cscalar import CTYPES, WRAPPING, binop, neutral_ctypes, primcall
from incflat.codegen.kernel import INDEX, View, iota_view
from incflat.codegen.kernel_arrays import ArrayRules, filling, into_dests, unravel
from incflat.codegen.kernel_base import reshaped, row_major
from incflat.codegen.lifted import Lifted
from incflat.ir import nodes
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.errors import Unsupported
from incflat.ir.traverse import nested
from incflat.ir.types import I64, Array


# G4 interchanges elementwise operators (`map2 (+)`); any other operator on arrays has no kernel yet
ARRAY_OPERATOR = "a reduction or scan operator on arrays that is not elementwise"


def require_scalar_operator(op, loc):
    """Raises Unsupported for a segred or segscan whose operator works on arrays."""
    if any(isinstance(a.type, Array) for a in op.neutral):
        raise Unsupported(ARRAY_OPERATOR, loc)


def innermost(body: S.Body) -> bool:
    """Whether a body written inside a kernel has no loop of its own: no SOAC, loop or segop, and no array
    made element by element."""
    return all(not isinstance(stm.exp, (S.Loop, *S.SOACS, S.Hist, *T.SEGOPS))
               and not any(isinstance(p.type, Array) for p in stm.pat)
               and all(innermost(inner.body) for inner in nested(stm.exp))
               for stm in body.stms)


# What the user wrote, for the IR constructs that error messages mention.
SOURCE_NAMES = {"Scanomap": "scan", "Scan": "scan", "Redomap": "reduce", "Reduce": "reduce", "Map": "map",
                "If": "if", "Index": "indexing", "Iota": "iota", "Replicate": "replicate",
                "Rearrange": "transpose", "SegMap": "a nested map", "SegRed": "a nested reduce",
                "Filter": "filter", "ArrayLit": "an array literal", "Rotate": "rotate", "Concat": "concat",
                "Reshape": "flatten/unflatten", "Scatter": "scatter", "Update": "an in-place update",
                "Loop": "loop", "Apply": "a function call", "Hist": "reduce_by_index (or hist)", "Assert": "assert",
                "TuningParam": "#[param] (a tuning parameter)"}


def source_name(e) -> str:
    return SOURCE_NAMES.get(type(e).__name__, type(e).__name__)


class KernelWriter(ArrayRules):
    """Writes the code of one kernel: declarations of its inputs, then its body."""

    UNROLL = 8  # elements a thread loads before it combines them: independent loads in flight together hide
    # each one's latency

    def __init__(self, name: str, errors):
        super().__init__(name, errors)
        self.unrolled = False  # inside a round of elements unrolled by hand (fold_loop)
        self.in_place = set()  # the names bound by updates that write into their array (codegen.in_place)
        self.owner = None  # the arrays that the body being written made and may give up (codegen.in_place)

    def element_loop(self, e):
        """The loop of a sequential SOAC over its elements. An innermost one is unrolled UNROLL times, so
        that the loads of several elements are in flight at once: a thread's sequential loop is otherwise
        bound by the latency of each element's load. Not inside fold_loop's round of UNROLL elements, which
        has as many loads in flight already, nor where the width is a constant: the OpenCL compiler unrolls
        such a loop as it sees fit."""
        i = self.fresh("i")
        unroll = not self.unrolled and not isinstance(e.width, S.Const)
        if unroll and all(innermost(inner.body) for inner in nested(e)):
            self.emit(f"#pragma unroll {self.UNROLL}")
        return i, self.block(f"for (long {i} = 0; {i} < {self.atom(e.width)}; {i}++)")

    @contextlib.contextmanager
    def row_loop(self, i: str, count: str, group: bool):
        """A loop of i over [0, count), by the workgroup's threads together at the intra-group level (a
        barrier after it there)."""
        start, step = ("get_local_id(0)", "get_local_size(0)") if group else ("0", "1")
        with self.block(f"for (long {i} = {start}; {i} < {count}; {i} += {step})"):
            yield
        if group:
            self.barrier()

    @contextlib.contextmanager
    def flat_loop(self, dims: tuple, group: bool):
        """A loop over the indices of an array of these dimensions in row-major order, by the workgroup's threads
        together at the intra-group level (consecutive threads on consecutive elements; a barrier after it
        there). Yields (the flat index, the index in each dimension). The indices advance as the digits of a
        sum: the step's digits are added with a carry, so that no iteration divides (a GPU divides in software:
        NW's block copies spent a sixth of their kernel's time dividing)."""
        f = self.fresh("f")
        total = " * ".join(f"({d})" for d in dims) or "1"
        if len(dims) <= 1:
            with self.row_loop(f, total, group):
                yield f, [f] * len(dims)
            return
        start, step = ("get_local_id(0)", "get_local_size(0)") if group else ("0", "1")
        n = self.declare("long", total, "n")
        idxs = [self.declare("long", "0", "i") for _ in dims]
        steps = [self.declare("long", "0", "s") for _ in dims]
        with self.block(f"if ({start} < {n})"):  # no dimension is 0: the first digits divide by them
            for name, value in zip(idxs + steps, unravel(start, dims) + unravel(step, dims)):
                self.emit(f"{name} = {value};")
        with self.block(f"for (long {f} = {start}; {f} < {n}; {f} += {step})"):
            yield f, idxs
            for k in range(len(dims) - 1, 0, -1):
                self.emit(f"{idxs[k]} += {steps[k]};")
                with self.block(f"if ({idxs[k]} >= ({dims[k]}))"):
                    self.emit(f"{idxs[k]} -= ({dims[k]});")
                    self.emit(f"{idxs[k - 1]} += 1;")
            self.emit(f"{idxs[0]} += {steps[0]};")
        if group:
            self.barrier()

    # ---- statements (sequential, per thread) ----

    def body(self, body: S.Body, dests: tuple = None, group=False) -> list:
        """Compiles a body; returns its results (C expressions or views). `dests` gives, per result, the
        view an array result must end up in (it is written in place where possible)."""
        dests = dests or (None,) * len(body.result)
        by_name = {a.name: d for a, d in zip(body.result, dests) if d is not None and isinstance(a, S.Var)}
        written = set()
        outer = self.owner
        self.owner = Owner(body)
        for stm in body.stms:
            stm_dests = tuple(by_name.get(p.name) for p in stm.pat)
            allocated = len(self.allocated)
            if self.stm(stm, stm_dests, group):
                written |= {p.name for p, d in zip(stm.pat, stm_dests) if d is not None}
            self.owner.bound(stm, self.env, self.allocated[allocated:])
        self.owner = outer
        results = []
        for a, d in zip(body.result, dests):
            value = self.atom(a)
            if d is not None and not (isinstance(a, S.Var) and a.name in written):
                self.copy(value, d, group)
            results.append(value)
        return results

    def consumable(self, a) -> bool:
        """Whether a statement of the body being written may write into array `a`'s memory, or keep it: the
        body made it and this statement is its one reader (codegen.in_place.Owner)."""
        return isinstance(a, S.Var) and self.owner is not None and self.owner.consumable(a.name)

    def stm(self, stm: S.Stm, dests: tuple, group: bool) -> bool:
        """Compiles one statement by the rule of its expression's class (TABLE); returns whether it wrote its
        array results into `dests`."""
        return TABLE.rule(stm.exp)(self, stm.exp, stm.pat, dests, group, stm.loc)

    # The rules of TABLE: rule(writer, e, pat, dests, group, loc) -> whether it wrote e's array results into
    # `dests` (per result, the view it must end up in, or None). Rules that return False bind pat in env.

    def binop(self, e: S.BinOp, pat, dests, group, loc) -> bool:
        if self.checks and e.op in ("/", "%", "//", "%%") and e.x.type.is_int:
            self.check(f"{self.atom(e.y)} == 0", loc, "division by zero", [])
        if self.checks and e.op == "**" and e.x.type.is_int and e.y.type.name.startswith("i"):
            self.check(f"{self.atom(e.y)} < 0", loc, "Negative exponent in integer power.", [])
        self.bind_scalar(pat[0], binop(e.op, self.atom(e.x), self.atom(e.y), e.x.type.name, loc))
        if e.op in ("+", "-", "*", "/") and pat[0].type == I64:
            self.size_terms[pat[0].name] = (e.op, e.x, e.y)
        return False

    def unop(self, e: S.UnOp, pat, dests, group, loc) -> bool:
        x, t = self.atom(e.x), e.x.type.name
        if e.op == "neg":
            value = f"(({CTYPES[t]})(-({WRAPPING.get(t, CTYPES[t])}){x}))"
        elif e.op == "!":
            value = f"((uchar)!{x})"
        else:
            value = f"(({CTYPES[t]})~{x})"
        self.bind_scalar(pat[0], value)
        return False

    def primcall(self, e: S.PrimCall, pat, dests, group, loc) -> bool:
        self.bind_scalar(pat[0], primcall(e.fn, [self.atom(a) for a in e.args], [a.type.name for a in e.args],
                                          e.type.name, loc))
        return False

    def atom_exp(self, e: S.AtomExp, pat, dests, group, loc) -> bool:
        value = self.atom(e.x)
        if isinstance(value, View):  # a coercion `y :> [n]t`: check the sizes it claims
            new = tuple(self.dim_c(d) for d in pat[0].type.shape)
            if self.checks and new != value.dims:
                bad = " || ".join(f"({a}) != ({b})" for a, b in zip(new, value.dims))
                self.check(bad, loc, "Cannot coerce an array to a type with other sizes.", [])
            self.env[pat[0].name] = replace(value, dims=new)
        else:
            self.bind_scalar(pat[0], value)
        return False

    def assertion(self, e: S.Assert, pat, dests, group, loc) -> bool:
        if len(e.values) > 7:
            raise Unsupported("an assertion showing more than 7 values inside a kernel", loc)
        if self.checks:
            self.check(f"!({self.atom(e.cond)})", loc, e.message, [self.atom(a) for a in e.values])
        return False

    def rearrange(self, e: S.Rearrange, pat, dests, group, loc) -> bool:
        arr = self.env[e.arr.name]
        order = tuple(e.perm) + tuple(range(len(e.perm), len(arr.dims)))
        self.env[pat[0].name] = replace(arr, dims=tuple(arr.dims[i] for i in order),
                                        strides=tuple(arr.strides[i] for i in order))
        return False

    def index(self, e: S.Index, pat, dests, group, loc) -> bool:
        arr = self.env[e.arr.name]
        if any(isinstance(i, S.DimSlice) for i in e.idxs):
            self.env[pat[0].name] = self.selection(arr, e.idxs)
            return False
        idxs = [self.atom(i) for i in e.idxs]
        # checked, an index out of bounds is recorded and the read clamped to the first element so that it stays
        # inside the array; under #[unsafe] neither, as in Futhark (the clamps cost LocVolCalib's explicit steps
        # a tenth of their time)
        if self.checks and idxs and len(idxs) + len(arr.dims) <= 7 and not getattr(loc, "unsafe", False):
            bad = " || ".join(f"({i}) < 0 || ({i}) >= ({d})" for i, d in zip(idxs, arr.dims))
            shown = ", ".join("{%d}" % k for k in range(len(idxs)))
            shape = "".join("[{%d}]" % (len(idxs) + k) for k in range(len(arr.dims)))
            self.check(bad, loc, f"Index [{shown}] out of bounds for array of shape {shape}.", idxs + list(arr.dims))
            idxs = [self.declare("long", f"(({i}) < 0 || ({i}) >= ({d})) ? 0 : ({i})", "idx")
                    for i, d in zip(idxs, arr.dims)]
        if len(idxs) == len(arr.dims):
            self.env[pat[0].name] = self.declare(arr.ctype, arr.elem(idxs), pat[0].name)
        else:
            self.env[pat[0].name] = arr.slice(idxs)
        return False

    def loop(self, e: S.Loop, pat, dests, group, loc) -> bool:
        """A sequential loop. Array-valued state lives in scratch memory: each iteration writes the new
        values into a second buffer, so the body may read all of the old ones, and the two buffers change
        roles (pointers swapped, not the elements copied)."""
        if e.size_params:
            raise Unsupported("a loop whose arrays change size inside a kernel", loc)
        in_place = in_place_updates(e)
        self.in_place |= in_place
        state, spare = [], []
        for p, a, r in zip(e.params, e.init, e.body.result):
            if not isinstance(p.type, Array):
                state.append(self.declare(CTYPES[p.type.name], self.atom(a), p.name))
                spare.append(None)
                continue
            # a result that its updates write into the state needs no second buffer
            other = None if isinstance(r, S.Var) and r.name in in_place else self.scratch(p.type, loc)
            init = self.atom(a)
            if self.consumable(a) and type(init) is View and (other is None or self.same_layout(init, other)):
                buf = init  # the loop takes over an initial array that nothing else reads
            else:
                buf = self.scratch(p.type, loc)
                self.copy(init, buf, group)
            for views, view, base in ((state, buf, "state"), (spare, other, "spare")):
                if view is None:
                    views.append(None)
                    continue
                pointer = self.declare(self.pointer_type(view), view.mem, base)
                self.spaces[pointer] = self.spaces[view.mem]
                self.allocated.append(pointer)
                views.append(replace(view, mem=pointer))
        self.bind(e.params, state)
        if isinstance(e.form, S.ForLoop):
            i = e.form.i
            c = self.fresh(i.name)
            head = f"for ({CTYPES[i.type.name]} {c} = 0; {c} < {self.atom(e.form.bound)}; {c}++)"
            self.env[i.name] = c
        else:
            head = "while (1)"
        with self.block(head):
            if isinstance(e.form, S.WhileLoop):
                (cond,) = self.body(e.form.cond, None, group)
                self.emit(f"if (!{cond}) break;")
            results = self.body(e.body, tuple(spare), group)
            fresh = [None if isinstance(p.type, Array) else self.declare(CTYPES[p.type.name], r, "next")
                     for p, r in zip(e.params, results)]
            for p, v, r, fresh_value, tmp in zip(e.params, state, results, fresh, spare):
                if not isinstance(p.type, Array):
                    self.emit(f"{v} = {fresh_value};")
                elif tmp is not None:
                    self.emit(f"{{ {self.pointer_type(v)} swapped = {v.mem}; {v.mem} = {tmp.mem}; "
                              f"{tmp.mem} = swapped; }}")
                elif r.mem != v.mem:  # a reshape in the chain of updates made a copy
                    self.copy(r, v, group)
            if group and any(tmp is not None for tmp in spare):  # all have written before any reads
                self.barrier()
        self.bind(pat, state)
        return False

    def same_layout(self, a: View, b: View) -> bool:
        """Whether two intermediate arrays lie alike in memories of one address space (a loop's two buffers
        change roles)."""
        return (self.spaces.get(a.mem) == self.spaces.get(b.mem) and str(a.offset) == str(b.offset)
                and tuple(map(str, a.strides)) == tuple(map(str, b.strides)))

    def pointer_type(self, view) -> str:
        """The C type of a pointer to an intermediate array's memory, in its address space."""
        return f"{self.spaces[view.mem]} {view.ctype} *".lstrip()

    def if_(self, e: S.If, pat, dests, group, loc) -> bool:
        """Scalar results in variables; array results written by either branch into one destination."""
        arrays = [isinstance(p.type, Array) for p in pat]
        dests = tuple((d if d is not None else self.scratch(p.type, loc)) if a else None
                      for p, a, d in zip(pat, arrays, dests))
        names = [None if a else self.fresh(p.name) for p, a in zip(pat, arrays)]
        for n, p in zip(names, pat):
            if n:
                self.emit(f"{CTYPES[p.type.name]} {n};")

        def branch(body):
            def write():
                for n, r in zip(names, self.body(body, dests, group)):
                    if n:
                        self.emit(f"{n} = {r};")
            return write
        self.if_else(self.atom(e.cond), branch(e.then), branch(e.else_))
        self.bind(pat, (n if n else d for n, d in zip(names, dests)))
        return any(arrays)

    def seq_redomap(self, e: S.Redomap, pat, dests, group, loc) -> bool:
        self.bind(pat, self.fold_elements(e, e.red, loc))
        return False

    def fold_elements(self, e, op: S.Lambda, loc, each=None) -> list:
        """A redomap's or scanomap's loop over its elements, folding the map part's values into
        accumulators with op (each(accs, i) writes more after each element); returns the accumulators."""
        accs = [self.declare(CTYPES[a.type.name], self.atom(a), "acc") for a in e.neutral]
        i, loop = self.element_loop(e)
        with loop:
            self.bind_elems(e.map_lam.params, e.arrs, i)
            values = self.body(e.map_lam.body)
            for acc, r in zip(accs, self.apply_red(op, accs, values, loc)):
                self.emit(f"{acc} = {r};")
            if each:
                each(accs, i)
        return accs

    # The rules for statements whose array results are written into destinations: into_dests(write) makes
    # them rules, write(writer, e, pat, dests, group, loc) writing into the destinations it gets.

    def seq_map(self, e: S.Map, pat, dests, group, loc):
        i, loop = self.element_loop(e)
        with loop:
            self.bind_elems(e.lam.params, e.arrs, i)
            row_dests = tuple(d.slice([i]) if isinstance(t, Array) else None for d, t in zip(dests, e.lam.ret))
            results = self.body(e.lam.body, row_dests)
            self.write_results(results, e.lam.ret, dests, i)

    def seq_scanomap(self, e: S.Scanomap, pat, dests, group, loc):
        def write_prefixes(accs, i):
            outputs = accs
            if e.post is not None:  # the map that reads the prefixes, applied as they are made
                for p, acc in zip(e.post.params, accs):
                    self.env[p.name] = acc
                outputs = self.body(e.post.body)
            for value, d in zip(outputs, dests):
                self.emit(f"{d.elem([i])} = {value};")
        self.fold_elements(e, e.scan, loc, write_prefixes)

    def seq_hist(self, e: S.Hist, pat, dests, group, loc):
        """reduce_by_index inside a kernel: the bins start as a copy of the destination, then one thread (at
        the intra-group level, the workgroup's first) combines the values into them in order."""
        bins = dests[0]
        self.copy(self.env[e.dest.name], bins, group)
        idxs, vals = self.env[e.idxs.name], self.env[e.vals.name]
        with ExitStack() as first_thread:
            if group:
                first_thread.enter_context(self.block("if (get_local_id(0) == 0)"))
            i = self.fresh("i")
            with self.block(f"for (long {i} = 0; {i} < {self.atom(e.width)}; {i}++)"):
                index = self.declare("long", idxs.elem([i]), "index")
                with self.block(f"if ({index} >= 0 && {index} < (long)({bins.dims[0]}))"):
                    current = self.declare(bins.ctype, bins.elem([index]), "current")
                    value = self.declare(vals.ctype, vals.elem([i]), "value")
                    (combined,) = self.apply_red(e.lam, [current], [value], loc)
                    self.emit(f"{bins.elem([index])} = {combined};")
        if group:
            self.barrier()

    def block_scan(self, e: T.SegScan, pat, dests, group, loc):
        """The workgroup scans the elements of the innermost binding of e's context in blocks of its size,
        carrying the running total (from the neutral element) from block to block: order preserved, so any
        associative operator works. `dests` are the views of the segment's results."""
        ctypes = neutral_ctypes(e)
        lid = self.declare("long", "get_local_id(0)", "lid")
        lsize = self.declare("long", "get_local_size(0)", "lsize")
        width = self.atom(e.ctx[-1].width)
        carry = [self.declare(c, self.atom(a), "carry") for c, a in zip(ctypes, e.neutral)]
        block = self.fresh("block")
        with self.block(f"for (long {block} = 0; {block} < {width}; {block} += {lsize})"):
            k = self.declare("long", f"{block} + {lid}", "k")
            xs = [self.declare(c, self.atom(a), "x") for c, a in zip(ctypes, e.neutral)]
            with self.block(f"if ({k} < {width})"):
                inner = e.ctx[-1]
                self.bind_elems(inner.params, inner.arrs, k)
                with self.per_thread():
                    values = self.body(e.body)
                for x, v in zip(xs, values):
                    self.emit(f"{x} = {v};")
            bufs, _, base = Lifted(self, e, segmented=False).group_scan(xs, None, lid, lsize)
            mine = [self.declare(c, f"{b}[{base} + {lid}]", "mine") for c, b in zip(ctypes, bufs)]
            total = [self.declare(c, f"{b}[{base} + {lsize} - 1]", "total") for c, b in zip(ctypes, bufs)]
            out = self.apply_red(e.scan, carry, mine, None)
            with self.block(f"if ({k} < {width})"):
                for d, r in zip(dests, out):
                    self.emit(f"{d.elem([k])} = {r};")
            for c, r in zip(carry, self.apply_red(e.scan, carry, total, None)):
                self.emit(f"{c} = {r};")
            self.barrier()

    # ---- bindings, destinations and copies ----

    def bind(self, pat, values):
        for p, v in zip(pat, values):
            self.env[p.name] = v

    def bind_scalar(self, p: S.Var, value: str):
        self.env[p.name] = self.declare(CTYPES[p.type.name], value, p.name)

    @contextlib.contextmanager
    def per_thread(self):
        """Inside the element bodies of workgroup-level operations, intermediate arrays are per thread."""
        shared, self.shared = self.shared, False
        try:
            yield
        finally:
            self.shared = shared

    def fill_dests(self, pat, dests, loc) -> tuple:
        """Destinations for array results: those given, and scratch memory for intermediate arrays."""
        return tuple(d if d is not None else self.scratch(p.type, loc) for p, d in zip(pat, dests))

    def bind_elems(self, params, arrs, index: str):
        """Binds lambda parameters to the elements (or rows) of arrays at an index."""
        for p, a in zip(params, arrs):
            arr = self.env[a.name]
            if isinstance(p.type, Array):
                self.env[p.name] = arr.slice([index])
            else:
                self.env[p.name] = self.declare(arr.ctype, arr.elem([index]), p.name)

    def write_results(self, results, lam_ret, dests, index: str):
        for r, t, d in zip(results, lam_ret, dests):
            if not isinstance(t, Array):
                self.emit(f"{d.elem([index])} = {r};")

    def apply_red(self, red: S.Lambda, accs: list, values: list, loc) -> list:
        """Inlines the reduction operator; returns C expressions of its results."""
        if any(isinstance(p.type, Array) for p in red.params):
            raise Unsupported(ARRAY_OPERATOR, loc)
        n = len(accs)
        for p, v in zip(red.params, accs + values):
            self.env[p.name] = v
        return self.body(red.body)[:n]

    def put(self, value, dst: View, group: bool):
        """Stores a scalar or copies an array value into a destination view."""
        if isinstance(value, View):
            self.copy(value, dst, group)
        elif group:
            self.emit(f"if (get_local_id(0) == 0) {dst.elem([])} = {value};")
        else:
            self.emit(f"{dst.elem([])} = {value};")

    def copy(self, src, dst: View, group: bool):
        """Copies an array value (a view) into a destination view, element by element."""
        if not isinstance(src, View):
            self.emit(f"{dst.elem([])} = {src};")
            return
        if group and len(src.dims) > 1:
            # the workgroup's threads take consecutive elements of the innermost dimension: the accesses of a
            # warp are coalesced (global memory) and hit distinct banks (local memory), where a thread per
            # row made a warp's accesses a row apart
            with self.flat_loop(src.dims, group) as (_, idxs):
                self.emit(f"{dst.elem(idxs)} = {src.elem(idxs)};")
            return
        idxs = []
        with ExitStack() as loops:
            for depth, d in enumerate(src.dims):
                i = self.fresh("c")
                start, step = ("get_local_id(0)", "get_local_size(0)") if group and depth == 0 else ("0", "1")
                loops.enter_context(self.block(f"for (long {i} = {start}; {i} < {d}; {i} += {step})"))
                idxs.append(i)
            self.emit(f"{dst.elem(idxs)} = {src.elem(idxs)};")
        if group:
            self.barrier()

    # ---- context binding ----

    def bind_ctx(self, ctx: tuple, flat: str, ctype: str = INDEX):
        """Decomposes a flat index over the context's widths and binds each level's parameters. Level 1
        indexes in idx_t (the host checks its iteration space); level 0 passes long."""
        widths = [self.atom(b.width) for b in ctx]
        idxs = []
        rest = flat
        for k in range(len(ctx)):
            inner = " * ".join(f"({w})" for w in widths[k + 1:])
            if not inner:
                idxs.append(self.declare(ctype, rest, "gtid"))
                break
            # a long index divides in 32 bits where it can (idx_div); the remainder is a multiplication
            quotient = f"idx_div({rest}, {inner})" if ctype == "long" else f"({rest}) / ({inner})"
            idxs.append(self.declare(ctype, quotient, "gtid"))
            rest = self.declare(ctype, f"({rest}) - {idxs[-1]} * ({inner})", "rem")
        for b, i in zip(ctx, idxs):
            self.bind_elems(b.params, b.arrs, i)
        return idxs

    # ---- level 0: inside a workgroup ----

    def segmap0(self, e: T.SegMap, pat, dests, group, loc):
        total = " * ".join(f"({self.atom(b.width)})" for b in e.ctx)
        i = self.fresh("ltid")
        with self.block(f"for (long {i} = get_local_id(0); {i} < {total}; {i} += get_local_size(0))"):
            self.bind_ctx(e.ctx, i, "long")
            n_ctx = len(e.ctx)
            rows = [self.context_row(d, i, n_ctx) for d in dests]
            with self.per_thread():
                results = self.body(e.body, tuple(r if r.dims else None for r in rows))
            for r, row in zip(results, rows):
                if not row.dims:
                    self.emit(f"{row.mem}[{row.offset}] = {r};")
        self.barrier()

    def context_row(self, d: View, i: str, n_ctx: int) -> View:
        """The row of destination d at the flat index i of a segmap0's context: an output is row-major over the
        context, so is an intermediate array but one whose rows are padded (kernel_base.padded_rows), where
        the index is unravelled."""
        if n_ctx > 1 and d.mem in self.spaces and tuple(map(str, d.strides)) != row_major(d.dims):
            return d.slice(unravel(i, d.dims[:n_ctx]))
        return View(d.mem, d.ctype, f"({d.offset} + ({i}) * ({d.strides[n_ctx - 1]}))", d.dims[n_ctx:],
                    d.strides[n_ctx:])

    def accumulate(self, e, lo: str, hi: str, accs: list, per_thread: bool = False, ctype: str = INDEX,
                   interleave: tuple = None):
        """Each thread folds its share of [lo, hi) into its accumulators, in order: all of it when
        per_thread; strided across the workgroup when the operator is commutative (coalesced); a
        contiguous chunk otherwise. The first two load UNROLL elements before folding them in, so that
        their loads are in flight together. Strided across the workgroup, the loop is also written for
        inputs whose elements are adjacent (the usual case). Indices are of type ctype (long at level 0).
        interleave=(part, parts): a commutative operator's workgroups take turns, a round of UNROLL
        adjacent workgroup-sized tiles each, so that the grid reads one window of memory at a time."""
        if any(isinstance(a.type, Array) for a in e.neutral):
            raise Unsupported(ARRAY_OPERATOR)
        if per_thread or not e.commutative:
            return self.fold_loop(e, lo, hi, accs, per_thread, ctype)
        self.unit_stride_variant([a.name for a in e.ctx[-1].arrs],
                                 lambda: self.fold_loop(e, lo, hi, accs, False, ctype, interleave))

    def unit_stride_variant(self, names, emit):
        """Calls emit() twice: under `if` the arrays' first strides are all 1 (at run time), with the
        views so bound (index arithmetic without strides costs a memory-bound loop less), and under
        `else` as they are. Once, where the strides are known to be 1."""
        views = {name: self.env[name] for name in names}
        adjacent = " && ".join(sorted({f"({v.strides[0]}) == 1" for v in views.values() if v.strides[0] != "1"}))
        if not adjacent:
            return emit()

        def unit_strides():
            for name, v in views.items():
                self.env[name] = replace(v, strides=("1",) + tuple(v.strides[1:]))
            emit()
            self.env.update(views)
        self.if_else(adjacent, unit_strides, emit)

    def fold_loop(self, e, lo: str, hi: str, accs: list, per_thread: bool, ctype: str, interleave: tuple = None):
        k = self.fresh("k")
        lid, lsize = f"({ctype})get_local_id(0)", f"({ctype})get_local_size(0)"
        if per_thread or e.commutative:
            # UNROLL elements `apart` from each other a round, then the next round `advance` further
            part, parts = interleave or ("0", "1")
            start, apart, advance = ((lo, "1", f"{self.UNROLL}") if per_thread else
                                     (f"{lo} + {part} * {self.UNROLL} * {lsize} + {lid}", lsize,
                                      f"{parts} * {self.UNROLL} * {lsize}"))
            self.emit(f"{ctype} {k} = {start};")
            with self.block(f"for (; {k} + {self.UNROLL - 1} * {apart} < {hi}; {k} += {advance})"):
                self.unrolled = True
                values = [self.element(e, f"{k} + {j} * {apart}", ctype) for j in range(self.UNROLL)]
                self.unrolled = False
                for vs in values:
                    self.fold(e, accs, vs)
            head = f"for (; {k} < {hi}; {k} += {apart})"  # the last round's elements before hi
        else:
            chunk = self.declare(ctype, f"(({hi}) - ({lo}) + {lsize} - 1) / {lsize}", "chunk")
            begin = self.declare(ctype, f"({lo}) + {lid} * {chunk}", "begin")
            head = f"for ({ctype} {k} = {begin}; {k} < min(({ctype})({hi}), {begin} + {chunk}); {k}++)"
        with self.block(head):
            self.fold(e, accs, self.element(e, k, ctype))

    def element(self, e, index: str, ctype: str) -> list:
        """The values that the map part of a segred computes for one element."""
        i = self.declare(ctype, index, "i")
        inner = e.ctx[-1]
        self.bind_elems(inner.params, inner.arrs, i)
        with self.per_thread():
            values = self.body(e.body)
        return [self.declare(CTYPES[a.type.name], v, "v") for a, v in zip(e.neutral, values)]

    def fold(self, e, accs: list, values: list):
        for acc, r in zip(accs, self.apply_red(e.red, accs, values, None)):
            self.emit(f"{acc} = {r};")

    def group_reduce(self, red: S.Lambda, commutative: bool, accs: list, ctypes: list) -> list:
        """Combines the threads' accumulators through local memory; every thread gets the result."""
        bufs = [self.local_param(c) for c in ctypes]
        lid = self.declare(INDEX, "get_local_id(0)", "lid")
        lsize = self.declare(INDEX, "get_local_size(0)", "lsize")
        for b, acc in zip(bufs, accs):
            self.emit(f"{b}[{lid}] = {acc};")
        self.barrier("CLK_LOCAL_MEM_FENCE")
        s = self.fresh("s")
        if commutative:
            self.emit(f"{INDEX} {s}_top = 1; while ({s}_top < {lsize}) {s}_top <<= 1;")
            head = f"for ({INDEX} {s} = {s}_top / 2; {s} > 0; {s} >>= 1)"
            cond, other = f"{lid} < {s} && {lid} + {s} < {lsize}", f"{lid} + {s}"
        else:
            head = f"for ({INDEX} {s} = 1; {s} < {lsize}; {s} <<= 1)"
            cond, other = f"{lid} % (2 * {s}) == 0 && {lid} + {s} < {lsize}", f"{lid} + {s}"
        with self.block(head):
            with self.block(f"if ({cond})"):
                xs = [self.declare(c, f"{b}[{lid}]", "x") for c, b in zip(ctypes, bufs)]
                ys = [self.declare(c, f"{b}[{other}]", "y") for c, b in zip(ctypes, bufs)]
                for b, r in zip(bufs, self.apply_red(red, xs, ys, None)):
                    self.emit(f"{b}[{lid}] = {r};")
            self.barrier("CLK_LOCAL_MEM_FENCE")
        results = [self.declare(c, f"{b}[0]", "red") for c, b in zip(ctypes, bufs)]
        self.barrier("CLK_LOCAL_MEM_FENCE")
        return results

    def segred0(self, e: T.SegRed, pat, dests, group, loc) -> bool:
        if len(e.ctx) != 1:
            raise Unsupported("a segmented reduction at workgroup level")
        accs = [self.declare(CTYPES[a.type.name], self.atom(a), "acc") for a in e.neutral]
        self.accumulate(e, "0", self.atom(e.ctx[0].width), accs, ctype="long")
        self.bind(pat, self.group_reduce(e.red, e.commutative, accs, neutral_ctypes(e)))
        return False


def iota_or_view(w: KernelWriter, e: S.Iota, pat, dests, group, loc) -> bool:
    """An iota that no destination awaits is a view of no memory: its elements are computed where they are read."""
    if dests[0] is None:
        w.env[pat[0].name] = iota_view(w.dim_c(pat[0].type.shape[0]), CTYPES[e.elem.name])
        return False
    return filling(KernelWriter.fill_iota)(w, e, pat, dests, group, loc)


def reshape_or_view(w: KernelWriter, e: S.Reshape, pat, dests, group, loc) -> bool:
    """A reshape of an array laid out row-major that no destination awaits is a view of the same memory (an
    intermediate array's, which no statement writes into but an update in place: codegen.in_place)."""
    view = reshaped(w.env[e.arr.name], tuple(w.dim_c(d) for d in pat[0].type.shape)) if dests[0] is None else None
    if view is None:
        return filling(KernelWriter.fill_reshape)(w, e, pat, dests, group, loc)
    w.env[pat[0].name] = view
    return False


def unsupported(w: KernelWriter, e, pat, dests, group, loc):
    """A construct that has no code inside a kernel yet: the versions that hold one are pruned (codegen.host's
    supports, for codegen.lower.prune)."""
    raise Unsupported(f"{source_name(e)} inside a kernel", loc)


def level0(rule):
    """The rule of a segop inside a kernel: a level-0 one, which the workgroup runs together."""
    def at_level0(w: KernelWriter, e, pat, dests, group, loc) -> bool:
        return rule(w, e, pat, dests, group, loc) if e.level == 0 else unsupported(w, e, pat, dests, group, loc)
    return at_level0


# The classes of the source IR that the target IR holds none of: code generation has no rules for them.
SOURCE_ONLY = {
    S.Apply: "the target IR holds no call: inline_calls inlined them all (ir.verify checks)",
    S.Reduce: "the target IR holds no reduce: normalisation made each a redomap (ir.verify checks)",
    S.Scan: "the target IR holds no scan: normalisation made each a scanomap (ir.verify checks)",
}

# The rule of each expression class inside a kernel: rule(writer, e, pat, dests, group, loc) -> whether it wrote
# e's array results into dests (KernelWriter.stm).
TABLE = nodes.Table(f"{__name__}.TABLE", "target", {
    S.AtomExp: KernelWriter.atom_exp, S.BinOp: KernelWriter.binop, S.UnOp: KernelWriter.unop,
    S.PrimCall: KernelWriter.primcall, S.Index: KernelWriter.index, S.Assert: KernelWriter.assertion,
    S.Rearrange: KernelWriter.rearrange, S.If: KernelWriter.if_, S.Loop: KernelWriter.loop,
    S.Redomap: KernelWriter.seq_redomap, S.Map: into_dests(KernelWriter.seq_map),
    S.Scanomap: into_dests(KernelWriter.seq_scanomap), S.Hist: into_dests(KernelWriter.seq_hist),
    S.Iota: iota_or_view, S.Replicate: filling(KernelWriter.fill_replicate),
    S.Rotate: filling(KernelWriter.fill_rotate), S.Reshape: reshape_or_view,
    S.ArrayLit: filling(KernelWriter.fill_array_lit), S.Concat: filling(KernelWriter.fill_concat),
    S.Update: KernelWriter.update,
    T.SegMap: level0(into_dests(KernelWriter.segmap0)), T.SegRed: level0(KernelWriter.segred0),
    T.SegScan: level0(into_dests(KernelWriter.block_scan)),
    S.Scatter: KernelWriter.scatter, S.TuningParam: unsupported, S.Filter: unsupported,
}, absent={
    **SOURCE_ONLY,
    T.Guard: "guards stand at the host level only: flattening puts none in a segop's body (ir.verify checks)",
})
