"""lud: LU decomposition without pivoting (Doolittle, L and U packed), in numpy: right-looking elimination in
float64, rounded to f32 at the end. The input is strictly diagonally dominant, so no pivoting is needed and
the f32 program stays close."""

import numpy as np

from . import Dataset

DATASETS = (
    Dataset("ci", dict(n=64), ("ci",)),
    Dataset("ci-96", dict(n=96), ("ci",)),
    Dataset("train-512", dict(n=512), ("train",)),
    Dataset("64", dict(n=64), ("paper", "notune")),
    Dataset("256", dict(n=256), ("paper", "notune")),
    Dataset("1024", dict(n=1024), ("paper", "notune")),
    Dataset("2048", dict(n=2048), ("paper", "notune")),
)


def inputs(rng: np.random.Generator, n: int):
    a = rng.uniform(0, 1, (n, n))
    a[np.diag_indices(n)] += n  # strictly diagonally dominant
    return (a.astype(np.float32),)


def reference(matrix: np.ndarray):
    a = matrix.astype(np.float64)
    for i in range(len(a) - 1):
        a[i + 1:, i] /= a[i, i]
        a[i + 1:, i + 1:] -= np.outer(a[i + 1:, i], a[i, i + 1:])
    return (a.astype(np.float32),)
