"""NW in JAX: the recurrence along anti-diagonals of cells, skewed so that each anti-diagonal is one vector
(cell (i, j) at position i of diagonal i + j): a lax.scan over the diagonals carries the last two, and the
matrix is gathered back from the stacked diagonals."""

import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def nw(penalty, itemsets, sims):
    side = itemsets.shape[0]
    n = side - 1
    pos = jnp.arange(side)

    def diagonal(carry, d):
        before, last = carry  # diagonals d - 2 and d - 1
        j = d - pos
        inside = (pos >= 1) & (j >= 1) & (j <= n)
        sim = sims[pos, jnp.clip(j, 0, n)]
        shifted = lambda v: jnp.concatenate([v[:1], v[:-1]])  # position i - 1
        best = jnp.maximum(shifted(before) + sim, jnp.maximum(last - penalty, shifted(last) - penalty))
        border = jnp.where(pos == 0, itemsets[0, jnp.clip(d, 0, n)], itemsets[jnp.clip(d, 0, n), 0])
        on_border = ((pos == 0) | (j == 0)) & (j >= 0) & (j <= n)
        current = jnp.where(inside, best, jnp.where(on_border, border, 0))
        return (last, current), current

    start = jnp.zeros(side, itemsets.dtype)
    _, diagonals = lax.scan(diagonal, (start, start), jnp.arange(2 * n + 1))
    i, j = jnp.meshgrid(pos, pos, indexing="ij")
    return diagonals[i + j, i]


def run(penalty, itemsets, sims):
    return (nw(penalty, itemsets, sims),)
