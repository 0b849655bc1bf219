"""A kernel as code generation builds it: typed parameter records, the statements of its body, its source.

Each parameter record knows the C declarations of its memory arguments, its scalars (typed `ScalarField`s, which
travel in one struct argument per kernel, so that the host packs them without looking at C text) and the host
IR expressions (ir/host.py) the host passes for both at a launch (given the launch's `Launch`). Arrays inside
kernels are views (`View`): a buffer, an element offset, and a size and a stride per dimension. A view's
strides are `CExpr`s: C text that also carries the host IR expression of the same value, where the host can
compute it (the strides of an array it passes), so that the host can test them without reading C back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from incflat.codegen.emit import CEmitter
from incflat.ir import host as H
from incflat.ir.runtime.prims import CTYPE_SIZES, PRIMS

# The type of the kernels' own index arithmetic (flat indices, offsets, strides, block and loop counters):
# 32 bits, as a GPU does 64-bit integer multiplications and divisions in several instructions each, which
# slows even a memory-bound kernel; a launch whose arrays or iteration space reach the runtime's INDEX32_LIMIT
# runs the build made with INDEX64. The program's own i64 values stay long. Index parameters arrive as long
# either way.
INDEX = "idx_t"
SCALARS = "incflat_scalars"  # the name of a kernel's struct of scalars


class CExpr(str):
    """C text for a value, with `host`: the host IR expression that computes it on the host, or None."""

    def __new__(cls, c: str, host: Optional[str] = None):
        expr = super().__new__(cls, c)
        expr.host = host
        return expr

    def times(self, factor: str, host) -> "CExpr":
        """self * factor, known on the host when both are."""
        known = self.host is not None and host is not None
        return CExpr(f"({self}) * ({factor})", H.Op("*", self.host, host) if known else None)


@dataclass
class View:
    """An array inside a kernel."""
    mem: str
    ctype: str
    offset: str
    dims: tuple  # C expressions
    strides: tuple  # C expressions (CExpr where the host knows them)

    def elem(self, idxs) -> str:
        terms = [self.offset] + [f"({i}) * ({s})" for i, s in zip(idxs, self.strides)]
        return f"{self.mem}[{' + '.join(terms)}]"

    def slice(self, idxs) -> "View":
        k = len(idxs)
        off = " + ".join([self.offset] + [f"({i}) * ({s})" for i, s in zip(idxs, self.strides)])
        return replace(self, offset=f"({off})", dims=self.dims[k:], strides=self.strides[k:])


@dataclass
class IotaView(View):
    """`iota n` inside a kernel: a view of no memory whose element at position p is p (so `offset` and
    `strides`, which slices and rearranges change as for any view, give the value)."""

    def elem(self, idxs) -> str:
        terms = [self.offset] + [f"({i}) * ({s})" for i, s in zip(idxs, self.strides)]
        return f"(({self.ctype})({' + '.join(terms)}))"


def iota_view(n: str, ctype: str) -> IotaView:
    return IotaView("", ctype, "0", (n,), (CExpr("1", H.Lit(1)),))  # a unit stride the host knows too


@dataclass
class ReplicateView(View):
    """`replicate n x` of a scalar x inside a kernel: a view of no memory whose every element is `value`, x's C
    expression (which slices and rearranges keep)."""
    value: str = "0"

    def elem(self, idxs) -> str:
        return f"(({self.ctype})({self.value}))"


def replicate_view(dims: tuple, ctype: str, value: str) -> ReplicateView:
    return ReplicateView("", ctype, "0", dims, tuple(CExpr("0", H.Lit(0)) for _ in dims), value)


@dataclass(frozen=True)
class Launch:
    """What the host knows at a launch, for the parameters' host expressions."""
    outputs: tuple = ()  # the host variables of the segop's results
    dests: tuple = ()  # the host variables of the buffers of partial results
    groups_per_segment: str = "gps"
    scalar: Callable[[str], object] = H.Var  # a host scalar's expression (read back if on the device)


# ---- parameter records ----

@dataclass(frozen=True)
class ScalarField:
    """A scalar argument: one field of the struct that carries all of a kernel's scalars (each argument adds
    to the cost of a launch, and one struct costs about as much as one argument)."""
    ctype: str
    name: str
    prim: str  # the type's name the host packs it as

    @property
    def size(self) -> int:
        return PRIMS[self.prim].size


