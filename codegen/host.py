"""The host program: Python that runs the target IR's host-level code (sizes, guards, control flow) and
launches the kernels, assembled with the runtime into one executable file (DESIGN §6)."""

import dataclasses
import pathlib
import re

from codegen import opencl, segops, tiling
from codegen.opencl import not_supported
from flatten.thresholds import thresholds
from ir.errors import CompileError
from ir.rename import rename_interfaces
from ir import source as S
from ir import target as T
from ir.types import Array, Scalar, unsized_name

NP_TYPES = {"i8": "np.int8", "i16": "np.int16", "i32": "np.int32", "i64": "np.int64", "u8": "np.uint8",
            "u16": "np.uint16", "u32": "np.uint32", "u64": "np.uint64", "f32": "np.float32",
            "f64": "np.float64", "bool": "np.bool_"}
NP_STORAGE = dict(NP_TYPES, bool="np.uint8")  # kernel arguments: OpenCL has no bool arguments

TUNED_BEGIN = "# BEGIN INCFLAT TUNED DEFAULTS"
TUNED_END = "# END INCFLAT TUNED DEFAULTS"


class HostWriter:
    def __init__(self, checks: bool = True):
        self.lines = []
        self.kernels = []  # opencl.Kernel
        self.indent = 1
        self.device_scalars = set()  # scalars a kernel left in device memory: read back only where used
        self.errors = opencl.ErrorTable(checks)
        self.entry_name = None
        self.size_params = []  # (name, class) of the workgroup and grid sizes, tuning parameters too

    def emit(self, line: str):
        self.lines.append("    " * self.indent + line)

    def kernel_name(self, kind: str) -> str:
        return f"{kind}_{len(self.kernels)}"

    # ---- atoms ----

    def atom(self, a) -> str:
        if isinstance(a, S.Const):
            if a.type.name == "bool":
                return f"np.bool_({bool(a.value)})"
            value = f"float({str(a.value)!r})" if a.type.is_float else repr(a.value)  # inf and nan too
            return f"{NP_TYPES[a.type.name]}({value})"
        if a.name in self.device_scalars:
            return f"to_host(ctx, {a.name})"
        return a.name

    def dim(self, d) -> str:
        return str(d) if isinstance(d, int) else d

    def shape(self, t) -> str:
        return "(" + "".join(f"{self.dim(d)}, " for d in t.shape) + ")" if isinstance(t, Array) else "()"

    # ---- entries ----

    def group_size(self, kernel: str, kernels: list) -> str:
        """The workgroup size of a segop's kernels: its own tuning parameter, else the device default, and
        no more than every one of them can be launched with (registers)."""
        name = f"{self.entry_name}.{kernel}_tblock_size"
        self.size_params.append((name, "thread_block_size"))
        names = tuple(k.name for k in kernels)
        return f"group_size = ctx.kernel_group_size({names!r}, ctx.size({name!r}, ctx.group_size, ctx.max_group_size))"

    def groups_per_segment(self, kernel: str, how: str = "groups_per_segment") -> str:
        """How many workgroups (or threads) share a segment, from the kernel's grid size."""
        name = f"{self.entry_name}.{kernel}_num_tblocks"
        if (name, "grid_size") not in self.size_params:
            self.size_params.append((name, "grid_size"))
        return f"gps = {how}(segments, width, ctx.size({name!r}, ctx.num_groups, 2 ** 31 - 1), group_size)"

    def entry(self, f: S.FunDef):
        self.entry_name = f.name
        self.emit_line0(f"def entry_{f.name}(ctx, {', '.join(p.name for p in f.params)}):")
        bound = set()
        for p in f.params:
            if isinstance(p.type, Array):
                for k, d in enumerate(p.type.shape):
                    if isinstance(d, str) and d not in bound:
                        self.emit(f"{d} = np.int64({p.name}.shape[{k}])")
                        bound.add(d)
                    else:
                        self.emit(f"check_size({d}, {p.name}.shape[{k}], {source_name(str(d))!r}, "
                                  f"{source_name(p.name)!r})")
        self.body(f.body)
        self.emit(f"return ({''.join(self.atom(a) + ', ' for a in f.body.result)})")

    def emit_line0(self, line: str):
        self.lines.append(line)

    def body(self, body: S.Body):
        for stm in body.stms:
            self.stm(stm)

    def stm(self, stm: S.Stm):
        e, pat = stm.exp, stm.pat
        names = ", ".join(p.name for p in pat)
        if isinstance(e, S.AtomExp):
            self.coercion_checks(pat[0], e.x, stm)
            self.emit(f"{names} = {self.atom(e.x)}")
        elif isinstance(e, S.BinOp):
            self.emit(f"{names} = {self.binop(e)}")
        elif isinstance(e, S.UnOp):
            x = self.atom(e.x)
            op = {"neg": "-", "!": "not ", "~": "~"}[e.op]
            self.emit(f"{names} = {NP_TYPES[e.type.name]}({op}{x})")
        elif isinstance(e, S.PrimCall):
            self.emit(f"{names} = prim_call({e.fn!r}, {NP_TYPES[e.type.name]}, "
                      f"{', '.join(self.atom(a) for a in e.args)})")
        elif isinstance(e, S.Rearrange):
            self.emit(f"{names} = {e.arr.name}.permute({tuple(e.perm)!r})")
        elif isinstance(e, S.Iota):
            self.emit(f"{names} = ctx.to_device(np.arange({self.atom(e.n)}, dtype={NP_TYPES[e.elem.name]}))")
        elif isinstance(e, S.Replicate):
            t = pat[0].type
            self.emit(f"{names} = ctx.to_device(np.broadcast_to(to_host(ctx, {self.atom(e.x)}), "
                      f"{self.shape(t)}).astype({NP_TYPES[t.elem.name]}))")
        elif isinstance(e, S.Index):
            idxs = "".join((f"({self.atom(i.start)}, {self.atom(i.end)}, {self.atom(i.stride)}, {self.atom(i.size)})"
                            if isinstance(i, S.DimSlice) else self.atom(i)) + ", " for i in e.idxs)
            self.emit(f"{names} = index(ctx, {e.arr.name}, ({idxs}), {where(stm)})")
        elif isinstance(e, S.Update):
            idxs = "".join(self.atom(i) + ", " for i in e.idxs)
            self.emit(f"{names} = update(ctx, {e.arr.name}, ({idxs}), {self.atom(e.value)}, {where(stm)})")
        elif isinstance(e, S.ArrayLit):
            t = pat[0].type
            self.emit(f"{names} = array_literal(ctx, [{', '.join(self.atom(a) for a in e.elems)}], "
                      f"{NP_TYPES[t.elem.name]}, {where(stm)})")
        elif isinstance(e, S.Concat):
            self.emit(f"{names} = concat(ctx, [{', '.join(a.name for a in e.arrs)}], {self.atom(e.size)}, "
                      f"{where(stm)})")
        elif isinstance(e, S.Rotate):
            self.emit(f"{names} = rotate(ctx, {self.atom(e.amount)}, {e.arr.name})")
        elif isinstance(e, S.Reshape):
            shape = "".join(self.atom(a) + ", " for a in e.shape)
            self.emit(f"{names} = reshape(ctx, ({shape}), {e.arr.name}, {where(stm)})")
        elif isinstance(e, S.Scatter):
            self.emit(f"{names} = scatter(ctx, {e.dest.name}, {e.idxs.name}, {e.vals.name})")
        elif isinstance(e, S.Loop):
            self.loop(e, pat)
        elif isinstance(e, S.Filter):  # the predicate in a kernel, the compaction on the host
            flags = S.Var(f"{pat[0].name}_flags", Array(Scalar("bool"), (S.dim_of(e.width),)))
            self.segmap(T.SegMap(1, (T.Binding(e.width, e.lam.params, e.arrs),), e.lam.body, (flags.type,)),
                        (flags,), stm.loc)
            self.emit(f"{names}, = compact(ctx, {flags.name}, [{', '.join(a.name for a in e.arrs)}])")
        elif isinstance(e, S.If):
            self.emit(f"if {self.atom(e.cond)}:")
            self.branch(e.then, pat)
            self.emit("else:")
            self.branch(e.else_, pat)
        elif isinstance(e, T.Guard):
            par = " * ".join(f"int({self.atom(a)})" for a in e.par)
            cond = f"ctx.cmp({e.threshold!r}, {par})"
            enter = f"ctx.enter({e.threshold!r}, {{}}, {par})"
            if e.kind == "outer":
                self.emit(f"if {cond}:")
                self.branch(e.then, pat, enter.format(True))
                self.emit("else:")
                self.branch(e.else_, pat, enter.format(False))
            else:  # a workgroup-level version the device cannot launch falls back to the next version
                done = f"done_{e.threshold.replace('.', '_')}"
                self.emit(f"{done} = False")
                self.emit(f"if {cond} and ctx.fits_group({par}, {e.local_bytes}):")
                self.indent += 1
                self.emit("try:")
                self.branch(e.then, pat, enter.format(True))
                self.emit(f"    {done} = True")
                self.emit("except (cl.Error, KernelUnavailable) as failure:")
                self.emit("    ctx.leave()")
                self.emit(f"    ctx.warn_once({e.threshold!r}, failure)")
                self.indent -= 1
                self.emit(f"if not {done}:")
                self.branch(e.else_, pat, enter.format(False))
        elif isinstance(e, T.SegMap):
            self.segmap(e, pat, stm.loc)
        elif isinstance(e, T.SegRed):
            self.segred(e, pat, stm.loc)
        elif isinstance(e, T.SegScan):
            self.segscan(e, pat, stm.loc)
        else:
            raise not_supported(f"{opencl.source_name(e)} at the top level of an entry point", stm.loc)

    def coercion_checks(self, target: S.Var, source, stm: S.Stm):
        """`y :> [n]t`: the array must have the sizes its new type claims."""
        if not isinstance(target.type, Array):
            return
        for k, (new, old) in enumerate(zip(target.type.shape, source.type.shape)):
            if new != old:
                self.emit(f"check_coercion({self.dim(new)}, {source.name}, {k}, {where(stm)})")

    def loop(self, e: S.Loop, pat):
        params = [p.name for p in e.params]
        self.emit(f"{', '.join(params)}, = {', '.join(self.atom(a) for a in e.init)},")
        if isinstance(e.form, S.ForLoop):
            i = e.form.i
            self.emit(f"for {i.name} in range(int({self.atom(e.form.bound)})):")
            self.indent += 1
            self.emit(f"{i.name} = {NP_TYPES[i.type.name]}({i.name})")
            self.loop_sizes(e)
        else:
            self.emit("while True:")
            self.indent += 1
            self.loop_sizes(e)
            self.body(e.form.cond)
            self.emit(f"if not {self.atom(e.form.cond.result[0])}:")
            self.emit("    break")
        self.body(e.body)
        self.emit(f"{', '.join(params)}, = {', '.join(self.atom(a) for a in e.body.result)},")
        self.indent -= 1
        self.loop_sizes(e)
        final = [f"np.int64({n})" for n in e.size_params] + params
        self.emit(f"{', '.join(p.name for p in pat)}, = {', '.join(final)},")

    def loop_sizes(self, e: S.Loop):
        """Binds the loop's size parameters from the current parameters' shapes."""
        for n in e.size_params:
            for p in e.params:
                if isinstance(p.type, Array) and n in p.type.shape:
                    self.emit(f"{n} = np.int64({p.name}.shape[{p.type.shape.index(n)}])")
                    break

    def branch(self, body: S.Body, pat, enter: str = None):
        """A branch binding pat to its results; `enter` (and a leave after it) marks a version for -P."""
        self.indent += 1
        if enter:
            self.emit(enter)
        self.body(body)
        self.emit(f"{', '.join(p.name for p in pat)} = {', '.join(self.atom(a) for a in body.result)}")
        if enter:
            self.emit("ctx.leave()")
        self.indent -= 1

    def binop(self, e: S.BinOp) -> str:
        x, y, t = self.atom(e.x), self.atom(e.y), e.x.type
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            return f"np.bool_({x} {e.op} {y})"
        if e.op in ("&&", "||"):
            return f"np.bool_({x} {'and' if e.op == '&&' else 'or'} {y})"
        if t.is_float:
            if e.op == "%":
                return f"{NP_TYPES[t.name]}(np.fmod({x}, {y}))"
            return f"{NP_TYPES[t.name]}({x} {e.op} {y})"
        if e.op in ("/", "%", "//", "%%"):
            return f"int_div({x}, {y}, {e.op!r})"
        return f"wrap({NP_TYPES[t.name]}, int({x}) {e.op} int({y}))"

    # ---- segops ----

    def alloc_outputs(self, pat, types) -> list:
        self.device_scalars |= {p.name for p, t in zip(pat, types) if not isinstance(t, Array)}
        for p, t in zip(pat, types):
            self.emit(f"{p.name} = ctx.empty({self.shape(t)}, {NP_TYPES[opencl_elem(t)]})")
        return [p.name for p in pat]

    def args(self, kernel: opencl.Kernel, outs: list, dests=None, gps=None) -> str:
        parts = []
        for kind, payload in kernel.args:
            if kind == "view":
                parts.append(f"*{payload}.kernel_args()")
            elif kind == "scalar":
                name, t = payload  # a Python number: the launch converts it to the parameter's type
                value = f"to_host(ctx, {name})" if name in self.device_scalars else name
                parts.append(f"{'float' if t in ('f32', 'f64') else 'int'}({value})")
            elif kind == "out":
                parts.append(f"*{outs[payload]}.kernel_args()")
            elif kind == "dest":
                parts.append(f"*{dests[payload]}.flat_args()")
            elif kind == "flat_out":
                parts.append(f"*{outs[payload]}.flat_args()")
            elif kind == "segments":
                parts.append("segments")
            elif kind == "lookback":
                parts.append("*ctx.lookback(blocks)")
            elif kind == "segment_counters":
                parts.append("ctx.segment_counters(segments)")
            elif kind == "error":
                parts.append("ctx.error_buf")
            elif kind == "groups_per_segment":
                parts.append(gps)
            elif kind == "local":
                ctype, per_thread = payload
                parts.append(f"ctx.local(group_size * {per_thread * ctype_size(ctype)})")
            elif kind == "tile":
                parts.append("tile")
            elif kind == "tile_local":  # a tile x (tile + 1) block of one array
                parts.append(f"ctx.local(tile * (tile + 1) * {ctype_size(payload)})")
            elif kind == "scratch":  # intermediate arrays: a region per thread (or per workgroup)
                elem, shape, shared = payload
                owners = "global_size // group_size" if shared else "global_size"
                size = " * ".join([owners] + [f"int({self.dim(d)})" for d in shape])
                parts.append(f"ctx.scratch({size}, {NP_TYPES[elem]})")
        return "[" + ", ".join(parts) + "]"

    def launch(self, kernel: opencl.Kernel, global_size: str, args: str, reach: str, indent: int = 0):
        """reach: a bound on the flat indices the kernel forms (its iteration space, and how far past it a
        thread's last look-ahead goes), which picks the kernel's index type."""
        pad = "    " * indent
        self.emit(f"{pad}global_size = {global_size}")
        self.emit(f"{pad}ctx.launch({kernel.name!r}, global_size, group_size, {args}, {reach})")

    def segmap(self, e: T.SegMap, pat, loc):
        name = self.kernel_name("segmap")
        plan = tiling.tile_plan(e)
        if plan:
            return self.tiled_segmap(name, e, plan, pat)
        k = segops.segmap_kernel(name, e, loc, self.errors)
        self.kernels.append(k)
        outs = self.alloc_outputs(pat, e.types)
        self.emit("space = " + " * ".join(f"int({self.atom(b.width)})" for b in e.ctx))
        level0 = [s.exp for s in e.body.stms if isinstance(s.exp, T.SEGOPS)]  # the intra-group version
        if level0:  # a workgroup per point, as wide as the widest level-0 segop
            widths = ", ".join(" * ".join(f"int({self.atom(b.width)})" for b in op.ctx) for op in level0)
            self.emit(f"group_size = min(max({widths}, 1), ctx.max_group_size)")
            self.launch(k, "space * group_size", self.args(k, outs), "space")
        else:
            self.emit(self.group_size(name, [k]))
            self.launch(k, "ceil_div(space, group_size) * group_size", self.args(k, outs), "space")

    def tiled_segmap(self, name: str, e: T.SegMap, plan, pat):
        """A workgroup of tile x tile threads a block of the two innermost dimensions."""
        k = tiling.tiled_segmap_kernel(name, e, plan, self.errors)
        self.kernels.append(k)
        outs = self.alloc_outputs(pat, e.types)
        param = f"{self.entry_name}.{name}_tile_size"
        self.size_params.append((param, "tile_size"))
        widths = [f"int({self.atom(b.width)})" for b in e.ctx]
        self.emit(f"tile = ctx.tile_size({name!r}, {param!r})")
        self.emit("group_size = tile * tile")
        self.emit(f"space = {' * '.join(widths)}")
        blocks = " * ".join(widths[:-2] + [f"ceil_div({w}, tile)" for w in widths[-2:]])
        self.launch(k, f"{blocks} * group_size", self.args(k, outs), "space")

    def segscan(self, e: T.SegScan, pat, loc):
        name = self.kernel_name("segscan")
        kernels = segops.segscan_kernels(name, e, loc, self.errors)
        self.kernels += kernels
        scan = kernels[-1]
        outs = self.alloc_outputs(pat, e.types)
        total = " * ".join(f"int({self.atom(b.width)})" for b in e.ctx)
        per_thread = sum(ctype_size(c) * (scan.chunk + 2) + 1 for c in opencl.neutral_ctypes(e))
        self.emit(self.group_size(name, kernels))
        self.emit(f"group_size = ctx.fit_local(group_size, {per_thread})")
        self.emit(f"space = {total}")
        self.emit(f"blocks = ceil_div(space, group_size * {scan.chunk})")
        reach = f"blocks * group_size * {scan.chunk}"
        if len(kernels) == 1:
            self.launch(scan, "blocks * group_size", self.args(scan, outs), reach)
            return
        totals, prefixes = [f"totals{i}" for i in range(len(outs))], [f"prefixes{i}" for i in range(len(outs))]
        for t, p, a in zip(totals, prefixes, e.neutral):
            self.emit(f"{t} = ctx.empty((blocks,), {NP_TYPES[a.type.name]})")
            self.emit(f"{p} = ctx.empty((blocks,), {NP_TYPES[a.type.name]})")
        self.emit("total_flags = ctx.empty((blocks,), np.uint8)")
        self.emit("if blocks > 1:")
        self.indent += 1
        self.launch(kernels[0], "blocks * group_size", self.args(kernels[0], [], totals + ["total_flags"]), reach)
        self.launch(kernels[1], "group_size", self.args(kernels[1], prefixes, totals + ["total_flags"], "blocks"),
                    reach)
        self.indent -= 1
        self.launch(scan, "blocks * group_size", self.args(scan, outs, prefixes), reach)

    def segred(self, e: T.SegRed, pat, loc):
        name = self.kernel_name("segred")
        k1, k3, k4 = segops.segred_kernels(name, e, loc, self.errors)
        self.kernels += [k1, k3, k4]
        outs = self.alloc_outputs(pat, e.types)
        segs = " * ".join(f"int({self.atom(b.width)})" for b in e.ctx[:-1]) or "1"
        width = f"int({self.atom(e.ctx[-1].width)})"
        self.emit(self.group_size(name, [k1, k3, k4]))
        self.emit(f"segments, width = {segs}, {width}")
        space = "segments * width"
        strides = [host_stride(s, k3) for s in k3.inner_strides]
        contiguous = " and ".join(f"{s} == 1" for s in strides) if None not in strides else "False"
        self.emit(f"if segments >= 32 and (width < group_size or not ({contiguous or 'True'})):")
        self.indent += 1  # a thread per segment (and part)
        self.emit(self.groups_per_segment(name, "thread_parts"))
        self.emit("if gps == 1:")
        self.launch(k3, "ceil_div(segments, group_size) * group_size", self.args(k3, [], outs, "gps"), space, 1)
        self.emit("else:")
        parts = [f"part{i}" for i in range(len(outs))]
        for pname, a in zip(parts, e.neutral):
            self.emit(f"    {pname} = ctx.empty((segments * gps,), {NP_TYPES[a.type.name]})")
        self.launch(k3, "ceil_div(segments * gps, group_size) * group_size", self.args(k3, [], parts, "gps"), space, 1)
        self.launch(k4, "ceil_div(segments, group_size) * group_size", self.args(k4, outs, parts, "gps"), space, 1)
        self.indent -= 1
        self.emit("else:")  # workgroups per segment
        self.indent += 1
        self.emit(self.groups_per_segment(name))
        self.emit(f"if gps == 1 and not ctx.values[{f'{self.entry_name}.{name}_tblock_size'!r}]:")
        self.emit("    group_size = segment_group_size(group_size, width)")
        self.emit("if gps == 1:")  # no parts: the outputs stand in for their buffers
        self.launch(k1, "segments * group_size", self.args(k1, outs, outs, "gps"), space + " + 4 * global_size", 1)
        self.emit("else:")
        for pname, a in zip(parts, e.neutral):
            self.emit(f"    {pname} = ctx.empty((segments * gps,), {NP_TYPES[a.type.name]})")
        self.launch(k1, "segments * gps * group_size", self.args(k1, outs, parts, "gps"), space + " + 4 * global_size", 1)
        self.indent -= 1


