"""OptionPricing in JAX: the same estimator (Sobol points, the inverse normal, the Brownian bridge, correlated
Black-Scholes prices and the contract's payoff), vectorised over all paths at once: the bridge is a fori_loop
over its steps, the prices a cumulative product over the dates, the price a mean over the paths."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

import reference.optionpricing as algorithm  # the coefficients of the inverse normal, the payoffs' constants


def sobol_points(dir_vs, paths):
    n = jnp.arange(1, paths + 1, dtype=jnp.int32)
    gray = n ^ (n >> 1)
    bits = (gray[:, None] >> jnp.arange(dir_vs.shape[1], dtype=jnp.int32)[None, :]) & 1  # [paths][bits]
    acc = lax.reduce(bits[:, None, :] * dir_vs[None, :, :], jnp.int32(0), lax.bitwise_xor, (2,))
    return acc.astype(jnp.float32) / jnp.float32(2.0 ** dir_vs.shape[1])


def rational(x, coefficients):
    num, den = coefficients
    p, q = jnp.full_like(x, num[-1]), jnp.full_like(x, den[-1])
    for a, b in zip(num[-2::-1], den[-2::-1]):
        p, q = p * x + a, q * x + b
    return p / q


def ugaussian(p):
    dp = p - 0.5
    small = dp * rational(0.180625 - dp * dp, algorithm.SMALL)
    r = jnp.sqrt(-jnp.log(jnp.where(dp < 0, p, 0.5 - dp)))
    far = jnp.where(r <= 5, rational(r - 1.6, algorithm.INTERMEDIATE), rational(r - 5.0, algorithm.TAIL))
    return jnp.where(jnp.abs(dp) <= 0.425, small, jnp.where(dp < 0, -far, far))


def bridge(gauss, bb_inds, bb_data):
    """Brownian increments [paths][und][dates] from deviates of the same shape."""
    bi, li, ri = bb_inds - 1
    sd, lw, rw = bb_data
    path = jnp.zeros_like(gauss).at[..., bi[0]].set(sd[0] * gauss[..., 0])

    def step(i, path):
        left = jnp.where(li[i] >= 0, lw[i] * jnp.take(path, jnp.maximum(li[i], 0), axis=-1), 0)
        value = rw[i] * jnp.take(path, ri[i], axis=-1) + sd[i] * gauss[..., i] + left
        return path.at[..., bi[i]].set(value)
    path = lax.fori_loop(1, gauss.shape[-1], step, path)
    return jnp.concatenate([path[..., :1], jnp.diff(path, axis=-1)], axis=-1)


def worst(xs):
    return jnp.minimum(jnp.minimum(xs[..., 0] / 3758.05, xs[..., 1] / 11840.0), xs[..., 2] / 1200.0)


def payoff(contract, prices, discts, detval):
    if contract == 1:
        return jnp.maximum((prices[:, 0, 0] - 4000.0) * detval[0], 0) * discts[0]
    if contract == 2:
        performance = worst(prices)
        last = performance[:, 4]
        amount = jnp.where(last >= 1, 1750.0, jnp.where(last > 0.75, 1000.0, last * 1000.0))
        date = jnp.full(prices.shape[0], 4)
        for d in (3, 2, 1, 0):
            hit = performance[:, d] >= 1
            amount = jnp.where(hit, 1150.0 + 150.0 * d, amount)
            date = jnp.where(hit, d, date)
        return amount * discts[date]
    barrier = (prices[..., 0] <= 2630.635) | (prices[..., 1] <= 8288.0) | (prices[..., 2] <= 840.0)
    final = prices[:, 366]
    below = (final[:, 0] < 3758.05) | (final[:, 1] < 11840.0) | (final[:, 2] < 1200.0)
    amount = jnp.where(barrier.any(axis=1) & below, 1000.0 * worst(final), 1000.0)
    return 100.0 * discts[0] + amount * discts[1]


@partial(jax.jit, static_argnums=(0, 1))
def price(contract, paths, dir_vs, md_cs, md_vols, md_drifts, md_starts, md_detvals, md_discts, bb_inds, bb_data):
    models, und = md_starts.shape
    dates = bb_inds.shape[1]
    gauss = ugaussian(sobol_points(dir_vs, paths)).reshape(paths, dates, und)
    increments = jnp.swapaxes(bridge(jnp.swapaxes(gauss, 1, 2), bb_inds, bb_data), 1, 2)  # [paths][dates][und]

    def model(cs, vols, drifts, starts, detval, discts):
        noises = jnp.einsum("pdk,jk->pdj", increments, jnp.tril(cs), precision=lax.Precision.HIGHEST)
        prices = starts * jnp.cumprod(jnp.exp(drifts + noises * vols), axis=1)
        return jnp.mean(payoff(contract, prices, discts, detval))
    return jax.vmap(model)(md_cs, md_vols, md_drifts, md_starts, md_detvals, md_discts)


def run(contract, num_mc_it, dir_vs, md_cs, md_vols, md_drifts, md_starts, md_detvals, md_discts, bb_inds,
        bb_data):
    return (price(int(contract), int(num_mc_it), dir_vs, md_cs, md_vols, md_drifts, md_starts, md_detvals,
                  md_discts, bb_inds, bb_data),)
