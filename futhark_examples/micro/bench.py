"""Effective bandwidth of map, reduce, scan, row sums, column sums and a segmented scan, against a plain
device-to-device copy measured in the same run, and the host time per kernel launch against a bare
pyopencl launch of an empty kernel.

    python futhark_examples/micro/bench.py [--elements 100000000] [--runs 10] [-d DEVICE] [--json FILE]

Each program runs with the thresholds its versions would get after tuning for the shape (every version is
timed; the best is reported), best of --runs runs, inputs already on the device, as `-t` measures.
"""

import argparse
import importlib.util
import json
import pathlib
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def load(name: str, directory: pathlib.Path):
    from incflat.cli import main as incflat_main
    if incflat_main(["compile", "--library", str(HERE / f"{name}.fut"), "-o", str(directory / f"{name}.py")]):
        raise SystemExit(f"compiling {name} failed")
    spec = importlib.util.spec_from_file_location(name, directory / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def size_settings(module, sweep: bool) -> list:
    """Workgroup and grid sizes to try: the defaults, or with --sweep a grid of them."""
    if not sweep:
        return [{}]
    from incflat.compiled import program_params
    params = program_params(module)
    blocks = [p.name for p in params if p.cls == "thread_block_size"]
    grids = [p.name for p in params if p.cls == "grid_size"]
    settings = []
    for group_size in (128, 256, 512, 1024):
        for groups in ((None, 528, 1056, 2112) if grids else (None,)):
            setting = {n: group_size for n in blocks}
            setting.update({n: groups for n in grids if groups})
            settings.append(setting)
    return settings


def best_time(module, device, args, runs, expected, sweep=False, length=None):
    """(best microseconds over the versions and size settings, the parameters that gave it); every
    result is checked against numpy's, to a rounding error that grows with `length`, the number of
    elements summed into one result (all of the first input's by default)."""
    length = np.size(args[0]) if length is None else length
    from incflat.compiled import version_assignments
    best = (float("inf"), None)
    for version in version_assignments(module):
        for sizes in size_settings(module, sweep):
            params = dict(version, **sizes)
            lib = module.load(device=device, overrides=params)
            ctx, entry = lib.ctx, module.PROGRAM.entry_points["main"]
            dev_args = entry.upload(ctx, args)
            mine = float("inf")
            for run in range(runs + 1):
                ctx.queue.finish()
                start = time.perf_counter()
                (result,) = entry.fn(ctx, *dev_args)
                ctx.queue.finish()
                if run:
                    mine = min(mine, (time.perf_counter() - start) * 1e6)
            got = ctx.from_device(result) if hasattr(result, "buf") else result
            if not np.allclose(got, expected, rtol=1e-3, atol=1e-2 * np.sqrt(max(length, 1))):
                raise SystemExit(f"{module.__name__} {params}: wrong result")
            if sweep:
                print(json.dumps({"module": module.__name__, "params": params, "us": round(mine, 1)}), flush=True)
            best = min(best, (mine, params), key=lambda b: b[0])
    return best


def kernel_time(module, device, params, args) -> float:
    """Microseconds the kernels of one call take on the device (OpenCL events), without the host's."""
    lib = module.load(device=device, overrides=params, profile=True)
    ctx, entry = lib.ctx, module.PROGRAM.entry_points["main"]
    dev_args = entry.upload(ctx, args)
    entry.fn(ctx, *dev_args)
    ctx.settle()
    ctx.kernel_times.clear()
    entry.fn(ctx, *dev_args)
    ctx.settle()
    return sum(total for total, _ in ctx.kernel_times.values())


def copy_time(device, n, runs):
    import pyopencl as cl
    from incflat.ir.runtime.device import choose_device
    ctx = cl.Context([choose_device(None, device)])
    queue = cl.CommandQueue(ctx)
    a = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n * 4)
    b = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n * 4)
    cl.enqueue_fill_buffer(queue, a, np.float32(1), 0, n * 4)
    best = float("inf")
    for run in range(runs + 1):
        queue.finish()
        start = time.perf_counter()
        cl.enqueue_copy(queue, b, a)
        queue.finish()
        if run:
            best = min(best, (time.perf_counter() - start) * 1e6)
    return best


