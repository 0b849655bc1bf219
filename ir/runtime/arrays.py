"""Arrays in device memory and the host-level operations of generated code, with Futhark's semantics.

Part of the runtime every compiled program carries. The generated host code calls the functions of
`__all__`. They work on the device: an array passes through the host only where the program reads or writes
it there (an entry point's arguments and results); Context.upload and Context.download count every transfer
(-P prints them).
"""

import math
import struct

import numpy as np
import pyopencl as cl

from .errors import ProgramError, fail
from .prims import PRIMS
from .scalars import float_to_int, prelude_function

__all__ = ["DeviceArray", "array_literal", "ceil_div", "check_assertion", "check_coercion", "check_size",
           "check_sizes", "coalesced", "compact", "concat", "constant_array", "destination", "groups_per_segment",
           "index", "int_div", "int_pow", "iota", "manifest", "prim_call", "replicate", "reshape", "rotate", "scatter",
           "segment_group_size", "thread_parts", "to_host", "wrap"]

NP_DTYPES = {p.dtype: p.dtype for p in PRIMS.values()}  # np.dtype(t), made once, for each dtype and type
NP_DTYPES.update({p.dtype.type: p.dtype for p in PRIMS.values()})


class DeviceArray:
    """An array in device memory: a buffer with an element offset and strides (a view)."""
    __slots__ = ("buf", "shape", "strides", "offset", "dtype", "_args", "_value")

    def __init__(self, buf, shape, dtype, strides=None, offset=0):
        # entry points make arrays at every call: this is on the host's critical path
        shape = tuple(map(int, shape))
        dt = NP_DTYPES.get(dtype)
        self.buf, self.shape, self.dtype, self.offset = buf, shape, dt if dt else np.dtype(dtype), offset
        self.strides = tuple(strides) if strides is not None else row_major_strides(shape)
        self._args = None
        # a rank-0 array's value, once read (arrays are values: no buffer is rewritten while an array of it lives)
        self._value = None

    @classmethod
    def view(cls, buf, shape: tuple, dtype: np.dtype, strides: tuple, offset: int):
        """An array of fields already in their types (tuples of ints, an np.dtype): a view that index() or
        Context.empty made, without __init__'s conversions (a loop's step makes a few: pathfinder's)."""
        arr = object.__new__(cls)
        arr.buf, arr.shape, arr.dtype, arr.strides, arr.offset = buf, shape, dtype, strides, offset
        arr._args = arr._value = None
        return arr

    def permute(self, perm):
        order = tuple(perm) + tuple(range(len(perm), len(self.shape)))
        return DeviceArray(self.buf, [self.shape[i] for i in order], self.dtype,
                           [self.strides[i] for i in order], self.offset)

    def index_args(self):
        """The offset and strides a kernel takes with this array's buffer."""
        if self._args is None:  # an array is passed to many kernels: its arguments are made once
            self._args = (self.offset, *self.strides)
        return self._args

    def flat_index_args(self):
        """The offset and stride for a kernel that indexes this (contiguous) array as one dimension."""
        return self.offset, 1


_ROW_MAJOR: dict = {}  # shape -> its row-major strides: every array made computes them, from a few shapes
_ROW_MAJOR_KEPT = 4096  # (a loop whose sizes change at every step must not grow it without bound)


def row_major_strides(shape):
    found = _ROW_MAJOR.get(shape)
    if found is None:
        strides = [1] * len(shape)
        for k in range(len(shape) - 1, 0, -1):
            d = int(shape[k])
            strides[k - 1] = strides[k] * (d if d > 1 else 1)
        found = tuple(strides)
        if len(_ROW_MAJOR) < _ROW_MAJOR_KEPT:
            _ROW_MAJOR[tuple(shape)] = found
    return found


def interleaved_strides(shape, inner):
    """Strides that put the first `inner` dimensions innermost: element (t, r) of an array whose first
    `inner` dimensions are a segmap's context lies at r * threads + t (see codegen/coalescing.py)."""
    outer, rest = shape[:inner], shape[inner:]
    threads = math.prod(max(int(d), 1) for d in outer)
    return tuple(row_major_strides(outer)) + tuple(s * threads for s in row_major_strides(rest))


