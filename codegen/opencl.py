"""OpenCL C for the statements inside kernels: `KernelWriter` writes one kernel's parameters and body.

Level-1 segops become whole kernels (codegen.segops, codegen.tiling); the statements of their bodies, and the
level-0 segops inside an intra-group version (with local memory and barriers), are written here. Arrays
inside kernels are views (codegen.kernel.View), so rearranges and row slices cost nothing.
"""

import contextlib
from contextlib import ExitStack
from dataclasses import replace

from incflat.codegen.cscalar import CTYPES, WRAPPING, binop, c_const, dim_expr, neutral_ctypes, primcall
from incflat.codegen.kernel import (INDEX, ArrayParam, CExpr, ErrorBuffer, IndexParam, Kernel, LocalParam,
                                    ScalarParam, ScratchParam, View, iota_view)
from incflat.codegen.lifted import Lifted
from incflat.ir.runtime.prims import CTYPE_SIZES, PRIMS
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.errors import Unsupported
from incflat.ir.traverse import nested
from incflat.ir.types import Array, Scalar


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


def unravel(flat: str, dims: tuple) -> list:
    """The indices of the element at a row-major flat index in an array of these dimensions."""
    return [f"(({flat}) / ({' * '.join(f'({d})' for d in dims[k + 1:]) or '1'})) % ({dims[k]})"
            for k in range(len(dims))]


def source_name(e) -> str:
    return SOURCE_NAMES.get(type(e).__name__, type(e).__name__)


