"""SPEC §11 in §6's rounds: replicas scored, evicted (whole, or card by card) and
replaced round by round, against the plain brute-force reference
(tests/ref_replica_rounds.py) on the same draws; one round without replacement is the
one-decision month of replicas to the bit."""

from functools import partial

import jax
import numpy as np
import pytest

import mc
from conftest import assert_outputs_agree, one_fast
from mc import engine
from mc.fleet import autoscaler, month
from mc.fleet.replicas import rounds
from ref_replica_rounds import month as ref_month


@partial(jax.jit, static_argnums=(1,))
def _draws_and_outcomes(seed, n, sc):
    keys = engine.month_keys(seed, np.uint32(0), n)
    draws = jax.vmap(autoscaler.draw, in_axes=(0, None))(keys, sc)
    return draws, jax.vmap(lambda d: rounds.outcome(d, sc, cards=True))(draws)


def draws_and_outcomes(sc, n, seed=0):
    draws, out = _draws_and_outcomes(seed, n, sc)
    host = jax.tree_util.tree_map(np.asarray, draws)
    return [jax.tree_util.tree_map(lambda x: x[i], host) for i in range(n)], {k: np.asarray(v) for k, v in out.items()}


def _card(name, rated, price, tp):
    return mc.CardClass(name, rated, price, tp=tp)


def _sc(pool, evict, **auto):
    return mc.Scenario(pool=pool, window=mc.Window(hours=12), eviction=mc.Eviction(share=0.2, evict=evict),
                       runset="peak", demand=mc.Demand(shape="diurnal", level=16_000, amplitude=0.3),
                       lottery=mc.Lottery(lemon_rate=0.15), dips=mc.Dips(rate=6.0, mean_hours=8.0),
                       autoscaler=mc.Autoscaler(**auto))


TP4 = mc.Pool.of((_card("quad", 1000.0, 2000.0, 4), 24))
MIXED = mc.Pool.of((_card("pair", 1500.0, 1800.0, 2), 8), (_card("one", 2600.0, 1500.0, 1), 4))
SCENARIOS = {
    "tp4-replica-daily-replace": _sc(TP4, "replica", period=24, replace=True, boot_hours=3),
    "tp4-member-daily-replace": _sc(TP4, "member", period=24, replace=True, boot_hours=3, strikes=2),
    "mixed-member-no-replace": _sc(MIXED, "member", period=48, min_age=24),
    "mixed-replica-replace-weekly": _sc(MIXED, "replica", period=168, replace=True, boot_hours=10),
}
# Every preset on replicas (a new one gets its reference test here).
SCENARIOS.update({name: mc.presets.get(name) for name in mc.presets.names() if mc.presets.get(name).by_replica})
EXACT = ("bill", "warm_bill", "churn_bill", "ideal_bill", "n_run", "n_evicted", "n_wrong", "pass_eviction",
         "n_replaced", "lemons_end", "lemons_evicted", "first_eviction_hour", "n_replicas", "replicas_with_lemon",
         "replicas_with_lemon_end", "members_evicted")
CLOSE = ("convergence", "wrong_share", "demand_tokens", "delivered_tokens", "capacity_tokens", "shortfall",
         "mean_run", "quality_end")


@pytest.mark.parametrize("name", one_fast(SCENARIOS, keep="tp4-member-daily-replace"))
def test_replica_rounds_match_reference(name):
    sc = SCENARIOS[name]
    n = 4
    draws, core = draws_and_outcomes(sc, n, seed=2)
    for i in range(n):
        ref = ref_month(draws[i], sc)
        for k, r in enumerate(ref["rounds"]):
            where = f"{name} month {i} round {k}"
            assert set(np.flatnonzero(core["evicted"][i, k])) == r["evicted"], where
            assert set(np.flatnonzero(core["run"][i, k])) == r["run"], where
        assert_outputs_agree(core, ref, i, f"{name} month {i}", EXACT, CLOSE)
        np.testing.assert_allclose(core["idle_burn"][i], ref["idle_burn"], atol=1e-5 * ref["warm_bill"] / 100)