# Copies between layouts on the device. `incflat_copy_N` copies elements of N bytes between two views of up
# to COPY_RANK dimensions, in the order of the destination's memory (writes coalesced); `incflat_transpose_N`
# transposes a row-major [rows][cols] matrix through a tile in local memory (reads and writes coalesced);
# `incflat_scatter_N` writes rows of a row-major array at indices (scatter).
COPY_RANK = 8
TRANSPOSE_TILE = 32
_COPY_TYPES = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}


# incflat_copy_N's arguments besides its two buffers, in one struct (one argument to set, not 28): the offsets,
# the count, the rank after merging (copy_into) and per dimension, outermost first, its size and strides
_COPY_ARGS = struct.Struct("<" + "q" * (4 + 3 * COPY_RANK))
COPIES = 4  # the copies one launch of incflat_copies_N makes at most (update_many)


def _copy_source() -> str:
    def walk(a, index):  # the innermost rank - 1 indices by division, the outermost what is left; unrolled,
        # every field named statically (a struct argument indexed at run time is copied to each thread's
        # private memory: 900 bytes a thread for incflat_copies_4, whose LUD 2048 copies took 7.7 ms a run)
        dims = "".join(
            f"    if ({a}.rank > {k}) {{ {index} d = ({index}){a}.d[{k}], i = rest % d; rest /= d; "
            f"si += (long)i * {a}.s[{k}]; di += (long)i * {a}.t[{k}]; }}\n"
            for k in range(COPY_RANK - 1, 0, -1))
        return (f"    {index} rest = ({index})g;\n" + dims
                + f"    si += (long)rest * {a}.s[0]; di += (long)rest * {a}.t[0];\n")

    def copy_body(a, src):  # a: the incflat_copy_args, named statically (an argument copied, or indexed at run
        # time, would go to the thread's private memory, which a GPU spills: LUD's copies ran 4x slower so)
        return (f"  long si = {a}.src_off, di = {a}.dst_off;\n"
                f"  if ({a}.n <= 4294967295L) {{  // 32-bit divisions: a GPU does 64-bit ones in many instructions\n"
                + walk(a, "uint") + "  } else {\n" + walk(a, "long") + f"  }}\n  dst[di] = {src}[si];\n")

    def one_of(k):  # incflat_copies_N: thread g past the earlier copies' elements makes copy k's
        return (f"  if (all.count > {k} && g < all.c[{k}].n) {{\n" + copy_body(f"all.c[{k}]", f"s{k}")
                + f"    return;\n  }}\n  g -= all.c[{k}].n;\n")
    sources = ", ".join(f"__global const {{ctype}} *s{k}" for k in range(COPIES))
    tile = TRANSPOSE_TILE
    out = [f"typedef struct {{ long src_off, dst_off, n, rank, d[{COPY_RANK}], s[{COPY_RANK}], t[{COPY_RANK}]; }} "
           f"incflat_copy_args;\ntypedef struct {{ long count; incflat_copy_args c[{COPIES}]; }} incflat_copies_args;\n"]
    for size, ctype in _COPY_TYPES.items():
        out.append(
            f"__kernel void incflat_copy_{size}(__global const {ctype} *src, __global {ctype} *dst, "
            "const incflat_copy_args a) {\n"
            "  long g = get_global_id(0); if (g >= a.n) return;\n" + copy_body("a", "src") + "}\n"
            f"__kernel void incflat_copies_{size}({sources.format(ctype=ctype)}, __global {ctype} *dst, "
            "const incflat_copies_args all) {\n"
            "  long g = get_global_id(0);\n" + "".join(one_of(k) for k in range(COPIES)) + "}\n"
            f"__kernel void incflat_transpose_{size}(__global const {ctype} *src, long src_off, __global {ctype} *dst, "
            "long dst_off, long rows, long cols) {\n"
            f"  __local {ctype} block[{tile}][{tile + 1}];\n"
            "  long bx = get_group_id(0), by = get_group_id(1); int lx = get_local_id(0), ly = get_local_id(1);\n"
            f"  for (int k = ly; k < {tile}; k += get_local_size(1)) {{\n"
            f"    long r = by * {tile} + k, c = bx * {tile} + lx;\n"
            "    if (r < rows && c < cols) block[k][lx] = src[src_off + r * cols + c];\n  }\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
            f"  for (int k = ly; k < {tile}; k += get_local_size(1)) {{\n"
            f"    long c = bx * {tile} + k, r = by * {tile} + lx;\n"
            "    if (r < rows && c < cols) dst[dst_off + c * rows + r] = block[lx][k];\n  }\n}\n"
            f"__kernel void incflat_scatter_{size}(__global {ctype} *dst, long dst_off, long n, long row, "
            f"__global const long *idx, long idx_off, long idx_stride, __global const {ctype} *src, long src_off, "
            "long count) {\n"
            "  long g = get_global_id(0); if (g >= count * row) return;\n"
            "  long k = g / row, e = g % row, i = idx[idx_off + k * idx_stride];\n"
            "  if (i >= 0 && i < n) dst[dst_off + i * row + e] = src[src_off + k * row + e];\n}\n"
            f"__kernel void incflat_iota_{size}(__global {ctype} *dst, long n) {{\n"
            f"  long g = get_global_id(0); if (g < n) dst[g] = ({ctype}) g;\n}}\n")
    return "".join(out) + _COMPACT_SOURCE


