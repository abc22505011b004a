"""The lower envelope of step functions: where several piecewise-constant levels
run side by side and the slowest one counts.

Each of ``K`` functions is a base level less the intervals it holds,
``f_k(t) = level_k · (1 − Σ_d depth_kd · [begin_kd ≤ t < end_kd])``; their minimum
changes only at an interval's end point, so it is exact as a list of consecutive
pieces between the sorted end points. Nothing here knows what a level is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .sums import tree_sum


def step_minimum(level: jax.Array, begin: jax.Array, end: jax.Array, depth: jax.Array) -> tuple:
    """``min_k f_k`` over the pieces between the intervals' sorted end points.

    Arguments:
        level: (K,) float32 each function's base level.
        begin, end: (K, D) float32 each function's intervals (``begin ≤ end``; an
            interval of depth 0 is none).
        depth: (K, D) float32 the share of its level each interval takes away
            (overlapping intervals add).
    Returns:
        ``(lo, hi, value)``: (2KD − 1,) float32 each: piece ``j`` is ``[lo_j, hi_j)``
        (consecutive, ``hi_j = lo_{j+1}``; some empty), where the minimum is
        ``value_j``; before the first piece and from the last one's end the
        minimum is ``min_k level_k``. Every sum is pairwise over the intervals
        (``tree_sum``), so no result depends on a vector width.
    """
    points = jnp.sort(jnp.concatenate([begin.reshape(-1), end.reshape(-1)]))
    lo, hi = points[:-1], points[1:]
    at = lo[:, None, None]  # the minimum is constant on [lo_j, hi_j): read it at lo_j
    active = (begin[None] <= at) & (at < end[None])  # (pieces, K, D)
    lost = tree_sum(jnp.where(active, depth[None], 0.0))  # (pieces, K)
    value = jnp.min(level[None] * (1.0 - lost), axis=-1)
    return lo, hi, value


__all__ = ["step_minimum"]
