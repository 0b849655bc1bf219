"""Two compilers side by side in one process: the micro-benchmarks' and matmul's versions, compiled by each,
timed in turn on the same device.

Compiled programs need only numpy and pyopencl, so the programs of both compilers load in one process, and
the host's noise from one process to the next (several microseconds a call on a GPU's host) stays out of
the comparison. Each version runs in blocks of calls, one compiler's block then the other's, six blocks each
(alternating every call would add a switch between the two programs' OpenCL contexts to each call, which costs
more than a small kernel); the first two calls of a block are dropped. The table gives the median and the fastest
call of each side.

    python futhark_examples/bench_ab.py --a "python3 OTHER/incflat.py" --b "python3 -m incflat" [-d DEVICE]

--a and --b are commands that take `compile --library FILE.fut -o FILE.py` (the defaults: this checkout for
both). Programs compiled before the runtime became a package (no `PROGRAM`) are understood too.
"""

import argparse
import importlib.util
import json
import pathlib
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def compile_with(command: str, fut: pathlib.Path, out: pathlib.Path, tag: str):
    subprocess.run([*shlex.split(command), "compile", "--backend=pyopencl", "--library", str(fut), "-o", str(out)], check=True)
    spec = importlib.util.spec_from_file_location(f"{tag}_{out.stem}", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def entry_of(module):
    return module.PROGRAM.entry_points["main"] if hasattr(module, "PROGRAM") else module.ENTRY_POINTS["main"]


def versions_of(module) -> dict:
    """The threshold values that reach each code version (the tuning contract's enumeration), named V1, ..."""
    from incflat.ir.runtime.tuning import build_forest, listing, parse_listing, version_assignments
    text = (listing(module.PROGRAM.params) if hasattr(module, "PROGRAM")
            else "".join(f"{name} ({cls})\n" for name, cls in module.PARAMS))
    assignments = version_assignments(build_forest(parse_listing(text)))
    return {f"V{k}": values for k, values in enumerate(assignments, 1)}


def call(ctx, entry, args) -> tuple:
    ctx.queue.finish()
    start = time.perf_counter()
    result = entry.fn(ctx, *args)
    ctx.queue.finish()
    return (time.perf_counter() - start) * 1e6, result


def compare(modules: dict, device, params: dict, args: list, expected, calls: int, blocks: int = 6) -> dict:
    sides = {}
    for side, module in modules.items():
        lib = module.load(device=device, overrides=params)
        entry = entry_of(module)
        sides[side] = (lib.ctx, entry, entry.upload(lib.ctx, args))
        _, (result,) = call(*sides[side])
        got = lib.ctx.from_device(result) if hasattr(result, "buf") else result
        if not np.allclose(got, expected, rtol=1e-3, atol=1e-2 * np.sqrt(np.size(args[0]))):
            raise SystemExit(f"compiler {side}, {params}: wrong result")
    times = {side: [] for side in sides}
    for block in range(blocks):
        for side in (list(sides) if block % 2 == 0 else list(sides)[::-1]):
            for k in range(calls):
                took, _ = call(*sides[side])
                if k >= 2:
                    times[side].append(took)
    return {side: {"median": statistics.median(ts), "min": min(ts)} for side, ts in times.items()}


def cases(small: bool):
    """(program, source file, [(label, params or None for every version, inputs, expected)])."""
    n = 10 ** 5 if small else 10 ** 8
    rng = np.random.default_rng(0)
    flat = rng.uniform(-1, 1, n).astype(np.float32)
    side = int(round(n ** 0.5))
    square = flat[:side * side].reshape(side, side)
    rows100 = flat[:(n // 100) * 100].reshape(n // 100, 100)
    micro = {
        "map_add": ([flat, flat[::-1].copy()], flat + flat[::-1]),
        "reduce_sum": ([flat], flat.sum(dtype=np.float64)),
        "scan_sum": ([flat], np.cumsum(flat, dtype=np.float64)),
        "row_sums": ([square], square.sum(axis=1, dtype=np.float64)),
        "col_sums": ([square], square.sum(axis=0, dtype=np.float64)),
        "seg_scan": ([rows100], np.cumsum(rows100, axis=1, dtype=np.float64)),
    }
    for name, (inputs, expected) in micro.items():
        yield name, HERE / "micro" / f"{name}.fut", [("", None, inputs, expected)]
    work = 11 if small else 25
    runs = []
    for x in range(11):
        rows, inner = 2 ** x, 2 ** (work - 2 * x)
        if inner < 1:
            continue
        r = np.random.default_rng(x)
        xss = r.uniform(-1, 1, (rows, inner)).astype(np.float32)
        yss = r.uniform(-1, 1, (inner, rows)).astype(np.float32)
        runs.append((f"X={x}", x, [xss, yss], xss.astype(np.float64) @ yss.astype(np.float64)))
    yield "matmul", HERE / "matmul.fut", runs
    outer, num_x, num_y, steps = (4, 8, 16, 3) if small else (256, 256, 256, 64)  # LocVolCalib's large shape
    r = np.random.default_rng(1)
    grid = r.uniform(0, 1, (outer, num_x, num_y)).astype(np.float32)
    coef = r.uniform(0, 1, num_y).astype(np.float32)
    yield "locvolcalib", HERE / "locvolcalib.fut", [("large", None, [grid, coef, np.int64(steps)],
                                                      locvolcalib_toy(grid, coef, steps))]


def locvolcalib_toy(grid, coef, steps):
    """The toy's time steps in numpy: each row solves the tridiagonal system (a, b, a) with the Thomas
    algorithm, vectorised over all rows."""
    rows = grid.astype(np.float64).reshape(-1, grid.shape[-1])
    n = rows.shape[1]
    for t in range(steps):
        dt = 1 / (t + 1)
        a = -0.25 * dt * coef.astype(np.float64)
        b = 2 + dt * coef.astype(np.float64) ** 2
        cp, dp = np.empty(n), np.empty_like(rows)
        cp[0], dp[:, 0] = a[0] / b[0], rows[:, 0] / b[0]
        for i in range(1, n):
            m = b[i] - a[i] * cp[i - 1]
            cp[i] = a[i] / m
            dp[:, i] = (rows[:, i] - a[i] * dp[:, i - 1]) / m
        for i in range(n - 2, -1, -1):
            dp[:, i] -= cp[i] * dp[:, i + 1]
        rows = dp
    return rows.reshape(grid.shape)


def worth_timing(version: str, x: int) -> bool:
    """Matmul's versions (V1 rows, V2 a workgroup a row, V3 a thread a result, V4 a workgroup a dot product, V5
    a segmented reduction) that take no more than milliseconds at X."""
    return not (version == "V1" or (version == "V2" and x < 7) or (version == "V3" and x < 6))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", default=f"{sys.executable} -m incflat", help="the first compiler's command")
    ap.add_argument("--b", default=f"{sys.executable} -m incflat", help="the second compiler's command")
    ap.add_argument("-d", "--device")
    ap.add_argument("--calls", type=int, default=12, help="calls a block (default 12)")
    ap.add_argument("--small", action="store_true", help="small inputs: a smoke test on a CPU device")
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--programs", help="comma-separated names to run (default: all)")
    ap.add_argument("--versions", help="comma-separated versions to time, e.g. V2,V3 (default: all)")
    args = ap.parse_args(argv)
    wanted = set(args.programs.split(",")) if args.programs else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, fut, runs in cases(args.small):
            if wanted is not None and name not in wanted:
                continue
            modules = {side: compile_with(command, fut, pathlib.Path(tmp) / f"{side}_{name}.py", side)
                       for side, command in (("a", args.a), ("b", args.b))}
            every = versions_of(modules["a"])
            for label, x, inputs, expected in runs:
                versions = every if x is None else {v: p for v, p in every.items() if worth_timing(v, x)}
                if args.versions:
                    versions = {v: p for v, p in versions.items() if v in args.versions.split(",")}
                for version, params in versions.items():
                    result = compare(modules, args.device, params, inputs, expected, args.calls)
                    rows.append({"program": name, "case": label, "version": version, **result})
                    print(json.dumps(rows[-1]), flush=True)
    print(f"{'program':<12} {'case':<6} {'version':<8} {'a median':>9} {'b median':>9} {'b/a':>6} {'a min':>9} "
          f"{'b min':>9}")
    for r in rows:
        print(f"{r['program']:<12} {r['case']:<6} {r['version']:<8} {r['a']['median']:>9.1f} {r['b']['median']:>9.1f} "
              f"{r['b']['median'] / r['a']['median']:>6.3f} {r['a']['min']:>9.1f} {r['b']['min']:>9.1f}")
    ratios = [r["b"]["median"] / r["a"]["median"] for r in rows]
    print(f"b/a of the medians: geometric mean {np.exp(np.mean(np.log(ratios))):.3f}, "
          f"from {min(ratios):.3f} to {max(ratios):.3f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
