"""ePar discovery: which thresholds a dataset reaches, and the values it compares them against (`-L` runs).

A program logs only the comparisons it makes, so one run sees one path. The first run sets every threshold to
"never": that reaches every threshold on the all-false spine, which for a chain such as matmul's is all of them.
A threshold that hangs under a true outcome is then probed with its ancestors pinned, one extra run each.

A probe found in the tuning store is not run again. A failed run (a crash, a timeout) is the probe's failure,
not an error: the dataset is then left out of the search, and the report says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from incflat.tuner.datasets import Dataset
from incflat.tuner.measure import STORED, Bench, Measurement, Record
from incflat.codegen.runtime.tuning import Forest, all_nodes, parse_comparisons, parse_device
from incflat.tuner.program import EPars
from incflat.tuner.tree import pins


@dataclass(frozen=True)
class Probe:
    epars: EPars
    device: str | None  # from the `Device:` line of `-D`, if the program prints one
    failure: str | None = None  # why a run failed (then epars holds nothing)


def probe(forest: Forest, bench: Bench, dataset: Dataset, never: int) -> Probe:
    stored = bench.store.probe(dataset) if bench.store else None
    if stored:
        bench.stored_count[dataset.name] += 1
        bench.observe(Record(dataset, None, None, "probe", Measurement(), 0.0, STORED))
        return Probe(*stored)
    nodes = all_nodes(forest)
    known = {node.name for node in nodes}
    everything_false = {node.name: never for node in nodes}
    found: dict[str, set[int]] = {}
    device = None
    tried: set[str] = set()
    target = None  # None: the all-false run
    while True:
        params = everything_false | (pins(target, never) if target else {})
        result = bench.run_once(dataset, params, ["-L", "-D"], label="probe")
        if not result.ok:
            return Probe({}, device, f"the -L run failed: {result.failure}")
        device = device or parse_device(result.stderr)
        for name, values in parse_comparisons(result.stderr).items():
            if name in known:
                found.setdefault(name, set()).update(values)
        if target:
            tried.add(target.name)
        # The all-false run reached every reachable threshold with only false ancestors. One under a true
        # outcome may be reachable by pinning its ancestors, if they were all seen.
        todo = [
            n for n in nodes
            if n.name not in found and n.name not in tried
            and any(outcome for _, outcome in n.ancestors) and all(a in found for a, _ in n.ancestors)
        ]
        if not todo:
            epars = {name: tuple(sorted(vs)) for name, vs in found.items()}
            if bench.store:
                bench.store.add_probe(dataset, epars, device)
            return Probe(epars, device)
        target = todo[0]
