"""Where `tree`'s configurations went, from a study's record: per program, the most configurations measured
on one tuning dataset (the probe and MF included) in its first round, in each later round and in the pass
behind the intra-group versions' fallbacks, against versions + 2; and its rounds.

    python docs/benchmark-results/tuner-study/rounds.py STUDY.json[.gz] ...
"""

import gzip
import json
import re
import sys
from collections import Counter

NEW_MEASUREMENT = re.compile(r"^  (\S+) \[.*\]: (.*)$")
SEGMENT = re.compile(r"^(round \d+|behind the intra-group versions)")


def segments(log: str) -> list[tuple[str, Counter]]:
    """The log cut where a round or the fallback pass starts: each part's name and its new configurations
    per dataset (lines of a measurement not answered from the cache or the store nor measured again)."""
    parts = [("round 1", Counter())]
    for line in log.splitlines():
        start = SEGMENT.match(line)
        if start:
            parts.append((start.group(1).replace("behind the intra-group versions", "fallback pass"), Counter()))
            continue
        found = NEW_MEASUREMENT.match(line)
        if found and not found.group(2).endswith(("(cached)", "(stored)", "(measured again)")):
            parts[-1][1][found.group(1)] += 1
    return parts


def main(paths: list[str]) -> None:
    for path in paths:
        study = json.load(gzip.open(path) if path.endswith(".gz") else open(path))
        for program in study:
            tree = next((r for r in program["strategies"] if r["strategy"] == "tree" and "log" in r), None)
            if tree is None or "tuning_configurations" not in tree:
                continue
            parts = segments(tree["log"])
            tuning = tree["tuning_configurations"]
            later = {name: [counts[name] for _, counts in parts[1:]] for name in tuning}
            # round 1: what the others leave of each dataset's configurations (its probe logs no such line)
            first = max(total - sum(later[name]) for name, total in tuning.items())
            cells = [f"round 1 {first}"] + [f"{part} {max((c[n] for n in tuning), default=0)}"
                                             for part, c in parts[1:]]
            print(f"{path}: {program['program']}: versions + 2 = {program['versions'] + 2}, configurations "
                  f"{max(tuning.values())}: " + ", ".join(cells))


if __name__ == "__main__":
    main(sys.argv[1:])
