"""The runtime that every compiled program carries (embedded verbatim after ir/values.py).

It chooses the device, builds the OpenCL program, holds the tuning-parameter table, logs threshold
comparisons, launches kernels, and implements the executable's command line (docs/contracts.md).
Only the standard library, numpy and pyopencl may be imported here.
"""
import argparse
import contextlib
import math
import os
import re
import struct
import sys
import time

import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools

from ir.values import read_values, type_name, write_binary, write_text  # embed: drop

GPU_DEFAULT_THRESHOLD = 32768
DEFAULT_TILE_SIZE = 16  # the tile size at which the thesis's tuner tunes the thresholds (§3.1)
# Below this many elements in every buffer and in a launch's reach, kernels index in 32 bits (idx_t).
INDEX32_LIMIT = 2 ** 31 - 2 ** 16
DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f32": np.float32, "f64": np.float64,
          "bool": np.bool_}


class ProgramError(Exception):
    """An error the user caused (bad input, bad option): printed as one line, no traceback."""


class KernelUnavailable(ProgramError):
    """A kernel that the device's compiler could not build; a guard falls back to its next version."""


def split_kernels(source: str) -> tuple:
    """(the helpers every kernel shares, {kernel name: its source}) of a program's OpenCL source."""
    parts = re.split(r"(?m)^(?=__kernel void )", source)
    return parts[0], {re.match(r"__kernel void (\w+)", part).group(1): part for part in parts[1:]}


