"""SPEC §10 in law and in its limits: a zone's time up, preemptions and failures a
month against their expectations (tolerances from the sample's own spread), failover
with spares to spare, an immediate fallback, a zone down all month, the
hour-weighted bill when nothing leaves, and the event streams' caps."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mc
from mc.fleet import autoscaler
from mc.fleet.outages import events, plan
from mc.units import HOURS


def months(sc, n, seed=0):
    keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.key(seed), i))(jnp.arange(n))
    out = jax.jit(jax.vmap(lambda k: autoscaler.autoscaler_month(k, sc)))(keys)
    return {k: np.asarray(v, np.float64) for k, v in out.items()}


def near(samples, expected, where, z=5.0):
    """The sample mean within ``z`` standard errors (the sample's own) of ``expected``."""
    se = np.std(samples, ddof=1) / math.sqrt(len(samples))
    assert abs(np.mean(samples) - expected) <= z * se + 1e-9, f"{where}: {np.mean(samples)} vs {expected} ± {z}·{se}"


def _spot(pool, **kw):
    return mc.Scenario.from_dict({"pool": pool}).replace(kw)


SPOT8 = [{"card": "flagship", "count": 8, "market": "spot"}]
QUIET = {"eviction.share": 0.0, "runset": "all", "dips.rate": 0.0, "demand.level": 30_000}


def test_caps_cut_a_stream_short_less_than_once_in_10_to_the_12():
    for mean in (0.0, 0.014, 1.0, 73.0, 365.0, 2920.0):
        n = plan.cap(mean)
        assert plan.tail(n, mean) < plan.TAIL
        if n:
            assert plan.tail(n - 1, mean) >= plan.TAIL
    # Poisson(1): P(N > 14) = 3.0e-13 by direct sum.
    assert plan.cap(1.0) == 14


@pytest.mark.slow
def test_a_zone_is_up_its_share_of_the_time():
    sc = _spot(SPOT8, **QUIET, **{"spot.zones": 4, "spot.up_hours": 6.0, "spot.down_hours": 3.0})
    st = sc.outages
    n = 500
    keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.key(1), i))(jnp.arange(n))

    def up_share(k):
        raw = events.draw(k, st, sc.pool.size, sc.dips.max_count)
        z = events.zones(raw, st, sc.spot)
        starts = jnp.concatenate([jnp.zeros((z.ends.shape[0], 1)), z.ends[:, :-1]], axis=1)
        m = jnp.arange(z.ends.shape[1])
        down = (m[None, :] % 2 == 0) == z.down0[:, None]
        span = jnp.clip(z.ends, 0, HOURS) - jnp.clip(starts, 0, HOURS)
        return jnp.sum(jnp.where(down, 0.0, span), axis=1) / HOURS  # (slots,): each slot's zone

    share = np.asarray(jax.jit(jax.vmap(up_share))(keys))[:, [0, 1, 2, 3]].ravel()  # the four zones
    near(share, 6.0 / 9.0, "time up")


@pytest.mark.slow
def test_waves_preempt_as_the_zone_process_expects():
    # Boot 0, no fallback: each spot card is back as soon as its zone is up, so each
    # down spell begun in the month (one at hour 0 if the zone is down then) takes
    # each card with probability wave_share: E = share·8·(d + 730)/(u + d).
    u, d, share = 8.0, 2.0, 0.6
    sc = _spot(SPOT8, **QUIET, **{"spot.up_hours": u, "spot.down_hours": d, "spot.wave_share": share,
                                 "autoscaler": {"boot_hours": 0.0}})
    out = months(sc, 400)
    near(out["n_preempted"], share * 8 * (d + HOURS) / (u + d), "waves")


