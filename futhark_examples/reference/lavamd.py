"""lavaMD: potentials and forces between particles in neighbouring boxes of a 3D grid (Rodinia), in numpy."""

import numpy as np

from . import Dataset

ALPHA = 0.5  # Rodinia's
NUM_NEIGHBORS = 26
CHUNK_PAIRS = 1 << 22  # particle pairs per vectorised step, bounds the reference's memory

DATASETS = (
    Dataset("ci", dict(boxes1d=2, par_per_box=7), ("ci",)),
    Dataset("D1", dict(boxes1d=10, par_per_box=50), ("paper", "notune")),
    Dataset("D2", dict(boxes1d=3, par_per_box=50), ("paper", "notune")),
    Dataset("train-D1", dict(boxes1d=9, par_per_box=45), ("train",)),
    Dataset("train-D2", dict(boxes1d=3, par_per_box=55), ("train",)),
)


def neighbour_lists(boxes1d: int):
    """Each box's neighbours (box numbers, in Rodinia's order: z, then y, then x offset from -1 to 1), padded
    with 0 to 26 per box, as [26][number_boxes], and how many each box has."""
    number_boxes = boxes1d ** 3
    box = np.arange(number_boxes)
    x, y, z = box % boxes1d, box // boxes1d % boxes1d, box // boxes1d ** 2
    lists = np.zeros((NUM_NEIGHBORS, number_boxes), dtype=np.int32)
    counts = np.zeros(number_boxes, dtype=np.int32)
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if dx == dy == dz == 0:
                    continue
                nx, ny, nz = x + dx, y + dy, z + dz
                inside = (0 <= nx) & (nx < boxes1d) & (0 <= ny) & (ny < boxes1d) & (0 <= nz) & (nz < boxes1d)
                lists[counts[inside], box[inside]] = ((nz * boxes1d + ny) * boxes1d + nx)[inside]
                counts += inside
    return lists, counts


def inputs(rng: np.random.Generator, boxes1d: int, par_per_box: int):
    """Rodinia's values: v, x, y, z and the charge each one of 0.1, 0.2, ..., 1.0."""
    lists, counts = neighbour_lists(boxes1d)
    shape = (boxes1d ** 3, par_per_box)
    rv_v, rv_x, rv_y, rv_z, qv = (rng.integers(1, 11, shape).astype(np.float32) / np.float32(10) for _ in range(5))
    return np.float32(ALPHA), lists, counts, rv_v, rv_x, rv_y, rv_z, qv


def reference(alpha, box_nnghs, box_num_nghbs, rv_v, rv_x, rv_y, rv_z, qv):
    number_boxes, par_per_box = qv.shape
    a2 = 2.0 * float(alpha) ** 2
    # Every box's home box and neighbours; the padding points at box 0 and is masked out.
    sources = np.concatenate([np.arange(number_boxes)[:, None], box_nnghs.T], axis=1)
    real = np.arange(NUM_NEIGHBORS + 1)[None, :] <= box_num_nghbs[:, None]
    particles = np.stack([rv_v, rv_x, rv_y, rv_z], axis=-1).astype(np.float64)  # [boxes][par][4]
    charges = qv.astype(np.float64)
    out = np.zeros((4, number_boxes, par_per_box))
    step = max(1, CHUNK_PAIRS // (par_per_box * par_per_box * (NUM_NEIGHBORS + 1)))
    for start in range(0, number_boxes, step):
        boxes = slice(start, start + step)
        a = particles[boxes][:, :, None, :]                                   # [c][par][1][4]
        b = particles[sources[boxes]].reshape(a.shape[0], 1, -1, 4)          # [c][1][27*par][4]
        q = (charges[sources[boxes]] * real[boxes][:, :, None]).reshape(a.shape[0], 1, -1)
        r2 = a[..., 0] + b[..., 0] - (a[..., 1:] * b[..., 1:]).sum(axis=-1)
        v = np.exp(-a2 * r2)
        out[0, boxes] = (q * v).sum(axis=-1)
        for axis in (1, 2, 3):
            out[axis, boxes] = (q * 2 * v * (a[..., axis] - b[..., axis])).sum(axis=-1)
    return tuple(o.astype(np.float32) for o in out)
