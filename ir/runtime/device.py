"""The device and the context of a compiled program's run: device choice, building the kernels, the
tuning-parameter values, threshold comparisons (logged with -L), memory, and kernel launches (timed with -P).

Part of the runtime every compiled program carries: it imports only the standard library, numpy, pyopencl
and the runtime's own modules.
"""

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

from .arrays import (COPY_SOURCE, NP_DTYPES, DeviceArray, check_sizes, contiguous, interleaved_strides,
                     row_major_strides, shape_text, span)
from .errors import KernelUnavailable, ProgramError, WorkgroupTooLarge, fail
from .prims import PRIMS
from .tuning import USER_PARAM, comparison_line, default_threshold_line, device_line, no_fallback_error

_LOCAL_MEMORY, _ENQUEUE = cl.LocalMemory, cl.enqueue_nd_range_kernel  # (looked up at every launch otherwise)
GPU_DEFAULT_THRESHOLD = 32768
DEFAULT_TILE_SIZE = 16  # the tile size at which the thesis's tuner tunes the thresholds (§3.1)
# Below this many elements in every buffer and in a launch's reach, kernels index in 32 bits (idx_t).
INDEX32_LIMIT = 2 ** 31 - 2 ** 16


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


def build_kernels(cl_ctx, program, defines: tuple = ()) -> tuple:
    """({name: kernel}, {name: why it did not build}) of a program's kernels. They are built at once; only
    when that fails is each kernel built on its own, so that one the device cannot compile (too much local
    memory, say) takes only its own version out."""
    options = ["-w", *(f"-D{d}" for d in defines)]  # warnings are not for users
    try:
        with compiler_quiet():
            built = cl.Program(cl_ctx, program.opencl_source).build(options=options)
        return {k.function_name: k for k in built.all_kernels()}, {}
    except cl.Error:
        pass
    kernels, failures = {}, {}
    for name, kernel in program.kernels.items():
        try:
            with compiler_quiet():
                built = cl.Program(cl_ctx, program.opencl_prelude + kernel.source).build(options=options)
                kernels[name] = getattr(built, name)
        except cl.Error as e:
            lines = [l.strip() for l in str(e).splitlines() if "error" in l.lower()]  # the device compiler's log
            failures[name] = re.sub(r"\S+\.cl:\d+:\d+: ", "", lines[-1] if lines else str(e).splitlines()[0])
    return kernels, failures


def list_devices():
    try:
        platforms = cl.get_platforms()
    except cl.Error as e:  # (the ICD loader found no platform: pyopencl's message names only the call)
        raise ProgramError(f"no OpenCL platform is installed ({e}): install a GPU driver's OpenCL, or PoCL "
                           "(pip install pocl-binary-distribution)") from None
    return [(p, d) for p in platforms for d in p.get_devices()]


_COMPILES: dict = {}  # device -> None, or why its compiler fails a trivial kernel (probed once a process)


def compiler_failure(device):
    """None if the device's OpenCL compiler builds a trivial kernel, else its error in one line. A device
    can be listed and still not compile anything: PoCL 3.0's LLVM 14 does not know AMD's Zen 5 processors
    and asks its clang for an 'unknown target CPU'."""
    if device not in _COMPILES:
        try:
            with compiler_quiet():
                cl.Program(cl.Context([device]), "__kernel void probe(__global int *a) { a[0] = 1; }").build()
            _COMPILES[device] = None
        except cl.Error as e:
            lines = [l.strip() for l in str(e).splitlines() if "error" in l.lower()]
            _COMPILES[device] = lines[-1] if lines else str(e).splitlines()[0]
    return _COMPILES[device]


