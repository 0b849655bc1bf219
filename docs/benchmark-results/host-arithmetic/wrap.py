"""One wrapped i64 addition of the host code, µs a call: through np.iinfo (before 80069bd) and through the
runtime's table (after). Run from anywhere: python docs/benchmark-results/host-arithmetic/wrap.py"""

import timeit

import numpy as np

from incflat.codegen.runtime.arrays import wrap


def wrap_iinfo(t, v):
    info = np.iinfo(t)
    span = int(info.max) - int(info.min) + 1
    return t((int(v) - int(info.min)) % span + int(info.min))


i = np.int64(5)
for name, f, expression in (("np.iinfo", wrap_iinfo, lambda: wrap_iinfo(np.int64, int(np.int64(1)) + int(i))),
                            ("table", wrap, lambda: wrap(np.int64, 1 + int(i)))):
    n = 200_000
    print(f"{name}: {min(timeit.repeat(expression, number=n, repeat=5)) / n * 1e6:.2f} us")
