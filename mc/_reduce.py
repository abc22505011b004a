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
