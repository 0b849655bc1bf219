"""Whether a change left every compiled program as it was: compiles each .fut file under the folders given, with
incremental and moderate flattening and with `--unsafe`, at this checkout and at commit BASE, and compares the
programs' SHA-256 digests and the messages of the compilations that fail.

    python tests/compiled_digests.py --base 577215d tests futhark_examples ../futhark-benchmarks

A restructuring that must not move a GPU figure shows `0 differ`. The hash seed is fixed (PYTHONHASHSEED=0) in
the processes that compile. BASE is taken out of this repository's history with `git archive`.
"""

import argparse
import hashlib
import json
import multiprocessing
import os
import pathlib
import signal
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPTIONS = {"incremental": {}, "moderate": {"flattening": "moderate"}, "unsafe": {"checks": False}}
SECONDS = 120  # a compilation that takes longer is recorded as such


class TimedOut(Exception):
    pass


def _alarm(signum, frame):
    raise TimedOut()


def _start_worker():
    signal.signal(signal.SIGALRM, _alarm)


def digests(path: str) -> dict:
    """'PATH OPTION' -> the compiled program's digest, or the failure's type and message; one entry 'PATH check'
    where the front end refuses the program (every option alike)."""
    from incflat import pipeline
    from incflat.codegen.program import program_text
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}

    def attempt(fn):
        signal.alarm(SECONDS)
        try:
            return fn()
        except TimedOut:
            return "timed out"
        except Exception as e:  # noqa: BLE001 - internal errors are compared too
            return f"error {type(e).__name__}: {str(e)[:2000]}"
        finally:
            signal.alarm(0)

    checked = attempt(lambda: pipeline.compile(text, path, until="check", verify_stages=False))
    if isinstance(checked, str):
        return {f"{path} check": checked}
    return {f"{path} {name}": attempt(lambda: hashlib.sha256(program_text(pipeline.compile(
        text, path, options=pipeline.Options(**options), verify_stages=False)).encode()).hexdigest())
        for name, options in OPTIONS.items()}


def corpus(folders: list[str]) -> list[str]:
    # Futhark's tests/higher-order-functions/recursion*.fut recurse without end: minutes and gigabytes each to be
    # refused as nesting too deeply
    return sorted(str(p) for folder in folders for p in pathlib.Path(folder).rglob("*.fut")
                  if not p.name.startswith("recursion"))


def collect(files: list[str], out: str) -> None:
    """The digests of files, compiled by the incflat that this process imports, written to out as JSON."""
    found = {}
    with multiprocessing.Pool(os.cpu_count(), initializer=_start_worker, maxtasksperchild=40) as pool:
        for result in pool.imap(digests, files, chunksize=4):
            found.update(result)
    pathlib.Path(out).write_text(json.dumps(found, indent=0, sort_keys=True))


def run_at(package_parent: pathlib.Path, files: list[str], out: pathlib.Path) -> dict:
    """The digests computed by the incflat in package_parent/incflat, in a process of its own."""
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(package_parent))
    subprocess.run([sys.executable, __file__, "--collect", str(out), *files], env=env, check=True,
                   cwd=package_parent)
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="the commit to compare with (default HEAD)")
    parser.add_argument("--collect", help=argparse.SUPPRESS)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    if args.collect:  # a worker run: args.paths are the files
        collect(args.paths, args.collect)
        return 0
    files = [str(pathlib.Path(f).resolve()) for f in corpus(args.paths)]
    with tempfile.TemporaryDirectory() as temporary:
        temporary = pathlib.Path(temporary)
        base = temporary / "base" / "incflat"
        base.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", args.base], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        now = temporary / "now"
        now.mkdir()
        (now / "incflat").symlink_to(ROOT)
        before = run_at(base.parent, files, temporary / "before.json")
        after = run_at(now, files, temporary / "after.json")
    differ = [key for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]
    for key in differ[:20]:
        print(f"{key}\n  {args.base}: {before.get(key)}\n  now: {after.get(key)}")
    compiled = sum(1 for value in after.values() if len(value) == 64 and " " not in value)
    print(f"{len(files)} programs, {compiled} compiled programs and {len(after) - compiled} failed compilations: "
          f"{len(differ)} differ from {args.base}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