C_SCALARS = {"char": "np.int8", "short": "np.int16", "int": "np.int32", "long": "np.int64", "uchar": "np.uint8",
             "ushort": "np.uint16", "uint": "np.uint32", "ulong": "np.uint64", "float": "np.float32",
             "double": "np.float64"}


def kernel_arg_types(kernel: opencl.Kernel) -> str:
    """Python source: the numpy type of each scalar parameter of a kernel (None for buffers and local
    memory)."""
    return "(" + "".join(f"{'None' if '*' in p else C_SCALARS[p.split()[-2]]}, " for p in kernel.params) + ")"


def host_stride(c: str, kernel: opencl.Kernel):
    """A stride of a kernel's view as a Python expression over the host's arrays, or None when it
    depends on anything else."""
    views = {payload for kind, payload in kernel.args if kind == "view"}
    py = re.sub(r"\(\(long\)(-?\d+)L\)", r"\1", c)
    py = re.sub(r"\b(\w+)_s(\d+)\b", lambda m: f"{m[1]}.strides[{m[2]}]" if m[1] in views else m[0], py)
    leftover = set(re.findall(r"[A-Za-z_]\w*", py)) - views - {"strides"}
    return None if leftover else py


def source_name(name: str) -> str:
    """The name the user wrote, for messages (generated code names variables `base_N`)."""
    return re.sub(r"_\d+$", "", name).replace("_q", "'")


