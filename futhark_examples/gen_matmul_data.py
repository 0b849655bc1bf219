"""Writes the datasets of matmul.fut: the constant-work family [2^X][2^(K-2X)] x [2^(K-2X)][2^X].

Each input file holds the two matrices in Futhark's binary format; each output file holds the product
computed by numpy (in float64, then rounded), the independent reference for the compiled program.

    python futhark_examples/gen_matmul_data.py [--work-log2 K] [--xs 0,1,...] [--out DIR]
"""

import argparse
import pathlib

import futhark_data
import numpy as np


def matrices(x: int, k: int, rng: np.random.Generator):
    n, m = 2 ** x, 2 ** (k - 2 * x)
    a = rng.uniform(-1, 1, (n, m)).astype(np.float32)
    b = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    return a, b


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work-log2", type=int, default=22, help="K: each dataset does 2^K multiply-adds")
    ap.add_argument("--xs", default="0,1,2,3,4,5,6,7,8,9,10", help="the values of X (outer size 2^X)")
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path(__file__).parent / "data")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for x in (int(s) for s in args.xs.split(",")):
        if 2 * x > args.work_log2:
            raise SystemExit(f"X={x} is too large for K={args.work_log2} (need 2X <= K)")
        a, b = matrices(x, args.work_log2, np.random.default_rng(x))
        with open(args.out / f"matmul-{x}.in", "wb") as f:
            futhark_data.dump(a, f, binary=True)
            futhark_data.dump(b, f, binary=True)
        with open(args.out / f"matmul-{x}.out", "wb") as f:
            futhark_data.dump((a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32), f, binary=True)
        print(f"matmul-{x}: [{a.shape[0]}][{a.shape[1]}] x [{b.shape[0]}][{b.shape[1]}]")


if __name__ == "__main__":
    main()
