"""Failover between rounds (SPEC §10): who is in the run set, and when.

When a run slot's card leaves, the best spare (outside the run set, holding a card
scored this round and still there, highest tokens per dollar first, ties by slot)
joins the run set at that moment and the emptied slot leaves it. Spares only
dwindle within a round, so once none is left every slot still in the run set stays
to the round's end, empty or refilled. A slot's time in the run set within a round
is therefore one interval ``[join, exit)``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class Membership(NamedTuple):
    join: jax.Array  # (pool,) float32 h the slot enters the round's run set (t1: never)
    exit: jax.Array  # (pool,) float32 h it leaves (t1: at the round's end)


def membership(run: jax.Array, spare: jax.Array, first: jax.Array, key: jax.Array, t0: jax.Array, t1: jax.Array,
               on: bool) -> Membership:
    """Each slot's interval in the run set over ``[t0, t1)``.

    Arguments:
        run: (pool,) bool the round's run set. spare: (pool,) bool slots that may
        stand in (outside it, holding a card scored this round). first: (pool,)
        float32 h when the card holding each slot at ``t0`` leaves (``t1``: stays).
        key: (pool,) float32 the round's tokens per dollar. on (static): failover.
    """
    join = jnp.where(run, t0, t1)
    exit_ = jnp.full(run.shape, t1, jnp.float32)
    if not on:
        return Membership(join, exit_)

    def cond(c):
        return c[-1]

    def body(c):
        join, exit_, member, spare, done, _ = c
        waiting = member & ~done & (first < t1)
        tau = jnp.min(jnp.where(waiting, first, jnp.inf))
        i = jnp.argmin(jnp.where(waiting, first, jnp.inf))
        free = spare & (first > tau)
        j = jnp.argmax(jnp.where(free, key, -jnp.inf))
        go = jnp.any(waiting) & jnp.any(free)
        at_i = go & (jnp.arange(run.shape[0]) == i)
        at_j = go & (jnp.arange(run.shape[0]) == j)
        return (jnp.where(at_j, tau, join), jnp.where(at_i, tau, exit_), (member & ~at_i) | at_j, spare & ~at_j,
                done | at_i, go)

    start = (join, exit_, run, spare, jnp.zeros(run.shape, bool), jnp.any(run & (first < t1)) & jnp.any(spare))
    join, exit_, *_ = jax.lax.while_loop(cond, body, start)
    return Membership(join, exit_)


__all__ = ["Membership", "membership"]
