"""How many of Futhark's own test programs pass under `incflat test`, and why the rest do not.

    python futhark_examples/futhark_tests_coverage.py FUTHARK_DIR [--compiled] [--timeout S] [--memory GIB]
                                                      [--json FILE] [PATH ...]

FUTHARK_DIR is a checkout of Futhark (github.com/diku-dk/futhark); nothing of it is copied into this project or
written into it. Every `.fut` under its `tests/` (or the PATHs named, relative to FUTHARK_DIR) is tested as
`incflat test` tests it, from FUTHARK_DIR as the working folder: with the reference interpreter (the front end and
the oracle), or with `--compiled`, compiled and run on the default OpenCL device. A program passes when all its
cases pass; a program whose block expects a compile-time error passes when incflat refuses it with a message the
block's regex matches (Futhark's rule). Each program gets one line, then the counts by outcome and the reasons
grouped by message, largest group first; --json writes the records.

Outside the subset, counted apart: automatic differentiation (`tests/ad/`, or a program that applies `vjp` or
`jvp`) and accumulators (`tests/accs/`, or a program that uses Futhark's `intrinsics`), which incflat leaves out.
"""

import argparse
import contextlib
import io
import os
import re
import resource
import sys
from collections import Counter
from pathlib import Path

from incflat import harness
from upstream_coverage import finish

OUTSIDE = {"ad": "automatic differentiation", "accs": "accumulators"}
OUTSIDE_USES = ((re.compile(r"\b(vjp|jvp)\b"), "automatic differentiation"),
                (re.compile(r"\bintrinsics\b"), "accumulators"))
ORDER = (harness.PASSED, harness.OTHER_MESSAGE, harness.REJECTED, harness.ACCEPTED, harness.FAILED, harness.WRONG,
         harness.SKIPPED)
MEANING = {
    harness.PASSED: "pass",
    harness.OTHER_MESSAGE: "are refused as their block expects, with a message its regex does not match",
    harness.REJECTED: "are refused though their cases expect a run",
    harness.ACCEPTED: "compile though their block expects an error",
    harness.FAILED: "fail a run (or their test cannot run)",
    harness.WRONG: "give a wrong result (a value, or no error where one is expected)",
    harness.SKIPPED: "have every case skipped",
}


def outside_subset(folder: Path, path: Path) -> str | None:
    """What puts a test program outside incflat's subset, or None."""
    parts = path.relative_to(folder).parts
    if len(parts) > 1 and parts[1] in OUTSIDE:
        return OUTSIDE[parts[1]]
    text = (folder / path).read_text(errors="replace")
    return next((what for pattern, what in OUTSIDE_USES if pattern.search(text)), None)


@contextlib.contextmanager
def limits(folder: Path, memory: int):
    """In `folder` (file names in messages and data paths as `futhark test` sees them), with at most `memory`
    bytes of address space (a runaway program fails its test, not the machine); both restored after."""
    cwd, old = os.getcwd(), resource.getrlimit(resource.RLIMIT_AS)
    os.chdir(folder)
    resource.setrlimit(resource.RLIMIT_AS, (min(memory, old[1]) if old[1] != resource.RLIM_INFINITY else memory,
                                            old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)
        os.chdir(cwd)


def tested(path: Path, compiled: bool, timeout: float) -> dict:
    summary = harness.Summary()
    harness.run_test_file(path, summary, None, not compiled, io.StringIO(), False, timeout)
    status, message = summary.files.get(path, (harness.SKIPPED, ""))
    return {"program": str(path), "status": status, "error": message}


def reason(message: str) -> str:
    """A failure's first line without locations and the names in quotes: what programs that stop at the same
    construct share."""
    first = next((line.strip() for line in message.splitlines()
                  if line.strip() and not re.fullmatch(r"\S+:\d+: .*case .*:", line.strip())), "")
    first = re.sub(r"^\S+:\d+(:\d+)?: (error: )?", "", first)
    return re.sub(r'"[^"]*"', '"…"', first)[:140]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("futhark", type=Path, metavar="FUTHARK_DIR")
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    parser.add_argument("--compiled", action="store_true", help="compile and run (default: the interpreter)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds for one run (default 60)")
    parser.add_argument("--memory", type=float, default=8.0, help="GiB of address space (default 8)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    root = args.futhark.resolve()
    if not (root / "tests").is_dir():
        parser.error(f"{args.futhark}: not a Futhark checkout (no tests/ folder)")
    todo = [Path(p) for p in args.paths] or sorted(p.relative_to(root) for p in (root / "tests").rglob("*.fut"))
    missing = [str(p) for p in todo if not (root / p).is_file()]
    if missing:
        parser.error(f"{missing[0]}: no such program in {args.futhark}")
    records = []
    with limits(root, int(args.memory * 2**30)):
        for path in todo:
            outside = outside_subset(root, root / path)
            record = ({"program": str(path), "status": "outside", "error": outside} if outside
                      else tested(path, args.compiled, args.timeout))
            records.append(record)
            print(f"{record['program']}: {record['status']}"
                  + (f" ({reason(record['error'])})" if record["error"] else ""), flush=True)
    inside = [r for r in records if r["status"] != "outside"]
    counts = Counter(r["status"] for r in inside)
    outside = Counter(r["error"] for r in records if r["status"] == "outside")
    why = f" ({', '.join(f'{n} {what}' for what, n in outside.items())})" if outside else ""
    print(f"\n{len(records)} programs, {len(records) - len(inside)} outside the subset{why}; of the {len(inside)} "
          f"inside:")
    for status in ORDER:
        if counts[status]:
            print(f"{counts[status]:5d} ({100 * counts[status] / max(1, len(inside)):.1f}%) {MEANING[status]}")
    print("\nreasons:")
    finish(records, Counter(reason(r["error"]) for r in inside if r["status"] not in (harness.PASSED, harness.SKIPPED)),
           args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
