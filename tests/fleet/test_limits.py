"""What the device represents (``mc.fleet.limits``): every field a float32 holds,
bills that fit int32 cents, no money below a cent, demand the token pass resolves.
Just inside each limit a month is finite and adds up; just outside, one line."""

import numpy as np
import pytest

import mc
from mc import ParamError
from mc.fleet import limits
from mc.units import SECONDS

BASE = mc.presets.get("noise-evictor")  # 32 flagships at $2,600, churn 0.15

REFUSED = [
    ({"eviction.churn": 1000.0}, "eviction.churn=1000.0: a month could bill"),
    ({"eviction.churn": 10000.0}, "eviction.churn=10000.0: a month could bill"),
    ({"eviction.churn": 1e-7}, "eviction.churn=1e-07: must be 0 or at least"),
    ({"pool": [{"name": "tiny", "rated": 7000.0, "price_month": 0.004, "count": 32}]}, r"tiny.price=0.004: .*\[0.01"),
    ({"demand.level": 1e39}, "demand.level=1e.39: .* that float32 holds"),
    ({"demand.level": 1e30}, "demand='peak 1e.30 tok/s': .* over 2,048 times"),
    ({"lottery.mean": 1e36, "lottery.hi": 1e37}, "pool='32 x flagship': with lottery quality up to 1e.36"),
    ({"demand.shape": "weekly", "demand.weekend_factor": 1e300}, "demand.weekend_factor=1e.300"),
    ({"demand.shape": "weekly", "demand.weekend_factor": 1e30}, "demand='peak"),
    ({"window.hours": 1e-300}, "window.hours=1e-300: .* that float32 holds"),
    ({"window.sigma_hour": 1e37}, "window.sigma_hour=1e.37: with window.hours"),
    ({"demand.shape": "trace", "demand.trace": [1e39] * 730}, r"demand.trace\[0\]=1e\+39"),
    ({"demand.shape": "trace", "demand.trace": [1e-40] * 730}, r"demand.trace\[0\]=1e-40"),
    ({"dips.depth_hi": 1e-45}, "dips.depth_hi=1e-45"),
]


@pytest.mark.parametrize("update,match", REFUSED, ids=[m.split(":")[0][:40] for _, m in REFUSED])
def test_what_the_device_cannot_represent_is_one_line(update, match):
    with pytest.raises(ParamError, match=match) as err:
        BASE.replace(update)
    assert "\n" not in str(err.value)


def _month_adds_up(sc, n=64):
    r = mc.simulate(sc, n, keep_samples=True)
    x = r.samples
    for col in x.columns:
        assert np.all(np.isfinite(np.asarray(x[col], np.float64))), col
    assert np.all(np.round(x["bill"] * 100) == np.round(x["warm_bill"] * 100) + np.round(x["churn_bill"] * 100))
    assert np.all((x["shortfall"] >= 0) & (x["shortfall"] <= 1))
    for col, st in r.summary["stats"].items():
        assert all(np.isfinite(v) for v in st.values() if isinstance(v, float)), col
    return r


@pytest.mark.slow
def test_the_largest_churn_that_fits_int32_cents():
    cents = 260_000  # a flagship
    churn = (2**31 - 1) // 32 / cents  # every card's fee just fits
    sc = BASE.replace({"eviction.churn": churn})
    assert int(np.sum(sc.churn_cents.astype(np.int64))) <= 2**31 - 1
    _month_adds_up(sc)
    with pytest.raises(ParamError, match="int32 cents"):
        BASE.replace({"eviction.churn": churn * 1.001})


@pytest.mark.slow
def test_a_cent_is_the_smallest_money():
    sc = BASE.replace({"pool": [{"name": "penny", "rated": 7000.0, "price_month": 0.01, "count": 32}],
                       "eviction.churn": 100.0})  # a $1 fee
    r = _month_adds_up(sc)
    assert r.summary["stats"]["bill"]["mean"] > 0
    assert BASE.replace({"eviction.churn": 1 / 260_000}).churn_cents[0] == 1
    assert BASE.replace({"eviction.churn": 0.0}).churn_cents[0] == 0


@pytest.mark.slow
def test_the_largest_rates_and_demand_give_finite_summaries():
    rated = limits.FLOAT_LIMIT / SECONDS / 32 / 1.5 * 0.99  # the pool at its top quality, just inside
    sc = BASE.replace({"pool": [{"name": "giant", "rated": rated, "price_month": 2600.0, "count": 32}],
                       "demand.shape": "diurnal", "demand.level": rated * 20, "dips.rate": 2.0})
    r = _month_adds_up(sc)
    st, x = r.summary["stats"]["capacity_tokens"], np.asarray(r.samples["capacity_tokens"])
    assert st["mean"] == pytest.approx(x.mean(), rel=1e-6) and st["std"] == pytest.approx(x.std(), rel=1e-4)
    stream = mc.simulate(sc, 64).summary["stats"]["capacity_tokens"]
    assert stream["std"] == pytest.approx(x.std(), rel=1e-4) and np.isfinite(stream["p95"])


@pytest.mark.slow
def test_demand_the_token_pass_still_resolves():
    typical = 32 * 7000.0 * 0.96
    _month_adds_up(BASE.replace({"demand.level": limits.RESOLVED * typical * 0.999}))
    with pytest.raises(ParamError, match="the peak must be at most"):
        BASE.replace({"demand.level": limits.RESOLVED * typical * 1.001})


@pytest.mark.slow
def test_the_smallest_window_float32_holds():
    _month_adds_up(BASE.replace({"window.hours": 2.0**-126}))
