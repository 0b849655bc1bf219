"""Summarise a cProfile file: total, and the host's main costs (blocking reads, launches)."""
import pstats, sys
p = pstats.Stats(sys.argv[1])
tot = {"copy": [0, 0.0], "launch": [0, 0.0], "entry": [0, 0.0], "index": [0, 0.0], "from_device": [0, 0.0],
       "empty": [0, 0.0], "cmp": [0, 0.0], "finish": [0, 0.0], "wait": [0, 0.0]}
for (fn, line, name), (cc, nc, tt, ct, callers) in p.stats.items():
    key = {"enqueue_copy": "copy", "launch": "launch", "index": "index", "from_device": "from_device",
           "empty": "empty", "cmp": "cmp", "finish": "finish", "wait": "wait"}.get(name)
    if name.startswith("entry_"):
        key = "entry"
    if key:
        tot[key][0] += nc
        tot[key][1] += ct if key in ("copy", "entry", "index", "from_device", "finish", "wait") else tt
print(sys.argv[2], " ".join(f"{k}={n}/{t*1e3:.1f}ms" for k, (n, t) in tot.items() if n))
