"""pathfinder: the cheapest path to each cell of a grid's last row (Rodinia), in numpy."""

import numpy as np

from . import Dataset

DATASETS = (
    Dataset("ci", dict(rows=7, cols=33), ("ci",)),
    Dataset("D1", dict(rows=100, cols=100096), ("paper", "notune")),
)


def inputs(rng: np.random.Generator, rows: int, cols: int):
    return (rng.integers(0, 10, (rows, cols), dtype=np.int32),)


def reference(wall: np.ndarray):
    costs = wall[0].astype(np.int64)
    for row in wall[1:]:
        left = np.concatenate([costs[:1], costs[:-1]])
        right = np.concatenate([costs[1:], costs[-1:]])
        costs = row + np.minimum(costs, np.minimum(left, right))
    return (costs.astype(np.int32),)
