"""A compiled program as data (`Program`), and its two faces: the executable's command line, which follows
Futhark's compiled programs (`command_line`), and the library (`LibraryProgram`).

Part of the runtime every compiled program carries: it imports only the standard library, numpy, pyopencl
and the runtime's own modules.
"""

import argparse
import contextlib
import dataclasses
import errno
import gc
import json
import os
import signal
import stat
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from .arrays import to_host
from .device import Context, list_devices
from .errors import ProgramError, ReaderGone, unknown_entry_point
from .tuning import ContractError, Param, decode_tuning_file, listing, option_int, parse_int, parse_tuning_file
from .values import read_values, type_name, write_values


@dataclass(frozen=True)
class KernelSource:
    name: str
    source: str  # OpenCL C, built after the program's prelude
    scalar_prims: tuple  # the types' names of the fields of the kernel's struct of scalars (its last argument)


@dataclass(frozen=True)
class EntryPoint:
    name: str
    param_types: tuple  # Futhark's spelling without sizes, e.g. "[][]f32"
    ret_types: tuple
    fn: object  # fn(ctx, *arguments on the device) -> tuple of results

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


class Program:
    """What the compiler generated: the kernels, the tuning parameters, the run-time errors kernels can
    report, and the entry points."""

    def __init__(self, name, opencl_prelude, kernels, params, errors, entry_points):
        self.name = name
        self.opencl_prelude = opencl_prelude
        self.kernels = {k.name: k for k in kernels}
        self.params = tuple(params)
        self.errors = tuple(errors)  # (where, message template), numbered from 1 in the kernels
        self.entry_points = {e.name: e for e in entry_points}
        self.opencl_source = opencl_prelude + "".join(k.source for k in kernels)

    @classmethod
    def from_data(cls, name, opencl_prelude, kernels, params, errors, entry_points, functions):
        """A program from the literal tuples a compiled program holds (see codegen.program)."""
        return cls(name, opencl_prelude, [KernelSource(*k) for k in kernels], [Param(*p) for p in params], errors,
                   [EntryPoint(*e, functions[e[0]]) for e in entry_points])


# ---- the library ----

class LibraryProgram:
    """The compiled program as a library: one method per entry point, numpy values in and out."""

    def __init__(self, program: Program, tuned_defaults, **options):
        self._program = program
        np.seterr(all="ignore")  # IEEE results (inf, nan) are values, as in Futhark, not warnings
        self.ctx = Context(program, tuned_defaults, **options)

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._program.entry_points:
            raise AttributeError(name)
        entry = self._program.entry_points[name]

        def call(*args):
            results = self.ctx.call(entry.fn, entry.upload(self.ctx, list(args)))
            self.ctx.check_errors()
            host = tuple(to_host(self.ctx, v) for v in results)
            return host[0] if len(host) == 1 else host
        return call


# ---- the executable ----

