"""What every rule that writes a kernel's code stands on (`KernelBase`, which codegen.opencl's `KernelWriter`
extends): the kernel's parameters (its inputs, outputs, index numbers, local and scratch memory), its lines and
fresh names, the run-time checks it records, and atoms as C text."""

import math

from incflat.codegen.cscalar import CTYPES, c_const, dim_expr
from incflat.codegen.kernel import (INDEX, ArrayParam, CExpr, ErrorBuffer, IndexParam, Kernel, LocalParam,
                                    ScalarParam, ScratchParam, View, iota_view, replicate_view)
from incflat.ir.runtime.prims import CTYPE_SIZES, PRIMS
from incflat.ir import host as H
from incflat.ir import source as S
from incflat.ir.errors import Unsupported
from incflat.ir.types import Array, Scalar


# The most elements of a thread's intermediate array (of constant size) that its private memory holds.
PRIVATE_ELEMENTS = 64
# A thread's intermediate arrays in global memory are interleaved: element f at f * THREADS + the thread.
THREADS = f"(({INDEX})get_global_size(0))"


def row_major(dims, factor=None) -> tuple:
    """The strides (C) of an array of `dims` laid out row-major, each a multiple of `factor` (the distance of
    consecutive elements; None: 1)."""
    strides = tuple(" * ".join(f"({d})" for d in dims[k + 1:]) or "1" for k in range(len(dims)))
    return strides if factor is None else tuple(f"({s}) * {factor}" for s in strides)


# Local memory's banks: a workgroup's array whose rows are a multiple of this many elements long gets one
# element more a row, so that its threads reading a column (thread j: row j) hit distinct banks, not one.
LOCAL_BANKS = 32


def padded_rows(shape: tuple) -> tuple:
    """The shape a workgroup's array is laid out in: its rows one element longer where they are of a constant
    length that is a multiple of LOCAL_BANKS (LU's 32 x 32 diagonal block), else as it is."""
    if len(shape) >= 2 and all(isinstance(d, int) for d in shape) and shape[-1] % LOCAL_BANKS == 0:
        return tuple(shape[:-1]) + (shape[-1] + 1,)
    return tuple(shape)


def reshaped(view: View, dims) -> "View | None":
    """The same elements in row-major order as an array of `dims`, as a view of the same memory, where `view` is
    laid out row-major (an intermediate array, or a row or a slice of rows of one); else None."""
    for factor in (None, THREADS):
        if type(view) is View and tuple(view.strides) == row_major(view.dims, factor):
            return View(view.mem, view.ctype, view.offset, tuple(dims), row_major(tuple(dims), factor))
    return None


