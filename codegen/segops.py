"""Whole kernels for the level-1 segmented operations: a segmap's, a segred's (per workgroup or per thread,
and the combination of partial results) and a segscan's (a single pass with decoupled look-back, or three
passes for operators whose values do not fit in one status word)."""

from incflat.codegen.cscalar import CTYPES, neutral_ctypes
from incflat.codegen.kernel import INDEX, Kernel, LookbackParams, SegmentCounters, View
from incflat.codegen.lifted import Lifted
from incflat.codegen.opencl import KernelWriter, require_scalar_operator
from incflat.ir.runtime.prims import CTYPE_SIZES
from incflat.ir import source as S
from incflat.ir import target as T
from incflat.ir.analysis import free_in_body, free_in_exp
from incflat.ir.types import I64, Array, Scalar


def kernel_inputs(w: KernelWriter, op, computed: dict | None = None):
    """The segop's free variables as the kernel's parameters; those in `computed` (name -> the host's `iota n`
    or `replicate n x` of a scalar that made it: codegen.host's computed_arrays) as views whose elements are
    computed where they are read."""
    free = free_in_exp(op)
    for v in free.values():
        if v.name in (computed or {}) and isinstance(v.type, Array):
            w.computed_input(v, computed[v.name])
    for v in free.values():
        if isinstance(v.type, Scalar) and v.type.name == "i64":
            w.input_var(v)
    for v in free.values():
        w.input_var(v)


def segmap_kernel(name: str, op: T.SegMap, loc, errors: list, computed: dict | None = None) -> Kernel:
    """A level-1 segmap: a thread per point of the context, or, when the body holds level-0 segops
    (the intra-group version), a workgroup per point."""
    w = KernelWriter(name, errors)
    kernel_inputs(w, op, computed)
    outs = [w.output_param(i, t) for i, t in enumerate(op.types)]
    total = " * ".join(f"({w.atom(b.width)})" for b in op.ctx)
    intra = bool(T.level0_segops(op.body))
    w.shared = intra
    if intra:
        flat = w.declare(INDEX, "get_group_id(0)", "gid")
    else:
        flat = w.declare(INDEX, "get_global_id(0)", "gtid")
        w.emit(f"if ({flat} >= {total}) return;")
    point = w.bind_ctx(op.ctx, flat)
    # each point's part of a result through every index of the point, not its flat index times the innermost
    # stride: a result made in a region of another array (codegen.placement: LUD's inner blocks, a corner of
    # its matrix) is not row-major over the context
    dests = tuple(o.slice(point) for o in outs)
    results = w.body(op.body, tuple(d if d.dims else None for d in dests), group=intra)
    for r, d in zip(results, dests):
        if not d.dims:
            w.emit(f"{'if (get_local_id(0) == 0) ' if intra else ''}{d.mem}[{d.offset}] = {r};")
    return w.k


def scatter_segmap_kernel(name: str, op: T.SegMap, dest: Array, idx_result: int, val_result: int, loc,
                          errors: list, computed: dict | None = None) -> Kernel:
    """A one-dimensional segmap whose two results are only a scatter's indices and values (codegen.host's
    scatter_fusions): each thread writes its value into the destination (output 0, of type `dest`) at its
    index where that is in bounds, as the scatter would, and neither array is made."""
    w = KernelWriter(name, errors)
    kernel_inputs(w, op, computed)
    for d in dest.shape:
        if isinstance(d, str):
            w.input_var(S.Var(d, I64))
    out = w.output_param(0, dest)
    flat = w.declare(INDEX, "get_global_id(0)", "gtid")
    w.emit(f"if ({flat} >= {w.atom(op.ctx[0].width)}) return;")
    w.bind_ctx(op.ctx, flat)
    results = w.body(op.body, (None,) * len(op.types), group=False)
    k = w.declare("long", results[idx_result], "k")
    w.emit(f"if ({k} >= 0 && {k} < (long)({out.dims[0]})) {out.elem([k])} = {results[val_result]};")
    return w.k


