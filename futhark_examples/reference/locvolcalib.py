"""locvolcalib: FinPar's local volatility calibration in numpy, vectorised over strikes and grid rows, with the
Thomas algorithm for the tridiagonal solves (float64; the program is f32)."""

import numpy as np

from . import Dataset

S0, T, ALPHA, NU, BETA = 0.03, 5.0, 0.2, 0.6, 0.5
TOLERANCE = dict(rtol=2e-3, atol=1e-6)  # the prices are thousandths: futhark test's 0.002 would pass anything

DATASETS = (
    # The CI datasets price strikes (0.001 i) around the spot, so that the time steps matter (with FinPar's
    # spot of 0.03 and few strikes, every option is deep in the money and worth its payoff)
    Dataset("ci", dict(outer=8, num_x=8, num_y=9, num_t=5, market=(0.004, 1.0, 0.2, 0.6, 0.5)), ("ci",)),
    Dataset("ci-odd", dict(outer=7, num_x=13, num_y=6, num_t=4, market=(0.003, 2.0, 0.4, 0.3, 0.7)), ("ci",)),
    Dataset("train-small", dict(outer=16, num_x=32, num_y=256, num_t=16), ("train",)),
    Dataset("train-medium", dict(outer=128, num_x=256, num_y=32, num_t=16), ("train",)),
    Dataset("train-large", dict(outer=256, num_x=256, num_y=256, num_t=16), ("train",)),
    Dataset("small", dict(outer=16, num_x=32, num_y=256, num_t=256), ("paper", "notune")),
    Dataset("medium", dict(outer=128, num_x=256, num_y=32, num_t=64), ("paper", "notune")),
    Dataset("large", dict(outer=256, num_x=256, num_y=256, num_t=64), ("paper", "notune")),
)


def inputs(rng: np.random.Generator, outer: int, num_x: int, num_y: int, num_t: int,
           market=(S0, T, ALPHA, NU, BETA)):
    """The shape and the market parameters s0, t, alpha, nu, beta (FinPar's by default; nothing is random)."""
    return (np.int32(outer), np.int32(num_x), np.int32(num_y), np.int32(num_t), *(np.float32(v) for v in market))


def derivatives(xs):
    """(lower, middle, upper) coefficients of the first and the second derivative at each point."""
    n = len(xs)
    d, dd = np.zeros((3, n)), np.zeros((3, n))
    low, up = xs[1:-1] - xs[:-2], xs[2:] - xs[1:-1]
    span = low + up
    d[:, 1:-1] = [-up / low / span, (up / low - low / up) / span, low / up / span]
    dd[:, 1:-1] = [2 / low / span, -2 * (1 / low + 1 / up) / span, 2 / up / span]
    d[:, 0] = [0, -1 / (xs[1] - xs[0]), 1 / (xs[1] - xs[0])]
    d[:, -1] = [-1 / (xs[-1] - xs[-2]), 1 / (xs[-1] - xs[-2]), 0]
    return d, dd


def explicit(d, dd, var, values):
    """The three-point operator along the last axis (drift zero), for each row."""
    coef = 0.5 * var[None] * dd[:, None, :] if var.ndim == 2 else 0.5 * var * dd[:, None, :]
    out = coef[1] * values
    out[..., 1:] += coef[0][..., 1:] * values[..., :-1]
    out[..., :-1] += coef[2][..., :-1] * values[..., 1:]
    return out


def thomas(a, b, c, y):
    """Solves the tridiagonal systems along the last axis (a sub-, b main, c super-diagonal, each broadcasting
    against y). The elimination of the coefficients, which y does not enter, runs once at their own shape, not
    for every strike; the sweeps run on a copy with the solved axis first, so each step reads whole rows."""
    n = y.shape[-1]
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c), (n,))
    a, b, c = (np.moveaxis(np.broadcast_to(v, shape), -1, 0) for v in (a, b, c))
    cp, m = np.empty(a.shape), np.empty(a.shape)
    m[0] = b[0]
    cp[0] = c[0] / m[0]
    for i in range(1, n):
        m[i] = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m[i]
    d = np.moveaxis(y, -1, 0).copy()
    d[0] /= m[0]
    for i in range(1, n):
        d[i] = (d[i] - a[i] * d[i - 1]) / m[i]
    for i in range(n - 2, -1, -1):
        d[i] -= cp[i] * d[i + 1]
    return np.moveaxis(d, 0, -1)


def reference(outer, num_x, num_y, num_t, s0, t, alpha, nu, beta):
    outer, num_x, num_y, num_t = (int(v) for v in (outer, num_x, num_y, num_t))
    s0, t, alpha, nu, beta = (float(v) for v in (s0, t, alpha, nu, beta))
    times = t * np.arange(num_t) / (num_t - 1)
    dx = np.float32(20 * alpha * s0 * np.sqrt(t) / num_x)  # as the f32 program rounds it, for the same grid
    dy = 10 * nu * np.sqrt(t) / num_y
    x_index, y_index = int(np.float32(s0) / dx), num_y // 2
    xs = (np.arange(num_x) - x_index) * float(dx) + s0
    ys = (np.arange(num_y) - y_index) * dy + np.log(alpha)
    dxc, dxxc = derivatives(xs)
    dyc, dyyc = derivatives(ys)
    strikes = 0.001 * np.arange(outer)
    result = np.broadcast_to(np.maximum(xs[None, None, :] - strikes[:, None, None], 0),
                             (outer, num_y, num_x)).copy()  # [strike][y][x]
    for k in range(num_t - 1):
        t_now = times[num_t - 2 - k]
        dt_inv = 1 / (times[num_t - 1 - k] - t_now)
        with np.errstate(divide="ignore"):  # log 0 at the grid's edge: a variance of 0, as in f32
            var_x = np.exp(2 * (beta * np.log(xs)[None, :] + ys[:, None] - 0.5 * nu * nu * t_now))  # [y][x]
        var_y = nu * nu
        u = dt_inv * result + 0.5 * explicit(dxc, dxxc, var_x, result)
        v = explicit(dyc, dyyc, np.full((num_x, num_y), var_y), result.transpose(0, 2, 1))  # [strike][x][y]
        u = u + v.transpose(0, 2, 1)
        a = -0.5 * (0.5 * var_x * dxxc[0])
        b = dt_inv - 0.5 * (0.5 * var_x * dxxc[1])
        c = -0.5 * (0.5 * var_x * dxxc[2])
        u = thomas(a, b, c, u)
        w = dt_inv * u.transpose(0, 2, 1) - 0.5 * v
        a = -0.5 * (0.5 * var_y * dyyc[0])
        b = dt_inv - 0.5 * (0.5 * var_y * dyyc[1])
        c = -0.5 * (0.5 * var_y * dyyc[2])
        result = thomas(a, b, c, w).transpose(0, 2, 1)
    return (result[:, y_index, x_index].astype(np.float32),)
