"""Launch cost of a kernel with N buffers, each with three longs, the longs passed as arguments or in one
struct: python3 enqueue.py (pyopencl, an OpenCL device; NVIDIA H200 in README.md)."""
import time, numpy as np, pyopencl as cl, os
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
print(ctx.devices[0].name)
for nbuf in (1, 5, 20, 40):
    for mode in ("args", "struct"):
        if mode == "args":
            params = ", ".join(f"__global float *b{i}, long o{i}, long s{i}, long t{i}" for i in range(nbuf)) + ", long n"
            pre = ""
        else:
            fields = " ".join(f"long o{i}; long s{i}; long t{i};" for i in range(nbuf)) + " long n;"
            params = ", ".join(f"__global float *b{i}" for i in range(nbuf)) + ", const S sc"
            pre = " ".join(f"long o{i} = sc.o{i}, s{i} = sc.s{i}, t{i} = sc.t{i};" for i in range(nbuf)) + " long n = sc.n;"
        body = " + ".join(f"b{i}[o{i} + i * s{i}]" for i in range(nbuf))
        src = (f"typedef struct {{ {fields} }} S;\n" if mode == "struct" else "") + f"__kernel void k({params}) {{ {pre} size_t i = get_global_id(0); if (i < n) b0[i] = {body}; }}"
        k = cl.Program(ctx, src).build().k
        bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 4096) for _ in range(nbuf)]
        alt = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 4096) for _ in range(nbuf)]
        if mode == "args":
            args = []
            for b in bufs: args += [b, np.int64(0), np.int64(1), np.int64(1)]
            k.set_args(*args, np.int64(4096)); step = 4
        else:
            packed = np.array([0, 1, 1] * nbuf + [4096], np.int64).tobytes()
            packed2 = np.array([0, 1, 2] * nbuf + [4096], np.int64).tobytes()
            for i, b in enumerate(bufs): k.set_arg(i, b)
            k._set_arg_buf(nbuf, packed); step = 1
        q.finish(); t = time.perf_counter()
        for _ in range(2000): cl.enqueue_nd_range_kernel(q, k, (4096,), (256,))
        t1 = time.perf_counter(); q.finish()
        q.finish(); t2 = time.perf_counter()
        for j in range(2000):
            src_ = alt if j % 2 else bufs
            for i, b in enumerate(src_): k.set_arg(step * i, b)
            if mode == "struct": k._set_arg_buf(nbuf, packed2 if j % 2 else packed)
            cl.enqueue_nd_range_kernel(q, k, (4096,), (256,))
        t3 = time.perf_counter(); q.finish()
        print(f"{mode} {nbuf} buffers: enqueue {1e6*(t1-t)/2000:.1f} us, with all buffers (and struct) set {1e6*(t3-t2)/2000:.1f} us")
