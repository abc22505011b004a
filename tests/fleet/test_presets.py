"""The presets: what SPEC §3 says the six seed stories show, as distributions, the §6
stories, and the field-grounded preset's figures."""

import math
from statistics import NormalDist

import numpy as np
import pytest

import mc
from conftest import one_fast

# The CLI tests run the presets at the same N and seed, so one compiled step per
# scenario shape serves both.
N = 3000
SEED = 1
MONTH_S = 2_628_000


@pytest.fixture(scope="module")
def results():
    return {name: mc.simulate(mc.presets.get(name), N, seed=SEED) for name in mc.presets.names()}


def inside_band(result, column, value):
    st = result.summary["stats"][column]
    return st["p5"] <= value <= st["p95"]


def test_registry():
    assert mc.presets.names() == ["golden-idler", "noise-evictor", "bargain-shortfall",
                                  "golden-idler-steady", "noise-evictor-day", "bargain-flagship",
                                  "lemon-hunter", "dip-chaser", "steady-hand", "lemon-hunter-field"]
    assert [n for n in mc.presets.names() if mc.presets.get(n).autoscaler is None] == list(mc.presets.SEED_STORIES)
    with pytest.raises(mc.ParamError, match="^preset='nope': must be one of golden-idler"):
        mc.presets.get("nope")


# Two scenario shapes (the other presets share them), each compiled once for the
# CLI and chunk tests too.
@pytest.mark.parametrize("name", one_fast(["golden-idler", "noise-evictor", "golden-idler-steady", "noise-evictor-day"]))
def test_each_preset_is_a_valid_month(name):
    df = mc.simulate(mc.presets.get(name), 200, seed=SEED, keep_samples=True).samples
    assert len(df) == 200 and list(df.columns) == list(mc.OUTPUTS)
    # Money adds up to the cent, and nothing is negative or above the pool.
    cents = (df[["bill", "warm_bill", "churn_bill"]] * 100).round().astype(np.int64)
    assert (cents.bill == cents.warm_bill + cents.churn_bill).all()
    assert (df.delivered_tokens <= df.demand_tokens * (1 + 1e-6)).all()
    assert (df.delivered_tokens <= df.capacity_tokens * (1 + 1e-6)).all()
    assert df.n_run.max() + df.n_evicted.max() <= mc.presets.get(name).pool.size


def test_the_field_preset_carries_the_cited_figures():
    """lemon-hunter-field's lottery and dips give back the published figures they were
    read from (docs/model.md §3.1), to the 3 figures kept."""
    sc, base = mc.presets.get("lemon-hunter-field"), mc.presets.get("lemon-hunter")
    lot, dips = sc.lottery, sc.dips
    q = NormalDist(lot.mean, lot.sd)
    q1, q3 = q.inv_cdf(0.25), q.inv_cdf(0.75)
    low_fence, high_fence = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    # Sinha et al., SC'22: 8% variation, the box plot's whisker span over the median.
    assert (high_fence - low_fence) / q.inv_cdf(0.5) == pytest.approx(0.08, rel=5e-3)
    # Outliers up to 1.5x slower than the median GPU.
    assert 1 / lot.lemon_factor == pytest.approx(1.5, rel=5e-3)
    # No share of outliers is given: lemons at the share below the outlier fence of a normal pool.
    assert lot.lemon_rate == pytest.approx(q.cdf(low_fence), rel=5e-3)
    # Falcon / Greyhound: tens of seconds to nearly ten hours, as the 1st and 99th
    # percentiles of the exponential dip length.
    def length_h(p):
        return -dips.mean_hours * math.log1p(-p)

    assert length_h(0.99) == pytest.approx(10.0, rel=5e-3)
    assert 10 <= length_h(0.01) * 3600 < 100
    # Nothing else changes: rate, depths and cap stay the lemon hunter's (SPEC §1.3's) ...
    fields = ("lottery.sd", "lottery.lemon_rate", "lottery.lemon_factor", "dips.mean_hours")
    back = sc.replace({f: getattr(getattr(base, f.split(".")[0]), f.split(".")[1]) for f in fields})
    assert back.to_dict() == base.to_dict()
    # ... and the cap of 8 dips cuts a card's Poisson count in under 1 month in 1,000.
    mean = dips.rate * (730 + sc.window.hours) / 730
    cut = 1 - sum(math.exp(-mean) * mean ** k / math.factorial(k) for k in range(dips.max_count + 1))
    assert cut < 1e-3


@pytest.mark.slow
def test_golden_idler(results):
    r = results["golden-idler"]
    m = r.summary["modes"]
    assert m["bill"]["value"] == 69_940.00 and m["n_run"]["value"] == 26 and m["n_evicted"]["value"] == 6
    assert inside_band(r, "idle_burn", 44_348)
    assert inside_band(r, "n_wrong", 0) and inside_band(r, "shortfall", 0.0)
    assert r.summary["pass"]["convergence"]["rate"] == 0.0  # fails convergence
    assert r.summary["pass"]["capacity"]["rate"] > 0.95


@pytest.mark.slow
def test_noise_evictor(results):
    r = results["noise-evictor"]
    assert r.summary["modes"]["n_evicted"]["value"] == 12
    assert inside_band(r, "n_wrong", 4)
    assert inside_band(r, "wrong_share", 4 / 12)
    assert r.summary["pass"]["eviction"]["rate"] < 0.05


@pytest.mark.slow
def test_bargain_shortfall(results):
    r = results["bargain-shortfall"]
    assert r.summary["modes"]["bill"]["value"] == 28_840.00
    assert inside_band(r, "delivered_tokens", 61_015 * MONTH_S)
    assert inside_band(r, "shortfall", 0.32)
    assert r.summary["pass"]["capacity"]["rate"] == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("fix,verdict,check", [
    ("golden-idler-steady", "golden-idler", "convergence"),
    ("noise-evictor-day", "noise-evictor", "eviction"),
    ("bargain-flagship", "bargain-shortfall", "capacity"),
])
def test_fix_improves_the_failed_check(fix, verdict, check, results):
    assert results[fix].summary["pass"][check]["rate"] > results[verdict].summary["pass"][check]["rate"] + 0.5


@pytest.mark.slow
def test_results_do_not_depend_on_chunk():
    sc = mc.presets.get("noise-evictor")
    runs = [mc.simulate(sc, 40, seed=3, chunk=c, keep_samples=True).samples for c in (1, 7, None)]
    for other in runs[1:]:
        assert runs[0].equals(other)


@pytest.mark.slow
def test_seed_changes_results():
    sc = mc.presets.get("noise-evictor")
    a = mc.simulate(sc, 50, seed=0, keep_samples=True).samples
    b = mc.simulate(sc, 50, seed=1, keep_samples=True).samples
    assert not a.equals(b)


@pytest.mark.slow
def test_pass_rates_have_wilson_intervals(results):
    for r in results.values():
        for pr in r.summary["pass"].values():
            assert pr["n"] == N and pr["lo"] <= pr["rate"] <= pr["hi"]
            assert pr["hi"] - pr["lo"] < 2 * 1.96 * 0.5 / np.sqrt(N) + 1e-9
