"""How much of futhark-benchmarks incflat takes as written: each program outside `lib/` checked and compiled.

    python futhark_examples/upstream_coverage.py FB_DIR [--backend pyopencl|opencl] [--timeout S]
                                                 [--json FILE] [--jobs N] [PATH ...]

FB_DIR is a checkout of futhark-benchmarks (github.com/diku-dk/futhark-benchmarks); nothing of it is copied into
this project, and nothing is written into it (compiled programs go to a temporary folder). Each program (every
`.fut` under FB_DIR outside `lib/` folders, or the PATHs named, relative to FB_DIR) is checked (`incflat check`)
and, where that passes, compiled (`incflat compile --backend B`, default pyopencl: the code generation that
every backend shares, without a C compiler's time), each from the program's own folder as `futhark` runs, in a
process of its own under --timeout (default 300 s). Prints one line per program (compiles, checks but does not
compile, or stops), then the counts and the reasons grouped by their message, largest group first; --json writes
the same records.
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from incflat.files import atomic_write


def programs(fb: Path) -> list[Path]:
    """The programs of a futhark-benchmarks checkout: its `.fut` files outside `lib/` folders, sorted."""
    return sorted(p.relative_to(fb) for p in fb.rglob("*.fut") if "lib" not in p.relative_to(fb).parts)


def incflat(argv: list[str], cwd: Path, timeout: float) -> tuple[bool, str]:
    """Whether an incflat command succeeded, and the first line of its error."""
    try:
        proc = subprocess.run([sys.executable, "-m", "incflat", *argv], cwd=cwd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"no answer in {timeout:g} s"
    if proc.returncode == 0:
        return True, ""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if any(line.startswith("Traceback") for line in lines):
        return False, "internal error: " + lines[-1]
    return False, lines[0] if lines else f"exit {proc.returncode}"


def cover(fb: Path, path: Path, backend: str, timeout: float, out: Path) -> dict:
    """The record of one program: its path, status ("compiles", "checks" or "stops") and first error."""
    folder, name = fb / path.parent, path.name
    ok, error = incflat(["check", name], folder, timeout)
    if not ok:
        return {"program": str(path), "status": "stops", "error": error}
    target = out / str(path).replace(os.sep, "__")
    ok, error = incflat(["compile", f"--backend={backend}", name, "-o", str(target.with_suffix(""))], folder,
                        timeout)
    return {"program": str(path), "status": "compiles" if ok else "checks", "error": error}


def reason(error: str) -> str:
    """An error's message without its location and the names in quotes: what programs stopped at the same
    construct share."""
    message = re.sub(r"^\S+:\d+:\d+: error: ", "", error)
    return re.sub(r'"[^"]*"', '"…"', message)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fb", type=Path, metavar="FB_DIR")
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    parser.add_argument("--backend", choices=("pyopencl", "opencl"), default="pyopencl")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if not args.fb.is_dir():
        parser.error(f"{args.fb}: not a folder")
    todo = args.paths or programs(args.fb)
    with tempfile.TemporaryDirectory(prefix="incflat-coverage-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        records = list(pool.map(lambda p: cover(args.fb, p, args.backend, args.timeout, Path(tmp)), todo))
    for r in records:
        print(f"{r['program']}: {r['status']}" + (f" ({r['error']})" if r["error"] else ""))
    counts = Counter(r["status"] for r in records)
    print(f"\n{len(records)} programs: {counts['compiles']} compile, {counts['checks']} check but do not compile, "
          f"{counts['stops']} stop in the checker")
    finish(records, Counter(reason(r["error"]) for r in records if r["error"]), args.json)
    return 0


def finish(records: list, reasons: Counter, json_path: Path | None) -> None:
    """Prints the reasons, largest group first, and writes the records to json_path, if given."""
    for message, n in reasons.most_common():
        print(f"{n:4d}  {message}")
    if json_path:
        atomic_write(json_path, (json.dumps(records, indent=1) + "\n").encode())


if __name__ == "__main__":
    sys.exit(main())
