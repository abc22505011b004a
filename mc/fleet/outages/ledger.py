"""A §10 month's capacity, bill and own outputs, from the pieces its rounds leave.

Each round leaves, per slot, its interval in the run set (``failover``), the card
that held the slot at the round's start (until it left) and the slot's dips as they
stand; each card placed between rounds left its record at its candidate's position
(``timeline.Hold``). A card counts toward capacity while it holds its slot, is in the
run set and has booted, and bills its price (a spot card at ``price_factor``) per 730
hours while it holds its slot and is in the run set. A card's piece of one round is
its stretch of ``[join, exit)``; the hourly capacity sums those pieces (gains) and
the dips' pieces (losses) in one exact fixed-point pass (``mc.kernels.round_sums``).
With nothing leaving, each run card's piece is the whole round and bills §6's rent.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ...engine import Column
from ...kernels import round_levels, round_sums, tree_sum
from ...units import HOURS, SECONDS
from .. import accounting
from .timeline import Hold

# SPEC §10's own outputs, beside §6's.
COLUMNS = {"n_failed": Column("count", "cards"), "n_preempted": Column("count", "cards"),
           "empty_slot_hours": Column("float", "h"), "fallback_hours": Column("float", "h"),
           "spot_share": Column("float", "share"), "spot_bill": Column("money", "$")}


class Pieces(NamedTuple):
    """What one round leaves (the scan's ys), per slot."""

    join: jax.Array  # (pool,) float32 h
    exit: jax.Array  # (pool,) float32 h
    present: jax.Array  # (pool,) bool a card held the slot at the round's start
    rate: jax.Array  # (pool,) float32 tok/s that card's true rate
    start: jax.Array  # (pool,) float32 h it serves from
    spot: jax.Array  # (pool,) bool it is a spot card
    first: jax.Array  # (pool,) float32 h it left (the round's end: it stayed)
    lo: jax.Array  # (pool, dips) float32 h the slot's dips after the round
    hi: jax.Array  # (pool, dips)
    weight: jax.Array  # (pool, dips) tok/s
    dip_spot: jax.Array  # (pool, dips) bool


def _cents(price: jax.Array, hours: jax.Array) -> jax.Array:
    """int32 cents of ``hours`` at ``price`` cents per 730 h, to the cent."""
    return jnp.round(price * jnp.maximum(hours, 0.0) / jnp.float32(HOURS)).astype(jnp.int32)


def settle(pc: Pieces, h: Hold, t0: jax.Array, t1: jax.Array, rent: jax.Array, price: jax.Array, factor,
           demand: jax.Array, period: int, any_spot: bool) -> dict:
    """The month's token totals, warm bill and §10 columns from every round's pieces
    ((rounds, ...) each) and the slots' records ``h`` at the month's end.

    Arguments:
        t0, t1: (rounds,) float32 h each round's span. rent: (rounds, pool) int32
        cents, §6's prorated rent. price: (pool,) float32 cents a month (the class's).
    """
    rounds = pc.join.shape[0]
    spot_price = price * factor
    # The card holding each slot at each round's start.
    a, b = jnp.maximum(pc.start, pc.join), jnp.minimum(pc.first, pc.exit)
    whole = (pc.join == t0[:, None]) & (pc.first >= t1[:, None]) & (pc.exit >= t1[:, None])
    run_h = jnp.where(pc.present, jnp.minimum(pc.first, pc.exit) - pc.join, 0.0)
    own = jnp.where(pc.present & whole & ~pc.spot, rent, _cents(jnp.where(pc.spot, spot_price, price), run_h))
    own = jnp.where(pc.present, own, 0)
    # The cards placed between rounds, each in the round it was placed in.
    k = jnp.maximum(h.rec_round, 0)
    rows = jnp.arange(k.shape[0])[:, None]
    join, exit_, end = pc.join.T[rows, k], pc.exit.T[rows, k], t1[k]
    placed = h.rec_round >= 0
    ra, rb = jnp.maximum(h.rec_start, join), jnp.minimum(jnp.minimum(h.rec_leave, exit_), end)
    rec_h = jnp.where(placed, jnp.minimum(jnp.minimum(h.rec_leave, exit_), end) - jnp.maximum(h.rec_placed, join), 0.0)
    rec_cents = jnp.where(placed, _cents(jnp.where(h.rec_spot, spot_price[:, None], price[:, None]), rec_h), 0)
    warm = jnp.sum(own, dtype=jnp.int32) + jnp.sum(rec_cents, dtype=jnp.int32)
    spot_bill = (jnp.sum(jnp.where(pc.spot, own, 0), dtype=jnp.int32)
                 + jnp.sum(jnp.where(h.rec_spot, rec_cents, 0), dtype=jnp.int32))
    # Capacity: gains while counted, the dips' losses while their owner counts. A card
    # counted all round adds to the round's rate; the rest are intervals, and an empty
    # interval weighs nothing (the fixed point's scale follows the weights' sum).
    full = pc.present & (a <= t0[:, None]) & (b >= t1[:, None])
    dlo, dhi = jnp.maximum(pc.lo, pc.join[..., None]), jnp.minimum(pc.hi, pc.exit[..., None])
    gain_own = jnp.where(pc.present & ~full & (b > a), -pc.rate, 0.0)
    gain_rec = jnp.where(placed & (rb > ra), -h.rec_rate, 0.0)
    loss = jnp.where(dhi > dlo, pc.weight, 0.0)
    zero = jnp.int32(0)

    def groups(only_spot):
        def pick(w, spot):
            return jnp.where(spot, w, 0.0) if only_spot else w
        return ((a, b, pick(gain_own, pc.spot), zero), (ra, rb, pick(gain_rec, h.rec_spot), zero),
                (dlo, dhi, pick(loss, pc.dip_spot), zero))

    def rate(only_spot):
        on = full & pc.spot if only_spot else full
        return jax.vmap(tree_sum)(jnp.where(on, pc.rate, 0.0))

    live = jnp.ones((rounds, 1), bool)
    t = round_sums(groups(False), live, rate(False), demand, period) * (SECONDS / HOURS)
    tok = accounting.Tokens(t[0], t[1], t[2], t[3])
    share = jnp.zeros((), jnp.float32)
    if any_spot:
        level, d, kk = round_levels(groups(False), live, rate(False), demand, period)
        spot_level, _, ks = round_levels(groups(True), live, rate(True), demand, period)
        cap = jnp.maximum(level, 0.0) * jnp.ldexp(jnp.float32(1.0), -kk)
        served = jnp.minimum(d * jnp.ldexp(jnp.float32(1.0), -kk), cap)
        spot_cap = jnp.clip(spot_level * jnp.ldexp(jnp.float32(1.0), -ks), 0.0, cap)
        share = accounting.ratio(tree_sum(served * accounting.ratio(spot_cap, cap)), tree_sum(served))
    in_run = tree_sum(jnp.maximum(pc.exit - pc.join, 0.0).ravel())
    return {"tok": tok, "warm": warm, "spot_bill": spot_bill, "spot_share": share, "run_hours": in_run}


def ends(s, h: Hold, size: int) -> tuple[jax.Array, jax.Array]:
    """``(empty_slot_hours, fallback_hours)`` at the month's end: slot-hours of
    ``[0, 730)`` without a serving card, and held by fallback on-demand cards."""
    held = h.placed < HOURS
    served = h.served + jnp.where(held, jnp.maximum(0.0, HOURS - jnp.maximum(s.start, 0.0)), 0.0)
    fb = h.held_fb + jnp.where(held & h.fallback, HOURS - jnp.maximum(h.placed, 0.0), 0.0)
    return jnp.float32(size * HOURS) - tree_sum(served), tree_sum(fb)


__all__ = ["COLUMNS", "Pieces", "ends", "settle"]
