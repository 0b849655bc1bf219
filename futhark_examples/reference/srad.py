"""srad: Rodinia's speckle-reducing anisotropic diffusion of one image, in numpy (f32, as the program)."""

import numpy as np

from . import Dataset

NITER = 100
LAMBDA = 0.5

DATASETS = (
    Dataset("ci", dict(rows=11, cols=13), ("ci",)),
    Dataset("ci-wide", dict(rows=5, cols=70), ("ci",)),
    Dataset("train-D1", dict(rows=400, cols=400), ("train",)),
    Dataset("D1", dict(rows=502, cols=458), ("paper", "notune")),
)


def inputs(rng: np.random.Generator, rows: int, cols: int):
    return np.int32(NITER), np.float32(LAMBDA), speckled_image(rng, (rows, cols))


def speckled_image(rng: np.random.Generator, shape) -> np.ndarray:
    """A smooth picture with multiplicative speckle, as bytes (an ultrasound image's statistics, roughly)."""
    *_, rows, cols = shape
    y, x = np.meshgrid(np.linspace(0, 3, rows), np.linspace(0, 3, cols), indexing="ij")
    picture = 120 + 60 * np.sin(x * 2.1) * np.cos(y * 1.7)
    speckle = rng.gamma(4.0, 0.25, shape)
    return np.clip(picture * speckle, 1, 255).astype(np.uint8)


def diffuse(images: np.ndarray, niter: int, lam: float) -> np.ndarray:
    """SRAD over the last two axes of a stack of images (any leading axes), in f32."""
    f32 = np.float32
    img = np.exp(images.astype(f32) / f32(255))
    n = f32(img.shape[-1] * img.shape[-2])
    for _ in range(niter):
        mean = img.sum(axis=(-2, -1), dtype=f32, keepdims=True) / n
        variance = (img * img).sum(axis=(-2, -1), dtype=f32, keepdims=True) / n - mean * mean
        q0sqr = variance / (mean * mean)
        north = np.concatenate([img[..., :1, :], img[..., :-1, :]], axis=-2) - img
        south = np.concatenate([img[..., 1:, :], img[..., -1:, :]], axis=-2) - img
        west = np.concatenate([img[..., :, :1], img[..., :, :-1]], axis=-1) - img
        east = np.concatenate([img[..., :, 1:], img[..., :, -1:]], axis=-1) - img
        g2 = (north * north + south * south + west * west + east * east) / (img * img)
        lap = (north + south + west + east) / img
        num = f32(0.5) * g2 - f32(1 / 16) * lap * lap
        den = f32(1) + f32(0.25) * lap
        qsqr = num / (den * den)
        den = (qsqr - q0sqr) / (q0sqr * (f32(1) + q0sqr))
        coef = np.clip(f32(1) / (f32(1) + den), f32(0), f32(1))
        coef_south = np.concatenate([coef[..., 1:, :], coef[..., -1:, :]], axis=-2)
        coef_east = np.concatenate([coef[..., :, 1:], coef[..., :, -1:]], axis=-1)
        div = coef * north + coef_south * south + coef * west + coef_east * east
        img = img + f32(0.25) * f32(lam) * div
    return (np.log(img) * f32(255)).astype(f32)


def reference(niter, lam, image):
    return (diffuse(image, int(niter), float(lam)),)
