"""OpenCL C for the segmented operations of the target IR.

Each level-1 segop becomes one kernel (a segred two: the per-group stage and the stage that combines
several groups' partial results of one segment). Level-0 segops are emitted inside their level-1 kernel,
with local memory and barriers. Arrays inside kernels are views: a buffer, an element offset and a stride
per dimension, so rearranges and row slices cost nothing.
"""

import contextlib
from dataclasses import dataclass, field, replace

from ir import source as S
from ir import target as T
from ir.analysis import free_in_exp
from ir.errors import CompileError
from ir.types import Array, Scalar

CTYPES = {"i8": "char", "i16": "short", "i32": "int", "i64": "long", "u8": "uchar", "u16": "ushort",
          "u32": "uint", "u64": "ulong", "f32": "float", "f64": "double", "bool": "uchar"}
UNSIGNED = {"i8": "uchar", "i16": "ushort", "i32": "uint", "i64": "ulong"}

# The type of the kernels' own index arithmetic (flat indices, offsets, strides, block and loop
# counters): 32 bits, as 64-bit multiplications and divisions cost a memory-bound kernel a fifth to a
# third of its speed; a launch whose arrays or iteration space reach INDEX32_LIMIT (runtime) runs the build
# made with INDEX64. The program's own i64 values stay long.
INDEX = "idx_t"

PRELUDE = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#ifdef INDEX64
typedef long idx_t;
#else
typedef int idx_t;
#endif
// Integer division never traps (a CPU device would raise SIGFPE): by zero it gives 0, and the one
// overflowing case, the lowest value divided by -1, wraps.
#define DEFINE_INT_OPS(T, NAME) \
  static inline T NAME##_quot(T x, T y) { return y == 0 ? 0 : (y == (T)-1 ? (T)(0 - x) : x / y); } \
  static inline T NAME##_rem(T x, T y) { return (y == 0 || y == (T)-1) ? 0 : x % y; } \
  static inline T NAME##_floordiv(T x, T y) { T q = NAME##_quot(x, y); return (y != 0 && q * y != x && ((x < 0) != (y < 0))) ? q - 1 : q; } \
  static inline T NAME##_floormod(T x, T y) { T r = NAME##_rem(x, y); return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r; } \
  static inline T NAME##_pow(T x, T y) { T r = 1; while (y > 0) { if (y & 1) r = r * x; x = x * x; y >>= 1; } return r; }
