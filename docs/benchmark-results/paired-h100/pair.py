"""In-process alternation: one process, several configurations of a compiled program, run by run in turn.
usage: pair.py PROGRAM DATA.in CONFIGS.json REPS [noenq]   (CONFIGS: {name: {param: value}}); prints JSON
{name: [run µs...]} (the first round dropped as warm-up)."""
import importlib, importlib.machinery, importlib.util, json, sys, time
prog, data, configs, reps = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3])), int(sys.argv[4])
loader = importlib.machinery.SourceFileLoader("prog", prog)
spec = importlib.util.spec_from_loader("prog", loader); mod = importlib.util.module_from_spec(spec)
loader.exec_module(mod)
runtime = mod.LibraryProgram.__module__.rsplit(".", 1)[0]
device = importlib.import_module(runtime + ".device")
values = importlib.import_module(runtime + ".values")
if "noenq" in sys.argv[5:]:
    device.cl.enqueue_nd_range_kernel = lambda *a, **k: None
program = mod.PROGRAM
entry = program.entry_points["main"]
with open(data, "rb") as f:
    args = values.read_values(f)
ctxs = {name: device.Context(program, mod.TUNED_DEFAULTS, overrides=params) for name, params in configs.items()}
first = next(iter(ctxs.values()))
inputs = entry.upload(first, list(args))
times = {name: [] for name in ctxs}
for rep in range(reps + 1):
    for name, ctx in ctxs.items():
        ctx.queue.finish()
        start = time.perf_counter()
        ctx.call(entry.fn, inputs)
        ctx.queue.finish()
        if rep:
            times[name].append(round((time.perf_counter() - start) * 1e6))
print(json.dumps(times))
