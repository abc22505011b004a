"""Spreading intervals over the month's hours in O(intervals + hours)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._reduce import int_cumsum, tree_sum

HOURS = 730
SECONDS = HOURS * 3600  # 2,628,000 s in a month

# Fixed-point headroom: contributions are scaled so that the sum of all
# |weights| is below 2**_HEADROOM; every partial sum of the difference array is
# then below 2**(_HEADROOM + 1) < 2**31.
_HEADROOM = 29


def overlap(begin: jax.Array, end: jax.Array, x: float, y: float) -> jax.Array:
    """Hours of ``[begin, end) ∩ [x, y)``, elementwise."""
    return jnp.maximum(0.0, jnp.minimum(end, y) - jnp.maximum(begin, x))


def per_hour(begin: jax.Array, end: jax.Array, weight: jax.Array, hours: int = HOURS) -> jax.Array:
    """``Σ_j weight_j · overlap([begin_j, end_j), [h, h+1))`` for h = 0..hours-1.

    Each interval adds its whole hours as a step and its partial first and last
    hours as corrections, all four as updates of one difference array, so the
    cost is one scatter plus one cumulative sum, instead of intervals × hours.

    The difference array is int32 fixed point at a power-of-two scale chosen
    from the month's own ``Σ|weight|`` (largest with that sum below 2**29), so
    the scatter and the prefix sum are exact and their order cannot change a
    bit: a month's result is the same in any batch shape. Each hour is within
    (intervals touching it) × 2**-scale of the exact value, below a float32
    ulp of the total.

    Arguments:
        begin, end: (...,) float32 hours; intervals outside ``[0, hours)`` are cut.
        weight: (...,) float32, per hour of overlap (zero masks an interval).
    Returns:
        (hours,) float32.
    """
    b = jnp.clip(begin, 0.0, hours).ravel()
    e = jnp.clip(end, b.reshape(begin.shape), hours).ravel()
    w = jnp.broadcast_to(weight, begin.shape).ravel().astype(jnp.float32)
    fb, fe = jnp.floor(b), jnp.floor(e)
    ib, ie = fb.astype(jnp.int32), fe.astype(jnp.int32)
    # Scale 2**k with Σ|w|·2**k < 2**_HEADROOM (frexp: total < 2**ex).
    _, ex = jnp.frexp(tree_sum(jnp.abs(w)))
    k = jnp.clip(_HEADROOM - ex, -126, 126)
    ws = w * jnp.ldexp(jnp.float32(1.0), k)
    whole = jnp.round(ws).astype(jnp.int32)
    head = jnp.round(ws * (b - fb)).astype(jnp.int32)  # the part of hour ib before b
    tail = jnp.round(ws * (e - fe)).astype(jnp.int32)  # the part of hour ie before e
    # Hours ib..ie-1 get the whole weight; hour ib loses head, hour ie gains tail.
    idx = jnp.concatenate([ib, ib + 1, ie, ie + 1])
    upd = jnp.concatenate([whole - head, head, tail - whole, -tail])
    diff = jnp.zeros(hours + 2, jnp.int32).at[idx].add(upd, mode="promise_in_bounds")
    fixed = int_cumsum(diff[:hours])
    return fixed.astype(jnp.float32) * jnp.ldexp(jnp.float32(1.0), -k)