class KernelWriter:
    """Writes the code of one kernel: declarations of its inputs, then its body."""

    def __init__(self, name: str, errors):
        self.k = Kernel(name)
        self.out = self.k.body
        self.counter = 0
        self.env = {}  # variable name -> C expression (scalars) or View (arrays)
        self.errors = errors  # the program's run-time error table: (where, message template)
        self.inputs = set()  # names of the kernel's scalar inputs: host values too
        self.shared = False  # whether intermediate arrays belong to the workgroup (the intra-group level)
        self.checks = errors.checks  # bounds, division and coercion checks
        self.unrolled = False  # inside a round of elements unrolled by hand (fold_loop)
        self.k.params.append(ErrorBuffer())

    def check(self, condition: str, loc, template: str, values: list):
        """Records error `template` (with {0}, {1}... filled from values) when condition holds; the
        kernel goes on, so barriers are still reached, and the host reports the first error."""
        self.errors.append((str(loc) if loc else "", template))
        padded = (values + ["0"] * 7)[:7]
        self.emit(f"if ({condition}) record_error(error, {len(self.errors)}, {', '.join(f'(long)({v})' for v in padded)});")

    # ---- output ----

    def emit(self, line: str):
        self.out.line(line)

    def block(self, head: str):
        return self.out.block(head)

    def if_else(self, condition: str, then, otherwise):
        self.out.if_else(condition, then, otherwise)

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base.replace('.', '_')}_c{self.counter}"

    def element_loop(self, e):
        """The loop of a sequential SOAC over its elements. An innermost one is unrolled UNROLL times, so
        that the loads of several elements are in flight at once: a thread's sequential loop is otherwise
        bound by the latency of each element's load (8 was the best of 2, 4 and 8 on an H100, LocVolCalib).
        Not inside fold_loop's round of UNROLL elements, which has as many loads in flight already, nor
        where the width is a constant: the OpenCL compiler unrolls such a loop as it sees fit (NW's block
        kernel, its rows of 16 unrolled by 8, gained nothing: 1.03x)."""
        i = self.fresh("i")
        unroll = not self.unrolled and not isinstance(e.width, S.Const)
        if unroll and all(innermost(inner.body) for inner in nested(e)):
            self.emit(f"#pragma unroll {self.UNROLL}")
        return i, self.block(f"for (long {i} = 0; {i} < {self.atom(e.width)}; {i}++)")

    def declare(self, ctype: str, value: str, base="t") -> str:
        name = self.fresh(base)
        self.emit(f"{ctype} {name} = {value};")
        return name

    # ---- kernel parameters ----

    def input_var(self, v: S.Var):
        """Makes a free variable of the segop a kernel parameter."""
        if v.name in self.env:
            return
        if isinstance(v.type, Array):
            for d in v.type.shape:
                if isinstance(d, str):
                    self.input_var(S.Var(d, Scalar("i64")))
            self.env[v.name] = self.array_param(v.name, v.type)
        elif isinstance(v.type, Scalar):
            self.k.params.append(ScalarParam(v.name, v.type.name, CTYPES[v.type.name]))
            self.env[v.name] = v.name
            self.inputs.add(v.name)
        else:
            raise Unsupported(f"a tuple-typed variable {v.name} in a kernel")

    def iota_input(self, v: S.Var):
        """A free variable that the host made by `iota n` (host_iotas): a view of no memory, element i is i,
        so that a context bound from it (`map (\\i -> ...) (iota n)`) loads no index."""
        for d in v.type.shape:
            if isinstance(d, str):
                self.input_var(S.Var(d, Scalar("i64")))
        self.env[v.name] = iota_view(dim_expr(v.type.shape[0]), CTYPES[v.type.elem.name])

    def convert_index(self, name: str) -> str:
        """An index parameter, passed as a long, used as an idx_t."""
        self.k.preamble.append(f"const {INDEX} {name} = ({INDEX}){name}_arg;")
        return name

    def index_param(self, name: str, source: str = None) -> str:
        """A number of the kernel's index arithmetic that the host variable `source` (default: `name`) holds."""
        self.k.params.append(IndexParam(name, source or name))
        return self.convert_index(name)

    def array_param(self, base: str, t: Array, role: str = "input", index: int = 0, flat: bool = False) -> View:
        """An array parameter (see codegen.kernel.ArrayParam) and its view."""
        ctype = CTYPES[t.elem.name]
        self.k.params.append(ArrayParam(base, ctype, t.rank, role, index, flat))
        off = CExpr(self.convert_index(f"{base}_off"), f"{base}.offset" if role == "input" else None)
        strides = tuple(CExpr(self.convert_index(f"{base}_s{i}"), f"{base}.strides[{i}]" if role == "input" else None)
                        for i in range(t.rank))
        return View(f"{base}_mem", ctype, off, tuple(dim_expr(d) for d in t.shape), strides)

    def output_param(self, i: int, t) -> View:
        """The i'th output of the segop: a fresh contiguous array allocated by the host."""
        return self.array_param(f"out{i}", t, "output", i)

    def local_param(self, ctype: str, per_thread: int = 1) -> str:
        """Local memory of per_thread elements for each thread of the workgroup."""
        name = self.fresh("local")
        self.k.params.append(LocalParam(name, ctype, CTYPE_SIZES[ctype], per_thread))
        return name

    # ---- atoms and scalar expressions ----

    def atom(self, a):
        if isinstance(a, S.Const):
            return c_const(a)
        return self.env[a.name]

    def scalar_exp(self, e, loc) -> str:
        if isinstance(e, S.BinOp):
            if self.checks and e.op in ("/", "%", "//", "%%") and e.x.type.is_int:
                self.check(f"{self.atom(e.y)} == 0", loc, "division by zero", [])
            if self.checks and e.op == "**" and e.x.type.is_int and e.y.type.name.startswith("i"):
                self.check(f"{self.atom(e.y)} < 0", loc, "Negative exponent in integer power.", [])
            return binop(e.op, self.atom(e.x), self.atom(e.y), e.x.type.name, loc)
        if isinstance(e, S.UnOp):
            x, t = self.atom(e.x), e.x.type.name
            if e.op == "neg":
                return f"(({CTYPES[t]})(-({WRAPPING.get(t, CTYPES[t])}){x}))"
            if e.op == "!":
                return f"((uchar)!{x})"
            return f"(({CTYPES[t]})~{x})"
        if isinstance(e, S.PrimCall):
            return primcall(e.fn, [self.atom(a) for a in e.args], [a.type.name for a in e.args], e.type.name, loc)
        raise TypeError(e)

    # ---- statements (sequential, per thread) ----

    def body(self, body: S.Body, dests: tuple = None, group=False) -> list:
        """Compiles a body; returns its results (C expressions or views). `dests` gives, per result, the
        view an array result must end up in (it is written in place where possible)."""
        dests = dests or (None,) * len(body.result)
        by_name = {a.name: d for a, d in zip(body.result, dests) if d is not None and isinstance(a, S.Var)}
        written = set()
        for stm in body.stms:
            stm_dests = tuple(by_name.get(p.name) for p in stm.pat)
            if self.stm(stm, stm_dests, group):
                written |= {p.name for p, d in zip(stm.pat, stm_dests) if d is not None}
        results = []
        for a, d in zip(body.result, dests):
            value = self.atom(a)
            if d is not None and not (isinstance(a, S.Var) and a.name in written):
                self.copy(value, d, group)
            results.append(value)
        return results

    def stm(self, stm: S.Stm, dests: tuple, group: bool) -> bool:
        """Compiles one statement; returns whether it wrote its array results into `dests`."""
        e, pat = stm.exp, stm.pat
        if isinstance(e, (S.BinOp, S.UnOp, S.PrimCall)):
            self.env[pat[0].name] = self.declare(CTYPES[pat[0].type.name], self.scalar_exp(e, stm.loc), pat[0].name)
        elif isinstance(e, S.AtomExp):
            value = self.atom(e.x)
            if isinstance(value, View):  # a coercion `y :> [n]t`: check the sizes it claims
                new = tuple(dim_expr(d) for d in pat[0].type.shape)
                if self.checks and new != value.dims:
                    bad = " || ".join(f"({a}) != ({b})" for a, b in zip(new, value.dims))
                    self.check(bad, stm.loc, "Cannot coerce an array to a type with other sizes.", [])
                self.env[pat[0].name] = replace(value, dims=new)
            else:
                self.env[pat[0].name] = self.declare(CTYPES[pat[0].type.name], value, pat[0].name)
        elif isinstance(e, S.Index):
            self.index(e, pat[0], stm.loc)
        elif isinstance(e, S.Assert):
            if len(e.values) > 7:
                raise Unsupported("an assertion showing more than 7 values inside a kernel", stm.loc)
            if self.checks:
                self.check(f"!({self.atom(e.cond)})", stm.loc, e.message, [self.atom(a) for a in e.values])
        elif isinstance(e, S.Rearrange):
            arr = self.env[e.arr.name]
            order = tuple(e.perm) + tuple(range(len(e.perm), len(arr.dims)))
            self.env[pat[0].name] = replace(arr, dims=tuple(arr.dims[i] for i in order),
                                            strides=tuple(arr.strides[i] for i in order))
        elif isinstance(e, S.If):
            return self.if_(e, pat, dests, group, stm.loc)
        elif isinstance(e, S.Loop):
            self.loop(e, pat, stm.loc, group)
        elif isinstance(e, S.Map):
            dests = self.fill_dests(pat, dests, stm.loc)
            self.seq_map(e, pat, dests, stm.loc)
            self.bind_dests(pat, dests)
            return True
        elif isinstance(e, S.Iota) and dests[0] is None:  # nothing to store: computed where it is read
            self.env[pat[0].name] = iota_view(dim_expr(pat[0].type.shape[0]), CTYPES[e.elem.name])
        elif isinstance(e, (S.Iota, S.Replicate, S.ArrayLit, S.Rotate, S.Concat, S.Update, S.Reshape)):
            dests = self.fill_dests(pat, dests, stm.loc)
            self.fill(e, dests[0], group, stm.loc)
            self.bind_dests(pat, dests)
            return True
        elif isinstance(e, S.Hist):
            dests = self.fill_dests(pat, dests, stm.loc)
            self.seq_hist(e, dests[0], group, stm.loc)
            self.bind_dests(pat, dests)
            return True
        elif isinstance(e, S.Redomap):
            for p, v in zip(pat, self.seq_redomap(e, stm.loc)):
                self.env[p.name] = v
        elif isinstance(e, T.SegMap) and e.level == 0:
            dests = self.fill_dests(pat, dests, stm.loc)
            self.segmap0(e, pat, dests, stm.loc)
            self.bind_dests(pat, dests)
            return True
        elif isinstance(e, T.SegRed) and e.level == 0:
            for p, v in zip(pat, self.segred0(e)):
                self.env[p.name] = v
        elif isinstance(e, S.Scanomap):
            dests = self.fill_dests(pat, dests, stm.loc)
            self.seq_scanomap(e, dests, stm.loc)
            self.bind_dests(pat, dests)
            return True
        elif isinstance(e, T.SegScan) and e.level == 0:
            dests = self.fill_dests(pat, dests, stm.loc)
            self.block_scan(e, dests)
            self.bind_dests(pat, dests)
            return True
        else:
            raise Unsupported(f"{source_name(e)} inside a kernel", stm.loc)
        return False

    def index(self, e: S.Index, p: S.Var, loc=None):
        arr = self.env[e.arr.name]
        if not any(isinstance(i, S.DimSlice) for i in e.idxs):
            idxs = [self.atom(i) for i in e.idxs]
            if self.checks and idxs and len(idxs) + len(arr.dims) <= 7:
                bad = " || ".join(f"({i}) < 0 || ({i}) >= ({d})" for i, d in zip(idxs, arr.dims))
                shown = ", ".join("{%d}" % k for k in range(len(idxs)))
                shape = "".join("[{%d}]" % (len(idxs) + k) for k in range(len(arr.dims)))
                self.check(bad, loc, f"Index [{shown}] out of bounds for array of shape {shape}.",
                           idxs + list(arr.dims))
                idxs = [self.declare("long", f"(({i}) < 0 || ({i}) >= ({d})) ? 0 : ({i})", "idx")
                        for i, d in zip(idxs, arr.dims)]
            if len(idxs) == len(arr.dims):
                self.env[p.name] = self.declare(arr.ctype, arr.elem(idxs), p.name)
            else:
                self.env[p.name] = arr.slice(idxs)
            return
        self.env[p.name] = self.selection(arr, e.idxs)

    def selection(self, arr: View, idxs) -> View:
        """The view of the part of arr that indices (atoms and DimSlices) select."""
        offset, dims, strides = arr.offset, [], []
        for i, d, s in zip(idxs, arr.dims, arr.strides):
            if isinstance(i, S.DimSlice):
                offset = f"({offset} + ({self.atom(i.start)}) * ({s}))"
                dims.append(self.atom(i.size))
                # a constant slice stride keeps the stride known on the host
                host = str(int(i.stride.value)) if isinstance(i.stride, S.Const) else None
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

    def loop(self, e: S.Loop, pat, loc, group=False):
        """A sequential loop. Array-valued state lives in scratch memory: each iteration writes the new
        values into a second buffer and copies them back, so the body may read all of the old ones."""
        if e.size_params:
            raise Unsupported("a loop whose arrays change size inside a kernel", loc)
        state, spare = [], []
        for p, a in zip(e.params, e.init):
            if isinstance(p.type, Array):
                buf = self.scratch(p.type, loc)
                self.copy(self.atom(a), buf, group)
                state.append(buf)
                spare.append(self.scratch(p.type, loc))
            else:
                state.append(self.declare(CTYPES[p.type.name], self.atom(a), p.name))
                spare.append(None)
        for p, v in zip(e.params, state):
            self.env[p.name] = v
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
            for v, r, tmp in zip(state, fresh, spare):
                if tmp is None:
                    self.emit(f"{v} = {r};")
                else:
                    self.copy(tmp, v, group)
        for p, v in zip(pat, state):
            self.env[p.name] = v

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
        for n, p, d in zip(names, pat, dests):
            self.env[p.name] = n if n else d
        return any(arrays)

    def bind_dests(self, pat, dests):
        for p, d in zip(pat, dests):
            self.env[p.name] = d

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

    def scratch(self, t: Array, loc) -> View:
        """Memory for an intermediate array: one per workgroup at the intra-group level, in local memory
        (row-major: the group's threads share it), else one per thread in global memory, interleaved:
        element f of thread t lies at f * global_size + t, so that neighbouring threads walking their arrays
        in step touch neighbouring addresses (coalesced), as Futhark lays out its thread-private arrays. Its
        size must be known on the host."""
        if any(isinstance(d, str) and d not in self.inputs for d in t.shape):
            raise Unsupported("an intermediate array inside a kernel whose size is computed in the kernel", loc)
        prim = PRIMS[t.elem.name]
        mem = self.fresh("scratch")
        self.k.params.append(ScratchParam(mem, prim.ctype, prim.numpy_spelling, tuple(t.shape), self.shared))
        dims = tuple(dim_expr(d) for d in t.shape)
        strides = [" * ".join(f"({d})" for d in dims[k + 1:]) or "1" for k in range(len(dims))]
        if self.shared:  # in the workgroup's local memory
            return View(mem, prim.ctype, "0", dims, tuple(strides))
        threads = f"(({INDEX})get_global_size(0))"
        return View(mem, prim.ctype, f"(({INDEX})get_global_id(0))", dims,
                    tuple(f"({s}) * {threads}" for s in strides))

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

    def seq_map(self, e: S.Map, pat, dests, loc):
        i, loop = self.element_loop(e)
        with loop:
            self.bind_elems(e.lam.params, e.arrs, i)
            row_dests = tuple(d.slice([i]) if isinstance(t, Array) else None for d, t in zip(dests, e.lam.ret))
            results = self.body(e.lam.body, row_dests)
            self.write_results(results, e.lam.ret, dests, i)

    def apply_red(self, red: S.Lambda, accs: list, values: list, loc) -> list:
        """Inlines the reduction operator; returns C expressions of its results."""
        if any(isinstance(p.type, Array) for p in red.params):
            raise Unsupported(ARRAY_OPERATOR, loc)
        n = len(accs)
        for p, v in zip(red.params, accs + values):
            self.env[p.name] = v
        return self.body(red.body)[:n]

    def seq_redomap(self, e: S.Redomap, loc) -> list:
        accs = [self.declare(CTYPES[a.type.name], self.atom(a), "acc") for a in e.neutral]
        i, loop = self.element_loop(e)
        with loop:
            self.bind_elems(e.map_lam.params, e.arrs, i)
            values = self.body(e.map_lam.body)
            for acc, r in zip(accs, self.apply_red(e.red, accs, values, loc)):
                self.emit(f"{acc} = {r};")
        return accs

    def seq_hist(self, e: S.Hist, bins: View, group: bool, loc):
        """reduce_by_index inside a kernel: the bins start as a copy of the destination, then one thread (at
        the intra-group level, the workgroup's first) combines the values into them in order."""
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
            self.emit("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")

    def seq_scanomap(self, e: S.Scanomap, dests, loc):
        accs = [self.declare(CTYPES[a.type.name], self.atom(a), "acc") for a in e.neutral]
        i, loop = self.element_loop(e)
        with loop:
            self.bind_elems(e.map_lam.params, e.arrs, i)
            values = self.body(e.map_lam.body)
            for acc, r in zip(accs, self.apply_red(e.scan, accs, values, loc)):
                self.emit(f"{acc} = {r};")
            outputs = accs
            if e.post is not None:  # the map that reads the prefixes, applied as they are made
                for p, acc in zip(e.post.params, accs):
                    self.env[p.name] = acc
                outputs = self.body(e.post.body)
            for value, d in zip(outputs, dests):
                self.emit(f"{d.elem([i])} = {value};")

    def block_scan(self, e, dests, lo: str = "0", hi: str = None, carry_in: list = None):
        """The workgroup scans elements [lo, hi) of the innermost binding of e's context in blocks of its
        size, carrying the running total (from carry_in, else the neutral element) from block to block:
        order preserved, so any associative operator works. `dests` are the views of the segment's results."""
        ctypes = neutral_ctypes(e)
        lid = self.declare("long", "get_local_id(0)", "lid")
        lsize = self.declare("long", "get_local_size(0)", "lsize")
        width = hi or self.atom(e.ctx[-1].width)
        carry = [self.declare(c, v, "carry") for c, v in zip(ctypes, carry_in or [self.atom(a) for a in e.neutral])]
        block = self.fresh("block")
        with self.block(f"for (long {block} = {lo}; {block} < {width}; {block} += {lsize})"):
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
            self.emit("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")

    def fill(self, e, dst: View, group: bool, loc=None):
        """Writes an array-constructing expression into its destination, element by element (by the
        workgroup's threads together at the intra-group level)."""
        n = dst.dims[0]
        i = self.fresh("i")
        start, step = ("get_local_id(0)", "get_local_size(0)") if group else ("0", "1")
        if isinstance(e, S.ArrayLit):
            for k, a in enumerate(e.elems):
                self.put(self.atom(a), dst.slice([str(k)]), group)
            return
        if isinstance(e, S.Update):
            self.copy(self.env[e.arr.name], dst, group)
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
            return
        if isinstance(e, S.Reshape):  # the same elements in row-major order: a copy by flat index
            src = self.env[e.arr.name]
            f = self.fresh("f")
            total = " * ".join(f"({d})" for d in dst.dims) or "1"
            with self.block(f"for (long {f} = {start}; {f} < {total}; {f} += {step})"):
                self.emit(f"{dst.elem(unravel(f, dst.dims))} = {src.elem(unravel(f, src.dims))};")
            if group:
                self.emit("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")
            return
        if isinstance(e, S.Concat):
            offset = "0"
            for a in e.arrs:
                src = self.env[a.name]
                part = View(dst.mem, dst.ctype, f"({dst.offset} + ({offset}) * ({dst.strides[0]}))",
                            (src.dims[0],) + dst.dims[1:], dst.strides)
                self.copy(src, part, group)
                offset = f"({offset} + {src.dims[0]})"
            return
        with self.block(f"for (long {i} = {start}; {i} < {n}; {i} += {step})"):
            if isinstance(e, S.Iota):
                self.emit(f"{dst.elem([i])} = ({dst.ctype}){i};")
            elif isinstance(e, S.Replicate):
                self.put(self.atom(e.x), dst.slice([i]), False)
            else:  # Rotate
                src = self.env[e.arr.name]
                j = self.declare("long", f"(({i}) + (long)({self.atom(e.amount)}) % {n} + {n}) % {n}", "j")
                self.put(src.slice([j]) if len(src.dims) > 1 else src.elem([j]), dst.slice([i]), False)
        if group:
            self.emit("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")

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
        idxs = []
        with ExitStack() as loops:
            for depth, d in enumerate(src.dims):
                i = self.fresh("c")
                start, step = ("get_local_id(0)", "get_local_size(0)") if group and depth == 0 else ("0", "1")
                loops.enter_context(self.block(f"for (long {i} = {start}; {i} < {d}; {i} += {step})"))
                idxs.append(i)
            self.emit(f"{dst.elem(idxs)} = {src.elem(idxs)};")
        if group:
            self.emit("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")

    # ---- context binding ----

    def bind_ctx(self, ctx: tuple, flat: str, ctype: str = INDEX):
        """Decomposes a flat index over the context's widths and binds each level's parameters. Level 1
        indexes in idx_t (the host checks its iteration space); level 0 passes long."""
        widths = [self.atom(b.width) for b in ctx]
        idxs = []
        rest = flat
        for k in range(len(ctx)):
            inner = " * ".join(f"({w})" for w in widths[k + 1:]) or "1"
            idxs.append(self.declare(ctype, f"({rest}) / ({inner})", "gtid"))
            rest = self.declare(ctype, f"({rest}) % ({inner})", "rem") if k + 1 < len(ctx) else rest
        for b, i in zip(ctx, idxs):
            self.bind_elems(b.params, b.arrs, i)
        return idxs

    # ---- level 0: inside a workgroup ----

    def segmap0(self, e: T.SegMap, pat, dests, loc):
        total = " * ".join(f"({self.atom(b.width)})" for b in e.ctx)
        i = self.fresh("ltid")
        with self.block(f"for (long {i} = get_local_id(0); {i} < {total}; {i} += get_local_size(0))"):
            self.bind_ctx(e.ctx, i, "long")
            n_ctx = len(e.ctx)
            # the destination is row-major over the context: index it with the flat thread index
            rows = [View(d.mem, d.ctype, f"({d.offset} + ({i}) * ({d.strides[n_ctx - 1]}))", d.dims[n_ctx:],
                         d.strides[n_ctx:]) for d in dests]
            with self.per_thread():
                results = self.body(e.body, tuple(r if r.dims else None for r in rows))
            for r, row in zip(results, rows):
                if not row.dims:
                    self.emit(f"{row.mem}[{row.offset}] = {r};")
        self.emit("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")

    UNROLL = 8  # elements a thread loads before combining them: independent loads keep memory busy (on the
    # H200, reduce's kernel took 95.7 us against 99.1 with 4, row sums 99.0 against 102.8)

    def accumulate(self, e, lo: str, hi: str, accs: list, per_thread: bool = False, ctype: str = INDEX,
                   interleave: tuple = None):
        """Each thread folds its share of [lo, hi) into its accumulators, in order: all of it when
        per_thread; strided across the workgroup when the operator is commutative (coalesced); a
        contiguous chunk otherwise. The first two load UNROLL elements before folding them in, so that
        their loads are in flight together. Strided across the workgroup, the loop is also written for
        inputs whose elements are adjacent (the usual case). Indices are of type ctype (long at level 0).
        interleave=(part, parts): a commutative operator's workgroups take turns, a round of UNROLL
        adjacent workgroup-sized tiles each, so that the grid reads one window of memory at a time
        (reduce on the H200: 99.6 us against 108.7 with a contiguous range each)."""
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
        if per_thread or e.commutative:
            # UNROLL elements `apart` from each other a round, then the next round `advance` further
            lid, lsize = f"({ctype})get_local_id(0)", f"({ctype})get_local_size(0)"
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
            chunk = self.declare(ctype, f"(({hi}) - ({lo}) + ({ctype})get_local_size(0) - 1) / ({ctype})get_local_size(0)",
                                 "chunk")
            begin = self.declare(ctype, f"({lo}) + ({ctype})get_local_id(0) * {chunk}", "begin")
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
        self.emit("barrier(CLK_LOCAL_MEM_FENCE);")
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
            self.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        results = [self.declare(c, f"{b}[0]", "red") for c, b in zip(ctypes, bufs)]
        self.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        return results

    def segred0(self, e: T.SegRed) -> list:
        if len(e.ctx) != 1:
            raise Unsupported("a segmented reduction at workgroup level")
        accs = [self.declare(CTYPES[a.type.name], self.atom(a), "acc") for a in e.neutral]
        self.accumulate(e, "0", self.atom(e.ctx[0].width), accs, ctype="long")
        return self.group_reduce(e.red, e.commutative, accs, neutral_ctypes(e))
