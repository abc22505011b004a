"""SPEC §11 in §6's month: the autoscaler's rounds over replicas.

The card slots keep their cards (a quality, a lemon, when the card was placed and when
it serves) and their slots' dips; a dip belongs to the card placed before it began. At
each round the replicas are read off the cards (``view``: each paced by its slowest
card, ``pace``; a replica serves once all its cards do) and §6's own steps run on them:
``autoscaler.score`` scores replicas (one window error each, its first card's), the rule
marks replicas (``evict = "replica"``: the replica's ``tp`` cards leave, each a churn
fee, and with ``replace`` all take fresh tickets) or cards on their own windows
(``"member"``: a card leaves, one fee, and only its place takes a fresh ticket; the
replica carries nothing until that card boots), and ``autoscaler.run_set`` picks
replicas. Each round leaves its replicas' dips for the month's capacity: a replica's
dips change whenever one of its cards does, so they are rows of their own round
(``accounting.round_tokens`` over (round, replica) rows).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ...engine import Schema
from ...kernels import materialise
from ...units import HOURS
from .. import accounting, autoscaler, checks, demand, dips, lottery, month, runset
from ..dips import CardDips
from ..roundstate import Fixed, Round, Slots
from ..scenario import Scenario
from . import outputs, pace
from .layout import Layout, layout


class Cards(NamedTuple):
    """What the card slots hold between rounds (the scan's carry, with the rule's marks)."""

    quality: jax.Array  # (pool,) float32 q of each slot's card
    lemon: jax.Array  # (pool,) bool
    present: jax.Array  # (pool,) bool: the slot holds a card
    placed: jax.Array  # (pool,) float32 h the card was placed (-W: an original): its dips begin from then
    start: jax.Array  # (pool,) float32 h it serves from
    marks: jax.Array  # (replicas,) or (pool,) int32 consecutive marks of what the rule ranks


class Totals(NamedTuple):
    warm: jax.Array  # () int32 cents
    churn: jax.Array  # () int32 cents
    n_evicted: jax.Array  # () int32 what the rule evicted (replicas or cards)
    members: jax.Array  # () int32 cards evicted
    n_wrong: jax.Array  # () int32
    lemons_evicted: jax.Array  # () int32 cards
    first: jax.Array  # () int32 h
    run_hours: jax.Array  # () float32 replica-hours in run sets


class Trace(NamedTuple):
    rate: jax.Array  # (replicas,) float32 tok/s each replica's rate after the round (0: not whole)
    run: jax.Array  # (replicas,) bool
    evicted: jax.Array  # (replicas,) bool: a card of it left this round
    score: jax.Array  # (replicas,) float32 tok/s the run set's score
    n_run: jax.Array  # () int32
    boot: jax.Array  # () float32 tok/s of run replicas waiting for a fresh card
    dips: CardDips  # (replicas, pieces) its dips through the round, from its serving start


def schema(sc: Scenario) -> Schema:
    """§6's columns, SPEC §11's beside them, money counted on the host."""
    a, size, lim = sc.autoscaler, sc.pool.size, sc.evict_limit
    per_round = a.rounds * lim + 1
    cards = a.rounds * min(size, lim * max(c.tp for c in sc.pool.classes)) + 1
    counts = {"n_run": sc.pool.replicas + 1, "n_evicted": per_round, "n_wrong": per_round,
              "n_replaced": per_round, "lemons_end": size + 1, "lemons_evicted": cards,
              "first_eviction_hour": HOURS + 1, **outputs.counts(sc.pool), "members_evicted": cards}
    money = {c: None for c in autoscaler.MONEY}
    return Schema.of({**autoscaler.COLUMNS, **outputs.COLUMNS}, money=money, counts=counts,
                     modes=month.MODE_COLUMNS)


def view(c: Cards, slot: CardDips, geom: pace.Geometry, lay: Layout) -> tuple[Slots, Fixed]:
    """The replicas as §6's steps read slots: each whole replica's rate (its slowest
    card's pace), its serving start (its last card's), its dips from then (of the
    slots' dips ``slot``, (pool, dips), those begun since each card was placed; their
    pieces ``geom``)."""
    whole = jnp.all(c.present[lay.members], axis=-1)
    q = pace.quality(c.quality, lay)
    rated = jnp.asarray(lay.rated)
    rate = jnp.where(whole, rated * q, 0.0)
    start = jnp.max(c.start[lay.members], axis=-1)
    d = pace.dips(c.quality, slot, lay, start, geom, c.placed)
    slots = Slots(rate=rate, quality=q, lemon=jnp.zeros(rate.shape, bool), present=whole, start=start,
                  marks=c.marks, lo=d.begin, hi=d.end, weight=d.depth)
    return slots, Fixed(rated=rated, price=jnp.asarray(lay.cents).astype(jnp.float32), begin=d.begin,
                        depth=d.depth)


def cards_as_slots(c: Cards, slot: CardDips, f: Fixed) -> tuple[Slots, Fixed]:
    """Each card on its own (``evict = "member"``): its rate and its own dips from
    its placement (``f``: the cards' rated rates and prices)."""
    lo = jnp.maximum(slot.begin, c.start[:, None])
    depth = jnp.where(slot.begin >= c.placed[:, None], slot.depth, 0.0)
    rate = jnp.where(c.present, f.rated * c.quality, 0.0)
    slots = Slots(rate=rate, quality=c.quality, lemon=c.lemon, present=c.present, start=c.start, marks=c.marks,
                  lo=lo, hi=jnp.maximum(slot.end, lo), weight=depth)
    return slots, f._replace(begin=slot.begin, depth=depth)


def round_step(carry: tuple, x: Round, f: Fixed, slot: CardDips, geom: pace.Geometry, lay: Layout,
               sc: Scenario) -> tuple[tuple, Trace]:
    """One round at ``t_k``: score the replicas, mark and evict (replicas or cards),
    replace, pick the run set, bill. The carry holds the cards, the totals and the
    replicas as the last round left them (``view``: nothing changes between rounds).
    ``f``: the cards' rated rates and prices; ``slot``: the slots' dips, ``geom`` their pieces."""
    c, tally, (units, uf) = carry
    a, by_member = sc.autoscaler, sc.eviction.evict == "member"
    ux = x._replace(eps=x.eps[lay.first], rent=None)
    scored = autoscaler.score(units, ux, uf, sc)
    rate = jnp.where(c.present, f.rated * c.quality, 0.0)  # each card's, before the round's evictions
    if by_member:
        ms, mf = cards_as_slots(c, slot, f)
        marks, gone = autoscaler.mark_and_evict(ms, x, autoscaler.score(ms, x, mf, sc), mf, sc)
        left = jnp.any(gone[lay.members], axis=-1)
        wrong = checks.wrong(rate, gone, sc.pool, c.present)
        n_ev = jnp.sum(gone, dtype=jnp.int32)
    else:
        marks, left = autoscaler.mark_and_evict(units, ux, scored, uf, sc)
        gone = left[lay.unit_of]
        wrong = outputs.wrong_in_slots(rate, c.present, left, lay, sc.pool)
        n_ev = jnp.sum(left, dtype=jnp.int32)
    marks = jnp.where(left if not by_member else gone, 0, marks)
    if a.replace:
        new = c._replace(quality=jnp.where(gone, x.ticket_quality, c.quality),
                         lemon=jnp.where(gone, x.ticket_lemon, c.lemon), placed=jnp.where(gone, x.t, c.placed),
                         start=jnp.where(gone, x.t + a.boot_hours, c.start), marks=marks)
    else:
        new = c._replace(present=c.present & ~gone, marks=marks)
    after, af = view(new, slot, geom, lay)
    chosen = autoscaler.run_set(after, scored, left, ux, af, sc)
    rent = jnp.sum(jnp.where(lay.own, x.rent[lay.members], 0), axis=-1, dtype=jnp.int32)
    n_run = jnp.sum(chosen.run, dtype=jnp.int32)
    tally = tally._replace(
        warm=tally.warm + accounting.bill_cents(chosen.run, rent),
        churn=tally.churn + accounting.bill_cents(gone, jnp.asarray(sc.churn_cents)),
        n_evicted=tally.n_evicted + n_ev, members=tally.members + jnp.sum(gone, dtype=jnp.int32),
        n_wrong=tally.n_wrong + jnp.sum(wrong, dtype=jnp.int32),
        lemons_evicted=tally.lemons_evicted + jnp.sum(gone & c.lemon, dtype=jnp.int32),
        first=jnp.where((tally.first == HOURS) & (n_ev > 0), x.hour, tally.first),
        run_hours=tally.run_hours + n_run.astype(jnp.float32) * x.length)
    pieces = CardDips(after.lo, after.hi, after.weight * after.rate[:, None])
    if a.rounds > 1:  # a row counts in its round alone: cut to it, so the capacity pass's scale holds one round
        lo = jnp.clip(pieces.begin, x.t, x.t + x.length)
        hi = jnp.clip(pieces.end, lo, x.t + x.length)
        pieces = CardDips(lo, hi, jnp.where(hi > lo, pieces.depth, 0.0))
    return (new, tally, (after, af)), Trace(after.rate, chosen.run, left, chosen.score, n_run, chosen.boot, pieces)


def outcome(d: autoscaler.Draws, sc: Scenario, *, cards: bool = False) -> dict[str, jax.Array]:
    """SPEC §6's and §11's outputs of one month of replicas; money in int32 cents.
    With ``cards=True`` also, per round and replica, ``rate``, ``score``, ``evicted``
    and ``run``."""
    pool, a, W = sc.pool, sc.autoscaler, sc.window.hours
    lay = layout(pool)
    rated = jnp.asarray(pool.rated())
    q0 = lottery.quality(d.month.lottery, sc.lottery)
    lemon0 = lottery.lemon(d.month.lottery, sc.lottery)
    slot_dips = materialise(dips.place(d.month.dips, W, sc.dips))
    hourly_demand = demand.profile(d.month.demand, sc.demand)
    noise = jnp.concatenate([d.month.noise[None], d.noise[1:]])
    xs = Round(t=jnp.asarray(a.starts(), jnp.float32), hour=jnp.asarray(a.starts()),
               length=jnp.asarray(a.lengths(), jnp.float32), eps=noise,
               ticket_quality=lottery.quality(d.tickets, sc.lottery), ticket_lemon=lottery.lemon(d.tickets, sc.lottery),
               target=autoscaler.per_round(lambda h: runset.target(h, sc.runset), hourly_demand, a.period),
               rent=jnp.asarray(a.rent(pool.price_cents())))
    fixed = Fixed(rated=rated, price=jnp.asarray(pool.price_cents()).astype(jnp.float32), begin=slot_dips.begin,
                  depth=slot_dips.depth)
    p = pool.size
    ranked = p if sc.eviction.evict == "member" else pool.replicas
    start = Cards(quality=q0, lemon=lemon0, present=jnp.ones(p, bool), placed=jnp.full(p, -W, jnp.float32),
                  start=jnp.full(p, -W, jnp.float32), marks=jnp.zeros(ranked, jnp.int32))
    zeros = jnp.zeros((), jnp.int32)
    tally = Totals(warm=zeros, churn=zeros, n_evicted=zeros, members=zeros, n_wrong=zeros, lemons_evicted=zeros,
                   first=jnp.full((), HOURS, jnp.int32), run_hours=jnp.zeros((), jnp.float32))
    geom = None if lay.size == 1 else materialise(pace.geometry(slot_dips, lay))
    units0 = view(start, slot_dips, geom, lay)
    (end, tally, _), trace = jax.lax.scan(lambda c, x: round_step(c, x, fixed, slot_dips, geom, lay, sc),
                                          (start, tally, units0), xs)

    tok = tokens(trace, a, xs.t, hourly_demand)
    ideal = autoscaler.ideal_bill(units0[0].rate, hourly_demand, sc, pool=lay.pool)
    out = month.report(tally.warm, tally.churn, ideal, trace.n_run[0], tally.n_evicted, tally.n_wrong, tok, sc)
    out.update(autoscaler.extras(tally, end, a))
    out.update(outputs.report(lemon0, tally.members, lay, end.lemon, end.present))
    if cards:
        out.update(rate=trace.rate, score=trace.score, evicted=trace.evicted, run=trace.run)
    return out


def tokens(trace: Trace, a, starts: jax.Array, hourly_demand: jax.Array) -> accounting.Tokens:
    """The month's token totals: round ``k``'s run replicas at their rates less their
    dips of that round (rows ``(k, replica)``, live in round ``k`` alone) and less
    the run replicas waiting for a fresh card, ``[t_k, t_k + boot_hours)``."""
    rounds, units = trace.run.shape
    d = trace.dips
    if rounds == 1:  # one round: the replicas are the rows
        return accounting.round_tokens(trace.rate, trace.run, CardDips(d.begin[0], d.end[0], d.depth[0]),
                                       trace.boot, a.boot_hours, starts, hourly_demand, a.period)
    eye = jnp.asarray(np.eye(rounds, dtype=bool))
    run = (eye[:, :, None] & trace.run[None]).reshape(rounds, rounds * units)
    rate = jnp.where(eye[:, :, None], trace.rate[None], 0.0).reshape(rounds, rounds * units)
    flat = CardDips(*(x.reshape(rounds * units, -1) for x in (d.begin, d.end, d.depth)))
    return accounting.round_tokens(rate, run, flat, trace.boot, a.boot_hours, starts, hourly_demand, a.period)


def replica_month(key: jax.Array, sc: Scenario) -> dict[str, jax.Array]:
    """One §6 month of replicas from its key."""
    return outcome(autoscaler.draw(key, sc), sc)


__all__ = ["Cards", "Totals", "Trace", "outcome", "replica_month", "schema", "tokens"]
