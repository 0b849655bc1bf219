"""A kernel as code generation builds it: typed parameter records, the statements of its body, its source.

Each parameter record knows the C declarations it stands for, the type of each (so that the host packs scalar
arguments without looking at C text) and the Python expression the host passes for it at a launch (`host`,
given the launch's `Launch`). Arrays inside kernels are views (`View`): a buffer, an element offset, and a
size and a stride per dimension. A view's strides are `CExpr`s: C text that also carries the Python
expression of the same value on the host, where the host can compute it (the strides of an array it passes),
so that the host can test them without reading C back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Optional

from incflat.codegen.emit import CEmitter
from incflat.codegen.runtime.prims import CTYPE_SIZES

# The type of the kernels' own index arithmetic (flat indices, offsets, strides, block and loop counters):
# 32 bits, as 64-bit multiplications and divisions cost a memory-bound kernel a fifth to a third of its
# speed; a launch whose arrays or iteration space reach the runtime's INDEX32_LIMIT runs the build made with
# INDEX64. The program's own i64 values stay long. Index parameters arrive as long either way.
INDEX = "idx_t"


class CExpr(str):
    """C text for a value, with `host`: the Python expression that computes it on the host, or None."""

    def __new__(cls, c: str, host: Optional[str] = None):
        expr = super().__new__(cls, c)
        expr.host = host
        return expr

    def times(self, factor: str, host: Optional[str]) -> "CExpr":
        """self * factor, known on the host when both are."""
        known = self.host is not None and host is not None
        return CExpr(f"({self}) * ({factor})", f"{self.host} * {host}" if known else None)


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
    return IotaView("", ctype, "0", (n,), ("1",))


@dataclass(frozen=True)
class Launch:
    """What the host knows at a launch, for the parameters' host expressions."""
    outputs: tuple = ()  # the host variables of the segop's results
    dests: tuple = ()  # the host variables of the buffers of partial results
    groups_per_segment: str = "gps"
    scalar: Callable[[str], str] = str  # a host scalar's Python expression (read back if on the device)


# ---- parameter records ----

class KernelParam:
    def declarations(self) -> list:
        raise NotImplementedError

    def arg_types(self) -> list:
        """Per declaration: the primitive type's name of a scalar, None for memory."""
        raise NotImplementedError

    def host(self, launch: Launch) -> str:
        raise NotImplementedError


def index_declaration(name: str) -> str:
    return f"long {name}_arg"


@dataclass(frozen=True)
class IndexParam(KernelParam):
    """A number the kernel's index arithmetic uses: passed as a long, converted to idx_t once."""
    name: str
    source: str  # "segments", "groups_per_segment" or "tile": the host variable that holds it

    def declarations(self):
        return [index_declaration(self.name)]

    def arg_types(self):
        return ["i64"]

    def host(self, launch):
        return launch.groups_per_segment if self.source == "groups_per_segment" else self.source


@dataclass(frozen=True)
class ErrorBuffer(KernelParam):
    def declarations(self):
        return ["__global long *error"]

    def arg_types(self):
        return [None]

    def host(self, launch):
        return "ctx.error_buf"


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

    def declarations(self):
        return ([f"__global {self.ctype} *restrict {self.base}_mem", index_declaration(f"{self.base}_off")]
                + [index_declaration(f"{self.base}_s{i}") for i in range(self.rank)])

    def arg_types(self):
        return [None] + ["i64"] * (self.rank + 1)

    def host(self, launch):
        array = (self.base if self.role == "input" else
                 launch.outputs[self.index] if self.role == "output" else launch.dests[self.index])
        return f"*{array}.{'flat_args' if self.flat else 'kernel_args'}()"


@dataclass(frozen=True)
class ScalarParam(KernelParam):
    """A scalar variable of the host."""
    name: str
    prim: str  # its type's name
    ctype: str

    def declarations(self):
        return [f"{self.ctype} {self.name}"]

    def arg_types(self):
        return ["u8" if self.prim == "bool" else self.prim]  # a bool arrives as a uchar

    def host(self, launch):
        return f"{'float' if self.prim in ('f32', 'f64') else 'int'}({launch.scalar(self.name)})"


@dataclass(frozen=True)
class LocalParam(KernelParam):
    """Local memory: `per_thread` elements for each thread of the workgroup, or, with `tile`, a tile x (tile + 1)
    block (a padding column)."""
    name: str
    ctype: str
    size: int  # bytes of one element
    per_thread: int = 1
    tile: bool = False

    def declarations(self):
        return [f"__local {self.ctype} *{self.name}"]

    def arg_types(self):
        return [None]

    def host(self, launch):
        if self.tile:
            return f"ctx.local(tile * (tile + 1) * {self.size})"
        return f"ctx.local(group_size * {self.per_thread * self.size})"


@dataclass(frozen=True)
class ScratchParam(KernelParam):
    """Memory for an intermediate array: global memory for one per thread (interleaved across the threads),
    or, when shared by a workgroup (the intra-group level), the workgroup's local memory. A workgroup whose
    arrays do not fit fails to launch, and the guard in front of its version falls back to the next."""
    name: str
    ctype: str
    numpy_type: str  # e.g. np.float32
    shape: tuple  # dims: constants, or names of host variables
    shared: bool

    def declarations(self):
        return [f"__{'local' if self.shared else 'global'} {self.ctype} *restrict {self.name}"]

    def arg_types(self):
        return [None]

    def host(self, launch):
        elements = " * ".join(f"int({d})" for d in self.shape) or "1"
        if self.shared:
            return f"ctx.local({elements} * {CTYPE_SIZES[self.ctype]})"
        return f"ctx.scratch(global_size * {elements}, {self.numpy_type})"


@dataclass(frozen=True)
class LookbackParams(KernelParam):
    """A single-pass scan's block statuses, block counters and launch epoch."""

    def declarations(self):
        return ["__global volatile ulong *status", "__global volatile uint *counters", "ulong epoch"]

    def arg_types(self):
        return [None, None, "u64"]

    def host(self, launch):
        return "*ctx.lookback(blocks)"


@dataclass(frozen=True)
class SegmentCounters(KernelParam):
    """A reduction's count of finished workgroups per segment."""

    def declarations(self):
        return ["__global volatile uint *finished"]

    def arg_types(self):
        return [None]

    def host(self, launch):
        return "ctx.segment_counters(segments)"


# ---- kernels ----

@dataclass
class Kernel:
    name: str
    params: list = field(default_factory=list)  # KernelParam records, in order
    preamble: list = field(default_factory=list)  # statements converting the index parameters to idx_t
    body: CEmitter = field(default_factory=lambda: CEmitter(depth=1))
    chunk: int = 1  # elements per thread of a scan kernel: the host sizes its grid by it
    inner_strides: tuple = ()  # a segred's: the strides of the segment's arrays (CExpr)

    def source(self) -> str:
        declarations = ", ".join(d for p in self.params for d in p.declarations())
        body = "\n".join([CEmitter.INDENT + statement for statement in self.preamble] + self.body.lines)
        return f"__kernel void {self.name}({declarations})\n{{\n{body}\n}}\n"

    def arg_types(self) -> tuple:
        return tuple(t for p in self.params for t in p.arg_types())

    def host_args(self, launch: Launch) -> str:
        """The Python list of the launch's arguments."""
        return "[" + ", ".join(p.host(launch) for p in self.params) + "]"


class ErrorTable(list):
    """The run-time errors a program's kernels can report, as (where, message template); with
    checks=False (`incflat compile --unsafe`) kernels check nothing."""

    def __init__(self, checks: bool = True):
        super().__init__()
        self.checks = checks
