"""The lower envelope of step functions: where several piecewise-constant levels
run side by side and the slowest one counts.

Each of ``K`` functions is a base level less the intervals it holds,
``f_k(t) = level_k · (1 − Σ_d depth_kd · [begin_kd ≤ t < end_kd])``; their minimum
changes only at an interval's end point, so it is exact on the pieces between the
sorted end points (``pieces``), on each of which every function is constant: which
intervals cover it is ``covering``. Nothing here knows what a level is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp



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


__all__ = ["covering", "pieces"]