static inline void record_error(__global long *error, long id, long a, long b, long c, long d, long e, long f,
                                long g) {
  if (atomic_cmpxchg((volatile __global int *)error, 0, (int)id) == 0) {
    error[1] = a; error[2] = b; error[3] = c; error[4] = d; error[5] = e; error[6] = f; error[7] = g;
  }
}
DEFINE_INT_OPS(char, i8)
DEFINE_INT_OPS(short, i16)
DEFINE_INT_OPS(int, i32)
DEFINE_INT_OPS(long, i64)
DEFINE_INT_OPS(uchar, u8)
DEFINE_INT_OPS(ushort, u16)
DEFINE_INT_OPS(uint, u32)
DEFINE_INT_OPS(ulong, u64)
"""


def not_supported(what: str, loc=None):
    return CompileError(f"not supported yet: {what}", loc)


# What the user wrote, for the IR constructs that error messages mention.
SOURCE_NAMES = {"Scanomap": "scan", "Scan": "scan", "Redomap": "reduce", "Reduce": "reduce", "Map": "map",
                "If": "if", "Index": "indexing", "Iota": "iota", "Replicate": "replicate",
                "Rearrange": "transpose", "SegMap": "a nested map", "SegRed": "a nested reduce",
                "Filter": "filter", "ArrayLit": "an array literal", "Rotate": "rotate", "Concat": "concat",
                "Reshape": "flatten/unflatten", "Scatter": "scatter", "Update": "an in-place update",
                "Loop": "loop", "Apply": "a function call"}


def source_name(e) -> str:
    return SOURCE_NAMES.get(type(e).__name__, type(e).__name__)


class ErrorTable(list):
    """The run-time errors a program's kernels can report, as (where, message template); with
    checks=False (`incflat compile --unsafe`) kernels check nothing."""

    def __init__(self, checks: bool = True):
        super().__init__()
        self.checks = checks


@dataclass
class View:
    """An array inside a kernel."""
    mem: str
    ctype: str
    offset: str
    dims: tuple  # C expressions
    strides: tuple  # C expressions

    def elem(self, idxs) -> str:
        terms = [self.offset] + [f"({i}) * ({s})" for i, s in zip(idxs, self.strides)]
        return f"{self.mem}[{' + '.join(terms)}]"

    def slice(self, idxs) -> "View":
        k = len(idxs)
        off = " + ".join([self.offset] + [f"({i}) * ({s})" for i, s in zip(idxs, self.strides)])
        return View(self.mem, self.ctype, f"({off})", self.dims[k:], self.strides[k:])


@dataclass
class Kernel:
    name: str
    params: list = field(default_factory=list)  # C parameter declarations
    args: list = field(default_factory=list)  # how the host supplies each: (kind, payload)
    lines: list = field(default_factory=list)
    preamble: list = field(default_factory=list)  # the index parameters, converted to idx_t
    chunk: int = 1  # elements per thread of a scan kernel: the host sizes its grid by it
    inner_strides: list = field(default_factory=list)  # a segred's: C strides of the segment's arrays

    def source(self) -> str:
        body = "\n".join(self.preamble + self.lines)
        return f"__kernel void {self.name}({', '.join(self.params)})\n{{\n{body}\n}}\n"


def c_const(c: S.Const) -> str:
    t = c.type.name
    v = c.value
    if t == "bool":
        return "1" if v else "0"
    if t in ("f32", "f64"):
        import math
        suffix = "f" if t == "f32" else ""
        if math.isnan(v):
            return f"(({CTYPES[t]})NAN)"
        if math.isinf(v):
            return f"(({CTYPES[t]})({'-' if v < 0 else ''}INFINITY))"
        return f"(({CTYPES[t]}){float(v)!r}{suffix})"
    if t.startswith("u"):
        return f"(({CTYPES[t]}){int(v)}UL)"
    if int(v) == -2 ** 63:
        return "((long)(-9223372036854775807L - 1))"
    return f"(({CTYPES[t]}){int(v)}L)"


def dim_expr(d) -> str:
    return f"{d}L" if isinstance(d, int) else d


class KernelWriter:
    """Writes the code of one kernel: declarations of its inputs, then its body."""

    def __init__(self, name: str, errors: "ErrorTable"):
        self.k = Kernel(name)
        self.counter = 0
        self.env = {}  # variable name -> C expression (scalars) or View (arrays)
        self.indent = 1
        self.errors = errors  # the program's run-time error table: (where, message template)
        self.inputs = set()  # names of the kernel's scalar inputs: host values too
        self.shared = False  # whether intermediate arrays belong to the workgroup (the intra-group level)
        self.checks = errors.checks  # bounds, division and coercion checks
        self.k.params.append("__global long *error")
        self.k.args.append(("error", None))

    def check(self, condition: str, loc, template: str, values: list):
        """Records error `template` (with {0}, {1}... filled from values) when condition holds; the
        kernel goes on, so barriers are still reached, and the host reports the first error."""
        self.errors.append((str(loc) if loc else "", template))
        padded = (values + ["0"] * 7)[:7]
        self.emit(f"if ({condition}) record_error(error, {len(self.errors)}, {', '.join(f'(long)({v})' for v in padded)});")

    # ---- output ----

    def emit(self, line: str):
        self.k.lines.append("  " * self.indent + line)

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
            self.k.args.append(("view", v.name))
        elif isinstance(v.type, Scalar):
            c = f"{v.name}"
            self.k.params.append(f"{CTYPES[v.type.name]} {c}")
            self.k.args.append(("scalar", (v.name, v.type.name)))
            self.env[v.name] = c
            self.inputs.add(v.name)
        else:
            raise not_supported(f"a tuple-typed variable {v.name} in a kernel")

    def index_param(self, name: str) -> str:
        """A parameter of the kernel's index arithmetic: passed as a long, used as an idx_t."""
        self.k.params.append(f"long {name}_arg")
        self.k.preamble.append(f"  const {INDEX} {name} = ({INDEX}){name}_arg;")
        return name

    def array_param(self, base: str, t: Array) -> View:
        ctype = CTYPES[t.elem.name]
        mem = f"{base}_mem"
        self.k.params.append(f"__global {ctype} *restrict {mem}")
        off = self.index_param(f"{base}_off")
        strides = tuple(self.index_param(f"{base}_s{i}") for i in range(t.rank))
        return View(mem, ctype, off, tuple(dim_expr(d) for d in t.shape), strides)

    def output_param(self, i: int, t) -> View:
        """The i'th output of the segop: a fresh contiguous array allocated by the host."""
        view = self.array_param(f"out{i}", t)
        self.k.args.append(("out", i))
        return view

    def local_param(self, ctype: str, per_thread: int = 1) -> str:
        """Local memory of per_thread elements for each thread of the workgroup."""
        name = self.fresh("local")
        self.k.params.append(f"__local {ctype} *{name}")
        self.k.args.append(("local", (ctype, per_thread)))
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
            return binop(e.op, self.atom(e.x), self.atom(e.y), e.x.type.name, loc)
        if isinstance(e, S.UnOp):
            x, t = self.atom(e.x), e.x.type.name
            if e.op == "neg":
                return f"(({CTYPES[t]})(-({UNSIGNED.get(t, CTYPES[t])}){x}))"
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
                    self.check(bad, stm.loc, "cannot coerce an array to a type with other sizes.", [])
                self.env[pat[0].name] = View(value.mem, value.ctype, value.offset, new, value.strides)
            else:
                self.env[pat[0].name] = self.declare(CTYPES[pat[0].type.name], value, pat[0].name)
        elif isinstance(e, S.Index):
            self.index(e, pat[0], stm.loc)
        elif isinstance(e, S.Rearrange):
            arr = self.env[e.arr.name]
            order = tuple(e.perm) + tuple(range(len(e.perm), len(arr.dims)))
            self.env[pat[0].name] = View(arr.mem, arr.ctype, arr.offset, tuple(arr.dims[i] for i in order),
                                         tuple(arr.strides[i] for i in order))
        elif isinstance(e, S.If):
            return self.if_(e, pat, dests, group, stm.loc)
        elif isinstance(e, S.Loop):
            self.loop(e, pat, stm.loc, group)
        elif isinstance(e, S.Map):
            dests = self.fill_dests(pat, dests, stm.loc)
            self.seq_map(e, pat, dests, stm.loc)
            self.bind_dests(pat, dests)
            return True
        elif isinstance(e, (S.Iota, S.Replicate, S.ArrayLit, S.Rotate, S.Concat, S.Update)):
            dests = self.fill_dests(pat, dests, stm.loc)
            self.fill(e, dests[0], group)
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
            self.block_scan(e, "0", dests)
            self.bind_dests(pat, dests)
            return True
        else:
            raise not_supported(f"{source_name(e)} inside a kernel", stm.loc)
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
        offset, dims, strides = arr.offset, [], []
        for i, d, s in zip(e.idxs, arr.dims, arr.strides):
            if isinstance(i, S.DimSlice):
                offset = f"({offset} + ({self.atom(i.start)}) * ({s}))"
                dims.append(self.atom(i.size))
                strides.append(f"({s}) * ({self.atom(i.stride)})")
            else:
                offset = f"({offset} + ({self.atom(i)}) * ({s}))"
        k = len(e.idxs)
        self.env[p.name] = View(arr.mem, arr.ctype, offset, tuple(dims) + arr.dims[k:], tuple(strides) + arr.strides[k:])

    def loop(self, e: S.Loop, pat, loc, group=False):
        """A sequential loop. Array-valued state lives in scratch memory: each iteration writes the new
        values into a second buffer and copies them back, so the body may read all of the old ones."""
        if e.size_params:
            raise not_supported("a loop whose arrays change size inside a kernel", loc)
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
            self.emit(f"for ({CTYPES[i.type.name]} {c} = 0; {c} < {self.atom(e.form.bound)}; {c}++) {{")
            self.indent += 1
            self.env[i.name] = c
        else:
            self.emit("while (1) {")
            self.indent += 1
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
        self.indent -= 1
        self.emit("}")
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
        for branch, head in ((e.then, f"if ({self.atom(e.cond)}) {{"), (e.else_, "} else {")):
            self.emit(head)
            self.indent += 1
            for n, r in zip(names, self.body(branch, dests, group)):
                if n:
                    self.emit(f"{n} = {r};")
            self.indent -= 1
        self.emit("}")
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
        """A row-major region of global memory for an intermediate array: one per thread, or one per
        workgroup at the intra-group level. Its size must be known on the host."""
        if any(isinstance(d, str) and d not in self.inputs for d in t.shape):
            raise not_supported("an intermediate array inside a kernel whose size is computed in the kernel", loc)
        ctype = CTYPES[t.elem.name]
        mem = self.fresh("scratch")
        self.k.params.append(f"__global {ctype} *restrict {mem}")
        self.k.args.append(("scratch", (t.elem.name, tuple(t.shape), self.shared)))
        dims = tuple(dim_expr(d) for d in t.shape)
        strides = [" * ".join(f"({d})" for d in dims[k + 1:]) or "1" for k in range(len(dims))]
        size = " * ".join(f"({d})" for d in dims)
        owner = "get_group_id(0)" if self.shared else "get_global_id(0)"
        return View(mem, ctype, f"({owner}) * ({size})", dims, tuple(strides))

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
        i = self.fresh("i")
        self.emit(f"for (long {i} = 0; {i} < {self.atom(e.width)}; {i}++) {{")
        self.indent += 1
        self.bind_elems(e.lam.params, e.arrs, i)
        row_dests = tuple(d.slice([i]) if isinstance(t, Array) else None for d, t in zip(dests, e.lam.ret))
        results = self.body(e.lam.body, row_dests)
        self.write_results(results, e.lam.ret, dests, i)
        self.indent -= 1
        self.emit("}")

    def apply_red(self, red: S.Lambda, accs: list, values: list, loc) -> list:
        """Inlines the reduction operator; returns C expressions of its results."""
        if any(isinstance(p.type, Array) for p in red.params):
            raise not_supported("a reduction operator on arrays", loc)
        n = len(accs)
        for p, v in zip(red.params, accs + values):
            self.env[p.name] = v
        return self.body(red.body)[:n]

    def seq_redomap(self, e: S.Redomap, loc) -> list:
        accs = [self.declare(CTYPES[a.type.name], self.atom(a), "acc") for a in e.neutral]
        i = self.fresh("i")
        self.emit(f"for (long {i} = 0; {i} < {self.atom(e.width)}; {i}++) {{")
        self.indent += 1
        self.bind_elems(e.map_lam.params, e.arrs, i)
        values = self.body(e.map_lam.body)
        for acc, r in zip(accs, self.apply_red(e.red, accs, values, loc)):
            self.emit(f"{acc} = {r};")
        self.indent -= 1
        self.emit("}")
        return accs

    def seq_scanomap(self, e: S.Scanomap, dests, loc):
        accs = [self.declare(CTYPES[a.type.name], self.atom(a), "acc") for a in e.neutral]
        i = self.fresh("i")
        self.emit(f"for (long {i} = 0; {i} < {self.atom(e.width)}; {i}++) {{")
        self.indent += 1
        self.bind_elems(e.map_lam.params, e.arrs, i)
        values = self.body(e.map_lam.body)
        for acc, r, d in zip(accs, self.apply_red(e.scan, accs, values, loc), dests):
            self.emit(f"{acc} = {r};")
            self.emit(f"{d.elem([i])} = {acc};")
        self.indent -= 1
        self.emit("}")

    def block_scan(self, e, segment: str, dests, lo: str = "0", hi: str = None, carry_in: list = None):
        """The workgroup scans elements [lo, hi) of the innermost binding of e's context in blocks of its
        size, carrying the running total (from carry_in, else the neutral element) from block to block:
        order preserved, so any associative operator works. `dests` are the views of the segment's results."""
        ctypes = neutral_ctypes(e)
        lid = self.declare("long", "get_local_id(0)", "lid")
        lsize = self.declare("long", "get_local_size(0)", "lsize")
        width = hi or self.atom(e.ctx[-1].width)
        carry = [self.declare(c, v, "carry") for c, v in zip(ctypes, carry_in or [self.atom(a) for a in e.neutral])]
        block = self.fresh("block")
        self.emit(f"for (long {block} = {lo}; {block} < {width}; {block} += {lsize}) {{")
        self.indent += 1
        k = self.declare("long", f"{block} + {lid}", "k")
        xs = [self.declare(c, self.atom(a), "x") for c, a in zip(ctypes, e.neutral)]
        self.emit(f"if ({k} < {width}) {{")
        self.indent += 1
        inner = e.ctx[-1]
        self.bind_elems(inner.params, inner.arrs, k)
        with self.per_thread():
            values = self.body(e.body)
        for x, v in zip(xs, values):
            self.emit(f"{x} = {v};")
        self.indent -= 1
        self.emit("}")
        bufs, _, base = Lifted(self, e, segmented=False).group_scan(xs, None, lid, lsize)
        mine = [self.declare(c, f"{b}[{base} + {lid}]", "mine") for c, b in zip(ctypes, bufs)]
        total = [self.declare(c, f"{b}[{base} + {lsize} - 1]", "total") for c, b in zip(ctypes, bufs)]
        out = self.apply_red(e.scan, carry, mine, None)
        self.emit(f"if ({k} < {width}) {{")
        self.indent += 1
        for d, r in zip(dests, out):
            self.emit(f"{d.elem([k])} = {r};")
        self.indent -= 1
        self.emit("}")
        for c, r in zip(carry, self.apply_red(e.scan, carry, total, None)):
            self.emit(f"{c} = {r};")
        self.emit("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);")
        self.indent -= 1
        self.emit("}")

    def fill(self, e, dst: View, group: bool):
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
            idxs = [self.atom(x) for x in e.idxs]
            target = dst.slice(idxs) if len(idxs) < len(dst.dims) else dst
            if len(idxs) == len(dst.dims):
                self.emit(f"{'if (get_local_id(0) == 0) ' if group else ''}{dst.elem(idxs)} = {self.atom(e.value)};")
            else:
                self.copy(self.atom(e.value), target, group)
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
        self.emit(f"for (long {i} = {start}; {i} < {n}; {i} += {step}) {{")
        self.indent += 1
        if isinstance(e, S.Iota):
            self.emit(f"{dst.elem([i])} = ({dst.ctype}){i};")
        elif isinstance(e, S.Replicate):
            self.put(self.atom(e.x), dst.slice([i]), False)
        else:  # Rotate
            src = self.env[e.arr.name]
            j = self.declare("long", f"(({i}) + (long)({self.atom(e.amount)}) % {n} + {n}) % {n}", "j")
            self.put(src.slice([j]) if len(src.dims) > 1 else src.elem([j]), dst.slice([i]), False)
        self.indent -= 1
        self.emit("}")
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
        for depth, d in enumerate(src.dims):
            i = self.fresh("c")
            start, step = ("get_local_id(0)", "get_local_size(0)") if group and depth == 0 else ("0", "1")
            self.emit(f"for (long {i} = {start}; {i} < {d}; {i} += {step}) {{")
            self.indent += 1
            idxs.append(i)
        self.emit(f"{dst.elem(idxs)} = {src.elem(idxs)};")
        for _ in src.dims:
            self.indent -= 1
            self.emit("}")
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
        self.emit(f"for (long {i} = get_local_id(0); {i} < {total}; {i} += get_local_size(0)) {{")
        self.indent += 1
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
        self.indent -= 1
        self.emit("}")
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
            raise not_supported("a reduction of arrays")
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

    def if_else(self, condition: str, then, otherwise):
        """Emits `if (condition) {then()} else {otherwise()}`, each callable writing its branch."""
        for line, branch in ((f"if ({condition}) {{", then), ("} else {", otherwise)):
            self.emit(line)
            self.indent += 1
            branch()
            self.indent -= 1
        self.emit("}")

    def fold_loop(self, e, lo: str, hi: str, accs: list, per_thread: bool, ctype: str, interleave: tuple = None):
        if per_thread or e.commutative:
            # UNROLL elements `apart` from each other a round, then the next round `advance` further
            lid, lsize = f"({ctype})get_local_id(0)", f"({ctype})get_local_size(0)"
            part, parts = interleave or ("0", "1")
            start, apart, advance = ((lo, "1", f"{self.UNROLL}") if per_thread else
                                     (f"{lo} + {part} * {self.UNROLL} * {lsize} + {lid}", lsize,
                                      f"{parts} * {self.UNROLL} * {lsize}"))
            k = self.fresh("k")
            self.emit(f"{ctype} {k} = {start};")
            self.emit(f"for (; {k} + {self.UNROLL - 1} * {apart} < {hi}; {k} += {advance}) {{")
            self.indent += 1
            values = [self.element(e, f"{k} + {j} * {apart}", ctype) for j in range(self.UNROLL)]
            for vs in values:
                self.fold(e, accs, vs)
            self.indent -= 1
            self.emit("}")
            self.emit(f"for (; {k} < {hi}; {k} += {apart}) {{")  # the last round's elements before hi
        else:
            k = self.fresh("k")
            chunk = self.declare(ctype, f"(({hi}) - ({lo}) + ({ctype})get_local_size(0) - 1) / ({ctype})get_local_size(0)",
                                 "chunk")
            begin = self.declare(ctype, f"({lo}) + ({ctype})get_local_id(0) * {chunk}", "begin")
            self.emit(f"for ({ctype} {k} = {begin}; {k} < min(({ctype})({hi}), {begin} + {chunk}); {k}++) {{")
        self.indent += 1
        self.fold(e, accs, self.element(e, k, ctype))
        self.indent -= 1
        self.emit("}")

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
            self.emit(f"for ({INDEX} {s} = {s}_top / 2; {s} > 0; {s} >>= 1) {{")
            cond, other = f"{lid} < {s} && {lid} + {s} < {lsize}", f"{lid} + {s}"
        else:
            self.emit(f"for ({INDEX} {s} = 1; {s} < {lsize}; {s} <<= 1) {{")
            cond, other = f"{lid} % (2 * {s}) == 0 && {lid} + {s} < {lsize}", f"{lid} + {s}"
        self.indent += 1
        self.emit(f"if ({cond}) {{")
        self.indent += 1
        xs = [self.declare(c, f"{b}[{lid}]", "x") for c, b in zip(ctypes, bufs)]
        ys = [self.declare(c, f"{b}[{other}]", "y") for c, b in zip(ctypes, bufs)]
        for b, r in zip(bufs, self.apply_red(red, xs, ys, None)):
            self.emit(f"{b}[{lid}] = {r};")
        self.indent -= 1
        self.emit("}")
        self.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        self.indent -= 1
        self.emit("}")
        results = [self.declare(c, f"{b}[0]", "red") for c, b in zip(ctypes, bufs)]
        self.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        return results

    def segred0(self, e: T.SegRed) -> list:
        if len(e.ctx) != 1:
            raise not_supported("a segmented reduction at workgroup level")
        accs = [self.declare(CTYPES[a.type.name], self.atom(a), "acc") for a in e.neutral]
        self.accumulate(e, "0", self.atom(e.ctx[0].width), accs, ctype="long")
        return self.group_reduce(e.red, e.commutative, accs, neutral_ctypes(e))


