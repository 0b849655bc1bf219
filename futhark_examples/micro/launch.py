"""The host's time per kernel launch of an empty kernel, from C (launch.c, through the native host's OpenCL
layer) against pyopencl, on the same device in the same run; then the whole call of an entry point that
launches one kernel (ENTRY_SOURCE, on three elements) in each backend.

    python futhark_examples/micro/launch.py [-d DEVICE] [-n N] [--json FILE]

Microseconds per launch over N launches after a warm-up: bare (enqueue and wait, the arguments set once),
args (set both arguments, enqueue and wait) and pipelined (N enqueues, then one wait: the launch alone).
launch.c is compiled with $CC (or cc) and run with pyopencl's own OpenCL loader where pyopencl bundles one
(the same devices as pyopencl's), else the system's. The entry call: the median of N calls after N/10 more,
as the program's `-r N -t` times them (the native executable and the Python program), and as Python times a
call of the native library's module (`incflat compile --library`: numpy in and out).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import tempfile
import time

import numpy as np

from incflat.codegen.cprogram import c_compiler, pyopencl_loader
from incflat.codegen.native import SOURCES

HERE = pathlib.Path(__file__).resolve().parent
KERNEL = "__kernel void k(__global int *a, const long n) { }"  # as in launch.c
WARMUP = 100
MODES = ("bare", "args", "pipelined")


def compile_launch(directory: pathlib.Path, flags=()) -> pathlib.Path:
    """launch.c and the native host's opencl.c built into directory: the path of the program."""
    compiler = c_compiler()
    if compiler is None:
        raise SystemExit("no C compiler: set CC, or install cc")
    program = directory / "launch"
    proc = subprocess.run([*compiler, "-std=c99", "-O2", "-Wall", "-Wextra", *flags, f"-I{SOURCES}",
                           str(HERE / "launch.c"), str(SOURCES / "opencl.c"), "-o", str(program), "-ldl"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"compiling launch.c failed:\n{proc.stderr}")
    return program


def native_launch(program: pathlib.Path, device=None, n=10000, library=None) -> dict:
    """launch.c's figures: {device, platform, library, n, bare_us, args_us, pipelined_us}."""
    args = [str(program), "-n", str(n), *(["-d", device] if device else []),
            *(["--library", str(library)] if library else [])]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.strip() or f"launch exited with status {proc.returncode}")
    return json.loads(proc.stdout)


def pyopencl_launch(device=None, n=10000) -> dict:
    """The same three figures for pyopencl (bare and pipelined: enqueue_nd_range_kernel after set_args; args:
    calling the kernel, which sets its arguments), on the device incflat's runtime chooses."""
    import pyopencl as cl
    from incflat.ir.runtime.device import choose_device
    chosen = choose_device(None, device)
    ctx = cl.Context([chosen])
    queue = cl.CommandQueue(ctx)
    knl = cl.Program(ctx, KERNEL).build().k
    buf, size, enqueue = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4), np.int64(1), cl.enqueue_nd_range_kernel
    steps = {"bare": lambda: (enqueue(queue, knl, (1,), (1,)), queue.finish()),
             "args": lambda: (knl(queue, (1,), (1,), buf, size), queue.finish()),
             "pipelined": lambda: enqueue(queue, knl, (1,), (1,))}
    out = {"device": chosen.name.strip(), "platform": chosen.platform.name.strip(), "n": n}
    for mode, step in steps.items():
        knl.set_args(buf, size)
        for count in (WARMUP, n):
            queue.finish()
            start = time.perf_counter()
            for _ in range(count):
                step()
            queue.finish()
        out[f"{mode}_us"] = (time.perf_counter() - start) / n * 1e6
    return out


ENTRY_SOURCE = "def main (xs: []f32) (ys: []f32) : []f32 = map2 (\\x y -> x * y + 1) xs ys\n"
ENTRY_INPUT = b"[1f32, 2f32, 3f32] [4f32, 5f32, 6f32]"


