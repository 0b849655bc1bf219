"""nn_batch: for each of N queries, the k nearest of its own M records (the paper's batched nn), in numpy."""

import numpy as np

from . import Dataset

K = 100
# Each query's k+1 nearest distances differ pairwise by more than this (relative), so the f32 distances the
# program computes (a few ulps off the exact ones) rank the records the same way as the exact distances do.
MIN_RELATIVE_GAP = 1e-5

DATASETS = (
    Dataset("ci", dict(n=3, m=150), ("ci",)),
    Dataset("D1", dict(n=1, m=855280), ("paper", "notune")),
    Dataset("D2", dict(n=4096, m=128), ("paper", "notune")),
    Dataset("train-D1", dict(n=1, m=700000), ("train",)),
    Dataset("train-D2", dict(n=2048, m=256), ("train",)),
)


def _distances(lats, lngs, locations_lats, locations_lngs):
    return np.hypot(lats.astype(np.float64)[:, None] - locations_lats, lngs.astype(np.float64)[:, None] - locations_lngs)


def _nearest(distances, count):
    """Per row, the indices of the `count` smallest distances, nearest first."""
    m = distances.shape[1]
    candidates = np.argpartition(distances, count - 1, axis=1)[:, :count] if count < m \
        else np.broadcast_to(np.arange(m), distances.shape)
    ranked = np.argsort(np.take_along_axis(distances, candidates, axis=1), axis=1, kind="stable")
    return np.take_along_axis(candidates, ranked, axis=1)


def inputs(rng: np.random.Generator, n: int, m: int, k: int = K):
    """Queries and records uniform over latitudes [0, 90) and longitudes [0, 360); a record whose distance is too
    close to the next nearer one's (of its query) is drawn again until each query's k+1 nearest are well apart."""
    assert k <= m
    lats = rng.uniform(0, 90, n).astype(np.float32)
    lngs = rng.uniform(0, 360, n).astype(np.float32)
    locations_lats = rng.uniform(0, 90, (n, m)).astype(np.float32)
    locations_lngs = rng.uniform(0, 360, (n, m)).astype(np.float32)
    while True:
        distances = _distances(lats, lngs, locations_lats, locations_lngs)
        order = _nearest(distances, min(k + 1, m))
        nearest = np.take_along_axis(distances, order, axis=1)
        rows, cols = np.nonzero(np.diff(nearest, axis=1) <= MIN_RELATIVE_GAP * nearest[:, 1:])
        if len(rows) == 0:
            return np.int64(k), lats, lngs, locations_lats, locations_lngs
        redrawn = (rows, order[rows, cols + 1])
        locations_lats[redrawn] = rng.uniform(0, 90, len(rows))
        locations_lngs[redrawn] = rng.uniform(0, 360, len(rows))


def reference(k, lats, lngs, locations_lats, locations_lngs):
    distances = _distances(lats, lngs, locations_lats, locations_lngs)
    order = _nearest(distances, int(k))
    return order.astype(np.int32), np.take_along_axis(distances, order, axis=1).astype(np.float32)
