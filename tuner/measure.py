"""Measurement: one program invocation per (dataset, assignment), a discarded warm-up, timeouts, a cache.

A measurement runs the program once with `-r R+1 -t FILE` and drops the first time (the warm-up: kernel
compilation, first allocations). Failures and timeouts are recorded as infinitely slow, never raised. After a
dataset's first successful measurement, a candidate may run at most SLOWDOWN_LIMIT times the wall time of the
best invocation so far: anything slower cannot win, so it is killed early.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Callable, Protocol

from incflat.tuner.datasets import Dataset
from incflat.tuner.program import Program, RunResult

SLOWDOWN_LIMIT = 10.0
TIMEOUT_SLACK_S = 1.0  # start-up noise that the wall time of a fast run does not show


@dataclass(frozen=True)
class Measurement:
    times_us: tuple[float, ...] = ()  # the timed runs, warm-up excluded
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def mean_us(self) -> float:
        return sum(self.times_us) / len(self.times_us) if self.ok else math.inf

    @property
    def min_us(self) -> float:
        return min(self.times_us) if self.ok else math.inf

    @property
    def runtime_us(self) -> float:
        """The figure the tuner compares: the fastest run, least disturbed by other load (as futhark autotune)."""
        return self.min_us


class Measurer(Protocol):
    """What a search strategy needs: measure a dataset under an assignment, reusing equal experiments."""

    def measure(
        self, dataset: Dataset, params: Mapping[str, int] | None, *, key: Hashable = None, label: str = ""
    ) -> Measurement: ...


class Bench:
    """Runs a program on datasets, counting runs and cache hits per dataset, and logging each measurement."""

    def __init__(self, program: Program, *, runs: int, timeout: float, log: Callable[[str], None]):
        self.program = program
        self.runs = runs
        self.timeout = timeout
        self.log = log
        self.run_count: Counter[str] = Counter()
        self.hit_count: Counter[str] = Counter()
        self._cache: dict[tuple[str, Hashable], Measurement] = {}
        self._best_wall: dict[str, float] = {}

    def measure(
        self, dataset: Dataset, params: Mapping[str, int] | None, *, key: Hashable = None, label: str = ""
    ) -> Measurement:
        """Measure `dataset` with these `--param`s (None: none at all). Equal non-None keys share one run."""
        if key is not None and (dataset.name, key) in self._cache:
            self.hit_count[dataset.name] += 1
            found = self._cache[dataset.name, key]
            self.log(f"  {dataset.name} [{label}]: {describe(found)} (cached)")
            return found
        timeout = self._timeout(dataset.name)
        result = self.program.run(dataset, params=params, timeout=timeout, timing_runs=self.runs + 1)
        self.run_count[dataset.name] += 1
        found = self._record(dataset.name, result, timeout)
        if key is not None:
            self._cache[dataset.name, key] = found
        self.log(f"  {dataset.name} [{label}]: {describe(found)}")
        return found

    def run_once(self, dataset: Dataset, params: Mapping[str, int], options: Sequence[str]) -> RunResult:
        """One untimed run (for `-L`), counted like a measurement."""
        self.run_count[dataset.name] += 1
        return self.program.run(dataset, params=params, timeout=self.timeout, options=options)

    def _timeout(self, name: str) -> float:
        best = self._best_wall.get(name)
        return self.timeout if best is None else min(self.timeout, SLOWDOWN_LIMIT * best + TIMEOUT_SLACK_S)

    def _record(self, name: str, result: RunResult, timeout: float) -> Measurement:
        if not result.ok:
            assert result.failure is not None
            early = timeout < self.timeout and result.failure.startswith("timed out")
            reason = f"{result.failure} (over {SLOWDOWN_LIMIT:g}x the best so far)" if early else result.failure
            return Measurement(failure=reason)
        self._best_wall[name] = min(result.wall_s, self._best_wall.get(name, math.inf))
        return Measurement(times_us=result.times_us[1:])


def describe(m: Measurement) -> str:
    return f"{m.min_us:.1f} us (mean {m.mean_us:.1f})" if m.ok else f"failed: {m.failure}"
