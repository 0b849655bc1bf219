"""backprop: one training step of Rodinia's two-layer perceptron (n_in inputs, 16 hidden units, 1 output), in numpy."""

import numpy as np

from . import Dataset

N_HIDDEN = 16
N_OUT = 1
ETA = 0.3
MOMENTUM = 0.3
TARGET = 0.1  # Rodinia's constant target

DATASETS = (
    Dataset("ci", dict(n_in=37), ("ci",)),
    Dataset("D1", dict(n_in=2**14), ("paper", "notune")),
    Dataset("D2", dict(n_in=2**20), ("paper", "notune")),
    Dataset("train-D1", dict(n_in=20480), ("train",)),
    Dataset("train-D2", dict(n_in=839680), ("train",)),
)


def inputs(rng: np.random.Generator, n_in: int):
    """Rodinia draws every input and weight from [0, 1). With n_in in the millions that saturates every hidden
    unit (its net input is about n_in / 4, squash gives exactly 1.0), so the hidden error and the input weight
    change would be exactly zero. Here the weights are centred, [-1, 1), and the inputs [0, 1) are scaled by
    2 / sqrt(n_in), so a hidden unit's net input stays of order 1 at every size; the previous weight changes
    (zero in Rodinia's first step) are drawn from [-1, 1) so that the momentum term shows in the result."""
    def uniform(low, high, shape):
        return rng.uniform(low, high, shape).astype(np.float32)
    input_units = (uniform(0, 1, n_in) * np.float32(2 / np.sqrt(n_in))).astype(np.float32)
    target = np.full(N_OUT, TARGET, dtype=np.float32)
    input_weights = uniform(-1, 1, (n_in + 1, N_HIDDEN))
    hidden_weights = uniform(-1, 1, (N_HIDDEN + 1, N_OUT))
    input_prev_weights = uniform(-1, 1, (n_in + 1, N_HIDDEN))
    hidden_prev_weights = uniform(-1, 1, (N_HIDDEN + 1, N_OUT))
    return input_units, target, input_weights, hidden_weights, input_prev_weights, hidden_prev_weights


def _squash(x):
    return 1 / (1 + np.exp(-x))


def _forward(units, weights):
    """Row 0 of the weights is the bias (an input fixed at 1)."""
    return _squash(weights[0] + units @ weights[1:])


def _adjusted(delta, units, weights, prev_weights):
    units_with_bias = np.concatenate([[1.0], units])
    return weights + ETA * np.outer(units_with_bias, delta) + MOMENTUM * prev_weights


def reference(input_units, target, input_weights, hidden_weights, input_prev_weights, hidden_prev_weights):
    units, target = input_units.astype(np.float64), target.astype(np.float64)
    w_in, w_hid = input_weights.astype(np.float64), hidden_weights.astype(np.float64)
    hidden = _forward(units, w_in)
    output = _forward(hidden, w_hid)
    output_delta = output * (1 - output) * (target - output)
    hidden_delta = hidden * (1 - hidden) * (w_hid[1:] @ output_delta)
    new_w_in = _adjusted(hidden_delta, units, w_in, input_prev_weights)
    new_w_hid = _adjusted(output_delta, hidden, w_hid, hidden_prev_weights)
    return (np.float32(np.abs(output_delta).sum()), np.float32(np.abs(hidden_delta).sum()),
            new_w_in.astype(np.float32), new_w_hid.astype(np.float32))
