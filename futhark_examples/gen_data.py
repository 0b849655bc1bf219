"""Writes the data files of the benchmark suite (futhark_examples/benchmarks/data), in Futhark's binary format.

Inputs are synthetic and seeded; expected outputs come from the numpy references in futhark_examples/reference.
Files that exist and are up to date are kept.

    python futhark_examples/gen_data.py                      # every dataset of every program
    python futhark_examples/gen_data.py nw lud --tag ci      # the CI datasets of two programs
    python futhark_examples/gen_data.py --exclude-tag paper  # everything but the paper's (large) shapes
"""

import argparse
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import reference  # noqa: E402


def selected(programs, tags, exclude_tags):
    for program in programs:
        for d in reference.datasets(program):
            if (not tags or set(tags) & set(d.tags)) and not set(exclude_tags) & set(d.tags):
                yield program, d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("programs", nargs="*", metavar="PROGRAM", help=f"default: all ({', '.join(reference.PROGRAMS)})")
    ap.add_argument("--tag", action="append", default=[], help="only datasets with this tag (repeatable)")
    ap.add_argument("--exclude-tag", action="append", default=[], help="skip datasets with this tag (repeatable)")
    ap.add_argument("--force", action="store_true", help="regenerate files that are up to date")
    args = ap.parse_args(argv)
    for program in args.programs:
        if program not in reference.PROGRAMS:
            ap.error(f"no benchmark program {program!r} (known: {', '.join(reference.PROGRAMS)})")
    for program, d in selected(args.programs or reference.PROGRAMS, args.tag, args.exclude_tag):
        start = time.perf_counter()
        in_path, _ = reference.ensure(program, d.name, force=args.force)
        shape = " ".join(f"{k}={v}" for k, v in d.shape.items())
        print(f"{program}-{d.name} ({shape}): {in_path.parent}  {time.perf_counter() - start:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
