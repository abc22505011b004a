"""Counting values into bins, with a layout for each kind of device.

A scatter-add of a chunk's months into a few bins is the plain way to count,
and the fastest on a CPU, which adds one value after another. On a GPU every
add is an atomic operation, and adds to one address wait for each other: with
a modal value (a bill that 100% of months share) a chunk of 2**20 months makes
2**20 adds queue on one counter. ``bincount`` avoids such queues there by
counting small supports as sums of one-hot comparisons (a reduction, no
atomics) and larger ones into ``lanes`` copies of the bins (value ``j`` into
copy ``j mod lanes``, so neighbouring values never meet), summed at the end.
Counts are int32 and exact in any order, so every layout gives the same bits.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

# Bins up to which a parallel layout counts by one-hot sums (n × bins
# comparisons, a plain reduction); above, into lanes.
ONE_HOT_BINS = 64
# Lanes of a parallel layout, fewer where the bins are many: the copies hold at
# most LANE_CELLS counters (16 MiB of int32).
LANES = 256
LANE_CELLS = 1 << 22


def lanes_for(platform: str, length: int) -> int:
    """The layout ``bincount`` uses for ``length`` bins on a device of
    ``platform``: 1 (one scatter, a CPU), 0 (one-hot sums) or the lane count."""
    if platform == "cpu":
        return 1
    if length <= ONE_HOT_BINS:
        return 0
    return max(1, min(LANES, LANE_CELLS // max(length, 1)))


def bincount(index: jax.Array, weight: jax.Array, length: int, lanes: int = 1) -> jax.Array:
    """(length,) int32: ``Σ_j weight[j]·[index[j] == c]`` for each bin ``c``.

    Arguments:
        index: (n,) int32 bins; values outside ``[0, length)`` count nowhere.
        weight: (n,) int32 (a month's 1, or 0 where it is padding).
        length: the number of bins (static).
        lanes: the layout (static, ``lanes_for``): 1 one scatter-add, 0 one-hot
            sums, above 1 a scatter-add into that many copies of the bins.
    """
    index = index.astype(jnp.int32).reshape(-1)
    weight = jnp.broadcast_to(weight, index.shape).astype(jnp.int32)
    inside = (index >= 0) & (index < length)
    if lanes == 0:
        hit = index[:, None] == jnp.arange(length, dtype=jnp.int32)[None, :]
        return jnp.sum(jnp.where(hit, weight[:, None], 0), axis=0, dtype=jnp.int32)
    lanes = max(1, min(int(lanes), index.shape[0]))
    lane = jnp.arange(index.shape[0], dtype=jnp.int32) % lanes
    at = jnp.where(inside, lane * length + index, lanes * length)  # past the end: dropped
    copies = jnp.zeros(lanes * length, jnp.int32).at[at].add(weight, mode="drop")
    return copies.reshape(lanes, length).sum(axis=0, dtype=jnp.int32) if lanes > 1 else copies
