"""The autotune driver: datasets, untuned runs, ePar probes, the search, write-back and the report."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType
from typing import Callable, TextIO

from incflat.tuner.datasets import Dataset, read_test_cases, select_datasets
from incflat.tuner.errors import TunerError
from incflat.tuner.bench import welch_pvalue
from incflat.tuner.measure import ALPHA, Bench, Measurement
from incflat.tuner.probe import Probe, probe
from incflat.tuner.program import Program
from incflat.tuner.simple import STRATEGY, Probed, tune_simple
from incflat.codegen.runtime.tuning import NEVER, Forest, all_nodes, option_int, option_seconds
from incflat.tuner.tree import build_forest, path
from incflat.tuner.writeback import PlannedFile, Provenance, commit, plan_writeback, read_program, written


@dataclass(frozen=True)
class DatasetReport:
    name: str
    held_out: bool
    before: Measurement  # the program's current defaults, no --param
    after: Measurement  # the tuned values
    runs: int  # program invocations for this dataset, all phases
    cache_hits: int

    @property
    def speedup(self) -> float:
        return self.before.runtime_us / self.after.runtime_us if self.before.ok and self.after.ok else float("nan")

    @property
    def significant(self) -> bool:
        """Whether tuned and untuned differ by more than the noise (Welch's test at ALPHA)."""
        return self.before.ok and self.after.ok and welch_pvalue(self.before.times_us, self.after.times_us) < ALPHA


@dataclass(frozen=True)
class TuneResult:
    assignment: dict[str, int]  # what was written
    datasets: tuple[DatasetReport, ...]
    notes: tuple[str, ...]
    tuning_file: Path
    program: Path
    provenance: Provenance

    @property
    def runs(self) -> int:
        return sum(d.runs for d in self.datasets)

    @property
    def cache_hits(self) -> int:
        return sum(d.cache_hits for d in self.datasets)


class Interrupted(KeyboardInterrupt):
    """An interrupt; its message says what it left behind."""


def autotune(
    fut_path: Path | str,
    program_path: Path | str,
    *,
    runs: int = 5,
    max_runs: int | None = None,
    timeout: float = 60.0,
    entry: str | None = None,
    extra_args: Sequence[str] = (),
    exclude: Sequence[str] = (),
    out: TextIO | None = None,
) -> TuneResult:
    """Tune the thresholds of a compiled program on the datasets of its .fut file and write them back.

    Progress and the report go to `out` (default: sys.stdout). Raises TunerError for problems the user must
    fix, and Interrupted (a KeyboardInterrupt) on an interrupt.
    """
    fut_path, program_path = Path(fut_path), Path(program_path)
    stream = out or sys.stdout
    tuning_path = fut_path.with_name(fut_path.name + ".tuning")
    plan: tuple[PlannedFile, ...] = ()

    def log(line: str) -> None:
        print(line, file=stream, flush=True)

    try:
        selection = select_datasets(read_test_cases(fut_path), entry, tuple(exclude))

        if not (selection.tuning or selection.held_out or selection.skipped):
            raise _no_datasets(fut_path, selection, entry)  # a misspelt entry point, say: an error even where there is nothing to tune
        read_program(program_path)  # fail now, not after tuning, if there is nowhere to write the results
        bench = Bench(Program(program_path, extra_args), runs=runs, timeout=timeout, log=log, max_runs=max_runs)
        forest = build_forest(bench.program.params(timeout))
        if not forest:
            # One version: the tuned program is the program; an empty tuning file says it was tuned.
            log(f"{program_path} has no thresholds: it has one version and there is nothing to tune")
            provenance = _provenance("unknown", ())
            plan = plan_writeback(tuning_path, program_path, {}, provenance)
            commit(plan, log)
            result = TuneResult({}, (), (), tuning_path, program_path, provenance)
            _report(result, log)
            return result
        if not selection.tuning:
            raise _no_datasets(fut_path, selection, entry)
        for name, reason in selection.skipped:
            log(f"skipping {name}: {reason}")
        every = selection.tuning + selection.held_out
        log(f"{len(selection.tuning)} tuning and {len(selection.held_out)} held-out (notune) datasets")
        log(f"{len(all_nodes(forest))} thresholds in {len(forest)} tree(s)")

        log("untuned (the program's current defaults):")
        before = {d.name: bench.measure(d, None, label="untuned") for d in every}
        for d in every:
            if not before[d.name].ok:
                raise TunerError(f"the untuned program fails on dataset {d.name}: {before[d.name].failure}")

        log("ePar values (-L):")
        probes = {d.name: probe(forest, bench, d, NEVER) for d in selection.tuning}
        for name, found in probes.items():
            log(f"  {name}: " + ", ".join(f"{t} <= {list(vs)}" for t, vs in found.epars.items()))
        outcome = tune_simple(forest, [Probed(d, probes[d.name].epars) for d in selection.tuning], bench, log)

        devices = [p.device for p in probes.values() if p.device]
        provenance = _provenance(devices[0] if devices else "unknown", tuple(d.name for d in selection.tuning))
        plan = plan_writeback(tuning_path, program_path, outcome.assignment, provenance)
        commit(plan, log)

        log("tuned:")
        after = {d.name: _after(bench, forest, outcome.assignment, d, probes) for d in every}
        result = TuneResult(
            outcome.assignment,
            tuple(
                DatasetReport(d.name, d.held_out, before[d.name], after[d.name],
                              bench.run_count[d.name], bench.hit_count[d.name])
                for d in every
            ),
            outcome.notes,
            tuning_path,
            program_path,
            provenance,
        )
        _report(result, log)
        return result
    except KeyboardInterrupt:
        raise Interrupted(_interrupt_message(plan)) from None


def _no_datasets(fut_path: Path, selection, entry: str | None) -> TunerError:
    why = "; ".join(f"{name}: {reason}" for name, reason in selection.skipped)
    held = f"{len(selection.held_out)} held out (notune)" if selection.held_out else ""
    detail = "; ".join(x for x in (held, why) if x) or (f"no case for entry point {entry!r}" if entry
                                                      else "it has no test cases")
    return TunerError(f"{fut_path} has no datasets to tune on ({detail})")


def _provenance(device: str, datasets: tuple[str, ...]) -> Provenance:
    return Provenance(device=device, date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      datasets=datasets, strategy=STRATEGY)


def _after(
    bench: Bench, forest: Forest, assignment: dict[str, int], d: Dataset, probes: dict[str, Probe]
) -> Measurement:
    """Measure the tuned values; for a tuning dataset this is usually an experiment already run."""
    key = path(forest, assignment, probes[d.name].epars) if d.name in probes else None
    return bench.measure(d, assignment, key=key, label="tuned")


def _interrupt_message(plan: Sequence[PlannedFile]) -> str:
    done = written(plan)
    if not done:
        return "interrupted; nothing was written"
    untouched = [p.path for p in plan if p.path not in done]
    message = f"interrupted; {' and '.join(map(str, done))} {'is' if len(done) == 1 else 'are'} complete"
    return message + (f", {' and '.join(map(str, untouched))} unchanged" if untouched else "")


def _report(result: TuneResult, log: Callable[[str], None]) -> None:
    log("")
    log("tuned values:" if result.assignment else "tuned values: none")
    for name in sorted(result.assignment):
        log(f"  {name}={result.assignment[name]}")
    for note in result.notes:
        log(f"note: {note}")
    if not result.datasets:
        log(f"wrote {result.tuning_file} and the defaults of {result.program}")
        return
    width = max([len("dataset")] + [len(d.name) for d in result.datasets])
    log("runtimes: the mean of the timed runs (after a warm-up run) and its 95% confidence interval; a speedup")
    log("inside the noise (Welch's t-test, p >= 0.05) is shown as 'same'")
    log(f"{'dataset':<{width}}  role      {'untuned':>24}  {'tuned':>24}  speedup   runs  cached")
    for d in result.datasets:
        role = "held-out" if d.held_out else "tuning"
        speedup = f"{d.speedup:>6.2f}x" if d.significant else f"{'same':>7}"
        log(
            f"{d.name:<{width}}  {role:<8}  {_us(d.before):>24}  {_us(d.after):>24}  {speedup}  "
            f"{d.runs:>5}  {d.cache_hits:>6}"
        )
    log(f"program runs: {result.runs} ({result.cache_hits} more answered from the cache)")
    log(f"wrote {result.tuning_file} and the defaults of {result.program}")


def _us(m: Measurement) -> str:
    if not m.ok:
        return "failed"
    low, high = m.interval_us()
    return f"{m.runtime_us:.1f}us ±{(high - low) / 2:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="incflat autotune",
        description="Tune the thresholds of a compiled program on the datasets in its .fut file's test blocks.",
    )
    parser.add_argument("program_fut", type=Path, help="the .fut file with the -- == test blocks")
    parser.add_argument("compiled", type=Path, help="the compiled program (incflat compile)")
    parser.add_argument("--runs", type=option_int, default=5, help="timed runs per measurement, after one warm-up (5)")
    parser.add_argument("--max-runs", type=option_int, default=None,
                        help="runs per measurement at most, while a comparison is not significant (4x --runs)")
    parser.add_argument("--timeout", type=option_seconds, default=60.0, help="seconds allowed per program invocation (60)")
    parser.add_argument("--entry", help="tune only the datasets of this entry point")
    parser.add_argument(
        "--pass-option", action="append", default=[], metavar="OPT",
        help="pass OPT to the program (repeatable; write --pass-option=-d for options that start with -)",
    )
    parser.add_argument("--exclude-case", action="append", default=[], metavar="TAG",
                        help="neither tune on nor report the cases with this tag (repeatable)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.timeout <= 0:
        parser.error("--runs must be at least 1 and --timeout positive")
    if args.max_runs is not None and args.max_runs < args.runs:
        parser.error(f"--max-runs {args.max_runs}: must be at least --runs ({args.runs})")

    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        # Later signals would interrupt the clean-up; the first one is enough.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        received.append(signum)
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        autotune(
            args.program_fut, args.compiled,
            runs=args.runs, max_runs=args.max_runs, timeout=args.timeout, entry=args.entry,
            extra_args=args.pass_option, exclude=args.exclude_case,
        )
        return 0
    except TunerError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(str(e) if isinstance(e, Interrupted) else "interrupted; nothing was written", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
