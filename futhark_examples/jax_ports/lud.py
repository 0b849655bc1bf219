"""LUD in JAX: the same blocked right-looking LU without pivoting (blocks of 32), over the whole matrix with
masks so that every step has static shapes: the diagonal block factored in a fori_loop, the perimeter solved
with triangular solves, the trailing matrix updated with one matrix product."""

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy.linalg import solve_triangular

BLOCK = 32
EXACT = lax.Precision.HIGHEST  # no TF32: the same f32 arithmetic as the other versions


def factor_diagonal(d):
    b = d.shape[0]
    idx = jnp.arange(b)

    def step(i, d):
        below = idx > i
        column = jnp.where(below, d[:, i] / d[i, i], d[:, i])
        d = d.at[:, i].set(column)
        return d - jnp.outer(jnp.where(below, column, 0), jnp.where(below, d[i, :], 0))
    return lax.fori_loop(0, b, step, d)


@partial(jax.jit, static_argnums=1)
def lud(a, block=BLOCK):
    n = a.shape[0]
    idx = jnp.arange(n)

    def step(k, a):
        r0 = k * block
        diag = factor_diagonal(lax.dynamic_slice(a, (r0, r0), (block, block)))
        lower = jnp.tril(diag, -1) + jnp.eye(block, dtype=a.dtype)
        upper = jnp.triu(diag)
        after = idx >= r0 + block
        row = lax.dynamic_slice(a, (r0, 0), (block, n))
        row = jnp.where(after[None, :], solve_triangular(lower, row, lower=True, unit_diagonal=True), row)
        col = lax.dynamic_slice(a, (0, r0), (n, block))
        col = jnp.where(after[:, None], solve_triangular(upper.T, col.T, lower=True).T, col)
        a = a - jnp.where(after[:, None] & after[None, :], jnp.matmul(col, row, precision=EXACT), 0)
        a = lax.dynamic_update_slice(a, row, (r0, 0))
        a = lax.dynamic_update_slice(a, col, (0, r0))
        return lax.dynamic_update_slice(a, diag, (r0, r0))
    return lax.fori_loop(0, n // block, step, a)


def run(matrix):
    return (lud(matrix),)
