#!/usr/bin/env python3
"""A stand-in for a compiled incflat program (docs/contracts.md): matrix multiplication's chain of thresholds.

T1 -> (V1 | T2 -> (V2 | T3 -> (V3 | T4 -> (V4 | V5)))). It reads three i64 values n m p from stdin; T1
compares n, T2 p, T3 n*p and T4 m. A "run" picks a leaf and reports a synthetic, deterministic runtime from a
cost model in which the best version depends on the sizes. Every version writes the same result, n + m + p, to
stdout, and names itself on stderr ("fake: ran V3").

Environment: FAKE_PROGRAM_SLEEP (seconds to sleep per run), FAKE_PROGRAM_FAIL_LEAF (a leaf that fails),
FAKE_PROGRAM_WRONG_LEAF (a leaf whose result is wrong: n + m + p + 1),
FAKE_PROGRAM_LOG_SLEEP=N:SECONDS (in a run with -L, the tuner's probe, of a dataset whose n is N, sleep SECONDS),
FAKE_PROGRAM_LEAF_SLEEP=LEAF:SECONDS (a run that takes this leaf sleeps SECONDS), FAKE_PROGRAM_NOISE=F (the timed
runs alternate between 1 + F and 1 - F times the model's runtime), FAKE_PROGRAM_NO_FIT=LEAF[<=N],... (intra-group
versions, 2 or 4, whose workgroups fit at ePars up to N, or never: above, the run falls back to the next version,
or fails with --no-fallback), FAKE_PROGRAM_DRIFT=PATH:F1,F2,... (the host's speed, which moves between
invocations: every run of the k-th invocation, counted in the file PATH, takes Fk times as long, the factors
taken in turn).
--alternate-tuning FILE and --alternate-times FILE (repeatable) run other configurations in turn with the first.
Its listing, -L and -D lines and tuning files are the tuning contract's (incflat.ir.runtime.tuning).
"""

import argparse
import os
import re
import sys
import time

from incflat.ir.runtime.tuning import (THREAD_BLOCK_SIZE, ContractError, Param, comparison_line,
                                            default_threshold_line, device_line, listing, no_fallback_error, parse_int,
                                            parse_tuning_file)

# BEGIN INCFLAT TUNED DEFAULTS
TUNED_DEFAULTS = {}
TUNING_PROVENANCE = None
# END INCFLAT TUNED DEFAULTS

THRESHOLDS = ("main.suff_outer_par_0", "main.suff_intra_par_1", "main.suff_outer_par_2", "main.suff_intra_par_3")
DEVICE_DEFAULT_THRESHOLD = 32768
CORES = 16384  # the parallelism the fake device can use
GROUP = 256  # the work-group size of the intra-group versions
WARMUP_FACTOR = 2.0  # the first run of an invocation is this much slower


def runtime_us(leaf, n, m, p):
    """Work over usable parallelism, times the version's overhead factor, plus launch costs."""
    work = n * m * p
    if leaf == 1:  # one thread per row
        return work / min(n, CORES) + 10
    if leaf == 2:  # one work-group per row, p of its threads busy
        return work / (min(n * GROUP, CORES) * min(p, GROUP) / GROUP) * 1.2 + 10
    if leaf == 3:  # one thread per dot product
        return work / min(n * p, CORES) * 1.5 + 10
    if leaf == 4:  # one work-group per dot product, m of its threads busy
        return work / (min(n * p * GROUP, CORES) * min(m, GROUP) / GROUP) * 2.0 + 10
    return work / min(work, CORES) * 3.0 + 20  # fully flattened: a map and a segmented reduction


def epars(n, m, p):
    return (n, p, n * p, m)


def choose_leaf(values, sizes, log, no_fit=(), fallback=True):
    """The leaf a run takes; an intra-group leaf in `no_fit` ({leaf: the largest ePar its workgroup fits})
    falls back to its guard's false side above it, as a compiled program's does, or with fallback False
    (--no-fallback) the run fails."""
    for i, (name, e) in enumerate(zip(THRESHOLDS, epars(*sizes))):
        outcome = values[name] <= e
        if log:
            print(comparison_line(name, e, outcome), file=sys.stderr)
        if outcome and i + 1 in no_fit and e > no_fit[i + 1]:
            why = f"V{i + 1}'s workgroup does not fit the fake device"
            if not fallback:
                fail(no_fallback_error(name, e, "Fake GPU", why))
            if log:
                print(f"{name}: the version does not fit ({why}); using the next version.", file=sys.stderr)
            continue
        if outcome:
            return i + 1
    return 5


def fail(message):
    print(f"Error: {message}", file=sys.stderr)
    sys.exit(1)


def read_tuning_file(path):
    try:
        with open(path, encoding="utf-8") as file:
            return parse_tuning_file(file.read(), THRESHOLDS, path)
    except ContractError as e:
        fail(str(e))


