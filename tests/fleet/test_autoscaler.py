"""SPEC §6: the autoscaler month agrees with its NumPy reference on the same
draws, and with one round and no replacement it is §1's month to the bit."""

import jax
import numpy as np
import pytest

import mc
from conftest import autoscaler_draws
from mc import engine
from mc.fleet import autoscaler, month
from ref_autoscaler import month as ref_month


def _sc(pool="16 x flagship", **kw):
    base = mc.Scenario.from_dict({"pool": pool})
    return base.replace(kw)


diurnal = {"demand.shape": "diurnal", "demand.amplitude": 0.35, "demand.peak_hour": 15}
SCENARIOS = {
    "share-daily-replace-lemons": _sc(**{
        "window.hours": 24, "eviction.share": 0.125, "runset": "steady", "demand.level": 80_000,
        "lottery.lemon_rate": 0.15, "autoscaler": {"period": 24, "replace": True}}),
    "threshold-strikes2-min-age-peak-diurnal": _sc(**{
        "window.hours": 12, "eviction.policy": "threshold", "eviction.theta": 0.9, "eviction.max_share": 0.25,
        "runset": "peak", "demand.level": 70_000, **diurnal, "lottery.lemon_rate": 0.2,
        "autoscaler": {"period": 12, "replace": True, "strikes": 2, "min_age": 48, "boot_hours": 2}}),
    "threshold-strikes3-no-replace-all": _sc(**{
        "window.hours": 6, "eviction.policy": "threshold", "eviction.theta": 0.95, "eviction.max_share": 0.5,
        "runset": "all", "demand.level": 50_000, "lottery.lemon_rate": 0.1,
        "autoscaler": {"period": 24, "strikes": 3}}),
    "mixed-fractional-boot-steady-diurnal": _sc(pool="6 x bargain + 8 x flagship", **{
        "window.hours": 48, "eviction.share": 0.15, "runset": "steady", "demand.level": 55_000, **diurnal,
        "lottery.lemon_rate": 0.25, "autoscaler": {"period": 48, "replace": True, "boot_hours": 5.5}}),
    "short-window-ragged-rounds-no-boot": _sc(pool="10 x flagship", **{
        "window.hours": 3, "eviction.share": 0.1, "runset": "steady", "demand.level": 40_000,
        "autoscaler": {"period": 7, "replace": True, "boot_hours": 0}}),
    "one-round-replace": _sc(**{
        "window.hours": "day", "eviction.share": 0.25, "runset": "peak", "demand.level": 60_000,
        "lottery.lemon_rate": 0.2, "autoscaler": {"replace": True, "boot_hours": 3}}),
    "threshold-min-age-past-window-no-replace": _sc(pool="12 x bargain", **{
        "window.hours": 24, "eviction.policy": "threshold", "eviction.theta": 0.97, "runset": "steady",
        "demand.level": 25_000, **diurnal, "lottery.lemon_rate": 0.3,
        "autoscaler": {"period": 100, "min_age": 200, "strikes": 1}}),
    "share-strikes2-dip-heavy-mixed": _sc(pool="5 x bargain + 5 x flagship", **{
        "window.hours": 8, "eviction.share": 0.2, "runset": "peak", "demand.level": 35_000,
        "dips.rate": 20.0, "dips.mean_hours": 10.0, "dips.max_count": 16, "lottery.lemon_rate": 0.1,
        "autoscaler": {"period": 36, "replace": True, "strikes": 2, "boot_hours": 4.25}}),
}
EXACT = ("bill", "warm_bill", "churn_bill", "ideal_bill", "n_run", "n_evicted", "n_wrong", "pass_eviction",
         "n_replaced", "lemons_end", "lemons_evicted", "first_eviction_hour")
CLOSE = ("convergence", "wrong_share", "demand_tokens", "delivered_tokens", "capacity_tokens",
         "shortfall", "idle_burn", "mean_run", "quality_end")


@pytest.mark.parametrize("name", SCENARIOS)
def test_autoscaler_matches_reference(name):
    sc = SCENARIOS[name]
    n = 12
    draws, core = autoscaler_draws(sc, n, seed=5)
    for i in range(n):
        ref = ref_month(draws[i], sc)
        where = f"{name} month {i}"
        for k, rnd in enumerate(ref["rounds"]):
            assert set(np.flatnonzero(core["evicted"][i, k])) == rnd["evicted"], f"{where} round {k}: evicted"
            assert set(np.flatnonzero(core["run"][i, k])) == rnd["run"], f"{where} round {k}: run set"
            np.testing.assert_allclose(core["rate"][i, k], rnd["rate"], rtol=1e-6, err_msg=f"{where} round {k}")
        for key in EXACT:
            assert core[key][i] == ref[key], f"{where}: {key} {core[key][i]} != {ref[key]}"
        for key in CLOSE:
            np.testing.assert_allclose(core[key][i], ref[key], rtol=2e-5, atol=1e-6 * max(1.0, ref["bill"] / 100),
                                       err_msg=f"{where}: {key}")
        assert core["pass_convergence"][i] == ref["pass_convergence"], where


def test_scenarios_exercise_every_branch():
    """The scenarios above cover what the brief of the reference asks."""
    scs = [sc for sc in SCENARIOS.values()]
    a = [sc.autoscaler for sc in scs]
    assert {x.strikes for x in a} == {1, 2, 3}
    assert {x.replace for x in a} == {True, False}
    assert any(x.min_age > 0 for x in a) and any(x.min_age > sc.window.hours for x, sc in zip(a, scs))
    assert any(x.boot_hours % 1 for x in a) and any(x.boot_hours == 0 for x in a)
    assert any(mc.units.HOURS % x.period for x in a) and any(x.rounds == 1 for x in a)
    assert {sc.eviction.policy for sc in scs} == {"share", "threshold"}
    assert {sc.runset for sc in scs} == {"steady", "peak", "all"}
    assert {sc.demand.shape for sc in scs} >= {"flat", "diurnal"}
    assert any(len(sc.pool.groups) > 1 for sc in scs) and all(sc.lottery.lemon_rate > 0 for sc in scs[:4])


@pytest.mark.parametrize("name", mc.presets.names())
def test_one_round_without_replacement_is_section_1(name):
    """SPEC §6: with one round and no replacement every §1 output is §1's, bit
    for bit, on the same keys, in chunks of different sizes."""
    sc = mc.presets.get(name)
    sc6 = sc.replace(autoscaler={})
    one = engine.sample(month.fleet_month, sc, 96, seed=9, chunk=32)
    six = engine.sample(autoscaler.autoscaler_month, sc6, 96, seed=9, chunk=64)
    for col in month.OUTPUTS:
        np.testing.assert_array_equal(six[col], one[col], err_msg=col)
    assert (six["n_replaced"] == 0).all()
    assert (six["mean_run"] == six["n_run"]).all()
