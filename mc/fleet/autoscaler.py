"""The autoscaler over a month (SPEC §6): rounds of scoring and eviction, with
hysteresis, replacement tickets, a run set per round and prorated rent.

The month is a ``lax.scan`` over its rounds, each round (``round_step``) the
spec's steps in turn on the cards in the pool's slots: ``score`` (§1.4's window),
``mark_and_evict`` (§1.5's policy, with strikes), ``replace``, ``run_set`` (§1.6)
and ``bill`` (§1.8's accounting, prorated). Round 0 and the original cards use
exactly §1's draws (``month.draw``); window errors of later rounds and the
replacement tickets come from a key of their own, so with one round and no
replacement every output is §1's to the bit. The hourly capacity pass runs once after the scan
(``accounting.round_tokens``). What the steps carry and hand on is ``mc.fleet.roundstate``.

SPEC §10 (failures, spot preemptions) acts between rounds through one seam,
``mc.fleet.outages.seam``, called only when one of its terms is on (``Scenario.outages``);
its state rides in the carry's and the trace's ``ext`` fields, and its capacity and
hour-weighted bill replace the round-wise ones (``outages.ledger.settle``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..engine import Column, Schema, of_kind
from ..kernels import masked_median, materialise, tree_sum, uniforms
from ..units import HOURS, SECONDS
from . import accounting, checkpoints, checks, demand, dips, eviction, lottery, month, runset, window
from .dips import CardDips
from .outages import events as outage_events
from .outages import ledger as outage_ledger
from .outages import seam as outage_seam
from .roundstate import Chosen, Fixed, Round, Scored, Slots, Tally, Trace
from .scenario import Scenario

# The §1 outputs, then §6's own (SPEC §6 "Extra outputs"), each with its kind and units.
COLUMNS = {**month.COLUMNS, "n_replaced": Column("count", "cards"), "mean_run": Column("float", "cards"),
           "quality_end": Column("float", ""), "lemons_end": Column("count", "cards"),
           "lemons_evicted": Column("count", "cards"), "first_eviction_hour": Column("count", "h")}
KINDS = {c: col.kind for c, col in COLUMNS.items()}
OUTPUTS = tuple(COLUMNS)
MONEY, COUNTS, FLOATS, PASSES = (of_kind(COLUMNS, kind) for kind in ("money", "count", "float", "pass"))
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
    if sc.outages is None:
        return Schema.of(COLUMNS, money=money, counts=counts, modes=month.MODE_COLUMNS)
    st = sc.outages  # SPEC §10: bills hour-weighted, counted on the host
    money = {c: None for c in (*MONEY, "spot_bill")}
    counts.update(n_failed=size * st.n_fail + 1, n_preempted=size * (st.n_lone + st.n_cycles) + 1)
    return Schema.of({**COLUMNS, **outage_ledger.COLUMNS}, money=money, counts=counts, modes=month.MODE_COLUMNS)


class Draws(NamedTuple):
    """Every random number of one §6 month."""

    month: month.Draws  # §1's draws: the original cards, the slots' dips, round 0's errors, demand
    noise: jax.Array  # (rounds, pool) float32 standard normal window errors (row 0 unused: §1's)
    tickets: lottery.LotteryDraws  # (rounds, pool) each: the card placed in slot i at t_k
    outages: outage_events.Raw | None = None  # SPEC §10's, from a stream of their own (None: terms off)


def draw(key: jax.Array, sc: Scenario) -> Draws:
    """§1's draws from ``key``, and a block of open uniforms per round and slot
    from ``fold_in(key, STREAM)``."""
    k, p = sc.autoscaler.rounds, sc.pool.size
    u = uniforms(jax.random.fold_in(key, STREAM), (k, p, ROUND_UNIFORMS))
    t = lottery.draw(u[..., 1:].reshape(k * p, lottery.UNIFORMS))
    tickets = lottery.LotteryDraws(t.z.reshape(k, p), t.u_lemon.reshape(k, p))
    raw = None if sc.outages is None else outage_events.draw(key, sc.outages, p, sc.dips.max_count)
    return Draws(month.draw(key, sc, k, sc.autoscaler.replace), window.draw(u[..., 0]), tickets, raw)


def per_round(fn, hourly: jax.Array, period: int) -> jax.Array:
    """(rounds,) ``fn`` of each round's hours of ``hourly`` (730,)."""
    full = HOURS // period
    out = jax.vmap(fn)(hourly[:full * period].reshape(full, period))
    if HOURS % period:
        out = jnp.concatenate([out, fn(hourly[full * period:])[None]])
    return out