def choose_device(platform_sub=None, device_sub=None):
    """The first device matching the substrings whose compiler works, preferring a GPU over a CPU: a machine
    with both PoCL and a GPU driver must not silently run on the CPU. A device whose compiler fails a
    trivial kernel is passed over; if every match does, that is the error."""
    present = list_devices()
    candidates = [(p, d) for p, d in present
                  if (not platform_sub or platform_sub.lower() in p.name.lower())
                  and (not device_sub or device_sub.lower() in d.name.lower())]
    if not candidates:
        asked = " and ".join(f"{what} {sub!r}" for what, sub in (("platform", platform_sub), ("device", device_sub))
                             if sub)
        there = "; ".join(f"{d.name.strip()} ({p.name.strip()})" for p, d in present) or "none"
        raise ProgramError(f"no OpenCL device matches {asked or 'anything'} (the devices: {there})")
    candidates.sort(key=lambda pd: 0 if pd[1].type & cl.device_type.GPU else 1)
    failures = []
    for p, d in candidates:
        failure = compiler_failure(d)
        if failure is None:
            return d
        failures.append(f"{d.name.strip()} ({p.name.strip()}): {failure}")
    raise ProgramError("no OpenCL device that matches can compile a kernel: " + "; ".join(failures))


class DeviceState:
    """The OpenCL objects of one program on one device, shared by every Context made for them in a
    process (a library user or a test may make many): the context, queue, built kernels, memory pool,
    error buffer, and the arguments each kernel was last launched with."""

    def __init__(self, device, program, profile):
        self.program = program
        self.cl_ctx = cl.Context([device])
        props = cl.command_queue_properties.PROFILING_ENABLE if profile else 0
        self.queue = cl.CommandQueue(self.cl_ctx, properties=props)
        # Kernels index in 32 bits; the 64-bit build is made on the first launch that needs it.
        self.builds = {False: build_kernels(self.cl_ctx, program)}
        self.widest = 0  # the most elements of any buffer allocated for this program: it may reach any kernel
        # Buffers come from a pool and go back to it when no array refers to them any more, so that a
        # program run again (or a loop on the host) reuses device memory instead of allocating it anew.
        self.pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        self.error_buf = cl.Buffer(self.cl_ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                                   hostbuf=np.zeros(8, np.int64))
        self.last_args = {False: {}, True: {}}  # build -> kernel name -> the keys of its last arguments
        self.scalar_structs = {k.name: ScalarStruct(k.scalar_prims) for k in program.kernels.values()}
        self.group_limits = {}  # kernel name -> the most threads a workgroup of it can have
        # The single-pass scan's block statuses, tagged with the launch's epoch so that they never need
        # clearing, and its block counters (reset by each launch's last block).
        self.scan_status, self.scan_blocks, self.scan_epoch = None, 0, 0
        self.scan_counters = cl.Buffer(self.cl_ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                                       hostbuf=np.zeros(2, np.uint32))
        # A reduction's count of finished workgroups per segment, zero between launches (the last
        # workgroup of a segment resets its count).
        self.finished, self.finished_size = None, 0
        self.copy_kernels = None  # the runtime's own layout copies (arrays.COPY_SOURCE), built when first used
        self.iotas = {}  # (length, dtype) -> the program's iota of that length (arrays.iota)
        self.constants = {}  # (values, dtype) -> the array of a literal of constants (arrays.constant_array)

    def copy_kernel(self, name):
        """One of the runtime's own kernels (arrays.COPY_SOURCE) and the keys of its last arguments."""
        if self.copy_kernels is None:
            with compiler_quiet():
                built = cl.Program(self.cl_ctx, COPY_SOURCE).build(options=["-w"])
            self.copy_kernels = {k.function_name: (k, {}) for k in built.all_kernels()}
        return self.copy_kernels[name]

    def kernels(self, wide: bool) -> tuple:
        """({name: kernel}, {name: why it did not build}) of the 32-bit (or with wide, 64-bit) build."""
        if wide not in self.builds:
            self.builds[wide] = build_kernels(self.cl_ctx, self.program, ("INDEX64",))
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
        return [self.scan_status, self.scan_counters]


