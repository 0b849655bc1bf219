"""A scan operator lifted to (segment-start flag, values) pairs, and the workgroup's scan in local memory.

Segment starts reset the running value: with the operator lifted to pairs, segments of any length, and
several per block, need nothing else. Without segments the lifted operator is the operator itself.
"""

import contextlib

from incflat.codegen.cscalar import neutral_ctypes
from incflat.codegen.kernel import INDEX


class Lifted:
    def __init__(self, w, op, segmented: bool):
        """w: the KernelWriter the code goes to; op: the segop whose `scan` operator is lifted."""
        self.w, self.op, self.segmented = w, op, segmented

    def combine_into(self, later: list, later_flag, earlier: list, earlier_flag):
        """later := earlier (+) later, in place (C variables)."""
        w = self.w
        with w.block(f"if (!{later_flag})") if self.segmented else contextlib.nullcontext():
            for v, r in zip(later, w.apply_red(self.op.scan, list(earlier), list(later), None)):
                w.emit(f"{v} = {r};")
        if self.segmented:
            w.emit(f"{later_flag} |= {earlier_flag};")

    def fold_unless(self, accs: list, xs: list, reset, on_reset: str = ""):
        """accs := xs when the C condition `reset` holds (a segment starts; then also the statement
        on_reset), else accs := accs (+) xs; without segments (reset False), always the latter."""
        w = self.w

        def fold():
            for acc, r in zip(accs, w.apply_red(self.op.scan, list(accs), list(xs), None)):
                w.emit(f"{acc} = {r};")
        if not reset:
            return fold()

        def restart():
            for acc, x in zip(accs, xs):
                w.emit(f"{acc} = {x};")
            if on_reset:
                w.emit(on_reset)
        w.if_else(reset, restart, fold)

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
        with w.block(f"for ({INDEX} {s} = 1; {s} < {count}; {s} <<= 1)"):
            ys = [w.declare(c, f"{b}[{base} + {lid}]", "y") for c, b in zip(ctypes, bufs)]
            fy = w.declare("uchar", f"{fbuf}[{base} + {lid}]", "fy") if fbuf else None
            with w.block(f"if ({lid} >= {s})"):
                xs = [w.declare(c, f"{b}[{base} + {lid} - {s}]", "x") for c, b in zip(ctypes, bufs)]
                fx = w.declare("uchar", f"{fbuf}[{base} + {lid} - {s}]", "fx") if fbuf else None
                self.combine_into(ys, fy, xs, fx)
            w.emit(f"{base} = {lsize} - {base};")
            for b, y in zip(bufs, ys):
                w.emit(f"{b}[{base} + {lid}] = {y};")
            if fbuf:
                w.emit(f"{fbuf}[{base} + {lid}] = {fy};")
            w.emit("barrier(CLK_LOCAL_MEM_FENCE);")
        return bufs, fbuf, base
