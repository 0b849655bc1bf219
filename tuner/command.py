"""The tuner's command line (`python -m incflat.tuner`, and `incflat autotune`, which compiles the program and
passes its options on): the options of a run, their checks, and main, which makes a TuneRequest of them, runs
it and turns its end (done, an error, an interrupt or a signal) into a message and an exit status."""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from types import FrameType

from incflat.files import file_place_problem
from incflat.ir.errors import ToolError
from incflat.ir.runtime.tuning import option_int, option_seconds, option_seed
from incflat.tuner.autotune import CompileModerate, Interrupted, Measuring, Searching, TuneRequest, Writing, autotune
from incflat.tuner.jsonlog import log_path_problem
from incflat.tuner.measure import DEFAULT_MAX_TIME, Limits
from incflat.tuner.plot import EXTRA as PLOT_EXTRA
from incflat.tuner.plot import plot_path_problem
from incflat.tuner.children import kill_children
from incflat.tuner.lock import lock_path
from incflat.tuner.search import OBJECTIVES
from incflat.tuner.store import default_store_path
from incflat.tuner.strategies import STRATEGIES
from incflat.tuner.writeback import tuning_path_of


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of a tuner run (how it measures, what bounds, stores and logs it, how it searches):
    `incflat autotune` has them too, and passes them on (run_options_argv)."""
    parser.add_argument("-r", "--runs", type=option_int, default=5,
                        help="timed runs per measurement, after one warm-up (default 5)")
    parser.add_argument("--max-runs", type=option_int, default=None,
                        help="runs per measurement at most, and pairs of runs in turn per comparison that one "
                        "invocation of each does not settle (default 4x --runs)")
    parser.add_argument("--max-time", type=option_max_time, default=DEFAULT_MAX_TIME, metavar="SECONDS",
                        help=MAX_TIME_HELP)
    parser.add_argument("--timeout", type=option_seconds, default=60.0,
                        help="seconds allowed per program invocation (default 60)")
    parser.add_argument("-e", "--entry", help="tune only the datasets of this entry point")
    parser.add_argument("--pass-option", action="append", default=[], metavar="OPT",
                        help="pass OPT to the program (repeatable; write --pass-option=-d for options that start "
                        "with -)")
    parser.add_argument("--exclude-case", action="append", default=[], metavar="TAG",
                        help="neither tune on nor report the cases with this tag (repeatable)")
    parser.add_argument("--budget", type=option_int, metavar="N",
                        help="program runs at most; then the best values found so far are written")
    parser.add_argument("--stop-after", type=option_seconds, metavar="SECONDS",
                        help="measure no more after this many seconds; the best values so far are written")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--store", type=Path, metavar="FILE",
                       help="the tuning store, where every measurement is kept so that a tuner run again resumes "
                       "(default: PROGRAM.fut.tuning.db)")
    where.add_argument("--no-store", action="store_true", help="measure everything again, and keep nothing")
    parser.add_argument("--log", type=Path, metavar="FILE", help="write every evaluation to FILE, a JSON object a line")
    parser.add_argument("--strategy", choices=tuple(STRATEGIES), default="tree",
                        help="how to search the thresholds (default tree; docs/tuning.md compares them)")
    parser.add_argument("--objective", choices=OBJECTIVES, default="sum",
                        help="what strategies that measure whole assignments minimise over the tuning datasets: "
                        "their summed runtime (default), the sum or the geometric mean of each one's "
                        "untuned/tuned ratio")
    parser.add_argument("--seed", type=option_seed, default=None, help="the random strategies' seed (reproducible runs)")
    parser.add_argument("--tune-sizes", action="store_true",
                        help="then tune the workgroup sizes, workgroup counts and tile sizes of the kernels that run")
    parser.add_argument("--no-moderate", action="store_true",
                        help="do not compile the program with moderate flattening (MF) and measure each dataset "
                        "under it for the report")
    parser.add_argument("--force", action="store_true",
                        help="replace PROGRAM.fut.tuning (and incflat autotune's compiled program) though incflat "
                        "did not write it")
    parser.add_argument("--plot", type=Path, metavar="DIR",
                        help="draw runtime against each tuned threshold's value, and the best runtime so far against "
                        f"program runs, into DIR (PNG; needs matplotlib: pip install 'incflat[{PLOT_EXTRA}]')")


def run_options_argv(args: argparse.Namespace) -> list[str]:
    """The options of add_run_options in `args`, as arguments again."""
    argv = ["--runs", str(args.runs), "--timeout", str(args.timeout)]
    argv += ["--max-runs", str(args.max_runs)] if args.max_runs is not None else []
    argv += ["--max-time", f"{Decimal(repr(args.max_time)):f}"]  # positional: 1e-05 is 0.00001
    argv += ["--entry", args.entry] if args.entry else []
    argv += [f"--pass-option={o}" for o in args.pass_option]
    argv += [f"--exclude-case={t}" for t in args.exclude_case]
    argv += ["--budget", str(args.budget)] if args.budget is not None else []
    argv += ["--stop-after", str(args.stop_after)] if args.stop_after is not None else []
    argv += ["--store", str(args.store)] if args.store is not None else []
    argv += ["--no-store"] if args.no_store else []
    argv += ["--log", str(args.log)] if args.log is not None else []
    argv += ["--strategy", args.strategy, "--objective", args.objective]
    argv += ["--seed", str(args.seed)] if args.seed is not None else []
    argv += ["--no-moderate"] if args.no_moderate else []
    argv += ["--plot", str(args.plot)] if args.plot is not None else []
    argv += ["--force"] if args.force else []
    return argv + (["--tune-sizes"] if args.tune_sizes else [])


MAX_TIME_HELP = (  # (argparse formats help: %% is a %)
    "seconds of run time a measurement of a noisy dataset may spend on timed runs, so that two measurements can "
    "settle a 1%% difference: more runs in the same invocation, never more invocations, at most "
    f"--max-runs (default {DEFAULT_MAX_TIME:g}, about what an invocation's start-up costs anyway; 0: always --runs)"
)


def option_max_time(text: str) -> float:
    """--max-time's value (an argparse type): a decimal number of seconds; option_problem refuses one below 0."""
    if not re.fullmatch(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)", text.strip()):
        raise argparse.ArgumentTypeError(f"invalid number of seconds: {text!r} (a decimal number, 0 or more)")
    return float(text)