# ---- segscan ----
#
# The scan runs over the flat index space of all segments. A workgroup scans a block of
# group_size * chunk consecutive elements: they are loaded coalesced into local memory, each thread
# scans its chunk sequentially, the threads' totals are scanned in local memory, and the block's prefix
# comes either from a decoupled look-back over the blocks before it (one pass; for one value of at most
# 32 bits, published with its status in one 64-bit word) or from a scan of the blocks' totals computed by
# two earlier kernels. Segment starts reset the running value: the operator is lifted to (flag, value)
# pairs, so segments of any length, and several per block, need nothing else.

STATUS_AGGREGATE, STATUS_PREFIX = 1, 2
LOOKBACK = 256  # statuses read at once, a thread each
PACKED_BITS = {"f32": ("as_uint({})", "as_float((uint)({}))"), "i32": ("(uint)({})", "(int)(uint)({})"),
               "u32": ("(uint)({})", "(uint)({})"), "i16": ("(uint)(ushort)({})", "(short)(ushort)({})"),
               "u16": ("(uint)({})", "(ushort)({})"), "i8": ("(uint)(uchar)({})", "(char)(uchar)({})"),
               "u8": ("(uint)({})", "(uchar)({})"), "bool": ("(uint)({})", "(uchar)({})")}


def scan_chunk(op) -> int:
    """Elements per thread: about 128 bytes of values (a block of 32 KiB with 256 threads). Fewer, larger
    blocks wait less on the look-back: each block waits for the blocks before it."""
    return max(1, min(32, 128 // sum(CTYPE_SIZES[c] for c in neutral_ctypes(op))))


def uses_lookback(op) -> bool:
    return len(op.neutral) == 1 and op.neutral[0].type.name in PACKED_BITS


def segscan_kernels(name: str, op: T.SegScan, loc, errors: list, computed: dict | None = None) -> tuple:
    """The kernels of a level-1 segscan, in launch order: the single-pass scan, or the blocks' totals,
    their scan, and the scan that starts each block from its prefix."""
    require_scalar_operator(op, loc)
    if uses_lookback(op):
        return (scan_kernel(name, op, errors, "lookback", computed),)
    return (scan_kernel(name + "_totals", op, errors, "totals", computed),
            block_prefix_kernel(name + "_prefix", op, errors), scan_kernel(name, op, errors, "carry", computed))


def scan_kernel(name: str, op: T.SegScan, errors: list, mode: str, computed: dict | None = None) -> Kernel:
    """mode: "lookback" (the single pass), "totals" (each block's (flag, values) total only) or "carry"
    (the scan, each block starting from the inclusive prefix of the blocks before it)."""
    w = KernelWriter(name, errors)
    kernel_inputs(w, op, computed)
    ctypes = neutral_ctypes(op)
    chunk = w.k.chunk = scan_chunk(op)
    segmented = len(op.ctx) > 1
    lifted = Lifted(w, op, segmented)
    neutral = [w.atom(a) for a in op.neutral]
    outs = [w.output_param(i, t) for i, t in enumerate(op.types)] if mode != "totals" else []
    if mode == "totals":
        totals = [flat_param(w, f"total{i}", a.type, "dest", i) for i, a in enumerate(op.neutral)]
        total_flags = flat_param(w, "total_flags", Scalar("bool"), "dest", len(op.neutral))
    elif mode == "carry":
        prefixes = [flat_param(w, f"prefix{i}", a.type, "dest", i) for i, a in enumerate(op.neutral)]
    else:
        w.k.params.append(LookbackParams())
    elems = [w.local_param(c, chunk + 1) for c in ctypes]
    w.emit(f"const {INDEX} lid = get_local_id(0), lsize = get_local_size(0);")
    width = w.declare(INDEX, w.atom(op.ctx[-1].width), "width")
    segments = w.declare(INDEX, " * ".join(f"({w.atom(b.width)})" for b in op.ctx[:-1]) or "1", "segments")
    n = w.declare(INDEX, f"{segments} * {width}", "n")
    if mode == "lookback":  # blocks numbered in the order they start, so that every wait ends
        w.emit("__local uint block_shared;")
        w.emit("if (lid == 0) block_shared = atomic_inc(&counters[0]);")
        w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        block = w.declare(INDEX, f"({INDEX})block_shared", "block")
    else:
        block = w.declare(INDEX, "get_group_id(0)", "block")
    start = w.declare(INDEX, f"{block} * lsize * {chunk}", "start")

    def slot(x):  # one padding element per chunk: the threads' chunk-wise accesses avoid bank conflicts
        return x if chunk == 1 else f"(({x}) + ({x}) / {chunk})"

    # Load the block, coalesced (element j * lsize + lid of the block, at index k of segment seg). Past the
    # end, the last element is loaded and the neutral element kept, so that no branch separates the loads.
    def load_block(rows_flat=None):
        k = w.declare(INDEX, f"{start} + lid", "k")
        if rows_flat:  # element k of the flattened space is element k of each array's buffer
            saved = {name: w.env.pop(name, None) for name in rows_flat}
            w.env.update(rows_flat)
        if segmented and not rows_flat:
            seg = w.declare(INDEX, f"{k} / {width}", "seg")
            w.emit(f"{k} = {k} % {width};")
            seg_step = w.declare(INDEX, f"lsize / {width}", "seg_step")
            k_step = w.declare(INDEX, f"lsize % {width}", "k_step")
        inner = op.ctx[-1]
        for j in range(chunk):
            here = slot(f"{j} * lsize + lid")
            inside = w.declare("uchar", f"{start} + {j} * lsize + lid < {n}", "inside")
            if segmented and not rows_flat:
                w.bind_ctx(op.ctx[:-1], f"min({seg}, {segments} - 1)")
                w.bind_elems(inner.params, inner.arrs, k)
            else:
                w.bind_elems(inner.params, inner.arrs, f"min({k}, {n} - 1)")
            with w.per_thread():
                values = w.body(op.body)
            for b, v, z in zip(elems, values, neutral):
                w.emit(f"{b}[{here}] = {inside} ? {v} : {z};")
            if j + 1 < chunk and segmented and not rows_flat:
                w.emit(f"{k} += {k_step}; {seg} += {seg_step};")
                w.emit(f"if ({k} >= {width}) {{ {k} -= {width}; {seg}++; }}")
            elif j + 1 < chunk:
                w.emit(f"{k} += lsize;")
        if rows_flat:
            w.env.update({name: view for name, view in saved.items() if view is not None})
            for name in (name for name, view in saved.items() if view is None):
                del w.env[name]

    if not segmented:  # contiguous input, the usual case, without stride arithmetic
        w.unit_stride_variant([a.name for a in op.ctx[-1].arrs], load_block)
    elif (rows := row_major_rows(w, op, width)) is not None:  # rows laid out one after another: no division
        condition, flat_views = rows
        w.if_else(condition, lambda: load_block(flat_views), load_block)
    else:
        load_block()
    w.emit("barrier(CLK_LOCAL_MEM_FENCE);")

    # each thread folds its chunk to a total, and scans it again from local memory below: holding the
    # partial results in registers across the workgroup scan would need more registers, and so lower occupancy
    if segmented:  # in the chunk, small numbers: where the first segment starts (chunk if none), and the next
        first_k = w.declare(INDEX, f"({start} + lid * {chunk}) % {width}", "first_k")
        first_start = w.declare("int", f"{first_k} == 0 ? 0 : (int)min({width} - {first_k}, ({INDEX}){chunk})",
                                "first_start")
        next_start = w.declare("int", first_start, "next_start")
        start_step = w.declare("int", f"(int)min({width}, ({INDEX}){chunk})", "start_step")
    accs = [w.declare(c, v, "acc") for c, v in zip(ctypes, neutral)]
    flag = w.declare("uchar", "0", "flag") if segmented else None

    def fold_chunk(on_each=None):
        for j in range(chunk):
            xs = [w.declare(c, f"{b}[{slot(f'lid * {chunk} + {j}')}]", "x") for c, b in zip(ctypes, elems)]
            if segmented:
                on_start = f"{next_start} += {start_step};" + ("" if on_each else f" {flag} = 1;")
                lifted.fold_unless(accs, xs, f"{next_start} == {j}", on_start)
            else:
                lifted.fold_unless(accs, xs, None)
            if on_each:
                on_each(j)
    fold_chunk()

    # the threads' totals, scanned: thread t's chunk continues from the total of threads 0..t-1
    tots, tflags, base = lifted.group_scan(accs, flag)
    if mode == "totals":
        with w.block("if (lid == 0)"):
            for t, b in zip(totals, tots):
                w.emit(f"{t.mem}[{t.offset} + {block}] = {b}[{base} + lsize - 1];")
            flag_total = f"{tflags}[{base} + lsize - 1]" if segmented else "0"
            w.emit(f"{total_flags.mem}[{total_flags.offset} + {block}] = {flag_total};")
        return w.k

    if mode == "lookback":  # the block's total, published first so that the blocks after it can go on
        agg = [w.declare(c, f"{b}[{base} + lsize - 1]", "agg") for c, b in zip(ctypes, tots)]
        agg_flag = w.declare("uchar", f"{tflags}[{base} + lsize - 1]", "agg_flag") if segmented else "0"
        status = f"{block} == 0 || {agg_flag} ? {STATUS_PREFIX} : {STATUS_AGGREGATE}"
        w.emit(f"if (lid == 0) status[{block}] = {status_word(op, f'({status})', agg[0], agg_flag)};")
    # each thread scans its chunk again, from the total of the threads before it, into local memory
    for acc, b, z in zip(accs, tots, neutral):
        w.emit(f"{acc} = lid == 0 ? {z} : {b}[{base} + lid - 1];")
    if segmented:
        w.emit(f"{next_start} = {first_start};")

    def store(j):
        for b, acc in zip(elems, accs):
            w.emit(f"{b}[{slot(f'lid * {chunk} + {j}')}] = {acc};")
    fold_chunk(store)
    if mode == "carry":
        prefix = [w.declare(c, f"{block} > 0 ? {pre.mem}[{pre.offset} + {block} - 1] : {z}", "prefix")
                  for c, pre, z in zip(ctypes, prefixes, neutral)]
    else:
        prefix = [lookback(w, op, block, agg, agg_flag)]
    w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
    if mode == "lookback":  # the last block to finish resets the block numbering for the next launch
        w.emit("if (lid == 0 && atomic_inc(&counters[1]) == get_num_groups(0) - 1) "
               "{ counters[0] = 0; counters[1] = 0; }")

    # write the block, coalesced, the block's prefix added to the elements of the segment it continues
    carried = [w.declare(c, p, "carried") for c, p in zip(ctypes, prefix)]
    if segmented:  # the elements before the block's first segment start continue a segment
        lead = w.declare("int", f"(int)min(({width} - {start} % {width}) % {width}, lsize * {chunk})", "lead")
    for j in range(chunk):
        e = f"{j} * lsize + lid"
        with w.block(f"if ({start} + {e} < {n})"):
            rs = [w.declare(c, f"{b}[{slot(e)}]", "r") for c, b in zip(ctypes, elems)]
            values = w.apply_red(op.scan, list(carried), rs, None)
            for o, v, r in zip(outs, values, rs):
                value = f"{e} < {lead} ? {v} : {r}" if segmented else v
                w.emit(f"{o.mem}[{o.offset} + {start} + {e}] = {value};")
    return w.k


def row_major_rows(w: KernelWriter, op, width: str):
    """For a segmented scan over the rows of 2-D arrays (`map (\\row -> scan ... row) xss`) whose body
    uses the rows only through their elements: the run-time condition that each array's rows lie one
    after another (strides (width, 1)), and views of the arrays' rows that index the flattened space
    with one index. None for other shapes."""
    if len(op.ctx) != 2:
        return None
    outer, inner = op.ctx
    rows = {p.name: a.name for p, a in zip(outer.params, outer.arrs)}
    if any(a.name not in rows for a in inner.arrs) or set(rows) & set(free_in_body(op.body)):
        return None
    views = {a.name: w.env[rows[a.name]] for a in inner.arrs}
    if any(type(v) is not View or len(v.strides) != 2 for v in views.values()):  # (not a computed array's)
        return None
    condition = " && ".join(sorted({f"({v.strides[1]}) == 1 && ({v.strides[0]}) == {width}" for v in views.values()}))
    flat = {name: View(v.mem, v.ctype, v.offset, (f"{v.dims[0]} * {v.dims[1]}",), ("1",)) for name, v in views.items()}
    return condition, flat


def status_word(op, status: int, value: str, flag: str) -> str:
    """A look-back status: (epoch << 35 | flag << 34 | status << 32 | value bits); words of earlier
    launches hold another epoch, so the statuses need no clearing."""
    pack = PACKED_BITS[op.neutral[0].type.name][0]
    return f"(epoch << 35) | ((ulong)({flag}) << 34) | ((ulong){status} << 32) | (ulong){pack.format(value)}"


def lookback(w: KernelWriter, op, block: str, agg: list, agg_flag: str) -> str:
    """Run by the whole workgroup after thread 0 has published the block's total. First thread 0 waits
    for the status of the block just before, which alone ends the look-back when it holds a segment start
    or an inclusive prefix (a segmented scan over short segments then never waits for more, where each block
    would otherwise wait for a round of LOOKBACK statuses).
    Then, in rounds, threads 0..LOOKBACK-1 (fewer in a smaller workgroup) each wait for the status of one
    of the next blocks before this one, the oldest first, and the workgroup scans their totals in local
    memory, a status that ends the look-back (an inclusive prefix, or a total in which a segment starts)
    restarting the scan; the newest result, folded into the prefix found so far, ends the look-back if
    some status in the round did. One status word a thread keeps the kernel's registers, and so its
    occupancy, as they are. Thread 0 then publishes the block's inclusive prefix. Returns the local
    variable that holds the block's prefix."""
    unpack = PACKED_BITS[op.neutral[0].type.name][1]
    ctype = neutral_ctypes(op)[0]
    neutral = w.atom(op.neutral[0])
    window = Lifted(w, op, segmented=True)  # flags: the statuses that end the look-back
    prefix, flag, done = w.fresh("prefix_shared"), w.fresh("pflag_shared"), w.fresh("done_shared")
    w.emit(f"__local {ctype} {prefix};")
    w.emit(f"__local uchar {flag}, {done};")
    w.emit(f"if (lid == 0) {{ {prefix} = {neutral}; {flag} = 0; {done} = {block} == 0; }}")
    with w.block(f"if (lid == 0 && {block} > 0)"):
        value, stops = wait_for_status(w, f"{block} - 1", unpack)
        w.emit(f"{prefix} = {value}; {flag} = {stops}; {done} = {flag};")
    w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
    newest = w.declare(INDEX, f"{block} - 2", "newest")
    lanes = w.declare(INDEX, f"min(({INDEX}){LOOKBACK}, lsize)", "lanes")  # the statuses a round reads
    with w.block(f"while (!{done})"):  # the same for every thread: done is read after a barrier
        earlier = w.declare(ctype, neutral, "earlier")
        stops = w.declare("uchar", "1", "stops")  # before block 0: nothing, and the look-back ends
        reads = w.declare(INDEX, f"{newest} - ({lanes} - 1 - lid)", "reads")
        with w.block(f"if (lid < {lanes} && {reads} >= 0)"):
            value, stopping = wait_for_status(w, reads, unpack)
            w.emit(f"{earlier} = {value}; {stops} = {stopping};")
        tots, tstops, base = window.group_scan([earlier], stops, count=lanes)
        with w.block("if (lid == 0)"):
            found = w.declare(ctype, prefix, "found")
            pflag = w.declare("uchar", flag, "pflag")
            window.combine_into([found], pflag, [f"{tots[0]}[{base} + {lanes} - 1]"],
                                f"{tstops}[{base} + {lanes} - 1]")
            w.emit(f"{prefix} = {found}; {flag} = {pflag}; {done} = {pflag};")
        w.emit(f"{newest} -= {lanes};")
        w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
    with w.block(f"if (lid == 0 && {block} > 0 && !{agg_flag})"):
        inclusive = w.apply_red(op.scan, [prefix], list(agg), None)
        w.emit(f"status[{block}] = {status_word(op, STATUS_PREFIX, inclusive[0], '0')};")
    return prefix


def wait_for_status(w: KernelWriter, block: str, unpack: str) -> tuple:
    """Spins until block's status of this launch is published; returns C expressions of its value and of
    whether it ends a look-back (an inclusive prefix, or a total in which a segment starts)."""
    word = w.declare("ulong", "0", "word")
    w.emit(f"do {word} = status[{block}]; while (({word} >> 35) != epoch || (({word} >> 32) & 3) == 0);")
    return (unpack.format(f"{word} & 0xffffffffUL"),
            f"((({word} >> 32) & 3) == {STATUS_PREFIX} || (({word} >> 34) & 1))")


def block_prefix_kernel(name: str, op: T.SegScan, errors: list) -> Kernel:
    """One workgroup scans the blocks' (flag, values) totals: each thread a contiguous run of them."""
    w, totals, outs = partials_writer(name, op.neutral, op.scan, errors)
    flags = flat_param(w, "total_flags", Scalar("bool"), "dest", len(op.neutral))
    segmented = len(op.ctx) > 1
    lifted = Lifted(w, op, segmented)
    ctypes = neutral_ctypes(op)
    neutral = [w.atom(a) for a in op.neutral]
    w.emit(f"const {INDEX} lid = get_local_id(0), lsize = get_local_size(0);")
    per = w.declare(INDEX, "(groups_per_segment + lsize - 1) / lsize", "per")
    lo = w.declare(INDEX, f"lid * {per}", "lo")
    hi = w.declare(INDEX, f"min(groups_per_segment, {lo} + {per})", "hi")

    def fold_run(accs, flag, write):
        i = w.fresh("i")
        with w.block(f"for ({INDEX} {i} = {lo}; {i} < {hi}; {i}++)"):
            xs = [w.declare(c, f"{t.mem}[{t.offset} + {i}]", "x") for c, t in zip(ctypes, totals)]
            fx = w.declare("uchar", f"{flags.mem}[{flags.offset} + {i}]", "fx") if segmented else None
            lifted.combine_into(xs, fx, accs, flag)  # accs := accs (+) x, computed into x
            for a, x in zip(accs, xs):
                w.emit(f"{a} = {x};")
            if segmented:
                w.emit(f"{flag} = {fx};")
            if write:
                for o, a in zip(outs, accs):
                    w.emit(f"{o.mem}[{o.offset} + {i}] = {a};")

    accs = [w.declare(c, v, "acc") for c, v in zip(ctypes, neutral)]
    flag = w.declare("uchar", "0", "flag") if segmented else None
    fold_run(accs, flag, False)
    tots, tflags, base = lifted.group_scan(accs, flag)
    for a, v in zip(accs, neutral):
        w.emit(f"{a} = {v};")
    if segmented:
        w.emit(f"{flag} = 0;")
    with w.block("if (lid > 0)"):
        for a, t in zip(accs, tots):
            w.emit(f"{a} = {t}[{base} + lid - 1];")
        if segmented:
            w.emit(f"{flag} = {tflags}[{base} + lid - 1];")
    fold_run(accs, flag, True)
    return w.k


def segred_kernels(name: str, op: T.SegRed, loc, errors: list, computed: dict | None = None) -> tuple:
    """The kernels of a level-1 segred. Per workgroup: `groups_per_segment` workgroups per segment each
    reduce a part of it; when there are several, the last of them to finish folds the parts in order. Per
    thread, for many segments that are short or strided in memory (a transposed view): thread t reduces a
    part of segment t % segments, so neighbouring threads read neighbouring segments, and a second kernel
    combines the parts. The host chooses between them at run time from the inner strides."""
    require_scalar_operator(op, loc)
    return (segred_group_kernels(name, op, loc, errors, computed)
            + segred_thread_kernels(name + "_threads", op, loc, errors, computed))


def segred_group_kernels(name: str, op: T.SegRed, loc, errors: list, computed: dict | None = None) -> tuple:
    """Workgroup gid reduces part gid % groups_per_segment of segment gid / groups_per_segment (tiles
    taken in turn by a commutative operator's workgroups, a contiguous range otherwise). With one
    part, it writes the segment's result; with several, it writes its part, and the segment's last
    workgroup to finish (counted with an atomic) folds the parts in order, in the same launch."""
    w = KernelWriter(name, errors)
    kernel_inputs(w, op, computed)
    ctypes = neutral_ctypes(op)
    parts = [flat_param(w, f"part{i}", a.type, "dest", i) for i, a in enumerate(op.neutral)]
    outs = [flat_param(w, f"out{i}", a.type, "output", i) for i, a in enumerate(op.neutral)]
    w.index_param("groups_per_segment")
    w.k.params.append(SegmentCounters())
    gid = w.declare(INDEX, "get_group_id(0)", "gid")
    seg = w.declare(INDEX, f"{gid} / groups_per_segment", "seg")
    part = w.declare(INDEX, f"{gid} % groups_per_segment", "part")
    if len(op.ctx) > 1:
        w.bind_ctx(op.ctx[:-1], seg)
    width = w.atom(op.ctx[-1].width)
    accs = [w.declare(c, w.atom(a), "acc") for c, a in zip(ctypes, op.neutral)]
    if op.commutative:  # the segment's workgroups take turns through it
        w.accumulate(op, "0", f"({INDEX})({width})", accs, interleave=(part, "groups_per_segment"))
    else:  # each workgroup a contiguous part, folded in order
        per_part = w.declare(INDEX, f"(({width}) + groups_per_segment - 1) / groups_per_segment", "per_part")
        lo = w.declare(INDEX, f"{part} * {per_part}", "lo")
        hi = w.declare(INDEX, f"min(({INDEX})({width}), {lo} + {per_part})", "hi")
        w.accumulate(op, lo, hi, accs)
    results = w.group_reduce(op.red, op.commutative, accs, ctypes)
    last = w.fresh("last_shared")
    w.emit(f"__local uchar {last};")

    def one_part():
        for o, r in zip(outs, results):
            w.emit(f"if (get_local_id(0) == 0) {o.mem}[{o.offset} + {seg}] = {r};")

    def several_parts():
        with w.block("if (get_local_id(0) == 0)"):
            for p, r in zip(parts, results):
                w.emit(f"{p.mem}[{p.offset} + {gid}] = {r};")
            w.emit("mem_fence(CLK_GLOBAL_MEM_FENCE);  // the part is visible before the count says so")
            w.emit(f"{last} = atomic_inc(&finished[{seg}]) == groups_per_segment - 1;")
        w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        with w.block(f"if ({last})"):  # the same in every thread of the workgroup
            w.emit("mem_fence(CLK_GLOBAL_MEM_FENCE);")
            folded = [w.declare(c, w.atom(a), "acc") for c, a in zip(ctypes, op.neutral)]
            k = w.fresh("k")
            chunk = w.declare(INDEX, "(groups_per_segment + get_local_size(0) - 1) / get_local_size(0)", "chunk")
            with w.block(f"for ({INDEX} {k} = ({INDEX})get_local_id(0) * {chunk}; {k} < min(groups_per_segment, "
                         f"(({INDEX})get_local_id(0) + 1) * {chunk}); {k}++)"):
                # volatile: the other workgroups' parts, not what this one's cache may hold
                values = [w.declare(p.ctype, f"((volatile __global {p.ctype} *){p.mem})"
                                             f"[{p.offset} + {seg} * groups_per_segment + {k}]", "v") for p in parts]
                for acc, r in zip(folded, w.apply_red(op.red, folded, values, loc)):
                    w.emit(f"{acc} = {r};")
            totals = w.group_reduce(op.red, False, folded, ctypes)
            with w.block("if (get_local_id(0) == 0)"):
                for o, r in zip(outs, totals):
                    w.emit(f"{o.mem}[{o.offset} + {seg}] = {r};")
                w.emit(f"finished[{seg}] = 0;  // ready for the next launch")
    w.if_else("groups_per_segment == 1", one_part, several_parts)
    return (w.k,)


def segred_thread_kernels(name: str, op: T.SegRed, loc, errors: list, computed: dict | None = None) -> tuple:
    """Thread t reduces part t / segments of segment t % segments; its result goes to element t of the
    destination (the output itself when there is one part)."""
    w = KernelWriter(name, errors)
    kernel_inputs(w, op, computed)
    dests = [flat_param(w, f"dest{i}", a.type, "dest", i) for i, a in enumerate(op.neutral)]
    w.index_param("groups_per_segment")  # here: parts per segment
    segments = w.declare(INDEX, " * ".join(f"({w.atom(b.width)})" for b in op.ctx[:-1]) or "1", "segments")
    gtid = w.declare(INDEX, "get_global_id(0)", "gtid")
    w.emit(f"if ({gtid} >= {segments} * groups_per_segment) return;")
    seg = w.declare(INDEX, f"{gtid} % {segments}", "seg")
    part = w.declare(INDEX, f"{gtid} / {segments}", "part")
    if len(op.ctx) > 1:
        w.bind_ctx(op.ctx[:-1], seg)
    w.k.inner_strides = tuple(w.env[a.name].strides[0] for a in op.ctx[-1].arrs)
    width = w.atom(op.ctx[-1].width)
    per_part = w.declare(INDEX, f"(({width}) + groups_per_segment - 1) / groups_per_segment", "per_part")
    lo = w.declare(INDEX, f"{part} * {per_part}", "lo")
    hi = w.declare(INDEX, f"min(({INDEX})({width}), {lo} + {per_part})", "hi")
    accs = [w.declare(CTYPES[a.type.name], w.atom(a), "acc") for a in op.neutral]
    w.accumulate(op, lo, hi, accs, per_thread=True)
    for d, acc in zip(dests, accs):
        w.emit(f"{d.mem}[{d.offset} + {gtid}] = {acc};")

    # stage 2: thread s folds the parts of segment s, in order
    w2, parts, outs = partials_writer(name + "_combine", op.neutral, op.red, errors)
    w2.index_param("segments")
    seg2 = w2.declare(INDEX, "get_global_id(0)", "seg")
    w2.emit(f"if ({seg2} >= segments) return;")
    accs2 = [w2.declare(CTYPES[a.type.name], w2.atom(a), "acc") for a in op.neutral]
    k = w2.fresh("k")
    with w2.block(f"for ({INDEX} {k} = 0; {k} < groups_per_segment; {k}++)"):
        values = [w2.declare(p.ctype, f"{p.mem}[{p.offset} + {k} * segments + {seg2}]", "v") for p in parts]
        for acc, r in zip(accs2, w2.apply_red(op.red, accs2, values, loc)):
            w2.emit(f"{acc} = {r};")
    for o, acc in zip(outs, accs2):
        w2.emit(f"{o.mem}[{o.offset} + {seg2}] = {acc};")
    return w.k, w2.k


def partials_writer(name: str, neutral: tuple, op: S.Lambda, errors: list):
    """A kernel over the groups_per_segment partial results of each segment: its writer and the views of
    its input parts and of its outputs (both flat)."""
    w = KernelWriter(name, errors)
    parts = [flat_param(w, f"part{i}", a.type, "dest", i) for i, a in enumerate(neutral)]
    outs = [flat_param(w, f"out{i}", a.type, "output", i) for i, a in enumerate(neutral)]
    w.index_param("groups_per_segment")
    for a in neutral:
        if isinstance(a, S.Var):
            w.input_var(a)
    for v in _free_in_lambda(op).values():
        w.input_var(v)
    return w, parts, outs


def flat_param(w: KernelWriter, base: str, elem, role: str, index: int) -> View:
    """A one-dimensional buffer of partial or final results, indexed flat: the i'th output (`output`) or
    buffer of partial results (`dest`) of the launch."""
    return w.array_param(base, Array(elem, ("n_flat",)), role, index, flat=True)


def _free_in_lambda(lam: S.Lambda) -> dict:
    bound = {p.name for p in lam.params}
    return {n: v for n, v in free_in_body(lam.body).items() if n not in bound}
