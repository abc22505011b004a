"""Sums whose rounding does not depend on the batch shape.

XLA picks a reduction order per compiled shape, so ``jnp.sum`` of the same
month can round differently in a chunk of 1 and a chunk of 4096. These are
written as fixed sequences of elementwise adds, so a month's floats are the
same bits in any chunk, on any number of devices.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def tree_sum(x: jax.Array) -> jax.Array:
    """Pairwise sum over the last axis (zero-padded to even at each level)."""
    if x.shape[-1] == 0:  # e.g. no dip slots (dips.max_count = 0)
        return jnp.zeros(x.shape[:-1], x.dtype)
    while x.shape[-1] > 1:
        if x.shape[-1] % 2:
            x = jnp.concatenate([x, jnp.zeros(x.shape[:-1] + (1,), x.dtype)], axis=-1)
        half = x.shape[-1] // 2
        x = x[..., :half] + x[..., half:]
    return x[..., 0]


def scan_sum(x: jax.Array) -> jax.Array:
    """Inclusive prefix sum over the last axis (Hillis–Steele, log2 n passes)."""
    n, k = x.shape[-1], 1
    while k < n:
        shifted = jnp.concatenate([jnp.zeros(x.shape[:-1] + (k,), x.dtype), x[..., :n - k]], axis=-1)
        x = x + shifted
        k *= 2
    return x


# Pools up to this many cards are ranked by pairwise comparison (P² elementwise
# work, no sort); larger pools keep XLA's sort.
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


def two_sum(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(s, err)`` with ``s = fl(a + b)`` and ``s + err = a + b`` exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def masked_sum(mask: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``Σ_j mask[i, j] · x[j]`` for each i, compensated: ``(hi, lo)`` whose sum
    is the exact sum to about twice float32 precision, added in index order (so
    the bits do not depend on the batch shape). ``mask``: (n, n) bool."""
    x = materialise(x)  # else its producers run once per term
    hi = jnp.zeros(mask.shape[:1], x.dtype)
    lo = jnp.zeros(mask.shape[:1], x.dtype)
    for j in range(x.shape[-1]):
        hi, err = two_sum(hi, jnp.where(mask[:, j], x[j], 0.0))
        lo = lo + err
    return hi, lo


def select_rank(x: jax.Array, rank: jax.Array, r: int) -> jax.Array:
    """() the element of ``x`` whose rank is ``r`` (exact: one nonzero term)."""
    return jnp.sum(jnp.where(rank == r, x, 0.0))


def median(x: jax.Array) -> jax.Array:
    """() median of (n,) ``x`` (the mean of the two middle values when n is even),
    as ``jnp.median`` computes it."""
    n = x.shape[-1]
    if n > PAIRWISE_MAX:
        return jnp.median(x)
    r = pairwise_rank(x)
    return (select_rank(x, r, (n - 1) // 2) + select_rank(x, r, n // 2)) * 0.5


def int_cumsum(x: jax.Array, block: int = 32) -> jax.Array:
    """Inclusive prefix sum of integers over the last axis (exact in any order):
    prefix sums within blocks of ``block``, then of the block totals."""
    n = x.shape[-1]
    nb = -(-n // block)
    pad = nb * block - n
    y = jnp.concatenate([x, jnp.zeros(x.shape[:-1] + (pad,), x.dtype)], axis=-1) if pad else x
    y = jnp.cumsum(y.reshape(x.shape[:-1] + (nb, block)), axis=-1)
    last = y[..., -1]
    offset = jnp.cumsum(last, axis=-1) - last
    return (y + offset[..., None]).reshape(x.shape[:-1] + (nb * block,))[..., :n]


def materialise(x):
    """``x`` (an array or a pytree of arrays) unchanged, computed once into memory.

    XLA fuses cheap elementwise producers into every consumer, so a value read
    by many consumers (a month's block of random words, a card's score in a
    pairwise comparison) is recomputed in each of them. XLA:CPU drops
    ``optimization_barrier`` before fusion, but it does not fuse across a loop
    whose trip count it cannot know, nor hoist a value the body may change.
    The loop runs once and keeps ``x`` (its select can only pick ``x``).
    """
    leaves = jax.tree_util.tree_leaves(x)
    first = leaves[0].reshape(-1)[0]
    go = (first == first).astype(jnp.int32)  # 1 (0 for NaN), known only at run time

    def once(c):
        n, y = c
        return n - 1, jax.tree_util.tree_map(lambda a: jnp.where(n > 1, jnp.zeros_like(a), a), y)

    return jax.lax.while_loop(lambda c: c[0] > 0, once, (go, x))[1]