# filter's compaction, in three kernels: each workgroup counts the kept elements of its chunk (counts), one
# thread turns the counts into the chunks' first positions and the total (offsets), and each workgroup gives
# every element of its chunk its position among the kept ones, in order, or -1 (positions), which the scatter
# kernel then writes by. The group size is a power of two, at most COMPACT_GROUP.
COMPACT_GROUP = 256
_COMPACT_SOURCE = f"""
__kernel void incflat_compact_counts(__global const uchar *flags, long n, long per_group, __global long *counts) {{
  __local long sums[{COMPACT_GROUP}];
  long g = get_group_id(0), start = g * per_group, end = min(n, start + per_group), c = 0;
  int l = get_local_id(0), size = get_local_size(0);
  for (long i = start + l; i < end; i += size) c += flags[i] != 0;
  sums[l] = c;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = size / 2; s > 0; s >>= 1) {{
    if (l < s) sums[l] += sums[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (l == 0) counts[g] = sums[0];
}}
__kernel void incflat_compact_offsets(__global long *counts, long groups) {{
  if (get_global_id(0) != 0) return;
  long acc = 0;
  for (long g = 0; g < groups; g++) {{ long c = counts[g]; counts[g] = acc; acc += c; }}
  counts[groups] = acc;
}}
__kernel void incflat_compact_positions(__global const uchar *flags, long n, long per_group,
                                        __global const long *counts, __global long *pos) {{
  __local long sums[{COMPACT_GROUP}];
  long g = get_group_id(0), start = g * per_group, end = min(n, start + per_group), base = counts[g];
  int l = get_local_id(0), size = get_local_size(0);
  for (long t = start; t < end; t += size) {{
    long i = t + l, f = (i < end && flags[i] != 0) ? 1 : 0;
    sums[l] = f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < size; d <<= 1) {{
      long v = l >= d ? sums[l - d] : 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      sums[l] += v;
      barrier(CLK_LOCAL_MEM_FENCE);
    }}
    if (i < end) pos[i] = f ? base + sums[l] - 1 : -1;
    base += sums[size - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
}}
"""


COPY_SOURCE = _copy_source()


def copy_into(ctx, src, dst):
    """Copies the elements of the view `src` into the view `dst` of the same shape, on the device."""
    n = math.prod(src.shape)
    if n == 0:
        return
    size = src.dtype.itemsize
    if src.buf is not dst.buf and contiguous(src) and contiguous(dst):  # one command, no kernel's arguments
        ctx.timed("incflat_copy_buffer", cl.enqueue_copy(ctx.queue, dst.buf, src.buf, byte_count=n * size,
                                                         src_offset=src.offset * size, dst_offset=dst.offset * size))
        return
    group = 256
    _run_copy_kernel(ctx, f"incflat_copy_{size}", (ceil_div(n, group) * group,), (group,), src.buf, dst.buf,
                     _copy_args(src, dst, n))