# ---- scalar operators ----

class Lifted:
    """A scan operator lifted to (segment-start flag, values) pairs; without segments, the operator."""

    def __init__(self, w: KernelWriter, op, segmented: bool):
        self.w, self.op, self.segmented = w, op, segmented

    def combine_into(self, later: list, later_flag, earlier: list, earlier_flag):
        """later := earlier (+) later, in place (C variables)."""
        w = self.w
        if self.segmented:
            w.emit(f"if (!{later_flag}) {{")
            w.indent += 1
        for v, r in zip(later, w.apply_red(self.op.scan, list(earlier), list(later), None)):
            w.emit(f"{v} = {r};")
        if self.segmented:
            w.indent -= 1
            w.emit("}")
            w.emit(f"{later_flag} |= {earlier_flag};")

    def fold_unless(self, accs: list, xs: list, reset, on_reset: str = ""):
        """accs := xs when the C condition `reset` holds (a segment starts; then also the statement
        on_reset), else accs := accs (+) xs; without segments (reset False), always the latter."""
        w = self.w
        if reset:
            w.emit(f"if ({reset}) {{")
            for acc, x in zip(accs, xs):
                w.emit(f"  {acc} = {x};")
            if on_reset:
                w.emit(f"  {on_reset}")
            w.emit("} else {")
            w.indent += 1
        for acc, r in zip(accs, w.apply_red(self.op.scan, list(accs), list(xs), None)):
            w.emit(f"{acc} = {r};")
        if reset:
            w.indent -= 1
            w.emit("}")

    def group_scan(self, values: list, flag, lid: str = "lid", lsize: str = "lsize", count: str = None) -> tuple:
        """An inclusive scan of the (flag, values) of the workgroup's first `count` threads (all of them
        by default) in local memory (Hillis-Steele, between two halves in turn, so one barrier a step);
        every thread takes part. Returns (value arrays, flag array, base): thread t's inclusive result
        is at base + t."""
        w = self.w
        ctypes = neutral_ctypes(self.op)
        bufs = [w.local_param(c, 2) for c in ctypes]
        fbuf = w.local_param("uchar", 2) if self.segmented else None
        count = count or lsize
        for b, v in zip(bufs, values):
            w.emit(f"{b}[{lid}] = {v};")
        if fbuf:
            w.emit(f"{fbuf}[{lid}] = {flag};")
        w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        base = w.declare(INDEX, "0", "base")
        s = w.fresh("s")
        w.emit(f"for ({INDEX} {s} = 1; {s} < {count}; {s} <<= 1) {{")
        w.indent += 1
        ys = [w.declare(c, f"{b}[{base} + {lid}]", "y") for c, b in zip(ctypes, bufs)]
        fy = w.declare("uchar", f"{fbuf}[{base} + {lid}]", "fy") if fbuf else None
        w.emit(f"if ({lid} >= {s}) {{")
        w.indent += 1
        xs = [w.declare(c, f"{b}[{base} + {lid} - {s}]", "x") for c, b in zip(ctypes, bufs)]
        fx = w.declare("uchar", f"{fbuf}[{base} + {lid} - {s}]", "fx") if fbuf else None
        self.combine_into(ys, fy, xs, fx)
        w.indent -= 1
        w.emit("}")
        w.emit(f"{base} = {lsize} - {base};")
        for b, y in zip(bufs, ys):
            w.emit(f"{b}[{base} + {lid}] = {y};")
        if fbuf:
            w.emit(f"{fbuf}[{base} + {lid}] = {fy};")
        w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        w.indent -= 1
        w.emit("}")
        return bufs, fbuf, base


