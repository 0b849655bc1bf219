"""Per round and dataset, the mean of incflat bench's runs (µs) before (old-PART-ROUND.json) and after
(new-PART-ROUND.json), and over the rounds of each folder, new ÷ old of the summed means.
`python3 summary.py [FOLDER ...]`: the folders named, by default those beside this script."""
import glob
import json
import os
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
folders = sys.argv[1:] or sorted(os.path.join(here, d) for d in os.listdir(here) if os.path.isdir(os.path.join(here, d)))
for folder in folders:
    means = {}  # (part, round, side, dataset) -> mean
    for path in glob.glob(f"{folder}/*.json"):
        side, part, rnd = os.path.basename(path)[:-5].split("-")
        for prog in json.load(open(path)).values():
            for dataset, r in prog["datasets"].items():
                means[part, rnd, side, dataset.split("/")[-1].split(".")[0]] = statistics.mean(r["runtimes"])
    print(os.path.basename(os.path.normpath(folder)))
    for part in sorted({k[0] for k in means}, key=len):
        for dataset in sorted({k[3] for k in means}):
            rounds = sorted({k[1] for k in means if k[0] == part and k[3] == dataset})
            pairs = [(means[part, r, "old", dataset], means[part, r, "new", dataset]) for r in rounds]
            faster = sum(new < old for old, new in pairs)
            ratio = sum(n for _, n in pairs) / sum(o for o, _ in pairs)
            shown = ", ".join(f"{o:,.0f} -> {n:,.0f}" for o, n in pairs)
            print(f"  {part.upper():3} {dataset:9} new/old {ratio:.3f}, new faster in {faster} of {len(pairs)}: {shown}")