@contextlib.contextmanager
def compiler_quiet():
    """Some OpenCL compilers (PoCL's clang) print their diagnostics straight to the process's stderr;
    a build failure is reported here instead, once, in words."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def build_kernels(cl_ctx, source: str, defines: tuple = ()) -> tuple:
    """({name: kernel}, {name: why it did not build}). The whole program is built at once; only when
    that fails is each kernel built on its own, so that one the device cannot compile (too much local
    memory, say) takes only its own version out."""
    options = ["-w", *(f"-D{d}" for d in defines)]  # warnings are not for users
    try:
        with compiler_quiet():
            program = cl.Program(cl_ctx, source).build(options=options)
        return {k.function_name: k for k in program.all_kernels()}, {}
    except cl.Error:
        pass
    prelude, sources = split_kernels(source)
    kernels, failures = {}, {}
    for name, text in sources.items():
        try:
            with compiler_quiet():
                kernels[name] = getattr(cl.Program(cl_ctx, prelude + text).build(options=options), name)
        except cl.Error as e:
            lines = [l.strip() for l in str(e).splitlines() if "error" in l.lower()]
            failures[name] = re.sub(r"\S+\.cl:\d+:\d+: ", "", lines[-1] if lines else str(e).splitlines()[0])
    return kernels, failures


class DeviceArray:
    """An array in device memory: a buffer with an element offset and strides (a view)."""
    __slots__ = ("buf", "shape", "strides", "offset", "dtype", "_args")

    def __init__(self, buf, shape, dtype, strides=None, offset=0):
        # entry points make arrays at every call: this is on the host's critical path
        shape = tuple(map(int, shape))
        dt = NP_DTYPES.get(dtype)
        self.buf, self.shape, self.dtype, self.offset = buf, shape, dt if dt else np.dtype(dtype), offset
        self.strides = tuple(strides) if strides is not None else row_major_strides(shape)
        self._args = None

    def permute(self, perm):
        order = tuple(perm) + tuple(range(len(perm), len(self.shape)))
        return DeviceArray(self.buf, [self.shape[i] for i in order], self.dtype,
                           [self.strides[i] for i in order], self.offset)

    def kernel_args(self):
        if self._args is None:  # an array is passed to many kernels: its arguments are made once
            self._args = [self.buf, self.offset, *self.strides]
        return self._args

    def flat_args(self):
        """Arguments for a kernel that indexes this (contiguous) array as one dimension."""
        return [self.buf, self.offset, 1]


def row_major_strides(shape):
    strides = [1] * len(shape)
    for k in range(len(shape) - 1, 0, -1):
        d = int(shape[k])
        strides[k - 1] = strides[k] * (d if d > 1 else 1)
    return tuple(strides)


NP_DTYPES = {t: np.dtype(t) for t in DTYPES.values()}  # np.dtype(t), made once
NP_DTYPES.update({d: d for d in list(NP_DTYPES.values())})


def list_devices():
    return [(p, d) for p in cl.get_platforms() for d in p.get_devices()]


def choose_device(platform_sub=None, device_sub=None):
    """The first device matching the substrings, preferring a GPU over a CPU (DESIGN §6)."""
    candidates = [(p, d) for p, d in list_devices()
                  if (not platform_sub or platform_sub.lower() in p.name.lower())
                  and (not device_sub or device_sub.lower() in d.name.lower())]
    if not candidates:
        raise ProgramError(f"no OpenCL device matches platform {platform_sub!r} and device {device_sub!r}")
    candidates.sort(key=lambda pd: 0 if pd[1].type & cl.device_type.GPU else 1)
    return candidates[0][1]


class DeviceState:
    """The OpenCL objects of one program on one device, shared by every Context made for them in a
    process (a library user or a test may make many): the context, queue, built kernels, memory pool,
    error buffer, and the arguments each kernel was last launched with."""

    def __init__(self, device, source, profile):
        self.cl_ctx = cl.Context([device])
        props = cl.command_queue_properties.PROFILING_ENABLE if profile else 0
        self.queue = cl.CommandQueue(self.cl_ctx, properties=props)
        # Kernels index in 32 bits; the 64-bit build is made on the first launch that needs it.
        self.source, self.builds = source, {False: build_kernels(self.cl_ctx, source)}
        self.widest = 0  # the most elements of any buffer allocated for this program: it may reach any kernel
        # Buffers come from a pool and go back to it when no array refers to them any more, so that a
        # program run again (or a loop on the host) reuses device memory instead of allocating it anew.
        self.pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        self.error_buf = cl.Buffer(self.cl_ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                                   hostbuf=np.zeros(8, np.int64))
        self.last_args = {False: {}, True: {}}  # build -> kernel name -> the keys of its last arguments
        self.group_limits = {}  # kernel name -> the most threads a workgroup of it can have
        # The single-pass scan's block statuses, tagged with the launch's epoch so that they never need
        # clearing, and its block counters (reset by each launch's last block).
        self.scan_status, self.scan_blocks, self.scan_epoch = None, 0, 0
        self.scan_counters = cl.Buffer(self.cl_ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                                       hostbuf=np.zeros(2, np.uint32))
        # A reduction's count of finished workgroups per segment, zero between launches (the last
        # workgroup of a segment resets its count).
        self.finished, self.finished_size = None, 0

    def kernels(self, wide: bool) -> tuple:
        """({name: kernel}, {name: why it did not build}) of the 32-bit (or with wide, 64-bit) build."""
        if wide not in self.builds:
            self.builds[wide] = build_kernels(self.cl_ctx, self.source, ("INDEX64",))
            self.group_limits.clear()  # now the least over both builds
        return self.builds[wide]

    def segment_counters(self, queue, segments):
        if segments > self.finished_size:
            self.finished_size = max(segments, 2 * self.finished_size, 1024)
            self.finished = cl.Buffer(self.cl_ctx, cl.mem_flags.READ_WRITE, self.finished_size * 4)
            cl.enqueue_fill_buffer(queue, self.finished, np.uint32(0), 0, self.finished_size * 4)
        return self.finished

    def lookback(self, queue, blocks):
        """The arguments of a single-pass scan over `blocks` blocks."""
        if blocks > self.scan_blocks or self.scan_epoch + 1 >= 2 ** 29:
            self.scan_blocks = max(blocks, 2 * self.scan_blocks, 1024)
            self.scan_status = cl.Buffer(self.cl_ctx, cl.mem_flags.READ_WRITE, self.scan_blocks * 8)
            cl.enqueue_fill_buffer(queue, self.scan_status, np.uint64(0), 0, self.scan_blocks * 8)
            self.scan_epoch = 0
        self.scan_epoch += 1
        return [self.scan_status, self.scan_counters, self.scan_epoch]


_DEVICE_STATES = {}


def device_state(device, source, profile):
    key = (device.int_ptr, source, profile)
    if key not in _DEVICE_STATES:
        _DEVICE_STATES[key] = DeviceState(device, source, profile)
    return _DEVICE_STATES[key]


class Context:
    def __init__(self, source, params, tuned_defaults, device=None, platform=None, overrides=None,
                 default_threshold=None, default_group_size=None, log=False, profile=False, debug=False,
                 default_tile_size=None):
        self.device = choose_device(platform, device)
        self.is_gpu = bool(self.device.type & cl.device_type.GPU)
        self.device_state = device_state(self.device, source, profile)
        self.cl_ctx, self.queue = self.device_state.cl_ctx, self.device_state.queue
        self.log, self.profile, self.debug = log, profile, debug
        self.max_group_size = self.device.max_work_group_size
        self.local_mem_size = self.device.local_mem_size
        cus = self.device.max_compute_units
        self.default_threshold = default_threshold or (GPU_DEFAULT_THRESHOLD if self.is_gpu else cus)
        self.group_size = min(default_group_size or (256 if self.is_gpu else 32), self.max_group_size)
        self.num_groups = (8 if self.is_gpu else 1) * cus  # enough resident threads to keep memory busy
        self.default_tile_size = default_tile_size or DEFAULT_TILE_SIZE
        self.values = {}
        for name, cls in params:
            self.values[name] = self.default_threshold if cls.startswith("threshold") else 0
        for src in (tuned_defaults, overrides or {}):
            for name, value in src.items():
                if name not in self.values:
                    raise ProgramError(f"unknown tuning parameter {name!r}")
                self.values[name] = int(value)
        if debug:
            print(f"Device: {self.device.name} ({self.device.platform.name})", file=sys.stderr)
        self.pool, self.error_buf = self.device_state.pool, self.device_state.error_buf

        self.kernel_times = {}
        self.local_memory = {}
        self.versions_open, self.version_log = [], []  # guard decisions being run, and those done
        self.warned = set()

    # ---- thresholds ----

    def cmp(self, name, par):
        """The guard `threshold <= par`; true takes the less flattened version."""
        result = self.values[name] <= int(par)
        if self.log:
            print(f"Compared {name} <= {int(par)}: {'true' if result else 'false'}.", file=sys.stderr)
        return result

    def size(self, name, default, most):
        """A workgroup or grid size: the tuning parameter when set (not 0), else the default."""
        value = self.values[name]
        return min(value, most) if value > 0 else default

    def tile_size(self, kernel, name):
        """The side of a tiled kernel's square workgroup: the tuning parameter when set, else the
        default, no more than the kernel can be launched with."""
        tile = self.size(name, self.default_tile_size, 2 ** 15)
        return max(1, min(tile, math.isqrt(self.kernel_group_size((kernel,), tile * tile))))

    def warn_once(self, threshold, failure):
        """A version that failed to launch; the program goes on with the next version."""
        if threshold not in self.warned:
            self.warned.add(threshold)
            print(f"Warning: the version guarded by {threshold} could not be run on {self.device.name} "
                  f"({failure}); using the next version.", file=sys.stderr)

    def fits_group(self, par, local_bytes_per_thread=0):
        """Whether one workgroup can hold par threads and their local memory."""
        return 0 < int(par) <= self.max_group_size and int(par) * local_bytes_per_thread <= self.local_mem_size

    # ---- memory ----

    def empty(self, shape, dtype):
        arr = DeviceArray(None, shape, dtype)
        count = math.prod(arr.shape)
        if count > self.device_state.widest:
            self.device_state.widest = count
        arr.buf = self.pool.allocate(max(count * arr.dtype.itemsize, 1))
        return arr

    def scratch(self, count, dtype):
        """Global memory for intermediate arrays inside kernels."""
        count = int(count)
        if count > self.device_state.widest:
            self.device_state.widest = count
        return self.pool.allocate(max(count * np.dtype(dtype).itemsize, 1))

    def to_device(self, a):
        a = np.ascontiguousarray(a)
        arr = self.empty(a.shape, a.dtype)
        if a.size:
            cl.enqueue_copy(self.queue, arr.buf, a)
        return arr

    def from_device(self, arr):
        """A numpy copy of a (possibly strided) device array; a numpy scalar for a rank-0 array."""
        if any(d == 0 for d in arr.shape):
            return np.empty(arr.shape, arr.dtype)
        if arr.strides == row_major_strides(arr.shape):  # contiguous: only its own elements are read
            host = np.empty(arr.shape, arr.dtype)
            cl.enqueue_copy(self.queue, host, arr.buf, src_offset=arr.offset * arr.dtype.itemsize)
            return host[()] if host.ndim == 0 else host
        span = arr.offset + 1 + sum((d - 1) * s for d, s in zip(arr.shape, arr.strides))
        host = np.empty(span, arr.dtype)
        cl.enqueue_copy(self.queue, host, arr.buf)
        out = np.array(np.lib.stride_tricks.as_strided(host[arr.offset:], arr.shape,
                                                       [s * arr.dtype.itemsize for s in arr.strides]))
        return out[()] if out.ndim == 0 else out

    # ---- kernels ----

    def launch(self, name, global_size, local_size, args, reach):
        """reach: a bound on the flat indices the kernel forms. With it, the buffers and the grid below
        INDEX32_LIMIT elements, the kernel's index arithmetic fits in 32 bits."""
        if global_size == 0:
            return
        state = self.device_state
        wide = reach >= INDEX32_LIMIT or global_size >= INDEX32_LIMIT or state.widest >= INDEX32_LIMIT
        kernel = state.kernels(wide)[0].get(name) or self.unavailable(name, wide)
        # Setting an argument costs more than launching (on some drivers several microseconds each), so
        # only the arguments that changed since this kernel's last launch are set.
        last = state.last_args[wide].setdefault(name, [None] * len(args))
        types = KERNEL_ARG_TYPES[name]
        for i, arg in enumerate(args):
            kind = type(arg)
            key = arg if kind is int or kind is float else arg.size if kind is cl.LocalMemory else arg.int_ptr
            if last[i] != key:
                if types[i] is None:
                    kernel.set_arg(i, arg)
                else:
                    set_scalar_arg(kernel, i, types[i], arg)
                last[i] = key
        event = cl.enqueue_nd_range_kernel(self.queue, kernel, (int(global_size),), (int(local_size),))
        if self.profile:
            event.wait()
            took = (event.profile.end - event.profile.start) / 1e3
            total, count = self.kernel_times.get(name, (0.0, 0))
            self.kernel_times[name] = (total + took, count + 1)
            for record in self.versions_open:
                record["time_us"] += took

    def check_errors(self, table):
        """Raises the first run-time error a kernel recorded (bounds, division by zero), if any."""
        if not table:
            return
        record = np.empty(8, np.int64)
        cl.enqueue_copy(self.queue, record, self.error_buf)
        code = int(record.view(np.int32)[0])
        if code:
            cl.enqueue_copy(self.queue, self.error_buf, np.zeros(8, np.int64))
            where, template = table[code - 1]
            fail(where, template.format(*(int(v) for v in record[1:])))

    def local(self, nbytes):
        memory = self.local_memory.get(nbytes)
        if memory is None:  # one object a size: launches then see the same argument and skip setting it
            memory = self.local_memory[nbytes] = cl.LocalMemory(max(int(nbytes), 1))
        return memory

    def unavailable(self, name, wide=False):
        raise KernelUnavailable(f"kernel {name} could not be built for {self.device.name}: "
                                f"{self.device_state.kernels(wide)[1][name]}")

    def kernel_group_size(self, names, group_size):
        """group_size, or less where one of the kernels cannot be launched with that many threads."""
        state = self.device_state
        limits, kernels = state.group_limits, state.kernels(False)[0]
        for name in names:
            if name not in kernels:
                self.unavailable(name)
            if name not in limits:
                limits[name] = min(build[0][name].get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE,
                                                                      self.device)
                                   for build in state.builds.values() if name in build[0])
            group_size = min(group_size, limits[name])
        return group_size

    def fit_local(self, group_size, bytes_per_thread):
        """The largest workgroup size up to group_size whose local memory fits the device."""
        return max(1, min(group_size, (self.local_mem_size - 256) // bytes_per_thread))

    def lookback(self, blocks):
        return self.device_state.lookback(self.queue, blocks)

    def segment_counters(self, segments):
        return self.device_state.segment_counters(self.queue, segments)

    # ---- which version runs (recorded with -P) ----

    def enter(self, threshold, outcome, par):
        """The guard `threshold` chose `outcome` for parallelism `par`; kernels until leave() are its."""
        if self.profile:
            self.versions_open.append({"threshold": threshold, "outcome": bool(outcome), "epar": int(par),
                                       "time_us": 0.0})

    def leave(self):
        if self.profile:
            self.version_log.append(self.versions_open.pop())

    def report_profile(self, out=sys.stderr):
        print(f"{'kernel':<32} {'runs':>6} {'total us':>12}", file=out)
        for name, (total, count) in sorted(self.kernel_times.items()):
            print(f"{name:<32} {count:>6} {total:>12.1f}", file=out)
        print(f"{'version (guard: outcome)':<48} {'runs':>6} {'total us':>12}  ePar values", file=out)
        summary = {}
        for r in self.version_log:
            key = f"{r['threshold']}: {'true' if r['outcome'] else 'false'}"
            count, total, epars = summary.get(key, (0, 0.0, set()))
            summary[key] = (count + 1, total + r["time_us"], epars | {r["epar"]})
        for key, (count, total, epars) in sorted(summary.items()):
            shown = ", ".join(map(str, sorted(epars)[:8])) + (", ..." if len(epars) > 8 else "")
            print(f"{key:<48} {count:>6} {total:>12.1f}  {shown}", file=out)

    def profile_json(self):
        """Per kernel: runs and total time; per guard decision, in order: the ePar, the version it chose
        and the time of its kernels (the record the instrumentation tuner needs)."""
        return {"kernels": {name: {"runs": count, "total_us": round(total, 3)}
                            for name, (total, count) in sorted(self.kernel_times.items())},
                "versions": self.version_log}


# Per kernel, the numpy type of each scalar parameter (None for memory): scalar arguments are passed as
# Python numbers, which are cheap to compare with the last launch's, and converted when they change.
KERNEL_ARG_TYPES = {}

_PACK_FORMATS = {"i1": "b", "i2": "h", "i4": "i", "i8": "q", "u1": "B", "u2": "H", "u4": "I", "u8": "Q",
                 "f4": "f", "f8": "d"}
_PACKERS = {t: struct.Struct("=" + _PACK_FORMATS[f"{np.dtype(t).kind}{np.dtype(t).itemsize}"]).pack
            for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                      np.float64)}
_PACKERS[np.float32] = lambda x: np.float32(x).tobytes()  # rounds as numpy does (struct rejects overflow)
_SET_ARG_BUF = hasattr(cl.Kernel, "_set_arg_buf")


def set_scalar_arg(kernel, i, ctype, value):
    """Kernel.set_arg with a numpy scalar takes microseconds in pyopencl's type dispatch; its invokers
    set packed bytes instead (`_set_arg_buf`), and so does this where that method exists."""
    if _SET_ARG_BUF:
        kernel._set_arg_buf(i, _PACKERS[ctype](value))
    else:
        kernel.set_arg(i, ctype(value))


def ceil_div(a, b):
    return -(-int(a) // int(b))


# ---- host-level scalar arithmetic with Futhark semantics ----

def int_div(x, y, kind):
    """Integer division and remainder as Futhark defines them (`/` `%` floor, `//` `%%` truncate)."""
    if y == 0:
        raise ProgramError("division by zero")
    t = type(x)
    xi, yi = int(x), int(y)
    q = xi // yi if kind in ("/", "%") else abs(xi) // abs(yi) * (1 if (xi < 0) == (yi < 0) else -1)
    r = xi - q * yi
    return wrap(t, q if kind in ("/", "//") else r)


def wrap(t, v):
    """An integer wrapped to the width of numpy integer type t."""
    info = np.iinfo(t)
    span = int(info.max) - int(info.min) + 1
    return t((int(v) - int(info.min)) % span + int(info.min))


# ---- host-level operations of the generated code ----
# Those that move data through the host (concat, rotate, scatter, array literals of arrays) are correct
# but slow; they are meant for small host-level glue, not for the parallel work.

def check_size(expected, actual, name, array):
    if int(expected) != int(actual):
        raise ProgramError(f"size mismatch: {array} has size {int(actual)} where {name} = {int(expected)}")


def check_coercion(expected, arr, dim, where=""):
    if int(expected) != arr.shape[dim]:
        wanted = list(arr.shape)
        wanted[dim] = int(expected)
        fail(where, f"cannot coerce an array of shape {shape_text(arr.shape)} to shape {shape_text(wanted)}.")


def to_host(ctx, x):
    return ctx.from_device(x) if isinstance(x, DeviceArray) else x


def fail(where, message):
    raise ProgramError(f"{where}: {message}" if where else message)


def shape_text(shape):
    return "".join(f"[{int(n)}]" for n in shape)


def index(ctx, arr, idxs, where=""):
    """arr[idxs]: each index an integer, or a slice (start, end, stride, size). Slices are views."""
    offset, shape, strides = arr.offset, [], []
    for k, i in enumerate(idxs):
        d, s = arr.shape[k], arr.strides[k]
        if isinstance(i, tuple):
            start, end, stride, size = (int(v) for v in i)
            ok = stride != 0 and size >= 0 and (size == 0 or (0 <= start < d and 0 <= start + (size - 1) * stride < d))
            if not ok or size != max(0, -(-(end - start) // stride)):
                shown = f"{start}:{end}" + (f":{stride}" if stride != 1 else "")
                fail(where, f"Index [{shown}] out of bounds for array of shape {shape_text(arr.shape)}.")
            offset += start * s if size else 0
            shape.append(size)
            strides.append(s * stride)
        else:
            if not 0 <= int(i) < d:
                shown = ", ".join(str(int(j)) if not isinstance(j, tuple) else f"{j[0]}:{j[1]}" for j in idxs)
                fail(where, f"Index [{shown}] out of bounds for array of shape {shape_text(arr.shape)}.")
            offset += int(i) * s
    shape += arr.shape[len(idxs):]
    strides += arr.strides[len(idxs):]
    if shape:
        return DeviceArray(arr.buf, shape, arr.dtype, strides, offset)
    host = np.empty(1, arr.dtype)
    cl.enqueue_copy(ctx.queue, host, arr.buf, src_offset=offset * arr.dtype.itemsize)
    return host[0]


def manifest(ctx, arr):
    """A fresh row-major copy of an array (a view may share its buffer or be strided)."""
    out = ctx.empty(arr.shape, arr.dtype)
    n = int(np.prod(arr.shape, dtype=np.int64))
    if n == 0:
        return out
    if arr.strides == row_major_strides(arr.shape):
        cl.enqueue_copy(ctx.queue, out.buf, arr.buf, byte_count=n * arr.dtype.itemsize,
                        src_offset=arr.offset * arr.dtype.itemsize, dst_offset=0)
    else:
        cl.enqueue_copy(ctx.queue, out.buf, np.ascontiguousarray(ctx.from_device(arr)))
    return out


def update(ctx, arr, idxs, value, where=""):
    """arr with [idxs] = value, as a new array."""
    for k, i in enumerate(idxs):
        if not 0 <= int(i) < arr.shape[k]:
            shown = ", ".join(str(int(j)) for j in idxs)
            fail(where, f"Index [{shown}] out of bounds for array of shape {shape_text(arr.shape)}.")
    out = manifest(ctx, arr)
    row_shape = arr.shape[len(idxs):]
    row = np.asarray(to_host(ctx, value), dtype=arr.dtype)
    if row.shape != tuple(row_shape):
        fail(where, f"cannot write a value of shape {shape_text(row.shape)} into a row of shape {shape_text(row_shape)}.")
    offset = sum(int(i) * s for i, s in zip(idxs, out.strides))
    if row.size:
        cl.enqueue_copy(ctx.queue, out.buf, np.ascontiguousarray(row), dst_offset=offset * arr.dtype.itemsize)
    return out


def array_literal(ctx, elems, dtype, where=""):
    rows = [np.asarray(to_host(ctx, e), dtype=dtype) for e in elems]
    if any(r.shape != rows[0].shape for r in rows):
        fail(where, "the elements of an array literal have different shapes: "
             + ", ".join(shape_text(r.shape) for r in rows) + ".")
    return ctx.to_device(np.stack(rows))


def concat(ctx, arrs, size, where=""):
    parts = [to_host(ctx, a) for a in arrs]
    if any(p.shape[1:] != parts[0].shape[1:] for p in parts):
        fail(where, "cannot concatenate arrays of shapes " + ", ".join(shape_text(p.shape) for p in parts) + ".")
    out = np.concatenate(parts)
    if len(out) != int(size):
        fail(where, f"size mismatch: the concatenation has {len(out)} elements, not {int(size)}.")
    return ctx.to_device(out)


def rotate(ctx, amount, arr):
    return ctx.to_device(np.roll(to_host(ctx, arr), -int(amount), axis=0)) if arr.shape[0] else arr


def reshape(ctx, shape, arr, where=""):
    shape = tuple(int(d) for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != int(np.prod(arr.shape, dtype=np.int64)):
        fail(where, f"cannot reshape an array of shape {shape_text(arr.shape)} to {shape_text(shape)}.")
    flat = arr if arr.strides == row_major_strides(arr.shape) else manifest(ctx, arr)
    return DeviceArray(flat.buf, shape, flat.dtype, None, flat.offset)


def scatter(ctx, dest, idxs, vals):
    out = to_host(ctx, dest).copy()
    where_ok = [(int(i), v) for i, v in zip(to_host(ctx, idxs), to_host(ctx, vals)) if 0 <= int(i) < len(out)]
    for i, v in where_ok:
        out[i] = v
    return ctx.to_device(out)


def compact(ctx, flags, arrs):
    """The count and the elements of each array where flags hold (filter's second half)."""
    keep = to_host(ctx, flags).astype(bool)
    return [np.int64(keep.sum())] + [ctx.to_device(to_host(ctx, a)[keep]) for a in arrs]


def prim_call(fn, result_type, *args):
    module, name = fn.split(".", 1)
    if name in DTYPES:
        return result_type(args[0] != 0) if module == "bool" else result_type(args[0])
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


# ---- the executable ----

def read_tuning_file(path, params):
    """A tuning file's `name=int` lines; blank lines and `--` comments are skipped. Errors name the line."""
    known = {name for name, _ in params}
    values = {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise ProgramError(f"cannot read tuning file {path}: {e.strerror}")
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith("--"):
            continue
        name, eq, value = (part.strip() for part in s.partition("="))
        if not eq or not name or not value.lstrip("-").isdigit():
            raise ProgramError(f"{path}:{i}: invalid line (must be of form 'name=int'): {line!r}")
        if name not in known:
            raise ProgramError(f"{path}:{i}: unknown tuning parameter {name!r}")
        values[name] = int(value)
    return values


def parse_args(argv, entry_points):
    ap = argparse.ArgumentParser(prog=os.path.basename(sys.argv[0]), allow_abbrev=False)
    ap.add_argument("-e", "--entry-point", default="main")
    ap.add_argument("-t", "--write-runtime-to", metavar="FILE")
    ap.add_argument("-r", "--runs", type=int, default=1)
    ap.add_argument("-b", "--binary-output", action="store_true")
    ap.add_argument("-d", "--device")
    ap.add_argument("-p", "--platform")
    ap.add_argument("--list-devices", action="store_true")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--tuning", metavar="FILE")
    ap.add_argument("--default-threshold", type=int)
    ap.add_argument("--default-group-size", type=int)
    ap.add_argument("--default-tile-size", type=int)
    ap.add_argument("--print-params", action="store_true")
    ap.add_argument("-L", "--log", action="store_true")
    ap.add_argument("-P", "--profile", action="store_true")
    ap.add_argument("--profile-json", metavar="FILE", help="write the profile (-P) as JSON")
    ap.add_argument("-D", "--debug", action="store_true")
    return ap.parse_args(argv)


def main(entry_points, params, source, tuned_defaults, provenance, errors, argv=None):
    np.seterr(all="ignore")  # IEEE results (inf, nan) are values, as in Futhark, not warnings
    args = parse_args(sys.argv[1:] if argv is None else argv, entry_points)
    try:
        return _run(args, entry_points, params, source, tuned_defaults, provenance, errors)
    except ProgramError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except cl.Error as e:
        print(f"Error: OpenCL: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130


def _run(args, entry_points, params, source, tuned_defaults, provenance, errors):
    if args.print_params:
        for name, cls in params:
            print(f"{name} ({cls})")
        return 0
    if args.list_devices:
        for p, d in list_devices():
            print(f"{p.name}: {d.name}")
        return 0
    if args.entry_point not in entry_points:
        raise ProgramError(f"unknown entry point {args.entry_point!r}; this program has "
                           + ", ".join(sorted(entry_points)))
    if args.runs < 1:
        raise ProgramError(f"-r {args.runs}: the number of runs must be at least 1")
    for option, value in (("--default-group-size", args.default_group_size),
                          ("--default-tile-size", args.default_tile_size)):
        if value is not None and value < 1:
            raise ProgramError(f"{option} {value}: must be at least 1")
    overrides = {}
    if args.tuning:
        overrides.update(read_tuning_file(args.tuning, params))
    for p in args.param:
        name, eq, value = p.partition("=")
        if not eq or not value.strip().lstrip("-").isdigit():
            raise ProgramError(f"--param {p}: must be of form NAME=INT")
        if name not in dict(params):
            raise ProgramError(f"--param {p}: unknown tuning parameter {name!r}")
        overrides[name] = int(value)
    profile = args.profile or bool(args.profile_json)
    ctx = Context(source, params, tuned_defaults, args.device, args.platform, overrides,
                  args.default_threshold, args.default_group_size, args.log, profile, args.debug,
                  args.default_tile_size)
    if args.debug and provenance:
        print(f"Tuned defaults: {provenance}", file=sys.stderr)
    entry = entry_points[args.entry_point]
    try:
        inputs = read_values(sys.stdin.buffer)
    except ValueError as e:
        raise ProgramError(f"reading input: {e}")
    device_inputs = entry.upload(ctx, inputs)
    times = []
    results = None
    for _ in range(args.runs):
        ctx.queue.finish()
        start = time.perf_counter()
        results = entry.fn(ctx, *device_inputs)
        ctx.queue.finish()
        times.append(int(round((time.perf_counter() - start) * 1e6)))
        ctx.check_errors(errors)
    if args.write_runtime_to:
        with open(args.write_runtime_to, "w") as f:
            f.writelines(f"{t}\n" for t in times)
    out = sys.stdout
    for value in results:
        host = to_host(ctx, value)
        if args.binary_output:
            out.flush()
            write_binary(host, out.buffer)
        else:
            write_text(host, out)
            out.write("\n")
    if args.profile:
        ctx.report_profile()
    if args.profile_json:
        import json
        with open(args.profile_json, "w") as f:
            json.dump(ctx.profile_json(), f, indent=1)
    return 0


class LibraryProgram:
    """The compiled program as a library: one method per entry point, numpy values in and out."""

    def __init__(self, entry_points, params, source, tuned_defaults, errors, **options):
        self._entry_points = entry_points
        self._errors = errors
        np.seterr(all="ignore")
        self.ctx = Context(source, params, tuned_defaults, **options)

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._entry_points:
            raise AttributeError(name)
        entry = self._entry_points[name]

        def call(*args):
            results = entry.fn(self.ctx, *entry.upload(self.ctx, list(args)))
            self.ctx.check_errors(self._errors)
            host = tuple(to_host(self.ctx, v) for v in results)
            return host[0] if len(host) == 1 else host
        return call


class EntryPoint:
    def __init__(self, name, param_types, ret_types, fn):
        self.name, self.param_types, self.ret_types, self.fn = name, param_types, ret_types, fn

    def upload(self, ctx, values):
        """Checks the arguments against the entry's types and copies arrays to the device."""
        if len(values) != len(self.param_types):
            raise ProgramError(f"entry point {self.name!r} takes {len(self.param_types)} arguments, "
                               f"but {len(values)} were given")
        out = []
        for i, (v, t) in enumerate(zip(values, self.param_types)):
            if type_name(v) != t:
                raise ProgramError(f"argument {i + 1} of entry point {self.name!r}: expected a value of "
                                   f"type {t}, got {type_name(v, sizes=True)}")
            out.append(ctx.to_device(v) if np.ndim(v) else v)
        return out
