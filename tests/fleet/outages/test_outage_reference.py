"""SPEC §10 in §6's month against its plain per-event reference (tests/ref_outages.py)
on the same draws: failures, spot zones and waves, lone preemptions, fallbacks,
failover on and off."""

import numpy as np
import pytest

import mc
from conftest import autoscaler_draws, one_fast
from ref_outages import month as ref_month


def _sc(pool, **kw):
    return mc.Scenario.from_dict({"pool": pool}).replace(kw)


SPOT = [{"card": "flagship", "count": 6}, {"card": "flagship", "count": 6, "market": "spot"}]
MIXED = [{"card": "bargain", "count": 4}, {"card": "flagship", "count": 4},
         {"card": "bargain", "count": 4, "market": "spot"}]
SCENARIOS = {
    "failures-daily-replace-failover": _sc("12 x flagship", **{
        "window.hours": 24, "eviction.share": 0.1, "runset": "steady", "demand.level": 50_000,
        "lottery.lemon_rate": 0.1, "failures.rate": 3.0, "failures.replace_hours": 20,
        "autoscaler": {"period": 24, "replace": True, "boot_hours": 2}}),
    "spot-two-zones-fallback-peak": _sc(SPOT, **{
        "window.hours": 12, "eviction.policy": "threshold", "eviction.theta": 0.9, "runset": "peak",
        "demand.shape": "diurnal", "demand.level": 45_000, "demand.amplitude": 0.3,
        "failures.rate": 1.0, "spot.zones": 2, "spot.up_hours": 20, "spot.down_hours": 5, "spot.wave_share": 0.7,
        "spot.rate": 2.0, "spot.fallback_hours": 3, "spot.price_factor": 0.4,
        "autoscaler": {"period": 36, "replace": True, "boot_hours": 1.5, "strikes": 2}}),
    "spot-no-failover-no-replace-all": _sc(MIXED, **{
        "window.hours": 6, "eviction.policy": "floor", "eviction.floor": 0.85, "runset": "all",
        "demand.level": 30_000, "failures.rate": 2.0, "spot.up_hours": 8, "spot.down_hours": 3,
        "autoscaler": {"period": 48, "failover": False}}),
    "spot-ragged-rounds-steady": _sc(SPOT, **{
        "window.hours": 3, "eviction.share": 0.1, "runset": "steady", "demand.level": 35_000,
        "spot.zones": 3, "spot.up_hours": 6, "spot.down_hours": 2, "spot.rate": 5.0,
        "autoscaler": {"period": 7, "replace": True, "boot_hours": 0}}),
}
# Every preset with §10 terms on too.
SCENARIOS.update({name: mc.presets.get(name) for name in mc.presets.names() if mc.presets.get(name).outages})
EXACT = ("n_run", "n_evicted", "n_wrong", "n_failed", "n_preempted", "first_eviction_hour", "lemons_evicted",
         "churn_bill", "ideal_bill", "lemons_end")
CLOSE = ("demand_tokens", "delivered_tokens", "capacity_tokens", "mean_run", "empty_slot_hours",
         "fallback_hours", "spot_share")


@pytest.mark.parametrize("name", one_fast(SCENARIOS, keep="spot-two-zones-fallback-peak"))
def test_outages_match_reference(name):
    _agree(SCENARIOS[name], name)


@pytest.mark.slow
def test_a_sensitivity_studys_longer_event_lists_match_reference():
    """A sensitivity study runs a point with the longest event lists any point of its
    shape needs (``mc.studies.sensitivity.common_shapes``): the same law, and the same
    per-event arithmetic as the reference on those draws."""
    from mc.studies.sensitivity import common_shapes

    sc = SCENARIOS["spot-two-zones-fallback-peak"]
    longer = sc.replace({"spot.up_hours": 2.0, "failures.rate": 6.0, "spot.rate": 8.0})
    wide = common_shapes([sc, longer])[0]
    st, own = wide.outages, sc.outages
    assert st.n_fail > own.n_fail and st.n_lone > own.n_lone and st.n_cycles > own.n_cycles
    _agree(wide, "widened")


def _agree(sc, name):
    n = 6
    draws, core = autoscaler_draws(sc, n, seed=3)
    for i in range(n):
        ref = ref_month(draws[i], sc)
        where = f"{name} month {i}"
        for key in EXACT:
            assert core[key][i] == ref[key], f"{where}: {key} {core[key][i]} != {ref[key]}"
        for key in CLOSE:
            np.testing.assert_allclose(core[key][i], ref[key], rtol=1e-4, atol=2e-3 * max(1.0, abs(ref[key])) if
                                       key in ("spot_share",) else 1e-3, err_msg=f"{where}: {key}")
        # Bills: each card's piece rounds to the cent (float32 here, float64 there).
        for key in ("warm_bill", "spot_bill", "bill"):
            assert abs(int(core[key][i]) - ref[key]) <= 2 + ref["n_failed"] + ref["n_preempted"], \
                f"{where}: {key} {core[key][i]} != {ref[key]}"
