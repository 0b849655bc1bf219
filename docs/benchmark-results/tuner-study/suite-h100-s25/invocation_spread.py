"""How far a configuration's invocation means stray from each other against what their runs' own spread
explains, per program, from the side-by-side invocations of tuner_study results:

    python docs/benchmark-results/tuner-study/suite-h100-s25/invocation_spread.py STUDY.json[.gz] ...

For every configuration and dataset measured in two invocations or more: the coefficient of variation of the
runs within an invocation (pooled), and that of the invocation means. Without an invocation effect the
second would be the first over sqrt(runs per invocation); the last column is their ratio (medians)."""
import gzip
import json
import math
import statistics
import sys


def studies(path: str) -> list[dict]:
    found = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
    return found["study"] if isinstance(found, dict) else found


for path in sys.argv[1:]:
    for program in studies(path):
        rows = []
        for per_dataset in (program.get("invocations") or {}).values():
            for invocations in per_dataset.values():
                groups = [g for g in invocations if len(g) >= 2 and all(math.isfinite(t) for t in g)]
                if len(groups) < 2:
                    continue
                means = [statistics.fmean(g) for g in groups]
                grand = statistics.fmean(means)
                within = math.sqrt(statistics.fmean(statistics.variance(g) for g in groups)) / grand
                between = statistics.stdev(means) / grand
                explained = within / math.sqrt(statistics.fmean(len(g) for g in groups))
                rows.append((within, between, between / explained if explained > 0 else math.inf))
        if rows:
            print(f"{program['program']:18s} {len(rows):3d} configurations x datasets: runs' cv "
                  f"{statistics.median(r[0] for r in rows):.3f}, invocation means' cv "
                  f"{statistics.median(r[1] for r in rows):.3f}, "
                  f"{statistics.median(r[2] for r in rows):.1f}x what the runs explain")
