"""What a month of replicas reports besides §1's (SPEC §11), and its wrong evictions."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...engine import Column
from ...kernels import median
from ..pool import Pool
from .layout import Layout

# Per month, beside SPEC §2's (whose counts then count replicas: the run set, and what the
# rule evicts under ``evict = "replica"``; members under ``"member"``).
COLUMNS = {"n_replicas": Column("count", "replicas"), "replicas_with_lemon": Column("count", "replicas"),
           "members_evicted": Column("count", "cards")}


def counts(pool: Pool) -> dict[str, int]:
    """Each column's count support (values 0 .. n − 1)."""
    return {"n_replicas": pool.replicas + 1, "replicas_with_lemon": pool.replicas + 1,
            "members_evicted": pool.size + 1}


def wrong_replicas(true_rate: jax.Array, evicted: jax.Array, lay: Layout, pool: Pool) -> jax.Array:
    """(replicas,) bool: evicted replicas whose slowest member's true rate is at or
    above the median true rate of all the cards of its class.

    true_rate: (pool,) float32 tok/s each card's. evicted: (replicas,) bool."""
    slowest = jnp.min(true_rate[lay.members], axis=-1)
    med = jnp.concatenate([jnp.broadcast_to(median(true_rate[s]), (n // c.tp,))
                           for s, (c, n) in zip(pool.slices, pool.groups)])
    return evicted & (slowest >= med)


def report(lemon: jax.Array, members_evicted: jax.Array, lay: Layout) -> dict[str, jax.Array]:
    """The extra outputs: lemon (pool,) bool the cards whose ticket is a lemon;
    members_evicted () int32 the cards evicted."""
    return {"n_replicas": jnp.int32(lay.members.shape[0]),
            "replicas_with_lemon": jnp.sum(jnp.any(lemon[lay.members], axis=-1), dtype=jnp.int32),
            "members_evicted": members_evicted}


__all__ = ["COLUMNS", "counts", "report", "wrong_replicas"]