def launch_overhead(device, module):
    """Microseconds per launch: a bare pyopencl launch of an empty kernel, and a whole entry-point call of
    a one-element map (one kernel) through the compiled program."""
    import pyopencl as cl
    from incflat.ir.runtime.device import choose_device
    ctx = cl.Context([choose_device(None, device)])
    queue = cl.CommandQueue(ctx)
    knl = cl.Program(ctx, "__kernel void empty(__global float *x) {}").build().empty
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4)
    count = 2000
    for _ in range(100):
        knl(queue, (1,), (1,), buf)
    queue.finish()
    start = time.perf_counter()
    for _ in range(count):
        knl(queue, (1,), (1,), buf)
    queue.finish()
    bare = (time.perf_counter() - start) / count * 1e6
    lib = module.load(device=device)
    entry = module.PROGRAM.entry_points["main"]
    dev_args = entry.upload(lib.ctx, [np.ones(1, np.float32), np.ones(1, np.float32)])
    for _ in range(100):
        entry.fn(lib.ctx, *dev_args)
    lib.ctx.queue.finish()
    start = time.perf_counter()
    for _ in range(count):
        entry.fn(lib.ctx, *dev_args)
    lib.ctx.queue.finish()
    ours = (time.perf_counter() - start) / count * 1e6
    return bare, ours


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=10 ** 8)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("-d", "--device")
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--sweep", action="store_true", help="also try a grid of workgroup and grid sizes")
    ap.add_argument("--only", help="comma-separated benchmarks to run")
    args = ap.parse_args(argv)
    n = args.elements
    side = int(round(n ** 0.5))
    rng = np.random.default_rng(0)
    flat = rng.uniform(-1, 1, n).astype(np.float32)
    square = flat[:side * side].reshape(side, side)
    rows100 = flat[:(n // 100) * 100].reshape(n // 100, 100)
    cases = {  # name: (inputs, bytes moved, numpy's result, elements summed into one result)
        "map_add": ([flat, flat[::-1].copy()], 3 * n * 4, lambda: flat + flat[::-1], 1),
        "reduce_sum": ([flat], n * 4, lambda: flat.sum(dtype=np.float64), n),
        "scan_sum": ([flat], 2 * n * 4, lambda: np.cumsum(flat, dtype=np.float64), n),
        "row_sums": ([square], side * side * 4, lambda: square.sum(axis=1, dtype=np.float64), side),
        "col_sums": ([square], side * side * 4, lambda: square.sum(axis=0, dtype=np.float64), side),
        "seg_scan": ([rows100], 2 * rows100.size * 4, lambda: np.cumsum(rows100, axis=1, dtype=np.float64), 100),
    }
    if args.only:
        cases = {k: v for k, v in cases.items() if k in args.only.split(",")}
    copy_us = copy_time(args.device, n, args.runs)
    copy_bw = 2 * n * 4 / copy_us / 1e3
    rows = [{"benchmark": "device copy", "us": round(copy_us, 1), "GB/s": round(copy_bw, 1), "of copy": 1.0}]
    with tempfile.TemporaryDirectory() as tmp:
        modules = {}
        for name, (inputs, moved, expected, length) in cases.items():
            modules[name] = load(name, pathlib.Path(tmp))
            us, params = best_time(modules[name], args.device, inputs, args.runs, expected(), args.sweep, length)
            bw = moved / us / 1e3
            kernels_us = kernel_time(modules[name], args.device, params, inputs)
            rows.append({"benchmark": name, "us": round(us, 1), "GB/s": round(bw, 1),
                         "of copy": round(bw / copy_bw, 3), "kernel us": round(kernels_us, 1), "version": params})
            print(json.dumps(rows[-1]), flush=True)
        bare, ours = launch_overhead(args.device, modules["map_add"] if "map_add" in modules
                                     else load("map_add", pathlib.Path(tmp)))
    import pyopencl as cl
    from incflat.ir.runtime.device import choose_device
    device_name = choose_device(None, args.device).name
    print(f"device: {device_name}")
    print(f"{'benchmark':<12} {'us':>10} {'GB/s':>8} {'of copy':>8} {'kernel us':>10}")
    for r in rows:
        print(f"{r['benchmark']:<12} {r['us']:>10} {r['GB/s']:>8} {r['of copy']:>8} {r.get('kernel us', ''):>10}")
    print(f"launch: bare pyopencl {bare:.1f} us, one-kernel entry call {ours:.1f} us")
    if args.json:
        args.json.write_text(json.dumps({"device": device_name, "rows": rows, "bare_launch_us": bare,
                                         "entry_call_us": ours, "elements": n}, indent=1))
    del cl


if __name__ == "__main__":
    main()