class Transfers:
    """What crossed between the host and the device: arrays (more than one element) and single values, each
    way, and the program's constant arrays, uploaded once. Generated code moves arrays only through
    Context.upload and Context.download, which count them."""
    __slots__ = ("arrays_up", "bytes_up", "arrays_down", "bytes_down", "values_up", "values_down", "constants")

    def __init__(self):
        self.arrays_up = self.bytes_up = self.arrays_down = self.bytes_down = self.values_up = self.values_down = 0
        self.constants = 0

    def count(self, up: bool, elements: int, nbytes: int, constant=False):
        if constant:
            self.constants += 1
        elif up:
            if elements > 1:
                self.arrays_up += 1
                self.bytes_up += nbytes
            else:
                self.values_up += 1
        elif elements > 1:
            self.arrays_down += 1
            self.bytes_down += nbytes
        else:
            self.values_down += 1

    def as_json(self):
        return {"to_device": {"arrays": self.arrays_up, "bytes": self.bytes_up},
                "from_device": {"arrays": self.arrays_down, "bytes": self.bytes_down},
                "scalars_written": self.values_up, "scalars_read": self.values_down, "constants": self.constants}

    def line(self, runs: int) -> str:
        runs = max(runs, 1)
        return (f"host-device transfers per run: {self.arrays_up / runs:g} arrays to the device "
                f"({self.bytes_up / runs:g} bytes), {self.arrays_down / runs:g} from it ({self.bytes_down / runs:g} "
                f"bytes); {self.values_up / runs:g} scalars written, {self.values_down / runs:g} read; "
                f"{self.constants} constant arrays uploaded")


_DEVICE_STATES = {}


def device_state(device, program, profile):
    """The state of a program on a device, made once a process (programs with the same kernels share it)."""
    key = (device.int_ptr, program.opencl_source, profile)
    if key not in _DEVICE_STATES:
        _DEVICE_STATES[key] = DeviceState(device, program, profile)
    return _DEVICE_STATES[key]


