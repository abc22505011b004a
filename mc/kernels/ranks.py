"""Ranks and order statistics of one example's small axis, exact and batch-shape free.

Up to ``PAIRWISE_MAX`` elements are ranked by pairwise comparison (n² elementwise
work, no sort, fast for small n on every backend); above it the lowest ``m`` and
the medians come from a bitwise search (``select``: O(n · 32) work, no sort), and
full ranks from XLA's stable sort. Every branch gives the same answers.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .fusion import materialise
from .select import kth, lowest as _search_lowest

PAIRWISE_MAX = 64


def pairwise_rank(x: jax.Array) -> jax.Array:
    """(n,) int32 ascending position of each element of ``x``, ties by index:
    ``rank_i = #{j : x_j < x_i or (x_j == x_i and j < i)}``."""
    n = x.shape[-1]
    idx = jnp.arange(n)
    x = materialise(x)  # else its producers run once per pair
    xi, xj = x[:, None], x[None, :]
    before = (xj < xi) | ((xj == xi) & (idx[None, :] < idx[:, None]))
    return jnp.sum(before, axis=-1, dtype=jnp.int32)


def sort_rank(x: jax.Array) -> jax.Array:
    """The same ranks as ``pairwise_rank``, by a stable sort."""
    order = jnp.argsort(x, stable=True)
    return jnp.zeros(x.shape, jnp.int32).at[order].set(jnp.arange(x.shape[0], dtype=jnp.int32))


def rank(x: jax.Array) -> jax.Array:
    """(n,) int32 position of each element in ascending order, ties by index."""
    return pairwise_rank(x) if x.shape[0] <= PAIRWISE_MAX else sort_rank(x)


def lowest(x: jax.Array, m: jax.Array) -> jax.Array:
    """(n,) bool: the ``m`` lowest elements of ``x`` (() int32), ties by index:
    ``rank(x) < m``, without ranking every element above ``PAIRWISE_MAX``."""
    return pairwise_rank(x) < m if x.shape[0] <= PAIRWISE_MAX else _search_lowest(x, m)


def in_rank_order(x: jax.Array, ranks: jax.Array) -> jax.Array:
    """(n,) ``x`` permuted to the order ``ranks`` gives ((n,) int32, a permutation
    of 0..n-1): element ``k`` is the ``x_j`` with ``ranks_j = k``. One scatter
    to distinct places (exact; no sort)."""
    return jnp.zeros_like(x).at[ranks].set(x, unique_indices=True, mode="promise_in_bounds")


def select_rank(x: jax.Array, ranks: jax.Array, r: int) -> jax.Array:
    """() the element of ``x`` whose rank is ``r`` (exact: one nonzero term)."""
    return jnp.sum(jnp.where(ranks == r, x, 0.0))


def median(x: jax.Array) -> jax.Array:
    """() median of (n,) ``x`` (the mean of the two middle values when n is even),
    as ``jnp.median`` computes it."""
    n = x.shape[-1]
    if n > PAIRWISE_MAX:
        return (kth(x, jnp.int32((n - 1) // 2)) + kth(x, jnp.int32(n // 2))) * 0.5
    r = pairwise_rank(x)
    return (select_rank(x, r, (n - 1) // 2) + select_rank(x, r, n // 2)) * 0.5


def masked_median(x: jax.Array, mask: jax.Array) -> jax.Array:
    """() median of the elements of (n,) ``x`` where ``mask`` holds (the mean of
    the two middle values when their count is even); 0 when none does. With
    every element masked in, the same bits as ``median(x)``."""
    n = x.shape[-1]
    m = jnp.sum(mask, dtype=jnp.int32)
    lo, hi = (m - 1) // 2, m // 2
    if n > PAIRWISE_MAX:
        masked = jnp.where(mask, x, jnp.inf)
        a, b = kth(masked, lo), kth(masked, hi)  # ranks clipped to [0, n-1]
    else:
        r = pairwise_rank(jnp.where(mask, x, jnp.inf))
        a = jnp.sum(jnp.where(r == lo, x, 0.0))
        b = jnp.sum(jnp.where(r == hi, x, 0.0))
    return jnp.where(m > 0, (a + b) * 0.5, jnp.zeros((), x.dtype))
