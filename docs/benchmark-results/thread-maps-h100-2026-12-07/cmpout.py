"""Two files of Futhark values: identical, or the largest absolute and relative differences."""
import sys
import numpy as np
from incflat.ir.runtime.values import read_values
a, b = (read_values(open(f, "rb")) for f in sys.argv[1:3])
for x, y in zip(a, b):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    d = np.abs(x - y)
    print(f"{sys.argv[3]}: max abs diff {d.max():.3g}, max rel diff {(d / np.maximum(np.abs(x), 1e-30)).max():.3g}")
