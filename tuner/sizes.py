"""`--tune-sizes`: workgroup sizes, workgroup counts, tile sizes and tiled stencil loops' steps and widths, after
the thresholds (or jointly with them, for the sampling strategies: size_dimensions gives a search.Space its size
dimensions).

Which sizes matter depends on the versions the tuned thresholds choose, so the search starts with one
profiled run (`-P`) of each tuning dataset under the tuned thresholds: it names the kernels that ran and their
time. Each size parameter that sets one of those kernels (ir.runtime.tuning.sized_kernels) is then
tuned in turn, those of the slowest kernels first (coordinate descent): each candidate value is compared
with the value so far on every tuning dataset (measure.compare: measured until significant), and taken only
if it is significantly faster on some dataset and significantly slower on none. A value a kernel cannot
launch with fails its runs, which the comparison counts as slower: it is recorded, never chosen. Sizes of
kernels that took under MIN_SHARE of the profiled time of every tuning dataset are left alone: whatever their
size, they cannot move a dataset's time by more than a tuner's measurement resolves, and each would cost a
dozen program runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Callable

from incflat.ir.runtime.tuning import (GRID_SIZE, THREAD_BLOCK_SIZE, TILE_SIZE, USER_PARAM, Param, sized_kernels,
                                       stencil_kind)
from incflat.tuner.measure import Candidate, Measurer, Stopped, dominates, profile
from incflat.tuner.search import Space, experiment_key
from incflat.tuner.tree import path

CANDIDATES = {
    # 32, a warp: a thread-per-row kernel with few rows (OptionPricing's Brownian bridge at 500 paths) spreads
    # over more compute units in smaller workgroups
    THREAD_BLOCK_SIZE: (32, 64, 128, 256, 512, 1024),
    GRID_SIZE: (16, 64, 256, 1024, 4096, 16384),
    TILE_SIZE: (4, 8, 16, 32),
}
# A tiled stencil loop's steps a launch and tile width (flatten/stencils.py): 1, one step a launch, as untiled
STENCIL_CANDIDATES = {"steps": (1, 2, 4, 8, 16, 32), "width": (64, 128, 256, 512, 1024)}
MIN_SHARE = 0.01


def candidates(p: Param) -> tuple[int, ...]:
    """The values --tune-sizes tries for a parameter; () for one it does not tune."""
    if p.cls == USER_PARAM:
        return STENCIL_CANDIDATES.get(stencil_kind(p.name), ())
    return CANDIDATES.get(p.cls, ())


def kernels_set(p: Param, kernels) -> list:
    """The kernels among `kernels` (names) whose time a size parameter moves: a stencil loop's may move every
    kernel's (its tiles' kernels are those of its versions)."""
    return list(kernels) if p.cls == USER_PARAM else sized_kernels(p.name, p.cls, kernels)


@dataclass(frozen=True)
class SizeOutcome:
    sizes: dict[str, int]  # the size parameters whose tuned value is not the program's default
    notes: tuple[str, ...]
    stopped: str | None = None  # why the search stopped early (measure.Stopped), if it did


def kernel_times(space: Space, bench: Measurer, assignment: Mapping[str, int]) -> dict[str, dict[str, float]]:
    """µs per kernel in one profiled run of each tuning dataset, by dataset."""
    return {d.dataset.name: {name: k["total_us"] for name, k in
                             (profile(bench, d.dataset, assignment) or {"kernels": {}})["kernels"].items()}
            for d in space.datasets}


def size_dimensions(space: Space, bench: Measurer, params: Sequence[Param]) -> dict[str, tuple[int, ...]]:
    """The candidate values of the size parameters that set a kernel that ran in a profiled run of a tuning
    dataset, under every threshold at never (where a search from scratch starts) or the program's defaults:
    the dimensions of a joint search (--tune-sizes with a sampling strategy)."""
    ran = {name for assignment in (space.start(), {}) for times in kernel_times(space, bench, assignment).values()
           for name in times}
    return {p.name: candidates(p) for p in params if candidates(p) and kernels_set(p, ran)}


def tune_sizes(space: Space, bench: Measurer, assignment: Mapping[str, int], params: Sequence[Param],
               log: Callable[[str], None]) -> SizeOutcome:
    by_dataset = kernel_times(space, bench, assignment)
    sized = [p for p in params if candidates(p)]

    def time_of(p: Param, times: Mapping[str, float]) -> float:
        return sum(times[k] for k in kernels_set(p, times))

    weight = {p.name: sum(time_of(p, times) for times in by_dataset.values()) for p in sized}
    # (a kernel that matters on a short dataset matters to a geometric-mean objective, whatever the sum says)
    major = {p.name for p in sized
             if any(time_of(p, times) > MIN_SHARE * sum(times.values()) for times in by_dataset.values())}
    order = sorted((p for p in sized if p.name in major), key=lambda p: -weight[p.name])
    unused = [p.name for p in sized if not weight[p.name]]
    minor = [p.name for p in sized if weight[p.name] and p.name not in major]
    notes = [f"sizes of kernels the tuned program does not run on the tuning datasets were left alone: "
             f"{', '.join(unused)}"] if unused else []
    if minor:
        notes.append(f"sizes of kernels under {MIN_SHARE:.0%} of every tuning dataset's profiled time were left "
                     f"alone: {', '.join(minor)}")
    chosen: dict[str, int] = {}

    def candidate(d, sizes: Mapping[str, int]) -> Candidate:
        # (a size whose version cannot run fails its experiment: the size's failure, not the dataset's fallback)
        key = experiment_key(path(space.forest, assignment, d.epars, d.fallbacks), sizes)
        shown = ", ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "default sizes"
        return Candidate(d.runnable(assignment) | dict(sizes), key, shown)

    try:
        for p in order:
            log(f"tuning {p.name} (its kernels took {weight[p.name]:.0f} us)")
            for value in candidates(p):
                trial = chosen | {p.name: value}
                if dominates(bench, [(d.dataset, candidate(d, trial), candidate(d, chosen)) for d in space.datasets]):
                    chosen = trial
            log(f"  {p.name} = {chosen.get(p.name, 'default')}")
    except Stopped as stop:
        return SizeOutcome(chosen, (*notes, f"stopped ({stop}) while tuning sizes; kept the sizes chosen so far"),
                           str(stop))
    return SizeOutcome(chosen, tuple(notes))
