"""Greedy covers: running sums in a sorted order, decided like exact arithmetic.

Two shapes of the same question, "how far down a ranked list until a total is
reached", each with a pairwise branch (compensated sums, up to ``PAIRWISE_MAX``
elements) and a branch for larger axes (a bitwise search for the prefix taken,
``select``; a sort for the whole cover).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .ranks import PAIRWISE_MAX, in_rank_order, pairwise_rank
from .select import compensated_sum, greedy_take
from .sums import compensated_scan


def greedy_prefix(key: jax.Array, x: jax.Array, budget: jax.Array) -> jax.Array:
    """(n,) bool: element i is taken when the sum of ``x`` over the elements before
    it in ascending ``key`` order (ties by lower index) is below ``budget``.

    Arguments:
        key: (n,) float32 sort key. x: (n,) float32 ≥ 0. budget: () float32.
    """
    if key.shape[0] <= PAIRWISE_MAX:
        # The sums ahead of each place in key order, as compensated (hi, lo)
        # pairs: a sum within an ulp of the budget is decided as exact
        # arithmetic decides it. The sums only grow down the order, so those
        # below the budget are its leading places.
        r = pairwise_rank(key)
        hi, lo = compensated_scan(in_rank_order(x, r)[:-1])
        below = (hi - budget) + lo < 0  # the sums ahead of places 1..n-1 (zero is ahead of place 0)
        return r < (budget > 0).astype(jnp.int32) + jnp.sum(below, dtype=jnp.int32)
    return greedy_take(key, x, budget)


def best_first(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Cumulative sums of ``x`` best (largest) first: ``cover[k]`` is the sum of the
    ``k`` largest elements, k = 0..n, as a compensated ``(hi, lo)`` pair ((n+1,)
    float32 each)."""
    n = x.shape[0]
    # Best first by pairwise ranks (small n) or a sort: the same values in the
    # same order either way, so both give the same bits.
    best = in_rank_order(x, pairwise_rank(-x)) if n <= PAIRWISE_MAX else -jnp.sort(-x)
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