def binop(op: str, x: str, y: str, t: str, loc) -> str:
    ct = CTYPES[t]
    is_float = t in ("f32", "f64")
    if op in ("==", "!=", "<", "<=", ">", ">="):
        return f"((uchar)({x} {op} {y}))"
    if op in ("&&", "||"):
        return f"((uchar)({x} {op} {y}))"
    if is_float:
        if op in "+-*/":
            return f"({x} {op} {y})"
        if op == "**":
            return f"pow({x}, {y})"
        if op == "%":
            return f"fmod({x}, {y})"
        raise not_supported(f"operator {op} on {t}", loc)
    if op in ("+", "-", "*") and t in UNSIGNED:  # wrap around without signed-overflow undefinedness
        u = UNSIGNED[t]
        return f"(({ct})(({u}){x} {op} ({u}){y}))"
    if op in ("+", "-", "*", "&", "|", "^", ">>"):
        return f"(({ct})({x} {op} {y}))"
    if op == "<<":
        return f"(({ct})(({UNSIGNED.get(t, ct)}){x} << {y}))"
    if op == "/":
        return f"{t}_floordiv({x}, {y})"
    if op == "%":
        return f"{t}_floormod({x}, {y})"
    if op == "//":
        return f"{t}_quot({x}, {y})"
    if op == "%%":
        return f"{t}_rem({x}, {y})"
    if op == "**":
        return f"{t}_pow({x}, {y})"
    raise not_supported(f"operator {op} on {t}", loc)


