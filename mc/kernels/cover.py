"""Greedy covers: running sums in a sorted order, decided like exact arithmetic.

Two shapes of the same question, "how far down a ranked list until a total is
reached", each with a pairwise branch (compensated sums, up to ``PAIRWISE_MAX``
elements) and a sort branch (larger axes).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .ranks import PAIRWISE_MAX, pairwise_rank
from .sums import masked_sum, scan_sum


def greedy_prefix(key: jax.Array, x: jax.Array, budget: jax.Array) -> jax.Array:
    """(n,) bool: element i is taken when the sum of ``x`` over the elements before
    it in ascending ``key`` order (ties by lower index) is below ``budget``.

    Arguments:
        key: (n,) float32 sort key. x: (n,) float32 ≥ 0. budget: () float32.
    """
    if key.shape[0] <= PAIRWISE_MAX:
        # The sum of those ahead as a compensated (hi, lo) pair: a sum within an
        # ulp of the budget is decided as exact arithmetic decides it.
        r = pairwise_rank(key)
        hi, lo = masked_sum(r[None, :] < r[:, None], x)
        return (hi - budget) + lo < 0
    order = jnp.argsort(key, stable=True)
    x_sorted = x[order]
    before = jnp.concatenate([jnp.zeros(1, x_sorted.dtype), scan_sum(x_sorted)[:-1]])
    return jnp.zeros(key.shape, bool).at[order].set(before < budget)


def best_first(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Cumulative sums of ``x`` best (largest) first: ``cover[k]`` is the sum of the
    ``k`` largest elements, k = 0..n, as a compensated ``(hi, lo)`` pair ((n+1,)
    float32 each; ``lo`` is zero on the sort branch)."""
    n = x.shape[0]
    if n <= PAIRWISE_MAX:
        r = pairwise_rank(-x)
        k = jnp.arange(n + 1)
        return masked_sum(r[None, :] < k[:, None], x)
    best = -jnp.sort(-x)
    hi = jnp.concatenate([jnp.zeros(1, best.dtype), scan_sum(best)])
    return hi, jnp.zeros_like(hi)
