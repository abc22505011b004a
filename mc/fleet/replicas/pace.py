"""A replica paced by its slowest member (SPEC §11).

Member ``i`` runs at ``r·q_i·(1 − Σ_dips active δ)``; the replica of ``K`` members steps
together, so it runs at ``K·r·min_i q_i(1 − Σ δ)``. That is a card of true rate
``K·r·min_i q_i`` whose "dips" are the pieces where the minimum falls below ``min_i q_i``
(``kernels.envelope``): every pass written for a card's dips (the window's mean, the
hourly capacity) then holds a replica exactly, dip boundaries included. The pieces
depend on where the dips begin and end alone (``geometry``, once a month); how deep
each piece is depends on the cards' qualities and which dips are theirs (``dips``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ...kernels import covering, pieces, tree_sum
from ..dips import CardDips
from .layout import Layout


class Geometry(NamedTuple):
    """Each replica's pieces and its cards' dips that cover each.

    lo, hi: (replicas, pieces) float32 h. active: (replicas, pieces, K, dips) bool
    the dips of card ``k`` that cover the piece.
    """

    lo: jax.Array
    hi: jax.Array
    active: jax.Array


def quality(q: jax.Array, lay: Layout) -> jax.Array:
    """(replicas,) float32: each replica's slowest member's quality ``min_i q_i``.

    q: (pool,) float32 each card's true rate over its rated rate (or any per-card level)."""
    return jnp.min(q[lay.members], axis=-1)


def geometry(card_dips: CardDips, lay: Layout) -> Geometry:
    """The replicas' pieces from where their cards' dips (pool, dips) begin and end."""
    m = lay.members
    begin, end = card_dips.begin[m], card_dips.end[m]  # (replicas, K, dips)
    lo, hi = jax.vmap(pieces)(begin, end)
    return Geometry(lo, hi, jax.vmap(covering)(lo, begin, end))


def dips(q: jax.Array, card_dips: CardDips, lay: Layout, start: jax.Array | None = None,
         geom: Geometry | None = None, placed: jax.Array | None = None) -> CardDips:
    """(replicas, pieces) the replicas' dips: the pieces where the slowest member's
    speed falls below ``min_i q_i``, with ``depth`` the share of the replica's true
    rate lost there (0 elsewhere).

    q: (pool,) float32 each card's quality; card_dips: (pool, dips) the cards' dips.
    start: (replicas,) float32 h each replica serves from (SPEC §6: a piece before it
    is cut to it; None: no cut). geom: ``geometry(card_dips, lay)`` when already
    known. placed: (pool,) float32 h each card was placed (SPEC §6: it owns the dips
    begun from then; None: all). With one member a replica's dips are its card's.
    """
    own = card_dips.depth if placed is None else jnp.where(card_dips.begin >= placed[:, None], card_dips.depth, 0.0)
    if lay.size == 1:
        out = CardDips(card_dips.begin, card_dips.end, own, card_dips.count if placed is None else None)
    else:
        g = geometry(card_dips, lay) if geom is None else geom
        m = lay.members
        lost = tree_sum(jnp.where(g.active, own[m][:, None], 0.0))  # (replicas, pieces, K)
        level = jnp.min(q[m][:, None] * (1.0 - lost), axis=-1)
        base = jnp.min(q[m], axis=-1, keepdims=True)
        depth = jnp.where(base > 0.0, 1.0 - level / jnp.where(base > 0.0, base, 1.0), 0.0)
        out = CardDips(g.lo, g.hi, jnp.where(g.hi > g.lo, jnp.maximum(depth, 0.0), 0.0))
    if start is None:
        return out
    lo = jnp.maximum(out.begin, start[:, None])
    return CardDips(lo, jnp.maximum(out.end, lo), out.depth, out.count)


__all__ = ["Geometry", "dips", "geometry", "quality"]