def score(s: Slots, x: Round, f: Fixed, sc: Scenario) -> Scored:
    """Scoring at ``t_k``: each card in a slot on its window ``[max(t_k − W, start),
    t_k)`` of ``w`` hours, ``s = max(0, m·(1 + σ(w)·ε))`` (``m`` its mean rate less
    its dips); a card with ``w ≤ 0`` scores ``r`` × the scored cards' median ``s / r``.

    Returns:
        ``Scored``: (pool,) float32 tok/s scores, (pool,) bool scored, () float32 typical.
    """
    lo = jnp.maximum(x.t - sc.window.hours, s.start)
    length = x.t - lo
    scored = s.present & (length > 0)
    length = jnp.where(scored, length, 1.0)
    if sc.structure is None:
        m = window.mean_rate_over(s.rate, CardDips(s.lo, s.hi, f.depth), lo[:, None], x.t, length)
        raw = window.noisy(m, x.eps, window.sigma_of(sc.window.sigma_hour, length))
    else:  # SPEC §1.4.1: the window's mean hour by hour, as §1's
        hi = jnp.full(lo.shape, x.t)
        extra = None if f.unit is None else checkpoints.restarted_window(f.unit, f.sf.field, sc.structure, s.tau,
                                                                         s.corr, lo, hi)
        raw = month.structured_score(s.rate, CardDips(s.lo, s.hi, f.depth), f.sf, x.eps, f.common, sc,
                                     lo=lo, hi=hi, length=length, extra=extra)
    typical = jnp.where(jnp.any(scored), masked_median(raw / f.rated, scored), 1.0)
    return Scored(jnp.where(scored, raw, f.rated * typical), scored, typical)


def mark_and_evict(s: Slots, x: Round, scored: Scored, f: Fixed, sc: Scenario) -> tuple[jax.Array, jax.Array]:
    """Eviction at ``t_k``: the policy marks among the eligible cards (scored, and
    served at least ``min_age`` h); a card marked in ``strikes`` consecutive rounds
    is evicted, and an unmarked round resets its count.

    Returns:
        ``(marks, evicted)``: (pool,) int32 consecutive marks, (pool,) bool.
    """
    a = sc.autoscaler
    eligible = scored.scored & (x.t - s.start >= a.min_age)
    marked = eviction.mark(scored.score / f.rated, eligible, sc.evict_limit, sc.eviction, score=scored.score,
                           rated=f.rated, served=jnp.maximum(x.t - s.start, 0.0), strikes=s.marks)
    marks = jnp.where(marked, s.marks + 1, 0)
    return marks, marks >= a.strikes


def replace(s: Slots, x: Round, marks: jax.Array, evicted: jax.Array, f: Fixed, sc: Scenario) -> Slots:
    """The slots after ``t_k``'s evictions: with ``replace`` an evicted card's slot
    takes the round's ticket, serving from ``t_k + boot_hours``, else it empties.
    Dips of a leaving card end at ``t_k``; dips beginning from ``t_k`` on belong to
    the slot's new card (their loss its rate × δ), or to none.

    Arguments:
        marks: (pool,) int32 consecutive marks; evicted: (pool,) bool.
    """
    old = evicted[:, None] & (f.begin < x.t)
    future = evicted[:, None] & (f.begin >= x.t)
    s = s._replace(marks=jnp.where(evicted, 0, marks), hi=jnp.where(old, jnp.minimum(s.hi, x.t), s.hi))
    if not sc.autoscaler.replace:
        return s._replace(rate=jnp.where(evicted, 0.0, s.rate), present=s.present & ~evicted,
                          weight=jnp.where(future, 0.0, s.weight))
    rate = jnp.where(evicted, f.rated * x.ticket_quality, s.rate)
    start = jnp.where(evicted, x.t + sc.autoscaler.boot_hours, s.start)
    if s.tau is not None:  # the new card's own wander path starts at t_k
        s = s._replace(tau=jnp.where(evicted, x.index, s.tau), corr=jnp.where(evicted, x.corr, s.corr))
    return s._replace(rate=rate, quality=jnp.where(evicted, x.ticket_quality, s.quality),
                      lemon=jnp.where(evicted, x.ticket_lemon, s.lemon), start=start,
                      lo=jnp.where(future, jnp.maximum(f.begin, start[:, None]), s.lo),
                      weight=jnp.where(future, f.depth * rate[:, None], s.weight))


