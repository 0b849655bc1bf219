"""Kernel totals of -P profiles, old against new: `python3 kernels.py FOLDER` reads FOLDER/P-D-SIDE[-ROUND].json
(SIDE old or new) and prints, per program and dataset, the summed kernel time of each side (ms, one entry a
round), new / old, and new / old of the three kernels slowest on the old side."""
import glob
import json
import os
import re
import sys

folder = sys.argv[1]
runs = {}  # (program-dataset, side) -> [kernels of one round]
for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
    m = re.fullmatch(r"(.+)-(old|new)(?:-(\d+))?\.json", os.path.basename(path))
    if not m:
        continue
    runs.setdefault((m[1], m[2]), []).append(json.load(open(path))["kernels"])
for name in sorted({k[0] for k in runs}):
    old, new = runs[name, "old"], runs[name, "new"]
    total = lambda side: [sum(v["total_us"] for v in k.values()) / 1000 for k in side]  # noqa: E731
    per = lambda side, n: sum(k.get(n, {"total_us": 0})["total_us"] for k in side)  # noqa: E731
    slowest = sorted(old[0], key=lambda n: -per(old, n))[:3]
    print(f"{name:22} old {', '.join(f'{t:.2f}' for t in total(old))} ms, new {', '.join(f'{t:.2f}' for t in total(new))}"
          f" ms: {sum(total(new)) / sum(total(old)):.3f} | "
          + "; ".join(f"{n} {per(new, n) / per(old, n):.3f}" for n in slowest))
