"""The lower envelope of step functions: where several piecewise-constant levels
run side by side and the slowest one counts.

Each of ``K`` functions is a base level less the intervals it holds,
``f_k(t) = level_k · (1 − Σ_d depth_kd · [begin_kd ≤ t < end_kd])``; their minimum
changes only at an interval's end point, so it is exact as the pieces between the
sorted end points (``pieces``), on which every function is constant (``covering``: which intervals cover each piece) and
the minimum is taken (``envelope``). Nothing here knows what a level is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .sums import tree_sum


def pieces(begin: jax.Array, end: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The pieces between the end points of intervals (K, D) each, in time order:
    piece ``j`` is ``[p_j, p_{j+1})`` of the (2KD,) sorted points (some empty).

    Returns:
        ``(lo, hi)``: (2KD − 1,) float32 each, consecutive, covering ``[min p, max p)``.
    """
    p = jnp.sort(jnp.concatenate([begin.reshape(-1), end.reshape(-1)]))
    return p[:-1], p[1:]


def covering(lo: jax.Array, begin: jax.Array, end: jax.Array) -> jax.Array:
    """(pieces, K, D) bool: the intervals that cover each piece (read at its start ``lo``)."""
    at = lo[:, None, None]
    return (begin[None] <= at) & (at < end[None])


def envelope(level: jax.Array, depth: jax.Array, active: jax.Array) -> jax.Array:
    """(pieces,) float32 ``min_k level_k · (1 − Σ_d depth_kd)`` over the intervals
    ``active`` (pieces, K, D) on each piece; the sum pairwise (``tree_sum``), so no
    result depends on a vector width."""
    lost = tree_sum(jnp.where(active, depth[None], 0.0))  # (pieces, K)
    return jnp.min(level[None] * (1.0 - lost), axis=-1)


def step_minimum(level: jax.Array, begin: jax.Array, end: jax.Array, depth: jax.Array) -> tuple:
    """``min_k f_k`` piece by piece.

    Arguments:
        level: (K,) float32 each function's base level.
        begin, end: (K, D) float32 each function's intervals (``begin ≤ end``; an
            interval of depth 0 is none).
        depth: (K, D) float32 the share of its level each interval takes away
            (overlapping intervals add).
    Returns:
        ``(lo, hi, value)``: (2KD − 1,) float32 each: on piece ``[lo_j, hi_j)``
        (consecutive, some empty) the minimum is ``value_j``; outside them every function is at
        its level, and the minimum ``min_k level_k``.
    """
    lo, hi = pieces(begin, end)
    return lo, hi, envelope(level, depth, covering(lo, begin, end))


__all__ = ["covering", "envelope", "pieces", "step_minimum"]
