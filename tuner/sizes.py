"""`--tune-sizes`: workgroup sizes, workgroup counts and tile sizes, after the thresholds (or jointly with them,
for the sampling strategies: size_dimensions gives a search.Space its size dimensions).

Which sizes matter depends on the versions the tuned thresholds choose, so the search starts with one
profiled run (`-P`) of each tuning dataset under the tuned thresholds: it names the kernels that ran and their
time. Each size parameter that sets one of those kernels (codegen.runtime.tuning.sized_kernels) is then
tuned in turn, those of the slowest kernels first (coordinate descent): each candidate value is compared
with the value so far on every tuning dataset (measure.compare: measured until significant), and taken only
if it is significantly faster on some dataset and significantly slower on none. A value a kernel cannot
launch with fails its runs, which the comparison counts as slower: it is recorded, never chosen. Sizes of
kernels that took under MIN_SHARE of the profiled time are left alone: whatever their size, they cannot move
the program's time by more than a tuner's measurement resolves, and each would cost a dozen program runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Callable

from incflat.codegen.runtime.tuning import GRID_SIZE, THREAD_BLOCK_SIZE, TILE_SIZE, Param, sized_kernels
from incflat.tuner.measure import Candidate, Measurer, Stopped, compare, profile
from incflat.tuner.search import Space, experiment_key
from incflat.tuner.tree import path

CANDIDATES = {
    # 32, a warp: a thread-per-row kernel with few rows (OptionPricing's Brownian bridge at 500 paths) spreads
    # over more compute units in smaller workgroups
    THREAD_BLOCK_SIZE: (32, 64, 128, 256, 512, 1024),
    GRID_SIZE: (16, 64, 256, 1024, 4096, 16384),
    TILE_SIZE: (4, 8, 16, 32),
}
MIN_SHARE = 0.01


@dataclass(frozen=True)
class SizeOutcome:
    sizes: dict[str, int]  # the size parameters whose tuned value is not the program's default
    notes: tuple[str, ...]
    stopped: str | None = None  # why the search stopped early (measure.Stopped), if it did


def kernel_times(space: Space, bench: Measurer, assignment: Mapping[str, int]) -> dict[str, float]:
    """µs per kernel over one profiled run of each tuning dataset."""
    times: dict[str, float] = {}
    for d in space.datasets:
        for name, k in (profile(bench, d.dataset, assignment) or {"kernels": {}})["kernels"].items():
            times[name] = times.get(name, 0.0) + k["total_us"]
    return times


def size_dimensions(space: Space, bench: Measurer, params: Sequence[Param]) -> dict[str, tuple[int, ...]]:
    """The candidate values of the size parameters that set a kernel that ran in a profiled run of a tuning
    dataset, under every threshold at never (where a search from scratch starts) or the program's defaults:
    the dimensions of a joint search (--tune-sizes with a sampling strategy)."""
    ran = set(kernel_times(space, bench, space.start())) | set(kernel_times(space, bench, {}))
    return {p.name: CANDIDATES[p.cls] for p in params if p.cls in CANDIDATES and sized_kernels(p.name, p.cls, ran)}


def tune_sizes(space: Space, bench: Measurer, assignment: Mapping[str, int], params: Sequence[Param],
               log: Callable[[str], None]) -> SizeOutcome:
    times = kernel_times(space, bench, assignment)
    weight = {p.name: sum(times[k] for k in sized_kernels(p.name, p.cls, times)) for p in params if p.cls in CANDIDATES}
    floor = MIN_SHARE * sum(times.values())
    order = sorted((p for p in params if weight.get(p.name, 0) > floor), key=lambda p: -weight[p.name])
    unused = [p.name for p in params if p.cls in CANDIDATES and not weight.get(p.name)]
    minor = [p.name for p in params if 0 < weight.get(p.name, 0) <= floor]
    notes = [f"sizes of kernels the tuned program does not run on the tuning datasets were left alone: "
             f"{', '.join(unused)}"] if unused else []
    if minor:
        notes.append(f"sizes of kernels under {MIN_SHARE:.0%} of the profiled time were left alone: {', '.join(minor)}")
    chosen: dict[str, int] = {}

    def candidate(d, sizes: Mapping[str, int]) -> Candidate:
        key = experiment_key(path(space.forest, assignment, d.epars), sizes)
        shown = ", ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "default sizes"
        return Candidate(dict(assignment) | dict(sizes), key, shown)

    try:
        for p in order:
            log(f"tuning {p.name} (its kernels took {weight[p.name]:.0f} us)")
            for value in CANDIDATES[p.cls]:
                trial = chosen | {p.name: value}
                verdicts = [compare(bench, d.dataset, candidate(d, trial), candidate(d, chosen))
                            for d in space.datasets]
                if -1 in verdicts and 1 not in verdicts:
                    chosen = trial
            log(f"  {p.name} = {chosen.get(p.name, 'default')}")
    except Stopped as stop:
        return SizeOutcome(chosen, (*notes, f"stopped ({stop}) while tuning sizes; kept the sizes chosen so far"),
                           str(stop))
    return SizeOutcome(chosen, tuple(notes))
