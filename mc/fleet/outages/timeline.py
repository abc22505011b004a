"""A round's slot timelines (SPEC §10): failures, preemptions and refills between
two rounds, slot by slot, in time order.

Within a round each slot's history depends on its own candidates alone (the run
set changes only by failover, ``failover.membership``, which reads what this
module leaves). ``run`` takes every slot's next candidate at once, as long as one
falls before the round's end:

- a failure candidate fails the card holding the slot (booting or not); a lone
  preemption or its zone going down (with probability ``wave_share``) takes a spot
  card back. The card leaves: its dips end there, it serves and bills nothing more.
  Its slot is ready for a card at once (a preemption) or ``Exponential(replace_hours)``
  later (a failure); an on-demand slot takes a fresh card then, a spot one when its
  zone is up, or ``fallback_hours`` after it was ready an on-demand card; each new card
  serves ``boot_hours`` after it is placed;
- a dip's begin gives the dip to the card holding the slot then (from its boot), or
  to none.

Each fresh card is recorded at its candidate's position (``Hold.rec_*``), so the
month's capacity and bill can take its piece of the round it was placed in
(``ledger``); the card holding a slot at a round's start is that round's own piece.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ...units import HOURS
from .. import lottery
from .events import DIP, FAIL, LONE, WAVE, Events, Zones, up_after


class Hold(NamedTuple):
    """§10's part of the slots between rounds (beside §6's ``Slots``)."""

    placed: jax.Array  # (pool,) float32 h the slot's card (or the awaited one) is placed; inf: none will come
    spot: jax.Array  # (pool,) bool it is a spot card
    fallback: jax.Array  # (pool,) bool it is an on-demand card in a spot slot
    ptr: jax.Array  # (pool,) int32 the slot's next candidate
    cur: jax.Array  # (pool,) int32 the candidate that placed the card (-1: an original or a round's ticket)
    served: jax.Array  # (pool,) float32 h served within [0, 730) by the slot's cards gone
    held_fb: jax.Array  # (pool,) float32 h held within [0, 730) by fallback cards gone
    dip_spot: jax.Array  # (pool, dips) bool the dip's owner is a spot card
    rec_placed: jax.Array  # (pool, n) float32 h: the card the candidate placed (inf: none)
    rec_start: jax.Array  # (pool, n) float32 h it serves from
    rec_leave: jax.Array  # (pool, n) float32 h it left (inf: not yet)
    rec_rate: jax.Array  # (pool, n) float32 tok/s its true rate
    rec_spot: jax.Array  # (pool, n) bool
    rec_round: jax.Array  # (pool, n) int32 the round it was placed in (-1: none)
    n_failed: jax.Array  # () int32
    n_preempted: jax.Array  # () int32


class Env(NamedTuple):
    """What a round's timelines read (the month's, fixed)."""

    ev: Events
    zones: Zones | None
    rated: jax.Array  # (pool,) float32 tok/s
    dip_begin: jax.Array  # (pool, dips) float32 h
    dip_end: jax.Array  # (pool, dips) float32 h (uncut)
    depth: jax.Array  # (pool, dips) float32


def leave_at(s, h: Hold, gone: jax.Array, t: jax.Array) -> Hold:
    """The ledger of cards leaving at ``t`` ((pool,) bool ``gone``): hours served and
    held as a fallback, and the leaving card's record closed."""
    t = jnp.minimum(t, HOURS)
    served = jnp.where(gone, jnp.maximum(0.0, t - jnp.maximum(s.start, 0.0)), 0.0)
    held = jnp.where(gone & h.fallback, jnp.maximum(0.0, t - jnp.maximum(h.placed, 0.0)), 0.0)
    n = h.rec_leave.shape[1]
    mine = gone[:, None] & (jnp.arange(n)[None, :] == h.cur[:, None])
    return h._replace(served=h.served + served, held_fb=h.held_fb + held,
                      rec_leave=jnp.where(mine, jnp.broadcast_to(t, gone.shape)[:, None], h.rec_leave))