def run_set(new: Slots, scored: Scored, evicted: jax.Array, x: Round, f: Fixed, sc: Scenario) -> Chosen:
    """Run set at ``t_k``: §1.6's greedy over the cards in slots after eviction to
    the round's target, a fresh card ranked on ``r`` × typical.

    Arguments:
        new: the slots after eviction (``replace``); evicted: (pool,) bool.
    """
    fresh = sc.autoscaler.replace
    ranked = jnp.where(evicted, f.rated * scored.typical, scored.score) if fresh else scored.score
    run = runset.run_set(ranked, f.price, ~new.present, x.target, sc.runset)
    boot = tree_sum(jnp.where(evicted & run, new.rate, 0.0)) if fresh else jnp.zeros((), jnp.float32)
    return Chosen(run, ranked, boot)


def bill(tally: Tally, s: Slots, x: Round, evicted: jax.Array, run: jax.Array, sc: Scenario) -> Tally:
    """Billing for round ``k``: each run card's prorated rent (``Round.rent``, cents)
    and each eviction's churn fee; and the month's counts: evictions, wrong ones
    (at or above their class's median true rate among the cards in slots ``s``
    before the round's evictions), evicted lemons, the first eviction's hour,
    run-set card-hours.

    Arguments:
        s: the slots before the round's evictions; evicted, run: (pool,) bool.
    """
    wrong = checks.wrong(s.rate, evicted, sc.pool, s.present)
    n_ev = jnp.sum(evicted, dtype=jnp.int32)
    n_run = jnp.sum(run, dtype=jnp.int32)
    return tally._replace(
        warm=tally.warm + accounting.bill_cents(run, x.rent),
        churn=tally.churn + accounting.bill_cents(evicted, sc.churn_cents),
        n_evicted=tally.n_evicted + n_ev, n_wrong=tally.n_wrong + jnp.sum(wrong, dtype=jnp.int32),
        lemons_evicted=tally.lemons_evicted + jnp.sum(evicted & s.lemon, dtype=jnp.int32),
        first=jnp.where((tally.first == HOURS) & (n_ev > 0), x.hour, tally.first),
        run_hours=tally.run_hours + n_run.astype(jnp.float32) * x.length)


def round_step(carry: tuple[Slots, Tally], x: Round, f: Fixed, sc: Scenario) -> tuple[tuple[Slots, Tally], Trace]:
    """One round at ``t_k`` (SPEC §6): score, mark and evict, replace, run set, bill;
    with SPEC §10's terms on, the seam's steps around them (``outages.seam``)."""
    s, tally = carry
    outages = sc.outages is not None
    if outages:
        s = outage_seam.arrive(s, x.t)
    scored = score(s, x, f, sc)
    marks, evicted = mark_and_evict(s, x, scored, f, sc)
    new = replace(s, x, marks, evicted, f, sc)
    pieces = None
    if outages:
        new = outage_seam.place(s, new, evicted, x.t, f.ext, sc)
        f = f._replace(price=outage_seam.price_now(new.ext, f.price, sc))
    chosen = run_set(new, scored, evicted, x, f, sc)
    tally = bill(tally, s, x, evicted, chosen.run, sc)
    if outages:
        k, t1 = x.ext
        new, pieces = outage_seam.between(new, chosen.run, scored, evicted, chosen.score / f.price, x.t, t1, k,
                                          f.ext, sc)
    return (new, tally), Trace(new.rate, chosen.run, evicted, chosen.score, jnp.sum(chosen.run, dtype=jnp.int32),
                               chosen.boot, new.start, new.tau, new.corr, pieces)