@pytest.mark.slow
def test_failures_and_lone_preemptions_follow_their_rates_over_card_time():
    # Boot 0: a card holds its slot exactly while it serves, so the count's
    # compensator is rate/730 × (slot-hours − empty slot-hours).
    sc = mc.Scenario.from_dict({"pool": "8 x flagship"}).replace(
        {**QUIET, "failures.rate": 2.0, "failures.replace_hours": 30.0, "autoscaler": {"boot_hours": 0.0}})
    out = months(sc, 400)
    held = 8 * HOURS - out["empty_slot_hours"]
    near(out["n_failed"] - 2.0 / HOURS * held, 0.0, "failures")
    assert out["empty_slot_hours"].mean() > 100  # the replacements' waits are seen
    lone = _spot(SPOT8, **QUIET, **{"spot.wave_share": 0.0, "spot.rate": 3.0, "spot.up_hours": 5.0,
                                    "spot.down_hours": 5.0, "autoscaler": {"boot_hours": 0.0}})
    out = months(lone, 400)
    near(out["n_preempted"] - 3.0 / HOURS * (8 * HOURS - out["empty_slot_hours"]), 0.0, "lone preemptions")


def _flat_pool(**kw):
    # Identical cards (no spread, no dips): which card runs changes no capacity.
    return mc.Scenario.from_dict({"pool": "24 x flagship"}).replace({
        "lottery.sd": 0.0, "dips.rate": 0.0, "eviction.share": 0.0, "runset": "steady", "demand.level": 40_000,
        "autoscaler": {}, **kw})


def test_with_spares_a_failure_costs_no_capacity():
    base = months(_flat_pool(), 16)
    hit = months(_flat_pool(**{"failures.rate": 1.0}), 16)
    assert hit["n_failed"].sum() > 5
    np.testing.assert_allclose(hit["capacity_tokens"], base["capacity_tokens"], rtol=1e-5)
    np.testing.assert_allclose(hit["delivered_tokens"], base["delivered_tokens"], rtol=1e-5)
    off = months(_flat_pool(**{"failures.rate": 1.0, "autoscaler.failover": False}), 16)
    assert (off["capacity_tokens"] <= base["capacity_tokens"] * (1 + 1e-5)).all()
    assert (off["capacity_tokens"] < base["capacity_tokens"] * (1 - 1e-3)).sum() >= 8


@pytest.mark.slow
def test_an_immediate_fallback_refills_a_preempted_slot_at_once():
    sc = _spot(SPOT8, **QUIET, **{"spot.up_hours": 5.0, "spot.down_hours": 5.0, "spot.fallback_hours": 0.0,
                                 "autoscaler": {"boot_hours": 0.0}})
    out = months(sc, 32)
    assert (out["n_preempted"] <= 8).all() and out["n_preempted"].sum() > 100
    np.testing.assert_allclose(out["empty_slot_hours"], 0.0, atol=1e-3)
    assert (out["fallback_hours"] > 0).all()


@pytest.mark.slow
def test_a_zone_down_all_month_is_the_pool_without_its_spot_cards():
    pool = [{"card": "flagship", "count": 8}, {"card": "flagship", "count": 8, "market": "spot"}]
    kw = {"eviction.share": 0.0, "runset": "all", "demand.level": 40_000, "autoscaler": {}}
    down = months(_spot(pool, **kw, **{"spot.up_hours": 0.25, "spot.down_hours": 1e6}), 16, seed=2)
    alone = months(mc.Scenario.from_dict({"pool": "8 x flagship"}).replace(kw), 16, seed=2)
    assert (down["n_preempted"] == 8).all() and (down["spot_share"] == 0).all()
    for col in ("capacity_tokens", "delivered_tokens"):
        np.testing.assert_allclose(down[col], alone[col], rtol=1e-5, err_msg=col)
    np.testing.assert_array_equal(down["warm_bill"], alone["warm_bill"])


def test_the_hour_weighted_bill_is_the_rounds_rent_when_nothing_leaves():
    sc = mc.presets.get("lemon-hunter")
    on = months(sc.replace({"failures.rate": 1e-6}), 8)
    off = months(sc, 8)
    assert (on["n_failed"] == 0).all()
    for col in ("bill", "warm_bill", "churn_bill", "ideal_bill", "n_evicted", "n_run"):
        np.testing.assert_array_equal(on[col], off[col], err_msg=col)
    np.testing.assert_allclose(on["delivered_tokens"], off["delivered_tokens"], rtol=1e-5)
