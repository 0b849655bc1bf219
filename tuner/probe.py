"""ePar discovery: which thresholds a dataset reaches, and the values it compares them against (`-L` runs).

A program logs only the comparisons it makes, so one run sees one path. The first run sets every threshold to
"never": that reaches every threshold on the all-false spine, which for a chain such as matmul's is all of them.
A threshold that hangs under a true outcome is then probed with its ancestors pinned, one extra run each.
The all-false run also makes timed runs, from which the bench learns the dataset's noise (Bench.run_once).

A probe found in the tuning store is not run again. A failed run (a crash, a timeout) is the probe's failure,
not an error: the dataset is then left out of the search, and the report says why.
"""

from __future__ import annotations

from dataclasses import dataclass

from incflat.datasets import Dataset
from incflat.tuner.measure import STORED, Bench, Measurement, Record
from incflat.ir.runtime.tuning import (Forest, all_nodes, parse_comparisons, parse_default_threshold,
                                           parse_device)
from incflat.tuner.children import RunResult
from incflat.tuner.program import EPars
from incflat.tuner.store import StoredProbe
from incflat.tuner.tree import pins


@dataclass(frozen=True)
class Probe:
    epars: EPars
    device: str | None  # from the `Device:` line of `-D`, if the program prints one
    failure: str | None = None  # why a run failed (then epars holds nothing)
    # the value of the thresholds the program has no default for (`Default threshold:` of `-D`), if printed
    default_threshold: int | None = None


def probe(forest: Forest, bench: Bench, dataset: Dataset, never: int) -> Probe:
    stored = bench.store.probe(dataset) if bench.store else None
    if stored:
        bench.stored_count[dataset.name] += 1
        bench.learn(dataset.name, RunResult(None, "", stored.wall_s, stored.times_us))
        bench.observe(Record(dataset, None, None, "probe", Measurement(), 0.0, STORED))
        return Probe(stored.epars, stored.device, default_threshold=stored.default_threshold)
    nodes = all_nodes(forest)
    known = {node.name for node in nodes}
    everything_false = {node.name: never for node in nodes}
    found: dict[str, set[int]] = {}
    device = default = first = None
    tried: set[str] = set()
    target = None  # None: the all-false run
    while True:
        params = everything_false | (pins(target, never) if target else {})
        result = bench.run_once(dataset, params, ["-L", "-D"], label="probe", learn_noise=target is None)
        if not result.ok:
            return Probe({}, device, f"the -L run failed: {result.failure}")
        first = first or result
        device = device or parse_device(result.stderr)
        default = default or parse_default_threshold(result.stderr)
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
                bench.store.add_probe(dataset, StoredProbe(epars, device, default, first.times_us, first.wall_s))
            return Probe(epars, device, default_threshold=default)
        target = todo[0]