class KernelParam:
    """A parameter's memory arguments (buffers and local memory, each its own kernel argument) and scalars
    (fields of the kernel's struct argument), with the Python expressions the host passes for them."""

    def memory(self) -> list:
        """C declarations of the memory arguments."""
        return []

    def scalars(self) -> list:
        """ScalarFields, all of one size (so that ordering the struct's fields keeps a parameter's together)."""
        return []

    def host_memory(self, launch: Launch) -> list:
        return []

    def host_scalars(self, launch: Launch) -> list:
        return []

    def loads(self) -> list:
        """C statements at the kernel's start that bind the parameter's name from its memory."""
        return []


def index_field(name: str) -> ScalarField:
    return ScalarField("long", f"{name}_arg", "i64")


@dataclass(frozen=True)
class IndexParam(KernelParam):
    """A number the kernel's index arithmetic uses: passed as a long, converted to idx_t once."""
    name: str
    source: str  # "segments", "groups_per_segment" or "tile": the host variable that holds it

    def scalars(self):
        return [index_field(self.name)]

    def host_scalars(self, launch):
        return [H.Var(launch.groups_per_segment if self.source == "groups_per_segment" else self.source)]


@dataclass(frozen=True)
class ErrorBuffer(KernelParam):
    def memory(self):
        return ["__global long *error"]

    def host_memory(self, launch):
        return [H.Field("error_buf")]


@dataclass(frozen=True)
class ArrayParam(KernelParam):
    """An array view: its buffer, offset and strides. `role` says where the host takes it from: an array
    variable of the host (`input`), the i'th result of the segop (`output`), or the i'th buffer of partial
    results (`dest`); `flat` passes a contiguous array as one dimension."""
    base: str
    ctype: str
    rank: int
    role: str  # "input", "output" or "dest"
    index: int = 0
    flat: bool = False

    def memory(self):
        return [f"__global {self.ctype} *restrict {self.base}_mem"]

    def scalars(self):
        return [index_field(f"{self.base}_off")] + [index_field(f"{self.base}_s{i}") for i in range(self.rank)]

    def array(self, launch):
        return (self.base if self.role == "input" else
                launch.outputs[self.index] if self.role == "output" else launch.dests[self.index])

    def host_memory(self, launch):
        return [H.Buffer(H.Var(self.array(launch)))]

    def host_scalars(self, launch):
        return [H.IndexArgs(H.Var(self.array(launch)), self.flat)]


@dataclass(frozen=True)
class ScalarParam(KernelParam):
    """A scalar variable of the host."""
    name: str
    prim: str  # its type's name
    ctype: str

    def scalars(self):
        return [ScalarField(self.ctype, self.name, "u8" if self.prim == "bool" else self.prim)]  # bool: a uchar

    def host_scalars(self, launch):
        return [H.Call("float" if self.prim in ("f32", "f64") else "int", (launch.scalar(self.name),))]


@dataclass(frozen=True)
class DeviceScalarParam(KernelParam):
    """A scalar of the host that another kernel left in device memory (a segop's rank-0 result, at offset 0:
    codegen.lower.device_scalars), read by every thread at the kernel's start: passed by value, the host would first
    wait to read it back."""
    name: str
    ctype: str

    def memory(self):
        return [f"__global const {self.ctype} *restrict {self.name}_dev"]

    def loads(self):
        return [f"const {self.ctype} {self.name} = {self.name}_dev[0];"]

    def host_memory(self, launch):
        return [H.Buffer(H.Var(self.name))]


@dataclass(frozen=True)
class LocalParam(KernelParam):
    """Local memory: `per_thread` elements for each thread of the workgroup, or, with `tile`, a tile x (tile + 1)
    block (a padding column)."""
    name: str
    ctype: str
    size: int  # bytes of one element
    per_thread: int = 1
    tile: bool = False

    def memory(self):
        return [f"__local {self.ctype} *{self.name}"]

    def host_memory(self, launch):
        if self.tile:
            tile = H.Var("tile")
            return [H.Call("ctx.local", (H.product([tile, H.Op("+", tile, H.Lit(1)), H.Lit(self.size)]),))]
        return [H.Call("ctx.local", (H.Op("*", H.Var("group_size"), H.Lit(self.per_thread * self.size)),))]


