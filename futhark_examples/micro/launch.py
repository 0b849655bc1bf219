"""The host's time per kernel launch of an empty kernel, from C (launch.c, through the native host's OpenCL
layer) against pyopencl, on the same device in the same run.

    python futhark_examples/micro/launch.py [-d DEVICE] [-n N] [--json FILE]

Microseconds per launch over N launches after a warm-up: bare (enqueue and wait, the arguments set once),
args (set both arguments, enqueue and wait) and pipelined (N enqueues, then one wait: the launch alone).
launch.c is compiled with $CC (or cc) and run with pyopencl's own OpenCL loader where pyopencl bundles one
(the same devices as pyopencl's), else the system's.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
KERNEL = "__kernel void k(__global int *a, const long n) { }"  # as in launch.c
WARMUP = 100
MODES = ("bare", "args", "pipelined")


def c_compiler() -> list | None:
    """$CC (which may carry flags) or cc, as a command; None where there is none."""
    command = shlex.split(os.environ.get("CC") or "cc")
    return command if command and shutil.which(command[0]) else None


def compile_launch(directory: pathlib.Path, flags=()) -> pathlib.Path:
    """launch.c and the native host's opencl.c built into directory: the path of the program."""
    from incflat.codegen.native import SOURCES
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


def pyopencl_loader() -> pathlib.Path | None:
    """The OpenCL ICD loader bundled in pyopencl's wheel (pyopencl/.libs), if it has one."""
    import pyopencl
    found = sorted((pathlib.Path(pyopencl.__file__).parent / ".libs").glob("libOpenCL*.so*"))
    return found[0] if found else None


def loader_env(library) -> dict:
    """The environment in which a program finds the devices pyopencl finds through `library`. The loader pyopencl
    bundles reads the vendors in PYOPENCL_HOME/.libs as well as the usual ones (OCL_ICD_VENDORS, passed on), and
    crashes where that variable is unset; its pocl.icd names PoCL's library by file name alone, which pyopencl's
    module finds through its own run path and another program through LD_LIBRARY_PATH."""
    env = dict(os.environ)
    library = pathlib.Path(library) if library else None
    if library is not None and library.parent.name == ".libs":
        env["PYOPENCL_HOME"] = str(library.parent.parent)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(library.parent), env.get("LD_LIBRARY_PATH")) if p)
    return env


def native_launch(program: pathlib.Path, device=None, n=10000, library=None) -> dict:
    """launch.c's figures: {device, platform, library, n, bare_us, args_us, pipelined_us}."""
    args = [str(program), "-n", str(n), *(["-d", device] if device else []),
            *(["--library", str(library)] if library else [])]
    proc = subprocess.run(args, capture_output=True, text=True, env=loader_env(library), timeout=600)
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-d", "--device", help="a substring of the device's name")
    ap.add_argument("-n", type=int, default=10000, help="launches of each kind (default 10000)")
    ap.add_argument("--json", type=pathlib.Path, help="also write the figures here")
    args = ap.parse_args(argv)
    library = pyopencl_loader()
    with tempfile.TemporaryDirectory() as tmp:
        native = native_launch(compile_launch(pathlib.Path(tmp)), args.device, args.n, library)
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
    if args.json:
        args.json.write_text(json.dumps({"device": native["device"], "platform": native["platform"], "n": args.n,
                                         "library": native["library"],
                                         "c": {m: native[f"{m}_us"] for m in MODES},
                                         "pyopencl": {m: round(python[f"{m}_us"], 3) for m in MODES}}, indent=1))


if __name__ == "__main__":
    main()