class Context:
    """One run's view of a program on a device: the values of its tuning parameters, and what -L and -P
    record. Values, lowest precedence first: the device's default, the program's tuned defaults, then
    `overrides` (a tuning file and --param)."""

    def __init__(self, program, tuned_defaults, device=None, platform=None, overrides=None,
                 default_threshold=None, default_group_size=None, log=False, profile=False, debug=False,
                 default_tile_size=None, fallback=True):
        self.program = program
        # False (--no-fallback): a workgroup-level version that the thresholds choose and the device cannot run
        # is an error, not a fallback to the next version (the tuner's experiments: each names the versions
        # it runs, and a fallback would run others under its name)
        self.fallback = fallback
        self.device = choose_device(platform, device)
        self.is_gpu = bool(self.device.type & cl.device_type.GPU)
        self.device_state = device_state(self.device, program, profile)
        self.cl_ctx, self.queue = self.device_state.cl_ctx, self.device_state.queue
        self.log, self.profile, self.debug = log, profile, debug
        self.max_group_size = self.device.max_work_group_size
        self.local_mem_size = self.device.local_mem_size
        self.global_mem_size = self.device.global_mem_size  # a pyopencl property asks the driver each time
        cus = self.device.max_compute_units
        self.default_threshold = default_threshold or (GPU_DEFAULT_THRESHOLD if self.is_gpu else cus)
        self.group_size = min(default_group_size or (256 if self.is_gpu else 32), self.max_group_size)
        self.num_groups = (8 if self.is_gpu else 1) * cus  # enough resident threads to keep memory busy
        self.default_tile_size = default_tile_size or DEFAULT_TILE_SIZE
        self.values = {}
        for param in program.params:
            # a threshold takes its listed default, or the device's; a user parameter is unset (None) until a
            # tuning file or --param sets it
            if param.is_threshold:
                self.values[param.name] = self.default_threshold if param.default is None else param.default
            else:
                self.values[param.name] = None if param.cls == USER_PARAM else 0
        for src in (tuned_defaults, overrides or {}):
            for name, value in src.items():
                if name not in self.values:
                    raise ProgramError(f"unknown tuning parameter {name!r}")
                self.values[name] = int(value)
        if debug:
            print(device_line(self.device.name, self.device.platform.name), file=sys.stderr)
            print(default_threshold_line(self.default_threshold), file=sys.stderr)
        self.pool, self.error_buf = self.device_state.pool, self.device_state.error_buf

        self.kernel_times = {}
        self.local_memory = {}
        self.versions_open, self.version_log = [], []  # guard decisions being run, and those done
        # With -P: the run's commands in queue order ([name, event, start ns, end ns], the times read once
        # they finish), and the decisions done whose times are still to be read from them.
        self.commands, self.unsettled = [], []
        self.warned = set()
        self.failed_groups = {}  # threshold -> the fewest threads with which its workgroup version failed to launch
        # host-device traffic since the last count_transfers(), and the runs (begin_run) since then
        self.transfers, self.runs = Transfers(), 0
        self.timed_transfers = None  # (Transfers, runs) of the timed runs, for -P (end_timed_runs)

    # ---- thresholds ----

    def cmp(self, name, par):
        """The guard `threshold <= par`; true takes the less flattened version."""
        result = self.values[name] <= int(par)
        if self.log:
            print(comparison_line(name, int(par), result), file=sys.stderr)
        return result

    def size(self, name, default, most):
        """A workgroup or grid size: the tuning parameter when set (not 0), else the default."""
        value = self.values[name]
        return min(value, most) if value > 0 else default

    def user_param(self, name, default):
        """`#[param(NAME)] e`: the parameter's value when set, else e's value (default)."""
        value = self.values[name]
        return np.int64(default if value is None else value)

    def tile_size(self, kernel, name):
        """The side of a tiled kernel's square workgroup: the tuning parameter when set, else the
        default, no more than the kernel can be launched with."""
        tile = self.size(name, self.default_tile_size, 2 ** 15)
        return max(1, min(tile, math.isqrt(self.kernel_group_size((kernel,), tile * tile))))

    def warn_once(self, threshold, par, failure):
        """A version that failed to launch; the program goes on with the next version (a warning once, or,
        for a workgroup too large for the device, a line of the -L log), or with --no-fallback stops."""
        self.falling_back(threshold, par, str(failure))
        failed = self.failed_groups  # later runs fall back without trying again
        failed[threshold] = min(int(par), failed.get(threshold, int(par)))
        if not isinstance(failure, WorkgroupTooLarge) and threshold not in self.warned:
            self.warned.add(threshold)
            print(f"Warning: the version guarded by {threshold} could not be run on {self.device.name} "
                  f"({failure}); using the next version.", file=sys.stderr)

    def fits_group(self, threshold, par, local_bytes_per_thread=0):
        """Whether one workgroup can hold par threads and their local memory (if not, the guard falls back)."""
        fits = 0 < int(par) <= self.max_group_size and int(par) * local_bytes_per_thread <= self.local_mem_size
        if fits and int(par) >= self.failed_groups.get(threshold, math.inf):
            self.falling_back(threshold, par, f"a workgroup of {int(par)} threads failed to launch before")
            return False
        if not fits:
            self.falling_back(threshold, par, f"a workgroup of {int(par)} threads and {local_bytes_per_thread} bytes of "
                              f"local memory each; {self.device.name.strip()} has at most {self.max_group_size} "
                              f"threads and {self.local_mem_size} bytes")
        return fits

    def falling_back(self, threshold, par, why):
        if not self.fallback:
            raise ProgramError(no_fallback_error(threshold, int(par), self.device.name.strip(), why))
        if self.log:
            print(f"{threshold}: the version does not fit ({why}); using the next version.", file=sys.stderr)

    # ---- memory ----

    def empty(self, shape, dtype, where="", what="an allocation", interleave=0):
        """A new array, row-major or, with `interleave`, with its first `interleave` dimensions innermost
        (arrays.interleaved_strides); a negative size or one too large for the device is a run-time error at
        `where` naming `what` (iota, replicate...)."""
        shape = tuple(map(int, shape))
        dtype = NP_DTYPES.get(dtype) or np.dtype(dtype)
        if shape and min(shape) <= 0:  # rare, and checked only then: a loop allocates at every step
            if 0 in shape:  # no element: a size no element computed cannot be wrong (a map over no rows)
                shape = tuple(max(d, 0) for d in shape)
            check_sizes(shape, what, where)
        count = math.prod(shape)
        nbytes = count * dtype.itemsize
        if nbytes > self.global_mem_size:
            fail(where, f"Out of memory: {what} would make an array of shape {shape_text(shape)} ({nbytes} "
                 f"bytes; the device {self.device.name.strip()} has {self.global_mem_size} bytes).")
        try:
            buf = self.pool.allocate(max(nbytes, 1))
        except (cl.MemoryError, cl.RuntimeError, cl.LogicError):  # the driver refused the buffer
            fail(where, f"Out of memory: {what} would make an array of shape {shape_text(shape)} ({nbytes} "
                 f"bytes, more than the device {self.device.name.strip()} could allocate).")
        if count > self.device_state.widest:
            self.device_state.widest = count
        strides = (interleaved_strides(shape, interleave) if interleave and len(shape) > interleave
                   else row_major_strides(shape))
        return DeviceArray.view(buf, shape, dtype, strides, 0)

    def scratch(self, count, dtype):
        """Global memory for intermediate arrays inside kernels."""
        count = int(count)
        if count > self.device_state.widest:
            self.device_state.widest = count
        return self.pool.allocate(max(count * np.dtype(dtype).itemsize, 1))

    def upload(self, buf, host, byte_offset=0, constant=False):
        """Copies a host value (a numpy array or scalar) into a buffer; counted in the transfers (`constant`:
        one of the program's constant arrays, made once)."""
        host = np.ascontiguousarray(host)
        self.transfers.count(True, host.size, host.nbytes, constant)
        cl.enqueue_copy(self.queue, buf, host, dst_offset=byte_offset)

    def download(self, host, buf, byte_offset=0):
        """Fills a host numpy array from a buffer (blocking); counted in the transfers."""
        self.transfers.count(False, host.size, host.nbytes)
        cl.enqueue_copy(self.queue, host, buf, src_offset=byte_offset)

    def count_transfers(self):
        """The transfers and runs counted so far; the count starts again."""
        counted, self.transfers, runs, self.runs = self.transfers, Transfers(), self.runs, 0
        return counted, runs

    def end_timed_runs(self):
        """Keeps the transfers of the runs since the last count (the timed runs) for -P."""
        self.timed_transfers = self.count_transfers()

    def to_device(self, a):
        a = np.ascontiguousarray(a)
        arr = self.empty(a.shape, a.dtype)
        if a.size:
            self.upload(arr.buf, a)
        return arr

    def from_device(self, arr):
        """A numpy copy of a (possibly strided) device array; a numpy scalar for a rank-0 array."""
        if any(d == 0 for d in arr.shape):
            return np.empty(arr.shape, arr.dtype)
        if contiguous(arr):  # only its own elements are read
            host = np.empty(arr.shape, arr.dtype)
            self.download(host, arr.buf, arr.offset * arr.dtype.itemsize)
            return host[()] if host.ndim == 0 else host
        lowest, highest = span(arr)  # (the elements between, which a view running backwards reads too)
        host = np.empty(highest - lowest + 1, arr.dtype)
        self.download(host, arr.buf, lowest * arr.dtype.itemsize)
        out = np.array(np.lib.stride_tricks.as_strided(host[arr.offset - lowest:], arr.shape,
                                                       [s * arr.dtype.itemsize for s in arr.strides]))
        return out[()] if out.ndim == 0 else out

    # ---- kernels ----

    def launch(self, name, global_size, local_size, memory, scalars, reach):
        """memory: the kernel's buffers and local memory, in order; scalars: the fields of its struct of
        scalars (its last argument). reach: a bound on the flat indices the kernel forms. With it, the
        buffers and the grid below INDEX32_LIMIT elements, the kernel's index arithmetic fits in 32 bits."""
        if global_size == 0:
            return
        state = self.device_state
        wide = reach >= INDEX32_LIMIT or global_size >= INDEX32_LIMIT or state.widest >= INDEX32_LIMIT
        kernel = state.kernels(wide)[0].get(name) or self.unavailable(name, wide)
        # Setting an argument costs more than launching (on some drivers several microseconds each), so
        # only the arguments that changed since this kernel's last launch are set.
        last = state.last_args[wide].get(name)
        if last is None:
            last = state.last_args[wide][name] = [None] * (len(memory) + 1)
        local_bytes = 0
        for i, arg in enumerate(memory):
            if type(arg) is _LOCAL_MEMORY:
                key = arg.size
                local_bytes += key
            else:
                key = arg.int_ptr
            if last[i] != key:
                kernel.set_arg(i, arg)
                last[i] = key
        if scalars:
            packed = state.scalar_structs[name].pack(scalars)
            if last[-1] != packed:
                set_struct_arg(kernel, len(memory), packed)
                last[-1] = packed
        if local_bytes > self.local_mem_size:  # a workgroup's arrays that do not fit (the guard falls back)
            raise WorkgroupTooLarge(f"kernel {name}'s workgroups need {local_bytes} bytes of local memory; "
                                    f"{self.device.name.strip()} has {self.local_mem_size}")
        event = _ENQUEUE(self.queue, kernel, (int(global_size),), (int(local_size),))
        if self.profile:
            self.timed(name, event)

    def launch_runtime_kernel(self, name, global_size, local_size, args):
        """Launches one of the runtime's kernels (buffers, numpy scalars and packed structs), setting only the
        arguments that changed since its last launch (pyopencl's call sets them all, several microseconds each)."""
        kernel, last = self.device_state.copy_kernel(name)
        for i, arg in enumerate(args):
            if isinstance(arg, bytes):  # a packed struct of scalars
                if last.get(i) != arg:
                    set_struct_arg(kernel, i, arg)
                    last[i] = arg
                continue
            key = arg.int_ptr if isinstance(arg, cl.MemoryObjectHolder) else (arg.dtype, arg.item())
            if last.get(i) != key:
                kernel.set_arg(i, arg)
                last[i] = key
        self.timed(name, cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size))

    def timed(self, name, event):
        """With profiling, keeps a launched command (the program's kernels and the runtime's copies) for
        settle(), which reads its times once it has finished: nothing waits for it, so the run keeps the
        pipelining of an unprofiled one (the host launching ahead of the device), whose costs -P reports."""
        if self.profile:
            self.commands.append([name, event, 0, 0])

    def begin_run(self):
        """A run of an entry point starts: its first decision's span starts at its own first command."""
        self.settle()
        self.commands.clear()
        self.runs += 1

    def settle(self):
        """Waits for the commands launched so far and adds their times to the kernels' totals and to the
        decisions done (see enter)."""
        if not self.profile:
            return
        self.queue.finish()
        for command in self.commands:
            if command[1] is not None:
                name, event = command[0], command[1]
                command[1:] = [None, event.profile.start, event.profile.end]
                total, count = self.kernel_times.get(name, (0.0, 0))
                self.kernel_times[name] = (total + (command[3] - command[2]) / 1e3, count + 1)
        for threshold, outcome, par, before, last, host in self.unsettled:
            record = {"threshold": threshold, "outcome": bool(outcome), "epar": int(par), "time_us": 0.0,
                      "host_us": round(host * 1e6, 3), "span_us": 0.0}
            if last > before:  # its commands are those launched between its enter and its leave
                mine = self.commands[before + 1:last + 1]
                record["time_us"] = round(sum(end - start for _, _, start, end in mine) / 1e3, 3)
                since = self.commands[before][3] if before >= 0 else mine[0][2]
                record["span_us"] = round((mine[-1][3] - since) / 1e3, 3)
            self.version_log.append(record)
        self.unsettled.clear()

    def call(self, fn, args):
        """An entry point's function applied to device arguments. When the host fails, an error a kernel
        launched before recorded came first: that one is raised (and cleared, so no later call sees it)."""
        try:
            return fn(self, *args)
        except Exception:
            self.check_errors()
            raise

    def check_errors(self):
        """Raises the first run-time error a kernel recorded (bounds, division by zero), if any."""
        table = self.program.errors
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
        """A single-pass scan's buffers, for a new launch (a new epoch)."""
        return self.device_state.lookback(self.queue, blocks)

    def scan_epoch(self):
        return self.device_state.scan_epoch

    def segment_counters(self, segments):
        return self.device_state.segment_counters(self.queue, segments)

    # ---- which version runs (recorded with -P) ----

    def enter(self, threshold, outcome, par):
        """The guard `threshold` chose `outcome` for parallelism `par`; commands until leave() are its. A
        record holds its kernels' time (time_us), the host's time between enter and leave (host_us), and its
        span (span_us): the time from the end of the run's last command before it to the end of its own
        last, what the decision adds to the run's timeline. A version the device runs faster than the host
        launches it costs the host's time, and one the host launches faster costs its kernels' time plus the
        device's gaps between them; the span is either, as the run made it, and the spans of successive
        decisions add up to the run's time."""
        if self.profile:  # (a tuple now, the record at settle(): what the run pays for -P is kept small)
            self.versions_open.append((threshold, outcome, par, len(self.commands) - 1, time.perf_counter()))

    def leave(self):
        if self.profile:
            left = time.perf_counter()
            threshold, outcome, par, before, entered = self.versions_open.pop()
            self.unsettled.append((threshold, outcome, par, before, len(self.commands) - 1, left - entered))

    def report_profile(self, out=sys.stderr):
        self.settle()
        print(f"{'kernel':<32} {'runs':>6} {'total us':>12}", file=out)
        for name, (total, count) in sorted(self.kernel_times.items()):
            print(f"{name:<32} {count:>6} {total:>12.1f}", file=out)
        print(f"{'version (guard: outcome)':<48} {'runs':>6} {'total us':>12} {'host us':>12} {'span us':>12}"
              "  ePar values", file=out)
        summary = {}
        for r in self.version_log:
            key = f"{r['threshold']}: {'true' if r['outcome'] else 'false'}"
            count, total, host, span, epars = summary.get(key, (0, 0.0, 0.0, 0.0, set()))
            summary[key] = (count + 1, total + r["time_us"], host + r["host_us"], span + r["span_us"],
                            epars | {r["epar"]})
        for key, (count, total, host, span, epars) in sorted(summary.items()):
            shown = ", ".join(map(str, sorted(epars)[:8])) + (", ..." if len(epars) > 8 else "")
            print(f"{key:<48} {count:>6} {total:>12.1f} {host:>12.1f} {span:>12.1f}  {shown}", file=out)
        if self.timed_transfers is not None:
            moved, runs = self.timed_transfers
            print(moved.line(runs), file=out)

    def profile_json(self):
        """Per kernel: runs and total time; per guard decision, in order: the ePar, the version it chose,
        its kernels' time, the host's time in it and its span (see enter: what the instrumentation tuner
        costs it); after timed runs, their number and their host-device transfers (Transfers.as_json)."""
        self.settle()
        out = {"kernels": {name: {"runs": count, "total_us": round(total, 3)}
                           for name, (total, count) in sorted(self.kernel_times.items())},
               "versions": self.version_log}
        if self.timed_transfers is not None:
            moved, out["runs"] = self.timed_transfers
            out["transfers"] = moved.as_json()
        return out


