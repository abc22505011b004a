"""The JAX core agrees with the NumPy reference on the same random draws."""

import numpy as np
import pytest

import mc
from conftest import assert_outputs_agree, month_draws, one_fast
from ref_fleet import month as ref_month

flat = mc.Demand(level=60_000)
SCENARIOS = {
    # Every §1 preset (a new one gets its reference test; §6's are in test_autoscaler);
    # the rest covers every branch.
    **{name: mc.presets.get(name) for name in mc.presets.SEED_STORIES},
    # Past the pairwise size: ranks, the run set and the ideal's cover by sorting.
    "pool-65-threshold": mc.Scenario(
        pool=mc.Pool.of(("flagship", 65)), window=mc.Window(hours=12),
        eviction=mc.Eviction(policy="threshold", theta=0.9, max_share=0.3), runset="steady",
        demand=mc.Demand(shape="diurnal", level=250_000, amplitude=0.3)),
    "pool-200-mixed": mc.Scenario(
        pool=mc.Pool.of(("bargain", 70), ("flagship", 130)), window=mc.Window(hours=24),
        eviction=mc.Eviction(share=0.1), runset="peak", demand=mc.Demand(level=700_000)),
    "mixed-threshold-peak": mc.Scenario(
        pool=mc.Pool.of(("bargain", 10), ("flagship", 14)), window=mc.Window(hours=24),
        eviction=mc.Eviction(policy="threshold", theta=0.9, max_share=0.3), runset="peak",
        demand=mc.Demand(shape="diurnal", level=50_000, amplitude=0.4, peak_hour=15)),
    "three-classes-lemons": mc.Scenario(
        pool=mc.Pool.of(("flagship", 6), ("bargain", 9),
                        (mc.CardClass("mid", 5000.0, 1999.99), 5)),
        window=mc.Window(hours=6.5), eviction=mc.Eviction(share=0.25, churn=0.2), runset="peak",
        demand=mc.Demand(shape="weekly", level=40_000, weekend_factor=0.5),
        lottery=mc.Lottery(lemon_rate=0.2)),
    "threshold-all-bursty": mc.Scenario(
        pool=mc.Pool.of(("flagship", 16)), window=mc.Window(hours=1),
        eviction=mc.Eviction(policy="threshold", theta=0.95, max_share=0.5), runset="all",
        demand=mc.Demand(shape="bursty", level=40_000, burst_rate=6, burst_height=50_000, burst_hours=5.5)),
    "trace-steady": mc.Scenario(
        pool=mc.Pool.of(("flagship", 12)), window=mc.Window(hours=72), runset="steady",
        demand=mc.Demand(shape="trace", trace=40_000 + 20_000 * np.sin(np.arange(730) / 17.0) ** 2)),
    "short-pool-dip-heavy": mc.Scenario(
        pool=mc.Pool.of(("bargain", 5)), window=mc.Window(hours=3),
        eviction=mc.Eviction(share=0.2), runset="steady", demand=mc.Demand(level=30_000),
        dips=mc.Dips(rate=30.0, mean_hours=10.0, max_count=16)),
    # Every registered rule (test_every_policy_has_a_reference_scenario): its NumPy
    # twin against its JAX rule on the same draws, under the package's cap.
    "zscore-day-lemons-all": mc.Scenario(
        pool=mc.Pool.of(("flagship", 24)), window=mc.Window(hours=24),
        eviction=mc.Eviction(policy="zscore", k=2.0, max_share=0.25), runset="all",
        demand=mc.Demand(level=80_000), lottery=mc.Lottery(lemon_rate=0.15)),
    "zscore-65-mixed-steady": mc.Scenario(
        pool=mc.Pool.of(("bargain", 25), ("flagship", 40)), window=mc.Window(hours=6),
        eviction=mc.Eviction(policy="zscore", k=1.5, max_share=0.1), runset="steady",
        demand=mc.Demand(shape="diurnal", level=200_000, amplitude=0.3)),
    "floor-hour-peak-capped": mc.Scenario(
        pool=mc.Pool.of(("flagship", 20)), window=mc.Window(hours=1),
        eviction=mc.Eviction(policy="floor", floor=0.9, max_share=0.15), runset="peak",
        demand=mc.Demand(level=70_000)),
    "floor-70-mixed-lemons": mc.Scenario(
        pool=mc.Pool.of(("bargain", 30), ("flagship", 40)), window=mc.Window(hours=24),
        eviction=mc.Eviction(policy="floor", floor=0.8), runset="steady",
        demand=mc.Demand(level=150_000), lottery=mc.Lottery(lemon_rate=0.2)),
}
EXACT = ("bill", "warm_bill", "churn_bill", "ideal_bill", "n_run", "n_evicted", "n_wrong",
         "pass_eviction")
CLOSE = ("convergence", "wrong_share", "demand_tokens", "delivered_tokens", "capacity_tokens",
         "shortfall", "idle_burn")


# The fast tier checks one scenario (mixed classes, lemons, weekly demand, a peak
# run set); make test-all checks every one.
@pytest.mark.parametrize("name", one_fast(SCENARIOS, keep="three-classes-lemons"))
def test_core_matches_reference(name):
    sc = SCENARIOS[name]
    n = 60
    draws, core = month_draws(sc, n, seed=11)
    for i in range(n):
        ref = ref_month(draws[i], sc)
        where = f"{name} month {i}"
        assert set(np.flatnonzero(core["evicted"][i])) == ref["evicted"], where
        assert set(np.flatnonzero(core["run"][i])) == ref["run"], where
        assert_outputs_agree(core, ref, i, where, EXACT, CLOSE)


def test_scenarios_exercise_every_branch():
    """The parametrized scenarios above cover what the reference must check."""
    shapes = {sc.demand.shape for sc in SCENARIOS.values()}
    assert shapes == {"flat", "diurnal", "weekly", "bursty", "trace"}
    assert {sc.runset for sc in SCENARIOS.values()} == {"steady", "peak", "all"}
    assert {sc.eviction.policy for sc in SCENARIOS.values()} == set(mc.fleet.policies.names())
    assert any(len(sc.pool.groups) > 2 for sc in SCENARIOS.values())


def test_every_policy_has_a_reference_scenario():
    """A registered rule with no scenario above has no reference check in §1."""
    missing = set(mc.fleet.policies.names()) - {sc.eviction.policy for sc in SCENARIOS.values()}
    assert not missing, f"add a §1 reference scenario for {sorted(missing)}"
