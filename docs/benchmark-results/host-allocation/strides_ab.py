"""ctx.empty before and after the row-major strides cache, each runtime in its own process, alternated.

    git stash / checkout the commit before: python -m incflat compile futhark_examples/benchmarks/heston32.fut -o /tmp/heston32-before.py
    at the commit:                           python -m incflat compile futhark_examples/benchmarks/heston32.fut -o /tmp/heston32-new.py
    python strides_ab.py
"""
import subprocess, sys, statistics
code = r'''
import importlib.util, sys, timeit
import numpy as np
spec = importlib.util.spec_from_file_location("h32", sys.argv[1]); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
name = [k for k in sys.modules if k.startswith("incflat_runtime_") and k.endswith(".device")][0]
rt = sys.modules[name]; arrays = sys.modules[name.rsplit(".", 1)[0] + ".arrays"]
ctx = rt.Context(m.PROGRAM, {})
shapes = [((np.int64(1062),), np.float32), ((np.int64(1062), 5), np.float32), ((np.int64(40),), np.int32), ((np.int64(40), np.int64(17)), np.float32)]
def f():
    for s, d in shapes:
        ctx.empty(s, d, "x:1:1")
N = 20000
print(min(timeit.repeat(f, number=N // 4, repeat=5)) / N * 1e6)
'''
res = {"old": [], "new": []}
for _ in range(5):
    for label, prog in (("old", "/tmp/heston32-before.py"), ("new", "/tmp/heston32-new.py")):
        out = subprocess.run([sys.executable, "-c", code, prog], capture_output=True, text=True, check=True).stdout
        res[label].append(float(out.split()[-1]))
for k, v in res.items():
    print(k, " ".join(f"{x:.2f}" for x in v), f"median {statistics.median(v):.2f} us a call")
print(f"new / old: {statistics.median(res['new']) / statistics.median(res['old']):.3f}")
