"""Times the front end and the reference interpreter on this machine: parsing and checking matmul, a
100-line program, and the whole test corpus; compiling (to the target IR) chains of 250, 500 and 1000 functions,
each calling the one before; the interpreter on a 64x64 matmul and a 100,000-step loop.

    python futhark_examples/bench_frontend.py [--runs 5]

Prints the best of --runs per case, in milliseconds. These were timed tests once; timings belong here,
where a slow machine cannot fail CI.
"""

import argparse
import functools
import pathlib
import time

import numpy as np

from incflat import pipeline
from incflat.ir.interp.interpreter import run_entry

ROOT = pathlib.Path(__file__).resolve().parent.parent

LONG_FUNCTION = """
def f{i} [n] (xs: [n]i32) (ys: [n]i32): (i32, []i32) =
  let (a, b) = unzip (map2 (\\x y -> (x + y, x * y)) xs ys)
  let s = loop acc = 0 for i < n do acc + a[i] * b[n - 1 - i]
  let t = xs[1:] ++ filter (> s) ys
  in (s + i32.sum (map2 (+) a b), t with [0] = 1)"""

MATMUL_REDOMAP = """
entry main [n][m][p] (a: [n][m]f32) (b: [m][p]f32): [n][p]f32 =
  map (\\row -> map (\\col -> f32.sum (map2 (*) row col)) (transpose b)) a
"""

def call_chain(n: int) -> str:
    """n functions, each calling the one before: inlining must stay linear in the program and its result."""
    return "\n".join(["def f0 (x: i32) = x + 1"] + [f"def f{i} (x: i32) = f{i - 1} x + 1" for i in range(1, n)]
                     + [f"entry main (x: i32) = f{n - 1} x"]) + "\n"


LONG_LOOP = "entry main (n: i64): i64 = loop acc = 0 for i < n do acc + i\n"


def check(text, name="bench.fut"):
    pipeline.compile(text, name, until="check", verify_stages=False)


def target(text, name="bench.fut"):
    pipeline.compile(text, name, until="prune_unsupported", verify_stages=False)


def interpret(text, *args):
    return run_entry(pipeline.source_program(text, "bench.fut"), "main", list(args))


def cases():
    corpus = [(p.read_text(), str(p)) for p in sorted((ROOT / "tests" / "programs").glob("*.fut"))]
    matrix = np.random.default_rng(2).random((64, 64), dtype=np.float32)
    return {
        "check matmul.fut": lambda: check((ROOT / "futhark_examples" / "matmul.fut").read_text()),
        "check 20 functions (100 lines)": lambda: check("\n".join(LONG_FUNCTION.format(i=i) for i in range(20))),
        f"check the corpus ({len(corpus)} programs)": lambda: [check(t, n) for t, n in corpus],
        **{f"compile a chain of {n} calls": functools.partial(target, call_chain(n)) for n in (250, 500, 1000)},
        "interpret matmul 64x64": lambda: interpret(MATMUL_REDOMAP, matrix, matrix),
        "interpret a 100,000-step loop": lambda: interpret(LONG_LOOP, np.int64(100000)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    for name, case in cases().items():
        case()  # warm up: the parser is built once a process
        best = min(_timed(case) for _ in range(runs))
        print(f"{name:40} {best * 1000:9.1f} ms")


def _timed(case):
    start = time.perf_counter()
    case()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
