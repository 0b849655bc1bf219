"""`reduce_by_index` (and `hist`, which the front end lowers to it): the histogram kernels of the host level.

The bins are a copy of the destination made just before the launch (or the destination itself where
nothing else reads its buffer). Values are combined into a bin atomically: with a native atomic where the
operator has one (integer `+` on 32 and 64 bits; `min`, `max`, `&`, `|`, `^` on 32-bit integers), else with a
compare-and-swap loop on the bin's bits, into which the operator is inlined. Indices that are negative or
not below the number of bins are ignored, as in Futhark.

Two kernels, the host picks one per launch: `global` (a thread per element, straight into the bins), and
`local`, for bins that fit in local memory and are few against the elements: each workgroup folds a
grid-stride share of the elements into its own sub-histogram in local memory (starting from the neutral
element, as Futhark's does), then combines it into the bins, so that contention on few bins stays within
workgroups."""

from dataclasses import dataclass

from incflat.codegen.cscalar import CTYPES
from incflat.codegen.kernel import INDEX, Kernel, KernelParam
from incflat.codegen.opencl import KernelWriter
from incflat.ir.runtime.prims import PRIMS
from incflat.ir import host as H
from incflat.ir import source as S
from incflat.ir.analysis import free_in_body, free_in_exp
from incflat.ir.errors import Unsupported
from incflat.ir.types import Scalar

# The native atomics OpenCL has, by the bin's size in bytes: operator -> function.
NATIVE_ATOMICS = {4: {"+": "atomic_add", "min": "atomic_min", "max": "atomic_max", "&": "atomic_and",
                      "|": "atomic_or", "^": "atomic_xor"},
                  8: {"+": "atom_add"}}  # cl_khr_int64_base_atomics
# For the compare-and-swap loop: the bits' C type, and how a value becomes its bits and back.
BITS = {"i32": ("uint", "(uint)({})", "(int)({})"), "u32": ("uint", "({})", "({})"),
        "f32": ("uint", "as_uint({})", "as_float({})"), "i64": ("ulong", "(ulong)({})", "(long)({})"),
        "u64": ("ulong", "({})", "({})"), "f64": ("ulong", "as_ulong({})", "as_double({})")}
COMPARE_AND_SWAP = {"uint": "atomic_cmpxchg", "ulong": "atom_cmpxchg"}


def require_histogram_type(e: S.Hist, loc):
    """The bins must be 32- or 64-bit numbers: the sizes that OpenCL's atomics work on."""
    name = e.dest.type.elem.name
    if name not in BITS:
        raise Unsupported(f"reduce_by_index (or hist) on an array of {name} (the backend needs 32- or 64-bit "
                          f"numbers)", loc)


def native_atomic(lam: S.Lambda):
    """The name of the operator when the lambda is one built-in operator applied to its two parameters:
    "+", "min", "&", ...; else None."""
    if len(lam.params) != 2 or len(lam.body.stms) != 1 or lam.body.stms[0].pat != lam.body.result:
        return None
    e = lam.body.stms[0].exp
    if isinstance(e, S.BinOp):
        op, operands = e.op, (e.x, e.y)
    elif isinstance(e, S.PrimCall) and e.fn.split(".")[-1] in ("min", "max"):
        op, operands = e.fn.split(".")[-1], e.args
    else:
        return None
    names = [getattr(a, "name", None) for a in operands]
    return op if set(names) == {p.name for p in lam.params} and names[0] != names[1] else None


@dataclass(frozen=True)
class LocalBins(KernelParam):
    """Local memory for a workgroup's sub-histogram: as many elements as the bins (output 0) has."""
    name: str
    ctype: str
    size: int  # bytes of one element

    def memory(self):
        return [f"__local {self.ctype} *{self.name}"]

    def host_memory(self, launch):
        return [H.Call("ctx.local", (H.Op("*", H.Shape(H.Var(launch.outputs[0]), 0), H.Lit(self.size)),))]


def combine_atomically(w: KernelWriter, lam: S.Lambda, bin_ref: str, value: str, type_name: str, loc,
                       space: str = "__global"):
    """Emits bin = bin `lam` value, atomically: bin_ref is the C lvalue of the bin, in address space `space`."""
    prim = PRIMS[type_name]
    native = NATIVE_ATOMICS[prim.size].get(native_atomic(lam)) if prim.is_int else None
    if native is not None:
        w.emit(f"{native}((volatile {space} {prim.ctype} *)&{bin_ref}, {value});")
        return
    bits, to_bits, from_bits = BITS[type_name]
    where = w.declare(f"volatile {space} {bits} *", f"(volatile {space} {bits} *)&{bin_ref}", "bin")
    old = w.declare(bits, f"*{where}", "old")
    with w.block("for (;;)"):
        current = w.declare(prim.ctype, from_bits.format(old), "current")
        (combined,) = w.apply_red(lam, [current], [value], loc)
        seen = w.declare(bits, f"{COMPARE_AND_SWAP[bits]}({where}, {old}, {to_bits.format(combined)})", "seen")
        w.emit(f"if ({seen} == {old}) break;")
        w.emit(f"{old} = {seen};")


def histogram_kernel(name: str, e: S.Hist, loc, errors, local: bool) -> Kernel:
    """The kernel (`local` or `global`, see above) of a reduce_by_index at the host level; the bins are its
    output 0, which the host fills with the destination's elements first."""
    require_histogram_type(e, loc)
    w = KernelWriter(name, errors)
    used = free_in_exp(e)
    if e.dest.name not in free_in_body(e.lam.body):
        del used[e.dest.name]  # the bins hold its elements: the kernel's output
    for v in sorted(used.values(), key=lambda v: not (isinstance(v.type, Scalar) and v.type.name == "i64")):
        w.input_var(v)  # sizes first: the arrays' views mention them
    bins = w.output_param(0, e.types[0])
    t = e.dest.type.elem.name
    ctype = CTYPES[t]
    width = w.atom(e.width)
    count = w.declare("long", f"(long)({bins.dims[0]})", "bins")

    def each_element(k: str, combine):
        index = w.declare("long", w.env[e.idxs.name].elem([k]), "index")
        value = w.declare(ctype, w.env[e.vals.name].elem([k]), "value")
        with w.block(f"if ({index} >= 0 && {index} < {count})"):
            combine(index, value)

    if not local:
        gtid = w.declare(INDEX, "get_global_id(0)", "gtid")
        w.emit(f"if ({gtid} >= {width}) return;")
        each_element(gtid, lambda i, v: combine_atomically(w, e.lam, bins.elem([i]), v, t, loc))
        return w.k
    sub = w.fresh("sub_histogram")
    w.k.params.append(LocalBins(sub, ctype, PRIMS[t].size))
    lid, lsize = w.declare(INDEX, "get_local_id(0)", "lid"), w.declare(INDEX, "get_local_size(0)", "lsize")
    j = w.fresh("j")
    with w.block(f"for (long {j} = {lid}; {j} < {count}; {j} += {lsize})"):
        w.emit(f"{sub}[{j}] = {w.atom(e.neutral[0])};")
    w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
    k = w.fresh("k")
    with w.block(f"for ({INDEX} {k} = get_global_id(0); {k} < {width}; {k} += get_global_size(0))"):
        each_element(k, lambda i, v: combine_atomically(w, e.lam, f"{sub}[{i}]", v, t, loc, "__local"))
    w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
    with w.block(f"for (long {j} = {lid}; {j} < {count}; {j} += {lsize})"):
        combine_atomically(w, e.lam, bins.elem([j]), f"{sub}[{j}]", t, loc)
    return w.k
