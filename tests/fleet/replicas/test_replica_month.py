"""SPEC §11 in the one-decision month: replicas paced by their slowest card, against the
plain brute-force reference (tests/ref_replicas.py) on the same draws, and the checks
the chapter names (a replica of identical cards is one card of their sum; tp = 1 and
member eviction of single cards are today's month)."""

import jax
import numpy as np
import pytest

import mc
from conftest import assert_outputs_agree, month_draws, one_fast
from mc.fleet import month
from ref_replicas import month as ref_month


def _card(name, rated, price, tp):
    return mc.CardClass(name, rated, price, tp=tp)


SCENARIOS = {
    "tp8-lemons-share-peak": mc.Scenario(
        pool=mc.Pool.of((_card("h100", 1000.0, 2000.0, 8), 32)), window=mc.Window(hours=24),
        eviction=mc.Eviction(share=0.25), runset="peak", demand=mc.Demand(level=20_000),
        lottery=mc.Lottery(lemon_rate=0.1), dips=mc.Dips(rate=6.0, mean_hours=12.0)),
    "mixed-tp4-tp1-member-threshold": mc.Scenario(
        pool=mc.Pool.of((_card("big", 900.0, 1900.0, 4), 16), (_card("one", 2500.0, 1500.0, 1), 6)),
        window=mc.Window(hours=12), eviction=mc.Eviction(policy="threshold", theta=0.85, evict="member"),
        runset="steady", demand=mc.Demand(shape="diurnal", level=18_000, amplitude=0.3),
        lottery=mc.Lottery(lemon_rate=0.15)),
    "tp2-dip-heavy-all": mc.Scenario(
        pool=mc.Pool.of((_card("pair", 3000.0, 2600.0, 2), 12)), window=mc.Window(hours=6),
        eviction=mc.Eviction(policy="floor", floor=0.85, churn=0.2), runset="all",
        demand=mc.Demand(level=25_000), dips=mc.Dips(rate=30.0, mean_hours=10.0, max_count=12)),
    "tp4-member-share-steady": mc.Scenario(
        pool=mc.Pool.of((_card("quad", 1200.0, 2100.0, 4), 24)), window=mc.Window(hours=48),
        eviction=mc.Eviction(share=0.1, evict="member"), runset="steady", demand=mc.Demand(level=20_000),
        lottery=mc.Lottery(lemon_rate=0.2)),
}
EXACT = ("bill", "warm_bill", "churn_bill", "ideal_bill", "n_run", "n_evicted", "n_wrong", "pass_eviction",
         "n_replicas", "replicas_with_lemon", "members_evicted")
CLOSE = ("convergence", "wrong_share", "demand_tokens", "delivered_tokens", "capacity_tokens", "shortfall")


@pytest.mark.parametrize("name", one_fast(SCENARIOS, keep="mixed-tp4-tp1-member-threshold"))
def test_replica_month_matches_reference(name):
    sc = SCENARIOS[name]
    n = 12
    draws, core = month_draws(sc, n, seed=5)
    for i in range(n):
        ref = ref_month(draws[i], sc)
        where = f"{name} month {i}"
        assert set(np.flatnonzero(core["evicted"][i])) == ref["evicted"], where
        assert set(np.flatnonzero(core["run"][i])) == ref["run"], where
        np.testing.assert_allclose(core["score"][i], ref["score"], rtol=2e-5, err_msg=where)
        assert_outputs_agree(core, ref, i, where, EXACT, CLOSE)
        # idle = warm × (1 − delivered / capacity): the ratio carries float32 time (an ulp is
        # 6e-5 h at hour 700, some 1e-5 of a replica's many dip pieces), so within 1e-5 of warm.
        np.testing.assert_allclose(core["idle_burn"][i], ref["idle_burn"], atol=1e-5 * ref["warm_bill"] / 100,
                                   err_msg=f"{where}: idle_burn")


def _run(sc, n=64, seed=3):
    samples = mc.simulate(sc, n=n, seed=seed, keep_samples=True).samples
    return {k: samples[k].to_numpy() for k in samples.columns}


ONE_DECISION = [n for n in mc.presets.names() if mc.presets.get(n).autoscaler is None]


@pytest.mark.parametrize("name", one_fast(ONE_DECISION, keep="noise-evictor"))
def test_member_eviction_of_single_cards_is_todays_month(name):
    sc = mc.presets.get(name)
    today, member = _run(sc), _run(sc.replace({"eviction.evict": "member"}))
    for col, x in today.items():
        assert np.array_equal(x, member[col]), col
    assert np.array_equal(member["members_evicted"], today["n_evicted"])


