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


def compensated_scan(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Inclusive prefix sums over the last axis as compensated ``(hi, lo)`` pairs
    (Hillis–Steele, log2 n passes, each add's rounding error carried in ``lo``):
    ``hi + lo`` is each prefix to about twice float32 precision."""
    n, k = x.shape[-1], 1
    hi, lo = x, jnp.zeros_like(x)
    while k < n:
        def shift(y):
            return jnp.concatenate([jnp.zeros(y.shape[:-1] + (k,), y.dtype), y[..., :n - k]], axis=-1)
        hi, err = two_sum(hi, shift(hi))
        lo = (lo + shift(lo)) + err
        k *= 2
    return hi, lo


def two_sum(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(s, err)`` with ``s = fl(a + b)`` and ``s + err = a + b`` exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def running_sum(x: jax.Array) -> jax.Array:
    """Inclusive prefix sums over the last axis by one ``lax.scan``: every other axis is
    a lane of each step, and each row's additions come in the same order whatever the
    batch, so a row's bits do not depend on it (XLA's cumulative sum on a CPU is a
    windowed reduction, several times slower)."""
    if x.shape[-1] == 0:
        return x

    def add(total, v):
        total = total + v
        return total, total

    _, out = jax.lax.scan(add, jnp.zeros(x.shape[:-1], x.dtype), jnp.moveaxis(x, -1, 0))
    return jnp.moveaxis(out, 0, -1)


def int_cumsum(x: jax.Array) -> jax.Array:
    """Inclusive prefix sum of integers over the last axis: exact in any order
    (``running_sum``)."""
    return running_sum(x)
