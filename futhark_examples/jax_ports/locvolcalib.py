"""LocVolCalib in JAX: the same scheme, vmapped over strikes, with a fori_loop over the time steps and the
tridiagonal solves as associative scans along the rows (2 x 2 matrices for the pivots, composed linear
functions for the substitutions), as a JAX user would write it for a GPU."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


def tridag(a, b, c, y):
    """Solves the tridiagonal systems along the last axis, with scans."""
    n = y.shape[-1]
    first = jnp.arange(n) == 0
    c_before = jnp.concatenate([jnp.zeros_like(c[..., :1]), c[..., :-1]], axis=-1)

    def matmul(x, z):  # x earlier, z later
        v = 1 / (x[0] * z[0])
        return ((z[0] * x[0] + z[1] * x[2]) * v, (z[0] * x[1] + z[1] * x[3]) * v,
                (z[2] * x[0] + z[3] * x[2]) * v, (z[2] * x[1] + z[3] * x[3]) * v)

    def compose(x, z):
        return (z[0] + z[1] * x[0], x[1] * z[1])

    one, zero = jnp.ones_like(y), jnp.zeros_like(y)
    mats = (jnp.where(first, one, b), jnp.where(first, zero, -a * c_before), jnp.where(first, zero, one),
            jnp.where(first, one, zero))
    t0, t1, t2, t3 = lax.associative_scan(matmul, mats, axis=-1)
    b0 = b[..., :1]
    pivots = (t0 * b0 + t1) / (t2 * b0 + t3)
    pivots_before = jnp.concatenate([one[..., :1], pivots[..., :-1]], axis=-1)
    f0, f1 = lax.associative_scan(compose, (jnp.where(first, zero, y), jnp.where(first, one, -a / pivots_before)),
                                  axis=-1)
    ys = f0 + f1 * y[..., :1]
    last = ys[..., -1:] / pivots[..., -1:]
    rys, rp, rc = (jnp.flip(v, -1) for v in (ys, pivots, c))
    g0, g1 = lax.associative_scan(compose, (jnp.where(first, zero, rys / rp), jnp.where(first, one, -rc / rp)),
                                  axis=-1)
    return jnp.flip(g0 + g1 * last, -1)


def derivatives(xs):
    n = xs.shape[0]
    low = xs[1:-1] - xs[:-2]
    up = xs[2:] - xs[1:-1]
    span = low + up
    mid_d = jnp.stack([-up / low / span, (up / low - low / up) / span, low / up / span])
    mid_dd = jnp.stack([2 / low / span, -2 * (1 / low + 1 / up) / span, 2 / up / span])
    u0, ln = xs[1] - xs[0], xs[n - 1] - xs[n - 2]
    d = jnp.concatenate([jnp.array([[0.0], [-1 / u0], [1 / u0]]), mid_d, jnp.array([[-1 / ln], [1 / ln], [0.0]])],
                        axis=1)
    dd = jnp.concatenate([jnp.zeros((3, 1)), mid_dd, jnp.zeros((3, 1))], axis=1)
    return d, dd


def explicit(d, dd, mu, var, values):
    coef = mu[None] * d[:, None, :] + 0.5 * var[None] * dd[:, None, :]
    out = coef[1] * values
    out = out.at[:, 1:].add(coef[0][:, 1:] * values[:, :-1])
    return out.at[:, :-1].add(coef[2][:, :-1] * values[:, 1:])


def implicit(d, dd, dt_inv, mu, var, values):
    a = -0.5 * (mu * d[0] + 0.5 * var * dd[0])
    b = dt_inv - 0.5 * (mu * d[1] + 0.5 * var * dd[1])
    c = -0.5 * (mu * d[2] + 0.5 * var * dd[2])
    return tridag(a, b, c, values)


def price(strike, num_x, num_y, num_t, s0, t, alpha, nu, beta):
    times = t * jnp.arange(num_t, dtype=jnp.float32) / (num_t - 1)
    dx = 20 * alpha * s0 * jnp.sqrt(t) / num_x
    dy = 10 * nu * jnp.sqrt(t) / num_y
    x_index = (s0 / dx).astype(jnp.int32)
    y_index = num_y // 2
    xs = (jnp.arange(num_x) - x_index).astype(jnp.float32) * dx + s0
    ys = (jnp.arange(num_y) - y_index).astype(jnp.float32) * dy + jnp.log(alpha)
    dxc, dxxc = derivatives(xs)
    dyc, dyyc = derivatives(ys)
    mu_x, mu_y = jnp.zeros((num_y, num_x)), jnp.zeros((num_x, num_y))
    var_y = jnp.full((num_x, num_y), nu * nu)

    def step(k, result):
        t_now = times[num_t - 2 - k]
        dt_inv = 1 / (times[num_t - 1 - k] - t_now)
        var_x = jnp.exp(2 * (beta * jnp.log(xs)[None, :] + ys[:, None] - 0.5 * nu * nu * t_now))
        u = dt_inv * result + 0.5 * explicit(dxc, dxxc, mu_x, var_x, result)
        v = explicit(dyc, dyyc, mu_y, var_y, result.T)
        u = implicit(dxc, dxxc, dt_inv, mu_x, var_x, u + v.T)
        w = dt_inv * u.T - 0.5 * v
        return implicit(dyc, dyyc, dt_inv, mu_y, var_y, w).T

    payoff = jnp.broadcast_to(jnp.maximum(xs - strike, 0), (num_y, num_x))
    return lax.fori_loop(0, num_t - 1, step, payoff)[y_index, x_index]


@partial(jax.jit, static_argnums=(0, 1, 2, 3))
def locvolcalib(outer, num_x, num_y, num_t, s0, t, alpha, nu, beta):
    strikes = 0.001 * jnp.arange(outer, dtype=jnp.float32)
    return jax.vmap(lambda k: price(k, num_x, num_y, num_t, s0, t, alpha, nu, beta))(strikes)


def run(outer, num_x, num_y, num_t, s0, t, alpha, nu, beta):
    return (locvolcalib(int(outer), int(num_x), int(num_y), int(num_t), s0, t, alpha, nu, beta),)