@pytest.mark.parametrize("k", [2, 8])
@pytest.mark.parametrize("swing", [0.0, 0.05])
def test_a_replica_of_identical_cards_is_one_card_of_their_sum(k, swing):
    same = dict(window=mc.Window(hours=24), eviction=mc.Eviction(share=0.0), runset="steady",
                demand=mc.Demand(shape="diurnal", level=30_000, amplitude=0.3),
                lottery=mc.Lottery(sd=0.0, lemon_rate=0.0), dips=mc.Dips(rate=0.0), swing=mc.Swing(diurnal=swing))
    replicas = mc.Scenario(pool=mc.Pool.of((_card("m", 1000.0, 2000.0, k), 8 * k)), **same)
    cards = mc.Scenario(pool=mc.Pool.of((_card("m", k * 1000.0, k * 2000.0, 1), 8)), **same)
    a, b = _run(replicas, n=16), _run(cards, n=16)
    for col in ("bill", "warm_bill", "ideal_bill", "n_run"):
        assert np.array_equal(a[col], b[col]), col
    for col in ("capacity_tokens", "delivered_tokens", "shortfall"):
        np.testing.assert_allclose(a[col], b[col], rtol=1e-6, atol=1e-9, err_msg=col)


def test_lemons_and_quality_follow_the_minimum_of_k_tickets():
    """The share of replicas carrying a lemon is ``1 − (1 − π)^K``; a replica's quality
    is the minimum of K clipped tickets (mean within 4 standard errors of a NumPy sample
    of the same law)."""
    k, pi, n = 8, 0.1, 2048
    lot = mc.Lottery(lemon_rate=pi)
    sc = mc.Scenario(pool=mc.Pool.of((_card("h", 1000.0, 2000.0, k), 4 * k)), lottery=lot,
                     eviction=mc.Eviction(share=0.0), demand=mc.Demand(level=10_000))
    out = _run(sc, n=n, seed=9)
    share = out["replicas_with_lemon"].sum() / (4 * n)
    want = 1 - (1 - pi) ** k
    assert abs(share - want) < 4 * np.sqrt(want * (1 - want) / (4 * n))
    keys = jax.vmap(lambda i: jax.random.fold_in(jax.random.key(9), i))(np.arange(n))
    q = np.asarray(jax.jit(jax.vmap(lambda key: month.outcome(month.draw(key, sc), sc, cards=True)["true_rate"]))(keys))
    q = q.ravel() / (k * 1000.0)
    rng = np.random.default_rng(0)
    t = np.clip(lot.mean + lot.sd * rng.standard_normal((200_000, k)), lot.lo, lot.hi)
    t = np.where(rng.uniform(size=t.shape) < pi, t * lot.lemon_factor, t).min(axis=1)
    se = np.sqrt(q.var() / q.size + t.var() / t.size)
    assert abs(q.mean() - t.mean()) < 4 * se
    assert abs(np.quantile(q, 0.1) - np.quantile(t, 0.1)) < 0.02


BAD = [
    (lambda: mc.Pool.of((_card("h", 1000.0, 2000.0, 8), 12)), "pool.h.count=12: must be a multiple of tp = 8"),
    (lambda: _card("h", 1000.0, 2000.0, 65), "tp=65"),
    (lambda: mc.Eviction(evict="rack"), "eviction.evict='rack'"),
    (lambda: mc.Scenario.from_dict({"pool": [{"name": "h", "rated": 1000.0, "price_month": 2000, "count": 8,
                                              "tp": 4}], "autoscaler": {}, "swing": {"diurnal": 0.02}}),
     "swing.diurnal"),
    (lambda: mc.Scenario.from_dict({"pool": [{"name": "h", "rated": 1000.0, "price_month": 2000, "count": 8,
                                              "tp": 4}], "wander": {"sd": 0.02}}), "wander.sd"),
    (lambda: mc.Scenario.from_dict({"pool": "8 x flagship", "eviction": {"evict": "member"},
                                    "failures": {"rate": 1.0}}), "failures"),
]


@pytest.mark.parametrize("make,match", BAD, ids=[m for _, m in BAD])
def test_bad_replica_input_is_one_line(make, match):
    with pytest.raises(mc.ParamError, match=match) as err:
        make()
    assert "\n" not in str(err.value)


def test_a_pool_of_replicas_round_trips_through_its_table():
    sc = SCENARIOS["mixed-tp4-tp1-member-threshold"]
    again = mc.Scenario.from_dict(sc.to_dict())
    assert again.pool == sc.pool and again.eviction.evict == "member"
