"""Greedy covers: running sums in a sorted order, decided like exact arithmetic.

Two shapes of the same question, "how far down a ranked list until a total is
reached", each with a pairwise branch (compensated sums, up to ``PAIRWISE_MAX``
elements) and a branch for larger axes (a bitwise search for the prefix taken,
``select``; a sort for the whole cover).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .ranks import PAIRWISE_MAX, pairwise_rank
from .select import compensated_sum, greedy_take
from .sums import compensated_scan, masked_sum


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
    return greedy_take(key, x, budget)


def best_first(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Cumulative sums of ``x`` best (largest) first: ``cover[k]`` is the sum of the
    ``k`` largest elements, k = 0..n, as a compensated ``(hi, lo)`` pair ((n+1,)
    float32 each)."""
    n = x.shape[0]
    if n <= PAIRWISE_MAX:
        r = pairwise_rank(-x)
        k = jnp.arange(n + 1)
        return masked_sum(r[None, :] < k[:, None], x)
    best = -jnp.sort(-x)
    zero = jnp.zeros(1, best.dtype)
    hi, lo = compensated_scan(best)
    return jnp.concatenate([zero, hi]), jnp.concatenate([zero, lo])


def cover_count(x: jax.Array, budget: jax.Array) -> jax.Array:
    """() int32: how many of the best-first covers ``cover[k]``, k = 0..n (the sum
    of the ``k`` largest elements of ``x`` ≥ 0), are below ``budget``: the fewest
    elements whose sum reaches it, or n + 1 when all of them do not. Decided on
    compensated sums, as exact arithmetic decides it."""
    n = x.shape[0]
    if n <= PAIRWISE_MAX:
        hi, lo = best_first(x)
        return jnp.sum((hi - budget) + lo < 0, dtype=jnp.int32)
    # cover[k] for k < n is the sum before the element of descending rank k.
    hi, lo = compensated_sum(x)
    return jnp.sum(greedy_take(-x, x, budget), dtype=jnp.int32) + ((hi - budget) + lo < 0).astype(jnp.int32)