def where(stm: S.Stm) -> str:
    """The source position a run-time error reports, as a Python string literal."""
    return repr(str(stm.loc) if stm.loc else "")


def opencl_elem(t) -> str:
    return t.elem.name if isinstance(t, Array) else t.name


def ctype_size(ctype: str) -> int:
    return {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8, "ulong": 8,
            "float": 4, "double": 8}[ctype]


def runtime_source() -> str:
    """ir/values.py and codegen/runtime.py, as embedded in every compiled program."""
    root = pathlib.Path(__file__).resolve().parent.parent
    values = (root / "ir" / "values.py").read_text()
    runtime = (root / "codegen" / "runtime.py").read_text()
    runtime = "\n".join(line for line in runtime.splitlines() if not line.rstrip().endswith("# embed: drop"))
    return values + "\n\n" + runtime + "\n"


def prune_unsupported(target: S.Program) -> S.Program:
    """Drops the code versions that the backend cannot generate yet, keeping the guards' other branch;
    a program none of whose versions can be generated keeps the error of its last version."""
    return S.Program(tuple(dataclasses.replace(f, body=_prune_body(f.body)) for f in target.funs), target.file)


def _prune_body(body: S.Body) -> S.Body:
    stms = []
    for stm in body.stms:
        e = stm.exp
        if isinstance(e, T.Guard):
            then, else_ = _prune_body(e.then), _prune_body(e.else_)
            then_error, else_error = _unsupported(then), _unsupported(else_)
            if then_error is None and else_error is None:
                stms.append(S.Stm(stm.pat, dataclasses.replace(e, then=then, else_=else_), stm.loc))
                continue
            if then_error is not None and else_error is not None:
                raise else_error
            kept = else_ if then_error is not None else then
            stms.extend(kept.stms)
            stms.extend(S.Stm((p,), S.AtomExp(r), stm.loc) for p, r in zip(stm.pat, kept.result))
        elif isinstance(e, (S.If, S.Loop)):
            stms.append(S.Stm(stm.pat, _map_bodies(e, _prune_body), stm.loc))
        else:
            stms.append(stm)
    return S.Body(tuple(stms), body.result)


