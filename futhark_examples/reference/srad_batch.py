"""srad_batch: SRAD over a batch of images (the PPoPP'19 paper's variant), in numpy (f32, as the program)."""

import numpy as np

from . import Dataset
from .srad import LAMBDA, NITER, diffuse, speckled_image

DATASETS = (
    Dataset("ci", dict(n=3, rows=9, cols=10), ("ci",)),
    Dataset("ci-one", dict(n=1, rows=6, cols=40), ("ci",)),
    Dataset("train-D1", dict(n=1, rows=400, cols=400), ("train",)),
    Dataset("train-D2", dict(n=512, rows=16, cols=16), ("train",)),
    Dataset("D1", dict(n=1, rows=502, cols=458), ("paper", "notune")),
    Dataset("D2", dict(n=1024, rows=16, cols=16), ("paper", "notune")),
)


def inputs(rng: np.random.Generator, n: int, rows: int, cols: int):
    return np.int32(NITER), np.float32(LAMBDA), speckled_image(rng, (n, rows, cols))


def reference(niter, lam, images):
    return (diffuse(images, int(niter), float(lam)),)
