"""What the tuned program is measured against: the untuned program (the values it runs with, its runs and the
ePar probes of its datasets) and the program compiled with moderate flattening (MF), for the report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Callable

from incflat.datasets import Dataset, Selection
from incflat.ir.errors import ToolError
from incflat.ir.runtime.tuning import NEVER, Forest, Param, all_nodes
from incflat.tuner.measure import Bench, Measurement, Record
from incflat.tuner.probe import Probe, probe
from incflat.tuner.program import Program
from incflat.tuner.search import experiment_key
from incflat.tuner.store import ProgramKey, Store
from incflat.tuner.tree import Fallbacks, falls_back, path
from incflat.tuner.writeback import read_program


def listed_defaults(params: Sequence[Param]) -> dict[str, int]:
    """The thresholds' defaults that the program's --print-params lists (its tuned values, if any)."""
    return {p.name: p.default for p in params if p.is_threshold and p.default is not None}


def in_effect(forest: Forest, defaults: Mapping[str, int], default_threshold: int | None) -> dict[str, int]:
    """The threshold values a run with no --param takes: the program's listed defaults, and the device's
    default threshold (a probe's -D) for the others, where it is known."""
    device = {} if default_threshold is None else dict.fromkeys((n.name for n in all_nodes(forest)), default_threshold)
    return device | dict(defaults)


def untuned_key(forest: Forest, defaults: Mapping[str, int], found: Probe, fallbacks: Fallbacks = ()):
    """The experiment of a probed dataset under the program's defaults (None: the probe failed, a threshold it
    compares has no value the tuner knows, or a workgroup-level version runs there: the untuned run falls back
    where it cannot run, which only an experiment, under --no-fallback, tells; `fallbacks`: what experiments
    told, the guards whose versions cannot run there)."""
    if found.failure:
        return None
    values = in_effect(forest, defaults, found.default_threshold)
    if not values.keys() >= found.epars.keys():
        return None
    taken = path(forest, values, found.epars, fallbacks)
    return None if any(falls_back(name) and any(outcomes) for name, outcomes in taken) else experiment_key(taken, {})


def untuned_and_probes(bench: Bench, forest: Forest, selection: Selection, defaults: Mapping[str, int],
                       log: Callable[[str], None]) -> tuple[dict[str, Measurement], dict[str, Probe], dict]:
    """The probes of the tuning datasets, then the untuned measurements of every dataset, and the cache key of
    each (None: not probed). A probed dataset's untuned run is the experiment of its path under the program's
    `defaults`, so a strategy that runs that path again is answered from the cache (and the report's untuned
    and tuned figures of one path are one measurement)."""
    log("ePar values (-L):")
    probes = {d.name: probe(forest, bench, d, NEVER) for d in selection.tuning}
    for name, found in probes.items():
        shown = found.failure and f"{found.failure}; not tuned on"
        log(f"  {name}: " + (shown or ", ".join(f"{t} <= {list(vs)}" for t, vs in found.epars.items())))
    log("untuned (the program's current defaults):")
    every = selection.tuning + selection.held_out
    keys = {d.name: untuned_key(forest, defaults, probes[d.name]) if d.name in probes else None for d in every}
    before = {d.name: bench.measure(d, None, key=keys[d.name], label="untuned") for d in every}
    for d in selection.held_out:  # as many runs as its tuned measurement will ask for, at the noise it showed
        before[d.name] = bench.top_up(d, None, before[d.name], label="untuned")
    for d in selection.tuning:  # (a held-out dataset's failure is only reported)
        if not before[d.name].ok:
            raise ToolError(f"the untuned program fails on dataset {d.name}: {before[d.name].failure}")
    return before, probes, keys


def compile_moderate(fut_path: Path, verify: bool | None = None) -> tuple[Path | None, str | None]:
    """The program compiled with moderate flattening (MF), for the report: through the compile cache that
    `incflat bench` and `incflat test` use (nothing is written beside the program), else why it cannot be."""
    from incflat import pipeline
    from incflat.compiled import compile_cached
    try:
        return compile_cached(fut_path, verify=verify, options=pipeline.Options(flattening="moderate")), None
    except Exception as e:  # a compile error (or an unwritable cache) fails the MF column, not the tuning
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return None, f"cannot compile {fut_path} with --flattening=moderate: {detail}"


def moderate_bench(bench: Bench, moderate: Path | None, extra_args: Sequence[str], opened: Store | None,
                   observe: Callable[[Record], None], log: Callable[[str], None]) -> Bench | None:
    """A bench of the program compiled with moderate flattening (None: none given). Its runs count with the
    tuned program's (the same counters: the report's runs, --budget), and it has its own key in the store."""
    if moderate is None:
        return None
    mf = Bench(Program(moderate, extra_args), runs=bench.runs, timeout=bench.timeout, log=log,
               max_runs=bench.max_runs, limits=bench.limits, observe=observe, max_time=bench.max_time)
    mf.stored_count, mf.timeline = bench.stored_count, bench.timeline
    if opened:
        try:
            text = read_program(moderate)
        except ToolError:  # not a program incflat wrote: measured, never stored
            return mf
        mf.store = opened.for_program(ProgramKey.of(text, [], extra_args),
                                      warn=lambda message: log(f"warning: {message}"))
    return mf


def moderate_runs(mf_bench: Bench | None, failure: str | None, every: Sequence[Dataset],
                  log: Callable[[str], None]) -> dict[str, Measurement]:
    """Every dataset measured once under moderate flattening, or `failure` for each where there is no program."""
    log("moderate flattening (MF):")
    if mf_bench is None:
        log(f"  failed: {failure}")
        return {d.name: Measurement(failure=failure) for d in every}
    # (a bench of its own, which learns its noise from these: topped up as a held-out dataset's untuned run is)
    return {d.name: mf_bench.top_up(d, None, mf_bench.measure(d, None, label="MF"), label="MF") for d in every}
