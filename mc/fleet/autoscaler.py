"""The autoscaler over a month (SPEC §6): rounds of scoring and eviction, with
hysteresis, replacement tickets, a run set per round and prorated rent.

The month is a ``lax.scan`` over its rounds, each round a step of §1's own
functions (window → eviction → run set → accounting) on the cards in the
pool's slots. Round 0 and the original cards use exactly §1's draws
(``month.draw``); window errors of later rounds and the replacement tickets come
from a key of their own, so with one round and no replacement every output is
§1's to the bit. The hourly capacity pass runs once after the scan
(``accounting.round_tokens``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..engine import Schema
from ..kernels import masked_median, materialise, tree_sum, uniforms
from ..units import HOURS
from . import accounting, checks, demand, dips, eviction, lottery, month, runset, window
from .dips import CardDips
from .scenario import Scenario

# The §1 outputs, then §6's own (SPEC §6 "Extra outputs").
KINDS = {**month.KINDS, "n_replaced": "count", "mean_run": "float", "quality_end": "float",
         "lemons_end": "count", "lemons_evicted": "count", "first_eviction_hour": "count"}
OUTPUTS = tuple(KINDS)
MONEY, COUNTS, FLOATS, PASSES = (tuple(c for c, k in KINDS.items() if k == kind)
                                 for kind in ("money", "count", "float", "pass"))
# The key of a month's later rounds: fold_in(month key, STREAM).
STREAM = 6
ROUND_UNIFORMS = 1 + lottery.UNIFORMS  # per slot and round: a window error and a ticket


def schema(sc: Scenario) -> Schema:
    """The engine's columns for a §6 month: eviction counts up to the policy's
    limit in every round; money enumerated as §1 does when the month is §1's (one
    round, no replacement), otherwise counted on the host."""
    a, size = sc.autoscaler, sc.pool.size
    single = a.rounds == 1 and not a.replace
    money = {c: accounting.money_support(sc.pool, sc.churn_cents, c) if single else None for c in MONEY}
    per_round = a.rounds * sc.evict_limit + 1
    counts = {"n_run": size + 1, "n_evicted": per_round, "n_wrong": per_round, "n_replaced": per_round,
              "lemons_end": size + 1, "lemons_evicted": per_round, "first_eviction_hour": HOURS + 1}
    return Schema(columns=OUTPUTS, money=money, counts=counts, floats=FLOATS, passes=PASSES,
                  modes=month.MODE_COLUMNS)


class Draws(NamedTuple):
    """Every random number of one §6 month."""

    month: month.Draws  # §1's draws: the original cards, the slots' dips, round 0's errors, demand
    noise: jax.Array  # (rounds, pool) float32 standard normal window errors (row 0 unused: §1's)
    tickets: lottery.LotteryDraws  # (rounds, pool) each: the card placed in slot i at t_k


def draw(key: jax.Array, sc: Scenario) -> Draws:
    """§1's draws from ``key``, and a block of open uniforms per round and slot
    from ``fold_in(key, STREAM)``."""
    k, p = sc.autoscaler.rounds, sc.pool.size
    u = uniforms(jax.random.fold_in(key, STREAM), (k, p, ROUND_UNIFORMS))
    t = lottery.draw(u[..., 1:].reshape(k * p, lottery.UNIFORMS))
    tickets = lottery.LotteryDraws(t.z.reshape(k, p), t.u_lemon.reshape(k, p))
    return Draws(month.draw(key, sc), window.draw(u[..., 0]), tickets)


class Slots(NamedTuple):
    """What the pool's slots hold between rounds (the scan's carry)."""

    rate: jax.Array  # (pool,) float32 tok/s true rate of each slot's card (0 when empty)
    quality: jax.Array  # (pool,) float32 its q, lemon factor included
    lemon: jax.Array  # (pool,) bool
    present: jax.Array  # (pool,) bool: the slot holds a card
    start: jax.Array  # (pool,) float32 h the card serves from (-W for an original)
    marks: jax.Array  # (pool,) int32 consecutive rounds marked
    lo: jax.Array  # (pool, dips) float32 h each dip's begin, cut to its owner's start
    hi: jax.Array  # (pool, dips) float32 h each dip's end, cut where its owner left
    weight: jax.Array  # (pool, dips) float32 tok/s its loss: owner's rate × depth (0: no owner)


class Tally(NamedTuple):
    """The month's running totals (the rest of the carry)."""

    warm: jax.Array  # () int32 cents
    churn: jax.Array  # () int32 cents
    n_evicted: jax.Array  # () int32
    n_wrong: jax.Array  # () int32
    lemons_evicted: jax.Array  # () int32
    first: jax.Array  # () int32 h of the first round with an eviction (730: none yet)
    run_hours: jax.Array  # () float32 card-hours in run sets


