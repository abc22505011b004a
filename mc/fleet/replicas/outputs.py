"""What a month of replicas reports besides §1's (SPEC §11), and its wrong evictions."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...engine import Column
from ...kernels import masked_median, median
from ..pool import Pool
from .layout import Layout

# Per month, beside SPEC §2's (whose counts then count replicas: the run set, and what the
# rule evicts under ``evict = "replica"``; members under ``"member"``).
COLUMNS = {"n_replicas": Column("count", "replicas"), "replicas_with_lemon": Column("count", "replicas"),
           "replicas_with_lemon_end": Column("count", "replicas"), "members_evicted": Column("count", "cards")}


def counts(pool: Pool) -> dict[str, int]:
    """Each column's count support (values 0 .. n − 1)."""
    return {"n_replicas": pool.replicas + 1, "replicas_with_lemon": pool.replicas + 1,
            "replicas_with_lemon_end": pool.replicas + 1, "members_evicted": pool.size + 1}


def wrong_replicas(true_rate: jax.Array, evicted: jax.Array, lay: Layout, pool: Pool) -> jax.Array:
    """(replicas,) bool: evicted replicas whose slowest member's true rate is at or
    above the median true rate of all the cards of its class.

    true_rate: (pool,) float32 tok/s each card's. evicted: (replicas,) bool."""
    slowest = jnp.min(true_rate[lay.members], axis=-1)
    med = jnp.concatenate([jnp.broadcast_to(median(true_rate[s]), (n // c.tp,))
                           for s, (c, n) in zip(pool.slices, pool.groups)])
    return evicted & (slowest >= med)


def report(lemon: jax.Array, members_evicted: jax.Array, lay: Layout, lemon_end: jax.Array,
           present_end: jax.Array) -> dict[str, jax.Array]:
    """The extra outputs. lemon: (pool,) bool the month's first cards' lemons;
    members_evicted: () int32 cards evicted; lemon_end, present_end: (pool,) bool the
    cards in the slots at the month's end (a replica counts when all its cards are there)."""
    whole = jnp.all(present_end[lay.members], axis=-1)
    return {"n_replicas": jnp.int32(lay.members.shape[0]),
            "replicas_with_lemon": jnp.sum(jnp.any(lemon[lay.members], axis=-1), dtype=jnp.int32),
            "replicas_with_lemon_end": jnp.sum(whole & jnp.any(lemon_end[lay.members], axis=-1), dtype=jnp.int32),
            "members_evicted": members_evicted}


def wrong_in_slots(rate: jax.Array, present: jax.Array, evicted: jax.Array, lay: Layout, pool: Pool) -> jax.Array:
    """(replicas,) bool: SPEC §6's form of ``wrong_replicas``, the median over the
    cards ``present`` (pool,) bool in the slots before the round's evictions; rate
    (pool,) float32 tok/s each slot's card's true rate."""
    slowest = jnp.min(rate[lay.members], axis=-1)
    med = jnp.concatenate([jnp.broadcast_to(masked_median(rate[s], present[s]), (n // c.tp,))
                           for s, (c, n) in zip(pool.slices, pool.groups)])
    return evicted & (slowest >= med)


__all__ = ["COLUMNS", "counts", "report", "wrong_in_slots", "wrong_replicas"]
