"""One fleet-month (SPEC §1): draws, then a pure outcome of draws and scenario.

The data flow is one way: lottery → dips → window → eviction → run set →
accounting → checks. ``fleet_month(key, scenario)`` is one month; the engine
batches it with ``vmap``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..engine import Column, Schema, of_kind
from ..kernels import materialise, tree_sum, uniforms
from ..units import HOURS, SECONDS
from . import accounting, checkpoints, checks, demand, dips, eviction, lottery, runset, structure, window
from .replicas import layout as replica_layout
from .replicas import outputs as replica_outputs
from .replicas import pace
from .scenario import Scenario

# Per-month outputs (SPEC §2) in order, each with its kind and units: money is int32
# cents until the host converts it ($), counts int32, floats float32, checks bool
# (their units: the pass rate's).
COLUMNS = {
    "bill": Column("money", "$"), "warm_bill": Column("money", "$"), "churn_bill": Column("money", "$"),
    "ideal_bill": Column("money", "$"), "convergence": Column("float", ""), "n_run": Column("count", "cards"),
    "n_evicted": Column("count", "cards"), "n_wrong": Column("count", "cards"), "wrong_share": Column("float", "share"),
    "demand_tokens": Column("float", "tokens"), "delivered_tokens": Column("float", "tokens"),
    "capacity_tokens": Column("float", "tokens"), "shortfall": Column("float", "share"),
    "idle_burn": Column("float", "$"), "pass_capacity": Column("pass", "share"),
    "pass_convergence": Column("pass", "share"), "pass_eviction": Column("pass", "share"),
}
KINDS = {c: col.kind for c, col in COLUMNS.items()}
OUTPUTS = tuple(COLUMNS)
MONEY, COUNTS, FLOATS, PASSES = (of_kind(COLUMNS, kind) for kind in ("money", "count", "float", "pass"))
MODE_COLUMNS = ("bill", "n_run", "n_evicted")
SCENARIO = "a Scenario (mc.presets.get(name), mc.load_scenario(path) or mc.Scenario(...))"


def schema(sc: Scenario) -> Schema:
    """The engine's column schema for a scenario's months: money columns with the
    values the pool allows, counts from 0 to the pool size (with replicas, SPEC §11,
    their own columns too)."""
    v.instance("sc", sc, Scenario, SCENARIO)
    money = {c: accounting.money_support(sc.pool, sc.churn_cents, c) for c in MONEY}
    counts = {c: sc.pool.size + 1 for c in COUNTS}
    if not sc.by_replica:
        return Schema.of(COLUMNS, money=money, counts=counts, modes=MODE_COLUMNS)
    counts.update(replica_outputs.counts(sc.pool))
    return Schema.of({**COLUMNS, **replica_outputs.COLUMNS}, money=money, counts=counts, modes=MODE_COLUMNS)


class Draws(NamedTuple):
    """Every random number one fleet-month uses."""

    lottery: lottery.LotteryDraws
    dips: dips.DipDraws
    noise: jax.Array  # (pool,) float32 standard normal window errors
    demand: demand.BurstDraws | None
    structure: structure.Draws | None = None  # SPEC §1.4.1's terms (None: all zero)


def draw(key: jax.Array, sc: Scenario, rounds: int = 1, replace: bool = False) -> Draws:
    """Every random number of the month, from one block of open uniforms per
    card and one for demand (each module turns its columns into variates); SPEC §6
    asks for its ``rounds`` and ``replace`` (static: the wander's checkpoints)."""
    v.instance("sc", sc, Scenario, SCENARIO)  # checked when traced, never on the device
    n_dips = dips.uniforms_needed(sc.dips)
    per_card = lottery.UNIFORMS + 1 + n_dips
    k_cards, k_demand = jax.random.split(key)
    # Not materialised: each column's hash fuses into the one producer that reads
    # it (true rate, dips, noise), and those are materialised in ``outcome``, so no
    # word is computed twice and the (pool, per_card) block never reaches memory.
    u = uniforms(k_cards, (sc.pool.size, per_card))
    u_demand = uniforms(k_demand, (demand.uniforms_needed(sc.demand),))
    # The structure's draws come from a key of their own, so today's are unchanged.
    st = None if sc.structure is None else structure.draw(key, sc.structure, sc.pool.size,
                                                               checkpoints.count(rounds, replace),
                                                               rounds if replace else 0)
    return Draws(lottery.draw(u[:, :lottery.UNIFORMS]), dips.draw(u[:, lottery.UNIFORMS + 1:], sc.dips),
                 window.draw(u[:, lottery.UNIFORMS]), demand.draw(u_demand, sc.demand), st)


def outcome(d: Draws, sc: Scenario, *, cards: bool = False) -> dict[str, jax.Array]:
    """SPEC §2 outputs of one month; money in int32 cents (``MONEY`` columns).

    With ``cards=True`` also the per-card ``true_rate``, ``score`` (tok/s),
    ``evicted`` and ``run`` (bool), each (pool,); with replicas (SPEC §11) per
    replica, each (replicas,).
    """
    v.instance("d", d, Draws, "the Draws that draw(key, sc) returns")
    v.instance("sc", sc, Scenario, SCENARIO)
    cards = v.flag("cards", cards)
    pool = sc.pool
    rated = jnp.asarray(pool.rated())
    cents = jnp.asarray(pool.price_cents())

    # Values read by many consumers are materialised once (``materialise``):
    # XLA would otherwise recompute them inside each pairwise comparison.
    q = lottery.quality(d.lottery, sc.lottery)
    true_rate, card_dips = materialise((rated * q, dips.place(d.dips, sc.window.hours, sc.dips)))
    if sc.by_replica:
        return replica_outcome(d, sc, q, true_rate, card_dips, cards)
    sf = None
    if sc.structure is None:
        score = materialise(window.score(window.mean_rate(true_rate, card_dips, sc.window), d.noise, sc.window))
    else:
        sf = structured(d, sc, np.zeros(1, np.int32), None)
        score = materialise(structured_score(true_rate, card_dips, sf, d.noise, d.structure.common, sc))

    # Every card has served the window W at the decision (it started at -W).
    evicted = eviction.evict(score / rated, sc.evict_limit, sc.eviction, score=score, rated=rated,
                             served=sc.window.hours)
    hourly_demand = demand.profile(d.demand, sc.demand)
    run = materialise(runset.run_set(score, cents.astype(jnp.float32), evicted,
                                     runset.target(hourly_demand, sc.runset), sc.runset))
    tok = month_tokens(d, sc, true_rate, run, card_dips, hourly_demand, sf)
    warm = accounting.bill_cents(run, cents)
    churn = accounting.bill_cents(evicted, sc.churn_cents)
    ideal = accounting.ideal_cents(true_rate, jnp.max(hourly_demand), pool)
    n_wrong = jnp.sum(checks.wrong(true_rate, evicted, pool), dtype=jnp.int32)
    out = report(warm, churn, ideal, jnp.sum(run, dtype=jnp.int32), jnp.sum(evicted, dtype=jnp.int32),
                 n_wrong, tok, sc)
    if cards:
        out.update(true_rate=true_rate, score=score, evicted=evicted, run=run)
    return out


def month_tokens(d: Draws, sc: Scenario, true_rate: jax.Array, run: jax.Array, card_dips: dips.CardDips,
                 hourly_demand: jax.Array, sf: "Structured | None") -> accounting.Tokens:
    """The month's token totals of the run set (cards or replicas), with SPEC
    §1.4.1's terms when ``sf`` holds them."""
    if sf is None:
        return accounting.month_tokens(true_rate, run, card_dips, hourly_demand, flat=sc.demand.shape == "flat")
    n = true_rate.shape[0]
    return structured_tokens(sf, true_rate[None], run[None], jnp.full((1, n), -sc.window.hours),
                             (card_dips.begin, card_dips.end, card_dips.depth * true_rate[:, None]),
                             jnp.zeros(1, jnp.float32), 1.0, None, hourly_demand, d.structure.bridge, sc, HOURS)


def replica_outcome(d: Draws, sc: Scenario, q: jax.Array, true_rate: jax.Array, card_dips: dips.CardDips,
                    cards: bool) -> dict[str, jax.Array]:
    """SPEC §11's month: the cards form replicas, each paced by its slowest member
    (``replicas.pace``); the window scores replicas (one error each, its first
    card's), and the rule ranks replicas (``evict = "replica"``: ``tp`` churn fees
    each) or members on their own windows (``"member"``: one fee each, and the
    replica is out of the run set). The run set, capacity and the ideal count
    replicas; a replica is wrongly evicted when its slowest card is at or above its
    class's median card."""
    pool, lay = sc.pool, replica_layout.layout(sc.pool)
    rated, cents = jnp.asarray(lay.rated), jnp.asarray(lay.cents)
    unit_rate, unit_dips = materialise((rated * pace.quality(q, lay), pace.dips(q, card_dips, lay)))
    eps = d.noise[lay.first]
    sf = None
    if sc.structure is None:
        score = materialise(window.score(window.mean_rate(unit_rate, unit_dips, sc.window), eps, sc.window))
    else:
        sf = structured(d, sc, np.zeros(1, np.int32), None)
        score = materialise(structured_score(unit_rate, unit_dips, sf, eps, d.structure.common, sc))
    per_card = jnp.asarray(pool.rated())
    if sc.eviction.evict == "member":  # each card on its own window and error
        if sc.structure is None:
            own = window.score(window.mean_rate(true_rate, card_dips, sc.window), d.noise, sc.window)
        else:
            own = structured_score(true_rate, card_dips, sf, d.noise, d.structure.common, sc)
        gone = eviction.evict(own / per_card, sc.evict_limit, sc.eviction, score=own, rated=per_card,
                              served=sc.window.hours)
        evicted = jnp.any(gone[lay.members], axis=-1)
        churn = accounting.bill_cents(gone, sc.churn_cents)
        wrong = checks.wrong(true_rate, gone, pool)
        members = n_evicted = jnp.sum(gone, dtype=jnp.int32)
    else:
        evicted = eviction.evict(score / rated, sc.evict_limit, sc.eviction, score=score, rated=rated,
                                 served=sc.window.hours)
        fees = jnp.sum(jnp.where(lay.own, jnp.asarray(sc.churn_cents)[lay.members], 0), axis=-1, dtype=jnp.int32)
        churn = accounting.bill_cents(evicted, fees)
        wrong = replica_outputs.wrong_replicas(true_rate, evicted, lay, pool)
        n_evicted = jnp.sum(evicted, dtype=jnp.int32)
        members = jnp.sum(jnp.where(evicted, jnp.asarray(lay.tp), 0), dtype=jnp.int32)
    hourly_demand = demand.profile(d.demand, sc.demand)
    run = materialise(runset.run_set(score, cents.astype(jnp.float32), evicted,
                                     runset.target(hourly_demand, sc.runset), sc.runset))
    tok = month_tokens(d, sc, unit_rate, run, unit_dips, hourly_demand, sf)
    warm = accounting.bill_cents(run, cents)
    ideal = accounting.ideal_cents(unit_rate, jnp.max(hourly_demand), lay.pool)
    out = report(warm, churn, ideal, jnp.sum(run, dtype=jnp.int32), n_evicted,
                 jnp.sum(wrong, dtype=jnp.int32), tok, sc)
    lemon = lottery.lemon(d.lottery, sc.lottery)
    present_end = ~gone if sc.eviction.evict == "member" else ~evicted[lay.unit_of]  # (pool,) the cards still in
    out.update(replica_outputs.report(lemon, members, lay, lemon, present_end))
    if cards:
        out.update(true_rate=unit_rate, score=score, evicted=evicted, run=run)
    return out


class Structured(NamedTuple):
    """SPEC §1.4.1's terms in one month: the fleet's factor over the grid's hours and
    its cumulative, and with wander the checkpoints' laws and each slot's chain."""

    one_c: jax.Array  # (G + 730,) float32 ``1 + c(h)``
    cum: jax.Array  # (G + span + 1,) float32 its ``structure.cumulative`` up to ``checkpoints.span``
    field: checkpoints.Field | None = None
    chain: checkpoints.Chain | None = None


def structured(d: Draws, sc: Scenario, starts: np.ndarray, boot) -> Structured:
    """The month's factor, and with wander its checkpoints for rounds at ``starts``
    (static) with replacements serving ``boot`` h after placement (None: none)."""
    st = sc.structure
    one_c = materialise(structure.fleet_factor(d.structure, st, sc.swing))
    # The prefix only as far as a window can end (§1: hour 0; ``checkpoints.span``).
    cum = materialise(structure.cumulative(one_c[:st.grid + checkpoints.span(starts, boot)]))
    if not st.wander:
        return Structured(one_c, cum)
    f = checkpoints.field(one_c, st, sc.wander, sc.window.hours, starts, boot)
    return Structured(one_c, cum, f, checkpoints.chain(d.structure.wander, f, sc.wander))


def structured_score(true_rate: jax.Array, card_dips: dips.CardDips, sf: Structured, eps: jax.Array,
                     common: jax.Array | None, sc: Scenario, lo=None, hi=None, length=None,
                     extra=None) -> jax.Array:
    """(pool,) float32 tok/s: each card's score on its window ``[lo, hi)`` (default
    ``[−W, 0)``) of ``length`` hours: ``r·q·max(0, (∫(1 + c) − Σ δ∫_dip (1 + c) + ∫(1 +
    c)·u)/w)`` (SPEC §1.4.1), with window errors ``eps`` (pool,) and the window's shared
    error ``common`` (() or None). ``extra``: (pool,) h added to the wander's integral
    (a replacement's own path, ``checkpoints.restarted_window``)."""
    W = sc.window.hours
    p = true_rate.shape[0]
    lo = jnp.full(p, -W, jnp.float32) if lo is None else lo
    hi = jnp.zeros(p, jnp.float32) if hi is None else hi
    length = W if length is None else length
    s = structure.window_sum(sf.one_c, sf.cum, lo, hi, card_dips.begin, card_dips.end, card_dips.depth,
                             sc.structure)
    if sf.chain is not None:
        s = s + checkpoints.window(sf.chain, sf.field, sc.structure, lo, hi)
    if extra is not None:
        s = s + extra
    m = true_rate * jnp.maximum(0.0, s / length)
    return structure.score(m, eps, window.sigma_of(sc.window.sigma_hour, length), common, sc.structure,
                           sc.window, length)


def structured_tokens(sf: Structured, rate: jax.Array, run: jax.Array, start: jax.Array, loss_dips: tuple,
                      boot: jax.Array, boot_hours, restarts, hourly_demand: jax.Array, xi, sc: Scenario,
                      period: int) -> accounting.Tokens:
    """The month's token totals with SPEC §1.4.1's terms (§1 as one round of §6):
    each hour's run rate less its dips and booting cards, plus the run cards' wander
    (``checkpoints.hourly``), times the fleet's factor (``checkpoints.tokens``).

    Arguments:
        rate, run, start: (rounds, pool) each round's true rates, run set, serving start.
        loss_dips: (begin, end, weight) (pool, dips) each slot's dips, cut to their
            owners, weight in tok/s. boot: (rounds,) float32 tok/s booting replacements,
            for ``boot_hours`` h from each round's start.
        restarts: None or ``(unit, tau, corr)`` (``checkpoints.hourly``).
        xi: (731,) float32 the month's bridge normals (None without wander).
    """
    rounds, slots = run.shape
    begin, end, weight = loss_dips
    starts = jnp.arange(rounds, dtype=jnp.float32) * period
    live = jnp.concatenate([run, jnp.ones((rounds, 1), bool)], axis=1)
    groups = ((begin, end, weight, jnp.arange(slots, dtype=jnp.int32)[:, None]),
              (starts, starts + boot_hours, boot, jnp.int32(slots)))
    total = jax.vmap(tree_sum)(jnp.where(run, rate, 0.0))
    wander = None
    if sf.chain is not None:
        wander = checkpoints.hourly(sf.chain, sf.field, sc.structure, sc.wander, xi, rate, run, start, period,
                                    restarts)
    return checkpoints.tokens(sf.one_c, sc.structure, groups, live, total, hourly_demand, period, wander)


def report(warm: jax.Array, churn: jax.Array, ideal: jax.Array, n_run: jax.Array, n_evicted: jax.Array,
           n_wrong: jax.Array, tok: accounting.Tokens, sc: Scenario) -> dict[str, jax.Array]:
    """SPEC §2 outputs from a month's bills (() int32 cents), counts (() int32)
    and token totals, with the three checks."""
    bill = warm + churn
    convergence = accounting.ratio(ideal.astype(jnp.float32), bill.astype(jnp.float32), empty=1.0)
    shortfall = accounting.ratio(tok.unmet, tok.demand)
    out = {
        "bill": bill, "warm_bill": warm, "churn_bill": churn, "ideal_bill": ideal,
        "convergence": convergence,
        "n_run": n_run, "n_evicted": n_evicted, "n_wrong": n_wrong,
        "wrong_share": accounting.ratio(n_wrong.astype(jnp.float32), n_evicted.astype(jnp.float32)),
        "demand_tokens": tok.demand, "delivered_tokens": tok.delivered,
        "capacity_tokens": tok.capacity, "shortfall": shortfall,
        "idle_burn": accounting.idle_burn(warm.astype(jnp.float32) / 100.0, tok),
    }
    out.update(checks.verdict(shortfall, convergence, n_wrong, sc.checks))
    return out


def fleet_month(key: jax.Array, sc: Scenario) -> dict[str, jax.Array]:
    """One fleet-month from its key: ``outcome(draw(key, sc), sc)``."""
    return outcome(draw(key, sc), sc)