class Round(NamedTuple):
    """One round's inputs (the scan's xs)."""

    t: jax.Array  # () float32 h, t_k
    hour: jax.Array  # () int32 h, t_k
    length: jax.Array  # () float32 h in the round
    eps: jax.Array  # (pool,) float32 window errors
    ticket_quality: jax.Array  # (pool,) float32 q of the replacement tickets
    ticket_lemon: jax.Array  # (pool,) bool
    target: jax.Array  # () float32 tok/s the run set's target
    rent: jax.Array  # (pool,) int32 cents a run card bills this round


def per_round(fn, hourly: jax.Array, period: int) -> jax.Array:
    """(rounds,) ``fn`` of each round's hours of ``hourly`` (730,)."""
    full = HOURS // period
    out = jax.vmap(fn)(hourly[:full * period].reshape(full, period))
    if HOURS % period:
        out = jnp.concatenate([out, fn(hourly[full * period:])[None]])
    return out


def outcome(d: Draws, sc: Scenario, *, cards: bool = False) -> dict[str, jax.Array]:
    """SPEC §6 outputs of one month (``OUTPUTS``); money in int32 cents.

    With ``cards=True`` also, per round and slot ((rounds, pool) each): the
    card's true ``rate`` (tok/s, 0 when empty) and ``score`` (tok/s, the run set's
    score), ``evicted`` and ``run`` (bool).
    """
    pool, a, W = sc.pool, sc.autoscaler, sc.window.hours
    rated = jnp.asarray(pool.rated())
    cents = jnp.asarray(pool.price_cents())
    replace = a.replace

    q0 = lottery.quality(d.month.lottery, sc.lottery)
    rate0, slot_dips = materialise((rated * q0, dips.place(d.month.dips, W, sc.dips)))
    hourly_demand = demand.profile(d.month.demand, sc.demand)
    ticket_q = lottery.quality(d.tickets, sc.lottery)
    noise = jnp.concatenate([d.month.noise[None], d.noise[1:]])
    xs = Round(jnp.asarray(a.starts(), jnp.float32), jnp.asarray(a.starts()),
               jnp.asarray(a.lengths(), jnp.float32), noise, ticket_q, lottery.lemon(d.tickets, sc.lottery),
               per_round(lambda h: runset.target(h, sc.runset), hourly_demand, a.period),
               jnp.asarray(a.rent(pool.price_cents())))

    begin, depth = slot_dips.begin, slot_dips.depth
    price = cents.astype(jnp.float32)

    def step(carry, x: Round):
        s, tally = carry
        # Scoring at t_k, on each card's window [max(t_k - W, start), t_k).
        lo = jnp.maximum(x.t - W, s.start)
        length = x.t - lo
        scored = s.present & (length > 0)
        length = jnp.where(scored, length, 1.0)
        m = window.mean_rate_over(s.rate, CardDips(s.lo, s.hi, depth), lo[:, None], x.t, length)
        raw = window.noisy(m, x.eps, window.sigma_of(sc.window.sigma_hour, length))
        typical = jnp.where(jnp.any(scored), masked_median(raw / rated, scored), 1.0)
        score = jnp.where(scored, raw, rated * typical)
        rel = score / rated

        # Marks and evictions.
        eligible = scored & (x.t - s.start >= a.min_age)
        marks = jnp.where(eviction.mark(rel, eligible, sc.evict_limit, sc.eviction), s.marks + 1, 0)
        evicted = marks >= a.strikes
        wrong = checks.wrong(s.rate, evicted, pool, s.present)

        # Replacement (or an empty slot); dips of a leaving card end at t_k, and
        # dips beginning from t_k on belong to the slot's new card (or to none).
        old = evicted[:, None] & (begin < x.t)
        future = evicted[:, None] & (begin >= x.t)
        hi = jnp.where(old, jnp.minimum(s.hi, x.t), s.hi)
        if replace:
            rate = jnp.where(evicted, rated * x.ticket_quality, s.rate)
            start = jnp.where(evicted, x.t + a.boot_hours, s.start)
            new = Slots(rate, jnp.where(evicted, x.ticket_quality, s.quality),
                        jnp.where(evicted, x.ticket_lemon, s.lemon), s.present, start,
                        jnp.where(evicted, 0, marks), jnp.where(future, jnp.maximum(begin, start[:, None]), s.lo),
                        hi, jnp.where(future, depth * rate[:, None], s.weight))
            score = jnp.where(evicted, rated * typical, score)
        else:
            new = Slots(jnp.where(evicted, 0.0, s.rate), s.quality, s.lemon, s.present & ~evicted, s.start,
                        jnp.where(evicted, 0, marks), s.lo, hi, jnp.where(future, 0.0, s.weight))

        # The run set to the round's target; its prorated rent; the churn fees.
        run = runset.run_set(score, price, ~new.present, x.target, sc.runset)
        # The run set's booting replacements (their rate is lost while they boot).
        boot = tree_sum(jnp.where(evicted & run, new.rate, 0.0)) if replace else jnp.zeros((), jnp.float32)
        n_ev = jnp.sum(evicted, dtype=jnp.int32)
        n_run = jnp.sum(run, dtype=jnp.int32)
        tally = Tally(tally.warm + accounting.bill_cents(run, x.rent),
                      tally.churn + accounting.bill_cents(evicted, sc.churn_cents),
                      tally.n_evicted + n_ev, tally.n_wrong + jnp.sum(wrong, dtype=jnp.int32),
                      tally.lemons_evicted + jnp.sum(evicted & s.lemon, dtype=jnp.int32),
                      jnp.where((tally.first == HOURS) & (n_ev > 0), x.hour, tally.first),
                      tally.run_hours + n_run.astype(jnp.float32) * x.length)
        return (new, tally), (new.rate, run, evicted, score, n_run, boot)

    p = pool.size
    zeros = jnp.zeros((), jnp.int32)
    slots = Slots(rate0, q0, lottery.lemon(d.month.lottery, sc.lottery),
                  jnp.ones(p, bool), jnp.full(p, -W, jnp.float32), jnp.zeros(p, jnp.int32),
                  begin, slot_dips.end, depth * rate0[:, None])
    tally = Tally(zeros, zeros, zeros, zeros, zeros, jnp.full((), HOURS, jnp.int32), jnp.zeros((), jnp.float32))
    (end, tally), (rates, run, evicted, score, n_run, boot) = jax.lax.scan(step, (slots, tally), xs)

    tok = accounting.round_tokens(rates, run, CardDips(end.lo, end.hi, end.weight), boot, a.boot_hours,
                                  xs.t, hourly_demand, a.period)
    covers = accounting.ideal_covers(rate0, pool)
    class_rent = jnp.asarray(a.rent(np.array([c.price_cents for c in pool.classes])))
    peaks = per_round(jnp.max, hourly_demand, a.period)
    ideal = jnp.sum(jax.vmap(lambda pk, c: accounting.ideal_cost(covers, pk, pool, c))(peaks, class_rent),
                    dtype=jnp.int32)

    out = month.report(tally.warm, tally.churn, ideal, n_run[0], tally.n_evicted, tally.n_wrong, tok, sc)
    n_present = jnp.sum(end.present, dtype=jnp.int32)
    out.update(
        n_replaced=tally.n_evicted if replace else zeros,
        mean_run=tally.run_hours / jnp.float32(HOURS),
        quality_end=accounting.ratio(tree_sum(jnp.where(end.present, end.quality, 0.0)),
                                     n_present.astype(jnp.float32)),
        lemons_end=jnp.sum(end.present & end.lemon, dtype=jnp.int32),
        lemons_evicted=tally.lemons_evicted,
        first_eviction_hour=tally.first,
    )
    if cards:
        out.update(rate=rates, score=score, evicted=evicted, run=run)
    return out


def autoscaler_month(key: jax.Array, sc: Scenario) -> dict[str, jax.Array]:
    """One §6 month from its key: ``outcome(draw(key, sc), sc)``."""
    return outcome(draw(key, sc), sc)