def refill(h: Hold, z: Zones | None, ready: jax.Array, spot_fields) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Where an emptied slot's next card comes from, ready at ``ready`` (pool,):
    ``(placed, spot, fallback)``. A spot card's slot waits for its zone (``up_after``),
    or takes an on-demand card ``fallback_hours`` after it was ready."""
    if z is None:
        return ready, jnp.zeros_like(h.spot), h.fallback
    fb = jnp.inf if spot_fields.fallback_hours is None else spot_fields.fallback_hours
    up = up_after(z, ready)
    late = up - ready > fb
    placed = jnp.where(h.spot, jnp.where(late, ready + fb, up), ready)
    return placed, h.spot & ~late, h.fallback | (h.spot & late)


def run(s, h: Hold, env: Env, t0: jax.Array, t1: jax.Array, k: jax.Array, sc) -> tuple:
    """The slots' timelines over ``[t0, t1)``, round ``k``: ``(slots, hold, first)``,
    ``first`` (pool,) float32 h when the card holding each slot at ``t0`` left (``t1``
    if it did not)."""
    ev, boot = env.ev, sc.autoscaler.boot_hours
    n = ev.time.shape[1]
    dips = env.depth.shape[1]
    rows = jnp.arange(ev.time.shape[0])

    def at(x, j):
        return x[rows, j]

    def cond(c):
        _, h, _ = c
        j = jnp.minimum(h.ptr, n - 1)
        return jnp.any((h.ptr < n) & (at(ev.time, j) < t1))

    def body(c):
        s, h, first = c
        j = jnp.minimum(h.ptr, n - 1)
        tau = jnp.where(h.ptr < n, at(ev.time, j), jnp.inf)
        active = tau < t1
        kind = at(ev.kind, j)
        holds = h.placed <= tau
        wave_share = sc.spot.wave_share if sc.spot is not None else 1.0
        hit = (kind == FAIL) | (h.spot & ((kind == LONE) | ((kind == WAVE) & (at(ev.u_wave, j) < wave_share))))
        kill = active & holds & hit
        failed = kill & (kind == FAIL)
        first = jnp.where(kill & (h.placed <= t0) & (first >= t1), tau, first)
        # The leaving card: its ledger, its dips end.
        h = leave_at(s, h, kill, tau)
        begun = env.dip_begin < tau[:, None]
        s = s._replace(hi=jnp.where(kill[:, None] & begun, jnp.minimum(s.hi, tau[:, None]), s.hi))
        # Its successor.
        wait = at(ev.delay, j) * (sc.failures.replace_hours if sc.failures is not None else 0.0)
        ready = tau + jnp.where(failed, wait, 0.0)
        placed, spot, fb = refill(h, env.zones, ready, sc.spot)
        ticket = lottery.LotteryDraws(at(ev.tickets.z, j), at(ev.tickets.u_lemon, j))
        q = lottery.quality(ticket, sc.lottery)
        rate = env.rated * q
        start = placed + boot
        mine = kill[:, None] & (jnp.arange(n)[None, :] == j[:, None])
        h = h._replace(
            placed=jnp.where(kill, placed, h.placed), spot=jnp.where(kill, spot, h.spot),
            fallback=jnp.where(kill, fb, h.fallback), cur=jnp.where(kill, j, h.cur),
            rec_placed=jnp.where(mine, placed[:, None], h.rec_placed),
            rec_start=jnp.where(mine, start[:, None], h.rec_start),
            rec_leave=jnp.where(mine, jnp.inf, h.rec_leave), rec_rate=jnp.where(mine, rate[:, None], h.rec_rate),
            rec_spot=jnp.where(mine, spot[:, None], h.rec_spot), rec_round=jnp.where(mine, k, h.rec_round),
            n_failed=h.n_failed + jnp.sum(failed, dtype=jnp.int32),
            n_preempted=h.n_preempted + jnp.sum(kill & ~failed, dtype=jnp.int32))
        s = s._replace(rate=jnp.where(kill, rate, s.rate), quality=jnp.where(kill, q, s.quality),
                       lemon=jnp.where(kill, lottery.lemon(ticket, sc.lottery), s.lemon),
                       start=jnp.where(kill, start, s.start), marks=jnp.where(kill, 0, s.marks))
        # A dip that begins now: its owner is the card holding the slot.
        dip = active & (kind == DIP)
        d = dip[:, None] & (jnp.arange(dips)[None, :] == at(ev.index, j)[:, None])
        own = (holds & ~kill)[:, None]
        s = s._replace(lo=jnp.where(d, jnp.where(own, jnp.maximum(tau, s.start)[:, None], tau[:, None]), s.lo),
                       hi=jnp.where(d, jnp.where(own, env.dip_end, tau[:, None]), s.hi),
                       weight=jnp.where(d, jnp.where(own, env.depth * s.rate[:, None], 0.0), s.weight))
        h = h._replace(dip_spot=jnp.where(d, own & h.spot[:, None], h.dip_spot), ptr=h.ptr + active.astype(jnp.int32))
        return s, h, first

    first = jnp.full(h.placed.shape, t1, jnp.float32)
    return jax.lax.while_loop(cond, body, (s, h, first))


__all__ = ["Env", "Hold", "leave_at", "refill", "run"]
