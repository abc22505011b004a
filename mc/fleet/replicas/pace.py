"""A replica paced by its slowest member (SPEC §11).

Member ``i`` runs at ``r·q_i·(1 − Σ_dips active δ)``; the replica of ``K`` members steps
together, so it runs at ``K·r·min_i q_i(1 − Σ δ)``. That is a card of true rate
``K·r·min_i q_i`` whose "dips" are the pieces where the minimum falls below ``min_i q_i``
(``kernels.step_minimum``): every pass written for a card's dips (the window's mean, the
hourly capacity) then holds a replica exactly, dip boundaries included.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...kernels import step_minimum
from ..dips import CardDips
from .layout import Layout


def quality(q: jax.Array, lay: Layout) -> jax.Array:
    """(replicas,) float32: each replica's slowest member's quality ``min_i q_i``.

    q: (pool,) float32 each card's true rate over its rated rate (or any per-card level)."""
    return jnp.min(q[lay.members], axis=-1)


def dips(q: jax.Array, card_dips: CardDips, lay: Layout, start: jax.Array | None = None) -> CardDips:
    """(replicas, pieces) the replicas' dips: the pieces of ``[−W, …)`` where the
    slowest member's speed falls below ``min_i q_i``, with ``depth`` the share of the
    replica's true rate lost there, the pieces that lose something first (``count``).

    q: (pool,) float32 each card's quality; card_dips: (pool, dips) the cards' dips
    (depth 0 for a dip that is not the card's). start: (replicas,) float32 h each
    replica serves from (SPEC §6: a piece before it is cut to it; None: no cut).
    With one member a replica's dips are its card's.
    """
    if lay.size == 1:
        if start is None:
            return card_dips
        lo = jnp.maximum(card_dips.begin, start[:, None])
        return CardDips(lo, jnp.maximum(card_dips.end, lo), card_dips.depth, card_dips.count)
    out = _pieces(q, card_dips, lay)
    if start is None:
        return out
    lo = jnp.maximum(out.begin, start[:, None])
    return CardDips(lo, jnp.maximum(out.end, lo), out.depth, out.count)


def _pieces(q: jax.Array, card_dips: CardDips, lay: Layout) -> CardDips:
    m = lay.members
    lo, hi, level = jax.vmap(step_minimum)(q[m], card_dips.begin[m], card_dips.end[m], card_dips.depth[m])
    base = jnp.min(q[m], axis=-1, keepdims=True)
    depth = jnp.where(base > 0.0, 1.0 - level / jnp.where(base > 0.0, base, 1.0), 0.0)
    depth = jnp.where(hi > lo, jnp.maximum(depth, 0.0), 0.0)
    # The pieces that lose something first, in time order: the hourly passes read only
    # the leading ``count`` of them.
    lossy = depth > 0.0
    order = jnp.argsort(~lossy, axis=-1, stable=True)
    take = lambda x: jnp.take_along_axis(x, order, axis=-1)
    return CardDips(take(lo), take(hi), take(depth), jnp.sum(lossy, axis=-1, dtype=jnp.int32))


__all__ = ["dips", "quality"]