def read_tuning_file(path, params):
    """A tuning file's values; errors name the line."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ProgramError(f"cannot read tuning file {path}: {e.strerror}")
    try:
        return parse_tuning_file(decode_tuning_file(data, str(path)), {p.name for p in params}, str(path))
    except ContractError as e:
        raise ProgramError(str(e))


def check_output_file(option, path):
    """An output file's path must be writable before the program computes anything: a file in an existing
    folder (it is tried, and left as it was)."""
    if os.path.isdir(path):
        raise ProgramError(f"{option} {path}: is a directory")
    if os.path.exists(path) and not os.path.isfile(path):
        return  # a FIFO or a device: opening it could wait for a reader; it is written as it is, at the end
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as e:
        raise ProgramError(f"{option} {path}: cannot write: {e.strerror}")
    if not existed and not os.path.islink(path):  # (a link to nothing now leads to the file it will get)
        os.unlink(path)


def write_output_file(option, path, write):
    """write(f) into the file at path; a FIFO that no process reads is an error, not a wait without end."""
    try:
        if os.path.exists(path) and stat.S_ISFIFO(os.stat(path).st_mode):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno == errno.ENXIO:
                    raise ProgramError(f"{option} {path}: no process reads this FIFO") from None
                raise
            os.set_blocking(fd, True)
            f = os.fdopen(fd, "w")
        else:
            f = open(path, "w")
        with f:
            write(f)
    except OSError as e:
        raise ProgramError(f"{option} {path}: cannot write: {e.strerror}")


def write_stdout(write):
    """Writes the results; a closed or full stdout is an error, not a traceback (at exit either)."""
    try:
        write(sys.stdout)
        sys.stdout.flush()
    except OSError as e:
        # what is left in the buffer must not be flushed again at exit
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
        if isinstance(e, BrokenPipeError):
            raise ReaderGone() from None
        raise ProgramError(f"writing the results to stdout: {e.strerror or e}")


class OptionParser(argparse.ArgumentParser):
    """argparse, with an error in one line (exit status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_args(argv):
    ap = OptionParser(prog=os.path.basename(sys.argv[0]), allow_abbrev=False)
    ap.add_argument("-e", "--entry-point", default="main")
    ap.add_argument("-t", "--write-runtime-to", metavar="FILE")
    ap.add_argument("-r", "--runs", type=option_int, default=1)
    ap.add_argument("-b", "--binary-output", action="store_true")
    ap.add_argument("-d", "--device")
    ap.add_argument("-p", "--platform")
    ap.add_argument("--list-devices", action="store_true")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--tuning", metavar="FILE")
    ap.add_argument("--default-threshold", type=option_int)
    ap.add_argument("--default-group-size", type=option_int)
    ap.add_argument("--default-tile-size", type=option_int)
    ap.add_argument("--print-params", action="store_true")
    ap.add_argument("-L", "--log", action="store_true")
    ap.add_argument("-P", "--profile", action="store_true")
    ap.add_argument("--profile-json", metavar="FILE", help="write the profile (-P) as JSON")
    ap.add_argument("-D", "--debug", action="store_true")
    ap.add_argument("--no-fallback", action="store_true",
                    help="a workgroup-level version that the thresholds choose and the device cannot run is an "
                    "error, not a fallback to the next version")
    ap.add_argument("--alternate-tuning", metavar="FILE", action="append", default=[],
                    help="run also another configuration, this tuning file's values over the program's defaults, "
                         "run by run in turn with the first (repeatable; each makes -r runs); the first's results "
                         "are printed")
    ap.add_argument("--alternate-times", metavar="FILE", action="append", default=[],
                    help="the runtimes of the configuration of the --alternate-tuning of the same position, as -t "
                         "writes the first's")
    return ap.parse_args(argv)


def command_line(program: Program, tuned_defaults, provenance, argv=None) -> int:
    """The executable: arguments on stdin, results on stdout, as Futhark's compiled programs; the exit status."""
    np.seterr(all="ignore")  # IEEE results (inf, nan) are values, as in Futhark, not warnings
    if threading.current_thread() is threading.main_thread():  # (the executable's start-up handler goes)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        return _run(args, program, tuned_defaults, provenance)
    except ReaderGone:
        return 128 + signal.SIGPIPE
    except ProgramError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except cl.Error as e:
        print(f"Error: OpenCL: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130


def _overrides(args, params) -> dict:
    """The values of --tuning and --param, the latter winning."""
    overrides = read_tuning_file(args.tuning, params) if args.tuning else {}
    known = {p.name for p in params}
    for p in args.param:
        name, eq, value = p.partition("=")
        number = parse_int(value)
        if not eq or number is None:
            raise ProgramError(f"--param {p}: must be of form NAME=INT")
        if name not in known:
            raise ProgramError(f"--param {p}: unknown tuning parameter {name!r}")
        overrides[name] = number
    return overrides


def _alternates(args, params) -> list[dict]:
    """The values of the other configurations (--alternate-tuning), in order."""
    if len(args.alternate_times) > len(args.alternate_tuning):
        raise ProgramError("each --alternate-times needs an --alternate-tuning before it")
    if args.alternate_tuning:
        for option, given in (("-L", args.log), ("-P", args.profile), ("--profile-json", args.profile_json)):
            if given:
                raise ProgramError(f"--alternate-tuning cannot be combined with {option}: its records would mix "
                                   "the configurations")
    return [read_tuning_file(path, params) for path in args.alternate_tuning]


def _run(args, program: Program, tuned_defaults, provenance):
    if args.print_params:  # a threshold's default is the tuned value baked in, if any
        sys.stdout.write(listing(dataclasses.replace(p, default=tuned_defaults[p.name])
                                 if p.is_threshold and p.name in tuned_defaults else p for p in program.params))
        return 0
    if args.list_devices:
        for p, d in list_devices():
            print(f"{p.name}: {d.name}")
        return 0
    if args.entry_point not in program.entry_points:
        raise ProgramError(unknown_entry_point(args.entry_point, program.entry_points))
    if args.runs < 1:
        raise ProgramError(f"-r {args.runs}: the number of runs must be at least 1")
    for option, value in (("--default-group-size", args.default_group_size),
                          ("--default-tile-size", args.default_tile_size)):
        if value is not None and value < 1:
            raise ProgramError(f"{option} {value}: must be at least 1")
    if sys.stdin is None or sys.stdout is None:
        raise ProgramError(f"{'stdin' if sys.stdin is None else 'stdout'} is closed")
    for option, path in (("-t", args.write_runtime_to), ("--profile-json", args.profile_json),
                         *(("--alternate-times", path) for path in args.alternate_times)):
        if path:
            check_output_file(option, path)
    overrides = _overrides(args, program.params)
    profile = args.profile or bool(args.profile_json)
    alternates = _alternates(args, program.params)

    def context(values):
        return Context(program, tuned_defaults, args.device, args.platform, values, args.default_threshold,
                       args.default_group_size, args.log, profile, args.debug, args.default_tile_size,
                       fallback=not args.no_fallback)
    ctx = context(overrides)
    # the other configurations share the first's device state (kernels, memory pool, inputs)
    contexts = [ctx] + [context(values) for values in alternates]
    if args.debug and provenance:
        print(f"Tuned defaults: {provenance}", file=sys.stderr)
    entry = program.entry_points[args.entry_point]
    try:
        inputs = read_values(sys.stdin.buffer)
    except ValueError as e:
        raise ProgramError(f"reading input: {e}")
    device_inputs = entry.upload(ctx, inputs)
    ctx.count_transfers()  # the inputs' upload is not the runs'
    times = [[] for _ in contexts]
    with collector_paused():
        results = _timed_runs(args, entry, contexts, device_inputs, times)
    ctx.end_timed_runs()
    if args.debug:
        blocks = ctx.pool.held_blocks + ctx.pool.active_blocks
        print(f"Device memory: {blocks} blocks, {ctx.pool.managed_bytes} bytes", file=sys.stderr)
    if args.write_runtime_to:
        write_output_file("-t", args.write_runtime_to, lambda f: f.writelines(f"{t}\n" for t in times[0]))
    for path, runtimes in zip(args.alternate_times, times[1:]):
        write_output_file("--alternate-times", path,
                          lambda f, runtimes=runtimes: f.writelines(f"{t}\n" for t in runtimes))
    host_results = [to_host(ctx, value) for value in results]
    write_stdout(lambda out: write_values(host_results, out, args.binary_output))
    if args.profile:
        ctx.report_profile()
    if args.profile_json:
        write_output_file("--profile-json", args.profile_json,
                          lambda f: json.dump(ctx.profile_json(), f, indent=1))
    return 0


@contextlib.contextmanager
def collector_paused():
    """The garbage collector off through timed runs, whose loop collects between them (gc.collect(), outside
    the timing) instead: a collection's pause otherwise falls inside some runs and not others. What the set-up
    made is frozen, out of those collections' way."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


def _timed_runs(args, entry, contexts, device_inputs, times) -> list:
    """Runs the entry point -r times in each context, appending each run's µs to `times`; the first context's
    last results."""
    results = None
    for run in range(args.runs):
        # With other configurations they take turns, in the order first to last, then last to first, ...: a
        # run and its counterparts see the same state of the host (whose speed can change by a third for seconds
        # at a time, on a GPU's shared host), and none is always the one after another.
        for which in (range(len(contexts)) if run % 2 == 0 else reversed(range(len(contexts)))):
            # the last run's results go back to the memory pool first, as every run's temporaries do: kept
            # alive through the call, they would make each run allocate afresh
            if which == 0:
                results = None
            gc.collect()  # (between runs, off while one is timed: collector_paused)
            current = contexts[which]
            current.begin_run()
            current.queue.finish()
            start = time.perf_counter()
            found = current.call(entry.fn, device_inputs)
            current.queue.finish()
            times[which].append(int(round((time.perf_counter() - start) * 1e6)))
            current.check_errors()
            if which == 0:
                results = found
            found = None
    return results