def entry_calls(directory: pathlib.Path, device=None, n=10000) -> dict:
    """The one-kernel entry call's median µs: {c, pyopencl} (the executables' -t: the call, its inputs already
    on the device), {c_api, c_module} (from host arrays to host arrays: api_call.c through the C API, and the
    native library's Python module timed from Python)."""
    import statistics
    import sys
    from incflat.cli import main as incflat
    fut = directory / "one.fut"
    fut.write_text(ENTRY_SOURCE)
    device_args = ["-d", device] if device else []
    out = {}
    for backend in ("opencl", "pyopencl"):
        program = directory / f"one-{backend}"
        if incflat(["compile", f"--backend={backend}", str(fut), "-o", str(program)]) != 0:
            raise SystemExit(f"compiling {fut} with --backend={backend} failed")
        times = directory / "times.txt"
        command = [str(program)] if backend == "opencl" else [sys.executable, str(program)]
        proc = subprocess.run([*command, *device_args, "-r", str(n + n // 10), "-t", str(times)],
                              input=ENTRY_INPUT, capture_output=True, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"{program}: {proc.stderr.decode().strip()}")
        out["c" if backend == "opencl" else "pyopencl"] = statistics.median(
            float(t) for t in times.read_text().split()[n // 10:])
    if incflat(["compile", "--backend=opencl", "--library", str(fut), "-o", str(directory / "one.py")]) != 0:
        raise SystemExit(f"compiling {fut} with --library failed")
    api_call = directory / "api_call"
    proc = subprocess.run([*c_compiler(), "-std=c99", "-O2", "-Wall", f"-I{directory}", str(HERE / "api_call.c"),
                           str(directory / "libone.so"), f"-Wl,-rpath,{directory}", "-o", str(api_call)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"compiling api_call.c failed:\n{proc.stderr}")
    proc = subprocess.run([str(api_call), *device_args, str(n), str(n // 10)], capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.strip())
    out["c_api"] = statistics.median(float(t) for t in proc.stdout.split())
    sys.path.insert(0, str(directory))
    try:
        import one
    finally:
        sys.path.pop(0)
    program = one.load(device=device)
    xs, ys, calls = np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32), []
    for _ in range(n + n // 10):
        start = time.perf_counter()
        program.main(xs, ys)
        calls.append((time.perf_counter() - start) * 1e6)
    out["c_module"] = statistics.median(calls[n // 10:])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-d", "--device", help="a substring of the device's name")
    ap.add_argument("-n", type=int, default=10000, help="launches of each kind (default 10000)")
    ap.add_argument("--json", type=pathlib.Path, help="also write the figures here")
    args = ap.parse_args(argv)
    library = pyopencl_loader()
    with tempfile.TemporaryDirectory() as tmp:
        native = native_launch(compile_launch(pathlib.Path(tmp)), args.device, args.n, library)
        calls = entry_calls(pathlib.Path(tmp), args.device, args.n)
    python = pyopencl_launch(args.device, args.n)
    if (native["device"], native["platform"]) != (python["device"], python["platform"]):
        raise SystemExit(f"C chose {native['device']} ({native['platform']}), pyopencl {python['device']} "
                         f"({python['platform']})")
    print(f"device: {native['device']} ({native['platform']}), {args.n} launches each; "
          f"OpenCL loader: {native['library']}")
    print(f"{'us per launch':<40} {'C':>8} {'pyopencl':>9}")
    for mode, what in zip(MODES, ("bare: enqueue + finish", "args: set 2 arguments + enqueue + finish",
                                  "pipelined: enqueue (one finish)")):
        print(f"{what:<40} {native[f'{mode}_us']:>8.2f} {python[f'{mode}_us']:>9.2f}")
    bare = native["bare_us"]
    print(f"one-kernel entry call, us: C {calls['c']:.2f} ({calls['c'] / bare:.2f}x the bare launch in C), "
          f"pyopencl {calls['pyopencl']:.2f} ({calls['pyopencl'] / bare:.2f}x)")
    print(f"the same from host arrays to host arrays, us: through the C API {calls['c_api']:.2f}, through the "
          f"native library's Python module {calls['c_module']:.2f} ({calls['c_module'] - calls['c_api']:+.2f})")
    if args.json:
        args.json.write_text(json.dumps({"device": native["device"], "platform": native["platform"], "n": args.n,
                                         "library": native["library"],
                                         "c": {m: native[f"{m}_us"] for m in MODES},
                                         "pyopencl": {m: round(python[f"{m}_us"], 3) for m in MODES},
                                         "entry_call_us": {k: round(v, 3) for k, v in calls.items()}}, indent=1))


if __name__ == "__main__":
    main()