class KernelBase:
    """One kernel being written: its `Kernel` record, and the C expression or view of each variable in scope."""

    def __init__(self, name: str, errors):
        self.k = Kernel(name)
        self.out = self.k.body
        self.counter = 0
        self.env = {}  # variable name -> C expression (scalars) or View (arrays)
        self.errors = errors  # the program's run-time error table: (where, message template)
        self.inputs = set()  # names of the kernel's scalar inputs: host values too
        self.size_terms = {}  # an i64 the kernel computes by +, -, * or / from others: name -> (op, x, y)
        self.shared = False  # whether intermediate arrays belong to the workgroup (the intra-group level)
        self.spaces = {}  # the name of each intermediate array's memory (or pointer to it) -> its address space
        self.allocated = []  # the names of the intermediate arrays' memories (and pointers to them), in order
        self.checks = errors.checks  # bounds, division and coercion checks
        self.k.params.append(ErrorBuffer())

    def check(self, condition: str, loc, template: str, values: list):
        """Records error `template` (with {0}, {1}... filled from values) when condition holds; the
        kernel goes on, so barriers are still reached, and the host reports the first error. None inside
        `#[unsafe]` (loc.unsafe), as in Futhark: a wrong index reads an element of the array, some element."""
        if getattr(loc, "unsafe", False):
            return
        self.errors.append((str(loc) if loc else "", template))
        shown = ", ".join(f"(long)({v})" for v in (values + ["0"] * 7)[:7])
        self.emit(f"if ({condition}) record_error(error, {len(self.errors)}, {shown});")

    # ---- output ----

    def emit(self, line: str):
        self.out.line(line)

    def block(self, head: str):
        return self.out.block(head)

    def barrier(self, fences: str = "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE"):
        """A workgroup barrier; none where the line before is the same barrier (two rules that each end and
        begin with one meet), which would only make the threads wait twice."""
        line = f"barrier({fences});"
        lines = self.out.lines
        if not (lines and lines[-1].strip() == line):
            self.emit(line)

    def if_else(self, condition: str, then, otherwise):
        self.out.if_else(condition, then, otherwise)

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base.replace('.', '_')}_c{self.counter}"

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

    def computed_input(self, v: S.Var, made):
        """A free variable that the host made by `iota n` or by `replicate n x` of a scalar x (`made`): a view
        of no memory whose element i is i, or x, so that a context bound from an iota (`map (\\i -> ...)
        (iota n)`) loads no index, and a workgroup's array starting as a replicate (nw's block) loads nothing."""
        for d in v.type.shape:
            if isinstance(d, str):
                self.input_var(S.Var(d, Scalar("i64")))
        dims, ctype = tuple(self.dim_c(d) for d in v.type.shape), CTYPES[v.type.elem.name]
        if isinstance(made, S.Iota):
            self.env[v.name] = iota_view(dims[0], ctype)
            return
        if isinstance(made.x, S.Var):
            self.input_var(made.x)
        self.env[v.name] = replicate_view(dims, ctype, self.atom(made.x))

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
        host = H.Var(base) if role == "input" else None
        off = CExpr(self.convert_index(f"{base}_off"), host and H.Offset(host))
        strides = tuple(CExpr(self.convert_index(f"{base}_s{i}"), host and H.Stride(host, i)) for i in range(t.rank))
        return View(f"{base}_mem", ctype, off, tuple(self.dim_c(d) for d in t.shape), strides)

    def output_param(self, i: int, t) -> View:
        """The i'th output of the segop: a fresh contiguous array allocated by the host."""
        return self.array_param(f"out{i}", t, "output", i)

    def local_param(self, ctype: str, per_thread: int = 1) -> str:
        """Local memory of per_thread elements for each thread of the workgroup."""
        name = self.fresh("local")
        self.k.params.append(LocalParam(name, ctype, CTYPE_SIZES[ctype], per_thread))
        return name

    def scratch(self, t: Array, loc) -> View:
        """Memory for an intermediate array: one per workgroup at the intra-group level, in local memory
        (row-major: the group's threads share it), else one per thread in global memory, interleaved:
        element f of thread t lies at f * global_size + t, so that neighbouring threads walking their arrays
        in step touch neighbouring addresses (coalesced), as Futhark lays out its thread-private arrays. Its
        size must be known on the host: the kernel's inputs, or what the kernel computes from them by +, -, * and /
        (`verts ++ [n]` in every thread: n + 1), which the host computes again."""
        host_shape = tuple(self.host_dim(d) for d in t.shape)
        if None in host_shape:
            raise Unsupported("an intermediate array inside a kernel whose size is computed in the kernel", loc)
        prim = PRIMS[t.elem.name]
        elements = math.prod(t.shape) if all(isinstance(d, int) for d in t.shape) else None
        if not self.shared and elements is not None and elements <= PRIVATE_ELEMENTS:
            # a thread's small array of constant size lives in its private memory (registers, or the L1
            # cache), as Futhark's do: not in global memory, whose latency a thread's sequential loop waits on
            mem = self.fresh("private")
            self.k.preamble.append(f"{prim.ctype} {mem}[{max(elements, 1)}];")
            self.spaces[mem] = ""
            self.allocated.append(mem)
            dims = tuple(self.dim_c(d) for d in t.shape)
            return View(mem, prim.ctype, "0", dims, row_major(dims))
        mem = self.fresh("scratch")
        self.spaces[mem] = "__local" if self.shared else "__global"
        self.allocated.append(mem)
        dims = tuple(self.dim_c(d) for d in t.shape)
        if self.shared:  # in the workgroup's local memory, its rows padded where they would share banks
            laid = padded_rows(t.shape)
            self.k.params.append(ScratchParam(mem, prim.ctype, prim.name, tuple(
                self.host_dim(d) for d in laid), True))
            return View(mem, prim.ctype, "0", dims, row_major(tuple(self.dim_c(d) for d in laid)))
        self.k.params.append(ScratchParam(mem, prim.ctype, prim.name, host_shape, False))
        return View(mem, prim.ctype, f"(({INDEX})get_global_id(0))", dims, row_major(dims, THREADS))

    def dim_c(self, d) -> str:
        """A dimension in the kernel's C: a size the kernel computed is its variable's C name."""
        return self.env[d] if isinstance(d, str) and isinstance(self.env.get(d), str) else dim_expr(d)

    def host_dim(self, d):
        """A dimension as the host knows it: a constant, an input's name, or the host expression (ir.host) of
        what the kernel computes it from; None where it depends on what only a thread knows."""
        if isinstance(d, int) or (isinstance(d, str) and d in self.inputs):
            return d
        if isinstance(d, str) and d in self.size_terms:
            op, x, y = self.size_terms[d]
            hx, hy = (self.host_dim(S.dim_of(a)) for a in (x, y))
            if hx is None or hy is None:
                return None
            hx, hy = (H.Lit(h) if isinstance(h, int) else H.Call("int", (H.Var(h),)) if isinstance(h, str) else h
                      for h in (hx, hy))  # (host integers: an i64 host variable is a numpy or C int64)
            if op == "/":  # (Futhark's `/` floors, as Python's `//`; a division by zero fails in the kernel)
                op, hy = "//", H.Call("max", (hy, H.Lit(1)))
            return H.Call("max", (H.Op(op, hx, hy), H.Lit(0)))  # (a negative size fails in the kernel)
        return None

    # ---- atoms ----

    def atom(self, a):
        if isinstance(a, S.Const):
            return c_const(a)
        return self.env[a.name]