def option_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the values of the options both commands have, naming the option; None if nothing."""
    if args.runs < 1:  # (option_seconds refuses seconds that are not positive)
        return f"--runs {args.runs}: must be at least 1"
    if args.max_runs is not None and args.max_runs < args.runs:
        return f"--max-runs {args.max_runs}: must be at least --runs ({args.runs})"
    if args.max_time < 0:
        return f"--max-time {args.max_time:g}: must be 0 (always --runs runs) or more seconds"
    if args.budget is not None and args.budget < 1:
        return f"--budget {args.budget}: must be at least 1"
    problem = log_path_problem(args.log) if args.log is not None else None
    if problem:
        return f"--log {args.log}: {problem}"
    problem = file_place_problem(args.store) if args.store is not None else None
    if problem:
        return f"--store {args.store}: {problem}"
    problem = plot_path_problem(args.plot) if args.plot is not None else None
    return f"--plot {args.plot}: {problem}" if problem else None


def clashing_outputs(program_fut: Path, compiled: Path, args: argparse.Namespace) -> str | None:
    """Why two of the files a tuning reads or writes would be one file (--log, --store, --plot, the program, its
    source, tuning file, lock and default store), naming them; None when they are all distinct. Checked before
    anything is written, so that a clash leaves nothing behind."""
    files = [("--log", args.log), ("--store", args.store), ("--plot", args.plot),
             ("the program", compiled), ("the program's source", program_fut),
             ("the tuning file", tuning_path_of(program_fut)), ("the tuning lock", lock_path(program_fut))]
    if args.store is None and not args.no_store:
        files.append(("the tuning store", default_store_path(program_fut)))
    seen: dict[Path, str] = {}
    for what, path in files:
        if path is None:
            continue
        where = Path(os.path.realpath(path))  # (Path.resolve raises on a symlink loop)
        if where in seen:
            return f"{seen[where]} and {what} are one file, {path}"
        seen[where] = what
    return None


def request_of(args: argparse.Namespace, limits: Limits, install_as: Path | None = None,
               verify: bool | None = None) -> TuneRequest:
    """The tuning request of main's options (the program compiled with moderate flattening, unless
    --no-moderate; the store beside the .fut file, unless --store or --no-store)."""
    store = None if args.no_store else args.store or default_store_path(args.program_fut)
    return TuneRequest(
        args.program_fut, args.compiled,
        Measuring(runs=args.runs, max_runs=args.max_runs, max_time=args.max_time, timeout=args.timeout,
                  extra_args=args.pass_option, limits=limits),
        Searching(strategy=args.strategy, objective=args.objective, seed=args.seed, sizes=args.tune_sizes),
        Writing(install_as=install_as, store=store, log_file=args.log, plot_dir=args.plot, force=args.force),
        entry=args.entry, exclude=args.exclude_case,
        moderate=None if args.no_moderate else CompileModerate(verify),
    )


TERMINATING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def main(argv: Sequence[str] | None = None, *, install_as: Path | None = None, verify: bool | None = None) -> int:
    """The tuner's command line; `install_as` is for `incflat autotune`, which tunes a temporary copy of the
    program it compiled and installs it there (see tuner.autotune's Writing), and `verify` its --verify (for
    compiling the program with moderate flattening, unless --no-moderate)."""
    parser = argparse.ArgumentParser(
        prog="incflat autotune",
        description="Tune the thresholds of a compiled program on the datasets in its .fut file's test blocks.",
    )
    parser.add_argument("program_fut", type=Path, help="the .fut file with the -- == test blocks")
    parser.add_argument("compiled", type=Path, help="the compiled program (incflat compile)")
    add_run_options(parser)
    args = parser.parse_args(argv)
    problem = option_problem(args) or clashing_outputs(args.program_fut, install_as or args.compiled, args)
    if problem:
        parser.error(problem)

    limits = Limits(budget=args.budget, seconds=args.stop_after)
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGINT and not limits.interrupted:
            # The first Ctrl-C stops the measuring: the search ends with the best values so far, which are written.
            limits.interrupted = True
            kill_children()
            return
        # A second Ctrl-C, SIGTERM or SIGHUP: abort, writing nothing more. Later signals would interrupt the clean-up.
        for s in TERMINATING:
            signal.signal(s, signal.SIG_IGN)
        received.append(signum)
        limits.interrupted = True  # should the exception be swallowed, measuring still stops at once
        kill_children()
        if frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            return  # (raised in an import's callbacks, Python would print it and swallow it: see `received`)
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, on_signal) for s in TERMINATING}
    try:
        result = autotune(request_of(args, limits, install_as, verify))
        if received:  # its KeyboardInterrupt was swallowed (raised inside an at-fork handler of a child's start)
            print(f"interrupted; {result.tuning_file} and {result.program} are complete", file=sys.stderr)
            return 128 + received[0]
        if limits.interrupted:
            print(f"interrupted; stopped measuring, and {result.tuning_file} and {result.program} are complete",
                  file=sys.stderr)
            return 128 + signal.SIGINT
        return 0
    except ToolError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(str(e) if isinstance(e, Interrupted) else "interrupted; nothing was written", file=sys.stderr)
        return 128 + (received[0] if received else signal.SIGINT)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
