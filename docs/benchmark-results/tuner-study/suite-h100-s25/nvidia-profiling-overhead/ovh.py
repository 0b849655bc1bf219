import sys, pathlib, time, futhark_data, statistics
from importlib import import_module
from incflat.harness import compile_cached
from incflat.codegen.runtime import device as D
exe = compile_cached(pathlib.Path('futhark_examples/benchmarks/lud.fut'))
sys.path.insert(0, str(exe.parent))
mod = import_module(exe.stem)
x = next(futhark_data.load(open('futhark_examples/benchmarks/data/lud-train-512.in','rb')))
entry = mod.PROGRAM.entry_points['main']
def measure(prof, noop=False):
    lib = mod.load(profile=prof); ctx = lib.ctx
    if noop:
        ctx.profile = False  # the queue keeps profiling, the bookkeeping is off
    dev = entry.upload(ctx, [x])
    ts = []
    for _ in range(10):
        ctx.begin_run(); ctx.queue.finish(); t = time.perf_counter(); entry.fn(ctx, *dev); ctx.queue.finish(); ts.append((time.perf_counter() - t) * 1e3)
    return round(statistics.median(ts[1:]), 1)
for rep in range(5):
    print('plain', measure(False), 'profiled queue only', measure(True, True), 'full -P', measure(True))
