"""pathfinder_batch: pathfinder over a batch of grids (the PPoPP'19 paper's variant), in numpy."""

import numpy as np

from . import Dataset

DATASETS = (
    Dataset("ci", dict(batch=3, rows=6, cols=40), ("ci",)),
    Dataset("ci-wide", dict(batch=2, rows=4, cols=300), ("ci",)),
    Dataset("train-D1", dict(batch=1, rows=50, cols=50000), ("train",)),
    Dataset("train-D2", dict(batch=300, rows=100, cols=192), ("train",)),
    Dataset("D1", dict(batch=1, rows=100, cols=100096), ("paper", "notune")),
    Dataset("D2", dict(batch=391, rows=100, cols=256), ("paper", "notune")),
)


def inputs(rng: np.random.Generator, batch: int, rows: int, cols: int):
    return (rng.integers(0, 10, (batch, rows, cols), dtype=np.int32),)


def reference(walls: np.ndarray):
    """Each step: a cell's weight plus the cheapest of the (up to) three cells above it, for all grids at once."""
    costs = walls[:, 0].astype(np.int64)
    for t in range(1, walls.shape[1]):
        left = np.concatenate([costs[:, :1], costs[:, :-1]], axis=1)
        right = np.concatenate([costs[:, 1:], costs[:, -1:]], axis=1)
        costs = walls[:, t] + np.minimum(costs, np.minimum(left, right))
    return (costs.astype(np.int32),)
