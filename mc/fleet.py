"""One fleet-month (SPEC §1): draws, then a pure outcome of draws and scenario.

The data flow is one way: lottery → dips → window → eviction → run set →
accounting → checks. ``fleet_month(key, scenario)`` is one month; the engine
batches it with ``vmap``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from . import accounting, checks, demand, dips, eviction, lottery, runset, window
from ._random import uniforms
from ._reduce import materialise
from .scenario import Scenario

# Per-month outputs (SPEC §2); money is int32 cents until the host converts it.
MONEY = ("bill", "warm_bill", "churn_bill", "ideal_bill")
COUNTS = ("n_run", "n_evicted", "n_wrong")
FLOATS = ("convergence", "wrong_share", "demand_tokens", "delivered_tokens", "capacity_tokens",
          "shortfall", "idle_burn")
PASSES = ("pass_capacity", "pass_convergence", "pass_eviction")
OUTPUTS = ("bill", "warm_bill", "churn_bill", "ideal_bill", "convergence", "n_run", "n_evicted",
           "n_wrong", "wrong_share", "demand_tokens", "delivered_tokens", "capacity_tokens",
           "shortfall", "idle_burn") + PASSES


class Draws(NamedTuple):
    """Every random number one fleet-month uses."""

    lottery: lottery.LotteryDraws
    dips: dips.DipDraws
    noise: jax.Array  # (pool,) float32 standard normal window errors
    demand: demand.BurstDraws | None


def draw(key: jax.Array, sc: Scenario) -> Draws:
    """Every random number of the month, from one block of open uniforms per
    card and one for demand (each module turns its columns into variates)."""
    n_dips = dips.uniforms_needed(sc.dips)
    per_card = lottery.UNIFORMS + 1 + n_dips
    k_cards, k_demand = jax.random.split(key)
    # Materialised once: otherwise XLA fuses the bit hash into each consumer
    # and recomputes card blocks of words inside every pairwise comparison.
    u = materialise(uniforms(k_cards, (sc.pool.size, per_card)))
    u_demand = uniforms(k_demand, (demand.uniforms_needed(sc.demand),))
    return Draws(lottery.draw(u[:, :lottery.UNIFORMS]), dips.draw(u[:, lottery.UNIFORMS + 1:], sc.dips),
                 window.draw(u[:, lottery.UNIFORMS]), demand.draw(u_demand, sc.demand))


def outcome(d: Draws, sc: Scenario, *, cards: bool = False) -> dict[str, jax.Array]:
    """SPEC §2 outputs of one month; money in int32 cents (``MONEY`` columns).

    With ``cards=True`` also the per-card ``true_rate``, ``score`` (tok/s),
    ``evicted`` and ``run`` (bool), each (pool,).
    """
    pool = sc.pool
    rated = jnp.asarray(pool.rated())
    cents = jnp.asarray(pool.price_cents())

    # Values read by many consumers are materialised once (``materialise``):
    # XLA would otherwise recompute them inside each pairwise comparison.
    true_rate, card_dips = materialise((rated * lottery.quality(d.lottery, sc.lottery),
                                        dips.place(d.dips, sc.window.hours, sc.dips)))
    score = materialise(window.score(window.mean_rate(true_rate, card_dips, sc.window), d.noise, sc.window))

    evicted = eviction.evict(score / rated, sc.evict_limit, sc.eviction)
    hourly_demand = demand.profile(d.demand, sc.demand)
    run = materialise(runset.run_set(score, cents.astype(jnp.float32), evicted,
                                     runset.target(hourly_demand, sc.runset), sc.runset))

    tok = accounting.month_tokens(true_rate, run, card_dips, hourly_demand)
    warm = accounting.bill_cents(run, cents)
    churn = accounting.bill_cents(evicted, sc.churn_cents)
    bill = warm + churn
    ideal = accounting.ideal_cents(true_rate, jnp.max(hourly_demand), pool)

    n_evicted = jnp.sum(evicted, dtype=jnp.int32)
    n_wrong = jnp.sum(checks.wrong(true_rate, evicted, pool), dtype=jnp.int32)
    convergence = accounting.ratio(ideal.astype(jnp.float32), bill.astype(jnp.float32), empty=1.0)
    shortfall = accounting.ratio(tok.unmet, tok.demand)
    out = {
        "bill": bill, "warm_bill": warm, "churn_bill": churn, "ideal_bill": ideal,
        "convergence": convergence,
        "n_run": jnp.sum(run, dtype=jnp.int32), "n_evicted": n_evicted, "n_wrong": n_wrong,
        "wrong_share": accounting.ratio(n_wrong.astype(jnp.float32), n_evicted.astype(jnp.float32)),
        "demand_tokens": tok.demand, "delivered_tokens": tok.delivered,
        "capacity_tokens": tok.capacity, "shortfall": shortfall,
        "idle_burn": accounting.idle_burn(warm.astype(jnp.float32) / 100.0, tok),
    }
    out.update(checks.verdict(shortfall, convergence, n_wrong, sc.checks))
    if cards:
        out.update(true_rate=true_rate, score=score, evicted=evicted, run=run)
    return out


def fleet_month(key: jax.Array, sc: Scenario) -> dict[str, jax.Array]:
    """One fleet-month from its key: ``outcome(draw(key, sc), sc)``."""
    return outcome(draw(key, sc), sc)