@pytest.mark.parametrize("evict", ["replica", "member"])
def test_one_round_without_replacement_is_the_one_decision_month(evict):
    one = mc.Scenario(pool=TP4, window=mc.Window(hours=24), eviction=mc.Eviction(share=0.25, evict=evict),
                      runset="steady", demand=mc.Demand(level=14_000), lottery=mc.Lottery(lemon_rate=0.1))
    six = one.replace({"autoscaler": {}})
    keys = engine.month_keys(4, np.uint32(0), 32)
    a = jax.jit(jax.vmap(lambda k: month.outcome(month.draw(k, one), one)))(keys)
    b = jax.jit(jax.vmap(lambda k: rounds.outcome(autoscaler.draw(k, six), six)))(keys)
    for col, x in a.items():
        if col == "replicas_with_lemon_end":  # the one-decision month's end is after its one decision too
            continue
        assert np.array_equal(np.asarray(x), np.asarray(b[col])), col


SIX = [n for n in mc.presets.names() if mc.presets.get(n).autoscaler is not None
       and mc.presets.get(n).structure is None and mc.presets.get(n).outages is None
       and not mc.presets.get(n).pool.replicated]


@pytest.mark.parametrize("name", one_fast(SIX, keep="dip-chaser"))
def test_member_eviction_of_single_cards_is_todays_rounds(name):
    """Cards of tp = 1 ranked one by one are today's §6 month: the same evictions, run
    sets and money; the capacity pass runs on rows of its own (a round's dips each), so
    token totals agree to float32 resolution."""
    sc = mc.presets.get(name)
    a = mc.simulate(sc, n=64, seed=3, keep_samples=True).samples
    b = mc.simulate(sc.replace({"eviction.evict": "member"}), n=64, seed=3, keep_samples=True).samples
    for col in a.columns:
        if col in ("demand_tokens", "delivered_tokens", "capacity_tokens", "shortfall", "idle_burn"):
            np.testing.assert_allclose(b[col], a[col], rtol=1e-5, atol=1e-6, err_msg=col)
        else:
            assert np.array_equal(a[col].to_numpy(), b[col].to_numpy()), col
    assert np.array_equal(b["members_evicted"].to_numpy(), a["n_evicted"].to_numpy())


@pytest.mark.parametrize("name", [n for n in mc.presets.names() if mc.presets.get(n).by_replica])
def test_replica_presets_return_the_schema_columns(name):
    sc = mc.presets.get(name)
    shapes = jax.eval_shape(rounds.replica_month, jax.random.key(0), sc)
    assert set(shapes) == set(rounds.schema(sc).columns)
    assert mc.fleet.simulation.model(sc)[0] is rounds.replica_month
    with pytest.raises(ValueError, match="mc.fleet.replicas.rounds"):
        jax.eval_shape(autoscaler.autoscaler_month, jax.random.key(0), sc)


def test_a_replica_evicted_whole_counts_all_its_fees_against_int32_cents():
    """The worst bill's check counts a replica's tp fees per eviction: 31 daily rounds
    of 4 replicas of 8 evicted at 30% churn bill 64p + 297.6p, past int32 cents at
    p = 2**31 / 200 cents a card, where one fee per eviction (64p + 37.2p) would fit."""
    price = round((2**31 - 1) / 200) / 100
    base = {"pool": [{"name": "h", "rated": 1000.0, "price_month": price, "count": 64, "tp": 8}],
            "eviction": {"share": 0.5, "churn": 0.3}, "autoscaler": {"period": 24}}
    with pytest.raises(mc.ParamError, match="^autoscaler.period=24: gives 31 rounds") as err:
        mc.Scenario.from_dict(base)
    assert "\n" not in str(err.value)
    # Four cards a round, one fee each, fit.
    mc.Scenario.from_dict({**base, "eviction": {"share": 0.0625, "churn": 0.3, "evict": "member"}})