def _copy_args(src, dst, n) -> bytes:
    """The packed incflat_copy_args of a copy of n elements between two views of one shape."""
    rank = len(src.shape)
    if rank > COPY_RANK or src.dtype.itemsize not in _COPY_TYPES:  # not expected: no type has another size
        raise ProgramError(f"copy of {rank}-dimensional {src.dtype} elements")
    # the destination's smallest stride last: consecutive threads write consecutive addresses
    order = sorted(range(rank), key=lambda k: -abs(dst.strides[k]))
    dims, sstr, dstr = merged_dimensions([src.shape[k] for k in order], [src.strides[k] for k in order],
                                         [dst.strides[k] for k in order])
    pad = [0] * (COPY_RANK - len(dims))
    return _COPY_ARGS.pack(src.offset, dst.offset, n, len(dims), *dims, *pad, *sstr, *pad, *dstr, *pad)


def copy_many(ctx, pairs):
    """Copies each (src, dst) pair of views of one shape (the destinations in one buffer, disjoint), COPIES of
    them a launch."""
    for start in range(0, len(pairs), COPIES):
        part = [(src, dst, math.prod(src.shape)) for src, dst in pairs[start:start + COPIES]]
        if len(part) == 1:
            copy_into(ctx, part[0][0], part[0][1])
            continue
        size, total = part[0][0].dtype.itemsize, sum(n for _, _, n in part)
        packed = struct.pack("<q", len(part)) + b"".join(_copy_args(src, dst, n) for src, dst, n in part)
        packed += bytes(_COPY_ARGS.size * (COPIES - len(part)))
        sources = [src.buf for src, _, _ in part] + [part[0][0].buf] * (COPIES - len(part))
        group = 256
        _run_copy_kernel(ctx, f"incflat_copies_{size}", (ceil_div(total, group) * group,), (group,), *sources,
                         part[0][1].buf, packed)


def merged_dimensions(dims, sstr, dstr) -> tuple:
    """The dimensions of a copy (outermost first) with those of one element left out and each adjacent pair
    that both views walk as one dimension (the outer's strides the inner's times its size) made one: fewer
    divisions a thread (LUD's 4-D blocks copy as 2-D)."""
    out_d, out_s, out_t = [], [], []
    for d, a, b in zip(dims, sstr, dstr):
        if d == 1:
            continue
        if out_d and out_s[-1] == a * d and out_t[-1] == b * d:
            out_d[-1], out_s[-1], out_t[-1] = out_d[-1] * d, a, b
        else:
            out_d.append(d), out_s.append(a), out_t.append(b)
    return (out_d, out_s, out_t) if out_d else ([1], [0], [0])


def span(arr):
    """The lowest and highest offsets of a view's elements in its buffer (a view may run backwards: negative
    strides); None where it has no element."""
    if not all(arr.shape):
        return None
    reach = [(d - 1) * s for d, s in zip(arr.shape, arr.strides)]
    return arr.offset + sum(r for r in reach if r < 0), arr.offset + sum(r for r in reach if r > 0)


def contiguous(arr) -> bool:
    """Whether an array's elements lie row-major, one after another from its offset."""
    return arr.strides == row_major_strides(arr.shape)


def rows_of(arr, start, count):
    """The view of `count` rows of arr from row `start`."""
    return DeviceArray(arr.buf, (count,) + arr.shape[1:], arr.dtype, arr.strides,
                       arr.offset + start * arr.strides[0])


def transpose_into(ctx, src, rows, cols, dst):
    """dst (contiguous, [cols][rows]) = the transpose of the row-major [rows][cols] matrix at src's offset."""
    tile, size = TRANSPOSE_TILE, src.dtype.itemsize
    _run_copy_kernel(ctx, f"incflat_transpose_{size}", (ceil_div(cols, tile) * tile, ceil_div(rows, tile) * 8),
                     (tile, 8), src.buf, np.int64(src.offset), dst.buf, np.int64(dst.offset), np.int64(rows),
                     np.int64(cols))


