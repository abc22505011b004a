"""One fleet-month (SPEC §1): draws, then a pure outcome of draws and scenario.

The data flow is one way: lottery → dips → window → eviction → run set →
accounting → checks. ``fleet_month(key, scenario)`` is one month; the engine
batches it with ``vmap``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .. import _validate as v
from ..engine import Column, Schema, of_kind
from ..kernels import materialise, uniforms
from ..units import HOURS, SECONDS
from . import accounting, checks, demand, dips, eviction, lottery, runset, structure, window
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
    values the pool allows, counts from 0 to the pool size."""
    v.instance("sc", sc, Scenario, SCENARIO)
    money = {c: accounting.money_support(sc.pool, sc.churn_cents, c) for c in MONEY}
    return Schema.of(COLUMNS, money=money, counts={c: sc.pool.size + 1 for c in COUNTS}, modes=MODE_COLUMNS)


class Draws(NamedTuple):
    """Every random number one fleet-month uses."""

    lottery: lottery.LotteryDraws
    dips: dips.DipDraws
    noise: jax.Array  # (pool,) float32 standard normal window errors
    demand: demand.BurstDraws | None
    structure: structure.Draws | None = None  # SPEC §1.4.1's terms (None: all zero)


def draw(key: jax.Array, sc: Scenario) -> Draws:
    """Every random number of the month, from one block of open uniforms per
    card and one for demand (each module turns its columns into variates)."""
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
    st = None if sc.structure is None else structure.draw(key, sc.structure, sc.pool.size)
    return Draws(lottery.draw(u[:, :lottery.UNIFORMS]), dips.draw(u[:, lottery.UNIFORMS + 1:], sc.dips),
                 window.draw(u[:, lottery.UNIFORMS]), demand.draw(u_demand, sc.demand), st)


def outcome(d: Draws, sc: Scenario, *, cards: bool = False) -> dict[str, jax.Array]:
    """SPEC §2 outputs of one month; money in int32 cents (``MONEY`` columns).

    With ``cards=True`` also the per-card ``true_rate``, ``score`` (tok/s),
    ``evicted`` and ``run`` (bool), each (pool,).
    """
    v.instance("d", d, Draws, "the Draws that draw(key, sc) returns")
    v.instance("sc", sc, Scenario, SCENARIO)
    cards = v.flag("cards", cards)
    pool = sc.pool
    rated = jnp.asarray(pool.rated())
    cents = jnp.asarray(pool.price_cents())

    # Values read by many consumers are materialised once (``materialise``):
    # XLA would otherwise recompute them inside each pairwise comparison.
    true_rate, card_dips = materialise((rated * lottery.quality(d.lottery, sc.lottery),
                                        dips.place(d.dips, sc.window.hours, sc.dips)))
    if sc.structure is None:
        score = materialise(window.score(window.mean_rate(true_rate, card_dips, sc.window), d.noise, sc.window))
    else:
        f, cum = structured(d, sc)
        score = materialise(structured_score(true_rate, card_dips, f, cum, d.noise, d.structure.common, sc))

    # Every card has served the window W at the decision (it started at -W).
    evicted = eviction.evict(score / rated, sc.evict_limit, sc.eviction, score=score, rated=rated,
                             served=sc.window.hours)
    hourly_demand = demand.profile(d.demand, sc.demand)
    run = materialise(runset.run_set(score, cents.astype(jnp.float32), evicted,
                                     runset.target(hourly_demand, sc.runset), sc.runset))

    if sc.structure is None:
        tok = accounting.month_tokens(true_rate, run, card_dips, hourly_demand, flat=sc.demand.shape == "flat")
    else:
        tok = structured_tokens(true_rate, run, card_dips, f, hourly_demand, sc)
    warm = accounting.bill_cents(run, cents)
    churn = accounting.bill_cents(evicted, sc.churn_cents)
    ideal = accounting.ideal_cents(true_rate, jnp.max(hourly_demand), pool)
    n_wrong = jnp.sum(checks.wrong(true_rate, evicted, pool), dtype=jnp.int32)
    out = report(warm, churn, ideal, jnp.sum(run, dtype=jnp.int32), jnp.sum(evicted, dtype=jnp.int32),
                 n_wrong, tok, sc)
    if cards:
        out.update(true_rate=true_rate, score=score, evicted=evicted, run=run)
    return out


def structured(d: Draws, sc: Scenario) -> tuple[jax.Array, jax.Array]:
    """SPEC §1.4.1's factor ``F_i(h) = (1 + c(h))·(1 + u_i(h))`` over the grid's hours
    ((pool, G + 730), or (G + 730,) without wander) and its ``structure.cumulative``."""
    st = sc.structure
    f = structure.factor(structure.fleet_factor(d.structure, st, sc.swing),
                         structure.wander_path(d.structure, st, sc.wander))
    f = materialise(f)
    return f, materialise(structure.cumulative(f))


def structured_score(true_rate: jax.Array, card_dips: dips.CardDips, f: jax.Array, cum: jax.Array,
                     eps: jax.Array, common: jax.Array | None, sc: Scenario, lo=None, hi=None, length=None,
                     restart=None) -> jax.Array:
    """(pool,) float32 tok/s: each card's score on its window ``[lo, hi)`` (default
    ``[−W, 0)``) of ``length`` hours, its mean rate taken hour by hour through
    the structure (SPEC §1.4.1), with window errors ``eps`` (pool,) and the window's
    shared error ``common`` (() or None).

    ``restart``: None, or ``(corr, q, qcum, rows)`` for §6's replacements: a card
    whose wander path restarted subtracts ``corr`` (pool,) times the window's
    integral of ``q[rows]`` ((rounds, G + 730): ``(1 + c(h))·ρ^(h − t_j)`` from
    restart hour ``t_j``), see ``structure.restarted``."""
    W = sc.window.hours
    p = true_rate.shape[0]
    lo = jnp.full(p, -W, jnp.float32) if lo is None else lo
    hi = jnp.zeros(p, jnp.float32) if hi is None else hi
    length = W if length is None else length
    s = structure.window_sum(f, cum, lo, hi, card_dips.begin, card_dips.end, card_dips.depth, sc.structure)
    if restart is not None:
        corr, q, qcum, rows = restart
        s = s - corr * structure.window_sum(q, qcum, lo, hi, card_dips.begin, card_dips.end, card_dips.depth,
                                            sc.structure, rows=rows)
    m = true_rate * jnp.maximum(0.0, s / length)
    return structure.score(m, eps, window.sigma_of(sc.window.sigma_hour, length), common, sc.structure,
                           sc.window, length)


def structured_tokens(true_rate: jax.Array, run: jax.Array, card_dips: dips.CardDips, f: jax.Array,
                      hourly_demand: jax.Array, sc: Scenario) -> accounting.Tokens:
    """The month's token totals with SPEC §1.4.1's terms: capacity hour by hour
    (``structure.capacity``), each run card's rate and its dips' losses scaled by ``F``."""
    p = true_rate.shape[0]
    rate = jnp.broadcast_to(true_rate[:, None], (p, HOURS))
    loss = structure.month_losses(card_dips.begin, card_dips.end, card_dips.depth * true_rate[:, None])
    cap = structure.capacity(jnp.broadcast_to(run[:, None], (p, HOURS)), rate, loss, f[..., sc.structure.grid:])
    t = structure.totals(hourly_demand, cap) * (SECONDS / HOURS)
    return accounting.Tokens(t[0], t[1], t[2], t[3])


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