def threshold_values(args, tuning=None):
    """The run's values; with `tuning`, the second configuration's: that file over the defaults."""
    values = dict.fromkeys(THRESHOLDS, args.default_threshold or DEVICE_DEFAULT_THRESHOLD)
    values.update(TUNED_DEFAULTS)
    if tuning:
        values.update(read_tuning_file(tuning))
        return values
    if args.tuning:
        values.update(read_tuning_file(args.tuning))
    for setting in args.param:
        name, _, value = setting.partition("=")
        if name not in THRESHOLDS or parse_int(value) is None:
            fail(f"bad --param {setting}")
        values[name] = parse_int(value)
    return values


def read_sizes():
    tokens = sys.stdin.read().split()
    if len(tokens) != 3 or not all(re.fullmatch(r"\d+(i64)?", t) for t in tokens):
        fail(f"expected three i64 values on stdin, got {tokens!r}")
    return tuple(int(t.removesuffix("i64")) for t in tokens)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-e", "--entry-point", default="main")
    parser.add_argument("-t", "--write-runtime-to")
    parser.add_argument("-r", "--runs", type=int, default=1)
    parser.add_argument("-b", "--binary-output", action="store_true")
    parser.add_argument("-d", "--device")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--tuning")
    parser.add_argument("--default-threshold", type=int)
    parser.add_argument("--print-params", action="store_true")
    parser.add_argument("-L", "--log", action="store_true")
    parser.add_argument("-D", "--debug", action="store_true")
    parser.add_argument("--no-fallback", action="store_true")
    parser.add_argument("--alternate-tuning", action="append", default=[])
    parser.add_argument("--alternate-times", action="append", default=[])
    args = parser.parse_args()

    if args.print_params:
        chain = [Param(name, ancestors=tuple((a, False) for a in THRESHOLDS[:i])) for i, name in enumerate(THRESHOLDS)]
        sys.stdout.write(listing(chain + [Param("main.segmap_tblock_size_4", THREAD_BLOCK_SIZE)]))
        return
    if args.entry_point != "main":
        fail(f"no entry point '{args.entry_point}'")
    values = threshold_values(args)
    sizes = read_sizes()
    if args.debug:
        print(device_line("Fake GPU", "Fake OpenCL"), file=sys.stderr)
        print(default_threshold_line(args.default_threshold or DEVICE_DEFAULT_THRESHOLD), file=sys.stderr)
        print(f"Tuning provenance: {TUNING_PROVENANCE}", file=sys.stderr)
    no_fit = {int(leaf): int(most or -1) for leaf, _, most in
              (entry.partition("<=") for entry in os.environ.get("FAKE_PROGRAM_NO_FIT", "").split(",") if entry)}
    leaf = choose_leaf(values, sizes, args.log, no_fit, fallback=not args.no_fallback)
    leaves = [leaf] + [choose_leaf(threshold_values(args, tuning), sizes, False, no_fit, fallback=not args.no_fallback)
                       for tuning in args.alternate_tuning]
    slow_n, _, seconds = os.environ.get("FAKE_PROGRAM_LOG_SLEEP", "").partition(":")
    if args.log and slow_n == str(sizes[0]):
        time.sleep(float(seconds))
    slow_leaf, _, seconds = os.environ.get("FAKE_PROGRAM_LEAF_SLEEP", "").partition(":")
    if slow_leaf == str(leaf):
        time.sleep(float(seconds))
    if os.environ.get("FAKE_PROGRAM_FAIL_LEAF") == str(leaf):
        fail(f"version V{leaf} ran out of memory")
    counter, _, factors = os.environ.get("FAKE_PROGRAM_DRIFT", "").partition(":")
    speed = 1.0
    if factors:
        count = int(open(counter).read()) if os.path.exists(counter) else 0
        with open(counter, "w") as file:
            file.write(str(count + 1))
        factors = factors.split(",")
        speed = float(factors[count % len(factors)])
    times = [[] for _ in leaves]
    for run in range(args.runs):
        for which, taken in enumerate(leaves):
            time.sleep(float(os.environ.get("FAKE_PROGRAM_SLEEP", "0")))
            noise = float(os.environ.get("FAKE_PROGRAM_NOISE", "0")) * (-1) ** run
            times[which].append(runtime_us(taken, *sizes) * speed * (WARMUP_FACTOR if run == 0 else 1.0 + noise))
    for path, runs in zip([args.write_runtime_to, *args.alternate_times], times):
        if path:
            with open(path, "w") as file:
                file.writelines(f"{t:.1f}\n" for t in runs)
    wrong = os.environ.get("FAKE_PROGRAM_WRONG_LEAF") == str(leaf)
    print(f"{sum(sizes) + wrong}i64")
    print(f"fake: ran V{leaf}", file=sys.stderr)


if __name__ == "__main__":
    main()