def outcome(d: Draws, sc: Scenario, *, cards: bool = False) -> dict[str, jax.Array]:
    """SPEC §6 outputs of one month (``OUTPUTS``); money in int32 cents.

    With ``cards=True`` also, per round and slot ((rounds, pool) each): the
    card's true ``rate`` (tok/s, 0 when empty) and ``score`` (tok/s, the run set's
    score), ``evicted`` and ``run`` (bool).
    """
    pool, a, W = sc.pool, sc.autoscaler, sc.window.hours
    if sc.by_replica:  # checked when traced: a month of replicas has rounds of its own
        raise ValueError("a scenario with replicas (a pool entry's tp > 1, or evict = \"member\") runs its rounds "
                         "in mc.fleet.replicas.rounds; mc.fleet.model(scenario) picks the month")
    rated = jnp.asarray(pool.rated())

    q0 = lottery.quality(d.month.lottery, sc.lottery)
    rate0, slot_dips = materialise((rated * q0, dips.place(d.month.dips, W, sc.dips)))
    hourly_demand = demand.profile(d.month.demand, sc.demand)
    ticket_q = lottery.quality(d.tickets, sc.lottery)
    noise = jnp.concatenate([d.month.noise[None], d.noise[1:]])
    xs = Round(t=jnp.asarray(a.starts(), jnp.float32), hour=jnp.asarray(a.starts()),
               length=jnp.asarray(a.lengths(), jnp.float32), eps=noise, ticket_quality=ticket_q,
               ticket_lemon=lottery.lemon(d.tickets, sc.lottery),
               target=per_round(lambda h: runset.target(h, sc.runset), hourly_demand, a.period),
               rent=jnp.asarray(a.rent(pool.price_cents())))
    fixed = Fixed(rated=rated, price=jnp.asarray(pool.price_cents()).astype(jnp.float32), begin=slot_dips.begin,
                  depth=slot_dips.depth)
    restarts = sc.structure is not None and sc.structure.wander and a.replace
    if sc.structure is not None:
        fixed, xs = structured(d, sc, fixed, xs, restarts)

    p = pool.size
    zeros = jnp.zeros((), jnp.int32)
    hold = None
    if sc.outages is not None:  # SPEC §10
        env, hold = outage_seam.start(d.outages, sc, rated, slot_dips, p)
        fixed = fixed._replace(ext=env)
        xs = xs._replace(ext=(jnp.arange(a.rounds, dtype=jnp.int32), xs.t + xs.length))
    slots = Slots(rate=rate0, quality=q0, lemon=lottery.lemon(d.month.lottery, sc.lottery), present=jnp.ones(p, bool),
                  start=jnp.full(p, -W, jnp.float32), marks=jnp.zeros(p, jnp.int32), lo=slot_dips.begin,
                  hi=slot_dips.end, weight=slot_dips.depth * rate0[:, None],
                  tau=jnp.full(p, -1, jnp.int32) if restarts else None,
                  corr=jnp.zeros(p, jnp.float32) if restarts else None, ext=hold)
    tally = Tally(warm=zeros, churn=zeros, n_evicted=zeros, n_wrong=zeros, lemons_evicted=zeros,
                  first=jnp.full((), HOURS, jnp.int32), run_hours=jnp.zeros((), jnp.float32))
    (end, tally), trace = jax.lax.scan(lambda c, x: round_step(c, x, fixed, sc), (slots, tally), xs)

    if sc.outages is not None:  # SPEC §10: its own ledger, and the ideal at billed prices
        factor = sc.spot.price_factor if sc.outages.any_spot else None
        ideal = ideal_bill(rate0, hourly_demand, sc, factor)
        out = outage_seam.outcome(xs, fixed, end, tally, trace, hourly_demand, ideal, month.report, sc)
        if cards:
            out.update(rate=trace.rate, score=trace.score, evicted=trace.evicted, run=trace.run)
        return out
    if sc.structure is None:
        tok = accounting.round_tokens(trace.rate, trace.run, CardDips(end.lo, end.hi, end.weight), trace.boot,
                                      a.boot_hours, xs.t, hourly_demand, a.period)
    else:
        tok = structured_tokens(trace, end, fixed, hourly_demand, d.month.structure.bridge, sc)
    ideal = ideal_bill(rate0, hourly_demand, sc)

    out = month.report(tally.warm, tally.churn, ideal, trace.n_run[0], tally.n_evicted, tally.n_wrong, tok, sc)
    out.update(extras(tally, end, a))
    if cards:
        out.update(rate=trace.rate, score=trace.score, evicted=trace.evicted, run=trace.run)
    return out