# A scalar (by its type's name) as the bytes that set it, where the packing of a whole struct failed.
PACKERS = {name: struct.Struct("=" + p.struct).pack for name, p in PRIMS.items()}
PACKERS["f32"] = lambda x: np.float32(x).tobytes()  # rounds as numpy does (struct rejects overflow)
_SET_ARG_BUF = hasattr(cl.Kernel, "_set_arg_buf")


class ScalarStruct:
    """Packs a kernel's scalars as the bytes of its struct argument: the fields in order (the compiler puts
    the widest first, so only the tail needs padding, to the widest field's alignment, as in C)."""

    def __init__(self, prims):
        self.prims = prims
        size = sum(PRIMS[p].size for p in prims)
        self.padding = bytes(-size % max((PRIMS[p].size for p in prims), default=1))
        self.fast = struct.Struct("=" + "".join(PRIMS[p].struct for p in prims) + "x" * len(self.padding)).pack

    def pack(self, values):
        try:
            return self.fast(*values)
        except OverflowError:  # an f32 beyond its range, which numpy rounds to infinity
            return b"".join(PACKERS[p](v) for p, v in zip(self.prims, values)) + self.padding


def set_struct_arg(kernel, i, packed):
    """Kernel.set_arg takes microseconds in pyopencl's type dispatch; its invokers set packed bytes instead
    (`_set_arg_buf`), and so does this where that method exists."""
    if _SET_ARG_BUF:
        kernel._set_arg_buf(i, packed)
    else:
        kernel.set_arg(i, np.frombuffer(packed, np.uint8))
