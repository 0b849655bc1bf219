"""Cost of reading scalars back after a kernel: 3 blocking reads against 3 non-blocking reads and one wait."""
import time, numpy as np, pyopencl as cl
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
prg = cl.Program(ctx, """__kernel void k(__global float *a, int n) { int i = get_global_id(0);
  float x = a[i]; for (int j = 0; j < n; j++) x = x * 0.999f + 1.0f; a[i] = x; }""").build()
n = 1 << 16
bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n * 4) for _ in range(3)]
hosts = [np.empty(1, np.float32) for _ in range(3)]
k = prg.k
def step(mode, work):
    for b in bufs:
        k(q, (n,), (256,), b, np.int32(work))
    if mode == "blocking":
        for b, h in zip(bufs, hosts):
            cl.enqueue_copy(q, h, b)
    else:
        evs = [cl.enqueue_copy(q, h, b, is_blocking=False) for b, h in zip(bufs, hosts)]
        evs[-1].wait()
for work in (10, 1000):
    for mode in ("blocking", "batched", "blocking", "batched"):
        for _ in range(50): step(mode, work)
        t = time.perf_counter()
        for _ in range(500): step(mode, work)
        print(f"work {work} {mode}: {(time.perf_counter() - t) / 500 * 1e6:.1f} us a step")
