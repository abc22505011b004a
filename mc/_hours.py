"""Spreading intervals over the month's hours in O(intervals + hours)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._reduce import scan_sum

HOURS = 730
SECONDS = HOURS * 3600  # 2,628,000 s in a month


def overlap(begin: jax.Array, end: jax.Array, x: float, y: float) -> jax.Array:
    """Hours of ``[begin, end) ∩ [x, y)``, elementwise."""
    return jnp.maximum(0.0, jnp.minimum(end, y) - jnp.maximum(begin, x))


def per_hour(begin: jax.Array, end: jax.Array, weight: jax.Array, hours: int = HOURS) -> jax.Array:
    """``Σ_j weight_j · overlap([begin_j, end_j), [h, h+1))`` for h = 0..hours-1.

    Each interval adds its partial first and last hours as points and its whole
    hours as a step in a difference array, so the cost is one scatter per end
    plus one cumulative sum, instead of intervals × hours.

    Arguments:
        begin, end: (...,) float32 hours; intervals outside ``[0, hours)`` are cut.
        weight: (...,) float32, per hour of overlap (zero masks an interval).
    Returns:
        (hours,) float32.
    """
    b = jnp.clip(begin, 0.0, hours).ravel()
    e = jnp.clip(end, b.reshape(begin.shape), hours).ravel()
    w = jnp.broadcast_to(weight, begin.shape).ravel()
    fb, fe = jnp.floor(b), jnp.floor(e)
    ib, ie = fb.astype(jnp.int32), fe.astype(jnp.int32)
    point = jnp.zeros(hours + 1, w.dtype).at[ib].add(w * (fb + 1.0 - b)).at[ie].add(w * (e - fe))
    step = jnp.zeros(hours + 2, w.dtype).at[ib + 1].add(w).at[ie].add(-w)
    return point[:hours] + scan_sum(step)[:hours]