FLOAT_FNS = {"sqrt": "sqrt", "exp": "exp", "log": "log", "sin": "sin", "cos": "cos", "tan": "tan",
             "abs": "fabs", "floor": "floor", "ceil": "ceil", "min": "fmin", "max": "fmax", "atan2": "atan2",
             "pow": "pow", "log2": "log2", "log10": "log10", "asin": "asin", "acos": "acos", "atan": "atan",
             "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "round": "rint", "trunc": "trunc", "cbrt": "cbrt",
             "log1p": "log1p", "expm1": "expm1", "hypot": "hypot"}
INT_FNS = {"min": "min", "max": "max", "abs": "abs"}


def primcall(fn: str, args: list, arg_types: list, ret: str, loc) -> str:
    module, name = fn.split(".", 1)
    if name in CTYPES:  # a conversion `T.U`: from U to T
        if module == "bool":
            return f"((uchar)({args[0]} != 0))"
        return f"(({CTYPES[module]})({args[0]}))"
    if name == "sgn":
        return f"(({CTYPES[ret]})(({args[0]} > 0) - ({args[0]} < 0)))"
    if name in ("isnan", "isinf", "isfinite"):
        return f"((uchar){name}({args[0]}))"
    if name == "neg":
        return f"(({CTYPES[ret]})(-{args[0]}))"
    table = FLOAT_FNS if module in ("f32", "f64") else INT_FNS
    if name not in table:
        raise not_supported(f"function {fn} in a kernel", loc)
    if name == "abs" and module.startswith("u"):
        return args[0]
    return f"(({CTYPES[ret]}){table[name]}({', '.join(args)}))"


def neutral_ctypes(op) -> list:
    return [CTYPES[a.type.name] for a in op.neutral]