@dataclass(frozen=True)
class ScratchParam(KernelParam):
    """Memory for an intermediate array: global memory for one per thread (interleaved across the threads),
    or, when shared by a workgroup (the intra-group level), the workgroup's local memory. A workgroup whose
    arrays do not fit fails to launch, and the guard in front of its version falls back to the next."""
    name: str
    ctype: str
    prim: str  # the elements' type: f32
    shape: tuple  # dims: constants, names of host variables, or host expressions of them (ir.host)
    shared: bool

    def memory(self):
        return [f"__{'local' if self.shared else 'global'} {self.ctype} *restrict {self.name}"]

    def host_memory(self, launch):
        elements = [H.Call("int", (H.Lit(d) if isinstance(d, int) else H.Var(d) if isinstance(d, str) else d,))
                    for d in self.shape] or [H.Lit(1)]
        if self.shared:
            return [H.Call("ctx.local", (H.product(elements + [H.Lit(CTYPE_SIZES[self.ctype])]),))]
        return [H.Call("ctx.scratch", (H.product([H.Var("global_size")] + elements), H.Dtype(self.prim)))]


@dataclass(frozen=True)
class LookbackParams(KernelParam):
    """A single-pass scan's block statuses, block counters and launch epoch."""

    def memory(self):
        return ["__global volatile ulong *status", "__global volatile uint *counters"]

    def scalars(self):
        return [ScalarField("ulong", "epoch", "u64")]

    def host_memory(self, launch):  # starts a new epoch: the host passes memory before scalars
        return [H.Spread(H.Call("ctx.lookback", (H.Var("blocks"),)))]

    def host_scalars(self, launch):
        return [H.Call("ctx.scan_epoch")]


@dataclass(frozen=True)
class SegmentCounters(KernelParam):
    """A reduction's count of finished workgroups per segment."""

    def memory(self):
        return ["__global volatile uint *finished"]

    def host_memory(self, launch):
        return [H.Call("ctx.segment_counters", (H.Var("segments"),))]


# ---- kernels ----

@dataclass
class Kernel:
    name: str
    params: list = field(default_factory=list)  # KernelParam records, in order
    preamble: list = field(default_factory=list)  # statements converting the index parameters to idx_t
    body: CEmitter = field(default_factory=lambda: CEmitter(depth=1))
    chunk: int = 1  # elements per thread of a scan kernel: the host sizes its grid by it
    inner_strides: tuple = ()  # a segred's: the strides of the segment's arrays (CExpr)

    def scalar_params(self) -> list:
        """The parameters with scalars, in the struct's order: the widest first, so that no field needs
        padding before it."""
        return sorted((p for p in self.params if p.scalars()), key=lambda p: -p.scalars()[0].size)

    def scalar_fields(self) -> list:
        return [f for p in self.scalar_params() for f in p.scalars()]

    def scalar_prims(self) -> tuple:
        return tuple(f.prim for f in self.scalar_fields())

    def source(self) -> str:
        fields = self.scalar_fields()
        declarations = [d for p in self.params for d in p.memory()]
        unpack = []
        struct = ""
        if fields:
            struct = (f"typedef struct {{ {' '.join(f'{f.ctype} {f.name};' for f in fields)} }} "
                      f"{self.name}_scalars;\n")
            declarations.append(f"const {self.name}_scalars {SCALARS}")
            unpack = [f"const {f.ctype} {f.name} = {SCALARS}.{f.name};" for f in fields]
        loads = [statement for p in self.params for statement in p.loads()]
        body = "\n".join([CEmitter.INDENT + statement for statement in unpack + loads + self.preamble]
                         + self.body.lines)
        return f"{struct}__kernel void {self.name}({', '.join(declarations)})\n{{\n{body}\n}}\n"

    def reading_on_device(self, names) -> None:
        """Takes the scalars named in `names`, which the host keeps in device memory, as buffers."""
        self.params = [DeviceScalarParam(p.name, p.ctype) if isinstance(p, ScalarParam) and p.name in names else p
                       for p in self.params]

    def host_args(self, launch: Launch) -> tuple:
        """The launch's memory arguments (a host IR list) and scalars (a tuple, in the struct's order)."""
        memory = [m for p in self.params for m in p.host_memory(launch)]
        scalars = [s for p in self.scalar_params() for s in p.host_scalars(launch)]
        return H.List(tuple(memory)), H.Tuple(tuple(scalars))


class ErrorTable(list):
    """The run-time errors a program's kernels can report, as (where, message template); with
    checks=False (`incflat compile --unsafe`) kernels check nothing."""

    def __init__(self, checks: bool = True):
        super().__init__()
        self.checks = checks
