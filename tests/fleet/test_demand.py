"""Demand shapes."""

import jax
import numpy as np
import pytest

import mc
from conftest import batch_draws
from mc.fleet import demand


def profile(p, draws=None):
    return np.asarray(demand.profile(draws, p), np.float64)


def test_flat():
    assert np.all(profile(mc.Demand(level=60_000)) == 60_000)


def test_diurnal_formula():
    D = profile(mc.Demand(shape="diurnal", level=1000, amplitude=0.5, peak_hour=14))
    assert D.shape == (730,)
    assert D[14] == pytest.approx(1500) and D[2] == pytest.approx(500) and D[38] == pytest.approx(1500)


def test_weekly_weekend():
    p = mc.Demand(shape="weekly", level=1000, amplitude=0.0, weekend_factor=0.5)
    D = profile(p)
    assert D[4 * 24] == 1000 and D[5 * 24] == 500 and D[6 * 24 + 23] == 500 and D[7 * 24] == 1000


@pytest.mark.slow
def test_bursty_mean_matches_expectation():
    p = mc.Demand(shape="bursty", level=10_000, burst_rate=4, burst_height=20_000, burst_hours=6)
    sc = mc.presets.get("golden-idler").replace({"demand": dict(shape="bursty", level=10_000, burst_rate=4,
                                                                burst_height=20_000, burst_hours=6)})
    d = batch_draws(sc, 3000)
    D = np.asarray(jax.jit(jax.vmap(lambda x: demand.profile(x, p)))(d.demand), np.float64)
    extra = D.mean(axis=1) - 10_000
    # Each burst adds 20,000 × 6 tok/s-hours (less at the month's end) over 730 h.
    per_burst = 20_000 * 6 / 730
    assert extra.mean() == pytest.approx(4 * per_burst, rel=0.05)
    assert D.min() >= 10_000


def test_trace_used_as_given():
    trace = np.linspace(0, 7290, 730)
    assert np.allclose(profile(mc.Demand(shape="trace", trace=trace)), trace)


def test_trace_only_for_trace_shape():
    with pytest.raises(mc.ParamError, match="^demand.trace="):
        mc.Demand(shape="flat", trace=np.ones(730))
