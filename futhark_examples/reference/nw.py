"""nw: Needleman-Wunsch scores (Rodinia), in numpy: the recurrence filled along anti-diagonals of cells."""

import numpy as np

from . import Dataset

PENALTY = 10

DATASETS = (
    Dataset("ci", dict(side=33), ("ci",)),
    Dataset("ci-49", dict(side=49), ("ci",)),
    Dataset("train-D1", dict(side=1025), ("train",)),
    Dataset("D1", dict(side=2049), ("paper", "notune")),
    Dataset("D2", dict(side=1025), ("paper", "notune")),
)

LETTERS = 24  # BLOSUM62's alphabet


def similarity_table(rng: np.random.Generator) -> np.ndarray:
    """A symmetric BLOSUM-like table: letters score 4..11 with themselves, -4..3 with the others."""
    table = rng.integers(-4, 4, (LETTERS, LETTERS))
    table = np.triu(table) + np.triu(table, 1).T
    table[np.diag_indices(LETTERS)] = rng.integers(4, 12, LETTERS)
    return table


def inputs(rng: np.random.Generator, side: int):
    table = similarity_table(rng)
    first, second = rng.integers(1, LETTERS, side), rng.integers(1, LETTERS, side)
    sims = table[first[:, None], second[None, :]].astype(np.int32)
    sims[0, :] = sims[:, 0] = 0
    itemsets = np.zeros((side, side), np.int32)
    itemsets[0, :] = -PENALTY * np.arange(side)
    itemsets[:, 0] = -PENALTY * np.arange(side)
    return np.int32(PENALTY), itemsets, sims


def reference(penalty, itemsets, sims):
    mat = itemsets.astype(np.int64)
    n = len(mat) - 1
    for d in range(2, 2 * n + 1):
        i = np.arange(max(1, d - n), min(n, d - 1) + 1)
        j = d - i
        mat[i, j] = np.maximum(mat[i - 1, j - 1] + sims[i, j],
                               np.maximum(mat[i, j - 1] - int(penalty), mat[i - 1, j] - int(penalty)))
    return (mat.astype(np.int32),)