def _run_copy_kernel(ctx, name, global_size, local_size, *args):
    """Launches one of the runtime's copy kernels; `-P` counts it with the program's kernels."""
    ctx.launch_runtime_kernel(name, global_size, local_size, args)


def coalesced(ctx, arr, inner):
    """arr with its first `inner` dimensions innermost in memory (interleaved_strides): itself when it is
    laid out so already, else a copy (a tiled transpose when arr is row-major)."""
    if len(arr.shape) <= inner or math.prod(arr.shape) == 0:
        return arr
    threads, row = math.prod(arr.shape[:inner]), math.prod(arr.shape[inner:])
    # one thread has no neighbours to read beside (pathfinder_batch's batch of one grid: the copy took 2 s on a
    # CPU); a dimension of one element has no stride that matters
    strides = interleaved_strides(arr.shape, inner)
    if threads == 1 or all(a == b for d, a, b in zip(arr.shape, arr.strides, strides) if d != 1):
        return arr
    out = ctx.empty(arr.shape, arr.dtype, interleave=inner)
    if contiguous(arr) and arr.dtype.itemsize in _COPY_TYPES:
        transpose_into(ctx, arr, threads, row, out)
    else:
        copy_into(ctx, arr, out)
    return out


def ceil_div(a, b):
    return -(-int(a) // int(b))


# ---- host-level scalar arithmetic with Futhark semantics ----

def int_div(x, y, kind, where=""):
    """Integer division and remainder as Futhark defines them (`/` `%` floor, `//` `%%` truncate)."""
    if y == 0:
        fail(where, "division by zero")
    t = type(x)
    xi, yi = int(x), int(y)
    q = xi // yi if kind in ("/", "%") else abs(xi) // abs(yi) * (1 if (xi < 0) == (yi < 0) else -1)
    r = xi - q * yi
    return wrap(t, q if kind in ("/", "//") else r)


def int_pow(t, x, y, where=""):
    """Integer `**` of numpy type t, wrapped; a negative exponent is an error, as in Futhark."""
    if int(y) < 0:
        fail(where, "Negative exponent in integer power.")
    return wrap(t, pow(int(x), int(y), 2 ** (8 * np.dtype(t).itemsize)))


# each integer type's least value and number of values (np.iinfo costs more than the wrapping itself)
_WRAP_RANGES = {p.dtype.type: (p.range[0], p.range[1] - p.range[0] + 1) for p in PRIMS.values() if p.is_int}


def wrap(t, v):
    """An integer wrapped to the width of numpy integer type t (host code wraps every integer operation)."""
    low, span = _WRAP_RANGES[t]
    return t((int(v) - low) % span + low)


# ---- host-level operations of the generated code ----
# Those that move data through the host (concat, rotate, array literals of arrays) are correct
# but slow; they are meant for small host-level glue, not for the parallel work.

def check_size(expected, actual, name, array):
    if int(expected) != int(actual):
        raise ProgramError(f"size mismatch: {array} has size {int(actual)} where {name} = {int(expected)}")


def check_coercion(expected, shape, dim, where=""):
    """`y :> [n]t` of an array of `shape` (its shape, or its type's where the array is not made): dimension
    dim must be n."""
    if int(expected) != int(shape[dim]):
        wanted = [int(d) for d in shape]
        wanted[dim] = int(expected)
        fail(where, f"Cannot coerce an array of shape {shape_text(shape)} to shape {shape_text(wanted)}.")


def check_assertion(cond, message, values, where=""):
    """`assert` (and a range's validity): fails with message, its {0}, {1}... filled from values."""
    if not cond:
        fail(where, message.format(*(int(v) for v in values)))


def check_sizes(shape, what, where=""):
    """A negative size is a run-time error (the message is the reference interpreter's)."""
    for d in shape:
        if int(d) < 0:
            fail(where, f"Negative size {int(d)} in {what}.")


IOTAS_KEPT, IOTA_KEPT_ELEMENTS = 32, 2 ** 22


def iota(ctx, n, dtype, where=""):
    """`iota n`, made once per length and type for the program on its device (arrays are values, and no
    statement writes into an iota's buffer: see codegen.host.FRESH_ARRAYS): a host loop or an entry point
    called again reads the same one (pathfinder_batch reads `iota cols` at every call)."""
    n = int(n)
    kept = ctx.device_state.iotas
    found = kept.get((n, dtype))
    if found is not None:
        return found
    out = ctx.empty((n,), dtype, where, "iota")
    size = out.dtype.itemsize
    if n and out.dtype.kind in "iu" and size in _COPY_TYPES:
        group = 256
        _run_copy_kernel(ctx, f"incflat_iota_{size}", (ceil_div(n, group) * group,), (group,), out.buf, np.int64(n))
    elif n:  # not expected: iota's elements are integers
        ctx.upload(out.buf, np.arange(n, dtype=dtype))
    if n <= IOTA_KEPT_ELEMENTS:
        if len(kept) >= IOTAS_KEPT:
            kept.pop(next(iter(kept)))
        kept[n, dtype] = out
    return out


def replicate(ctx, x, shape, dtype, where=""):
    """An array of shape `shape` (the count, then x's shape) of copies of x."""
    out = ctx.empty(shape, dtype, where, "replicate")
    if not (out.shape and math.prod(out.shape)):
        return out
    if isinstance(x, DeviceArray):  # copied on the device from a view that repeats x (stride 0), not read back
        copy_into(ctx, DeviceArray(x.buf, out.shape, x.dtype, (0,) + tuple(x.strides), x.offset), out)
    elif np.ndim(x) == 0:  # a host scalar: the device fills the buffer with it
        ctx.timed("incflat_fill", cl.enqueue_fill_buffer(ctx.queue, out.buf, np.asarray(x, out.dtype).reshape(1), 0,
                                                         math.prod(out.shape) * out.dtype.itemsize))
    else:  # not expected: a host array (generated code holds arrays on the device)
        ctx.upload(out.buf, np.broadcast_to(np.asarray(x, dtype), out.shape))
    return out


def to_host(ctx, x):
    """x's value on the host; a scalar left on the device is read back once, however often the host uses it."""
    if not isinstance(x, DeviceArray):
        return x
    if x.shape:
        return ctx.from_device(x)
    if x._value is None:
        x._value = ctx.from_device(x)
    return x._value


def shape_text(shape):
    return "".join(f"[{int(n)}]" for n in shape)


def index(ctx, arr, idxs, where=""):
    """arr[idxs]: each index an integer, or a slice (start, end, stride, size). Slices are views."""
    offset, shape, strides = arr.offset, [], []
    for k, i in enumerate(idxs):
        d, s = arr.shape[k], arr.strides[k]
        if type(i) is tuple:
            start, end, stride, size = (int(v) for v in i)
            ok = stride != 0 and size >= 0 and (size == 0 or (0 <= start < d and 0 <= start + (size - 1) * stride < d))
            if not ok or size != max(0, -(-(end - start) // stride)):
                shown = f"{start}:{end}" + (f":{stride}" if stride != 1 else "")
                fail(where, f"Index [{shown}] out of bounds for array of shape {shape_text(arr.shape)}.")
            offset += start * s if size else 0
            shape.append(size)
            strides.append(s * stride)
        else:
            i = int(i)
            if not 0 <= i < d:
                shown = ", ".join(str(int(j)) if not isinstance(j, tuple) else f"{j[0]}:{j[1]}" for j in idxs)
                fail(where, f"Index [{shown}] out of bounds for array of shape {shape_text(arr.shape)}.")
            offset += i * s
    if len(idxs) < len(arr.shape) or shape:
        return DeviceArray.view(arr.buf, (*shape, *arr.shape[len(idxs):]), arr.dtype,
                                (*strides, *arr.strides[len(idxs):]), offset)
    host = np.empty(1, arr.dtype)
    ctx.download(host, arr.buf, offset * arr.dtype.itemsize)
    return host[0]


def manifest(ctx, arr):
    """A fresh row-major copy of an array (a view may share its buffer or be strided)."""
    out = ctx.empty(arr.shape, arr.dtype)
    copy_into(ctx, arr, out)
    return out


def destination(ctx, arr, in_place, *reads):
    """The array an update or a scatter (or a kernel fused with it) writes into: arr itself where the caller
    owns it (in_place: nothing else reads its buffer) and it is row-major and none of the arrays the write
    reads is in its buffer, else a copy."""
    shared = any(isinstance(r, DeviceArray) and r.buf is arr.buf for r in reads)
    if in_place and not shared and contiguous(arr):
        return arr
    return manifest(ctx, arr)


def array_literal(ctx, elems, dtype, where=""):
    """[e0, e1, ...]: elements on the host are uploaded (all at once where all are), those on the device
    (scalars and rows) copied there."""
    shapes = [tuple(e.shape) if isinstance(e, DeviceArray) else np.shape(e) for e in elems]
    if any(s != shapes[0] for s in shapes):
        fail(where, "the elements of an array literal have different shapes: "
             + ", ".join(shape_text(s) for s in shapes) + ".")
    if not any(isinstance(e, DeviceArray) for e in elems):
        return ctx.to_device(np.array(elems, dtype=dtype))
    out = ctx.empty((len(elems),) + shapes[0], dtype)
    for k, e in enumerate(elems):
        row = rows_of(out, k, 1)
        if isinstance(e, DeviceArray):  # (the stride of the row's one-long dimension does not matter)
            copy_into(ctx, DeviceArray(e.buf, row.shape, e.dtype, row.strides[:1] + e.strides, e.offset), row)
        elif math.prod(shapes[0]):
            ctx.upload(out.buf, np.asarray(e, dtype), row.offset * out.dtype.itemsize)
    return out


CONSTANTS_KEPT = 256


def constant_array(ctx, values, dtype):
    """An array literal of constants, uploaded once per program and device (no statement writes into it:
    codegen.host.constant_literal)."""
    kept = ctx.device_state.constants
    found = kept.get((values, dtype))
    if found is None:
        host = np.array(values, dtype=dtype)
        found = ctx.empty(host.shape, host.dtype)
        if host.size:
            ctx.upload(found.buf, host, constant=True)
        if len(kept) < CONSTANTS_KEPT:
            kept[values, dtype] = found
    return found


def concat(ctx, arrs, size, where=""):
    """The arrays one after another, copied on the device."""
    if any(a.shape[1:] != arrs[0].shape[1:] for a in arrs):
        fail(where, "cannot concatenate arrays of shapes " + ", ".join(shape_text(a.shape) for a in arrs) + ".")
    total = sum(a.shape[0] for a in arrs)
    if total != int(size):
        fail(where, f"size mismatch: the concatenation has {total} elements, not {int(size)}.")
    out = ctx.empty((total,) + arrs[0].shape[1:], arrs[0].dtype)
    start = 0
    for a in arrs:
        if a.shape[0]:
            copy_into(ctx, a, rows_of(out, start, a.shape[0]))
        start += a.shape[0]
    return out


def rotate(ctx, amount, arr):
    """arr's rows rotated left by amount (right where negative), copied on the device in two parts."""
    n = arr.shape[0]
    k = int(amount) % n if n else 0
    if k == 0:
        return arr
    out = ctx.empty(arr.shape, arr.dtype)
    copy_into(ctx, rows_of(arr, k, n - k), rows_of(out, 0, n - k))
    copy_into(ctx, rows_of(arr, 0, k), rows_of(out, n - k, k))
    return out


def reshape(ctx, shape, arr, where=""):
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape) or math.prod(shape) != math.prod(arr.shape):
        fail(where, f"Cannot reshape array of shape {shape_text(arr.shape)} to array of shape {shape_text(shape)}.")
    flat = arr if contiguous(arr) else manifest(ctx, arr)
    return DeviceArray(flat.buf, shape, flat.dtype, None, flat.offset)


def scatter(ctx, dest, idxs, vals, in_place=False):
    """dest with row idxs[k] replaced by vals[k] for every idxs[k] in bounds, on the device: into dest's own
    buffer where the caller owns it (in_place: a row-major array that nothing else reads), else into a copy. Of
    several writes to one row, one wins (which is unspecified, as in Futhark)."""
    out = destination(ctx, dest, in_place, idxs, vals)
    row = math.prod(dest.shape[1:])
    count = idxs.shape[0]
    size = dest.dtype.itemsize
    if count * row == 0:
        return out
    if size not in _COPY_TYPES or len(idxs.strides) != 1:  # not expected: no element type has another size
        raise ProgramError(f"scatter of {dest.dtype} elements")
    if not contiguous(vals):
        vals = manifest(ctx, vals)
    group = 256
    _run_copy_kernel(ctx, f"incflat_scatter_{size}", (ceil_div(count * row, group) * group,), (group,), out.buf,
                     np.int64(out.offset), np.int64(dest.shape[0]), np.int64(row), idxs.buf,
                     np.int64(idxs.offset), np.int64(idxs.strides[0]), vals.buf, np.int64(vals.offset),
                     np.int64(count))
    return out


def compact(ctx, flags, arrs, where=""):
    """The count and the elements of each array where flags hold (filter's second half), on the device: the
    count is read back (the arrays' size), nothing else."""
    n = flags.shape[0]
    if n == 0:
        return [np.int64(0)] + [ctx.empty((0,) + a.shape[1:], a.dtype, where, "filter") for a in arrs]
    if flags.offset or not contiguous(flags):  # (the kernels read it from element 0)
        flags = manifest(ctx, flags)
    group = 1 << (min(COMPACT_GROUP, ctx.max_group_size).bit_length() - 1)
    groups = min(ceil_div(n, group), 1024)
    per_group = ceil_div(ceil_div(n, groups), group) * group
    counts = ctx.empty((groups + 1,), np.int64, where, "filter")
    positions = ctx.empty((n,), np.int64, where, "filter")
    args = (flags.buf, np.int64(n), np.int64(per_group))
    _run_copy_kernel(ctx, "incflat_compact_counts", (groups * group,), (group,), *args, counts.buf)
    _run_copy_kernel(ctx, "incflat_compact_offsets", (1,), (1,), counts.buf, np.int64(groups))
    _run_copy_kernel(ctx, "incflat_compact_positions", (groups * group,), (group,), *args, counts.buf,
                     positions.buf)
    kept = np.int64(index(ctx, counts, (groups,), where))
    out = [kept]
    for a in arrs:
        dest = ctx.empty((int(kept),) + a.shape[1:], a.dtype, where, "filter")
        out.append(scatter(ctx, dest, positions, a, in_place=True) if kept else dest)
    return out


def prim_call(fn, result_type, *args):
    module, name = fn.split(".", 1)
    if name in PRIMS:
        if module == "bool":
            return result_type(args[0] != 0)
        if PRIMS[module].is_int and PRIMS[name].is_float:
            return float_to_int(args[0], result_type)
        return result_type(args[0])
    extra = prelude_function(module, name)
    if extra is not None:
        with np.errstate(all="ignore"):
            return result_type(extra(*args))
    f = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "abs": np.abs, "floor": np.floor, "ceil": np.ceil, "min": min, "max": max,
         "atan2": np.arctan2, "pow": np.power, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
         "sgn": np.sign, "neg": np.negative, "log2": np.log2, "log10": np.log10, "asin": np.arcsin,
         "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
         "round": np.rint, "trunc": np.trunc, "cbrt": np.cbrt, "log1p": np.log1p, "expm1": np.expm1,
         "hypot": np.hypot}[name]
    return result_type(f(*args))


def groups_per_segment(segments, width, num_groups, group_size):
    """Several workgroups share a segment only when there are too few segments to fill the device."""
    if segments == 0 or segments >= num_groups:
        return 1
    return max(1, min(ceil_div(num_groups, segments), ceil_div(width, group_size)))


def segment_group_size(group_size, width):
    """A workgroup per segment: at most group_size threads, fewer for short segments so that each
    thread folds about 64 elements (the workgroup's final combination costs more with more threads)."""
    fitting = 32
    while fitting * 2 <= min(group_size, width // 64):
        fitting *= 2
    return min(group_size, fitting)


def thread_parts(segments, width, num_groups, group_size):
    """With a thread per segment: how many threads share one, so that the grid has about num_groups / 2
    workgroups (the parts are combined by a thread per segment: few are cheaper), each thread folding at
    least 32 elements."""
    return max(1, min(ceil_div(num_groups * group_size // 2, segments), width // 32))