def _map_bodies(e, f):
    if isinstance(e, S.If):
        return dataclasses.replace(e, then=f(e.then), else_=f(e.else_))
    form = S.WhileLoop(f(e.form.cond)) if isinstance(e.form, S.WhileLoop) else e.form
    return dataclasses.replace(e, form=form, body=f(e.body))


def _unsupported(body: S.Body):
    """The `not supported yet` error that generating this body raises, or None."""
    try:
        HostWriter().body(body)
    except CompileError as e:
        if e.message.startswith("not supported yet"):
            return e
        raise
    return None


def generate_program(target: S.Program, source_name: str, tuned=None, provenance=None, checks=True) -> str:
    """The compiled program's whole text; checks=False leaves out the checks inside kernels."""
    target = prune_unsupported(rename_interfaces(target))
    w = HostWriter(checks)
    entries = []
    for f in target.funs:
        w.entry(f)
        w.lines.append("")
        entries.append(f"    {f.name!r}: EntryPoint({f.name!r}, {[unsized_name(p.type) for p in f.params]!r}, "
                       f"{[unsized_name(t) for t in f.ret]!r}, entry_{f.name}),")
    params = [(t.name, t.param_class) for t in thresholds(target)] + w.size_params
    kernels_src = opencl.PRELUDE + "\n".join(k.source() for k in w.kernels)
    return "\n".join([
        "#!/usr/bin/env python3",
        f"# Compiled by incflat from {source_name}. Needs Python 3, numpy and pyopencl.",
        runtime_source(),
        f"OPENCL_SOURCE = {kernels_src!r}",
        "",
        f"PARAMS = {params!r}",
        "",
        f"KERNEL_ERRORS = {w.errors!r}",
        "",
        "KERNEL_ARG_TYPES.update({" + ", ".join(f"{k.name!r}: {kernel_arg_types(k)}" for k in w.kernels) + "})",
        "",
        TUNED_BEGIN,
        f"TUNED_DEFAULTS = {dict(tuned or {})!r}",
        f"TUNING_PROVENANCE = {provenance!r}",
        TUNED_END,
        "",
        *w.lines,
        "ENTRY_POINTS = {",
        *entries,
        "}",
        "",
        "",
        "def load(**options):",
        '    """The program as a library: `load(device="GPU").main(xss, yss)`."""',
        "    return LibraryProgram(ENTRY_POINTS, PARAMS, OPENCL_SOURCE, TUNED_DEFAULTS, KERNEL_ERRORS, **options)",
        "",
        "",
        "def run(argv=None):",
        "    return main(ENTRY_POINTS, PARAMS, OPENCL_SOURCE, TUNED_DEFAULTS, TUNING_PROVENANCE, KERNEL_ERRORS, argv)",
        "",
        "",
        'if __name__ == "__main__":',
        "    sys.exit(run())",
        "",
    ])
