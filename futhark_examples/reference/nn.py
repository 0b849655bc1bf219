"""nn: the k records nearest to a query point (Rodinia's nearest neighbour), in numpy."""

import numpy as np

from . import Dataset

K = 100
# The k+1 nearest distances of a dataset differ pairwise by more than this (relative), so the f32 distances the
# program computes (a few ulps off the exact ones) rank the records the same way as the exact distances do.
MIN_RELATIVE_GAP = 1e-5

DATASETS = (
    Dataset("ci", dict(n=300), ("ci",)),
    Dataset("D1", dict(n=855280), ("paper", "notune")),
    Dataset("train-D1", dict(n=700000), ("train",)),
)


def _distances(lat, lng, locations_lat, locations_lng):
    return np.hypot(np.float64(lat) - locations_lat, np.float64(lng) - locations_lng)


def _nearest(distances, count):
    """The indices of the `count` smallest distances, nearest first."""
    candidates = np.argpartition(distances, count - 1)[:count] if count < len(distances) else np.arange(len(distances))
    return candidates[np.argsort(distances[candidates], kind="stable")]


def inputs(rng: np.random.Generator, n: int, k: int = K):
    """Records uniform over latitudes [0, 90) and longitudes [0, 360), the query too; a record whose distance is
    too close to the next nearer one's is drawn again until the k+1 nearest are well apart."""
    assert k <= n
    lat, lng = np.float32(rng.uniform(0, 90)), np.float32(rng.uniform(0, 360))
    locations_lat = rng.uniform(0, 90, n).astype(np.float32)
    locations_lng = rng.uniform(0, 360, n).astype(np.float32)
    while True:
        distances = _distances(lat, lng, locations_lat, locations_lng)
        order = _nearest(distances, min(k + 1, n))
        nearest = distances[order]
        too_close = order[1:][np.diff(nearest) <= MIN_RELATIVE_GAP * nearest[1:]]
        if len(too_close) == 0:
            return np.int64(k), lat, lng, locations_lat, locations_lng
        locations_lat[too_close] = rng.uniform(0, 90, len(too_close))
        locations_lng[too_close] = rng.uniform(0, 360, len(too_close))


def reference(k, lat, lng, locations_lat, locations_lng):
    distances = _distances(lat, lng, locations_lat, locations_lng)
    order = _nearest(distances, int(k))
    return order.astype(np.int32), distances[order].astype(np.float32)
