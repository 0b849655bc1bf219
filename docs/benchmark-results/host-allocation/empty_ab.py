"""ctx.empty as it was before this change (old_empty, copied) against the runtime's, interleaved, in one process.

    python -m incflat compile futhark_examples/benchmarks/heston32.fut -o /tmp/heston32.py && python empty_ab.py
"""
import importlib.util, math, statistics, sys, time
import numpy as np
spec = importlib.util.spec_from_file_location("h32", "/tmp/heston32.py"); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
name = [k for k in sys.modules if k.startswith("incflat_runtime_") and k.endswith(".device")][0]
rt = sys.modules[name]; arrays = sys.modules[name.rsplit(".", 1)[0] + ".arrays"]
DeviceArray, check_sizes, interleaved_strides = arrays.DeviceArray, arrays.check_sizes, arrays.interleaved_strides
ctx = rt.Context(m.PROGRAM, {})

def old_empty(self, shape, dtype, where="", what="an allocation", interleave=0):
    arr = DeviceArray(None, shape, dtype)
    if 0 in arr.shape:
        arr = DeviceArray(None, tuple(max(int(d), 0) for d in arr.shape), dtype)
    if interleave and len(arr.shape) > interleave:
        arr.strides = interleaved_strides(arr.shape, interleave)
    check_sizes(arr.shape, what, where)
    count = math.prod(arr.shape)
    nbytes = count * arr.dtype.itemsize
    if nbytes > self.device.global_mem_size:
        raise AssertionError
    arr.buf = self.pool.allocate(max(nbytes, 1))
    if count > self.device_state.widest:
        self.device_state.widest = count
    return arr

N = 20000
shapes = [((1062,), np.float32), ((1062, 5), np.float32), ((40,), np.int32), ((np.int64(40), np.int64(17)), np.float32)]
results = {"old": [], "new": []}
for rep in range(5):
    for label, fn in (("old", lambda s, d: old_empty(ctx, s, d, "x:1:1")), ("new", lambda s, d: ctx.empty(s, d, "x:1:1"))):
        t = time.perf_counter()
        for _ in range(N // len(shapes)):
            for s, d in shapes:
                fn(s, d)
        results[label].append((time.perf_counter() - t) / N * 1e6)
for label, ts in results.items():
    print(label, " ".join(f"{t:.2f}" for t in ts), f"median {statistics.median(ts):.2f} us a call")
print(f"new / old: {statistics.median(results['new']) / statistics.median(results['old']):.3f}")