def extras(tally, end, a) -> dict[str, jax.Array]:
    """SPEC §6's own outputs from the month's totals (``n_evicted``, ``run_hours``,
    ``lemons_evicted``, ``first``) and the slots at its end (``present``, ``quality``,
    ``lemon``, (pool,) each)."""
    n_present = jnp.sum(end.present, dtype=jnp.int32)
    return {"n_replaced": tally.n_evicted if a.replace else jnp.zeros((), jnp.int32),
            "mean_run": tally.run_hours / jnp.float32(HOURS),
            "quality_end": accounting.ratio(tree_sum(jnp.where(end.present, end.quality, 0.0)),
                                            n_present.astype(jnp.float32)),
            "lemons_end": jnp.sum(end.present & end.lemon, dtype=jnp.int32),
            "lemons_evicted": tally.lemons_evicted, "first_eviction_hour": tally.first}


def ideal_bill(rate0: jax.Array, hourly_demand: jax.Array, sc: Scenario, factor=None, pool=None) -> jax.Array:
    """() int32 cents: per round, the cheapest cover of its peak from the original
    cards at prorated rents (SPEC §10: a spot class at ``factor`` of its price);
    ``pool`` the units covered (default the scenario's cards; SPEC §11: its replicas)."""
    pool, a = sc.pool if pool is None else pool, sc.autoscaler
    covers = accounting.ideal_covers(rate0, pool)
    class_rent = jnp.asarray(a.rent(np.array([c.price_cents for c in pool.classes])))
    if factor is not None:
        spot = jnp.asarray([c.spot for c in pool.classes])
        class_rent = jnp.where(spot, jnp.round(class_rent.astype(jnp.float32) * factor).astype(jnp.int32), class_rent)
    peaks = per_round(jnp.max, hourly_demand, a.period)
    return jnp.sum(jax.vmap(lambda pk, c: accounting.ideal_cost(covers, pk, pool, c))(peaks, class_rent),
                   dtype=jnp.int32)


def structured(d: Draws, sc: Scenario, fixed: Fixed, xs: Round, restarts: bool) -> tuple[Fixed, Round]:
    """SPEC §1.4.1 in §6: the fleet's factor and the slots' wander chains through
    every round's checkpoints, and with replacements each round's unit chain and
    each slot's ``Δ`` should a card be placed in it at ``t_k`` (``checkpoints.restart``)."""
    a = sc.autoscaler
    sf = month.structured(d.month, sc, a.starts(), a.boot_hours if a.replace else None)
    fixed = fixed._replace(sf=sf, common=d.month.structure.common)
    if not restarts:
        return fixed, xs
    fixed = fixed._replace(unit=checkpoints.unit(sf.field, a.starts()))
    corr = checkpoints.restart(sf.chain, sf.field, sc.wander, d.month.structure.restart, a.starts())
    return fixed, xs._replace(index=jnp.arange(a.rounds, dtype=jnp.int32), corr=corr)


def structured_tokens(trace: Trace, end: Slots, f: Fixed, hourly_demand: jax.Array, xi,
                      sc: Scenario) -> accounting.Tokens:
    """The month's token totals with SPEC §1.4.1's terms (``month.structured_tokens``):
    each round's run set, each card's rate from its start (time-weighted in its
    first hour) and its dips while it runs, its wander (its own path from its
    placement), all times the fleet's factor."""
    a = sc.autoscaler
    restarts = None if f.unit is None else (f.unit, trace.tau, trace.corr)
    return month.structured_tokens(f.sf, trace.rate, trace.run, trace.start, (end.lo, end.hi, end.weight),
                                   trace.boot, a.boot_hours, restarts, hourly_demand, xi, sc, a.period)


def autoscaler_month(key: jax.Array, sc: Scenario) -> dict[str, jax.Array]:
    """One §6 month from its key: ``outcome(draw(key, sc), sc)``."""
    return outcome(draw(key, sc), sc)
